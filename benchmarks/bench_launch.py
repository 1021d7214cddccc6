"""What a launch costs from Python: a fill of a launch per step (LCS, NOSE, one launch per
anti-diagonal) with the launches sent straight to the driver (``device._launch_all``) and
with numba's own launch, side by side in one process, medians of ``--repeat``; the two
tables compared.

    python benchmarks/bench_launch.py [--size 4096] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from depgraph import load  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime.backends.cuda import device, steps  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rec = load(ROOT / "examples/lcs.py", size=a.size)
    nose = BY_CODE["NOSE"]
    count = nose.steps(rec.shape)
    direct = device._direct_launch

    def fill(straight: bool):
        device._direct_launch = direct if straight else (lambda kern: None)
        return steps.pattern_fill(rec, nose.index, count, "C", True, None)

    print(device.status()[1])
    assert np.array_equal(fill(True).table, fill(False).table)
    for straight in (True, False, True, False):
        t = statistics.median(fill(straight).compute_s for _ in range(a.repeat))
        print(f"{'straight to the driver' if straight else 'numba':24s} {t * 1e3:8.2f} ms for "
              f"{count} launches, {t / count * 1e6:6.2f} us a launch")


if __name__ == "__main__":
    main()
