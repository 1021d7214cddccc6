"""Integer linear programming with one constraint, by stages (thesis table: RDU).

Formulation
-----------
Maximise ``sum_j c_j x_j`` subject to ``sum_j a_j x_j <= b`` and ``0 <= x_j <= u_j``
integer.  Row ``j`` is the stage (variables ``j..n-1`` still to fix; row ``n``: none),
column ``y`` the resource left (``0..b``)::

    M[n, y] = 0
    M[j, y] = max_{0 <= x <= min(u_j, y // a_j)} c_j x + M[j+1, y - a_j x]

``M[0, b]`` is the optimum.  Reads: Down (``x = 0``) and DownLeft: RDU and SONE match;
RDU needs fewer steps.  The thesis lists RDU.  (More constraints add one table dimension
each.)

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = variables): ``a`` in ``1..8``, ``c`` in ``1..30``, ``u``
in ``1..3``, ``b = 4 n``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Integer Linear Programming"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[j,y] = max_{0<=x<=min(u_j, y//a_j)} c_j x + M[j+1, y - a_j x]; M[n,y] = 0"


def data(n):
    """Seeded ``(a, c, u, b)``."""
    rng = np.random.default_rng(n)
    return (
        rng.integers(1, 9, n).astype(np.int64),
        rng.integers(1, 31, n).astype(np.int64),
        rng.integers(1, 4, n).astype(np.int64),
        4 * n,
    )


def make_integer_linear_programming(a, c, u, b):
    """The one-constraint ILP recurrence: table ``(n+1) x (b+1)``."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    c = np.ascontiguousarray(c, dtype=np.int64)
    u = np.ascontiguousarray(u, dtype=np.int64)

    @recurrence(shape=(len(a) + 1, int(b) + 1), dtype=np.int64, args=(a, c, u))
    def integer_linear_programming(M, j, y, a, c, u):
        if j == a.shape[0]:
            return 0
        best = M[j + 1, y]
        x = 1
        while x <= u[j] and x * a[j] <= y:
            t = c[j] * x + M[j + 1, y - a[j] * x]
            if t > best:
                best = t
            x += 1
        return best

    return integer_linear_programming


def reference(a, c, u, b):
    """Backward fill, one stage at a time, as a max over shifted NumPy rows."""
    n = len(a)
    table = np.zeros((n + 1, b + 1), dtype=np.int64)
    for j in range(n - 1, -1, -1):
        row = table[j + 1].copy()
        for x in range(1, int(u[j]) + 1):
            shift = int(a[j]) * x
            if shift > b:
                break
            row[shift:] = np.maximum(row[shift:], int(c[j]) * x + table[j + 1, : b + 1 - shift])
        table[j] = row
    return table


@family
def integer_linear_programming(n):
    """A seeded random bounded ILP with ``n`` variables and one constraint."""
    return make_integer_linear_programming(*data(n))
