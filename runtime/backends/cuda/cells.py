"""The cell function as the CUDA kernels call it: rewritten device functions and the pieces
of source the kernel families share (index forms, argument loads, coherent reads).

A kernel that serves the cell's reads of ``M`` itself (from registers, a tile in shared
memory, a band's window, a ring of kept cells, or past L1) calls a rewrite of the cell
function (:func:`runtime.backends.rewrite.rewrite_reads`) whose reads call a device
function ``read`` the family generates: :func:`rewritten_cell`.  Kernels that read cells
other blocks of the same launch wrote read them past L1 (:func:`coherent_cell`), and a
band's cells read the step before from its window (:func:`band_read_source`).

Assumptions: the cell function's IR has its source and its reads of ``M`` are plain
subscripts (``SourceUnavailable`` otherwise); 2-D tables for the window reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.analysis.proof import Trusted
from depgraph.frontend.ir import CellIR
from depgraph.frontend.narrow import Narrowing
from depgraph.frontend.source import Position, SourceUnavailable, function_namespace
from depgraph.model import Recurrence
from patterns.hyperplane import Shear
from runtime.backends.cache import CACHE
from runtime.backends.cuda.device import (
    coherent_names,
    compile_device,
    cuda_module,
    nap,
    simulated,
)
from runtime.backends.emit import Emitter, arg_tail, compile_source, digest, remember
from runtime.backends.rewrite import (
    CHECK,
    ArgReads,
    OffsetReads,
    arg_read_source,
    guarded_reads,
    hyperplane_read_source,
    rewrite_reads,
)

__all__ = ["rewritten_cell", "coherent_cell", "Checks", "checked_cell", "argument_loads",
           "band_read_source", "flip",
           "small", "small_args", "index_form", "loadable", "register_type", "narrow_note",
           "INDEX_TYPES"]

#: The integer types generated index expressions name.
INDEX_TYPES = {"int64": np.int64, "int32": np.int32, "uint32": np.uint32, "uint64": np.uint64}


def flip(expr: str, size: str, flipped: bool) -> str:
    """``expr`` as an index of a table walked backwards along a side of ``size`` cells
    when ``flipped``.

    Examples
    --------
    >>> flip("u", "n", True), flip("u", "n", False)
    ('(n - 1 - (u))', '(u)')
    """
    return f"({size} - 1 - ({expr}))" if flipped else f"({expr})"


def small(shape: tuple[int, ...]) -> bool:
    """Whether every side of a table of ``shape`` is under 2**31, so its indices and their
    differences fit 32 bits."""
    return max(shape) < 2**31


def small_args(rec: Recurrence) -> bool:
    """Whether every side of every array argument of ``rec`` is under 2**31
    (:func:`small`), so :func:`argument_loads` may index them through 32 bits."""
    return all(small(a.shape) for a in rec.args if isinstance(a, np.ndarray))


def index_form(expr: str, shape: tuple[int, ...]) -> str:
    """``expr``, an index into a table of ``shape``, as an int64 the compiler knows is not
    negative when the table is :func:`small` (taken through uint32), so indexing with it
    leaves out numba's test for negative indices.

    Examples
    --------
    >>> index_form("i", (5, 7)), index_form("i", (2**31, 1))
    ('int64(uint32(i))', 'int64(i)')
    """
    return f"int64(uint32({expr}))" if small(shape) else f"int64({expr})"


def loadable(dtype: np.dtype) -> None:
    """``SourceUnavailable`` unless ``LOAD`` (:func:`coherent_names`) reads cells of
    ``dtype``: integers and floats."""
    if np.dtype(dtype).kind not in "iuf":
        raise SourceUnavailable(f"L1-skipping loads take integer and float cells, not {dtype}")


def rewritten_cell(rec: Recurrence, ir: CellIR, read: str | OffsetReads,
                   names: dict[str, Any], cell_args: bool = True, hoist: Sequence[str] = (),
                   narrow: frozenset[Position] = frozenset(), speculate: bool = False,
                   kept: Sequence[tuple[int, ...]] = (), stop: str | None = None,
                   arg_reads: ArgReads | None = None) -> Any:
    """The cell function as a device function whose reads of ``M`` call the device
    function ``read`` (source, compiled with ``names``; or, given
    :class:`~runtime.backends.rewrite.OffsetReads`, each read the one for its offset
    from the cell), cached under the digest of both; see
    :func:`runtime.backends.rewrite.rewrite_reads` for its arguments (``hoist``: the
    arrays whose loads the caller makes; ``narrow``: the values computed in int32;
    ``speculate``: the guards applied last, as selects; ``kept``: the offsets whose reads
    call ``read_kept``, which ``read`` then defines too; ``stop``: the test that ends a
    ``while`` loop once a read has failed; ``arg_reads``: the checked reads of its array
    arguments, each compiled with ``names`` too).  ``SourceUnavailable`` when the cell
    function's source cannot be rewritten."""
    read_for = read if isinstance(read, OffsetReads) else None
    body = rewrite_reads(ir, "_dg_read", "_dg_cell", cell_args=cell_args, hoist=hoist,
                         narrow=narrow, speculate=speculate, kept=kept, read_for=read_for,
                         stop=stop, arg_reads=arg_reads)
    # after the rewrite named them
    reads = {**(read_for.reads if read_for else {"_dg_read": read}),
             **(arg_reads.reads if arg_reads else {})}
    every = "\n".join(f"{name}:\n{source}" for name, source in sorted(reads.items()))
    key = digest(body, {"read": digest(every if len(reads) > 1 or read_for
                                       else reads["_dg_read"], names),
                        "cell": rec.func})  # its namespace too

    def build() -> Any:
        cuda = cuda_module()
        ns = {**function_namespace(rec.func), "_dg_i32": np.int32}
        for name, source in reads.items():
            ns[name] = cuda.jit(device=True)(compile_source(source, "read", dict(names)))
        if kept:
            ns["_dg_read_kept"] = cuda.jit(device=True)(
                compile_source(reads["_dg_read"], "read_kept", dict(names)))
        return remember(cuda.jit(device=True)(compile_source(body, "_dg_cell", ns)), key)

    return CACHE.get(rec.func, ("cuda", key), build)


