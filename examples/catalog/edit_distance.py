"""Edit distance (thesis table: NOSE).

Formulation
-----------
Row ``i`` is the prefix ``X[:i]``, column ``j`` the prefix ``Y[:j]``; insertions,
deletions and substitutions cost 1 (Levenshtein distance)::

    M[i, j] = j                                  if i == 0
            = i                                  if j == 0
            = min(M[i-1, j] + 1,                 (delete X[i-1])
                  M[i, j-1] + 1,                 (insert Y[j-1])
                  M[i-1, j-1] + [X[i-1] != Y[j-1]])   (match or substitute)

Reads: Up, Left and UpLeft: pattern NOSE, as in the thesis's table.

Reference: Wagner & Fischer (1974); Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n``): ``X`` of length ``n`` and ``Y`` of length ``n + n // 2``
over a 4-letter alphabet (a non-square table).
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Edit Distance Problem"
THESIS_PATTERN = "NOSE"
EXPECTED_PATTERN = "NOSE"
FORMULATION = "M[i,j] = distance of X[:i], Y[:j] = min(M[i-1,j]+1, M[i,j-1]+1, M[i-1,j-1]+[X[i-1]!=Y[j-1]])"


def data(n):
    """Seeded sequences ``X`` (length ``n``) and ``Y`` (length ``n + n // 2``)."""
    rng = np.random.default_rng(n)
    return rng.integers(0, 4, n).astype(np.int64), rng.integers(0, 4, n + n // 2).astype(np.int64)


def make_edit_distance(X, Y):
    """The edit-distance recurrence: table ``(len(X)+1) x (len(Y)+1)``."""
    x = np.ascontiguousarray(X, dtype=np.int64)
    y = np.ascontiguousarray(Y, dtype=np.int64)

    @recurrence(shape=(len(x) + 1, len(y) + 1), dtype=np.int64, args=(x, y))
    def edit_distance(M, i, j, X, Y):
        if i == 0:
            return j
        if j == 0:
            return i
        sub = M[i - 1, j - 1]
        if X[i - 1] != Y[j - 1]:
            sub += 1
        return min(M[i - 1, j] + 1, M[i, j - 1] + 1, sub)

    return edit_distance


def reference(X, Y):
    """Top-down memoised recursion."""
    from functools import lru_cache

    x, y = [int(v) for v in X], [int(v) for v in Y]

    @lru_cache(maxsize=None)
    def d(i, j):
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (x[i - 1] != y[j - 1]))

    return np.array([[d(i, j) for j in range(len(y) + 1)] for i in range(len(x) + 1)], dtype=np.int64)


@family
def edit_distance(n):
    """Edit distance of two seeded random sequences (lengths ``n`` and ``n + n // 2``)."""
    return make_edit_distance(*data(n))
