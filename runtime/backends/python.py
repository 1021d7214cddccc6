"""The python backend: the cell function in plain Python over a real NumPy table.

It is the reference semantics, not a contender: every other backend is checked against
the table it fills.  A fill takes any valid order of the table's flat (C-order) cells: a
pattern's steps in turn (:func:`pattern_order`), a lexicographic sweep
(:func:`sweep_order`), the stages or the trace's own finish order.  The score-only walk
keeps the last rows (columns) of the walk in a ring whose reads are checked, and checks
each value fits the table's dtype as the trace does (:func:`python_score`).

Assumptions: the cell function runs as plain Python (no numba) and reads ``M`` by
subscripts; a negative index is an out-of-bounds read, checked here only by the score's
ring (the fills' reads were checked by the plan that chose the order).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from depgraph.errors import CellFunctionError, OutOfBoundsError, RecurrenceError
from depgraph.frontend.trace import check_value
from depgraph.model import Recurrence
from patterns import BY_CODE, Sweep, step_line
from runtime.backends.cpu_score import ring_buffer
from runtime.backends.walk import ScorePlan, ring_slot

__all__ = ["python_fill", "pattern_order", "sweep_order", "python_score"]


def python_fill(rec: Recurrence, flat_order: Iterable[int]) -> np.ndarray:
    """The table filled by the cell function over a real NumPy table, cell by cell in
    ``flat_order`` (a valid order: every read made before the cell).

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(2, 3), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> python_fill(paths, range(6)).tolist()
    [[1, 1, 1], [1, 2, 3]]
    """
    M = np.zeros(rec.shape, dtype=rec.dtype)
    f, args, shape = rec.func, rec.args, rec.shape
    for x in flat_order:
        idx = np.unravel_index(x, shape)
        M[idx] = f(M, *(int(k) for k in idx), *args)
    return M


def pattern_order(code: str, shape: tuple[int, ...]) -> Iterator[int]:
    """The flat cells of a 2-D table step by step in pattern ``code``.

    Examples
    --------
    >>> list(pattern_order("NOSE", (2, 2)))
    [0, 1, 2, 3]
    """
    p = BY_CODE[code]
    n, m = shape
    for t in range(p.steps((n, m))):
        i0, j0, di, dj, cnt = step_line(p.index, t, n, m)
        for k in range(cnt):
            yield (i0 + k * di) * m + j0 + k * dj


def sweep_order(sweep: Sweep, shape: tuple[int, ...]) -> Iterator[int]:
    """The flat cells of a 2-D table in a lexicographic order.

    Examples
    --------
    >>> list(sweep_order(Sweep(1, 1, 1), (2, 2)))
    [0, 2, 1, 3]
    """
    n, m = shape
    rows = range(n) if sweep.si > 0 else range(n - 1, -1, -1)
    cols = range(m) if sweep.sj > 0 else range(m - 1, -1, -1)
    if sweep.axis == 0:
        return (i * m + j for i in rows for j in cols)
    return (i * m + j for j in cols for i in rows)


class _Ring:
    """``M`` for the score-only walk: the last ``keep`` slices, reads checked; an integer
    cell reads as a Python integer, exact, as the trace reads it."""

    def __init__(self, rec: Recurrence, plan: ScorePlan) -> None:
        self.buf = ring_buffer(rec, plan)
        self.axis, self.shape, self.cell = plan.axis, rec.shape, (0, 0)
        self.exact = rec.dtype.kind in "iu"

    def slot(self, i: int, j: int) -> tuple[int, int]:
        return ring_slot(self.axis, self.buf, i, j)

    def __getitem__(self, key: tuple[int, int]) -> Any:
        a, b = int(key[0]), int(key[1])
        if not (0 <= a < self.shape[0] and 0 <= b < self.shape[1]):
            raise OutOfBoundsError(self.cell, (a, b), self.shape)
        value = self.buf[self.slot(a, b)]
        return value.item() if self.exact else value


def python_score(rec: Recurrence, plan: ScorePlan, progress: Callable[[int], None] | None,
                 cell: tuple[int, int]) -> tuple[np.ndarray, float]:
    """The score-only walk of ``plan`` by rows (columns) in plain Python, up to the slice
    holding ``cell``: the ring of its last ``plan.keep`` slices, and the seconds it took.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> from runtime.backends.walk import ScorePlan
    >>> @recurrence(shape=(4, 3), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> rows = ScorePlan("RUD", 0, (False, False), 2, 0, 0, False)
    >>> ring, _ = python_score(paths, rows, None, (1, 2))
    >>> ring.tolist()  # rows 0 and 1, the walk stopped after row 1
    [[1, 1, 1], [1, 2, 3]]
    """
    n, m = rec.shape
    ring = _Ring(rec, plan)
    rows = range(n - 1, -1, -1) if plan.flips[0] else range(n)
    cols = range(m - 1, -1, -1) if plan.flips[1] else range(m)
    outer, inner = (rows, cols) if plan.axis == 0 else (cols, rows)
    outer = outer[:plan.position(cell, rec.shape)[plan.axis] + 1]
    t0 = time.perf_counter()
    for done, x in enumerate(outer, 1):
        for y in inner:
            i, j = (x, y) if plan.axis == 0 else (y, x)
            ring.cell = (i, j)
            try:
                value = rec.func(ring, i, j, *rec.args)
            except RecurrenceError:
                raise
            except Exception as exc:
                raise CellFunctionError((i, j), f"{type(exc).__name__}: {exc}") from None
            check_value((i, j), value, rec.dtype)
            ring.buf[ring.slot(i, j)] = value
        if progress:
            progress(done * len(inner))
    return ring.buf, time.perf_counter() - t0
