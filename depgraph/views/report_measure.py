"""Measuring one row of a report (:func:`measure_row`): the structure, what the graph costs
and every fill, at one size; and the machine the numbers come from.

- **structure**: cells, edges, minimal stages, the selected pattern and its step count,
  or, where no pattern fits, the hyperplane a fill follows (its ``pi`` and steps);
- **overhead** of the graph: tracing (plain Python), building the CSR graph and
  Algorithm 1, each the median of repeated :func:`depgraph.analyze` runs; graph bytes
  against table bytes;
- **fills**: the sequential, pattern and stage schedules (and the hyperplane's, where
  the row has one) on every backend measured
  (``python`` only up to ``python_max_cells`` cells, ``cpu``, and ``cuda`` when a real GPU
  is usable), each by :func:`runtime.run.fill` with the plan made here, checked against
  the sequential reference once, then timed, as the median of ``repeat`` runs with
  min-max and quartiles, compilation apart; cells per second; host-to-device and
  device-to-host copies apart from compute.

Bad input is reported, not crashed on: a size whose table does not fit memory is skipped
with the estimate; a size whose trace does not fit (``estimate_trace_bytes`` against
``available_memory``, or a ``TooLargeError`` from the tracer, or ``max_trace_cells``)
keeps its pattern and sequential fills and states why the graph was not measured; a
failing fill shows its error in the row while the others run.

Assumptions: the cell function is deterministic; timings on a shared machine are noisy,
which the spreads show.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any

import numpy as np

from depgraph import memory
from depgraph.analysis.pipeline import Analysis, analyze
from depgraph.analysis.schedule import source_hyperplane
from depgraph.errors import CompileError, DepgraphError, RecurrenceError, TooLargeError
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.source import SourceUnavailable
from depgraph.frontend.trace import estimate_trace_bytes
from depgraph.memory import format_bytes
from depgraph.model import Recurrence, recurrence
from depgraph.views.progress import progress
from depgraph.views.report_data import schedules_of
from patterns import BY_CODE, matching, select, sweep_for
from patterns.hyperplane import Hyperplane
from runtime.backends.cuda import device
from runtime.run import FillResult, compare, fill
from runtime.schedule.plan import Plan, checked_sweep

__all__ = ["measure_row", "machine_info", "cuda_state", "warm_up", "preference",
           "choose_primary", "fill_summary", "PYTHON_MAX_CELLS", "REPEAT", "LONG_RUN_S",
           "TABLE_COPIES"]

#: Default largest table the python backend fills (it runs about a million cells a second
#: at best; it is the reference semantics, not a contender).
PYTHON_MAX_CELLS = 1 << 16
#: Default number of timed runs per measurement.
REPEAT = 5
#: A run longer than this is timed once (its check run is the timed run).
LONG_RUN_S = 5.0
#: Tables a fill keeps at once (reference, checked-sweep table, the fill's own table).
TABLE_COPIES = 3


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
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cuda_state(allow_simulator: bool = False) -> tuple[bool, str]:
    """Whether the cuda backend is measured, and why (not).

    Under numba's simulator the kernels run, but as Python threads: no speed, so the
    report leaves cuda out unless ``allow_simulator`` (tests only)."""
    ok, why = device.status()
    if ok and "simulator" in why:
        if allow_simulator:
            return True, f"{why} (simulated: these are not GPU timings)"
        return False, f"{why}; no GPU timings"
    return ok, why


def machine_info(allow_simulator: bool = False) -> dict[str, Any]:
    """CPU model, cores, GPU (or why none), library versions, date."""
    import numba  # the compiled backends' own, loaded by the fills measured anyway

    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        usable = os.cpu_count() or 1
    ok, why = cuda_state(allow_simulator)
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
        "depgraph": _version("depgraph"),
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def _threading_layer() -> str | None:
    import numba

    try:
        return str(numba.threading_layer())
    except ValueError:  # no parallel kernel has run yet
        return None


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
class _Ctx:
    """What the fills of one size need: the plan made here, and why there is no trace."""

    plan: Plan
    why_no_trace: str | None

    @property
    def rec(self) -> Recurrence:
        return self.plan.recurrence


def _unavailable(ctx: _Ctx, backend: str, schedule: str) -> str | None:
    """Why an executor cannot run at this size (``None``: it can)."""
    if schedule == "pattern" and ctx.plan.pattern is None:
        if ctx.rec.ndim != 2:
            return f"no pattern: patterns are for 2-D tables and this one is {ctx.rec.ndim}-D"
        return "no pattern fits the reads"
    if schedule == "stages" and ctx.plan.analysis is None:
        return f"needs the graph's stages, and the trace was skipped: {ctx.why_no_trace}"
    if schedule == "sequential":
        if backend == "cuda":
            return "no sequential executor on the GPU"
        if ctx.plan.sweep is None and ctx.plan.analysis is None:
            return f"no sequential order without the trace: {ctx.why_no_trace}"
    return None


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, DepgraphError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _measure_fill(ctx: _Ctx, backend: str, schedule: str, repeat: int,
                  long_run_s: float) -> dict[str, Any]:
    """Check one fill against the reference, then time it ``repeat`` times."""

    def run() -> FillResult:
        return fill(ctx.rec, backend=backend, schedule=schedule, plan=ctx.plan)

    cells = ctx.rec.cells
    hyperplane = ctx.plan.hyperplane
    steps = {"sequential": cells, "pattern": ctx.plan.pattern_steps,
             "hyperplane": None if hyperplane is None else hyperplane.steps(ctx.rec.shape),
             "stages": None if ctx.plan.analysis is None
             else ctx.plan.analysis.stages.count}[schedule]
    try:
        first = run()
        if first.table is None:
            raise RecurrenceError("the fill returned no table to check")
        verified = compare(first.table, ctx.plan.reference)
        first = replace(first, table=None)
        if first.compute_s > long_run_s:
            runs = [first]  # one long run is timed once: its check run
        else:
            runs = [replace(run(), table=None) for _ in range(repeat)]
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
    if backend == "cuda":
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
    return estimate_trace_bytes(cells, rpc), rpc, secs


def _shape_text(shape: Sequence[int]) -> str:
    return "×".join(str(int(s)) for s in shape)


def _label(size: int | None, shape: Sequence[int]) -> str:
    return f"n={size} ({_shape_text(shape)})" if size is not None else _shape_text(shape)


def _progress(label: str, total: int | None, enabled: bool | None) -> Callable[[int], None]:
    return progress(label, total, enabled=enabled)


def warm_up() -> None:
    """Load Algorithm 1's compiled peel once, so no row's ``stages_s`` holds numba's import."""

    @recurrence(shape=(2, 2), dtype=np.int64)
    def warm(M, i, j):
        return 0 if i == 0 else M[i - 1, j]

    analyze(warm)


