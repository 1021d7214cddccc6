"""The game of NIM (subtraction game), win/lose table (thesis table: CLR).

Formulation
-----------
One pile of ``m`` sticks; a move takes ``1..k+1`` sticks; the player who takes the last
stick wins.  Row ``k`` is the rule "take at most ``k + 1``" (``k = 0..K-1``), column
``m`` the sticks left (``0..N``); ``M[k, m]`` is 1 when the player to move wins::

    M[k, 0] = 0
    M[k, m] = 1 if some t in 1..min(k+1, m) has M[k, m - t] == 0, else 0

Reads: Left only (each row is the thesis's one-dimensional NIM table).  CLR, NOSE and
SONE match; CLR needs the fewest steps (``N + 1`` columns).  The thesis lists CLR.
(The misere rule, where taking the last stick loses, changes the base case, not the reads.)

Reference: Lew & Mauch, *Dynamic Programming* (2007), ch. 2; the closed form is
"the mover loses iff ``m`` is a multiple of ``k + 2``".

Family data: ``N = n`` sticks and ``K = min(4, 1 + n // 6)`` rules (one row for small
``n``); no random data.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "The Game of NIM"
THESIS_PATTERN = "CLR"
EXPECTED_PATTERN = "CLR"
FORMULATION = "M[k,m] = 1 iff some take t<=k+1 leaves a losing M[k,m-t] == 0; M[k,0] = 0"


def data(n):
    """``(sticks, rules)`` of family size ``n``."""
    return n, min(4, 1 + n // 6)


def make_nim(sticks, rules):
    """The NIM recurrence: table ``rules x (sticks+1)``."""

    @recurrence(shape=(int(rules), int(sticks) + 1), dtype=np.int8)
    def nim(M, k, m):
        if m == 0:
            return 0
        for t in range(1, min(k + 1, m) + 1):
            if M[k, m - t] == 0:
                return 1
        return 0

    return nim


def reference(sticks, rules):
    """The closed form: the mover wins iff ``m % (k + 2) != 0``."""
    k = np.arange(rules)[:, None]
    m = np.arange(sticks + 1)[None, :]
    return (m % (k + 2) != 0).astype(np.int8)


@family
def nim(n):
    """NIM with ``n`` sticks under ``min(4, 1 + n // 6)`` take-limits."""
    return make_nim(*data(n))
