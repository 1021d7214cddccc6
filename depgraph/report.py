"""``depgraph report``: what the dependency graph costs against the fills (SPEC section 7).

The thesis's central finding is that building the graph explicitly costs more than it
saves, while the eight patterns need no graph.  :func:`report` measures that on any
recurrence, one row per size of a family (or one row for a fixed recurrence):

- **structure**: cells, edges, minimal stages, the selected pattern and its step count;
- **overhead** of the graph: tracing (plain Python), building the CSR graph and
  Algorithm 1, each the median of repeated :func:`depgraph.analyze` runs; graph bytes
  against table bytes;
- **fills**: the sequential, pattern and stage schedules on every backend measured
  (``python`` only up to ``python_max_cells`` cells, ``cpu``, and ``cuda`` when
  :func:`runtime.cuda.status` reports a real GPU), each checked against the sequential
  reference once, then timed on a table whose pages are already touched, compilation
  apart, as the median of ``repeat`` runs with min-max and quartiles; cells per second;
  host-to-device and device-to-host copies apart from compute;
- a one-sentence **verdict** computed from those numbers (:func:`compute_verdict`);
- the **machine**: CPU, cores, GPU or why none, library versions, date.

:meth:`Report.write` puts ``report.json``, ``report.md`` and three PNG plots
(:mod:`depgraph.report_plots`) in a directory.  ``report_command`` is the CLI glue.

Top-level fill times (the SPEC's ``fill.sequential_s``, ``fill.pattern_s``,
``fill.stages_s``): ``pattern_s`` and ``stages_s`` are on the *primary* backend,
``fill.backend`` (cuda when a real GPU was measured, else cpu, else python);
``sequential_s`` is the one-core compiled sequential fill on the cpu backend
(``fill.sequential_backend``; python when cpu was not measured), since a GPU has no
sequential executor.  Per-backend numbers are under ``fill[backend]``.

Bad input is reported, not crashed on: a size whose table does not fit memory is skipped
with the estimate; a size whose trace does not fit (``estimate_trace_bytes`` against
``available_memory``, or a ``TooLargeError`` from the tracer, or ``max_trace_cells``) keeps
its pattern and sequential fills and states why the graph was not measured; a failing
executor shows its error in the row while the others run.

Assumptions: the cell function is deterministic; timings on a shared machine are noisy,
which the spreads show.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import depgraph.trace  # noqa: F401  (the module: ``depgraph.trace`` the name is the function)
from depgraph.api import Family, Recurrence
from depgraph.errors import (
    BackendUnavailableError,
    CompileError,
    DepgraphError,
    RecurrenceError,
    TooLargeError,
    UsageError,
)
from depgraph.trace import format_bytes

__all__ = [
    "Report",
    "report",
    "report_command",
    "compute_verdict",
    "machine_info",
    "parse_sizes",
    "parse_backends",
    "BACKEND_ORDER",
    "SCHEDULES",
    "PLOTS",
]

#: Backends in the order rows list them.
BACKEND_ORDER: tuple[str, ...] = ("python", "cpu", "cuda")
#: Schedules measured on each backend.
SCHEDULES: tuple[str, ...] = ("sequential", "pattern", "stages")
#: The PNG plots a report writes.
PLOTS: tuple[str, ...] = ("time_vs_size.png", "speedup.png", "overhead.png")
#: Default largest table the python backend fills (it runs about a million cells a second
#: at best; it is the reference semantics, not a contender).
PYTHON_MAX_CELLS = 1 << 16
#: Default number of timed runs per measurement.
REPEAT = 5
#: A run longer than this is timed once (its check run is the timed run).
LONG_RUN_S = 5.0
#: Tables a fill keeps at once (reference, checked-sweep table, the fill's own table).
TABLE_COPIES = 3


# --------------------------------------------------------------------------------------
# options


def parse_sizes(text: str | None) -> list[int] | None:
    """``"8,16,32"`` -> ``[8, 16, 32]`` (sorted, duplicates dropped); ``UsageError`` on
    anything but positive integers.

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


def parse_backends(text: str | Sequence[str] | None) -> list[str]:
    """The backends a report measures: ``all`` (python for small sizes, cpu, cuda when a
    real GPU is usable), ``auto`` (what ``depgraph run`` would use) or a comma list.

    Examples
    --------
    >>> parse_backends("cpu,python")
    ['python', 'cpu']
    >>> parse_backends("all")
    ['python', 'cpu', 'cuda']
    """
    if text is None:
        text = "all"
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text) if t.strip()]
    out: set[str] = set()
    for t in items:
        if t == "all":
            out.update(BACKEND_ORDER)
        elif t == "auto":
            from runtime.fill import resolve_backend

            out.add(resolve_backend("auto")[0])
        elif t in BACKEND_ORDER:
            out.add(t)
        else:
            raise UsageError(f"--backend {text!r}: unknown backend {t!r}; give all, auto or a "
                             f"comma list of {', '.join(BACKEND_ORDER)}")
    if not out:
        raise UsageError("--backend: give all, auto or a comma list of python, cpu, cuda")
    return [b for b in BACKEND_ORDER if b in out]


# --------------------------------------------------------------------------------------
# the machine


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cuda_state(allow_simulator: bool = False) -> tuple[bool, str]:
    """Whether the cuda backend is measured, and why (not).

    Under numba's simulator the kernels run, but as Python threads: no speed, so the
    report leaves cuda out unless ``allow_simulator`` (tests only)."""
    try:
        from runtime import cuda
    except Exception as exc:  # pragma: no cover - runtime ships with depgraph
        return False, f"the cuda backend could not be loaded ({type(exc).__name__}: {exc})"
    ok, why = cuda.status()
    if ok and "simulator" in why:
        if allow_simulator:
            return True, f"{why} (simulated: these are not GPU timings)"
        return False, f"{why}; no GPU timings"
    return ok, why


