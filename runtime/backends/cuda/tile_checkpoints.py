"""A 2-D table kept on the GPU as the edges of its tiles, for recovering a solution of a
table far too large to hold (``depgraph run --score --solution --backend cuda``; the
scheme, the kernel and the walk's view: :mod:`runtime.backends.tile_edges`).

The forward pass launches one kernel an anti-diagonal of tiles, a block of ``T`` threads
a tile (a thread a row of it, a block barrier between its anti-diagonals), each block
into a buffer of its own in device memory; the edges stay on the device.  The walk's
refill of a tile is the same kernel on one block, and only that tile's buffer comes back
to the host.

Assumptions: those of :mod:`runtime.backends.tile_edges`; ``T <= 1024`` (a thread a
row).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from depgraph.frontend.ir import CellIR
from depgraph.model import Recurrence
from runtime.backends.cuda.cells import rewritten_cell
from runtime.backends.cuda.device import check_fits, compile_kernel, cuda_module, launcher
from runtime.backends.rewrite import CHECK
from runtime.backends.tile_edges import TileCells, tile_read, tile_source
from runtime.backends.walk import ARG, arg_reads, checked_read_source, checks, raise_found

__all__ = ["DeviceTiles"]


class DeviceTiles(TileCells):
    """The table as the edges of its tiles on the GPU (module docstring):
    :meth:`forward` fills it, then it serves a solution walk a tile at a time.

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
        slots = min(-(-rec.shape[0] // T), -(-rec.shape[1] // T))  # the widest anti-diagonal
        super().__init__(rec, T, R, C, slots, True)
        check_fits(rec, [("the tiles' last rows", self.rows_shape),
                         ("their last columns", self.cols_shape),
                         (f"{self.out_shape[0]} tiles being filled", self.out_shape)],
                   score=True)
        cuda = cuda_module()
        read = checked_read_source("cuda.atomic.cas(ck, 2, 0, 1) == 0", tile_read(T, R, C, True))
        first = f"cuda.atomic.cas(ck, {ARG}, 0, 1) == 0"
        cell = rewritten_cell(rec, ir, read, {"cuda": cuda},
                              stop=f"{CHECK}[2] != 0 or {CHECK}[{ARG}] != 0",
                              arg_reads=arg_reads(rec, ir, first))
        kernel = compile_kernel(rec, tile_source(T, R, C, len(rec.args), bounds, True), "tile",
                                cell)
        t0 = time.perf_counter()
        self.ROWS = cuda.device_array(self.rows_shape, dtype=rec.dtype)
        self.COLS = cuda.device_array(self.cols_shape, dtype=rec.dtype)
        self.OUT = cuda.device_array(self.out_shape, dtype=rec.dtype)
        self.ck = cuda.to_device(checks(1, self.shape)[0])
        self.args = tuple(cuda.to_device(np.ascontiguousarray(x)) if isinstance(x, np.ndarray)
                          else x for x in rec.args)
        self.h2d_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._launch = launcher(kernel, self._arguments(0, 0))
        self.compile_s = time.perf_counter() - t0
        self._back = cuda.pinned_array(self.out_shape[1:], dtype=rec.dtype)

    def _arguments(self, diagonal: int, first: int) -> tuple:
        return (self.ROWS, self.COLS, self.OUT, self.ck, diagonal, first, *self.args)

    def forward(self, progress: Callable[[int], None] | None) -> float:
        """Fill every anti-diagonal of tiles in order, keeping their edges; the seconds
        it took (``progress``, if given, told about the cells done about every 1% of the
        anti-diagonals).  ``RecurrenceError`` for what the checks found."""
        (A, W), T = self.tiles, self.T
        cuda = cuda_module()
        every = max(1, (A + W - 1) // 100)
        t0 = time.perf_counter()
        for d in range(A + W - 1):
            first = max(0, d - W + 1)
            self._launch(min(A - 1, d) - first + 1, T, self._arguments(d, first))
            if progress and (d + 1) % every == 0:
                cuda.synchronize()
                progress(self.cells_before(d + 1))
        cuda.synchronize()
        run_s = time.perf_counter() - t0
        raise_found(self.ck.copy_to_host()[None, :], self.rec)
        return run_s

    def _refill(self, a: int, b: int) -> np.ndarray:
        self._launch(1, self.T, self._arguments(a + b, a))
        self.OUT[0].copy_to_host(self._back)  # pinned: no staging through the driver
        return self._back
