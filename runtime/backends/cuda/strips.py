"""Diagonal patterns in registers: the register strips (:func:`strip_fill`), for
recurrences whose reads are a diagonal pattern's three nearest neighbours.

The kernel (:mod:`runtime.backends.cuda.strip_source`) is compiled per block shape and
cell; the cell order of a lane's block (rows or anti-diagonals), which changes the code
ptxas schedules but not the table, is chosen by timing both once per machine
(:func:`strip_order`) and kept on disk under a digest of what was generated.

Assumptions: 2-D tables; cells that are numbers of at most 8 bytes; reads at constant
offsets, the three nearest neighbours in the pattern's NOSE frame.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR
from depgraph.frontend.narrow import Narrowing, narrowing
from depgraph.frontend.source import SourceUnavailable
from depgraph.model import Recurrence
from depgraph.usercache import cache_root, read_json, write_json
from patterns import DIAGONAL_FLIPS, PATTERNS, frame_offset
from runtime.backends import intrinsics
from runtime.backends.cache import CACHE
from runtime.backends.cuda import device
from runtime.backends.cuda.cells import (
    argument_loads,
    narrow_note,
    register_type,
    rewritten_cell,
)
from runtime.backends.cuda.device import (
    DeviceFill,
    Launches,
    coherent_names,
    compile_kernel,
    cuda_module,
    run,
    simulated,
    sms,
)
from runtime.backends.cuda.strip_layout import (
    STRIP_BATCH,
    STRIP_SLOTS,
    pair_stores,
    ring_vectors,
    store_warps_misfit,
    strip_batch,
    strip_block,
    strip_store_warps,
)
from runtime.backends.cuda.strip_source import strip_source
from runtime.backends.emit import Emitter, compile_source, digest, remember

__all__ = ["strip_fill", "strip_shape", "strip_order", "strip_narrowing", "strip_kernel",
           "serves_strips", "frame_offsets", "words_of", "strip_grid", "ORDER_PROBE_STRIPS",
           "ORDER_PROBE_RUNS", "staged_bytes"]

#: The reads :func:`strip_fill` serves: left, up and up-left in the NOSE frame.
_NEAREST = frozenset({(0, -1), (-1, 0), (-1, -1)})
#: Strips a probe of :func:`strip_order` fills, and the times it fills each.
ORDER_PROBE_STRIPS, ORDER_PROBE_RUNS = 2, 3
#: Seconds of a fill (as predicted) from which :func:`strip_order` times the two orders:
#: they differ by up to a third of the fill, and timing them compiles a second kernel,
#: seconds of work, so a shorter fill takes rows (docs/benchmarks.md).
ORDER_TIMED_FROM_S = 1.0


def frame_offsets(ir: CellIR, code: str) -> set[tuple[int, int]]:
    """The constant read offsets in diagonal pattern ``code``'s NOSE frame
    (``SourceUnavailable`` when the reads are not at constant offsets)."""
    return {frame_offset(code, o) for o in ir.constant_offsets()}


def words_of(dtype: np.dtype) -> int:
    """64-bit words a boundary value of ``dtype`` takes (:func:`_boundary_words`: 32 bits
    of the value each); ``SourceUnavailable`` for cells the strips do not carry, anything
    but bools, integers of up to 8 bytes and floats of 4 or 8."""
    dt = np.dtype(dtype)
    if dt.kind not in "biuf" or dt.itemsize > 8 or (dt.kind == "f" and dt.itemsize < 4):
        raise SourceUnavailable(f"{dt} cells")
    return 1 if dt.itemsize <= 4 else 2


def serves_strips(rec: Recurrence, ir: CellIR, code: str) -> bool:
    """Whether :func:`strip_fill` can fill ``rec`` in diagonal pattern ``code``'s frame:
    its reads are the three nearest neighbours there, at constant offsets, and its cells
    are numbers of at most 8 bytes."""
    if rec.ndim != 2:
        return False
    try:
        words_of(rec.dtype)
        return frame_offsets(ir, code) <= _NEAREST
    except SourceUnavailable:
        return False


def strip_narrowing(rec: Recurrence, ir: CellIR, narrow: bool = True) -> Narrowing | None:
    """The proof (:func:`depgraph.frontend.narrow.narrowing`) that the strips may compute
    ``rec``'s cells in int32: the strips read a cell's three nearest neighbours, so a
    cell's depth is below the ``n + m - 1`` anti-diagonals; ``None`` when not ``narrow``
    or there is no proof."""
    return narrowing(ir, rec.shape, rec.dtype, rec.args, sum(rec.shape) - 1) \
        if narrow else None


def strip_fill(rec: Recurrence, ir: CellIR, pattern_index: int,
               rows_per_lane: int | None = None, copy_back: bool = True,
               cols_per_step: int | None = None, store_warps: int | None = None,
               narrow: bool = True, vectors: bool = True,
               diagonals: bool | None = None, predicted_s: float | None = None,
               staged: bool = True) -> DeviceFill:
    """A diagonal pattern whose reads are its three nearest neighbours (offsets
    ``(0, -1)``, ``(-1, 0)``, ``(-1, -1)`` in the NOSE frame, at constant offsets) filled
    in registers.

    One compute warp per strip of ``32 R`` rows (``R = rows_per_lane``), taken in order
    from an atomic ticket.  At step ``s`` lane ``k`` computes its ``R x C`` block (``C =
    cols_per_step``; both by default
    :func:`runtime.backends.cuda.strip_layout.strip_block`) of columns ``(s - k) C ...``:
    its ``R`` rows, ``C`` columns, every cell into a register before any is stored, so
    the unrolled cells overlap, the cell's loads of its arguments made by the kernel ahead
    of time (:func:`runtime.backends.cuda.strip_source.strip_source`); a cell's neighbours
    come from the block, the lane's last column, or the lane above's last row by warp
    shuffles, never from memory.  Cells of 4 bytes in blocks of even ``R`` and ``C`` are
    stored two to an aligned 8-byte word where they sit side by side: half the store
    instructions, each lane's stores scattered over rows.  Unless ``store_warps`` is 0,
    the block's other ``store_warps`` warps (by default
    :func:`runtime.backends.cuda.strip_layout.strip_store_warps`) store the cells instead:
    the compute warp writes them into a ring in shared memory, and every batch of ``B``
    steps (:func:`runtime.backends.cuda.strip_layout.strip_batch`), after a block
    barrier, the store warps store the batch before, each store instruction a few rows'
    runs of ``C B`` cells.

    The table itself is never read back during the fill.  A strip hands its last row to
    the strip below through a ring of ``STRIP_SLOTS`` rows of self-validating words
    (:func:`_boundary_words`): the strip below fetches them a batch of blocks ahead and
    waits only on a word not yet written, so no memory fence, flag or progress counter
    sits between strips.  Deadlock-free: a strip waits only on the strip above, whose
    ticket came first.

    With ``narrow``, an integer cell is computed in int32 when that is proven exact
    (:func:`strip_narrowing`): the cells' registers, shuffles and boundary words are
    then 4 bytes whatever the table's type.

    With store warps, a cell that runs anywhere
    (:meth:`depgraph.frontend.ir.CellIR.runs_anywhere`: straight-line code whose only
    memory is its reads of ``M`` and the loads the kernel makes for it, clamped into their
    arrays) is computed in whole blocks even past the table's last row or column, and the
    store warps leave out the cells outside; other cells keep a guarded copy of the block
    for the partial blocks, a branch that splits the warp at every strip's end.  Such a
    cell's guards (``if test: return value``) are applied last, as selects, where
    :func:`runtime.backends.speculate.speculate` can: no branch on a block's first row and
    column.

    With ``staged`` (on by default) and store warps, the cell's loads of its arguments
    by row and column (a grid of costs, ``A[i, j]``) are the store warps' too, a batch
    ahead, side by side along a row, through another ring in shared memory
    (:func:`staged_bytes`), and a batch is then 2 steps where both rings of 4 would not fit
    (:func:`runtime.backends.cuda.strip_layout.strip_batch`); where both would not fit
    even then, the store warps take the cells alone.

    Three options change the code, not the table.  ``vectors`` (on by default) moves the
    store warps' cells 4 at a time as 16-byte vectors where
    :func:`runtime.backends.cuda.strip_layout.ring_vectors` allows (4-byte cells, a
    multiple of 4 columns).  ``diagonals`` computes a lane's block anti-diagonal by
    anti-diagonal instead of row by row: the same cells, which ptxas schedules
    differently, and neither order wins everywhere.  With ``diagonals`` left ``None``
    (and store warps serving the strip, on a GPU) the fill takes the order
    :func:`strip_order` times faster on this GPU, chosen once and cached on disk, unless
    the fill is ``predicted_s`` seconds long, under ``ORDER_TIMED_FROM_S``, and no choice
    was kept: then rows.  ``staged``, above.

    ``ValueError`` when the reads are not those three, or ``store_warps`` cannot serve
    the block (:func:`runtime.backends.cuda.strip_layout.store_warps_misfit`);
    ``SourceUnavailable`` when the reads are not at constant offsets, or the cells are
    not numbers of at most 8 bytes.
    """
    nw = strip_narrowing(rec, ir, narrow)
    rt = register_type(rec, nw)
    R, C, K, st = strip_shape(rec, ir, nw, staged, rows_per_lane, cols_per_step, store_warps)
    if store_warps and (why := store_warps_misfit(R, C, K, rt, st)):  # one asked for
        raise ValueError(why)
    how = ""
    if diagonals is None:
        diagonals = strip_order(rec, ir, pattern_index, R, C, K, nw, vectors, predicted_s, st)
        how = "" if not _orders_timed(K) else (
            " chosen by timing" if diagonals is not None else
            f" (a fill predicted under {ORDER_TIMED_FROM_S:g} s: the orders not timed)")
    return _strips(rec, ir, pattern_index, R, C, K, nw, vectors, bool(diagonals), copy_back,
                   st, how)


def strip_shape(rec: Recurrence, ir: CellIR, nw: Narrowing | None, staged: bool = True,
                rows_per_lane: int | None = None, cols_per_step: int | None = None,
                store_warps: int | None = None) -> tuple[int, int, int, int]:
    """The block's rows and columns, the store warps and the staged bytes a cell
    (:func:`staged_bytes`, 0 for none) of :func:`strip_fill` with these arguments: the
    default block (:func:`runtime.backends.cuda.strip_layout.strip_block`) is the staged
    loads' where they are made, else the plain one; the loads are not staged where their
    ring does not fit beside the cells' (the store warps then take the cells alone).

    Examples
    --------
    >>> from depgraph import recurrence
    >>> from depgraph.frontend.ir import cell_ir
    >>> G = np.zeros((4, 5), np.float32)
    >>> @recurrence(shape=(4, 5), dtype=np.float32, args=(G,))
    ... def grid(M, i, j, G):
    ...     if i == 0 or j == 0:
    ...         return G[i, j]
    ...     return G[i, j] + min(M[i - 1, j], M[i, j - 1])
    >>> strip_shape(grid, cell_ir(grid), None), strip_shape(grid, cell_ir(grid), None, False)
    ((4, 4, 2, 4), (8, 4, 4, 0))
    """
    rt = register_type(rec, nw)

    def shape(st: int) -> tuple[int, int, int, int]:
        R, C = strip_block(rec.dtype, nw is not None, bool(st))
        R, C = rows_per_lane or R, cols_per_step or C
        return R, C, strip_store_warps(R, C, rt, st) if store_warps is None else store_warps, st

    R, C, K, st = shape(staged_bytes(rec, ir) if staged else 0)
    if st and (not K or store_warps_misfit(R, C, K, rt, st)):
        return shape(0)  # no room for the loads' ring beside the cells': store warps without it
    return R, C, K, st


def staged_bytes(rec: Recurrence, ir: CellIR) -> int:
    """Bytes a cell of ``rec`` takes in the ring of loads the store warps make for it
    (:func:`strip_fill`'s ``staged``): its loads of its arguments by row and column
    (:func:`runtime.backends.cuda.cells.argument_loads`), each its array's element size.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> from depgraph.frontend.ir import cell_ir
    >>> A, X = np.zeros((4, 5), np.int32), np.zeros(4, np.int64)
    >>> @recurrence(shape=(4, 5), dtype=np.int32, args=(A, X))
    ... def grid(M, i, j, A, X):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     return A[i, j] + X[i] + max(M[i - 1, j], M[i, j - 1])
    >>> staged_bytes(grid, cell_ir(grid))
    4
    """
    _, loads = argument_loads(rec, ir)
    return sum(dt.itemsize for dt, text in zip(_load_types(rec, ir), loads)
               if "{0}" in text and "{1}" in text)


def _load_types(rec: Recurrence, ir: CellIR) -> list[np.dtype]:
    """The element type of each load the kernel makes for the cell, in the order of
    :func:`runtime.backends.cuda.cells.argument_loads`."""
    arrays, _ = argument_loads(rec, ir)
    return [np.asarray(rec.args[ir.params.index(load.array)]).dtype
            for load in ir.loads_of(arrays)]


def _strips(rec: Recurrence, ir: CellIR, pattern_index: int, R: int, C: int, K: int,
            nw: Narrowing | None, vectors: bool, diagonals: bool, copy_back: bool,
            staged: int = 0, chosen: str = "") -> DeviceFill:
    """:func:`strip_fill` with every choice made (``staged``: bytes a cell of loads the
    store warps make, 0 for none; ``chosen``: what the label says of the order's
    choice)."""
    rt = register_type(rec, nw)
    kern, moves, sched, head = strip_kernel(rec, ir, pattern_index, R, C, False, K,
                                            strip_batch(R, C, rt, staged), nw, vectors,
                                            diagonals, staged=staged)

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        table: tuple[Any, ...]
        if moves == 2:
            table = (dM, _words_view(dM))
        elif K:
            table = (dM, dM.reshape(dM.size))
        else:
            table = (dM,)
        return [(strip_grid(cuda, head[0]), 32 * (1 + K), (*table, *dsched, *head, *dargs))]

    return run(rec, kern, "C", copy_back, launches, sched,
               label=f"register strips of {32 * R} rows ({R}x{C} cells a lane"
                     + (f", {K} store warps" if K else "")
                     + (" loading the cells' arguments" if staged else "")
                     + (", 16-byte stores" if moves == 4 else "")
                     + (", cells by anti-diagonals" if diagonals else ", cells by rows" if chosen
                        else "") + chosen + narrow_note(nw) + ")")


def strip_order(rec: Recurrence, ir: CellIR, pattern_index: int, R: int, C: int, K: int,
                nw: Narrowing | None, vectors: bool, predicted_s: float | None = None,
                staged: int = 0) -> bool | None:
    """Whether :func:`strip_fill` computes a lane's block by anti-diagonals (``True``) or
    by rows: the order whose kernel fills a probe faster on this GPU, the first
    ``ORDER_PROBE_STRIPS`` strips of ``rec``'s table (all its columns, so the same two
    compiled kernels as the fill), each order ``ORDER_PROBE_RUNS`` times, the first run
    of each left out.  Chosen once per cell function and kernel in a process, and kept
    on disk (:func:`depgraph.usercache.cache_root`, ``strip-orders.json``) under a
    digest of the device, numba's version, the cell function's code and both kernels'
    generated source, so a later process compiles only the chosen kernel, and a change to
    either kernel's source times the orders again.  A stale entry (say the cell's globals
    changed) can cost speed, never a wrong table.  Rows without store warps (``K`` 0) or
    under the simulator, where nothing is timed; ``None`` (rows, nothing kept) when no
    choice was kept and the fill is predicted to take ``predicted_s`` seconds, under
    ``ORDER_TIMED_FROM_S``."""
    if not _orders_timed(K):
        return False
    n, m = rec.shape
    _, card = device.status()
    rt = register_type(rec, nw)
    generated = [_strip_parts(rec, ir, pattern_index, R, C, False, K,
                              strip_batch(R, C, rt, staged), nw, vectors, order,
                              staged=staged)[0] for order in (False, True)]
    key = _order_digest(rec, card, generated, nw)
    kept = _cached_orders().get(key)
    if kept is None and predicted_s is not None and predicted_s < ORDER_TIMED_FROM_S:
        return None

    def choose() -> bool:
        chosen = kept
        if chosen is None:
            probe = replace(rec, shape=(min(n, 32 * R * ORDER_PROBE_STRIPS), m))
            times = {order: min([_strips(probe, ir, pattern_index, R, C, K, nw, vectors, order,
                                         False, staged).compute_s
                                 for _ in range(ORDER_PROBE_RUNS)][1:])
                     for order in (False, True)}
            chosen = times[True] < times[False]
            _keep_order(key, chosen)
        return chosen

    return bool(CACHE.get(rec.func, ("cuda", "strip-order", key), choose))


def _orders_timed(K: int) -> bool:
    """Whether :func:`strip_order` times the two orders: with store warps, on a GPU."""
    return bool(K) and not simulated()


def _order_digest(rec: Recurrence, device: str, generated: list[str],
                  nw: Narrowing | None) -> str:
    """A digest of what a strip kernel's speed depends on: the device, numba's version,
    the cell function's code, the cells' and arguments' types, the values computed in
    int32 (``nw``) and the kernels' generated source (which holds the block, the store
    warps and every other parameter)."""
    import numba

    def code(c: Any) -> Any:  # nested code objects by their contents, not their addresses
        return (c.co_code, c.co_names, tuple(code(k) if inspect.iscode(k) else repr(k)
                                             for k in c.co_consts))

    args = tuple((np.asarray(a).dtype.str, np.ndim(a)) for a in rec.args)
    text = repr((device, numba.__version__, code(rec.func.__code__),
                 np.dtype(rec.dtype).str, args, [digest(g) for g in generated],
                 sorted(map(repr, nw.positions)) if nw else None))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _orders_path() -> Path:
    """The file of :func:`strip_order`'s choices."""
    return cache_root() / "strip-orders.json"


