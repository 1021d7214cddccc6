"""Stagecoach problem: shortest path through a staged graph (thesis table: RDU).

Formulation
-----------
Row ``s`` is the stage (``0..S-1``), column ``v`` a node of that stage (``0..W-1``).
``C[s, v, u]`` is the cost of the coach from node ``v`` of stage ``s`` to node ``u`` of
stage ``s + 1``; ``E[v]`` the cost from node ``v`` of the last stage to the destination::

    M[S-1, v] = E[v]
    M[s, v]   = min_u C[s, v, u] + M[s+1, u]

``M[s, v]`` is the cheapest cost from ``(s, v)`` to the destination; the answer is
``M[0, 0]`` (the origin).  Reads: the whole row below (DownLeft, Down, DownRight), so the
rows are filled bottom to top: pattern RDU.

Reference: Wagner's stagecoach problem (Hillier & Lieberman, *Introduction to Operations
Research*); Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n``): ``S = n`` stages of ``W = (n + 1) // 2`` nodes, costs
uniform in ``1..20``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Stagecoach Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[s,v] = cheapest cost from node v of stage s = min_u C[s,v,u] + M[s+1,u]; M[S-1,v] = E[v]"


def data(n):
    """Seeded arc costs ``C`` (``S x W x W``) and final costs ``E`` (``W``)."""
    rng = np.random.default_rng(n)
    w = (n + 1) // 2
    return rng.integers(1, 21, (n, w, w)).astype(np.int64), rng.integers(1, 21, w).astype(np.int64)


def make_stagecoach(C, E):
    """The stagecoach recurrence: table ``S x W`` for ``C`` of shape ``S x W x W``."""
    c = np.ascontiguousarray(C, dtype=np.int64)
    e = np.ascontiguousarray(E, dtype=np.int64)
    s_count, width = c.shape[0], c.shape[1]

    @recurrence(shape=(s_count, width), dtype=np.int64, args=(c, e))
    def stagecoach(M, s, v, C, E):
        last = C.shape[0] - 1
        if s == last:
            return E[v]
        best = C[s, v, 0] + M[s + 1, 0]
        for u in range(1, C.shape[2]):
            t = C[s, v, u] + M[s + 1, u]
            if t < best:
                best = t
        return best

    return stagecoach


def reference(C, E):
    """Backward fill, one whole stage at a time with NumPy broadcasting."""
    s_count = C.shape[0]
    table = np.zeros(C.shape[:2], dtype=np.int64)
    table[-1] = E
    for s in range(s_count - 2, -1, -1):
        table[s] = (C[s] + table[s + 1][None, :]).min(axis=1)
    return table


@family
def stagecoach(n):
    """A seeded random staged graph: ``n`` stages of ``(n + 1) // 2`` nodes."""
    return make_stagecoach(*data(n))
