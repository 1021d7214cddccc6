"""Solution recovery on the GPU (issue 43, item 3; SPEC section 5, the thesis's claim):
an LCS path read from the table where it lies, only the tiles it crosses coming back
(:class:`runtime.backends.cuda.recovery.DeviceCells`), against copying the table back and
walking it on the host.  Both are ``fill(..., solution=True)``'s walk (the compiled one,
a window at a time on the device's side), and the solutions are compared.  Medians of
``--repeat``, after a warm-up fill and walk each.

    python benchmarks/bench_recovery.py [--sizes 4096,32768] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import lcs  # noqa: E402

from depgraph import fill  # noqa: E402
from runtime.backends.cuda.device import status  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="4096,32768")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(status()[1])
    for n in (int(s) for s in a.sizes.split(",")):
        rec = lcs.lcs(n)
        fill(rec, backend="cuda", copy_back=False, solution=True)
        fill(rec, backend="cuda", solution=True)
        on_device, copied, walks, tiles = [], [], [], ""
        for _ in range(a.repeat):
            here = fill(rec, backend="cuda", copy_back=False, solution=True)
            on_device.append(here.solution_s)
            tiles = next(x for x in here.notes if x.startswith("solution read"))
            back = fill(rec, backend="cuda", solution=True)
            host = back.solution
            walks.append(back.solution_s)
            copied.append(back.d2h_s + walks[-1])
            assert host.to_json() == here.solution.to_json()
        print(f"LCS {n}^2: path of {len(host.cells):,} cells | on the device "
              f"{statistics.median(on_device):.3f} s ({tiles}) | table back "
              f"{statistics.median(copied):.3f} s (of which the host walk "
              f"{statistics.median(walks):.3f} s) | ratio "
              f"{statistics.median(copied) / statistics.median(on_device):.2f}", flush=True)


if __name__ == "__main__":
    main()
