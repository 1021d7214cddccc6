"""Score-only fills: the value of the last cell a pattern fills, keeping only the cells
still to be read, so a table far too large to hold (a 10⁶ × 10⁶ LCS, a knapsack of
capacity 10⁹) is scored in O(n) memory.

Assumptions: the recurrence is 2-D and its reads of ``M`` are at constant offsets, found
in the source (:mod:`runtime.source`) instead of by tracing the table:

- every read at a constant offset (``M[i - 1, j - 1]``) that a diagonal pattern allows
  (LCS, edit distance): the fill walks the anti-diagonals of the pattern's NOSE frame
  (:data:`patterns.DIAGONAL_FLIPS`) and keeps the last ``W``, ``W - 1`` the farthest
  read back in diagonals, the cells of a diagonal split among threads (CPU) or the GPU
  (:func:`runtime.cuda.score_fill`); the ``python`` backend walks rows and keeps the
  last ``K``, ``K - 1`` the farthest read upwards;
- or every read's row (column) at a constant offset of one sign, whatever its column
  (row), data-dependent included (knapsack's ``M[i - 1, j - w[i]]``): a row (column)
  pattern; the fill walks rows (columns) in that order and keeps the last ``K``, the
  cells of a row (column) split among threads (CPU) or the GPU
  (:func:`runtime.cuda.ring_score_fill`, every read checked there).

CPU threads meet at a barrier (:func:`runtime.intrinsics.arrive`) between diagonals or
rows, so they run only where :func:`runtime.cpu.barrier_threads` says a barrier holds
(else one core).

Reads are checked: every read on the CPU backends and in the GPU's rows (columns);
before a GPU window fill, the cells within the farthest read of the frame's first rows
and columns (the only cells whose constant offsets can leave the table) are filled on
the CPU with checked reads.  So an out-of-bounds read is reported, naming the cell and
the read, as in every fill.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from depgraph.api import Recurrence
from depgraph.errors import (CellFunctionError, NoPatternError, OutOfBoundsError,
                             RecurrenceError, TooLargeError)
from patterns import (BY_CODE, DIAGONAL_FLIPS, PATTERNS, REGIONS, frame_offset, last_cell,
                      matching, region_codes)
from runtime.cache import CACHE, arg_tail, compile_source
from runtime.source import (SourceUnavailable, axis_offsets, constant_offsets,
                            function_namespace, rewrite_reads)

__all__ = ["ScorePlan", "ScoreResult", "score_plan", "score", "verify_score"]

#: Line patterns by (axis, walking backwards): their ``pi`` along that axis only.
_LINES = {(int(p.pi[0] == 0), min(p.pi) < 0): p.code for p in PATTERNS if 0 in p.pi}


@dataclass(frozen=True)
class ScorePlan:
    """How a score-only fill walks a recurrence: ``pattern``'s order, slices along
    ``axis`` (0 rows, 1 columns) in order, ``flips`` (rows, columns reversed), the last
    ``keep`` slices kept; ``back``: how many anti-diagonals a diagonal pattern's reads go
    back (0 for line patterns); ``left``: how far a diagonal pattern's reads go back across
    slices (0 for line patterns); ``gpu``: whether the GPU window fill serves it."""

    pattern: str
    axis: int
    flips: tuple[bool, bool]
    keep: int
    back: int
    left: int
    gpu: bool

    @property
    def diagonals(self) -> int:
        """Anti-diagonals a diagonal pattern's window keeps: ``back`` and this one."""
        return self.back + 1

    def last(self, shape: tuple[int, ...]) -> tuple[int, int]:
        """The cell the walk fills last."""
        return last_cell(self.flips, shape)


