"""CPU backend: the cell function compiled by numba, sequential and parallel fills.

Kernels are generated per recurrence (number of dimensions and args) through the emitter
(:class:`runtime.backends.emit.Emitter`), compiled by numba and cached under the digest of
what they are made of; the cell function is called from them as a compiled function,
checked or not (:mod:`runtime.backends.cpu_cell`).

- ``sweep``: one core, a lexicographic order (:class:`patterns.Sweep`).  Its *checked*
  form runs a rewrite of the cell function whose reads of ``M`` record the region of
  every read and the first out-of-bounds read, and records the first cell of an integer
  table whose value does not fit its dtype: one pass is both the sequential reference
  fill and an exact check of the reads and values at this size and with these inputs.
  In any number of dimensions (:class:`patterns.LexOrder`), the checked reads flag a
  read out of the table or of a cell not yet filled in the order instead.
- ``pattern``: one parallel region for the whole fill; each thread takes its chunk of
  every step of a pattern and waits at a barrier (:mod:`runtime.backends.intrinsics`)
  between steps.  A checked row or column fill leaves unchecked, in the range of each
  step where they lie in the table, reads at the step's index plus an amount of the
  step's (:mod:`runtime.backends.cpu_split`).
- ``tiled``: a diagonal pattern by tiles in one parallel region (their shape and source
  from :mod:`runtime.backends.cpu_tiles`: long rows for a cell without loops, square for
  one with them, a tile's rows two at a time where ``cpu_tiles.paired`` says so): the
  tiles of an anti-diagonal of tiles go round the threads, each filled in the table's
  memory order, and the threads meet at a barrier between anti-diagonals of tiles.
- ``hyperplane``: a hyperplane schedule (:mod:`patterns.hyperplane`), any dimension,
  in one parallel region as ``pattern``: each thread takes its chunk of every step.
- ``order``: Algorithm 2 over a stage order (``prange`` within a stage), any dimension;
  with ``parallel=False`` it is a sequential fill in that order.

The fills compile their arrays as not aliasing each other
(:mod:`runtime.backends.noalias`) where the cell writes no array.

Assumptions: the cell function is numba-compilable; tables are NumPy arrays whose layout
(C or F) the caller chose.
"""

from __future__ import annotations

import ast
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.analysis.proof import Trusted
from depgraph.errors import CompileError, RecurrenceError, UsageError, setting
from depgraph.frontend.ir import CellIR
from depgraph.model import Recurrence
from patterns import PATTERNS, REGIONS, STEP_SOURCE, LexOrder, StepSource, Sweep
from runtime.backends import intrinsics
from runtime.backends.cache import CACHE
from runtime.backends.cpu_split import split, widened
from runtime.backends.emit import Emitter, arg_tail, compile_kept, compile_source, digest, \
    remember
from runtime.backends.cpu_cell import ARG, CHECK_SLOTS, MISFIT, OOB, compiled_cell, guard_nodes, \
    jit, numba_module, store_source
from runtime.backends.cpu_tiles import LOOP_TILE, MIN_TILE_COLUMNS, TILE, paired, tile_for, \
    tiled_source
from runtime.backends.noalias import compiler
from runtime.backends.shear import gather_line
from runtime.backends.walk import value_bounds
from patterns.hyperplane import Hyperplane, HyperplaneSource, Shear, step_source

__all__ = [
    "compiled_cell",
    "jit",
    "kernel",
    "call",
    "unravel",
    "sweep_fill",
    "pattern_fill",
    "peels",
    "tiled_fill",
    "hyperplane_fill",
    "unshear_fill",
    "first_touch",
    "TILE",
    "LOOP_TILE",
    "MIN_TILE_COLUMNS",
    "tile_for",
    "order_fill",
    "CHECK_SLOTS",
    "regions_of_flags",
    "touched_table",
    "barrier_threads",
    "thread_count",
    "OOB",
    "MISFIT",
    "ARG",
    "Timing",
]

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


