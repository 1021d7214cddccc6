"""0/1 knapsack (thesis section 2.2 and 4.4; SPEC section 5).

Formulation
-----------
Row ``i`` is "the first ``i`` items may be used" (``0..n``), column ``j`` the capacity
(``0..W``); item ``i`` (1-based) has weight ``w_i >= 1`` and profit ``p_i``::

    M[i, j] = 0                                          if i == 0 or j == 0
            = M[i-1, j]                                  if w_i > j
            = max(M[i-1, j], p_i + M[i-1, j - w_i])      otherwise

Reads: Up and UpLeft, so the rows can be filled top to bottom: pattern RUD (the thesis's
``mochila``).  NOSE also matches but needs more steps; CLR does not (Up is not in it).

Family data (seeded by the size ``n`` = number of items): weights uniform in ``1..40``,
profits uniform in ``1..100``, capacity ``W = 10 n`` (about half the total weight).

Solution: :func:`chosen` turns ``depgraph.fill(rec, solution=True).solution`` into the
items taken; ``python examples/knapsack.py`` prints a small instance's.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "0/1 Knapsack Problem"
THESIS_PATTERN = "RUD"
EXPECTED_PATTERN = "RUD"
FORMULATION = "M[i,j] = best profit of items 1..i in capacity j = max(M[i-1,j], p_i + M[i-1,j-w_i])"


def data(n):
    """Seeded ``(weights, values, capacity)`` for ``n`` items."""
    rng = np.random.default_rng(n)
    weights = rng.integers(1, 41, n).astype(np.int64)
    values = rng.integers(1, 101, n).astype(np.int64)
    return weights, values, 10 * n


def make_knapsack(weights, values, capacity):
    """The 0/1 knapsack recurrence: table ``(len(weights)+1) x (capacity+1)``."""
    w = np.ascontiguousarray(weights, dtype=np.int64)
    p = np.ascontiguousarray(values, dtype=np.int64)
    if w.shape != p.shape or w.ndim != 1:
        raise ValueError("weights and values must be 1-D arrays of the same length")
    if np.any(w < 1):
        raise ValueError("weights must be positive integers")

    @recurrence(shape=(len(w) + 1, int(capacity) + 1), dtype=np.int64, args=(w, p))
    def knapsack(M, i, j, w, p):
        if i == 0 or j == 0:
            return 0
        wi = w[i - 1]
        if wi > j:
            return M[i - 1, j]
        return max(M[i - 1, j], p[i - 1] + M[i - 1, j - wi])

    return knapsack


def reference(weights, values, capacity):
    """Row-at-a-time vectorised fill (each row from the one above with NumPy slices)."""
    n = len(weights)
    table = np.zeros((n + 1, capacity + 1), dtype=np.int64)
    for i in range(1, n + 1):
        w, p = int(weights[i - 1]), int(values[i - 1])
        row = table[i - 1].copy()
        if w <= capacity:
            row[w:] = np.maximum(row[w:], p + table[i - 1, : capacity + 1 - w])
        row[0] = 0
        table[i] = row
    return table


def chosen(solution, weights, values):
    """What a knapsack solution means: ``(items, weight, value)``, the items taken
    (0-based, ascending), their total weight and their total value.  A step from row
    ``i`` to row ``i - 1`` that changes the column took item ``i - 1``."""
    items = sorted(a[0] - 1 for a, b in solution.edges if b[1] != a[1])
    return items, int(sum(weights[k] for k in items)), int(sum(values[k] for k in items))


@family
def knapsack(n):
    """0/1 knapsack with ``n`` seeded random items and capacity ``10 n``."""
    return make_knapsack(*data(n))


if __name__ == "__main__":
    from depgraph import fill

    w, p, W = np.array([2, 3, 4, 5]), np.array([3, 4, 5, 6]), 8
    found = fill(make_knapsack(w, p, W), backend="python", solution=True).solution
    items, weight, value = chosen(found, w, p)
    print(f"weights {w.tolist()}, profits {p.tolist()}, capacity {W}: best {found.value}, "
          f"items {items} (weight {weight}, profit {value})")