def _hyperplane(ir: CellIR, shape: tuple[int, ...], analysis: Analysis | None
                ) -> Hyperplane | None:
    """Where no pattern fits, the hyperplane a fill follows, as a plan made at this size
    takes it (:func:`runtime.schedule.plan.make_plan`): the traced analysis's, else the
    one the source's read offsets allow (the checked sweep saw every read at this size);
    ``None`` when none is legal."""
    sched = analysis.schedule if analysis is not None else None
    if sched is not None and sched.kind == "hyperplane" and sched.pi is not None:
        return Hyperplane(tuple(sched.pi))
    return source_hyperplane(ir, shape)[0]


def measure_row(rec: Recurrence, size: int | None, backends: list[str], cuda_ok: bool,
                cuda_why: str, *, repeat: int, python_max_cells: int,
                max_trace_cells: int | None, max_trace_s: float | None,
                memory_limit: int | None, long_run_s: float,
                history: list[tuple[int, float, float]], show: bool | None) -> dict[str, Any]:
    """One row of a report: the structure, what the graph costs and every fill, at one
    size (the module docstring); a skip or the recurrence's failure is recorded in it."""
    cells = rec.cells
    table_bytes = cells * rec.dtype.itemsize
    label = _label(size, rec.shape)
    row: dict[str, Any] = {
        "size": size, "label": label, "short": f"n={size}" if size is not None else label,
        "name": rec.name, "shape": list(rec.shape),
        "cells": cells, "dtype": str(rec.dtype), "table_bytes": table_bytes,
        "edges": None, "stages": None, "max_stage_width": None,
        "regions": None, "patterns": None, "pattern": None, "pattern_steps": None,
        "hyperplane": None, "hyperplane_steps": None, "plan_s": None, "plan_compile_s": None, "skipped": None, "error": None, "notes": [],
        "overhead": {"trace_s": None, "graph_s": None, "stages_s": None, "classify_s": None,
                     "total_s": None, "graph_bytes": None, "table_bytes": table_bytes,
                     "runs": 0, "skipped": None},
        "fill": {"backend": None, "sequential_backend": None,
                 "sequential_s": None, "pattern_s": None, "hyperplane_s": None,
                 "stages_s": None},
    }
    limit = memory_limit if memory_limit is not None else memory.available_memory()
    need_table = TABLE_COPIES * table_bytes
    if need_table > limit:
        row["skipped"] = (f"{label}: the table is {format_bytes(table_bytes)} and a fill keeps "
                          f"about {TABLE_COPIES} copies ({format_bytes(need_table)}); "
                          f"{format_bytes(limit)} is available, so this size was skipped")
        return row

    n_tasks = 2 + len(backends) * len(schedules_of(row))  # counted again with the hyperplane
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
        sweep = sweep_for(regions) if regions is not None else None
    ir = cell_ir(rec)
    cell_s = None
    if rec.ndim == 2:
        t0 = time.perf_counter()
        try:
            found: Any = checked_sweep(rec, ir)
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
            cell_s = sweep_s / rec.cells
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
        pattern_steps = BY_CODE[pattern].steps((rec.shape[0], rec.shape[1]))
    row["pattern_steps"] = pattern_steps
    hyperplane = None if pattern is not None else _hyperplane(ir, rec.shape, analysis)
    if hyperplane is not None:
        row["hyperplane"] = list(hyperplane.pi)
        row["hyperplane_steps"] = hyperplane.steps(rec.shape)
    schedules = schedules_of(row)
    n_tasks = 2 + len(backends) * len(schedules)
    done[0] += 1
    plan = Plan(rec, ir, None if regions is None else tuple(regions),
                None if patterns is None else tuple(patterns), pattern, sweep, reference,
                analysis, "trace" if analysis is not None else "checked sweep", 0.0,
                cell_s=cell_s, hyperplane=hyperplane)
    ctx = _Ctx(plan, why_no_trace)

    # 3. the fills
    fills = row["fill"]
    for b in backends:
        if b == "cuda" and not cuda_ok:
            fills[b] = {"unavailable": cuda_why}
            done[0] += len(schedules)
            continue
        if b == "python" and cells > python_max_cells:
            fills[b] = {"skipped": f"the python backend runs only up to {python_max_cells:,} "
                                   f"cells (this size has {cells:,})"}
            done[0] += len(schedules)
            continue
        entry: dict[str, Any] = {}
        for s in schedules:
            why = _unavailable(ctx, b, s)
            if not why:
                status(f"{b} {s} fill")
            entry[s] = {"skipped": why} if why else _measure_fill(ctx, b, s, repeat, long_run_s)
            entry[f"{s}_s"] = entry[s].get("median_s")
            done[0] += 1
        fills[b] = entry
    status("done")
    return row


