"""Best path with steps right and down-left: a 2-D recurrence no pattern fits (SPEC
section 4's last paragraph; ``patterns/hyperplane.py``).

Formulation
-----------
A walker on an ``n x m`` grid of integer rewards ``A`` steps right ``(i, j) -> (i, j+1)``
or down-left ``(i, j) -> (i+1, j-1)``, starting and stopping at any cell.  ``S[i, j]`` is
the best total reward of a walk that ends at ``(i, j)`` (Kadane's maximum subarray,
along these walks)::

    S[i, j] = A[i, j] + max(0, S[i, j-1], S[i-1, j+1])

where a neighbour outside the grid is left out of the ``max`` (column 0 has no left
neighbour; row 0 and the last column have no up-right one).

Reads: Left and UpRight.  No pattern's regions hold both (CLR has Left but not
UpRight; NESO and CRL have UpRight but not Left), so no row, column or diagonal order
fits; the hyperplane ``pi = (2, 1)`` does: the cell ``(i, j)`` runs in step ``2i + j``,
after ``(i, j-1)`` (step ``2i + j - 1``) and ``(i-1, j+1)`` (step ``2i + j - 1``).  An
``n x m`` table takes ``2(n-1) + m`` steps.  A one-row grid reads Left only (CLR fits);
a one-column grid reads nothing.

Family data (seeded by the size ``n``): an ``n x (n+1)`` grid of rewards uniform in
``-9..9``.  A walk steps right at most ``m - 1`` times more than down-left, and down-left
at most ``n - 1`` times, so ``|S| <= 9 (2n + m)``: int32 holds it for any grid that fits
in memory.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Best walk with steps right and down-left"
THESIS_PATTERN = None  # not in the thesis's table
EXPECTED_PATTERN = None  # no pattern fits; the hyperplane pi = (2, 1) does
FORMULATION = "S[i,j] = A[i,j] + max(0, S[i,j-1], S[i-1,j+1]), neighbours outside the grid left out"


def data(n):
    """Seeded ``n x (n+1)`` grid of rewards in ``-9..9``."""
    rng = np.random.default_rng(n)
    return (rng.integers(-9, 10, (n, n + 1)).astype(np.int32),)


def make_skew(A):
    """The best-walk recurrence of a 2-D grid of integer rewards (a table of its shape)."""
    a = np.ascontiguousarray(A, dtype=np.int32)
    if a.ndim != 2:
        raise ValueError("A must be a 2-D grid")

    @recurrence(shape=a.shape, dtype=np.int32, args=(a,))
    def skew(S, i, j, A):
        best = 0  # a walk may start here
        if j > 0:
            best = max(best, S[i, j - 1])
        if i > 0 and j + 1 < S.shape[1]:
            best = max(best, S[i - 1, j + 1])
        return A[i, j] + best

    return skew


def reference(A):
    """Row by row, left to right, with Python lists: both reads are in an earlier row or
    earlier in the same row."""
    a = np.asarray(A, dtype=np.int64).tolist()
    prev: list[int] = []
    rows = []
    for i, rewards in enumerate(a):
        row: list[int] = []
        for j, r in enumerate(rewards):
            came = [0]
            if j > 0:
                came.append(row[j - 1])
            if i > 0 and j + 1 < len(rewards):
                came.append(prev[j + 1])
            row.append(r + max(came))
        rows.append(row)
        prev = row
    return np.array(rows, dtype=np.int32).reshape(np.shape(A))


@family
def skew(n):
    """Best walk on a seeded random ``n x (n+1)`` grid of rewards."""
    return make_skew(*data(n))
