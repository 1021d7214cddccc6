"""Tiled diagonal fill against the per-step pattern fill and the hand-written per-step
kernel (issue 6, first step), on the GPU.  Every fill is compared with the sequential
reference before it is timed; medians of ``--repeat`` runs, compute only.

Usage: ``DEPGRAPH_GPU=1 python benchmarks/bench_tiled.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT), str(ROOT.parent / "examples"),
                str(ROOT.parent / "examples" / "catalog")]

import edit_distance  # noqa: E402
import lcs  # noqa: E402
import matrix_chain  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime import cuda  # noqa: E402
from runtime.fill import compare  # noqa: E402
from runtime.plan import make_plan  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a dry run)")
    a = ap.parse_args()
    from handwritten import RUNNERS

    big, chain = ((4096, 16384), 1024) if not a.quick else ((9, 21), 12)
    cases = [("lcs", big[0], lcs.make_lcs(*lcs.data(big[0]))),
             ("lcs", big[1], lcs.make_lcs(*lcs.data(big[1]))),
             ("edit_distance", big[1], edit_distance.edit_distance(big[1])),
             ("matrix_chain", chain, matrix_chain.make_matrix_chain(*matrix_chain.data(chain)))]
    print(f"{'case':>14} {'size':>6} {'pat':>5} {'step ms':>9} {'hand ms':>9} "
          f"{'T32 ms':>9} {'T64 ms':>9} {'T128 ms':>9} {'best GCUPS':>10} {'step/best':>9}", flush=True)
    for name, size, rec in cases:
        plan = make_plan(rec)
        p = BY_CODE[plan.pattern]
        steps = p.steps(rec.shape)
        med = {}
        compare(cuda.pattern_fill(rec, p.index, steps).table, plan.reference)
        med["step"] = statistics.median(cuda.pattern_fill(rec, p.index, steps, copy_back=False).compute_s
                                        for _ in range(a.repeat))
        if name in RUNNERS:
            dM, _ = RUNNERS[name](rec)
            compare(dM.copy_to_host(), plan.reference)
            med["hand"] = statistics.median(RUNNERS[name](rec)[1] for _ in range(a.repeat))
        for t in (32, 64, 128):
            compare(cuda.tiled_fill(rec, p.index, t).table, plan.reference)
            med[t] = statistics.median(cuda.tiled_fill(rec, p.index, t, copy_back=False).compute_s
                                       for _ in range(a.repeat))
        best = min(med[t] for t in (32, 64, 128))
        hand = f"{med['hand'] * 1e3:9.1f}" if "hand" in med else f"{'-':>9}"
        print(f"{name:>14} {size:>6} {p.code:>5} {med['step'] * 1e3:9.1f} {hand} {med[32] * 1e3:9.1f} "
              f"{med[64] * 1e3:9.1f} {med[128] * 1e3:9.1f} {rec.cells / best / 1e9:10.2f} "
              f"{med['step'] / best:9.1f}", flush=True)


if __name__ == "__main__":
    main()
