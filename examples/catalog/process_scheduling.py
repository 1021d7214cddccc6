"""Process scheduling on two identical processors, minimum makespan (thesis table: RDU).

Formulation
-----------
Processes ``k = 0..n-1`` take ``p_k`` time units; each runs on processor A or B; the
makespan is the larger total load.  ``P_k = p_0 + ... + p_{k-1}`` is the work already
placed.  Row ``k`` is the stage (process ``k`` next; row ``n``: all placed), column ``a``
the load on A (``0..P_n``)::

    M[n, a] = max(a, P_n - a)
    M[k, a] = 0                                           if a > P_k (not a state)
            = min(M[k+1, a + p_k], M[k+1, a])              otherwise   (A or B)

``M[0, 0]`` is the least makespan.  Reads: Down and DownRight: RDU and SENO match; RDU
needs fewer steps.  The thesis lists RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2 (formulation chosen here:
the problem's name leaves it open); this two-processor makespan form is the partition
problem.

Family data (seeded by ``n`` = processes): times in ``1..6``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Process Scheduling Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[k,a] = min(M[k+1,a+p_k], M[k+1,a]) for a <= P_k; M[n,a] = max(a, P_n - a)"


def data(n):
    """Seeded processing times of ``n`` processes."""
    rng = np.random.default_rng(n)
    return (rng.integers(1, 7, n).astype(np.int64),)


def make_process_scheduling(times):
    """The two-processor scheduling recurrence: table ``(n+1) x (sum(times)+1)``."""
    p = np.ascontiguousarray(times, dtype=np.int64)
    prefix = np.concatenate(([0], np.cumsum(p))).astype(np.int64)

    @recurrence(shape=(len(p) + 1, int(prefix[-1]) + 1), dtype=np.int64, args=(p, prefix))
    def process_scheduling(M, k, a, p, P):
        n = p.shape[0]
        if k == n:
            return max(a, P[n] - a)
        if a > P[k]:
            return 0
        return min(M[k + 1, a + p[k]], M[k + 1, a])

    return process_scheduling


def reference(times):
    """Backward fill with NumPy: each row from shifted copies of the one below."""
    p = [int(v) for v in times]
    n, total = len(p), sum(p)
    prefix = np.concatenate(([0], np.cumsum(p))).astype(np.int64)
    a = np.arange(total + 1)
    table = np.zeros((n + 1, total + 1), dtype=np.int64)
    table[n] = np.maximum(a, total - a)
    for k in range(n - 1, -1, -1):
        valid = a <= prefix[k]
        placed = np.minimum(table[k + 1][np.minimum(a + p[k], total)], table[k + 1])
        table[k] = np.where(valid, placed, 0)
    return table


@family
def process_scheduling(n):
    """Schedule ``n`` seeded random processes on two processors."""
    return make_process_scheduling(*data(n))
