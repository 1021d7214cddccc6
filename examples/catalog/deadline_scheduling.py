"""Deadline scheduling of unit-time jobs for maximum profit (thesis table: RDU).

Formulation
-----------
Jobs ``0..n-1`` take one time unit each; job ``k`` earns ``p_k`` if it finishes by its
deadline ``d_k``.  Jobs are sorted by deadline; a set of jobs can meet its deadlines iff
running it in deadline order does, so the ``k``-th decision is "run job ``k`` next or
drop it".  Row ``k`` is the stage (jobs ``k..n-1`` left), column ``t`` the slots already
used (``0..n``)::

    M[n, t] = 0
    M[k, t] = max(M[k+1, t], p_k + M[k+1, t+1])    if t + 1 <= d_k
            = M[k+1, t]                            otherwise

Reads: Down and DownRight: RDU and SENO match; RDU needs fewer steps.  The thesis lists
RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2; Horowitz & Sahni,
*Fundamentals of Computer Algorithms* (job sequencing with deadlines).

Family data (seeded by ``n`` = jobs): deadlines in ``1..max(1, n // 2)`` (so some jobs
must be dropped), profits in ``1..50``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Deadline Scheduling Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "jobs by deadline: M[k,t] = max(M[k+1,t], p_k + M[k+1,t+1] if t+1 <= d_k); M[n,t] = 0"


def data(n):
    """Seeded ``(deadlines, profits)``, sorted by deadline."""
    rng = np.random.default_rng(n)
    d = rng.integers(1, max(1, n // 2) + 1, n).astype(np.int64)
    p = rng.integers(1, 51, n).astype(np.int64)
    order = np.argsort(d, kind="stable")
    return d[order], p[order]


def make_deadline_scheduling(deadlines, profits):
    """The deadline-scheduling recurrence: table ``(n+1) x (n+1)`` (jobs by deadline)."""
    d = np.ascontiguousarray(deadlines, dtype=np.int64)
    p = np.ascontiguousarray(profits, dtype=np.int64)
    if np.any(np.diff(d) < 0):
        raise ValueError("jobs must be sorted by deadline")
    n = len(d)

    @recurrence(shape=(n + 1, n + 1), dtype=np.int64, args=(d, p))
    def deadline_scheduling(M, k, t, d, p):
        if k == d.shape[0]:
            return 0
        skip = M[k + 1, t]
        if t + 1 <= d[k]:
            return max(skip, p[k] + M[k + 1, t + 1])
        return skip

    return deadline_scheduling


def reference(deadlines, profits):
    """Top-down memoised recursion."""
    from functools import lru_cache

    d, p = [int(v) for v in deadlines], [int(v) for v in profits]
    n = len(d)

    @lru_cache(maxsize=None)
    def best(k, t):
        if k == n:
            return 0
        take = p[k] + best(k + 1, t + 1) if t + 1 <= d[k] else 0
        return max(best(k + 1, t), take)

    return np.array([[best(k, t) for t in range(n + 1)] for k in range(n + 1)], dtype=np.int64)


@family
def deadline_scheduling(n):
    """Schedule ``n`` seeded random unit jobs with deadlines."""
    return make_deadline_scheduling(*data(n))
