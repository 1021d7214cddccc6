"""Row-pattern fills on the GPU (issue 6) and the calibrated cost model's choice among them.

Cases: the knapsack (1000 items x 10^6 capacity: reads j - w[i], far) and binomial
coefficients (16384 rows: the nearest neighbours up and up-left), both RUD recurrences
whose reads also fit NOSE, and a stencil reading the row above on both sides (only RUD
fits).  Kernels: a launch per step (``pattern_fill``), one cooperative launch at the
largest resident grid with one cell a thread a round and at the model's grid with
``UNROLL`` cells, bands (``band_fill``: waiting on the bands before, in the NOSE frame,
and without a frame, each read waiting on its band), and register strips in the NOSE
frame (``strip_fill``, binomial only).  Every fill is compared with the sequential
reference first; medians of ``--repeat`` runs, compute only.  The last columns are the
model's pick and its prediction for it.  First, the card's write bandwidth
(``runtime.backends.cuda.probes.write_bandwidth`` on a buffer the knapsack's size), the ceiling for fills that
write each cell once.

Usage: ``DEPGRAPH_GPU=1 python benchmarks/bench_rows.py [--repeat 5]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT.parent / "examples"), str(ROOT.parent / "tests")]

import binomial  # noqa: E402
import knapsack  # noqa: E402
from stencil import make_stencil  # noqa: E402

from depgraph import cell_ir, compare  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime.backends.cuda import bands, probes, steps, strips  # noqa: E402
from runtime.schedule import costmodel  # noqa: E402
from runtime.schedule.plan import make_plan  # noqa: E402


def _knapsack() -> Any:
    rng = np.random.default_rng(1000)
    return knapsack.make_knapsack(rng.integers(1, 1001, 1000), rng.integers(1, 1001, 1000),
                                  10**6 - 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    cal = costmodel.calibration()
    print(f"calibration: {cal.summary()}; cooperative step {cal.coop_s * 1e6:.2f} us + "
          f"{cal.round_s * 1e6:.2f} a further round, band step "
          f"{cal.band_s * 1e6:.2f} us + {cal.band_round_s * 1e6:.2f} a further round, "
          f"strip step {cal.strip_step_s * 1e6:.2f} us", flush=True)
    peak = probes.write_bandwidth(1001 * 1000000 * 8)
    print(f"write bandwidth: {peak / 1e9:.0f} GB/s (8.0 GB of int64 words)", flush=True)
    cols = ["launches", "coop max grid", "coop model grid", "bands before", "bands every",
            "strips"]
    print(f"{'case':>10} {'shape':>16} " + " ".join(f"{c:>15}" for c in cols)
          + "   (ms; model's pick: predicted ms)", flush=True)
    both = make_stencil(np.array([(-1, -3), (-1, 0), (-1, 2), (-2, 5)]), (1001, 200001), 3)
    for name, rec in (("knapsack", _knapsack()), ("binomial", binomial.make_binomial(16384)),
                      ("both sides", both)):
        plan = make_plan(rec)
        ir = cell_ir(rec)
        rud = BY_CODE["RUD"].index
        count = plan.pattern_steps or 0
        choice = costmodel.choose(rec, ir, "RUD", plan.patterns or (), count, cal)
        grid = costmodel.predict(cal, "RUD", rec.shape, count, None)["cooperative"][1]
        runs = {"launches": lambda cb: steps.pattern_fill(rec, rud, count, "C", cb),
                "coop max grid": lambda cb: steps.cooperative_fill(rec, ir, rud, "C", cb),
                "coop model grid": lambda cb: steps.cooperative_fill(
                    rec, ir, rud, "C", cb, blocks=grid, unroll=costmodel.UNROLL),
                "bands every": lambda cb: bands.band_fill(rec, ir, rud, None, copy_back=cb)}
        if "NOSE" in (plan.patterns or ()):
            runs["bands before"] = lambda cb: bands.band_fill(rec, ir, rud, "NOSE", copy_back=cb)
        if strips.serves_strips(rec, ir, "NOSE"):
            runs["strips"] = lambda cb: strips.strip_fill(rec, ir, BY_CODE["NOSE"].index,
                                                          copy_back=cb)
        med = {}
        for col, run in runs.items():
            compare(run(True).table, plan.reference)
            med[col] = statistics.median(run(False).compute_s for _ in range(a.repeat))
        pick = {"cooperative": "coop model grid", "bands": "bands before" if choice.frame
                else "bands every"}.get(choice.kernel, choice.kernel)
        print(f"{name:>10} {str(rec.shape):>16} " + " ".join(
            f"{med[c] * 1e3:15.2f}" if c in med else f"{'-':>15}" for c in cols)
            + f"   {choice.kernel} ({med[pick] * 1e3:.2f} ms measured): "
            + ", ".join(f"{k} {s * 1e3:.2f}" for k, s in choice.predicted), flush=True)
        best = min(med, key=med.get)
        gbs = rec.cells * 8 / med[best]
        print(f"{'':>10} best {best}: {rec.cells / med[best] / 1e9:.1f} GCUPS, "
              f"{gbs / 1e9:.0f} GB/s at 8 bytes a cell, {gbs / peak:.0%} of the write "
              "bandwidth", flush=True)


if __name__ == "__main__":
    main()
