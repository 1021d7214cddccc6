"""The cell IR (:mod:`depgraph.frontend.ir`): the reads of ``M`` and their offsets, the
argument loads a kernel may make, the guards, whether the cell runs anywhere; read once."""

import math

import numpy as np
import pytest

from depgraph.frontend import source
from depgraph.frontend.ir import read_cell
from depgraph.frontend.source import SourceUnavailable
from runtime.backends.emit import compile_source
from sources import decorated_cell, hoisted_loads, mixed_cell


def test_argument_loads_are_distinct_index_expressions_of_the_cell():
    assert hoisted_loads(mixed_cell, ("X", "A")) == [
        ("X", ("{0} - 1",)), ("A", ("{0}", "2 * {1}")), ("X", ("-{0} + 1",)), ("X", ("{1}",))]
    assert hoisted_loads(mixed_cell, ("A",)) == [("A", ("{0}", "2 * {1}"))]


def test_assigned_arrays_or_indices_keep_their_loads():
    def assigned(M, i, j, X):
        X = X * 2
        return X[i]

    def moved(M, i, j, X):
        i = i - 1
        return X[i]

    assert hoisted_loads(assigned, ("X",)) == []
    assert hoisted_loads(moved, ("X",)) == []


def _straight(M, i, j, X, Y, w):
    if i == 0 and j == 0:
        return 0.0
    cost = math.sqrt(abs(X[i] - Y[j - 1])) + np.float32(w)
    best = min(M[i - 1, j], M[i, j - 1]) if i > 0 and j > 0 else M[max(i - 1, 0), j]
    return cost + round(best, 3)


def _extent(M, i, j, X, Y, w):
    return M[i - 1, j] + (X[i] if i < X.shape[0] else 0)


def _any_extent(M, i, j, X, Y, w):
    return M[i - 1, j] + X.shape[i]


def _looping(M, i, j, X, Y, w):
    total = 0
    for k in range(i):
        total += M[k, j]
    return total


def _data_index(M, i, j, X, Y, w):
    return M[i - 1, j] + Y[int(M[i, j - 1]) % 3]


def _own_call(M, i, j, X, Y, w):
    return _helper(M[i - 1, j]) + X[i]


def _helper(x):
    return x


def _shadowed(M, i, j, X, Y, w):
    return max(M[i - 1, j], X[i])


def _rebound():
    max = lambda *a: a[0]  # noqa: E731  # a name of the built-ins, bound to another function

    def cell(M, i, j, X, Y, w):
        return max(M[i - 1, j], X[i])

    return cell


def _storing(M, i, j, X, Y, w):
    Y[0] = 1
    return M[i - 1, j]


@pytest.mark.parametrize("func, hoist, anywhere", [
    (_straight, ("X", "Y"), True),  # if, built-ins, math and numpy calls, reads of M anywhere
    (_straight, ("X",), False),  # Y's load stays in the cell: it may leave the array
    (_extent, ("X",), True),  # an array's extent is no load
    (_any_extent, ("X",), False),  # an extent at a computed place
    (_looping, ("X", "Y"), False),
    (_data_index, ("X", "Y"), False),  # an index read from the table is not taken out
    (_own_call, ("X", "Y"), False),  # a function of the module's may read anything
    (_storing, ("X", "Y"), False),
    (decorated_cell, ("X",), True)])
def test_cells_run_anywhere_when_straight_and_reading_only_the_table(func, hoist, anywhere):
    assert read_cell(func, 2).runs_anywhere(hoist) is anywhere


def _copying(M, i, j, X, Y, w):
    np.copyto(Y, X)
    return M[i - 1, j]


@pytest.mark.parametrize("func, pure", [
    (_straight, True), (_looping, True), (_data_index, True),  # loops and built-ins write nothing
    (_storing, False),  # a store into an argument
    (_copying, False),  # numpy's copyto writes its first argument
    (_own_call, False),  # a function of the module's may write anything
    (_rebound(), False)])
def test_a_cell_is_pure_when_it_writes_no_array(func, pure):
    assert read_cell(func, 2).pure is pure


def test_a_builtin_name_bound_to_another_function_does_not_run_anywhere():
    assert read_cell(_shadowed, 2).runs_anywhere(("X",)) is True
    assert read_cell(_rebound(), 2).runs_anywhere(("X",)) is False