def machine_info(allow_simulator: bool = False) -> dict[str, Any]:
    """CPU model, cores, GPU (or why none), library versions, date."""
    import numba

    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        usable = os.cpu_count() or 1
    ok, why = cuda_state(allow_simulator)
    import depgraph

    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "numba_threads": numba.get_num_threads(),
        "threading_layer": _threading_layer(),
        "gpu": why if ok else None,
        "gpu_why_none": None if ok else why,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "numba_cuda": _version("numba-cuda"),
        "matplotlib": _version("matplotlib"),
        "depgraph": depgraph.__version__,
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def _threading_layer() -> str | None:
    import numba

    try:
        return str(numba.threading_layer())
    except ValueError:  # no parallel kernel has run yet
        return None


# --------------------------------------------------------------------------------------
# measuring


def _stats(times: Sequence[float]) -> dict[str, Any]:
    """Median, min, max and quartiles of some run times.

    Examples
    --------
    >>> s = _stats([3.0, 1.0, 2.0])
    >>> s["median_s"], s["min_s"], s["max_s"], s["runs"]
    (2.0, 1.0, 3.0, 3)
    """
    s = sorted(float(t) for t in times)
    if len(s) >= 2:
        q = statistics.quantiles(s, n=4, method="inclusive")
        q1, q3 = q[0], q[2]
    else:
        q1 = q3 = s[0]
    return {"median_s": statistics.median(s), "min_s": s[0], "max_s": s[-1],
            "q1_s": q1, "q3_s": q3, "runs": len(s), "times_s": s}


@dataclass
class _Run:
    """One executor run."""

    table: np.ndarray | None
    compute_s: float
    compile_s: float = 0.0
    h2d_s: float | None = None
    d2h_s: float | None = None


@dataclass
class _Ctx:
    """What the executors of one size need."""

    rec: Recurrence
    reference: np.ndarray
    pattern: str | None
    pattern_steps: int | None
    sweep: Any
    analysis: Any  # depgraph.Analysis or None
    why_no_trace: str | None
    regions: tuple[str, ...] | None
    patterns: tuple[str, ...] | None
    _plan: Any = None

    def stage_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        a = self.analysis
        return a.graph.flat_cells()[a.stages.order], a.stages.ptr

    def plan(self) -> Any:
        """A :class:`runtime.plan.Plan` for the python backend."""
        if self._plan is None:
            from runtime.plan import Plan

            self._plan = Plan(self.rec, self.regions, self.patterns, self.pattern, self.sweep,
                              self.reference, self.analysis,
                              "trace" if self.analysis is not None else "checked sweep", 0.0)
        return self._plan


def _unavailable(ctx: _Ctx, backend: str, schedule: str) -> str | None:
    """Why an executor cannot run at this size (``None``: it can)."""
    if schedule == "pattern" and ctx.pattern is None:
        if ctx.rec.ndim != 2:
            return f"no pattern: patterns are for 2-D tables and this one is {ctx.rec.ndim}-D"
        return "no pattern fits the reads"
    if schedule == "stages" and ctx.analysis is None:
        return f"needs the graph's stages, and the trace was skipped: {ctx.why_no_trace}"
    if schedule == "sequential":
        if backend == "cuda":
            return "no sequential executor on the GPU"
        if ctx.sweep is None and ctx.analysis is None:
            return f"no sequential order without the trace: {ctx.why_no_trace}"
    return None


def _run_python(ctx: _Ctx, schedule: str) -> _Run:
    from runtime.fill import fill

    r = fill(ctx.rec, backend="python", schedule=schedule, plan=ctx.plan())
    return _Run(r.table, r.compute_s, r.compile_s)


def _run_cpu(ctx: _Ctx, schedule: str) -> _Run:
    from patterns import BY_CODE
    from runtime import cpu

    rec = ctx.rec
    if schedule == "sequential":
        M = cpu.touched_table(rec)
        if ctx.sweep is not None and rec.ndim == 2:
            t = cpu.sweep_fill(rec, M, ctx.sweep, checked=False)[1]
        else:
            cells = ctx.analysis.trace.cells
            t = cpu.order_fill(rec, M, cells, np.array([0, len(cells)], dtype=np.int64),
                               parallel=False)
    elif schedule == "pattern":
        p = BY_CODE[ctx.pattern]
        M = cpu.touched_table(rec, "F" if p.storage == "columns" else "C")
        t = cpu.pattern_fill(rec, M, p.index)
    else:
        cells, ptr = ctx.stage_arrays()
        M = cpu.touched_table(rec)
        t = cpu.order_fill(rec, M, cells, ptr, parallel=True)
    return _Run(M, t.run_s, t.compile_s)


def _run_cuda(ctx: _Ctx, schedule: str) -> _Run:
    from patterns import BY_CODE
    from runtime import cuda

    rec = ctx.rec
    if schedule == "pattern":
        p = BY_CODE[ctx.pattern]
        d = cuda.pattern_fill(rec, p.index, p.steps((rec.shape[0], rec.shape[1])),
                              "F" if p.storage == "columns" else "C", copy_back=True)
    else:
        cells, ptr = ctx.stage_arrays()
        d = cuda.stage_fill(rec, cells, ptr, copy_back=True)
    return _Run(d.table, d.compute_s, d.compile_s, d.h2d_s, d.d2h_s)


