"""Covering as an integer knapsack (thesis table: RDU).

Formulation
-----------
Item types ``k = 0..K-1`` have size ``s_k`` and cost ``c_k`` and may be used any number
of times; the demand ``D`` must be covered (total size at least ``D``) at least cost.
The last type has size 1, so every demand can be met.  Row ``k`` is the stage ("types
``k..K-1`` still to decide"; row ``K``: none), column ``d`` the demand still uncovered::

    M[K, d] = 0 if d == 0 else BIG
    M[k, d] = min_{0 <= x <= ceil(d / s_k)} c_k x + M[k+1, max(0, d - x s_k)]

Reads: Down (``x = 0``) and DownLeft: RDU and SONE match; RDU needs fewer steps.  The
thesis lists RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2 (the covering problem
recast as an integer knapsack).

Family data (seeded by ``n`` = types): sizes in ``1..12`` (the last one 1), costs
``s_k`` times a random factor in ``3..7``, ``D = 4 n``; ``BIG = 10^12``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "COV as KSINT Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[k,d] = min_{x} c_k x + M[k+1, max(0, d - x s_k)]; M[K,0] = 0, M[K,d>0] = BIG"

BIG = 10**12


def data(n):
    """Seeded ``(sizes, costs, demand)`` of ``n`` item types."""
    rng = np.random.default_rng(n)
    sizes = rng.integers(1, 13, n).astype(np.int64)
    sizes[-1] = 1
    costs = (sizes * rng.integers(3, 8, n)).astype(np.int64)
    return sizes, costs, 4 * n


def make_cov_as_ksint(sizes, costs, demand):
    """The covering-knapsack recurrence: table ``(K+1) x (demand+1)``."""
    s = np.ascontiguousarray(sizes, dtype=np.int64)
    c = np.ascontiguousarray(costs, dtype=np.int64)

    @recurrence(shape=(len(s) + 1, int(demand) + 1), dtype=np.int64, args=(s, c, BIG))
    def cov_as_ksint(M, k, d, s, c, big):
        if k == s.shape[0]:
            if d == 0:
                return 0
            return big
        best = M[k + 1, d]
        x = 1
        while (x - 1) * s[k] < d:
            rest = d - x * s[k]
            if rest < 0:
                rest = 0
            t = c[k] * x + M[k + 1, rest]
            if t < best:
                best = t
            x += 1
        return best

    return cov_as_ksint


def reference(sizes, costs, demand):
    """The one-copy-at-a-time form ``min(M[k+1, d], c_k + M[k, max(0, d - s_k)])``."""
    K = len(sizes)
    table = np.full((K + 1, demand + 1), BIG, dtype=np.int64)
    table[K, 0] = 0
    for k in range(K - 1, -1, -1):
        row = table[k + 1].tolist()
        for d in range(1, demand + 1):
            row[d] = min(row[d], int(costs[k]) + row[max(0, d - int(sizes[k]))])
        table[k] = row
    return table


@family
def cov_as_ksint(n):
    """Cover a demand of ``4 n`` with ``n`` seeded random item types."""
    return make_cov_as_ksint(*data(n))
