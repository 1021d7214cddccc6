"""Matrix-chain multiplication (thesis section 2.4; SPEC section 5).

Formulation
-----------
Matrix ``A_k`` is ``d_k x d_{k+1}`` (``k = 0..n-1``).  Row ``i`` and column ``j`` are the
first and last matrix of the product ``A_i ... A_j``; the table is ``n x n``::

    M[i, j] = 0                                                       if j <= i
            = min_{i <= k < j} M[i, k] + M[k+1, j] + d_i d_{k+1} d_{j+1}   if i < j

Only the upper triangle reads anything; cells below the diagonal are 0 without reads.
The answer, the whole chain's cost, is ``M[0, n-1]`` (the recurrence's ``target``).
Reads: ``M[i, k]`` is Left and ``M[k+1, j]`` is Down, so the diagonals ``j - i`` are
filled in ascending order: pattern SONE (the thesis's ``MCM``).  The thesis's example:
``8x3, 3x7, 7x4`` costs 180.

Family data (seeded by the size ``n`` = number of matrices): dimensions uniform in
``2..30``.

Solution: :func:`parenthesization` turns ``depgraph.fill(rec, solution=True).solution``
(the split tree under ``M[0, n-1]``) into the product's order, ``(A1 (A2 A3))``;
``python examples/matrix_chain.py`` prints the thesis's example.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Matrix Chain Multiplication Problem"
THESIS_PATTERN = "SONE"
EXPECTED_PATTERN = "SONE"
FORMULATION = "M[i,j] = min_{i<=k<j} M[i,k] + M[k+1,j] + d_i d_{k+1} d_{j+1} (i<j), else 0"


def data(n):
    """Seeded dimensions ``d_0..d_n`` of a chain of ``n`` matrices."""
    rng = np.random.default_rng(n)
    return (rng.integers(2, 31, n + 1).astype(np.int64),)


def make_matrix_chain(dims):
    """The matrix-chain recurrence for matrices ``dims[k] x dims[k+1]``: an ``n x n`` table."""
    d = np.ascontiguousarray(dims, dtype=np.int64)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError("dims must list at least two dimensions")
    n = len(d) - 1

    @recurrence(shape=(n, n), dtype=np.int64, args=(d,), target=(0, n - 1))
    def matrix_chain(M, i, j, d):
        if j <= i:
            return 0
        best = M[i, i] + M[i + 1, j] + d[i] * d[i + 1] * d[j + 1]
        for k in range(i + 1, j):
            c = M[i, k] + M[k + 1, j] + d[i] * d[k + 1] * d[j + 1]
            if c < best:
                best = c
        return best

    return matrix_chain


def parenthesization(solution):
    """What a matrix-chain solution means: the product parenthesized, ``A1`` the first
    matrix.  Each cell ``(i, j)`` with ``i < j`` of the solution has two edges, to the
    best split's ``(i, k)`` and ``(k + 1, j)``."""
    splits = {}
    for a, b in solution.edges:
        splits.setdefault(a, []).append(b)

    def text(cell):
        if cell not in splits:
            return f"A{cell[0] + 1}"
        left, right = splits[cell]
        return f"({text(left)} {text(right)})"

    return text(solution.target)


def reference(dims):
    """Top-down memoised recursion over the intervals ``(i, j)``."""
    from functools import lru_cache

    d = [int(x) for x in dims]
    n = len(d) - 1

    @lru_cache(maxsize=None)
    def cost(i, j):
        if j <= i:
            return 0
        return min(cost(i, k) + cost(k + 1, j) + d[i] * d[k + 1] * d[j + 1] for k in range(i, j))

    return np.array([[cost(i, j) for j in range(n)] for i in range(n)], dtype=np.int64)


@family
def matrix_chain(n):
    """Matrix chain of ``n`` seeded random matrices (an ``n x n`` table)."""
    return make_matrix_chain(*data(n))


if __name__ == "__main__":
    from depgraph import fill

    dims = [8, 3, 7, 4]
    found = fill(make_matrix_chain(dims), backend="python", solution=True).solution
    print(f"matrices {', '.join(f'{a}x{b}' for a, b in zip(dims, dims[1:]))}: "
          f"{found.value} multiplications as {parenthesization(found)}")
