"""CPU parallel pattern fill on 1 and 2 threads against the one-core sequential sweep, for
row patterns (issue 3's 2-core goal), interleaved runs, medians of ``--repeat``.

Usage: ``python benchmarks/bench_cpu_threads.py [--repeat 9]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT.parent / "examples")]

import binomial  # noqa: E402
from bench_fill import _knap  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime.backends import cpu  # noqa: E402
from runtime.schedule.plan import make_plan  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args()
    cases = [("knapsack 1000 x 1e5", _knap(1000, 10**5)), ("knapsack 1000 x 1e6", _knap(1000, 10**6)),
             ("binomial 8192", binomial.make_binomial(8192))]
    for name, rec in cases:
        plan = make_plan(rec)
        p = BY_CODE[plan.pattern]
        runs: dict[str, list[float]] = {"seq": [], "par1": [], "par2": []}
        for _ in range(a.repeat):
            runs["seq"].append(cpu.sweep_fill(rec, plan.ir, cpu.touched_table(rec), plan.sweep, False)[1].run_s)
            for k in (1, 2):
                numba.set_num_threads(k)
                runs[f"par{k}"].append(cpu.pattern_fill(rec, plan.ir, cpu.touched_table(rec), p.index)[1].run_s)
        med = {k: statistics.median(v) for k, v in runs.items()}
        print(f"{name} ({p.code}): one-core sweep {med['seq'] * 1e3:.1f} ms, pattern fill 1 thread "
              f"{med['par1'] * 1e3:.1f} ms, 2 threads {med['par2'] * 1e3:.1f} ms; 2 threads vs sweep "
              f"{med['seq'] / med['par2']:.2f}x, vs 1 thread {med['par1'] / med['par2']:.2f}x "
              f"(medians of {a.repeat})")


if __name__ == "__main__":
    main()
