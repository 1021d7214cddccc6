"""The CPU's tiled fills of diagonal patterns: the tile's shape and the fill's source.

A tiled fill (:func:`runtime.backends.cpu.tiled_fill`) covers the table with tiles in a
diagonal pattern's NOSE frame (:data:`patterns.DIAGONAL_FLIPS`), the tiles of one
anti-diagonal of tiles going round the threads, each filled row by row in the table's
own memory order; the threads meet at a barrier between anti-diagonals of tiles.  This
module chooses the tile (:func:`tile_for`), whether a tile's rows go two at a time
(:func:`paired`), and writes the fill's source (:func:`tiled_source`).

Assumptions: a 2-D table whose reads lie in the pattern's regions (so, in the frame, up
and to the left of the cell); the source is compiled by ``runtime.backends.cpu``, which
binds ``cell``, ``prange``, ``assume`` and ``arrive``.
"""

from __future__ import annotations

import ast

from depgraph.frontend.ir import CellIR
from patterns import DIAGONAL_FLIPS
from runtime.backends.cpu_cell import guard_nodes, store_source
from runtime.backends.emit import Emitter, arg_tail

__all__ = ["TILE", "LOOP_TILE", "MIN_TILE_COLUMNS", "tile_for", "paired", "tiled_source"]

#: Rows and columns of a tile of :func:`runtime.backends.cpu.tiled_fill` for a cell
#: without loops, on a wide table: long rows, so the memory a row of a tile writes is one
#: run that the caches fetch ahead, and few of them, so the tile (32 KiB of 8-byte cells)
#: and the column its right neighbour reads stay in an L1 cache (square 64 x 64 tiles ran
#: slower: docs/benchmarks.md, "the tiles' inner loop").
TILE = (16, 256)
#: The tile for a cell with loops: such a cell reads far along its row and its column
#: (the matrix chain's ``M[i, k]`` and ``M[k + 1, j]``), and a square tile's rows share
#: the columns they read.
LOOP_TILE = (64, 64)
#: The fewest columns :func:`tile_for` cuts a tile to: narrower tiles would pay their loop's
#: entry on too few cells a row, on a table too small to gain from the threads.
MIN_TILE_COLUMNS = 64


