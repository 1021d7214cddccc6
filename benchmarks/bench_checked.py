"""What a fill's own read checks cost: the same pattern fill with and without them.

A fill whose reads no certificate proves checks each read (in the table, in a region the
pattern has filled) and each value where it runs (``runtime.run.fill``'s "checked fill").
This times that fill against the unchecked one on the same recurrence, side by side, the
median of ``--repeat`` runs each (compile excluded), on the CPU (all cores) and, with
``--gpu``, on the GPU (one cooperative launch, and a launch per step).  Recurrences: LCS
(straight, NOSE), a straight row recurrence whose column read depends on its data (RUD),
and the catalog's integer knapsack and transportation problem (a loop per cell, RUD).

    python benchmarks/bench_checked.py --cpu-size 3000 [--gpu --gpu-size 16384] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from depgraph import load, recurrence  # noqa: E402
from depgraph.frontend.ir import cell_ir  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime.backends import cpu  # noqa: E402
from runtime.backends.walk import value_bounds  # noqa: E402
from runtime.schedule.plan import in_fill_plan  # noqa: E402


def drift(n: int):
    """A straight RUD recurrence whose second read's column comes from its data."""
    d = np.random.default_rng(n).integers(-3, 4, n).astype(np.int64)

    @recurrence(shape=(n + 1, n + 1), dtype=np.int32, args=(d,))
    def drift(M, i, j, d):
        if i == 0:
            return j % 7
        k = min(max(j + d[i - 1], 0), M.shape[1] - 1)
        return max(M[i - 1, j], M[i - 1, k] + 1) % 1000

    return drift


def cases(size: int, knapsack_types: int):
    return [
        ("lcs", load(ROOT / "examples/lcs.py", size=size)),
        ("drift", drift(size)),
        ("integer knapsack", load(ROOT / "examples/catalog/integer_knapsack.py",
                                  size=knapsack_types)),
        ("transportation", load(ROOT / "examples/catalog/transportation.py",
                                size=knapsack_types)),
    ]


def median(run, repeat: int) -> float:
    run()  # compiles, and touches the code paths once
    return statistics.median(run() for _ in range(repeat))


def cpu_row(name: str, rec, repeat: int) -> dict:
    ir = cell_ir(rec)
    plan = in_fill_plan(rec, ir)
    p = BY_CODE[plan.pattern]
    layout = "F" if p.storage == "columns" else "C"

    def one(checked: bool) -> float:
        M = cpu.touched_table(rec, layout)
        ck, timing = cpu.pattern_fill(rec, ir, M, p.index, checked=checked)
        assert not ck[cpu.OOB] and not ck[cpu.MISFIT]
        return timing.run_s

    plain, checked = median(lambda: one(False), repeat), median(lambda: one(True), repeat)
    return {"case": name, "where": "cpu", "shape": list(rec.shape), "pattern": p.code,
            "plain_s": plain, "checked_s": checked, "ratio": checked / plain}


def gpu_rows(name: str, rec, repeat: int) -> list[dict]:
    from runtime.backends.cuda import steps
    from runtime.backends.cuda.cells import Checks
    from runtime.schedule import costmodel

    ir = cell_ir(rec)
    plan = in_fill_plan(rec, ir)
    p = BY_CODE[plan.pattern]
    layout = "F" if p.storage == "columns" else "C"
    count = p.steps(rec.shape)
    checks = Checks(ir, tuple(sorted(p.allowed)), value_bounds(rec, ir, count))
    kernels = {"a launch per step": lambda c: steps.pattern_fill(
        rec, p.index, count, layout, False, c),
        "one cooperative launch": lambda c: steps.cooperative_fill(
            rec, ir, p.index, layout, False, unroll=costmodel.UNROLL, checks=c)}
    rows = []
    for label, fill in kernels.items():
        def one(c):
            res = fill(c)
            assert c is None or not res.checks[0]
            return res.compute_s

        plain = median(lambda: one(None), repeat)
        checked = median(lambda: one(checks), repeat)
        rows.append({"case": name, "where": f"cuda, {label}", "shape": list(rec.shape),
                     "pattern": p.code, "plain_s": plain, "checked_s": checked,
                     "ratio": checked / plain})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-size", type=int, default=3000)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--gpu-size", type=int, default=16384)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    rows = [cpu_row(n, r, a.repeat) for n, r in cases(a.cpu_size, a.cpu_size // 10)]
    if a.gpu:
        from runtime.backends.cuda.device import status

        print(status()[1])
        for n, r in cases(a.gpu_size, a.gpu_size // 10):
            rows += gpu_rows(n, r, a.repeat)
    for r in rows:
        print(f"{r['case']:18s} {str(tuple(r['shape'])):16s} {r['where']:30s} {r['pattern']:5s} "
              f"plain {r['plain_s'] * 1e3:9.2f} ms  checked {r['checked_s'] * 1e3:9.2f} ms  "
              f"x{r['ratio']:.3f}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
