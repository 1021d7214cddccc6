"""Which backend ``auto`` stands for, and which schedule a fill takes, each with the reason.

Backends: ``python`` (plain Python over a NumPy table, the reference), ``cpu`` (numba,
all cores for parallel schedules), ``cuda`` (numba.cuda).  Schedules: ``sequential``
(one cell at a time in a valid order), ``pattern`` (one parallel step per row, column or
diagonal), ``hyperplane`` (one parallel step per hyperplane ``pi . x = t``, any
dimension: :mod:`patterns.hyperplane`; a pattern's own ``pi`` where one matches),
``tiled`` (diagonal patterns: on cuda one persistent launch, cells in
registers or tiles in shared memory, ``auto``'s choice there for light cells; on cpu
tiles in the table's memory order, ``auto``'s choice there), ``stages``
(Algorithm 2: one parallel step per stage of the minimal sequence), ``ready``
(Algorithm 3, cuda only: one launch, each cell waits until its dependencies are done).
``auto`` picks cuda when a real GPU is usable, else cpu; and the pattern when one
matches, else a hyperplane when one is legal, else the stages.

Assumption: the plan (:class:`runtime.schedule.plan.Plan`) was made at the size filled.
"""

from __future__ import annotations

import os

import numpy as np

from depgraph.errors import NoPatternError, UsageError, setting
from patterns import BY_CODE, DIAGONAL_FLIPS, breaking_regions
from patterns.hyperplane import Shear
from runtime.backends.cpu import barrier_threads, tile_for
from runtime.backends.cuda import device
from runtime.schedule import cpu_model
from runtime.schedule.loop_trips import mean_iterations
from runtime.schedule.plan import Plan, shear_of

__all__ = ["BACKENDS", "SCHEDULES", "TILE", "TILE_MAX_CELL_S", "resolve_backend",
           "choose_schedule", "light"]

BACKENDS = ("auto", "cpu", "cuda", "python")
SCHEDULES = ("auto", "pattern", "hyperplane", "tiled", "stages", "sequential", "ready")
#: Tile side of the tiled diagonal fill.
TILE = 64
#: On the GPU, cells cheaper than this on one core (the checked sweep's time per cell)
#: are *light*: one launch per step would be launch-bound, so ``auto`` tiles a diagonal
#: pattern and the pattern fill runs every step in one cooperative launch; heavy cells
#: keep one launch per step, whose blocks use every thread (docs/benchmarks.md: light
#: cells filled many times faster that way, the matrix chain's heavy cells slower).
#: Judged from 65,536 cells on.
#: Among light-cell fills of a pattern the calibrated cost model
#: (:mod:`runtime.schedule.costmodel`) picks the kernel.
TILE_MAX_CELL_S = 50e-9


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
    ok, why = device.status()
    if ok and "simulator" not in why:
        return "cuda", f"auto: {why} is usable"
    return "cpu", f"auto: no usable GPU ({why}), so all CPU cores"


def light(plan: Plan) -> bool:
    """Whether the planning sweep found the cells light (``TILE_MAX_CELL_S``); on small
    tables call overhead dominates that timing, so they count as light.  A certificate's
    plan times no cell: its cells are light when straight-line code (no loop), as the
    cell IR reads them; so does a checked fill's."""
    if plan.cell_s is None and plan.method in ("certificate", "checked fill"):
        return plan.ir.straight
    return not (plan.cell_s is not None and plan.recurrence.cells >= 1 << 16
                and plan.cell_s >= TILE_MAX_CELL_S)


