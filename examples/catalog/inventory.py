"""Inventory problem: periodic ordering with setup, unit and holding costs (thesis table: RDU).

Formulation
-----------
Periods ``t = 0..T-1`` with known demands ``D_t``; a warehouse holds at most ``Smax``
units.  Ordering ``x`` units in period ``t`` costs ``K [x > 0] + c_t x``, and each unit
left at the end of a period costs ``h``.  Row ``t`` is the period (row ``T``: the
horizon), column ``s`` the stock at its start (``0..Smax``)::

    M[T, s] = 0
    M[t, s] = min over x with 0 <= s + x - D_t <= Smax of
              K [x > 0] + c_t x + h (s + x - D_t) + M[t+1, s + x - D_t]

Reads: row ``t + 1`` at any stock level (DownLeft, Down, DownRight): pattern RDU, as in
the thesis's table.

Reference: Wagner & Whitin (1958); Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = ``T``): demands in ``0..4``, unit costs in ``1..5``,
``K = 8``, ``h = 1``, ``Smax = 10``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Inventory Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[t,s] = min_x K[x>0] + c_t x + h s' + M[t+1, s'] with s' = s + x - D_t in 0..Smax; M[T,s] = 0"


def data(n):
    """Seeded ``(demand, unit_cost, setup, holding, capacity)`` for ``n`` periods."""
    rng = np.random.default_rng(n)
    return rng.integers(0, 5, n).astype(np.int64), rng.integers(1, 6, n).astype(np.int64), 8, 1, 10


def make_inventory(demand, unit_cost, setup, holding, capacity):
    """The inventory recurrence: table ``(T+1) x (capacity+1)``."""
    D = np.ascontiguousarray(demand, dtype=np.int64)
    c = np.ascontiguousarray(unit_cost, dtype=np.int64)
    T = len(D)

    @recurrence(
        shape=(T + 1, int(capacity) + 1),
        dtype=np.int64,
        args=(D, c, int(setup), int(holding), int(capacity)),
    )
    def inventory(M, t, s, D, c, K, h, Smax):
        if t == D.shape[0]:
            return 0
        best = -1
        x = max(0, D[t] - s)
        while s + x - D[t] <= Smax:
            left = s + x - D[t]
            cost = c[t] * x + h * left + M[t + 1, left]
            if x > 0:
                cost += K
            if best < 0 or cost < best:
                best = cost
            x += 1
        return best

    return inventory


def reference(demand, unit_cost, setup, holding, capacity):
    """Backward fill, a whole period at a time: a (stock x next-stock) cost matrix."""
    T = len(demand)
    table = np.zeros((T + 1, capacity + 1), dtype=np.int64)
    s = np.arange(capacity + 1)[:, None]
    nxt = np.arange(capacity + 1)[None, :]
    for t in range(T - 1, -1, -1):
        x = nxt + int(demand[t]) - s  # order needed to reach next-stock
        cost = int(unit_cost[t]) * x + holding * nxt + table[t + 1][None, :] + setup * (x > 0)
        table[t] = np.where(x >= 0, cost, np.iinfo(np.int64).max).min(axis=1)
    return table


@family
def inventory(n):
    """A seeded random ``n``-period inventory plan with a 10-unit warehouse."""
    return make_inventory(*data(n))
