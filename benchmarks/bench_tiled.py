"""One-launch diagonal fills on the GPU (issue 6): register strips (``strip_fill``) and
shared-memory tiles (``wave_fill``) against the tiled fill with one launch per tile
diagonal (cells in global memory), on square alignment-type recurrences written as plain
cell functions (``wave_cases.py``).  Every fill is compared with the sequential reference
before it is timed; medians of ``--repeat`` runs, compute only (the table stays on the
device).

Usage: ``DEPGRAPH_GPU=1 python benchmarks/bench_tiled.py [--sizes 4096,32768] [--repeat 3]
[--strips 8x1,8x2,8x4,4x4] [--no-tiles] [--calls]`` (``--strips``: the strips' ``R x C``
blocks, ``RxCxK`` with ``K`` store warps instead of the default
``runtime.backends.cuda.strip_layout.strip_store_warps``, ``x0`` for none; trailing
letters: ``w`` for cells computed as numba types them, not in int32 where that is proven
exact (``depgraph.frontend.narrow``),
``s`` for the store warps' cells one at a time instead of 16-byte vectors, ``r`` or ``d``
for blocks computed by rows or by anti-diagonals instead of the order ``strip_fill``
chooses by timing (its ``vectors`` and ``diagonals``);
``--calls``: a second line a case, the medians of the whole calls: the host's work, the
args in, the table allocated, the fill).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT)]

from depgraph import cell_ir, compare  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime.backends.cuda import strips, tiles  # noqa: E402
from runtime.backends.cuda.device import DeviceFill  # noqa: E402
from runtime.schedule.plan import make_plan  # noqa: E402
from wave_cases import CASES  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096,32768")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--strips", default="8x1,8x2,8x4,4x4")
    ap.add_argument("--no-tiles", action="store_true", help="time the strips alone")
    ap.add_argument("--calls", action="store_true", help="also time the whole calls")
    a = ap.parse_args()
    blocks = a.strips.split(",")
    cols = ([] if a.no_tiles else ["launches T64", "tiles T64", "tiles T128"]) + [
        f"strips {b}" for b in blocks]
    print(f"{'case':>15} {'size':>6} " + " ".join(f"{c:>12}" for c in cols) + "   (ms; GCUPS of the best)",
          flush=True)
    for size in (int(s) for s in a.sizes.split(",")):
        for name in a.cases.split(","):
            rec = CASES[name](size)
            plan = make_plan(rec)
            ir = cell_ir(rec)
            p = BY_CODE[plan.pattern]
            runs = {} if a.no_tiles else {
                "launches T64": lambda cb: tiles.diagonal_launches(rec, p.code, 64, cb),
                "tiles T64": lambda cb: tiles.wave_fill(rec, ir, p.index, 64, cb),
                "tiles T128": lambda cb: tiles.wave_fill(rec, ir, p.index, 128, cb)}
            for b in blocks:
                r, c, *k = map(int, b.rstrip("wsrd").split("x"))
                opts = set(b[len(b.rstrip("wsrd")):])
                runs[f"strips {b}"] = lambda cb, r=r, c=c, k=k, o=opts: strips.strip_fill(
                    rec, ir, p.index, r, cb, c, store_warps=k[0] if k else None, narrow="w" not in o,
                    vectors="s" not in o, diagonals=True if "d" in o else False if "r" in o
                    else None)
            med, call = {}, {}
            for col, run in runs.items():
                compare(run(True).table, plan.reference)
                times = [_timed(run) for _ in range(a.repeat)]
                med[col] = statistics.median(t[0] for t in times)
                call[col] = statistics.median(t[1] for t in times)
            best = min(med, key=med.get)
            print(f"{name:>15} {size:>6} " + " ".join(f"{med[c] * 1e3:12.2f}" for c in cols)
                  + f"   best {best}: {rec.cells / med[best] / 1e9:.1f} GCUPS", flush=True)
            if a.calls:
                print(f"{'whole calls':>22} " + " ".join(f"{call[c] * 1e3:12.2f}" for c in cols),
                      flush=True)


def _timed(run: Callable[[bool], DeviceFill]) -> tuple[float, float]:
    """The fill's compute time and the whole call's, in seconds."""
    t0 = time.perf_counter()
    compute = run(False).compute_s
    return compute, time.perf_counter() - t0


if __name__ == "__main__":
    main()
