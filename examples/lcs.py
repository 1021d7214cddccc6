"""Longest common subsequence (thesis section 2.3; SPEC sections 5 and 6).

Formulation
-----------
Row ``i`` is the prefix ``X[:i]`` (``0..len(X)``), column ``j`` the prefix ``Y[:j]``::

    M[i, j] = 0                              if i == 0 or j == 0
            = M[i-1, j-1] + 1                if X[i-1] == Y[j-1]
            = max(M[i-1, j], M[i, j-1])      otherwise

Reads: UpLeft, Up and Left: only the anti-diagonal order fits, pattern NOSE.  The
thesis's example: ``LCS(AGCGTAG, GTCAGA) = 4``.

Family data (seeded by the size ``n``): two random strings of length ``n`` over a
4-letter alphabet (an ``(n+1) x (n+1)`` table).

Solution: :func:`meaning` turns ``depgraph.fill(rec, solution=True).solution`` into the
common subsequence and the two strings aligned with gaps; ``python examples/lcs.py``
prints the thesis's example.
"""

import numpy as np

from depgraph import aligned, family, recurrence

PROBLEM = "Longest Common Subsequence"
THESIS_PATTERN = "NOSE"
EXPECTED_PATTERN = "NOSE"
FORMULATION = "M[i,j] = LCS of X[:i], Y[:j] = M[i-1,j-1]+1 if X[i-1]==Y[j-1] else max(M[i-1,j], M[i,j-1])"


def _codes(s):
    if isinstance(s, str):
        s = s.encode()
    if isinstance(s, (bytes, bytearray)):
        return np.frombuffer(bytes(s), dtype=np.uint8).astype(np.int64)
    return np.ascontiguousarray(s, dtype=np.int64)


def _text(codes):
    """Letter codes as text: the family data's 0..3 as ``ACGT``, bytes as themselves."""
    return "".join("ACGT"[c] if c < 4 else chr(c) for c in _codes(codes).tolist())


def data(n):
    """Seeded pair of random sequences of length ``n`` over ``{0, 1, 2, 3}``."""
    rng = np.random.default_rng(n)
    return rng.integers(0, 4, n).astype(np.int64), rng.integers(0, 4, n).astype(np.int64)


def make_lcs(X, Y):
    """The LCS recurrence of two sequences (``bytes``, ``str`` or integer arrays)."""
    x, y = _codes(X), _codes(Y)

    @recurrence(shape=(len(x) + 1, len(y) + 1), dtype=np.int32, args=(x, y))
    def lcs(M, i, j, X, Y):
        if i == 0 or j == 0:
            return 0
        if X[i - 1] == Y[j - 1]:
            return M[i - 1, j - 1] + 1
        return max(M[i - 1, j], M[i, j - 1])

    return lcs


def reference(X, Y):
    """Column-by-column fill with Python lists (the transpose of the row order)."""
    x, y = _codes(X).tolist(), _codes(Y).tolist()
    n, m = len(x), len(y)
    cols = [[0] * (n + 1)]
    for j in range(1, m + 1):
        prev, col = cols[-1], [0] * (n + 1)
        for i in range(1, n + 1):
            col[i] = prev[i - 1] + 1 if x[i - 1] == y[j - 1] else max(prev[i], col[i - 1])
        cols.append(col)
    return np.array(cols, dtype=np.int32).T.copy()


def meaning(solution, X, Y):
    """What an LCS solution means: ``(common, top, bottom)``, the common subsequence and
    the whole of ``X`` over the whole of ``Y``, aligned with gaps (``-``); the parts
    outside the solution's path (a prefix left when the path meets the first row or
    column, a suffix after a target short of the last cell) face gaps."""
    x, y = _text(X), _text(Y)
    top, bottom = aligned(solution, x, y)
    i, j = solution.cells[-1]
    ti, tj = solution.target
    top = x[:i] + "-" * j + top + x[ti:] + "-" * (len(y) - tj)
    bottom = "-" * i + y[:j] + bottom + "-" * (len(x) - ti) + y[tj:]
    common = "".join(a for a, b in zip(top, bottom) if a == b)
    return common, top, bottom


@family
def lcs(n):
    """LCS of two seeded random length-``n`` sequences over 4 letters."""
    return make_lcs(*data(n))


if __name__ == "__main__":
    from depgraph import fill

    found = fill(make_lcs(b"AGCGTAG", b"GTCAGA"), backend="python", solution=True).solution
    common, top, bottom = meaning(found, b"AGCGTAG", b"GTCAGA")
    print(f"LCS(AGCGTAG, GTCAGA) = {found.value}: {common}\n  {top}\n  {bottom}")