def _sweep_source(order: LexOrder, nargs: int, checked: bool, fits: bool = False) -> str:
    """The loops of a lexicographic ``order`` (any number of dimensions) with constant
    directions: a direction read from a variable made numba's loop an order of magnitude
    slower.  ``fits``: the first value that is not a number or leaves ``LO..HI`` (the
    table's integer range, names the caller binds) is recorded at ``ck[MISFIT]``; LLVM
    drops the test where the value's type cannot leave it.

    Examples
    --------
    >>> print(_sweep_source(Sweep(1, 1, -1).order, 0, False), end="")
    def sweep(M, ck):
        n0 = M.shape[0]
        n1 = M.shape[1]
        for x1 in range(n1 - 1, -1, -1):
            for x0 in range(n0):
                M[x0, x1] = cell(M, x0, x1)
    """
    index = ", ".join(f"x{k}" for k in range(order.ndim))
    args = arg_tail(nargs)
    e = Emitter()
    with e.block(f"def sweep(M, ck{args})"):
        e(*(f"n{k} = M.shape[{k}]" for k in range(order.ndim)))
        with ExitStack() as nest:
            for axis, step in zip(order.axes, order.steps):
                walk = f"range(n{axis})" if step > 0 else f"range(n{axis} - 1, -1, -1)"
                nest.enter_context(e.block(f"for x{axis} in {walk}"))
            store_source(e, f"cell(M, {index}{args}{', ck' if checked else ''})", "ck", fits, index)
            if checked:  # the first cell with a bad read ends it: that cell is the one named
                with e.block("if ck[OOB]"):
                    e("return")
    return e.source


def _pattern_source(code: str, nargs: int, parallel: bool, checked: bool = False,
                    fits: bool = False, peel: bool = False, spans: bool = False) -> str:
    """One region for a whole pattern fill (:func:`pattern_fill`): each of ``chunks``
    threads takes its chunk of every step, then waits at the barrier.  ``checked``: the
    cell is the checked rewrite, each thread recording into its own row of ``ck`` (one
    row each, so no cache line is shared); ``fits`` as in :func:`_sweep_source`;
    ``peel``: each chunk's first cell apart (:func:`peels`); ``spans`` (checked, a row or
    column pattern): the chunk's cells in the range ``span`` gives the step
    (:mod:`runtime.backends.cpu_split`) by ``inner``, the cell with fewer reads checked,
    the others by ``cell``.

    Examples
    --------
    >>> print(_pattern_source("RUD", 0, True, checked=True).splitlines()[4])
            row = ck[chunk]
    >>> print(_pattern_source("RUD", 1, True, True, spans=True).splitlines()[12])
                s0, s1 = span(M, r, a0)
    """
    step = STEP_SOURCE[code]
    args = arg_tail(nargs)
    e = Emitter()
    with e.block(f"def pattern(M, bar, chunks, ck{args})"):
        e("n = M.shape[0]", "m = M.shape[1]")
        with e.block(f"for chunk in {'prange' if parallel else 'range'}(chunks)"):
            e("row = ck[chunk]")
            with e.block(f"for t in range({step.steps})"):
                e(step.fix, f"lo = {step.lo}", f"hi = {step.hi}",
                  "per = (hi - lo + chunks - 1) // chunks", "a = lo + chunk * per",
                  "b = min(hi, a + per)")
                if spans:
                    # the span's cells (from 1 where the cell is peeled: the checked loop
                    # takes a first cell 0), then the others in one loop: a copy of each
                    # cell, as each costs its compile
                    e(f"s0, s1 = span(M, {step.i if step.j == 'q' else step.j}{args})",
                      f"s0 = min(max(s0, a{', 1' if peel else ''}), b)",
                      "s1 = max(min(s1, b), s0)")
                    with e.block("for q in range(s0, s1)"):
                        _pattern_cell_store(e, step, args, checked, fits, peel, "inner")
                    with e.block("for u in range(a, b - (s1 - s0))"):
                        e("q = u if u < s0 else u + (s1 - s0)")
                        _pattern_cell_store(e, step, args, checked, fits)
                else:
                    if peel:
                        with e.block("if a < b"):
                            e("q = a")
                            _pattern_cell_store(e, step, args, checked, fits)
                    with e.block(f"for q in range(a{' + 1' if peel else ''}, b)"):
                        _pattern_cell_store(e, step, args, checked, fits, peel)
                e("arrive(bar, chunks * (t + 1))")
    return e.source


