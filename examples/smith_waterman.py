"""Smith-Waterman local alignment (not in the thesis's table; a recurrence whose answer
is its best cell, not its last).

Formulation
-----------
Row ``i`` is the prefix ``X[:i]``, column ``j`` the prefix ``Y[:j]``; ``H[i, j]`` is the
best score of an alignment of a suffix of ``X[:i]`` with a suffix of ``Y[:j]`` (empty
ones included, score 0)::

    H[i, j] = 0                                            if i == 0 or j == 0
            = max(0, H[i-1, j-1] + s(X[i-1], Y[j-1]),
                     H[i-1, j] + gap, H[i, j-1] + gap)     otherwise

with ``s(a, b) = match`` if ``a == b`` else ``mismatch``.  The answer is the best cell
anywhere in the table: the recurrence names it with ``target=`` (:func:`best_cell`,
the first of the ties in row order), so ``depgraph run`` prints it and the solution
starts there, going back until a cell whose score started again at 0 (``max``'s first
operand wins its ties).

Reads: UpLeft, Up and Left: only the anti-diagonal order fits, pattern NOSE.

Family data (seeded by the size ``n``): two random sequences of length ``n`` over a
4-letter alphabet; match 2, mismatch -1, gap -1.  A score is at most ``2 n``: int32.

Solution: :func:`local_alignment` turns ``depgraph.fill(rec, solution=True).solution``
into the two aligned pieces; ``python examples/smith_waterman.py`` prints an example.
"""

import numpy as np

from depgraph import aligned, family, recurrence

PROBLEM = "Smith-Waterman local alignment"
THESIS_PATTERN = None  # not in the thesis's table
EXPECTED_PATTERN = "NOSE"
FORMULATION = ("H[i,j] = max(0, H[i-1,j-1] + s(X[i-1],Y[j-1]), H[i-1,j] + gap, "
               "H[i,j-1] + gap); the answer is the best cell")


def _codes(s):
    if isinstance(s, str):
        s = s.encode()
    if isinstance(s, (bytes, bytearray)):
        return np.frombuffer(bytes(s), dtype=np.uint8).astype(np.int64)
    return np.ascontiguousarray(s, dtype=np.int64)


def data(n):
    """Seeded pair of random sequences of length ``n`` over ``{0, 1, 2, 3}``."""
    rng = np.random.default_rng(n)
    return rng.integers(0, 4, n).astype(np.int64), rng.integers(0, 4, n).astype(np.int64)


def best_cell(H):
    """The cell of the best score (the first in row order of the ties)."""
    return np.unravel_index(np.argmax(H), H.shape)


def make_smith_waterman(X, Y, match=2, mismatch=-1, gap=-1):
    """The Smith-Waterman recurrence of two sequences (``bytes``, ``str`` or integer
    arrays) with integer scores; its target is :func:`best_cell`."""
    x, y = _codes(X), _codes(Y)

    @recurrence(shape=(len(x) + 1, len(y) + 1), dtype=np.int32,
                args=(x, y, int(match), int(mismatch), int(gap)), target=best_cell)
    def smith_waterman(H, i, j, X, Y, match, mismatch, gap):
        if i == 0 or j == 0:
            return 0
        diag = H[i - 1, j - 1] + (match if X[i - 1] == Y[j - 1] else mismatch)
        return max(0, diag, H[i - 1, j] + gap, H[i, j - 1] + gap)

    return smith_waterman


def reference(X, Y, match=2, mismatch=-1, gap=-1):
    """Row-by-row fill with Python lists."""
    x, y = _codes(X).tolist(), _codes(Y).tolist()
    rows = [[0] * (len(y) + 1)]
    for i in range(1, len(x) + 1):
        up, row = rows[-1], [0]
        for j in range(1, len(y) + 1):
            s = match if x[i - 1] == y[j - 1] else mismatch
            row.append(max(0, up[j - 1] + s, up[j] + gap, row[j - 1] + gap))
        rows.append(row)
    return np.array(rows, dtype=np.int32)


def local_alignment(solution, X, Y):
    """What a Smith-Waterman solution means: ``(top, bottom)``, the aligned pieces of
    ``X`` and ``Y`` with gaps (``-``), from where the score started at 0 to the best
    cell (letter codes 0..3 shown as ``ACGT``)."""
    def text(codes):
        return "".join("ACGT"[c] if c < 4 else chr(c) for c in _codes(codes).tolist())

    return aligned(solution, text(X), text(Y))


@family
def smith_waterman(n):
    """Smith-Waterman of two seeded random length-``n`` sequences over 4 letters."""
    return make_smith_waterman(*data(n))


if __name__ == "__main__":
    from depgraph import fill

    X, Y = b"TGTTACGGAT", b"GGTTGACTA"
    found = fill(make_smith_waterman(X, Y), backend="python", solution=True).solution
    top, bottom = local_alignment(found, X, Y)
    print(f"best local alignment of {X.decode()} and {Y.decode()}: score {found.value} "
          f"at H{found.target}\n  {top}\n  {bottom}")
