"""A score with its solution, in linear-ish memory on the CPU (``depgraph run --score
--solution``, :func:`runtime.score_only.score` with ``solution``).

The table is never held: a pass by rows keeps a checkpoint of the rows each block of rows
reads above it, the target's value comes out of it, and the solution walk
(:func:`depgraph.frontend.provenance.solution`) refills the blocks it crosses from their
checkpoints (:mod:`runtime.backends.checkpoint`), so it finds the same cells and edges,
in the same order, as over the whole table.  The memory is the checkpoints and one
block, about ``2 sqrt(n R)`` rows for reads ``R`` rows up
(:func:`runtime.schedule.score_plan.block_plan`).

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

from depgraph.errors import UsageError, setting
from depgraph.frontend.ir import cell_ir
from depgraph.frontend.provenance import solution, target_cell
from depgraph.memory import format_bytes
from depgraph.model import Progress, Recurrence
from patterns import BY_CODE
from runtime.backends.checkpoint import Blocks
from runtime.backends.walk import Recovery, ScoreResult, value_bounds, whole_table_note
from runtime.schedule.score_plan import block_plan

__all__ = ["score_solution"]


def score_solution(rec: Recurrence, backend: str = "auto", target: Sequence[int] | None = None,
                   progress: Progress | None = None, block_rows: int | None = None
                   ) -> ScoreResult:
    """The score of ``rec``'s last cell and the solution from ``target``, in linear-ish
    memory (module docstring).  ``target`` defaults to the cell the recurrence names as
    its answer, else the last cell (``UsageError`` before the fill where its answer is a
    function of the whole table); a solution from the recurrence's answer makes the
    answer the score (``ScoreResult.answer``); ``block_rows``: the rows of a block (default about
    ``sqrt(n R)``); ``backend``: ``auto`` or ``cpu`` (it runs on one CPU core);
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
    >>> int(r.value), r.recovery.solution.cells[:3], r.recovery.refills
    (9, ((5, 4), (4, 4), (3, 4)), 2)
    """
    if backend not in ("auto", "cpu"):
        raise UsageError(f"the solution of a score is recovered on the CPU; leave out "
                         f"{setting('backend', backend)}")
    ir = cell_ir(rec)
    plan = block_plan(rec, ir, block_rows)
    n, m = rec.shape
    start = target_cell(rec, target)
    steps = BY_CODE[plan.pattern].steps((n, m)) if plan.pattern in BY_CODE else n * m
    bounds = value_bounds(rec, ir, steps)
    blocks = Blocks(rec, ir, plan, bounds)
    run_s = blocks.forward(progress("filling cells", rec.cells) if progress else None)
    last = (n - 1, m - 1)
    value, compile_s = blocks[last], blocks.compile_s
    if progress:
        blocks.climbed = progress("refilling the blocks the solution crosses", n)
    t0 = time.perf_counter()
    found = solution(rec, blocks, start)
    walk_s = time.perf_counter() - t0 - blocks.refill_s - (blocks.compile_s - compile_s)
    answer = start == rec.target
    cell, value = (start, found.value) if answer else (last, value)
    recovery = Recovery(found, plan, blocks.checkpoint_bytes, blocks.block_bytes, blocks.refills,
                    blocks.refilled_cells, blocks.refill_s, walk_s)
    halo = {0: "no checkpoint (no read goes up)", 1: "a checkpoint of the row above each"
            }.get(plan.halo, f"a checkpoint of the {plan.halo} rows above each")
    notes = [
        "rows top to bottom, each left to right, on one core",
        f"blocks of {plan.rows:,} rows, {halo}: {format_bytes(recovery.memory_bytes)} at once",
        f"the solution walk refilled {recovery.refills} block{'s' * (recovery.refills != 1)} "
        f"({recovery.refilled_cells:,} cells{', each up to its column' if plan.trim else ''})",
        "every read checked against the table's shape as it is made"
        + ("" if bounds is None else f"; each value checked as stored: no proof it fits "
                                     f"{rec.dtype}"),
        *([found.note] if found.note else []),
        *([whole_table_note(rec, last)] if callable(rec.target) else []),
    ]
    kept = recovery.memory_bytes // rec.dtype.itemsize
    return ScoreResult(value, cell, plan.pattern, "cpu", kept, run_s, blocks.compile_s,
                       notes=tuple(notes), recovery=recovery, answer=answer)
