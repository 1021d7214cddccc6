"""A 2-D table kept as the edges of its tiles, for recovering a solution of a table too
large to hold (``depgraph run --score --solution``): the tile kernel's source for the CPU
and the GPU, the solution walk's view of the tiles, and the CPU's fill on every core.

The table is cut into ``T x T`` tiles, tile ``(a, b)`` holding rows ``a T ..`` and columns
``b T ..``.  Every read goes at most ``R`` rows up and ``C`` columns left (never right,
never down), so a tile is computed from the ``R`` rows above it and the ``C`` columns
left of it (its *halo*), and the tiles of one anti-diagonal of tiles (``a + b``
constant) are independent.  The forward pass fills the anti-diagonals of tiles in order,
the tiles of one in parallel (CPU threads, GPU blocks), each into a buffer of its own,
and keeps each tile's last ``R`` rows (``ROWS``) and last ``C`` columns (``COLS``): ``n m
(R + C) / T`` cells, against ``n m`` for the table.

The solution walk (:func:`depgraph.frontend.provenance.solution`) reads the table
through :class:`TileCells`: before each cell's run it asks for the tile holding the
cell, which the same kernel fills again from the kept edges, so the cell's reads are
there too (its halo).  A path, climbing from the last cell to the first row or column,
refills each tile it crosses once: about ``(n + m) T`` cells in all.

A tile's buffer holds its cells and its halo by anti-diagonals on the GPU, where a
block's threads fill a tile an anti-diagonal at a time, and by rows on the CPU, where one
thread fills it row by row (:func:`place`).  The GPU refills a *cone* of tiles at once:
the tile asked for and every tile up to ``depth`` anti-diagonals of tiles up and left of
it (:func:`cone`), a block each, each copied by rows into a buffer of its own; a path
leaving a tile goes up, left or both, so the tiles it crosses next are in the cone, and a
refill of one tile, a block's barrier an anti-diagonal of it, takes as long as a refill
of all of them side by side.

Every read is checked against the table's shape (the first one outside recorded in the
checks, as :func:`runtime.backends.walk.checked_read_source` does), each value as it is
stored where it may not fit the table's dtype (:func:`runtime.backends.walk.emit_store`).

Assumptions: 2-D tables; reads at constant offsets ``-R .. 0`` rows and ``-C .. 0``
columns from their cell, not the cell itself (the caller checks it from the source,
:func:`runtime.schedule.score_plan.block_plan` with ``trim``); ``max(R, C, 1) <= T``; the
cell function is deterministic, so a refilled tile holds the values the pass computed.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
from runtime.backends.walk import CHECK_SLOTS, checks, emit_store, raise_found

__all__ = ["TILE_SIDES", "CORNER", "TileCells", "HostTiles", "cone", "tile_read", "tile_source",
           "tile_shapes"]

#: The slots of a CPU thread's checks (past the walk's own) holding the first row and
#: column of the tile it fills, which its reads are served relative to.
CORNER = CHECK_SLOTS

#: The tile sides tried, smallest first: the first at least the reads' reach is taken (a
#: smaller tile refills fewer cells a step of the walk, a larger one keeps fewer edges).
TILE_SIDES = (256, 512, 1024)


def place(u: str, v: str, R: int, C: int, diagonals: bool) -> str:
    """Where a tile's buffer holds its cell ``(u, v)`` (``-R <= u``, ``-C <= v``; the halo
    at negative indices): by anti-diagonals (``[u + v + R + C, u + R]``, the GPU's: the
    threads of a warp, a row each, read and store side by side) or by rows (``[u + R, v
    + C]``, the CPU's: a thread fills its tile row by row, in memory order).

    Examples
    --------
    >>> place("1", "2", 1, 1, True), place("1", "2", 1, 1, False)
    ('1 + 2 + 2, 1 + 1', '1 + 1, 2 + 1')
    """
    return f"{u} + {v} + {R + C}, {u} + {R}" if diagonals else f"{u} + {R}, {v} + {C}"


def tile_shapes(T: int, R: int, C: int, shape: tuple[int, int], slots: int, diagonals: bool
                ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The shapes of ``ROWS`` (a tile row's last ``R`` rows, each tile row but the last),
    ``COLS`` (each row's last ``C`` columns of each tile column but the last) and of
    ``slots`` tiles' buffers (:func:`place`).

    Examples
    --------
    >>> tile_shapes(4, 1, 1, (9, 7), 2, True)
    ((2, 1, 7), (9, 1, 1), (2, 9, 5))
    """
    n, m = shape
    buffer = (2 * T - 1 + R + C, T + R) if diagonals else (T + R, T + C)
    return (-(-n // T) - 1, R, m), (n, -(-m // T) - 1, C), (slots, *buffer)


def cone(depth: int) -> list[tuple[int, int]]:
    """The tiles of a refill's cone (module docstring) as ``(p, q)``: tile ``(a - p, b -
    q)`` of the cone from tile ``(a, b)``, for ``p + q <= depth``, in the order of the GPU
    kernel's blocks (:func:`tile_source`).

    Examples
    --------
    >>> cone(2)
    [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0)]
    """
    return [(p, q) for p in range(depth + 1) for q in range(depth + 1 - p)]


def tile_read(T: int, R: int, C: int, gpu: bool) -> list[str]:
    """The lines of a checked read ``read(B, ck, x0, x1, a, b)`` (in bounds) serving the
    read ``(a, b)`` of cell ``(x0, x1)`` from its tile's buffer ``B`` (:func:`place`); the
    tile's first cell found from the cell's on the GPU, read from the thread's ``ck``
    on the CPU (:data:`CORNER`)."""
    if gpu:
        return [f"u = a - (x0 // {T}) * {T}", f"v = b - (x1 // {T}) * {T}",
                f"return B[{place('u', 'v', R, C, True)}]"]
    return [f"return B[{place(f'a - ck[{CORNER}]', f'b - ck[{CORNER + 1}]', R, C, False)}]"]


@contextmanager
def _each(e: Emitter, var: str, count: str, gpu: int) -> Iterator[None]:
    """The lines inside for ``var`` in ``range(count)``: a loop on the CPU; on the GPU
    (``gpu``: the block's threads) each thread its own ``var``s, ``gpu`` apart."""
    if not gpu:
        with e.block(f"for {var} in range({count})"):
            yield
        return
    e(f"{var} = cuda.threadIdx.x")
    with e.block(f"while {var} < {count}"):
        yield
        e(f"{var} += {gpu}")


def _tile_body(e: Emitter, T: int, R: int, C: int, args: str,
               bounds: tuple[int, int] | None, ck: str, first: str, gpu: bool) -> None:
    """Fill tile ``(a, b)`` into ``B`` (the table's sides ``n``, ``m``): its halo from
    the edges kept, its cells (on the GPU anti-diagonal by anti-diagonal, a thread a row,
    a block barrier between them; on the CPU row by row), then its own edges."""
    threads = T if gpu else 0

    def at(u: str, v: str) -> str:
        return f"B[{place(u, v, R, C, gpu)}]"

    e(f"u0 = a * {T}", f"v0 = b * {T}", f"rows = min({T}, n - u0)", f"cols = min({T}, m - v0)")
    if not gpu:
        e(f"{ck}[{CORNER}] = u0", f"{ck}[{CORNER + 1}] = v0")
    if R:
        with e.block("if a > 0"), _each(e, "r", "cols", threads), e.block(f"for h in range({R})"):
            e(f"{at(f'h - {R}', 'r')} = ROWS[a - 1, h, v0 + r]")
    if C:
        with e.block("if b > 0"), _each(e, "q", f"{R} + rows", threads):
            with e.block(f"if u0 - {R} + q >= 0"), e.block(f"for c in range({C})"):
                e(f"{at(f'q - {R}', f'c - {C}')} = COLS[u0 - {R} + q, b - 1, c]")
    if gpu:
        e("cuda.syncthreads()", "r = cuda.threadIdx.x")
        cells = e.block("for s in range(rows + cols - 1)")
    else:
        cells = e.block("for r in range(rows)")
    with cells:
        inner = (e.block("if r < rows and s - r >= 0 and s - r < cols") if gpu else
                 e.block("for v in range(cols)"))
        with inner:
            if gpu:
                e("v = s - r")
            e("i = u0 + r", "j = v0 + v")
            if not gpu:
                e("assume(i >= 0)", "assume(j >= 0)", "assume(i < n)", "assume(j < m)")
            emit_store(e, at("r", "v"), f"cell(B, i, j{args}, {ck})", ("i", "j"), bounds, ck,
                       first)
        if gpu:
            e("cuda.syncthreads()")
    if gpu:  # a cone's refill keeps its tiles by rows and stores no edge (they are kept)
        with e.block("if depth >= 0"):
            e("H = HELD[k]", f"width = {C} + cols", "q = cuda.threadIdx.x")
            with e.block(f"while q < ({R} + rows) * width"):
                e(f"u = q // width - {R}", f"v = q % width - {C}", f"H[u + {R}, v + {C}] = "
                  f"{at('u', 'v')}", f"q += {T}")
            e("return")
    if R:
        with e.block(f"if u0 + {T} < n"), _each(e, "r", "cols", threads), \
                e.block(f"for h in range({R})"):
            e(f"ROWS[a, h, v0 + r] = {at(f'{T - R} + h', 'r')}")
    if C:
        with e.block(f"if v0 + {T} < m"), _each(e, "r", "rows", threads), \
                e.block(f"for c in range({C})"):
            e(f"COLS[u0 + r, b, c] = {at('r', f'{T - C} + c')}")


def tile_source(T: int, R: int, C: int, nargs: int, bounds: tuple[int, int] | None,
                gpu: bool) -> str:
    """Source of the tile kernel.

    - GPU: ``tile(ROWS, COLS, OUT, HELD, ck, diagonal, first, depth, *args)``, block
      ``k`` (``T`` threads, a row of the tile each) filling into ``OUT[k]``, with ``depth
      < 0``, tile ``(first + k, diagonal - first - k)`` and its edges; with ``depth >=
      0``, the ``k``-th tile of the cone of that depth from tile ``(first, diagonal -
      first)`` (:func:`cone`; none past the table's first row or column), copied by rows
      into ``HELD[k]``; ``ck`` the checks' one row.
    - CPU: ``tiles(ROWS, COLS, OUT, bar, chunks, ck, w0, w1, only, *args)``, one parallel
      region for the anti-diagonals of tiles ``w0 .. w1 - 1`` (``only`` >= 0: the tile
      of that row alone), the tiles of one going round the ``chunks`` threads, each
      into ``OUT[chunk]`` with its checks' row ``ck[chunk]``, a barrier (``bar``) between
      anti-diagonals.
    """
    args = arg_tail(nargs)
    e = Emitter()
    if gpu:
        with e.block(f"def tile(ROWS, COLS, OUT, HELD, ck, diagonal, first, depth{args})"):
            e("n = ck[0]", "m = ck[1]", "k = cuda.blockIdx.x", "a = first + k",
              "b = diagonal - a", "B = OUT[k]")
            with e.block("if depth >= 0"):  # the k-th (p, q) with p + q <= depth, p first
                e("p = 0", "left = k")
                with e.block("while left > depth - p"):
                    e("left -= depth - p + 1", "p += 1")
                e("a = first - p", "b = diagonal - first - left")
                with e.block("if a < 0 or b < 0"):
                    e("return")
            _tile_body(e, T, R, C, args, bounds, "ck", "cuda.atomic.cas(ck, 7, 0, 1) == 0", True)
        return e.source
    with e.block(f"def tiles(ROWS, COLS, OUT, bar, chunks, ck, w0, w1, only{args})"):
        e("n = ck[0, 0]", "m = ck[0, 1]", f"A = (n + {T - 1}) // {T}", f"W = (m + {T - 1}) // {T}")
        with e.block("for chunk in prange(chunks)"):
            e("row = ck[chunk]", "B = OUT[chunk]")
            with e.block("for w in range(w0, w1)"):
                with e.block("for a in range(max(0, w - W + 1) + chunk, min(A - 1, w) + 1, "
                             "chunks)"):
                    e("b = w - a")
                    with e.block("if only < 0 or a == only"):
                        _tile_body(e, T, R, C, args, bounds, "row", "row[7] == 0", False)
                e("arrive(bar, chunks * (w - w0 + 1))")
    return e.source


class TileCells(ABC):
    """The table as the edges of its tiles (module docstring) serving a solution walk as
    :class:`depgraph.frontend.provenance.Cells`: a tile at a time, refilled by
    :meth:`_refill` (the backend's) from the edges a forward pass kept."""

    def __init__(self, rec: Recurrence, T: int, R: int, C: int, slots: int, diagonals: bool):
        self.rec, self.shape = rec, (rec.shape[0], rec.shape[1])
        self.T, self.R, self.C = T, R, C
        self.tiles = (-(-self.shape[0] // T), -(-self.shape[1] // T))
        self.rows_shape, self.cols_shape, self.out_shape = tile_shapes(T, R, C, self.shape,
                                                                       slots, diagonals)
        size = rec.dtype.itemsize
        self.checkpoint_bytes = (math.prod(self.rows_shape) + math.prod(self.cols_shape)) * size
        self.block_bytes = math.prod(self.out_shape) * size
        self.held: tuple[int, int] | None = None  # the tile held, and its buffer
        self._cells = np.empty((0, 0), dtype=rec.dtype)
        self._corner = (0, 0)  # its first cell
        self.refills = self.refilled_cells = 0
        self.refill_s = self.compile_s = self.h2d_s = 0.0
        #: Told the rows from a refilled tile's first to the table's end, if set.
        self.climbed: Callable[[int], None] | None = None

    def cells_before(self, w: int) -> int:
        """The cells of the anti-diagonals of tiles ``0 .. w - 1`` (what a pass reports
        as done after them).

        Examples
        --------
        >>> from depgraph import cell_ir, recurrence
        >>> @recurrence(shape=(9, 7), dtype=np.int64)
        ... def paths(M, i, j):
        ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
        >>> t = HostTiles(paths, cell_ir(paths), 4, 1, 1, None)  # tiles 4 + 4 + 1 by 4 + 3
        >>> [t.cells_before(w) for w in range(5)]
        [0, 16, 44, 60, 63]
        """
        (n, m), T = self.shape, self.T
        return sum(min(T, n - a * T) * min(m, (w - a) * T) for a in range(min(self.tiles[0], w)))

    @abstractmethod
    def _refill(self, a: int, b: int) -> np.ndarray:
        """Tile ``(a, b)`` and its halo filled again from the kept edges, on the host by
        rows (:func:`place`'s ``[u + R, v + C]``, whatever the buffers' layout)."""

    def focus(self, cell: tuple[int, ...]) -> None:
        """Hold ``cell``'s tile and its halo, refilled unless held already."""
        tile = (cell[0] // self.T, cell[1] // self.T)
        if tile == self.held:
            return
        t0 = time.perf_counter()
        self._cells = self._refill(*tile)
        self.refill_s += time.perf_counter() - t0
        self.held, self._corner = tile, (tile[0] * self.T, tile[1] * self.T)
        self.refills += 1
        self.refilled_cells += (min(self.T, self.shape[0] - self._corner[0])
                                * min(self.T, self.shape[1] - self._corner[1]))
        if self.climbed:
            self.climbed(self.shape[0] - self._corner[0])

    def window(self, cell: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, int]]:
        """``cell``'s tile and its halo (:meth:`focus`) as one array by rows, and the
        table cell of its first: a window of the compiled walk
        (:mod:`runtime.backends.compiled_walk`).  Its halo past the table's first row or
        column holds no cell: a read there is outside the table, refused before."""
        self.focus(cell)
        (n, m), (a0, b0), R, C = self.shape, self._corner, self.R, self.C
        rows, cols = min(self.T, n - a0), min(self.T, m - b0)
        return self._cells[:R + rows, :C + cols], (a0 - R, b0 - C)

    def __getitem__(self, cell: tuple[int, ...]) -> Any:
        if self.held is None:
            self.focus(cell)
        i, j = cell
        u, v = i - self._corner[0], j - self._corner[1]
        if not (-self.R <= u < self.T and -self.C <= v < self.T and 0 <= i < self.shape[0]
                and 0 <= j < self.shape[1]):
            raise RecurrenceError(
                f"the solution walk read {cell}, outside the tile it holds ({self.held}, "
                f"{self.T} cells a side, with {self.R} rows above and {self.C} columns left): "
                "a read farther than the source's offsets say")
        return self._cells[u + self.R, v + self.C]


class HostTiles(TileCells):
    """The table as the edges of its tiles, filled on every core that a barrier can hold
    (:func:`runtime.backends.cpu.barrier_threads`).

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(9, 7), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> t = HostTiles(paths, cell_ir(paths), 4, 1, 1, None)
    >>> _ = t.forward(None)
    >>> t.focus((8, 6)); int(t[8, 6]), int(t[7, 6]), t.refills
    (3003, 1716, 1)
    """

    def __init__(self, rec: Recurrence, ir: CellIR, T: int, R: int, C: int,
                 bounds: tuple[int, int] | None):
        self.threads = cpu.barrier_threads()
        super().__init__(rec, T, R, C, self.threads, False)
        total = self.checkpoint_bytes + self.block_bytes
        if total > memory.available_memory():
            raise TooLargeError(
                f"recovering the solution keeps the edges of {self.tiles[0]} x {self.tiles[1]} "
                f"tiles and {self.threads} tiles being filled ({format_bytes(total)}), more "
                "than the free memory")
        cell = checked_cell(rec, ir, tile_read(T, R, C, False))
        self._kernel = cpu.kernel(rec, tile_source(T, R, C, len(rec.args), bounds, False),
                                  "tiles", cell, parallel=True)
        self.ROWS = np.zeros(self.rows_shape, dtype=rec.dtype)
        self.COLS = np.zeros(self.cols_shape, dtype=rec.dtype)
        self.OUT = np.zeros(self.out_shape, dtype=rec.dtype)

    def _run(self, chunks: int, w0: int, w1: int, only: int) -> float:
        """Anti-diagonals of tiles ``w0 .. w1 - 1`` on ``chunks`` threads (``only``: one
        tile row's alone); the seconds they ran.  ``RecurrenceError`` for what the checks
        found."""
        ck = checks(chunks, self.shape, extra=2)
        t = cpu.call(self._kernel, self.ROWS, self.COLS, self.OUT, np.zeros(1, np.int64),
                     chunks, ck, w0, w1, only, *self.rec.args)
        self.compile_s += t.compile_s
        raise_found(ck, self.rec)
        return t.run_s

    def forward(self, progress: Callable[[int], None] | None) -> float:
        """Fill every anti-diagonal of tiles in order, keeping their edges, in steps of
        about 1% of them (``progress``, if given, told about the cells done after each);
        the seconds the fills ran."""
        A, W = self.tiles
        step = max(1, (A + W - 1) // 100)
        run_s = 0.0
        for w0 in range(0, A + W - 1, step):
            w1 = min(A + W - 1, w0 + step)
            run_s += self._run(self.threads, w0, w1, -1)
            if progress:
                progress(self.cells_before(w1))
        return run_s

    def _refill(self, a: int, b: int) -> np.ndarray:
        self._run(1, a + b, a + b + 1, a)
        return self.OUT[0]
