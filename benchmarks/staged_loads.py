"""The register strips' loads of a cell's 2-D argument (issue 42): made by the store warps a
batch ahead, side by side along a row (``strip_fill(..., staged=True)``, the default), against
the compute warp's own loads a step ahead (``staged=False``), on the no-pattern example's
sheared table (``examples/skew.py``, its reward ``A[i, j]``) and on a NOSE grid (the minimum
path sum, ``G[i, j] + min(M[i - 1, j], M[i, j - 1])``); LCS at the same size for scale, and
the skew under ``auto`` (sheared, staged, gathered back).  Both fills' tables are compared.
Fills only (``compute_s``), medians of ``--repeat`` after a warm-up; a block's cells by rows
(the order is not timed).

    python benchmarks/staged_loads.py [--size 16384] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import lcs  # noqa: E402
import skew  # noqa: E402

from depgraph import cell_ir, fill, recurrence  # noqa: E402
from depgraph.model import Recurrence  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from patterns.hyperplane import shear  # noqa: E402
from runtime.backends.cuda.strips import strip_fill  # noqa: E402
from runtime.backends.shear import sheared_recurrence  # noqa: E402

NOSE = BY_CODE["NOSE"].index


def median(run: Callable[[], float], repeat: int) -> float:
    run()
    return statistics.median(run() for _ in range(repeat))


def sheared_skew(base: Recurrence) -> Recurrence:
    """The skew ``base`` (``examples/skew.py``) sheared into NOSE's regions, the table
    ``auto`` fills for it."""
    return sheared_recurrence(base, cell_ir(base), shear([(-1, 1), (0, -1)], base.shape))


def auto_s(rec: Recurrence, repeat: int) -> float:
    """The median of ``repeat`` fills' ``compute_s``, ``rec`` filled by ``auto`` on the GPU
    and its table left there."""
    return median(lambda: fill(rec, backend="cuda", copy_back=False).compute_s, repeat)


def min_path(n: int) -> Recurrence:
    """The minimum path sum over an ``n x n`` grid of costs in ``0..9`` (NOSE)."""
    G = np.random.default_rng(n).integers(0, 10, (n, n)).astype(np.int32)

    @recurrence(shape=G.shape, dtype=np.int32, args=(G,))
    def min_path(M, i, j, G):
        if i == 0 and j == 0:
            return G[0, 0]
        if i == 0:
            return G[i, j] + M[i, j - 1]
        if j == 0:
            return G[i, j] + M[i - 1, j]
        return G[i, j] + min(M[i - 1, j], M[i, j - 1])

    return min_path


def both(label: str, rec: Recurrence, repeat: int) -> None:
    ir = cell_ir(rec)

    def once(staged: bool, copy_back: bool = False):
        return strip_fill(rec, ir, NOSE, copy_back=copy_back, diagonals=False, staged=staged)

    staged, own = once(True, True), once(False, True)
    ts = median(lambda: once(True).compute_s, repeat)
    to = median(lambda: once(False).compute_s, repeat)
    print(f"{label:20s} {str(rec.shape):16s} staged {ts * 1e3:7.2f} ms  own loads "
          f"{to * 1e3:7.2f} ms  ({to / ts:.2f}x)  same table "
          f"{np.array_equal(staged.table, own.table)}  {staged.kernel}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.size
    t_lcs = auto_s(lcs.lcs(n), a.repeat)
    print(f"LCS {n}: {t_lcs * 1e3:.2f} ms", flush=True)
    base = skew.skew(n)
    both("skew, sheared", sheared_skew(base), a.repeat)
    both("min path sum", min_path(n), a.repeat)
    t = auto_s(base, a.repeat)
    print(f"skew, auto {base.shape}: {t * 1e3:.2f} ms ({t / t_lcs:.2f}x LCS)", flush=True)


if __name__ == "__main__":
    main()
