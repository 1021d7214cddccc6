"""The solution walk's time per path cell, Python step against the compiled walk, side by
side in interleaved rounds (docs/benchmarks.md, "compiled solution walk"):

    PYTHONPATH=. python benchmarks/bench_compiled_walk.py [rounds]

LCS 4000 and 20000 through the score's checkpoints (``score_solution(rec, "cpu")``,
``recovery.walk_s``), and LCS 4000 over the whole table (``solution`` of a filled table,
as ``fill(rec, solution=True)`` walks it); each after a warm-up run that compiles."""

import statistics
import sys
import time

import runtime.recover as recover
from depgraph import fill
from depgraph.frontend.loader import load
from depgraph.frontend.provenance import solution
from runtime.backends.compiled_walk import compiled_walk


def _score(rec, compiled):
    keep = recover.compiled_walk
    if not compiled:
        recover.compiled_walk = lambda rec: None
    try:
        r = recover.score_solution(rec, backend="cpu")
    finally:
        recover.compiled_walk = keep
    return r.recovery.walk_s, len(r.recovery.solution.cells)


def _whole(rec, table, compiled):
    t0 = time.perf_counter()
    s = solution(rec, table, walker=compiled_walk(rec) if compiled else None)
    return time.perf_counter() - t0, len(s.cells)


def main(rounds: int) -> None:
    cases = []
    for size in (4000, 20000):
        rec = load("examples/lcs.py", size=size)
        cases.append((f"score LCS {size}", lambda c, rec=rec: _score(rec, c)))
    rec = load("examples/lcs.py", size=4000)
    table = fill(rec, backend="cpu").table
    cases.append(("whole table LCS 4000", lambda c: _whole(rec, table, c)))
    for name, run in cases:
        run(True), run(False)  # warm-up: compile
        times = {True: [], False: []}
        for _ in range(rounds):
            for compiled in (False, True):
                s, cells = run(compiled)
                times[compiled].append(s / cells * 1e6)
        py, co = statistics.median(times[False]), statistics.median(times[True])
        print(f"{name}: {cells} path cells; us per cell, median of {rounds}: python {py:.2f} "
              f"(range {min(times[False]):.2f}-{max(times[False]):.2f}), compiled {co:.3f} "
              f"(range {min(times[True]):.3f}-{max(times[True]):.3f}); {py / co:.0f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
