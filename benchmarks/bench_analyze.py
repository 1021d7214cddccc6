"""Benchmark of the core analysis (issue 2): Algorithm 1 against networkx, graph memory,
and ``depgraph analyze`` end to end against the plain approach, side by side in one run.

Usage: ``python benchmarks/bench_analyze.py [--size 1000] [--repeat 5]``.
Each end-to-end contender runs in its own subprocess so its peak memory (max RSS) is its
own; times are medians over ``--repeat`` runs (networkx and the plain approach: fewer).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np

from depgraph import analyze, load
from depgraph.analysis.stages import stages

ROOT = Path(__file__).resolve().parent.parent
LCS = ROOT / "examples" / "lcs.py"


def _median_time(fn, repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def _child(cmd: list[str]) -> tuple[float, float, str]:
    """Run a Python command under ``peak.py``; return (wall s, its peak memory in MB, stdout)."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peak.py"), *cmd],
                       capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    peak_kb = int(r.stderr.rsplit("PEAK_KB", 1)[1])
    return wall, peak_kb / 1024, r.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print(f"# python {platform.python_version()}, numpy {np.__version__}, networkx {nx.__version__}, "
          f"{platform.processor() or platform.machine()}")

    rec = load(LCS, size=a.size)
    res = analyze(rec)
    g = res.graph
    print(f"LCS {rec.shape}: {g.n_nodes:,} cells, {g.n_edges:,} edges, {res.stages.count:,} stages")
    print(f"graph memory: {g.nbytes:,} B = {g.nbytes / g.n_edges:.2f} B/edge; budget 8 B/edge + "
          f"16 B/cell = {8 * g.n_edges + 16 * g.n_nodes:,} B -> "
          f"{'within' if g.nbytes <= 8 * g.n_edges + 16 * g.n_nodes else 'OVER'}")
    print(f"trace: {g.n_nodes / res.timings['trace_s']:,.0f} cells/s; time split: "
          + ", ".join(f"{k} {v:.3f}" for k, v in res.timings.items()))

    # Algorithm 1 against networkx on the same graph
    stages(g)  # warm: load the compiled peel
    ours, _ = _median_time(lambda: stages(g), a.repeat)
    nxg = nx.DiGraph()
    src, dst = g.edge_arrays()
    nxg.add_nodes_from(range(g.n_nodes))
    nxg.add_edges_from(zip(src.tolist(), dst.tolist()))
    rev = nxg.reverse(copy=True)
    theirs, _ = _median_time(lambda: list(nx.topological_generations(rev)), max(1, a.repeat // 2))
    print(f"Algorithm 1: {ours * 1e3:.1f} ms (median of {a.repeat}); networkx topological_generations: "
          f"{theirs * 1e3:.0f} ms; ratio {theirs / ours:.0f}x")

    # end to end, each in a fresh process
    ours_runs = [_child(["-m", "depgraph", "analyze", str(LCS), "--size", str(a.size), "--json"])
                 for _ in range(3)]
    plain_runs = [_child([str(ROOT / "benchmarks" / "plain_analyze.py"), str(LCS), str(a.size)])
                  for _ in range(2)]
    ow = statistics.median(r[0] for r in ours_runs)
    pw = statistics.median(r[0] for r in plain_runs)
    om = max(r[1] for r in ours_runs)
    pm = max(r[1] for r in plain_runs)
    assert json.loads(ours_runs[0][2])["stages"] == json.loads(plain_runs[0][2])["stages"]
    print(f"analyze end to end: depgraph {ow:.2f} s, peak {om:.0f} MB (median of 3); plain approach "
          f"{pw:.2f} s, peak {pm:.0f} MB (median of 2); speed-up {pw / ow:.1f}x, memory "
          f"{om / pm:.2f} of plain")
    print(f"plain split: {plain_runs[0][2].strip()}")


if __name__ == "__main__":
    main()
