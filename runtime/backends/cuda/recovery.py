"""A filled table left on the GPU, read by the solution walk a tile at a time, so only
the tiles the solution crosses come back to the host (SPEC section 5: recovering the
solution where the table lies costs less than copying the table back).

The table's memory is seen as rows of its last axis (C order) or of its first (F order,
the column patterns' layout); a tile is ``tile x tile`` cells of those rows, copied into a
device buffer by a small kernel and from there to the host when the walk first reads a
cell of it.  The last ``kept`` tiles stay on the host, so a path, which moves from a
cell to its neighbours, fetches each tile it crosses about once.

Assumptions: the table is a contiguous numba device array (what the fills leave on the
device); the walk (:func:`depgraph.frontend.provenance.solution`) reads cells with
``cells[cell]`` after :meth:`DeviceCells.focus`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from operator import mul
from typing import Any

import numpy as np

from depgraph.model import Recurrence
from runtime.backends.cuda.device import (
    THREADS,
    compile_kernel,
    cuda_module,
    host_copy,
    launcher,
)
from runtime.backends.emit import Emitter

__all__ = ["DeviceCells", "TILE", "KEPT"]

#: A tile's side, in cells: 64 KB of 4-byte cells.
TILE = 128
#: Tiles kept on the host at once.
KEPT = 64


def _tile_source() -> str:
    """The kernel copying the cells ``(r0 + i, c0 + j)`` of a table's rows (``flat``, rows
    of ``width`` cells) into ``out[i * side + j]``, a thread a cell (those past the table
    left as they are)."""
    e = Emitter()
    with e.block("def copy_tile(flat, width, side, r0, c0, out)"):
        e("k = cuda.grid(1)", "i = k // side", "c = c0 + k % side")
        with e.block("if k < out.size and c < width"):
            e("f = (r0 + i) * width + c")
            with e.block("if f < flat.size"):
                e("out[k] = flat[f]")
    return e.source


class DeviceCells:
    """The filled table ``table`` (a device array) of ``rec``, served a tile at a time
    (module docstring): ``cells[cell]`` is the cell's value, its tile copied back when
    first read; :attr:`tiles` counts the tiles copied and :attr:`bytes` their size.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import fill, recurrence, solution
    >>> @recurrence(shape=(9, 7), dtype=np.int32)
    ... def grid(M, i, j):
    ...     return 1 if i == 0 or j == 0 else max(M[i - 1, j], M[i, j - 1]) + 1
    >>> res = fill(grid, backend="cuda", copy_back=False)  # the simulator, in the suite
    >>> cells = DeviceCells(grid, res.device_table, tile=4)
    >>> found = solution(grid, cells)
    >>> found.cells == solution(grid, fill(grid, backend="python").table).cells, cells.tiles
    (True, 4)
    """

    def __init__(self, rec: Recurrence, table: Any, tile: int = TILE, kept: int = KEPT):
        self.shape: tuple[int, ...] = tuple(int(n) for n in table.shape)
        fortran = self._fortran = not table.is_c_contiguous()
        self._flat = table.ravel(order="F" if fortran else "C")
        self._width = self.shape[0] if fortran else self.shape[-1]
        # a cell's place in the flat memory: its index times each axis's stride in cells
        sides = self.shape if fortran else self.shape[::-1]
        strides = [math.prod(sides[:k]) for k in range(len(sides))]
        self._strides = tuple(strides if fortran else strides[::-1])
        self._tile, self._kept = tile, kept
        self._held: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        cuda = cuda_module()
        self._out = cuda.device_array(tile * tile, dtype=table.dtype)
        self._back = cuda.pinned_array(tile * tile, dtype=table.dtype)
        self._copy = host_copy(self._back, self._out)  # pinned: nothing staged
        kernel = compile_kernel(rec, _tile_source(), "copy_tile", cell=False)
        self._launch = launcher(kernel, (self._flat, self._width, tile, 0, 0, self._out))
        self._last: tuple[int, int] | None = None  # the tile read last, and its cells
        self._cells = np.empty((0, 0), dtype=table.dtype)
        self.tiles = 0
        self.bytes = 0

    def focus(self, cell: tuple[int, ...]) -> None:
        """Nothing to do ahead: a cell's tile comes back when the walk first reads it."""

    def __getitem__(self, cell: tuple[int, ...]) -> Any:
        row, col = divmod(sum(map(mul, cell, self._strides)), self._width)
        key = (row // self._tile, col // self._tile)
        if key != self._last:  # a path reads runs of cells of one tile
            held = self._held.get(key)
            if held is None:
                held = self._fetch(*key)
            else:
                self._held.move_to_end(key)
            self._last, self._cells = key, held
        return self._cells[row % self._tile, col % self._tile]

    def window(self, cell: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, int]] | None:
        """The tiles around ``cell``'s (three by three, fewer at the table's edges) as one
        array, and the table cell of its first: a window of the compiled walk
        (:mod:`runtime.backends.compiled_walk`) for a 2-D table (``None`` for another)."""
        if len(self.shape) != 2:
            return None
        t, width = self._tile, self._width
        row, col = divmod(sum(map(mul, cell, self._strides)), width)
        height = self._flat.size // width
        r0, c0 = max(row // t - 1, 0), max(col // t - 1, 0)
        r1, c1 = min(row // t + 2, -(-height // t)), min(col // t + 2, -(-width // t))
        out = np.empty(((r1 - r0) * t, (c1 - c0) * t), dtype=self._back.dtype)
        for tr in range(r0, r1):
            for tc in range(c0, c1):
                held = self._held.get((tr, tc))
                if held is None:
                    held = self._fetch(tr, tc)
                else:
                    self._held.move_to_end((tr, tc))
                out[(tr - r0) * t:(tr - r0 + 1) * t, (tc - c0) * t:(tc - c0 + 1) * t] = held
        out = out[:height - r0 * t, :width - c0 * t]
        self._last = None  # the held tiles may have changed
        # the memory's rows are the table's columns in F order
        return (out.T, (c0 * t, r0 * t)) if self._fortran else (out, (r0 * t, c0 * t))

    def _fetch(self, tr: int, tc: int) -> np.ndarray:
        """Tile ``(tr, tc)`` copied to the host and kept (the oldest let go)."""
        t = self._tile
        self._launch(math.ceil(t * t / THREADS), THREADS,
                     (self._flat, self._width, t, tr * t, tc * t, self._out))
        self._copy()
        held = self._back.reshape(t, t).copy()
        self._held[(tr, tc)] = held
        if len(self._held) > self._kept:
            self._held.popitem(last=False)
        self.tiles += 1
        self.bytes += held.nbytes
        return held
