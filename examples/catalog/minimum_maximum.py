"""Minimum maximum (minimax path) problem (thesis table: RDU).

Formulation
-----------
The staged graph of the stagecoach problem, but a route costs its *largest* arc (a
bottleneck path).  Row ``s`` is the stage (``0..S-1``), column ``v`` a node of it::

    M[S-1, v] = E[v]
    M[s, v]   = min_u max(C[s, v, u], M[s+1, u])

Reads: the whole row below: pattern RDU.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n``): ``S = n`` stages of ``W = n // 2 + 1`` nodes, costs uniform
in ``1..50``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Minimum Maximum Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[s,v] = least bottleneck from node v of stage s = min_u max(C[s,v,u], M[s+1,u]); M[S-1,v] = E[v]"


def data(n):
    """Seeded arc costs ``C`` (``S x W x W``) and final costs ``E`` (``W``)."""
    rng = np.random.default_rng(n)
    w = n // 2 + 1
    return rng.integers(1, 51, (n, w, w)).astype(np.int64), rng.integers(1, 51, w).astype(np.int64)


def make_minimum_maximum(C, E):
    """The minimax-path recurrence: table ``S x W``."""
    c = np.ascontiguousarray(C, dtype=np.int64)
    e = np.ascontiguousarray(E, dtype=np.int64)

    @recurrence(shape=(c.shape[0], c.shape[1]), dtype=np.int64, args=(c, e))
    def minimum_maximum(M, s, v, C, E):
        if s == C.shape[0] - 1:
            return E[v]
        best = max(C[s, v, 0], M[s + 1, 0])
        for u in range(1, C.shape[2]):
            t = max(C[s, v, u], M[s + 1, u])
            if t < best:
                best = t
        return best

    return minimum_maximum


def reference(C, E):
    """Backward fill, one whole stage at a time with NumPy broadcasting."""
    table = np.zeros(C.shape[:2], dtype=np.int64)
    table[-1] = E
    for s in range(C.shape[0] - 2, -1, -1):
        table[s] = np.maximum(C[s], table[s + 1][None, :]).min(axis=1)
    return table


@family
def minimum_maximum(n):
    """A seeded random staged graph: ``n`` stages of ``n // 2 + 1`` nodes."""
    return make_minimum_maximum(*data(n))