@dataclass(frozen=True)
class ScoreResult:
    """A score-only fill: the value of ``cell``, the last cell ``pattern`` fills, and for
    a walk by rows (columns) ``line``, the whole last row (column) filled.

    ``kept`` is the number of cells the fill held at once; times in seconds (``check_s``:
    the CPU check of the edge cells before a GPU fill).
    """

    value: Any
    cell: tuple[int, int]
    pattern: str
    backend: str
    kept: int
    compute_s: float
    compile_s: float
    h2d_s: float = 0.0
    check_s: float = 0.0
    notes: tuple[str, ...] = field(default=())
    line: np.ndarray | None = None

    @property
    def line_kind(self) -> str | None:
        """``"row"`` or ``"column"``: what ``line`` is (the pattern's storage order);
        ``None`` without a line."""
        return None if self.line is None else BY_CODE[self.pattern].storage[:-1]

    @property
    def line_at(self) -> tuple[Any, Any] | None:
        """Where ``line`` sits in the table: ``(i, slice(None))`` for a row,
        ``(slice(None), j)`` for a column; ``None`` without a line."""
        if self.line is None:
            return None
        i, j = self.cell
        return (i, slice(None)) if self.line_kind == "row" else (slice(None), j)

    @property
    def line_name(self) -> str | None:
        """``line_at`` written as ``M[i, :]`` or ``M[:, j]``."""
        at = self.line_at
        return None if at is None else (
            "M[" + ", ".join(":" if isinstance(k, slice) else str(k) for k in at) + "]")

    def to_json(self) -> dict[str, Any]:
        value = self.value.item() if isinstance(self.value, np.generic) else self.value
        return {"value": value, "cell": list(self.cell), "pattern": self.pattern,
                "backend": self.backend, "kept_cells": self.kept,
                "compute_s": self.compute_s, "compile_s": self.compile_s,
                "h2d_s": self.h2d_s, "check_s": self.check_s, "notes": list(self.notes),
                "line": self.line_name, "line_kind": self.line_kind,
                "line_cells": None if self.line is None else len(self.line)}


def _diagonal_plan(rec: Recurrence) -> ScorePlan | str:
    try:
        offsets = constant_offsets(rec.func, 2)
    except SourceUnavailable as exc:
        return str(exc)
    di, dj = (np.array([o[k] for o in offsets], dtype=np.int64) for k in (0, 1))
    regions = {REGIONS[c] for c in region_codes(di, dj)}
    diagonal = [c for c in matching(regions) if c in DIAGONAL_FLIPS]
    if not diagonal:
        return f"no diagonal pattern allows the reads ({', '.join(sorted(regions))})"
    frame = [frame_offset(diagonal[0], o) for o in offsets]
    up = max((-du for du, _ in frame), default=0)
    left = max((-dv for _, dv in frame), default=0)
    back = max((-(du + dv) for du, dv in frame), default=0)
    return ScorePlan(diagonal[0], 0, DIAGONAL_FLIPS[diagonal[0]], up + 1, back, left, True)


def _line_plan(rec: Recurrence, axis: int) -> ScorePlan | str:
    name = ("row", "column")[axis]
    try:
        offsets = axis_offsets(rec.func, 2, axis)
    except SourceUnavailable as exc:
        return f"{name}s: {exc}"
    if not (all(c < 0 for c in offsets) or all(c > 0 for c in offsets)):
        return f"{name}s: reads {name}s {offsets} away, not all on one side"
    back = offsets[0] > 0
    flips = (back, False) if axis == 0 else (False, back)
    return ScorePlan(_LINES[axis, back], axis, flips, max(abs(c) for c in offsets) + 1, 0, 0,
                     False)


def score_plan(rec: Recurrence) -> ScorePlan:
    """How a score-only fill walks ``rec`` (see the module docstring): a diagonal
    pattern when its reads allow one, else rows, else columns.

    ``NoPatternError`` when the recurrence is not 2-D or its reads fit neither.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> score_plan(paths)
    ScorePlan(pattern='NOSE', axis=0, flips=(False, False), keep=2, back=1, left=1, gpu=True)
    >>> @recurrence(shape=(4, 5), dtype=np.int64, args=(np.array([1, 2, 1, 3]),))
    ... def knap(M, i, j, w):
    ...     return 0 if i == 0 else max(M[i - 1, j], M[i - 1, j - w[i]] + 1 if j >= w[i] else 0)
    >>> score_plan(knap)
    ScorePlan(pattern='RUD', axis=0, flips=(False, False), keep=2, back=0, left=0, gpu=False)
    """
    if rec.ndim != 2:
        raise NoPatternError(f"a score-only fill takes 2-D tables, not {rec.ndim}-D")
    why = []
    for plan in (_diagonal_plan(rec), _line_plan(rec, 0), _line_plan(rec, 1)):
        if isinstance(plan, ScorePlan):
            return plan
        why.append(plan)
    raise NoPatternError("a score-only fill needs the reads of M at constant offsets, in a "
                         "diagonal pattern or along rows or columns: " + "; ".join(why))


