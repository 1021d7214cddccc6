"""Score-only fills on the GPU: the value of a walk's last cell, keeping only the cells
still to be read, so a table far too large to hold is scored in O(n) memory.

- :func:`strip_score_fill`: the register strips storing no cell, for reads that are a
  diagonal pattern's three nearest neighbours;
- :func:`score_fill`: the last anti-diagonals of a diagonal pattern, one cooperative
  launch, for reads at any constant offsets the pattern allows;
- :func:`ring_score_fill`: the last rows (columns) of a row (column) pattern, one
  cooperative launch, every read checked on the device.

The last two check each value as it is stored where it may not fit the table's dtype
(:func:`runtime.backends.walk.value_bounds`; the strips serve only where nothing can
misfit), the first that does not recorded in ``ck``.

Assumptions: 2-D tables; the walk (:func:`runtime.schedule.score_plan.score_plan`) keeps
enough slices for the farthest read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR
from depgraph.model import Recurrence
from patterns import DIAGONAL_FLIPS, PATTERNS, STEP_SOURCE, last_cell
from runtime.backends.cuda.cells import flip, narrow_note, rewritten_cell
from runtime.backends.cuda.device import (
    THREADS,
    Launches,
    coherent_names,
    compile_kernel,
    cooperative_blocks,
    cuda_module,
    run,
    simulated,
)
from runtime.backends.cuda.strip_layout import score_block
from runtime.backends.cuda.strips import (
    frame_offsets,
    strip_grid,
    strip_kernel,
    strip_narrowing,
)
from runtime.backends.emit import Emitter, arg_tail
from runtime.backends.rewrite import CHECK
from runtime.backends.walk import (
    ARG,
    CHECK_SLOTS,
    arg_reads,
    checked_read_source,
    checks,
    emit_store,
    slot,
)

__all__ = ["ScoreFill", "RingFill", "score_fill", "strip_score_fill", "ring_score_fill",
           "zero_strided"]


@dataclass(frozen=True)
class ScoreFill:
    """A score-only fill: the value of the pattern's last cell, the cells it kept (and what
    they were, ``note``), its times in seconds, and ``ck``, what its checks found
    (:data:`runtime.backends.walk.CHECK_SLOTS`; nothing for the strips)."""

    value: Any
    cell: tuple[int, int]
    kept: int
    note: str
    h2d_s: float
    compute_s: float
    compile_s: float
    ck: np.ndarray = field(default_factory=lambda: np.zeros((1, CHECK_SLOTS), np.int64))


def score_fill(rec: Recurrence, ir: CellIR, pattern_index: int,
               bounds: tuple[int, int] | None = None, threads: int = THREADS) -> ScoreFill:
    """The value of the last cell a diagonal pattern fills (``(n-1, m-1)`` for NOSE),
    keeping only the anti-diagonals still to be read: O(n) memory instead of O(n m).

    The reads must be at constant offsets
    (:meth:`depgraph.frontend.ir.CellIR.constant_offsets`), so the window of live
    diagonals is known before the fill: ``1 + `` the farthest read, in diagonals.  One
    cooperative launch walks every diagonal, a grid-wide barrier between diagonals.
    Each value is checked within ``bounds`` unless ``None``.  ``SourceUnavailable`` when
    the reads are not at constant offsets; ``ValueError`` for a pattern that is not
    diagonal or a read outside its regions.
    """
    code = PATTERNS[pattern_index].code
    if code not in DIAGONAL_FLIPS:
        raise ValueError(f"the score-only fill is for the diagonal patterns, not {code}")
    rows, cols = DIAGONAL_FLIPS[code]
    frame = frame_offsets(ir, code)
    if any(du > 0 or dv > 0 or (du, dv) == (0, 0) for du, dv in frame):
        raise ValueError(f"a read at a constant offset falls outside {code}'s regions")
    window = 1 + max((-(du + dv) for du, dv in frame), default=0)
    n, m = rec.shape
    read = Emitter()
    with read.block("def read(D, shape, x0, x1, a, b)"):
        read("n = shape[0]", "m = shape[1]", f"ua = {flip('a', 'n', rows)}",
             f"return D[(ua + {flip('b', 'm', cols)}) % {window}, ua]")
    # reads of the arguments no certificate proves are checked, the cell's checks then
    # (n, m, ck): the edge cells checked on the CPU first say nothing of them
    checked = arg_reads(rec, ir, f"cuda.atomic.cas(ck[2], {ARG}, 0, 1) == 0", "ck[2]")
    cell = rewritten_cell(rec, ir, read.source, {} if checked is None else {"cuda": cuda_module()},
                          arg_reads=checked,
                          stop=None if checked is None else f"{CHECK}[2][{ARG}] != 0")
    sink = "(n, m)" if checked is None else "(n, m, ck)"
    args = arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def score(D, ck, n, m{args})"):
        e("grid = cuda.cg.this_grid()", "first = cuda.grid(1)", "stride = cuda.gridsize(1)")
        with e.block("for s in range(n + m - 1)"):
            e("u = max(0, s - m + 1) + first", "hi = min(n - 1, s) + 1")
            with e.block("while u < hi"):
                e("v = s - u", f"i = {flip('u', 'n', rows)}", f"j = {flip('v', 'm', cols)}")
                emit_store(e, f"D[s % {window}, u]", f"cell(D, i, j{args}, {sink})",
                           ("i", "j"), bounds, "ck", "cuda.atomic.cas(ck, 7, 0, 1) == 0")
                e("u += stride")
            e("grid.sync()")
    kern = compile_kernel(rec, e.source, "score", cell)
    got: dict[str, Any] = {}

    def launches(cuda: Any, D: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        got["ck"] = dsched[0]
        args = (D, dsched[0], n, m, *dargs)
        return [(cooperative_blocks(kern, args, threads, n), threads, args)]

    res = run(rec, kern, "C", True, launches, (checks(1, rec.shape)[0],),
              label="one cooperative launch", shape=(window, n))
    assert res.table is not None
    value = res.table[(n + m - 2) % window, n - 1]
    return ScoreFill(value, last_cell(DIAGONAL_FLIPS[code], rec.shape), window * n,
                     f"the last {window} anti-diagonals kept, one cooperative launch",
                     res.h2d_s, res.compute_s, res.compile_s,
                     got["ck"].copy_to_host()[None, :])


def strip_score_fill(rec: Recurrence, ir: CellIR, pattern_index: int,
                     rows_per_lane: int | None = None, cols_per_step: int | None = None,
                     narrow: bool = True) -> ScoreFill:
    """The value of the last cell a diagonal pattern fills, by the register strips of
    :func:`runtime.backends.cuda.strips.strip_fill` storing no cell: O(m) memory, and no
    table traffic.  Blocks of ``rows_per_lane x cols_per_step`` cells a lane, by default
    :func:`runtime.backends.cuda.strip_layout.score_block`.

    Strip ``k`` hands its last row down in slot ``k % STRIP_SLOTS`` of a ring; its words
    carry ``k + 1``, so the strip below never takes a word an earlier strip left in the
    slot, and a slot is rewritten only after the strip below has read it (strip ``k + 2``
    reaches a column only after strip ``k + 1`` has computed it, from the words it read).
    The lane holding the last cell writes it out.  Same reads as the strips (the three
    nearest neighbours, ``ValueError`` otherwise), the same ``narrow``, and whole blocks
    past the table's edge for a cell that runs anywhere.
    """
    code = PATTERNS[pattern_index].code
    nw = strip_narrowing(rec, ir, narrow)
    R, C = score_block(rec.dtype, rec.shape[0], nw is not None)
    R, C = rows_per_lane or R, cols_per_step or C
    kern, _, sched, head = strip_kernel(rec, ir, pattern_index, R, C, True, nw=nw)
    nslots, m = head[1], rec.shape[1]

    def launches(cuda: Any, dO: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        shape = zero_strided(dO, rec.shape)  # the cell function's M: its shape, no cells
        return [(strip_grid(cuda, head[0]), 32, (shape, *dsched, *head, dO, *dargs))]

    block = f"register strips of {32 * R} rows ({R}x{C} cells a lane{narrow_note(nw)})"
    res = run(rec, kern, "C", True, launches, sched, shape=(1, 1),
              label=f"{block}, no cell stored")
    assert res.table is not None
    kept = "1 strip's last row" if nslots == 1 else f"{nslots} strips' last rows"
    return ScoreFill(res.table[0, 0], last_cell(DIAGONAL_FLIPS[code], rec.shape),
                     nslots * (m + C), f"{block} in one launch, no cell stored: {kept} kept",
                     res.h2d_s, res.compute_s, res.compile_s)


def zero_strided(dA: Any, shape: tuple[int, int]) -> Any:
    """A view of device array ``dA``'s first element as an array of ``shape`` (every
    element the same memory), for code that needs an array's shape, not its cells."""
    if simulated():
        return type(dA)(np.lib.stride_tricks.as_strided(dA._ary, shape, (0, 0)))
    return type(dA)(shape=shape, strides=(0, 0), dtype=dA.dtype, stream=dA.stream,
                    gpu_data=dA.gpu_data)


