"""The ``depgraph`` command line: parse, call the library, print.

Exit status: 0 success; 1 the recurrence is invalid or failed (one paragraph on stderr,
no traceback); 2 usage errors (argparse's own, and ``UsageError``); 141 the output's reader
left early (as a shell reports a pipe closed under a program).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from depgraph.errors import DepgraphError, UsageError

__all__ = ["main", "build_parser"]


def _cell(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in text.replace("(", "").replace(")", "").split(",") if p.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a cell like 3,4 — got {text!r}") from None


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a Python file defining a @recurrence or @family")
    p.add_argument("--name", help="which recurrence of the file (by function name)")
    p.add_argument("--size", type=int, help="instantiate a family at this size")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="depgraph",
        description="Dependency graphs, minimal stages, fill patterns and parallel fills "
        "for dynamic-programming recurrences.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("analyze", help="trace the recurrence; DAG, stages, regions, patterns")
    _common(p)
    p.add_argument("--target", type=_cell, metavar="CELL",
                   help="keep only the solution-generated graph of this cell, e.g. 7,6")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_analyze)

    p = sub.add_parser("run", help="fill the table on the GPU or all CPU cores")
    _common(p)
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda", "python"])
    p.add_argument("--schedule", default="auto",
                   choices=["auto", "pattern", "tiled", "stages", "sequential", "ready"],
                   help="tiled: diagonal patterns by tiles (cuda only); ready: Algorithm 3, "
                   "the GPU ready-check fill (cuda only)")
    p.add_argument("-o", "--output", metavar="OUT.npy", help="save the table (NumPy .npy)")
    p.add_argument("--verify", action="store_true", help="compare with the sequential reference")
    p.add_argument("--score", action="store_true",
                   help="only the last cell's value, keeping the few rows, columns or "
                   "diagonals still to be read: O(n) memory, for tables too large to hold; "
                   "needs reads at constant offsets that a diagonal pattern allows, or a "
                   "constant number of rows (columns) back; -o saves the last row (column)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run)

    p = sub.add_parser(
        "render", help="draw the DAG, stages, regions or pattern view",
        description="Draw one view of a recurrence to a file; the suffix picks the format. "
        "dag: one node per cell at its grid position, coloured by stage, one edge per "
        "direct dependency (.dot always; .svg/.png/.pdf need Graphviz's dot). stages: "
        "heat map of every cell's stage with a critical path (any size). regions: where "
        "the reads fall and which of the eight patterns allow them (2-D tables). pattern: "
        "the selected pattern's fill order (or the stage order when none fits).",
    )
    _common(p)
    p.add_argument("--view", required=True, metavar="VIEW",
                   help="dag, stages, regions or pattern")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file; format from the suffix: .dot, .svg, .png, .pdf "
                   "(.dot for the dag view only)")
    p.add_argument("--max-cells", type=int, default=400, metavar="N",
                   help="largest table the dag view draws (default 400 cells)")
    p.add_argument("--slice", default=None, metavar="SPEC",
                   help="2-D slice of a k-D table for the stages and pattern views: one "
                   "entry per axis, ':' for the two axes shown, e.g. ':,:,3' or '2,:,:'")
    p.set_defaults(handler=_render)

    p = sub.add_parser(
        "report", help="measure what the graph costs against pattern and stage fills",
        description="Measure, per size, tracing + graph build + Algorithm 1 against the "
        "sequential, pattern and stage fills on each backend; write DIR/report.md, "
        "DIR/report.json and PNG plots, and print whether the graph pays for itself.",
    )
    p.add_argument("file", help="a Python file defining a @recurrence or @family")
    p.add_argument("--name", help="which recurrence of the file (by function name)")
    p.add_argument("--sizes", metavar="A,B,C",
                   help="sizes of a family, comma-separated (not for a fixed recurrence)")
    p.add_argument("--backend", default="all", metavar="LIST",
                   help="all (default: python for small sizes, cpu, cuda when a GPU is "
                   "usable), auto, or a comma list of python,cpu,cuda")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="directory for report.md, report.json and the plots")
    p.add_argument("--repeat", type=int, default=5, metavar="N",
                   help="timed runs per measurement (default 5; a run over 5 s once)")
    p.add_argument("--python-max-cells", type=int, default=None, metavar="N",
                   help="largest table the python backend fills (default 65,536 cells)")
    p.add_argument("--max-trace-cells", type=int, default=None, metavar="N",
                   help="largest table traced for the graph; larger sizes get pattern and "
                   "sequential fills only (default: as memory allows)")
    p.set_defaults(handler=_report)
    return parser


def _load(args: argparse.Namespace) -> Any:
    from depgraph.loader import load

    return load(args.file, name=args.name, size=args.size)


def _analyze(args: argparse.Namespace) -> int:
    from depgraph.analysis import analyze
    from depgraph.progress import progress

    rec = _load(args)
    update = progress("tracing cells", rec.cells, enabled=None if not args.json else False)
    result = analyze(rec, target=args.target, progress=update)
    data = result.to_json()
    if args.json:
        print(json.dumps(data))
    else:
        print(format_analysis(data))
    return 0


def _run(args: argparse.Namespace) -> int:
    import numpy as np

    from depgraph.progress import progress
    from runtime.fill import fill

    rec = _load(args)
    if args.score:
        return _run_score(args, rec)
    _npy_output(args.output, "the table")
    update = progress("tracing cells", rec.cells, enabled=None if not args.json else False)
    res = fill(rec, backend=args.backend, schedule=args.schedule, verify=args.verify,
               progress=update)
    if args.output:
        np.save(args.output, res.table)
    data = {"name": rec.name, "dtype": str(rec.dtype), **res.to_json(rec.shape),
            "output": args.output}
    if args.json:
        print(json.dumps(data))
    else:
        print(format_run(data))
    return 0


def _npy_output(output: str | None, what: str) -> None:
    """``UsageError`` unless ``-o`` (when given) names a NumPy ``.npy`` file."""
    if output and not output.endswith(".npy"):
        raise UsageError(f"-o {output!r}: {what} is saved as NumPy .npy; name it OUT.npy")


def _run_score(args: argparse.Namespace, rec: Any) -> int:
    import numpy as np

    from depgraph.errors import TooLargeError
    from depgraph.progress import progress
    from depgraph.trace import available_memory, format_bytes
    from runtime.plan import make_plan
    from runtime.score import score, score_plan, verify_score

    if args.schedule != "auto":
        raise UsageError(f"--score picks its own walk; leave out --schedule {args.schedule}")
    _npy_output(args.output, "the last line")
    plan = score_plan(rec)
    if args.output and plan.gpu:
        raise UsageError("with --score, -o saves the last row or column of a walk by rows or "
                         "columns; this one walks anti-diagonals and keeps no whole line")
    update = progress("filling cells", rec.cells, enabled=None if not args.json else False)
    res = score(rec, backend=args.backend, progress=update, plan=plan)
    if args.output:  # a walk by rows or columns (checked above): the last line
        np.save(args.output, res.line)
    verified = None
    if args.verify:
        table_bytes = rec.cells * rec.dtype.itemsize
        if table_bytes > available_memory() // 2:
            raise TooLargeError(f"--verify needs the whole {rec.shape} table for the reference "
                                f"({format_bytes(table_bytes)}), more than half the free memory")
        verified = verify_score(res, make_plan(rec).reference)
    data = {"name": rec.name, "dtype": str(rec.dtype), "shape": list(rec.shape),
            "cells": rec.cells, **res.to_json(),
            "cells_per_s": rec.cells / res.compute_s if res.compute_s > 0 else None,
            "verified": verified, "output": args.output,
            "line_preview": None if res.line is None else _preview(res.line)}
    if args.json:
        print(json.dumps(data))
    else:
        print(format_score(data))
    return 0


def _head(d: dict[str, Any], what: str) -> list[str]:
    """The first lines of ``depgraph run``'s text: the recurrence, the backend, ``what``
    was done, and the fill's time."""
    rate = f"{d['cells_per_s']:,.0f} cells/s" if d["cells_per_s"] else "n/a"
    return [
        f"recurrence   {d['name']}  shape {tuple(d['shape'])}  dtype {d['dtype']}  ({d['cells']:,} cells)",
        f"backend      {d['backend']}",
        what,
        f"fill         {d['compute_s']:.4f} s compute ({rate}); compiling {d['compile_s']:.2f} s apart",
    ]