#: The executors, by backend; tests may swap one for a failing stand-in.
EXECUTORS: dict[str, Callable[[_Ctx, str], _Run]] = {
    "python": _run_python,
    "cpu": _run_cpu,
    "cuda": _run_cuda,
}


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, DepgraphError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _measure_fill(ctx: _Ctx, backend: str, schedule: str, repeat: int,
                  long_run_s: float) -> dict[str, Any]:
    """Check one executor against the reference, then time it ``repeat`` times."""
    from runtime.fill import compare

    run = EXECUTORS[backend]
    cells = ctx.rec.cells
    steps = {"sequential": cells, "pattern": ctx.pattern_steps,
             "stages": None if ctx.analysis is None else ctx.analysis.stages.count}[schedule]
    try:
        first = run(ctx, schedule)
        if first.table is None:
            raise RecurrenceError("the fill returned no table to check")
        verified = compare(first.table, ctx.reference)
        first.table = None
        if first.compute_s > long_run_s:
            runs = [first]  # one long run is timed once: its check run
        else:
            runs = []
            for _ in range(repeat):
                r = run(ctx, schedule)
                r.table = None
                runs.append(r)
    except Exception as exc:  # a failing executor is reported; the others still run
        return {"error": _error_text(exc), "steps": steps}
    out = _stats([r.compute_s for r in runs])
    out.update({
        "cells_per_s": cells / out["median_s"] if out["median_s"] > 0 else None,
        "compile_s": first.compile_s,
        "steps": steps,
        "verified": verified,
        "single_run": len(runs) == 1 and repeat > 1,
    })
    if first.h2d_s is not None:
        h2d = [r.h2d_s for r in runs]
        d2h = [r.d2h_s for r in runs]
        out.update({"h2d_s": statistics.median(h2d), "d2h_s": statistics.median(d2h),
                    "h2d_min_s": min(h2d), "h2d_max_s": max(h2d),
                    "d2h_min_s": min(d2h), "d2h_max_s": max(d2h)})
        total = out["median_s"] + out["h2d_s"] + out["d2h_s"]
        out["transfer_share"] = (out["h2d_s"] + out["d2h_s"]) / total if total > 0 else None
    return out


def _trace_estimate(cells: int, history: list[tuple[int, float, float]]) -> tuple[int, float, float | None]:
    """Estimated trace bytes, reads per cell and seconds for ``cells`` cells.

    ``history`` holds ``(cells, reads_per_cell, reads_per_s)`` of sizes traced before.
    Reads per cell are extrapolated as a power of the cell count from the last two
    traced sizes (matrix chain reads O(n) cells per cell, LCS a constant), never below
    the tracer's default of 3.
    """
    rpc = 3.0
    secs = None
    if history:
        c1, r1, rate = history[-1]
        rpc = r1
        if len(history) >= 2:
            c0, r0, _ = history[-2]
            if c1 > c0 and r0 > 0 and r1 > 0:
                alpha = min(1.0, max(0.0, math.log(r1 / r0) / math.log(c1 / c0)))
                rpc = r1 * (cells / c1) ** alpha
        if rate > 0:
            secs = cells * max(rpc, 1.0) / rate
    rpc = max(rpc, 3.0)
    return _trace_module().estimate_trace_bytes(cells, rpc), rpc, secs


def _trace_module() -> Any:
    """The module ``depgraph.trace`` (``depgraph.trace`` as an attribute is the function)."""
    import sys

    return sys.modules["depgraph.trace"]


def _shape_text(shape: Sequence[int]) -> str:
    return "×".join(str(int(s)) for s in shape)


def _label(size: int | None, shape: Sequence[int]) -> str:
    return f"n={size} ({_shape_text(shape)})" if size is not None else _shape_text(shape)


def _progress(label: str, total: int | None, enabled: bool | None) -> Callable[[int], None]:
    from depgraph.progress import progress

    return progress(label, total, enabled=enabled)


def _warm_up() -> None:
    """Load Algorithm 1's compiled peel once, so no row's ``stages_s`` holds numba's import."""
    from depgraph.analysis import analyze
    from depgraph.api import recurrence

    @recurrence(shape=(2, 2), dtype=np.int64)
    def warm(M, i, j):
        return 0 if i == 0 else M[i - 1, j]

    analyze(warm)


