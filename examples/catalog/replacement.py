"""Equipment replacement (thesis table: CRL).

Formulation
-----------
A machine is used for periods ``t = 0..T-1``.  At the start of each period it is kept
(operating a machine of age ``a`` costs ``c[a]``) or replaced by a new one (price ``P``,
trade-in ``s[a]``, then the new machine runs at cost ``c[0]``); a machine of the maximum
age ``A`` must be replaced.  At the horizon the machine is sold for ``s[a]``.  Row ``a``
is the machine's age (``0..A``), column ``t`` the period (column ``T``: the horizon)::

    M[a, T] = -s[a]
    M[a, t] = min(c[a] + M[a+1, t+1]               (keep; only if a < A),
                  P - s[a] + c[0] + M[1, t+1])     (replace)

Reads: column ``t + 1`` only, at rows ``a + 1`` (DownRight) and ``1`` (DownRight from
age 0, Right from age 1, UpRight from older ages): UpRight, Right and DownRight, so the
columns are filled right to left: pattern CRL, as in the thesis's table.  (Putting time
on the rows instead would give RDU; the thesis's CRL fits the age-by-time layout.)

Reference: Bellman (1955), "Equipment replacement policy"; Lew & Mauch, *Dynamic
Programming* (2007), ch. 2.

Family data (seeded by ``n`` = ``T`` periods): ``A = max(2, min(n, 8))``, operating costs
increasing from ``1..5`` by ``0..6`` a year, trade-in values decreasing from ``P = 40``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Replacement Problem"
THESIS_PATTERN = "CRL"
EXPECTED_PATTERN = "CRL"
FORMULATION = "rows=age, cols=period: M[a,t] = min(c[a] + M[a+1,t+1], P - s[a] + c[0] + M[1,t+1]); M[a,T] = -s[a]"


def data(n):
    """Seeded ``(periods, operating_cost, trade_in, price)``; ages ``0..A``."""
    rng = np.random.default_rng(n)
    A = max(2, min(n, 8))
    cost = np.cumsum(np.concatenate([rng.integers(1, 6, 1), rng.integers(0, 7, A)])).astype(np.int64)
    price = 40
    trade_in = np.maximum(0, price - np.cumsum(rng.integers(4, 12, A + 1)) + 4).astype(np.int64)
    trade_in[0] = price
    return n, cost, trade_in, price


def make_replacement(periods, operating_cost, trade_in, price):
    """The replacement recurrence: table ``(A+1) x (periods+1)``."""
    c = np.ascontiguousarray(operating_cost, dtype=np.int64)
    s = np.ascontiguousarray(trade_in, dtype=np.int64)

    @recurrence(shape=(len(c), int(periods) + 1), dtype=np.int64, args=(c, s, int(price), int(periods)))
    def replacement(M, a, t, c, s, P, T):
        if t == T:
            return -s[a]
        replace = P - s[a] + c[0] + M[1, t + 1]
        if a + 1 < c.shape[0]:
            return min(c[a] + M[a + 1, t + 1], replace)
        return replace

    return replacement


def reference(periods, operating_cost, trade_in, price):
    """Backward fill, a whole column (all ages) at a time with NumPy."""
    A = len(operating_cost) - 1
    c = np.asarray(operating_cost, dtype=np.int64)
    s = np.asarray(trade_in, dtype=np.int64)
    table = np.zeros((A + 1, periods + 1), dtype=np.int64)
    table[:, periods] = -s
    big = np.iinfo(np.int64).max // 4
    for t in range(periods - 1, -1, -1):
        keep = np.full(A + 1, big, dtype=np.int64)
        keep[:A] = c[:A] + table[1:, t + 1]
        replace = price - s + c[0] + table[1, t + 1]
        table[:, t] = np.minimum(keep, replace)
    return table


@family
def replacement(n):
    """Replacement policy over ``n`` periods for a seeded random machine."""
    return make_replacement(*data(n))
