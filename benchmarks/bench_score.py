"""Score-only diagonal fills on the GPU (issue 6): the last cell of an ``n x n``
alignment-type table in O(n) memory, with its GCUPS, by the two kernels
``depgraph.score`` picks between: register strips storing no cell
(``runtime.backends.cuda.score.strip_score_fill``, when the reads are the three nearest
neighbours) and the live anti-diagonals in one cooperative launch
(``runtime.backends.cuda.score.score_fill``, any reads at constant offsets).  At sizes whose whole table fits, each score is first checked
against the one-launch tiled fill.

Usage: ``DEPGRAPH_GPU=1 python benchmarks/bench_score.py [--sizes 32768,1000000] [--cases lcs]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT)]

from depgraph import cell_ir  # noqa: E402
from runtime.backends.cuda import score, tiles  # noqa: E402
from wave_cases import CASES  # noqa: E402

NOSE = 4  # every case here is NOSE


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="32768,1000000")
    ap.add_argument("--cases", default="lcs")
    ap.add_argument("--threads", type=int, default=1024, help="of the cooperative launch")
    ap.add_argument("--check-up-to", type=int, default=32768)
    a = ap.parse_args()
    for size in (int(s) for s in a.sizes.split(",")):
        for name in a.cases.split(","):
            rec = CASES[name](size)
            ir = cell_ir(rec)
            whole = tiles.tiled_fill(rec, ir, NOSE).table if size <= a.check_up_to else None
            for r in (score.strip_score_fill(rec, ir, NOSE), score.score_fill(rec, ir, NOSE,
                                                                              a.threads)):
                check = ""
                if whole is not None:
                    assert whole[r.cell] == r.value, (whole[r.cell], r.value)
                    check = ", equal to the whole-table fill's"
                print(f"{name} {size}x{size}: score {r.value}{check}; {r.note} ({r.kept:,} "
                      f"cells); {r.compute_s:.3f} s, {rec.cells / r.compute_s / 1e9:.1f} GCUPS "
                      f"(compile {r.compile_s:.1f} s, copy-in {r.h2d_s:.3f} s)", flush=True)


if __name__ == "__main__":
    main()
