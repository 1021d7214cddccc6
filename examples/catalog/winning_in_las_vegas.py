"""Investment: winning in Las Vegas (thesis table: RDU).

Formulation
-----------
A gambler with capital ``c`` places at most ``T`` bets; each bet of ``b <= c`` units wins
``b`` with probability ``p`` and loses it otherwise.  The goal is to reach at least
``C`` units; bets beyond what reaching ``C`` needs are never useful, so ``b <= C - c``.
Row ``t`` is the number of bets placed (row ``T``: no bets left), column ``c`` the capital
(``0..C``); ``M[t, c]`` is the best probability of reaching ``C``::

    M[T, c] = 1 if c == C else 0
    M[t, c] = max_{0 <= b <= min(c, C - c)} p M[t+1, c + b] + (1 - p) M[t+1, c - b]

Reads: Down (``b = 0``), DownRight and DownLeft: pattern RDU, as in the thesis's table.

Reference: Hillier & Lieberman, *Introduction to Operations Research* (the Las Vegas
example of probabilistic DP); Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = target ``C``): ``T = max(1, n // 4)`` bets, ``p`` in
``[0.3, 0.7)``.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Investment: Winning in Las Vegas Problem"
THESIS_PATTERN = "RDU"
EXPECTED_PATTERN = "RDU"
FORMULATION = "M[t,c] = max_{0<=b<=min(c,C-c)} p M[t+1,c+b] + (1-p) M[t+1,c-b]; M[T,c] = [c == C]"


def data(n):
    """Seeded ``(bets, target, p)``."""
    rng = np.random.default_rng(n)
    return max(1, n // 4), n, float(rng.uniform(0.3, 0.7))


def make_winning_in_las_vegas(bets, target, p):
    """The Las Vegas recurrence: table ``(bets+1) x (target+1)``."""

    @recurrence(shape=(int(bets) + 1, int(target) + 1), dtype=np.float64, args=(float(p), int(bets), int(target)))
    def winning_in_las_vegas(M, t, c, p, T, C):
        if t == T:
            if c == C:
                return 1.0
            return 0.0
        best = M[t + 1, c]
        for b in range(1, min(c, C - c) + 1):
            v = p * M[t + 1, c + b] + (1.0 - p) * M[t + 1, c - b]
            if v > best:
                best = v
        return best

    return winning_in_las_vegas


def reference(bets, target, p):
    """Top-down memoised recursion (bets tried from the largest down)."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def win(t, c):
        if t == bets:
            return 1.0 if c == target else 0.0
        return max(
            p * win(t + 1, c + b) + (1.0 - p) * win(t + 1, c - b)
            for b in range(min(c, target - c), -1, -1)
        )

    return np.array([[win(t, c) for c in range(target + 1)] for t in range(bets + 1)], dtype=np.float64)


@family
def winning_in_las_vegas(n):
    """Reach a capital of ``n`` in ``max(1, n // 4)`` bets with a seeded win probability."""
    return make_winning_in_las_vegas(*data(n))
