"""The proof that a cell's integer arithmetic fits in int32, checked against real fills."""

from pathlib import Path

import numpy as np
import pytest

from depgraph import load
from depgraph.frontend.ir import read_cell
from depgraph.frontend.narrow import INT32, narrowing
from depgraph.frontend.source import function_namespace
from runtime.backends.emit import compile_source
from runtime.backends.rewrite import rewrite_reads

from edit_distance import make_edit_distance
from knapsack import make_knapsack
from lcs import make_lcs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

BIG = 2 ** 31 - 1


def smith_waterman(M, i, j, X, Y, match, mismatch, gap):
    if i == 0 or j == 0:
        return 0
    diag = M[i - 1, j - 1] + (match if X[i - 1] == Y[j - 1] else mismatch)
    return max(0, diag, M[i - 1, j] - gap, M[i, j - 1] - gap)


def mixed(M, i, j, X, Y):
    """Branches that join, a bool summed, ``abs``, ``%``, a negative step, an if-expression."""
    x = 0
    if i > 0:
        x = M[i - 1, j] - abs(X[i - 1] - 2)
    if j > 0 and i > 0:
        x = min(x, M[i, j - 1] + (X[i - 1] == Y[j - 1]) - (i * j) % 3)
    elif j > 0:
        x = M[i, j - 1] - 1 if Y[j - 1] > 1 else -Y[j - 1]
    return x


def hashed(M, i, j, X):
    """Bounded by its remainder whatever it reads: a sum and products of reads."""
    if i == 0 or j == 0:
        return X[i] % 7
    return (M[i - 1, j] * 3 + M[i, j - 1] * M[i - 1, j - 1] + X[i]) % 1009


def paths(M, i, j):
    if i == 0 or j == 0:
        return 1
    return M[i - 1, j] + M[i, j - 1]


def chain(M, i, j, d):
    if j <= i:
        return 0
    best = M[i, i] + M[i + 1, j] + d[i] * d[i + 1] * d[j + 1]
    for k in range(i + 1, j):
        best = min(best, M[i, k] + M[k + 1, j] + d[i] * d[k + 1] * d[j + 1])
    return best


def shifted(M, i, j, X):
    """The result small, but a value on the way past int32."""
    if i == 0 or j == 0:
        return X[i]
    return max(M[i - 1, j] + BIG, M[i, j - 1] + BIG) - BIG


def halved(M, i, j):
    if i == 0:
        return 8
    return M[i - 1, j] + 0.5


def floored(M, i, j, X):
    if i == 0:
        return 0
    return M[i - 1, j] + X[i] // 2


def unsigned(M, i, j, U):
    if i == 0:
        return 0
    return M[i - 1, j] + U[i]


def growing(M, i, j, step):
    if i == 0:
        return 0
    return M[i - 1, j] + step


def _fill(func, shape, args):
    """The table filled row by row (every cell here reads up and left) in Python integers."""
    T = np.zeros(shape, dtype=object)
    for i in range(shape[0]):
        for j in range(shape[1]):
            T[i, j] = int(func(T, i, j, *args))
    return T


def _check_narrowed(func, shape, dtype, args):
    """The proof for ``func``; the cell rewritten with it, run on every cell against the
    exact table (the proof's premise: the cells read hold their exact values), returns
    each cell's value, and every value it wraps in int32 lies within the proof's extremes."""
    nw = narrowing(read_cell(func, 2), shape, np.dtype(dtype), args, steps=shape[0] + shape[1] - 1)
    assert nw is not None
    T = _fill(func, shape, args)
    assert nw.values[0] <= T.min() and T.max() <= nw.values[1]
    seen = []

    def i32(x):
        seen.append(int(x))
        return int(x)

    src = rewrite_reads(read_cell(func, 2), "RD", "g", cell_args=False, narrow=nw.positions)
    ns = {**function_namespace(func), "RD": lambda M, ck, a, b: M[a, b], "_dg_i32": i32}
    g = compile_source(src, "g", ns)
    for i in range(shape[0]):
        for j in range(shape[1]):
            assert g(T, i, j, *args, None) == T[i, j]
    assert seen and nw.extremes[0] <= min(seen) and max(seen) <= nw.extremes[1]
    assert INT32[0] <= nw.extremes[0] and nw.extremes[1] <= INT32[1]
    return nw


@pytest.mark.parametrize("shape", [(1, 9), (9, 1), (7, 12), (13, 5)])
@pytest.mark.parametrize("seed", [0, 1])
def test_proven_cells_compute_within_their_bounds(shape, seed):
    rng = np.random.default_rng(seed * 100 + shape[0])
    n, m = shape
    X, Y = rng.integers(0, 4, n + 1), rng.integers(0, 4, m + 1)
    lc = make_lcs(X[:n - 1], Y[:m - 1])
    _check_narrowed(lc.func, lc.shape, lc.dtype, lc.args)
    scores = (int(rng.integers(1, 5)), int(rng.integers(-5, 0)), int(rng.integers(0, 3)))
    _check_narrowed(smith_waterman, shape, np.int32, (X, Y, *scores))
    _check_narrowed(mixed, shape, np.int64, (X, Y))
    _check_narrowed(hashed, shape, np.int32, (rng.integers(-50, 50, n),))
    ed = make_edit_distance(X[:n - 1], Y[:m - 1])
    _check_narrowed(ed.func, ed.shape, ed.dtype, ed.args)
    ks = make_knapsack(rng.integers(1, 6, n - 1), rng.integers(0, 100, n - 1), m - 1)
    _check_narrowed(ks.func, ks.shape, ks.dtype, ks.args)


