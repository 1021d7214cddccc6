"""Recurrence-file bodies shared by the CLI tests (written after the standard imports by
the ``write_rec`` fixture)."""

#: SPEC section 6's LCS of AGCGTAG and GTCAGA (answer 4).
LCS = """
X = np.frombuffer(b"AGCGTAG", dtype=np.uint8)
Y = np.frombuffer(b"GTCAGA", dtype=np.uint8)

@recurrence(shape=(len(X) + 1, len(Y) + 1), dtype=np.int32, args=(X, Y))
def lcs(M, i, j, X, Y):
    if i == 0 or j == 0:
        return 0
    if X[i - 1] == Y[j - 1]:
        return M[i - 1, j - 1] + 1
    return max(M[i - 1, j], M[i, j - 1])
"""

#: A recurrence whose cells (1, 2) and (1, 3) read each other.
CYCLE = """
@recurrence(shape=(3, 4), dtype=np.int64)
def cyc(M, i, j):
    if (i, j) == (1, 2):
        return M[1, 3]
    if (i, j) == (1, 3):
        return M[1, 2]
    return 0
"""
