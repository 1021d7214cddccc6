"""The CUDA device: whether one is usable, its size, memory checks, compiling generated
kernels, and running a fill's launches with each phase timed.

``numba.cuda`` is imported here, on first use (:func:`cuda_module`), never at import:
nothing outside ``runtime.backends.cuda`` needs a GPU or numba-cuda.  Under
``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's simulator (logic only: tiny
sizes, no speed, no types).

- The table is allocated on the device (no copy in: every cell is written by the fill);
  the args are copied in once; the table is copied back only when asked.
- Before anything is allocated, what a fill puts on the device (table, args, schedule) is
  checked against the device's free memory (``TooLargeError``, not a CUDA error):
  :func:`check_fits`, which a sheared fill also asks about its sheared table and the
  table gathered from it (:func:`runtime.backends.cuda.hyperplanes.check_sheared_fits`).
- Generated kernels (:class:`runtime.backends.emit.Emitter`) are compiled by
  :func:`compile_kernel` and cached under the digest of their source and names.

Assumptions: numba-cuda is installed (``pip install 'depgraph[cuda]'``) and the cell
function compiles as a numba.cuda device function.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.errors import (
    BackendUnavailableError,
    CompileError,
    RecurrenceError,
    TooLargeError,
    setting,
)
from depgraph.memory import format_bytes
from depgraph.model import Recurrence
from runtime.backends.cache import CACHE
from runtime.backends.emit import compile_kept, compile_source, digest, remember

__all__ = ["cuda_module", "simulated", "open_early", "status", "require", "release",
           "DeviceFill", "Launches", "launcher",
           "multiprocessors", "sms", "max_blocks", "free_memory", "check_fits", "run",
           "host_copy", "compile_kernel",
           "compile_device", "device_cell", "cooperative_blocks", "coherent_names", "nap",
           "THREADS"]

#: Threads a block of the launch-per-step and stage fills.
THREADS = 256

#: The ordinals of the GPUs whose primary context this process has opened (by
#: :func:`status`), which :func:`release` hands back.
_opened: set[int] = set()

#: The thread :func:`open_early` started, once started.
_opening: threading.Thread | None = None


def open_early(backend: str = "cuda") -> None:
    """Start the CUDA driver and the first GPU's primary context on a thread of its own,
    once a process, for a fill on ``backend`` (``cuda`` or ``auto``; nothing for a host
    backend), so that the main thread's planning and numba.cuda's import overlap them;
    numba.cuda then finds the context made and only attaches it.  The thread calls the
    driver library through ``ctypes``, which releases the GIL during each call, and
    imports nothing, so it races no import of the main thread.  Nothing happens under the
    simulator or without a driver library, and a driver error is left for :func:`status`
    to report; the thread is a daemon, so a command that stops early never waits on it.
    """
    global _opening
    if _opening is not None or backend not in ("auto", "cuda") or simulated():
        return
    _opening = threading.Thread(target=_retain_primary_context, name="depgraph-open-gpu",
                                daemon=True)
    _opening.start()


def _retain_primary_context() -> None:
    """The driver's start and device 0's primary context retained (as numba's first
    context does), errors ignored."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:  # no NVIDIA driver here (or not Linux)
        return
    device, context = ctypes.c_int(), ctypes.c_void_p()
    if driver.cuInit(0) == 0 and driver.cuDeviceGet(ctypes.byref(device), 0) == 0:
        driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)


def cuda_module() -> Any:
    """``numba.cuda``, imported on first use (``ImportError`` without numba-cuda)."""
    from numba import config, cuda

    # short diagonals are small grids by design; numba would warn on every such launch
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    return cuda


