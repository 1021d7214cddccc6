"""The certified LCS fill on the CPU alone: the median ``compute_s`` of ``REPEAT`` fills
(compile excluded) of ``examples/lcs.py`` at family size ``SIZE``, by its certificate's
plan (asserted), in the checkout this script is run from.  To compare two checkouts,
run it from each in turn, interleaved in rounds (one process each), and take medians.

    python benchmarks/bench_certified_lcs.py SIZE REPEAT
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from depgraph import cell_ir, fill, load  # noqa: E402
from runtime.schedule.plan import make_plan  # noqa: E402


def main(size: int, repeat: int) -> float:
    """The median seconds of ``repeat`` certified CPU fills of LCS at ``size``."""
    rec = load(ROOT / "examples/lcs.py", size=size)
    plan = make_plan(rec, cell_ir(rec))
    assert plan.method == "certificate", plan.method
    fill(rec, backend="cpu", plan=plan)  # compiled apart
    return statistics.median(fill(rec, backend="cpu", plan=plan).compute_s
                             for _ in range(repeat))


if __name__ == "__main__":
    print(f"{main(int(sys.argv[1]), int(sys.argv[2])):.5f}")
