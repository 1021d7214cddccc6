"""Optimal investment over several periods (thesis table: RDU).

Formulation
-----------
An investor holds ``w`` units of wealth (``0..W``) at the start of period ``t``.  Putting
``x <= w`` units into that period's project returns ``G[t, x]`` units at the period's end
(the rest is kept as is); wealth is capped at ``W``.  After the last period the investor
values wealth ``w`` at ``U[w]`` (concave).  Row ``t`` is the period (row ``T``: the
horizon), column ``w`` the wealth::

    M[T, w] = U[w]
    M[t, w] = max_{0 <= x <= w} M[t+1, min(W, w - x + G[t, x])]

Reads: row ``t + 1`` at more or less wealth (DownLeft, Down, DownRight): pattern RDU, as
in the thesis's table.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2 (formulation chosen here: the
problem's name leaves it open).

Family data (seeded by ``n`` = ``T`` periods): ``W = max(4, n)``, each period's project
returns ``floor(m_t x)`` for a growth factor ``m_t`` in ``[0.6, 1.8)``, ``U = sqrt``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Investment Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[t,w] = max_{0<=x<=w} M[t+1, min(W, w - x + G[t,x])]; M[T,w] = U[w]"


def data(n):
    """Seeded ``(G, U)``: returns ``T x (W+1)`` and terminal utility ``W+1``."""
    rng = np.random.default_rng(n)
    W = max(4, n)
    factors = rng.uniform(0.6, 1.8, n)
    G = np.floor(factors[:, None] * np.arange(W + 1)[None, :]).astype(np.int64)
    return G, np.sqrt(np.arange(W + 1, dtype=np.float64))


def make_optimal_investment(G, U):
    """The investment recurrence: table ``(T+1) x (W+1)``."""
    g = np.ascontiguousarray(G, dtype=np.int64)
    u = np.ascontiguousarray(U, dtype=np.float64)

    @recurrence(shape=(g.shape[0] + 1, len(u)), dtype=np.float64, args=(g, u))
    def optimal_investment(M, t, w, G, U):
        if t == G.shape[0]:
            return U[w]
        cap = U.shape[0] - 1
        best = -1.0
        for x in range(w + 1):
            nxt = w - x + G[t, x]
            if nxt > cap:
                nxt = cap
            v = M[t + 1, nxt]
            if v > best:
                best = v
        return best

    return optimal_investment


def reference(G, U):
    """Backward fill, a whole period at a time, over a (wealth x amount) NumPy grid."""
    T, W = G.shape[0], len(U) - 1
    table = np.zeros((T + 1, W + 1), dtype=np.float64)
    table[T] = U
    w = np.arange(W + 1)[:, None]
    x = np.arange(W + 1)[None, :]
    for t in range(T - 1, -1, -1):
        nxt = np.clip(w - x + G[t][None, :], 0, W)
        table[t] = np.where(x <= w, table[t + 1][nxt], -np.inf).max(axis=1)
    return table


@family
def optimal_investment(n):
    """Invest over ``n`` periods in seeded random projects."""
    return make_optimal_investment(*data(n))
