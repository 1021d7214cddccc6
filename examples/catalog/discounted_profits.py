"""Discounted profits: harvesting a renewable stock over years (thesis table: RDU).

Formulation
-----------
A lake holds ``b`` fish (``0..B``) at the start of year ``t``.  Catching ``x <= b`` earns
``P[x]``; the ``b - x`` left grow by the next year to ``G[b - x]`` (logistic growth,
capped at ``B``); profits are discounted by ``beta`` per year.  Row ``t`` is the year
(row ``T``: the horizon), column ``b`` the stock::

    M[T, b] = 0
    M[t, b] = max_{0 <= x <= b} P[x] + beta * M[t+1, G[b - x]]

Reads: row ``t + 1`` at stocks above and below ``b`` (DownLeft, Down, DownRight): pattern
RDU, as in the thesis's table.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = ``T`` years): ``B = max(4, n)``, ``P`` concave (square-root
shaped, random scale), ``G[r] = min(B, r + r (B - r) // B)``, ``beta = 0.9``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Discounted Profits Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[t,b] = max_{0<=x<=b} P[x] + beta M[t+1, G[b-x]]; M[T,b] = 0"


def data(n):
    """Seeded ``(years, profit, growth, beta)``."""
    rng = np.random.default_rng(n)
    B = max(4, n)
    profit = rng.uniform(1.0, 3.0) * np.sqrt(np.arange(B + 1, dtype=np.float64))
    r = np.arange(B + 1)
    growth = np.minimum(B, r + r * (B - r) // B).astype(np.int64)
    return n, profit, growth, 0.9


def make_discounted_profits(years, profit, growth, beta):
    """The harvesting recurrence: table ``(years+1) x (B+1)``."""
    P = np.ascontiguousarray(profit, dtype=np.float64)
    G = np.ascontiguousarray(growth, dtype=np.int64)

    @recurrence(shape=(int(years) + 1, len(P)), dtype=np.float64, args=(P, G, float(beta), int(years)))
    def discounted_profits(M, t, b, P, G, beta, T):
        if t == T:
            return 0.0
        best = P[0] + beta * M[t + 1, G[b]]
        for x in range(1, b + 1):
            v = P[x] + beta * M[t + 1, G[b - x]]
            if v > best:
                best = v
        return best

    return discounted_profits


def reference(years, profit, growth, beta):
    """Backward fill, one year at a time, with a (stock x catch) NumPy matrix."""
    B = len(profit) - 1
    table = np.zeros((years + 1, B + 1), dtype=np.float64)
    b = np.arange(B + 1)[:, None]
    x = np.arange(B + 1)[None, :]
    left = np.clip(b - x, 0, None)
    for t in range(years - 1, -1, -1):
        value = profit[x] + beta * table[t + 1][growth[left]]
        table[t] = np.where(x <= b, value, -np.inf).max(axis=1)
    return table


@family
def discounted_profits(n):
    """Harvest a seeded random lake for ``n`` years."""
    return make_discounted_profits(*data(n))
