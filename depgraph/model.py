"""The model: a recurrence and a family of them, made by the ``recurrence`` and ``family``
decorators (SPEC section 6).

A recurrence is a plain Python *cell function* ``f(M, i, j, ..., *args)`` plus the table
shape, the table dtype and the extra arguments.  The function reads ``M`` with integer
indices only, never writes it, and returns the value of its cell.  A *family* is a function
of one integer size that returns a recurrence.

Assumptions: the cell function is pure (same inputs, same reads, same value) and its body
is plain Python that numba can compile when a compiled backend is used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from depgraph.errors import UsageError

__all__ = ["Recurrence", "Family", "recurrence", "family", "Progress"]

#: A progress reporter: called with what is being done and how many units it takes in
#: all (``None`` when unknown), it returns the callback to call with the units done so
#: far.  The library reports long work through one it is given, and prints nothing.
Progress = Callable[[str, int | None], Callable[[int], None]]


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
    """

    func: Callable[..., Any]
    shape: tuple[int, ...]
    dtype: np.dtype
    args: tuple[Any, ...] = ()
    name: str = ""

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def cells(self) -> int:
        return math.prod(self.shape)

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

    Examples
    --------
    >>> import numpy as np
    >>> @recurrence(shape=(6,), dtype=np.int64)
    ... def fib(M, i):
    ...     return i if i < 2 else M[i - 1] + M[i - 2]
    >>> fib
    Recurrence('fib', shape=(6,), dtype=int64)
    """
    shape_t = _check_shape(shape)
    dt = _check_dtype(dtype)
    args_t = tuple(args)

    def wrap(func: Callable[..., Any]) -> Recurrence:
        return Recurrence(func, shape_t, dt, args_t, name or func.__name__)

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
