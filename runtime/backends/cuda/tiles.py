"""Diagonal patterns by tiles: one persistent launch of shared-memory tiles
(:func:`wave_fill`), or a launch per diagonal of tiles with cells in global memory
(:func:`diagonal_launches`); :func:`tiled_fill` takes the register strips instead when
they serve the reads.

Every diagonal pattern is NOSE on the table with its rows and/or columns reversed
(:data:`patterns.DIAGONAL_FLIPS`); the kernels walk that frame.  Reads of cells other
blocks wrote skip L1 (``ld.global.cg``).

Assumptions: 2-D tables, a diagonal pattern the reads fit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR
from depgraph.frontend.source import SourceUnavailable
from depgraph.model import Recurrence
from patterns import DIAGONAL_FLIPS, PATTERNS
from runtime.backends.cuda.cells import flip, loadable, rewritten_cell
from runtime.backends.cuda.device import (
    DeviceFill,
    Launches,
    coherent_names,
    compile_kernel,
    cuda_module,
    nap,
    run,
    sms,
)
from runtime.backends.cuda.strips import serves_strips, strip_fill
from runtime.backends.emit import Emitter, arg_tail

__all__ = ["tiled_fill", "wave_fill", "diagonal_launches", "tile_order"]


def tile_order(nu: int, nv: int) -> np.ndarray:
    """Tiles of an ``nu x nv`` grid (flat, row-major) by tile anti-diagonal, then row: the
    order in which the persistent kernel hands them out.

    Examples
    --------
    >>> tile_order(2, 3).tolist()
    [0, 1, 3, 2, 4, 5]
    """
    tu, tv = np.divmod(np.arange(nu * nv, dtype=np.int64), nv)
    return np.lexsort((tu, tu + tv)).astype(np.int32)


def tiled_fill(rec: Recurrence, ir: CellIR, pattern_index: int, tile: int = 64,
               copy_back: bool = True, rows_per_lane: int | None = None,
               predicted_s: float | None = None) -> DeviceFill:
    """A diagonal pattern filled in one launch by the fastest kernel that fits it:
    :func:`runtime.backends.cuda.strips.strip_fill` (cells in registers; ``predicted_s``,
    its predicted seconds) when the reads are the three nearest neighbours at constant
    offsets, else :func:`wave_fill` (``tile x tile`` tiles in shared memory), or one launch
    per diagonal of tiles when the cell function's source cannot be rewritten.
    ``DeviceFill.kernel`` says which ran."""
    code = PATTERNS[pattern_index].code
    if code not in DIAGONAL_FLIPS:
        raise ValueError(f"the tiled fill is for the diagonal patterns, not {code}")
    if serves_strips(rec, ir, code):
        return strip_fill(rec, ir, pattern_index, rows_per_lane, copy_back,
                          predicted_s=predicted_s)
    return wave_fill(rec, ir, pattern_index, tile, copy_back)


def _tile_read(code: str, tile: int) -> str:
    """A read served from a tile's shared buffer when it falls in the tile or its one-cell
    halo, from global memory past L1 otherwise; ``tile`` is ``(buffer, first row, first
    column)`` of the buffer in the pattern's NOSE frame."""
    rows, cols = DIAGONAL_FLIPS[code]
    e = Emitter()
    with e.block("def read(M, tile, x0, x1, a, b)"):
        e("n = M.shape[0]", "m = M.shape[1]", f"bu = {flip('a', 'n', rows)} - tile[1]",
          f"bv = {flip('b', 'm', cols)} - tile[2]")
        with e.block(f"if bu >= 0 and bu <= {tile} and bv >= 0 and bv <= {tile}"):
            e("return tile[0][bu, bv]")
        e("return LOAD(M, (int64(a), int64(b)))")
    return e.source


def _wave_source(code: str, tile: int, nargs: int) -> str:
    """The persistent tile kernel of :func:`wave_fill`."""
    rows, cols = DIAGONAL_FLIPS[code]
    I0, J0 = flip("u0 - 1", "n", rows), flip("v0 - 1", "m", cols)
    Iu, Jv = flip("u", "n", rows), flip("v", "m", cols)
    T, args = int(tile), arg_tail(nargs)
    e = Emitter()
    with e.block(f"def wave(M, order, flags, ticket{args})"):
        e("n = M.shape[0]", "m = M.shape[1]", f"nv = (m + {T} - 1) // {T}",
          "total = order.shape[0]", "K = cuda.shared.array(1, int64)", "r = cuda.threadIdx.x",
          f"S = cuda.shared.array(({T} + 1, {T} + 2), DT)")
        with e.block("while True"):
            with e.block("if r == 0"):  # take the next tile from the ticket
                e("K[0] = cuda.atomic.add(ticket, 0, 1)")
            e("cuda.syncthreads()", "k = K[0]")
            with e.block("if k >= total"):
                e("return")
            e("tile = order[k]", "tu = tile // nv", "tv = tile - tu * nv")
            with e.block("if r == 0"):  # wait for the tiles above and to the left
                for test, before in (("tu > 0", "tile - nv"), ("tv > 0", "tile - 1")):
                    with e.block(f"if {test}"), \
                            e.block(f"while cuda.atomic.add(flags, {before}, 0) == 0"):
                        e(nap())
            e("cuda.syncthreads()", f"u0 = tu * {T}", f"v0 = tv * {T}", "u = u0 + r", "v = v0 + r")
            for test, store, at in (("u0 > 0 and v < m", "S[0, r + 1]", (I0, Jv)),
                                    ("v0 > 0 and u < n", "S[r + 1, 0]", (Iu, J0)),
                                    ("r == 0 and u0 > 0 and v0 > 0", "S[0, 0]", (I0, J0))):
                with e.block(f"if {test}"):
                    e(f"{store} = LOAD(M, ({at[0]}, {at[1]}))")
            e("cuda.syncthreads()")
            with e.block(f"for s in range(2 * {T} - 1)"):
                e("c = s - r", "v = v0 + c")
                with e.block(f"if c >= 0 and c < {T} and u < n and v < m"):
                    e(f"S[r + 1, c + 1] = cell(M, {Iu}, {Jv}{args}, (S, u0 - 1, v0 - 1))")
                e("cuda.syncthreads()")
            e("v = v0 + r")
            with e.block("if v < m"), e.block(f"for q in range(min({T}, n - u0))"):
                e("u = u0 + q", f"M[{Iu}, {Jv}] = S[q + 1, r + 1]")
            e("cuda.threadfence()", "cuda.syncthreads()")  # publish the tile
            with e.block("if r == 0"):
                e("cuda.atomic.exch(flags, tile, 1)")
    return e.source