#: The CPU walks: ``ring`` keeps the last slices, ``chunks`` threads splitting each slice
#: with a barrier between slices (one chunk for a diagonal pattern's rows, whose cells
#: read their left neighbour); ``window`` keeps the last ``W`` anti-diagonals of a diagonal
#: pattern, the threads splitting each diagonal, a barrier between diagonals.  Each
#: thread records out-of-bounds reads in its own row of ``ck``.
_RING = """
def ring(B, ck, bar, chunks, u0, u1, v1, n, m{args}):
    for chunk in {loop}(chunks):
        c = ck[chunk]
        per = (v1 + chunks - 1) // chunks
        for u in range(u0, u1):
            for v in range(chunk * per, min(v1, (chunk + 1) * per)):
                i = {i}
                j = {j}
                B[{slot}] = cell(B, i, j{args}, c)
            {sync}
"""

_WINDOW = """
def window(D, ck, bar, chunks, s0, s1, n, m{args}):
    for chunk in prange(chunks):
        c = ck[chunk]
        for s in range(s0, s1):
            lo = max(0, s - m + 1)
            hi = min(n - 1, s) + 1
            per = (hi - lo + chunks - 1) // chunks
            for u in range(lo + chunk * per, min(hi, lo + (chunk + 1) * per)):
                v = s - u
                D[s % {W}, u] = cell(D, {i}, {j}{args}, c)
            arrive(bar, chunks * (s + 1))
"""

#: A checked read of the ring or window ``B``: an out-of-bounds read is recorded in
#: ``ck[2:7]`` (flag, cell, read; the table's shape is ``ck[0:2]``) when ``{record}`` holds
#: (``True`` here; on the GPU, only for the first thread to set the flag), then
#: ``{found}``.
_CHECKED_READ = """
def read(B, ck, x0, x1, a, b):
    if a < 0 or a >= ck[0] or b < 0 or b >= ck[1]:
        if {record}:
            ck[3] = x0
            ck[4] = x1
            ck[5] = a
            ck[6] = b
        ck[2] = 1
        return B[0, 0]
    {found}
"""


def _slot(axis: int, i: str, j: str, K: int) -> str:
    """Where cell ``(i, j)`` lives in the ring ``B`` of ``K`` slices: its row (column)
    modulo ``K``; the source text, for the compiled sweep (a constant ``K``: a modulo by
    the ring's shape, read at run time, made every read an integer division)."""
    return f"{i} % {K}, {j}" if axis == 0 else f"{i}, {j} % {K}"


def _ring_slot(axis: int, B: np.ndarray, i: int, j: int) -> tuple[int, int]:
    """:func:`_slot` in Python."""
    return (i % B.shape[0], j) if axis == 0 else (i, j % B.shape[1])


def _checked_cell(rec: Recurrence, key: tuple[Any, ...], found: str) -> Any:
    """The cell function compiled for the CPU with its reads of ``M`` checked
    (:data:`_CHECKED_READ`), an in-bounds read returning ``found`` (source)."""
    from runtime import cpu

    def build() -> Any:
        ns = function_namespace(rec.func)
        ns["_dg_read"] = cpu._jit(compile_source(_CHECKED_READ.format(record=True, found=found),
                                                 "read", {}),
                                  inline="always")
        src = rewrite_reads(rec.func, 2, "_dg_read", "_dg_cell")
        return cpu._jit(compile_source(src, "_dg_cell", ns), inline="always")

    return CACHE.get(rec.func, ("cpu", *key), build)


def _walk(plan: ScorePlan, x: str, axis: int, size: str = "") -> str:
    """Index ``axis`` of the cell at position ``x`` of the walk, flipped or not (source;
    ``size``: the side's length, ``n`` or ``m`` unless given)."""
    return f"{size or 'nm'[axis]} - 1 - {x}" if plan.flips[axis] else x