def _measure_row(rec: Recurrence, size: int | None, backends: list[str], cuda_ok: bool,
                 cuda_why: str, *, repeat: int, python_max_cells: int,
                 max_trace_cells: int | None, max_trace_s: float | None,
                 memory_limit: int | None, long_run_s: float,
                 history: list[tuple[int, float, float]], show: bool | None) -> dict[str, Any]:
    from depgraph.analysis import analyze

    cells = rec.cells
    table_bytes = cells * rec.dtype.itemsize
    label = _label(size, rec.shape)
    row: dict[str, Any] = {
        "size": size, "label": label, "short": f"n={size}" if size is not None else label,
        "name": rec.name, "shape": list(rec.shape),
        "cells": cells, "dtype": str(rec.dtype), "table_bytes": table_bytes,
        "edges": None, "stages": None, "max_stage_width": None,
        "regions": None, "patterns": None, "pattern": None, "pattern_steps": None,
        "plan_s": None, "plan_compile_s": None, "skipped": None, "error": None, "notes": [],
        "overhead": {"trace_s": None, "graph_s": None, "stages_s": None, "classify_s": None,
                     "total_s": None, "graph_bytes": None, "table_bytes": table_bytes,
                     "runs": 0, "skipped": None},
        "fill": {"backend": None, "sequential_backend": None,
                 "sequential_s": None, "pattern_s": None, "stages_s": None},
    }
    limit = memory_limit if memory_limit is not None else _trace_module().available_memory()
    need_table = TABLE_COPIES * table_bytes
    if need_table > limit:
        row["skipped"] = (f"{label}: the table is {format_bytes(table_bytes)} and a fill keeps "
                          f"about {TABLE_COPIES} copies ({format_bytes(need_table)}); "
                          f"{format_bytes(limit)} is available, so this size was skipped")
        return row

    n_tasks = 2 + len(backends) * len(SCHEDULES)
    done = [0]

    def status(task: str, advance: int = 0) -> None:
        """Redraw ``name size: task  k/n``; the last call (k = n) ends the line."""
        done[0] = n_tasks if task == "done" else done[0] + advance
        _progress(f"{rec.name} {label}: {task:<24}", n_tasks, show)(done[0])

    status("tracing")
    # 1. the graph: trace, build, Algorithm 1 (the overhead), repeated
    analysis = None
    why_no_trace = None
    ov = row["overhead"]
    est_bytes, rpc, est_s = _trace_estimate(cells, history)
    ov["trace_estimate_bytes"] = est_bytes
    if max_trace_cells is not None and cells > max_trace_cells:
        why_no_trace = (f"{cells:,} cells is over the trace cap of {max_trace_cells:,} cells "
                        f"(tracing is plain Python; it would need about {format_bytes(est_bytes)})")
    elif est_bytes > limit:
        why_no_trace = (f"tracing {cells:,} cells needs about {format_bytes(est_bytes)} "
                        f"(~{rpc:.0f} reads a cell) and {format_bytes(limit)} is available")
    elif max_trace_s is not None and est_s is not None and est_s > max_trace_s:
        why_no_trace = (f"tracing {cells:,} cells would take about {est_s:,.0f} s at the "
                        f"rate of the last size (~{rpc:.0f} reads a cell), over the "
                        f"{max_trace_s:,.0f} s cap")
    else:
        timings: list[dict[str, float]] = []
        trace_label = f"{rec.name} {label}: {'tracing cells':<24}"
        try:
            while len(timings) < repeat:
                show_trace = show if not timings else False  # the first trace only
                analysis = None  # let the previous run's memory go first
                analysis = analyze(rec, memory_limit=limit,
                                   progress=_progress(trace_label, cells, show_trace))
                timings.append(dict(analysis.timings))
                if sum(analysis.timings.values()) > long_run_s:
                    break
        except TooLargeError as exc:
            why_no_trace = str(exc)
        except RecurrenceError as exc:  # the recurrence itself failed at this size
            row["error"] = str(exc)
            status("done")
            return row
        if analysis is not None:
            g, st, cls = analysis.graph, analysis.stages, analysis.classification
            for key in ("trace_s", "graph_s", "stages_s", "classify_s"):
                s = _stats([t[key] for t in timings])
                ov[key] = s["median_s"]
                ov[key.replace("_s", "_spread_s")] = [s["min_s"], s["max_s"]]
            ov["total_s"] = ov["trace_s"] + ov["graph_s"] + ov["stages_s"]
            ov["runs"] = len(timings)
            ov["graph_bytes"] = g.nbytes
            ov["graph_per_table"] = g.nbytes / table_bytes
            ov["bytes_per_edge"] = g.nbytes / g.n_edges if g.n_edges else None
            ov["trace_cells_per_s"] = cells / ov["trace_s"] if ov["trace_s"] > 0 else None
            reads = int(analysis.trace.reads.size)
            ov["reads"] = reads
            if ov["trace_s"] > 0:
                history.append((cells, reads / cells, reads / ov["trace_s"] if reads else 0.0))
            row.update(edges=g.n_edges, stages=st.count, max_stage_width=st.max_width,
                       regions=None if cls.regions is None else list(cls.regions),
                       patterns=None if cls.patterns is None else list(cls.patterns),
                       pattern=cls.pattern, pattern_steps=cls.pattern_stages)
    ov["skipped"] = why_no_trace
    status("checked sweep", 1)

    # 2. the reference and the pattern at this size: compiled checked sweep (2-D)
    sweep = reference = None
    regions = patterns = pattern = None
    if analysis is not None:
        cls = analysis.classification
        regions, patterns, pattern = cls.regions, cls.patterns, cls.pattern
        reference = analysis.table
        from patterns import sweep_for

        sweep = sweep_for(regions) if regions is not None else None
    if rec.ndim == 2:
        from patterns import matching, select
        from runtime.plan import checked_sweep
        from runtime.source import SourceUnavailable

        t0 = time.perf_counter()
        try:
            found: Any = checked_sweep(rec)
        except (SourceUnavailable, CompileError) as exc:
            found = str(exc)
        except RecurrenceError as exc:  # a real out-of-bounds read
            row["error"] = str(exc)
            status("done")
            return row
        row["plan_s"] = time.perf_counter() - t0
        if isinstance(found, str):
            row["notes"].append(f"no compiled checked sweep: {found}")
        else:
            s_regions, sweep, reference, sweep_s = found
            # the sweep's own run time; the rest of the elapsed time was compiling
            row["plan_compile_s"], row["plan_s"] = row["plan_s"] - sweep_s, sweep_s
            shape2 = (rec.shape[0], rec.shape[1])
            s_pattern = select(s_regions, shape2)
            if analysis is not None and s_pattern != pattern:
                row["notes"].append(f"the trace selects {pattern}, the checked sweep {s_pattern}; "
                                    "the sweep's (compiled semantics) is used")
            regions, patterns, pattern = s_regions, matching(s_regions), s_pattern
    if reference is None:  # no trace (too large) and no compiled sweep: a skip, not a failure
        why = why_no_trace or "no reference fill"
        row["skipped"] = f"{label}: nothing could be filled without the trace: {why}"
        status("done")
        return row
    row["regions"] = None if regions is None else list(regions)
    row["patterns"] = None if patterns is None else list(patterns)
    row["pattern"] = pattern
    pattern_steps = None
    if pattern is not None:
        from patterns import BY_CODE

        pattern_steps = BY_CODE[pattern].steps((rec.shape[0], rec.shape[1]))
    row["pattern_steps"] = pattern_steps
    done[0] += 1
    ctx = _Ctx(rec, reference, pattern, pattern_steps, sweep, analysis, why_no_trace,
               None if regions is None else tuple(regions),
               None if patterns is None else tuple(patterns))

    # 3. the fills
    fills = row["fill"]
    for b in backends:
        if b == "cuda" and not cuda_ok:
            fills[b] = {"unavailable": cuda_why}
            done[0] += len(SCHEDULES)
            continue
        if b == "python" and cells > python_max_cells:
            fills[b] = {"skipped": f"the python backend runs only up to {python_max_cells:,} "
                                   f"cells (this size has {cells:,})"}
            done[0] += len(SCHEDULES)
            continue
        entry: dict[str, Any] = {}
        for s in SCHEDULES:
            why = _unavailable(ctx, b, s)
            if not why:
                status(f"{b} {s} fill")
            entry[s] = {"skipped": why} if why else _measure_fill(ctx, b, s, repeat, long_run_s)
            entry[f"{s}_s"] = entry[s].get("median_s")
            done[0] += 1
        fills[b] = entry
    status("done")
    return row


