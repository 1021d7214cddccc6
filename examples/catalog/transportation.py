"""Transportation from a limited and an unlimited warehouse (thesis table: RDU).

Formulation
-----------
Destinations ``k = 0..n-1`` need ``d_k`` units each.  Warehouse A holds ``a_0`` units
and ships at ``cA_k`` a unit to destination ``k``; warehouse B has unlimited stock and
ships at ``cB_k``.  Row ``k`` is the stage (destinations ``k..n-1`` still to supply; row
``n``: none), column ``a`` the units left at A (``0..a_0``)::

    M[n, a] = 0
    M[k, a] = min_{0 <= x <= min(a, d_k)} cA_k x + cB_k (d_k - x) + M[k+1, a - x]

Reads: Down (``x = 0``) and DownLeft: RDU and SONE match; RDU needs fewer steps.  The
thesis lists RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2 (formulation chosen here:
the problem's name leaves it open).

Family data (seeded by ``n`` = destinations): demands in ``0..4``, unit costs in
``1..10``, ``a_0 = n``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Transportation Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[k,a] = min_{x<=min(a,d_k)} cA_k x + cB_k (d_k - x) + M[k+1, a-x]; M[n,a] = 0"


def data(n):
    """Seeded ``(demand, cost_a, cost_b, supply_a)``."""
    rng = np.random.default_rng(n)
    return (
        rng.integers(0, 5, n).astype(np.int64),
        rng.integers(1, 11, n).astype(np.int64),
        rng.integers(1, 11, n).astype(np.int64),
        n,
    )


def make_transportation(demand, cost_a, cost_b, supply_a):
    """The transportation recurrence: table ``(n+1) x (supply_a+1)``."""
    d = np.ascontiguousarray(demand, dtype=np.int64)
    ca = np.ascontiguousarray(cost_a, dtype=np.int64)
    cb = np.ascontiguousarray(cost_b, dtype=np.int64)

    @recurrence(shape=(len(d) + 1, int(supply_a) + 1), dtype=np.int64, args=(d, ca, cb))
    def transportation(M, k, a, d, ca, cb):
        if k == d.shape[0]:
            return 0
        best = cb[k] * d[k] + M[k + 1, a]
        for x in range(1, min(a, d[k]) + 1):
            t = ca[k] * x + cb[k] * (d[k] - x) + M[k + 1, a - x]
            if t < best:
                best = t
        return best

    return transportation


def reference(demand, cost_a, cost_b, supply_a):
    """Top-down memoised recursion."""
    from functools import lru_cache

    n = len(demand)
    d, ca, cb = [int(v) for v in demand], [int(v) for v in cost_a], [int(v) for v in cost_b]

    @lru_cache(maxsize=None)
    def ship(k, a):
        if k == n:
            return 0
        return min(ca[k] * x + cb[k] * (d[k] - x) + ship(k + 1, a - x) for x in range(min(a, d[k]) + 1))

    return np.array([[ship(k, a) for a in range(supply_a + 1)] for k in range(n + 1)], dtype=np.int64)


def greedy_cost(demand, cost_a, cost_b, supply_a):
    """The optimum by a different argument, for checks: each unit from A saves
    ``cB_k - cA_k``; give A's units to the largest positive savings first."""
    total = int(np.dot(demand, cost_b))
    savings = sorted(
        (int(cb) - int(ca) for dk, ca, cb in zip(demand, cost_a, cost_b) for _ in range(int(dk))),
        reverse=True,
    )
    return total - sum(s for s in savings[:supply_a] if s > 0)


@family
def transportation(n):
    """Supply ``n`` seeded random destinations from two warehouses."""
    return make_transportation(*data(n))