def _ring_kernel(rec: Recurrence, plan: ScorePlan, parallel: bool) -> Callable[[bool], Any]:
    """The CPU ring sweep of ``plan`` with checked reads: slices ``u0 .. u1 - 1`` in walk
    order, each its first ``v1`` cells, split among ``chunks`` threads when ``parallel``
    (a line pattern's slices: their cells read only earlier slices)."""
    from runtime import cpu

    outer, inner = (0, 1) if plan.axis == 0 else (1, 0)
    K = min(plan.keep, rec.shape[outer])
    cell = _checked_cell(rec, ("ring-cell", plan.axis, K),
                         f"return B[{_slot(plan.axis, 'a', 'b', K)}]")
    index = {outer: _walk(plan, "u", outer), inner: _walk(plan, "v", inner)}
    src = _RING.format(args=arg_tail(len(rec.args)), i=index[0], j=index[1],
                       slot=_slot(plan.axis, "i", "j", K), loop="prange" if parallel else "range",
                       sync="arrive(bar, chunks * (u + 1))" if parallel else "pass")
    return cpu._kernel(rec, f"ring-{plan.pattern}-{parallel}-{K}", src, "ring", cell,
                       parallel=parallel)


def _window_kernel(rec: Recurrence, plan: ScorePlan) -> Callable[[bool], Any]:
    """The CPU window walk of a diagonal ``plan``, its threads splitting each
    anti-diagonal (``D[s % W, u]`` holds the cell at row ``u`` of the NOSE frame's
    diagonal ``s``)."""
    from runtime import cpu

    W = plan.diagonals
    ua, va = _walk(plan, "a", 0, "ck[0]"), _walk(plan, "b", 1, "ck[1]")
    cell = _checked_cell(rec, ("window-cell", plan.pattern, W),
                         f"ua = {ua}\n    return B[(ua + {va}) % {W}, ua]")
    src = _WINDOW.format(args=arg_tail(len(rec.args)), W=W, i=_walk(plan, "u", 0),
                         j=_walk(plan, "v", 1))
    return cpu._kernel(rec, f"window-{plan.pattern}-{W}", src, "window", cell, parallel=True)


def _raise_out_of_bounds(ck: np.ndarray, shape: tuple[int, int]) -> None:
    """``OutOfBoundsError`` for the first thread's row of ``ck`` that recorded one."""
    for row in ck[ck[:, 2] != 0][:1]:
        raise OutOfBoundsError((int(row[3]), int(row[4])), (int(row[5]), int(row[6])), shape)


def _checks(threads: int, shape: tuple[int, int]) -> np.ndarray:
    """A row of ``ck`` for each thread: the table's shape, then room for a bad read."""
    ck = np.zeros((threads, 7), dtype=np.int64)
    ck[:, 0], ck[:, 1] = shape
    return ck


def _ring(rec: Recurrence, plan: ScorePlan) -> np.ndarray:
    """The ring of the last ``plan.keep`` slices (:func:`_kept`)."""
    n, m = rec.shape
    shape = (min(plan.keep, n), m) if plan.axis == 0 else (n, min(plan.keep, m))
    slices = ("rows", "columns")[plan.axis]
    return _kept(rec, plan, shape, f"{plan.keep} {slices} of {shape[1 - plan.axis]:,} cells")


def _kept(rec: Recurrence, plan: ScorePlan, shape: tuple[int, int], what: str) -> np.ndarray:
    """A zeroed buffer of ``shape`` cells for the cells a score keeps (``what``, for the
    message); ``TooLargeError`` when it would not fit in the free memory."""
    from depgraph.trace import available_memory, format_bytes

    nbytes = shape[0] * shape[1] * rec.dtype.itemsize
    if nbytes > available_memory():
        raise TooLargeError(f"a score-only fill of {plan.pattern} keeps {what} "
                            f"({format_bytes(nbytes)}), more than the free memory")
    return np.zeros(shape, dtype=rec.dtype)


class _Ring:
    """``M`` for the ``python`` backend: the last ``keep`` slices, reads checked."""

    def __init__(self, rec: Recurrence, plan: ScorePlan) -> None:
        self.buf = _ring(rec, plan)
        self.axis, self.shape, self.cell = plan.axis, rec.shape, (0, 0)

    def slot(self, i: int, j: int) -> tuple[int, int]:
        return _ring_slot(self.axis, self.buf, i, j)

    def __getitem__(self, key: tuple[int, int]) -> Any:
        a, b = int(key[0]), int(key[1])
        if not (0 <= a < self.shape[0] and 0 <= b < self.shape[1]):
            raise OutOfBoundsError(self.cell, (a, b), self.shape)
        return self.buf[self.slot(a, b)]


