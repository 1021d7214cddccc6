"""What the device costs, measured: a launch, a grid barrier, the write bandwidth.

The cost model (:mod:`runtime.schedule.costmodel`) calibrates on these.  The kernels are
fixed (they depend on no recurrence), so they are plain ``@cuda.jit`` functions; this
module imports ``numba.cuda`` when it is imported, so only the calibration imports it.

Assumptions: a usable CUDA device (:func:`runtime.backends.cuda.device.require`).
"""

from __future__ import annotations

import time

import numpy as np

from runtime.backends.cuda.device import (
    THREADS,
    cooperative_blocks,
    cuda_module,
    max_blocks,
    require,
)

__all__ = ["launch_latency", "barrier_latency", "write_bandwidth"]

cuda = cuda_module()


@cuda.jit
def _empty(a):  # pragma: no cover - compiled
    pass


@cuda.jit
def _barriers(a, k):  # pragma: no cover - compiled
    g = cuda.cg.this_grid()
    for _ in range(k):
        g.sync()


@cuda.jit
def _writes(a, v):  # pragma: no cover - compiled
    q = cuda.grid(1)
    while q < a.size:
        a[q] = v
        q += cuda.gridsize(1)


def launch_latency(repeat: int = 200) -> float:
    """Seconds from Python to the end of an empty kernel launch, the mean of ``repeat``
    back-to-back launches (what a launch per step costs beyond its work)."""
    require()
    a = cuda.device_array(1, np.int32)
    _empty[1, 32](a)
    cuda.synchronize()
    t = time.perf_counter()
    for _ in range(repeat):
        _empty[1, 32](a)
    cuda.synchronize()
    return (time.perf_counter() - t) / repeat


def barrier_latency(blocks: int, repeat: int = 200, threads: int = THREADS) -> float:
    """Seconds per grid-wide barrier of a cooperative launch of ``blocks`` x ``threads``
    (capped at what can be resident), the mean over ``repeat`` barriers."""
    require()
    a = cuda.device_array(1, np.int32)
    blocks = cooperative_blocks(_barriers, (a, repeat), threads, blocks * threads)
    _barriers[blocks, threads](a, 1)
    cuda.synchronize()
    t = time.perf_counter()
    _barriers[blocks, threads](a, repeat)
    cuda.synchronize()
    return (time.perf_counter() - t) / repeat


def write_bandwidth(nbytes: int, repeat: int = 5) -> float:
    """Bytes per second the device writes: the median of ``repeat`` launches of a
    grid-stride kernel storing ``nbytes`` of 8-byte words (the ceiling for a fill that
    writes each cell once and reads what it needs from L2)."""
    require()
    a = cuda.device_array(max(1, nbytes // 8), np.int64)
    grid = max_blocks(cuda)
    _writes[grid, THREADS](a, 0)
    cuda.synchronize()
    times = []
    for k in range(repeat):
        t = time.perf_counter()
        _writes[grid, THREADS](a, k)
        cuda.synchronize()
        times.append(time.perf_counter() - t)
    return a.nbytes / sorted(times)[len(times) // 2]
