"""A hand-written LCS in one cached ``numba.njit`` loop, on the data of ``examples/lcs.py``
at size ``N``, printing the last cell: what ``benchmarks/second_process.sh`` times a second
process of ``depgraph run examples/lcs.py --size N --backend cpu`` against (issue 41).

    python benchmarks/lcs_njit.py N
"""

import sys
import numpy as np
from numba import njit


@njit(cache=True)
def fill(X, Y):
    n, m = len(X) + 1, len(Y) + 1
    M = np.empty((n, m), np.int32)
    for i in range(n):
        for j in range(m):
            if i == 0 or j == 0:
                M[i, j] = 0
            elif X[i - 1] == Y[j - 1]:
                M[i, j] = M[i - 1, j - 1] + 1
            else:
                M[i, j] = max(M[i - 1, j], M[i, j - 1])
    return M


if __name__ == "__main__":
    n = int(sys.argv[1])
    rng = np.random.default_rng(n)  # the data of examples/lcs.py
    X, Y = rng.integers(0, 4, n).astype(np.int64), rng.integers(0, 4, n).astype(np.int64)
    print(fill(X, Y)[-1, -1])
