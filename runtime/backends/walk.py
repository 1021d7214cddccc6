"""A score-only fill's walk: how it goes and what it keeps of the table (:class:`ScorePlan`),
what it found (:class:`ScoreResult`, and :func:`whole_table_note` where the answer is not
there to find), the slot of a cell in a ring of the last rows (columns), and the checked
read of a ring or a window of anti-diagonals.

A score-only fill (:func:`runtime.score_only.score`) keeps only the cells still to be
read: the last ``K`` rows (columns) of a walk by rows (columns), slice ``t`` in slot
``t % K``, or the last ``W`` anti-diagonals of a diagonal walk.  Its reads of ``M`` are
rewritten into reads of that buffer, checked against the table's shape (kept in ``ck[0:2]``); the first
out-of-bounds read is recorded in ``ck[2:7]`` as (flag, cell, read).  No full table is
ever filled to check the values against, so a cell's value is checked as it is stored
where it may not fit the table's dtype (:func:`value_bounds`), the first that does not
recorded in ``ck[7:11]`` as (flag, cell, value).

A score may also recover its solution in linear-ish memory (:class:`BlockPlan`,
:mod:`runtime.backends.checkpoint`): the walk by rows keeps the rows every block of rows
starts from, and refills the blocks the solution crosses (:class:`Recovery`).

Assumptions: 2-D tables; the buffer's reads reach only cells it still holds (the walk
keeps enough slices for the farthest read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from depgraph.analysis.certify import arguments_proven
from depgraph.errors import CellFunctionError, OutOfBoundsError
from depgraph.frontend.ir import CellIR
from depgraph.frontend.narrow import narrowing
from depgraph.frontend.provenance import Solution
from depgraph.model import Recurrence
from patterns import BY_CODE, last_cell
from runtime.backends.emit import Emitter
from runtime.backends.rewrite import ArgReads, arg_read_source

__all__ = ["ScorePlan", "BlockPlan", "Recovery", "ScoreResult", "whole_table_note", "slot",
           "ring_slot", "checked_read_source", "ring_result", "CHECK_SLOTS", "checks",
           "value_bounds", "emit_store", "raise_found", "argument_error", "arg_reads", "ARG"]

#: Slots of a walk's ``ck`` (a row per CPU thread, one on the GPU): the table's shape,
#: the first out-of-bounds read (flag, cell, read), the first value outside the table's
#: dtype (flag, cell, value), the first read of an array argument outside it at
#: :data:`ARG` (flag, cell, the argument's position, axis, index).
CHECK_SLOTS = 17
ARG = 11


@dataclass(frozen=True)
class ScorePlan:
    """How a score-only fill walks a recurrence: ``pattern``'s order, slices along
    ``axis`` (0 rows, 1 columns) in order, ``flips`` (rows, columns reversed), the last
    ``keep`` slices kept; ``back``: how many anti-diagonals a diagonal pattern's reads go
    back (0 for line patterns); ``left``: how far a diagonal pattern's reads go back across
    slices (0 for line patterns); ``gpu``: whether the GPU window fill serves it."""

    pattern: str
    axis: int
    flips: tuple[bool, bool]
    keep: int
    back: int
    left: int
    gpu: bool

    @property
    def diagonals(self) -> int:
        """Anti-diagonals a diagonal pattern's window keeps: ``back`` and this one."""
        return self.back + 1

    def last(self, shape: tuple[int, ...]) -> tuple[int, int]:
        """The cell the walk fills last."""
        return last_cell(self.flips, shape)

    def position(self, cell: Sequence[int], shape: tuple[int, ...]) -> tuple[int, int]:
        """Where the walk comes to ``cell``: its row and column counted in the walk's
        directions (from the far side of a side ``flips`` runs backwards), so a walk by
        rows (columns) fills it in slice ``position[axis]`` and a diagonal walk on
        anti-diagonal ``sum(position)`` of its NOSE frame.

        Examples
        --------
        >>> sone = ScorePlan("SONE", 0, (True, False), 2, 1, 1, True)
        >>> sone.position((0, 4), (3, 5)), sone.position((2, 0), (3, 5))
        ((2, 4), (0, 0))
        """
        i, j = (n - 1 - c if flip else c for c, n, flip in zip(cell, shape, self.flips))
        return i, j


