"""Optimal covering: choosing a few cover sizes for many objects (thesis table: RUD).

Formulation
-----------
Objects ``1..n`` are sorted by size; a cover made in the size of object ``l`` fits
objects ``1..l`` and costs ``c_l`` apiece (``c`` non-decreasing).  At most ``K`` cover
sizes may be produced; each object gets the smallest produced cover that fits it, so a
choice of sizes splits the objects into consecutive groups, each paying the price of its
largest member.  Row ``j`` is "at most ``j`` cover sizes", column ``l`` "the ``l``
smallest objects"::

    M[j, 0] = 0
    M[0, l] = BIG                                              (l > 0: impossible)
    M[j, l] = min_{0 <= d < l} M[j-1, d] + (l - d) c_l          (j, l > 0)

Reads: UpLeft only: RUD, CLR and NOSE match; RUD needs the fewest steps
(``K + 1 <= n + 1`` rows).  The thesis lists RUD.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = objects): prices sorted from ``1..100``,
``K = max(1, n // 3)``; ``BIG = 10^12``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Covering Problem"
THESIS_PATTERN = "RUD"
EXPECTED_PATTERN = "RUD"
FORMULATION = "M[j,l] = min_{d<l} M[j-1,d] + (l-d) c_l; M[j,0] = 0, M[0,l>0] = BIG"

BIG = 10**12


def data(n):
    """Seeded non-decreasing cover prices of ``n`` objects and the size budget ``K``."""
    rng = np.random.default_rng(n)
    return np.sort(rng.integers(1, 101, n)).astype(np.int64), max(1, n // 3)


def make_optimal_covering(prices, sizes):
    """The covering recurrence: table ``(sizes+1) x (n+1)``."""
    c = np.ascontiguousarray(prices, dtype=np.int64)

    @recurrence(shape=(int(sizes) + 1, len(c) + 1), dtype=np.int64, args=(c, BIG))
    def optimal_covering(M, j, l, c, big):
        if l == 0:
            return 0
        if j == 0:
            return big
        best = M[j - 1, 0] + l * c[l - 1]
        for d in range(1, l):
            t = M[j - 1, d] + (l - d) * c[l - 1]
            if t < best:
                best = t
        return best

    return optimal_covering


def reference(prices, sizes):
    """Top-down memoised recursion."""
    from functools import lru_cache

    c = [int(v) for v in prices]

    @lru_cache(maxsize=None)
    def cover(j, l):
        if l == 0:
            return 0
        if j == 0:
            return BIG
        return min(cover(j - 1, d) + (l - d) * c[l - 1] for d in range(l))

    return np.array(
        [[cover(j, l) for l in range(len(c) + 1)] for j in range(sizes + 1)], dtype=np.int64
    )


@family
def optimal_covering(n):
    """Cover ``n`` seeded random objects with at most ``max(1, n // 3)`` sizes."""
    return make_optimal_covering(*data(n))
