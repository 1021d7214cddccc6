"""Hand-written numba.cuda per-step kernels for the thesis's four cases: the bar the generic
pattern fill is measured against (the thesis's "tailored kernels").

Each kernel computes one step (row or diagonal) with a grid-stride loop, like the generic
fill, but with the recurrence written into the kernel by hand: no generic step geometry,
no cell-function call.  ``run_<case>(rec)`` fills ``rec``'s table on the device and returns
``(device_table, seconds)``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from runtime.backends.cuda.device import THREADS, require

cuda = require()


@cuda.jit
def _lcs_diag(M, s, X, Y):
    n, m = M.shape
    i0 = max(0, s - m + 1)
    cnt = min(n - 1, s) - i0 + 1
    k = cuda.grid(1)
    while k < cnt:
        i = i0 + k
        j = s - i
        if i == 0 or j == 0:
            M[i, j] = 0
        elif X[i - 1] == Y[j - 1]:
            M[i, j] = M[i - 1, j - 1] + 1
        else:
            M[i, j] = max(M[i - 1, j], M[i, j - 1])
        k += cuda.gridsize(1)


@cuda.jit
def _knapsack_row(M, i, w, p):
    m = M.shape[1]
    j = cuda.grid(1)
    while j < m:
        if i == 0 or j == 0:
            M[i, j] = 0
        else:
            wi = w[i - 1]
            up = M[i - 1, j]
            if wi <= j:
                take = p[i - 1] + M[i - 1, j - wi]
                if take > up:
                    up = take
            M[i, j] = up
        j += cuda.gridsize(1)


@cuda.jit
def _binomial_row(M, i):
    m = M.shape[1]
    j = cuda.grid(1)
    while j < m:
        if j == 0 or j == i:
            M[i, j] = 1.0
        elif j < i:
            M[i, j] = M[i - 1, j - 1] + M[i - 1, j]
        else:
            M[i, j] = 0.0
        j += cuda.gridsize(1)


@cuda.jit
def _chain_diag(M, dd, d):
    """Cells (i, i + dd) for dd >= 0; dd < 0 zeroes the lower diagonal i - j = -dd."""
    n = M.shape[0]
    k0 = cuda.grid(1)
    a = k0
    cnt = n - abs(dd)
    while a < cnt:
        if dd <= 0:
            M[a - dd, a] = 0
        else:
            i = a
            j = a + dd
            best = M[i, i] + M[i + 1, j] + d[i] * d[i + 1] * d[j + 1]
            for k in range(i + 1, j):
                c = M[i, k] + M[k + 1, j] + d[i] * d[k + 1] * d[j + 1]
                if c < best:
                    best = c
            M[i, j] = best
        a += cuda.gridsize(1)


def _blocks(count: int) -> int:
    sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)  # 1 on the simulator
    return max(1, min(sms * (2048 // THREADS), math.ceil(count / THREADS)))


def _timed(rec: Any, launches: Any) -> tuple[Any, float]:
    dargs = [cuda.to_device(a) for a in rec.args]
    dM = cuda.device_array(rec.shape, dtype=rec.dtype)
    todo = launches(dM, dargs)
    blocks, args, kern = todo[0]
    kern[blocks, THREADS](*args)  # compile and warm up on the first step
    cuda.synchronize()
    t = time.perf_counter()
    for blocks, args, kern in todo:
        kern[blocks, THREADS](*args)
    cuda.synchronize()
    return dM, time.perf_counter() - t


def run_lcs(rec: Any) -> tuple[Any, float]:
    n, m = rec.shape
    return _timed(rec, lambda dM, a: [(_blocks(min(n, m)), (dM, s, a[0], a[1]), _lcs_diag)
                                      for s in range(n + m - 1)])


def run_knapsack(rec: Any) -> tuple[Any, float]:
    n, m = rec.shape
    return _timed(rec, lambda dM, a: [(_blocks(m), (dM, i, a[0], a[1]), _knapsack_row)
                                      for i in range(n)])


def run_binomial(rec: Any) -> tuple[Any, float]:
    n, m = rec.shape
    return _timed(rec, lambda dM, a: [(_blocks(m), (dM, i), _binomial_row) for i in range(n)])


def run_matrix_chain(rec: Any) -> tuple[Any, float]:
    n = rec.shape[0]
    return _timed(rec, lambda dM, a: [(_blocks(n - abs(dd)), (dM, dd, a[0]), _chain_diag)
                                      for dd in range(-(n - 1), n)])


RUNNERS = {"lcs": run_lcs, "knapsack": run_knapsack, "binomial": run_binomial,
           "matrix_chain": run_matrix_chain}
