"""``score``: a score-only fill, the value of the last cell of a walk keeping only the
cells still to be read, so a table far too large to hold is scored in O(n) memory
(``depgraph run --score``); and ``verify_score``, ``compare_score``: a score against the
sequential reference.

Where the recurrence names its answer (``target=`` of :func:`depgraph.model.recurrence`),
the score gives it only where the walk fills it: its last cell, or a cell a CPU walk
stops after (the slices it keeps hold it); elsewhere, on the GPU or for an answer that
is a function of the whole table, the value is the walk's last cell's and the notes say
it is not the answer.

The walk comes from the cell's read offsets (:mod:`runtime.schedule.score_plan`); the
backend fills it (:mod:`runtime.backends.cpu_score`, :mod:`runtime.backends.cuda.score`,
the python backend's ``python_score``), every read checked; with ``solution``, the score
is recovered from checkpoints instead (:mod:`runtime.recover`).  Nothing here prints:
long work is reported through the ``progress`` reporter the caller gives.

Assumptions: 2-D tables; the cell function is deterministic, so the same inputs give the
same reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from depgraph import memory
from depgraph.analysis.certify import arguments_proven
from depgraph.errors import TooLargeError, UsageError, setting
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.memory import format_bytes
from depgraph.model import Progress, Recurrence
from patterns import BY_CODE
from runtime.backends import cpu, python
from runtime.backends.cpu_score import cpu_score, ring_buffer, ring_kernel
from runtime.backends.cuda import score as gpu
from runtime.backends.cuda import strips
from runtime.backends.cuda.device import open_early
from runtime.backends.rewrite import unchecked_subscript
from runtime.backends.walk import (
    ScorePlan,
    ScoreResult,
    checks,
    raise_found,
    ring_result,
    value_bounds,
    whole_table_note,
)
from runtime.recover import score_solution
from runtime.run import compare
from runtime.schedule.choose import resolve_backend
from runtime.schedule.plan import make_plan
from runtime.schedule.score_plan import score_plan

__all__ = ["score", "verify_score", "compare_score"]


def score(rec: Recurrence, backend: str = "auto", progress: Progress | None = None,
          plan: ScorePlan | None = None, threads: int | None = None,
          solution: bool | Sequence[int] = False, block_rows: int | None = None
          ) -> ScoreResult:
    """The value of the last cell of ``rec``'s walk (:mod:`runtime.schedule.score_plan`),
    keeping only the cells still to be read, filled on ``backend`` (``auto``, ``cuda``,
    ``cpu`` or ``python``; ``threads`` as in :func:`runtime.run.fill`); or of the cell the
    recurrence names as its answer (``target=``), where the walk can stop after it (the
    CPU backends: ``ScoreResult.answer``; where it cannot, or the answer is a function of
    the whole table, the notes say the value is not the answer); ``progress`` reports the
    cells done (CPU backends); ``plan``:
    :func:`runtime.schedule.score_plan.score_plan`'s, when the caller already has it.
    ``solution``: also recover the cells whose reads decided this cell's value (``True``:
    the last cell's) as ``ScoreResult.recovery``, from checkpoints of blocks of
    ``block_rows`` rows, on one CPU core (:func:`runtime.recover.score_solution`; no
    ``plan``).

    Every read is checked: on the CPU backends and in the GPU's rows (columns) as it is
    made; before a GPU window fill, the cells within the farthest read of the frame's
    first rows and columns (the only cells whose constant offsets can leave the table)
    are filled on the CPU with checked reads.  So an out-of-bounds read is reported,
    naming the cell and the read, as in every fill.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> r = score(paths, backend="cpu")
    >>> r.cell, int(r.value), r.pattern, r.kept
    ((3, 4), 35, 'NOSE', 8)
    >>> r = score(recurrence(shape=(4, 5), dtype=np.int64, target=(1, 4))(paths.func), "cpu")
    >>> r.cell, int(r.value), r.answer
    ((1, 4), 5, True)
    """
    if solution is not False and plan is not None:
        raise UsageError("the solution of a score walks rows in blocks of its own; "
                         f"leave out {setting('plan')}")
    with cpu.thread_count(threads):
        if solution is not False:
            return score_solution(rec, backend, None if solution is True else solution,
                                  progress, block_rows)
        return _score(rec, backend, progress, plan)


def _score(rec: Recurrence, backend: str, progress: Progress | None,
           plan: ScorePlan | None) -> ScoreResult:
    """:func:`score` on the threads it was given."""
    open_early(backend)  # the driver starts while this thread plans
    ir = cell_ir(rec)
    plan = plan or score_plan(rec, ir)
    backend, why = resolve_backend(backend)
    unchecked = unchecked_subscript(ir, rec.args) if backend != "python" else None
    if unchecked:  # the compiled walks check only their arguments' reads
        backend, why = "python", f"{why}, but {unchecked}: the python backend's walk instead"
    cell, said = _walk_end(rec, plan, backend)
    notes = [why]
    n, m = rec.shape
    slices = ("rows", "columns")[plan.axis]
    notes.append(f"reads at constant {'' if plan.gpu else slices[:-1] + ' '}offsets allow "
                 f"{plan.pattern}")
    cells = progress("filling cells", rec.cells) if progress else None
    if backend == "python":
        notes.append(f"the last {plan.keep} {slices} kept")
        B, run_s = python.python_score(rec, plan, cells, cell)
        lines = plan.position(cell, rec.shape)[plan.axis] + 1
        res = ring_result(plan, B, cell, backend, run_s, 0.0, notes,
                          lines * (m if plan.axis == 0 else n))
    else:
        bounds = value_bounds(rec, ir, BY_CODE[plan.pattern].steps((n, m)))
        if bounds is not None:
            notes.append(f"each value checked as stored: no proof it fits {rec.dtype}")
        res = (cpu_score(rec, ir, plan, bounds, cells, notes, cell) if backend == "cpu" else
               _gpu_score(rec, ir, plan, bounds, notes))
    return replace(res, answer=res.cell == rec.target, notes=res.notes + said)


def _walk_end(rec: Recurrence, plan: ScorePlan, backend: str
              ) -> tuple[tuple[int, int], tuple[str, ...]]:
    """The cell a score of ``rec`` on ``backend`` reports, and what it says of it: the
    cell the recurrence names as its answer where the walk can stop there (the CPU and
    python walks stop after the slice holding it; the GPU's fills give their last cell
    only), else the walk's last cell."""
    last, target = plan.last(rec.shape), rec.target
    if callable(target):
        return last, (whole_table_note(rec, last),)
    if target is None or target == last:
        return last, ()
    if backend == "cuda":
        return last, (f"the recurrence's answer M{target} is not the walk's last cell M{last}, "
                      "the only one the GPU score keeps, so the value is not the answer; the "
                      "cpu backend's score, or a fill of the whole table, finds it",)
    i, j = target
    return (i, j), (f"the walk stopped after the recurrence's answer M{target}, before its "
                    f"last cell M{last}",)