def argument_loads(rec: Recurrence, ir: CellIR) -> tuple[tuple[str, ...], list[str]]:
    """The cell function's loads of its array arguments that a kernel makes for it
    (:meth:`~depgraph.frontend.ir.CellIR.loads_of`; arrays of no elements left alone):
    the arrays' names, and each load as kernel source, a format string over the cell's
    indices (``{0}``, ``{1}``) naming the arguments as the kernels do (``a0, a1, ...``).
    A kernel makes a load where the cell might not (a step ahead, or at a cell whose
    guard returns first), so each index is clamped into the array; an index the cell
    itself could use (``-size <= e < size``) reads what it would, a negative one counted
    from the end as Python does.  When every array argument is :func:`small_args`, the
    clamp runs in 32 bits and numba's own test for negative indices is left out (64
    fewer instructions in the knapsack bands' machine code)."""
    arrays = tuple(p for p, a in zip(ir.params, rec.args)
                   if isinstance(a, np.ndarray) and a.size > 0)
    fits = small_args(rec)

    def clamp(e: str, size: str) -> str:  # index ``e`` clamped into the array, as above
        if fits:
            return (f"int64(min(uint32(({e} + {size} if {e} < 0 else {e}) & 0xFFFFFFFF), "
                    f"uint32({size} - 1)))")
        return f"min(max({e}, -{size}), {size} - 1)"

    out = []
    for load in ir.loads_of(arrays):
        a = f"a{ir.params.index(load.array)}"
        out.append(f"{a}[{', '.join(clamp(e, f'{a}.shape[{d}]') for d, e in enumerate(load.index))}]")
    return arrays, out


def _coherent_read() -> str:
    """A read past L1 (:func:`coherent_names`) of a 2-D table, for cells that do not pass
    their own indices."""
    e = Emitter()
    with e.block("def read(M, ck, a, b)"):
        e("return LOAD(M, (int64(a), int64(b)))")
    return e.source


