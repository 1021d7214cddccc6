"""``analyze`` (:mod:`depgraph.analysis.pipeline`): the cell a recurrence names as its
answer (``target=``) is said beside the whole table's graph, which it leaves as it is."""

import numpy as np
from lcs import make_lcs
from matrix_chain import make_matrix_chain
from smith_waterman import best_cell, make_smith_waterman

from depgraph import analyze, certified_analysis, recurrence


def test_the_answer_cell_is_said_and_the_graph_stays_the_whole_tables():
    chain = make_matrix_chain([8, 3, 7, 4])
    whole = analyze(chain).to_json()
    assert (whole["answer_cell"], whole["answer_function"]) == ([0, 2], None)
    assert whole["target"] is None and whole["cells"] == whole["table_cells"] == 9
    graph = analyze(chain, target=(0, 2)).to_json()  # the solution-generated graph: asked for
    assert graph["answer_cell"] == [0, 2] and graph["cells"] == 6


def test_a_target_function_finds_the_answer_in_the_traced_table():
    local = make_smith_waterman("TTACGTAA", "GGACGTCC")
    a = analyze(local)
    d = a.to_json()
    assert d["answer_cell"] == list(best_cell(a.table)) == [6, 6]
    assert d["answer_function"] == "best_cell"
    part = analyze(local, target=(3, 3)).to_json()  # not the whole table: not found
    assert (part["answer_cell"], part["answer_function"]) == (None, "best_cell")


def test_a_recurrence_naming_no_answer_has_none():
    d = analyze(make_lcs("AGCGTAG", "GTCAGA")).to_json()
    assert (d["answer_cell"], d["answer_function"]) == (None, None)


def test_a_certified_analysis_names_the_answer_cell_too():
    @recurrence(shape=(10**6, 10**6), dtype=np.int64, target=(0, 0))
    def paths(M, i, j):
        return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]

    d = certified_analysis(paths, "too large to trace")
    assert (d["answer_cell"], d["answer_function"]) == ([0, 0], None)


def test_a_certificate_says_whether_it_proves_the_hyperplane_schedule():
    from lcs3 import make_lcs3

    d = analyze(make_lcs3("AC", "GTA", "CCGTA")).to_json()
    assert d["schedule"]["kind"] == "hyperplane" and d["regions"] is None
    assert d["certificate"]["hyperplane"] == {"pi": [1, 1, 1], "proven": True, "why": None}
    assert d["certificate"]["summary"].startswith("proven for every shape when X.shape[0] == ")
    lcs = analyze(make_lcs("AGCGTAG", "GTCAGA")).to_json()  # a pattern: no hyperplane said
    assert lcs["certificate"]["hyperplane"] is None and lcs["certificate"]["patterns"] == ["NOSE"]


def test_a_certified_analysis_of_a_3d_table_gives_its_proven_hyperplane():
    @recurrence(shape=(2000, 3000, 4000), dtype=np.int64)
    def cube(M, i, j, k):
        return 0 if i == 0 or k == 0 else M[i - 1, j, k] + M[i, j, k - 1]

    d = certified_analysis(cube, "too large to trace")
    assert (d["regions"], d["patterns"], d["pattern"], d["pattern_stages"]) == (None,) * 4
    assert d["schedule"] == {"kind": "hyperplane", "pi": [1, 0, 1], "steps": 1999 + 3999 + 1}
    assert d["certificate"]["hyperplane"] == {"pi": [1, 0, 1], "proven": True, "why": None}
    assert d["stages"] is None and "stages" in d["needs_trace"]

    @recurrence(shape=(2000, 3000, 4000), dtype=np.int64)
    def wander(M, i, j, k):  # a read that may leave the table: nothing proven
        return 0 if i == 0 else M[i - 1, j, k + 1]

    assert certified_analysis(wander, "too large to trace") is None
