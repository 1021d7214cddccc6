"""Optimal distribution of a stock among markets with uncertain demand (thesis table: RDU).

Formulation
-----------
``S`` units are shipped to markets ``k = 0..n-1``; market ``k`` sells ``min(x, D_k)`` of
the ``x`` units it gets, at price ``p_k``, with demand ``D_k`` uniform on ``0..d_k``.  The
expected revenue ``R[k, x] = p_k E[min(x, D_k)]`` is tabulated as an argument.  Row ``k``
is the stage (markets ``k..n-1`` still to serve), column ``s`` the units left::

    M[n, s] = 0
    M[k, s] = max_{0 <= x <= s} R[k, x] + M[k+1, s - x]

Reads: Down and DownLeft: RDU and SONE match; RDU needs fewer steps.  The thesis lists RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2 (formulation chosen here:
the problem's name leaves it open); the expected-sales revenue is the newsvendor's.

Family data (seeded by ``n`` = markets): ``S = 2 n``, ``d_k`` in ``1..6``, prices in
``1..10``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Distribution Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[k,s] = max_{0<=x<=s} p_k E[min(x, D_k)] + M[k+1, s-x]; M[n,s] = 0"


def data(n):
    """Seeded ``(max_demand, price, supply)`` of ``n`` markets."""
    rng = np.random.default_rng(n)
    return rng.integers(1, 7, n).astype(np.int64), rng.integers(1, 11, n).astype(np.float64), 2 * n


def _expected_revenue(max_demand, price, supply):
    """``R[k, x] = p_k * sum_d P(D_k = d) min(x, d)``."""
    n = len(max_demand)
    R = np.zeros((n, supply + 1), dtype=np.float64)
    for k in range(n):
        d = np.arange(max_demand[k] + 1)
        for x in range(supply + 1):
            R[k, x] = price[k] * np.minimum(x, d).mean()
    return R


def make_optimal_distribution(max_demand, price, supply):
    """The distribution recurrence: table ``(n+1) x (supply+1)``."""
    R = _expected_revenue(max_demand, price, int(supply))

    @recurrence(shape=(R.shape[0] + 1, R.shape[1]), dtype=np.float64, args=(R,))
    def optimal_distribution(M, k, s, R):
        if k == R.shape[0]:
            return 0.0
        best = R[k, 0] + M[k + 1, s]
        for x in range(1, s + 1):
            t = R[k, x] + M[k + 1, s - x]
            if t > best:
                best = t
        return best

    return optimal_distribution


def reference(max_demand, price, supply):
    """Top-down memoised recursion; ``E[min(x, D)] = sum_{y=1..x} P(D >= y)``."""
    from functools import lru_cache

    n = len(max_demand)

    def revenue(k, x):
        d = int(max_demand[k])
        return float(price[k]) * sum((d - y + 1) / (d + 1) for y in range(1, min(x, d) + 1))

    @lru_cache(maxsize=None)
    def best(k, s):
        if k == n:
            return 0.0
        return max(revenue(k, x) + best(k + 1, s - x) for x in range(s + 1))

    return np.array([[best(k, s) for s in range(supply + 1)] for k in range(n + 1)], dtype=np.float64)


@family
def optimal_distribution(n):
    """Distribute ``2 n`` units among ``n`` seeded random markets."""
    return make_optimal_distribution(*data(n))
