"""The model: a recurrence and a family of them, made by the ``recurrence`` and ``family``
decorators (SPEC section 6).

A recurrence is a plain Python *cell function* ``f(M, i, j, ..., *args)`` plus the table
shape, the table dtype and the extra arguments.  The function reads ``M`` with integer
indices only, never writes it, and returns the value of its cell.  A *family* is a function
of one integer size that returns a recurrence.

A recurrence may also name its *answer* (``target``: a cell, or a function of the filled
table that returns one, as Smith-Waterman's best cell) and how to recover the cells that
decided a value (``recover``) where following the reads does not
(:mod:`depgraph.frontend.provenance`).

Assumptions: the cell function is pure (same inputs, same reads, same value) and its body
is plain Python that numba can compile when a compiled backend is used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from depgraph.errors import DepgraphError, RecurrenceError, UsageError, setting

__all__ = ["Recurrence", "Family", "recurrence", "family", "Progress", "Target", "Recover",
           "check_cell", "read_only"]

#: A progress reporter: called with what is being done and how many units it takes in
#: all (``None`` when unknown), it returns the callback to call with the units done so
#: far.  The library reports long work through one it is given, and prints nothing.
Progress = Callable[[str, int | None], Callable[[int], None]]
#: The cell a recurrence names as its answer: a cell, or a function of the filled table
#: (a read-only NumPy array) that returns one.
Target = Sequence[int] | Callable[[np.ndarray], Sequence[int]]
#: A recovery function ``(M, *index, *args) -> cells to follow``: the reads that decided
#: the cell's value, ``M`` the filled table (a read-only NumPy array; in a score's walk
#: from checkpoints, the table served a piece at a time, holding the cell and its reads).
Recover = Callable[..., Iterable[Sequence[int]]]


@dataclass(frozen=True, eq=False)
class Recurrence:
    """A DP table definition: cell function, shape, dtype and extra arguments.

    Examples
    --------
    >>> import numpy as np
    >>> @recurrence(shape=(3, 4), dtype=np.int64)
    ... def paths(M, i, j):
    ...     if i == 0 or j == 0:
    ...         return 1
    ...     return M[i - 1, j] + M[i, j - 1]
    >>> paths.name, paths.shape, paths.ndim, paths.cells
    ('paths', (3, 4), 2, 12)
    >>> paths.answer(np.zeros(paths.shape)) is None  # it names no answer
    True
    """

    func: Callable[..., Any]
    shape: tuple[int, ...]
    dtype: np.dtype
    args: tuple[Any, ...] = ()
    name: str = ""
    target: tuple[int, ...] | Callable[[np.ndarray], Sequence[int]] | None = None
    recover: Recover | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def cells(self) -> int:
        return math.prod(self.shape)

    @property
    def answer_function(self) -> str | None:
        """The name of the function of the filled table that finds this recurrence's
        answer (``target=``); ``None`` where it names a cell, or no answer.

        Examples
        --------
        >>> def best(M):
        ...     return np.unravel_index(np.argmax(M), M.shape)
        >>> recurrence(shape=(2, 3), target=best)(lambda M, i, j: i).answer_function
        'best'
        """
        if not callable(self.target):
            return None
        return getattr(self.target, "__name__", repr(self.target))

    def answer(self, table: np.ndarray | None) -> tuple[int, ...] | None:
        """The cell this recurrence names as its answer in its filled ``table`` (``None``
        when it names none); ``RecurrenceError`` naming the target function when it
        fails or returns something that is not a cell of the table.  A target cell needs
        no ``table``; a target function needs the whole table (``UsageError`` without
        one, as where a score keeps a few rows).

        Examples
        --------
        >>> @recurrence(shape=(2, 3), dtype=np.int64,
        ...             target=lambda M: np.unravel_index(np.argmax(M), M.shape))
        ... def ij(M, i, j):
        ...     return i * j
        >>> ij.answer(np.array([[0, 0, 0], [0, 1, 2]]))
        (1, 2)
        """
        if not callable(self.target):
            return self.target
        what = f"the target function {self.answer_function} of {self.name!r}"
        if table is None:
            raise UsageError(f"{what} needs the whole filled table, which the score does not "
                             f"keep; give the cell ({setting('target')}) or leave out "
                             f"{setting('score', True)}")
        try:
            cell = self.target(read_only(table))
        except Exception as exc:
            raise RecurrenceError(f"{what} failed on the filled table: {type(exc).__name__}: "
                                  f"{exc}") from None
        return check_cell(cell, self.shape, RecurrenceError, f"{what} returned")

    def __repr__(self) -> str:
        return f"Recurrence({self.name!r}, shape={self.shape}, dtype={self.dtype})"


@dataclass(frozen=True, eq=False)
class Family:
    """A function of one integer size returning a :class:`Recurrence`.

    Examples
    --------
    >>> @family
    ... def ones(n):
    ...     @recurrence(shape=(n, n), dtype=np.int32)
    ...     def ones(M, i, j):
    ...         return 1
    ...     return ones
    >>> ones(5).shape
    (5, 5)
    """

    func: Callable[[int], Recurrence]
    name: str = field(default="")

    def __call__(self, size: int) -> Recurrence:
        rec = self.func(int(size))
        if not isinstance(rec, Recurrence):
            raise UsageError(
                f"family {self.name!r} returned {type(rec).__name__} for size {size}, "
                "not a recurrence made with @recurrence"
            )
        return rec

    def __repr__(self) -> str:
        return f"Family({self.name!r})"


def _integer(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_shape(shape: Sequence[int] | int) -> tuple[int, ...]:
    """The shape as a tuple of Python ints; ``UsageError`` unless every extent is a
    positive integer (a float extent is refused, not truncated).

    Examples
    --------
    >>> _check_shape((3.5, 5))
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: shape must be a tuple of positive integers, got (3.5, 5): 3.5 is a float
    """
    if _integer(shape):
        shape = (int(shape),)  # type: ignore[arg-type]
    try:
        extents = tuple(shape)  # type: ignore[arg-type]
    except TypeError:
        raise UsageError(f"shape must be a tuple of positive integers, got {shape!r}") from None
    odd = next((s for s in extents if not _integer(s)), None)
    if odd is not None:
        raise UsageError(f"shape must be a tuple of positive integers, got {shape!r}: "
                         f"{odd!r} is a {type(odd).__name__}")
    if not extents or any(s < 1 for s in extents):
        raise UsageError(f"shape must be a tuple of positive integers, got {shape!r}")
    return tuple(int(s) for s in extents)


def read_only(table: np.ndarray) -> np.ndarray:
    """A read-only view of ``table``: what a recurrence's own functions are given, so
    they cannot change the filled table.

    Examples
    --------
    >>> read_only(np.zeros(2)).flags.writeable
    False
    """
    view = table.view()
    view.flags.writeable = False
    return view


def check_cell(cell: Any, shape: tuple[int, ...], error: type[DepgraphError],
               what: str) -> tuple[int, ...]:
    """``cell`` as a tuple of Python ints; ``error`` (its message begins with ``what``)
    unless it is one index per axis of ``shape``, each within the table.

    Examples
    --------
    >>> check_cell(np.array([1, 2]), (3, 4), UsageError, "target")
    (1, 2)
    >>> check_cell((1, 4), (3, 4), UsageError, "target")
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: target (1, 4): outside the table's shape (3, 4)
    """
    try:
        parts = tuple(cell)
    except TypeError:
        parts = None
    if parts is None or not all(_integer(c) for c in parts):
        raise error(f"{what} {cell!r}: not a cell (a tuple of {len(shape)} integer indices)")
    out = tuple(int(c) for c in parts)
    if len(out) != len(shape):
        raise error(f"{what} {out}: {len(out)} indices for a {len(shape)}-D table of shape "
                    f"{shape}")
    if any(not 0 <= c < n for c, n in zip(out, shape)):
        raise error(f"{what} {out}: outside the table's shape {shape}")
    return out


def _check_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a NumPy dtype; ``UsageError`` unless it holds numbers (booleans,
    integers, floats or complex numbers: what the backends compute and compare).

    Examples
    --------
    >>> _check_dtype("U1")
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: dtype <U1 is not a number type: tables hold booleans, integers, floats or complex numbers
    """
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise UsageError(f"dtype {dtype!r} is not a NumPy dtype") from None
    if dt.kind not in "biufc":
        raise UsageError(f"dtype {dt} is not a number type: tables hold booleans, integers, "
                         "floats or complex numbers")
    return dt