def _cached_orders() -> dict[str, bool]:
    """:func:`strip_order`'s choices kept on disk (none when the file is missing or
    damaged)."""
    raw = read_json(_orders_path())
    return {k: v for k, v in raw.items() if isinstance(v, bool)} if isinstance(raw, dict) else {}


def _keep_order(key: str, chosen: bool) -> None:
    """Add a choice to the file of :func:`_cached_orders` (kept in memory only where the
    file cannot be written)."""
    write_json(_orders_path(), {**_cached_orders(), key: chosen})


def strip_grid(cuda: Any, nstrips: int) -> int:
    """Blocks a strip fill launches (a strip's compute warp and its store warps each): one a
    strip, at most 16 a multiprocessor (a block done with its strip takes the next ticket;
    blocks that do not fit on a multiprocessor at once start later and find the strips
    taken)."""
    return min(nstrips, sms(cuda) * 16)


def _register_read(rows: bool, cols: bool) -> str:
    """The strips' read of ``M``: the cell's neighbour up, left or up-left in the NOSE
    frame, from ``regs``, the registers the kernel passes in."""
    e = Emitter()
    with e.block("def read(M, regs, x0, x1, a, b)"):
        with e.block(f"if {'(x0 - a)' if rows else '(a - x0)'} == 0"):
            e("return regs[0]")
        with e.block(f"if {'(x1 - b)' if cols else '(b - x1)'} == 0"):
            e("return regs[1]")
        e("return regs[2]")
    return e.source


