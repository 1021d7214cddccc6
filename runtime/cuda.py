"""CUDA backend (numba.cuda): the cell function as a device function, one launch per step.

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

Assumptions: numba-cuda is installed (``pip install 'depgraph[cuda]'``) and the cell
function compiles as a numba.cuda device function.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.api import Recurrence
from depgraph.errors import BackendUnavailableError, CompileError, RecurrenceError
from patterns import DIAGONAL_FLIPS, PATTERNS, STEP_SOURCE, step_line
from runtime.cache import CACHE, arg_tail, compile_source
from runtime.source import function_namespace, rewrite_reads
from runtime.cpu import _unravel

__all__ = ["status", "require", "DeviceFill", "pattern_fill", "stage_fill", "ready_fill",
           "tiled_fill", "THREADS"]

THREADS = 256


def _cuda() -> Any:
    from numba import config, cuda

    # short diagonals are small grids by design; numba would warn on every such launch
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    return cuda


def status() -> tuple[bool, str]:
    """Whether a CUDA device is usable here, and a sentence saying why (not)."""
    try:
        cuda = _cuda()
    except ImportError as exc:
        return False, (f"numba-cuda is not installed ({exc}); install it with "
                       "pip install 'depgraph[cuda]'")
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
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


_STEP = """
def step(M, t{args}):
    n = M.shape[0]
    m = M.shape[1]
    {fix}
    q = {lo} + cuda.grid(1)
    hi = {hi}
    stride = cuda.gridsize(1)
    while q < hi:
        i = {i}
        j = {j}
        M[i, j] = cell(M, i, j{args})
        q += stride