def band_read_source(along: str, rows: bool, cols: bool, shape: tuple[int, ...],
                     wait: bool) -> str:
    """A band's reads (:func:`runtime.backends.cuda.bands.band_fill`) with its step in a
    window: ``ctx`` is ``(W, slot, first, width)``, the band's cells of the step before in
    ``W[slot, :width]`` from its position ``first`` along the step (``width`` 0: no
    window).  A read of the step before in the window is served from it, from global
    memory past L1 otherwise (one unsigned comparison tells both sides of the window; 32
    bits when the table's sides are under 2**31).  Steps go along ``u`` (the rows) or
    ``v``, rows and columns ``flipped`` into the band's NOSE frame.  ``read_kept`` serves
    the cell's own position of the step before, which its thread computed and kept in
    the register ``v``.

    With ``wait`` (bands without a frame), a read outside the window waits, first, until
    the band it reads from has finished the read's step: ``ctx`` goes on with
    ``(progress, band width, this band, seen)``.  A read of this band (one unsigned
    comparison with its first position) does not wait, and only a read of another finds
    that band by a division.  ``seen[side, warp]`` keeps, for each warp and side, the
    last band read from there and the count of steps it had finished (``band << 32 |
    count``), so a warp reloads that band's counter only once the count is not enough
    for the step it reads."""
    frame = {"a": flip("a", "n", rows), "x0": flip("x0", "n", rows),
             "b": flip("b", "m", cols), "x1": flip("x1", "m", cols)}
    sa, pa = (frame["a"], frame["b"]) if along == "u" else (frame["b"], frame["a"])
    sx = frame["x0"] if along == "u" else frame["x1"]
    U, I = ("uint32", "int32") if small(shape) else ("uint64", "int64")
    nb = "m" if along == "u" else "n"
    e = Emitter()
    with e.block("def read(M, ctx, x0, x1, a, b)"):
        e("n = M.shape[0]", "m = M.shape[1]")
        with e.block(f"if {sa} == {sx} - 1"):
            e(f"k = {U}({I}({pa}) - {I}(ctx[2]))")
            with e.block(f"if k < {U}(ctx[3])"):
                e("return ctx[0][ctx[1], k]")
        if wait:
            with e.block(f"if {U}({I}({pa}) - {I}(ctx[2])) >= {U}(ctx[5])"):
                e(f"f = int64(min({U}({pa}), {U}({nb} - 1)) // {U}(ctx[5]))",
                  "side = 1 if f > int64(ctx[6]) else 0", "w = cuda.threadIdx.x >> 5",
                  "seen = ctx[7][side, w]")
                with e.block(f"if (seen >> 32) != f or (seen & 0xFFFFFFFF) <= {sa}"):
                    e("p = LOAD(ctx[4], f)")
                    with e.block(f"while p <= {sa}"):
                        e(nap(), "p = LOAD(ctx[4], f)")
                    e("ctx[7][side, w] = (f << 32) | int64(p)")
        e(f"return LOAD(M, ({index_form('a', shape)}, {index_form('b', shape)}))")
    e("", "")
    with e.block("def read_kept(M, ctx, v, a, b)"):
        e("return v")
    return e.source


def coherent_cell(rec: Recurrence, ir: CellIR, hoisted: bool = False,
                  window: tuple[str, bool, bool] | None = None, keep: bool = True,
                  wait: bool = False, narrow: frozenset[Position] = frozenset()) -> Any:
    """The cell function as a device function ``cell(M, i, j, *args, *values)`` whose
    reads of ``M`` skip L1 (for kernels that read cells other blocks wrote in the same
    launch); with ``hoisted``, its loads of its array arguments are the caller's, passed
    in as ``values`` in the order of :func:`argument_loads`.  With ``window = (along,
    rows flipped, columns flipped)`` it is ``cell(M, i, j, *args, ctx, kept, *values)``,
    a band's cell whose reads of the step before may come from the band's window and
    whose read of its own position there from ``kept`` (:func:`band_read_source`; steps
    along ``u``, the rows, or ``v``); without ``keep``, ``cell(M, i, j, *args, ctx,
    *values)`` and no read from ``kept``; with ``wait``, a read outside the window waits
    for the band it reads from; ``narrow``: the values computed in int32
    (:func:`rewritten_cell`).
    ``SourceUnavailable`` when its source cannot be rewritten or the cells are not
    integers or floats."""
    loadable(rec.dtype)
    hoist, loads = argument_loads(rec, ir) if hoisted else ((), [])
    read, kept = _coherent_read(), ()
    if window:
        along, rows, cols = window
        back = 1 if (rows if along == "u" else cols) else -1  # the step before, unflipped
        kept = ((back, 0) if along == "u" else (0, back),) if keep else ()
        read = band_read_source(along, rows, cols, rec.shape, wait)
    inner = rewritten_cell(rec, ir, read, {**coherent_names(cuda_module()), **INDEX_TYPES},
                           cell_args=bool(window), hoist=hoist, kept=kept, narrow=narrow)
    tail = arg_tail(len(rec.args))
    vals = "".join(f", v{k}" for k in range(len(loads)))
    ctx = (", ctx, kept" if kept else ", ctx") if window else ""
    e = Emitter()
    with e.block(f"def cell(M, i, j{tail}{ctx}{vals})"):
        e(f"return inner(M, i, j{tail}, {ctx[2:] if window else '0'}{vals})")
    return compile_device(rec, e.source, "cell", {"inner": inner})