def _strip_parts(rec: Recurrence, ir: CellIR, pattern_index: int, R: int, C: int,
                 score: bool, K: int, B: int, nw: Narrowing | None, vectors: bool,
                 diagonals: bool, edges: bool = False, staged: int = 0
                 ) -> tuple[str, int, bool, list[str]]:
    """The strip kernel's source, the cells a store moves at a time (2: the compute
    warp's pairs, 4: the store warps' vectors; else 1), whether the cell runs anywhere and
    the cell's argument loads (by row and column the store warps', with ``staged``
    bytes of them a cell); ``ValueError`` unless the strips serve ``rec`` in the
    pattern's frame."""
    code = PATTERNS[pattern_index].code
    if code not in DIAGONAL_FLIPS:
        raise ValueError(f"the strip fill is for the diagonal patterns, not {code}")
    rows, cols = DIAGONAL_FLIPS[code]
    if not frame_offsets(ir, code) <= _NEAREST:
        raise ValueError(f"the strip fill serves reads of the 3 nearest {code} neighbours only")
    rt = register_type(rec, nw)
    arrays, loads = argument_loads(rec, ir)
    anywhere = bool(K or score) and ir.runs_anywhere(arrays)
    n, m = rec.shape
    packed = (np.dtype(rec.dtype).itemsize == 4 and R % 2 == 0 and C % 2 == 0 and not score
              and not K)
    pairs = pair_stores(R, C, rows, cols, n, m) if packed else None
    V = ring_vectors(R, C, K, B, cols, m, rt, np.dtype(rec.dtype), staged) if vectors else 1
    source = strip_source(rows, cols, R, C, words_of(rt), len(rec.args), simulated(), pairs,
                          score, loads, K, B, anywhere, V, diagonals, edges, bool(staged))
    return source, 2 if packed else V, anywhere, loads