"""

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


def _atomic_read(ndim: int) -> Any:
    """A device read of ``M`` that bypasses the L1 cache (an atomic add of 0), so a value
    another block just wrote is seen, never a stale cached line."""
    cuda = _cuda()
    names = ", ".join(f"a{k}" for k in range(ndim))
    src = f"def read(M, ck, {names}):\n    return cuda.atomic.add(M, ({names},), 0)\n"
    return cuda.jit(device=True)(compile_source(src, "read", {"cuda": cuda}))


def _ready_cell(rec: Recurrence) -> Any:
    def build() -> Any:
        cuda = _cuda()
        ns = function_namespace(rec.func)
        ns["_dg_read"] = _atomic_read(rec.ndim)
        src = rewrite_reads(rec.func, rec.ndim, "_dg_read", "_dg_cell", cell_args=False)
        return cuda.jit(device=True)(compile_source(src, "_dg_cell", ns))

    return CACHE.get(rec.func, ("cuda", "ready-cell"), build)


def _kernel(rec: Recurrence, kind: str, source: str, name: str, cell: Any = None) -> Any:
    def build() -> Any:
        cuda = _cuda()
        ns = {"cuda": cuda, "cell": _device_cell(rec) if cell is None else cell}
        return cuda.jit(compile_source(source, name, ns))

    return CACHE.get(rec.func, ("cuda", kind, len(rec.args), rec.ndim), build)


@dataclass
class DeviceFill:
    """Times of one device fill, in seconds; the table when it was copied back."""

    table: np.ndarray | None
    h2d_s: float
    compute_s: float
    d2h_s: float
    launches: int
    compile_s: float


def _max_blocks(cuda: Any) -> int:
    dev = cuda.get_current_device()
    sms = getattr(dev, "MULTIPROCESSOR_COUNT", 1) or 1
    per_sm = getattr(dev, "MAX_THREADS_PER_MULTI_PROCESSOR", 2048) or 2048
    return int(sms * max(1, per_sm // THREADS))


def _launch(kernel: Any, blocks: int, threads: int, args: tuple[Any, ...]) -> None:
    try:
        kernel[blocks, threads](*args)
    except Exception as exc:  # a launch or device fault: name it, no traceback
        raise RecurrenceError(f"the CUDA fill failed: {type(exc).__name__}: {exc}") from None


def _compile(kernel: Any, args: tuple[Any, ...]) -> float:
    """Compile ``kernel`` for these argument types before timing; returns seconds."""
    t = time.perf_counter()
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
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
    return time.perf_counter() - t


#: ``(blocks, threads per block, kernel args)`` of each launch.
Launches = list[tuple[int, int, tuple[Any, ...]]]


def _run(rec: Recurrence, kernel: Any, layout: str, copy_back: bool,
         launches: Callable[[Any, Any, tuple[Any, ...], tuple[Any, ...]], Launches],
         schedule: tuple[np.ndarray, ...] = ()) -> DeviceFill:
    """Copy args (and schedule arrays) in, compile, run every launch,
    copy the table back if asked; each phase timed apart."""
    cuda = require()
    t0 = time.perf_counter()
    dargs = tuple(cuda.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
                  for a in rec.args)
    dsched = tuple(cuda.to_device(np.ascontiguousarray(a)) for a in schedule)
    dM = cuda.device_array(rec.shape, dtype=rec.dtype, order=layout)
    cuda.synchronize()
    t1 = time.perf_counter()
    todo = launches(cuda, dM, dargs, dsched)
    compile_s = _compile(kernel, todo[0][2]) if todo else 0.0
    t2 = time.perf_counter()
    for blocks, threads, args in todo:
        _launch(kernel, blocks, threads, args)
    cuda.synchronize()
    t3 = time.perf_counter()
    table = dM.copy_to_host() if copy_back else None
    t4 = time.perf_counter()
    return DeviceFill(table, t1 - t0, t3 - t2, t4 - t3, len(todo), compile_s)


def pattern_fill(rec: Recurrence, pattern_index: int, steps: int, layout: str = "C",
                 copy_back: bool = True) -> DeviceFill:
    """One launch per step of a 2-D pattern; the table stays on the device."""
    code = PATTERNS[pattern_index].code
    src = STEP_SOURCE[code]
    kern = _kernel(rec, f"step-{code}", _STEP.format(
        args=arg_tail(len(rec.args)), fix=src.fix, lo=src.lo, hi=src.hi, i=src.i, j=src.j), "step")
    n, m = rec.shape

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        cap = _max_blocks(cuda)
        return [(min(cap, math.ceil(step_line(pattern_index, t, n, m)[4] / THREADS)), THREADS,
                 (dM, t, *dargs)) for t in range(steps)]

    return _run(rec, kern, layout, copy_back, launches)


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


def tiled_fill(rec: Recurrence, pattern_index: int, tile: int = 64,
               copy_back: bool = True) -> DeviceFill:
    """A diagonal pattern filled by tiles: one launch per diagonal of ``tile x tile`` tiles,
    one block per tile, one thread per tile row walking the tile's own anti-diagonals with
    a barrier between them (cells stay in global memory).

    Correct for any recurrence the pattern fits, reads of any length included: in the
    pattern's NOSE frame (:data:`patterns.DIAGONAL_FLIPS`) every read goes up and/or left,
    so it lands in the same tile on an earlier inner diagonal (written before the last
    barrier) or in a tile of an earlier tile diagonal (an earlier launch).  It needs
    ``n/tile + m/tile - 1`` launches instead of ``n + m - 1``.
    """
    code = PATTERNS[pattern_index].code
    if code not in DIAGONAL_FLIPS:
        raise ValueError(f"the tiled fill is for the diagonal patterns, not {code}")
    rows, cols = DIAGONAL_FLIPS[code]
    src = _TILED.format(T=int(tile), args=arg_tail(len(rec.args)),
                        i="n - 1 - u" if rows else "u", j="m - 1 - v" if cols else "v")
    kern = _kernel(rec, f"tiled-{code}-{tile}", src, "tiles")
    n, m = rec.shape
    nu, nv = math.ceil(n / tile), math.ceil(m / tile)

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        return [(min(nu - 1, td) - max(0, td - nv + 1) + 1, int(tile), (dM, td, *dargs))
                for td in range(nu + nv - 1)]

    return _run(rec, kern, "C", copy_back, launches)


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