@dataclass(frozen=True)
class Checks:
    """What a fill checks where it runs, for reads no certificate proves: each read of
    ``M`` in the table and in the regions ``allowed`` (those whose cells the schedule
    has filled before the cell's; a 2-D table), or, with ``order`` (a hyperplane's
    ``pi``, any dimension), on an earlier hyperplane, and with ``frame`` too, of a cell
    of the original table of a sheared one
    (:func:`runtime.backends.rewrite.hyperplane_read_source`); and, unless ``bounds`` is
    ``None``, each value inside ``bounds`` (an integer table's range, where no proof
    says it fits).  What ``trusted`` proves goes unchecked: reads of arguments'
    elements, and, guarding ``allowed``, reads of ``M`` proven in those regions."""

    ir: CellIR
    allowed: tuple[str, ...]
    bounds: tuple[int, int] | None
    order: tuple[int, ...] | None = None
    frame: Shear | None = None
    trusted: Trusted | None = None

    @property
    def label(self) -> str:
        """What a fill's label says of these checks."""
        proven = self.trusted and self.trusted.summary(self.allowed if self.order is None
                                                       else ())
        return "every read checked" + (" but what a proof covers" if proven else "")


def checked_cell(rec: Recurrence, checks: Checks, coherent: bool) -> Any:
    """The cell function as a device function ``cell(M, x0, x1, ..., *args, ck)`` that checks
    its reads (of its array arguments too:
    :func:`runtime.backends.rewrite.arg_read_source`) and its value (:class:`Checks`),
    setting ``ck[0]`` when one fails;
    ``coherent``: its reads skip L1, for kernels that read what other blocks of the same
    launch wrote.  Under the simulator, an integer table's reads are widened to int64,
    the stand-in for numba's typing, which computes small integers in 64 bits where
    NumPy's scalars would wrap, so a value leaving the table's dtype would go unseen.
    ``SourceUnavailable`` when its source cannot be rewritten (or, for ``coherent``, the
    cells are not integers or floats)."""
    cuda = cuda_module()
    names: dict[str, Any] = {"int64": np.int64}
    if coherent:
        loadable(rec.dtype)
        names.update(coherent_names(cuda))
    widen = simulated() and np.dtype(rec.dtype).kind in "iu"
    trusted = checks.trusted
    if checks.order is None:
        load = "LOAD(M, (int64(a), int64(b)))" if coherent else "M[a, b]"
        load = f"int64({load})" if widen else load
        read = guarded_reads(checks.allowed, load, 0, trusted)
    else:
        where = [f"a{k}" for k in range(rec.ndim)]
        load = (f"LOAD(M, ({', '.join(f'int64({a})' for a in where)},))" if coherent
                else f"M[{', '.join(where)}]")
        load = f"int64({load})" if widen else load
        read = OffsetReads(lambda d, _: hyperplane_read_source(checks.order, load, 0,
                                                            checks.frame, d), rec.ndim)
    args = ArgReads.of(checks.ir, rec.args,
                       lambda p, count: arg_read_source(p, count, rec.ndim, 0), trusted)
    inner = rewritten_cell(rec, checks.ir, read, names, stop=f"{CHECK}[0] != 0", arg_reads=args)
    tail = arg_tail(len(rec.args))
    index = ", ".join(f"x{k}" for k in range(rec.ndim))
    e = Emitter()
    with e.block(f"def cell(M, {index}{tail}, ck)"):
        e(f"v = inner(M, {index}{tail}, ck)")
        if checks.bounds is not None:
            with e.block(f"if v != v or v < {checks.bounds[0]} or v > {checks.bounds[1]}"):
                e("ck[0] = 1")
        e("return v")
    return compile_device(rec, e.source, "cell", {"inner": inner})


def register_type(rec: Recurrence, nw: Narrowing | None) -> np.dtype:
    """The type the strips and the bands hold a cell in (registers, the strips' boundary
    words, the bands' window): int32 with a narrowing, else the table's."""
    return np.dtype(np.int32) if nw else np.dtype(rec.dtype)


def narrow_note(nw: Narrowing | None) -> str:
    """What a fill's label says of its narrowing."""
    if nw is None:
        return ""
    return f", int32 arithmetic, proven exact for values {nw.values[0]}..{nw.values[1]}"