def peels(ir: CellIR, code: str) -> bool:
    """Whether :func:`pattern_fill` fills each chunk's first cell of a step apart for the
    cell ``ir`` in pattern ``code``: a row or column pattern (whose steps lie along the
    table's memory) and a cell without loops whose branches test the index that runs
    along the step.  In the loop after that cell the index is at least 1, and LLVM
    drops a test of it against 0 (the table's first row or column) and can vectorise a
    row; a loop from a computed start kept the test, a branch in every cell, which no
    ``assume`` of the index being at least 0 removed (docs/benchmarks.md, "a chunk's
    first cell apart").  A cell with loops does not vectorise, nor does a diagonal's
    step, and a second copy of the cell costs compile time alone (and ran slower on the
    diagonals).

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(4, 9), dtype=np.int64)
    ... def paths(M, i, j):
    ...     if i == 0 or j == 0:
    ...         return 1
    ...     return M[i - 1, j] + M[i - 1, j - 1]
    >>> peels(cell_ir(paths), "RUD"), peels(cell_ir(paths), "NOSE")
    (True, False)
    >>> @recurrence(shape=(4, 9), dtype=np.int64)
    ... def rows(M, i, j):
    ...     if i == 0:
    ...         return j
    ...     return M[i - 1, j] + 1
    >>> peels(cell_ir(rows), "RUD"), peels(cell_ir(rows), "CLR")
    (False, True)
    """
    step = STEP_SOURCE[code]
    index = ir.index[0 if step.i == "q" else 1] if len(ir.index) == 2 else None
    return step.lo == "0" and ir.straight and index is not None and any(
        isinstance(node, ast.Name) and node.id == index for node in guard_nodes(ir))


def _pattern_cell_store(e: Emitter, step: StepSource, args: str, checked: bool,
                        fits: bool, peeled: bool = False, cell: str = "cell") -> None:
    """Emit cell ``q`` of a pattern's step (:func:`_pattern_source`) by ``cell``: its
    place, the facts LLVM cannot see (the place lies in the table; ``peeled``: ``q`` is
    at least 1, the chunk's first cell taken apart, as every pattern's ``lo >= 0``)
    and its store."""
    if peeled:
        e("assume(q >= 1)")
    e(f"i = {step.i}", f"j = {step.j}", "assume(i >= 0)", "assume(i < n)", "assume(j >= 0)",
      "assume(j < m)")
    store_source(e, f"{cell}(M, i, j{args}{', row' if checked else ''})", "row", fits)


def _hyperplane_source(pi: tuple[int, ...], nargs: int, parallel: bool, checked: bool,
                       fits: bool) -> str:
    """One region for a whole fill by the hyperplane ``pi`` (:func:`hyperplane_fill`),
    as :func:`_pattern_source`: each of ``chunks`` threads takes its chunk of every step
    (:func:`patterns.hyperplane.step_source`), then waits at the barrier: a chunk of the
    outer axes' cells, each with its whole inner range, or (no outer axes) a chunk of
    the inner range.

    Examples
    --------
    >>> print(_hyperplane_source((2, 1), 0, True, False, False).splitlines()[13])
                    u1 = rem - 2 * u0
    """
    step = step_source(pi)
    args, index = arg_tail(nargs), step.index
    e = Emitter()
    with e.block(f"def hyperplane(M, bar, chunks, ck{args})"):
        e(*step.sides)
        with e.block(f"for chunk in {'prange' if parallel else 'range'}(chunks)"):
            e("row = ck[chunk]")
            with e.block(f"for t in range({step.span})"):
                _hyperplane_step(e, step, index, f"cell(M, {index}{args}"
                                 f"{', row' if checked else ''})", fits)
                e("arrive(bar, chunks * (t + 1))")
    return e.source


def _hyperplane_step(e: Emitter, step: HyperplaneSource, index: str, value: str,
                     fits: bool) -> None:
    """Emit one thread's chunk of a hyperplane's step (:func:`_hyperplane_source`)."""
    with ExitStack() as nest:
        if step.outer:
            e(f"whole = {step.outer_count}", "per = (whole + chunks - 1) // chunks")
            nest.enter_context(e.block(
                "for o in range(chunk * per, min(whole, (chunk + 1) * per))"))
            e(*step.outer_cell, *step.inner_range)
            nest.enter_context(e.block("for q in range(lo, hi)"))
        else:
            e(*step.outer_cell, *step.inner_range,
              "per = (hi - lo + chunks - 1) // chunks")
            nest.enter_context(e.block(
                "for q in range(lo + chunk * per, min(hi, lo + (chunk + 1) * per))"))
        e(*step.inner_cell)
        if step.valid != "True":
            nest.enter_context(e.block(f"if {step.valid}"))
        store_source(e, value, "row", fits, index)