@dataclass(frozen=True)
class RingFill:
    """A score-only fill of a row or column pattern: the ring of the last ``keep`` rows
    (columns), the first out-of-bounds read (``ck``, as
    :func:`runtime.backends.walk.checked_read_source` records it) and its times in
    seconds."""

    ring: np.ndarray
    ck: np.ndarray
    h2d_s: float
    compute_s: float
    compile_s: float


def ring_score_fill(rec: Recurrence, ir: CellIR, pattern_index: int, keep: int,
                    bounds: tuple[int, int] | None = None,
                    threads: int = THREADS) -> RingFill:
    """A row (column) pattern filled keeping only its last ``keep`` rows (columns), slice
    ``t`` in slot ``t % keep``: one cooperative launch, a grid-wide barrier between
    steps, so a slot is overwritten only after every cell that reads it is done.

    The reads must reach at most ``keep - 1`` rows (columns) back, as
    :func:`runtime.schedule.score_plan.score_plan` finds them; each is checked against
    the table's shape, the first bad one recorded (``RingFill.ck``), not followed; each
    value within ``bounds`` unless ``None``.
    ``ValueError`` for a pattern that is not a row or column pattern.
    """
    p = PATTERNS[pattern_index]
    if p.code in DIAGONAL_FLIPS:
        raise ValueError(f"the ring score is for the row and column patterns, not {p.code}")
    axis = 0 if p.storage == "rows" else 1
    n, m = rec.shape
    K = int(min(keep, rec.shape[axis]))

    def at(a: str, b: str) -> str:
        return slot(axis, f"int64({a})", f"int64({b})", K)

    read = checked_read_source("cuda.atomic.cas(ck, 2, 0, 1) == 0",  # the first one
                               [f"return LOAD(B, ({at('a', 'b')}))"])
    cell = rewritten_cell(rec, ir, read, {**coherent_names(cuda_module()), "int64": np.int64},
                          stop=f"{CHECK}[2] != 0 or {CHECK}[{ARG}] != 0",
                          arg_reads=arg_reads(rec, ir, f"cuda.atomic.cas(ck, {ARG}, 0, 1) == 0"))
    src = STEP_SOURCE[p.code]
    args = arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def ring(B, ck, steps{args})"):
        e("n = ck[0]", "m = ck[1]", "grid = cuda.cg.this_grid()")
        with e.block("for t in range(steps)"):
            e(src.fix, f"q = {src.lo} + cuda.grid(1)", f"hi = {src.hi}")
            with e.block("while q < hi"):
                e(f"i = {src.i}", f"j = {src.j}")
                emit_store(e, f"B[{at('i', 'j')}]", f"cell(B, i, j{args}, ck)", ("i", "j"),
                           bounds, "ck", "cuda.atomic.cas(ck, 7, 0, 1) == 0")
                e("q += cuda.gridsize(1)")
            e("grid.sync()")
    kern = compile_kernel(rec, e.source, "ring", cell, int64=np.int64)
    ck = checks(1, rec.shape)[0]
    got: dict[str, Any] = {}

    def launches(cuda: Any, dB: Any, dargs: tuple[Any, ...], dsched: tuple[Any, ...]) -> Launches:
        got["ck"] = dsched[0]
        args = (dB, dsched[0], p.steps((n, m)), *dargs)
        return [(cooperative_blocks(kern, args, threads, rec.shape[1 - axis]), threads, args)]

    res = run(rec, kern, "C", True, launches, (ck,), label="one cooperative launch",
              shape=(K, m) if axis == 0 else (n, K))
    assert res.table is not None
    return RingFill(res.table, got["ck"].copy_to_host(), res.h2d_s, res.compute_s,
                    res.compile_s)