def preference(backends: list[str], cuda_ok: bool, cuda_why: str) -> list[str]:
    """Backends in the order their times become a row's top-level fill times: a real GPU,
    then all CPU cores, then plain Python, then the simulator."""
    real = cuda_ok and "simulat" not in cuda_why
    order = (["cuda"] if real else []) + ["cpu", "python"] + (["cuda"] if cuda_ok and not real else [])
    return [b for b in order if b in backends]


def choose_primary(backends: list[str], cuda_ok: bool, cuda_why: str) -> tuple[str, str]:
    """The backend whose pattern and stage times are the rows' top-level fill times."""
    pref = preference(backends, cuda_ok, cuda_why)
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


def fill_summary(row: dict[str, Any], pref: list[str]) -> None:
    """Top-level fill times: the first backend of ``pref`` that filled the pattern, the
    hyperplane or the stages at this size (so a backend that failed here gives way to the
    next)."""
    f = row["fill"]
    parallel = ("pattern_s", "hyperplane_s", "stages_s")
    primary = next((b for b in pref if isinstance(f.get(b), dict)
                    and any(f[b].get(key) is not None for key in parallel)),
                   pref[0] if pref else None)
    p = f.get(primary, {}) if primary else {}
    f["backend"] = primary
    for key in parallel:
        f[key] = p.get(key)
    seq_b = next((b for b in ("cpu", "python") if f.get(b, {}).get("sequential_s") is not None),
                 None)
    f["sequential_backend"] = seq_b
    f["sequential_s"] = f[seq_b]["sequential_s"] if seq_b else None
    if primary and pref and primary != pref[0]:
        row["notes"].append(f"top-level fill times are on {primary}: {pref[0]} filled none of "
                            "the pattern, the hyperplane and the stages at this size")
    if primary == "cuda":
        pat = p.get("hyperplane" if row.get("hyperplane") else "pattern", {})
        f["h2d_s"], f["d2h_s"] = pat.get("h2d_s"), pat.get("d2h_s")


