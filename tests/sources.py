"""What the tests share: recurrence-file bodies (written after the standard imports by the
``write_rec`` fixture), the SPEC's LCS, cells with every kind of argument load, and an
exact-or-close table comparison."""

import os
import subprocess
import sys
from pathlib import Path

import lcs
import numpy as np
import pytest

from depgraph import recurrence
from depgraph.frontend.ir import read_cell
from patterns import DIAGONAL_FLIPS

#: SPEC section 6's LCS of AGCGTAG and GTCAGA (answer 4).
LCS = """
X = np.frombuffer(b"AGCGTAG", dtype=np.uint8)
Y = np.frombuffer(b"GTCAGA", dtype=np.uint8)

@recurrence(shape=(len(X) + 1, len(Y) + 1), dtype=np.int32, args=(X, Y))
def lcs(M, i, j, X, Y):
    if i == 0 or j == 0:
        return 0
    if X[i - 1] == Y[j - 1]:
        return M[i - 1, j - 1] + 1
    return max(M[i - 1, j], M[i, j - 1])
"""

#: A recurrence whose cells (1, 2) and (1, 3) read each other.
CYCLE = """
@recurrence(shape=(3, 4), dtype=np.int64)
def cyc(M, i, j):
    if (i, j) == (1, 2):
        return M[1, 3]
    if (i, j) == (1, 3):
        return M[1, 2]
    return 0
"""


def _signed(name: str, k: int) -> str:
    return name if k == 0 else f"{name} {'+' if k > 0 else '-'} {abs(k)}"


def neighbour_reads(code: str, shape: tuple[int, int], far: bool, dtype: str = "int64") -> str:
    """A recurrence of ``shape`` and NumPy ``dtype`` whose reads are at constant offsets:
    the nearest neighbours up, left and up-left in ``code``'s NOSE frame, plus (``far``)
    the cell two rows up and one column left; guarded at the table's edges.  The shape
    is an argument, not a literal, so one frame's cells have the same code at every shape
    and dtype, and share their compiled kernels; ``W`` is as long as the table's longer
    side, so a near-square table's certificate proves its reads ``W[i]``, ``W[j]``."""
    rows, cols = DIAGONAL_FLIPS[code]
    a, b = (1 if rows else -1), (1 if cols else -1)  # one step up / left in the frame
    n, m = shape
    far_read = (f"""
    if 0 <= {_signed('i', 2 * a)} < n and 0 <= {_signed('j', b)} < m:
        total += M[{_signed('i', 2 * a)}, {_signed('j', b)}]""" if far else "")
    return f"""
W = np.arange(1, {max(n, m) + 1}, dtype=np.int64)

@recurrence(shape={shape}, dtype=np.{dtype}, args=(W, {n}, {m}))
def rec(M, i, j, W, n, m):
    total = W[i] + 2 * W[j]
    if 0 <= {_signed('i', a)} < n:
        total += M[{_signed('i', a)}, j]
    if 0 <= {_signed('j', b)} < m:
        total += 3 * M[i, {_signed('j', b)}]
    if 0 <= {_signed('i', a)} < n and 0 <= {_signed('j', b)} < m:
        total += 5 * M[{_signed('i', a)}, {_signed('j', b)}]{far_read}
    return total % 1000003
"""


def guarded_reads(code: str, shape: tuple[int, int], dtype: str = "int64") -> str:
    """A recurrence of ``shape`` and NumPy ``dtype`` reading its nearest neighbours up,
    left and up-left in ``code``'s NOSE frame, written as the alignment cells are: guards
    (``if test: return value``) on the frame's first row and column and on its data, an
    assignment before them and an ``if`` after them (the form the strips compute whole,
    guards last, :mod:`runtime.backends.speculate`); its first row and column are
    arguments, so one frame's cells share their code at every shape."""
    rows, cols = DIAGONAL_FLIPS[code]
    a, b = (1 if rows else -1), (1 if cols else -1)  # one step up / left in the frame
    n, m = shape
    i0, j0 = (n - 1 if rows else 0), (m - 1 if cols else 0)  # the frame's first row, column
    up, left = _signed("i", a), _signed("j", b)
    return f"""
W = np.arange(1, {n + m + 2}, dtype=np.int64) % 5

@recurrence(shape={shape}, dtype=np.{dtype}, args=(W, {i0}, {j0}))
def rec(M, i, j, W, i0, j0):
    w = W[i] + 2 * W[j]
    if i == i0 and j == j0:
        return w
    if i == i0:
        return w + M[i, {left}]
    if j == j0:
        return w + M[{up}, j]
    if W[i] == W[j]:
        return M[{up}, {left}] + 1
    best = max(M[{up}, j], M[i, {left}])
    if w > 6:
        best -= 3
    return best + w
"""


