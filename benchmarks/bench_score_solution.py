"""A score's solution in linear-ish memory on the GPU (issue 43, item 4): ``depgraph run
--score --solution --backend cuda`` (the tiles' edges kept, the path's tiles refilled,
:mod:`runtime.backends.cuda.tile_checkpoints`) against ``--score`` alone, each a command
of its own, side by side for each size, after a warm-up run of each that fills the kernel
cache.  Prints the wall time of each command, its phases, the memory the recovery kept
and the path's length; both scores are compared.

    python benchmarks/bench_score_solution.py [--example examples/lcs.py]
        [--sizes 4096,32768,100000,1000000] [--block-rows N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command(example: str, size: int, *extra: str) -> tuple[dict, float]:
    """``depgraph run EXAMPLE --size SIZE --score --backend cuda --json EXTRA``: its JSON
    and its wall time in seconds."""
    cmd = [sys.executable, "-m", "depgraph", "run", example, "--size", str(size), "--score",
           "--backend", "cuda", "--json", *extra]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--example", default="examples/lcs.py")
    ap.add_argument("--sizes", default="4096,32768,100000,1000000")
    ap.add_argument("--block-rows", default=None)
    args = ap.parse_args()
    tiles = ("--block-rows", args.block_rows) if args.block_rows else ()
    sizes = [int(s) for s in args.sizes.split(",")]
    command(args.example, sizes[0])  # the kernels into the cache
    command(args.example, sizes[0], "--solution", *tiles)
    for size in sizes:
        score, score_wall = command(args.example, size)
        found, found_wall = command(args.example, size, "--solution", *tiles)
        assert found["value"] == score["value"], (found["value"], score["value"])
        rec, phases = found["recovery"], found["phases"]
        print(f"{args.example} --size {size}: score {score['value']}")
        print(f"  --score             wall {score_wall:8.3f} s, compute "
              f"{score['compute_s']:.3f} s, {score['kept_cells']:,} cells kept")
        print(f"  --score --solution  wall {found_wall:8.3f} s ({found_wall / score_wall:.1f}x), "
              f"forward {found['compute_s']:.3f} s, refill {rec['refill_s']:.3f} s "
              f"({rec['refills']:,} tiles of {rec['block_rows']}, {rec['refilled_cells']:,} "
              f"cells), walk {rec['walk_s']:.3f} s, compile {found['compile_s']:.2f} s")
        print(f"  memory: checkpoints {rec['checkpoint_bytes'] / 1e9:.3f} GB, tiles being "
              f"filled {rec['block_bytes'] / 1e9:.3f} GB; path {found['solution_summary']}")
        print(f"  phases: {json.dumps({k: round(v, 3) for k, v in phases.items() if v is not None})}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
