"""Integer (unbounded) knapsack (thesis table: RUD).

Formulation
-----------
Item types ``i = 1..n`` (weight ``w_i >= 1``, profit ``p_i``) may be taken any number of
times.  Row ``i`` is "types ``1..i`` may be used", column ``c`` the capacity ``0..W``;
the decision at stage ``i`` is how many copies ``k`` of type ``i`` to take::

    M[0, c] = 0
    M[i, c] = max_{0 <= k <= c // w_i} k p_i + M[i-1, c - k w_i]

Reads: Up (``k = 0``) and UpLeft: pattern RUD, as in the thesis's table.

Note: the textbook one-line form ``M[i, c] = max(M[i-1, c], p_i + M[i, c - w_i])`` gives
the same table but reads Up and Left, which is pattern NOSE; the stage-and-decision form
above is the one that gives the thesis's RUD.  ``reference``
uses the one-line form, so the test checks that both give the same values.

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = number of types): weights in ``1..40``, profits in
``1..100``, capacity ``W = 10 n``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Integer Knapsack Problem"
THESIS_PATTERN = "RUD"
EXPECTED_PATTERN = "RUD"
FORMULATION = "M[i,c] = max_{0<=k<=c//w_i} k p_i + M[i-1, c - k w_i]; M[0,c] = 0"


def data(n):
    """Seeded ``(weights, values, capacity)`` for ``n`` item types."""
    rng = np.random.default_rng(n)
    return (
        rng.integers(1, 41, n).astype(np.int64),
        rng.integers(1, 101, n).astype(np.int64),
        10 * n,
    )


def make_integer_knapsack(weights, values, capacity):
    """The integer-knapsack recurrence: table ``(n+1) x (capacity+1)``."""
    w = np.ascontiguousarray(weights, dtype=np.int64)
    p = np.ascontiguousarray(values, dtype=np.int64)

    @recurrence(shape=(len(w) + 1, int(capacity) + 1), dtype=np.int64, args=(w, p))
    def integer_knapsack(M, i, c, w, p):
        if i == 0:
            return 0
        wi = w[i - 1]
        best = M[i - 1, c]
        k = 1
        while k * wi <= c:
            t = k * p[i - 1] + M[i - 1, c - k * wi]
            if t > best:
                best = t
            k += 1
        return best

    return integer_knapsack


def reference(weights, values, capacity):
    """The one-line unbounded form ``max(M[i-1, c], p_i + M[i, c - w_i])`` (reads Left)."""
    n = len(weights)
    table = np.zeros((n + 1, capacity + 1), dtype=np.int64)
    for i in range(1, n + 1):
        w, p = int(weights[i - 1]), int(values[i - 1])
        row = table[i - 1].tolist()
        for c in range(w, capacity + 1):
            row[c] = max(row[c], p + row[c - w])
        table[i] = row
    return table


@family
def integer_knapsack(n):
    """Unbounded knapsack with ``n`` seeded random item types and capacity ``10 n``."""
    return make_integer_knapsack(*data(n))
