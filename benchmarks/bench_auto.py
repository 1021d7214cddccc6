"""``auto`` against the sequential fill on the cpu backend, for every example and every
catalog entry (issue 41: "auto never slower than 1.2x the sequential fill").

Each family is grown (its size times 1.5, from ``--start``) until its sequential fill
takes ``--target`` seconds, or the next size would pass ``--max-cells`` cells; at that
size the sequential fill and ``auto`` (on every thread numba has, or ``--threads``) run
in turn, ``--repeat`` rounds after a first untimed one, and the table of ``auto`` is
compared with the sequential fill's (exactly, or to 1e-9 relative for floats).  Times
are the fill's own (``FillResult.compute_s``) and the whole call's (planning included),
medians.  ``--busy K`` keeps K other processes spinning, each pinned to a core of its
own from the first, for the run's length (a machine shared with other work).

    python benchmarks/bench_auto.py [--cases lcs,nim,...] [--busy 1] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

from depgraph import fill, load  # noqa: E402
from depgraph.errors import DepgraphError  # noqa: E402


def families() -> dict[str, Path]:
    """Every example and catalog entry with a family, by name."""
    files = sorted((ROOT / "examples").glob("*.py")) + \
        sorted((ROOT / "examples" / "catalog").glob("*.py"))
    return {f.stem: f for f in files if not f.name.startswith("_")}


def sized(path: Path, start: int, target_s: float, max_cells: int, threads: int | None
          ) -> tuple[Any, float] | None:
    """The recurrence of ``path``'s family grown until its sequential fill takes
    ``target_s`` or the next would pass ``max_cells`` cells, and that fill's time;
    ``None`` for a file without a family."""
    size, chosen = start, None
    while True:
        try:
            rec = load(path, size=size)
        except DepgraphError:
            return chosen
        if rec.cells > max_cells:
            return chosen
        took = fill(rec, backend="cpu", schedule="sequential", threads=threads).compute_s
        chosen = rec, took
        if took >= target_s:
            return chosen
        size = max(size + 1, math.ceil(size * 1.5))


def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=1e-9, atol=0, equal_nan=True))
    return bool(np.array_equal(a, b))


def measure(rec: Any, repeat: int, threads: int | None) -> dict[str, Any]:
    """Medians of the sequential fill and ``auto``, taking turns, and what ``auto`` took."""
    runs = {"sequential": lambda: fill(rec, backend="cpu", schedule="sequential",
                                       threads=threads),
            "auto": lambda: fill(rec, backend="cpu", threads=threads)}
    first = {k: run() for k, run in runs.items()}
    if not same(first["auto"].table, first["sequential"].table):
        raise SystemExit(f"{rec.name}: auto's table differs from the sequential fill's")
    fills: dict[str, list[float]] = {k: [] for k in runs}
    calls: dict[str, list[float]] = {k: [] for k in runs}
    picked = set()
    for _ in range(repeat):
        for k, run in runs.items():
            t = time.perf_counter()
            res = run()
            calls[k].append(time.perf_counter() - t)
            fills[k].append(res.compute_s)
            if k == "auto":
                picked.add(res.schedule)
    seq, auto = (statistics.median(fills[k]) for k in ("sequential", "auto"))
    return {"name": rec.name, "shape": list(rec.shape), "auto": sorted(picked),
            "sequential_s": seq, "auto_s": auto, "ratio": auto / seq,
            "sequential_call_s": statistics.median(calls["sequential"]),
            "auto_call_s": statistics.median(calls["auto"])}


def busy(count: int) -> list[subprocess.Popen]:
    """``count`` processes spinning, each pinned to a core of its own."""
    spin = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"
    return [subprocess.Popen([sys.executable, "-c", spin, str(core)])
            for core in range(count)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", help="names, comma-separated (default: all)")
    ap.add_argument("--start", type=int, default=8)
    ap.add_argument("--target", type=float, default=0.03, help="seconds of sequential fill")
    ap.add_argument("--max-cells", type=int, default=30_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--json")
    a = ap.parse_args()
    found = families()
    names = a.cases.split(",") if a.cases else list(found)
    spinning = busy(a.busy)
    rows = []
    try:
        print(f"# {os.cpu_count()} cores, {a.busy} kept busy; ratio = auto / sequential "
              f"(fill only); medians of {a.repeat}", flush=True)
        for name in names:
            got = sized(found[name], a.start, a.target, a.max_cells, a.threads)
            if got is None:
                print(f"{name:32s} no family", flush=True)
                continue
            row = measure(got[0], a.repeat, a.threads)
            rows.append(row)
            print(f"{name:32s} {str(tuple(row['shape'])):18s} auto {'/'.join(row['auto']):11s}"
                  f" seq {row['sequential_s'] * 1e3:9.2f} ms  auto {row['auto_s'] * 1e3:9.2f} ms"
                  f"  x{row['ratio']:5.2f}  (calls {row['sequential_call_s'] * 1e3:8.1f} / "
                  f"{row['auto_call_s'] * 1e3:8.1f} ms)", flush=True)
    finally:
        for p in spinning:
            p.kill()
    worst = max(rows, key=lambda r: r["ratio"], default=None)
    if worst:
        print(f"# worst: {worst['name']} x{worst['ratio']:.2f}; over 1.2x: "
              f"{[r['name'] for r in rows if r['ratio'] > 1.2]}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
