"""Fibonacci recurrence relation (thesis table: CLR).

Formulation
-----------
A single row (a ``1 x (n+1)`` table); column ``j`` holds ``F(j)``::

    M[0, j] = j                           if j < 2
            = M[0, j-1] + M[0, j-2]       otherwise

Reads: Left only.  CLR, NOSE and SONE all match and all take ``n + 1`` steps on one row;
the canonical order picks CLR, the thesis's pattern.

float64 so that large sizes do not overflow (``F(1000)`` is about ``4.3e208``); values are
exact integers up to ``F(78)``.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Fibonacci Recurrence Relation"
THESIS_PATTERN = "CLR"
EXPECTED_PATTERN = "CLR"
FORMULATION = "1 x (n+1) table: M[0,j] = M[0,j-1] + M[0,j-2], M[0,0]=0, M[0,1]=1"


def data(n):
    """Builder arguments of family size ``n``: ``F(0..n)``."""
    return (n,)


def make_fibonacci(n):
    """The recurrence for ``F(0..n)`` as a ``1 x (n+1)`` table."""

    @recurrence(shape=(1, n + 1), dtype=np.float64)
    def fibonacci(M, i, j):
        if j < 2:
            return float(j)
        return M[i, j - 1] + M[i, j - 2]

    return fibonacci


def reference(n):
    """Exact integers by fast doubling, one ``F(j)`` at a time, then float64."""

    def fib(k):
        # (F(k), F(k+1)) by fast doubling
        if k == 0:
            return 0, 1
        a, b = fib(k // 2)
        c = a * (2 * b - a)
        d = a * a + b * b
        return (d, c + d) if k % 2 else (c, d)

    return np.array([[float(fib(j)[0]) for j in range(n + 1)]], dtype=np.float64)


@family
def fibonacci(n):
    """``F(0..n)`` in one row."""
    return make_fibonacci(*data(n))