def _why(d: dict[str, Any]) -> list[str]:
    return [f"why          {note}" for note in d["notes"]] + (
        [f"verify       {d['verified']}"] if d["verified"] else [])


def format_score(d: dict[str, Any]) -> str:
    """The readable text of ``depgraph run --score``."""
    lines = _head(d, f"score        M{tuple(d['cell'])} = {d['value']}  "
                     f"(the last cell of {d['pattern']})")
    if d["line"] is not None:
        lines.append(f"{'last ' + d['line_kind']:<12} {d['line']} ({d['line_cells']:,} cells): "
                     f"{d['line_preview']}")
    lines.append(f"memory       {d['kept_cells']:,} cells kept at once, of {d['cells']:,}")
    if d["backend"] == "cuda":
        lines.append(f"checks       edge cells on the CPU {d['check_s']:.4f} s; "
                     f"host->device {d['h2d_s']:.4f} s")
    lines += _why(d)
    if d["output"]:
        lines.append(f"saved        {d['output']}")
    return "\n".join(lines)


def _preview(line: Any, ends: int = 4) -> str:
    """The first and last values of a line, ``a, b, ..., y, z``."""
    values = [str(v) for v in line.tolist()]
    if len(values) > 2 * ends:
        values = values[:ends] + ["..."] + values[-ends:]
    return ", ".join(values)


