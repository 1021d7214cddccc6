"""A 2-D table kept on the GPU as the edges of its tiles, for recovering a solution of a
table far too large to hold (``depgraph run --score --solution --backend cuda``).

The table is cut into ``T x T`` tiles, tile ``(a, b)`` holding rows ``a T ..`` and columns
``b T ..``.  Every read goes at most ``R`` rows up and ``C`` columns left (never right,
never down), so a tile is computed from the ``R`` rows above it and the ``C`` columns
left of it (its *halo*), and the tiles of one anti-diagonal of tiles (``a + b``
constant) are independent.  The forward pass launches one kernel an anti-diagonal of
tiles, a block of ``T`` threads a tile, a thread a row of it: each block loads its halo,
fills its tile anti-diagonal by anti-diagonal (a block barrier between them) into a
buffer of its own in device memory, and keeps the tile's last ``R`` rows (``ROWS``) and
last ``C`` columns (``COLS``).  Those edges are all the pass keeps: ``n m (R + C) / T``
cells, against ``n m`` for the table.

The solution walk (:func:`depgraph.frontend.provenance.solution`) reads the table
through :class:`DeviceTiles`: before each cell's run it asks for the tile holding the
cell, which the same kernel refills from the kept edges (one block) and which comes back
to the host with its halo, so the cell's reads are there too.  A path, climbing from the
last cell to the first row or column, refills each tile it crosses once.

Every read is checked against the table's shape (the first one outside recorded in
``ck``, as :func:`runtime.backends.walk.checked_read_source` does), each value as it is
stored where it may not fit the table's dtype (:func:`runtime.backends.walk.emit_store`).

Assumptions: 2-D tables; reads at constant offsets ``-R .. 0`` rows and ``-C .. 0``
columns from their cell, not the cell itself (the caller checks it from the source,
:func:`runtime.schedule.score_plan.block_plan` with ``trim``); ``max(R, C) <= T <= 1024``
(a thread a row); the cell function is deterministic, so a refilled tile holds the
values the pass computed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from depgraph.errors import RecurrenceError
from depgraph.frontend.ir import CellIR
from depgraph.model import Recurrence
from runtime.backends.cuda.cells import rewritten_cell
from runtime.backends.cuda.device import check_fits, compile_kernel, cuda_module, launcher
from runtime.backends.emit import Emitter, arg_tail
from runtime.backends.rewrite import CHECK
from runtime.backends.walk import checked_read_source, checks, emit_store, raise_found

__all__ = ["DeviceTiles", "tile_source", "TILE_SIDES"]

#: The tile sides tried, smallest first: the first whose edges fit the device is taken
#: (a smaller tile refills fewer cells a step of the walk, a larger one keeps less).
TILE_SIDES = (256, 512, 1024)


def tile_source(T: int, R: int, C: int, nargs: int, bounds: tuple[int, int] | None) -> str:
    """Source of the kernel ``tile(ROWS, COLS, OUT, ck, diagonal, first, *args)``: block
    ``k`` fills tile ``(first + k, diagonal - first - k)`` into ``OUT[k]``, its halo first,
    then keeps its edges (module docstring).  ``ROWS[a, h]`` is row ``(a + 1) T - R + h``
    of the table; ``COLS[i, b, c]``, column ``(b + 1) T - C + c`` of row ``i``.

    ``OUT[k]`` holds the cell ``(u, v)`` of the tile (``-R <= u < T``, ``-C <= v < T``:
    the halo at negative indices) at ``[u + v + R + C, u + R]``, by anti-diagonals, so
    the threads of a warp, each on its own row of one anti-diagonal, read the cells up,
    left and up-left of theirs and store their own side by side."""
    args = arg_tail(nargs)
    e = Emitter()
    with e.block(f"def tile(ROWS, COLS, OUT, ck, diagonal, first{args})"):
        e("n = ck[0]", "m = ck[1]", "k = cuda.blockIdx.x", "r = cuda.threadIdx.x",
          "a = first + k", "b = diagonal - a", f"u0 = a * {T}", f"v0 = b * {T}",
          f"rows = min({T}, n - u0)", f"cols = min({T}, m - v0)", "B = OUT[k]")
        if R:
            with e.block("if a > 0 and r < cols"):
                with e.block(f"for h in range({R})"):
                    e(f"B[h + r + {C}, h] = ROWS[a - 1, h, v0 + r]")
        if C:
            with e.block("if b > 0"):
                e("q = r")
                with e.block(f"while q < {R} + rows"):
                    with e.block(f"if u0 - {R} + q >= 0"):
                        with e.block(f"for c in range({C})"):
                            e(f"B[q + c, q] = COLS[u0 - {R} + q, b - 1, c]")
                    e(f"q += {T}")
        e("cuda.syncthreads()")
        with e.block("for s in range(rows + cols - 1)"):
            e("v = s - r")
            with e.block("if r < rows and v >= 0 and v < cols"):
                e("i = u0 + r", "j = v0 + v")
                emit_store(e, f"B[s + {R + C}, r + {R}]", f"cell(B, i, j{args}, ck)",
                           ("i", "j"), bounds, "ck", "cuda.atomic.cas(ck, 7, 0, 1) == 0")
            e("cuda.syncthreads()")
        if R:
            with e.block(f"if u0 + {T} < n and r < cols"):
                with e.block(f"for h in range({R})"):
                    e(f"ROWS[a, h, v0 + r] = B[h + r + {T + C}, h + {T}]")
        if C:
            with e.block(f"if v0 + {T} < m and r < rows"):
                with e.block(f"for c in range({C})"):
                    e(f"COLS[u0 + r, b, c] = B[r + c + {T + R}, r + {R}]")
    return e.source


class DeviceTiles:
    """The table as the edges of its tiles on the GPU (module docstring):
    :meth:`forward` fills it, then it serves a solution walk as
    :class:`depgraph.frontend.provenance.Cells`, a tile at a time.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(9, 7), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> t = DeviceTiles(paths, cell_ir(paths), 4, 1, 1, None)  # the simulator, in the suite
    >>> _ = t.forward(None)
    >>> t.focus((8, 6)); int(t[8, 6]), int(t[7, 6]), t.refills
    (3003, 1716, 1)
    """

    def __init__(self, rec: Recurrence, ir: CellIR, T: int, R: int, C: int,
                 bounds: tuple[int, int] | None):
        (n, m), self.rec = rec.shape, rec
        self.T, self.R, self.C, self.shape = T, R, C, (n, m)
        self.tiles = (-(-n // T), -(-m // T))
        A, Bt = self.tiles
        # the edges kept (one of each tile but the last row / column of tiles; an
        # axis of length 0 where there is none, which numba's arrays take)
        rows_shape, cols_shape = (A - 1, R, m), (n, Bt - 1, C)
        slots = min(A, Bt)
        out_shape = (slots, 2 * T - 1 + R + C, T + R)
        check_fits(rec, [("the tiles' last rows", rows_shape), ("their last columns", cols_shape),
                         (f"{slots} tiles being filled", out_shape)], score=True)
        self.checkpoint_bytes = (math.prod(rows_shape) + math.prod(cols_shape)) * rec.dtype.itemsize
        self.block_bytes = math.prod(out_shape) * rec.dtype.itemsize
        cuda = cuda_module()
        read = checked_read_source("cuda.atomic.cas(ck, 2, 0, 1) == 0", [
            f"u = a - (x0 // {T}) * {T}", f"return B[u + b - (x1 // {T}) * {T} + {R + C}, u + {R}]"])
        cell = rewritten_cell(rec, ir, read, {"cuda": cuda}, stop=f"{CHECK}[2] != 0")
        kernel = compile_kernel(rec, tile_source(T, R, C, len(rec.args), bounds), "tile", cell)
        t0 = time.perf_counter()
        self.ROWS = cuda.device_array(rows_shape, dtype=rec.dtype)
        self.COLS = cuda.device_array(cols_shape, dtype=rec.dtype)
        self.OUT = cuda.device_array(out_shape, dtype=rec.dtype)
        self.ck = cuda.to_device(checks(1, (n, m))[0])
        self.args = tuple(cuda.to_device(np.ascontiguousarray(x)) if isinstance(x, np.ndarray)
                          else x for x in rec.args)
        self.h2d_s = time.perf_counter() - t0
        self._first = (self.ROWS, self.COLS, self.OUT, self.ck, 0, 0, *self.args)
        t0 = time.perf_counter()
        self._launch = launcher(kernel, self._first)
        self.compile_s = time.perf_counter() - t0
        self._back = cuda.pinned_array(out_shape[1:], dtype=rec.dtype)
        self.held: tuple[int, int] | None = None  # the tile on the host, and its cells
        self._cells = np.empty((0, 0), dtype=rec.dtype)
        self.refills = self.refilled_cells = 0
        self.refill_s = 0.0
        #: Told the rows from a refilled tile's first to the table's end, if set.
        self.climbed: Callable[[int], None] | None = None

    def forward(self, progress: Callable[[int], None] | None) -> float:
        """Fill every anti-diagonal of tiles in order, keeping their edges; the seconds
        it took (``progress``, if given, told the cells done about every 1% of the
        anti-diagonals).  ``RecurrenceError`` for what the checks found."""
        (A, Bt), T, (n, m) = self.tiles, self.T, self.shape
        cuda = cuda_module()
        every = max(1, (A + Bt - 1) // 100)
        t0 = time.perf_counter()
        for d in range(A + Bt - 1):
            a0, a1 = max(0, d - Bt + 1), min(A - 1, d)
            self._launch(a1 - a0 + 1, T, (self.ROWS, self.COLS, self.OUT, self.ck, d, a0,
                                          *self.args))
            if progress and (d + 1) % every == 0:
                cuda.synchronize()
                progress(min(n * m, (d + 1) * T * T * min(A, Bt)))  # about
        cuda.synchronize()
        run_s = time.perf_counter() - t0
        raise_found(self.ck.copy_to_host()[None, :], self.rec)
        return run_s

    def focus(self, cell: tuple[int, ...]) -> None:
        """Hold ``cell``'s tile and its halo on the host, refilled from the kept edges
        unless held already."""
        tile = (cell[0] // self.T, cell[1] // self.T)
        if tile == self.held:
            return
        a, b = tile
        t0 = time.perf_counter()
        self._launch(1, self.T, (self.ROWS, self.COLS, self.OUT, self.ck, a + b, a, *self.args))
        self.OUT[0].copy_to_host(self._back)  # pinned: no staging through the driver
        self._cells = self._back.copy()
        self.refill_s += time.perf_counter() - t0
        self.held = tile
        self.refills += 1
        self.refilled_cells += (min(self.T, self.shape[0] - a * self.T)
                                * min(self.T, self.shape[1] - b * self.T))
        if self.climbed:
            self.climbed(self.shape[0] - a * self.T)

    def __getitem__(self, cell: tuple[int, ...]) -> Any:
        i, j = cell
        if self.held is None:
            self.focus(cell)
        a, b = self.held  # type: ignore[misc]
        u, v = i - a * self.T, j - b * self.T
        if not (-self.R <= u < self.T and -self.C <= v < self.T and 0 <= i < self.shape[0]
                and 0 <= j < self.shape[1]):
            raise RecurrenceError(
                f"the solution walk read {cell}, outside the tile it holds ({self.held}, "
                f"{self.T} cells a side, with {self.R} rows above and {self.C} columns left): "
                "a read farther than the source's offsets say")
        return self._cells[u + v + self.R + self.C, u + self.R]
