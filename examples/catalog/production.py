"""Optimal production with reject allowances (thesis table: RDU).

Formulation
-----------
``D`` good items are needed and at most ``R`` production runs can be made.  A run of
``x`` items costs ``K [x > 0] + c x``; each item is good with probability ``q``
independently (``B[x, g]``: the binomial probability of ``g`` good items out of ``x``);
every good item still missing after the last run costs a penalty ``pen``.  Row ``k`` is
the run (row ``R``: no runs left), column ``d`` the good items still needed::

    M[R, d] = pen * d
    M[k, 0] = 0
    M[k, d] = min_{0 <= x <= X} K [x > 0] + c x + sum_{g=0..x} B[x, g] M[k+1, max(d - g, 0)]

Reads: Down (``g = 0``) and DownLeft: RDU and SONE match; RDU needs fewer steps.  The
thesis lists RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2; the reject-allowance
example of Hillier & Lieberman, *Introduction to Operations Research*, there with
``D = 1`` (formulation chosen here: the problem's name leaves it open).

Family data (seeded by ``n`` = ``R`` runs): ``D = 1 + n // 5``, lot sizes up to
``X = 2 D + 2``, ``q`` in ``[0.4, 0.7)``, ``K = 3``, ``c = 1``, ``pen = 16``.
"""

import math

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Production Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[k,d] = min_x K[x>0] + c x + sum_g B[x,g] M[k+1, max(d-g,0)]; M[R,d] = pen d"


def data(n):
    """Seeded ``(runs, need, max_lot, q, setup, unit, penalty)``."""
    rng = np.random.default_rng(n)
    need = 1 + n // 5
    return n, need, 2 * need + 2, float(rng.uniform(0.4, 0.7)), 3.0, 1.0, 16.0


def make_production(runs, need, max_lot, q, setup, unit, penalty):
    """The production recurrence: table ``(runs+1) x (need+1)``."""
    X = int(max_lot)
    B = np.zeros((X + 1, X + 1), dtype=np.float64)
    for x in range(X + 1):
        for g in range(x + 1):
            B[x, g] = math.comb(x, g) * q**g * (1.0 - q) ** (x - g)

    @recurrence(
        shape=(int(runs) + 1, int(need) + 1),
        dtype=np.float64,
        args=(B, float(setup), float(unit), float(penalty), int(runs)),
    )
    def production(M, k, d, B, K, c, pen, R):
        if k == R:
            return pen * d
        if d == 0:
            return 0.0
        best = M[k + 1, d]
        for x in range(1, B.shape[0]):
            v = K + c * x
            for g in range(x + 1):
                left = d - g
                if left < 0:
                    left = 0
                v += B[x, g] * M[k + 1, left]
            if v < best:
                best = v
        return best

    return production


def reference(runs, need, max_lot, q, setup, unit, penalty):
    """Backward fill with NumPy; the binomial laws built by repeated convolution."""
    laws = [np.array([1.0])]
    for _ in range(max_lot):
        laws.append(np.convolve(laws[-1], [1.0 - q, q]))
    table = np.zeros((runs + 1, need + 1), dtype=np.float64)
    table[runs] = penalty * np.arange(need + 1)
    for k in range(runs - 1, -1, -1):
        nxt = table[k + 1]
        for d in range(1, need + 1):
            costs = [nxt[d]]
            for x in range(1, max_lot + 1):
                g = np.arange(x + 1)
                costs.append(setup + unit * x + float(laws[x] @ nxt[np.maximum(d - g, 0)]))
            table[k, d] = min(costs)
    return table


@family
def production(n):
    """Produce ``1 + n // 5`` good items in at most ``n`` runs (seeded yield)."""
    return make_production(*data(n))
