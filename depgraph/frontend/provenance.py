"""Solution recovery: the cells whose reads decided a target cell's value (its provenance).

The cell function runs again in plain Python, one cell at a time from the target, over
the filled table: each read of ``M`` returns the cell's value wrapped with the read's
place, and the wrapper carries its reads through what the cell does with it.
Arithmetic passes on every read of its operands; ``max`` and ``min`` (Python's, which
compare and return one of their operands) pass on the winner's (ties: the first operand,
as Python's ``max`` and ``min`` keep the first); a comparison that picks a branch (``if
take > keep: return take``), or a loop that keeps a running best (``if c < best: best =
c``), passes on the reads of the value returned.  The reads of the value a cell returns
are its edges of the solution; the walk goes on from them until cells that read nothing.
So the solution is a path for LCS or edit distance, a tree for matrix chain.

The table is a NumPy array, or any :class:`Cells`: a table served a piece at a time (a
block of rows refilled from a checkpoint, :mod:`runtime.backends.checkpoint`), told
before each cell's run which cell is next so it can hold the cells that one reads.

Assumptions: the table was filled by this recurrence (each cell's value is what its
function returns on it); the cell function computes with Python's operators and
built-ins on the values it reads (a value passed to a NumPy function loses its reads).
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from depgraph.errors import RecurrenceError, UsageError
from depgraph.model import Recurrence

__all__ = ["Cells", "Solution", "solution", "target_cell"]

Cell = tuple[int, ...]


@dataclass(frozen=True)
class Solution:
    """The sub-DAG of the cells that decided a target's value.

    Attributes
    ----------
    target : tuple of int
    value : Any
        The target's value in the table.
    edges : tuple of (cell, read)
        One edge from each cell of the solution to each read that decided it, in the
        order found from the target (breadth first); a cell that reads nothing has none.
    cells : tuple of cell
        The solution's cells, the target first, in the order found.
    undecided : int
        Cells whose value read several cells with no comparison of read values choosing
        among them (a sum, as binomial coefficients'): all their reads are edges.
    """

    target: Cell
    value: Any
    edges: tuple[tuple[Cell, Cell], ...]
    cells: tuple[Cell, ...]
    undecided: int

    def to_json(self) -> dict[str, Any]:
        """The ``solution`` object of ``depgraph run --json``.

        Examples
        --------
        >>> Solution((1, 1), 1, (((1, 1), (0, 0)),), ((1, 1), (0, 0)), 0).to_json()
        {'target': [1, 1], 'edges': [[[1, 1], [0, 0]]]}
        """
        return {"target": list(self.target),
                "edges": [[list(a), list(b)] for a, b in self.edges]}

    def summary(self) -> str:
        """One line, as ``depgraph run --solution`` prints it."""
        note = (f"; {self.undecided} cell(s) whose value sums several reads with no max, "
                f"min or comparison choosing: all of them are on it" if self.undecided else "")
        return (f"{len(self.cells):,} cells from M{self.target} = {self.value} "
                f"({len(self.edges):,} edges){note}")


class _Tracked:
    """A value read from ``M``, with the reads it came from (in order, no repeats)."""

    __slots__ = ("value", "reads")

    def __init__(self, value: Any, reads: tuple[Cell, ...]):
        self.value, self.reads = value, reads

    def _with(self, other: Any, value: Any) -> _Tracked:
        more = other.reads if isinstance(other, _Tracked) else ()
        return _Tracked(value, self.reads + tuple(r for r in more if r not in self.reads))

    def __repr__(self) -> str:
        return f"{self.value!r}@{self.reads}"

    def __bool__(self) -> bool:
        return bool(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)

    def __neg__(self) -> _Tracked:
        return _Tracked(-self.value, self.reads)

    def __pos__(self) -> _Tracked:
        return self

    def __abs__(self) -> _Tracked:
        return _Tracked(abs(self.value), self.reads)

    def __round__(self, digits: int | None = None) -> _Tracked:
        return _Tracked(round(self.value, digits), self.reads)


def _plain(x: Any) -> Any:
    return x.value if isinstance(x, _Tracked) else x


def _number(v: Any) -> Any:
    """A plain Python number for a NumPy scalar, so its operators give plain numbers."""
    return v.item() if isinstance(v, np.generic) else v


def _arithmetic(op: Any) -> tuple[Any, Any]:
    """``op`` (from :mod:`operator`) with a tracked value on the left, and on the right:
    the result carries both operands' reads."""

    def forward(self: _Tracked, other: Any) -> _Tracked:
        return self._with(other, op(_number(self.value), _number(_plain(other))))

    def backward(self: _Tracked, other: Any) -> _Tracked:
        return self._with(other, op(_number(_plain(other)), _number(self.value)))

    return forward, backward


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    _forward, _backward = _arithmetic(getattr(operator, _name))
    setattr(_Tracked, f"__{_name}__", _forward)
    setattr(_Tracked, f"__r{_name}__", _backward)

#: Comparisons of read values made since the count was last reset: a cell whose value
#: carries several reads was decided by one (``max`` over sums, say) unless it is 0.
_COMPARED = [0]


def _comparison(test: Any) -> Any:
    def compare(self: _Tracked, other: Any) -> bool:
        _COMPARED[0] += 1
        return bool(test(self.value, _plain(other)))

    return compare


for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(_Tracked, f"__{_name}__", _comparison(getattr(operator, _name)))
_Tracked.__hash__ = None  # type: ignore[assignment]


@runtime_checkable
class Cells(Protocol):
    """A filled table served a piece at a time: :meth:`focus` is called before each
    cell's run, and the cells that cell reads (and the cell itself) are then read with
    ``cells[cell]``."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The table's shape."""
        ...

    def focus(self, cell: Cell) -> None:
        """Hold ``cell`` and every cell it may read, until the next call."""
        ...

    def __getitem__(self, cell: Cell) -> Any:
        """The value of a held cell."""
        ...


class _View:
    """``M`` for one cell's run: each read returns the cell's value, tracked."""

    def __init__(self, table: np.ndarray | Cells):
        self.table, self.shape, self.ndim = table, tuple(table.shape), len(table.shape)

    def __getitem__(self, key: Any) -> _Tracked:
        at = key if isinstance(key, tuple) else (key,)
        cell = tuple(int(k) for k in at)
        if len(cell) != self.ndim or any(not 0 <= c < n for c, n in zip(cell, self.shape)):
            raise RecurrenceError(f"the solution walk read {cell}, outside shape {self.shape}")
        return _Tracked(self.table[cell], (cell,))


def target_cell(shape: tuple[int, ...], target: Sequence[int] | None) -> Cell:
    """The cell a solution starts from: ``target``, else the last cell of a table of
    ``shape``; ``UsageError`` when it is outside the table.

    Examples
    --------
    >>> target_cell((3, 4), None), target_cell((3, 4), [1, 0])
    ((2, 3), (1, 0))
    """
    start = tuple(int(t) for t in (target if target is not None else [n - 1 for n in shape]))
    if len(start) != len(shape) or any(not 0 <= t < n for t, n in zip(start, shape)):
        raise UsageError(f"target {start} is outside the table's shape {shape}")
    return start


def solution(rec: Recurrence, table: np.ndarray | Cells, target: Sequence[int] | None = None
             ) -> Solution:
    """The cells whose reads decided ``target``'s value (module docstring), from
    ``rec``'s filled ``table`` (an array, or :class:`Cells`); ``target`` defaults to the
    table's last cell.

    Examples
    --------
    >>> from depgraph import fill, recurrence
    >>> A = np.array([[1, 5, 1, 1], [1, 1, 9, 1], [2, 1, 1, 1]])
    >>> @recurrence(shape=A.shape, dtype=np.int64, args=(A,))
    ... def best(M, i, j, A):  # the best path of steps down and right
    ...     up = M[i - 1, j] if i > 0 else 0
    ...     left = M[i, j - 1] if j > 0 else 0
    ...     return A[i, j] + max(up, left)
    >>> s = solution(best, fill(best, backend="python").table)
    >>> int(s.value), s.cells
    (18, ((2, 3), (1, 3), (1, 2), (0, 2), (0, 1), (0, 0)))
    """
    start = target_cell(tuple(table.shape), target)
    focus = table.focus if isinstance(table, Cells) else (lambda cell: None)
    focus(start)
    decided = table[start]
    view = _View(table)
    seen, order = {start}, deque([start])
    cells: list[Cell] = []
    edges: list[tuple[Cell, Cell]] = []
    undecided = 0
    while order:
        cell = order.popleft()
        cells.append(cell)
        focus(cell)
        _COMPARED[0] = 0
        try:
            value = rec.func(view, *cell, *rec.args)
        except RecurrenceError:
            raise
        except Exception as exc:
            raise RecurrenceError(f"the solution walk could not run cell {cell}: "
                                  f"{type(exc).__name__}: {exc}") from None
        reads = value.reads if isinstance(value, _Tracked) else ()
        undecided += len(reads) > 1 and not _COMPARED[0]  # a sum nothing chose
        for read in reads:
            edges.append((cell, read))
            if read not in seen:
                seen.add(read)
                order.append(read)
    return Solution(start, decided, tuple(edges), tuple(cells), undecided)

