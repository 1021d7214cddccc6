"""Minimum weight spanning tree, as a DP over vertex sets (thesis table: CRL).

Formulation
-----------
A complete graph on ``V`` vertices with symmetric weights ``w[u, v]``.  A spanning tree is
grown from a root by adding one vertex at a time, joined by an edge to the tree so far
(Prim's order); every spanning tree can be grown this way from any root, so the cheapest
growth is the minimum spanning tree.  Row ``r`` is the root, column ``S`` a vertex set as
a bitmask (``0..2^V - 1``); ``M[r, S]`` is the cheapest cost of completing a tree that
already spans ``S``::

    M[r, S] = 0                                             if r not in S (not a state)
            = 0                                             if S is all vertices
            = min_{v not in S} (min_{u in S} w[u, v]) + M[r, S | {v}]

Every row gives the MST weight at ``M[r, {r}]``.  Reads: ``S | {v} > S``, same row:
Right only.  CRL, SENO and NESO match; CRL needs the fewest steps (``2^V`` columns
against ``V + 2^V - 1`` diagonals).  The thesis lists CRL.

The table has ``V * 2^V`` cells: keep ``V`` small (``V = 12`` is 49,152 cells).

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2; Prim (1957) for the
growth order.  The state here is the set of vertices already spanned.

Family data (seeded by ``n`` = ``V``): weights uniform in ``1..99``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Minimum Weight Spanning Tree Problem"
THESIS_PATTERN = "CRL"
EXPECTED_PATTERN = "CRL"
FORMULATION = "M[r,S] = min_{v not in S} (min_{u in S} w[u,v]) + M[r, S|{v}] for r in S; 0 when S is full or r not in S"


def data(n):
    """Seeded symmetric weight matrix of a complete graph on ``n`` vertices."""
    rng = np.random.default_rng(n)
    w = rng.integers(1, 100, (n, n)).astype(np.int64)
    w = np.triu(w, 1)
    w = w + w.T
    return (w,)


def make_min_spanning_tree(weights):
    """The vertex-set MST recurrence: table ``V x 2^V``."""
    w = np.ascontiguousarray(weights, dtype=np.int64)
    v_count = w.shape[0]

    @recurrence(shape=(v_count, 1 << v_count), dtype=np.int64, args=(w,))
    def min_spanning_tree(M, r, S, w):
        V = w.shape[0]
        full = (1 << V) - 1
        if (S >> r) & 1 == 0 or S == full:
            return 0
        best = -1
        for v in range(V):
            if (S >> v) & 1 == 0:
                link = -1
                for u in range(V):
                    if (S >> u) & 1 == 1:
                        if link < 0 or w[u, v] < link:
                            link = w[u, v]
                t = link + M[r, S | (1 << v)]
                if best < 0 or t < best:
                    best = t
        return best

    return min_spanning_tree


def reference(weights):
    """Top-down memoised recursion over frozensets of vertices."""
    from functools import lru_cache

    w = np.asarray(weights).tolist()
    V = len(w)
    everything = frozenset(range(V))

    @lru_cache(maxsize=None)
    def grow(S):
        if S == everything:
            return 0
        return min(min(w[u][v] for u in S) + grow(S | {v}) for v in everything - S)

    table = np.zeros((V, 1 << V), dtype=np.int64)
    for r in range(V):
        for mask in range(1 << V):
            S = frozenset(k for k in range(V) if mask >> k & 1)
            if r in S:
                table[r, mask] = grow(S)
    return table


@family
def min_spanning_tree(n):
    """MST of a seeded random complete graph on ``n`` vertices (table ``n x 2^n``)."""
    return make_min_spanning_tree(*data(n))