def _preference(backends: list[str], cuda_ok: bool, cuda_why: str) -> list[str]:
    """Backends in the order their times become a row's top-level fill times: a real GPU,
    then all CPU cores, then plain Python, then the simulator."""
    real = cuda_ok and "simulat" not in cuda_why
    order = (["cuda"] if real else []) + ["cpu", "python"] + (["cuda"] if cuda_ok and not real else [])
    return [b for b in order if b in backends]


def _choose_primary(backends: list[str], cuda_ok: bool, cuda_why: str) -> tuple[str, str]:
    """The backend whose pattern and stage times are the rows' top-level fill times."""
    pref = _preference(backends, cuda_ok, cuda_why)
    if not pref:
        return "cpu", "cpu"
    b = pref[0]
    if b == "cuda":
        why = "a GPU was measured" if "simulat" not in cuda_why else "simulated, not GPU times"
    elif b == "cpu":
        why = "no GPU was measured" if "cuda" in backends else "the backends asked for"
    else:
        why = "the only backend measured"
    return b, why


def _fill_summary(row: dict[str, Any], pref: list[str]) -> None:
    """Top-level fill times: the first backend of ``pref`` that filled the pattern or the
    stages at this size (so a backend that failed here gives way to the next)."""
    f = row["fill"]
    primary = next((b for b in pref if isinstance(f.get(b), dict)
                    and (f[b].get("pattern_s") is not None or f[b].get("stages_s") is not None)),
                   pref[0] if pref else None)
    p = f.get(primary, {}) if primary else {}
    f["backend"] = primary
    f["pattern_s"] = p.get("pattern_s")
    f["stages_s"] = p.get("stages_s")
    seq_b = next((b for b in ("cpu", "python") if f.get(b, {}).get("sequential_s") is not None),
                 None)
    f["sequential_backend"] = seq_b
    f["sequential_s"] = f[seq_b]["sequential_s"] if seq_b else None
    if primary and pref and primary != pref[0]:
        row["notes"].append(f"top-level fill times are on {primary}: {pref[0]} filled neither "
                            "the pattern nor the stages at this size")
    if primary == "cuda":
        pat = p.get("pattern", {})
        f["h2d_s"], f["d2h_s"] = pat.get("h2d_s"), pat.get("d2h_s")


# --------------------------------------------------------------------------------------
# the verdict


def _sec(s: float | None) -> str:
    """Seconds, readably.

    Examples
    --------
    >>> _sec(0.0123), _sec(2.5), _sec(4.2e-5)
    ('12.3 ms', '2.50 s', '42.0 µs')
    """
    if s is None:
        return "–"
    a = abs(s)
    if a >= 1:
        return f"{s:.2f} s"
    if a >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.1f} µs"


def _from_on(flags: list[bool]) -> int | None:
    """The first index from which every flag is true (``None`` if the last is false).

    Examples
    --------
    >>> _from_on([False, True, True]), _from_on([True, False]), _from_on([True, True])
    (1, None, 0)
    """
    k = len(flags)
    while k > 0 and flags[k - 1]:
        k -= 1
    return None if k == len(flags) else k


