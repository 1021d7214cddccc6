"""Optimal binary search tree (thesis table: SONE).

Formulation
-----------
Keys ``0..n-1`` in sorted order with access frequencies ``f_k``.  Row ``i`` and column
``j`` are the first and last key of the subtree holding keys ``i..j``; the cost of a tree
is ``sum_k f_k * depth_k`` (the root has depth 1)::

    M[i, j] = 0                                                        if j < i
            = W(i, j) + min_{i <= r <= j} (M[i, r-1] if r > i else 0)
                                        + (M[r+1, j] if r < j else 0)   otherwise

with ``W(i, j) = f_i + ... + f_j`` (from prefix sums passed as an argument).  Reads:
``M[i, r-1]`` is Left and ``M[r+1, j]`` is Down: pattern SONE (diagonals ``j - i`` in
ascending order), as in the thesis's table.  Only successful searches are weighted (no
"dummy key" probabilities); adding them changes the values, not the reads.

Reference: Knuth (1971); Cormen et al., *Introduction to Algorithms*, section 15.5;
Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = number of keys): frequencies uniform in ``1..20``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Optimal Binary Search Tree Problem"
THESIS_PATTERN = "SONE"
EXPECTED_PATTERN = "SONE"
FORMULATION = "M[i,j] = W(i,j) + min_{i<=r<=j} M[i,r-1] + M[r+1,j] (missing subtrees cost 0); 0 for j<i"


def data(n):
    """Seeded access frequencies of ``n`` keys."""
    rng = np.random.default_rng(n)
    return (rng.integers(1, 21, n).astype(np.int64),)


def make_optimal_bst(freq):
    """The optimal-BST recurrence: table ``n x n`` for ``n`` keys."""
    f = np.ascontiguousarray(freq, dtype=np.int64)
    prefix = np.concatenate(([0], np.cumsum(f))).astype(np.int64)
    n = len(f)

    @recurrence(shape=(n, n), dtype=np.int64, args=(prefix,))
    def optimal_bst(M, i, j, P):
        if j < i:
            return 0
        best = -1
        for r in range(i, j + 1):
            t = 0
            if r > i:
                t += M[i, r - 1]
            if r < j:
                t += M[r + 1, j]
            if best < 0 or t < best:
                best = t
        return best + P[j + 1] - P[i]

    return optimal_bst


def reference(freq):
    """Top-down memoised recursion on ``(i, j)`` with explicit frequency sums."""
    from functools import lru_cache

    f = [int(v) for v in freq]
    n = len(f)

    @lru_cache(maxsize=None)
    def cost(i, j):
        if j < i:
            return 0
        return sum(f[i : j + 1]) + min(cost(i, r - 1) + cost(r + 1, j) for r in range(i, j + 1))

    return np.array([[cost(i, j) for j in range(n)] for i in range(n)], dtype=np.int64)


@family
def optimal_bst(n):
    """Optimal BST over ``n`` keys with seeded random frequencies."""
    return make_optimal_bst(*data(n))
