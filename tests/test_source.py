"""The cell function's source rewritten: reads of ``M`` redirected, argument loads taken out."""

import inspect
import math

import numpy as np
import pytest

from runtime import source
from runtime.cache import compile_source
from runtime.source import (SourceUnavailable, argument_loads, axis_offsets, constant_offsets,
                            function_namespace, rewrite_reads, runs_anywhere)


def _cell(M, i, j, X, A, k):
    if i == 0:
        return X[i - 1] + k  # X[-1]: Python's wraparound
    total = A[i, 2 * j] + A[i, 2 * j] + X[-i + 1]
    if j < X.shape[0]:
        total += X[j] * X[j // 2]  # j // 2: not an index expression taken out
    return total + X[int(M[i - 1, j]) % 3] + M[i - 1, j]


def test_argument_loads_are_distinct_index_expressions_of_the_cell():
    assert argument_loads(_cell, 2, ("X", "A")) == [
        ("X", ("{0} - 1",)), ("A", ("{0}", "2 * {1}")), ("X", ("-{0} + 1",)), ("X", ("{1}",))]
    assert argument_loads(_cell, 2, ("A",)) == [("A", ("{0}", "2 * {1}"))]


def test_assigned_arrays_or_indices_keep_their_loads():
    def assigned(M, i, j, X):
        X = X * 2
        return X[i]

    def moved(M, i, j, X):
        i = i - 1
        return X[i]

    assert argument_loads(assigned, 2, ("X",)) == []
    assert argument_loads(moved, 2, ("X",)) == []
    assert "_dg_arg" not in rewrite_reads(moved, 2, "RD", "g", hoist=("X",))


def test_kept_reads_are_at_offsets_from_the_cell_and_none_once_an_index_moves():
    def cell(M, i, j):
        return M[i - 1, j] + M[i - 1, j - 1] + M[i - 2 + 1, j]

    def moved(M, i, j):
        i = i + 1
        return M[i - 1, j]

    src = rewrite_reads(cell, 2, "RD", "g", cell_args=False, kept=[(-1, 0)])
    assert src.count("RD_kept(M, _dg_check, _dg_kept0, i - 1, j)") == 1
    assert src.count("RD(M, _dg_check, ") == 2  # another offset; not written as i - 1
    src = rewrite_reads(moved, 2, "RD", "g", cell_args=False, kept=[(-1, 0)])
    assert "_kept" not in src and "RD(M, _dg_check, i - 1, j)" in src


def test_rewritten_cell_given_its_loads_computes_what_the_cell_computes():
    # the caller makes the loads from argument_loads' expressions, clamped as the kernels
    # clamp them, and passes them after the check argument
    rng = np.random.default_rng(5)
    X, A = rng.integers(0, 9, 4), rng.integers(0, 9, (6, 12))
    M = rng.integers(0, 9, (6, 6))
    src = rewrite_reads(_cell, 2, "RD", "g", hoist=("X", "A"))
    ns = {**function_namespace(_cell), "RD": lambda M, ck, x0, x1, a, b: M[a, b]}
    g = compile_source(src, "g", ns)
    arrays = {"X": X, "A": A}
    for i in range(6):
        for j in range(6):
            loads = []
            for name, index in argument_loads(_cell, 2, ("X", "A")):
                a = arrays[name]
                at = [min(max(eval(e.format(i, j)), -a.shape[d]), a.shape[d] - 1)
                      for d, e in enumerate(index)]
                loads.append(a[tuple(at)])
            assert g(M, i, j, X, A, 3, None, *loads) == _cell(M, i, j, X, A, 3)
    assert list(inspect.signature(g).parameters)[-5:] == [
        "_dg_check", "_dg_arg0", "_dg_arg1", "_dg_arg2", "_dg_arg3"]


X = np.arange(4)


def _keep(*_):
    return lambda f: f


@_keep(X[0])  # a load outside the body: not the cell's
def _decorated(M, i, j, X):
    return X[i] + M[i - 1, j]


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
    (_decorated, ("X",), True)])
def test_cells_run_anywhere_when_straight_and_reading_only_the_table(func, hoist, anywhere):
    assert runs_anywhere(func, 2, hoist) is anywhere


def test_a_builtin_name_bound_to_another_function_does_not_run_anywhere():
    assert runs_anywhere(_shadowed, 2, ("X",)) is True
    assert runs_anywhere(_rebound(), 2, ("X",)) is False


def test_argument_loads_are_the_loads_rewrite_reads_takes_out_in_its_order():
    loads = argument_loads(_decorated, 2, ("X",))
    assert loads == [("X", ("{0}",))]
    src = rewrite_reads(_decorated, 2, "RD", "g", hoist=("X",))
    assert src.splitlines()[0] == "def g(M, i, j, X, _dg_check, _dg_arg0):"


def test_offsets_parse_the_source_once(monkeypatch):
    # fills and the cost model ask for the offsets several times, and for every frame;
    # the source is read and parsed the first time, and a failure is remembered too
    def f(M, i, j):
        return M[i - 1, j] + M[i, j - 1]

    def knapsack(M, i, j, w):
        return M[i - 1, j] + M[i - 1, j - w[i]]

    first = constant_offsets(f, 2)
    rows = axis_offsets(knapsack, 2, 0)
    with pytest.raises(SourceUnavailable, match=r"M\[i - 1, j - w\[i\]\].*not at a constant"):
        constant_offsets(knapsack, 2)
    monkeypatch.setattr(source.inspect, "getsource", lambda fn: "")  # any re-parse fails
    assert constant_offsets(f, 2) == first == [(-1, 0), (0, -1)]
    assert axis_offsets(knapsack, 2, 0) == rows == [-1]
    with pytest.raises(SourceUnavailable, match=r"M\[i - 1, j - w\[i\]\].*not at a constant"):
        constant_offsets(knapsack, 2)
    constant_offsets(f, 2).append((9, 9))  # callers get their own list
    assert constant_offsets(f, 2) == first