def strip_kernel(rec: Recurrence, ir: CellIR, pattern_index: int, R: int, C: int,
                 score: bool, K: int = 0, B: int = STRIP_BATCH, nw: Narrowing | None = None,
                 vectors: bool = False, diagonals: bool = False, edges: bool = False,
                 staged: int = 0) -> tuple[Any, int, tuple[np.ndarray, ...], tuple[int, int]]:
    """The strip kernel of :func:`strip_fill` (``score``: of
    :func:`runtime.backends.cuda.score.strip_score_fill`, with ``edges`` keeping its tiles'
    edges too, :func:`runtime.backends.cuda.strip_source.strip_source`; ``K`` store warps, batches of
    ``B`` steps, cells in int32 with ``nw``, the ring's cells moved as 16-byte ``vectors``
    where :func:`runtime.backends.cuda.strip_layout.ring_vectors` allows, a block's cells
    by anti-``diagonals``, ``staged`` bytes a cell of loads the store warps make), the
    cells a store of the table moves at a time (2: the compute
    warp's pairs, 4: the store warps' vectors; else 1), its schedule arrays (the boundary
    ring of ``STRIP_SLOTS`` strips' last rows; the ticket) and its ``(strips, slots)``,
    the kernel's arguments after those arrays."""
    source, moves, anywhere, loads = _strip_parts(rec, ir, pattern_index, R, C, score, K, B,
                                                  nw, vectors, diagonals, edges, staged)
    rows, cols = DIAGONAL_FLIPS[PATTERNS[pattern_index].code]
    rt = register_type(rec, nw)
    W, enc, dec = _boundary_words(rt, simulated())
    arrays, _ = argument_loads(rec, ir)
    cell = rewritten_cell(rec, ir, _register_read(rows, cols), {}, hoist=arrays,
                          narrow=nw.positions if nw else frozenset(), speculate=anywhere)
    types = {f"T{k}": dt.type for k, dt in enumerate(_load_types(rec, ir))}
    kern = compile_kernel(rec, source, "strips", cell,
                          **(_vector_moves(simulated()) if moves == 4 else {}),
                          DT=rt.type, ZERO=rt.type(0), **types,
                          int64=np.int64, uint32=np.uint32, U=np.uint64,
                          FULL=np.uint32(0xFFFFFFFF), ENC=enc, DEC=dec, SHUF=_shuffled(rt),
                          LO=np.int64(0xFFFFFFFF), **coherent_names(cuda_module()))
    n, m = rec.shape
    nstrips = math.ceil(n / (32 * R))
    nslots = min(STRIP_SLOTS, max(1, nstrips - 1))
    ring = np.zeros(nslots * (m + C) * W, np.int64)
    return kern, moves, (ring, np.zeros(1, np.int64)), (nstrips, nslots)


