"""``depgraph report``: what the dependency graph costs against the fills (SPEC section 7).

The thesis's central finding is that building the graph explicitly costs more than it
saves, while the eight patterns need no graph.  :func:`report` measures that on any
recurrence, one row per size of a family (or one row for a fixed recurrence): the
structure, what the graph costs and every fill (:mod:`depgraph.views.report_measure`), a
one-sentence **verdict** computed from those numbers (:mod:`depgraph.views.verdict`) and
the **machine**.  :func:`write_report` puts ``report.json``, ``report.md``
(:mod:`depgraph.views.report_markdown`) and three PNG plots
(:mod:`depgraph.views.report_plots`) in a directory, each file whole or not at all.

Top-level fill times (the SPEC's ``fill.sequential_s``, ``fill.pattern_s``,
``fill.stages_s``, and ``fill.hyperplane_s`` where no pattern fits and a hyperplane
does): ``pattern_s``, ``hyperplane_s`` and ``stages_s`` are on the *primary* backend,
``fill.backend`` (cuda when a real GPU was measured, else cpu, else python);
``sequential_s`` is the one-core compiled sequential fill on the cpu backend
(``fill.sequential_backend``; python when cpu was not measured), since a GPU has no
sequential executor.  Per-backend numbers are under ``fill[backend]``.

Assumptions: the cell function is deterministic; timings on a shared machine are noisy,
which the spreads show.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from depgraph.errors import BackendUnavailableError, DepgraphError, UsageError, setting
from depgraph.model import Family, Recurrence
from depgraph.views.files import check_folder, write_text
from depgraph.views.report_data import Report, json_default, parse_backends
from depgraph.views.report_markdown import markdown
from depgraph.views.report_measure import (
    LONG_RUN_S,
    PYTHON_MAX_CELLS,
    REPEAT,
    choose_primary,
    cuda_state,
    fill_summary,
    machine_info,
    measure_row,
    preference,
    warm_up,
)
from depgraph.views.report_plots import write_plots
from depgraph.views.verdict import compute_verdict
from runtime.backends.cpu import thread_count

__all__ = ["report", "write_report", "Report"]


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
    threads: int | None = None,
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
    threads : int, optional
        CPU threads of the cpu backend's fills (default: the cores this process may use).

    Examples
    --------
    >>> import numpy as np
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
        raise UsageError(f"{setting('repeat')} must be at least 1, got {repeat}")
    if out_dir is not None:  # before any measuring, not after it
        check_folder(Path(out_dir), setting("output", str(out_dir)))
    names = parse_backends(backends)
    if isinstance(target, Family):
        if not sizes:
            raise UsageError(f"{target.name!r} is a family: give its sizes, e.g. "
                             f"{setting('sizes', '64,128,256')}")
        if any(int(s) < 1 for s in sizes):
            raise UsageError(f"{setting('sizes')} must be positive, got {list(sizes)}")
        size_list: list[int | None] = sorted({int(s) for s in sizes})
        kind = "family"
    elif isinstance(target, Recurrence):
        if sizes:
            raise UsageError(f"{target.name!r} is a fixed recurrence of shape {target.shape}: "
                             f"it has one size; drop {setting('sizes')}")
        size_list = [None]
        kind = "recurrence"
    else:
        raise UsageError(f"report needs a recurrence or a family, not {type(target).__name__}")

    cuda_ok, cuda_why = cuda_state(allow_simulator) if "cuda" in names else (False, "not asked for")
    if "cuda" in names and names == ["cuda"] and not cuda_ok:
        raise BackendUnavailableError(f"{setting('backend', 'cuda')}: {cuda_why}")
    status = {}
    for b in names:
        if b == "cuda":
            status[b] = f"measured: {cuda_why}" if cuda_ok else f"unavailable: {cuda_why}"
        elif b == "python":
            status[b] = f"measured up to {python_max_cells:,} cells (the reference semantics)"
        else:
            status[b] = "measured: numba on all cores (sequential: one core)"
    with thread_count(threads):
        warm_up()

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
            rows.append(measure_row(
                rec, size, names, cuda_ok, cuda_why, repeat=repeat,
                python_max_cells=python_max_cells, max_trace_cells=max_trace_cells,
                max_trace_s=max_trace_s, memory_limit=memory_limit, long_run_s=long_run_s,
                history=history, show=progress))
        primary, primary_why = choose_primary(names, cuda_ok, cuda_why)
        pref = preference(names, cuda_ok, cuda_why)
        for r in rows:
            if not r.get("skipped") and not r.get("error"):
                fill_summary(r, pref)
        settings = {"repeat": repeat, "python_max_cells": python_max_cells,
                    "max_trace_cells": max_trace_cells, "max_trace_s": max_trace_s,
                    "memory_limit": memory_limit, "long_run_s": long_run_s,
                    "sizes": [s for s in size_list if s is not None] or None,
                    "backends": names, "threads": threads}
        rep = Report(name=target.name, kind=kind, source=source, rows=rows, backends=status,
                     primary=primary, primary_why=primary_why,
                     verdict=compute_verdict(target.name, rows),
                     machine=machine_info(allow_simulator), settings=settings, notes=list(notes))
    if out_dir is not None:
        write_report(rep, out_dir)
    return rep


def write_report(rep: Report, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``report.json``, the PNG plots and ``report.md`` into ``out_dir`` (made when
    missing), each whole or not at all; returns their paths."""
    out = Path(out_dir)
    check_folder(out, setting("output", str(out_dir)))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the report's directory {str(out)!r}: "
                         f"{exc.strerror or exc}") from None
    plots = write_plots(rep, out)
    written = [out / "report.json", *plots, out / "report.md"]
    rep.files = [p.name for p in written]
    write_text(out / "report.json", json.dumps(rep.to_json(), indent=1, default=json_default))
    write_text(out / "report.md", markdown(rep, [p.name for p in plots]))
    return written


def _failed_row(name: str, size: int, message: str) -> dict[str, Any]:
    return {"size": size, "label": f"n={size}", "short": f"n={size}", "name": name, "shape": None, "cells": None,
            "dtype": None, "table_bytes": None, "edges": None, "stages": None,
            "max_stage_width": None, "regions": None, "patterns": None, "pattern": None,
            "pattern_steps": None, "hyperplane": None, "hyperplane_steps": None, "plan_s": None, "skipped": None, "error": message,
            "notes": [],
            "overhead": {"trace_s": None, "graph_s": None, "stages_s": None,
                         "classify_s": None, "total_s": None, "graph_bytes": None,
                         "table_bytes": None, "runs": 0, "skipped": None},
            "fill": {"backend": None, "sequential_backend": None, "sequential_s": None,
                     "pattern_s": None, "hyperplane_s": None, "stages_s": None}}