def wave_fill(rec: Recurrence, ir: CellIR, pattern_index: int, tile: int = 64,
              copy_back: bool = True) -> DeviceFill:
    """A diagonal pattern filled by ``tile x tile`` tiles, one block of ``tile`` threads
    per tile, in one persistent launch.

    Blocks take tiles in tile anti-diagonal order from an atomic ticket and wait for the
    tiles above and to the left (per-tile flags).  A tile's halo (the row above and the
    column to its left) is read into shared memory; thread ``r`` walks row ``r`` of the
    tile's anti-diagonals there, with a barrier between them; the tile is written back row
    by row, ``tile`` consecutive cells per store.  Reads inside the tile or its halo come
    from shared memory, every other read from global memory.

    Correct for any recurrence the pattern fits, reads of any length included: in the
    pattern's NOSE frame (:data:`patterns.DIAGONAL_FLIPS`) every read goes up and/or left,
    into this tile or a tile above or to the left, which precedes the tiles this one waits
    for.  Deadlock-free: tickets follow a topological order of tiles, so the earliest
    unfinished ticket is held by a running block whose tiles before it are done.

    When the cell function's source cannot be rewritten, the fill is one launch per
    diagonal of tiles with cells in global memory (:func:`diagonal_launches`).
    """
    code = PATTERNS[pattern_index].code
    n, m = rec.shape
    nu, nv = math.ceil(n / tile), math.ceil(m / tile)
    try:
        loadable(rec.dtype)
        cell = rewritten_cell(rec, ir, _tile_read(code, tile),
                              {**coherent_names(cuda_module()), "int64": np.int64})
    except SourceUnavailable:
        return diagonal_launches(rec, code, tile, copy_back)
    kern = compile_kernel(rec, _wave_source(code, tile, len(rec.args)), "wave", cell,
                          DT=np.dtype(rec.dtype).type, int64=np.int64,
                          **coherent_names(cuda_module()))
    sched = (tile_order(nu, nv), np.zeros(nu * nv, np.int32), np.zeros(1, np.int64))

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        blocks = min(nu * nv, sms(cuda) * max(1, min(32, 2048 // tile)))
        return [(blocks, int(tile), (dM, *dsched, *dargs))]

    return run(rec, kern, "C", copy_back, launches, sched,
               label=f"shared-memory tiles {tile}x{tile}")


def diagonal_launches(rec: Recurrence, code: str, tile: int, copy_back: bool) -> DeviceFill:
    """The tiled fill in global memory: one launch per diagonal of tiles, one block per
    tile, one thread per tile row walking the tile's anti-diagonals, a barrier between
    them; correct for the same reason as :func:`wave_fill` (earlier tile diagonals are
    earlier launches)."""
    rows, cols = DIAGONAL_FLIPS[code]
    T, args = int(tile), arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def tiles(M, td{args})"):
        e("n = M.shape[0]", "m = M.shape[1]", f"nv = (m + {T} - 1) // {T}",
          "tu = max(0, td - nv + 1) + cuda.blockIdx.x", "tv = td - tu", "r = cuda.threadIdx.x",
          f"u = tu * {T} + r")
        with e.block(f"for s in range(2 * {T} - 1)"):
            e("c = s - r", f"v = tv * {T} + c")
            with e.block(f"if c >= 0 and c < {T} and u < n and v < m"):
                e(f"i = {'n - 1 - u' if rows else 'u'}", f"j = {'m - 1 - v' if cols else 'v'}",
                  f"M[i, j] = cell(M, i, j{args})")
            e("cuda.syncthreads()")
    kern = compile_kernel(rec, e.source, "tiles")
    n, m = rec.shape
    nu, nv = math.ceil(n / tile), math.ceil(m / tile)

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        return [(min(nu - 1, td) - max(0, td - nv + 1) + 1, int(tile), (dM, td, *dargs))
                for td in range(nu + nv - 1)]

    return run(rec, kern, "C", copy_back, launches,
               label=f"a launch per diagonal of {tile}x{tile} tiles")