def choose_schedule(schedule: str, plan: Plan, backend: str) -> tuple[str, str]:
    """The schedule a fill takes on ``backend`` (``schedule`` as asked, or ``auto``'s
    pick), and why; ``NoPatternError`` when a pattern was asked for and none fits."""
    if schedule not in SCHEDULES:
        raise UsageError(f"unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    if schedule == "pattern" and plan.pattern is None:
        other = (f"; use {setting('schedule', 'hyperplane')} (pi = {plan.hyperplane.text()}) "
                 f"or {setting('schedule', 'stages')}" if plan.hyperplane is not None
                 else f"; use {setting('schedule', 'stages')}")
        if plan.regions is None:
            raise NoPatternError(
                f"no pattern applies: patterns are defined for 2-D tables and this one is "
                f"{plan.recurrence.ndim}-D{other}"
            )
        breaks = "; ".join(f"{c} by {', '.join(r)}" for c, r in breaking_regions(plan.regions).items())
        raise NoPatternError(
            f"no pattern matches: the reads fall in {', '.join(plan.regions)}, which break "
            f"every pattern ({breaks}){other}"
        )
    if schedule == "hyperplane" and plan.linear is None:
        raise NoPatternError(f"no hyperplane puts every read on an earlier step (the reads "
                             f"may form a cycle, or need a larger pi); use "
                             f"{setting('schedule', 'stages')}")
    if schedule == "tiled" and BY_CODE[plan.pattern or "RUD"].code not in DIAGONAL_FLIPS:
        raise UsageError(f"{setting('schedule', 'tiled')} is for the diagonal patterns (NOSE, "
                         f"SENO, SONE, NESO); this recurrence's pattern is {plan.pattern}")
    if schedule != "auto":
        return schedule, f"{schedule} schedule as asked"
    if plan.pattern in DIAGONAL_FLIPS and backend == "cuda" and light(plan) \
            and plan.method != "checked fill":  # the tiles do not check reads
        return "tiled", (f"auto: reads fall in {', '.join(plan.regions or ())}, pattern "
                         f"{plan.pattern} fits; its cells are light, so on the GPU its "
                         f"diagonals are filled in one persistent launch (cells in registers "
                         f"when the reads are the three nearest neighbours at constant "
                         f"offsets, else {TILE}x{TILE} tiles in shared memory) instead of "
                         f"one launch per diagonal of cells")
    fall = "may fall" if plan.method == "checked fill" else "fall"
    if backend == "cpu" and plan.sweep is not None and barrier_threads() == 1:
        return "sequential", ("auto: one CPU thread, so the sequential fill, row by row or "
                              "column by column in an order the reads allow")
    if backend == "cpu" and plan.pattern is not None and plan.sweep is not None:
        return _cpu_choice(plan, fall)
    if plan.pattern is not None:
        return "pattern", (f"auto: reads {fall} in {', '.join(plan.regions or ())}, pattern "
                           f"{plan.pattern} fits ({plan.pattern_steps} steps, no graph needed)")
    why = "the table is not 2-D" if plan.regions is None else "no pattern fits the reads"
    shape = plan.recurrence.shape
    if plan.hyperplane is not None:
        steps = plan.hyperplane.steps(shape)
        head = (f"auto: {why}; hyperplane pi = {plan.hyperplane.text()} puts every read on an "
                f"earlier step ({steps:,} steps, no graph needed)")
        sheared = shear_of(plan, backend)
        if sheared is not None:
            head += (f"; sheared into a {'x'.join(map(str, sheared.box))} table "
                     + ("whose reads NOSE allows" if sheared.frame == "NOSE" else
                        "whose steps are its first axis's slabs"))
        if backend == "cpu":
            widths = plan.hyperplane.widths(shape)
            return _cpu_steps_choice(plan, head, "hyperplane", widths[widths > 0],
                                     "the hyperplanes", sheared)
        return "hyperplane", head
    if backend == "cpu" and plan.analysis is not None:
        return _cpu_steps_choice(plan, f"auto: {why}", "stages",
                                 np.diff(plan.analysis.stages.ptr), "the stages")
    return "stages", f"auto: {why}, so the minimal stage sequence (Algorithm 2)"


def _crowded(threads: int) -> str:
    """Why ``threads`` threads would not each have a core (other work keeps some of this
    process's cores busy: :func:`runtime.schedule.cpu_model.busy_cores`), or ``""``."""
    cores = len(os.sched_getaffinity(0))
    busy = cpu_model.busy_cores()
    free = max(cores - busy, 1)
    if not busy or threads <= free:
        return ""
    hint = f" (ask for {free} threads to fill on the free ones)" if free > 1 else ""
    return (f"other work keeps {busy} of the {cores} cores busy, so {threads} threads "
            f"would wait at every barrier for one without a core{hint}")


def _cell_cost(plan: Plan, threads: int) -> tuple[cpu_model.CpuCosts, float, str]:
    """This machine's CPU costs on ``threads`` threads, the seconds of ``plan``'s cell
    (its planning sweep's measure, else the light cell's, for a cell with a loop times
    one more than its mean iterations where the source fixes them, else ``LOOP_CELLS``),
    and the words saying which."""
    costs = cpu_model.calibration(threads)
    if plan.cell_s is not None:
        cell, source = plan.cell_s, "measured by the planning sweep"
    elif plan.ir.straight:
        cell, source = costs.cell_s, "a light cell calibrated"
    else:
        loops = mean_iterations(plan.ir, plan.recurrence.shape)
        light = cpu_model.LOOP_CELLS if loops is None else 1 + loops
        cell = costs.cell_s * light
        source = (f"a light cell calibrated x {cpu_model.LOOP_CELLS}, for its loop"
                  if loops is None else
                  f"a light cell calibrated x {light:.3g}, for its loops' mean iterations")
    basis = (f"{threads} threads, a cell {cell * 1e9:.3g} ns ({source}), a parallel step "
             f"{costs.barrier_s * 1e6:.3g} us")
    return costs, cell, basis


def _cpu_steps_choice(plan: Plan, head: str, schedule: str, widths: np.ndarray,
                      what: str, sheared: Shear | None = None) -> tuple[str, str]:
    """``auto``'s CPU fill without a pattern: ``schedule`` (the stages of Algorithm 2, or
    the hyperplanes), whose steps hold ``widths`` cells, where
    :mod:`runtime.schedule.cpu_model` predicts it at most its margin of the sequential
    fill on the threads at hand, else the sequential fill; and why (``head`` first).
    With ``sheared``, the hyperplanes are filled as the tiles of the sheared table (its
    cells outside the table filled too, each a test and a store), then gathered back
    into a new table (its first touch again, and a pass over it)."""
    threads = barrier_threads()
    if threads == 1:
        return "sequential", f"{head}; one CPU thread, so the sequential fill"
    if crowded := _crowded(threads):
        return "sequential", f"{head}; {crowded}; so the sequential fill"
    costs, cell, basis = _cell_cost(plan, threads)
    touch = plan.recurrence.cells * plan.recurrence.dtype.itemsize * costs.touch_s
    if sheared is not None:
        parallel = cpu_model.predict(costs, sheared.box, "NOSE", cell, threads,
                                     plan.recurrence.dtype.itemsize,
                                     plan.ir.straight)["tiled"] + 2 * touch
    else:
        # a 2-D hyperplane's step crosses rows (a k-D one's sequential fill takes its order)
        apart = cpu_model.SCATTERED if (schedule == "hyperplane"
                                        and plan.recurrence.ndim == 2) else 1
        parallel = cpu_model.predict_steps(costs, widths, cell * apart, threads) + touch
        if apart > 1:
            basis += f", a cell of a step {apart}x (its cells a row apart)"
    sequential = plan.recurrence.cells * cell + touch
    shown = (f"{what} ({len(widths)}) {parallel * 1e3:.3g} ms, sequential "
             f"{sequential * 1e3:.3g} ms")
    if parallel > cpu_model.MARGIN * sequential:
        return "sequential", (f"{head}; predicted on {basis}: {shown}; {what} do not beat "
                              f"the sequential fill by enough, so the sequential fill")
    done = "the minimal stage sequence (Algorithm 2)" if schedule == "stages" else what
    return schedule, f"{head}; predicted on {basis}: {shown}; so {done}"


def _cpu_choice(plan: Plan, fall: str) -> tuple[str, str]:
    """``auto``'s CPU fill of a pattern, by the times :mod:`runtime.schedule.cpu_model`
    predicts on the threads at hand: the faster of the pattern fill and (diagonal
    patterns) the tiles, where it beats the sequential fill by the model's margin, else
    the sequential fill; and why, with the predictions."""
    threads = barrier_threads()
    head = f"auto: reads {fall} in {', '.join(plan.regions or ())}, pattern {plan.pattern} fits"
    if crowded := _crowded(threads):
        return "sequential", f"{head}; {crowded}; so the sequential fill"
    costs, cell, basis = _cell_cost(plan, threads)
    n, m = plan.recurrence.shape
    pred = cpu_model.predict(costs, (int(n), int(m)), plan.pattern or "", cell, threads,
                             plan.recurrence.dtype.itemsize, plan.ir.straight)
    best = min((k for k in pred if k != "sequential"), key=pred.__getitem__)
    shown = ", ".join(f"{'tiles' if k == 'tiled' else k} {pred[k] * 1e3:.3g} ms"
                      for k in sorted(pred, key=pred.__getitem__))
    if pred[best] > cpu_model.MARGIN * pred["sequential"]:
        return "sequential", (f"{head}; predicted on {basis}: {shown}; no parallel fill "
                              f"beats the sequential one by enough, so the sequential fill")
    rows, cols = tile_for(int(m), threads, plan.ir.straight)
    what = (f"{rows}x{cols} tiles, each in the table's memory order, a barrier "
            f"between diagonals of tiles" if best == "tiled" else
            f"the pattern fill, {plan.pattern_steps} steps, a barrier between steps")
    return best, f"{head}; predicted on {basis}: {shown}; so {what}"
