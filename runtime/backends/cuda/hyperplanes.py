"""Fills by a hyperplane schedule on the GPU (:mod:`patterns.hyperplane`), any number of
dimensions: a launch per step (:func:`hyperplane_fill`), or every step in one cooperative
launch with a grid barrier between steps (``cooperative=True``, for light cells, where
launches would cost more than the cells); and the table of a sheared fill
(:mod:`runtime.backends.shear`) gathered back from its sheared table on the device
(:func:`unshear_fill`).

A step's cells are a grid-stride loop: in 2-D over the exact range of the axis that is
not solved for; in more dimensions over every combination of the outer axes and the
inner axis, the inner index tested against its exact range (so consecutive threads take
consecutive cells of the inner axis, the table's last axis where it can be).

Assumptions: the table is C-ordered; the hyperplane is legal for the reads, or the cell
checks each read (:class:`runtime.backends.cuda.cells.Checks` with ``order``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR
from depgraph.model import Recurrence
from patterns.hyperplane import Hyperplane, Shear, step_source
from runtime.backends.cpu import unravel
from runtime.backends.cuda.cells import Checks, checked_cell
from runtime.backends.shear import gather_line
from runtime.backends.cuda.steps import cooperative_kernel
from runtime.backends.cuda.device import (
    THREADS,
    DeviceFill,
    Launches,
    check_fits,
    compile_for,
    compile_kernel,
    cooperative_blocks,
    max_blocks,
    require,
    run,
    to_host,
)
from runtime.backends.emit import Emitter, arg_tail

__all__ = ["hyperplane_fill", "hyperplane_step_source", "step_threads", "unshear_fill",
           "check_sheared_fits", "GATHER_TILE"]


def hyperplane_step_source(pi: tuple[int, ...], nargs: int) -> str:
    """Source of one step ``t`` of hyperplane ``pi`` as a grid-stride loop
    (``step(M, t, *args)``).

    Examples
    --------
    >>> print(hyperplane_step_source((2, 1), 0), end="")
    def step(M, t):
        n0 = M.shape[0]
        n1 = M.shape[1]
        g = cuda.grid(1)
        stride = cuda.gridsize(1)
        rem = t
        lo = max(0, -((-(rem - 1 * (n1 - 1))) // 2))
        hi = min(n0, rem // 2 + 1)
        q = lo + g
        while q < hi:
            u0 = q
            x0 = u0
            u1 = rem - 2 * u0
            x1 = u1
            M[x0, x1] = cell(M, x0, x1)
            q += stride
    """
    step = step_source(pi)
    tail, index = arg_tail(nargs), step.index
    e = Emitter()
    with e.block(f"def step(M, t{tail})"):
        e(*step.sides, "g = cuda.grid(1)", "stride = cuda.gridsize(1)")
        if step.outer:
            e(f"whole = {step.outer_count} * n{step.inner}")
            with e.block("while g < whole"):
                e(f"o = g // n{step.inner}", f"q = g % n{step.inner}", *step.outer_cell,
                  *step.inner_range)
                with e.block("if lo <= q < hi"):
                    e(*step.inner_cell)
                    _store(e, step.valid, index, tail)
                e("g += stride")
        else:
            e(*step.outer_cell, *step.inner_range, "q = lo + g")
            with e.block("while q < hi"):
                e(*step.inner_cell)
                _store(e, step.valid, index, tail)
                e("q += stride")
    return e.source


def _store(e: Emitter, valid: str, index: str, tail: str) -> None:
    """Emit the cell's store, under ``valid`` unless it always holds."""
    line = f"M[{index}] = cell(M, {index}{tail})"
    if valid == "True":
        e(line)
        return
    with e.block(f"if {valid}"):
        e(line)


def step_threads(hyperplane: Hyperplane, shape: tuple[int, ...]) -> np.ndarray:
    """Threads each step's grid-stride loop has work for, 0 for an empty step: its cells
    in 2-D (the range of the axis not solved for), every combination of the other axes
    in more dimensions.

    Examples
    --------
    >>> step_threads(Hyperplane((2, 1)), (3, 4)).tolist()
    [1, 1, 2, 2, 2, 2, 1, 1]
    """
    widths = hyperplane.widths(shape)
    step = step_source(hyperplane.pi)
    if len(shape) <= 2 and abs(hyperplane.pi[step.solved]) == 1:
        return widths
    others = math.prod(n for k, n in enumerate(shape) if k != step.solved)
    return np.where(widths > 0, others, 0)


def hyperplane_fill(rec: Recurrence, ir: CellIR, hyperplane: Hyperplane,
                    copy_back: bool = True, checks: Checks | None = None,
                    cooperative: bool = False) -> DeviceFill:
    """Fill a C-ordered table step by step along ``hyperplane``: a launch per non-empty
    step, or (``cooperative``) every step in one launch with a grid barrier between
    steps, its reads past L1 (a line cached in an earlier step may hold cells written
    since).  With ``checks`` (``order`` set to the hyperplane), the cell checks its reads
    and values (``DeviceFill.checks[0]`` set when one fails); a cooperative fill always
    checks its reads, which is how it reads past L1."""
    pi = hyperplane.pi
    shape = rec.shape
    threads = step_threads(hyperplane, shape)
    if cooperative:
        checks = checks or Checks(ir, (), None, pi)
    nargs = len(rec.args) + (checks is not None)
    source = hyperplane_step_source(pi, nargs)
    label = checks.label if checks else ""
    if not cooperative:
        cell = checked_cell(rec, checks, coherent=False) if checks else None
        kern = compile_kernel(rec, source, "step", cell)

        def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
            cap = max_blocks(cuda)
            return [(min(cap, math.ceil(int(w) / THREADS)), THREADS, (dM, t, *dargs))
                    for t, w in enumerate(threads.tolist()) if w]

        return run(rec, kern, "C", copy_back, launches,
                   label=", ".join(filter(None, (f"hyperplane pi = {hyperplane.text()}, a "
                                                 f"launch per step", label))),
                   checks=checks is not None)
    assert checks is not None
    kern = cooperative_kernel(rec, source, checked_cell(rec, checks, coherent=True), nargs)
    span = hyperplane.span(shape)

    def one(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        launch_args = (dM, span, *dargs)
        return [(cooperative_blocks(kern, launch_args, THREADS, int(threads.max(initial=1))),
                 THREADS, launch_args)]

    return run(rec, kern, "C", copy_back, one,
               label=f"hyperplane pi = {hyperplane.text()}, one cooperative launch, {label}",
               checks=True)


#: Side of the square tiles in which :func:`unshear_fill` moves a slab-sheared table.
GATHER_TILE = 32


def _slab_gather_source(sh: Shear, ndim: int) -> str | None:
    """Source of a gather of a table from its slab shear (:func:`patterns.hyperplane.slab`)
    by square tiles of the plane of the solved axis ``s`` and the last axis ``L``: a
    block loads the rows of the sheared table a tile needs (each row contiguous along
    ``L`` there) into shared memory, then writes the tile's rows (contiguous along ``L`` in
    the table), so both sides move whole lines where a cell-by-cell gather reads one cell
    a line.  ``None`` when the solved axis is the last one.

    Examples
    --------
    >>> from patterns.hyperplane import Hyperplane, slab
    >>> src = _slab_gather_source(slab(Hyperplane((1, 1, 1)), (4, 5, 6)), 3)
    >>> print(src.splitlines()[28].strip()); print(src.splitlines()[36].strip())
    tile[row, tx] = S[y0, x1, xl]
    M[xs, x1, xl] = tile[1 * xs + 1 * xl + K - low, tx]
    """
    pi = sh.rows[0]
    s, last, side = step_source(pi).solved, ndim - 1, GATHER_TILE
    if s == last:
        return None
    others = [k for k in range(ndim) if k != s]
    outer = [k for k in others if k != last]
    rows = (side - 1) * (1 + abs(pi[last])) + 1
    named = {s: "xs", last: "xl"}
    at_table = ", ".join(named.get(k, f"x{k}") for k in range(ndim))
    at_sheared = ", ".join(["y0"] + [named.get(k, f"x{k}") for k in others])
    # the step's shift from the table's sides, so the gather is the same at every size
    shift = (sh.shift_source([f"n{k}" for k in range(ndim)]) or ("0",))[0]
    e = Emitter()
    with e.block("def unshear(M, S)"):
        e(*(f"n{k} = M.shape[{k}]" for k in range(ndim)),
          f"ts = (n{s} + {side - 1}) // {side}", f"tl = (n{last} + {side - 1}) // {side}",
          f"tiles = {' * '.join([f'n{k}' for k in outer] + ['ts', 'tl'])}",
          f"tile = cuda.shared.array(({rows}, {side + 1}), DT)",
          "tx = cuda.threadIdx.x", "ty = cuda.threadIdx.y", "b = cuda.blockIdx.x")
        with e.block("while b < tiles"):
            e("r = b", "jl = r % tl", "r = r // tl", "js = r % ts", "r = r // ts")
            for k in reversed(outer):
                e(f"x{k} = r % n{k}", f"r = r // n{k}")
            e(f"A = js * {side}", f"B = jl * {side}",
              "K = " + " + ".join([f"({shift})"] + [f"{pi[k]} * x{k}" for k in outer]),
              f"low = K + min({pi[s]} * A, {pi[s]} * (A + {side - 1})) + "
              f"min({pi[last]} * B, {pi[last]} * (B + {side - 1}))")
            # the sheared table's rows the tile needs in, then the table's rows out
            for count, at, inside, move in (
                    (rows, "y0 = low + row", "0 <= y0 < S.shape[0]",
                     f"tile[row, tx] = S[{at_sheared}]"),
                    (side, "xs = A + row", f"xs < n{s}",
                     f"M[{at_table}] = tile[{pi[s]} * xs + {pi[last]} * xl + K - low, tx]")):
                e("row = ty")
                with e.block(f"while row < {count}"):
                    e(at, "xl = B + tx")
                    with e.block(f"if {inside} and xl < n{last}"):
                        e(move)
                    e("row += cuda.blockDim.y")
                e("cuda.syncthreads()")
            e("b += cuda.gridDim.x")
    return e.source


def check_sheared_fits(rec: Recurrence, sh: Shear) -> None:
    """``TooLargeError`` before any work unless a fill of ``rec`` on its table sheared by
    ``sh`` fits the device's free memory: the sheared table (``sh.box``, larger than the
    table) and the table :func:`unshear_fill` gathers from it are both on the device
    while the gather runs, with the args the sheared fill copied in (freed by then only
    as numba's deferred deallocation allows).

    Examples
    --------
    >>> from depgraph import recurrence
    >>> from patterns.hyperplane import shear
    >>> rec = recurrence(shape=(30, 40), dtype=np.int32)(lambda M, i, j: 0)
    >>> check_sheared_fits(rec, shear([(-1, 1), (0, -1)], rec.shape))  # the simulator: room
    """
    dtype = np.dtype(rec.dtype)
    check_fits(rec, [(f"the sheared {sh.box} {dtype} table", sh.box),
                     (f"the {rec.shape} {dtype} table gathered from it", rec.shape)])


def unshear_fill(rec: Recurrence, sheared: Any, sh: Shear, copy_back: bool
                 ) -> tuple[Any, float, float, float]:
    """The table of ``rec`` gathered on the device from its sheared table ``sheared`` (a
    device array): cell ``x`` is ``sheared[U x + c]``; a slab shear's by tiles
    (:func:`_slab_gather_source`), a NOSE shear's cell by cell (a row of the table is
    one of the sheared table).  Returns the table (on the host when ``copy_back``, else
    the device array), the seconds compiling, gathering and copying back."""
    cuda = require()
    tiled = _slab_gather_source(sh, rec.ndim) if sh.frame == "slab" else None
    if tiled is None:
        e = Emitter()
        with e.block("def unshear(M, S)"):
            e("q = cuda.grid(1)")
            with e.block("while q < M.size"):
                e("r = q")
                index = unravel(e, rec.ndim).split(", ")
                e(gather_line(sh, index), "q += cuda.gridsize(1)")
    t0 = time.perf_counter()
    # the dtype's NumPy type, which names itself, so the kernel is kept on disk
    kern = (compile_kernel(rec, tiled, "unshear", DT=rec.dtype.type) if tiled else
            compile_kernel(rec, e.source, "unshear"))
    M = cuda.device_array(rec.shape, dtype=rec.dtype)
    compile_for(kern, (M, sheared))
    t1 = time.perf_counter()
    if tiled:
        kern[max_blocks(cuda), (GATHER_TILE, 8)](M, sheared)
    else:
        kern[min(max_blocks(cuda), math.ceil(rec.cells / THREADS)), THREADS](M, sheared)
    cuda.synchronize()
    t2 = time.perf_counter()
    table = to_host(cuda, M) if copy_back else M
    return table, t1 - t0, t2 - t1, time.perf_counter() - t2
