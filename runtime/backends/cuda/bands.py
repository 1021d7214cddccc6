"""Row and column patterns in one persistent launch by bands (:func:`band_fill`): each
block owns a band of every step and waits only on the progress of the bands its reads
reach; no ticket, no grid barrier, no tile chain along a step.

Assumptions: 2-D tables, a row or column pattern the reads fit; every band is resident at
once (the grid is at most the cooperative limit).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR
from depgraph.frontend.narrow import narrowing
from depgraph.model import Recurrence
from patterns import DIAGONAL_FLIPS, PATTERNS
from runtime.backends.cuda.cells import (
    argument_loads,
    coherent_cell,
    flip,
    index_form,
    narrow_note,
    register_type,
)
from runtime.backends.cuda.device import (
    DeviceFill,
    Launches,
    coherent_names,
    compile_kernel,
    cooperative_blocks,
    cuda_module,
    multiprocessors,
    nap,
    run,
    simulated,
    sms,
)
from runtime.backends.cuda.steps import unrolled_cells
from runtime.backends.emit import Emitter, arg_tail

__all__ = ["band_fill", "band_unroll", "BAND_THREADS", "BAND_REGISTERS", "BAND_WINDOW_BYTES"]

#: Threads a block of a band fill: 512 was best or within 5% of the best for the
#: knapsack, binomial and a stencil reading both sides (docs/benchmarks.md).
BAND_THREADS = 512
#: Registers a thread of a band fill's kernel of more than one cell a thread: three
#: bands of ``BAND_THREADS`` a multiprocessor (at 60 registers, two bands a
#: multiprocessor were too few to cover a knapsack's 10^6 columns in one round of 5
#: cells a thread).
BAND_REGISTERS = 40
#: Shared memory of a band's window, at most: the static limit of a block.
BAND_WINDOW_BYTES = 48 * 1024


def band_unroll(unroll: int | None, across: int, threads: int, bands: int,
                dtype: np.dtype) -> int:
    """Cells a thread a round of a band fill: ``unroll``, or by default the fewest that
    cover a band of ``bands`` (``across`` cells a step) in one round, so the band keeps its
    step in its window; 1 when the window of that many would not fit
    (:data:`BAND_WINDOW_BYTES`).

    Examples
    --------
    >>> band_unroll(None, 1000000, 512, 396, np.dtype(np.int64))
    5
    >>> band_unroll(None, 10**8, 512, 396, np.dtype(np.int64))
    1
    >>> band_unroll(3, 9, 2, 1, np.dtype(np.int8))
    3
    """
    unroll = unroll or max(1, math.ceil(across / (bands * threads)))
    fits = 2 * unroll * threads * np.dtype(dtype).itemsize <= BAND_WINDOW_BYTES
    return unroll if fits else 1


def _poll(e: Emitter, a: str, na: str) -> None:
    """Before step ``a``: while the bands before this one (``ready``) have finished fewer
    than ``a`` steps, the threads with counters to read fold their minimum into a slot in
    shared memory (three slots in turn, so the next poll's slot is reset before the
    barrier)."""
    with e.block(f"while ready < {a}"):
        with e.block("if r < c"):
            e(f"low = int32({na})", "f = r")
            with e.block("while f < c"):
                e("low = min(low, LOAD(progress, f))", "f += T")
            e("cuda.atomic.min(S, poll, low)")
        e("after = uint32(poll + 1) if poll < 2 else uint32(0)")
        with e.block("if r == 0"):  # the next poll's slot, free since the last barrier
            e(f"S[after] = {na}")
        e("cuda.syncthreads()", "ready = S[poll]", "poll = after")
        with e.block(f"if ready < {a}"):
            e(nap())


def _bands_source(along: str, rows: bool, cols: bool, shape: tuple[int, ...], nargs: int,
                  frame: bool, U: int, threads: int, loads: list[str]) -> str:
    """The band kernel of :func:`band_fill`: steps along ``along`` (``u``, rows, or
    ``v``) in the NOSE frame of ``rows`` and ``cols`` flipped, ``U`` cells a thread a
    round, the cell's argument ``loads`` (:func:`runtime.backends.cuda.cells.
    argument_loads`) made for it; with ``frame``, a band polls the bands before it before
    each step, else each read waits on its band."""
    a, b = ("u", "v") if along == "u" else ("v", "u")
    na, nb = ("n", "m") if a == "u" else ("m", "n")
    Iu, Jv = index_form(flip("u", "n", rows), shape), index_form(flip("v", "m", cols), shape)
    tail = arg_tail(nargs)
    across_key = "{1}" if along == "u" else "{0}"  # a load that names it is a cell's own
    ahead = [k for k, t in enumerate(loads) if across_key not in t]

    def at(k: int, step: str) -> str:  # load k at step ``step``
        return loads[k].format(flip(step, "n", rows), flip(step, "m", cols))

    values = [f"h{k}" if k in ahead else t for k, t in enumerate(loads)]
    waits = "" if frame else ", progress, width, c, SEEN"  # what a read's wait needs
    warps = -(-threads // 32)
    e = Emitter()
    with e.block(f"def bands(M, progress{tail})"):
        e("n = M.shape[0]", "m = M.shape[1]", "T = cuda.blockDim.x", "r = cuda.threadIdx.x",
          "c = cuda.blockIdx.x", f"width = ({nb} + cuda.gridDim.x - 1) // cuda.gridDim.x",
          "lo = c * width", f"hi = min({nb}, lo + width)",
          f"W = cuda.shared.array((2, {U * threads}), DT)",
          f"win = hi - lo if {U} * T >= hi - lo else 0")
        if frame:  # ready: steps finished by every band before this one
            e("S = cuda.shared.array(3, int32)", "ready = 0", "poll = uint32(0)")
            with e.block("if r == 0"):  # the first poll's slot; each poll resets the next one's
                e(f"S[0] = {na}")
        else:
            e(f"SEEN = cuda.shared.array((2, {warps}), int64)")
            with e.block(f"if r < 2 * {warps}"):
                e(f"SEEN[r // {warps}, r % {warps}] = -1")
        e(*[f"g{k} = {at(k, '0')}" for k in ahead], *[f"y{k} = DT(0)" for k in range(U)],
          "cuda.syncthreads()")
        with e.block(f"for {a} in range({na})"):
            for k in ahead:  # the step's loads, made a step ahead
                e(f"h{k} = g{k}", f"g{k} = {at(k, f'{a} + 1')}")
            if frame:
                _poll(e, a, na)
            e(f"{b} = lo + r")
            with e.block("if win > 0"):
                e(f"slot = ({a} + 1) & 1")
                with e.block(f"if {b} < hi"):
                    unrolled_cells(e, Iu, Jv, b, "T", U, tail, "hi",
                                   [f"(W, slot, lo, win{waits})", "y{2}", *values],
                                   (f"W[{a} & 1, {{3}} - lo] = x{{2}}", "y{2} = x{2}"))
            with e.block("else"), e.block(f"while {b} < hi"):
                unrolled_cells(e, Iu, Jv, b, "T", 1, tail, "hi",
                               ([] if frame else [f"(W, 0, lo, 0{waits})"]) + values,
                               cell="plain")
                e(f"{b} += T")
            e("cuda.syncthreads()")
            with e.block("if r == 0"):
                e("cuda.threadfence()", f"cuda.atomic.exch(progress, c, int32({a} + 1))")
    return e.source


def band_fill(rec: Recurrence, ir: CellIR, pattern_index: int, frame: str | None = None,
              threads: int = BAND_THREADS, blocks: int | None = None,
              unroll: int | None = None, copy_back: bool = True,
              narrow: bool = True) -> DeviceFill:
    """A row or column pattern filled in one persistent launch by bands: block ``c`` of
    ``B`` owns the ``c``-th of ``B`` equal slices of every step (a band of columns, for
    rows) and walks the steps in order, publishing after each step how many it has
    finished (a progress counter per band; after the block's barrier, the thread that
    publishes makes the memory fence, once for the block, as the cooperative groups' grid
    barrier does).  The cell's loads of its arguments that depend on the step only (the
    knapsack's ``w[i - 1]``) are made by the kernel a step ahead
    (:func:`runtime.backends.cuda.cells.argument_loads`), so no cell's address waits on a
    load.

    When one round of ``unroll`` cells a thread, computed before any is stored, covers a
    band (by default the fewest that do at the grid planned, :func:`band_unroll`), the
    band keeps its step for the next: in shared memory (its window) and each cell's value
    in its thread's register, so a cell's read of its own position of the step before
    costs nothing and a read of another position in the band's window costs a shared
    load; reads outside it go to global memory.  Otherwise (a band wider than the round,
    or no room for the window) the threads walk the band a cell at a time, every read from
    global memory.  Indices go through 32 bits when the table's sides allow
    (:func:`runtime.backends.cuda.cells.index_form`), which spares numba's test for
    negative ones.  With ``narrow``, an integer cell is computed in int32, and the band's
    window and registers hold int32, when :mod:`depgraph.frontend.narrow` proves that
    exact over the fill's steps (a read reaches only earlier steps); the table keeps its
    type.

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
    band's count, so it reloads a counter only when the count is not enough
    (:func:`runtime.backends.cuda.cells.band_read_source`; faster than polling every
    band, docs/benchmarks.md).  The wait between steps is one band's, not a row of
    tiles'.

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
    _, loads = argument_loads(rec, ir)
    along = "u" if code in ("RUD", "RDU") else "v"
    n, m = rec.shape
    nw = narrowing(ir, rec.shape, rec.dtype, rec.args, n if along == "u" else m) \
        if narrow else None
    positions = nw.positions if nw else frozenset()
    cell = coherent_cell(rec, ir, hoisted=True, window=(along, rows, cols), wait=not frame,
                         narrow=positions)
    across = m if along == "u" else n
    sched = (np.zeros(multiprocessors() * 32, np.int32),)  # a counter per resident block
    if simulated():
        planned = min(blocks or 1, sched[0].size) if frame or blocks else 1
    else:  # as many as are resident at BAND_REGISTERS registers a thread
        per_sm = max(1, min(2048 // threads, 65536 // (threads * BAND_REGISTERS)))
        planned = min(sms(cuda_module()) * per_sm, blocks or sched[0].size, sched[0].size)
    held = register_type(rec, nw)  # the window's and the kept registers' type
    U = band_unroll(unroll, across, threads, planned, held)
    src = _bands_source(along, rows, cols, rec.shape, len(rec.args), bool(frame), U, threads,
                        loads)
    kern = compile_kernel(rec, src, "bands", cell, BAND_REGISTERS if U > 1 else None,
                          plain=coherent_cell(rec, ir, hoisted=True, keep=False, wait=True,
                                              window=None if frame else (along, rows, cols),
                                              narrow=positions),
                          int32=np.int32, int64=np.int64, uint32=np.uint32, DT=held.type,
                          **coherent_names(cuda_module()))

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        args = (dM, *dsched, *dargs)
        if simulated():
            return [(planned, threads, args)]
        most = min(cooperative_blocks(kern, args, threads, math.ceil(across / U)),
                   sched[0].size)
        return [(most if blocks is None else min(blocks, most), threads, args)]

    return run(rec, kern, "C" if along == "u" else "F", copy_back, launches, sched,
               label=f"bands of {'rows' if along == 'u' else 'columns'}, "
                     + ("waiting on the bands before" if frame else
                        "each read waiting on its band") + narrow_note(nw))
