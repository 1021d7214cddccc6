"""What a fill's own read checks cost: the same pattern fill with and without them.

A fill whose reads no certificate proves checks each read (in the table, in a region the
pattern has filled) and each value where it runs (``runtime.run.fill``'s "checked fill"),
but what a proof covers all the same (the plan's ``trusted``, which the fills here take).
This times that fill against the unchecked one on the same recurrence, side by side in
interleaved rounds (plain, checked, plain, checked...; compile excluded), the median of
``--repeat`` rounds each, on the CPU (all cores, or one with ``--sequential``) and, with
``--gpu``, on the GPU (one cooperative launch, and a launch per step).  Cases
(``--cases``, by name; all by default): LCS (straight, NOSE), straight row recurrences
whose column read depends on their data (RUD: drift's clamped into the table and wrap's
by a bit mask, flip's by an exclusive or, halve's by a shift right by its data, all four
proven since; double's by a shift left wrapped round the table, which no proof follows),
the catalog's integer knapsack and transportation problem (a loop per cell, both proven
since), and the catalog's examples
whose reads or values no certificate proves.  Where no fill can check its own reads
(no pattern allows every region their constant offsets, a certificate or a sample of the
reads leave open), "checked" is the plain fill plus the compiled checked sweep that plans
it (:func:`checked_sweep`); where a certificate proves everything (a run checks nothing),
the plain fill alone.

    python benchmarks/bench_checked.py --cpu-size 3000 [--gpu --gpu-size 16384] [--repeat 5]
    python benchmarks/bench_checked.py --cases process_scheduling,nim --repeat 9
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from depgraph import load, recurrence  # noqa: E402
from depgraph.frontend.ir import cell_ir  # noqa: E402
from patterns import BY_CODE  # noqa: E402
from runtime.backends import cpu  # noqa: E402
from runtime.backends.walk import value_bounds  # noqa: E402
from runtime.schedule.plan import (  # noqa: E402
    Plan,
    certified_plan,
    checked_sweep,
    in_fill_plan,
    make_plan,
)


def drift(n: int):
    """A straight RUD recurrence whose second read's column comes from its data, clamped
    into the table (a proof covers it)."""
    d = np.random.default_rng(n).integers(-3, 4, n).astype(np.int64)

    @recurrence(shape=(n + 1, n + 1), dtype=np.int32, args=(d,))
    def drift(M, i, j, d):
        if i == 0:
            return j % 7
        k = min(max(j + d[i - 1], 0), M.shape[1] - 1)
        return max(M[i - 1, j], M[i - 1, k] + 1) % 1000

    return drift


def wrap(n: int):
    """drift with its column wrapped round a table of a power of two columns (a bit
    mask, which the prover bounds by the mask)."""
    d = np.random.default_rng(n).integers(-3, 4, n).astype(np.int64)
    mask = (1 << n.bit_length()) - 1

    @recurrence(shape=(n + 1, mask + 1), dtype=np.int32, args=(d,))
    def wrap(M, i, j, d):
        if i == 0:
            return j % 7
        return max(M[i - 1, j], M[i - 1, (j + d[i - 1]) & mask] + 1) % 1000

    return wrap


def flip(n: int):
    """drift with its column's low bits flipped (``j ^ s``, an exclusive or, inside a
    table of a power of two columns since ``s`` is below it: proven since)."""
    width = 1 << n.bit_length()
    s = np.random.default_rng(n).integers(0, 4, n).astype(np.int64)

    @recurrence(shape=(n + 1, width), dtype=np.int32, args=(s,))
    def flip(M, i, j, s):
        if i == 0:
            return j % 7
        return max(M[i - 1, j], M[i - 1, j ^ s[i - 1]] + 1) % 1000

    return flip


def halve(n: int):
    """drift with its column shifted right by its data (``j >> s``: inside the table, since
    ``0 <= s <= 63``, a proof of the data's floor and ceiling)."""
    s = np.random.default_rng(n).integers(0, 3, n).astype(np.int64)

    @recurrence(shape=(n + 1, n + 1), dtype=np.int32, args=(s,))
    def halve(M, i, j, s):
        if i == 0:
            return j % 7
        return max(M[i - 1, j], M[i - 1, j >> s[i - 1]] + 1) % 1000

    return halve


def double(n: int):
    """drift with its column shifted left by its data and wrapped round the table
    (``(j << s) % m``: no proof follows a shift left by a variable, nor can a step be split
    where the read is at the column plus an amount)."""
    s = np.random.default_rng(n).integers(0, 3, n).astype(np.int64)

    @recurrence(shape=(n + 1, n + 1), dtype=np.int32, args=(s,))
    def double(M, i, j, s):
        if i == 0:
            return j % 7
        return max(M[i - 1, j], M[i - 1, (j << s[i - 1]) % M.shape[1]] + 1) % 1000

    return double


def catalog(name: str, size: int):
    """The catalog's example ``name`` at family size ``size``."""
    return load(ROOT / f"examples/catalog/{name}.py", size=size)


#: Each case, made from the benchmark's size ``n`` (``--cpu-size``, ``--gpu-size``); the
#: catalog's tables grow with sizes of their own, derived from ``n``.
CASES = {
    "lcs": lambda n: load(ROOT / "examples/lcs.py", size=n),
    "drift": drift,
    "wrap": wrap,
    "flip": flip,
    "halve": halve,
    "double": double,
    "integer knapsack": lambda n: catalog("integer_knapsack", n // 10),
    "transportation": lambda n: catalog("transportation", n // 10),
    # a read at a + p[k], below P[k + 1]: a fact of prefix sums no certificate states (the
    # fill splits each row where a + p[k] lies in the table, cpu_split)
    "process_scheduling": lambda n: catalog("process_scheduling", n),
    # reads at S | (1 << v), a bit operation (2^V columns): a sample of reads guesses CRL
    "min_spanning_tree": lambda n: catalog("min_spanning_tree", max(2, n.bit_length() + 3)),
    "optimal_assignment": lambda n: catalog("optimal_assignment", max(1, n.bit_length() + 5)),
    # reads and int8 values (its loop returns 0 or 1) proven: nothing checked
    "nim": lambda n: catalog("nim", n * 300),
}


def interleaved(runs: dict[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """The median of ``repeat`` rounds of each run, the runs taking turns in each round
    (after one untimed round, which compiles)."""
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            times[name].append(run())
    return {name: statistics.median(t) for name, t in times.items()}


def cpu_row(name: str, rec, repeat: int, parallel: bool) -> dict:
    ir = cell_ir(rec)
    proven = certified_plan(rec, ir)
    if isinstance(proven, Plan):  # a run checks nothing: plain only
        p = BY_CODE[proven.pattern]
        M = cpu.touched_table(rec, "F" if p.storage == "columns" else "C")
        plain = interleaved({"plain": lambda: cpu.pattern_fill(
            rec, ir, M, p.index, parallel)[1].run_s}, repeat)["plain"]
        return {"case": name, "where": ("cpu" if parallel else "cpu, one thread")
                + ", certified: nothing checked", "shape": list(rec.shape), "pattern": p.code,
                "plain_s": plain, "checked_s": plain, "ratio": 1.0}
    plan = in_fill_plan(rec, ir)
    swept = isinstance(plan, str)  # no fill checks itself: a checked sweep plans it first
    if swept:
        plan = make_plan(rec, ir, certified=False)
    p = BY_CODE[plan.pattern]
    layout = "F" if p.storage == "columns" else "C"

    def one(checked: bool) -> float:
        M = cpu.touched_table(rec, layout)
        ck, timing = cpu.pattern_fill(rec, ir, M, p.index, parallel, checked=checked and not swept,
                                      trusted=plan.trusted)
        assert not ck[cpu.OOB] and not ck[cpu.MISFIT]
        return timing.run_s + (checked_sweep(rec, ir)[3] if checked and swept else 0.0)

    t = interleaved({"plain": lambda: one(False), "checked": lambda: one(True)}, repeat)
    plain, checked = t["plain"], t["checked"]
    return {"case": name, "where": ("cpu" if parallel else "cpu, one thread")
            + (", checked sweep" if swept else ""),
            "shape": list(rec.shape), "pattern": p.code,
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
    checks = Checks(ir, tuple(sorted(p.allowed)), value_bounds(rec, ir, count),
                    trusted=plan.trusted)
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

        t = interleaved({"plain": lambda: one(None), "checked": lambda: one(checks)}, repeat)
        plain, checked = t["plain"], t["checked"]
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
    ap.add_argument("--cases", default=",".join(CASES),
                    help=f"comma-separated, of: {', '.join(CASES)}")
    ap.add_argument("--sequential", action="store_true", help="the CPU fill on one thread")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    names = [c.strip() for c in a.cases.split(",")]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        ap.error(f"unknown cases {unknown}: choose among {list(CASES)}")
    rows = [cpu_row(n, CASES[n](a.cpu_size), a.repeat, not a.sequential) for n in names]
    if a.gpu:
        from runtime.backends.cuda.device import status

        print(status()[1])
        for n in names:
            rows += gpu_rows(n, CASES[n](a.gpu_size), a.repeat)
    for r in rows:
        print(f"{r['case']:18s} {str(tuple(r['shape'])):16s} {r['where']:30s} {r['pattern']:5s} "
              f"plain {r['plain_s'] * 1e3:9.2f} ms  checked {r['checked_s'] * 1e3:9.2f} ms  "
              f"x{r['ratio']:.3f}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