def _gpu_score(rec: Recurrence, ir: CellIR, plan: ScorePlan, bounds: tuple[int, int] | None,
               notes: list[str]) -> ScoreResult:
    """The GPU score: a ring of rows (columns), every read checked on the device; or a
    diagonal walk by the register strips (where no value can misfit: ``bounds`` is
    ``None``) or a window of anti-diagonals, its edge cells checked on the CPU first."""
    n, m = rec.shape
    slices = ("rows", "columns")[plan.axis]
    if not plan.gpu:  # rows or columns: a ring, every read checked on the device
        ring = gpu.ring_score_fill(rec, ir, BY_CODE[plan.pattern].index, plan.keep, bounds)
        raise_found(ring.ck[None, :], rec)
        notes += [f"the last {plan.keep} {slices} kept",
                  f"one cooperative launch, a grid barrier between {slices}"]
        return replace(ring_result(plan, ring.ring, plan.last(rec.shape), "cuda",
                                   ring.compute_s, ring.compile_s, notes), h2d_s=ring.h2d_s)
    kern = ring_kernel(rec, ir, plan, False, bounds)
    B = ring_buffer(rec, plan)
    ck = checks(1, rec.shape)
    bar = np.zeros(1, dtype=np.int64)
    # the edge cells checked on the CPU first (the first `keep` rows, then the first `left`
    # columns of every row: reads go up and left, so these cells read only these)
    K = min(n, plan.keep)
    check_s = cpu.call(kern, B, ck, bar, 1, 0, K, m, n, m, *rec.args).run_s
    if plan.left:
        check_s += cpu.call(kern, B, ck, bar, 1, K, n, min(m, plan.left), n, m,
                            *rec.args).run_s
    raise_found(ck, rec)
    index = BY_CODE[plan.pattern].index
    # the strips check no read of an argument: only where a certificate proves them
    res = (gpu.strip_score_fill(rec, ir, index)
           if bounds is None and strips.serves_strips(rec, ir, plan.pattern)
           and arguments_proven(rec, ir)
           else gpu.score_fill(rec, ir, index, bounds))
    raise_found(res.ck, rec)
    notes += [res.note,
              f"edge cells checked on the CPU first ({K} rows, {min(m, plan.left)} columns)"]
    return ScoreResult(res.value, res.cell, plan.pattern, "cuda", res.kept,
                       res.compute_s, res.compile_s, res.h2d_s, check_s, tuple(notes))


def verify_score(result: ScoreResult, rec: Recurrence) -> str:
    """Compare a score of ``rec`` (and its last line) with the sequential reference table,
    as :func:`compare` compares tables (``RecurrenceError`` when they differ); the
    reference is the whole table, so ``TooLargeError`` when it would take more than half
    the free memory."""
    table_bytes = rec.cells * rec.dtype.itemsize
    if table_bytes > memory.available_memory() // 2:
        raise TooLargeError(f"verifying a score needs the whole {rec.shape} table for the "
                            f"reference ({format_bytes(table_bytes)}), more than half the "
                            "free memory")
    return compare_score(result, make_plan(rec, cell_ir(rec)).reference)


def compare_score(result: ScoreResult, reference: np.ndarray) -> str:
    """Compare a score (and its last line) with the sequential reference table, as
    :func:`compare` compares tables (``RecurrenceError`` when they differ)."""
    table = reference.copy()
    table[result.cell] = result.value
    if result.line_at is not None:
        table[result.line_at] = result.line
    return f"{result.line_name or f'M{result.cell}'} {compare(table, reference)}"