def _python_score(rec: Recurrence, plan: ScorePlan,
                  progress: Callable[[int], None] | None) -> tuple[np.ndarray, float]:
    n, m = rec.shape
    ring = _Ring(rec, plan)
    rows = range(n - 1, -1, -1) if plan.flips[0] else range(n)
    cols = range(m - 1, -1, -1) if plan.flips[1] else range(m)
    outer, inner = (rows, cols) if plan.axis == 0 else (cols, rows)
    t0 = time.perf_counter()
    for done, x in enumerate(outer, 1):
        for y in inner:
            i, j = (x, y) if plan.axis == 0 else (y, x)
            ring.cell = (i, j)
            try:
                ring.buf[ring.slot(i, j)] = rec.func(ring, i, j, *rec.args)
            except RecurrenceError:
                raise
            except Exception as exc:
                raise CellFunctionError((i, j), f"{type(exc).__name__}: {exc}") from None
        if progress:
            progress(done * len(inner))
    return ring.buf, time.perf_counter() - t0


def score(rec: Recurrence, backend: str = "auto",
          progress: Callable[[int], None] | None = None,
          plan: ScorePlan | None = None) -> ScoreResult:
    """The value of the last cell of ``rec``'s walk (see the module docstring), filled
    on ``backend`` (``auto``, ``cuda``, ``cpu`` or ``python``); ``progress`` is called with
    the cells done so far (CPU backends); ``plan``: :func:`score_plan`'s, when the caller
    already has it.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> r = score(paths, backend="cpu")
    >>> r.cell, int(r.value), r.pattern, r.kept
    ((3, 4), 35, 'NOSE', 8)
    """
    from runtime.fill import resolve_backend

    plan = plan or score_plan(rec)
    backend, why = resolve_backend(backend)
    notes = [why]
    n, m = rec.shape
    slices = ("rows", "columns")[plan.axis]
    notes.append(f"reads at constant {'' if plan.gpu else slices[:-1] + ' '}offsets allow "
                 f"{plan.pattern}")
    if backend == "python":
        notes.append(f"the last {plan.keep} {slices} kept")
        B, run_s = _python_score(rec, plan, progress)
        return _result(plan, B, plan.last(rec.shape), backend, run_s, 0.0, notes)
    if backend == "cpu":
        return _cpu_score(rec, plan, progress, notes)
    from runtime import cpu, cuda

    if not plan.gpu:  # rows or columns: a ring, every read checked on the device
        ring = cuda.ring_score_fill(rec, BY_CODE[plan.pattern].index, plan.keep)
        _raise_out_of_bounds(ring.ck[None, :], rec.shape)
        notes += [f"the last {plan.keep} {slices} kept",
                  f"one cooperative launch, a grid barrier between {slices}"]
        return replace(_result(plan, ring.ring, plan.last(rec.shape), backend, ring.compute_s,
                               ring.compile_s, notes), h2d_s=ring.h2d_s)

    kern = _ring_kernel(rec, plan, False)
    B = _ring(rec, plan)
    ck = _checks(1, rec.shape)
    bar = np.zeros(1, dtype=np.int64)
    # the GPU: the edge cells checked on the CPU first (the first `keep` rows, then the
    # first `left` columns of every row: reads go up and left, so these cells read only these)
    K = min(n, plan.keep)
    check_s = cpu._call(kern, B, ck, bar, 1, 0, K, m, n, m, *rec.args).run_s
    if plan.left:
        check_s += cpu._call(kern, B, ck, bar, 1, K, n, min(m, plan.left), n, m,
                             *rec.args).run_s
    _raise_out_of_bounds(ck, rec.shape)
    index = BY_CODE[plan.pattern].index
    res = (cuda.strip_score_fill(rec, index) if cuda.serves_strips(rec, plan.pattern)
           else cuda.score_fill(rec, index))
    notes += [res.note,
              f"edge cells checked on the CPU first ({K} rows, {min(m, plan.left)} columns)"]
    return ScoreResult(res.value, res.cell, plan.pattern, backend, res.kept,
                       res.compute_s, res.compile_s, res.h2d_s, check_s, tuple(notes))


