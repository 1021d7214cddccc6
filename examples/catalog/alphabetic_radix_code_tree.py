"""Optimal alphabetic radix-code tree (thesis table: SONE).

Formulation
-----------
Symbols ``0..n-1`` in alphabetical order with weights ``w_k`` are the leaves, left to
right, of a binary code tree; a symbol's code length is its leaf's depth, and the cost
is ``sum_k w_k * depth_k`` (the optimal alphabetic tree of Hu and Tucker).  Row ``i`` and
column ``j`` are the first and last symbol of a subtree::

    M[i, j] = 0                                                  if j <= i
            = W(i, j) + min_{i <= k < j} M[i, k] + M[k+1, j]      if i < j

with ``W(i, j) = w_i + ... + w_j`` (every leaf below the split goes one level deeper).
Reads: ``M[i, k]`` is Left and ``M[k+1, j]`` is Down: pattern SONE, as in the thesis's
table.  (Unlike the optimal BST, the symbols sit only at the leaves.)

Reference: Hu & Tucker (1971); Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = number of symbols): weights uniform in ``1..30``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Alphabetic Radix-Code Tree"
THESIS_PATTERN = "SONE"
EXPECTED_PATTERN = "SONE"
FORMULATION = "M[i,j] = W(i,j) + min_{i<=k<j} M[i,k] + M[k+1,j] (i<j), else 0"


def data(n):
    """Seeded symbol weights."""
    rng = np.random.default_rng(n)
    return (rng.integers(1, 31, n).astype(np.int64),)


def make_alphabetic_radix_code_tree(weights):
    """The alphabetic code-tree recurrence: table ``n x n`` for ``n`` symbols."""
    w = np.ascontiguousarray(weights, dtype=np.int64)
    prefix = np.concatenate(([0], np.cumsum(w))).astype(np.int64)
    n = len(w)

    @recurrence(shape=(n, n), dtype=np.int64, args=(prefix,))
    def alphabetic_radix_code_tree(M, i, j, P):
        if j <= i:
            return 0
        best = M[i, i] + M[i + 1, j]
        for k in range(i + 1, j):
            t = M[i, k] + M[k + 1, j]
            if t < best:
                best = t
        return best + P[j + 1] - P[i]

    return alphabetic_radix_code_tree


def reference(weights):
    """Bottom-up by interval length with explicit weight sums (Python lists)."""
    w = [int(v) for v in weights]
    n = len(w)
    t = [[0] * n for _ in range(n)]
    for length in range(2, n + 1):
        for i in range(0, n - length + 1):
            j = i + length - 1
            t[i][j] = sum(w[i : j + 1]) + min(t[i][k] + t[k + 1][j] for k in range(i, j))
    return np.array(t, dtype=np.int64).reshape(n, n)


@family
def alphabetic_radix_code_tree(n):
    """Optimal alphabetic code tree over ``n`` symbols with seeded random weights."""
    return make_alphabetic_radix_code_tree(*data(n))