def compute_verdict(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The thesis's question, answered from a report's rows (their JSON form).

    For each row with the graph measured: ``overhead_s`` = trace + graph + stages
    (Algorithm 1); ``graph_path_s`` = ``overhead_s`` + the stage fill.  The graph *pays for
    itself* when ``graph_path_s`` < the sequential fill, i.e. when the time the stage
    schedule saves over the sequential fill exceeds what building it cost.  The pattern
    fill *beats the graph* when ``pattern_s`` < ``graph_path_s``; "from which size on" is
    the smallest measured size from which it does at every larger measured size.  Fill
    times are the rows' top-level ones (``fill.sequential_s``, ``fill.pattern_s``,
    ``fill.stages_s``).
    """
    per: list[dict[str, Any]] = []
    for r in rows:
        ov, f = r["overhead"], r["fill"]
        entry: dict[str, Any] = {"label": r.get("short", r["label"]), "size": r["size"],
                                 "cells": r["cells"],
                                 "pattern": r["pattern"], "overhead_s": None,
                                 "stage_fill_s": f.get("stages_s"),
                                 "sequential_s": f.get("sequential_s"),
                                 "pattern_s": f.get("pattern_s"), "graph_path_s": None,
                                 "saved_s": None, "graph_pays": None,
                                 "pattern_beats_graph": None}
        if r.get("skipped") or r.get("error") or ov.get("trace_s") is None:
            per.append(entry)
            continue
        overhead = ov["trace_s"] + ov["graph_s"] + ov["stages_s"]
        entry["overhead_s"] = overhead
        if f.get("stages_s") is not None:
            path = overhead + f["stages_s"]
            entry["graph_path_s"] = path
            if f.get("sequential_s") is not None:
                entry["saved_s"] = f["sequential_s"] - f["stages_s"]
                entry["graph_pays"] = path < f["sequential_s"]
            if f.get("pattern_s") is not None:
                entry["pattern_beats_graph"] = f["pattern_s"] < path
        per.append(entry)

    pays = [e for e in per if e["graph_pays"] is not None]
    beats = [e for e in per if e["pattern_beats_graph"] is not None]
    measured = [r for r in rows if not r.get("skipped") and not r.get("error")]
    has_pattern = any(r["pattern"] for r in measured)
    if not measured:
        return _verdict(f"For {name}, nothing could be measured ({_why_undecided(rows)}).",
                        per, None, None)
    # part one: does the graph pay for itself (against the sequential fill)
    pays_from = None
    if not pays:
        part1 = f"whether the graph pays for itself could not be measured ({_why_undecided(rows)})"
    else:
        last = pays[-1]
        saved = last["saved_s"]
        at = f" at {last['label']}" if len(pays) > 1 else ""
        cost = f"tracing, building and staging it costs {_sec(last['overhead_s'])}{at}"
        if saved < 0:
            gain = f"the stage fill is {_sec(-saved)} slower than the sequential fill"
        elif saved < last["overhead_s"]:
            gain = f"the stage fill saves only {_sec(saved)} over the sequential fill"
        else:
            gain = f"the stage fill saves {_sec(saved)} over the sequential fill"
        flags = [e["graph_pays"] for e in pays]
        k = _from_on(flags)
        pays_from = None if k is None else pays[k]["label"]
        if len(pays) == 1:
            where = f"at {last['label']}"
        elif not any(flags):
            where = "at any size measured"
        elif all(flags):
            where = "at every size measured"
        elif k is not None:
            where = f"from {pays_from} on"
        else:
            where = "only at " + ", ".join(e["label"] for e in pays if e["graph_pays"])
        if any(flags):
            part1 = f"the graph pays for itself {where}: {cost} and {gain}"
        else:
            part1 = f"the graph does not pay for itself {where}: {cost}, while {gain}"
    # part two: from which size on does the pattern fill beat graph + stage fill
    wins_from = None
    if not has_pattern and all(len(r["shape"]) != 2 for r in measured):
        part2 = (f"patterns are for 2-D tables and this one is {len(measured[0]['shape'])}-D, "
                 "so the graph's stage schedule is the only parallel fill")
    elif not has_pattern:
        part2 = "no pattern fits, so the graph's stage schedule is the only parallel fill"
    elif not beats:
        part2 = ("the pattern fill could not be compared with graph + stage fill ("
                 + _why_undecided(rows) + ")")
    else:
        pat = next(r["pattern"] for r in rows if r["pattern"])
        flags = [e["pattern_beats_graph"] for e in beats]
        k = _from_on(flags)
        if k is None:
            e = beats[-1]
            where = "at the largest size measured" if len(beats) > 1 else f"at {e['label']}"
            there = f" at {e['label']}" if len(beats) > 1 else ""
            part2 = (f"the {pat} pattern fill does not beat graph + stage fill {where} "
                     f"({_sec(e['pattern_s'])} against {_sec(e['graph_path_s'])}{there})")
        else:
            e = beats[k]
            wins_from = e["label"]
            nums = f"{_sec(e['pattern_s'])} against {_sec(e['graph_path_s'])}"
            if len(beats) == 1:
                part2 = f"the {pat} pattern fill beats graph + stage fill at {wins_from} ({nums})"
            elif k == 0:
                part2 = (f"the {pat} pattern fill beats graph + stage fill at every size "
                         f"measured, from {wins_from} on ({nums} there)")
            else:
                part2 = (f"the {pat} pattern fill beats graph + stage fill from {wins_from} on "
                         f"({nums} there)")
    return _verdict(f"For {name}, {part1}; {part2}.", per, pays_from, wins_from)


def _verdict(sentence: str, per: list[dict[str, Any]], pays_from: str | None,
             wins_from: str | None) -> dict[str, Any]:
    decided = [e["graph_pays"] for e in per if e["graph_pays"] is not None]
    return {
        "sentence": sentence,
        "graph_pays": [e["graph_pays"] for e in per],
        "graph_pays_from": pays_from,
        "graph_pays_anywhere": any(decided) if decided else None,
        "pattern_beats_graph": [e["pattern_beats_graph"] for e in per],
        "pattern_wins_from": wins_from,
        "rows": per,
        "definition": ("overhead = trace_s + graph_s + stages_s (medians); graph path = "
                       "overhead + fill.stages_s; the graph pays when graph path < "
                       "fill.sequential_s; the pattern beats the graph when fill.pattern_s < "
                       "graph path; 'from X on' = the smallest size from which it holds at "
                       "every larger size measured"),
    }


def _why_undecided(rows: list[dict[str, Any]]) -> str:
    reasons = []
    for r in rows:
        if r.get("skipped"):
            reasons.append(f"{r['label']} skipped")
        elif r.get("error"):
            reasons.append(f"{r['label']} failed")
        elif r["overhead"].get("skipped"):
            reasons.append(f"{r['label']}: graph not measured")
        elif r["fill"].get("stages_s") is None:
            reasons.append(f"{r['label']}: no stage fill time")
        elif r["fill"].get("sequential_s") is None:
            reasons.append(f"{r['label']}: no sequential fill time")
    return "; ".join(reasons) or "no size measured"


# --------------------------------------------------------------------------------------
# the report


@dataclass
class Report:
    """A finished report: rows (JSON-ready dicts), the verdict and the machine."""

    name: str
    kind: str  # "family" or "recurrence"
    source: str | None
    rows: list[dict[str, Any]]
    backends: dict[str, str]
    primary: str
    primary_why: str
    verdict: dict[str, Any]
    machine: dict[str, Any]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def sentence(self) -> str:
        return self.verdict["sentence"]

    def failed_rows(self) -> list[dict[str, Any]]:
        """Rows where the recurrence itself failed (invalid at that size)."""
        return [r for r in self.rows if r.get("error")]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "primary_backend": self.primary,
            "primary_why": self.primary_why,
            "backends": self.backends,
            "verdict": self.verdict,
            "machine": self.machine,
            "settings": self.settings,
            "notes": self.notes,
            "rows": self.rows,
        }

    def to_markdown(self, plots: Sequence[str] = PLOTS) -> str:
        from depgraph.report_plots import markdown

        return markdown(self, plots)

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write ``report.json``, the PNG plots and ``report.md`` into ``out_dir``."""
        import json

        from depgraph.report_plots import write_plots

        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise UsageError(f"-o {str(out_dir)!r} is a file; give a directory for the report")
        out.mkdir(parents=True, exist_ok=True)
        plots = write_plots(self, out)
        written = [out / "report.json", *plots, out / "report.md"]
        self.files = [p.name for p in written]
        _atomic_write(out / "report.json", json.dumps(self.to_json(), indent=1, default=_json_default))
        _atomic_write(out / "report.md", self.to_markdown([p.name for p in plots]))
        return written


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def report(
    target: Recurrence | Family,
    sizes: Sequence[int] | None = None,
    backends: str | Sequence[str] | None = "all",
    out_dir: str | os.PathLike[str] | None = None,
    repeat: int = REPEAT,
    *,
    python_max_cells: int = PYTHON_MAX_CELLS,
    max_trace_cells: int | None = None,
    max_trace_s: float | None = None,
    memory_limit: int | None = None,
    long_run_s: float = LONG_RUN_S,
    allow_simulator: bool = False,
    progress: bool | None = None,
    source: str | None = None,
    notes: Sequence[str] = (),
) -> Report:
    """Measure what the graph costs against the fills, one row per size.

    Parameters
    ----------
    target : Recurrence or Family
        A fixed recurrence (one row; ``sizes`` must be ``None``) or a family (one row per
        size in ``sizes``).
    sizes : sequence of int
        The family's sizes (sorted, duplicates dropped).
    backends : str or sequence
        ``"all"`` (python for small sizes, cpu, cuda when a real GPU is usable), ``"auto"``
        or names among ``python``, ``cpu``, ``cuda``.
    out_dir : path, optional
        Write ``report.json``, ``report.md`` and the plots there.
    repeat : int
        Timed runs per measurement (a run over ``long_run_s`` is timed once).
    python_max_cells : int
        Largest table the python backend fills.
    max_trace_cells : int, optional
        Largest table traced for the graph (larger sizes: pattern and sequential fills only).
    max_trace_s : float, optional
        Skip a trace whose time, extrapolated from the previous size, exceeds this.
    memory_limit : int, optional
        Bytes the report may use (default: the memory available, per size).
    allow_simulator : bool
        Measure cuda under numba's simulator (tests; those are not GPU timings).
    progress : bool, optional
        Show progress on standard error (default: when it is a terminal).

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(6, 6), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> r = report(paths, backends="python", repeat=1, progress=False)
    >>> row = r.rows[0]
    >>> row["cells"], row["edges"], row["stages"], row["pattern"]
    (36, 50, 10, 'NOSE')
    >>> row["fill"]["pattern_s"] > 0 and r.sentence.startswith("For paths, the graph")
    True
    """
    if repeat < 1:
        raise UsageError(f"--repeat must be at least 1, got {repeat}")
    names = parse_backends(backends)
    if isinstance(target, Family):
        if not sizes:
            raise UsageError(f"{target.name!r} is a family: give its sizes, e.g. --sizes 64,128,256")
        size_list: list[int | None] = list(parse_sizes(",".join(str(int(s)) for s in sizes)) or [])
        kind = "family"
    elif isinstance(target, Recurrence):
        if sizes:
            raise UsageError(f"{target.name!r} is a fixed recurrence of shape {target.shape}: "
                             "it has one size; drop --sizes")
        size_list = [None]
        kind = "recurrence"
    else:
        raise UsageError(f"report needs a recurrence or a family, not {type(target).__name__}")

    cuda_ok, cuda_why = cuda_state(allow_simulator) if "cuda" in names else (False, "not asked for")
    if "cuda" in names and names == ["cuda"] and not cuda_ok:
        raise BackendUnavailableError(f"--backend cuda: {cuda_why}")
    status = {}
    for b in names:
        if b == "cuda":
            status[b] = f"measured: {cuda_why}" if cuda_ok else f"unavailable: {cuda_why}"
        elif b == "python":
            status[b] = f"measured up to {python_max_cells:,} cells (the reference semantics)"
        else:
            status[b] = "measured: numba on all cores (sequential: one core)"
    _warm_up()

    rows: list[dict[str, Any]] = []
    history: list[tuple[int, float, float]] = []
    for size in size_list:
        if size is None:
            rec = target  # type: ignore[assignment]
        else:
            try:
                rec = target(size)  # type: ignore[operator]
            except DepgraphError as exc:
                rows.append(_failed_row(target.name, size, str(exc)))
                continue
            except Exception as exc:
                rows.append(_failed_row(target.name, size,
                                        f"family {target.name!r} failed at size {size}: "
                                        f"{type(exc).__name__}: {exc}"))
                continue
        rows.append(_measure_row(
            rec, size, names, cuda_ok, cuda_why, repeat=repeat,
            python_max_cells=python_max_cells, max_trace_cells=max_trace_cells,
            max_trace_s=max_trace_s, memory_limit=memory_limit, long_run_s=long_run_s,
            history=history, show=progress))
    primary, primary_why = _choose_primary(names, cuda_ok, cuda_why)
    pref = _preference(names, cuda_ok, cuda_why)
    for r in rows:
        if not r.get("skipped") and not r.get("error"):
            _fill_summary(r, pref)
    settings = {"repeat": repeat, "python_max_cells": python_max_cells,
                "max_trace_cells": max_trace_cells, "max_trace_s": max_trace_s,
                "memory_limit": memory_limit, "long_run_s": long_run_s,
                "sizes": [s for s in size_list if s is not None] or None,
                "backends": names}
    rep = Report(name=target.name, kind=kind, source=source, rows=rows, backends=status,
                 primary=primary, primary_why=primary_why,
                 verdict=compute_verdict(target.name, rows),
                 machine=machine_info(allow_simulator), settings=settings, notes=list(notes))
    if out_dir is not None:
        rep.write(out_dir)
    return rep


