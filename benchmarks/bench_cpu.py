"""CPU fills (issue 41): the sequential fill, each parallel schedule and ``auto`` on 1 and 2
threads (``--threads``), against a hand-written ``@numba.njit`` loop over the same cell
function, side by side in one run.  Every table is compared with the sequential fill's
first (exactly, or to 1e-9 relative for floats); medians of ``--repeat`` rounds, each
round every variant once in turn; compute only (``FillResult.compute_s``; the hand loop
timed the same way, a fresh zeroed table each run).

Usage: ``python benchmarks/bench_cpu.py [--cases lcs,...] [--threads 1,2] [--repeat 5]
[--scale 1.0] [--json OUT]`` (``--scale`` multiplies every case's size, for a quick run).
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

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT), str(ROOT.parent / "examples")]

import binomial  # noqa: E402
import matrix_chain  # noqa: E402
from bench_fill import _knap  # noqa: E402
from wave_cases import CASES  # noqa: E402

from depgraph import fill, recurrence  # noqa: E402
from runtime.backends.emit import arg_tail, compile_source  # noqa: E402
from runtime.schedule.plan import make_plan  # noqa: E402


def chain(n: int) -> Any:
    """A 1 x n chain: each cell reads the one before it (``n`` one-cell steps)."""
    @recurrence(shape=(1, n), dtype=np.int64)
    def chain(M, i, j):
        if j == 0:
            return 1
        return (M[i, j - 1] * 3 + j) % 1000003

    return chain


#: name -> (recurrence of a size, default size, whether its rows go bottom to top)
BENCH: dict[str, tuple[Callable[[float], Any], float, bool]] = {
    "lcs": (lambda s: CASES["lcs"](int(s)), 12000, False),
    "edit_distance": (lambda s: CASES["edit_distance"](int(s)), 12000, False),
    "dtw": (lambda s: CASES["dtw"](int(s)), 12000, False),
    "knapsack": (lambda s: _knap(1000, int(s)), 10**5, False),
    "binomial": (lambda s: binomial.make_binomial(int(s)), 8192, False),
    "matrix_chain": (lambda s: matrix_chain.matrix_chain(int(s)), 1024, True),
    "chain": (lambda s: chain(int(s)), 10**5, False),
}


def hand_loop(rec: Any, upward: bool) -> Callable[[], tuple[np.ndarray, float]]:
    """The plain loop a user would write: the cell function under ``numba.njit``, called
    row by row (bottom to top when ``upward``), each column left to right."""
    tail = arg_tail(len(rec.args))
    rows = "range(n - 1, -1, -1)" if upward else "range(n)"
    source = (f"def loop(M{tail}):\n    n, m = M.shape\n    for i in {rows}:\n"
              f"        for j in range(m):\n            M[i, j] = cell(M, i, j{tail})\n")
    cell = numba.njit(inline="always")(rec.func)
    loop = numba.njit(compile_source(source, "loop", {"cell": cell}))
    args = tuple(rec.args)

    def run() -> tuple[np.ndarray, float]:
        M = np.zeros(rec.shape, dtype=rec.dtype)
        t0 = time.perf_counter()
        loop(M, *args)
        return M, time.perf_counter() - t0

    return run


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=1e-9, atol=0))
    return bool(np.array_equal(a, b))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(BENCH))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--json", help="write every run's times here")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    print(f"# numba {numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads available, "
          f"threading layer {numba.config.THREADING_LAYER}", flush=True)
    out: dict[str, Any] = {}
    for name in a.cases.split(","):
        build, size, upward = BENCH[name]
        rec = build(size * a.scale)
        plan = make_plan(rec)
        diagonal = plan.pattern in ("NOSE", "SENO", "SONE", "NESO")
        schedules = ["sequential", "pattern"] + (["tiled"] if diagonal else []) + ["auto"]
        variants: dict[str, Callable[[], tuple[np.ndarray, float, str]]] = {}
        for t in threads:
            for s in schedules:
                if s == "sequential" and t != threads[0]:
                    continue  # one core whatever the threads

                def run(s: str = s, t: int = t) -> tuple[np.ndarray, float, str]:
                    r = fill(rec, backend="cpu", schedule=s, threads=t, plan=plan)
                    return r.table, r.compute_s, r.schedule

                variants[s if s == "sequential" else f"{s} {t}t"] = run
        hand = hand_loop(rec, upward)
        variants["njit loop"] = lambda: (*hand(), "")
        reference = variants["sequential"]()[0]
        times: dict[str, list[float]] = {k: [] for k in variants}
        picked: dict[str, str] = {}
        for k, v in variants.items():  # compile, and check every table once
            table, _, sched = v()
            if not _same(table, reference):
                raise SystemExit(f"{name}: {k} differs from the sequential fill")
            picked[k] = sched
        for _ in range(a.repeat):
            for k, v in variants.items():
                times[k].append(v()[1])
        med = {k: statistics.median(x) for k, x in times.items()}
        seq, loop = med["sequential"], med["njit loop"]
        print(f"\n{name} {rec.shape} pattern {plan.pattern}: median ms of {a.repeat} "
              f"(x: sequential / this; vs loop: this / njit loop)", flush=True)
        for k, m in med.items():
            how = f" -> {picked[k]}" if k.startswith("auto") else ""
            print(f"  {k + how:22s} {m * 1e3:10.2f} ms  x{seq / m:5.2f}  vs loop {m / loop:5.2f}",
                  flush=True)
        out[name] = {"shape": list(rec.shape), "pattern": plan.pattern, "times_s": times,
                     "auto": {k: v for k, v in picked.items() if k.startswith("auto")}}
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
