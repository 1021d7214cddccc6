"""CPU backend: the cell function compiled by numba, sequential and parallel fills.

Kernels are generated from small templates per recurrence (number of dimensions and args)
and compiled by numba; the cell function is called from them as a compiled function.

- ``sweep``: one core, a lexicographic order (:class:`patterns.Sweep`).  Its *checked*
  form runs a rewrite of the cell function whose reads of ``M`` record the region of
  every read and the first out-of-bounds read: one pass is both the sequential
  reference fill and an exact check of the reads at this size and with these inputs.
- ``pattern``: one parallel region for the whole fill; each thread takes its chunk of
  every step of a pattern and waits at a barrier (:mod:`runtime.intrinsics`) between
  steps.
- ``order``: Algorithm 2 over a stage order (``prange`` within a stage), any dimension;
  with ``parallel=False`` it is a sequential fill in that order.

Assumptions: the cell function is numba-compilable; tables are NumPy arrays whose layout
(C or F) the caller chose.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import numpy as np

from depgraph.api import Recurrence
from depgraph.errors import CompileError, RecurrenceError
from patterns import PATTERNS, REGIONS, STEP_SOURCE, Sweep
from runtime.cache import CACHE, arg_tail, compile_source
from runtime.source import function_namespace, rewrite_reads

__all__ = [
    "compiled_cell",
    "sweep_fill",
    "pattern_fill",
    "order_fill",
    "CHECK_SLOTS",
    "regions_of_flags",
    "touched_table",
    "barrier_threads",
    "OOB",
    "Timing",
]

#: Checked reads set ``ck[code] = 1`` for each region code read (0-8, see
#: ``patterns.regions``) and record an out-of-bounds read at ``ck[OOB:OOB + 5]`` as
#: (flag, cell i, cell j, read i, read j).
CHECK_SLOTS = 16
OOB = 9


def _numba() -> Any:
    import numba

    return numba


def _checked_read2() -> Any:
    numba = _numba()

    @numba.njit(inline="always")
    def read(M, ck, x0, x1, a, b):  # pragma: no cover - compiled
        if a < 0 or a >= M.shape[0] or b < 0 or b >= M.shape[1]:
            # unconditional stores (the last bad read is kept): reading the flag first to
            # keep the first one made every checked read about 10x slower (measured on LCS)
            ck[OOB] = 1
            ck[OOB + 1] = x0
            ck[OOB + 2] = x1
            ck[OOB + 3] = a
            ck[OOB + 4] = b
            return M[0, 0]
        # branch-free region code and an unconditional flag store: a branchy sign or a
        # conditional bit update made the sweep 10-15x slower (measured on LCS)
        s0 = np.int64(a > x0) - np.int64(a < x0)
        s1 = np.int64(b > x1) - np.int64(b < x1)
        ck[(s0 + 1) * 3 + s1 + 1] = 1
        return M[a, b]

    return read


def touched_table(rec: Recurrence, layout: str = "C") -> np.ndarray:
    """A zeroed table whose pages are already touched, so a timed fill excludes
    first-touch page faults (the GPU's table is allocated outside its timing too).

    Examples
    --------
    >>> from depgraph import recurrence
    >>> rec = recurrence(shape=(2, 3), dtype=np.int32)(lambda M, i, j: 0)
    >>> touched_table(rec, "F").flags.f_contiguous
    True
    """
    M = np.empty(rec.shape, rec.dtype, order=layout)
    M.fill(0)
    return M


def regions_of_flags(ck: np.ndarray) -> tuple[str, ...]:
    """Sorted region names flagged by a checked fill (``ck[code] != 0``).

    Examples
    --------
    >>> regions_of_flags(np.array([1, 1, 0, 1] + [0] * 12))
    ('Left', 'Up', 'UpLeft')
    """
    return tuple(sorted(REGIONS[c] for c in range(len(REGIONS)) if ck[c]))


def _jit(func: Any, **opts: Any) -> Any:
    return _numba().njit(**opts)(func)


def compiled_cell(rec: Recurrence, checked: bool = False) -> Any:
    """The cell function compiled for the CPU (``checked``: the region-recording rewrite)."""

    def build() -> Any:
        # inline="always": without it numba calls the cell function per cell, 12-20x slower
        if not checked:
            return _jit(rec.func, inline="always")
        ns = function_namespace(rec.func)
        ns["_dg_read"] = _checked_read2()
        src = rewrite_reads(rec.func, rec.ndim, "_dg_read", "_dg_cell")
        return _jit(compile_source(src, "_dg_cell", ns), inline="always")

    return CACHE.get(rec.func, ("cpu", "cell", checked), build)


_SWEEP = """
def sweep(M, ck{args}):
    n = M.shape[0]
    m = M.shape[1]
    for {outer} in {outer_range}:
        for {inner} in {inner_range}:
            M[i, j] = cell(M, i, j{args}{ck})
"""


def _sweep_source(sweep: Sweep, nargs: int, checked: bool) -> str:
    """The sweep's loops with constant directions: a direction read from a variable makes
    numba's loop about 10x slower (measured on LCS: 17 vs 1.6 ns a cell)."""
    rows = "range(n)" if sweep.si > 0 else "range(n - 1, -1, -1)"
    cols = "range(m)" if sweep.sj > 0 else "range(m - 1, -1, -1)"
    outer, inner = ("i", "j") if sweep.axis == 0 else ("j", "i")
    ranges = (rows, cols) if sweep.axis == 0 else (cols, rows)
    return _SWEEP.format(outer=outer, inner=inner, outer_range=ranges[0], inner_range=ranges[1],
                         args=arg_tail(nargs), ck=", ck" if checked else "")


_PATTERN = """
def pattern(M, bar, chunks{args}):
    n = M.shape[0]
    m = M.shape[1]
    for chunk in prange(chunks):
        for t in range({steps}):
            {fix}
            lo = {lo}
            hi = {hi}
            per = (hi - lo + chunks - 1) // chunks
            for q in range(lo + chunk * per, min(hi, lo + (chunk + 1) * per)):
                i = {i}
                j = {j}
                assume(i >= 0)
                assume(i < n)
                assume(j >= 0)
                assume(j < m)
                M[i, j] = cell(M, i, j{args})
            arrive(bar, chunks * (t + 1))
"""


_ORDER = """
def order(M, cells, ptr{args}):
    for s in range(ptr.shape[0] - 1):
        for q in {loop}(ptr[s], ptr[s + 1]):
            r = cells[q]
{unravel}
            M[{idx}] = cell(M, {idx}{args})
"""


def _unravel(ndim: int, indent: str = "            ") -> tuple[str, str]:
    """Source that turns flat ``r`` into ``x0, x1, ...`` for an ``ndim`` table ``M``."""
    lines = []
    for k in range(ndim - 1, 0, -1):
        lines.append(f"{indent}x{k} = r % M.shape[{k}]")
        lines.append(f"{indent}r = r // M.shape[{k}]")
    lines.append(f"{indent}x0 = r")
    return "\n".join(lines), ", ".join(f"x{k}" for k in range(ndim))


def _kernel(rec: Recurrence, kind: str, source: str, name: str, cell: Any,
            **jit: Any) -> Callable[[bool], Any]:
    """The generated kernel ``name`` as a function of ``nrt``: whether numba's reference
    counting is compiled in (see :func:`_call`)."""

    def make(nrt: bool) -> Any:
        def build() -> Any:
            from runtime import intrinsics

            numba = _numba()
            ns = {"cell": cell, "prange": numba.prange, "assume": intrinsics.assume,
                  "arrive": intrinsics.arrive}
            return _jit(compile_source(source, name, ns), _nrt=nrt, **jit)

        return CACHE.get(rec.func, ("cpu", kind, len(rec.args), rec.ndim, nrt), build)

    return make


@dataclass(frozen=True)
class Timing:
    """Seconds spent compiling (0 when cached) and running one compiled fill."""

    compile_s: float
    run_s: float


def _compile(make: Callable[[bool], Any], args: tuple[Any, ...]) -> Any:
    """Compile a kernel for these argument types, without numba's reference counting
    when the cell function allows it: the counting of the array arguments that numba
    leaves in a chunked inner loop made it up to 20x slower (knapsack, 1 thread); a cell
    function that allocates arrays needs it and gets it."""
    numba = _numba()
    sig = tuple(numba.typeof(a) for a in args)
    for nrt in (False, True):
        kernel = make(nrt)
        try:
            kernel.compile(sig)
            return kernel
        except numba.core.errors.NumbaError as exc:
            error = exc
    detail = " ".join(line.strip() for line in str(error).strip().splitlines()[:6])
    raise CompileError(
        f"numba could not compile the cell function: {detail} ... "
        "Use plain Python that numba supports in the cell function, or run with "
        "--backend python."
    ) from None


def _call(make: Callable[[bool], Any], *args: Any) -> Timing:
    """Compile a kernel (timed apart), then run it.

    numba's compile errors become ``CompileError``; errors raised while running become
    ``RecurrenceError``.
    """
    t0 = time.perf_counter()
    kernel = _compile(make, args)
    t1 = time.perf_counter()
    try:
        kernel(*args)
    except (ArithmeticError, IndexError, ValueError, AssertionError) as exc:
        raise RecurrenceError(
            f"the compiled fill raised {type(exc).__name__}: {exc}; run with --backend python "
            "to find the cell"
        ) from None
    return Timing(t1 - t0, time.perf_counter() - t1)


def barrier_threads() -> int:
    """Threads a barrier kernel may use: numba's thread count under the ``omp`` and
    ``workqueue`` layers, which run ``prange(T)`` as one iteration per thread; 1 under
    any other layer (``tbb`` may run two iterations on one thread, and a barrier between
    them would never open).

    Examples
    --------
    >>> barrier_threads() >= 1
    True
    """
    numba = _numba()
    from numba.np.ufunc.parallel import _launch_threads

    _launch_threads()
    if numba.threading_layer() not in ("omp", "workqueue"):
        return 1
    return int(numba.get_num_threads())


def sweep_fill(rec: Recurrence, M: np.ndarray, sweep: Sweep,
               checked: bool) -> tuple[np.ndarray, Timing]:
    """Fill a 2-D table one cell at a time in a lexicographic order.

    Returns the check array (``CHECK_SLOTS`` int64: region flags, then the first
    out-of-bounds read at ``OOB``; zeros unless ``checked``) and the timing.
    """
    ck = np.zeros(CHECK_SLOTS, dtype=np.int64)
    src = _sweep_source(sweep, len(rec.args), checked)
    kern = _kernel(rec, f"sweep-{checked}-{sweep}", src, "sweep", compiled_cell(rec, checked))
    return ck, _call(kern, M, ck, *rec.args)


def pattern_fill(rec: Recurrence, M: np.ndarray, pattern_index: int,
                 parallel: bool = True) -> Timing:
    """Fill a 2-D table step by step in a pattern, in one parallel region: each thread
    takes its chunk of every step (a plain inner loop per chunk compiles much tighter than
    ``prange`` over single cells) and waits at a barrier between steps (a parallel region
    per step cost more than the step itself on short rows: binomial 2048, 2 threads, ran
    at 0.3x the one-core sweep)."""
    step = STEP_SOURCE[PATTERNS[pattern_index].code]
    src = _PATTERN.format(args=arg_tail(len(rec.args)), steps=step.steps, fix=step.fix,
                          lo=step.lo, hi=step.hi, i=step.i, j=step.j)
    threads = barrier_threads() if parallel else 1
    if not parallel:
        src = src.replace("prange(", "range(")
    make = _kernel(rec, f"pattern-{parallel}-{pattern_index}", src, "pattern", compiled_cell(rec),
                   parallel=parallel)
    return _call(make, M, np.zeros(1, dtype=np.int64), threads, *rec.args)


def order_fill(rec: Recurrence, M: np.ndarray, cells: np.ndarray, ptr: np.ndarray,
               parallel: bool = True) -> Timing:
    """Algorithm 2: stage by stage (``cells[ptr[s]:ptr[s+1]]`` is stage ``s``, flat C-order
    indices), the cells of a stage in parallel; any number of dimensions."""
    unravel, idx = _unravel(rec.ndim)
    src = _ORDER.format(args=arg_tail(len(rec.args)), loop="prange" if parallel else "range",
                        unravel=unravel, idx=idx)
    kern = _kernel(rec, f"order-{parallel}", src, "order", compiled_cell(rec),
                   parallel=parallel)
    return _call(kern, M, cells, ptr, *rec.args)
