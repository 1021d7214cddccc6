"""Hyperplane schedules (issue 42): the no-pattern 2-D example (``examples/skew.py``), the
LCS of three strings and Floyd-Warshall, on the GPU against LCS's fill at the same size
and a hand-written numba.cuda Floyd-Warshall (one launch per ``k``, in place), and on the
CPU against the sequential fill on 1 and 2 threads.  Medians of ``--repeat`` runs after
one warm-up (compiles); compute only (``FillResult.compute_s``; the hand-written kernel
timed the same way, from its first launch to the device's synchronise).  Every table is
compared with a reference (the sequential fill, or NumPy's Floyd-Warshall).

Usage: ``python benchmarks/bench_hyperplane.py --gpu [--skew 16384] [--lcs3 1000]
[--fw 2048]`` or ``--cpu [--skew 4000] [--lcs3 200] [--fw 200] [--threads 1,2]``;
``--repeat 5``, ``--json OUT``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT.parent / "examples")]

import floyd_warshall  # noqa: E402
import lcs  # noqa: E402
import lcs3  # noqa: E402
import skew  # noqa: E402

from depgraph import cell_ir, fill  # noqa: E402
from patterns.hyperplane import Hyperplane  # noqa: E402


def fw32(n: int) -> Any:
    """Floyd-Warshall of the example's graph in int32, so the ``(n + 1) x n x n`` table of
    n = 2048 fits one GPU."""
    return floyd_warshall.make_floyd_warshall(floyd_warshall.data(n)[0], np.int32)


def median_of(run: Callable[[], float], repeat: int) -> tuple[float, list[float]]:
    """One warm-up, then the median of ``repeat`` timed runs (seconds); each run's device
    tables freed before the next (numba defers freeing, and two 34 GB tables do not fit)."""
    times = []
    for _ in range(repeat + 1):
        times.append(run())
        _free()
    return statistics.median(times[1:]), times[1:]


def _free() -> None:
    """Free what numba.cuda holds for arrays no longer referenced, if it is loaded."""
    if "numba.cuda" in sys.modules:
        import gc

        from numba import cuda

        gc.collect()
        if cuda.is_available():
            cuda.current_context().deallocations.clear()


def hand_fw(W: np.ndarray) -> tuple[Any, Callable[[], float]]:
    """A hand-written numba.cuda Floyd-Warshall: one launch per ``k``, each cell of the
    2-D distance matrix relaxed in place (row and column ``k`` do not change in step
    ``k``).  Returns the kernel's result getter and a timed run."""
    from numba import cuda

    @cuda.jit
    def relax(D, k):  # pragma: no cover - compiled
        n = D.shape[0]
        q = cuda.grid(1)
        while q < n * n:
            i = q // n
            j = q - i * n
            d = D[i, k] + D[k, j]
            if d < D[i, j]:
                D[i, j] = d
            q += cuda.gridsize(1)

    n = W.shape[0]
    holder: dict[str, Any] = {}

    def run() -> float:
        D = cuda.to_device(W)
        cuda.synchronize()
        t = time.perf_counter()
        blocks = min(132 * 32, (n * n + 255) // 256)
        for k in range(n):
            relax[blocks, 256](D, k)
        cuda.synchronize()
        holder["D"] = D
        return time.perf_counter() - t

    return holder, run


def gpu(args: argparse.Namespace) -> dict[str, Any]:
    from runtime.backends.cuda import hyperplanes

    out: dict[str, Any] = {}
    n = args.skew
    base = lcs.lcs(n)
    t, _ = median_of(lambda: fill(base, backend="cuda", copy_back=False).compute_s, args.repeat)
    out["lcs"] = {"size": n, "fill_s": t, "gcells_s": base.cells / t / 1e9}
    rec = skew.skew(n)
    first = fill(rec, backend="cuda")
    reference = fill(rec, backend="cpu", schedule="sequential").table
    np.testing.assert_array_equal(first.table, reference)
    t, _ = median_of(lambda: fill(rec, backend="cuda", copy_back=False).compute_s, args.repeat)
    ir = cell_ir(rec)
    coop, _ = median_of(lambda: hyperplanes.hyperplane_fill(
        rec, ir, Hyperplane((2, 1)), copy_back=False, cooperative=True).compute_s, args.repeat)
    steps, _ = median_of(lambda: hyperplanes.hyperplane_fill(
        rec, ir, Hyperplane((2, 1)), copy_back=False).compute_s, max(1, args.repeat // 2))
    out["skew"] = {"size": n, "auto_s": t, "auto_over_lcs": t / out["lcs"]["fill_s"],
                   "cooperative_s": coop, "launch_per_step_s": steps,
                   "notes": [x for x in first.notes if x.startswith(("auto", "kernel"))]}
    rec = lcs3.lcs3(args.lcs3)
    r = fill(rec, backend="cuda", copy_back=False)
    t, _ = median_of(lambda: fill(rec, backend="cuda", copy_back=False).compute_s, args.repeat)
    steps, _ = median_of(lambda: hyperplanes.hyperplane_fill(
        rec, cell_ir(rec), Hyperplane((1, 1, 1)), copy_back=False).compute_s,
        max(1, args.repeat // 2))
    out["lcs3"] = {"size": args.lcs3, "auto_s": t, "gcells_s": rec.cells / t / 1e9,
                   "launch_per_step_s": steps,
                   "notes": [x for x in r.notes if x.startswith(("auto", "kernel"))]}
    rec = fw32(args.fw)
    r = fill(rec, backend="cuda", copy_back=False)
    t, _ = median_of(lambda: fill(rec, backend="cuda", copy_back=False).compute_s, args.repeat)
    holder, run = hand_fw(rec.args[0])
    hand, _ = median_of(run, args.repeat)
    last = fill(rec, backend="cuda", copy_back=False).device_table[args.fw].copy_to_host()
    np.testing.assert_array_equal(last, holder["D"].copy_to_host())
    out["floyd_warshall"] = {"size": args.fw, "auto_s": t, "hand_s": hand,
                             "auto_over_hand": t / hand,
                             "notes": [x for x in r.notes if x.startswith(("auto", "kernel"))]}
    return out


def cpu(args: argparse.Namespace) -> dict[str, Any]:
    from runtime.backends import cpu as cpu_backend

    out: dict[str, Any] = {}
    cases = {"skew": skew.skew(args.skew), "lcs3": lcs3.lcs3(args.lcs3),
             "floyd_warshall": floyd_warshall.floyd_warshall(args.fw)}
    for name, rec in cases.items():
        reference = fill(rec, backend="cpu", schedule="sequential").table
        row: dict[str, Any] = {"shape": list(rec.shape)}
        for threads in args.threads:
            for schedule in ("sequential", "hyperplane", "auto"):
                r = fill(rec, backend="cpu", schedule=schedule, threads=threads)
                np.testing.assert_array_equal(r.table, reference)
                t, _ = median_of(lambda: fill(rec, backend="cpu", schedule=schedule,
                                              threads=threads).compute_s, args.repeat)
                row[f"{schedule}_{threads}"] = t
                if schedule == "auto":
                    row[f"auto_{threads}_picks"] = r.schedule
            if rec.ndim == 2:  # the checked steps, as a fill without a certificate takes
                found = Hyperplane((2, 1))
                with cpu_backend.thread_count(threads):
                    t, _ = median_of(lambda: cpu_backend.hyperplane_fill(
                        rec, cell_ir(rec), np.zeros(rec.shape, rec.dtype), found,
                        checked=True)[1].run_s, args.repeat)
                row[f"checked_steps_{threads}"] = t
        out[name] = row
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--cpu", action="store_true")
    p.add_argument("--skew", type=int)
    p.add_argument("--lcs3", type=int)
    p.add_argument("--fw", type=int)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json")
    args = p.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    result: dict[str, Any] = {"command": " ".join(sys.argv)}
    if args.gpu:
        args.skew, args.lcs3, args.fw = args.skew or 16384, args.lcs3 or 1000, args.fw or 2048
        result["gpu"] = gpu(args)
    if args.cpu:
        args.skew, args.lcs3, args.fw = args.skew or 4000, args.lcs3 or 200, args.fw or 200
        result["cpu"] = cpu(args)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