def _failed_row(name: str, size: int, message: str) -> dict[str, Any]:
    return {"size": size, "label": f"n={size}", "short": f"n={size}", "name": name, "shape": None, "cells": None,
            "dtype": None, "table_bytes": None, "edges": None, "stages": None,
            "max_stage_width": None, "regions": None, "patterns": None, "pattern": None,
            "pattern_steps": None, "plan_s": None, "skipped": None, "error": message,
            "notes": [],
            "overhead": {"trace_s": None, "graph_s": None, "stages_s": None,
                         "classify_s": None, "total_s": None, "graph_bytes": None,
                         "table_bytes": None, "runs": 0, "skipped": None},
            "fill": {"backend": None, "sequential_backend": None, "sequential_s": None,
                     "pattern_s": None, "stages_s": None}}


# --------------------------------------------------------------------------------------
# the command


def _pick(path: str, name: str | None) -> Recurrence | Family:
    """The recurrence or family ``name`` (or the only one) of a file, not yet sized."""
    from depgraph.loader import definitions, load_module

    found = definitions(load_module(path))
    if not found:
        raise UsageError(f"{path} defines no recurrence: decorate a cell function with "
                         "@depgraph.recurrence or a sized builder with @depgraph.family")
    if name is None:
        if len(found) > 1:
            raise UsageError(f"{path} defines several recurrences ({', '.join(found)}): "
                             "pick one with --name")
        return next(iter(found.values()))
    if name not in found:
        raise UsageError(f"{path} has no recurrence named {name!r}; it has: {', '.join(found)}")
    return found[name]


