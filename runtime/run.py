"""``fill``: plan -> choose -> backend (``depgraph run``); a score-only fill is
:mod:`runtime.score_only`'s.

A fill reads the cell once (:func:`depgraph.frontend.ir.cell_ir`), plans at the size it
runs (:mod:`runtime.schedule.plan`: the reads are checked at this size, so a schedule
never rests on reads seen at another size or with other data), chooses the backend and
the schedule (:mod:`runtime.schedule.choose`, on the GPU the kernel by the cost model,
:mod:`runtime.schedule.costmodel`) and runs it (:mod:`runtime.backends`).  Every choice
is explained in ``FillResult.notes``.  Nothing here prints: long work is reported
through the ``progress`` reporter the caller gives (:data:`depgraph.model.Progress`).

Assumption: the cell function is deterministic, so the same inputs give the same reads.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from depgraph import memory
from depgraph.errors import (
    CompileError,
    RecurrenceError,
    TooLargeError,
    UsageError,
    setting,
)
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.provenance import Solution
from depgraph.frontend.provenance import solution as recover
from depgraph.frontend.source import SourceUnavailable
from depgraph.memory import format_bytes
from depgraph.model import Progress, Recurrence
from patterns import BY_CODE, step_line
from patterns.hyperplane import Hyperplane
from runtime.backends import cpu, python
from runtime.backends.shear import sheared_recurrence
from runtime.backends.compiled_walk import compiled_walk
from runtime.backends.diagnose import explain
from runtime.backends.cuda import bands, hyperplanes, steps, strips, tiles
from runtime.backends.cuda.cells import Checks
from runtime.backends.cuda.device import DeviceFill, open_early, require
from runtime.backends.cuda.recovery import DeviceCells
from runtime.backends.walk import value_bounds
from runtime.schedule import costmodel, cpu_model
from runtime.schedule.choose import TILE, choose_schedule, light, resolve_backend
from runtime.schedule.plan import Plan, certified_plan, in_fill_plan, make_plan, shear_of

__all__ = ["FillResult", "fill", "compare"]


@dataclass(frozen=True, eq=False)
class FillResult:
    """One fill: the table (when copied back) and what it cost.

    Attributes
    ----------
    table : ndarray or None
        The filled table (``None`` when kept on the device).
    backend, schedule : str
        Where and how it was filled (``auto`` resolved).
    pattern : str or None
        The pattern followed, for the pattern and tiled schedules.
    steps : int
        Parallel steps (or launches, or cells for a sequential fill).
    compute_s : float
        The fill itself, in seconds.
    h2d_s, d2h_s : float
        Host-to-device and device-to-host copies (0 on the host backends).
    plan_s : float
        Deciding the schedule at this size (checked sweep or trace).
    compile_s : float
        numba compiling the kernels (0 once they are cached).
    notes : tuple of str
        Why each choice was made, and the GPU kernel's description.
    verified : str or None
        How the table agrees with the sequential reference, when asked.
    device_table : device array or None
        The table left on the GPU when it was not copied back (``__cuda_array_interface__``:
        CuPy and PyTorch take it without a copy).
    target, value :
        The cell the recurrence names as its answer (``target=`` of
        :func:`depgraph.model.recurrence`), else the last cell the schedule fills (the
        pattern's, else the stages'), and its value.
    pi : tuple of int or None
        The linear schedule ``t(x) = pi . x`` followed (pattern, tiled and hyperplane
        schedules).
    solution : Solution or None
        The cells whose reads decided the target's value, when asked
        (:func:`depgraph.frontend.provenance.solution`).
    solution_s : float
        Recovering it (on the host; from the device's table a tile at a time when the
        table stayed there: :class:`runtime.backends.cuda.recovery.DeviceCells`).
    gpu_start_s : float
        Making the GPU usable: numba.cuda's import, and the wait for the driver's start
        and the device's context where the fill needs them, begun on a thread of their own
        while the fill plans (:func:`runtime.backends.cuda.device.open_early`); 0 on the
        host backends.
    calibrate_s : float
        Measuring a cost model (the CPU's or the GPU's), once a machine: 0 when kept.
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
    device_table: Any = None
    target: tuple[int, ...] | None = None
    value: Any = None
    pi: tuple[int, ...] | None = None
    solution: Solution | None = None
    solution_s: float = 0.0
    gpu_start_s: float = 0.0
    calibrate_s: float = 0.0

    @property
    def cells(self) -> int:
        return self.table.size if self.table is not None else 0

    def to_json(self, shape: tuple[int, ...]) -> dict[str, Any]:
        """The fields of ``depgraph run --json`` for a table of ``shape``."""
        cells = int(np.prod(shape))
        return {
            "shape": list(shape),
            "cells": cells,
            "backend": self.backend,
            "schedule": self.schedule,
            "pattern": self.pattern,
            "pi": None if self.pi is None else list(self.pi),
            "steps": self.steps,
            "compute_s": self.compute_s,
            "h2d_s": self.h2d_s,
            "d2h_s": self.d2h_s,
            "plan_s": self.plan_s,
            "compile_s": self.compile_s,
            "gpu_start_s": self.gpu_start_s,
            "calibrate_s": self.calibrate_s,
            "cells_per_s": cells / self.compute_s if self.compute_s > 0 else None,
            "verified": self.verified,
            "on_device": self.device_table is not None,
            "target": None if self.target is None else list(self.target),
            "value": self.value.item() if isinstance(self.value, np.generic) else self.value,
            "notes": list(self.notes),
        }


