"""All-pairs shortest paths (Floyd-Warshall): a 3-D table filled layer by layer (SPEC
section 4's last paragraph; ``patterns/hyperplane.py``).

Formulation
-----------
A directed graph on vertices ``0..n-1`` with non-negative integer edge weights ``W``
(``W[i, i] = 0``; ``NO_EDGE`` where there is no edge).  Layer ``k`` holds the shortest
``i -> j`` distances whose intermediate vertices are all below ``k``; the table is
``(n+1) x n x n``::

    M[0, i, j] = W[i, j]
    M[k, i, j] = min(M[k-1, i, j], M[k-1, i, k-1] + M[k-1, k-1, j])     k >= 1

Reads: layer ``k - 1`` only, at ``(i, j)``, along row ``i`` (column ``k - 1``) and
along column ``j`` (row ``k - 1``): offsets ``(-1, 0, 0)``, ``(-1, 0, ?)`` and
``(-1, ?, 0)``.  Patterns are for 2-D tables; the hyperplane ``pi = (1, 0, 0)`` fills
one layer a step, ``n + 1`` steps of ``n^2`` independent cells.  An unreachable pair
stays at exactly ``NO_EDGE``: a sum through a missing edge is never below it.

Family data (seeded by the size ``n`` = number of vertices): each ordered pair
``i != j`` has an edge with probability 0.3, weight uniform in ``1..99``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "All-Pairs Shortest Paths (Floyd-Warshall)"
THESIS_PATTERN = None  # not in the thesis's table (a 3-D table)
EXPECTED_PATTERN = None  # patterns are 2-D; the hyperplane pi = (1, 0, 0) fits
FORMULATION = "M[k,i,j] = min(M[k-1,i,j], M[k-1,i,k-1] + M[k-1,k-1,j]); M[0,i,j] = W[i,j]"

#: Weight of a missing edge: far above any path (at most ``99 (n - 1)``), and two of them
#: add up without overflowing int64.
NO_EDGE = 10**9


def data(n):
    """Seeded ``n x n`` weights: 0 on the diagonal, an edge with probability 0.3 and
    weight ``1..99``, else :data:`NO_EDGE`."""
    rng = np.random.default_rng(n)
    w = rng.integers(1, 100, (n, n)).astype(np.int64)
    w[rng.random((n, n)) >= 0.3] = NO_EDGE
    np.fill_diagonal(w, 0)
    return (w,)


def make_floyd_warshall(W, dtype=np.int64):
    """The Floyd-Warshall recurrence of a square weight matrix: an ``(n+1) x n x n``
    table of ``dtype`` (int32 holds a sum of two ``NO_EDGE``)."""
    w = np.ascontiguousarray(W, dtype=dtype)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError("W must be a square matrix")
    n = w.shape[0]

    @recurrence(shape=(n + 1, n, n), dtype=dtype, args=(w,))
    def floyd_warshall(M, k, i, j, W):
        if k == 0:
            return W[i, j]
        return min(M[k - 1, i, j], M[k - 1, i, k - 1] + M[k - 1, k - 1, j])

    return floyd_warshall


def reference(W):
    """The classic in-place 2-D Floyd-Warshall, one whole-matrix NumPy update per
    intermediate vertex, keeping a copy of the matrix after each."""
    d = np.array(W, dtype=np.int64)
    layers = [d.copy()]
    for k in range(d.shape[0]):
        # row k and column k do not change while k is the intermediate (d[k, k] = 0)
        np.minimum(d, d[:, k, None] + d[None, k, :], out=d)
        layers.append(d.copy())
    return np.stack(layers)


@family
def floyd_warshall(n):
    """Floyd-Warshall on a seeded random directed graph of ``n`` vertices."""
    return make_floyd_warshall(*data(n))
