"""CUDA backend (numba.cuda): the cell function as a device function.

This is the only module that imports ``numba.cuda``; it does so lazily, so nothing else
needs a GPU or numba-cuda.  Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on
numba's simulator (logic only: tiny sizes, no speed, no types).

- The table is allocated on the device (no copy in: every cell is written by the fill);
  the args are copied in once; the table is copied back only when asked.
- Each step (a row, column or diagonal of a pattern, or one stage) is one launch of a
  grid-stride loop, so a step of any size fits one launch; the grid comes from the
  device's multiprocessor count.
- The layout follows the pattern's storage: column patterns use a column-major table so
  one step's cells are contiguous; rows and diagonals are row-major.
- Diagonal patterns also fill in one persistent launch (``tiled_fill``): register strips
  when the reads are the three nearest neighbours at constant offsets (``strip_fill``;
  strips hand their last row down as self-validating words, no fences), shared-memory
  tiles otherwise (``wave_fill``); blocks and warps take work from an atomic ticket in a
  topological order and wait on flags or words, so they cannot deadlock.  Reads of cells
  other blocks wrote skip L1 (``ld.global.cg``).  The strips compute an integer cell
  in int32, not numba's 64 bits, when :mod:`runtime.narrow` proves every value it
  computes fits (``strip_narrowing``); the bands (below) likewise.
- Any pattern also fills in one launch: ``cooperative_fill`` (a grid barrier between
  steps); row and column patterns also by ``band_fill`` (each block owns a band of
  every step and waits on per-band progress counters: those of the bands before it
  when the reads fit a diagonal pattern too, else each read that of the band it reads;
  no barrier) and, when the reads are the
  nearest neighbours, strips in that diagonal's frame; :mod:`runtime.costmodel` picks
  among them with latencies measured on the machine (``launch_latency``,
  ``barrier_latency``).
- ``score_fill`` keeps only the live anti-diagonals when only the last cell is wanted;
  ``strip_score_fill`` runs the register strips storing no cell (their last rows in a
  ring of two), for the three nearest reads.
- Before anything is allocated, what a fill puts on the device (table, args, schedule) is
  checked against the device's free memory (``TooLargeError``, not a CUDA error).

Assumptions: numba-cuda is installed (``pip install 'depgraph[cuda]'``) and the cell
function compiles as a numba.cuda device function.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from depgraph.api import Recurrence
from depgraph.errors import BackendUnavailableError, CompileError, RecurrenceError, TooLargeError
from patterns import (DIAGONAL_FLIPS, PATTERNS, STEP_SOURCE, frame_offset, last_cell,
                      step_line)
from runtime.cache import CACHE, arg_tail, cache_root, compile_source
from runtime.narrow import Narrowing, narrowing
from runtime.source import (Position, SourceUnavailable, _once, argument_loads, runs_anywhere,
                            constant_offsets, function_namespace, rewrite_reads)
from runtime.cpu import _unravel

__all__ = ["status", "require", "DeviceFill", "pattern_fill", "stage_fill", "ready_fill",
           "tiled_fill", "strip_fill", "wave_fill", "band_fill", "launch_latency",
           "barrier_latency", "write_bandwidth", "multiprocessors", "serves_strips",
           "cooperative_fill", "ScoreFill", "score_fill", "strip_score_fill", "RingFill",
           "ring_score_fill",
           "free_memory", "strip_block", "strip_narrowing", "strip_store_warps", "strip_batch",
           "score_block",
           "THREADS", "BAND_THREADS"]

THREADS = 256
#: Threads a block of a band fill (:func:`band_fill`): 512 was best or within 5% of the
#: best on the H200 for the knapsack, binomial and a stencil reading both sides.
BAND_THREADS = 512

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


def _cuda() -> Any:
    from numba import config, cuda

    # short diagonals are small grids by design; numba would warn on every such launch
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    return cuda


def _simulated() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def status() -> tuple[bool, str]:
    """Whether a CUDA device is usable here, and a sentence saying why (not)."""
    try:
        cuda = _cuda()
    except ImportError as exc:
        return False, (f"numba-cuda is not installed ({exc}); install it with "
                       "pip install 'depgraph[cuda]'")
    if _simulated():
        return True, "numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): logic only, not speed"
    try:
        if not cuda.is_available():
            return False, "no CUDA GPU or driver is usable here (numba.cuda.is_available() is False)"
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return True, f"CUDA GPU {name}"
    except Exception as exc:  # driver errors come in many types
        return False, f"the CUDA driver failed: {exc}"


def require() -> Any:
    """``numba.cuda``, or ``BackendUnavailableError`` with the reason."""
    ok, why = status()
    if not ok:
        raise BackendUnavailableError(f"--backend cuda: {why}")
    return _cuda()


def _device_cell(rec: Recurrence) -> Any:
    return CACHE.get(rec.func, ("cuda", "cell"), lambda: _cuda().jit(device=True)(rec.func))


_STAGE = """
def stage(M, cells, lo, hi{args}):
    q = lo + cuda.grid(1)
    stride = cuda.gridsize(1)
    while q < hi:
        r = cells[q]
{unravel}
        M[{idx}] = cell(M, {idx}{args})
        q += stride
"""


_TILED = """
def tiles(M, td{args}):
    n = M.shape[0]
    m = M.shape[1]
    nv = (m + {T} - 1) // {T}
    tu = max(0, td - nv + 1) + cuda.blockIdx.x
    tv = td - tu
    r = cuda.threadIdx.x
    u = tu * {T} + r
    for s in range(2 * {T} - 1):
        c = s - r
        v = tv * {T} + c
        if c >= 0 and c < {T} and u < n and v < m:
            i = {i}
            j = {j}
            M[i, j] = cell(M, i, j{args})
        cuda.syncthreads()
"""

#: The persistent tile kernels' start (a grid of tiles ``{TV}`` columns wide), loop head
#: (take the next tile from the ticket, wait for the tiles above and to the left) and
#: loop tail (publish the tile).
_TILE_HEAD = """
def {kname}(M, order, flags, ticket{args}):
    n = M.shape[0]
    m = M.shape[1]
    nv = (m + {TV} - 1) // {TV}
    total = order.shape[0]
    K = cuda.shared.array(1, int64)
    r = cuda.threadIdx.x
"""
_TAKE_TILE = """    while True:
        if r == 0:
            K[0] = cuda.atomic.add(ticket, 0, 1)
        cuda.syncthreads()
        k = K[0]
        if k >= total:
            return
        tile = order[k]
        tu = tile // nv
        tv = tile - tu * nv
        if r == 0:
            if tu > 0:
                while cuda.atomic.add(flags, tile - nv, 0) == 0:
                    {nap}
            if tv > 0:
                while cuda.atomic.add(flags, tile - 1, 0) == 0:
                    {nap}
        cuda.syncthreads()
"""
_DONE_TILE = """        cuda.threadfence()
        cuda.syncthreads()
        if r == 0:
            cuda.atomic.exch(flags, tile, 1)
"""

_WAVE = _TILE_HEAD + """    S = cuda.shared.array(({T} + 1, {T} + 2), DT)
""" + _TAKE_TILE + """        u0 = tu * {T}
        v0 = tv * {T}
        u = u0 + r
        v = v0 + r
        if u0 > 0 and v < m:
            S[0, r + 1] = LOAD(M, ({I0}, {Jv}))
        if v0 > 0 and u < n:
            S[r + 1, 0] = LOAD(M, ({Iu}, {J0}))
        if r == 0 and u0 > 0 and v0 > 0:
            S[0, 0] = LOAD(M, ({I0}, {J0}))
        cuda.syncthreads()
        for s in range(2 * {T} - 1):
            c = s - r
            v = v0 + c
            if c >= 0 and c < {T} and u < n and v < m:
                S[r + 1, c + 1] = cell(M, {Iu}, {Jv}{args}, (S, u0 - 1, v0 - 1))
            cuda.syncthreads()
        v = v0 + r
        if v < m:
            for q in range(min({T}, n - u0)):
                u = u0 + q
                M[{Iu}, {Jv}] = S[q + 1, r + 1]
""" + _DONE_TILE

_TILE_READ = """
def read(M, tile, x0, x1, a, b):
    n = M.shape[0]
    m = M.shape[1]
    bu = {ua} - tile[1]
    bv = {va} - tile[2]
    if bu >= 0 and bu <= {T} and bv >= 0 and bv <= {T}:
        return tile[0][bu, bv]
    return LOAD(M, (int64(a), int64(b)))
"""


_SCORE = """
def score(D, n, m{args}):
    grid = cuda.cg.this_grid()
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(n + m - 1):
        u = max(0, s - m + 1) + first
        hi = min(n - 1, s) + 1
        while u < hi:
            v = s - u
            D[s % {W}, u] = cell(D, {Iu}, {Jv}{args}, (n, m))
            u += stride
        grid.sync()
"""

_WINDOW_READ = """
def read(D, shape, x0, x1, a, b):
    n = shape[0]
    m = shape[1]
    ua = {ua}
    return D[(ua + {va}) % {W}, ua]
"""


_READY = """
def ready(M, order, indptr, indices, done, ticket{args}):
    total = order.shape[0]
    k = cuda.atomic.add(ticket, 0, 1)
    while k < total:
        x = order[k]
        for e in range(indptr[x], indptr[x + 1]):
            while cuda.atomic.add(done, indices[e], 0) == 0:
                pass
        r = x
{unravel}
        M[{idx}] = cell(M, {idx}{args}, 0)
        cuda.threadfence()
        cuda.atomic.exch(done, x, 1)
        k = cuda.atomic.add(ticket, 0, 1)
"""


def _rewritten_cell(rec: Recurrence, key: tuple[Any, ...], read: str,
                    names: dict[str, Any], cell_args: bool = True,
                    hoist: tuple[str, ...] = (), narrow: frozenset[Position] = frozenset(),
                    speculate: bool = False, kept: Sequence[tuple[int, ...]] = ()) -> Any:
    """The cell function as a device function whose reads of ``M`` call the device
    function ``read`` (source, compiled with ``names``), cached under ``key``; see
    :func:`runtime.source.rewrite_reads` for its arguments (``hoist``: the arrays whose
    loads the caller makes; ``narrow``: the values computed in int32; ``speculate``: the
    guards applied last, as selects; ``kept``: the offsets whose reads call ``read_kept``,
    which ``read`` then defines too).
    ``SourceUnavailable`` when the cell function's source cannot be rewritten."""

    def build() -> Any:
        cuda = _cuda()
        ns = {**function_namespace(rec.func), "_dg_i32": np.int32}
        ns["_dg_read"] = cuda.jit(device=True)(compile_source(read, "read", names))
        if kept:
            ns["_dg_read_kept"] = cuda.jit(device=True)(compile_source(read, "read_kept", names))
        body = rewrite_reads(rec.func, rec.ndim, "_dg_read", "_dg_cell", cell_args=cell_args,
                             hoist=hoist, narrow=narrow, speculate=speculate, kept=kept)
        return cuda.jit(device=True)(compile_source(body, "_dg_cell", ns))

    return CACHE.get(rec.func, ("cuda", *key, *hoist, narrow, speculate, *kept), build)


def _ready_cell(rec: Recurrence) -> Any:
    """The cell function reading ``M`` by an atomic add of 0, which bypasses the L1 cache,
    so a value another block just wrote is seen, never a stale cached line."""
    names = ", ".join(f"a{k}" for k in range(rec.ndim))
    read = f"def read(M, ck, {names}):\n    return cuda.atomic.add(M, ({names},), 0)\n"
    return _rewritten_cell(rec, ("ready-cell",), read, {"cuda": _cuda()}, cell_args=False)


def _kernel(rec: Recurrence, kind: str, source: str | Callable[[], str], name: str,
            cell: Any = None, registers: int | None = None, **names: Any) -> Any:
    """The kernel ``name`` compiled from ``source`` (or what the callable ``source``
    returns, built only when the kernel is not cached yet) with ``cell`` (by default the
    cell function itself) and ``names`` in its namespace, cached per cell function under
    ``kind``; at most ``registers`` registers a thread when given (the simulator has no
    registers)."""

    def build() -> Any:
        cuda = _cuda()
        ns = {"cuda": cuda, "cell": _device_cell(rec) if cell is None else cell, **names}
        jit = cuda.jit(max_registers=registers) if registers and not _simulated() else cuda.jit
        return jit(compile_source(source() if callable(source) else source, name, ns))

    # the table's type and the arguments' sizes choose source (a window's type, the
    # arguments' index form), so one cell function filled two ways compiles twice
    key = ("cuda", kind, len(rec.args), rec.ndim, np.dtype(rec.dtype).str, _small_args(rec))
    return CACHE.get(rec.func, key, build)


@dataclass
class DeviceFill:
    """Times of one device fill, in seconds; the table when it was copied back."""

    table: np.ndarray | None
    h2d_s: float
    compute_s: float
    d2h_s: float
    launches: int
    compile_s: float
    kernel: str = ""


def multiprocessors() -> int:
    """The current device's multiprocessor count (1 under the simulator)."""
    return 1 if _simulated() else _sms(require())


def _sms(cuda: Any) -> int:
    return int(getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1) or 1)