def _mismatch(table: np.ndarray, reference: np.ndarray, bad: np.ndarray) -> RecurrenceError:
    cell = tuple(int(k) for k in np.argwhere(bad)[0])
    return RecurrenceError(f"verify failed: cell {cell} is {table[cell].item()!r}, the "
                           f"sequential reference has {reference[cell].item()!r}")


def compare(table: np.ndarray, reference: np.ndarray) -> str:
    """Compare a fill with the sequential reference: exact for integers, tight for floats.

    Returns a sentence saying how they agree; raises ``RecurrenceError`` naming the first
    cell that differs.

    Examples
    --------
    >>> compare(np.arange(4), np.arange(4))
    'equals the sequential reference exactly'
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


def _stage_arrays(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """The stage-ordered flat cells and the stage boundaries of a traced plan."""
    a = plan.analysis
    if a is None:
        raise ValueError("the plan has no stages: make it with need_stages=True")
    return a.graph.flat_cells()[a.stages.order], a.stages.ptr


#: What one fill on a backend returns: the table (on the host, or the device array
#: holding it when not copied back), steps, compute_s, h2d_s, d2h_s, compile_s and the
#: GPU kernel's description ("" elsewhere).
_Run = tuple[Any, int, float, float, float, float, str]


def _python(rec: Recurrence, schedule: str, plan: Plan) -> _Run:
    """One fill on the python backend."""
    order: Iterable[int]
    if schedule == "pattern":
        order, steps = python.pattern_order(plan.pattern or "", rec.shape), plan.pattern_steps or 0
    elif schedule == "hyperplane" or (schedule == "sequential" and plan.sweep is None
                                       and plan.analysis is None):
        assert plan.linear is not None  # choose_schedule checked it, or a plan has an order
        order = plan.linear.order(rec.shape)[0].tolist()
        steps = plan.linear.steps(rec.shape) if schedule == "hyperplane" else rec.cells
    elif schedule == "stages":
        cells, ptr = _stage_arrays(plan)
        order, steps = cells.tolist(), len(ptr) - 1
    elif plan.analysis is not None:
        order, steps = plan.analysis.trace.cells.tolist(), rec.cells
    else:
        assert plan.sweep is not None  # a checked sweep's plan has its order
        order, steps = python.sweep_order(plan.sweep, rec.shape), rec.cells
    t = time.perf_counter()
    table = python.python_fill(rec, order)
    return table, steps, time.perf_counter() - t, 0.0, 0.0, 0.0, ""


class _ChecksFailed(Exception):
    """A fill that checks its own reads found one it could not vouch for (a read out of
    bounds or of a cell its schedule had not filled, a value that does not fit): its
    table is not used."""


def _checked(ck: np.ndarray, allowed: Iterable[str]) -> None:
    """``_ChecksFailed`` unless a checked CPU fill's ``ck`` saw only reads in ``allowed``
    regions, none out of bounds (of the table or of an argument), and no value that
    misfits."""
    outside = set(cpu.regions_of_flags(ck)) - set(allowed)
    if outside or ck[cpu.OOB] or ck[cpu.MISFIT] or ck[cpu.ARG]:
        raise _ChecksFailed()


def _cpu(rec: Recurrence, schedule: str, plan: Plan) -> _Run:
    """One fill on the cpu backend; a plan made for a checked fill runs the cell with its
    reads and values checked (``_ChecksFailed`` when one fails)."""
    ir = plan.ir
    checked = plan.method == "checked fill"
    columns = schedule == "pattern" and BY_CODE[plan.pattern or "RUD"].storage == "columns"
    M = np.zeros(rec.shape, dtype=rec.dtype, order="F" if columns else "C")
    # a parallel fill's threads would fault in the new table's pages together (a chunk of
    # every row each, or bands of tile rows sharing a huge page): touched first, apart,
    # and timed with the fill
    touch = (cpu.first_touch(rec, M) if schedule in ("pattern", "tiled")
             and cpu.barrier_threads() > 1 else cpu.Timing(0.0, 0.0))
    if schedule in ("pattern", "tiled"):
        steps = plan.pattern_steps or 0
        p = BY_CODE[plan.pattern or ""]
        by = cpu.pattern_fill if schedule == "pattern" else cpu.tiled_fill
        ck, timing = by(rec, ir, M, p.index, checked=checked, trusted=plan.trusted)
        if checked:
            _checked(ck, p.allowed)
    elif schedule == "hyperplane" or (schedule == "sequential" and plan.sweep is None
                                       and plan.linear is not None):
        assert plan.linear is not None  # choose_schedule checked it
        parallel = schedule == "hyperplane"
        steps = plan.linear.steps(rec.shape) if parallel else rec.cells
        ck, timing = cpu.hyperplane_fill(rec, ir, M, plan.linear, parallel, checked,
                                         plan.trusted)
        if checked and (ck[cpu.OOB] or ck[cpu.MISFIT] or ck[cpu.ARG]):
            raise _ChecksFailed()
    elif schedule == "stages":
        cells, ptr = _stage_arrays(plan)
        steps = len(ptr) - 1
        timing = cpu.order_fill(rec, ir, M, cells, ptr, parallel=True)
    elif plan.sweep is not None:
        steps = rec.cells
        ck, timing = cpu.sweep_fill(rec, ir, M, plan.sweep, checked=checked)
        if checked:
            _checked(ck, plan.sweep.covers)
    else:
        assert plan.analysis is not None  # no sweep: the plan was traced
        cells = plan.analysis.trace.cells
        steps = rec.cells
        timing = cpu.order_fill(rec, ir, M, cells, np.array([0, len(cells)]), parallel=False)
    return (M, steps, touch.run_s + timing.run_s, 0.0, 0.0, touch.compile_s + timing.compile_s,
            "")


def _cuda(rec: Recurrence, schedule: str, plan: Plan, copy_back: bool,
          progress: Progress | None) -> _Run:
    """One fill on the cuda backend."""
    ir, shape = plan.ir, rec.shape
    if schedule == "pattern" and plan.method == "checked fill":
        res = _checked_cuda(rec, plan, copy_back)
    elif schedule == "pattern":
        p = BY_CODE[plan.pattern or ""]
        layout = "F" if p.storage == "columns" else "C"
        res, why = _modelled_fill(rec, plan, layout, copy_back, progress) if light(plan) \
            else (None, "")
        if res is None:
            res = steps.pattern_fill(rec, p.index, p.steps((shape[0], shape[1])), layout,
                                     copy_back)
        if why:
            res = replace(res, kernel=f"{res.kernel}; {why}")
    elif schedule == "hyperplane":
        res = _hyperplane_cuda(rec, plan, copy_back)
    elif schedule == "tiled":
        res = tiles.tiled_fill(rec, ir, BY_CODE[plan.pattern or ""].index, TILE, copy_back,
                               predicted_s=costmodel.strip_seconds(rec, ir))
    elif schedule == "stages":
        cells, ptr = _stage_arrays(plan)
        res = steps.stage_fill(rec, cells, ptr, copy_back)
    else:
        cells, _ = _stage_arrays(plan)
        g = plan.analysis.graph if plan.analysis is not None else None
        assert g is not None and g.cells is None  # the whole table: nodes are flat cells
        res = steps.ready_fill(rec, ir, cells, g.indptr, g.indices, copy_back)
    count = ((plan.pattern_steps or 0) if schedule in ("pattern", "tiled") else
             plan.linear.steps(shape) if schedule == "hyperplane" and plan.linear else
             res.launches)
    return (res.table if res.table is not None else res.device, count, res.compute_s,
            res.h2d_s, res.d2h_s, res.compile_s, res.kernel)


def _checked_cuda(rec: Recurrence, plan: Plan, copy_back: bool) -> DeviceFill:
    """A pattern fill on the GPU whose cell checks its reads and values
    (:class:`runtime.backends.cuda.cells.Checks`): light cells in one cooperative launch,
    others a launch per step; ``_ChecksFailed`` when a check failed."""
    p = BY_CODE[plan.pattern or ""]
    layout = "F" if p.storage == "columns" else "C"
    count = plan.pattern_steps or 0
    checks = Checks(plan.ir, tuple(sorted(p.allowed)), value_bounds(rec, plan.ir, count),
                    trusted=plan.trusted)
    res = None
    try:
        if light(plan):
            try:
                res = steps.cooperative_fill(rec, plan.ir, p.index, layout, copy_back,
                                             unroll=costmodel.UNROLL, checks=checks)
            except SourceUnavailable:  # cells its loads past L1 cannot read
                pass
        if res is None:
            res = steps.pattern_fill(rec, p.index, count, layout, copy_back, checks)
    except RecurrenceError:  # a launch that failed (the simulator's compile errors too)
        raise _ChecksFailed() from None
    assert res.checks is not None
    if res.checks[0]:
        raise _ChecksFailed()
    return res


def _hyperplane_steps(rec: Recurrence, ir: CellIR, found: Hyperplane, copy_back: bool,
                      checks: Checks | None, cooperative: bool) -> DeviceFill:
    """A GPU fill by hyperplane ``found``: with ``cooperative`` (light cells), every step
    in one cooperative launch where the cells can be read past L1, else a launch per
    step."""
    if cooperative:
        try:
            return hyperplanes.hyperplane_fill(rec, ir, found, copy_back, checks,
                                               cooperative=True)
        except SourceUnavailable:  # cells its loads past L1 cannot read
            pass
    return hyperplanes.hyperplane_fill(rec, ir, found, copy_back, checks)


def _hyperplane_cuda(rec: Recurrence, plan: Plan, copy_back: bool) -> DeviceFill:
    """A fill by the plan's hyperplane on the GPU (:func:`_hyperplane_steps`); the cell
    checks its reads and values for a plan made for a checked fill (``_ChecksFailed``
    when a check failed)."""
    found = plan.linear
    assert found is not None  # choose_schedule checked it
    checks = (Checks(plan.ir, (), value_bounds(rec, plan.ir, found.steps(rec.shape)), found.pi,
                     trusted=plan.trusted) if plan.method == "checked fill" else None)
    return _checked_steps(rec, plan.ir, found, copy_back, checks, light(plan))


def _checked_steps(rec: Recurrence, ir: CellIR, found: Hyperplane, copy_back: bool,
                   checks: Checks | None, cooperative: bool) -> DeviceFill:
    """:func:`_hyperplane_steps`, whose failed checks or launch raise ``_ChecksFailed``
    where the fill was to check its reads (``checks``), else, the reads being proven,
    the error: a launch's own, or one saying a read the plan proved could not fail
    did (a cooperative fill's own checks)."""
    try:
        res = _hyperplane_steps(rec, ir, found, copy_back, checks, cooperative)
    except RecurrenceError:  # a launch that failed (the simulator's compile errors too)
        if checks is None:
            raise
        raise _ChecksFailed() from None
    if res.checks is not None and res.checks[0]:
        if checks is None:
            raise RecurrenceError("a read of the hyperplane fill left the table or its order, "
                                  "which the plan had proven impossible")
        raise _ChecksFailed()
    return res


def _modelled_fill(rec: Recurrence, plan: Plan, layout: str, copy_back: bool,
                   progress: Progress | None) -> tuple[Any, str]:
    """A light pattern fill on the GPU by the kernel the calibrated cost model picks
    (:mod:`runtime.schedule.costmodel`), and the model's note; ``None`` for the fill when
    the pick is a launch per step, or the pick needs the cell function's source and it
    cannot be rewritten."""
    p = BY_CODE[plan.pattern or ""]
    choice = costmodel.choose(rec, plan.ir, p.code, plan.patterns or (), plan.pattern_steps or 0,
                              progress=progress)
    try:
        if choice.kernel == "strips":
            return strips.strip_fill(rec, plan.ir, BY_CODE[choice.frame or ""].index,
                                     copy_back=copy_back,
                                     predicted_s=dict(choice.predicted)["strips"]), choice.note()
        if choice.kernel == "bands":
            return (bands.band_fill(rec, plan.ir, p.index, choice.frame, copy_back=copy_back),
                    choice.note())
        if choice.kernel == "cooperative":
            return steps.cooperative_fill(rec, plan.ir, p.index, layout, copy_back,
                                          blocks=choice.blocks, unroll=costmodel.UNROLL), \
                choice.note()
    except SourceUnavailable as exc:
        return None, f"{choice.note()}, but {exc}: a launch per step"
    return None, choice.note()


def _sheared(rec: Recurrence, backend: str, plan: Plan, copy_back: bool,
             progress: Progress | None) -> _Run | None:
    """A fill by the plan's hyperplane as a fill of the table sheared for it
    (:mod:`runtime.backends.shear`), then the cells gathered back: a 2-D table's by the
    pattern kernels (NOSE), a k-D table's on the GPU by its slabs (each step contiguous),
    each read checked to be of a cell of the table; ``None`` where the plan takes no
    shear (:func:`runtime.schedule.plan.shear_of`); ``_ChecksFailed`` when a check
    failed; on the GPU, ``TooLargeError`` before any work when the sheared table and
    the table gathered from it do not fit its free memory."""
    sh = shear_of(plan, backend)
    if sh is None:
        return None
    assert plan.hyperplane is not None  # shear_of checked it
    if backend == "cuda":  # the sheared table is larger than the table, and both are held
        hyperplanes.check_sheared_fits(rec, sh)
    sheared = sheared_recurrence(rec, plan.ir, sh)
    if sh.frame == "NOSE":
        inner = _fill(sheared, backend, "auto", False, False, None, progress)
        kept = inner.table if inner.table is not None else inner.device_table
        how, fill_s = inner.pattern or inner.schedule, inner.compute_s
        h2d, jit = inner.h2d_s, inner.compile_s
        said = "; ".join(n for n in inner.notes if n.startswith(("auto", "kernel")))
    else:
        res = _slab_fill(sheared, plan, sh)
        kept, how, fill_s, h2d, jit, said = (res.device, "its slabs", res.compute_s,
                                             res.h2d_s, res.compile_s, res.kernel)
    if backend == "cuda":
        table, unjit, gather, d2h = hyperplanes.unshear_fill(rec, kept, sh, copy_back)
    else:
        table, timing = cpu.unshear_fill(rec, kept, sh)
        unjit, gather, d2h = timing.compile_s, timing.run_s, 0.0
    note = (f"sheared (rows {sh.rows}) into a {'x'.join(map(str, sh.box))} table, filled by "
            f"{how} ({fill_s * 1e3:.3g} ms; {said}), the cells gathered back in "
            f"{gather * 1e3:.3g} ms")
    return (table, plan.hyperplane.steps(rec.shape), fill_s + gather, h2d, d2h, jit + unjit,
            note)


def _slab_fill(sheared: Recurrence, plan: Plan, sh: Any) -> DeviceFill:
    """The GPU fill of a k-D table's slab shear, one step a slab (light cells in one
    cooperative launch); unless a certificate proves the reads of the plan's table (so
    of the sheared one), each read checked to be in the sheared table, on an earlier
    slab and of a cell of the original table."""
    ir = cell_ir(sheared)
    first = Hyperplane((1,) + (0,) * (sheared.ndim - 1))
    checks = (None if plan.method == "certificate" else
              Checks(ir, (), value_bounds(sheared, ir, first.steps(sh.box)), first.pi, sh))
    return _checked_steps(sheared, ir, first, False, checks, light(plan))


def _execute(rec: Recurrence, backend: str, schedule: str, plan: Plan, copy_back: bool,
             progress: Progress | None) -> _Run:
    """Run one fill of ``plan`` on ``backend`` by ``schedule``."""
    if backend == "python":
        return _python(rec, schedule, plan)
    if schedule == "hyperplane":
        sheared = _sheared(rec, backend, plan, copy_back, progress)
        if sheared is not None:
            return sheared
    if backend == "cpu":
        return _cpu(rec, schedule, plan)
    return _cuda(rec, schedule, plan, copy_back, progress)


def _check_host_memory(rec: Recurrence, reference: bool, table: bool) -> None:
    """``TooLargeError`` before any work when the tables a fill holds on the host (the
    sequential ``reference`` the plan checks the reads with, the ``table`` filled) do
    not fit in the memory available."""
    held = [what for what, needed in (("the sequential reference the plan checks the reads "
                                       "with", reference), ("the table filled", table)) if needed]
    need = len(held) * rec.cells * rec.dtype.itemsize
    free = memory.available_memory()
    if need > free:
        raise TooLargeError(
            f"filling {rec.name!r} at shape {rec.shape} holds {len(held)} {rec.dtype} "
            f"table(s) in memory ({' and '.join(held)}): {format_bytes(need)}, more than the "
            f"{format_bytes(free)} available; fill a smaller size, or keep only the score "
            f"({setting('score', True)}: O(n) memory)")


def fill(
    rec: Recurrence,
    backend: str = "auto",
    schedule: str = "auto",
    verify: bool = False,
    copy_back: bool = True,
    plan: Plan | None = None,
    progress: Progress | None = None,
    threads: int | None = None,
    solution: bool | Sequence[int] = False,
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
        Copy the table back from the device (``False``: keep it there, as
        ``FillResult.device_table``; ``verify`` and a recurrence whose ``target`` is a
        function of the table copy it back all the same).
    plan : Plan, optional
        A plan made earlier for this same recurrence (:func:`runtime.schedule.plan.make_plan`).
    progress : Progress, optional
        Reports long work (tracing, a first calibration of the GPU cost model).
    threads : int, optional
        CPU threads of the cpu backend (default: the cores this process may use);
        ``UsageError`` outside 1 to numba's thread count.
    solution : bool or cell
        Recover the cells whose reads decided the value of this cell (``True``: of
        ``FillResult.target``) as ``FillResult.solution``; a table kept on the device is
        read there, only the tiles the solution crosses coming back.

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
    measured = cpu_model.measuring_s()
    with cpu.thread_count(threads):
        res = _fill(rec, backend, schedule, verify, copy_back or callable(rec.target), plan,
                    progress)
    res = replace(res, calibrate_s=cpu_model.measuring_s() - measured)
    if solution is False:
        return res
    t0 = time.perf_counter()
    table = DeviceCells(rec, res.device_table) if res.table is None else res.table
    found = recover(rec, table, res.target if solution is True else tuple(solution),
                    walker=compiled_walk(rec))
    notes = res.notes + ((f"solution read on the device: {table.tiles} tiles of the table "
                          f"({format_bytes(table.bytes)}) came back",)
                         if isinstance(table, DeviceCells) else ())
    return replace(res, solution=found, solution_s=time.perf_counter() - t0, notes=notes)


def _fill(rec: Recurrence, backend: str, schedule: str, verify: bool, copy_back: bool,
          plan: Plan | None, progress: Progress | None) -> FillResult:
    """:func:`fill` on the threads it was given."""
    open_early(backend)  # the driver starts while this thread plans
    name, why_backend = resolve_backend(backend)
    notes = [why_backend]
    if plan is not None and plan.recurrence is not rec:
        raise UsageError(f"the plan given was made for {plan.recurrence!r}, not {rec!r}: a plan "
                         "is only valid for the recurrence, size and data it was made for")
    if name == "cuda" and schedule == "sequential":
        raise UsageError(f"{setting('schedule', 'sequential')} runs on the cpu or python "
                         "backend, not cuda")
    if name != "cuda" and schedule == "ready":
        raise UsageError(f"{setting('schedule', schedule)} runs on the cuda backend")
    if name == "python" and schedule == "tiled":
        raise UsageError(f"{setting('schedule', schedule)} runs on the cpu and cuda backends")
    started = time.perf_counter()
    if name == "cuda":
        require()  # numba.cuda, and whether a GPU is usable, before any planning
    gpu_start_s = time.perf_counter() - started
    copy_back = copy_back or verify
    ir = plan.ir if plan is not None else cell_ir(rec)
    tried = False  # whether a certificate was asked for already
    if plan is None and name != "python" and schedule not in ("stages", "ready"):
        proven, tried = certified_plan(rec, ir), True
        if isinstance(proven, Plan):
            plan = proven
        else:
            notes.append(f"reads not proven for every shape: {proven}")
        if plan is None and (schedule in ("auto", "pattern", "hyperplane") or (
                name == "cpu" and schedule in ("sequential", "tiled"))):
            checked = in_fill_plan(rec, ir)
            if isinstance(checked, Plan):
                plan = checked
            else:
                notes.append(f"the fill cannot check its own reads: {checked}")
    if name != "python":  # the trace checks its own memory
        _check_host_memory(rec, plan is None or (verify and plan.made_reference is None),
                           name == "cpu" or copy_back)
    tracing = progress("tracing cells", rec.cells) if progress else None
    if name == "python":
        # the python backend is the reference itself: plan by tracing
        plan = plan or make_plan(rec, ir, need_stages=True, progress=tracing)
    elif plan is None:
        plan, name = _plan(rec, ir, schedule, backend, name, notes, tracing, tried)
    notes.extend(plan.notes)
    plan, sched = _scheduled(schedule, plan, name, notes, tracing)
    started = time.perf_counter()
    if name == "cuda":
        require().current_context()  # made here, not inside a phase the fill times
    gpu_start_s += time.perf_counter() - started
    try:
        try:
            table, steps, compute, h2d, d2h, jit, kernel = _execute(rec, name, sched, plan,
                                                                    copy_back, progress)
        except (_ChecksFailed, CompileError) as exc:
            if plan.method != "checked fill":
                raise
            # the checked sweep (else the trace) finds and names what failed, or why the
            # cell does not compile; if it finds nothing, its plan fills the table
            notes.append("the fill's own checks failed, so its table was not used"
                         if isinstance(exc, _ChecksFailed) else
                         f"the fill with checked reads did not compile ({exc})")
            plan, name = _plan(rec, ir, schedule, backend, name, notes, tracing, True)
            notes.extend(plan.notes)
            plan, sched = _scheduled(schedule, plan, name, notes, tracing)
            table, steps, compute, h2d, d2h, jit, kernel = _execute(rec, name, sched, plan,
                                                                    copy_back, progress)
    except CompileError as exc:
        if backend != "auto":
            raise explain(rec, exc) from None
        notes.append(f"auto: falling back to the python backend: {explain(rec, exc)}")
        name = "python"
        table, steps, compute, h2d, d2h, jit, kernel = _execute(rec, name, sched, plan,
                                                                copy_back, progress)
    if kernel:
        notes.append(f"kernel: {kernel}")
    if name == "cpu" and sched in ("pattern", "tiled", "stages", "hyperplane"):
        notes.append(f"filled on {cpu.barrier_threads()} CPU thread(s)")
    host = table if isinstance(table, np.ndarray) else None
    verified = compare(host, plan.reference) if verify and host is not None else None
    target = _last_cell(plan) if rec.target is None else rec.answer(host)
    value = (host if host is not None else table)[target] if table is not None else None
    linear = plan.linear if sched in ("pattern", "tiled", "hyperplane") else None
    return FillResult(host, name, sched, plan.pattern if sched in ("pattern", "tiled") else None,
                      steps, compute, h2d, d2h, plan.seconds, jit, tuple(notes), verified,
                      None if host is not None else table, target, value,
                      None if linear is None else linear.pi, gpu_start_s=gpu_start_s)


def _plan(rec: Recurrence, ir: CellIR, schedule: str, backend: str, name: str,
          notes: list[str], tracing: Any, tried: bool) -> tuple[Plan, str]:
    """A plan made before the fill (:func:`runtime.schedule.plan.make_plan`; ``tried``:
    a certificate was asked for already) and the backend that fills it: when the
    checked sweep's cell does not compile, the trace's plan, on the python backend under
    ``auto`` if numba refuses the cell itself (said in ``notes``)."""
    try:
        return make_plan(rec, ir, need_stages=schedule in ("stages", "ready"),
                         progress=tracing, certified=not tried), name
    except CompileError as exc:
        explained = explain(rec, exc)
        if explained is exc:  # the cell compiles alone, its checked reads do not
            notes.append(f"reads not checked by a compiled sweep ({exc}); traced instead")
            return make_plan(rec, ir, need_stages=True, progress=tracing), name
        if backend != "auto":
            raise explained from None
        notes.append(f"auto: falling back to the python backend: {explained}")
        return make_plan(rec, ir, need_stages=True, progress=tracing), "python"


def _scheduled(schedule: str, plan: Plan, backend: str, notes: list[str],
               tracing: Any) -> tuple[Plan, str]:
    """The schedule a fill of ``plan`` on ``backend`` takes (its reason added to
    ``notes``), and the plan it takes it with: traced again when the schedule needs
    stages the plan has not, or first when no pattern fits and the plan has neither a
    hyperplane nor the traced reads one may come from."""
    if schedule in ("auto", "hyperplane") and plan.linear is None and plan.analysis is None:
        plan = make_plan(plan.recurrence, plan.ir, need_stages=True, progress=tracing)
    sched, why = choose_schedule(schedule, plan, backend)
    notes.append(why)
    if sched in ("stages", "ready") and plan.analysis is None:
        plan = make_plan(plan.recurrence, plan.ir, need_stages=True, progress=tracing)
    return plan, sched


def _last_cell(plan: Plan) -> tuple[int, ...]:
    """The last cell of the plan's pattern order (2-D), else of its hyperplane's, else of
    its stage order, else the table's last cell: where a recurrence's answer usually is."""
    shape = plan.recurrence.shape
    if plan.pattern is not None:
        p = BY_CODE[plan.pattern]
        i0, j0, di, dj, count = step_line(p.index, p.steps((shape[0], shape[1])) - 1, *shape)
        return (i0 + (count - 1) * di, j0 + (count - 1) * dj)
    if plan.hyperplane is not None:  # the corner on the last hyperplane
        return tuple(0 if p < 0 else n - 1 for p, n in zip(plan.hyperplane.pi, shape))
    if plan.analysis is not None and plan.analysis.stages.order.size:
        return plan.analysis.graph.cell(int(plan.analysis.stages.order[-1]))
    return tuple(n - 1 for n in shape)