def unravel(e: Emitter, ndim: int) -> str:
    """Emit the lines that turn flat ``r`` into ``x0, x1, ...`` for an ``ndim`` table
    ``M``; returns ``"x0, x1, ..."``.

    Examples
    --------
    >>> e = Emitter()
    >>> unravel(e, 2)
    'x0, x1'
    >>> e.lines
    ['x1 = r % M.shape[1]', 'r = r // M.shape[1]', 'x0 = r']
    """
    for k in range(ndim - 1, 0, -1):
        e(f"x{k} = r % M.shape[{k}]", f"r = r // M.shape[{k}]")
    e("x0 = r")
    return ", ".join(f"x{k}" for k in range(ndim))


def _order_source(ndim: int, nargs: int, parallel: bool) -> str:
    """Algorithm 2 over stage-ordered flat cells (:func:`order_fill`)."""
    args = arg_tail(nargs)
    e = Emitter()
    with e.block(f"def order(M, cells, ptr{args})"), \
            e.block("for s in range(ptr.shape[0] - 1)"), \
            e.block(f"for q in {'prange' if parallel else 'range'}(ptr[s], ptr[s + 1])"):
        e("r = cells[q]")
        idx = unravel(e, ndim)
        e(f"M[{idx}] = cell(M, {idx}{args})")
    return e.source


def kernel(rec: Recurrence, source: str, name: str, cell: Any,
           extra: dict[str, Any] | None = None, noalias: bool = False,
           **jit_options: Any) -> Callable[[bool], Any]:
    """The generated kernel ``name`` (its ``source``, calling ``cell``, with the names
    ``extra`` besides) as a function of ``nrt``: whether numba's reference counting is
    compiled in (see :func:`call`); cached under the digest of what it is made of.
    ``noalias``: its array arguments compiled as not aliasing each other
    (:mod:`runtime.backends.noalias`), for a kernel given arrays made for it and the
    arguments of a cell that writes none."""
    names = {"cell": cell, "prange": numba_module().prange, "assume": intrinsics.assume,
             "arrive": intrinsics.arrive, **(extra or {})}
    if noalias:
        jit_options["pipeline_class"] = compiler()
    key = digest(source, {**names, "jit": repr(sorted(jit_options.items()))})

    def make(nrt: bool) -> Any:
        def build() -> Any:
            # nogil: a waiting main thread takes an interrupt while the fill runs; loaded
            # from the disk cache without numba's refresh of the CPU target, which only a
            # compile needs and the reference counting's functions, which it installs
            return compile_kept(source, name, names, f"c{key}", lambda func, cache: jit(
                func, cache=cache, _nrt=nrt, nogil=True, **jit_options), refresh=nrt)

        return CACHE.get(rec.func, ("cpu", key, nrt), build)

    return make


@dataclass(frozen=True)
class Timing:
    """Seconds spent compiling (0 when cached) and running one compiled fill."""

    compile_s: float
    run_s: float


def _compile(make: Callable[[bool], Any], args: tuple[Any, ...]) -> Any:
    """Compile a kernel for these argument types, without numba's reference counting
    when the cell function allows it: the counting of the array arguments that numba
    leaves in a chunked inner loop made it many times slower (docs/benchmarks.md); a cell
    function that allocates arrays needs it and gets it."""
    numba = numba_module()
    sig = tuple(numba.typeof(a) for a in args)
    for nrt in (False, True):
        kernel = make(nrt)
        try:
            kernel.compile(sig)
            return kernel
        except Exception as exc:  # numba's own errors, and internal ones it lets through
            error = exc
    detail = " ".join(line.strip() for line in str(error).strip().splitlines()[:6])
    raise CompileError(
        f"numba could not compile the cell function: {detail} ... "
        "Use plain Python that numba supports in the cell function, or run with "
        f"{setting('backend', 'python')}."
    ) from None


#: Each kernel maker's kernels compiled so far, by :func:`_kinds` of their arguments: a
#: kernel called again and again (a walk's windows, a score's chunks) is called at once,
#: not after numba's ``typeof`` of every argument (tens of microseconds each).
_READY: weakref.WeakKeyDictionary[Callable[[bool], Any], dict[tuple[Any, ...], Any]] = \
    weakref.WeakKeyDictionary()


