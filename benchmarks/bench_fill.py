"""Fill benchmark (issue 3): the thesis's four cases, every executor side by side.

For each case and size: planning (checked sweep at that size), one-core sequential numba,
parallel CPU pattern fill (all cores, and 2 cores), GPU pattern fill, GPU stage fill (where
the stage arrays can be traced), the GPU ready-check fill (Algorithm 3, same limit), and a
hand-written numba.cuda per-step kernel.  Every
fill is checked against the sequential reference before it is timed; each time is the
median of ``--repeat`` runs (one run when a single run exceeds 5 s).

Usage: ``python benchmarks/bench_fill.py [--quick] [--cases lcs,knapsack,...] [--out F.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import binomial  # noqa: E402
import knapsack  # noqa: E402
import lcs  # noqa: E402
import matrix_chain  # noqa: E402
from depgraph import compare  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime.backends import cpu  # noqa: E402
from runtime.backends.cuda import device, steps  # noqa: E402
from runtime.schedule.plan import make_plan  # noqa: E402

STAGE_LIMIT = 2100 * 2100  # stage arrays come from a Python trace: keep it to ~4M cells


def _knap(n_items: int, capacity: int) -> Any:
    rng = np.random.default_rng(n_items)
    return knapsack.make_knapsack(rng.integers(1, 1001, n_items), rng.integers(1, 1001, n_items),
                                  capacity)


CASES: dict[str, tuple[Callable[[Any], Any], list[Any], list[Any]]] = {
    # name: (builder, sizes, quick sizes)
    "lcs": (lambda n: lcs.make_lcs(*lcs.data(n)), [1024, 4096, 16384], [512, 4096]),
    "knapsack": (lambda s: _knap(*s), [(1000, 10**4), (1000, 10**5), (1000, 10**6)],
                 [(100, 5000), (1000, 10**5)]),
    "binomial": (lambda n: binomial.make_binomial(n), [1024, 4096, 16384], [512, 8192]),
    "matrix_chain": (lambda n: matrix_chain.make_matrix_chain(*matrix_chain.data(n)),
                     [512, 1024, 2048], [128, 256]),
}
CPU_SEQ_CELL_LIMIT = {"matrix_chain": 2048 * 2048}  # O(n^3): one core takes minutes beyond


def _median(fn: Callable[[], float], repeat: int) -> tuple[float, int]:
    times = [fn()]
    if times[0] < 5.0:
        times += [fn() for _ in range(repeat - 1)]
    return statistics.median(times), len(times)


def bench_case(name: str, size: Any, repeat: int, threads: list[int]) -> dict[str, Any]:
    import numba

    build = CASES[name][0]
    rec = build(size)
    cells = rec.cells
    row: dict[str, Any] = {"case": name, "size": size, "shape": list(rec.shape), "cells": cells}
    t = time.perf_counter()
    plan = make_plan(rec)
    ir = plan.ir
    row["plan_s"] = time.perf_counter() - t
    ref = plan.reference
    p = BY_CODE[plan.pattern]
    row["pattern"] = p.code
    row["steps"] = p.steps(rec.shape)
    layout = "F" if p.storage == "columns" else "C"

    def cpu_seq() -> float:
        return cpu.sweep_fill(rec, ir, cpu.touched_table(rec), plan.sweep, checked=False)[1].run_s

    if cells <= CPU_SEQ_CELL_LIMIT.get(name, 1 << 62):
        row["cpu_seq_s"], row["runs"] = _median(cpu_seq, repeat)
    for k in threads:
        numba.set_num_threads(k)
        M = np.zeros(rec.shape, rec.dtype, order=layout)
        cpu.pattern_fill(rec, ir, M, p.index)
        compare(M, ref)

        def cpu_par() -> float:
            return cpu.pattern_fill(rec, ir, cpu.touched_table(rec, layout), p.index)[1].run_s

        if cells <= CPU_SEQ_CELL_LIMIT.get(name, 1 << 62) or k > 2:
            row[f"cpu_par{k}_s"] = _median(cpu_par, repeat)[0]
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    if device.status()[0]:
        first = steps.pattern_fill(rec, p.index, row["steps"], layout)
        compare(first.table, ref)
        row["gpu_h2d_s"], row["gpu_d2h_s"] = first.h2d_s, first.d2h_s
        row["gpu_pattern_s"] = _median(
            lambda: steps.pattern_fill(rec, p.index, row["steps"], layout, copy_back=False).compute_s,
            repeat)[0]
        from handwritten import RUNNERS

        dM, _ = RUNNERS[name](rec)
        compare(dM.copy_to_host(), ref)
        row["gpu_hand_s"] = _median(lambda: RUNNERS[name](rec)[1], repeat)[0]
        if cells <= STAGE_LIMIT:
            t = time.perf_counter()
            splan = make_plan(rec, need_stages=True)
            row["trace_s"] = time.perf_counter() - t
            a = splan.analysis
            cells_by_stage = a.graph.flat_cells()[a.stages.order]
            st = steps.stage_fill(rec, cells_by_stage, a.stages.ptr)
            compare(st.table, ref)
            row["stages"] = a.stages.count
            row["gpu_stages_s"] = _median(
                lambda: steps.stage_fill(rec, cells_by_stage, a.stages.ptr, copy_back=False).compute_s,
                repeat)[0]
            if rec.dtype in steps.ATOMIC_DTYPES:
                g = a.graph
                compare(steps.ready_fill(rec, ir, cells_by_stage, g.indptr, g.indices).table, ref)
                row["gpu_ready_s"] = _median(lambda: steps.ready_fill(
                    rec, ir, cells_by_stage, g.indptr, g.indices, copy_back=False).compute_s, repeat)[0]
    return row


def _fmt(row: dict[str, Any]) -> str:
    def g(key: str) -> str:
        v = row.get(key)
        return f"{v * 1e3:9.1f}" if isinstance(v, float) else f"{'-':>9}"

    gc = (row["cells"] / row["gpu_pattern_s"] / 1e9) if row.get("gpu_pattern_s") else float("nan")
    ratio = (row["gpu_pattern_s"] / row["gpu_hand_s"]) if row.get("gpu_hand_s") else float("nan")
    seq_over_gpu = (row["cpu_seq_s"] / row["gpu_pattern_s"]) if row.get("cpu_seq_s") and row.get("gpu_pattern_s") else float("nan")
    return (f"{row['case']:>12} {str(row['size']):>14} {row['pattern']:>5} {g('plan_s')} {g('cpu_seq_s')} "
            f"{g('cpu_par2_s')} {g('cpu_par16_s')} {g('gpu_pattern_s')} {g('gpu_hand_s')} "
            f"{g('gpu_stages_s')} {g('gpu_ready_s')} {g('gpu_h2d_s')} {g('gpu_d2h_s')} {gc:7.2f} {ratio:6.2f} {seq_over_gpu:7.1f}")


HEADER = (f"{'case':>12} {'size':>14} {'pat':>5} {'plan ms':>9} {'seq1 ms':>9} {'par2 ms':>9} "
          f"{'par16 ms':>9} {'gpu ms':>9} {'hand ms':>9} {'stage ms':>9} {'ready ms':>9} {'h2d ms':>9} {'d2h ms':>9} "
          f"{'GCUPS':>7} {'g/hand':>6} {'seq/gpu':>7}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="2,16")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import numba

    threads = [k for k in (int(x) for x in a.threads.split(",")) if k <= numba.config.NUMBA_NUM_THREADS]
    ok, why = device.status()
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, numba {numba.__version__}, numpy {np.__version__}, GPU: {why}")
    print(HEADER, flush=True)
    rows = []
    for name in a.cases.split(","):
        for size in CASES[name][2 if a.quick else 1]:
            row = bench_case(name, size, a.repeat, threads)
            rows.append(row)
            print(_fmt(row), flush=True)
            if a.out:
                Path(a.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