def _max_blocks(cuda: Any) -> int:
    per_sm = getattr(cuda.get_current_device(), "MAX_THREADS_PER_MULTI_PROCESSOR", 2048) or 2048
    return _sms(cuda) * max(1, int(per_sm) // THREADS)


def _launch(kernel: Any, blocks: int, threads: int, args: tuple[Any, ...]) -> None:
    try:
        kernel[blocks, threads](*args)
    except Exception as exc:  # a launch or device fault: name it, no traceback
        raise RecurrenceError(f"the CUDA fill failed: {type(exc).__name__}: {exc}") from None


def _compile(kernel: Any, args: tuple[Any, ...]) -> None:
    """Compile ``kernel`` for these argument types (before timing a launch)."""
    if _simulated():
        return
    from numba import typeof
    from numba.core.errors import NumbaError

    try:
        kernel.compile(tuple(typeof(a) for a in args))
    except NumbaError as exc:
        lines = " ".join(x.strip() for x in str(exc).strip().splitlines()[:6])
        raise CompileError(
            f"numba.cuda could not compile the cell function as a device function: {lines} "
            "... Run with --backend cpu or --backend python."
        ) from None


#: ``(blocks, threads per block, kernel args)`` of each launch.
Launches = list[tuple[int, int, tuple[Any, ...]]]


def free_memory() -> float:
    """Bytes free on the current device (``inf`` under the simulator)."""
    return float(require().current_context().get_memory_info().free)


def _check_fits(rec: Recurrence, shape: tuple[int, ...], schedule: tuple[np.ndarray, ...]) -> None:
    """``TooLargeError`` unless the table of ``shape`` (the recurrence's, or a score's
    window), the args and the ``schedule`` arrays fit in the device's free memory: a fill
    that would not fit says so and what to run instead, rather than failing in a CUDA
    allocation."""
    from depgraph.trace import format_bytes

    table = math.prod(shape) * np.dtype(rec.dtype).itemsize
    rest = sum(a.nbytes for a in (*rec.args, *schedule) if isinstance(a, np.ndarray))
    free = free_memory()
    if table + rest > free:
        whole = tuple(shape) == rec.shape
        cells = (f"the {shape} {np.dtype(rec.dtype)} table" if whole else "the cells it keeps")
        raise TooLargeError(
            f"the GPU {'fill' if whole else 'score'} needs {format_bytes(table + rest)} on the "
            f"device ({cells} {format_bytes(table)}, args and schedule {format_bytes(rest)}), "
            f"more than the {format_bytes(free)} free; fill on the CPU (--backend cpu)"
            + (" or keep only the score (--score)" if whole else ""))


def _run(rec: Recurrence, kernel: Any, layout: str, copy_back: bool,
         launches: Callable[[Any, Any, tuple[Any, ...], tuple[Any, ...]], Launches],
         schedule: tuple[np.ndarray, ...] = (), label: str = "",
         shape: tuple[int, ...] | None = None) -> DeviceFill:
    """Copy args (and schedule arrays) in, compile, run every launch,
    copy the table back if asked; each phase timed apart.  The table on the device has
    the recurrence's shape, or ``shape`` (a score fill's window of diagonals); building
    the launch list, which may compile the kernel to size a cooperative grid, is timed
    with the compilation."""
    cuda = require()
    _check_fits(rec, rec.shape if shape is None else shape, schedule)
    t0 = time.perf_counter()
    dargs = tuple(cuda.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
                  for a in rec.args)
    dsched = tuple(cuda.to_device(np.ascontiguousarray(a)) for a in schedule)
    dM = cuda.device_array(rec.shape if shape is None else shape, dtype=rec.dtype, order=layout)
    cuda.synchronize()
    t1 = time.perf_counter()
    todo = launches(cuda, dM, dargs, dsched)
    if todo:
        _compile(kernel, todo[0][2])
    t2 = time.perf_counter()
    for blocks, threads, args in todo:
        _launch(kernel, blocks, threads, args)
    cuda.synchronize()
    t3 = time.perf_counter()
    table = dM.copy_to_host() if copy_back else None
    t4 = time.perf_counter()
    return DeviceFill(table, t1 - t0, t3 - t2, t4 - t3, len(todo), t2 - t1, label)


def pattern_fill(rec: Recurrence, pattern_index: int, steps: int, layout: str = "C",
                 copy_back: bool = True) -> DeviceFill:
    """One launch per step of a 2-D pattern; the table stays on the device."""
    code = PATTERNS[pattern_index].code
    kern = _kernel(rec, f"step-{code}", _unrolled_step(code, 1, len(rec.args)), "step")
    n, m = rec.shape

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        cap = _max_blocks(cuda)
        return [(min(cap, math.ceil(step_line(pattern_index, t, n, m)[4] / THREADS)), THREADS,
                 (dM, t, *dargs)) for t in range(steps)]

    return _run(rec, kern, layout, copy_back, launches, label="a launch per step")


_COOP = """
def coop(M, steps{args}):
    grid = cuda.cg.this_grid()
    for t in range(steps):
        step(M, t{args})
        grid.sync()
"""

_COHERENT_READ = """
def read(M, ck, a, b):
    return LOAD(M, (int64(a), int64(b)))
"""


#: A band's reads (:func:`band_fill`) with its step in a window: ``ctx`` is ``(W, slot,
#: first, width)``, the band's cells of the step before in ``W[slot, :width]`` from its
#: position ``first`` along the step (``width`` 0: no window).  A read of the step before
#: in the window is served from it, from global memory past L1 otherwise (one unsigned
#: comparison, ``{U}``, tells both sides of the window; 32 bits when the table's sides
#: are under 2**31).  ``{sa}``, ``{sx}``: the read's and the cell's step; ``{pa}``: the
#: read's position along the step, in the band's frame.  ``{wait}``: the wait of a band
#: whose reads wait (:data:`_BAND_WAIT`), or nothing.
#: ``read_kept`` serves the cell's own position of the step before, which its thread
#: computed and kept in the register ``v``.
_WINDOW_BAND_READ = """
def read(M, ctx, x0, x1, a, b):
    n = M.shape[0]
    m = M.shape[1]
    if {sa} == {sx} - 1:
        k = {U}({I}({pa}) - {I}(ctx[2]))
        if k < {U}(ctx[3]):
            return ctx[0][ctx[1], k]
{wait}    return LOAD(M, ({ia}, {ib}))


def read_kept(M, ctx, v, a, b):
    return v
"""

#: A band's read outside its window that waits, first, until the band it reads from has
#: finished the read's step (bands without a frame, :func:`band_fill`): ``ctx`` goes on
#: with ``(progress, band width, this band, seen)``.  A read of this band (one unsigned
#: comparison with its first position) does not wait, and only a read of another finds
#: that band by a division.  ``seen[side, warp]`` keeps, for each warp and side, the last
#: band read from there and the count of steps it had finished (``band << 32 | count``),
#: so a warp reloads that band's counter only once the count is not enough for the step
#: it reads.
_BAND_WAIT = """
    if {U}({I}({pa}) - {I}(ctx[2])) >= {U}(ctx[5]):  # not this band's: divide to find it
        f = int64(min({U}({pa}), {U}({nb} - 1)) // {U}(ctx[5]))
        side = 1 if f > int64(ctx[6]) else 0
        w = cuda.threadIdx.x >> 5
        seen = ctx[7][side, w]
        if (seen >> 32) != f or (seen & 0xFFFFFFFF) <= {sa}:
            p = LOAD(ctx[4], f)
            while p <= {sa}:
                {nap}
                p = LOAD(ctx[4], f)
            ctx[7][side, w] = (f << 32) | int64(p)
"""


def _coherent_cell(rec: Recurrence, hoisted: bool = False,
                   window: tuple[str, bool, bool] | None = None, keep: bool = True,
                   wait: bool = False, narrow: frozenset[Position] = frozenset()) -> Any:
    """The cell function as a device function ``cell(M, i, j, *args, *values)`` whose
    reads of ``M`` skip L1 (for kernels that read cells other blocks wrote in the same
    launch); with ``hoisted``, its loads of its array arguments are the caller's, passed
    in as ``values`` in the order of :func:`_argument_loads`.  With ``window = (along,
    rows flipped, columns flipped)`` it is ``cell(M, i, j, *args, ctx, kept, *values)``,
    a band's cell whose reads of the step before may come from the band's window and
    whose read of its own position there from ``kept`` (:data:`_WINDOW_BAND_READ`; steps
    along ``u``, the rows, or ``v``); without ``keep``, ``cell(M, i, j, *args, ctx,
    *values)`` and no read from ``kept``; with ``wait``, a read outside the window waits
    for the band it reads from (:data:`_BAND_WAIT`); ``narrow``: the values computed in
    int32 (:func:`_rewritten_cell`).
    ``SourceUnavailable`` when its source cannot be rewritten or the cells are not
    integers or floats."""
    _loadable(rec.dtype)
    hoist, loads = _argument_loads(rec) if hoisted else ((), [])
    read, kept = _COHERENT_READ, ()
    if window:
        along, rows, cols = window
        back = 1 if (rows if along == "u" else cols) else -1  # the step before, unflipped
        kept = ((back, 0) if along == "u" else (0, back),) if keep else ()
        frame = {"a": _flip("a", "n", rows), "x0": _flip("x0", "n", rows),
                 "b": _flip("b", "m", cols), "x1": _flip("x1", "m", cols)}
        step, at = ("a", "b") if along == "u" else ("b", "a")
        cell_step = "x0" if along == "u" else "x1"
        wide = not _small(rec.shape)
        names = {"sa": frame[step], "sx": frame[cell_step], "pa": frame[at],
                 "U": "uint64" if wide else "uint32", "I": "int64" if wide else "int32",
                 "nb": "m" if along == "u" else "n", "nap": _nap()}
        read = _WINDOW_BAND_READ.format(ia=_index("a", rec.shape), ib=_index("b", rec.shape),
                                        wait=_BAND_WAIT.format(**names)[1:] if wait else "",
                                        **names)

    def build() -> Any:
        cuda = _cuda()
        inner = _rewritten_cell(rec, ("coherent-cell", read), read,
                                {**_coherent(cuda), "int64": np.int64, "int32": np.int32,
                                 "uint32": np.uint32, "uint64": np.uint64},
                                cell_args=bool(window), hoist=hoist, kept=kept,
                                narrow=narrow)
        tail = arg_tail(len(rec.args))
        vals = "".join(f", v{k}" for k in range(len(loads)))
        ctx = (", ctx, kept" if kept else ", ctx") if window else ""
        return cuda.jit(device=True)(compile_source(
            f"def cell(M, i, j{tail}{ctx}{vals}):\n"
            f"    return inner(M, i, j{tail}, {ctx[2:] if window else '0'}{vals})\n",
            "cell", {"inner": inner}))

    return CACHE.get(rec.func, ("cuda", "coherent-wrapped", read, *kept, *hoist, narrow),
                     build)


def _unrolled_cells(i: str, j: str, var: str, stride: str, unroll: int, tail: str,
                    indent: str, bound: str | None = None, values: Sequence[str] = (),
                    keep: Sequence[str] = (), cell: str = "cell") -> list[str]:
    """Source lines computing ``unroll`` cells ``(i, j)``, the ``k``-th with ``var``
    advanced by ``k * stride``, every cell before any is stored (the cells are
    independent, so their reads overlap); the ``k``-th cell's value is ``x{k}``.  With
    ``bound``, ``var`` stops short of it: a cell past it is computed at ``bound - 1``
    instead and not stored.  ``values`` are the cell's last arguments, format strings
    over its indices' names and its number (``{0}``, ``{1}``, ``{2}``); ``keep``,
    statements made for every cell after the stores, stored or not, over those and
    ``var`` advanced (``{3}``); ``cell``, the name of the function called.

    Examples
    --------
    >>> print("\\n".join(_unrolled_cells("r", "q", "q", "s", 2, "", "")))
    i0 = r
    j0 = q
    x0 = cell(M, i0, j0)
    i1 = r
    j1 = (q + 1 * s)
    x1 = cell(M, i1, j1)
    M[i0, j0] = x0
    M[i1, j1] = x1
    """
    lines: list[str] = []
    stores: list[str] = []
    kept: list[str] = []
    for k in range(unroll):
        shifted = f"({var} + {k} * {stride})"
        clamped = f"min({shifted}, {bound} - 1)" if bound and k else shifted
        at = (lambda e: re.sub(rf"\b{var}\b", clamped, e)) if k else str
        names = (f"i{k}", f"j{k}", k, shifted)
        lines += [f"{indent}i{k} = {at(i)}", f"{indent}j{k} = {at(j)}",
                  f"{indent}x{k} = {cell}(M, i{k}, j{k}{tail}"
                  + "".join(f", {v.format(*names)}" for v in values) + ")"]
        store = f"M[i{k}, j{k}] = x{k}"
        stores += ([f"{indent}if {shifted} < {bound}:", f"{indent}    {store}"] if bound and k
                   else [f"{indent}{store}"])
        kept += [f"{indent}{x.format(*names)}" for x in keep]
    return lines + stores + kept


def _unrolled_step(code: str, unroll: int, nargs: int) -> str:
    """Source of one step of pattern ``code`` as a grid-stride loop computing ``unroll``
    cells a thread before storing any (:func:`_unrolled_cells`); the remainder one at a
    time.

    Examples
    --------
    >>> print(_unrolled_step("RUD", 2, 0).splitlines()[8])
            i0 = r
    """
    src = STEP_SOURCE[code]
    tail = arg_tail(nargs)
    L = [f"def step(M, t{tail}):", "    n = M.shape[0]", "    m = M.shape[1]",
         f"    {src.fix}", f"    q = {src.lo} + cuda.grid(1)", f"    hi = {src.hi}",
         "    stride = cuda.gridsize(1)",
         f"    while q + {unroll - 1} * stride < hi:" if unroll > 1 else "    while q < hi:"]
    L += _unrolled_cells(src.i, src.j, "q", "stride", unroll, tail, " " * 8)
    L.append(f"        q += {unroll} * stride" if unroll > 1 else "        q += stride")
    if unroll > 1:
        L += ["    while q < hi:", *_unrolled_cells(src.i, src.j, "q", "stride", 1, tail, " " * 8),
              "        q += stride"]
    return "\n".join(L) + "\n"


def cooperative_fill(rec: Recurrence, pattern_index: int, layout: str = "C",
                     copy_back: bool = True, threads: int = THREADS,
                     blocks: int | None = None, unroll: int = 1) -> DeviceFill:
    """Every step of a 2-D pattern in one cooperative launch: a grid-stride loop over the
    step's cells (``unroll`` cells a thread computed before any is stored), then a
    grid-wide barrier, so no launch per step.  ``blocks`` of ``threads`` (default: as many
    as can be resident, up to one thread a cell of the longest step).  Reads of ``M`` skip
    L1 (a line cached in an earlier step may hold cells written since);
    ``SourceUnavailable`` when the cell function's source cannot be rewritten for that.
    """
    code = PATTERNS[pattern_index].code
    _coherent_cell(rec)  # SourceUnavailable before anything is built

    def build_step() -> Any:
        body = _unrolled_step(code, unroll, len(rec.args))
        return _cuda().jit(device=True)(compile_source(
            body, "step", {"cuda": _cuda(), "cell": _coherent_cell(rec)}))

    step = CACHE.get(rec.func, ("cuda", "coherent-step", code, len(rec.args), unroll), build_step)
    n, m = rec.shape
    steps = PATTERNS[pattern_index].steps((n, m))
    kern = _kernel(rec, f"coop-{code}-{unroll}",
                   _COOP.format(args=arg_tail(len(rec.args))), "coop", step=step)

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        args = (dM, steps, *dargs)
        most = _cooperative_blocks(kern, args, threads, max(n, m))
        return [(most if blocks is None else min(blocks, most), threads, args)]

    return _run(rec, kern, layout, copy_back, launches, label="one cooperative launch")


def _cooperative_blocks(kern: Any, args: tuple[Any, ...], threads: int, cells: int) -> int:
    """Blocks of a cooperative launch of ``kern``: enough for ``cells`` threads, no more
    than can be resident at once (the grid barrier needs every block running).  Compiles
    ``kern`` for ``args`` to ask."""
    if _simulated():
        return 1  # the simulator's grid barrier spans one block
    from numba import typeof

    _compile(kern, args)
    cap = kern.overloads[tuple(typeof(a) for a in args)].max_cooperative_grid_blocks(threads)
    return max(1, min(cap, math.ceil(cells / threads)))


def stage_fill(rec: Recurrence, cells: np.ndarray, ptr: np.ndarray,
               copy_back: bool = True) -> DeviceFill:
    """Algorithm 2 on the device: one launch per stage over the stage-ordered flat cells."""
    unravel, idx = _unravel(rec.ndim, indent="        ")
    src = _STAGE.format(args=arg_tail(len(rec.args)), unravel=unravel, idx=idx)
    kern = _kernel(rec, "stage", src, "stage")
    bounds = ptr.tolist()

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        (dcells,) = dsched
        cap = _max_blocks(cuda)
        return [(min(cap, math.ceil((hi - lo) / THREADS)), THREADS, (dM, dcells, lo, hi, *dargs))
                for lo, hi in zip(bounds[:-1], bounds[1:])]

    return _run(rec, kern, "C", copy_back, launches, (cells.astype(np.int64, copy=False),))


def _flip(expr: str, size: str, flipped: bool) -> str:
    return f"({size} - 1 - ({expr}))" if flipped else f"({expr})"


def _small(shape: tuple[int, ...]) -> bool:
    """Whether every side of a table of ``shape`` is under 2**31, so its indices and their
    differences fit 32 bits."""
    return max(shape) < 2**31


def _small_args(rec: Recurrence) -> bool:
    """Whether every side of every array argument of ``rec`` is under 2**31
    (:func:`_small`), so :func:`_argument_loads` may index them through 32 bits."""
    return all(_small(a.shape) for a in rec.args if isinstance(a, np.ndarray))


def _index(expr: str, shape: tuple[int, ...]) -> str:
    """``expr``, an index into a table of ``shape``, as an int64 the compiler knows is not
    negative when the table is :func:`_small` (taken through uint32), so indexing with it
    leaves out numba's test for negative indices.

    Examples
    --------
    >>> _index("i", (5, 7)), _index("i", (2**31, 1))
    ('int64(uint32(i))', 'int64(i)')
    """
    return f"int64(uint32({expr}))" if _small(shape) else f"int64({expr})"


def _loadable(dtype: np.dtype) -> None:
    """``SourceUnavailable`` unless ``LOAD`` (:func:`_coherent`) reads cells of
    ``dtype``: integers and floats."""
    if np.dtype(dtype).kind not in "iuf":
        raise SourceUnavailable(f"L1-skipping loads take integer and float cells, not {dtype}")


def _coherent(cuda: Any) -> dict[str, Any]:
    """Names for kernels that read what other blocks of the same launch wrote: ``LOAD``,
    a load that skips the SM's L1 cache (``ld.global.cg``; L1 is not coherent across SMs,
    and a line cached before a neighbour tile was written would be stale), and ``NAP``,
    the nanoseconds to pause between polls of a flag, so spinning blocks leave the memory
    system to the working ones.  The simulator has neither and needs neither."""
    if _simulated():
        return {"cuda": cuda, "LOAD": lambda a, i: a[i]}
    return {"cuda": cuda, "LOAD": cuda.ldcg, "NAP": np.uint32(200)}


def _nap() -> str:
    """Source of one pause between polls of a flag (``NAP`` of :func:`_coherent`)."""
    return "pass" if _simulated() else "cuda.nanosleep(NAP)"


def _tile_cell(rec: Recurrence, code: str, tile: int) -> Any:
    """The cell function with its reads of ``M`` served from a tile's shared buffer when
    they fall in the tile or its one-cell halo, from global memory past L1 otherwise.  Its
    last argument is ``(buffer, first row, first column)`` of the buffer in the pattern's
    NOSE frame.  ``SourceUnavailable`` when its source cannot be rewritten."""
    rows, cols = DIAGONAL_FLIPS[code]
    read = _TILE_READ.format(T=tile, ua=_flip("a", "n", rows), va=_flip("b", "m", cols))
    return _rewritten_cell(rec, ("tile-cell", code, tile), read,
                           {**_coherent(_cuda()), "int64": np.int64})


def _tile_order(nu: int, nv: int) -> np.ndarray:
    """Tiles of an ``nu x nv`` grid (flat, row-major) by tile anti-diagonal, then row: the
    order in which the persistent kernel hands them out.

    Examples
    --------
    >>> _tile_order(2, 3).tolist()
    [0, 1, 3, 2, 4, 5]
    """
    tu, tv = np.divmod(np.arange(nu * nv, dtype=np.int64), nv)
    return np.lexsort((tu, tu + tv)).astype(np.int32)


def tiled_fill(rec: Recurrence, pattern_index: int, tile: int = 64,
               copy_back: bool = True, rows_per_lane: int | None = None) -> DeviceFill:
    """A diagonal pattern filled in one launch by the fastest kernel that fits it:
    :func:`strip_fill` (cells in registers) when the reads are the three nearest
    neighbours at constant offsets, else :func:`wave_fill` (``tile x tile`` tiles in
    shared memory), or one launch per diagonal of tiles when the cell function's source
    cannot be rewritten.  ``DeviceFill.kernel`` says which ran."""
    code = PATTERNS[pattern_index].code
    if code not in DIAGONAL_FLIPS:
        raise ValueError(f"the tiled fill is for the diagonal patterns, not {code}")
    if serves_strips(rec, code):
        return strip_fill(rec, pattern_index, rows_per_lane, copy_back)
    return wave_fill(rec, pattern_index, tile, copy_back)


def _frame_offsets(rec: Recurrence, code: str) -> set[tuple[int, int]]:
    """The constant read offsets in the pattern's NOSE frame (``SourceUnavailable`` when
    the reads are not at constant offsets)."""
    return {frame_offset(code, o) for o in constant_offsets(rec.func, 2)}


#: The reads :func:`strip_fill` serves: left, up and up-left in the NOSE frame.
_NEAREST = frozenset({(0, -1), (-1, 0), (-1, -1)})


def serves_strips(rec: Recurrence, code: str) -> bool:
    """Whether :func:`strip_fill` can fill ``rec`` in diagonal pattern ``code``'s frame:
    its reads are the three nearest neighbours there, at constant offsets, and its cells
    are numbers of at most 8 bytes."""
    if rec.ndim != 2:
        return False
    try:
        _words(rec.dtype)
        return _frame_offsets(rec, code) <= _NEAREST
    except SourceUnavailable:
        return False


def wave_fill(rec: Recurrence, pattern_index: int, tile: int = 64,
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
    diagonal of tiles with cells in global memory (:func:`_diagonal_launches`).
    """
    code = PATTERNS[pattern_index].code
    rows, cols = DIAGONAL_FLIPS[code]
    n, m = rec.shape
    nu, nv = math.ceil(n / tile), math.ceil(m / tile)
    try:
        _loadable(rec.dtype)
        cell = _tile_cell(rec, code, tile)
    except SourceUnavailable:
        return _diagonal_launches(rec, code, tile, copy_back)
    flip = {"I0": _flip("u0 - 1", "n", rows), "J0": _flip("v0 - 1", "m", cols),
            "Iu": _flip("u", "n", rows), "Jv": _flip("v", "m", cols)}
    src = _WAVE.format(T=int(tile), TV=int(tile), args=arg_tail(len(rec.args)), nap=_nap(),
                       kname="wave", **flip)
    kern = _kernel(rec, f"wave-{code}-{tile}", src, "wave", cell,
                   DT=np.dtype(rec.dtype).type, int64=np.int64, **_coherent(_cuda()))
    sched = (_tile_order(nu, nv), np.zeros(nu * nv, np.int32), np.zeros(1, np.int64))

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        blocks = min(nu * nv, _sms(cuda) * max(1, min(32, 2048 // tile)))
        return [(blocks, int(tile), (dM, *dsched, *dargs))]

    return _run(rec, kern, "C", copy_back, launches, sched,
                label=f"shared-memory tiles {tile}x{tile}")


#: Bands: each block owns a fixed band of every step's cells and walks the steps in
#: order.  With a frame, before step ``a`` it knows (``ready``) how many steps every band
#: before it has finished, and polls their progress only when that is not enough
#: (:data:`_BAND_POLL`); without, each read outside the band waits for the band it reads
#: from (:data:`_BAND_WAIT`).  When one round
#: of ``U`` cells a thread covers the band (``win > 0``), the band keeps its step in the
#: window ``W`` for the next (slot ``a & 1``) and each cell's value stays in its thread's
#: register ``y{k}``, which the cell of the next step at the same position reads
#: (``cell``, :data:`_WINDOW_BAND_READ`); otherwise the threads walk the band a cell at a
#: time, every read from global memory (``plain``).
_BANDS = """
def bands(M, progress{args}):
    n = M.shape[0]
    m = M.shape[1]
    T = cuda.blockDim.x
    r = cuda.threadIdx.x
    c = cuda.blockIdx.x
    width = ({nb} + cuda.gridDim.x - 1) // cuda.gridDim.x
    lo = c * width
    hi = min({nb}, lo + width)
    W = cuda.shared.array((2, {span}), DT)
    win = hi - lo if {U} * T >= hi - lo else 0
{setup}{first}    cuda.syncthreads()
    for {a} in range({na}):
{step}{poll}        {b} = lo + r
        if win > 0:
            slot = ({a} + 1) & 1
            if {b} < hi:
{kept}
        else:
            while {b} < hi:
{cells}
                {b} += T
        cuda.syncthreads()
        if r == 0:
            cuda.threadfence()
            cuda.atomic.exch(progress, c, int32({a} + 1))
"""

#: The bands' poll before a step (:data:`_BANDS`, with a frame), its setup first: ``ready``
#: steps finished by every band before this one.
_BAND_POLL = ("""
    S = cuda.shared.array(3, int32)
    ready = 0
    poll = uint32(0)
    if r == 0:  # the first poll's slot; each poll resets the next one's
        S[0] = {na}
""", """
        while ready < {a}:
            if r < c:
                low = int32({na})
                f = r
                while f < c:
                    low = min(low, LOAD(progress, f))
                    f += T
                cuda.atomic.min(S, poll, low)
            after = uint32(poll + 1) if poll < 2 else uint32(0)
            if r == 0:  # the next poll's slot, free since the last barrier
                S[after] = {na}
            cuda.syncthreads()
            ready = S[poll]
            poll = after
            if ready < {a}:
                {nap}
""")
#: The setup of bands whose reads wait (:data:`_BANDS` without a frame, :data:`_BAND_WAIT`).
_BAND_SEEN = """
    SEEN = cuda.shared.array((2, {warps}), int64)
    if r < 2 * {warps}:
        SEEN[r // {warps}, r % {warps}] = -1
"""

#: Registers a thread of a band fill's kernel of more than one cell a thread: three
#: bands of ``BAND_THREADS`` a multiprocessor (the knapsack's bands on the H200: at 60
#: registers, two bands a multiprocessor are too few to cover its 10^6 columns in one
#: round of 5 cells a thread).
BAND_REGISTERS = 40
#: Shared memory of a band's window (:data:`_BANDS`), at most: the static limit of a block.
BAND_WINDOW_BYTES = 48 * 1024


def _band_unroll(unroll: int | None, across: int, threads: int, bands: int,
                 dtype: np.dtype) -> int:
    """Cells a thread a round of a band fill: ``unroll``, or by default the fewest that
    cover a band of ``bands`` (``across`` cells a step) in one round, so the band keeps its
    step in its window; 1 when the window of that many would not fit
    (:data:`BAND_WINDOW_BYTES`).

    Examples
    --------
    >>> _band_unroll(None, 1000000, 512, 396, np.dtype(np.int64))
    5
    >>> _band_unroll(None, 10**8, 512, 396, np.dtype(np.int64))
    1
    >>> _band_unroll(3, 9, 2, 1, np.dtype(np.int8))
    3
    """
    unroll = unroll or max(1, math.ceil(across / (bands * threads)))
    fits = 2 * unroll * threads * np.dtype(dtype).itemsize <= BAND_WINDOW_BYTES
    return unroll if fits else 1


def band_fill(rec: Recurrence, pattern_index: int, frame: str | None = None,
              threads: int = BAND_THREADS, blocks: int | None = None,
              unroll: int | None = None, copy_back: bool = True,
              narrow: bool = True) -> DeviceFill:
    """A row or column pattern filled in one persistent launch by bands: block ``c`` of
    ``B`` owns the ``c``-th of ``B`` equal slices of every step (a band of columns, for
    rows) and walks the steps in order, publishing after each step how many it has
    finished (a progress counter per band; after the block's barrier, the thread that
    publishes makes the memory fence, once for the block, as the cooperative groups' grid
    barrier does).  The cell's loads of its arguments that depend on the step only (the
    knapsack's ``w[i - 1]``) are made by the kernel a step ahead (:func:`_argument_loads`),
    so no cell's address waits on a load.

    When one round of ``unroll`` cells a thread, computed before any is stored, covers a
    band (by default the fewest that do at the grid planned, :func:`_band_unroll`), the
    band keeps its step for the next: in shared memory (its window) and each cell's value
    in its thread's register, so a cell's read of its own position of the step before
    costs nothing and a read of another position in the band's window costs a shared
    load; reads outside it go to global memory.  Otherwise (a band wider than the round,
    or no room for the window) the threads walk the band a cell at a time, every read from
    global memory.  Indices go through 32 bits when the table's sides allow
    (:func:`_index`), which spares numba's test for negative ones.  With ``narrow``, an
    integer cell is computed in int32, and the band's window and registers hold int32,
    when :mod:`runtime.narrow` proves that exact over the fill's steps (a read reaches
    only earlier steps); the table keeps its type.

    Before step ``a`` a block needs every band its reads reach to have finished ``a``
    steps.  With ``frame``, a diagonal pattern that also fits the reads, they reach only
    bands before this one (in ``frame``'s NOSE frame, :data:`patterns.DIAGONAL_FLIPS`,
    every read goes up and/or left), so bands to the left run ahead and a band waits on
    nothing to its right.  The block's threads read those bands' counters together and
    keep their minimum, so a band that finds its left neighbours ahead runs that many
    steps without polling again.  A poll is one block barrier: the threads with counters
    to read fold them into a slot in shared memory, and the slots go round three in turn,
    so the next poll's slot is reset before that barrier.  Without ``frame`` (reads on
    both sides) a band does not poll: each read outside the band waits until the band it
    reads has finished the read's step, and each warp keeps, for each side, the last such
    band's count, so it reloads a counter only when the count is not enough (on the H200,
    session 24, side by side, a two-sided stencil of 1001 x 200001 cells: 4.81 ms against
    5.83 polling every band).  No ticket, no grid barrier, no tile chain along a step:
    the wait between steps is one band's, not a row of tiles'.

    Every band must be resident at once (a band waits on bands that must run), so the
    grid is at most the cooperative limit; under the simulator, whose blocks run one
    after another in order, a fill without ``frame`` takes one block unless ``blocks``
    says otherwise (then its reads must reach only bands before theirs).  Cells are read
    past L1.  ``SourceUnavailable`` when the cell function's source
    cannot be rewritten; ``ValueError`` for a pattern that is not a row or column pattern.
    """
    p = PATTERNS[pattern_index]
    code = p.code
    if code in DIAGONAL_FLIPS:
        raise ValueError(f"the band fill is for the row and column patterns, not {code}")
    # without a frame only the step axis's direction matters: the pattern's own walk
    rows, cols = DIAGONAL_FLIPS[frame] if frame else (p.pi[0] < 0, p.pi[1] < 0)
    arrays, loads = _argument_loads(rec)
    along = "u" if code in ("RUD", "RDU") else "v"
    n, m = rec.shape
    nw = narrowing(rec.func, rec.shape, rec.dtype, rec.args, n if along == "u" else m) \
        if narrow else None
    positions = nw.positions if nw else frozenset()
    cell = _coherent_cell(rec, hoisted=True, window=(along, rows, cols), wait=not frame,
                          narrow=positions)
    a, b = ("u", "v") if along == "u" else ("v", "u")
    Iu, Jv = (_index(_flip(x, size, f), rec.shape)
              for x, size, f in (("u", "n", rows), ("v", "m", cols)))
    tail = arg_tail(len(rec.args))
    across = m if along == "u" else n
    across_key = "{1}" if along == "u" else "{0}"  # a load that names it is a cell's own
    ahead = [k for k, t in enumerate(loads) if across_key not in t]

    def at(k: int, step: str) -> str:  # load k at step ``step``
        return loads[k].format(_flip(step, "n", rows), _flip(step, "m", cols))

    sched = (np.zeros(multiprocessors() * 32, np.int32),)  # a counter per resident block
    if _simulated():
        planned = min(blocks or 1, sched[0].size) if frame or blocks else 1
    else:  # as many as are resident at BAND_REGISTERS registers a thread
        per_sm = max(1, min(2048 // threads, 65536 // (threads * BAND_REGISTERS)))
        planned = min(_sms(_cuda()) * per_sm, blocks or sched[0].size, sched[0].size)
    held = _register_type(rec, nw)  # the window's and the kept registers' type
    U = _band_unroll(unroll, across, threads, planned, held)
    values = [f"h{k}" if k in ahead else t for k, t in enumerate(loads)]
    keep = (f"W[{a} & 1, {{3}} - lo] = x{{2}}", "y{2} = x{2}")
    waits = "" if frame else ", progress, width, c, SEEN"  # what a read's wait needs
    kept = "\n".join(_unrolled_cells(Iu, Jv, b, "T", U, tail, " " * 16, "hi",
                                      [f"(W, slot, lo, win{waits})", "y{2}", *values], keep))
    cells = "\n".join(_unrolled_cells(Iu, Jv, b, "T", 1, tail, " " * 16, "hi",
                                       ([] if frame else [f"(W, 0, lo, 0{waits})"]) + values,
                                       cell="plain"))
    names = {"a": a, "na": "n" if a == "u" else "m", "nap": _nap(), "warps": -(-threads // 32)}
    setup, poll = (x.format(**names)[1:] for x in _BAND_POLL) if frame else (
        _BAND_SEEN.format(**names)[1:], "")
    src = _BANDS.format(
        args=tail, b=b, nb="m" if b == "v" else "n", U=U, cells=cells, kept=kept,
        span=U * threads, setup=setup, poll=poll, **names,
        first="".join(f"    g{k} = {at(k, '0')}\n" for k in ahead)
        + "".join(f"    y{k} = DT(0)\n" for k in range(U)),
        step="".join(f"        h{k} = g{k}\n        g{k} = {at(k, f'{a} + 1')}\n"
                     for k in ahead))
    kern = _kernel(rec, f"bands-{code}-{frame}-{U}-{threads}-{Iu}-{'.'.join(arrays)}"
                   + (f"-i32-{hash(positions)}" if nw else ""), src,
                   "bands", cell, BAND_REGISTERS if U > 1 else None,
                   plain=_coherent_cell(rec, hoisted=True, keep=False, wait=True,
                                        window=None if frame else (along, rows, cols),
                                        narrow=positions),
                   int32=np.int32, int64=np.int64, uint32=np.uint32, DT=held.type,
                   **_coherent(_cuda()))

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        args = (dM, *dsched, *dargs)
        if _simulated():
            return [(planned, threads, args)]
        most = min(_cooperative_blocks(kern, args, threads, math.ceil(across / U)),
                   sched[0].size)
        return [(most if blocks is None else min(blocks, most), threads, args)]

    return _run(rec, kern, "C" if along == "u" else "F", copy_back, launches, sched,
                label=f"bands of {'rows' if along == 'u' else 'columns'}, "
                      + ("waiting on the bands before" if frame else
                         "each read waiting on its band") + _narrow_note(nw))


_REG_READ = """
def read(M, regs, x0, x1, a, b):
    if {du} == 0:
        return regs[0]
    if {dv} == 0:
        return regs[1]
    return regs[2]