def report_command(args: argparse.Namespace) -> int:
    """``depgraph report``: check the options, measure, write, print the verdict."""
    sizes = parse_sizes(getattr(args, "sizes", None))
    backends = parse_backends(getattr(args, "backend", None) or "all")
    repeat = getattr(args, "repeat", REPEAT)
    if repeat is None or repeat < 1:
        raise UsageError(f"--repeat must be at least 1, got {repeat}")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {args.output!r} is a file; give a directory for the report")
    obj = _pick(args.file, args.name)
    if isinstance(obj, Family) and sizes is None:
        raise UsageError(f"{obj.name!r} is a family: give its sizes with --sizes a,b,c")
    if isinstance(obj, Recurrence) and sizes is not None:
        raise UsageError(f"{obj.name!r} is a fixed recurrence of shape {obj.shape}: it has "
                         "one size; drop --sizes")
    python_max = getattr(args, "python_max_cells", None)
    if python_max is not None and python_max < 0:
        raise UsageError(f"--python-max-cells must be at least 0, got {python_max}")
    max_trace = getattr(args, "max_trace_cells", None)
    if max_trace is not None and max_trace < 1:
        raise UsageError(f"--max-trace-cells must be positive, got {max_trace}")
    rep = report(obj, sizes, backends, out, repeat=repeat,
                 python_max_cells=PYTHON_MAX_CELLS if python_max is None else python_max,
                 max_trace_cells=max_trace, source=str(args.file))
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
