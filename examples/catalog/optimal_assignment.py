"""Optimal assignment of n people to n jobs, DP over job sets (thesis table: RDU).

Formulation
-----------
``C[k, j]`` is the cost of giving job ``j`` to person ``k``.  People are served in order
``k = 0..n-1``; the state is the set ``S`` of jobs already taken (a bitmask, with
``|S| = k``).  Row ``k`` is the stage, column ``S`` the bitmask (``0..2^n - 1``)::

    M[k, S] = 0                                           if |S| != k (not a state)
            = 0                                           if k == n
            = min_{j not in S} C[k, j] + M[k+1, S | {j}]

``M[0, 0]`` is the cheapest assignment.  Reads: ``(k+1, S | {j})`` with ``S | {j} > S``:
DownRight only.  RDU, CRL and SENO match; RDU needs the fewest steps (``n + 1`` rows).
The thesis lists RDU.  The table has ``(n+1) 2^n`` cells: keep ``n`` small.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n``): costs uniform in ``1..50``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Assignment Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[k,S] = min_{j not in S} C[k,j] + M[k+1, S|{j}] for |S| = k; 0 otherwise and at k = n"


def data(n):
    """Seeded ``n x n`` cost matrix."""
    rng = np.random.default_rng(n)
    return (rng.integers(1, 51, (n, n)).astype(np.int64),)


def make_optimal_assignment(C):
    """The assignment recurrence: table ``(n+1) x 2^n``."""
    c = np.ascontiguousarray(C, dtype=np.int64)
    n = c.shape[0]

    @recurrence(shape=(n + 1, 1 << n), dtype=np.int64, args=(c,))
    def optimal_assignment(M, k, S, C):
        n = C.shape[0]
        size = 0
        for j in range(n):
            size += (S >> j) & 1
        if size != k or k == n:
            return 0
        best = -1
        for j in range(n):
            if (S >> j) & 1 == 0:
                t = C[k, j] + M[k + 1, S | (1 << j)]
                if best < 0 or t < best:
                    best = t
        return best

    return optimal_assignment


def reference(C):
    """Top-down memoised recursion over frozensets of jobs."""
    from functools import lru_cache

    c = np.asarray(C).tolist()
    n = len(c)

    @lru_cache(maxsize=None)
    def best(S):
        k = len(S)
        if k == n:
            return 0
        return min(c[k][j] + best(S | {j}) for j in range(n) if j not in S)

    table = np.zeros((n + 1, 1 << n), dtype=np.int64)
    for mask in range(1 << n):
        S = frozenset(j for j in range(n) if mask >> j & 1)
        table[len(S), mask] = best(S)
    return table


@family
def optimal_assignment(n):
    """Assign ``n`` people to ``n`` jobs with seeded random costs (table ``(n+1) x 2^n``)."""
    return make_optimal_assignment(*data(n))
