"""The register strips' layout: a lane's block of cells, the store warps, the ring through
which they store, batches, 16-byte moves, the pairs a block's cells are stored in.

Plain arithmetic over the block's shape ``R x C`` (rows by columns of a lane's cells), the
cells' type, the store warps ``K`` and the batch ``B`` (steps between the store warps'
barriers); no GPU needed.  :mod:`runtime.backends.cuda.strip_source` generates the
kernel from these numbers, :mod:`runtime.backends.cuda.strips` runs it.

Assumptions: a warp of 32 lanes; 48 KiB of static shared memory a block.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_stores", "strip_block", "strip_store_warps", "store_warps_misfit",
           "ring_strides", "ring_bytes", "strip_batch", "store_runs_fit", "ring_vectors",
           "score_block", "STRIP_ROWS", "STRIP_BATCH", "RING_BYTES", "STRIP_SLOTS",
           "SCORE_TALL", "SCORE_BLOCK"]

#: Register strips: rows of a lane's block of cells (but for 4-byte floats), and blocks of
#: the row above a strip fetched at a time (a power of 2) by the score's strips and, where
#: the store warps' ring fits, the whole table's (:func:`strip_batch`); the block:
#: :func:`strip_block`.
STRIP_ROWS, STRIP_BATCH = 4, 4
#: Bytes at most of the ring in shared memory through which a strip's store warps take its
#: cells (:func:`strip_store_warps`), under the 48 KiB a block's static shared arrays have.
RING_BYTES = 40 * 1024
#: Strips whose last row the register strips keep at once (slots of their boundary ring).
STRIP_SLOTS = 2


def pair_stores(R: int, C: int, rows: bool, cols: bool, n: int, m: int) -> list[list[tuple[int, ...]]]:
    """How a full ``R x C`` block of 4-byte cells is stored (:func:`runtime.backends.cuda.strips.strip_fill`): for each
    of its rows, its columns in memory order, cut into pairs that fill one aligned 8-byte
    word (``(c, c')``, the cell at the lower address first) and single cells.

    A row's first cell sits at an even row and column in the NOSE frame (``R`` and ``C``
    even), so whether a cell's place in the C-ordered ``n x m`` table is even is known
    here, from the frame's flips and the parities of ``n`` and ``m``.

    Examples
    --------
    >>> pair_stores(2, 4, False, False, 6, 8)
    [[(0, 1), (2, 3)], [(0, 1), (2, 3)]]
    >>> pair_stores(2, 4, False, True, 6, 7)  # columns flipped, odd rows shifted by one
    [[(3,), (2, 1), (0,)], [(3, 2), (1, 0)]]
    """
    out = []
    for r in range(R):
        row = (n - 1 - r if rows else r) * m
        order = list(range(C))[::-1] if cols else list(range(C))
        even = [(row + (m - 1 - c if cols else c)) % 2 == 0 for c in order]
        groups: list[tuple[int, ...]] = []
        k = 0
        while k < C:
            take = 2 if k + 1 < C and even[k] else 1
            groups.append(tuple(order[k:k + take]))
            k += take
        out.append(groups)
    return out


def strip_block(dtype: np.dtype, narrowed: bool = False, staged: bool = False) -> tuple[int, int]:
    """Rows and columns of a lane's block in the register strips by default: ``8x4`` for
    4-byte floats and for cells computed in int32 (``narrowed``,
    :func:`runtime.backends.cuda.strips.strip_narrowing`), else ``4x2``: the larger block
    was the faster for 4-byte cells and the smaller for 8-byte ones, measured at 32768²
    on the alignment cases (docs/benchmarks.md, the strips' block sizes).  Where the store
    warps load the cells' grid (``staged``, :func:`runtime.backends.cuda.strips.staged_bytes`)
    ``4x4`` instead of ``8x4``: both rings of ``4x4`` blocks fit batches of 4 steps
    (:func:`strip_batch`), and ``4x4`` filled a grid and the no-pattern example's sheared
    table faster than ``8x4`` or ``4x8`` (docs/benchmarks.md, the staged loads' blocks).

    Examples
    --------
    >>> strip_block(np.dtype(np.float32)), strip_block(np.dtype(np.int32))
    ((8, 4), (4, 2))
    >>> strip_block(np.dtype(np.int64)), strip_block(np.dtype(np.int64), narrowed=True)
    ((4, 2), (8, 4))
    >>> strip_block(np.dtype(np.float32), staged=True)
    (4, 4)
    """
    dt = np.dtype(dtype)
    if narrowed or (dt.kind == "f" and dt.itemsize == 4):
        return (4, 4) if staged else (8, 4)
    return (STRIP_ROWS, 2)


def strip_store_warps(R: int, C: int, dtype: np.dtype, staged: int = 0) -> int:
    """Store warps a strip of ``R x C`` blocks of ``dtype`` cells takes by default
    (:func:`runtime.backends.cuda.strips.strip_fill`): ``R C B / 32`` (``B``: :func:`strip_batch`), so that a lane of
    theirs stores at most 32 cells of a batch, but 2 to 4 warps (8 made a block of 8x4
    int64 cells ask for more registers than a multiprocessor has); 0 (the compute warp
    stores its own cells) when their runs of ``C B`` cells would not cover the strip's
    ``32 R`` rows evenly (:func:`store_runs_fit`), or the ring would take more than
    ``RING_BYTES`` of shared memory (:func:`ring_bytes`, with ``staged`` bytes of loads a
    cell).  Store warps made the strips
    faster than a compute warp storing its own cells, and two to four were within a few
    percent of each other (docs/benchmarks.md, store warps).

    Examples
    --------
    >>> i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    >>> strip_store_warps(4, 2, i4), strip_store_warps(8, 4, i4), strip_store_warps(3, 2, i4)
    (2, 4, 0)
    >>> strip_store_warps(8, 8, i4), strip_store_warps(8, 8, i8)  # a ring of 33 or 67 KB
    (4, 0)
    """
    K = min(4, max(2, R * C * strip_batch(R, C, dtype, staged) // 32))
    return 0 if store_warps_misfit(R, C, K, dtype, staged) else K


def store_warps_misfit(R: int, C: int, K: int, dtype: np.dtype, staged: int = 0) -> str:
    """Why ``K`` store warps cannot serve strips of ``R x C`` blocks of ``dtype`` cells in
    batches of :func:`strip_batch` steps, or ``""`` when they can: their runs must cover
    the strip (:func:`store_runs_fit`) and their ring fit in ``RING_BYTES``.

    Examples
    --------
    >>> store_warps_misfit(4, 2, 2, np.dtype(np.int32))
    ''
    >>> store_warps_misfit(4, 2, 3, np.dtype(np.int32))
    '3 store warps do not cover strips of 4x2 blocks in whole runs'
    """
    B = strip_batch(R, C, dtype, staged)
    if not store_runs_fit(R, C, K, B):
        return f"{K} store warps do not cover strips of {R}x{C} blocks in whole runs"
    size = ring_bytes(R, C, B, dtype, 1, staged)
    if size > RING_BYTES:
        return (f"the store warps' ring of {R}x{C} blocks of {np.dtype(dtype)} cells would "
                f"take {size} bytes of shared memory, over {RING_BYTES}")
    return ""


def ring_strides(R: int, C: int, V: int = 1) -> tuple[int, int]:
    """Cells of the store warps' ring (:func:`runtime.backends.cuda.strip_source.strip_source`) from one lane's cells of a
    step to the next lane's, and from one step to the next.  Cells moved one at a time
    (``V`` 1): a lane's ``R C`` cells and one more (odd, so the lanes' writes miss each
    other's banks), a step's 32 lanes and one more.  Four at a time (``V`` 4, 16-byte
    vectors, 16-byte aligned): a lane's cells and 4 more, so the compute warp's vectors of
    8 lanes cover the 32 banks, and a step's 32 lanes (so a store warp's reads of a batch's
    steps meet on the same banks, 4-way: the scalar ring's 4-way conflicts were measured
    to cost nothing, docs/benchmarks.md).

    Examples
    --------
    >>> ring_strides(4, 2), ring_strides(8, 4, 4)
    ((9, 289), (36, 1152))
    """
    if V == 4:
        return R * C + 4, 32 * (R * C + 4)
    lane = R * C + 1
    return lane, 32 * lane + 1


def ring_bytes(R: int, C: int, B: int, dtype: np.dtype, V: int = 1, staged: int = 0) -> int:
    """Bytes of the rings in shared memory through which the store warps take a strip's
    cells of ``2 B`` steps, ``V`` at a time (strides: :func:`ring_strides`), and give it
    the loads they make for its cells, ``staged`` bytes a cell (the cell's loads of its
    arguments by row and column, :func:`runtime.backends.cuda.strip_source.strip_source`).

    Examples
    --------
    >>> ring_bytes(4, 2, 4, np.dtype(np.int32)), ring_bytes(4, 2, 4, np.dtype(np.int32), 1, 8)
    (9248, 27744)
    """
    return 2 * B * ring_strides(R, C, V)[1] * (np.dtype(dtype).itemsize + staged)


def strip_batch(R: int, C: int, dtype: np.dtype, staged: int = 0) -> int:
    """Steps a whole-table strip of ``R x C`` blocks of ``dtype`` cells takes as a batch
    (:func:`runtime.backends.cuda.strips.strip_fill`): the blocks of the row above fetched at a time, and the steps
    between the store warps' barriers; ``STRIP_BATCH``, or 2 where the store warps' rings
    of ``STRIP_BATCH`` steps would take more than ``RING_BYTES`` (:func:`ring_bytes`, with
    ``staged`` bytes of loads a cell).
    Once blocks ran whole past the table's edge, batches of 4 with 4 store warps were
    faster than batches of 2 with 2 on odd sides and within a few percent on even ones
    (docs/benchmarks.md, whole blocks past the table's edge).

    Examples
    --------
    >>> i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    >>> strip_batch(8, 4, i4), strip_batch(4, 2, i8), strip_batch(8, 4, i8), strip_batch(8, 8, i4)
    (4, 4, 2, 2)
    >>> strip_batch(8, 4, i4, 4)
    2
    """
    fits = ring_bytes(R, C, STRIP_BATCH, dtype, 1, staged) <= RING_BYTES
    return STRIP_BATCH if fits else 2


def store_runs_fit(R: int, C: int, K: int, B: int, V: int = 1) -> bool:
    """Whether ``K`` store warps' lanes, ``V`` cells each, cover a batch of ``B`` steps of
    a strip of ``R x C`` blocks in whole runs (``C B`` cells of a row), each lane keeping
    its column and lane offset from one run to the next (so its addresses step by
    constants).

    Examples
    --------
    >>> store_runs_fit(4, 2, 2, 4), store_runs_fit(4, 2, 3, 4), store_runs_fit(6, 2, 2, 4)
    (True, False, False)
    >>> store_runs_fit(8, 4, 4, 4, 4), store_runs_fit(8, 2, 4, 4, 4)
    (True, False)
    """
    if K <= 0 or C % V:
        return False
    run = C * B // V  # lanes a run takes
    P = 32 * K // run
    return 32 * K % run == 0 and P % R == 0 and 32 * R % P == 0


def ring_vectors(R: int, C: int, K: int, B: int, cols: bool, m: int, rt: np.dtype,
                  dtype: np.dtype, staged: int = 0) -> int:
    """Cells the store warps' ring moves at a time (:func:`runtime.backends.cuda.strip_source.strip_source`): 4, one 16-byte
    vector into the ring, out of it and into the table, where ``K`` store warps serve the
    strip and every vector is one aligned 16-byte word of both: cells of 4 bytes in the
    registers and the table, blocks of a multiple of 4 columns, columns not flipped (a
    vector's cells in the table's order), a multiple of 4 columns (each row's vectors
    aligned), the lanes covering the runs (:func:`store_runs_fit`) and the rings (with
    ``staged`` bytes of loads a cell) fitting in ``RING_BYTES``; else 1.

    Examples
    --------
    >>> i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    >>> [ring_vectors(8, 4, 4, 4, flip, m, i4, t) for flip, m, t in
    ...  ((False, 32768, i4), (False, 32769, i4), (True, 32768, i4), (False, 32768, i8))]
    [4, 1, 1, 1]
    """
    fits = (not cols and m % 4 == 0 and rt.itemsize == dtype.itemsize == 4
            and store_runs_fit(R, C, K, B, 4) and ring_bytes(R, C, B, rt, 4, staged) <= RING_BYTES)
    return 4 if fits else 1


#: Rows from which a score's strips take ``SCORE_BLOCK`` blocks (4-byte floats and cells
#: computed in int32 take them at any height): :func:`score_block`.
SCORE_TALL, SCORE_BLOCK = 100_000, (8, 4)


def score_block(dtype: np.dtype, rows: int, narrowed: bool = False) -> tuple[int, int]:
    """Rows and columns of a lane's block in a score's strips by default: ``SCORE_BLOCK``
    (8x4) for 4-byte floats, cells computed in int32 (``narrowed``) and tables of
    ``SCORE_TALL`` rows or more, else ``4x1``: 8x4 was the faster for 4-byte cells at
    every height, and for 8-byte ones only from about 10^5 rows (docs/benchmarks.md, score
    blocks by height).

    Examples
    --------
    >>> score_block(np.dtype(np.int32), 32768), score_block(np.dtype(np.int32), 10**6)
    ((4, 1), (8, 4))
    >>> score_block(np.dtype(np.float32), 4096), score_block(np.dtype(np.int32), 4096, True)
    ((8, 4), (8, 4))
    """
    dt = np.dtype(dtype)
    if narrowed or rows >= SCORE_TALL or (dt.kind == "f" and dt.itemsize == 4):
        return SCORE_BLOCK
    return STRIP_ROWS, 1
