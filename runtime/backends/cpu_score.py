"""Score-only fills on the CPU: the value of a cell of a walk (its last, or one the walk
stops after), keeping only the cells still to be read (:mod:`runtime.backends.walk`),
every read of ``M`` checked.

- ``ring``: a walk by rows (columns) keeps the last ``K`` slices; the cells of a slice
  split among threads, a barrier between slices (one chunk for a diagonal pattern's rows,
  whose cells read their left neighbour);
- ``window``: a diagonal walk keeps the last ``W`` anti-diagonals of its NOSE frame; the
  threads split each diagonal, a barrier between diagonals.

Threads meet at a barrier (:func:`runtime.backends.intrinsics.arrive`), so they run only
where :func:`runtime.backends.cpu.barrier_threads` says a barrier holds (else one core).
Each thread records out-of-bounds reads, and values that do not fit the table's dtype
(:func:`runtime.backends.walk.value_bounds`), in its own row of ``ck``.

Assumptions: 2-D tables; the walk (:class:`~runtime.backends.walk.ScorePlan`) keeps enough
slices for the farthest read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from depgraph import memory
from depgraph.errors import TooLargeError
from depgraph.frontend.ir import CellIR
from depgraph.frontend.source import function_namespace
from depgraph.memory import format_bytes
from depgraph.model import Recurrence
from runtime.backends import cpu
from runtime.backends.cache import CACHE
from runtime.backends.emit import Emitter, arg_tail, compile_source, digest, remember
from runtime.backends.rewrite import CHECK, rewrite_reads
from runtime.backends.walk import (
    ARG,
    ScorePlan,
    ScoreResult,
    checked_read_source,
    checks,
    emit_store,
    raise_found,
    arg_reads,
    ring_result,
    slot,
)

__all__ = ["checked_cell", "ring_kernel", "ring_buffer", "kept_buffer", "cpu_score",
           "PARALLEL_CELLS"]

#: Cells a slice (an anti-diagonal, for a diagonal pattern) must have, on average, per
#: thread, before the CPU score splits each slice among threads (a barrier per slice):
#: on two cores the split won from LCS 256² up (docs/benchmarks.md).
PARALLEL_CELLS = 64


def checked_cell(rec: Recurrence, ir: CellIR, found: list[str]) -> Any:
    """The cell function compiled for the CPU with its reads of ``M`` checked
    (:func:`runtime.backends.walk.checked_read_source`), an in-bounds read running the
    lines ``found``, and its reads of its array arguments where no certificate proves
    them (:func:`runtime.backends.walk.arg_reads`)."""
    read = checked_read_source("True", found)
    args = arg_reads(rec, ir, f"ck[{ARG}] == 0")  # the first, as the python walk names it
    body = rewrite_reads(ir, "_dg_read", "_dg_cell", stop=f"{CHECK}[2] != 0 or {CHECK}[{ARG}] != 0",
                         arg_reads=args)
    reads = {"_dg_read": read, **(args.reads if args else {})}
    key = digest(body, {"read": digest(read) if len(reads) == 1 else digest(str(reads)),
                        "cell": rec.func})  # its namespace too

    def build() -> Any:
        ns = function_namespace(rec.func)
        for name, source in reads.items():
            ns[name] = cpu.jit(compile_source(source, "read", {}), inline="always")
        return remember(cpu.jit(compile_source(body, "_dg_cell", ns), inline="always"), key)

    return CACHE.get(rec.func, ("cpu", key), build)


def _walk(plan: ScorePlan, x: str, axis: int, size: str = "") -> str:
    """Index ``axis`` of the cell at position ``x`` of the walk, flipped or not (source;
    ``size``: the side's length, ``n`` or ``m`` unless given)."""
    return f"{size or 'nm'[axis]} - 1 - {x}" if plan.flips[axis] else x


def ring_kernel(rec: Recurrence, ir: CellIR, plan: ScorePlan, parallel: bool,
                bounds: tuple[int, int] | None) -> Callable[[bool], Any]:
    """The CPU ring walk of ``plan`` with checked reads (and values, within ``bounds``
    unless ``None``): slices ``u0 .. u1 - 1`` in walk order, each its first ``v1`` cells,
    split among ``chunks`` threads when ``parallel`` (a line pattern's slices: their cells
    read only earlier slices)."""
    outer, inner = (0, 1) if plan.axis == 0 else (1, 0)
    K = min(plan.keep, rec.shape[outer])
    cell = checked_cell(rec, ir, [f"return B[{slot(plan.axis, 'a', 'b', K)}]"])
    index = {outer: _walk(plan, "u", outer), inner: _walk(plan, "v", inner)}
    args = arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def ring(B, ck, bar, chunks, u0, u1, v1, n, m{args})"), \
            e.block(f"for chunk in {'prange' if parallel else 'range'}(chunks)"):
        e("c = ck[chunk]", "per = (v1 + chunks - 1) // chunks")
        with e.block("for u in range(u0, u1)"):
            with e.block("for v in range(chunk * per, min(v1, (chunk + 1) * per))"):
                e(f"i = {index[0]}", f"j = {index[1]}")
                emit_store(e, f"B[{slot(plan.axis, 'i', 'j', K)}]", f"cell(B, i, j{args}, c)",
                           ("i", "j"), bounds, "c", "c[7] == 0")
            e("arrive(bar, chunks * (u + 1))" if parallel else "pass")
    return cpu.kernel(rec, e.source, "ring", cell, parallel=parallel)


def _window_kernel(rec: Recurrence, ir: CellIR, plan: ScorePlan,
                   bounds: tuple[int, int] | None) -> Callable[[bool], Any]:
    """The CPU window walk of a diagonal ``plan``, its threads splitting each
    anti-diagonal (``D[s % W, u]`` holds the cell at row ``u`` of the NOSE frame's
    diagonal ``s``), values checked within ``bounds`` unless ``None``."""
    W = plan.diagonals
    ua, va = _walk(plan, "a", 0, "ck[0]"), _walk(plan, "b", 1, "ck[1]")
    cell = checked_cell(rec, ir, [f"ua = {ua}", f"return B[(ua + {va}) % {W}, ua]"])
    args = arg_tail(len(rec.args))
    e = Emitter()
    with e.block(f"def window(D, ck, bar, chunks, s0, s1, n, m{args})"), \
            e.block("for chunk in prange(chunks)"):
        e("c = ck[chunk]")
        with e.block("for s in range(s0, s1)"):
            e("lo = max(0, s - m + 1)", "hi = min(n - 1, s) + 1",
              "per = (hi - lo + chunks - 1) // chunks")
            with e.block("for u in range(lo + chunk * per, min(hi, lo + (chunk + 1) * per))"):
                e("v = s - u", f"i = {_walk(plan, 'u', 0)}", f"j = {_walk(plan, 'v', 1)}")
                emit_store(e, f"D[s % {W}, u]", f"cell(D, i, j{args}, c)", ("i", "j"),
                           bounds, "c", "c[7] == 0")
            e("arrive(bar, chunks * (s + 1))")
    return cpu.kernel(rec, e.source, "window", cell, parallel=True)


def ring_buffer(rec: Recurrence, plan: ScorePlan) -> np.ndarray:
    """The ring of the last ``plan.keep`` slices (:func:`kept_buffer`)."""
    n, m = rec.shape
    shape = (min(plan.keep, n), m) if plan.axis == 0 else (n, min(plan.keep, m))
    slices = ("rows", "columns")[plan.axis]
    return kept_buffer(rec, plan, shape, f"{plan.keep} {slices} of {shape[1 - plan.axis]:,} cells")


def kept_buffer(rec: Recurrence, plan: ScorePlan, shape: tuple[int, int],
                what: str) -> np.ndarray:
    """A zeroed buffer of ``shape`` cells for the cells a score keeps (``what``, for the
    message); ``TooLargeError`` when it would not fit in the free memory."""
    nbytes = shape[0] * shape[1] * rec.dtype.itemsize
    if nbytes > memory.available_memory():
        raise TooLargeError(f"a score-only fill of {plan.pattern} keeps {what} "
                            f"({format_bytes(nbytes)}), more than the free memory")
    return np.zeros(shape, dtype=rec.dtype)


def cpu_score(rec: Recurrence, ir: CellIR, plan: ScorePlan, bounds: tuple[int, int] | None,
              progress: Callable[[int], None] | None, notes: list[str],
              cell: tuple[int, int]) -> ScoreResult:
    """The CPU score of ``cell``: the walk stops after the slice (anti-diagonal) holding
    it, on every core that a barrier can hold
    (:func:`runtime.backends.cpu.barrier_threads`) when slices are long enough, else on
    one core; in steps of about 1% of the walk, each a compiled call, for progress and
    the checks (reads, and values within ``bounds``:
    :func:`runtime.backends.walk.value_bounds`)."""
    n, m = rec.shape
    u, v = plan.position(cell, rec.shape)
    inner = m if plan.axis == 0 else n
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
        B = kept_buffer(rec, plan, (W, n), f"{W} anti-diagonals of up to {n:,} cells")
        kern, steps, length = _window_kernel(rec, ir, plan, bounds), u + v + 1, ()
        notes += [f"the last {W} anti-diagonals kept", across]
    else:
        kern, B = ring_kernel(rec, ir, plan, chunks > 1, bounds), ring_buffer(rec, plan)
        steps, length = (u, v)[plan.axis] + 1, (inner,)
        notes += [f"the last {plan.keep} {slices} kept", across]
    ck, bar = checks(chunks, rec.shape), np.zeros(1, dtype=np.int64)
    step = max(1, steps // 100)
    compile_s = run_s = 0.0
    for s0 in range(0, steps, step):
        s1 = min(steps, s0 + step)
        t = cpu.call(kern, B, ck, bar, chunks, s0, s1, *length, n, m, *rec.args)
        compile_s, run_s = compile_s + t.compile_s, run_s + t.run_s
        raise_found(ck, rec)
        if progress:
            progress(_cells_before(s1, n, m) if window else s1 * inner)
    filled = _cells_before(steps, n, m) if window else steps * inner
    if window:
        return ScoreResult(B[(u + v) % B.shape[0], u], cell, plan.pattern, "cpu", B.size,
                           run_s, compile_s, notes=tuple(notes), filled=filled)
    return ring_result(plan, B, cell, "cpu", run_s, compile_s, notes, filled)


def _cells_before(s: int, n: int, m: int) -> int:
    """Cells of an ``n x m`` table on its anti-diagonals ``0 .. s - 1``.

    Examples
    --------
    >>> [_cells_before(s, 2, 3) for s in range(5)]
    [0, 1, 3, 5, 6]
    """
    d = np.arange(s)
    return int(np.sum(np.minimum(d, n - 1) - np.maximum(0, d - m + 1) + 1))
