"""Longest common subsequence of three strings: a 3-D table (SPEC section 4's last
paragraph; ``patterns/hyperplane.py``).

Formulation
-----------
Axis ``i`` is the prefix ``X[:i]``, ``j`` the prefix ``Y[:j]``, ``k`` the prefix
``Z[:k]``; the table is ``(len(X)+1) x (len(Y)+1) x (len(Z)+1)``::

    M[i, j, k] = 0                                        if i == 0 or j == 0 or k == 0
               = M[i-1, j-1, k-1] + 1                     if X[i-1] == Y[j-1] == Z[k-1]
               = max(M[i-1, j, k], M[i, j-1, k], M[i, j, k-1])   otherwise

Reads: offsets ``(-1, -1, -1)``, ``(-1, 0, 0)``, ``(0, -1, 0)`` and ``(0, 0, -1)``.
Patterns are for 2-D tables; the hyperplane ``pi = (1, 1, 1)`` (the anti-diagonal
planes ``i + j + k = t``, LCS's NOSE one dimension up) fills an ``a x b x c`` table in
``a + b + c - 2`` steps.

Family data (seeded by the size ``n``): three random strings of length ``n`` over a
4-letter alphabet (an ``(n+1)^3`` table).
"""

from functools import cache

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Longest Common Subsequence of three strings"
THESIS_PATTERN = None  # not in the thesis's table (a 3-D table)
EXPECTED_PATTERN = None  # patterns are 2-D; the hyperplane pi = (1, 1, 1) fits
FORMULATION = ("M[i,j,k] = M[i-1,j-1,k-1]+1 if X[i-1]==Y[j-1]==Z[k-1] "
               "else max(M[i-1,j,k], M[i,j-1,k], M[i,j,k-1]); 0 on i=0, j=0 or k=0")


def _codes(s):
    """A sequence's symbols as int64 codes (a string's or bytes' by their byte values)."""
    raw = s.encode() if isinstance(s, str) else s
    return np.array(list(raw) if isinstance(raw, (bytes, bytearray)) else raw, dtype=np.int64)


def data(n):
    """Seeded three random sequences of length ``n`` over ``{0, 1, 2, 3}``."""
    rng = np.random.default_rng(n)
    return tuple(rng.integers(0, 4, n).astype(np.int64) for _ in range(3))


def make_lcs3(X, Y, Z):
    """The LCS recurrence of three sequences (``bytes``, ``str`` or integer arrays)."""
    x, y, z = _codes(X), _codes(Y), _codes(Z)

    @recurrence(shape=(len(x) + 1, len(y) + 1, len(z) + 1), dtype=np.int32, args=(x, y, z))
    def lcs3(M, i, j, k, X, Y, Z):
        if i == 0 or j == 0 or k == 0:
            return 0
        if X[i - 1] == Y[j - 1] and Y[j - 1] == Z[k - 1]:
            return M[i - 1, j - 1, k - 1] + 1
        return max(M[i - 1, j, k], M[i, j - 1, k], M[i, j, k - 1])

    return lcs3


def reference(X, Y, Z):
    """Top-down memoised recursion over the prefixes ``(i, j, k)``."""
    x, y, z = _codes(X).tolist(), _codes(Y).tolist(), _codes(Z).tolist()

    @cache
    def lcs(i, j, k):
        if i == 0 or j == 0 or k == 0:
            return 0
        if x[i - 1] == y[j - 1] == z[k - 1]:
            return lcs(i - 1, j - 1, k - 1) + 1
        return max(lcs(i - 1, j, k), lcs(i, j - 1, k), lcs(i, j, k - 1))

    shape = (len(x) + 1, len(y) + 1, len(z) + 1)
    return np.array([lcs(*cell) for cell in np.ndindex(*shape)], dtype=np.int32).reshape(shape)


@family
def lcs3(n):
    """LCS of three seeded random length-``n`` sequences over 4 letters."""
    return make_lcs3(*data(n))
