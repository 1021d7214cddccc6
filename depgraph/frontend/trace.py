"""The tracer: run the cell function in plain Python and record what each cell reads.

Every cell's function runs once with a recording stand-in for ``M``.  Cells are computed
on demand: when a cell reads a cell that is not computed yet, its run stops, the needed
cell is pushed on an explicit stack and computed first, and the reading cell runs again
(no Python recursion, so no recursion limit at any table size).  A read of a cell that is
already on the stack is a cycle.  Values are computed as the trace goes: the traced table
is the sequential reference fill, and the order cells finish in is a topological order.

Assumptions: the cell function is pure and deterministic; it reads ``M`` only with
integer indices (Python or NumPy integers) and never writes it; a negative index is an
out-of-bounds read.  Stored values are converted to the table's dtype as a compiled fill
would store them, so later reads see what a fill would see.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph import memory
from depgraph.errors import (
    BadIndexError,
    CellFunctionError,
    CycleError,
    DepgraphError,
    OutOfBoundsError,
    TooLargeError,
    UsageError,
    WriteError,
    setting,
)
from depgraph.memory import format_bytes
from depgraph.model import Recurrence

__all__ = ["Trace", "trace", "estimate_trace_bytes", "check_value", "flat_index"]

#: Memory a trace needs per cell, beyond the reads: the value slot and object, the
#: finish order, the stack flag and the final table and graph arrays (measured on LCS).
BYTES_PER_CELL = 96
#: Memory a trace needs per recorded read (the read log, then the deduplicated edges).
BYTES_PER_READ = 40


@dataclass(frozen=True)
class Trace:
    """What tracing found.

    Attributes
    ----------
    table : ndarray
        The values of the traced cells (the sequential reference); cells outside the
        solution-generated graph of a target are 0 and ``False`` in ``mask``.
    cells : ndarray of int64
        Flat (C-order) index of every traced cell, in the order they finished: a
        topological order (dependencies first).
    ends : ndarray of int64
        ``reads[ends[k-1]:ends[k]]`` are the flat cells that ``cells[k]`` read, in order.
    reads : ndarray of int64
        Flat index of every read, per finished cell, repeats included.
    mask : ndarray of bool or None
        Which cells were traced; ``None`` when all were.
    reruns : int
        How many cell runs stopped on a cell not computed yet (the cost of demand order).
    """

    table: np.ndarray
    cells: np.ndarray
    ends: np.ndarray
    reads: np.ndarray
    mask: np.ndarray | None
    reruns: int


class _Pending(BaseException):
    """Raised inside a cell run that read a cell not computed yet (not an ``Exception``,
    so a user's ``except Exception`` cannot swallow it)."""

    def __init__(self, flat: int):
        self.flat = flat


def estimate_trace_bytes(cells: int, reads_per_cell: float = 3.0) -> int:
    """Estimated peak memory of tracing ``cells`` cells.

    Examples
    --------
    >>> estimate_trace_bytes(1000) > 1000
    True
    """
    return int(cells * (BYTES_PER_CELL + BYTES_PER_READ * reads_per_cell))


def _converter(dtype: np.dtype) -> Callable[[Any], Any]:
    if dtype.kind in "iu":
        return int
    if dtype.kind == "b":
        return bool
    if dtype == np.float64:
        return float
    if dtype.kind == "f":
        scalar = dtype.type
        return lambda v: float(scalar(v))
    if dtype.kind == "c":
        return complex
    return lambda v: v


def flat_index(key: object, shape: tuple[int, ...], cell: tuple[int, ...]) -> int:
    """Validate an index into ``M`` read by ``cell`` and return its flat position (the
    trace's slow path; the sampler's every read): ``BadIndexError`` for an index that is
    not integers, one per axis, ``OutOfBoundsError`` for one outside ``shape``.

    Examples
    --------
    >>> flat_index((1, 2), (3, 4), (2, 2))
    6
    """
    nd = len(shape)
    idx = key if isinstance(key, tuple) else (key,)
    if len(idx) != nd:
        raise BadIndexError(cell, key, f"M has {nd} dimension(s), the read gives {len(idx)} index(es)")
    out = []
    for k in idx:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise BadIndexError(
                cell, key, f"index {k!r} is a {type(k).__name__}, not an integer"
            )
        out.append(int(k))
    if any(not 0 <= k < s for k, s in zip(out, shape)):
        raise OutOfBoundsError(cell, out, shape)
    flat = 0
    for k, s in zip(out, shape):
        flat = flat * s + k
    return flat


def _make_table_class(
    shape: tuple[int, ...],
    values: list[Any],
    reads: array,
    stack: list[int],
) -> type:
    """Build the recording stand-in for ``M``: a class whose ``__getitem__`` is a closure
    over the trace's state (closure variables are the fastest lookups Python has)."""
    nd = len(shape)
    log = reads.append
    pending = _Pending

    def current() -> tuple[int, ...]:
        return tuple(int(c) for c in np.unravel_index(stack[-1], shape))

    def slow(key: object) -> Any:
        flat = flat_index(key, shape, current())
        v = values[flat]
        if v is None:
            raise pending(flat)
        log(flat)
        return v

    if nd == 2:
        n0, n1 = shape

        def getitem(self: object, key: object) -> Any:
            try:
                i, j = key  # type: ignore[misc]
            except (TypeError, ValueError):
                return slow(key)
            if i.__class__ is int and j.__class__ is int and 0 <= i < n0 and 0 <= j < n1:
                flat = i * n1 + j
                v = values[flat]
                if v is None:
                    raise pending(flat)
                log(flat)
                return v
            return slow(key)

    elif nd == 1:
        (n0,) = shape

        def getitem(self: object, key: object) -> Any:
            if key.__class__ is int and 0 <= key < n0:  # type: ignore[operator]
                v = values[key]  # type: ignore[index]
                if v is None:
                    raise pending(key)
                log(key)
                return v
            return slow(key)

    else:

        def getitem(self: object, key: object) -> Any:
            return slow(key)

    def setitem(self: object, key: object, value: object) -> None:
        raise WriteError(current(), key)

    cls = type(
        "M",
        (),
        {
            "__slots__": (),
            "__getitem__": getitem,
            "__setitem__": setitem,
            "shape": shape,
            "ndim": nd,
            "size": math.prod(shape),
            "__len__": lambda self: shape[0],
            "__repr__": lambda self: f"<traced table M, shape {shape}>",
        },
    )
    return cls


def _failure(exc: Exception) -> str:
    """What a cell function's own exception says; for numba refusing the traced table
    (``M`` passed to a compiled helper), what to do instead.

    Examples
    --------
    >>> _failure(ZeroDivisionError("division by zero"))
    'ZeroDivisionError: division by zero'
    """
    if type(exc).__module__.startswith("numba") and f"{__name__}.M'" in str(exc):
        return ("M is passed to a numba-compiled function, whose reads depgraph cannot see "
                "and so cannot order the fill by: read M in the cell function itself and "
                "pass the values to that function")
    return f"{type(exc).__name__}: {exc}"


def _cycle_from_stack(stack: list[int], y: int, shape: tuple[int, ...]) -> CycleError:
    start = stack.index(y)
    path = [*stack[start:], y]
    return CycleError([np.unravel_index(p, shape) for p in path])


def trace(
    rec: Recurrence,
    target: Sequence[int] | None = None,
    progress: Callable[[int], None] | None = None,
    memory_limit: int | None = None,
) -> Trace:
    """Trace a recurrence: compute every cell in plain Python, recording its reads.

    Parameters
    ----------
    rec : Recurrence
    target : tuple of int, optional
        Trace only the solution-generated graph of this cell (its absolute dependencies
        and itself).
    progress : callable, optional
        Called with the number of finished cells now and then.
    memory_limit : int, optional
        Refuse (``TooLargeError``) when the estimated memory exceeds this many bytes;
        default: the memory available now.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(2, 3), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> t = trace(paths)
    >>> t.table.tolist()
    [[1, 1, 1], [1, 2, 3]]
    >>> [int(c) for c in t.cells], t.reads.tolist()
    ([0, 1, 2, 3, 4, 5], [1, 3, 2, 4])
    """
    shape = rec.shape
    n = rec.cells
    limit = memory.available_memory() if memory_limit is None else memory_limit
    need = estimate_trace_bytes(n)
    if need > limit:
        raise TooLargeError(
            f"tracing {rec.name!r} at shape {shape} ({n:,} cells) needs about "
            f"{format_bytes(need)} of memory (about {BYTES_PER_CELL + 3 * BYTES_PER_READ} "
            f"bytes a cell) and {format_bytes(limit)} is available: analyze a smaller size, "
            f"or trace only a target cell's graph ({setting('target')})"
        )
    if target is not None:
        roots: Sequence[int] | range = [_target_flat(target, shape)]
    else:
        roots = range(n)

    values: list[Any] = [None] * n
    reads = array("q")
    done = array("q")
    ends = array("q")
    stack: list[int] = []
    table = _make_table_class(shape, values, reads, stack)()
    func, args = rec.func, rec.args
    conv = _converter(rec.dtype)
    on_stack = bytearray(n)
    reruns = 0
    n_done = 0
    next_report = report_every = 1 << 16
    strides = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
    unravel2 = len(shape) == 2

    for root in roots:
        if values[root] is not None:
            continue
        stack.append(root)
        on_stack[root] = 1
        while stack:
            x = stack[-1]
            if unravel2:
                idx: tuple[int, ...] = divmod(x, shape[1])
            else:
                idx = tuple((x // s) % d for s, d in zip(strides, shape))
            start = len(reads)
            try:
                v = func(table, *idx, *args)
            except _Pending as p:
                del reads[start:]
                reruns += 1
                y = p.flat
                if on_stack[y]:
                    raise _cycle_from_stack(stack, y, shape) from None
                stack.append(y)
                on_stack[y] = 1
                continue
            except DepgraphError:
                raise
            except RecursionError:
                raise CellFunctionError(idx, "RecursionError inside the cell function") from None
            except Exception as exc:  # the user's own error: keep its message
                raise CellFunctionError(idx, _failure(exc)) from None
            if v is None:
                check_value(idx, v, rec.dtype)
            try:
                values[x] = conv(v)
            except (TypeError, ValueError, OverflowError):
                check_value(idx, v, rec.dtype)
            stack.pop()
            on_stack[x] = 0
            done.append(x)
            ends.append(len(reads))
            n_done += 1
            if n_done == next_report and progress is not None:
                progress(n_done)
                next_report += report_every
    if progress is not None:
        progress(n_done)
    return Trace(
        table=_to_table(values, rec, done),
        cells=np.frombuffer(done, dtype=np.int64),
        ends=np.frombuffer(ends, dtype=np.int64),
        reads=np.frombuffer(reads, dtype=np.int64),
        mask=None if len(done) == n else _mask(done, shape),
        reruns=reruns,
    )


def _target_flat(target: Sequence[int], shape: tuple[int, ...]) -> int:
    cell = tuple(int(t) for t in target)
    if len(cell) != len(shape) or any(not 0 <= c < s for c, s in zip(cell, shape)):
        raise UsageError(f"target cell {cell} is not a cell of shape {shape}")
    return int(np.ravel_multi_index(cell, shape))


def _mask(done: array, shape: tuple[int, ...]) -> np.ndarray:
    mask = np.zeros(math.prod(shape), dtype=bool)
    mask[np.frombuffer(done, dtype=np.int64)] = True
    return mask.reshape(shape)


def _to_table(values: list[Any], rec: Recurrence, done: array) -> np.ndarray:
    if len(done) < len(values):
        zero = rec.dtype.type(0).item()
        values = [zero if v is None else v for v in values]
    try:
        return np.array(values, dtype=rec.dtype).reshape(rec.shape)
    except (OverflowError, ValueError) as exc:
        for flat, v in enumerate(values):
            check_value(tuple(int(c) for c in np.unravel_index(flat, rec.shape)), v, rec.dtype)
        raise CellFunctionError((), str(exc)) from None


def check_value(cell: Sequence[int], value: Any, dtype: np.dtype) -> None:
    """``CellFunctionError`` naming ``cell`` unless ``value`` is a value of a ``dtype``
    table: not ``None``, converted as the trace converts it, within the dtype's range.

    Examples
    --------
    >>> check_value((3, 8), 165, np.dtype(np.int8))
    Traceback (most recent call last):
    ...
    depgraph.errors.CellFunctionError: cell (3, 8): the cell function failed: its value 165 does not fit the table's dtype int8
    """
    if value is None:
        raise CellFunctionError(cell, "it returned None; every cell needs a value")
    try:
        converted = _converter(dtype)(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise CellFunctionError(
            cell, f"it returned {value!r}, which is not a {dtype} value ({exc})") from None
    try:
        np.array(converted, dtype=dtype)
    except (OverflowError, ValueError):
        raise CellFunctionError(
            cell, f"its value {value!r} does not fit the table's dtype {dtype}") from None