def _shuffled(dtype: np.dtype) -> Any:
    """The type a value of ``dtype`` crosses a warp shuffle as: itself when numba
    shuffles it (32- and 64-bit ints and floats), else ``int64`` (exact for every other
    integer and bool; the shuffled value is cast back)."""
    dt = np.dtype(dtype)
    native = dt.kind in "if" and dt.itemsize in (4, 8)
    return dt.type if native else np.int64


def _boundary_words(dtype: np.dtype, sim: bool) -> tuple[int, Any, Any]:
    """How a strip hands its last row to the strip below without fences: each value as
    ``W`` 64-bit words, 32 bits of the value in the low half of each and a tag in the high
    half (the writing strip's number plus one), so a word read with the tag the reader
    expects holds its bits (an aligned 8-byte store is seen whole or not at all), and a
    word left by an earlier strip in the same slot of a ring is told apart.  ``(W, ENC,
    DEC)``: ``ENC(x, tag)`` the words of a value, ``DEC(*words)`` the value; numba.cuda
    device functions, or plain functions under the simulator, built once per cell type."""
    dt = np.dtype(dtype)
    W = words_of(dt)
    if sim:
        return (W, *CACHE.get(_boundary_words, ("python", "boundary-words", dt),
                              lambda: _plain_words(dt, W)))
    from numba.cuda import libdevice

    lo = np.int64(0xFFFFFFFF)
    ns = {"int64": np.int64, "int32": np.int32, "DT": dt.type, "LO": lo, "lib": libdevice}
    if dt.kind == "f" and W == 1:
        bits, back = "int64(lib.float_as_int(x))", "lib.int_as_float(int32(w0 & LO))"
    elif dt.kind == "f":
        bits, back = "lib.double_as_longlong(x)", "lib.longlong_as_double(b)"
    else:
        bits, back = "int64(x)", "DT(b)" if W == 2 else "DT(w0 & LO)"
    e = Emitter()
    with e.block("def enc(x, tag)"):
        e(f"v = {bits}", "hi = int64(tag) << 32",
          "return (" + ", ".join(f"((v >> {32 * w}) & LO) | hi" for w in range(W)) + ",)")
    with e.block(f"def dec({', '.join(f'w{w}' for w in range(W))})"):
        e(*(["b = ((w1 & LO) << 32) | (w0 & LO)"] if W == 2 else []), f"return {back}")
    key = digest(e.source, ns)

    def build() -> tuple[Any, Any]:
        cuda = cuda_module()
        return tuple(remember(cuda.jit(device=True)(compile_source(e.source, name, dict(ns))),
                              f"{key}-{name}") for name in ("enc", "dec"))

    return (W, *CACHE.get(_boundary_words, ("cuda", key), build))


