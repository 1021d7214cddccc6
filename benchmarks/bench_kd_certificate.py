"""What a k-D certificate saves (issue 42): the cpu fill of Floyd-Warshall and of the LCS
of three strings as another tree fills them (a checked fill there: every read and value
checked where the fill runs) against this tree's (a certificate plan: none checked).

Each tree fills in a worker process of its own (its own code, its own numba cache), which
loads the recurrence, fills it once to compile (and prove or read the certificate), then
fills it once per line it is sent; the workers take turns, so both see the same load on a
shared machine.  Times are ``FillResult.compute_s`` (the fill alone) and the whole
``fill()`` call, medians of ``--repeat`` turns; each row says which plan each tree took.

    python benchmarks/bench_kd_certificate.py --baseline /work/main [--fw 400] [--lcs3 300]
        [--schedules hyperplane,sequential] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: The worker: ``argv`` is the tree, the example file, its size and the schedule.
WORKER = """
import json, sys, time
tree, path, size, schedule = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path[:0] = [tree, tree + "/examples"]
from depgraph import fill, load

rec = load(path, size=size)

def once():
    t = time.perf_counter()
    r = fill(rec, backend="cpu", schedule=schedule)
    notes = " ".join(r.notes)
    plan = ("certificate" if "reads proven for every shape" in notes else
            "checked fill" if "checks each read" in notes else "other")
    return {"compute_s": r.compute_s, "call_s": time.perf_counter() - t, "plan": plan,
            "schedule": r.schedule}

print(json.dumps(once()), flush=True)  # the warm-up: compiles, proves
for _ in sys.stdin:
    print(json.dumps(once()), flush=True)
"""


def _worker(tree: Path, example: str, size: int, schedule: str) -> subprocess.Popen:
    """A worker filling ``example`` at ``size`` with ``tree``'s code, warmed up."""
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(tree),
                             str(tree / "examples" / example), str(size), schedule],
                            cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    json.loads(proc.stdout.readline())
    return proc


def _turn(proc: subprocess.Popen) -> dict[str, Any]:
    """One timed fill of a worker."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def compare(baseline: Path, example: str, size: int, schedule: str,
            repeat: int) -> dict[str, Any]:
    """The medians of ``repeat`` turns of each tree's fill, side by side."""
    trees = {"baseline": baseline, "this tree": ROOT}
    workers = {name: _worker(tree, example, size, schedule) for name, tree in trees.items()}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    try:
        for _ in range(repeat):
            for name, proc in workers.items():
                runs[name].append(_turn(proc))
    finally:
        for proc in workers.values():
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait()
    row: dict[str, Any] = {"example": example, "size": size, "schedule": schedule}
    for name, got in runs.items():
        row[name] = {"plan": got[-1]["plan"], "schedule": got[-1]["schedule"],
                     "compute_s": statistics.median(r["compute_s"] for r in got),
                     "call_s": statistics.median(r["call_s"] for r in got)}
    row["ratio"] = row["baseline"]["compute_s"] / row["this tree"]["compute_s"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True,
                        help="the tree to compare with (its checked fill)")
    parser.add_argument("--fw", type=int, default=400, help="Floyd-Warshall's vertices")
    parser.add_argument("--lcs3", type=int, default=300, help="the three strings' length")
    parser.add_argument("--schedules", default="hyperplane,sequential")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for example, size in (("floyd_warshall.py", args.fw), ("lcs3.py", args.lcs3)):
        for schedule in args.schedules.split(","):
            row = compare(args.baseline.resolve(), example, size, schedule, args.repeat)
            base, ours = row["baseline"], row["this tree"]
            print(f"{example[:-3]:>15} n={size} {schedule:>10}: baseline ({base['plan']}) "
                  f"{base['compute_s']:.3f} s, this tree ({ours['plan']}) "
                  f"{ours['compute_s']:.3f} s: {row['ratio']:.2f}x "
                  f"(whole calls {base['call_s']:.3f} s, {ours['call_s']:.3f} s)", flush=True)


if __name__ == "__main__":
    main()
