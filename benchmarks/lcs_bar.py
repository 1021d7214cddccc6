"""The hand-tuned bar for issue 6: an LCS kernel written for LCS alone, in numba.cuda,
keeping the whole ``(n+1) x (n+1)`` int32 table.

Design (the issue's persistent strip pipeline, tuned): one warp per strip of ``32 R``
rows, taken in order from an atomic ticket; at step ``s`` lane ``k`` computes an ``R x C``
block of columns ``(s - k) C ...`` in registers, with its ``R`` characters of ``X`` held in
registers for the whole strip and the ``C`` characters of ``Y`` loaded a step ahead; cells
typed int32 throughout (numba widens int32 arithmetic to int64 unless told); blocks of even
``C`` stored two cells to an aligned 8-byte word, in a table whose rows are padded; no
boundary tests in the cell (row and column 0 are written by a small first kernel);
neighbours from the lane's registers or the lane above by warp shuffles; the strip's last
row handed to the strip below as 64-bit words carrying a ready bit (no fences, flags or
counters), fetched ``B`` blocks ahead.  (Staging stores through shared memory so they
leave coalesced was measured and dropped: on the H200 it was no faster.)

The block is unrolled by writing its source out (numba has no unroll pragma), which is
why this file builds a kernel from text; the LCS cell in it is written by hand.

``run(X, Y, R, C)`` returns ``(device table, seconds)``; ``python benchmarks/lcs_bar.py``
checks it against the CPU sweep at 2049 and times it at 32768 (on the GPU machine).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.backends.cuda.device import require  # noqa: E402

cuda = require()
FULL = np.uint32(0xFFFFFFFF)
B = 4


def _source(R: int, C: int) -> str:
    """The strip kernel's source, ``R x C`` block unrolled."""
    nb = math.ceil(B * C / 32)
    o = [f"""
def lcs_strips(T, TP, X, Y, BND, ticket, nstrips):
    n = X.shape[0]
    m = Y.shape[0]
    lane = cuda.threadIdx.x
    nq = (m + {C - 1}) // {C}
    BD = cuda.shared.array({2 * B * C}, int64)
    while True:
        k = 0
        if lane == 0:
            k = cuda.atomic.add(ticket, 0, 1)
        k = cuda.shfl_sync(FULL, k, 0)
        if k >= nstrips:
            return
        u0 = k * {32 * R}
        ub = u0 + lane * {R}
        full = ub + {R} <= n
        last = k == nstrips - 1
        cn = int32(0)"""]
    o += [f"        a{r} = X[ub + {r}] if ub + {r} < n else int32(-1)" for r in range(R)]
    o += [f"        x{r}_{c} = int32(0)" for r in range(R) for c in range(C)]
    o += [f"        l{r} = int32(0)" for r in range(R)]
    o += [f"        t{c} = int32(0)\n        b{c} = int32(0)" for c in range(C)]
    o += [f"        p{t} = int64(0)" for t in range(nb)]
    o += [f"        z{c} = Y[{c}] if lane == 0 and {c} < m else int32(-2)" for c in range(C)]
    fetch = "".join(f"""
            f = lane + {32 * t}
            if f < {B * C} and FIRST + f < m:
                p{t} = cuda.ldcg(BND, (k - 1) * m + FIRST + f)""" for t in range(nb))
    o.append("        if k > 0:" + fetch.replace("FIRST", "0"))
    o.append(f"""        for s in range(nq + 31):
            if k > 0 and (s & {B - 1}) == 0:""")
    o += [f"""                f = lane + {32 * t}
                if f < {B * C} and s * {C} + f < m:
                    while p{t} < READY:
                        p{t} = cuda.atomic.add(BND, (k - 1) * m + s * {C} + f, 0)
                    BD[(s & {2 * B - 1}) * {C} + f] = p{t}""" for t in range(nb)]
    o.append("                cuda.syncwarp(FULL)" + fetch.replace("FIRST", f"(s + {B}) * {C}").replace(
        "\n            ", "\n                "))
    o.append(f"""            q = s - lane
            cn = t{C - 1}""")
    o += [f"            t{c} = cuda.shfl_up_sync(FULL, b{c}, 1)" for c in range(C)]
    o.append("            if lane == 0:")  # the row above the strip (row 0 of the table: 0)
    o += [f"                t{c} = int32(BD[(s & {2 * B - 1}) * {C} + {c}] & LO) if k > 0 else int32(0)"
          for c in range(C)]
    # this step's characters of Y were loaded last step; load the next step's
    o += [f"            y{c} = z{c}" for c in range(C)]
    o += [f"            z{c} = Y[(q + 1) * {C} + {c}] if q + 1 >= 0 and (q + 1) * {C} + {c} < m "
          f"else int32(-2)" for c in range(C)]
    o.append(f"""            if q >= 0 and q < nq:
                v0 = q * {C}
                if full and v0 + {C} <= m:""")
    for guard in (False, True):
        if guard:
            o.append("                else:")
        for r in range(R):
            for c in range(C):
                left = f"x{r}_{c - 1}" if c else f"l{r}"
                up = f"x{r - 1}_{c}" if r else f"t{c}"
                diag = (f"x{r - 1}_{c - 1}" if c else f"l{r - 1}") if r else (f"t{c - 1}" if c else "cn")
                o.append(f"                    x{r}_{c} = int32({diag} + 1) if a{r} == y{c} "
                         f"else max({up}, {left})")
        for r in range(R):  # table column j sits at column j + C - 1 of the padded rows
            if not guard and C % 2 == 0:
                o += [f"                    TP[ub + {r + 1}, (v0 + {C}) // 2 + {h}] = "
                      f"(int64(x{r}_{2 * h}) & LO) | (int64(x{r}_{2 * h + 1}) << 32)"
                      for h in range(C // 2)]
                continue
            for c in range(C):
                st = f"T[ub + {r + 1}, v0 + {c + C}] = x{r}_{c}"
                o.append(f"                    if ub + {r} < n and v0 + {c} < m:\n"
                         f"                        {st}" if guard else f"                    {st}")
    o += [f"                l{r} = x{r}_{C - 1}" for r in range(R)]
    o += [f"                b{c} = x{R - 1}_{c}" for c in range(C)]
    o.append("                if lane == 31 and not last:")
    for c in range(C):
        o.append(f"""                    if v0 + {c} < m:
                        BND[k * m + v0 + {c}] = int64(b{c}) | READY""")
    return "\n".join(o) + "\n"


_KERNELS: dict[tuple[int, int], Any] = {}


def _kernel(R: int, C: int) -> Any:
    if (R, C) not in _KERNELS:
        ns: dict[str, Any] = {"cuda": cuda, "int32": np.int32, "int64": np.int64, "FULL": FULL,
                              "READY": np.int64(1 << 32), "LO": np.int64(0xFFFFFFFF)}
        exec(compile(_source(R, C), f"<lcs bar {R}x{C}>", "exec"), ns)
        _KERNELS[R, C] = cuda.jit(ns["lcs_strips"])
    return _KERNELS[R, C]


@cuda.jit
def _edges(T, first, m):
    """Row 0 and column 0 of the table (at column ``first`` of the padded rows) are 0."""
    k = cuda.grid(1)
    if k <= m:
        T[0, first + k] = 0
    if k < T.shape[0]:
        T[k, first] = 0


def _padded(n: int, m: int, C: int) -> tuple[Any, Any]:
    """A device table whose row ``i`` holds the LCS table's row ``i`` at columns ``C - 1``
    to ``C - 1 + m`` (so a block's first column falls on an 8-byte boundary when ``C`` is
    even), rows padded to 32 cells: as int32 cells and as int64 words (the same memory)."""
    P = -(-(m + C) // 32) * 32
    words = cuda.device_array((n + 1, P // 2), np.int64)
    return words.view(np.int32), words


def table(T: tuple[Any, Any], m: int, C: int) -> np.ndarray:
    """The ``(n+1) x (m+1)`` table on the host from :func:`run`'s padded device table."""
    return np.ascontiguousarray(T[0].copy_to_host()[:, C - 1:C + m])


def run(X: np.ndarray, Y: np.ndarray, R: int = 8, C: int = 4,
        T: tuple[Any, Any] | None = None) -> tuple[tuple[Any, Any], float]:
    """Fill the LCS table of ``X`` and ``Y`` (int32 codes) on the device; the padded
    table (:func:`_padded`, reused when given) and the seconds from the first launch to
    the end.  Blocks of even ``C`` store their cells two to an 8-byte word."""
    n, m = len(X), len(Y)
    dX, dY = cuda.to_device(X.astype(np.int32)), cuda.to_device(Y.astype(np.int32))
    if T is None:
        T = _padded(n, m, C)
    nstrips = math.ceil(n / (32 * R))
    bnd = cuda.to_device(np.zeros(max(1, nstrips - 1) * m, np.int64))
    ticket = cuda.to_device(np.zeros(1, np.int64))
    kern = _kernel(R, C)
    sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)
    cuda.synchronize()
    t0 = time.perf_counter()
    _edges[math.ceil((max(n, m) + 1) / 256), 256](T[0], C - 1, m)
    kern[min(nstrips, sms * 16), 32](*T, dX, dY, bnd, ticket, nstrips)
    cuda.synchronize()
    return T, time.perf_counter() - t0


def _reference(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    from examples.lcs import reference

    return reference(X, Y)


def main() -> None:
    import argparse
    import statistics

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="32768")
    ap.add_argument("--blocks", default="8x1,8x2,8x4,4x4")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    X, Y = rng.integers(0, 4, 2049), rng.integers(0, 4, 1023)
    for blk in a.blocks.split(","):
        R, C = map(int, blk.split("x"))
        T, _ = run(X, Y, R, C)
        assert np.array_equal(table(T, len(Y), C), _reference(X, Y)), blk
    for size in (int(s) for s in a.sizes.split(",")):
        rng = np.random.default_rng(size)
        X, Y = rng.integers(0, 4, size), rng.integers(0, 4, size)
        for blk in a.blocks.split(","):
            R, C = map(int, blk.split("x"))
            T, _ = run(X, Y, R, C)
            med = statistics.median(run(X, Y, R, C, T)[1] for _ in range(a.repeat))
            print(f"LCS bar {size}^2 {R}x{C}: {med * 1e3:.2f} ms, "
                  f"{(size + 1) ** 2 / med / 1e9:.1f} GCUPS, score {table(T, size, C)[-1, -1]}",
                  flush=True)
            del T

if __name__ == "__main__":
    main()
