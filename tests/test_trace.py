import sys

import numpy as np
import pytest

from depgraph import recurrence, trace
from depgraph.errors import (
    BadIndexError,
    CellFunctionError,
    CycleError,
    OutOfBoundsError,
    TooLargeError,
    WriteError,
)


def test_chain_deeper_than_recursion_limit():
    n = max(10 * sys.getrecursionlimit(), 20_000)

    @recurrence(shape=(n,), dtype=np.int64)
    def up(M, i):  # cell i reads i + 1: the first cell needs the whole chain
        return 0 if i == n - 1 else M[i + 1] + 1

    t = trace(up)
    assert t.table[0] == n - 1
    assert list(t.cells[:3]) == [n - 1, n - 2, n - 3]  # dependencies finish first


def test_values_reads_and_topological_order():
    @recurrence(shape=(3, 3), dtype=np.int64)
    def paths(M, i, j):
        if i == 0 or j == 0:
            return 1
        return M[i - 1, j] + M[i, j - 1] + M[i - 1, j]  # a repeated read

    t = trace(paths)
    assert t.table.tolist() == [[1, 1, 1], [1, 3, 5], [1, 7, 17]]
    pos = {int(c): k for k, c in enumerate(t.cells)}
    starts = np.concatenate(([0], t.ends[:-1]))
    for k, c in enumerate(t.cells):
        for r in t.reads[starts[k] : t.ends[k]]:
            assert pos[int(r)] < k


def test_target_keeps_only_solution_generated_cells():
    @recurrence(shape=(5, 5), dtype=np.int64)
    def chain(M, i, j):
        if j == 0:
            return i
        return M[i, j - 1] + 1  # each row is independent

    t = trace(chain, target=(2, 3))
    assert t.mask is not None
    assert sorted(int(c) for c in t.cells) == [10, 11, 12, 13]
    assert t.table[2, 3] == 5


def test_float32_values_are_stored_as_float32():
    @recurrence(shape=(1, 3), dtype=np.float32)
    def thirds(M, i, j):
        return 1 / 3 if j == 0 else M[i, j - 1] * 3

    t = trace(thirds)
    expect = np.float32(np.float32(1 / 3) * 3)
    assert t.table[0, 1] == expect


def test_cycle_is_printed_as_a_path():
    @recurrence(shape=(3, 4), dtype=np.int64)
    def cyc(M, i, j):
        if i == 1 and j == 2:
            return M[1, 3]
        if i == 1 and j == 3:
            return M[1, 2]
        return 0

    with pytest.raises(CycleError) as err:
        trace(cyc)
    assert "(1, 2) -> (1, 3) -> (1, 2)" in str(err.value)


def test_self_read_is_a_cycle():
    @recurrence(shape=(2, 2), dtype=np.int64)
    def me(M, i, j):
        return M[i, j]

    with pytest.raises(CycleError, match=r"\(0, 0\) -> \(0, 0\)"):
        trace(me)


@pytest.mark.parametrize("read, shown", [("M[i - 1, j]", "(-1, 1)"), ("M[i, j + 5]", "(0, 6)")])
def test_out_of_bounds_names_cell_read_and_shape(read, shown):
    ns = {"np": np, "recurrence": recurrence}
    exec(
        "@recurrence(shape=(5, 5), dtype=np.int64)\n"
        f"def bad(M, i, j):\n    return {read} if (i, j) == (0, 1) else 0\n",
        ns,
    )
    with pytest.raises(OutOfBoundsError) as err:
        trace(ns["bad"])
    assert f"cell (0, 1) reads {shown}, outside shape (5, 5)" in str(err.value)


def test_exception_in_cell_function_keeps_message():
    @recurrence(shape=(2, 2), dtype=np.float64)
    def div(M, i, j):
        return 1.0 / (i - 1)

    with pytest.raises(CellFunctionError) as err:
        trace(div)
    assert "cell (1, 0)" in str(err.value) and "ZeroDivisionError" in str(err.value)


def test_user_except_cannot_swallow_pending_reads():
    @recurrence(shape=(1, 3), dtype=np.int64)
    def careful(M, i, j):
        try:
            return M[0, j + 1] + 1 if j < 2 else 0
        except Exception:
            return -1

    assert trace(careful).table.tolist() == [[2, 1, 0]]


@pytest.mark.parametrize(
    "read, why",
    [("M[1.0, j]", "not an integer"), ("M[i]", "2 dimension"), ("M[i, j, 0]", "2 dimension"),
     ("M[True, j]", "not an integer")],
)
def test_bad_index(read, why):
    ns = {"np": np, "recurrence": recurrence}
    exec(f"@recurrence(shape=(2, 2))\ndef bad(M, i, j):\n    return {read}\n", ns)
    with pytest.raises(BadIndexError, match=why):
        trace(ns["bad"])


def test_numpy_integer_indices_are_fine():
    w = np.array([1, 2], dtype=np.int64)

    @recurrence(shape=(2, 3), dtype=np.int64, args=(w,))
    def knap(M, i, j, w):
        if i == 0:
            return j
        return M[i - 1, j - w[i]] if j >= w[i] else M[i - 1, j]

    assert trace(knap).table.tolist() == [[0, 1, 2], [0, 1, 0]]


def test_writing_M_is_refused():
    @recurrence(shape=(2, 2))
    def writer(M, i, j):
        M[i, j] = 1.0
        return 1.0

    with pytest.raises(WriteError, match=r"cell \(0, 0\) writes"):
        trace(writer)


def test_returning_none_or_unfit_values_names_the_cell():
    @recurrence(shape=(2,), dtype=np.int64)
    def nothing(M, i):
        if i == 1:
            return None
        return 1

    with pytest.raises(CellFunctionError, match=r"cell \(1,\).*None"):
        trace(nothing)

    @recurrence(shape=(2,), dtype=np.int8)
    def big(M, i):
        return 1000 * i

    with pytest.raises(CellFunctionError, match=r"cell \(1,\)"):
        trace(big)


def test_too_large_is_refused_with_an_estimate():
    @recurrence(shape=(100_000, 100_000), dtype=np.int32)
    def huge(M, i, j):
        return 0

    with pytest.raises(TooLargeError, match=r"10,000,000,000 cells\) needs about [0-9.]+ [GT]B"):
        trace(huge)


def test_three_dimensional_table():
    @recurrence(shape=(3, 4, 2), dtype=np.int64)
    def box(M, i, j, k):
        if i == 0 or j == 0 or k == 0:
            return 1
        return M[i - 1, j, k] + M[i, j - 1, k] + M[i, j, k - 1]

    t = trace(box)
    ref = np.zeros((3, 4, 2), dtype=np.int64)
    for i in range(3):
        for j in range(4):
            for k in range(2):
                ref[i, j, k] = 1 if 0 in (i, j, k) else ref[i - 1, j, k] + ref[i, j - 1, k] + ref[i, j, k - 1]
    assert (t.table == ref).all()
