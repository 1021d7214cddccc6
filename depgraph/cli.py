"""The ``depgraph`` command line: parse, call the library's top-level calls, print.

Every flag's wording lives here: the library names a setting in an error through
:func:`depgraph.errors.setting`, and :func:`flag` spells it as this CLI's flag.  Progress
lines go to standard error on a terminal, never with ``--json``.  Output paths are checked
before any long work, and files are written whole or not at all.

Exit status: 0 success; 1 the recurrence is invalid or failed (one paragraph on stderr,
no traceback); 2 usage errors (argparse's own, and ``UsageError``); 141 the output's reader
left early (as a shell reports a pipe closed under a program).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import depgraph
from depgraph import Family, Progress, Recurrence, analyze, certified_analysis, load, pick
from depgraph.errors import DepgraphError, RecurrenceError, TooLargeError, UsageError
from depgraph.model import check_cell
from depgraph.views.files import atomic_write, check_folder, check_writable
from depgraph.views.progress import progress
from depgraph.views.render import check_request, check_suffix, check_view, summary
from depgraph.views.report_data import parse_backends
from depgraph.views.text import format_analysis, format_run, format_score, preview
from runtime.backends.cuda.device import open_early

__all__ = ["main", "build_parser", "flag", "parse_sizes", "error_json"]


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
                   help="keep only the solution-generated graph of this cell, e.g. 7,6 "
                   "(default: the whole table; the cell the recurrence names as its answer "
                   "is printed as answer)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_analyze)

    p = sub.add_parser("run", help="fill the table on the GPU or all CPU cores")
    _common(p)
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda", "python"])
    p.add_argument("--schedule", default="auto",
                   choices=["auto", "pattern", "hyperplane", "tiled", "stages", "sequential",
                            "ready"],
                   help="hyperplane: one parallel step per hyperplane pi . x = t, any "
                   "dimension (a pattern's pi where one fits); tiled: diagonal patterns by "
                   "tiles (cuda, cpu); ready: Algorithm 3, the GPU ready-check fill (cuda "
                   "only)")
    p.add_argument("-o", "--output", metavar="OUT.npy", help="save the table (NumPy .npy)")
    p.add_argument("--verify", action="store_true", help="compare with the sequential reference")
    p.add_argument("--solution", action="store_true",
                   help="recover the cells whose reads decided the target's value (the "
                   "alignment's path, the knapsack's items, the chain's splits); with "
                   "--score, from checkpoints of rows, in linear-ish memory (CPU)")
    p.add_argument("--target", type=_cell, metavar="CELL",
                   help="the cell --solution starts from (default: the one the recurrence "
                   "names as its answer, else the last cell filled)")
    p.add_argument("--solution-out", metavar="FILE.json",
                   help="write the solution as JSON (with --solution)")
    p.add_argument("--block-rows", type=int, default=None, metavar="N",
                   help="with --score --solution: a tile's side where every read is up "
                   "and left (default 256), else the rows of a block refilled from its "
                   "checkpoint (default: about sqrt(rows x rows read up))")
    _threads(p)
    p.add_argument("--score", action="store_true",
                   help="only one cell's value, keeping the few rows, columns or diagonals "
                   "still to be read: O(n) memory, for tables too large to hold; the cell the "
                   "recurrence names as its answer where the walk fills it (on the CPU), else "
                   "the walk's last cell; needs reads at constant offsets that a diagonal "
                   "pattern allows, or a constant number of rows (columns) back; -o saves the "
                   "last row (column) filled")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run)

    p = sub.add_parser(
        "render", help="draw the DAG, stages, regions, pattern or solution view",
        description="Draw one view of a recurrence to a file; the suffix picks the format. "
        "dag: one node per cell at its grid position, coloured by stage, one edge per "
        "direct dependency (.dot always; .svg/.png/.pdf need Graphviz's dot). stages: "
        "heat map of every cell's stage with a critical path (any size). regions: where "
        "the reads fall and which of the eight patterns allow them (2-D tables). pattern: "
        "the selected pattern's fill order (or the stage order when none fits). solution: "
        "the cells whose reads decided the target's value, in red over the DAG (tables up "
        "to --max-cells) or the stage heat map.",
    )
    _common(p)
    p.add_argument("--view", required=True, metavar="VIEW",
                   help="dag, stages, regions, pattern or solution")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file; format from the suffix: .dot, .svg, .png, .pdf "
                   "(.dot for the dag view only)")
    p.add_argument("--max-cells", type=int, default=400, metavar="N",
                   help="largest table the dag view draws, and the solution view over the "
                   "DAG (default 400 cells)")
    p.add_argument("--target", type=_cell, metavar="CELL",
                   help="the cell the solution view starts from (default: the one the "
                   "recurrence names as its answer, else the table's last cell)")
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
    _threads(p)
    p.add_argument("--repeat", type=int, default=5, metavar="N",
                   help="timed runs per measurement (default 5; a run over 5 s once)")
    p.add_argument("--python-max-cells", type=int, default=None, metavar="N",
                   help="largest table the python backend fills (default 65,536 cells)")
    p.add_argument("--max-trace-cells", type=int, default=None, metavar="N",
                   help="largest table traced for the graph; larger sizes get pattern and "
                   "sequential fills only (default: as memory allows)")
    p.set_defaults(handler=_report)
    return parser


def _progress(enabled: bool) -> Progress:
    """The progress reporter the library is given: lines on standard error while it is a
    terminal and ``enabled`` (never with ``--json``)."""
    return lambda label, total: progress(label, total, enabled=None if enabled else False)


def _output(path: str | None, suffix: str, what: str) -> Path | None:
    """``-o``'s path, checked before any work: ``UsageError`` unless it ends in ``suffix``
    and can be written."""
    if not path:
        return None
    if not path.endswith(suffix):
        raise UsageError(f"-o {path!r}: {what} is saved as {suffix}; name it OUT{suffix}")
    out = Path(path)
    check_writable(out)
    return out


def _threads(p: argparse.ArgumentParser) -> None:
    """The ``--threads`` option of the commands that fill on the CPU."""
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="CPU threads of the cpu backend (default: the cores this process "
                   "may use)")


def _save(out: Path, array: Any) -> None:
    """``array`` saved to ``out`` as NumPy ``.npy``, whole or not at all."""

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            np.save(f, array)

    atomic_write(out, write)


def _analyze(args: argparse.Namespace) -> int:
    rec = load(args.file, name=args.name, size=args.size)
    update = progress("tracing cells", rec.cells, enabled=None if not args.json else False)
    try:
        data = analyze(rec, target=args.target, progress=update).to_json()
    except TooLargeError as exc:
        proven = certified_analysis(rec, str(exc)) if args.target is None else None
        if proven is None:
            raise
        data = proven
    print(json.dumps(data) if args.json else format_analysis(data))
    return 0


def _process_age() -> float | None:
    """Seconds since this process started (Linux's ``/proc``), or ``None``."""
    try:
        with open("/proc/self/stat") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return uptime - started / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _phases(start: float | None, t0: float, load_s: float, listed: dict[str, float | None],
            fill_s: float, write_s: float, **after: float | None) -> dict[str, float | None]:
    """Where the command's time went: start-up (the interpreter and imports), loading the
    file, the fill's own phases (``listed``) and the rest of the fill (choosing the
    schedule, memory checks, allocating the table), writing, and any phases ``after``
    it; ``total_s`` is their sum."""
    phases = {"startup_s": start, "load_s": load_s, **listed,
              "fill_rest_s": max(0.0, fill_s - sum(v for v in listed.values() if v)),
              "write_s": write_s,
              **after}
    phases["total_s"] = (start or 0.0) + time.perf_counter() - t0
    return phases


#: What a command whose process ends with it (``args.ending``) leaves to the exit: its
#: result and output, which the exit frees wholesale (:func:`entry`), where freeing them
#: object by object after the output would take time no phase shows (a long solution's
#: million edges are millions of Python objects).
_LEFT_TO_EXIT: list[Any] = []


def _leave_to_exit(args: argparse.Namespace, *values: Any) -> None:
    """Keep ``values`` alive until the process exits, where it ends with the command."""
    if args.ending:
        _LEFT_TO_EXIT.extend(values)


def _print_result(data: dict[str, Any], as_json: bool, text: Callable[[dict[str, Any]], str],
                  made_s: float = 0.0) -> None:
    """Print a command's ``data``: with ``--json`` one object, whose ``output_s`` phase is
    the time to make it, ``made_s`` (making ``data`` itself, which its phases' total holds)
    and the JSON text (for a long solution's edges, seconds the phases would otherwise
    leave out), else ``text(data)``."""
    if not as_json:
        print(text(data))
        return
    t0 = time.perf_counter()
    phases = data["phases"]
    body = json.dumps({k: v for k, v in data.items() if k != "phases"}, check_circular=False)
    output_s = time.perf_counter() - t0
    phases = {**{k: v for k, v in phases.items() if k != "total_s"},
              "output_s": made_s + output_s, "total_s": phases["total_s"] + output_s}
    print(f'{body[:-1]}, "phases": {json.dumps(phases)}}}')


def _release_gpu(args: argparse.Namespace) -> dict[str, float]:
    """The ``release_s`` phase of a command whose process ends with it (``args.ending``)
    and that opened a GPU: handing the GPU back before the output
    (:func:`runtime.backends.cuda.device.release`), which the process's exit would
    otherwise do after it, untimed; nothing otherwise."""
    device = sys.modules.get("runtime.backends.cuda.device")  # imported by a GPU's use
    seconds = device.release() if args.ending and device is not None else None
    return {} if seconds is None else {"release_s": seconds}


def _solution_request(args: argparse.Namespace) -> Path | None:
    """``--solution``'s options checked before any work (``UsageError``), and the path
    ``--solution-out`` writes."""
    if (args.target is not None or args.solution_out) and not args.solution:
        raise UsageError("--target and --solution-out go with --solution")
    if args.block_rows is not None and not (args.solution and args.score):
        raise UsageError("--block-rows goes with --score --solution")
    if args.solution and args.score and args.output:
        raise UsageError("with --score --solution, -o has no last line to save; leave out -o")
    if not args.solution_out:
        return None
    if not args.solution_out.endswith(".json"):
        raise UsageError(f"--solution-out {args.solution_out!r}: name it FILE.json")
    out = Path(args.solution_out)
    check_writable(out)
    return out


def _write_solution(out: Path, found: depgraph.Solution) -> None:
    """``--solution-out``: the solution's JSON object, whole or not at all."""
    text = json.dumps(found.to_json(), check_circular=False)
    atomic_write(out, lambda tmp: Path(tmp).write_text(text))


def _run(args: argparse.Namespace) -> int:
    start, t0 = _process_age(), time.perf_counter()
    out = _output(args.output, ".npy", "the last line" if args.score else "the table")
    solution_out = _solution_request(args)
    open_early(args.backend)  # the GPU's driver starts while the file loads and the fill plans
    rec = load(args.file, name=args.name, size=args.size)
    target = None if args.target is None else \
        check_cell(args.target, rec.shape, UsageError, "--target")
    t1 = time.perf_counter()
    if args.score:
        return _run_score(args, rec, out, solution_out, (start, t0, t1 - t0))
    res = depgraph.fill(rec, backend=args.backend, schedule=args.schedule, verify=args.verify,
                        copy_back=out is not None, progress=_progress(not args.json),
                        threads=args.threads,
                        solution=(target or True) if args.solution else False)
    t2 = time.perf_counter()
    found = res.solution
    if out:
        _save(out, res.table)
    if solution_out and found:
        _write_solution(solution_out, found)
    t3 = time.perf_counter()
    released = _release_gpu(args)
    t4 = time.perf_counter()
    data = {"name": rec.name, "dtype": str(rec.dtype), **res.to_json(rec.shape),
            "answer": rec.target is not None, "output": args.output,
            **({"solution": found.to_json(), "solution_summary": found.summary()}
               if found else {})}
    if found and found.note:
        data["notes"].append(found.note)
    made_s = time.perf_counter() - t4
    data["phases"] = _phases(start, t0, t1 - t0, {
        "gpu_start_s": res.gpu_start_s if res.backend == "cuda" else None,
        "plan_s": res.plan_s, "calibrate_s": res.calibrate_s or None,
        "compile_s": res.compile_s,
        "h2d_s": res.h2d_s, "compute_s": res.compute_s, "d2h_s": res.d2h_s},
        t2 - t1 - res.solution_s,
        t3 - t2, **({"solution_s": res.solution_s} if found else {}), **released)
    _print_result(data, args.json, format_run, made_s)
    _leave_to_exit(args, res, data)
    return 0


def _run_score(args: argparse.Namespace, rec: Recurrence, out: Path | None,
               solution_out: Path | None, started: tuple[float | None, float, float]) -> int:
    """``run --score`` (with ``--solution``: recovered from checkpoints, written to
    ``solution_out`` if given); ``started``: the process's age when the command began,
    the clock then, and the seconds loading took (for the phases)."""
    if args.schedule != "auto":
        raise UsageError(f"--score picks its own walk; leave out --schedule {args.schedule}")
    t1 = time.perf_counter()
    plan = None if args.solution else depgraph.score_plan(rec)
    t2 = time.perf_counter()
    if out and plan and plan.gpu:
        raise UsageError("with --score, -o saves the last row or column of a walk by rows or "
                         "columns; this one walks anti-diagonals and keeps no whole line")
    res = depgraph.score(rec, backend=args.backend, progress=_progress(not args.json), plan=plan,
                         threads=args.threads, solution=args.solution and (args.target or True),
                         block_rows=args.block_rows)
    t3 = time.perf_counter()
    if out:  # a walk by rows or columns (checked above): the last line
        _save(out, res.line)
    if solution_out and res.recovery:
        _write_solution(solution_out, res.recovery.solution)
    t4 = time.perf_counter()
    verified = depgraph.verify_score(res, rec) if args.verify else None
    listed = {"plan_s": t2 - t1, "compile_s": res.compile_s, "h2d_s": res.h2d_s,
              "check_s": res.check_s, "compute_s": res.compute_s,
              **({"refill_s": res.recovery.refill_s, "walk_s": res.recovery.walk_s}
                 if res.recovery else {})}
    t5 = time.perf_counter()
    released = _release_gpu(args)
    t6 = time.perf_counter()
    data = {"name": rec.name, "dtype": str(rec.dtype), "shape": list(rec.shape),
            "cells": rec.cells, **res.to_json(),
            # a walk that stopped at the answer computed only its cells
            "cells_per_s": (rec.cells if res.filled is None else res.filled) / res.compute_s
            if res.compute_s > 0 else None,
            "verified": verified, "output": args.output,
            "line_preview": None if res.line is None else preview(res.line)}
    made_s = time.perf_counter() - t6
    data["phases"] = _phases(started[0], started[1], started[2], listed, t3 - t1, t4 - t3,
                             verify_s=t5 - t4 if args.verify else None, **released)
    _print_result(data, args.json, format_score, made_s)
    _leave_to_exit(args, res, data)
    return 0


def _render(args: argparse.Namespace) -> int:
    """Check the request before any tracing, trace, draw, print one line."""
    view = check_view(args.view)
    out = Path(args.output)
    check_writable(out)
    check_suffix(view, out)
    rec = load(args.file, name=args.name, size=args.size)
    check_request(view, out, rec.shape, args.max_cells, args.slice, args.target)
    a = analyze(rec, progress=progress("tracing cells", rec.cells))
    found = depgraph.solution(rec, a.table, args.target) if view == "solution" else None
    path = depgraph.render(a, view, out, max_cells=args.max_cells, slice=args.slice,
                           found=found)
    shape = "x".join(str(int(s)) for s in rec.shape)
    print(f"wrote {path}: {view} view of {rec.name} {shape}, {summary(a, view, found)}")
    return 0


def parse_sizes(text: str | None) -> list[int] | None:
    """``--sizes "8,16,32"`` -> ``[8, 16, 32]`` (sorted, duplicates dropped); ``UsageError``
    on anything but positive integers.

    Examples
    --------
    >>> parse_sizes("32, 8,16,8")
    [8, 16, 32]
    >>> parse_sizes(None) is None
    True
    """
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise UsageError(f"--sizes {text!r}: give comma-separated positive integers, e.g. 8,16,32")
    out = []
    for p in parts:
        try:
            v = int(p)
        except ValueError:
            raise UsageError(f"--sizes {text!r}: {p!r} is not an integer; "
                             "give comma-separated positive integers, e.g. 8,16,32") from None
        if v < 1:
            raise UsageError(f"--sizes {text!r}: sizes must be positive, got {v}")
        out.append(v)
    return sorted(set(out))


def _report(args: argparse.Namespace) -> int:
    """Check the options, measure, write, print the verdict."""
    sizes = parse_sizes(args.sizes)
    backends = parse_backends(args.backend or "all")
    if args.repeat < 1:
        raise UsageError(f"--repeat must be at least 1, got {args.repeat}")
    out = Path(args.output)
    check_folder(out, f"-o {args.output!r}")
    obj = pick(args.file, args.name)
    if isinstance(obj, Family) and sizes is None:
        raise UsageError(f"{obj.name!r} is a family: give its sizes with --sizes a,b,c")
    if isinstance(obj, Recurrence) and sizes is not None:
        raise UsageError(f"{obj.name!r} is a fixed recurrence of shape {obj.shape}: it has "
                         "one size; drop --sizes")
    if args.python_max_cells is not None and args.python_max_cells < 0:
        raise UsageError(f"--python-max-cells must be at least 0, got {args.python_max_cells}")
    if args.max_trace_cells is not None and args.max_trace_cells < 1:
        raise UsageError(f"--max-trace-cells must be positive, got {args.max_trace_cells}")
    limits = {} if args.python_max_cells is None else {"python_max_cells": args.python_max_cells}
    rep = depgraph.report(obj, sizes, backends, out, repeat=args.repeat,
                          max_trace_cells=args.max_trace_cells, source=str(args.file),
                          threads=args.threads, **limits)
    rows = len(rep.rows)
    print(f"wrote {out / 'report.md'}, report.json and {len(rep.files) - 2} plots: "
          f"{rows} row{'s' if rows != 1 else ''} for {rep.name}")
    for r in rep.rows:
        if r.get("skipped"):
            print(f"skipped      {r['skipped']}")
        elif r["overhead"].get("skipped"):
            print(f"no graph     {r['label']}: {r['overhead']['skipped']}")
    print(rep.sentence)
    failed = rep.failed_rows()
    if failed:
        msgs = "; ".join(f"{r['label']}: {r['error']}" for r in failed)
        raise RecurrenceError(f"the recurrence failed ({msgs}); the report in {out} records it")
    return 0


#: The flags whose spelling is not ``--`` and the setting's name with dashes.
_FLAGS = {"output": "-o"}


def flag(name: str, value: str | None) -> str:
    """A setting an error names (:func:`depgraph.errors.setting`) as this CLI's flag.

    Examples
    --------
    >>> flag("schedule", "stages"), flag("max_cells", "400"), flag("score", "True")
    ('--schedule stages', '--max-cells 400', '--score')
    """
    spelled = _FLAGS.get(name, "--" + name.replace("_", "-"))
    if value is None or value == "True":
        return spelled
    return f"{spelled} {shlex.quote(value)}"


def error_json(err: DepgraphError, message: str) -> dict[str, Any]:
    """The one object ``--json`` prints for an error: its kind (the error's class), its
    message as the CLI words it, and the cell it names, if any.

    Examples
    --------
    >>> from depgraph.errors import CellFunctionError
    >>> err = CellFunctionError((2, 1), "it returned None; every cell needs a value")
    >>> error_json(err, str(err))["error"]["cell"]
    [2, 1]
    """
    cell = getattr(err, "cell", None)
    return {"error": {"kind": type(err).__name__, "message": message,
                      "cell": None if cell is None else [int(c) for c in cell]}}


def _on_worker(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``handler(args)`` on a worker thread while this thread waits for it.

    Python delivers an interrupt to the main thread only, between bytecodes; a compiled
    fill (which releases the GIL) would otherwise keep it waiting until the fill ends.
    Waiting here, the main thread takes the interrupt at once; the worker, a daemon, is
    left behind as the process exits.
    """
    outcome: list[tuple[bool, Any]] = []

    def work() -> None:
        try:
            outcome.append((True, handler(args)))
        except BaseException as exc:  # handed to the main thread, which words it
            outcome.append((False, exc))

    worker = threading.Thread(target=work, name="depgraph-work", daemon=True)
    worker.start()
    worker.join()
    done, value = outcome[0]
    if not done:
        raise value
    return int(value)


def main(argv: Sequence[str] | None = None, ending: bool = False) -> int:
    """Run the CLI; returns the exit status.  ``ending``: the process ends with the
    command (:func:`entry`), so ``run`` hands the GPU back before its output, timed as
    a phase (:func:`_release_gpu`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.ending = ending
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return _on_worker(handler, args)
    except DepgraphError as err:
        kind = "usage error" if isinstance(err, UsageError) else "error"
        message = err.worded(flag)
        print(f"depgraph: {kind}: {message}", file=sys.stderr)
        if getattr(args, "json", False):
            print(json.dumps(error_json(err, message)))
        return err.exit_code
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second press while leaving: quiet
        print("depgraph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the output's reader left (`depgraph run ... | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def entry() -> None:
    """Console-script entry point.  It leaves as soon as the output is flushed: an
    interrupted command must not wait for its abandoned worker's fill, and tearing down
    the interpreter (the GPU's context, numba's threads) adds time nobody asked for."""
    status = main(ending=True)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the output's reader left
        pass
    os._exit(status)
