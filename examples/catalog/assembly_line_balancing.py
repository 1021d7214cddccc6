"""Assembly-line scheduling on two lines (thesis table: RDU).

Formulation
-----------
Two assembly lines ``l = 0, 1`` have stations ``j = 0..n-1``; station ``j`` of line ``l``
takes ``a[l, j]``; moving to the other line after station ``j`` costs ``t[l, j]``;
leaving line ``l`` after the last station costs ``x[l]`` (entering costs ``e[l]``).  Row
``j`` is the station (the stage), column ``l`` the line; ``M[j, l]`` is the fastest time
from station ``j`` of line ``l`` to the exit::

    M[n-1, l] = a[l, n-1] + x[l]
    M[j, l]   = a[l, j] + min(M[j+1, l], t[l, j] + M[j+1, 1 - l])

The answer is ``min_l e[l] + M[0, l]``.  Reads: Down, plus DownRight from line 0 and
DownLeft from line 1: pattern RDU, as in the thesis's table.  The table is ``n x 2``.
(Lines on the rows and stations on the columns would give CRL instead.)

Reference: Cormen et al., *Introduction to Algorithms* (2nd ed.), section 15.1;
Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = stations): times in ``1..9``, transfers in ``1..4``,
entry and exit in ``1..5``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Assembly Line Balancing"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "rows=station, cols=line: M[j,l] = a[l,j] + min(M[j+1,l], t[l,j] + M[j+1,1-l]); M[n-1,l] = a[l,n-1] + x[l]"


def data(n):
    """Seeded ``(a, t, e, x)`` for two lines of ``n`` stations."""
    rng = np.random.default_rng(n)
    a = rng.integers(1, 10, (2, n)).astype(np.int64)
    t = rng.integers(1, 5, (2, n)).astype(np.int64)
    e = rng.integers(1, 6, 2).astype(np.int64)
    x = rng.integers(1, 6, 2).astype(np.int64)
    return a, t, e, x


def make_assembly_line_balancing(a, t, e, x):
    """The assembly-line recurrence: table ``n x 2``."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    t = np.ascontiguousarray(t, dtype=np.int64)
    x = np.ascontiguousarray(x, dtype=np.int64)
    n = a.shape[1]

    @recurrence(shape=(n, 2), dtype=np.int64, args=(a, t, x))
    def assembly_line_balancing(M, j, l, a, t, x):
        if j == a.shape[1] - 1:
            return a[l, j] + x[l]
        return a[l, j] + min(M[j + 1, l], t[l, j] + M[j + 1, 1 - l])

    return assembly_line_balancing


def reference(a, t, e, x):
    """Top-down memoised recursion."""
    from functools import lru_cache

    n = a.shape[1]

    @lru_cache(maxsize=None)
    def rest(j, l):
        if j == n - 1:
            return int(a[l, j] + x[l])
        return int(a[l, j]) + min(rest(j + 1, l), int(t[l, j]) + rest(j + 1, 1 - l))

    return np.array([[rest(j, l) for l in range(2)] for j in range(n)], dtype=np.int64)


def fastest_way(a, t, e, x):
    """Cormen's forward FASTEST-WAY (time from the entry to each station), for checks."""
    n = a.shape[1]
    f = [int(e[0] + a[0, 0]), int(e[1] + a[1, 0])]
    for j in range(1, n):
        f = [
            min(f[0], f[1] + int(t[1, j - 1])) + int(a[0, j]),
            min(f[1], f[0] + int(t[0, j - 1])) + int(a[1, j]),
        ]
    return min(f[0] + int(x[0]), f[1] + int(x[1]))


@family
def assembly_line_balancing(n):
    """Two seeded random assembly lines of ``n`` stations (an ``n x 2`` table)."""
    return make_assembly_line_balancing(*data(n))