def test_bounds_grow_with_the_steps_from_a_cell_that_reads_nothing():
    # a cell 4 steps below row 0 adds 3 four times: exactly the bound; -2 a step downwards
    assert narrowing(read_cell(growing, 2), (5, 2), np.dtype(np.int32), (3,), steps=5).values == (0, 12)
    assert narrowing(read_cell(growing, 2), (5, 2), np.dtype(np.int32), (-2,), steps=5).values == (-8, 0)
    assert narrowing(read_cell(hashed, 2), (50, 50), np.dtype(np.int32), (np.arange(50),), 99).values == (0, 1008)


def test_values_that_may_leave_int32_keep_64_bits():
    X = np.zeros(40, dtype=np.int64)
    # Smith-Waterman gaining up to 2**25 a step over 79 steps may pass 2**31 - 1
    assert narrowing(read_cell(smith_waterman, 2), (40, 40), np.dtype(np.int32), (X, X, 2 ** 25, -1, 1), 79) is None
    assert narrowing(read_cell(smith_waterman, 2), (40, 40), np.dtype(np.int32), (X, X, 2 ** 20, -1, 1), 79)
    # a small result computed through values past int32
    assert narrowing(read_cell(shifted, 2), (6, 6), np.dtype(np.int64), (X + 1,), 11) is None


@pytest.mark.parametrize("func, dtype, args", [
    (paths, np.int64, ()),  # a sum of two reads, unbounded
    (chain, np.int64, (np.arange(1, 8),)),  # a loop
    (halved, np.int64, ()),  # a float
    (floored, np.int64, (np.arange(6),)),  # floor division
    (unsigned, np.int64, (np.arange(6, dtype=np.uint64),)),  # numba: uint64 with int64 is float
    (make_lcs([0], [0]).func, np.float64, (np.arange(6), np.arange(6))),  # a float table
    (make_lcs([0], [0]).func, np.uint32, (np.arange(6), np.arange(6))),  # an unsigned table
])
def test_cells_outside_the_analysis_keep_64_bits(func, dtype, args):
    assert narrowing(read_cell(func, 2), (6, 6), np.dtype(dtype), args, steps=11) is None


def test_the_rewrite_wraps_values_not_indices():
    ed = make_edit_distance(np.arange(3), np.arange(4))
    nw = narrowing(read_cell(ed.func, 2), ed.shape, ed.dtype, ed.args, steps=8)
    src = rewrite_reads(read_cell(ed.func, 2), "RD", "g", cell_args=False, narrow=nw.positions)
    assert "sub = _dg_i32(sub + _dg_i32(1))" in src  # the augmented assignment
    assert "RD(M, _dg_check, i - 1, j - 1)" in src  # its indices as written
    assert "return _dg_i32(j)" in src


def test_extents_of_the_table_and_of_arguments_are_their_sides():
    def walk(M, i, j, A):
        best = 0
        if i > 0 and j + 1 < M.shape[1]:
            best = max(best, M[i - 1, j + 1])
        if j > 0 and j < A.shape[1]:
            best = max(best, M[i, j - 1])
        return A[i, j] + best

    A = np.full((5, 7), 3, dtype=np.int32)
    proof = narrowing(read_cell(walk, 2), (5, 7), np.int32, (A,), steps=15)
    assert proof is not None and proof.values == (3, 45)


def test_loops_over_ranges_are_walked_to_a_fixpoint_for_the_values_only():
    nim = load(EXAMPLES / "catalog/nim.py", size=3).func  # its M[k, m - t] in a loop

    def grows(M, i, j):  # a running sum: no bound but the depth's
        total = 0
        for t in range(j):
            total = total + M[i, t] + 1
        return total

    def by_data(M, i, j):  # a range whose end is a read
        best = 0
        for t in range(M[i, 0]):
            best = t
        return best

    def stepped(M, i, j):  # a loop running down, and one that never runs
        best = 0
        for t in range(j, -1, -2):
            best = max(best, t)
        for t in range(5, 2):
            best = 1000
        return best

    int8 = np.dtype(np.int8)
    assert narrowing(read_cell(nim, 2), (3, 40), int8, (), steps=40) is None  # the int32 rewrite
    assert narrowing(read_cell(nim, 2), (3, 40), int8, (), steps=40, loops=True).values == (0, 1)
    assert narrowing(read_cell(grows, 2), (3, 40), int8, (), steps=40, loops=True) is None
    assert narrowing(read_cell(by_data, 2), (3, 40), int8, (), steps=40, loops=True) is None
    assert narrowing(read_cell(stepped, 2), (3, 40), int8, (), steps=40, loops=True).values \
        == (0, 39)
    assert narrowing(read_cell(chain, 2), (6, 6), np.dtype(np.int32), (np.arange(1, 8),), 11,
                     loops=True) is None  # a sum of two reads