#: What a strip fill's label adds for neighbour_reads' cells, computed in int32: their
#: remainder by 1000003 bounds them whatever they read.
NEAR_INT32 = ", int32 arithmetic, proven exact for values 0..1000002"


def same(a, b):
    """Exact for integers, within 1e-12 for float64 and 1e-6 for float32 (a compiled float32
    cell may round its intermediates other than the traced one: NumPy keeps float32
    arithmetic in float32, numba widens a float32 times a Python float to float64)."""
    if a.dtype.kind == "f":
        tol = 1e-6 if a.dtype.itemsize < 8 else 1e-12
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(a, b)


def load_lcs():
    """SPEC section 6's LCS of AGCGTAG and GTCAGA, from ``examples/lcs.py`` (on the path
    by ``conftest.py``)."""
    return lcs.make_lcs(b"AGCGTAG", b"GTCAGA")


def slow_after(keep, cases):
    """``cases`` of a ``pytest.mark.parametrize``: the first ``keep`` run by default, the
    others (the same kernels at more shapes, frames and cell types) only with ``-m slow``.
    A case is a tuple of the arguments, or one argument that is not a tuple."""
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)),
                         marks=() if k < keep else pytest.mark.slow)
            for k, case in enumerate(cases)]


#: The thesis's four case studies (SPEC section 5), of ``examples/``: the every-example
#: tests run these by default and the catalog's with ``-m slow``.
THESIS = ("lcs", "knapsack", "binomial", "matrix_chain")


def mixed_cell(M, i, j, X, A, k):
    """A cell with argument loads of every kind: taken out, repeated, wrapped around,
    guarded, not an index expression, indexed by a read of ``M``."""
    if i == 0:
        return X[i - 1] + k  # X[-1]: Python's wraparound
    total = A[i, 2 * j] + A[i, 2 * j] + X[-i + 1]
    if j < X.shape[0]:
        total += X[j] * X[j // 2]  # j // 2: not an index expression taken out
    return total + X[int(M[i - 1, j]) % 3] + M[i - 1, j]


def hoisted_loads(func, hoist):
    """The loads a kernel takes out of ``func``'s cell among ``hoist``'s, as pairs."""
    return [(load.array, load.index) for load in read_cell(func, 2).loads_of(hoist)]


#: The array :func:`decorated_cell`'s decorator loads from.
X = np.arange(4)


def _keep(*_):
    return lambda f: f


@_keep(X[0])  # a load outside the body: not the cell's
def decorated_cell(M, i, j, X):
    """A cell whose decorator makes a load of its own, outside the cell's body."""
    return X[i] + M[i - 1, j]


#: A 2-D recurrence only a hyperplane fits, whose guard's bound is data, so no certificate
#: proves its reads: format with the table's ``n`` rows and ``m`` columns.
UNPROVEN_SKEW = """
W = np.full(1, {m})
@recurrence(shape=({n}, {m}), dtype=np.int64, args=(W,))
def skew(M, i, j, W):
    if i == 0 or j == 0 or j + 1 >= W[0]:
        return 1
    return (M[i - 1, j + 1] + M[i, j - 1]) % 1009
"""


def make_dtw(X, Y):
    """DTW of two float sequences (ties where they repeat): reads up, left and up-left."""
    @recurrence(shape=(len(X) + 1, len(Y) + 1), dtype=np.float64, args=(X, Y))
    def dtw(M, i, j, X, Y):
        if i == 0 and j == 0:
            return 0.0
        if i == 0 or j == 0:
            return np.inf
        return abs(X[i - 1] - Y[j - 1]) + min(M[i - 1, j], M[i, j - 1], M[i - 1, j - 1])

    return dtw


def make_far(A):
    """A best path reading two rows up and one column left, one row up, one column left."""
    @recurrence(shape=A.shape, dtype=np.int64, args=(A,))
    def far(M, i, j, A):
        best = A[i, j]
        if i >= 2 and j >= 1:
            best = max(best, M[i - 2, j - 1] + A[i, j])
        if i >= 1:
            best = max(best, M[i - 1, j] + 1)
        if j >= 1:
            best = max(best, M[i, j - 1])
        return best

    return far


@recurrence(shape=(7, 5), dtype=np.int64)
def paths(M, i, j):
    """The lattice paths: a sum of two reads, nothing choosing between them."""
    return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]


def twice_with_one_cache(script: str, cache: Path) -> tuple[list[int], list[int]]:
    """Run ``script`` (Python source printing integers) in two processes one after the
    other, sharing the cache root ``cache``, from the repository's root; each process's
    integers.  The first fills the cache, the second finds it filled."""
    env = {**os.environ, "DEPGRAPH_CACHE": str(cache)}
    root = os.path.join(os.path.dirname(__file__), "..")
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, cwd=root) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr[-2000:]
    first, second = (list(map(int, r.stdout.split())) for r in runs)
    return first, second