def _plain_words(dt: np.dtype, W: int) -> tuple[Any, Any]:
    """:func:`_boundary_words`' ``ENC`` and ``DEC`` in plain Python, for the simulator."""
    bits = {4: np.int32, 8: np.int64}

    def enc(x: Any, tag: Any) -> tuple[Any, ...]:
        b = int(np.asarray(x, dt).view(bits[dt.itemsize]) if dt.kind == "f" else x)
        return tuple(np.int64(((b >> (32 * w)) & 0xFFFFFFFF) | (int(tag) << 32))
                     for w in range(W))

    def dec(*ws: Any) -> Any:
        b = sum((int(w) & 0xFFFFFFFF) << (32 * k) for k, w in enumerate(ws))
        if dt.kind == "f":
            raw = np.asarray(b, np.uint64).astype(np.uint32 if W == 1 else np.uint64)
            return raw.view(dt)[()]
        return dt.type(np.asarray(b, np.uint64).astype(dt)[()])

    return remember(enc, f"plain-enc-{dt.str}"), remember(dec, f"plain-dec-{dt.str}")


def _words_view(dM: Any) -> Any:
    """The C-ordered device table ``dM`` as one row of 8-byte words, the same memory (a
    trailing 4-byte cell that fills no word is left out)."""
    count = dM.size * dM.dtype.itemsize // 8
    if simulated():
        return type(dM)(dM._ary.reshape(-1)[:count * 8 // dM.dtype.itemsize].view(np.int64))
    return type(dM)(shape=(count,), strides=(8,), dtype=np.dtype(np.int64), stream=dM.stream,
                    gpu_data=dM.gpu_data)


def _load4(a: Any, i: Any) -> tuple[Any, ...]:
    """``LD4`` under the simulator: four element loads."""
    return a[int(i)], a[int(i) + 1], a[int(i) + 2], a[int(i) + 3]


def _store4(a: Any, i: Any, *x: Any) -> None:
    """``ST4`` under the simulator: four element stores."""
    for k, v in enumerate(x):
        a[int(i) + k] = v


def _vector_moves(sim: bool) -> dict[str, Any]:
    """``LD4`` and ``ST4`` of the strips' source: :func:`runtime.backends.intrinsics.load4`
    and ``store4``, or under the simulator (plain Python) four element moves."""
    if not sim:
        return {"LD4": intrinsics.load4, "ST4": intrinsics.store4}
    return {"LD4": _load4, "ST4": _store4}
