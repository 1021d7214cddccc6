"""Reliability design: redundant components in series (thesis table: RUD).

Formulation
-----------
A system is ``n`` stages in series; stage ``i`` uses ``m >= 1`` parallel copies of a
component of cost ``c_i`` and reliability ``r_i``, so it works with probability
``R_i(m) = 1 - (1 - r_i)^m``.  Row ``i`` is "stages ``1..i`` designed", column ``b`` the
budget spent on them (``0..B``)::

    M[0, b] = 1
    M[i, b] = max_{m >= 1, m c_i <= b} R_i(m) * M[i-1, b - m c_i]     (0 if c_i > b)

``M[n, B]`` is the best system reliability.  Reads: UpLeft only (``m >= 1``): RUD, CLR
and NOSE match; RUD needs the fewest steps (``n + 1`` rows, fewer than the ``B + 1``
columns).  The thesis lists RUD.  ``R_i(m)`` is tabulated as an argument.

Reference: Horowitz & Sahni, *Fundamentals of Computer Algorithms*;
Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = stages): costs in ``1..5``, reliabilities in
``[0.5, 0.95)``, budget ``B = sum(c) + 2 n``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Reliability Design Problem"
THESIS_PATTERN = "RUD"
EXPECTED_PATTERN = "RUD"
FORMULATION = "M[i,b] = max_{m>=1, m c_i<=b} (1-(1-r_i)^m) M[i-1, b - m c_i]; M[0,b] = 1"


def data(n):
    """Seeded ``(costs, reliabilities, budget)`` of ``n`` stages."""
    rng = np.random.default_rng(n)
    costs = rng.integers(1, 6, n).astype(np.int64)
    rel = rng.uniform(0.5, 0.95, n)
    return costs, rel, int(costs.sum()) + 2 * n


def make_reliability_design(costs, reliabilities, budget):
    """The reliability-design recurrence: table ``(n+1) x (budget+1)``."""
    c = np.ascontiguousarray(costs, dtype=np.int64)
    r = np.asarray(reliabilities, dtype=np.float64)
    copies = np.arange(budget + 1)
    # R[i, m] = reliability of stage i with m copies
    R = np.ascontiguousarray(1.0 - (1.0 - r[:, None]) ** copies[None, :])

    @recurrence(shape=(len(c) + 1, int(budget) + 1), dtype=np.float64, args=(c, R))
    def reliability_design(M, i, b, c, R):
        if i == 0:
            return 1.0
        ci = c[i - 1]
        best = 0.0
        m = 1
        while m * ci <= b:
            t = R[i - 1, m] * M[i - 1, b - m * ci]
            if t > best:
                best = t
            m += 1
        return best

    return reliability_design


def reference(costs, reliabilities, budget):
    """Top-down memoised recursion, computing ``1 - (1 - r)^m`` on the fly."""
    from functools import lru_cache

    c = [int(v) for v in costs]
    r = [float(v) for v in reliabilities]

    @lru_cache(maxsize=None)
    def best(i, b):
        if i == 0:
            return 1.0
        options = [
            (1.0 - (1.0 - r[i - 1]) ** m) * best(i - 1, b - m * c[i - 1])
            for m in range(1, b // c[i - 1] + 1)
        ]
        return max(options, default=0.0)

    return np.array(
        [[best(i, b) for b in range(budget + 1)] for i in range(len(c) + 1)], dtype=np.float64
    )


@family
def reliability_design(n):
    """Reliability design of ``n`` seeded random stages."""
    return make_reliability_design(*data(n))