#: Cells a slice (an anti-diagonal, for a diagonal pattern) must have, on average, per
#: thread, before the CPU score splits each slice among threads (a barrier per slice): on
#: two cores the split won from LCS 256² up (docs/benchmarks.md).
PARALLEL_CELLS = 64


def _cpu_score(rec: Recurrence, plan: ScorePlan, progress: Callable[[int], None] | None,
               notes: list[str]) -> ScoreResult:
    """The CPU score: on every core that a barrier can hold (:func:`runtime.cpu.
    barrier_threads`) when slices are long enough, else on one core; in steps of about
    1% of the walk, each a compiled call, for progress and the out-of-bounds check."""
    from runtime import cpu

    n, m = rec.shape
    outer, inner = (n, m) if plan.axis == 0 else (m, n)
    slices = ("rows", "columns")[plan.axis]
    threads = cpu.barrier_threads()
    window = plan.gpu  # a diagonal pattern: anti-diagonals, the cells of each independent
    long = (n * m / (n + m - 1) if window else inner) >= PARALLEL_CELLS * threads
    chunks = threads if threads > 1 and long else 1
    across = (f"{chunks} threads: each {'anti-diagonal' if window else slices[:-1]} split "
              f"among them, a barrier between {'diagonals' if window else slices}"
              if chunks > 1 else "one core")
    if window:  # the window kernel walks whole diagonals; the ring's slices take a length
        W = plan.diagonals
        B = _kept(rec, plan, (W, n), f"{W} anti-diagonals of up to {n:,} cells")
        kern, steps, length = _window_kernel(rec, plan), n + m - 1, ()
        notes += [f"the last {W} anti-diagonals kept", across]
    else:
        kern, B = _ring_kernel(rec, plan, chunks > 1), _ring(rec, plan)
        steps, length = outer, (inner,)
        notes += [f"the last {plan.keep} {slices} kept", across]
    ck, bar = _checks(chunks, rec.shape), np.zeros(1, dtype=np.int64)
    step = max(1, steps // 100)
    compile_s = run_s = 0.0
    for s0 in range(0, steps, step):
        s1 = min(steps, s0 + step)
        t = cpu._call(kern, B, ck, bar, chunks, s0, s1, *length, n, m, *rec.args)
        compile_s, run_s = compile_s + t.compile_s, run_s + t.run_s
        _raise_out_of_bounds(ck, rec.shape)
        if progress:
            progress(_cells_before(s1, n, m) if window else s1 * inner)
    last = plan.last(rec.shape)
    if window:
        return ScoreResult(B[(n + m - 2) % B.shape[0], n - 1], last, plan.pattern, "cpu",
                           B.size, run_s, compile_s, notes=tuple(notes))
    return _result(plan, B, last, "cpu", run_s, compile_s, notes)


def _cells_before(s: int, n: int, m: int) -> int:
    """Cells of an ``n x m`` table on its anti-diagonals ``0 .. s - 1``.

    Examples
    --------
    >>> [_cells_before(s, 2, 3) for s in range(5)]
    [0, 1, 3, 5, 6]
    """
    d = np.arange(s)
    return int(np.sum(np.minimum(d, n - 1) - np.maximum(0, d - m + 1) + 1))


def _result(plan: ScorePlan, B: np.ndarray, last: tuple[int, int], backend: str,
            run_s: float, compile_s: float, notes: list[str]) -> ScoreResult:
    """The result of a ring sweep: the last cell, and for rows (columns) the last line."""
    slot = _ring_slot(plan.axis, B, *last)
    line = None
    if not plan.gpu:
        line = B[slot[0]].copy() if plan.axis == 0 else B[:, slot[1]].copy()
    return ScoreResult(B[slot], last, plan.pattern, backend, B.size, run_s, compile_s,
                       notes=tuple(notes), line=line)


def verify_score(result: ScoreResult, reference: np.ndarray) -> str:
    """Compare a score (and its last line) with the sequential reference table, as
    :func:`runtime.fill.compare` compares tables (``RecurrenceError`` when they differ)."""
    from runtime.fill import compare

    table = reference.copy()
    table[result.cell] = result.value
    if result.line_at is not None:
        table[result.line_at] = result.line
    return f"{result.line_name or f'M{result.cell}'} {compare(table, reference)}"