def test_the_source_is_read_once(monkeypatch):
    # the IR is read and parsed the first time; the offsets, or why there are none, come
    # from it after, whatever the source says then
    def f(M, i, j):
        return M[i - 1, j] + M[i, j - 1]

    def knapsack(M, i, j, w):
        return M[i - 1, j] + M[i - 1, j - w[i]]

    first = read_cell(f, 2).constant_offsets()
    rows = read_cell(knapsack, 2).axis_offsets(0)
    with pytest.raises(SourceUnavailable, match=r"M\[i - 1, j - w\[i\]\].*not at a constant"):
        read_cell(knapsack, 2).constant_offsets()
    monkeypatch.setattr(source.inspect, "getsource", lambda fn: "")  # any re-parse fails
    assert read_cell(f, 2).constant_offsets() == first == ((-1, 0), (0, -1))
    assert read_cell(knapsack, 2).axis_offsets(0) == rows == (-1,)
    with pytest.raises(SourceUnavailable, match=r"M\[i - 1, j - w\[i\]\].*not at a constant"):
        read_cell(knapsack, 2).constant_offsets()


def test_reads_record_offsets_and_what_the_source_cannot_prove():
    def knapsack(M, i, j, w):
        if j < w[i]:
            return M[i - 1, j]
        return max(M[i - 1, j], M[i - 1, j - w[i]])

    def aliased(M, i, j):
        T = M
        return T[i - 1, j]

    def moved(M, i, j):
        i = i - 1
        return M[i, j]

    def writes(M, i, j):
        M[i, j] = 1
        return M[i - 1, j]

    ir = read_cell(knapsack, 2)
    assert [(r.text, r.offsets, r.line) for r in ir.reads] == [
        ("M[i - 1, j]", (-1, 0), 3), ("M[i - 1, j]", (-1, 0), 4), ("M[i - 1, j - w[i]]", (-1, None), 4)]
    assert ir.opaque is None and [g.test for g in ir.guards] == ["j < w[i]"]
    assert read_cell(aliased, 2).opaque == "'M' is used other than by reads (line 2)"
    assert read_cell(moved, 2).opaque == "index 'i' is reassigned (line 2)"
    assert read_cell(writes, 2).opaque == "'M' is used other than by reads (line 2)"
    with pytest.raises(SourceUnavailable, match="used other than by reads"):
        read_cell(writes, 2).constant_offsets()


def test_a_function_without_source_gets_an_ir_that_proves_nothing():
    cell = compile_source("def cell(M, i):\n    return M[i - 1]\n", "cell", {})
    ir = read_cell(cell, 1)
    assert ir.source is None and "not available" in ir.opaque and ir.reads == ()
    assert not ir.runs_anywhere(()) and ir.loads_of(()) == ()
    with pytest.raises(SourceUnavailable, match="not available"):
        ir.constant_offsets()


def test_possible_regions_follow_each_axis_constant_offset():
    def f(M, i, j, w):
        if j + w[i] >= M.shape[1]:
            return 0
        return M[i + 1, j + w[i]] + M[i + 1, j]

    def g(M, i, j, w):
        return M[i, w[j]]

    assert read_cell(f, 2).possible_regions() == ("Down", "DownLeft", "DownRight")
    assert read_cell(g, 2).possible_regions() == ("Left", "Right", "Self")


def test_read_offsets_are_constant_or_unknown_along_each_axis():
    def fw(M, k, i, j, W):
        return W[i, j] if k == 0 else min(M[k - 1, i, j], M[k - 1, i, k - 1] + M[k - 1, k - 1, j])

    def sack(M, i, j, w):
        return 0 if i == 0 else max(M[i - 1, j], M[i - 1, j - w[i]])

    def whole_row(M, i, j):
        return M[i - 1]

    assert read_cell(fw, 3).read_offsets() == ((-1, 0, 0), (-1, 0, None), (-1, None, 0))
    assert read_cell(sack, 2).read_offsets() == ((-1, 0), (-1, None))
    with pytest.raises(SourceUnavailable, match="M\\[i - 1\\]"):
        read_cell(whole_row, 2).read_offsets()
