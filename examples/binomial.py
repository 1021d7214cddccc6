"""Binomial coefficients by Pascal's identity (thesis section 2.1; SPEC section 5).

Formulation
-----------
Row ``i`` is ``n`` in ``C(n, m)``, column ``j`` is ``m``; the table is ``(n+1) x (m+1)``
(the family uses ``m = n``)::

    M[i, j] = 1                          if j == 0 or j == i
            = M[i-1, j-1] + M[i-1, j]    if 0 < j < i
            = 0                          otherwise (j > i: no reads)

Reads: UpLeft and Up, so the rows can be filled top to bottom: pattern RUD (the thesis's
``BinCoef``, equation 2.2).  NOSE also matches; RUD needs fewer steps.

The table is float64 so that large sizes do not overflow (``C(1000, 500)`` is about
``2.7e299``); values are exact integers up to ``n = 56``.
"""

import math

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Binomial Coefficient"
THESIS_PATTERN = "RUD"
EXPECTED_PATTERN = "RUD"
FORMULATION = "M[i,j] = C(i,j) = M[i-1,j-1] + M[i-1,j]; 1 on j=0 and j=i; 0 for j>i"


def data(n):
    """Builder arguments of family size ``n``: the square table ``C(0..n, 0..n)``."""
    return (n, n)


def make_binomial(n, m=None):
    """The recurrence for ``C(i, j)``, ``0 <= i <= n``, ``0 <= j <= m`` (default ``m = n``)."""
    m = n if m is None else m

    @recurrence(shape=(n + 1, m + 1), dtype=np.float64)
    def binomial(M, i, j):
        if j == 0 or j == i:
            return 1.0
        if j < i:
            return M[i - 1, j - 1] + M[i - 1, j]
        return 0.0

    return binomial


def reference(n, m=None):
    """The table from the closed form ``math.comb`` (exact integers, then float64)."""
    m = n if m is None else m
    return np.array(
        [[float(math.comb(i, j)) for j in range(m + 1)] for i in range(n + 1)],
        dtype=np.float64,
    )


@family
def binomial(n):
    """Pascal's triangle ``C(0..n, 0..n)`` as an ``(n+1) x (n+1)`` table."""
    return make_binomial(*data(n))
