import glob

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph import Family, analyze
from depgraph.analysis.graph import from_edges
from depgraph.analysis.stages import stages
from depgraph.errors import CycleError
from depgraph.frontend.loader import definitions, load_module


def _networkx_generations(g):
    """Stages the networkx way: generations of the reversed graph (base cases first)."""
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(g.n_nodes))
    src, dst = g.edge_arrays()
    nxg.add_edges_from(zip(src.tolist(), dst.tolist()))
    return [sorted(gen) for gen in nx.topological_generations(nxg.reverse(copy=False))]


def _depths(g):
    """D(x) by the definition: longest path to a base case (memoised over a topo order)."""
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(g.n_nodes))
    src, dst = g.edge_arrays()
    nxg.add_edges_from(zip(src.tolist(), dst.tolist()))
    depth = {}
    for v in reversed(list(nx.topological_sort(nxg))):
        depth[v] = 1 + max((depth[u] for u in nxg.successors(v)), default=-1)
    return depth


def _check(g):
    s = stages(g)
    gens = _networkx_generations(g)
    assert s.count == len(gens)
    assert [sorted(s.nodes(k).tolist()) for k in range(s.count)] == gens
    depth = _depths(g)
    assert all(s.stage[v] == d for v, d in depth.items())


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.data())
def test_random_dags_equal_networkx_and_depth(n, data):
    m = data.draw(st.integers(0, 3 * n))
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                               min_size=m, max_size=m))
    perm = data.draw(st.permutations(range(n)))
    # orient every pair from higher to lower rank: a DAG, nodes shuffled by perm
    src = [perm[max(a, b)] for a, b in pairs if a != b]
    dst = [perm[min(a, b)] for a, b in pairs if a != b]
    _check(from_edges((n,), np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)))


EXAMPLES = sorted(glob.glob("examples/*.py") + glob.glob("examples/catalog/*.py"))


@pytest.mark.parametrize("path", EXAMPLES)
def test_examples_stages_equal_networkx(path):
    obj = next(iter(definitions(load_module(path)).values()))
    rec = obj(7) if isinstance(obj, Family) else obj
    _check(analyze(rec).graph)


def test_cycle_found_among_unpeeled_nodes():
    # 0 <- 1 <- 2 <- 3 <- 1 : nodes 1, 2, 3 form a cycle
    g = from_edges((2, 2), np.array([1, 2, 3, 1]), np.array([0, 1, 2, 3]))
    with pytest.raises(CycleError) as err:
        stages(g)
    cycle = err.value.cycle
    assert cycle[0] == cycle[-1] and len(cycle) == 4
    assert set(cycle) == {(0, 1), (1, 0), (1, 1)}
    assert " -> ".join(str(c) for c in cycle) in str(err.value)


def test_single_cell_and_no_edges():
    s = stages(from_edges((1, 1), np.array([], dtype=np.int64), np.array([], dtype=np.int64)))
    assert s.count == 1 and s.max_width == 1
