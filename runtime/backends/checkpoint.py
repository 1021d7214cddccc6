"""A 2-D table kept as checkpoints, for recovering a solution in linear-ish memory.

The forward pass fills the table by rows, top to bottom and each left to right, in
blocks of ``K`` rows (:class:`runtime.backends.walk.BlockPlan`) in one buffer: the
``R`` rows above the block (its *halo*: every read goes at most ``R`` rows up, or left
in its own row) and the block's own.  Before a block is filled, its halo is copied in
from its checkpoint, the ``R`` rows above it kept from the pass; so the pass keeps
``(blocks - 1) * R`` rows and one block, and leaves the last block in the buffer.

The solution walk (:func:`depgraph.frontend.provenance.solution`) reads the table
through :class:`Blocks`: before each cell's run it asks for the block holding the cell,
which is refilled from its checkpoint, rows from the block's first down to that cell's,
and columns up to that cell's when every read stays at or left of its cell's column
(``BlockPlan.trim``), else the whole row.  A walk that climbs the table (a path, for
LCS or edit distance) refills each block it crosses once.

The compiled cell reads the buffer at its true indices: every read is checked against
the table's shape (:func:`runtime.backends.walk.checked_read_source`), then served at
``B[a - base, b]``, ``base`` the table row of the buffer's first row (kept in the
checks' slot :data:`BASE`); each value is checked as stored where it may not fit the
table's dtype (:func:`runtime.backends.walk.emit_store`).

Assumptions: 2-D tables; every read's row is a constant ``-R .. 0`` rows from its
cell's, and a read in its cell's own row is left of it (the caller checks it from the
source, :mod:`runtime.schedule.score_plan`); one core.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from depgraph import memory
from depgraph.errors import RecurrenceError, TooLargeError
from depgraph.frontend.ir import CellIR
from depgraph.memory import format_bytes
from depgraph.model import Recurrence
from runtime.backends import cpu
from runtime.backends.cpu_score import checked_cell
from runtime.backends.emit import Emitter, arg_tail
from runtime.backends.walk import CHECK_SLOTS, BlockPlan, checks, emit_store, raise_found

__all__ = ["BASE", "Blocks", "block_kernel"]

#: The slot of the checks (past the walk's own, :data:`runtime.backends.walk.CHECK_SLOTS`)
#: holding the table row of the buffer's first row.
BASE = CHECK_SLOTS


def block_kernel(rec: Recurrence, ir: CellIR, bounds: tuple[int, int] | None
                 ) -> Callable[[bool], Any]:
    """The compiled fill of rows ``r0 .. r1 - 1``, columns ``0 .. c1 - 1`` of the
    buffer ``B`` (module docstring), its reads checked, its values checked within
    ``bounds`` unless ``None``."""
    cell = checked_cell(rec, ir, [f"return B[a - ck[{BASE}], b]"])
    args = arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def block(B, ck, r0, r1, c1{args})"):
        e("c = ck[0]")
        with e.block("for i in range(r0, r1)"), e.block("for j in range(c1)"):
            emit_store(e, f"B[i - c[{BASE}], j]", f"cell(B, i, j{args}, c)", ("i", "j"),
                       bounds, "c", "c[7] == 0")
    return cpu.kernel(rec, e.source, "block", cell)


class Blocks:
    """The table as checkpoints and one block (module docstring): :meth:`forward` fills
    it, then it serves a solution walk as :class:`depgraph.frontend.provenance.Cells`.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(5, 4), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> t = Blocks(paths, cell_ir(paths), BlockPlan(2, 1, True, "NOSE"), None)
    >>> _ = t.forward(None)
    >>> t.checkpoints[:, 0].tolist(), int(t[4, 3])
    ([[1, 2, 3, 4], [1, 4, 10, 20]], 35)
    >>> t.focus((1, 2)); int(t[0, 2]), int(t[1, 1]), t.refilled_cells
    (1, 2, 6)
    """

    def __init__(self, rec: Recurrence, ir: CellIR, plan: BlockPlan,
                 bounds: tuple[int, int] | None):
        n, m = rec.shape
        self.rec, self.plan, self.shape = rec, plan, (n, m)
        self.checkpoint_bytes, self.block_bytes = plan.memory((n, m), rec.dtype.itemsize)
        total = self.checkpoint_bytes + self.block_bytes
        if total > memory.available_memory():
            raise TooLargeError(
                f"recovering the solution keeps {plan.blocks(n) - 1} checkpoints of "
                f"{plan.halo} rows and a block of {plan.rows} rows ({format_bytes(total)}), "
                "more than the free memory")
        self.kernel = block_kernel(rec, ir, bounds)
        self.checkpoints = np.zeros((plan.blocks(n) - 1, plan.halo, m), dtype=rec.dtype)
        self.buffer = np.zeros((plan.halo + plan.rows, m), dtype=rec.dtype)
        self.ck = checks(1, (n, m), extra=1)
        self.block, self.rows, self.cols = -1, 0, 0  # what the buffer holds: nothing yet
        self.refills = self.refilled_cells = 0
        self.compile_s = self.refill_s = 0.0
        #: Told the rows from a refilled block's first to the table's end, if set.
        self.climbed: Callable[[int], None] | None = None

    def _fill(self, block: int, rows: int, cols: int) -> cpu.Timing:
        """Fill block ``block``'s rows down to ``rows - 1`` (a table row), columns
        ``0 .. cols - 1``, from its checkpoint."""
        R, r0 = self.plan.halo, block * self.plan.rows
        if block:
            self.buffer[:R, :cols] = self.checkpoints[block - 1, :, :cols]
        self.ck[0, BASE] = r0 - R
        t = cpu.call(self.kernel, self.buffer, self.ck, r0, rows, cols, *self.rec.args)
        raise_found(self.ck, self.rec)
        self.block, self.rows, self.cols = block, rows, cols
        self.compile_s += t.compile_s
        return t

    def forward(self, progress: Callable[[int], None] | None) -> float:
        """Fill every block in order, keeping each block's checkpoint; the seconds the
        fills ran (``progress``, if given, told the cells done after each block).  The
        last block stays in the buffer."""
        (n, m), K, R = self.shape, self.plan.rows, self.plan.halo
        run_s = 0.0
        for b in range(self.plan.blocks(n)):
            rows = min(n, (b + 1) * K)
            run_s += self._fill(b, rows, m).run_s
            if rows < n:  # the next block's halo: this buffer's last R rows
                self.checkpoints[b] = self.buffer[rows - b * K: rows - b * K + R]
            if progress:
                progress(rows * m)
        return run_s

    def focus(self, cell: tuple[int, ...]) -> None:
        """Hold ``cell``'s block down to its row (and, trimmed, its column), refilled
        from the checkpoint unless the buffer holds it already."""
        i, j = cell
        block = i // self.plan.rows
        rows, cols = i + 1, j + 1 if self.plan.trim else self.shape[1]
        if block == self.block and rows <= self.rows and cols <= self.cols:
            return
        if block == self.block:  # a wider piece of the same block: keep what it had too
            rows, cols = max(rows, self.rows), max(cols, self.cols)
        self.refills += 1
        self.refilled_cells += (rows - block * self.plan.rows) * cols
        self.refill_s += self._fill(block, rows, cols).run_s
        if self.climbed:
            self.climbed(self.shape[0] - block * self.plan.rows)

    def window(self, cell: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, int]]:
        """The cells held for ``cell`` (:meth:`focus`) as one array, and the table cell
        of its first: a window of the compiled walk (:mod:`runtime.backends.compiled_walk`)."""
        self.focus(cell)
        base = self.block * self.plan.rows - self.plan.halo
        first = max(base, 0)
        return self.buffer[first - base:self.rows - base, :self.cols], (first, 0)

    def __getitem__(self, cell: tuple[int, ...]) -> Any:
        i, j = cell
        base = self.block * self.plan.rows - self.plan.halo
        if not (max(base, 0) <= i < self.rows and 0 <= j < self.cols):
            raise RecurrenceError(
                f"the solution walk read {cell}, outside the block it holds (rows "
                f"{max(base, 0)} to {self.rows - 1}, columns 0 to {self.cols - 1}): a read "
                "farther than the source's offsets say")
        return self.buffer[i - base, j]