def format_run(d: dict[str, Any]) -> str:
    """The readable text of ``depgraph run``."""
    pattern = f" {d['pattern']}" if d["pattern"] else ""
    lines = _head(d, f"schedule     {d['schedule']}{pattern}: {d['steps']:,} steps")
    if d["backend"] == "cuda":
        lines.append(f"transfers    host->device {d['h2d_s']:.4f} s, device->host {d['d2h_s']:.4f} s "
                     "(apart from compute)")
    lines.append(f"planning     {d['plan_s']:.4f} s (reads checked at this size)")
    lines += _why(d)
    if d["output"]:
        lines.append(f"saved        {d['output']}")
    return "\n".join(lines)


def _report(args: argparse.Namespace) -> int:
    from depgraph.report import report_command

    return report_command(args)


def _render(args: argparse.Namespace) -> int:
    from depgraph.render import render_command

    return render_command(args)


def format_analysis(d: dict[str, Any]) -> str:
    """The readable text of ``depgraph analyze``."""
    t = d["timings"]
    lines = [
        f"recurrence   {d['name']}  shape {tuple(d['shape'])}  dtype {d['dtype']}",
    ]
    if d["target"] is not None:
        lines.append(f"target       {tuple(d['target'])}: solution-generated graph only "
                     f"({d['cells']:,} of {d['table_cells']:,} cells)")
    lines += [
        f"cells        {d['cells']:,}",
        f"edges        {d['edges']:,} direct dependencies",
        f"base cases   {d['base_cases']:,}",
        f"stages       {d['stages']:,} (minimal, Algorithm 1); widest stage {d['max_stage_width']:,} cells",
    ]
    if d["regions"] is None:
        lines.append(f"regions      n/a ({len(d['shape'])}-D table: patterns are for 2-D tables; "
                     "the stage schedule applies)")
    else:
        counts = d["region_counts"] or {}
        regs = ", ".join(f"{r} ({counts[r]:,})" for r in d["regions"]) or "none (no reads)"
        lines.append(f"regions      {regs}")
        lines.append(f"patterns     {', '.join(d['patterns']) or 'none match'}")
        if d["pattern"]:
            lines.append(f"selected     {d['pattern']}: {d['pattern_stages']:,} steps "
                         f"(minimal stages {d['stages']:,})")
        else:
            lines.append("selected     none: no pattern fits; fill by stages")
    from depgraph.trace import format_bytes

    rate = d["trace_cells_per_s"]
    lines += [
        f"time         trace {t['trace_s']:.3f} s ({rate:,.0f} cells/s), graph {t['graph_s']:.3f} s, "
        f"stages {t['stages_s']:.3f} s, classify {t['classify_s']:.3f} s",
        f"memory       graph {format_bytes(d['graph_bytes'])} "
        f"({d['graph_bytes'] / max(d['edges'], 1):.1f} B/edge incl. pointers), "
        f"table {format_bytes(d['table_bytes'])}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except DepgraphError as err:
        kind = "usage error" if isinstance(err, UsageError) else "error"
        print(f"depgraph: {kind}: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("depgraph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the output's reader left (`depgraph run ... | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
