import numpy as np

from depgraph import analyze, recurrence
from depgraph.analysis.graph import from_edges


def test_csr_both_directions_and_dedup():
    g = from_edges((2, 3), src=np.array([5, 5, 4, 5]), dst=np.array([2, 4, 1, 2]))
    assert g.n_edges == 3
    assert g.dependencies(5).tolist() == [2, 4]
    assert g.dependents(2).tolist() == [5]
    assert g.out_degree().tolist() == [0, 0, 0, 0, 1, 2]
    assert g.base_cases().tolist() == [0, 1, 2, 3]
    assert g.cell(5) == (1, 2) and g.node_of((1, 2)) == 5


def test_memory_budget_8_bytes_per_edge_16_per_cell():
    @recurrence(shape=(60, 70), dtype=np.int32)
    def lcsish(M, i, j):
        if i == 0 or j == 0:
            return 0
        return max(M[i - 1, j], M[i, j - 1], M[i - 1, j - 1])

    g = analyze(lcsish).graph
    assert g.nbytes <= 8 * g.n_edges + 16 * g.n_nodes
    assert g.indices.dtype == np.int32 and g.indptr.dtype == np.int32


def test_to_networkx_matches_edges():
    @recurrence(shape=(3, 3), dtype=np.int64)
    def p(M, i, j):
        return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]

    nxg = analyze(p).graph.to_networkx()
    assert nxg.number_of_nodes() == 9 and nxg.number_of_edges() == 8
    assert set(nxg.successors((1, 1))) == {(0, 1), (1, 0)}


def test_target_graph_maps_nodes_to_cells():
    @recurrence(shape=(4, 4), dtype=np.int64)
    def row(M, i, j):
        return 0 if j == 0 else M[i, j - 1] + 1

    a = analyze(row, target=(1, 2))
    g = a.graph
    assert g.n_nodes == 3 and g.cells.tolist() == [4, 5, 6]
    assert g.cell(g.node_of((1, 2))) == (1, 2)
    assert a.to_json()["cells"] == 3 and a.to_json()["table_cells"] == 16
