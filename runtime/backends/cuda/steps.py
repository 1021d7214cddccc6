"""Fills that walk a schedule step by step: a launch per step of a pattern
(:func:`pattern_fill`), every step in one cooperative launch with a grid barrier between
steps (:func:`cooperative_fill`), a launch per stage of Algorithm 2 (:func:`stage_fill`),
and Algorithm 3's ready-check fill in one launch (:func:`ready_fill`).

Each step is a grid-stride loop, so a step of any size fits one launch; the grid comes
from the device's multiprocessor count.  The layout follows the pattern's storage: column
patterns use a column-major table so one step's cells are contiguous; rows and diagonals
are row-major.

Assumptions: 2-D tables for the patterns, any number of dimensions for the stages and
the ready-check fill; the schedule given is valid for the recurrence's reads.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from depgraph.errors import RecurrenceError, setting
from depgraph.frontend.ir import CellIR
from depgraph.model import Recurrence
from patterns import PATTERNS, STEP_SOURCE, step_line
from runtime.backends.cpu import unravel
from runtime.backends.cuda.cells import Checks, checked_cell, coherent_cell, rewritten_cell
from runtime.backends.cuda.device import (
    THREADS,
    DeviceFill,
    Launches,
    compile_device,
    compile_kernel,
    cooperative_blocks,
    cuda_module,
    max_blocks,
    run,
)
from runtime.backends.emit import Emitter, arg_tail

__all__ = ["pattern_fill", "cooperative_fill", "cooperative_kernel", "stage_fill", "ready_fill",
           "unrolled_cells", "step_source", "ATOMIC_DTYPES"]

#: Table dtypes numba.cuda's atomic add supports (the ready-check fill's reads use it).
ATOMIC_DTYPES = frozenset(np.dtype(t) for t in ("int32", "int64", "uint32", "uint64",
                                                "float32", "float64"))


def unrolled_cells(e: Emitter, i: str, j: str, var: str, stride: str, unroll: int, tail: str,
                   bound: str | None = None, values: Sequence[str] = (),
                   keep: Sequence[str] = (), cell: str = "cell") -> None:
    """Emit the lines computing ``unroll`` cells ``(i, j)``, the ``k``-th with ``var``
    advanced by ``k * stride``, every cell before any is stored (the cells are
    independent, so their reads overlap); the ``k``-th cell's value is ``x{k}``.  With
    ``bound``, ``var`` stops short of it: a cell past it is computed at ``bound - 1``
    instead and not stored.  ``values`` are the cell's last arguments, format strings
    over its indices' names and its number (``{0}``, ``{1}``, ``{2}``); ``keep``,
    statements made for every cell after the stores, stored or not, over those and
    ``var`` advanced (``{3}``); ``cell``, the name of the function called.

    Examples
    --------
    >>> e = Emitter()
    >>> unrolled_cells(e, "r", "q", "q", "s", 2, "")
    >>> print(e.source, end="")
    i0 = r
    j0 = q
    x0 = cell(M, i0, j0)
    i1 = r
    j1 = (q + 1 * s)
    x1 = cell(M, i1, j1)
    M[i0, j0] = x0
    M[i1, j1] = x1
    """
    stores: list[tuple[str, str]] = []
    kept: list[str] = []
    for k in range(unroll):
        shifted = f"({var} + {k} * {stride})"
        clamped = f"min({shifted}, {bound} - 1)" if bound and k else shifted
        at = (lambda x: re.sub(rf"\b{var}\b", clamped, x)) if k else str
        names = (f"i{k}", f"j{k}", k, shifted)
        e(f"i{k} = {at(i)}", f"j{k} = {at(j)}",
          f"x{k} = {cell}(M, i{k}, j{k}{tail}"
          + "".join(f", {v.format(*names)}" for v in values) + ")")
        stores.append((f"{shifted} < {bound}" if bound and k else "", f"M[i{k}, j{k}] = x{k}"))
        kept += [x.format(*names) for x in keep]
    for test, store in stores:
        if test:
            with e.block(f"if {test}"):
                e(store)
        else:
            e(store)
    e(*kept)


def step_source(code: str, unroll: int, nargs: int) -> str:
    """Source of one step of pattern ``code`` as a grid-stride loop computing ``unroll``
    cells a thread before storing any (:func:`unrolled_cells`); the remainder one at a
    time.

    Examples
    --------
    >>> print(step_source("RUD", 2, 0).splitlines()[8])
            i0 = r
    """
    src = STEP_SOURCE[code]
    tail = arg_tail(nargs)
    e = Emitter()
    with e.block(f"def step(M, t{tail})"):
        e("n = M.shape[0]", "m = M.shape[1]", src.fix, f"q = {src.lo} + cuda.grid(1)",
          f"hi = {src.hi}", "stride = cuda.gridsize(1)")
        with e.block(f"while q + {unroll - 1} * stride < hi" if unroll > 1 else "while q < hi"):
            unrolled_cells(e, src.i, src.j, "q", "stride", unroll, tail)
            e(f"q += {unroll} * stride" if unroll > 1 else "q += stride")
        if unroll > 1:
            with e.block("while q < hi"):
                unrolled_cells(e, src.i, src.j, "q", "stride", 1, tail)
                e("q += stride")
    return e.source


def pattern_fill(rec: Recurrence, pattern_index: int, steps: int, layout: str = "C",
                 copy_back: bool = True, checks: Checks | None = None) -> DeviceFill:
    """One launch per step of a 2-D pattern; the table stays on the device.  With
    ``checks``, the cell checks its reads and values (``DeviceFill.checks[0]`` set when
    one fails: :func:`runtime.backends.cuda.cells.checked_cell`)."""
    code = PATTERNS[pattern_index].code
    nargs = len(rec.args) + (checks is not None)
    cell = checked_cell(rec, checks, coherent=False) if checks else None
    kern = compile_kernel(rec, step_source(code, 1, nargs), "step", cell)
    n, m = rec.shape

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        cap = max_blocks(cuda)
        return [(min(cap, math.ceil(step_line(pattern_index, t, n, m)[4] / THREADS)), THREADS,
                 (dM, t, *dargs)) for t in range(steps)]

    return run(rec, kern, layout, copy_back, launches,
               label="a launch per step" + (f", {checks.label}" if checks else ""),
               checks=checks is not None)


def cooperative_fill(rec: Recurrence, ir: CellIR, pattern_index: int, layout: str = "C",
                     copy_back: bool = True, threads: int = THREADS,
                     blocks: int | None = None, unroll: int = 1,
                     checks: Checks | None = None) -> DeviceFill:
    """Every step of a 2-D pattern in one cooperative launch: a grid-stride loop over the
    step's cells (``unroll`` cells a thread computed before any is stored), then a
    grid-wide barrier, so no launch per step.  ``blocks`` of ``threads`` (default: as many
    as can be resident, up to one thread a cell of the longest step).  Reads of ``M`` skip
    L1 (a line cached in an earlier step may hold cells written since);
    ``SourceUnavailable`` when the cell function's source cannot be rewritten for that.
    ``checks`` as in :func:`pattern_fill`.
    """
    code = PATTERNS[pattern_index].code
    nargs = len(rec.args) + (checks is not None)
    cell = checked_cell(rec, checks, coherent=True) if checks else coherent_cell(rec, ir)
    kern = cooperative_kernel(rec, step_source(code, unroll, nargs), cell, nargs)
    n, m = rec.shape
    steps = PATTERNS[pattern_index].steps((n, m))

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], _: tuple[Any, ...]) -> Launches:
        args = (dM, steps, *dargs)
        most = cooperative_blocks(kern, args, threads, max(n, m))
        return [(most if blocks is None else min(blocks, most), threads, args)]

    return run(rec, kern, layout, copy_back, launches,
               label="one cooperative launch" + (f", {checks.label}" if checks else ""),
               checks=checks is not None)


def cooperative_kernel(rec: Recurrence, step: str, cell: Any, nargs: int) -> Any:
    """A kernel ``coop(M, steps, *args)`` running the device function of ``step``'s
    source, ``step(M, t, *args)`` calling ``cell``, for every ``t`` below ``steps`` in one
    cooperative launch, a grid barrier after each."""
    device = compile_device(rec, step, "step", {"cuda": cuda_module(), "cell": cell})
    args = arg_tail(nargs)
    e = Emitter()
    with e.block(f"def coop(M, steps{args})"):
        e("grid = cuda.cg.this_grid()")
        with e.block("for t in range(steps)"):
            e(f"step(M, t{args})", "grid.sync()")
    return compile_kernel(rec, e.source, "coop", step=device)


def stage_fill(rec: Recurrence, cells: np.ndarray, ptr: np.ndarray,
               copy_back: bool = True) -> DeviceFill:
    """Algorithm 2 on the device: one launch per stage over the stage-ordered flat cells."""
    args = arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def stage(M, cells, lo, hi{args})"):
        e("q = lo + cuda.grid(1)", "stride = cuda.gridsize(1)")
        with e.block("while q < hi"):
            e("r = cells[q]")
            idx = unravel(e, rec.ndim)
            e(f"M[{idx}] = cell(M, {idx}{args})", "q += stride")
    kern = compile_kernel(rec, e.source, "stage")
    bounds = ptr.tolist()

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        (dcells,) = dsched
        cap = max_blocks(cuda)
        return [(min(cap, math.ceil((hi - lo) / THREADS)), THREADS, (dM, dcells, lo, hi, *dargs))
                for lo, hi in zip(bounds[:-1], bounds[1:])]

    return run(rec, kern, "C", copy_back, launches, (cells.astype(np.int64, copy=False),))


def _ready_cell(rec: Recurrence, ir: CellIR) -> Any:
    """The cell function reading ``M`` by an atomic add of 0, which bypasses the L1 cache,
    so a value another block just wrote is seen, never a stale cached line."""
    names = ", ".join(f"a{k}" for k in range(rec.ndim))
    e = Emitter()
    with e.block(f"def read(M, ck, {names})"):
        e(f"return cuda.atomic.add(M, ({names},), 0)")
    return rewritten_cell(rec, ir, e.source, {"cuda": cuda_module()}, cell_args=False)


def ready_fill(rec: Recurrence, ir: CellIR, order: np.ndarray, indptr: np.ndarray,
               indices: np.ndarray, copy_back: bool = True) -> DeviceFill:
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
            f"use {setting('schedule', 'pattern')} or {setting('schedule', 'stages')}"
        )
    args = arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def ready(M, order, indptr, indices, done, ticket{args})"):
        e("total = order.shape[0]", "k = cuda.atomic.add(ticket, 0, 1)")
        with e.block("while k < total"):
            e("x = order[k]")
            with e.block("for e in range(indptr[x], indptr[x + 1])"), \
                    e.block("while cuda.atomic.add(done, indices[e], 0) == 0"):
                e("pass")
            e("r = x")
            idx = unravel(e, rec.ndim)
            e(f"M[{idx}] = cell(M, {idx}{args}, 0)", "cuda.threadfence()",
              "cuda.atomic.exch(done, x, 1)", "k = cuda.atomic.add(ticket, 0, 1)")
    kern = compile_kernel(rec, e.source, "ready", _ready_cell(rec, ir))
    sched = (order.astype(np.int64, copy=False), indptr.astype(np.int64, copy=False),
             indices.astype(np.int64, copy=False), np.zeros(rec.cells, np.int32),
             np.zeros(1, np.int64))

    def launches(cuda: Any, dM: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        blocks = min(max_blocks(cuda), math.ceil(rec.cells / THREADS))
        return [(blocks, THREADS, (dM, *dsched, *dargs))]

    return run(rec, kern, "C", copy_back, launches, sched)
