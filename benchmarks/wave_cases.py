"""Square alignment-type recurrences for the tiled-fill benchmarks (issue 6's goals), each
a plain cell function over two seeded random sequences of length ``n``: LCS and edit
distance from ``examples/`` (int32 and int64 tables), Smith-Waterman with linear gaps
(int32) and dynamic time warping (float32).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from depgraph import recurrence

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "examples"), str(ROOT / "examples" / "catalog")]

from edit_distance import make_edit_distance  # noqa: E402
from lcs import make_lcs  # noqa: E402


def _seqs(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return rng.integers(0, 4, n).astype(np.int32), rng.integers(0, 4, n).astype(np.int32)


def lcs(n: int) -> Any:
    return make_lcs(*_seqs(n))


def edit_distance(n: int) -> Any:
    return make_edit_distance(*_seqs(n))


def smith_waterman(n: int) -> Any:
    X, Y = _seqs(n)

    @recurrence(shape=(n + 1, n + 1), dtype=np.int32, args=(X, Y))
    def smith_waterman(M, i, j, X, Y):
        if i == 0 or j == 0:
            return 0
        diag = M[i - 1, j - 1] + (2 if X[i - 1] == Y[j - 1] else -1)
        return max(0, diag, M[i - 1, j] - 1, M[i, j - 1] - 1)

    return smith_waterman


def dtw(n: int) -> Any:
    rng = np.random.default_rng(n)
    X = rng.standard_normal(n).astype(np.float32)
    Y = rng.standard_normal(n).astype(np.float32)

    @recurrence(shape=(n, n), dtype=np.float32, args=(X, Y))
    def dtw(M, i, j, X, Y):
        cost = abs(X[i] - Y[j])
        if i == 0 and j == 0:
            return cost
        if i == 0:
            return cost + M[i, j - 1]
        if j == 0:
            return cost + M[i - 1, j]
        return cost + min(M[i - 1, j - 1], M[i - 1, j], M[i, j - 1])

    return dtw


CASES: dict[str, Callable[[int], Any]] = {
    "lcs": lcs, "edit_distance": edit_distance, "smith_waterman": smith_waterman, "dtw": dtw,
}