def tile_for(columns: int, threads: int, straight: bool = True) -> tuple[int, int]:
    """The tile of :func:`runtime.backends.cpu.tiled_fill` for a table of ``columns``
    columns on ``threads`` threads: :data:`LOOP_TILE` for a cell with loops (not
    ``straight``), else :data:`TILE`, its columns cut (not under
    :data:`MIN_TILE_COLUMNS`) so a row of tiles has two for each thread, else the
    widest anti-diagonal of tiles would leave threads idle.

    Examples
    --------
    >>> tile_for(12001, 2), tile_for(1001, 2), tile_for(200, 2), tile_for(1025, 2, False)
    ((16, 256), (16, 251), (16, 64), (64, 64))
    """
    if not straight:
        return LOOP_TILE
    rows, cols = TILE
    return rows, max(MIN_TILE_COLUMNS, min(cols, -(-columns // (2 * threads))))


def paired(ir: CellIR) -> bool:
    """Whether :func:`runtime.backends.cpu.tiled_fill` fills a tile's rows two at a time
    for the cell ``ir``: a cell without loops, whose every branch tests its indices
    alone.  A test of its data (the LCS's ``X[i - 1] == Y[j - 1]``) is a branch the
    processor mispredicts for a good share of the cells, and two rows of such cells
    ran slower than one; a cell with loops gains little from a second chain
    (docs/benchmarks.md, "two rows at a time").

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import cell_ir, recurrence
    >>> X = np.zeros(4, dtype=np.int64)
    >>> @recurrence(shape=(5, 5), dtype=np.int64, args=(X,))
    ... def edits(M, i, j, X):
    ...     if i == 0 or j == 0:
    ...         return i + j
    ...     change = M[i - 1, j - 1] + (X[i - 1] != X[j - 1])
    ...     return min(M[i - 1, j] + 1, M[i, j - 1] + 1, change)
    >>> @recurrence(shape=(5, 5), dtype=np.int64, args=(X,))
    ... def common(M, i, j, X):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     if X[i - 1] == X[j - 1]:
    ...         return M[i - 1, j - 1] + 1
    ...     return max(M[i - 1, j], M[i, j - 1])
    >>> paired(cell_ir(edits)), paired(cell_ir(common))
    (True, False)
    """
    return ir.straight and not any(isinstance(node, ast.Subscript) for node in guard_nodes(ir))


def tiled_source(code: str, nargs: int, tile: tuple[int, int], checked: bool,
                 fits: bool, pairs: bool = False) -> str:
    """One region for a whole tiled fill (:func:`runtime.backends.cpu.tiled_fill`) of
    diagonal pattern ``code`` by tiles of ``tile`` (rows, columns) in the pattern's
    NOSE frame, ``(u, q)`` a cell's row and column there.

    The first cell of each tile row is peeled off its loop: a cell function tests its first
    column (``j == 0``, or ``j == m - 1`` flipped) where its reads would leave the table,
    and with that test left in the loop, LLVM neither drops the test nor keeps the cell
    just stored in a register for the next, so the tiles ran slower per cell than the
    sweep; the rest of the row assumes the column is not the first, which removes both.
    With ``pairs``, a tile's rows go two at a time, the lower one a column behind
    (``(u, q)`` then ``(u + 1, q - 1)``, which reads nothing the step has not filled): a
    row's cells wait on each other, each on the one to its left, and two rows' chains run
    side by side in the core where one would leave it waiting (:func:`paired`).

    Examples
    --------
    >>> print(tiled_source("SONE", 0, (16, 256), False, False).splitlines()[12])
                        i = n - 1 - u
    >>> print(tiled_source("NOSE", 0, (16, 256), False, False, True).splitlines()[42])
                                j2 = q - 1
    """
    rows, cols = DIAGONAL_FLIPS[code]
    r, c = tile
    args = arg_tail(nargs)
    e = Emitter()

    def along(x: str, last: str, flipped: bool) -> str:
        """The table's index of the frame's index ``x``."""
        return (f"{last} - ({x})" if " " in x else f"{last} - {x}") if flipped else x

    def cell(i: str, v: str, first: bool, j: str = "j") -> None:
        inner = (f"{j} >= 0", f"{j} < m") if first else (
            (f"{j} >= 0", f"{j} < m - 1") if cols else (f"{j} >= 1", f"{j} < m"))
        e(f"{j} = {along(v, 'm - 1', cols)}",
          *(f"assume({fact})" for fact in (f"{i} >= 0", f"{i} < n", *inner)))
        store_source(e, f"cell(M, {i}, {j}{args}{', row' if checked else ''})", "row", fits,
                     f"{i}, {j}")

    def one_row(u: str, end: str) -> None:
        e(f"i = {along(u, 'n - 1', rows)}")
        cell("i", "v0", True)
        with e.block(f"for v in range(v0 + 1, {end})"):
            cell("i", "v", False)

    with e.block(f"def tiled(M, bar, chunks, ck{args})"):
        e("n = M.shape[0]", "m = M.shape[1]", f"ti = (n + {r - 1}) // {r}",
          f"tj = (m + {c - 1}) // {c}")
        with e.block("for chunk in prange(chunks)"):
            e("row = ck[chunk]")
            with e.block("for w in range(ti + tj - 1)"):
                with e.block("for a in range(max(0, w - tj + 1) + chunk, min(ti - 1, w) + 1, "
                             "chunks)"):
                    e("b = w - a", f"v0 = b * {c}")
                    if not pairs:
                        with e.block(f"for u in range(a * {r}, min(n, a * {r} + {r}))"):
                            one_row("u", f"min(m, v0 + {c})")
                    else:
                        e(f"v1 = min(m, v0 + {c})", f"u1 = min(n, a * {r} + {r})")
                        with e.block(f"for u in range(a * {r}, u1 - 1, 2)"):
                            e(f"i = {along('u', 'n - 1', rows)}",
                              f"i2 = {along('u + 1', 'n - 1', rows)}")
                            cell("i", "v0", True)
                            with e.block("if v0 + 1 < v1"):
                                cell("i", "v0 + 1", False)
                                cell("i2", "v0", True, "j2")
                                with e.block("for q in range(v0 + 2, v1)"):
                                    cell("i", "q", False)
                                    cell("i2", "q - 1", False, "j2")
                                cell("i2", "v1 - 1", False, "j2")
                            with e.block("else"):
                                cell("i2", "v0", True, "j2")
                        with e.block(f"if (u1 - a * {r}) % 2 == 1"):
                            one_row("u1 - 1", "v1")
                e("arrive(bar, chunks * (w + 1))")
    return e.source
