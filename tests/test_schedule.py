"""The schedule a recurrence's reads allow (:mod:`depgraph.analysis.schedule`): pattern,
hyperplane from the source or the trace, or stages; and ``analyze``'s report of it."""

import numpy as np

from depgraph import analyze, cell_ir, recurrence
from depgraph.analysis.schedule import schedule_of, source_hyperplane, traced_offsets
from patterns.hyperplane import legal


@recurrence(shape=(6, 8), dtype=np.int64)
def skew(M, i, j):
    if i == 0 or j == 0 or j == 7:
        return 1
    return M[i - 1, j + 1] + M[i, j - 1]


@recurrence(shape=(6, 8), dtype=np.int64, args=(np.array([1, 2, 1, 3, 1, 2, 1, 1]),))
def hops(M, i, j, step):
    # the column offset is data: the source proves nothing along it, the trace sees -1..-3
    if i == 0 or j < step[j]:
        return 1
    return M[i - 1, j + 1] if j + 1 < 8 and i % 2 else M[i, j - step[j]] + 1


@recurrence(shape=(4, 5), dtype=np.int64)
def zig(M, i, j):
    if i == 0 or j == 0 or j == 4:
        return 1
    return M[i - 1, j] + (M[i, j - 1] if i % 2 else M[i, j + 1])


def test_a_pattern_is_its_own_schedule():
    @recurrence(shape=(5, 6), dtype=np.int64)
    def grid(M, i, j):
        return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]

    s = analyze(grid).schedule
    assert (s.kind, s.pi, s.steps, s.pattern) == ("pattern", (1, 1), 10, "NOSE")
    assert s.to_json() == {"kind": "pattern", "pi": [1, 1], "steps": 10}


def test_the_source_offsets_give_a_hyperplane_for_every_size():
    s = analyze(skew).schedule
    assert (s.kind, s.pi, s.steps) == ("hyperplane", (2, 1), 18)
    assert "in the source" in s.basis
    assert source_hyperplane(cell_ir(skew), (100, 3))[0].pi == (2, 1)


def test_the_traced_offsets_give_a_hyperplane_at_the_traced_size():
    a = analyze(hops)
    s = a.schedule
    assert s.kind == "hyperplane" and "traced reads" in s.basis
    offsets = [tuple(int(x) for x in d) for d in traced_offsets(a.graph)]
    assert legal(s.pi, offsets) and (-1, 1) in offsets


def test_no_hyperplane_leaves_the_stages():
    a = analyze(zig)
    s = a.schedule
    assert (s.kind, s.pi, s.steps) == ("stages", None, a.stages.count)
    assert "no hyperplane" in s.basis
    assert schedule_of(zig.shape, None, cell_ir(zig), None, None).steps is None


def test_traced_offsets_are_distinct_and_cover_every_edge():
    a = analyze(skew)
    assert traced_offsets(a.graph).tolist() == [[-1, 1], [0, -1]]
