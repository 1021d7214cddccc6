"""A score with its solution, in linear-ish memory on the CPU or the GPU (``depgraph run
--score --solution``, :func:`runtime.score_only.score` with ``solution``).

The table is never held: a pass by rows keeps a checkpoint of the rows each block of rows
reads above it, the target's value comes out of it, and the solution walk
(:func:`depgraph.frontend.provenance.solution`) refills the blocks it crosses from their
checkpoints (:mod:`runtime.backends.checkpoint`), so it finds the same cells and edges,
in the same order, as over the whole table.  The memory is the checkpoints and one
block, about ``2 sqrt(n R)`` rows for reads ``R`` rows up
(:func:`runtime.schedule.score_plan.block_plan`).  On the GPU, where every read is also at
or left of its cell's column, the pass goes by tiles and keeps each tile's edges, and the
walk refills the tiles it crosses (:mod:`runtime.backends.cuda.tile_checkpoints`).

Every read the compiled fills make is checked against the table's shape, and every value
that may not fit the table's dtype as it is stored (as a score's,
:func:`runtime.backends.walk.value_bounds`); reads the source does not put at constant
rows up (or left in their own row) are refused (``UsageError``), never refilled unchecked.

Assumptions: 2-D tables; the cell function is deterministic, so a block refilled from its
checkpoint holds the values the pass computed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from depgraph.errors import RecurrenceError, UsageError, setting
from depgraph.frontend.ir import cell_ir
from depgraph.frontend.provenance import solution, target_cell
from depgraph.memory import format_bytes
from depgraph.model import Progress, Recurrence
from patterns import BY_CODE
from runtime.backends.checkpoint import Blocks
from runtime.backends.compiled_walk import compiled_walk, prepare
from runtime.backends.rewrite import unchecked_subscript
from runtime.backends.cuda.tile_checkpoints import DeviceTiles
from runtime.backends.tile_edges import TILE_SIDES, HostTiles, TileCells
from runtime.backends.walk import (
    BlockPlan,
    Recovery,
    ScoreResult,
    value_bounds,
    whole_table_note,
)
from runtime.schedule.choose import resolve_backend
from runtime.schedule.score_plan import block_plan

__all__ = ["score_solution"]


def strip_made(blocks: Blocks | TileCells) -> bool:
    """Whether the register strips make ``blocks``' forward pass
    (:func:`runtime.backends.cuda.tile_checkpoints.strip_pass`)."""
    return isinstance(blocks, DeviceTiles) and blocks.strips is not None


def score_solution(rec: Recurrence, backend: str = "auto", target: Sequence[int] | None = None,
                   progress: Progress | None = None, block_rows: int | None = None
                   ) -> ScoreResult:
    """The score of ``rec``'s last cell and the solution from ``target``, in linear-ish
    memory (module docstring).  ``target`` defaults to the cell the recurrence names as
    its answer, else the last cell (``UsageError`` before the fill where its answer is a
    function of the whole table); a solution from the recurrence's answer makes the
    answer the score (``ScoreResult.answer``); ``block_rows``: the rows of a block (default about
    ``sqrt(n R)``; on the GPU, a tile's side); ``backend``: ``cpu`` (one core), ``cuda``
    (where every read is at or left of its cell's column) or ``auto`` (``cuda`` where a GPU
    is usable and the reads allow it);
    ``progress`` reports the cells filled, then the rows the walk has climbed.  The
    result's ``recovery`` holds the solution and the memory it took.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(6, 5), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else max(M[i - 1, j], M[i, j - 1]) + 1
    >>> r = score_solution(paths, block_rows=2)
    >>> int(r.value), r.recovery.solution.cells[:3], r.recovery.refills  # tiles of 2 x 2
    (9, ((5, 4), (4, 4), (3, 4)), 5)
    """
    if backend == "python":
        raise UsageError(f"the solution of a score is recovered by compiled fills; leave out "
                         f"{setting('backend', backend)}")
    ir = cell_ir(rec)
    unchecked = unchecked_subscript(ir, rec.args)
    if unchecked:
        raise RecurrenceError(f"{unchecked}: the solution of a score is recovered by compiled "
                              "fills; pass the array as an argument of the recurrence")
    plan = block_plan(rec, ir, block_rows)
    backend, why = resolve_backend(backend)
    n, m = rec.shape
    start = target_cell(rec, target)
    steps = BY_CODE[plan.pattern].steps((n, m)) if plan.pattern in BY_CODE else n * m
    bounds = value_bounds(rec, ir, steps)
    if backend == "cuda" and not plan.trim:
        if why.startswith("auto"):
            backend, why = "cpu", (f"{why}, but the GPU's tiles need every read at or left of "
                                   "its cell's column, so the CPU")
        else:
            raise UsageError("the GPU recovers a score's solution by tiles, which needs every "
                             "read at a constant column at or left of its cell's, and not "
                             f"every read is: use {setting('backend', 'cpu')}")
    blocks: Blocks | TileCells
    if plan.trim:  # every read's column known, at or left of its cell's: tiles
        left = max((-o[1] for o in ir.read_offsets()), default=0)
        reach, most = max(plan.halo, left, 1), TILE_SIDES[-1] if backend == "cuda" else None
        side = block_rows or next(t for t in TILE_SIDES if t >= reach)
        if side < reach or (most and side > most):
            raise UsageError(f"a tile's side is at least the reads' reach ({reach})"
                             + (f" and at most {most} on the GPU" if most else "")
                             + f": {setting('block_rows', block_rows)} does not fit")
        plan = BlockPlan(side, plan.halo, True, plan.pattern)
        if backend == "cuda":
            blocks, where = DeviceTiles(rec, ir, side, plan.halo, left, bounds), "the GPU"
        else:
            blocks = HostTiles(rec, ir, side, plan.halo, left, bounds)
            where = f"{blocks.threads} core{'s' * (blocks.threads != 1)}"
        pass_by = (f"register strips of {side} rows in one launch" if strip_made(blocks)
                   else "an anti-diagonal of tiles at a time")
        how = [f"tiles of {side} x {side} cells on {where}, {pass_by}, each tile's last "
               f"{plan.halo} row{'s' * (plan.halo != 1)} and {left} "
               f"column{'s' * (left != 1)} kept"]
    else:
        blocks = Blocks(rec, ir, plan, bounds)
        halo = {0: "no checkpoint (no read goes up)", 1: "a checkpoint of the row above each"
                }.get(plan.halo, f"a checkpoint of the {plan.halo} rows above each")
        how = ["rows top to bottom, each left to right, on one core",
               f"blocks of {plan.rows:,} rows, {halo}"]
    told = progress("filling cells", rec.cells) if progress else None
    if isinstance(blocks, DeviceTiles):  # the GPU's pass leaves the host waiting: the
        run_s = blocks.forward(told, prepare)  # walk's start is made then
        unhidden_s = blocks.unhidden_s  # what of it the pass did not hide
    else:
        run_s, unhidden_s = blocks.forward(told), 0.0
    last = (n - 1, m - 1)
    blocks.focus(last)
    value, compile_s = blocks[last], blocks.compile_s
    if progress:
        blocks.climbed = progress("refilling the blocks the solution crosses", n)
    t0, refill_s = time.perf_counter(), blocks.refill_s
    walker = compiled_walk(rec)
    found = solution(rec, blocks, start, walker=walker)
    walk_s = (time.perf_counter() - t0 - (blocks.refill_s - refill_s)
              - (blocks.compile_s - compile_s) - (walker.compile_s if walker else 0.0)
              + unhidden_s)
    answer = start == rec.target
    cell, value = (start, found.value) if answer else (last, value)
    recovery = Recovery(found, plan, blocks.checkpoint_bytes, blocks.block_bytes, blocks.refills,
                    blocks.refilled_cells, blocks.refill_s, walk_s)
    unit = "block" if isinstance(blocks, Blocks) else "tile"
    trimmed = ", each up to its column" if plan.trim and unit == "block" else ""
    notes = [
        why, *how[:-1], f"{how[-1]}: {format_bytes(recovery.memory_bytes)} at once",
        f"the solution walk refilled {recovery.refills} {unit}{'s' * (recovery.refills != 1)} "
        f"({recovery.refilled_cells:,} cells{trimmed})" + (
            f", in {blocks.cones:,} launch{'es' * (blocks.cones != 1)} of the tiles within "
            f"{blocks.depth} anti-diagonal{'s' * (blocks.depth != 1)} of tiles up and left "
            "of the one asked for" if isinstance(blocks, DeviceTiles) else ""),
        ("the pass's reads and values proven (a certificate), the refills' reads checked "
         "against the table's shape as they are made" if strip_made(blocks) else
         "every read checked against the table's shape as it is made"
         + ("" if bounds is None else f"; each value checked as stored: no proof it fits "
                                      f"{rec.dtype}")),
        *([found.note] if found.note else []),
        *([whole_table_note(rec, last)] if callable(rec.target) else []),
    ]
    kept = recovery.memory_bytes // rec.dtype.itemsize
    all_compile_s = blocks.compile_s + (walker.compile_s if walker else 0.0)
    return ScoreResult(value, cell, plan.pattern, backend, kept, run_s, all_compile_s,
                       h2d_s=getattr(blocks, "h2d_s", 0.0), notes=tuple(notes),
                       recovery=recovery, answer=answer)
