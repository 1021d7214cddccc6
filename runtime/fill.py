"""``fill``: run a recurrence's table on a backend with a schedule (``depgraph run``).

Backends: ``python`` (plain Python over a NumPy table, the reference), ``cpu`` (numba,
all cores for parallel schedules), ``cuda`` (numba.cuda).  Schedules: ``sequential``
(one cell at a time in a valid order), ``pattern`` (one parallel step per row, column or
diagonal), ``tiled`` (cuda, diagonal patterns: one persistent launch, cells in registers
or tiles in shared memory, ``auto``'s choice there for light cells), ``stages``
(Algorithm 2: one parallel step per stage of the minimal sequence), ``ready``
(Algorithm 3, cuda only: one launch, each cell waits until its dependencies are done).
``auto`` picks cuda when a real GPU is usable, else cpu; and the pattern when one matches,
else the stages.  Every choice is explained in ``FillResult.notes``.

The schedule is derived at the size being filled (:mod:`runtime.plan`), so a schedule
never rests on reads seen at another size or with other data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from depgraph.api import Recurrence
from depgraph.errors import CompileError, NoPatternError, RecurrenceError, UsageError
from patterns import BY_CODE, DIAGONAL_FLIPS, breaking_regions, step_line
from runtime import cpu
from runtime.plan import Plan, make_plan
from runtime.source import SourceUnavailable

__all__ = ["FillResult", "fill", "BACKENDS", "SCHEDULES", "resolve_backend", "compare"]

BACKENDS = ("auto", "cpu", "cuda", "python")
SCHEDULES = ("auto", "pattern", "tiled", "stages", "sequential", "ready")
#: Tile side of the tiled diagonal fill.
TILE = 64
#: On the GPU, cells cheaper than this on one core (the checked sweep's time per cell)
#: are *light*: one launch per step would be launch-bound, so ``auto`` tiles a diagonal
#: pattern (LCS 16384²: 25x) and the pattern fill runs every step in one cooperative
#: launch (knapsack 1000 x 10^6: 3.6x); heavy cells keep one launch per step, whose blocks
#: use every thread (matrix chain 1024, ~400 ns a cell: tiles 0.88x, cooperative 0.88x).
#: Judged from 65,536 cells on.  Among light-cell fills of a pattern the calibrated cost
#: model (:mod:`runtime.costmodel`) picks the kernel.
TILE_MAX_CELL_S = 50e-9


@dataclass(frozen=True, eq=False)
class FillResult:
    """One fill: the table (when copied back) and what it cost.

    ``compute_s`` is the fill itself; ``h2d_s``/``d2h_s`` are host-to-device and
    device-to-host copies (0 on the host backends); ``plan_s`` is the time spent deciding
    the schedule at this size (checked sweep or trace); ``compile_s`` is numba compiling
    the kernels (0 once they are cached).
    """

    table: np.ndarray | None
    backend: str
    schedule: str
    pattern: str | None
    steps: int
    compute_s: float
    h2d_s: float = 0.0
    d2h_s: float = 0.0
    plan_s: float = 0.0
    compile_s: float = 0.0
    notes: tuple[str, ...] = field(default=())
    verified: str | None = None

    @property
    def cells(self) -> int:
        return self.table.size if self.table is not None else 0

    def to_json(self, shape: tuple[int, ...]) -> dict[str, Any]:
        cells = int(np.prod(shape))
        return {
            "shape": list(shape),
            "cells": cells,
            "backend": self.backend,
            "schedule": self.schedule,
            "pattern": self.pattern,
            "steps": self.steps,
            "compute_s": self.compute_s,
            "h2d_s": self.h2d_s,
            "d2h_s": self.d2h_s,
            "plan_s": self.plan_s,
            "compile_s": self.compile_s,
            "cells_per_s": cells / self.compute_s if self.compute_s > 0 else None,
            "verified": self.verified,
            "notes": list(self.notes),
        }


def resolve_backend(backend: str) -> tuple[str, str]:
    """The backend ``auto`` stands for here, and why.

    Examples
    --------
    >>> resolve_backend("cpu")
    ('cpu', 'cpu backend as asked')
    """
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend != "auto":
        return backend, f"{backend} backend as asked"
    from runtime import cuda

    ok, why = cuda.status()
    if ok and "simulator" not in why:
        return "cuda", f"auto: {why} is usable"
    return "cpu", f"auto: no usable GPU ({why}), so all CPU cores"


def _python_fill(rec: Recurrence, flat_order: Iterator[int]) -> np.ndarray:
    """The python backend: the cell function over a real NumPy table, in a valid order."""
    M = np.zeros(rec.shape, dtype=rec.dtype)
    f, args, shape = rec.func, rec.args, rec.shape
    for x in flat_order:
        idx = np.unravel_index(x, shape)
        M[idx] = f(M, *(int(k) for k in idx), *args)
    return M


def _pattern_order(code: str, shape: tuple[int, ...]) -> Iterator[int]:
    p = BY_CODE[code]
    n, m = shape
    for t in range(p.steps((n, m))):
        i0, j0, di, dj, cnt = step_line(p.index, t, n, m)
        for k in range(cnt):
            yield (i0 + k * di) * m + j0 + k * dj


def _stage_arrays(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    a = plan.analysis
    assert a is not None
    return a.graph.flat_cells()[a.stages.order], a.stages.ptr


def _choose_schedule(schedule: str, plan: Plan, backend: str) -> tuple[str, str]:
    if schedule not in SCHEDULES:
        raise UsageError(f"unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    if schedule == "pattern" and plan.pattern is None:
        if plan.regions is None:
            raise NoPatternError(
                f"no pattern applies: patterns are defined for 2-D tables and this one is "
                f"{plan.recurrence.ndim}-D; use --schedule stages"
            )
        breaks = "; ".join(f"{c} by {', '.join(r)}" for c, r in breaking_regions(plan.regions).items())
        raise NoPatternError(
            f"no pattern matches: the reads fall in {', '.join(plan.regions)}, which break "
            f"every pattern ({breaks}); use --schedule stages"
        )
    if schedule == "tiled" and BY_CODE[plan.pattern or "RUD"].code not in DIAGONAL_FLIPS:
        raise UsageError(f"--schedule tiled is for the diagonal patterns (NOSE, SENO, SONE, "
                         f"NESO); this recurrence's pattern is {plan.pattern}")
    if schedule != "auto":
        return schedule, f"{schedule} schedule as asked"
    if plan.pattern in DIAGONAL_FLIPS and backend == "cuda" and _light(plan):
        return "tiled", (f"auto: reads fall in {', '.join(plan.regions or ())}, pattern "
                         f"{plan.pattern} fits; its cells are light, so on the GPU its "
                         f"diagonals are filled in one persistent launch (cells in registers "
                         f"when the reads are the three nearest neighbours at constant "
                         f"offsets, else {TILE}x{TILE} tiles in shared memory) instead of "
                         f"one launch per diagonal of cells")
    if plan.pattern is not None:
        return "pattern", (f"auto: reads fall in {', '.join(plan.regions or ())}, pattern "
                           f"{plan.pattern} fits ({plan.pattern_steps} steps, no graph needed)")
    why = "the table is not 2-D" if plan.regions is None else "no pattern fits the reads"
    return "stages", f"auto: {why}, so the minimal stage sequence (Algorithm 2)"


def _light(plan: Plan) -> bool:
    """Whether the planning sweep found the cells light (``TILE_MAX_CELL_S``); on small
    tables call overhead dominates that timing, so they count as light."""
    return not (plan.cell_s is not None and plan.recurrence.cells >= 1 << 16
                and plan.cell_s >= TILE_MAX_CELL_S)


def _mismatch(table: np.ndarray, reference: np.ndarray, bad: np.ndarray) -> RecurrenceError:
    cell = tuple(int(k) for k in np.argwhere(bad)[0])
    return RecurrenceError(f"verify failed: cell {cell} is {table[cell].item()!r}, the "
                           f"sequential reference has {reference[cell].item()!r}")


def compare(table: np.ndarray, reference: np.ndarray) -> str:
    """Compare a fill with the sequential reference: exact for integers, tight for floats.

    Returns a sentence saying how they agree; raises ``RecurrenceError`` naming the first
    cell that differs.
    """
    if table.dtype.kind in "fc":
        rtol = 1e-4 if table.dtype.itemsize <= 4 else 1e-9
        close = np.isclose(table, reference, rtol=rtol, atol=rtol, equal_nan=True)
        if not close.all():
            raise _mismatch(table, reference, ~close)
        finite = np.isfinite(table) & np.isfinite(reference)
        diff = float(np.max(np.abs(table[finite] - reference[finite]), initial=0.0))
        return f"matches the sequential reference (max abs difference {diff:.3g}, rtol {rtol:g})"
    if not np.array_equal(table, reference):
        raise _mismatch(table, reference, table != reference)
    return "equals the sequential reference exactly"


def _execute(rec: Recurrence, backend: str, schedule: str, plan: Plan,
             copy_back: bool) -> tuple[np.ndarray | None, int, float, float, float, float, str]:
    """Run one fill; returns (table, steps, compute_s, h2d_s, d2h_s, compile_s, the GPU
    kernel's description or "")."""
    shape = rec.shape
    if backend == "python":
        if schedule == "pattern":
            order: Iterator[int] = _pattern_order(plan.pattern or "", shape)
            steps = plan.pattern_steps or 0
        elif schedule == "stages":
            cells, ptr = _stage_arrays(plan)
            order, steps = iter(cells.tolist()), len(ptr) - 1
        elif plan.analysis is not None:
            order, steps = iter(plan.analysis.trace.cells.tolist()), rec.cells
        else:
            order, steps = iter(_sweep_order(plan, shape)), rec.cells
        t = time.perf_counter()
        table = _python_fill(rec, order)
        return table, steps, time.perf_counter() - t, 0.0, 0.0, 0.0, ""
    if backend == "cpu":
        layout = "F" if schedule == "pattern" and BY_CODE[plan.pattern or "RUD"].storage == "columns" else "C"
        M = np.zeros(shape, dtype=rec.dtype, order=layout)
        if schedule == "pattern":
            steps = plan.pattern_steps or 0
            timing = cpu.pattern_fill(rec, M, BY_CODE[plan.pattern or ""].index)
        elif schedule == "stages":
            cells, ptr = _stage_arrays(plan)
            steps = len(ptr) - 1
            timing = cpu.order_fill(rec, M, cells, ptr, parallel=True)
        elif plan.sweep is not None:
            steps = rec.cells
            timing = cpu.sweep_fill(rec, M, plan.sweep, checked=False)[1]
        else:
            assert plan.analysis is not None
            cells = plan.analysis.trace.cells
            steps = rec.cells
            timing = cpu.order_fill(rec, M, cells, np.array([0, len(cells)]), parallel=False)
        return M, steps, timing.run_s, 0.0, 0.0, timing.compile_s, ""
    from runtime import cuda

    if schedule == "pattern":
        p = BY_CODE[plan.pattern or ""]
        layout = "F" if p.storage == "columns" else "C"
        res, why = _modelled_fill(rec, plan, layout, copy_back) if _light(plan) else (None, "")
        if res is None:
            res = cuda.pattern_fill(rec, p.index, p.steps((shape[0], shape[1])), layout,
                                    copy_back)
        if why:
            res = replace(res, kernel=f"{res.kernel}; {why}")
    elif schedule == "tiled":
        res = cuda.tiled_fill(rec, BY_CODE[plan.pattern or ""].index, TILE, copy_back)
    elif schedule == "stages":
        cells, ptr = _stage_arrays(plan)
        res = cuda.stage_fill(rec, cells, ptr, copy_back)
    elif schedule == "ready":
        cells, _ = _stage_arrays(plan)
        g = plan.analysis.graph if plan.analysis is not None else None
        assert g is not None and g.cells is None  # the whole table: nodes are flat cells
        res = cuda.ready_fill(rec, cells, g.indptr, g.indices, copy_back)
    else:
        raise AssertionError(f"no cuda executor for schedule {schedule!r}")
    steps = (plan.pattern_steps or 0) if schedule in ("pattern", "tiled") else res.launches
    return res.table, steps, res.compute_s, res.h2d_s, res.d2h_s, res.compile_s, res.kernel


def _modelled_fill(rec: Recurrence, plan: Plan, layout: str,
                   copy_back: bool) -> tuple[Any, str]:
    """A light pattern fill on the GPU by the kernel the calibrated cost model picks
    (:mod:`runtime.costmodel`), and the model's note; ``None`` for the fill when the
    pick is a launch per step, or the pick needs the cell function's source and it cannot
    be rewritten."""
    from runtime import costmodel, cuda

    p = BY_CODE[plan.pattern or ""]
    choice = costmodel.choose(rec, p.code, plan.patterns or (), plan.pattern_steps or 0)
    try:
        if choice.kernel == "strips":
            return cuda.strip_fill(rec, BY_CODE[choice.frame or ""].index,
                                   copy_back=copy_back), choice.note()
        if choice.kernel == "bands":
            return (cuda.band_fill(rec, p.index, choice.frame, copy_back=copy_back),
                    choice.note())
        if choice.kernel == "cooperative":
            return cuda.cooperative_fill(rec, p.index, layout, copy_back, blocks=choice.blocks,
                                         unroll=costmodel.UNROLL), choice.note()
    except SourceUnavailable as exc:
        return None, f"{choice.note()}, but {exc}: a launch per step"
    return None, choice.note()


def _sweep_order(plan: Plan, shape: tuple[int, ...]) -> Iterator[int]:
    s = plan.sweep
    assert s is not None
    n, m = shape
    rows = range(n) if s.si > 0 else range(n - 1, -1, -1)
    cols = range(m) if s.sj > 0 else range(m - 1, -1, -1)
    if s.axis == 0:
        return (i * m + j for i in rows for j in cols)
    return (i * m + j for j in cols for i in rows)


def fill(
    rec: Recurrence,
    backend: str = "auto",
    schedule: str = "auto",
    verify: bool = False,
    copy_back: bool = True,
    plan: Plan | None = None,
    progress: Callable[[int], None] | None = None,
) -> FillResult:
    """Fill a recurrence's table.

    Parameters
    ----------
    rec : Recurrence
    backend : {"auto", "cpu", "cuda", "python"}
    schedule : {"auto", "pattern", "tiled", "stages", "sequential", "ready"}
    verify : bool
        Compare with the sequential reference (exact for integers, tight for floats).
    copy_back : bool
        Copy the table back from the device (``False``: keep it there; timings only).
    plan : Plan, optional
        A plan made earlier for this same recurrence (:func:`runtime.plan.make_plan`).

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def grid(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> r = fill(grid, backend="python", verify=True)
    >>> int(r.table[3, 4]), r.schedule, r.pattern, r.verified
    (35, 'pattern', 'NOSE', 'equals the sequential reference exactly')
    """
    name, why_backend = resolve_backend(backend)
    notes = [why_backend]
    if plan is not None and plan.recurrence is not rec:
        raise UsageError(f"the plan given was made for {plan.recurrence!r}, not {rec!r}: a plan "
                         "is only valid for the recurrence, size and data it was made for")
    if name == "cuda" and schedule == "sequential":
        raise UsageError("--schedule sequential runs on the cpu or python backend, not cuda")
    if name != "cuda" and schedule in ("ready", "tiled"):
        raise UsageError(f"--schedule {schedule} runs on the cuda backend")
    if name == "cuda":
        from runtime import cuda

        cuda.require()
    if name == "python":
        # the python backend is the reference itself: plan by tracing
        plan = plan or make_plan(rec, need_stages=True, progress=progress)
    elif plan is None:
        try:
            plan = make_plan(rec, need_stages=schedule in ("stages", "ready"), progress=progress)
        except CompileError as exc:
            if backend != "auto":
                raise
            notes.append(f"auto: falling back to the python backend: {exc}")
            name = "python"
            plan = make_plan(rec, need_stages=True, progress=progress)
    if schedule in ("stages", "ready") and plan.analysis is None:
        plan = make_plan(rec, need_stages=True, progress=progress)
    notes.extend(plan.notes)
    sched, why_schedule = _choose_schedule(schedule, plan, name)
    notes.append(why_schedule)
    try:
        table, steps, compute, h2d, d2h, jit, kernel = _execute(rec, name, sched, plan, copy_back)
    except CompileError as exc:
        if backend != "auto":
            raise
        notes.append(f"auto: falling back to the python backend: {exc}")
        name = "python"
        table, steps, compute, h2d, d2h, jit, kernel = _execute(rec, name, sched, plan, copy_back)
    if kernel:
        notes.append(f"kernel: {kernel}")
    verified = compare(table, plan.reference) if verify and table is not None else None
    return FillResult(table, name, sched, plan.pattern if sched in ("pattern", "tiled") else None, steps,
                      compute, h2d, d2h, plan.seconds, jit, tuple(notes), verified)