@dataclass(frozen=True)
class BlockPlan:
    """How a score recovers its solution: rows top to bottom, each left to right, in
    blocks of ``rows`` rows; every read ``halo`` rows up at most (or left in its own
    row), so a block is refilled from the ``halo`` rows above it, kept as its
    checkpoint; ``trim``: every read's column at or left of its cell's, so a block is
    refilled only up to the column the solution enters it at; ``pattern``: the pattern
    the reads allow (its step count bounds the values' growth), or ``"rows"``.

    Examples
    --------
    >>> p = BlockPlan(rows=3, halo=1, trim=True, pattern="NOSE")
    >>> p.blocks(10), p.memory((10, 5), 4)
    (4, (60, 80))
    """

    rows: int
    halo: int
    trim: bool
    pattern: str

    def blocks(self, n: int) -> int:
        """Blocks of a table of ``n`` rows."""
        return -(-n // self.rows)

    def memory(self, shape: tuple[int, int], itemsize: int) -> tuple[int, int]:
        """Bytes of the checkpoints (one per block but the first) and of the block being
        filled (its rows and the halo above them), for a table of ``shape``."""
        n, m = shape
        return ((self.blocks(n) - 1) * self.halo * m * itemsize,
                (self.rows + self.halo) * m * itemsize)


@dataclass(frozen=True)
class Recovery:
    """A solution recovered from checkpoints (:class:`BlockPlan`): the ``solution``, the
    bytes the checkpoints and the block took, the blocks the walk refilled and their
    cells, and seconds refilling (compiled) and walking (Python, refills apart)."""

    solution: Solution
    plan: BlockPlan
    checkpoint_bytes: int
    block_bytes: int
    refills: int
    refilled_cells: int
    refill_s: float
    walk_s: float

    @property
    def memory_bytes(self) -> int:
        """What the fill and the walk held at once: the checkpoints and the block."""
        return self.checkpoint_bytes + self.block_bytes

    def to_json(self) -> dict[str, Any]:
        """The fields a score's ``--json`` adds (the ``solution`` object among them)."""
        return {"solution": self.solution.to_json(), "solution_summary": self.solution.summary(),
                "solution_memory_bytes": self.memory_bytes,
                "recovery": {"block_rows": self.plan.rows, "halo_rows": self.plan.halo,
                             "trimmed": self.plan.trim,
                             "checkpoint_bytes": self.checkpoint_bytes,
                             "block_bytes": self.block_bytes, "refills": self.refills,
                             "refilled_cells": self.refilled_cells,
                             "refill_s": self.refill_s, "walk_s": self.walk_s}}


@dataclass(frozen=True)
class ScoreResult:
    """A score-only fill: the value of ``cell``, the last cell ``pattern``'s walk fills
    (or the cell the recurrence names as its answer, where the walk reaches it:
    ``answer``), and for a walk by rows (columns) ``line``, the whole last row (column)
    filled.

    ``kept`` is the number of cells the fill held at once; ``filled``, the cells it
    computed where it stopped before the table's last (``None``: every cell, or a pass
    whose count is not kept); times in seconds (``check_s``:
    the CPU check of the edge cells before a GPU fill); ``recovery``: the solution, when
    the score recovered it (:class:`Recovery`); ``answer``: whether ``cell`` is the cell
    the recurrence names as its answer (``target=`` of
    :func:`depgraph.model.recurrence`).
    """

    value: Any
    cell: tuple[int, int]
    pattern: str
    backend: str
    kept: int
    compute_s: float
    compile_s: float
    h2d_s: float = 0.0
    check_s: float = 0.0
    notes: tuple[str, ...] = field(default=())
    line: np.ndarray | None = None
    recovery: Recovery | None = None
    answer: bool = False
    filled: int | None = None

    @property
    def line_kind(self) -> str | None:
        """``"row"`` or ``"column"``: what ``line`` is (the pattern's storage order);
        ``None`` without a line."""
        return None if self.line is None else BY_CODE[self.pattern].storage[:-1]

    @property
    def line_at(self) -> tuple[Any, Any] | None:
        """Where ``line`` sits in the table: ``(i, slice(None))`` for a row,
        ``(slice(None), j)`` for a column; ``None`` without a line."""
        if self.line is None:
            return None
        i, j = self.cell
        return (i, slice(None)) if self.line_kind == "row" else (slice(None), j)

    @property
    def line_name(self) -> str | None:
        """``line_at`` written as ``M[i, :]`` or ``M[:, j]``."""
        at = self.line_at
        return None if at is None else (
            "M[" + ", ".join(":" if isinstance(k, slice) else str(k) for k in at) + "]")

    def to_json(self) -> dict[str, Any]:
        value = self.value.item() if isinstance(self.value, np.generic) else self.value
        return {"value": value, "cell": list(self.cell), "answer": self.answer,
                "pattern": self.pattern, "backend": self.backend, "kept_cells": self.kept,
                "compute_s": self.compute_s, "compile_s": self.compile_s,
                "h2d_s": self.h2d_s, "check_s": self.check_s, "notes": list(self.notes),
                "line": self.line_name, "line_kind": self.line_kind,
                "line_cells": None if self.line is None else len(self.line),
                "filled_cells": self.filled,
                **(self.recovery.to_json() if self.recovery else {})}


def whole_table_note(rec: Recurrence, last: tuple[int, int]) -> str:
    """What a score says of its value where ``rec``'s answer is a function of the whole
    filled table (``target=``, as Smith-Waterman's best cell): a score keeps a few slices
    of the table, so its value is the walk's ``last`` cell's, not the answer.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> def best(M):
    ...     return np.unravel_index(np.argmax(M), M.shape)
    >>> @recurrence(shape=(3, 3), dtype=np.int64, target=best)
    ... def local(M, i, j):
    ...     return 0 if i == 0 or j == 0 else max(0, M[i - 1, j - 1] + 1)
    >>> whole_table_note(local, (2, 2))
    "the answer of 'local' is the cell best finds in the whole filled table, which a score does not keep: M(2, 2) is the walk's last cell, not the answer; a fill of the whole table (not a score) finds it"
    """
    return (f"the answer of {rec.name!r} is the cell {rec.answer_function} finds in the whole "
            f"filled table, which a score does not keep: M{last} is the walk's last cell, not "
            "the answer; a fill of the whole table (not a score) finds it")


def slot(axis: int, i: str, j: str, K: int) -> str:
    """Where cell ``(i, j)`` lives in the ring ``B`` of ``K`` slices: its row (column)
    modulo ``K``; the source text, for a compiled walk (a constant ``K``: a modulo by the
    ring's shape, read at run time, made every read an integer division).

    Examples
    --------
    >>> slot(0, "i", "j", 3), slot(1, "i", "j", 2)
    ('i % 3, j', 'i, j % 2')
    """
    return f"{i} % {K}, {j}" if axis == 0 else f"{i}, {j} % {K}"


def ring_slot(axis: int, B: np.ndarray, i: int, j: int) -> tuple[int, int]:
    """:func:`slot` in Python.

    Examples
    --------
    >>> ring_slot(0, np.zeros((3, 5)), 7, 4)
    (1, 4)
    """
    return (i % B.shape[0], j) if axis == 0 else (i, j % B.shape[1])


def checked_read_source(record: str, found: Sequence[str]) -> str:
    """Source of a checked read ``read(B, ck, x0, x1, a, b)`` of the ring or window
    ``B``: an out-of-bounds read is recorded in ``ck`` when ``record`` holds (``True``
    on the CPU, each thread its own ``ck``; on the GPU, only for the first thread to set
    the flag) and reads ``B[0, 0]``; an in-bounds read runs the lines ``found``.

    Examples
    --------
    >>> print(checked_read_source("True", ["return B[a % 2, b]"]), end="")
    def read(B, ck, x0, x1, a, b):
        if a < 0 or a >= ck[0] or b < 0 or b >= ck[1]:
            if True:
                ck[3] = x0
                ck[4] = x1
                ck[5] = a
                ck[6] = b
            ck[2] = 1
            return B[0, 0]
        return B[a % 2, b]
    """
    e = Emitter()
    with e.block("def read(B, ck, x0, x1, a, b)"):
        with e.block("if a < 0 or a >= ck[0] or b < 0 or b >= ck[1]"):
            with e.block(f"if {record}"):
                e("ck[3] = x0", "ck[4] = x1", "ck[5] = a", "ck[6] = b")
            e("ck[2] = 1", "return B[0, 0]")
        e(*found)
    return e.source


def ring_result(plan: ScorePlan, B: np.ndarray, last: tuple[int, int], backend: str,
                run_s: float, compile_s: float, notes: Sequence[str],
                filled: int | None = None) -> ScoreResult:
    """The result of a walk that kept ring ``B``: the last cell, and for rows (columns)
    the last line; ``filled``, the cells it computed (:class:`ScoreResult`)."""
    at = ring_slot(plan.axis, B, *last)
    line = None
    if not plan.gpu:
        line = B[at[0]].copy() if plan.axis == 0 else B[:, at[1]].copy()
    return ScoreResult(B[at], last, plan.pattern, backend, B.size, run_s, compile_s,
                       notes=tuple(notes), line=line, filled=filled)


def checks(rows: int, shape: tuple[int, int], extra: int = 0) -> np.ndarray:
    """``ck`` with ``rows`` rows (a row per CPU thread): the table's shape, then room for
    what the walk finds (:data:`CHECK_SLOTS`), then ``extra`` slots the caller uses."""
    ck = np.zeros((rows, CHECK_SLOTS + extra), dtype=np.int64)
    ck[:, 0], ck[:, 1] = shape
    return ck


def value_bounds(rec: Recurrence, ir: CellIR, steps: int) -> tuple[int, int] | None:
    """The least and greatest value of ``rec``'s dtype when a cell's value, computed in 64
    bits by numba, may not fit it; ``None`` when nothing can misfit: a float, complex or
    boolean table, a 64-bit integer one, or one whose values
    :func:`depgraph.frontend.narrow.narrowing` proves inside the dtype for a walk of
    ``steps`` steps (each cell reading only cells of earlier steps).

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(4, 4), dtype=np.int8)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> value_bounds(paths, cell_ir(paths), 7)
    (-128, 127)
    """
    dtype = rec.dtype
    if dtype.kind not in "iu" or dtype.itemsize == 8:
        return None
    info = np.iinfo(dtype)
    proof = narrowing(ir, rec.shape, dtype, rec.args, steps, loops=True)
    if proof is not None and info.min <= proof.values[0] and proof.values[1] <= info.max:
        return None
    return int(info.min), int(info.max)


def emit_store(e: Emitter, target: str, value: str, cell: tuple[str, str],
               bounds: tuple[int, int] | None, ck: str, first: str) -> None:
    """Emit ``target = value``, checking the value against ``bounds`` first (unless
    ``None``): one outside is recorded in ``ck`` for ``cell`` when ``first`` holds (see
    :func:`checked_read_source`) and not stored (the walk is reported, not used; a
    simulated GPU refuses such a store).

    Examples
    --------
    >>> e = Emitter()
    >>> emit_store(e, "B[i]", "cell(B, i, j)", ("i", "j"), (-128, 127), "c", "c[7] == 0")
    >>> print(e.source, end="")
    value = cell(B, i, j)
    if value < -128 or value > 127:
        if c[7] == 0:
            c[8] = i
            c[9] = j
            c[10] = value
        c[7] = 1
    else:
        B[i] = value
    """
    if bounds is None:
        e(f"{target} = {value}")
        return
    e(f"value = {value}")
    with e.block(f"if value < {bounds[0]} or value > {bounds[1]}"):
        with e.block(f"if {first}"):
            e(f"{ck}[8] = {cell[0]}", f"{ck}[9] = {cell[1]}", f"{ck}[10] = value")
        e(f"{ck}[7] = 1")
    with e.block("else"):
        e(f"{target} = value")


def raise_found(ck: np.ndarray, rec: Recurrence) -> None:
    """The error for what a walk's ``ck`` rows recorded, if anything: a value outside the
    table's dtype (``CellFunctionError``; first, since a later read may follow from the
    value not stored), else a read of an argument outside it (``CellFunctionError``, as
    :func:`argument_error`), else an out-of-bounds read (``OutOfBoundsError``), each the
    first thread's row that recorded one."""
    for row in ck[ck[:, 7] != 0][:1]:
        raise CellFunctionError((int(row[8]), int(row[9])),
                                f"its value {int(row[10])} does not fit the table's dtype "
                                f"{rec.dtype}")
    for row in ck[ck[:, ARG] != 0][:1]:
        raise argument_error(rec, row[ARG + 1:ARG + 3], *row[ARG + 3:ARG + 6].tolist())
    for row in ck[ck[:, 2] != 0][:1]:
        raise OutOfBoundsError((int(row[3]), int(row[4])), (int(row[5]), int(row[6])),
                               rec.shape)


def argument_error(rec: Recurrence, cell: Sequence[int], position: int, axis: int,
                   index: int) -> CellFunctionError:
    """The error of a checked read by ``cell`` of ``rec``'s argument at ``position``
    whose index along ``axis`` is outside it, worded as the python backend's for the same
    read (NumPy's ``IndexError``).

    Examples
    --------
    >>> from depgraph import recurrence
    >>> w = np.arange(3)
    >>> rec = recurrence(shape=(6, 2), dtype=np.int64, args=(w,))(lambda M, i, j, w: w[i - 1])
    >>> print(argument_error(rec, (4, 0), 0, 0, 3))
    cell (4, 0): the cell function failed: IndexError: index 3 is out of bounds for axis 0 with size 3
    """
    size = np.shape(rec.args[position])[axis]
    return CellFunctionError(tuple(int(x) for x in cell),
                             f"IndexError: index {index} is out of bounds for axis {axis} "
                             f"with size {size}")


def arg_reads(rec: Recurrence, ir: CellIR, first: str, sink: str = "ck") -> ArgReads | None:
    """The checked reads of ``rec``'s array arguments for a walk's cell (recording a
    failed one at :data:`ARG` when ``first`` holds: on the CPU, each thread its own
    ``ck``, while its flag is not set; on the GPU, for the first thread to set it), or
    ``None`` where a certificate whose requirements ``rec`` meets proves every one
    inside its array (:func:`depgraph.analysis.certify.arguments_proven`): numba checks
    none.  ``sink``: the walk's ``ck`` as the read sees it
    (:func:`runtime.backends.rewrite.arg_read_source`)."""
    if arguments_proven(rec, ir):
        return None
    return ArgReads.of(ir, rec.args,
                       lambda p, count: arg_read_source(p, count, 2, ARG, first, sink))