def simulated() -> bool:
    """Whether kernels run on numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def status() -> tuple[bool, str]:
    """Whether a CUDA device is usable here, and a sentence saying why (not)."""
    try:
        cuda = cuda_module()
    except ImportError as exc:
        return False, (f"numba-cuda is not installed ({exc}); install it with "
                       "pip install 'depgraph[cuda]'")
    if simulated():
        return True, "numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): logic only, not speed"
    try:
        if not cuda.is_available():
            return False, "no CUDA GPU or driver is usable here (numba.cuda.is_available() is False)"
        # the device a context would be made on, without making it (``require()`` then
        # ``current_context()`` makes it where the fill needs it)
        dev = cuda.gpus.current or cuda.gpus[0]
        _opened.add(dev.id)
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return True, f"CUDA GPU {name}"
    except Exception as exc:  # driver errors come in many types
        return False, f"the CUDA driver failed: {exc}"


def require() -> Any:
    """``numba.cuda``, or ``BackendUnavailableError`` with the reason."""
    ok, why = status()
    if not ok:
        raise BackendUnavailableError(f"{setting('backend', 'cuda')}: {why}")
    return cuda_module()


def release() -> float | None:
    """Hand the GPUs this process opened back to the driver, for a process about to exit:
    their primary contexts reset (the device's memory freed) and the driver's device
    files closed; the seconds it took, ``None`` where this process opened no GPU (or the
    simulator's).  The driver does the same as the process exits, after its last output
    and outside anything it can time (0.10-0.12 s for an LCS 32768² fill on an H100: the
    context 0.06 s, the unified-memory file 0.045 s), so a command that reports where its
    time went releases the GPU itself, first.  No CUDA call works in this process after.
    A driver error leaves the rest to the exit."""
    if not _opened:
        return None
    from numba.cuda.cudadrv.driver import driver

    t0 = time.perf_counter()
    try:
        driver.cuCtxSynchronize()
        for ordinal in sorted(_opened):
            driver.cuDevicePrimaryCtxReset(ordinal)
    except Exception:  # driver errors come in many types; the exit tears down the rest
        return time.perf_counter() - t0
    finally:
        _opened.clear()
    try:
        open_files = os.listdir("/proc/self/fd")
    except OSError:  # not Linux: the exit closes them
        open_files = []
    for fd in open_files:
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("/dev/nvidia"):
                os.close(int(fd))
        except OSError:  # the listing's own descriptor, gone by now
            pass
    return time.perf_counter() - t0


def device_cell(rec: Recurrence) -> Any:
    """The cell function itself as a device function."""
    return CACHE.get(rec.func, ("cuda", "cell"),
                     lambda: cuda_module().jit(device=True)(rec.func))


def compile_device(rec: Recurrence, source: str, name: str, names: dict[str, Any]) -> Any:
    """The device function ``name`` of generated ``source``, seeing ``names``; cached per
    cell function under the digest of both."""
    key = digest(source, names)
    return CACHE.get(rec.func, ("cuda", key), lambda: remember(
        cuda_module().jit(device=True)(compile_source(source, name, dict(names))), key))


def compile_kernel(rec: Recurrence, source: str, name: str, cell: Any = None,
                   registers: int | None = None, **names: Any) -> Any:
    """The kernel ``name`` of generated ``source``, with ``cell`` (by default the cell
    function itself) and ``names`` in its namespace, at most ``registers`` registers a
    thread when given (the simulator has no registers); cached per cell function under
    the digest of what it is made of."""
    cuda = cuda_module()
    names = {"cuda": cuda, "cell": device_cell(rec) if cell is None else cell, **names}
    limit = registers if registers and not simulated() else None
    key = digest(source, {**names, "max_registers": limit})
    options = {"max_registers": limit} if limit else {}

    def build() -> Any:
        # the simulator compiles nothing, so keeps nothing
        return compile_kept(source, name, names, f"k{key}", lambda func, cache: cuda.jit(
            cache=cache, **options)(func), keep=not simulated(), refresh=False)

    return CACHE.get(rec.func, ("cuda", key), build)


@dataclass
class DeviceFill:
    """Times of one device fill, in seconds; the table when it was copied back, else the
    device array holding it (``device``: ``__cuda_array_interface__``, so CuPy and
    PyTorch take it without a copy); ``checks``, what a fill that checks its own reads
    recorded (:func:`run`)."""

    table: np.ndarray | None
    h2d_s: float
    compute_s: float
    d2h_s: float
    launches: int
    compile_s: float
    kernel: str = ""
    device: Any = None
    checks: np.ndarray | None = None


def multiprocessors() -> int:
    """The current device's multiprocessor count (1 under the simulator)."""
    return 1 if simulated() else sms(require())


def sms(cuda: Any) -> int:
    """The multiprocessor count of ``cuda``'s current device."""
    return int(getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1) or 1)


def max_blocks(cuda: Any) -> int:
    """Blocks of ``THREADS`` the device holds at once."""
    per_sm = getattr(cuda.get_current_device(), "MAX_THREADS_PER_MULTI_PROCESSOR", 2048) or 2048
    return sms(cuda) * max(1, int(per_sm) // THREADS)


def _fault(exc: BaseException) -> RecurrenceError:
    """A launch or device fault, named without a traceback."""
    return RecurrenceError(f"the CUDA fill failed: {type(exc).__name__}: {exc}")


def _launch(kernel: Any, blocks: int, threads: int, args: tuple[Any, ...]) -> None:
    try:
        kernel[blocks, threads](*args)
    except Exception as exc:
        raise _fault(exc) from None


def _launch_all(kernel: Any, todo: Launches) -> None:
    """Every launch of ``todo``, in order (:func:`launcher`; one launch: numba's own)."""
    if len(todo) == 1:
        _launch(kernel, *todo[0])
    elif todo:
        launch = launcher(kernel, todo[0][2])
        for blocks, threads, args in todo:
            launch(blocks, threads, args)


def _direct_launch(kern: Any) -> Callable[..., None] | None:
    """A launcher ``(blocks, threads, args)`` of the compiled kernel ``kern`` (an
    overload: :func:`compile_for`) that marshals each device array once (keyed by its
    identity) and the scalars on every launch; ``None`` where numba-cuda does not offer
    the pieces, or under the simulator (no overload) (:func:`launcher`)."""
    if kern is None:
        return None
    try:
        from numba.cuda import dispatcher as nd
        from numba.cuda import types as nt

        if kern.debug or kern.extensions or kern.cooperative:
            return None
        handle, launch, config_of = (kern._codelibrary.get_cufunc().kernel, nd.launch,
                                     nd.LaunchConfig)
        stream = nd.driver._to_core_stream(0)  # the default stream, as numba launches on
        types = kern.argument_types
        coop = ({"is_cooperative": False} if nd.CUDA_CORE_GE_1_0
                else {"cooperative_launch": False})
    except Exception:  # an API this numba-cuda lacks: numba's own launches
        return None
    marshalled: dict[int, list[Any]] = {}
    kept: list[Any] = []  # the marshalled arrays, alive while their ids are keys

    def direct(blocks: int, threads: int, args: tuple[Any, ...]) -> None:
        words: list[Any] = []
        for ty, value in zip(types, args):
            if isinstance(ty, nt.Array):
                if id(value) not in marshalled:
                    kept.append(value)
                    marshalled[id(value)] = part = []
                    kern._prepare_args(ty, value, 0, [], part)
                words += marshalled[id(value)]
            else:
                kern._prepare_args(ty, value, 0, [], words)
        launch(stream, config_of(grid=(blocks, 1, 1), block=(threads, 1, 1), shmem_size=0,
                                 **coop), handle, *words)

    return direct


def launcher(kernel: Any, first: tuple[Any, ...]) -> Callable[[int, int, tuple[Any, ...]], None]:
    """A launch ``(blocks, threads, args)`` of ``kernel`` for launches with ``first``'s
    argument types, ``kernel`` compiled for them.  numba marshals every argument again on
    every launch and finds the kernel's overload from the arguments' types, about 20 µs
    a launch, most of a fill that launches once a step; launches that differ only in
    their scalars find their overload once, marshal each device array once and go to the
    driver with them.  Where that path is not open (the simulator, a kernel compiled for
    debugging or with argument extensions, an API this numba-cuda lacks, found by the
    first launch refusing its arguments), numba's own launch runs instead.  A fault is a
    ``RecurrenceError``."""
    direct = [_direct_launch(compile_for(kernel, first))]
    proven = [False]

    def launch(blocks: int, threads: int, args: tuple[Any, ...]) -> None:
        if direct[0] is None:
            _launch(kernel, blocks, threads, args)
            return
        try:
            direct[0](blocks, threads, args)
        except (TypeError, AttributeError, ValueError) as exc:
            if proven[0]:
                raise _fault(exc) from None
            direct[0] = None  # refused before launching: numba's way from now on
            _launch(kernel, blocks, threads, args)
            return
        except Exception as exc:
            raise _fault(exc) from None
        proven[0] = True

    return launch


def host_copy(dst: np.ndarray, src: Any) -> Callable[[], None]:
    """A copy of the device array ``src`` into the host array ``dst`` (both contiguous,
    of the same shape and dtype; ``dst`` pinned, so nothing is staged), returning once
    done.  numba's ``copy_to_host`` checks the context and both arrays on every call, a
    good part of a small copy's time; this goes to the driver with the pointers found
    once.  numba's own copy under the simulator, or where this numba-cuda lacks the
    pieces.

    Examples
    --------
    >>> cuda = require()
    >>> back = np.zeros(4, dtype=np.int32)
    >>> copy = host_copy(back, cuda.to_device(np.arange(4, dtype=np.int32)))
    >>> copy(); back.tolist()
    [0, 1, 2, 3]
    """
    if dst.shape != src.shape or dst.dtype != src.dtype or not dst.flags.c_contiguous:
        raise ValueError(f"a copy of a {src.shape} {src.dtype} device array into a "
                         f"{dst.shape} {dst.dtype} array that is not its like")

    def numbas() -> None:
        src.copy_to_host(dst)

    if simulated() or not src.is_c_contiguous():
        return numbas
    try:
        from numba.cuda.cudadrv import driver as nd

        copy = nd.driver.cuMemcpyDtoH
        args = (nd.host_pointer(dst), nd.device_pointer(src), dst.nbytes)
    except Exception:  # an API this numba-cuda lacks: numba's own copy
        return numbas

    def direct() -> None:
        try:
            copy(*args)
        except Exception as exc:
            raise _fault(exc) from None

    return direct


def compile_for(kernel: Any, args: tuple[Any, ...]) -> Any:
    """Compile ``kernel`` for these argument types (before timing a launch); the compiled
    overload (``None`` under the simulator, which compiles nothing)."""
    if simulated():
        return None
    from numba import typeof
    from numba.core.errors import NumbaError

    try:
        return kernel.compile(tuple(typeof(a) for a in args))
    except NumbaError as exc:
        lines = " ".join(x.strip() for x in str(exc).strip().splitlines()[:6])
        raise CompileError(
            f"numba.cuda could not compile the cell function as a device function: {lines} "
            f"... Run with {setting('backend', 'cpu')} or {setting('backend', 'python')}."
        ) from None


def cooperative_blocks(kern: Any, args: tuple[Any, ...], threads: int, cells: int) -> int:
    """Blocks of a cooperative launch of ``kern``: enough for ``cells`` threads, no more
    than can be resident at once (the grid barrier needs every block running).  Compiles
    ``kern`` for ``args`` to ask."""
    if simulated():
        return 1  # the simulator's grid barrier spans one block
    from numba import typeof

    compile_for(kern, args)
    cap = kern.overloads[tuple(typeof(a) for a in args)].max_cooperative_grid_blocks(threads)
    return max(1, min(cap, math.ceil(cells / threads)))


def coherent_names(cuda: Any) -> dict[str, Any]:
    """Names for kernels that read what other blocks of the same launch wrote: ``LOAD``,
    a load that skips the SM's L1 cache (``ld.global.cg``; L1 is not coherent across SMs,
    and a line cached before a neighbour tile was written would be stale), and ``NAP``,
    the nanoseconds to pause between polls of a flag, so spinning blocks leave the memory
    system to the working ones.  The simulator has neither and needs neither."""
    if simulated():
        return {"cuda": cuda, "LOAD": _plain_load}
    return {"cuda": cuda, "LOAD": cuda.ldcg, "NAP": np.uint32(200)}


def _plain_load(a: Any, i: Any) -> Any:
    """``LOAD`` under the simulator: a plain load."""
    return a[i]


def nap() -> str:
    """Source of one pause between polls of a flag (``NAP`` of :func:`coherent_names`)."""
    return "pass" if simulated() else "cuda.nanosleep(NAP)"


#: ``(blocks, threads per block, kernel args)`` of each launch.
Launches = list[tuple[int, int, tuple[Any, ...]]]


def free_memory() -> float:
    """Bytes free on the current device (``inf`` under the simulator)."""
    return float(require().current_context().get_memory_info().free)


def check_fits(rec: Recurrence, tables: Sequence[tuple[str, tuple[int, ...]]],
               schedule: tuple[np.ndarray, ...] = (), score: bool = False) -> None:
    """``TooLargeError`` unless ``tables`` (what each is, in words, and its shape; cells
    of ``rec``'s dtype), the args and the ``schedule`` arrays fit in the device's free
    memory at once: a fill (or, with ``score``, a score) that would not fit says so and
    what to run instead, rather than failing in a CUDA allocation.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> rec = recurrence(shape=(300, 400), dtype=np.int64)(lambda M, i, j: 0)
    >>> check_fits(rec, [("the (300, 400) int64 table", (300, 400))])  # the simulator: room
    """
    itemsize = np.dtype(rec.dtype).itemsize
    held = [(what, math.prod(shape) * itemsize) for what, shape in tables]
    rest = sum(a.nbytes for a in (*rec.args, *schedule) if isinstance(a, np.ndarray))
    need = sum(size for _, size in held) + rest
    free = free_memory()
    if need > free:
        parts = "".join(f"{what} {format_bytes(size)}, " for what, size in held)
        raise TooLargeError(
            f"the GPU {'score' if score else 'fill'} needs {format_bytes(need)} on the "
            f"device ({parts}args and schedule {format_bytes(rest)}), more than the "
            f"{format_bytes(free)} free; fill on the CPU ({setting('backend', 'cpu')})"
            + ("" if score else f" or keep only the score ({setting('score', True)})"))


def run(rec: Recurrence, kernel: Any, layout: str, copy_back: bool,
        launches: Callable[[Any, Any, tuple[Any, ...], tuple[Any, ...]], Launches],
        schedule: tuple[np.ndarray, ...] = (), label: str = "",
        shape: tuple[int, ...] | None = None, checks: bool = False) -> DeviceFill:
    """Copy args (and schedule arrays) in, compile, run every launch, copy the table back
    if asked; each phase timed apart.  The table on the device has the recurrence's shape,
    or ``shape`` (a score fill's window of diagonals); building the launch list, which may
    compile the kernel to size a cooperative grid, is timed with the compilation.  With
    ``checks``, the args the launches get end with a zeroed int64 array of one element,
    which a checked cell sets when a check fails
    (:func:`runtime.backends.cuda.cells.checked_cell`), returned as ``DeviceFill.checks``."""
    cuda = require()
    if shape is None or tuple(shape) == rec.shape:
        check_fits(rec, [(f"the {rec.shape} {np.dtype(rec.dtype)} table", rec.shape)], schedule)
    else:
        check_fits(rec, [("the cells it keeps", shape)], schedule, score=True)
    t0 = time.perf_counter()
    dargs = tuple(cuda.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
                  for a in rec.args)
    dargs += (cuda.to_device(np.zeros(1, dtype=np.int64)),) if checks else ()
    dsched = tuple(cuda.to_device(np.ascontiguousarray(a)) for a in schedule)
    dM = cuda.device_array(rec.shape if shape is None else shape, dtype=rec.dtype, order=layout)
    cuda.synchronize()
    t1 = time.perf_counter()
    todo = launches(cuda, dM, dargs, dsched)
    if todo:
        compile_for(kernel, todo[0][2])
    t2 = time.perf_counter()
    _launch_all(kernel, todo)
    cuda.synchronize()
    t3 = time.perf_counter()
    found = dargs[-1].copy_to_host() if checks else None
    table = to_host(cuda, dM) if copy_back else None
    t4 = time.perf_counter()
    return DeviceFill(table, t1 - t0, t3 - t2, t4 - t3, len(todo), t2 - t1, label,
                      None if copy_back else dM, found)


#: Bytes of each of the two pinned buffers a table comes back to the host through.
STAGE_BYTES = 64 << 20
#: The most threads that copy a chunk out of a pinned buffer: the new array's page faults
#: pace each, and the copy gained up to about a dozen of them (docs/benchmarks.md).
COPY_THREADS = 12


def to_host(cuda: Any, dM: Any, stage_bytes: int = STAGE_BYTES,
            threads: int | None = None) -> np.ndarray:
    """A device table copied to a new host array, in its own layout.

    A copy into pageable memory goes through the driver's own small pinned buffers, at
    about a tenth of the link's speed; pinning the whole table costs more than it saves.
    So the table comes through two pinned buffers of ``stage_bytes`` in turn: while one
    chunk crosses the link (on its own stream) the one before is copied out of the other,
    by ``threads`` threads at once (default: up to :data:`COPY_THREADS`, as the cores
    allow).  One thread alone would be the bottleneck: the new array's pages are first
    touched by that copy, and the kernel's page faults and zeroing halve one thread's
    copy rate.
    """
    if dM.size * dM.dtype.itemsize <= stage_bytes:
        return dM.copy_to_host()
    order = "C" if dM.is_c_contiguous() else "F"
    out = np.empty(dM.shape, dtype=dM.dtype, order=order)
    flat, host = dM.ravel(order=order), out.ravel(order=order)
    chunk = max(1, stage_bytes // dM.dtype.itemsize)
    buffers = [cuda.pinned_array(chunk, dtype=dM.dtype) for _ in range(2)]
    streams = [cuda.stream() for _ in range(2)]
    pending: list[tuple[int, int, int]] = []
    workers = threads or max(1, min(COPY_THREADS, len(os.sched_getaffinity(0))))

    with ThreadPoolExecutor(workers) as pool:
        def drain() -> None:
            a, b, k = pending.pop(0)
            streams[k].synchronize()
            cuts = np.linspace(0, b - a, workers + 1).astype(np.int64).tolist()
            # numpy's copy lets go of the GIL, so the threads copy at once
            list(pool.map(lambda lo, hi: np.copyto(host[a + lo:a + hi], buffers[k][lo:hi]),
                          cuts[:-1], cuts[1:]))

        for n, a in enumerate(range(0, flat.size, chunk)):
            b, k = min(flat.size, a + chunk), n % 2
            if len(pending) == 2:
                drain()
            flat[a:b].copy_to_host(buffers[k][:b - a], stream=streams[k])
            pending.append((a, b, k))
        while pending:
            drain()
    return out
