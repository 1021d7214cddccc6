"""Shortest paths in an acyclic graph, from every source (thesis table: CLR).

Formulation
-----------
Vertices ``0..V-1`` are in topological order (every arc goes from a smaller to a larger
vertex); ``W[u, v]`` is the arc's length, ``inf`` where there is no arc.  Row ``s`` is the
source, column ``v`` the target::

    M[s, v] = inf                                          if v < s
            = 0                                            if v == s
            = min_{s <= u < v} M[s, u] + W[u, v]           if v > s

Each row is the thesis's one-dimensional single-source recurrence.  Reads: Left only:
CLR, NOSE and SONE match; CLR needs the fewest steps (``V`` columns).  The thesis lists CLR.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2; Cormen et al.,
section 24.2 (DAG shortest paths).

Family data (seeded by ``n`` = ``V``): each arc ``u < v`` exists with probability 0.4,
lengths uniform in ``1..20``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Shortest Path in an Acyclic Graph"
THESIS_PATTERN = "CLR"
EXPECTED_PATTERN = "CLR"
FORMULATION = "M[s,v] = min_{s<=u<v} M[s,u] + W[u,v] (v>s); 0 at v=s; inf for v<s"


def data(n):
    """Seeded arc lengths of a random DAG on ``n`` vertices (``inf``: no arc)."""
    rng = np.random.default_rng(n)
    lengths = rng.integers(1, 21, (n, n)).astype(np.float64)
    arcs = (rng.random((n, n)) < 0.4) & (np.arange(n)[:, None] < np.arange(n)[None, :])
    return (np.where(arcs, lengths, np.inf),)


def make_shortest_path_acyclic(W):
    """The all-sources DAG shortest-path recurrence: table ``V x V``."""
    w = np.ascontiguousarray(W, dtype=np.float64)
    n = w.shape[0]

    @recurrence(shape=(n, n), dtype=np.float64, args=(w,))
    def shortest_path_acyclic(M, s, v, W):
        if v < s:
            return np.inf
        if v == s:
            return 0.0
        best = np.inf
        for u in range(s, v):
            t = M[s, u] + W[u, v]
            if t < best:
                best = t
        return best

    return shortest_path_acyclic


def reference(W):
    """Floyd-Warshall over the whole graph (vectorised), which ignores the DAG order."""
    d = np.array(W, dtype=np.float64)
    np.fill_diagonal(d, 0.0)
    for k in range(d.shape[0]):
        d = np.minimum(d, d[:, k : k + 1] + d[k : k + 1, :])
    return d


@family
def shortest_path_acyclic(n):
    """All-sources shortest paths in a seeded random DAG on ``n`` vertices."""
    return make_shortest_path_acyclic(*data(n))