"""


def _pair_stores(R: int, C: int, rows: bool, cols: bool, n: int, m: int) -> list[list[tuple[int, ...]]]:
    """How a full ``R x C`` block of 4-byte cells is stored (:func:`strip_fill`): for each
    of its rows, its columns in memory order, cut into pairs that fill one aligned 8-byte
    word (``(c, c')``, the cell at the lower address first) and single cells.

    A row's first cell sits at an even row and column in the NOSE frame (``R`` and ``C``
    even), so whether a cell's place in the C-ordered ``n x m`` table is even is known
    here, from the frame's flips and the parities of ``n`` and ``m``.

    Examples
    --------
    >>> _pair_stores(2, 4, False, False, 6, 8)
    [[(0, 1), (2, 3)], [(0, 1), (2, 3)]]
    >>> _pair_stores(2, 4, False, True, 6, 7)  # columns flipped, odd rows shifted by one
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


def _argument_loads(rec: Recurrence) -> tuple[tuple[str, ...], list[str]]:
    """The cell function's loads of its array arguments that a kernel makes for it
    (:func:`runtime.source.argument_loads`; arrays of no elements left alone): the
    arrays' names, and each load as kernel source, a format string over the cell's
    indices (``{0}``, ``{1}``) naming the arguments as the kernels do (``a0, a1, ...``).
    A kernel makes a load where the cell might not (a step ahead, or at a cell whose
    guard returns first), so each index is clamped into the array; an index the cell
    itself could use (``-size <= e < size``) reads what it would, a negative one counted
    from the end as Python does.  When every array argument is :func:`_small_args`, the
    clamp runs in 32 bits and numba's own test for negative indices is left out (the
    knapsack's bands: 64 fewer instructions in the kernel's SASS).  The loads, or why
    the source gives none, are found once per cell function (its source parsed,
    :func:`runtime.source._once`), not on every fill: the bands ask before anything
    else has read the source."""
    params = list(inspect.signature(rec.func).parameters)[1 + rec.ndim:]
    arrays = tuple(p for p, a in zip(params, rec.args) if isinstance(a, np.ndarray) and a.size > 0)
    small = _small_args(rec)

    def clamp(e: str, size: str) -> str:  # index ``e`` clamped into the array, as above
        if small:
            return (f"int64(min(uint32(({e} + {size} if {e} < 0 else {e}) & 0xFFFFFFFF), "
                    f"uint32({size} - 1)))")
        return f"min(max({e}, -{size}), {size} - 1)"

    def build() -> list[str]:
        out = []
        for array, index in argument_loads(rec.func, rec.ndim, arrays):
            a = f"a{params.index(array)}"
            sides = (clamp(e, f"{a}.shape[{d}]") for d, e in enumerate(index))
            out.append(f"{a}[{', '.join(sides)}]")
        return out

    return arrays, _once(rec.func, ("argument-loads", rec.ndim, arrays, small), build)


def _strip_source(rows: bool, cols: bool, R: int, C: int, W: int, nargs: int, sim: bool,
                  pairs: list[list[tuple[int, ...]]] | None = None, score: bool = False,
                  loads: Sequence[str] = (), K: int = 0, B: int = STRIP_BATCH,
                  anywhere: bool = False, V: int = 1, diagonals: bool = False) -> str:
    """Source of the strip kernel (see :func:`strip_fill`): a lane's ``R x C`` block of
    cells unrolled, computed into registers before any is stored; ``W`` words a boundary
    value, strip ``k``'s last row in slot ``k % nslots`` of ``BND`` (``m + C`` values, so
    lane 31 stores its block's last row whole, with no test per column: on the H200,
    session 20, side by side, scores at 200000² 8-13% faster, Smith-Waterman 32768² 7.78
    ms against 8.20, other 8x4 and 4x2 tables within 2%, 8x8 blocks 12-19% slower); a
    full block's cells stored two to an 8-byte word where ``pairs`` (:func:`_pair_stores`)
    says, through ``MP``, the table as 8-byte words.  A full block's stores, the boundary
    ring's stores, lane 0's reads of the fetched row and both sides of the store warps'
    ring (below) index by unsigned integers (``U``), so numba leaves out its wraparound
    of negative indices (the ring's: on the H200, session 18, 32769², LCS 12.54 ms
    against 13.86, Smith-Waterman 11.19 against 12.86).  With ``score``, no cell is
    stored but the last one, into ``OUT[0, 0]`` (:func:`strip_score_fill`).  ``loads``
    (:func:`_argument_loads`) are the cell's loads of its arguments, which the kernel
    makes and passes in, so the cells wait on no load and their branches can become
    selects: those that do not depend on the column once a strip, into shared memory
    (``XS``) for the lanes to read; those by column only a batch ahead, into a window of
    the last ``WN`` columns in shared memory (``YW``) that the lanes read each step; the
    others (by row and column) a step ahead.  So no load from global memory is pending
    when the step loop starts, and within it only the batch's loads, which the batch's
    first step waits on anyway: ptxas puts its wait for a load at the load's first use
    and shares its scoreboards between loads, so a load made before the loop and first
    used in it, or a load a step ahead, made every step wait on the loads of the step
    before (on the H200, session 30: Smith-Waterman by rows 8.31 ms against 6.37 with the
    windows alone, 5.76 with both).
    With ``K`` store warps (:func:`strip_store_warps`) the compute warp (the block's first)
    writes its cells into a ring of ``2 B`` steps in shared memory instead of the table,
    and a block barrier every batch of ``B`` steps lets the store warps store the batch
    before from the ring into ``MF`` (the table as one row of cells), ``P`` runs of ``C B``
    cells of a row at a time, ``V`` cells (1, or 4 as one 16-byte vector: ``LD4``, ``ST4``,
    :func:`runtime.intrinsics.load4`) a load or store, the compute warp's ring writes
    too.  ``B`` is also the blocks of the row above fetched at a time.  A block's cells come
    row by row, or with ``diagonals`` anti-diagonal by anti-diagonal: the same cells, in
    another order, which ptxas schedules differently (:func:`strip_fill`).  Under
    the simulator (threads not in lockstep) the warp exchanges go through shared memory
    with block barriers instead of shuffles, which the store warps meet too.  With
    ``anywhere`` (only with ``K`` or ``score``: the compute warp stores no cell itself)
    a lane computes its whole block even where it passes the table's last row or column,
    instead of a guarded copy of the block that tests each cell: the cell runs
    anywhere (:func:`runtime.source.runs_anywhere`) and the cells outside are never
    stored, so a partial block costs no branch that splits the warp (on the H200,
    session 18, with the ring at unsigned indices: at 32769², LCS 10.35 ms against
    12.54 guarded, Smith-Waterman 8.96 against 11.19, edit distance 10.51 against 11.78;
    DTW at 32767² 9.13 against 13.89)."""
    I = lambda e: _flip(e, "n", rows)  # noqa: E731
    J = lambda e: _flip(e, "m", cols)  # noqa: E731
    args = arg_tail(nargs)
    words = B * C * W  # words of one batch of the row above
    nb = math.ceil(words / 32)
    sync = "cuda.syncthreads()" if sim else "cuda.syncwarp(FULL)"
    nap = _nap()
    L: list[str] = []
    shift = 0  # with store warps, the compute warp's step sits one level deeper
    LS, SS = _ring_strides(R, C, V)
    uses = [("{0}" in t, "{1}" in t) for t in loads]  # (by row, by column) of each load
    win = [k for k, (by_r, by_c) in enumerate(uses) if by_c and not by_r]  # by column only
    rowed = [k for k, (by_r, by_c) in enumerate(uses) if not by_c]  # by row, or neither
    ahead = [(k, r, c) for k, (by_r, by_c) in enumerate(uses) if by_r and by_c
             for r in range(R) for c in range(C)]
    WN = 1 << ((32 + 2 * B) * C - 1).bit_length()  # a window's columns, a power of 2
    WL = math.ceil(B * C / 32)  # a window's columns a lane loads a batch
    # the batch's first step: the hand-down words, and the windows' columns in every strip
    batch = f"{'' if win else 'k > 0 and '}(s & {B - 1}) == 0"

    def value(k: int, r: int, c: int) -> str:  # load k's value for the block's cell (r, c)
        by_r, by_c = uses[k]
        return f"w{k}_{r * by_r}_{c}" if by_c else f"h{k}_{r * by_r}"

    def at(k: int, row: str, col: str) -> str:  # load k at a row and column of the frame
        return loads[k].format(I(row), J(col))

    def load(k: int, r: int, c: int, q: str) -> str:  # load k for cell (r, c) of block q
        return at(k, f"ub + {r}", f"{q} * {C} + {c}")

    def rows_of(k: int) -> int:  # the values of load k a lane takes once a strip
        return R if uses[k][0] else 1

    def put(depth: int, *lines: str) -> None:
        L.extend("    " * (depth + shift) + x for x in lines)

    def fetch(depth: int, first: str) -> None:  # issue the loads of a batch's words
        for t in range(nb):
            put(depth, f"f = lane + {32 * t}", f"col = {first} + (f >> {W - 1})",
                f"if f < {words} and col < m:",
                f"    p{t} = LOAD(BND, (above + col) * {W} + (f & {W - 1}))")

    CB = C * B  # a run: a lane's cells of one row in a batch
    P = 32 * K * V // CB  # runs the store warps store at once
    Q = P // R  # lanes of the compute warp those runs step over

    def stores(depth: int) -> None:  # the batch before, P runs at a time, loads before stores
        put(depth, f"sst = s - {B} + sb", f"col = sst * {C} + sc - gr * {C}",
            f"sidx = (sst & {2 * B - 1}) * {SS} + sc + gr * {LS} + rr * {C}",
            f"ix = {I('u0 + pr')} * m + {J('col')}")
        di = -P if rows else P  # the flat index's step from one of a lane's runs to the next
        dj = Q * C if cols else -Q * C
        n_it = 32 * R // P
        for lo in range(0, n_it, 8):
            its = range(lo, min(n_it, lo + 8))
            put(depth, *[f"y{it} = {'LD4(RG, ' if V > 1 else 'RG['}U(sidx + {it * Q * LS})"
                         f"{')' if V > 1 else ']'}" for it in its])
            for it in its:
                at = f"U(ix + {it * di} * m + {it * dj})"
                put(depth, f"if col >= {it * Q * C} and col - {it * Q * C} < m and "
                    f"u0 + pr + {it * P} < n:",
                    f"    ST4(MF, {at}, {', '.join(f'y{it}[{v}]' for v in range(V))})"
                    if V > 1 else f"    MF[{at}] = y{it}")

    cells = [(r, c) for r in range(R) for c in range(C)]
    if diagonals:  # the block's anti-diagonals in turn, each cell after its neighbours
        cells.sort(key=lambda rc: (rc[0] + rc[1], rc[0]))

    def block(depth: int, guard: bool) -> None:
        for r, c in cells:
            left = f"x{r}_{c - 1}" if c else f"l{r}"
            up = f"x{r - 1}_{c}" if r else f"t{c}"
            if r:
                diag = f"x{r - 1}_{c - 1}" if c else f"l{r - 1}"
            else:
                diag = f"t{c - 1}" if c else "cn"
            vals = "".join(f", {value(k, r, c)}" for k in range(len(loads)))
            call = (f"x{r}_{c} = DT(cell(M, {I(f'ub + {r}')}, {J(f'v0 + {c}')}{args}, "
                    f"({left}, {up}, {diag}){vals}))")
            put(depth, *([f"if ub + {r} < n and v0 + {c} < m:", "    " + call] if guard
                         else [call]))
        if score:  # no cell stored
            return
        if K:  # into the ring, every cell: the store warps skip those outside the table
            put(depth, *[f"ST4(RG, U(rs + lane * {LS} + {r * C + c}), "
                         + ", ".join(f"x{r}_{c + v}" for v in range(V)) + ")" if V > 1 else
                         f"RG[U(rs + lane * {LS} + {r * C + c})] = x{r}_{c}"
                         for r in range(R) for c in range(0, C, V)])
            return
        for r in range(R):  # stores after every cell, so the cells' loads overlap
            for group in pairs[r] if pairs and not guard else [(c,) for c in range(C)]:
                c = group[0]
                if len(group) == 2:
                    put(depth, f"MP[U(({I(f'ub + {r}')} * m + {J(f'v0 + {c}')}) >> 1)] = "
                        f"(ENC(x{r}_{c}, 0)[0] & LO) | (ENC(x{r}_{group[1]}, 0)[0] << 32)")
                    continue
                store = (f"M[{I(f'ub + {r}')}, {J(f'v0 + {c}')}] = x{r}_{c}" if guard else
                         f"M[U({I(f'ub + {r}')}), U({J(f'v0 + {c}')})] = x{r}_{c}")
                put(depth, *([f"if ub + {r} < n and v0 + {c} < m:", "    " + store] if guard
                             else [store]))

    put(0, f"def strips(M, {'MP, ' if pairs else ''}{'MF, ' if K else ''}BND, ticket, "
        f"nstrips, nslots{', OUT' if score else ''}{args}):", "    n = M.shape[0]",
        "    m = M.shape[1]", "    lane = cuda.threadIdx.x", f"    nq = (m + {C - 1}) // {C}",
        f"    BD = cuda.shared.array({2 * words}, int64)")
    if sim:
        put(1, f"XV = cuda.shared.array({32 * C}, DT)")
    if sim or K:
        put(1, "XK = cuda.shared.array(1, int64)")
    if K:  # a store lane's place in a batch: its step, column, first run
        put(1, f"RG = cuda.shared.array({2 * B * SS}, DT)", "el = lane - 32",
            f"sb = (el % {CB // V}) // {C // V}",
            f"sc = el % {C}" if V == 1 else f"sc = {V} * (el % {C // V})", f"pr = el // {CB // V}",
            f"gr = pr // {R}", f"rr = pr % {R}")
    for k in win:  # a column's load, for the lanes to read a batch on
        put(1, f"YW{k} = cuda.shared.array({WN}, T{k})")
    for k in rowed:  # a strip's loads by row, for its lanes to read
        put(1, f"XS{k} = cuda.shared.array({32 * R}, T{k})")
    put(1, "while True:", "    k = 0", "    if lane == 0:",
        "        k = cuda.atomic.add(ticket, 0, 1)")
    if sim or K:
        put(3, "XK[0] = k")
        put(2, "cuda.syncthreads()", "k = XK[0]", "cuda.syncthreads()")
    else:
        put(2, "k = cuda.shfl_sync(FULL, k, 0)")
    put(2, "if k >= nstrips:", "    return", f"u0 = k * {32 * R}", f"ub = u0 + lane * {R}",
        *([] if anywhere else [f"full = ub + {R} <= n"]), "cn = ZERO",
        "last = k == nstrips - 1",
        f"above = ((k - 1) % nslots) * (m + {C})", f"below = (k % nslots) * (m + {C})")
    put(2, *[f"x{r}_{c} = ZERO" for r in range(R) for c in range(C)])
    put(2, *[f"l{r} = ZERO" for r in range(R)], *[f"t{c} = ZERO" for c in range(C)],
        *[f"b{c} = ZERO" for c in range(C)], *[f"p{t} = int64(0)" for t in range(nb)])
    if rowed:  # once a strip, through shared memory: no load pending when the loop starts
        put(2, "if lane < 32:", *[f"    XS{k}[lane + {32 * t}] = "
                                  + at(k, f"u0 + lane + {32 * t}", "0")
                                  for k in rowed for t in range(rows_of(k))], sync)
    put(2, *[f"h{k}_{r} = XS{k}[{f'(lane & 31) * {R} + {r}' if uses[k][0] else '0'}]"
             for k in rowed for r in range(rows_of(k))],
        *[f"g{k}_{r}_{c} = {load(k, r, c, '(0 - lane)')}" for k, r, c in ahead],
        *[f"y{k}_{t} = {at(k, 'ub', f'lane + {32 * t}')}" for k in win for t in range(WL)])
    put(2, "if k > 0 and lane < 32:" if K else "if k > 0:")
    fetch(3, "0")
    if K:  # a barrier every batch; after it the store warps store the batch before
        put(2, f"for s in range(((nq + {30 + B}) // {B} + 1) * {B}):",
            f"    if (s & {B - 1}) == 0:", "        cuda.syncthreads()",
            "        if lane >= 32 and s > 0:")
        stores(5)
        put(3, "if lane < 32 and s < nq + 31:")
        shift = 1
    else:
        put(2, "for s in range(nq + 31):")
    put(2, f"    if {batch}:")
    if win:
        put(4, "if k > 0:")
    for t in range(nb):  # the batch fetched last time: wait for unwritten words, stash
        put(4 + bool(win), f"f = lane + {32 * t}", f"col = s * {C} + (f >> {W - 1})",
            f"if f < {words} and col < m:",
            f"    while (p{t} >> 32) != k:",
            f"        {nap}",
            f"        p{t} = cuda.atomic.add(BND, (above + col) * {W} + (f & {W - 1}), 0)",
            f"    BD[(s & {2 * B - 1}) * {C * W} + f] = p{t}")
    for k in win:  # the windows' columns of this batch, loaded a batch ago
        for t in range(WL):
            put(4, f"if lane + {32 * t} < {B * C}:",
                f"    YW{k}[U((s * {C} + lane + {32 * t}) & {WN - 1})] = y{k}_{t}")
    put(4, sync)
    if win:
        put(4, "if k > 0:")
    fetch(4 + bool(win), f"(s + {B}) * {C}")
    put(4, *[f"y{k}_{t} = {at(k, 'ub', f'(s + {B}) * {C} + lane + {32 * t}')}"
             for k in win for t in range(WL)])
    put(3, "q = s - lane", f"cn = t{C - 1}", *[f"w{k}_{r}_{c} = g{k}_{r}_{c}" for k, r, c in ahead],
        *[f"g{k}_{r}_{c} = {load(k, r, c, '(q + 1)')}" for k, r, c in ahead],
        *[f"w{k}_0_{c} = YW{k}[U((q * {C} + {c}) & {WN - 1})]" for k in win for c in range(C)])
    if sim:
        put(3, *[f"XV[lane * {C} + {c}] = b{c}" for c in range(C)], sync,  # as shfl_up:
            *[f"t{c} = XV[(lane - 1) * {C} + {c}] if lane > 0 else b{c}" for c in range(C)], sync)
    else:  # numba shuffles 4- and 8-byte ints and floats: others travel as int64
        put(3, *[f"t{c} = DT(cuda.shfl_up_sync(FULL, SHUF(b{c}), 1))" for c in range(C)])
    slot = f"(s & {2 * B - 1}) * {C * W}"
    put(3, "if lane == 0 and k > 0:",
        *[f"    t{c} = DEC({', '.join(f'BD[U({slot} + {c * W + w})]' for w in range(W))})"
          for c in range(C)])
    if K:
        put(3, f"rs = (s & {2 * B - 1}) * {SS}")
    put(3, "if q >= 0 and q < nq:", f"    v0 = q * {C}")
    if anywhere:  # every block whole, the cells past the table's edge never stored
        block(4, False)
    else:
        put(4, f"if full and v0 + {C} <= m:")
        block(5, False)
        put(4, "else:")
        block(5, True)
    put(4, *[f"l{r} = x{r}_{C - 1}" for r in range(R)], *[f"b{c} = x{R - 1}_{c}" for c in range(C)])
    put(4, "if lane == 31 and not last:")  # the strip's last row, for the strip below
    for c in range(C):  # a slot holds m + C values: a block's columns past m land there
        put(5, f"e = ENC(b{c}, k + 1)",
            *[f"BND[U((below + v0 + {c}) * {W} + {w})] = e[{w}]" for w in range(W)])
    shift = 0
    if K and sim:  # the store warps meet the compute warp's barriers
        put(3, "elif s < nq + 31:", f"    if {batch}:",
            f"        {sync}", f"    {sync}", f"    {sync}")
    if score:  # the last cell, held by a lane of the last strip after its last block
        put(2, "if last:")
        for r in range(R):
            for c in range(C):
                put(3, f"if ub + {r} == n - 1 and (nq - 1) * {C} + {c} == m - 1:",
                    f"    OUT[0, 0] = x{r}_{c}")
    return "\n".join(L) + "\n"


def _shuffled(dtype: np.dtype) -> Any:
    """The type a value of ``dtype`` crosses a warp shuffle as: itself when numba
    shuffles it (32- and 64-bit ints and floats), else ``int64`` (exact for every other
    integer and bool; the shuffled value is cast back)."""
    dt = np.dtype(dtype)
    native = dt.kind in "if" and dt.itemsize in (4, 8)
    return dt.type if native else np.int64


def _words(dtype: np.dtype) -> int:
    """64-bit words a boundary value of ``dtype`` takes (:func:`_boundary_words`: 32 bits
    of the value each); ``SourceUnavailable`` for cells the strips do not carry, anything
    but bools, integers of up to 8 bytes and floats of 4 or 8."""
    dt = np.dtype(dtype)
    if dt.kind not in "biuf" or dt.itemsize > 8 or (dt.kind == "f" and dt.itemsize < 4):
        raise SourceUnavailable(f"{dt} cells")
    return 1 if dt.itemsize <= 4 else 2


def _boundary_words(dtype: np.dtype, sim: bool) -> tuple[int, Any, Any]:
    """How a strip hands its last row to the strip below without fences: each value as
    ``W`` 64-bit words, 32 bits of the value in the low half of each and a tag in the high
    half (the writing strip's number plus one), so a word read with the tag the reader
    expects holds its bits (an aligned 8-byte store is seen whole or not at all), and a
    word left by an earlier strip in the same slot of a ring is told apart.  ``(W, ENC,
    DEC)``: ``ENC(x, tag)`` the words of a value, ``DEC(*words)`` the value; numba.cuda
    device functions (built once per cell type), or plain functions under the simulator."""
    dt = np.dtype(dtype)
    W = _words(dt)
    DT, lo = dt.type, np.int64(0xFFFFFFFF)
    if sim:
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
            return DT(np.asarray(b, np.uint64).astype(dt)[()])

        return W, enc, dec
    from numba.cuda import libdevice

    ns = {"int64": np.int64, "int32": np.int32, "DT": DT, "LO": lo, "lib": libdevice}
    if dt.kind == "f" and W == 1:
        bits, back = "int64(lib.float_as_int(x))", "lib.int_as_float(int32(w0 & LO))"
    elif dt.kind == "f":
        bits, back = "lib.double_as_longlong(x)", "lib.longlong_as_double(b)"
    else:
        bits, back = "int64(x)", "DT(b)" if W == 2 else "DT(w0 & LO)"
    parts = ", ".join(f"((v >> {32 * w}) & LO) | hi" for w in range(W)) + ","
    args = ", ".join(f"w{w}" for w in range(W))
    src = (f"def enc(x, tag):\n    v = {bits}\n    hi = int64(tag) << 32\n    return ({parts})\n"
           f"def dec({args}):\n" + ("    b = ((w1 & LO) << 32) | (w0 & LO)\n" if W == 2 else "")
           + f"    return {back}\n")

    def build() -> tuple[Any, Any]:
        cuda = _cuda()
        return (cuda.jit(device=True)(compile_source(src, "enc", ns)),
                cuda.jit(device=True)(compile_source(src, "dec", ns)))

    return (W, *CACHE.get(_boundary_words, ("cuda", "boundary-words", dt), build))


def _words_view(dM: Any) -> Any:
    """The C-ordered device table ``dM`` as one row of 8-byte words, the same memory (a
    trailing 4-byte cell that fills no word is left out)."""
    count = dM.size * dM.dtype.itemsize // 8
    if _simulated():
        return type(dM)(dM._ary.reshape(-1)[:count * 8 // dM.dtype.itemsize].view(np.int64))
    return type(dM)(shape=(count,), strides=(8,), dtype=np.dtype(np.int64), stream=dM.stream,
                    gpu_data=dM.gpu_data)


def strip_block(dtype: np.dtype, narrowed: bool = False) -> tuple[int, int]:
    """Rows and columns of a lane's block in the register strips by default: ``8x4`` for
    4-byte floats and for cells computed in int32 (``narrowed``, :func:`strip_narrowing`),
    else ``4x2``.

    On the H200 (docs/benchmarks.md, session 15; 32768², each fill checked against the
    reference), computed in int32: Smith-Waterman 12.84 ms at 8x4 against 13.39 at 4x2,
    edit distance (int64 table) 13.54 against 14.46, LCS 13.99 against 15.51.

    On the H200 (docs/benchmarks.md, session 13; 32768², each fill checked against the
    reference), with the store warps of :func:`strip_store_warps`: DTW (float32) 11.04 ms
    at 8x4 against 13.39 at 4x2; Smith-Waterman (int32) 20.43 ms at 4x2 against 25.27 at
    8x4, LCS (int32) 16.21 against 14.86; edit distance (int64) 19.06 at 4x2 against
    21.41 at 4x1 (every block in batches of 4 steps then; :func:`strip_batch`).

    Examples
    --------
    >>> strip_block(np.dtype(np.float32)), strip_block(np.dtype(np.int32))
    ((8, 4), (4, 2))
    >>> strip_block(np.dtype(np.int64)), strip_block(np.dtype(np.int64), narrowed=True)
    ((4, 2), (8, 4))
    """
    dt = np.dtype(dtype)
    return (8, 4) if narrowed or (dt.kind == "f" and dt.itemsize == 4) else (STRIP_ROWS, 2)


def strip_store_warps(R: int, C: int, dtype: np.dtype) -> int:
    """Store warps a strip of ``R x C`` blocks of ``dtype`` cells takes by default
    (:func:`strip_fill`): ``R C B / 32`` (``B``: :func:`strip_batch`), so that a lane of
    theirs stores at most 32 cells of a batch, but 2 to 4 warps (8 made a block of 8x4
    int64 cells ask for more registers than a multiprocessor has); 0 (the compute warp
    stores its own cells) when their runs of ``C B`` cells would not cover the strip's
    ``32 R`` rows evenly (:func:`_store_runs_fit`), or the ring would take more than
    ``RING_BYTES`` of shared memory (:func:`_ring_bytes`).

    On the H200 (session 13, 32768², medians of 5): LCS 4x2 with 2 and 4 store warps 16.27
    and 16.42 ms (19.21 without); DTW 8x4 in batches of 2 with 2 and 4, 10.16 and 10.96
    (12.26 without, in batches of 4).

    Examples
    --------
    >>> i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    >>> strip_store_warps(4, 2, i4), strip_store_warps(8, 4, i4), strip_store_warps(3, 2, i4)
    (2, 4, 0)
    >>> strip_store_warps(8, 8, i4), strip_store_warps(8, 8, i8)  # a ring of 33 or 67 KB
    (4, 0)
    """
    K = min(4, max(2, R * C * strip_batch(R, C, dtype) // 32))
    return 0 if _store_warps_misfit(R, C, K, dtype) else K


def _store_warps_misfit(R: int, C: int, K: int, dtype: np.dtype) -> str:
    """Why ``K`` store warps cannot serve strips of ``R x C`` blocks of ``dtype`` cells in
    batches of :func:`strip_batch` steps, or ``""`` when they can: their runs must cover
    the strip (:func:`_store_runs_fit`) and their ring fit in ``RING_BYTES``.

    Examples
    --------
    >>> _store_warps_misfit(4, 2, 2, np.dtype(np.int32))
    ''
    >>> _store_warps_misfit(4, 2, 3, np.dtype(np.int32))
    '3 store warps do not cover strips of 4x2 blocks in whole runs'
    """
    B = strip_batch(R, C, dtype)
    if not _store_runs_fit(R, C, K, B):
        return f"{K} store warps do not cover strips of {R}x{C} blocks in whole runs"
    size = _ring_bytes(R, C, B, dtype)
    if size > RING_BYTES:
        return (f"the store warps' ring of {R}x{C} blocks of {np.dtype(dtype)} cells would "
                f"take {size} bytes of shared memory, over {RING_BYTES}")
    return ""


def _ring_strides(R: int, C: int, V: int = 1) -> tuple[int, int]:
    """Cells of the store warps' ring (:func:`_strip_source`) from one lane's cells of a
    step to the next lane's, and from one step to the next.  Cells moved one at a time
    (``V`` 1): a lane's ``R C`` cells and one more (odd, so the lanes' writes miss each
    other's banks), a step's 32 lanes and one more.  Four at a time (``V`` 4, 16-byte
    vectors, 16-byte aligned): a lane's cells and 4 more, so the compute warp's vectors of
    8 lanes cover the 32 banks, and a step's 32 lanes (so a store warp's reads of a batch's
    steps meet on the same banks, 4-way: not measured; session 27 found the scalar ring's
    4-way conflicts cost nothing measurable).

    Examples
    --------
    >>> _ring_strides(4, 2), _ring_strides(8, 4, 4)
    ((9, 289), (36, 1152))
    """
    if V == 4:
        return R * C + 4, 32 * (R * C + 4)
    lane = R * C + 1
    return lane, 32 * lane + 1


def _ring_bytes(R: int, C: int, B: int, dtype: np.dtype, V: int = 1) -> int:
    """Bytes of the ring in shared memory through which the store warps take a strip's
    cells of ``2 B`` steps, ``V`` at a time (strides: :func:`_ring_strides`).

    Examples
    --------
    >>> _ring_bytes(4, 2, 4, np.dtype(np.int32))
    9248
    """
    return 2 * B * _ring_strides(R, C, V)[1] * np.dtype(dtype).itemsize


def strip_batch(R: int, C: int, dtype: np.dtype) -> int:
    """Steps a whole-table strip of ``R x C`` blocks of ``dtype`` cells takes as a batch
    (:func:`strip_fill`): the blocks of the row above fetched at a time, and the steps
    between the store warps' barriers; ``STRIP_BATCH``, or 2 where the store warps' ring
    of ``STRIP_BATCH`` steps would take more than ``RING_BYTES`` (:func:`_ring_bytes`).

    On the H200 (session 18, blocks whole past the table's edge, medians of 7): 8x4 cells
    in int32 with 4 store warps in batches of 4 against 2 store warps in batches of 2, at
    32769² LCS 9.74 against 10.19 ms, Smith-Waterman 8.33 against 9.46, edit distance
    9.30 against 10.59; DTW (float32) at 32767² 8.64 against 9.50; at 32768² (32768² for
    DTW) 9.56 against 9.41, 8.07 against 8.00, 8.79 against 9.09, 8.49 against 8.22.
    (Session 13, before the blocks ran whole, found batches of 2 faster for 8x4.)

    Examples
    --------
    >>> i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    >>> strip_batch(8, 4, i4), strip_batch(4, 2, i8), strip_batch(8, 4, i8), strip_batch(8, 8, i4)
    (4, 4, 2, 2)
    """
    return STRIP_BATCH if _ring_bytes(R, C, STRIP_BATCH, dtype) <= RING_BYTES else 2


def _store_runs_fit(R: int, C: int, K: int, B: int, V: int = 1) -> bool:
    """Whether ``K`` store warps' lanes, ``V`` cells each, cover a batch of ``B`` steps of
    a strip of ``R x C`` blocks in whole runs (``C B`` cells of a row), each lane keeping
    its column and lane offset from one run to the next (so its addresses step by
    constants).

    Examples
    --------
    >>> _store_runs_fit(4, 2, 2, 4), _store_runs_fit(4, 2, 3, 4), _store_runs_fit(6, 2, 2, 4)
    (True, False, False)
    >>> _store_runs_fit(8, 4, 4, 4, 4), _store_runs_fit(8, 2, 4, 4, 4)
    (True, False)
    """
    if K <= 0 or C % V:
        return False
    run = C * B // V  # lanes a run takes
    P = 32 * K // run
    return 32 * K % run == 0 and P % R == 0 and 32 * R % P == 0


def strip_fill(rec: Recurrence, pattern_index: int, rows_per_lane: int | None = None,
               copy_back: bool = True, cols_per_step: int | None = None,
               store_warps: int | None = None, narrow: bool = True, vectors: bool = True,
               diagonals: bool | None = None) -> DeviceFill:
    """A diagonal pattern whose reads are its three nearest neighbours (offsets
    ``(0, -1)``, ``(-1, 0)``, ``(-1, -1)`` in the NOSE frame, at constant offsets) filled
    in registers.

    One compute warp per strip of ``32 R`` rows (``R = rows_per_lane``), taken in order from an
    atomic ticket.  At step ``s`` lane ``k`` computes its ``R x C`` block (``C =
    cols_per_step``; both by default :func:`strip_block`) of columns ``(s - k) C ...``: its
    ``R`` rows, ``C`` columns, every cell into a register before any is stored, so the
    unrolled cells overlap, the cell's loads of its arguments made by the kernel ahead of
    time (:func:`_strip_source`); a cell's neighbours come from the block, the lane's
    last column, or the lane above's last row by warp shuffles, never from memory.  Cells
    of 4 bytes in blocks of even ``R`` and ``C`` are stored two to an aligned 8-byte word
    where they sit side by side (:func:`_pair_stores`): half the store instructions, each
    lane's stores scattered over rows.  Unless ``store_warps`` is 0, the block's other
    ``store_warps`` warps (by default :func:`strip_store_warps`) store the cells instead:
    the compute warp writes them into a ring in shared memory, and every batch of ``B``
    steps (:func:`strip_batch`), after a block barrier, the store warps store the batch
    before, each store instruction a few rows' runs of ``C B`` cells.

    The table itself is never read back during the fill.  A strip hands its last row to
    the strip below through a ring of ``STRIP_SLOTS`` rows of self-validating words
    (:func:`_boundary_words`, as in :func:`strip_score_fill`): the strip below fetches
    them a batch of blocks ahead and waits only on a word not yet written, so no
    memory fence, flag or progress counter sits between strips.  Deadlock-free: a strip
    waits only on the strip above, whose ticket came first.

    With ``narrow``, an integer cell is computed in int32 when that is proven exact
    (:func:`strip_narrowing`): the cells' registers, shuffles and boundary words are
    then 4 bytes whatever the table's type.

    With store warps, a cell that runs anywhere (:func:`runtime.source.runs_anywhere`:
    straight-line code whose only memory is its reads of ``M`` and the loads the kernel
    makes for it, clamped into their arrays) is computed in whole blocks even past the
    table's last row or column, and the store warps leave out the cells outside; other
    cells keep a guarded copy of the block for the partial blocks, a branch that splits
    the warp at every strip's end (:func:`_strip_source`).  Such a cell's guards
    (``if test: return value``) are applied last, as selects, where
    :func:`runtime.speculate.speculate` can: no branch on a block's first row and column
    (on the H200, session 19, side by side: LCS 32768² 7.69 ms against 9.64, edit
    distance 8.35 against 8.78, DTW 8.44 against 8.70; Smith-Waterman 8.26 against
    8.09, 2% slower).

    Two options change the code, not the table.  ``vectors`` (on by default) moves the
    store warps' cells 4 at a time as 16-byte vectors where :func:`_ring_vectors` allows
    (4-byte cells, a multiple of 4 columns).  ``diagonals`` computes a lane's block
    anti-diagonal by anti-diagonal instead of row by row: the same cells, which ptxas
    schedules differently, and neither order wins everywhere.  With ``diagonals`` left
    ``None`` (and store warps serving the strip, on a GPU) the fill takes the order
    :func:`strip_order` times faster on this GPU, chosen once and cached on disk.  On the
    H200 (docs/benchmarks.md, session 30, 32768², medians of 7), rows against
    anti-diagonals: LCS 5.32 ms against 5.33, Smith-Waterman 5.76 against 5.61, DTW 6.12
    against 6.12, edit distance (no vectors: an int64 table) 6.40 against 6.57.  Before the
    argument loads went through shared memory (:func:`_strip_source`), one order was up
    to 40% slower (sessions 28 and 29: LCS 6.17 ms by rows against 8.51, Smith-Waterman
    8.39 against 6.22): ptxas made every step wait on the loads of the step before.

    ``ValueError`` when the reads are not those three, or ``store_warps`` cannot serve
    the block (:func:`_store_warps_misfit`); ``SourceUnavailable`` when the reads
    are not at constant offsets, or the cells are not numbers of at most 8 bytes.
    """
    nw = strip_narrowing(rec, narrow)
    R, C = strip_block(rec.dtype, nw is not None)
    R, C = rows_per_lane or R, cols_per_step or C
    rt = _register_type(rec, nw)
    K = strip_store_warps(R, C, rt) if store_warps is None else store_warps
    if store_warps and (why := _store_warps_misfit(R, C, K, rt)):  # one asked for
        raise ValueError(why)
    chosen = diagonals is None
    if chosen:
        diagonals = strip_order(rec, pattern_index, R, C, K, nw, vectors)
    return _strips(rec, pattern_index, R, C, K, nw, vectors, bool(diagonals), copy_back,
                   " chosen by timing" if chosen and _orders_timed(K) else "")


def _strips(rec: Recurrence, pattern_index: int, R: int, C: int, K: int,
            nw: Narrowing | None, vectors: bool, diagonals: bool, copy_back: bool,
            chosen: str = "") -> DeviceFill:
    """:func:`strip_fill` with every choice made (``chosen``: what the label says of the
    order's choice)."""
    rt = _register_type(rec, nw)
    kern, moves, sched, head = _strip_kernel(rec, pattern_index, R, C, False, K,
                                             strip_batch(R, C, rt), nw, vectors, diagonals)

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        table: tuple[Any, ...]
        if moves == 2:
            table = (dM, _words_view(dM))
        elif K:
            table = (dM, dM.reshape(dM.size))
        else:
            table = (dM,)
        return [(_strip_grid(cuda, head[0]), 32 * (1 + K), (*table, *dsched, *head, *dargs))]

    return _run(rec, kern, "C", copy_back, launches, sched,
                label=f"register strips of {32 * R} rows ({R}x{C} cells a lane"
                      + (f", {K} store warps" if K else "")
                      + (", 16-byte stores" if moves == 4 else "")
                      + (", cells by anti-diagonals" if diagonals else ", cells by rows" if chosen
                         else "") + chosen + _narrow_note(nw) + ")")


#: Strips a probe of :func:`strip_order` fills, and the times it fills each.
ORDER_PROBE_STRIPS, ORDER_PROBE_RUNS = 2, 3


def strip_order(rec: Recurrence, pattern_index: int, R: int, C: int, K: int,
                nw: Narrowing | None, vectors: bool) -> bool:
    """Whether :func:`strip_fill` computes a lane's block by anti-diagonals (``True``) or
    by rows: the order whose kernel fills a probe faster on this GPU, the first
    ``ORDER_PROBE_STRIPS`` strips of ``rec``'s table (all its columns, so the same two
    compiled kernels as the fill), each order ``ORDER_PROBE_RUNS`` times, the first run
    of each left out.  Chosen once per cell function and kernel in a process, and kept
    on disk (:func:`runtime.cache.cache_root`, ``strip-orders.json``) under a digest of
    the device, the cell function's code and the kernel's parameters, so a later process
    compiles only the chosen kernel.  A stale entry (say the cell's globals changed) can
    cost speed, never a wrong table.  Rows without store warps (``K`` 0) or under the
    simulator, where nothing is timed."""
    if not _orders_timed(K):
        return False
    n, m = rec.shape
    _, device = status()
    key = _order_digest(rec, device, (PATTERNS[pattern_index].code, R, C, K, vectors,
                                      sorted(map(repr, nw.positions)) if nw else None))

    def choose() -> bool:
        chosen = _cached_orders().get(key)
        if chosen is None:
            probe = replace(rec, shape=(min(n, 32 * R * ORDER_PROBE_STRIPS), m))
            times = {order: min([_strips(probe, pattern_index, R, C, K, nw, vectors, order,
                                         False).compute_s for _ in range(ORDER_PROBE_RUNS)][1:])
                     for order in (False, True)}
            chosen = times[True] < times[False]
            _keep_order(key, chosen)
        return chosen

    return bool(CACHE.get(rec.func, ("cuda", "strip-order", key), choose))


def _orders_timed(K: int) -> bool:
    """Whether :func:`strip_order` times the two orders: with store warps, on a GPU."""
    return bool(K) and not _simulated()


#: Version of the strip kernels' source, in :func:`_order_digest`: raised when a change
#: to the source may change which cell order runs faster, so kept choices are made again
#: (2: loads by column through shared-memory windows, session 30).
STRIP_SOURCE_VERSION = 2


def _order_digest(rec: Recurrence, device: str, params: tuple[Any, ...]) -> str:
    """A digest of what a strip kernel's speed depends on: the device, numba's version,
    the kernels' source (``STRIP_SOURCE_VERSION``), the cell function's code, the cells'
    and arguments' types and ``params``."""
    import hashlib

    import numba

    def code(c: Any) -> Any:  # nested code objects by their contents, not their addresses
        return (c.co_code, c.co_names, tuple(code(k) if inspect.iscode(k) else repr(k)
                                             for k in c.co_consts))

    args = tuple((np.asarray(a).dtype.str, np.ndim(a)) for a in rec.args)
    text = repr((device, numba.__version__, STRIP_SOURCE_VERSION, code(rec.func.__code__),
                 np.dtype(rec.dtype).str, args, params))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _orders_path() -> Path:
    """The file of :func:`strip_order`'s choices."""
    return cache_root() / "strip-orders.json"


def _cached_orders() -> dict[str, bool]:
    """:func:`strip_order`'s choices kept on disk (none when the file is missing or
    damaged)."""
    try:
        raw = json.loads(_orders_path().read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in raw.items() if isinstance(v, bool)} if isinstance(raw, dict) else {}


def _keep_order(key: str, chosen: bool) -> None:
    """Add a choice to the file of :func:`_cached_orders` (kept in memory only where the
    file cannot be written)."""
    orders = {**_cached_orders(), key: chosen}
    try:
        path = _orders_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(orders, indent=1, sort_keys=True))
    except OSError:
        pass


def strip_narrowing(rec: Recurrence, narrow: bool = True) -> Narrowing | None:
    """The proof (:func:`runtime.narrow.narrowing`) that the strips may compute ``rec``'s
    cells in int32: the strips read a cell's three nearest neighbours, so a cell's
    depth is below the ``n + m - 1`` anti-diagonals; ``None`` when not ``narrow`` or
    there is no proof."""
    return narrowing(rec.func, rec.shape, rec.dtype, rec.args, sum(rec.shape) - 1) \
        if narrow else None


def _register_type(rec: Recurrence, nw: Narrowing | None) -> np.dtype:
    """The type the strips and the bands hold a cell in (registers, the strips' boundary
    words, the bands' window): int32 with a narrowing, else the table's."""
    return np.dtype(np.int32) if nw else np.dtype(rec.dtype)


def _narrow_note(nw: Narrowing | None) -> str:
    """What a fill's label says of its narrowing."""
    if nw is None:
        return ""
    return f", int32 arithmetic, proven exact for values {nw.values[0]}..{nw.values[1]}"


def _strip_grid(cuda: Any, nstrips: int) -> int:
    """Blocks a strip fill launches (a strip's compute warp and its store warps each): one a
    strip, at most 16 a multiprocessor (a block done with its strip takes the next ticket;
    blocks that do not fit on a multiprocessor at once start later and find the strips
    taken)."""
    return min(nstrips, _sms(cuda) * 16)


def _strip_kernel(rec: Recurrence, pattern_index: int, R: int, C: int, score: bool,
                  K: int = 0, B: int = STRIP_BATCH, nw: Narrowing | None = None,
                  vectors: bool = False, diagonals: bool = False
                  ) -> tuple[Any, int, tuple[np.ndarray, ...], tuple[int, int]]:
    """The strip kernel of :func:`strip_fill` (``score``: of :func:`strip_score_fill`;
    ``K`` store warps, batches of ``B`` steps, cells in int32 with ``nw``, the ring's cells
    moved as 16-byte ``vectors`` where :func:`_ring_vectors` allows, a block's cells by
    anti-``diagonals``), the cells a
    store of the table moves at a time (2: the compute warp's pairs, 4: the store warps'
    vectors, :func:`_ring_vectors`; else 1), its
    schedule arrays (the boundary ring of ``STRIP_SLOTS`` strips' last rows; the ticket) and its
    ``(strips, slots)``, the kernel's arguments after those arrays."""
    code = PATTERNS[pattern_index].code
    if code not in DIAGONAL_FLIPS:
        raise ValueError(f"the strip fill is for the diagonal patterns, not {code}")
    rows, cols = DIAGONAL_FLIPS[code]
    if not _frame_offsets(rec, code) <= _NEAREST:
        raise ValueError(f"the strip fill serves reads of the 3 nearest {code} neighbours only")
    sim = _simulated()
    R, C = int(R), int(C)
    rt = _register_type(rec, nw)
    W, enc, dec = _boundary_words(rt, sim)
    read = _REG_READ.format(du="(x0 - a)" if rows else "(a - x0)",
                            dv="(x1 - b)" if cols else "(b - x1)")
    arrays, loads = _argument_loads(rec)
    narrow = nw.positions if nw else frozenset()
    anywhere = bool(K or score) and runs_anywhere(rec.func, rec.ndim, arrays)
    cell = _rewritten_cell(rec, ("reg-cell", code), read, {}, hoist=arrays, narrow=narrow,
                           speculate=anywhere)
    n, m = rec.shape
    packed = (np.dtype(rec.dtype).itemsize == 4 and R % 2 == 0 and C % 2 == 0 and not score
              and not K)
    pairs = _pair_stores(R, C, rows, cols, n, m) if packed else None
    V = _ring_vectors(R, C, K, B, cols, m, rt, np.dtype(rec.dtype)) if vectors else 1
    kind = (f"strips-{code}-{R}-{C}-{B}-{sim}-{score}-{K}-{anywhere}-{'.'.join(arrays)}"
            + (f"-pairs{n % 2}{m % 2}" if packed else "") + (f"-i32-{hash(narrow)}" if nw else "")
            + (f"-v{V}" if V > 1 else "") + ("-diagonals" if diagonals else ""))
    kern = _kernel(rec, kind, lambda: _strip_source(rows, cols, R, C, W, len(rec.args), sim,
                                                   pairs, score, loads, K, B, anywhere, V,
                                                   diagonals),
                   "strips", cell, **(_vector_moves(sim) if V > 1 else {}),
                   DT=rt.type, ZERO=rt.type(0),
                   **{f"T{k}": np.asarray(rec.args[int(re.match(r"a(\d+)\[", t)[1])]).dtype.type
                      for k, t in enumerate(loads)},
                   int64=np.int64, uint32=np.uint32, U=np.uint64, FULL=np.uint32(0xFFFFFFFF),
                   ENC=enc, DEC=dec,
                   SHUF=_shuffled(rt), LO=np.int64(0xFFFFFFFF), **_coherent(_cuda()))
    nstrips = math.ceil(n / (32 * R))
    nslots = min(STRIP_SLOTS, max(1, nstrips - 1))
    ring = np.zeros(nslots * (m + C) * W, np.int64)
    return kern, 2 if packed else V, (ring, np.zeros(1, np.int64)), (nstrips, nslots)


def _ring_vectors(R: int, C: int, K: int, B: int, cols: bool, m: int, rt: np.dtype,
                  dtype: np.dtype) -> int:
    """Cells the store warps' ring moves at a time (:func:`_strip_source`): 4, one 16-byte
    vector into the ring, out of it and into the table, where ``K`` store warps serve the
    strip and every vector is one aligned 16-byte word of both: cells of 4 bytes in the
    registers and the table, blocks of a multiple of 4 columns, columns not flipped (a
    vector's cells in the table's order), a multiple of 4 columns (each row's vectors
    aligned), the lanes covering the runs (:func:`_store_runs_fit`) and the ring fitting in
    ``RING_BYTES``; else 1.

    Examples
    --------
    >>> i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    >>> [_ring_vectors(8, 4, 4, 4, flip, m, i4, t) for flip, m, t in
    ...  ((False, 32768, i4), (False, 32769, i4), (True, 32768, i4), (False, 32768, i8))]
    [4, 1, 1, 1]
    """
    fits = (not cols and m % 4 == 0 and rt.itemsize == dtype.itemsize == 4
            and _store_runs_fit(R, C, K, B, 4) and _ring_bytes(R, C, B, rt, 4) <= RING_BYTES)
    return 4 if fits else 1


def _vector_moves(sim: bool) -> dict[str, Any]:
    """``LD4`` and ``ST4`` of the strips' source: :func:`runtime.intrinsics.load4` and
    ``store4``, or under the simulator (plain Python) four element moves."""
    if not sim:
        from runtime import intrinsics

        return {"LD4": intrinsics.load4, "ST4": intrinsics.store4}

    def ld4(a: Any, i: Any) -> tuple[Any, ...]:
        return a[int(i)], a[int(i) + 1], a[int(i) + 2], a[int(i) + 3]

    def st4(a: Any, i: Any, *x: Any) -> None:
        for k, v in enumerate(x):
            a[int(i) + k] = v

    return {"LD4": ld4, "ST4": st4}


def _diagonal_launches(rec: Recurrence, code: str, tile: int, copy_back: bool) -> DeviceFill:
    """The tiled fill in global memory: one launch per diagonal of tiles, one block per
    tile, one thread per tile row walking the tile's anti-diagonals, a barrier between
    them; correct for the same reason as :func:`tiled_fill` (earlier tile diagonals are
    earlier launches)."""
    rows, cols = DIAGONAL_FLIPS[code]
    src = _TILED.format(T=int(tile), args=arg_tail(len(rec.args)),
                        i="n - 1 - u" if rows else "u", j="m - 1 - v" if cols else "v")
    kern = _kernel(rec, f"tiled-{code}-{tile}", src, "tiles")
    n, m = rec.shape
    nu, nv = math.ceil(n / tile), math.ceil(m / tile)

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        return [(min(nu - 1, td) - max(0, td - nv + 1) + 1, int(tile), (dM, td, *dargs))
                for td in range(nu + nv - 1)]

    return _run(rec, kern, "C", copy_back, launches,
                label=f"a launch per diagonal of {tile}x{tile} tiles")


@dataclass(frozen=True)
class ScoreFill:
    """A score-only fill: the value of the pattern's last cell, the cells it kept (and what
    they were, ``note``) and its times in seconds."""

    value: Any
    cell: tuple[int, int]
    kept: int
    note: str
    h2d_s: float
    compute_s: float
    compile_s: float


def score_fill(rec: Recurrence, pattern_index: int, threads: int = THREADS) -> ScoreFill:
    """The value of the last cell a diagonal pattern fills (``(n-1, m-1)`` for NOSE),
    keeping only the anti-diagonals still to be read: O(n) memory instead of O(n m).

    The reads must be at constant offsets (:func:`runtime.source.constant_offsets`), so
    the window of live diagonals is known before the fill: ``1 + `` the farthest read, in
    diagonals.  One cooperative launch walks every diagonal, a grid-wide barrier between
    diagonals.  ``SourceUnavailable`` when the reads are not at constant offsets;
    ``ValueError`` for a pattern that is not diagonal or a read outside its regions.
    """
    code = PATTERNS[pattern_index].code
    if code not in DIAGONAL_FLIPS:
        raise ValueError(f"the score-only fill is for the diagonal patterns, not {code}")
    rows, cols = DIAGONAL_FLIPS[code]
    frame = _frame_offsets(rec, code)
    if any(du > 0 or dv > 0 or (du, dv) == (0, 0) for du, dv in frame):
        raise ValueError(f"a read at a constant offset falls outside {code}'s regions")
    window = 1 + max((-(du + dv) for du, dv in frame), default=0)
    n, m = rec.shape
    flip = {"Iu": _flip("u", "n", rows), "Jv": _flip("v", "m", cols)}
    read = _WINDOW_READ.format(W=window, ua=_flip("a", "n", rows), va=_flip("b", "m", cols))
    cell = _rewritten_cell(rec, ("window-cell", code, window), read, {})
    kern = _kernel(rec, f"score-{code}-{window}", _SCORE.format(
        W=window, args=arg_tail(len(rec.args)), **flip), "score", cell)

    def launches(cuda: Any, D: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        args = (D, n, m, *dargs)
        return [(_cooperative_blocks(kern, args, threads, n), threads, args)]

    res = _run(rec, kern, "C", True, launches, label="one cooperative launch",
               shape=(window, n))
    assert res.table is not None
    value = res.table[(n + m - 2) % window, n - 1]
    return ScoreFill(value, last_cell(DIAGONAL_FLIPS[code], rec.shape), window * n,
                     f"the last {window} anti-diagonals kept, one cooperative launch",
                     res.h2d_s, res.compute_s, res.compile_s)


#: Rows from which a score's strips take ``SCORE_BLOCK`` blocks (4-byte floats and cells
#: computed in int32 take them at any height): :func:`score_block`.
SCORE_TALL, SCORE_BLOCK = 100_000, (8, 4)


def score_block(dtype: np.dtype, rows: int, narrowed: bool = False) -> tuple[int, int]:
    """Rows and columns of a lane's block in a score's strips by default: ``SCORE_BLOCK``
    (8x4) for 4-byte floats, cells computed in int32 (``narrowed``) and tables of
    ``SCORE_TALL`` rows or more, else ``4x1``.

    On the H200 (session 15, medians of 3), computed in int32, 8x4 against 4x1: at 32768
    LCS 10.86 against 12.65 ms, Smith-Waterman 9.52 against 12.43, edit distance 9.25
    against 12.76; at 10^5 39.01 against 44.08, 33.18 against 43.85, 32.37 against 49.02.

    On the H200 (docs/benchmarks.md, session 10; every shape gave the same score), from
    32768 to 10^6 rows: DTW (float32) was 1.25-1.5x faster at 8x4 than at 4x1 at every
    size; LCS 4-28% faster at 8x4 (1.9x at 10^6); Smith-Waterman 23% and edit distance
    12% slower at 8x4 at 65536, Smith-Waterman within 2% at 10^5 and faster at 10^6 (8x4
    1.12x, 8x2 1.44x), edit distance 5% faster at 10^5 and 1.3x at 10^6.

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


def strip_score_fill(rec: Recurrence, pattern_index: int, rows_per_lane: int | None = None,
                     cols_per_step: int | None = None, narrow: bool = True) -> ScoreFill:
    """The value of the last cell a diagonal pattern fills, by the register strips of
    :func:`strip_fill` storing no cell: O(m) memory, and no table traffic.  Blocks of
    ``rows_per_lane x cols_per_step`` cells a lane, by default :func:`score_block`.

    Strip ``k`` hands its last row down in slot ``k % STRIP_SLOTS`` of a ring; its words
    carry ``k + 1`` (:func:`_boundary_words`), so the strip below never takes a word an
    earlier strip left in the slot, and a slot is rewritten only after the strip below has
    read it (strip ``k + 2`` reaches a column only after strip ``k + 1`` has computed it,
    from the words it read).  The lane holding the last cell writes it out.  Same reads as
    :func:`strip_fill` (the three nearest neighbours, ``ValueError`` otherwise), the
    same ``narrow``, and whole blocks past the table's edge for a cell that runs anywhere
    (on the H200, session 18, 32769²: LCS 9.24 ms against 10.85 guarded, Smith-Waterman
    6.53 against 9.39).
    """
    code = PATTERNS[pattern_index].code
    nw = strip_narrowing(rec, narrow)
    R, C = score_block(rec.dtype, rec.shape[0], nw is not None)
    R, C = rows_per_lane or R, cols_per_step or C
    kern, _, sched, head = _strip_kernel(rec, pattern_index, R, C, True, nw=nw)
    nslots, m = head[1], rec.shape[1]

    def launches(cuda: Any, dO: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        shape = _zero_strided(dO, rec.shape)  # the cell function's M: its shape, no cells
        return [(_strip_grid(cuda, head[0]), 32, (shape, *dsched, *head, dO, *dargs))]

    block = f"register strips of {32 * R} rows ({R}x{C} cells a lane{_narrow_note(nw)})"
    res = _run(rec, kern, "C", True, launches, sched, shape=(1, 1),
               label=f"{block}, no cell stored")
    assert res.table is not None
    kept = "1 strip's last row" if nslots == 1 else f"{nslots} strips' last rows"
    return ScoreFill(res.table[0, 0], last_cell(DIAGONAL_FLIPS[code], rec.shape), nslots * (m + C),
                     f"{block} in one launch, no cell stored: {kept} kept", res.h2d_s,
                     res.compute_s, res.compile_s)


def _zero_strided(dA: Any, shape: tuple[int, int]) -> Any:
    """A view of device array ``dA``'s first element as an array of ``shape`` (every
    element the same memory), for code that needs an array's shape, not its cells."""
    if _simulated():
        return type(dA)(np.lib.stride_tricks.as_strided(dA._ary, shape, (0, 0)))
    return type(dA)(shape=shape, strides=(0, 0), dtype=dA.dtype, stream=dA.stream,
                    gpu_data=dA.gpu_data)


_RING_SCORE = """
def ring(B, ck, steps{args}):
    n = ck[0]
    m = ck[1]
    grid = cuda.cg.this_grid()
    for t in range(steps):
        {fix}
        q = {lo} + cuda.grid(1)
        hi = {hi}
        while q < hi:
            i = {i}
            j = {j}
            B[{slot}] = cell(B, i, j{args}, ck)
            q += cuda.gridsize(1)
        grid.sync()
"""

@dataclass(frozen=True)
class RingFill:
    """A score-only fill of a row or column pattern: the ring of the last ``keep`` rows
    (columns), the first out-of-bounds read (``ck``, as :data:`runtime.score._CHECKED_READ`
    records it) and its times in seconds."""

    ring: np.ndarray
    ck: np.ndarray
    h2d_s: float
    compute_s: float
    compile_s: float


def ring_score_fill(rec: Recurrence, pattern_index: int, keep: int,
                    threads: int = THREADS) -> RingFill:
    """A row (column) pattern filled keeping only its last ``keep`` rows (columns), slice
    ``t`` in slot ``t % keep``: one cooperative launch, a grid-wide barrier between
    steps, so a slot is overwritten only after every cell that reads it is done.

    The reads must reach at most ``keep - 1`` rows (columns) back, as
    :func:`runtime.score.score_plan` finds them; each is checked against the table's
    shape, the first bad one recorded (``RingFill.ck``), not followed.  ``ValueError``
    for a pattern that is not a row or column pattern.
    """
    p = PATTERNS[pattern_index]
    if p.code in DIAGONAL_FLIPS:
        raise ValueError(f"the ring score is for the row and column patterns, not {p.code}")
    axis = 0 if p.storage == "rows" else 1
    n, m = rec.shape
    K = int(min(keep, rec.shape[axis]))
    from runtime.score import _CHECKED_READ, _slot  # the CPU ring's read and slots

    slot = lambda a, b: _slot(axis, f"int64({a})", f"int64({b})", K)  # noqa: E731
    cuda = _cuda()
    read = _CHECKED_READ.format(record="cuda.atomic.cas(ck, 2, 0, 1) == 0",  # the first one
                                found=f"return LOAD(B, ({slot('a', 'b')}))")
    cell = _rewritten_cell(rec, ("ring-cell", axis, K), read,
                           {**_coherent(cuda), "int64": np.int64})
    src = STEP_SOURCE[p.code]
    kern = _kernel(rec, f"ring-{p.code}-{K}", _RING_SCORE.format(
        args=arg_tail(len(rec.args)), fix=src.fix, lo=src.lo, hi=src.hi, i=src.i, j=src.j,
        slot=slot("i", "j")), "ring", cell, int64=np.int64)
    ck = np.zeros(7, np.int64)
    ck[:2] = rec.shape
    got: dict[str, Any] = {}

    def launches(cuda: Any, dB: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        got["ck"] = dsched[0]
        args = (dB, dsched[0], p.steps((n, m)), *dargs)
        return [(_cooperative_blocks(kern, args, threads, rec.shape[1 - axis]), threads, args)]

    res = _run(rec, kern, "C", True, launches, (ck,), label="one cooperative launch",
               shape=(K, m) if axis == 0 else (n, K))
    assert res.table is not None
    return RingFill(res.table, got["ck"].copy_to_host(), res.h2d_s, res.compute_s,
                    res.compile_s)


def launch_latency(repeat: int = 200) -> float:
    """Seconds from Python to the end of an empty kernel launch, the mean of ``repeat``
    back-to-back launches (what a launch per step costs beyond its work)."""
    cuda = require()

    def build() -> Any:
        return cuda.jit(compile_source("def empty(a):\n    pass\n", "empty", {}))

    kern = CACHE.get(launch_latency, ("cuda", "empty"), build)
    a = cuda.device_array(1, np.int32)
    kern[1, 32](a)
    cuda.synchronize()
    t = time.perf_counter()
    for _ in range(repeat):
        kern[1, 32](a)
    cuda.synchronize()
    return (time.perf_counter() - t) / repeat


def barrier_latency(blocks: int, repeat: int = 200, threads: int = THREADS) -> float:
    """Seconds per grid-wide barrier of a cooperative launch of ``blocks`` x ``threads``
    (capped at what can be resident), the mean over ``repeat`` barriers."""
    cuda = require()

    def build() -> Any:
        return cuda.jit(compile_source(
            "def barriers(a, k):\n    g = cuda.cg.this_grid()\n    for t in range(k):\n"
            "        g.sync()\n", "barriers", {"cuda": cuda}))

    kern = CACHE.get(barrier_latency, ("cuda", "barriers"), build)
    a = cuda.device_array(1, np.int32)
    blocks = _cooperative_blocks(kern, (a, repeat), threads, blocks * threads)
    kern[blocks, threads](a, 1)
    cuda.synchronize()
    t = time.perf_counter()
    kern[blocks, threads](a, repeat)
    cuda.synchronize()
    return (time.perf_counter() - t) / repeat


def write_bandwidth(nbytes: int, repeat: int = 5) -> float:
    """Bytes per second the device writes: the median of ``repeat`` launches of a
    grid-stride kernel storing ``nbytes`` of 8-byte words (the ceiling for a fill that
    writes each cell once and reads what it needs from L2)."""
    cuda = require()

    def build() -> Any:
        return cuda.jit(compile_source(
            "def writes(a, v):\n    q = cuda.grid(1)\n    while q < a.size:\n"
            "        a[q] = v\n        q += cuda.gridsize(1)\n", "writes", {"cuda": cuda}))

    kern = CACHE.get(write_bandwidth, ("cuda", "writes"), build)
    a = cuda.device_array(max(1, nbytes // 8), np.int64)
    grid = _max_blocks(cuda)
    kern[grid, THREADS](a, 0)
    cuda.synchronize()
    times = []
    for k in range(repeat):
        t = time.perf_counter()
        kern[grid, THREADS](a, k)
        cuda.synchronize()
        times.append(time.perf_counter() - t)
    return a.nbytes / sorted(times)[len(times) // 2]


#: Table dtypes numba.cuda's atomic add supports (the ready-check fill's reads use it).
ATOMIC_DTYPES = frozenset(np.dtype(t) for t in ("int32", "int64", "uint32", "uint64",
                                                "float32", "float64"))


def ready_fill(rec: Recurrence, order: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
               copy_back: bool = True) -> DeviceFill:
    """Algorithm 3 on the device: one launch; every thread takes the next cell of a
    topological ``order`` (flat cells, dependencies first) from an atomic ticket, waits
    until the cell's dependencies (CSR ``indptr``/``indices`` over flat cells) are done,
    computes it and marks it done.

    Deadlock-free: tickets follow a topological order, so the earliest unfinished ticket
    belongs to a running thread whose dependencies all have earlier tickets and are done;
    it always makes progress.  Reads of ``M`` are atomic, so no stale cached value is seen.
    """
    if rec.dtype not in ATOMIC_DTYPES:
        raise RecurrenceError(
            f"the ready-check fill reads cells atomically, which numba.cuda supports for "
            f"{', '.join(sorted(str(d) for d in ATOMIC_DTYPES))} tables, not {rec.dtype}; "
            "use --schedule pattern or stages"
        )
    unravel, idx = _unravel(rec.ndim, indent="        ")
    src = _READY.format(args=arg_tail(len(rec.args)), unravel=unravel, idx=idx)
    kern = _kernel(rec, "ready", src, "ready", _ready_cell(rec))
    sched = (order.astype(np.int64, copy=False), indptr.astype(np.int64, copy=False),
             indices.astype(np.int64, copy=False), np.zeros(rec.cells, np.int32),
             np.zeros(1, np.int64))

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        blocks = min(_max_blocks(cuda), math.ceil(rec.cells / THREADS))
        return [(blocks, THREADS, (dM, *dsched, *dargs))]

    return _run(rec, kern, "C", copy_back, launches, sched)
