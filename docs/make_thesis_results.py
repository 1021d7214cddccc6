"""Run ``depgraph report`` on the thesis's four case studies and collect the verdicts.

The thesis's central finding is that building the dependency graph explicitly costs more
than it saves, while the fill patterns need no graph.  This script measures it on
LCS, binomial coefficients, 0/1 knapsack and matrix chain (``examples/*.py``, families
taking one size) and writes one report per case plus an index:

    OUT/lcs/report.md, report.json, *.png
    OUT/binomial/...
    OUT/knapsack/...
    OUT/matrix_chain/...
    OUT/README.md          the four verdicts, the machine, the settings

Usage::

    python docs/make_thesis_results.py OUT [--quick] [--cases lcs,binomial,...]
        [--lcs 256,1024,...] [--binomial ...] [--knapsack ...] [--matrix-chain ...]
        [--repeat 5] [--backend all] [--max-trace-cells N]

The default sizes suit a GPU machine (lcs and binomial up to 16384, an ``(n+1)^2``
table).  Limits, each stated in the reports rather than hidden:

- the stage fill needs the graph, and the graph needs the Python trace (about half a
  million cells a second and ~200 bytes a cell), so trace-based measurements (overhead,
  stage fills) stop at ``--max-trace-cells`` (default 2100^2, just over 2048^2 cells);
  larger sizes still get the sequential and pattern fills;
- matrix chain reads O(n) cells per cell: its trace stops at n = 512 (n^3/6 reads) and
  the whole case at n = 2048 (the one-core sequential fill is O(n^3));
- the python backend (the reference semantics) fills small tables only.

``--quick`` runs small sizes in a minute or two on a laptop (no GPU needed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from depgraph import Family, report  # noqa: E402
from depgraph.cli import parse_sizes  # noqa: E402
from depgraph.errors import DepgraphError  # noqa: E402
from depgraph.frontend.loader import definitions, load_module  # noqa: E402
from depgraph.views.verdict import compute_verdict  # noqa: E402

#: Trace cap (cells) for the stage fill and the graph's overhead: just over 2048^2.
TRACE_CELLS = 2100 * 2100

#: name: file, default sizes, --quick sizes, largest size run, trace cap (cells),
#: python backend cap (cells), why the caps.
CASES: dict[str, dict[str, Any]] = {
    "lcs": {
        "file": "examples/lcs.py",
        "sizes": [256, 512, 1024, 2048, 4096, 8192, 16384],
        "quick": [16, 32, 64, 128],
        "max_size": None,
        "trace_cells": TRACE_CELLS,
        "python_cells": 1 << 16,
        "why": "an (n+1) x (n+1) table; 3 reads a cell",
    },
    "binomial": {
        "file": "examples/binomial.py",
        "sizes": [256, 512, 1024, 2048, 4096, 8192, 16384],
        "quick": [16, 32, 64, 128],
        "max_size": None,
        "trace_cells": TRACE_CELLS,
        "python_cells": 1 << 16,
        "why": "an (n+1) x (n+1) float64 table; 2 reads a cell below the diagonal",
    },
    "knapsack": {
        "file": "examples/knapsack.py",
        "sizes": [64, 128, 256, 512, 1024, 2048, 4096],
        "quick": [4, 8, 16],
        "max_size": None,
        "trace_cells": TRACE_CELLS,
        "python_cells": 1 << 16,
        "why": "n items, capacity 10n: an (n+1) x (10n+1) table; 2 reads a cell",
    },
    "matrix_chain": {
        "file": "examples/matrix_chain.py",
        "sizes": [64, 128, 256, 512, 1024, 2048],
        "quick": [8, 16, 32],
        "max_size": 2048,
        "trace_cells": 512 * 512,
        "python_cells": 128 * 128,
        "why": ("an n x n table whose cell (i, j) reads 2(j - i) cells: O(n^3) work, so the "
                "trace stops at n = 512 (about n^3/3 reads) and the case at n = 2048"),
    },
}


def _family(path: Path) -> Family:
    found = [v for v in definitions(load_module(path)).values() if isinstance(v, Family)]
    if len(found) != 1:
        raise SystemExit(f"{path}: expected one @family, found {len(found)}")
    return found[0]


def run_case(name: str, sizes: list[int], out: Path, repeat: int, backend: str,
             trace_cells: int | None, quick: bool) -> dict[str, Any]:
    case = CASES[name]
    notes = [f"{name}: {case['why']}."]
    cap = case["max_size"]
    if cap is not None and any(s > cap for s in sizes):
        dropped = [s for s in sizes if s > cap]
        sizes = [s for s in sizes if s <= cap]
        which = (f"size {dropped[0]} was" if len(dropped) == 1
                 else f"sizes {', '.join(map(str, dropped))} were")
        notes.append(f"{which} not run: {name} is capped at n = {cap} ({case['why']}).")
    tcap = case["trace_cells"] if trace_cells is None else min(trace_cells, case["trace_cells"])
    notes.append(f"the graph (trace, CSR, Algorithm 1) and the stage fills are measured up to "
                 f"{tcap:,} cells; larger sizes get the sequential and pattern fills only.")
    if not sizes:
        return {"case": name, "skipped": "no size within the cap", "notes": notes}
    fam = _family(ROOT / case["file"])
    t0 = time.perf_counter()
    print(f"== {name}: sizes {', '.join(map(str, sizes))}", flush=True)
    rep = report(fam, sizes, backend, out / name, repeat=repeat,
                 python_max_cells=case["python_cells"], max_trace_cells=tcap,
                 max_trace_s=60.0 if quick else 900.0, source=case["file"], notes=notes)
    wall = time.perf_counter() - t0
    print(f"   {rep.sentence}  [{wall:.0f} s]", flush=True)
    # the verdict is recomputed from the JSON just written, as a reader would
    data = json.loads((out / name / "report.json").read_text())
    assert compute_verdict(data["name"], data["rows"])["sentence"] == rep.sentence
    return {"case": name, "sentence": rep.sentence, "rows": len(rep.rows), "wall_s": wall,
            "machine": rep.machine, "primary": rep.primary, "notes": notes,
            "skipped": [r["skipped"] for r in rep.rows if r.get("skipped")],
            "no_graph": [f"{r['label']}: {r['overhead']['skipped']}" for r in rep.rows
                         if r["overhead"].get("skipped")]}


def write_index(out: Path, results: list[dict[str, Any]], args: argparse.Namespace) -> Path:
    machine = next((r["machine"] for r in results if "machine" in r), None)
    lines = ["# The thesis's case studies: what the graph costs", "",
             "Made by `python docs/make_thesis_results.py "
             f"{' '.join(sys.argv[1:])}`.", ""]
    if machine:
        gpu = machine["gpu"] or f"none — {machine['gpu_why_none']}"
        lines += [f"Machine: {machine['cpu']}, {machine['cores']} cores; GPU: {gpu}; "
                  f"Python {machine['python']}, NumPy {machine['numpy']}, numba "
                  f"{machine['numba']}, numba-cuda {machine['numba_cuda'] or 'not installed'}; "
                  f"{machine['date']}. Medians of {args.repeat} runs.", ""]
    lines += ["| case | verdict | report |", "|---|---|---|"]
    for r in results:
        verdict = r.get("sentence") or f"not run: {r.get('skipped')}"
        lines.append(f"| {r['case']} | {verdict} | [{r['case']}/report.md]({r['case']}/report.md) |")
    lines += [""]
    for r in results:
        extra = list(r.get("notes", [])) + [f"skipped: {s}" for s in r.get("skipped") or []
                                             if isinstance(s, str)]
        extra += [f"graph not measured at {s}" for s in r.get("no_graph", [])]
        if extra:
            lines += [f"**{r['case']}**", ""] + [f"- {e}" for e in extra] + [""]
    path = out / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="directory for the four reports and README.md")
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 runs each")
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of " + ", ".join(CASES))
    for name in CASES:
        ap.add_argument(f"--{name.replace('_', '-')}", dest=name, metavar="SIZES",
                        help=f"sizes for {name} (default {','.join(map(str, CASES[name]['sizes']))})")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs (default 5; 3 with --quick)")
    ap.add_argument("--backend", default="all", help="all, auto or a comma list of python,cpu,cuda")
    ap.add_argument("--max-trace-cells", type=int, default=None,
                    help=f"trace cap in cells (default {TRACE_CELLS:,}; matrix chain 512^2)")
    args = ap.parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 5)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    results = []
    for name in cases:
        given = getattr(args, name)
        try:
            sizes = parse_sizes(given) if given else CASES[name]["quick" if args.quick else "sizes"]
            results.append(run_case(name, list(sizes or []), out, args.repeat, args.backend,
                                    args.max_trace_cells, args.quick))
        except DepgraphError as exc:
            print(f"   {name}: {exc}", file=sys.stderr, flush=True)
            results.append({"case": name, "skipped": str(exc), "notes": []})
    index = write_index(out, results, args)
    print(f"wrote {index}")
    return 0 if all(r.get("sentence") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
