"""The register strips' block shapes where the store warps load the cells' grid (issue 42):
``8x4``, ``4x8`` and ``4x4`` cells a lane on the no-pattern example's sheared table
(``examples/skew.py``) and on a NOSE grid (the minimum path sum), the default block
(:func:`runtime.backends.cuda.strip_layout.strip_block`) marked; then the skew and LCS
under ``auto`` at the same size, the issue's goal being the skew within 3x of LCS.
Fills only (``compute_s``: the skew's includes gathering its cells back), medians of
``--repeat`` after a warm-up; a block's cells by rows (the order is not timed); each
shape's table compared with the first's.

    python benchmarks/strip_blocks.py [--size 16384] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples"), str(ROOT / "benchmarks")]

import lcs  # noqa: E402
import skew  # noqa: E402
from staged_loads import NOSE, auto_s, median, min_path, sheared_skew  # noqa: E402

from depgraph import cell_ir  # noqa: E402
from depgraph.model import Recurrence  # noqa: E402
from runtime.backends.cuda.strips import strip_fill, strip_narrowing, strip_shape  # noqa: E402

BLOCKS = ((8, 4), (4, 8), (4, 4))


def shapes(label: str, rec: Recurrence, repeat: int) -> None:
    ir = cell_ir(rec)
    default = strip_shape(rec, ir, strip_narrowing(rec, ir))[:2]
    first = None
    for R, C in BLOCKS:
        def once(copy_back: bool = False):
            return strip_fill(rec, ir, NOSE, rows_per_lane=R, cols_per_step=C,
                              copy_back=copy_back, diagonals=False)

        table = once(True).table
        first = table if first is None else first
        t = median(lambda: once().compute_s, repeat)
        print(f"{label:16s} {str(rec.shape):16s} {R}x{C}{' (default)' if (R, C) == default else '':10s}"
              f" {t * 1e3:7.2f} ms  same table {np.array_equal(table, first)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.size
    base = skew.skew(n)
    shapes("skew, sheared", sheared_skew(base), a.repeat)
    shapes("min path sum", min_path(n), a.repeat)
    t_lcs, t = auto_s(lcs.lcs(n), a.repeat), auto_s(base, a.repeat)
    print(f"LCS {n}, auto: {t_lcs * 1e3:.2f} ms; skew {base.shape}, auto: {t * 1e3:.2f} ms "
          f"({t / t_lcs:.2f}x LCS)", flush=True)


if __name__ == "__main__":
    main()