def _kinds(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """What numba's types of ``args`` depend on, found without numba: an array's dtype,
    dimensions, layout and flags, a tuple's items' kinds, else the value's Python type."""
    return tuple((a.dtype, a.ndim, a.flags.c_contiguous, a.flags.f_contiguous,
                  a.flags.writeable, a.flags.aligned) if isinstance(a, np.ndarray) else
                 _kinds(a) if isinstance(a, tuple) else type(a) for a in args)


def call(make: Callable[[bool], Any], *args: Any) -> Timing:
    """Compile a kernel (timed apart; once for arguments of the same kinds), then run it.

    numba's compile errors become ``CompileError``; errors raised while running become
    ``RecurrenceError``.
    """
    t0 = time.perf_counter()
    ready = _READY.setdefault(make, {})
    kinds = _kinds(args)
    kernel = ready.get(kinds)
    if kernel is None:
        kernel = ready[kinds] = _compile(make, args)
    t1 = time.perf_counter()
    try:
        kernel(*args)
    except (ArithmeticError, IndexError, TypeError, ValueError, AssertionError) as exc:
        raise RecurrenceError(
            f"the compiled fill raised {type(exc).__name__}: {exc}; run with "
            f"{setting('backend', 'python')} to find the cell"
        ) from None
    return Timing(t1 - t0, time.perf_counter() - t1)


@contextmanager
def thread_count(threads: int | None) -> Iterator[None]:
    """Run what is inside on ``threads`` of numba's threads (``None``: as many as it has,
    the cores this process may use), the count restored after; ``UsageError`` for a count
    under 1 or over numba's.  numba's count is the calling thread's own.

    Examples
    --------
    >>> with thread_count(1):
    ...     numba_module().get_num_threads()
    1
    """
    if threads is None:
        yield
        return
    numba = numba_module()
    most = int(numba.config.NUMBA_NUM_THREADS)
    if not 1 <= threads <= most:
        raise UsageError(f"{setting('threads', threads)}: give 1 to {most} (the cores this "
                         f"process may use, or NUMBA_NUM_THREADS)")
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(before)


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
    numba = numba_module()
    from numba.np.ufunc.parallel import _launch_threads

    _launch_threads()
    if numba.threading_layer() not in ("omp", "workqueue"):
        return 1
    return int(numba.get_num_threads())


def sweep_fill(rec: Recurrence, ir: CellIR, M: np.ndarray, sweep: Sweep | LexOrder,
               checked: bool) -> tuple[np.ndarray, Timing]:
    """Fill a table one cell at a time in a lexicographic order: a 2-D table's
    :class:`patterns.Sweep`, or a :class:`patterns.LexOrder` of any number of dimensions.

    Returns the check array (``CHECK_SLOTS`` int64, zeros unless ``checked``) and the
    timing.  With ``checked``, a ``Sweep``'s reads record the region of every read and
    an out-of-bounds read at ``OOB``; a ``LexOrder``'s reads guard themselves,
    flagging ``ck[OOB]`` for a read out of the table or of a cell not before its own in
    the order (:func:`compiled_cell`); the sweep ends after the first cell that flags
    ``OOB`` (so that cell is the one recorded: the first in the order, its last bad read),
    and the first value that does not fit an integer table is recorded at ``MISFIT``
    (its cell too in 2-D).

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> from patterns import LexOrder
    >>> @recurrence(shape=(2, 3, 4), dtype=np.int64)
    ... def box(M, i, j, k):
    ...     return 1 if i == 0 or j == 2 or k == 0 else M[i - 1, j + 1, k] + M[i, j, k - 1]
    >>> M = np.zeros(box.shape, dtype=np.int64)
    >>> ck, _ = sweep_fill(box, cell_ir(box), M, LexOrder((0, 1, 2), (1, -1, 1)), True)
    >>> M[1, 0].tolist(), int(ck[OOB])
    ([1, 2, 3, 4], 0)
    >>> ck, _ = sweep_fill(box, cell_ir(box), M, LexOrder((0, 1, 2), (1, 1, 1)), True)
    >>> int(ck[OOB])  # axis 1 walked up: M[i - 1, j + 1, k] is filled, M[i, j, k - 1] too
    0
    >>> ck, _ = sweep_fill(box, cell_ir(box), M, LexOrder((2, 1, 0), (-1, 1, 1)), True)
    >>> int(ck[OOB])  # axis 2 walked down: M[i, j, k - 1] is not filled yet
    1
    """
    lex = isinstance(sweep, LexOrder)
    ck = np.zeros(CHECK_SLOTS, dtype=np.int64)
    fits = checked and M.dtype.kind in "iu"
    src = _sweep_source(sweep if lex else sweep.order, len(rec.args), checked, fits)
    extra = {"MISFIT": MISFIT, "OOB": OOB,
             **({"LO": np.iinfo(M.dtype).min, "HI": np.iinfo(M.dtype).max} if fits else {})}
    cell = compiled_cell(rec, ir, checked, None, sweep if lex and checked else None)
    return ck, call(kernel(rec, src, "sweep", cell, extra, ir.pure), M, ck, *rec.args)


def pattern_fill(rec: Recurrence, ir: CellIR, M: np.ndarray, pattern_index: int,
                 parallel: bool = True, checked: bool = False, trusted: Trusted | None = None
                 ) -> tuple[np.ndarray, Timing]:
    """Fill a 2-D table step by step in a pattern, in one parallel region: each thread
    takes its chunk of every step (a plain inner loop per chunk compiles much tighter than
    ``prange`` over single cells) and waits at a barrier between steps (a parallel region
    per step cost more than the step itself on short rows).

    Returns the check array and the timing: with ``checked``, the fill checks its own
    reads and values, flagging ``ck[OOB]`` for a read out of the table or in a region the
    pattern does not allow (:func:`compiled_cell`; but those ``trusted`` proves), and
    recording the first value that does not fit an integer table at ``ck[MISFIT]``, as
    :func:`sweep_fill`, where no proof keeps the values in the dtype (:func:`_fits`)
    (zeros otherwise).
    """
    pattern = PATTERNS[pattern_index]
    fits = checked and _fits(rec, ir, pattern.steps(M.shape))
    cut = split(ir, pattern.code, trusted, rec.args) if checked else None
    src = _pattern_source(pattern.code, len(rec.args), parallel, checked, fits,
                          peels(ir, pattern.code), cut is not None)
    names = {} if cut is None else {
        "inner": compiled_cell(rec, ir, True, tuple(sorted(pattern.allowed)),
                               trusted=widened(trusted, cut, pattern.allowed)),
        "span": CACHE.get(rec.func, ("cpu", "span", cut.source), lambda: remember(
            jit(compile_source(cut.source, "span", {}), inline="always"), digest(cut.source)))}
    return _barrier_fill(rec, ir, M, _pattern_cell(rec, ir, pattern_index, checked, trusted),
                         src, "pattern", parallel, fits, names)


def tiled_fill(rec: Recurrence, ir: CellIR, M: np.ndarray, pattern_index: int,
               tile: tuple[int, int] | None = None, checked: bool = False,
               trusted: Trusted | None = None, pairs: bool | None = None
               ) -> tuple[np.ndarray, Timing]:
    """Fill a 2-D table of a diagonal pattern by tiles of ``tile`` (rows, columns; by
    default :func:`tile_for` the table, the threads and the cell), in one
    parallel region: the tiles of one anti-diagonal of tiles (in the pattern's frame,
    :data:`patterns.DIAGONAL_FLIPS`) go round the threads, each filled row by row in the
    table's own memory order, and the threads meet at a barrier between anti-diagonals
    of tiles, not between anti-diagonals of cells.  A read the pattern allows lies
    before its cell in the frame's rows and columns, so in the cell's own tile (filled
    before it there) or in a tile of an earlier anti-diagonal.  ``pairs``: a tile's rows
    two at a time (by default where :func:`runtime.backends.cpu_tiles.paired` says so
    and the fill is not ``checked``: the paired source holds the cell nine times, and a
    checked cell's compile grew several times over, docs/benchmarks.md).  Returns what
    :func:`pattern_fill` returns.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> from patterns import BY_CODE
    >>> rec = recurrence(shape=(5, 7), dtype=np.int64)(
    ...     lambda M, i, j: 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1])
    >>> M = np.zeros(rec.shape, dtype=np.int64)
    >>> ck, _ = tiled_fill(rec, cell_ir(rec), M, BY_CODE["NOSE"].index, tile=(2, 3))
    >>> int(M[4, 6]), int(ck[OOB])
    (210, 0)
    """
    code = PATTERNS[pattern_index].code
    fits = checked and _fits(rec, ir, PATTERNS[pattern_index].steps(M.shape))
    tile = tile or tile_for(M.shape[1], barrier_threads(), ir.straight)
    pairs = (paired(ir) and not checked) if pairs is None else pairs
    src = tiled_source(code, len(rec.args), tile, checked, fits, pairs)
    return _barrier_fill(rec, ir, M, _pattern_cell(rec, ir, pattern_index, checked, trusted),
                         src, "tiled", True, fits)


def _fits(rec: Recurrence, ir: CellIR, steps: int) -> bool:
    """Whether a checked fill of ``steps`` steps checks each value against the table's
    dtype: an integer table whose values no proof keeps inside it
    (:func:`runtime.backends.walk.value_bounds`, as the GPU's checked fills).  The proof
    holds for a fill whose every read is of an earlier step, which the fill's own read
    checks make sure of (a read that is not is flagged, and the table not used).

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(40, 40), dtype=np.int8)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> @recurrence(shape=(40, 40), dtype=np.int8)
    ... def kept(M, i, j):
    ...     return 1 if i == 0 or j == 0 else (M[i - 1, j] + M[i, j - 1]) % 100
    >>> _fits(paths, cell_ir(paths), 79), _fits(kept, cell_ir(kept), 79)
    (True, False)
    """
    return value_bounds(rec, ir, steps) is not None


def _pattern_cell(rec: Recurrence, ir: CellIR, pattern_index: int, checked: bool,
                  trusted: Trusted | None) -> Any:
    """The compiled cell of a pattern's fill: with ``checked``, its reads guarding the
    pattern's regions (but those ``trusted`` proves)."""
    allowed = tuple(sorted(PATTERNS[pattern_index].allowed)) if checked else None
    return compiled_cell(rec, ir, checked, allowed, trusted=trusted if checked else None)


def hyperplane_fill(rec: Recurrence, ir: CellIR, M: np.ndarray, hyperplane: Hyperplane,
                    parallel: bool = True, checked: bool = False,
                    trusted: Trusted | None = None) -> tuple[np.ndarray, Timing]:
    """Fill a table of any dimension step by step along ``hyperplane``, in one parallel
    region as :func:`pattern_fill`.  Returns the check array and the timing: with
    ``checked``, the fill checks its own reads and values, flagging ``ck[OOB]`` for a
    read out of the table or not on an earlier hyperplane, and ``ck[MISFIT]`` for a value
    that does not fit an integer table where no proof keeps it in (:func:`_fits`) (zeros
    otherwise); of arguments' elements, it reads those ``trusted`` proves inside them
    unchecked.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def skew(M, i, j):
    ...     return 1 if i == 0 or j == 0 or j == 4 else M[i - 1, j + 1] + M[i, j - 1]
    >>> rec, M = skew, np.zeros(skew.shape, dtype=np.int64)
    >>> ck, _ = hyperplane_fill(rec, cell_ir(rec), M, Hyperplane((2, 1)), checked=True)
    >>> M[3].tolist(), int(ck[OOB])
    ([1, 9, 18, 19, 1], 0)
    """
    fits = checked and _fits(rec, ir, hyperplane.steps(M.shape))
    src = _hyperplane_source(hyperplane.pi, len(rec.args), parallel, checked, fits)
    cell = compiled_cell(rec, ir, checked, None, hyperplane.pi if checked else None,
                         trusted if checked else None)
    return _barrier_fill(rec, ir, M, cell, src, "hyperplane", parallel, fits)


def _barrier_fill(rec: Recurrence, ir: CellIR, M: np.ndarray, cell: Any, src: str,
                  name: str, parallel: bool, fits: bool, names: dict[str, Any] | None = None
                  ) -> tuple[np.ndarray, Timing]:
    """Compile and run a one-region fill ``src`` (kernel ``name``: a barrier, the thread
    count, a check row for each thread) calling the compiled ``cell`` (and ``names``)."""
    threads = barrier_threads() if parallel else 1
    extra = {"MISFIT": MISFIT, **(names or {}),
             **({"LO": np.iinfo(M.dtype).min, "HI": np.iinfo(M.dtype).max} if fits else {})}
    make = kernel(rec, src, name, cell, extra, ir.pure, parallel=parallel)
    # a row of each thread's own, padded to whole cache lines
    rows = np.zeros((threads, -(-CHECK_SLOTS // 8) * 8), dtype=np.int64)
    timing = call(make, M, np.zeros(1, dtype=np.int64), threads, rows, *rec.args)
    return _merged(rows[:, :CHECK_SLOTS]), timing


def _merged(rows: np.ndarray) -> np.ndarray:
    """One check array from each thread's row: every region flagged, and the first row's
    out-of-bounds read, misfit and argument read among those that recorded one.

    Examples
    --------
    >>> rows = np.zeros((2, CHECK_SLOTS), dtype=np.int64)
    >>> rows[0, 1] = rows[1, 3] = 1
    >>> rows[1, OOB:OOB + 5] = [1, 2, 3, -1, 3]
    >>> ck = _merged(rows)
    >>> regions_of_flags(ck), ck[OOB:OOB + 5].tolist()
    (('Left', 'Up'), [1, 2, 3, -1, 3])
    """
    ck = np.zeros(CHECK_SLOTS, dtype=np.int64)
    ck[:OOB] = rows[:, :OOB].max(axis=0)
    for at, width in ((OOB, MISFIT - OOB), (MISFIT, ARG - MISFIT), (ARG, CHECK_SLOTS - ARG)):
        found = rows[rows[:, at] != 0]
        if len(found):
            ck[at:at + width] = found[0, at:at + width]
    return ck


def order_fill(rec: Recurrence, ir: CellIR, M: np.ndarray, cells: np.ndarray, ptr: np.ndarray,
               parallel: bool = True) -> Timing:
    """Algorithm 2: stage by stage (``cells[ptr[s]:ptr[s+1]]`` is stage ``s``, flat C-order
    indices), the cells of a stage in parallel; any number of dimensions."""
    src = _order_source(rec.ndim, len(rec.args), parallel)
    make = kernel(rec, src, "order", compiled_cell(rec, ir), None, ir.pure, parallel=parallel)
    return call(make, M, cells, ptr, *rec.args)


def first_touch(rec: Recurrence, M: np.ndarray) -> Timing:
    """Write a zero into every page of a new zeroed table ``M`` (C or F order), the pages
    split among numba's threads in contiguous runs, before a parallel fill: the kernel
    maps and zeroes a page at its first touch, and threads that first touch the pages
    they fill, a row's chunk each, fault in the same pages at once and wait on each
    other, which cost a pattern fill on two threads more than its whole gain
    (docs/benchmarks.md, "first touch").

    Examples
    --------
    >>> from depgraph import recurrence
    >>> rec = recurrence(shape=(3, 700), dtype=np.int64)(lambda M, i, j: 0)
    >>> M = np.zeros(rec.shape, dtype=np.int64, order="F")
    >>> first_touch(rec, M).run_s >= 0, int(M.sum())
    (True, 0)
    """
    import mmap

    step = max(1, mmap.PAGESIZE // M.itemsize)
    source = ("def touch(F, step):\n"
              "    for p in prange((F.shape[0] + step - 1) // step):\n"
              "        F[p * step] = 0\n")
    return call(kernel(rec, source, "touch", None, parallel=True), M.reshape(-1, order="A"),
                step)


def unshear_fill(rec: Recurrence, sheared: np.ndarray, sh: Shear) -> tuple[np.ndarray, Timing]:
    """The table of ``rec`` from its sheared table (:mod:`runtime.backends.shear`): cell
    ``x`` is ``sheared[U x + c]``, the first axis in parallel.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> from patterns.hyperplane import shear
    >>> rec = recurrence(shape=(2, 3), dtype=np.int64)(lambda M, i, j: 0)
    >>> M, _ = unshear_fill(rec, np.arange(8).reshape(2, 4), shear([(-1, 1), (0, -1)], (2, 3)))
    >>> M.tolist()
    [[0, 1, 2], [5, 6, 7]]
    """
    index = [f"x{k}" for k in range(rec.ndim)]
    e = Emitter()
    with e.block("def unshear(M, S)"), ExitStack() as nest:
        for k, x in enumerate(index):
            nest.enter_context(e.block(f"for {x} in {'prange' if k == 0 else 'range'}"
                                       f"(M.shape[{k}])"))
        e(gather_line(sh, index))
    M = np.empty(rec.shape, dtype=sheared.dtype)
    return M, call(kernel(rec, e.source, "unshear", None, parallel=True), M, sheared)
