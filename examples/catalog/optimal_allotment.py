"""Optimal allotment of a resource among activities (thesis table: RDU).

Formulation
-----------
``S`` units of a resource are allotted to activities ``k = 0..n-1``; giving ``x`` units
to activity ``k`` returns ``R[k, x]``.  Row ``k`` is the stage ("activities ``k..n-1``
still to be served"; row ``n``: none left), column ``s`` the units still available::

    M[n, s] = 0
    M[k, s] = max_{0 <= x <= s} R[k, x] + M[k+1, s - x]

Reads: Down (``x = 0``) and DownLeft: RDU and SONE match; RDU needs fewer steps.  The
thesis lists RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = activities): ``S = 2 n``; returns are cumulative sums of
decreasing random increments (concave, non-decreasing).
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Allotment"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[k,s] = max_{0<=x<=s} R[k,x] + M[k+1, s-x]; M[n,s] = 0"


def data(n):
    """Seeded return table ``R`` (``n x (S+1)``) with ``S = 2 n``."""
    rng = np.random.default_rng(n)
    S = 2 * n
    steps = -np.sort(-rng.integers(0, 20, (n, S)), axis=1)
    R = np.concatenate([np.zeros((n, 1), dtype=np.int64), np.cumsum(steps, axis=1)], axis=1)
    return (R.astype(np.int64),)


def make_optimal_allotment(R):
    """The allotment recurrence: table ``(n+1) x (S+1)`` for returns ``R`` of shape ``n x (S+1)``."""
    r = np.ascontiguousarray(R, dtype=np.int64)

    @recurrence(shape=(r.shape[0] + 1, r.shape[1]), dtype=np.int64, args=(r,))
    def optimal_allotment(M, k, s, R):
        if k == R.shape[0]:
            return 0
        best = R[k, 0] + M[k + 1, s]
        for x in range(1, s + 1):
            t = R[k, x] + M[k + 1, s - x]
            if t > best:
                best = t
        return best

    return optimal_allotment


def reference(R):
    """Backward fill, a whole stage at a time (vectorised max over allotments)."""
    n, width = R.shape
    table = np.zeros((n + 1, width), dtype=np.int64)
    for k in range(n - 1, -1, -1):
        for s in range(width):
            table[k, s] = np.max(R[k, : s + 1] + table[k + 1, s::-1])
    return table


@family
def optimal_allotment(n):
    """Allot ``2 n`` units among ``n`` seeded random activities."""
    return make_optimal_allotment(*data(n))