def recurrence(
    shape: Sequence[int] | int,
    dtype: Any = np.float64,
    args: Sequence[Any] = (),
    name: str | None = None,
    target: Target | None = None,
    recover: Recover | None = None,
) -> Callable[[Callable[..., Any]], Recurrence]:
    """Decorate a cell function ``f(M, *index, *args)`` into a :class:`Recurrence`.

    Parameters
    ----------
    shape : tuple of int
        The table shape, any number of dimensions.
    dtype : numpy dtype
        The table's element type.
    args : sequence
        Extra arguments (NumPy arrays or scalars) passed after the indices.
    name : str, optional
        Defaults to the function's name.
    target : cell or callable, optional
        The cell holding the recurrence's answer, or a function of the filled table (a
        read-only NumPy array) returning it, as Smith-Waterman's best cell: where
        ``depgraph run`` reads the value and its solution starts.  Default: the last cell
        filled.  A score's solution (``run --score --solution``) takes a cell only.
    recover : callable, optional
        ``recover(M, *index, *args)``: the cells (among those the cell reads) that decided
        the cell's value, ``M`` the filled table (read-only; in a score's solution it holds
        only the cell and its reads); the solution follows them instead of tracking the
        reads (:func:`depgraph.frontend.provenance.solution`).

    Examples
    --------
    >>> import numpy as np
    >>> @recurrence(shape=(6,), dtype=np.int64)
    ... def fib(M, i):
    ...     return i if i < 2 else M[i - 1] + M[i - 2]
    >>> fib
    Recurrence('fib', shape=(6,), dtype=int64)
    >>> recurrence(shape=(6,), target=(6,))
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: target (6,): outside the table's shape (6,)
    """
    shape_t = _check_shape(shape)
    dt = _check_dtype(dtype)
    args_t = tuple(args)
    target_t = target if target is None or callable(target) else \
        check_cell(target, shape_t, UsageError, "target")
    if recover is not None and not callable(recover):
        raise UsageError(f"recover must be a function (M, *index, *args) -> cells to follow, "
                         f"got {type(recover).__name__}")

    def wrap(func: Callable[..., Any]) -> Recurrence:
        return Recurrence(func, shape_t, dt, args_t, name or func.__name__, target_t, recover)

    return wrap


def family(func: Callable[[int], Recurrence]) -> Family:
    """Decorate a function of one integer size that returns a recurrence.

    Examples
    --------
    >>> @family
    ... def grid(n):
    ...     @recurrence(shape=(n, n + 1), dtype=np.int64)
    ...     def grid(M, i, j):
    ...         return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    ...     return grid
    >>> grid(3).shape
    (3, 4)
    """
    return Family(func, func.__name__)
