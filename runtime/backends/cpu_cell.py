"""The cell function compiled for the CPU by numba: plain, or with its reads checked.

A checked cell (:func:`compiled_cell`) is a rewrite of the cell function
(:func:`runtime.backends.rewrite.rewrite_reads`) whose reads of ``M`` record the region
of every read (a checked sweep's), or guard the regions a pattern allows, or the order
of a hyperplane or a lexicographic sweep, flagging a read that leaves them in a check
array of :data:`CHECK_SLOTS` integers; its reads of array arguments are checked too.
What a proof covers (:class:`depgraph.analysis.proof.Trusted`) a guarded or ordered
cell leaves unchecked.

Assumptions: the cell function is numba-compilable and its source can be rewritten
where it is checked; numba is imported only when a fill first needs it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import numpy as np

from depgraph.analysis.proof import Trusted
from depgraph.frontend.ir import CellIR
from depgraph.frontend.source import function_namespace
from depgraph.model import Recurrence
from patterns import LexOrder
from runtime.backends.cache import CACHE
from runtime.backends.emit import Emitter, compile_source, digest, remember
from runtime.backends.rewrite import (
    CHECK,
    ArgReads,
    OffsetReads,
    arg_read_source,
    guarded_reads,
    hyperplane_read_source,
    lex_read_source,
    rewrite_reads,
)

__all__ = ["compiled_cell", "jit", "numba_module", "store_source", "guard_nodes",
           "CHECK_SLOTS", "OOB", "MISFIT", "ARG"]

#: Checked reads set ``ck[code] = 1`` for each region code read (0-8, see
#: ``patterns.regions``) and record an out-of-bounds read at ``ck[OOB:OOB + 5]`` as
#: (flag, cell i, cell j, read i, read j).
#: A checked sweep records the first cell whose value does not fit an integer table's dtype
#: at ``ck[MISFIT:MISFIT + 3]`` as (flag, cell i, cell j).
#: A checked read of an array argument outside it records the first at
#: ``ck[ARG:ARG + 6]`` as (flag, cell i, cell j, the argument's position, axis, index)
#: (a table of other dimensions: the flag alone).
CHECK_SLOTS = 23
OOB = 9
MISFIT = 14
ARG = 17

def numba_module() -> Any:
    """numba, imported when a CPU fill first needs it."""
    import numba

    return numba


def _checked_read2() -> Any:
    numba = numba_module()

    @numba.njit(inline="always")
    def read(M, ck, x0, x1, a, b):  # pragma: no cover - compiled
        if a < 0 or a >= M.shape[0] or b < 0 or b >= M.shape[1]:
            # unconditional stores (the last bad read is kept): reading the flag first to
            # keep the first one made every checked read an order of magnitude slower
            ck[OOB] = 1
            ck[OOB + 1] = x0
            ck[OOB + 2] = x1
            ck[OOB + 3] = a
            ck[OOB + 4] = b
            return M[0, 0]
        # branch-free region code and an unconditional flag store: a branchy sign or a
        # conditional bit update made the sweep an order of magnitude slower
        s0 = np.int64(a > x0) - np.int64(a < x0)
        s1 = np.int64(b > x1) - np.int64(b < x1)
        ck[(s0 + 1) * 3 + s1 + 1] = 1
        return M[a, b]

    return read


def jit(func: Any, **opts: Any) -> Any:
    """``numba.njit(**opts)(func)``."""
    return numba_module().njit(**opts)(func)


def compiled_cell(rec: Recurrence, ir: CellIR, checked: bool = False,
                  allowed: tuple[str, ...] | None = None,
                  order: tuple[int, ...] | LexOrder | None = None,
                  trusted: Trusted | None = None) -> Any:
    """The cell function compiled for the CPU (``checked``: the region-recording rewrite
    of its reads, :func:`runtime.backends.rewrite.rewrite_reads`; with ``allowed`` too,
    the rewrite whose reads guard themselves instead, flagging ``ck[OOB]`` for a read
    out of the table or in a region not among ``allowed``:
    :func:`runtime.backends.rewrite.guarded_read_source`; with ``order``, a hyperplane's
    ``pi``, flagging a read out of the table or not on an earlier hyperplane, any
    dimension: :func:`runtime.backends.rewrite.hyperplane_read_source`; with a
    lexicographic ``order``, flagging a read out of the table or of a cell not before
    its own in that order: :func:`runtime.backends.rewrite.lex_read_source`).  A checked
    cell's reads of its array arguments are checked too, flagging ``ck[ARG]``
    (:func:`runtime.backends.rewrite.arg_read_source`).  A guarded or ordered cell leaves
    unchecked what ``trusted`` proves: its reads of arguments' elements, and, guarding
    ``allowed``, its reads of ``M`` proven in those regions.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> from depgraph.analysis.certify import trusted_reads
    >>> d = np.array([1, -2, 3])
    >>> @recurrence(shape=(4, 9), dtype=np.int64, args=(d,))
    ... def drift(M, i, j, d):
    ...     return 1 if i == 0 else M[i - 1, j] + M[i - 1, (j + d[i - 1]) % 9]
    >>> cell = compiled_cell(drift, cell_ir(drift), True, ("Up", "UpLeft", "UpRight"),
    ...                      trusted=trusted_reads(drift))
    >>> M, ck = np.ones(drift.shape, np.int64), np.zeros(CHECK_SLOTS, np.int64)
    >>> int(cell(M, 2, 8, d, ck)), int(ck[OOB]), int(ck[ARG])
    (2, 0, 0)
    """

    def build() -> Any:
        # inline="always": without it numba calls the cell function per cell, many times slower
        if not checked:
            return jit(rec.func, inline="always")
        ns = function_namespace(rec.func)
        first = f"ck[{ARG}] == 0" if ir.ndim == 2 else None  # the slots hold a 2-D cell
        args = ArgReads.of(ir, rec.args, lambda p, count: arg_read_source(
            p, count, ir.ndim, ARG, first), trusted)
        stop = f"{CHECK}[{OOB}] != 0 or {CHECK}[{ARG}] != 0"
        if allowed is None and order is None:
            ns["_dg_read"] = _checked_read2()
            src = rewrite_reads(ir, "_dg_read", "_dg_cell", stop=stop, arg_reads=args)
            guards: dict[str, str] = {}
        else:
            if order is not None:
                lex = isinstance(order, LexOrder)
                ndim = order.ndim if lex else len(order)
                source = lex_read_source if lex else hyperplane_read_source
                where = ", ".join(f"a{k}" for k in range(ndim))
                guarded = OffsetReads(lambda d, _: source(order, f"M[{where}]", OOB, offsets=d),
                                      ndim)
            else:
                guarded = guarded_reads(allowed, "M[a, b]", OOB, trusted)
            src = rewrite_reads(ir, "_dg_read", "_dg_cell", read_for=guarded, stop=stop,
                                arg_reads=args)
            guards = guarded.reads
        reads = {**guards, **args.reads}  # each read's name: its source
        for name, what in reads.items():
            ns[name] = jit(compile_source(what, "read", {"int64": np.int64}), inline="always")
        reads.setdefault("_dg_read", "checked read, 2-D")
        return remember(jit(compile_source(src, "_dg_cell", ns), inline="always"),
                        digest(src, {**reads, "cell": rec.func}))

    return CACHE.get(rec.func, ("cpu", "cell", checked, allowed, order, trusted), build)


def guard_nodes(ir: CellIR) -> Iterator[ast.AST]:
    """Every node of the tests of the cell's top-level branches (``ir.guards``), for the
    fills that shape their loops by what those tests look at.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def f(M, i, j, X):
    ...     if i == 0 or X[j] > 1:
    ...         return 0
    ...     return M[i - 1, j]
    >>> sorted({n.id for n in guard_nodes(read_cell(f, 2)) if isinstance(n, ast.Name)})
    ['X', 'i', 'j']
    """
    for guard in ir.guards:
        yield from ast.walk(ast.parse(guard.test, mode="eval"))


def store_source(e: Emitter, value: str, ck: str, fits: bool, index: str = "i, j") -> None:
    """Emit ``M[index] = value``; with ``fits``, the first cell whose value is not a
    number or leaves ``LO..HI`` recorded at ``ck[MISFIT]`` first (its place too, for a
    2-D ``index``), in a fill's source (``LO``, ``HI`` and ``MISFIT`` bound where it is
    compiled).

    Examples
    --------
    >>> from runtime.backends.emit import Emitter
    >>> e = Emitter()
    >>> store_source(e, "cell(M, i, j)", "row", False)
    >>> e.source
    'M[i, j] = cell(M, i, j)\\n'
    """
    if not fits:
        e(f"M[{index}] = {value}")
        return
    e(f"v = {value}")
    with e.block(f"if (v != v or v < LO or v > HI) and {ck}[MISFIT] == 0"):
        e(f"{ck}[MISFIT] = 1")
        names = index.split(", ")
        if len(names) == 2:
            e(f"{ck}[MISFIT + 1] = {names[0]}", f"{ck}[MISFIT + 2] = {names[1]}")
    e(f"M[{index}] = v")
