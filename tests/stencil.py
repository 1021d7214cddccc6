"""Random stencil recurrences for property tests: a cell reads ``M[i + di, j + dj]`` for a
random subset of offsets, chosen per cell, so reads vary from cell to cell.

One module-level cell function serves every stencil (offsets, masks and weights are args),
so compiled kernels, cached per cell function, are reused across examples.
"""

from __future__ import annotations

import numpy as np

from depgraph import Recurrence, recurrence
from patterns import BY_CODE

SIGNS = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1),
         "UpLeft": (-1, -1), "UpRight": (-1, 1), "DownLeft": (1, -1), "DownRight": (1, 1)}


def stencil_cell(M, i, j, di, dj, use, w):
    s = w[i, j]
    for k in range(di.shape[0]):
        a = i + di[k]
        b = j + dj[k]
        if use[i, j, k] and a >= 0 and a < M.shape[0] and b >= 0 and b < M.shape[1]:
            s = s + M[a, b] * (k + 1)
    if s > 1000003:
        s = s % 1000003
    return s


def float_stencil_cell(M, i, j, di, dj, use, w):
    s = w[i, j]
    for k in range(di.shape[0]):
        a = i + di[k]
        b = j + dj[k]
        if use[i, j, k] and a >= 0 and a < M.shape[0] and b >= 0 and b < M.shape[1]:
            s = max(s, 0.5 * M[a, b] + w[i, j] / (k + 1))
    return s


def acyclic_offsets(rng: np.random.Generator, pi: tuple[int, int], reach: int, count: int) -> np.ndarray:
    """``count`` distinct offsets ``d`` with ``pi . d < 0`` (so the stencil is acyclic)."""
    cand = [(a, b) for a in range(-reach, reach + 1) for b in range(-reach, reach + 1)
            if pi[0] * a + pi[1] * b < 0]
    pick = rng.choice(len(cand), size=min(count, len(cand)), replace=False)
    return np.array([cand[k] for k in pick], dtype=np.int64).reshape(-1, 2)


def pattern_offsets(rng: np.random.Generator, code: str, reach: int, count: int) -> np.ndarray:
    """``count`` offsets inside the allowed regions of pattern ``code``."""
    allowed = sorted(BY_CODE[code].allowed)
    out = set()
    while len(out) < count:
        si, sj = SIGNS[allowed[rng.integers(len(allowed))]]
        out.add((si * int(rng.integers(1, reach + 1)), sj * int(rng.integers(1, reach + 1))))
    return np.array(sorted(out), dtype=np.int64).reshape(-1, 2)


def make_stencil(offsets: np.ndarray, shape: tuple[int, int], seed: int,
                 dtype: type = np.int64, density: float = 0.7) -> Recurrence:
    rng = np.random.default_rng(seed)
    di = np.ascontiguousarray(offsets[:, 0])
    dj = np.ascontiguousarray(offsets[:, 1])
    use = rng.random((*shape, len(offsets))) < density
    floats = np.dtype(dtype).kind == "f"
    w = (rng.random(shape) if floats else rng.integers(1, 9, size=shape)).astype(dtype)
    func = float_stencil_cell if floats else stencil_cell
    return recurrence(shape=shape, dtype=dtype, args=(di, dj, use, w), name="stencil")(func)
