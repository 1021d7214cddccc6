"""Score-only fills on the CPU (``depgraph.score``, ``runtime.backends.cpu_score``): one core against every core a barrier
can hold, side by side in one run, medians of ``--repeat``.  Diagonal cases
(``wave_cases.py``) walk a window of anti-diagonals; the knapsack (``examples/``) walks rows
of 10⁶ cells.  Both runs must give the same score; at sizes up to ``--check-up-to`` it is
also compared with the sequential reference's last cell.

Usage: ``python benchmarks/bench_cpu_score.py [--sizes 2048,16384] [--cases lcs,dtw]
[--knapsack 1000x1000000]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT), str(ROOT.parent / "examples")]

from knapsack import make_knapsack  # noqa: E402

from depgraph import score, score_plan  # noqa: E402
from runtime.backends import cpu_score  # noqa: E402
from runtime.schedule.plan import make_plan  # noqa: E402
from wave_cases import CASES  # noqa: E402


def timed(rec: Any, split: bool, repeat: int) -> tuple[float, Any, str]:
    """Median seconds, score and thread note of ``rec``'s CPU score, its slices split
    among threads or not."""
    cpu_score.PARALLEL_CELLS = 64 if split else 1 << 62
    score(rec, "cpu")  # compile
    runs = [score(rec, "cpu") for _ in range(repeat)]
    return statistics.median(r.compute_s for r in runs), runs[0].value, runs[0].notes[-1]


def report(name: str, rec: Any, repeat: int, check: bool) -> None:
    (t1, v1, _), (tn, vn, note) = timed(rec, False, repeat), timed(rec, True, repeat)
    assert v1 == vn, (v1, vn)
    if check:
        ref = make_plan(rec).reference
        last = score_plan(rec).last(rec.shape)
        assert np.isclose(ref[last], v1, rtol=1e-6), (ref[last], v1)
    print(f"{name:>14} {rec.shape[0]}x{rec.shape[1]}: one core {t1 * 1e3:9.1f} ms, "
          f"{note.split(':')[0]} {tn * 1e3:9.1f} ms ({t1 / tn:.2f}x), score {v1}"
          + (", equal to the reference" if check else ""), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2048,16384")
    ap.add_argument("--cases", default="lcs,edit_distance,dtw")
    ap.add_argument("--knapsack", default="1000x1000000", help="ITEMSxCAPACITY, or none")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--check-up-to", type=int, default=2048)
    a = ap.parse_args()
    for size in (int(s) for s in a.sizes.split(",")):
        for name in a.cases.split(","):
            report(name, CASES[name](size), a.repeat, size <= a.check_up_to)
    if a.knapsack != "none":
        items, capacity = map(int, a.knapsack.split("x"))
        rng = np.random.default_rng(items)
        rec = make_knapsack(rng.integers(1, 1000, items), rng.integers(1, 1000, items), capacity)
        report("knapsack", rec, a.repeat, False)


if __name__ == "__main__":
    main()
