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

Where that does not apply, the recurrence may name its own recovery function
(``recover=`` of :func:`depgraph.model.recurrence`): called with the filled table, the
cell's indices and the arguments, it returns the cells to follow, each of which must be
one the cell reads (its reads are recorded by running the cell once); following them
must never come back to a cell on the way (a loop).  The walk starts at the target:
the one asked for, else the one the recurrence names (``target=``), else the table's
last cell (:func:`target_cell`).

The table is a NumPy array, or any :class:`Cells`: a table served a piece at a time (a
block of rows refilled from a checkpoint, :mod:`runtime.backends.checkpoint`), told
before each cell's run which cell is next so it can hold the cells that one reads.  Both
steps of the walk (following the reads, or the recovery function) read it the same way,
so a recovery function is given the :class:`Cells` as ``M`` there, and reads only the
cells the cell may read.

Assumptions: the table was filled by this recurrence (each cell's value is what its
function returns on it); the cell function computes with Python's operators and
built-ins on the values it reads (a value passed to a NumPy function loses its reads).
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from depgraph.errors import RecurrenceError, UsageError, format_cell
from depgraph.model import Recurrence, check_cell, read_only

__all__ = ["Cells", "Solution", "Walked", "Walker", "aligned", "solution", "target_cell"]

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
        """The ``solution`` object of ``depgraph run --json``: its edges the solution's own
        tuples, which ``json`` writes as arrays (copying a million edges into lists first
        took seconds).

        Examples
        --------
        >>> import json
        >>> json.dumps(Solution((1, 1), 1, (((1, 1), (0, 0)),), ((1, 1), (0, 0)), 0).to_json())
        '{"target": [1, 1], "edges": [[[1, 1], [0, 0]]]}'
        """
        return {"target": list(self.target), "edges": self.edges}

    def summary(self) -> str:
        """One line, as ``depgraph run --solution`` prints it."""
        return (f"{len(self.cells):,} cells from M{self.target} = {self.value} "
                f"({len(self.edges):,} edges)")

    @property
    def is_path(self) -> bool:
        """Whether the solution is one path from the target (every cell on it decided by
        one read, as LCS's), not a tree (matrix chain's) or a DAG.

        Examples
        --------
        >>> Solution((1, 1), 1, (((1, 1), (0, 0)),), ((1, 1), (0, 0)), 0).is_path
        True
        """
        return len(self.edges) == len(self.cells) - 1 and \
            len({a for a, _ in self.edges}) == len(self.edges)

    @property
    def note(self) -> str | None:
        """What the solution holds beyond the reads that decided (a note of ``depgraph
        run``), or ``None``.

        Examples
        --------
        >>> Solution((1, 1), 2, (), ((1, 1),), 1).note
        'solution: 1 cell(s) read several cells with no max, min or comparison choosing among them (a sum): all their reads are edges of the solution'
        """
        if not self.undecided:
            return None
        return (f"solution: {self.undecided} cell(s) read several cells with no max, min or "
                "comparison choosing among them (a sum): all their reads are edges of the "
                "solution")


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
    ``cells[cell]``.  A compiled walk (:data:`Walker`) asks one that has a method
    ``window(cell)`` for a window instead: a dense array of the table's cells holding
    ``cell`` and the cells it reads, and the table cell of its first (or ``None``)."""

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
    """``M`` for one cell's run over the filled table (an array, or :class:`Cells` told
    the cell first): each read returns the cell's value, tracked, and is recorded."""

    def __init__(self, table: np.ndarray | Cells):
        self.table, self.shape, self.ndim = table, tuple(table.shape), len(table.shape)
        self.focus: Callable[[Cell], None] = table.focus if isinstance(table, Cells) else \
            (lambda cell: None)  # an array holds every cell
        self.reads: list[Cell] = []  # of the cell run last, in order

    def __getitem__(self, key: Any) -> _Tracked:
        at = key if isinstance(key, tuple) else (key,)
        cell = tuple(int(k) for k in at)
        if len(cell) != self.ndim or any(not 0 <= c < n for c, n in zip(cell, self.shape)):
            raise RecurrenceError(f"the solution walk read {cell}, outside shape {self.shape}")
        self.reads.append(cell)
        return _Tracked(self.table[cell], (cell,))

    def run(self, rec: Recurrence, cell: Cell) -> Any:
        """``rec``'s cell function on ``cell``, its reads recorded; the table holds
        ``cell`` and its reads until the next run."""
        self.focus(cell)
        self.reads.clear()
        try:
            return rec.func(self, *cell, *rec.args)
        except RecurrenceError:
            raise
        except Exception as exc:
            raise RecurrenceError(f"the solution walk could not run cell {cell}: "
                                  f"{type(exc).__name__}: {exc}") from None


#: One step of the walk: the cells to follow from a cell, and whether its value read
#: several cells with nothing choosing among them.
Step = Callable[[Cell], tuple[tuple[Cell, ...], bool]]


def _decided(rec: Recurrence, view: _View) -> Step:
    """The step that follows the reads that decided a cell's value."""

    def step(cell: Cell) -> tuple[tuple[Cell, ...], bool]:
        _COMPARED[0] = 0
        value = view.run(rec, cell)
        reads = value.reads if isinstance(value, _Tracked) else ()
        return reads, len(reads) > 1 and not _COMPARED[0]  # a sum nothing chose

    return step


def _recovered(rec: Recurrence, view: _View, recover: Callable[..., Any], name: str) -> Step:
    """The step that follows the cells ``recover`` (the recurrence's recovery function,
    called ``name`` in errors) returns, each checked to be one the cell reads.  It is
    given the table read-only: an array's read-only view, or the :class:`Cells` (which
    has no way to write), holding the cell and its reads."""
    frozen = read_only(view.table) if isinstance(view.table, np.ndarray) else view.table

    def step(cell: Cell) -> tuple[tuple[Cell, ...], bool]:
        view.run(rec, cell)
        reads = set(view.reads)
        try:
            returned = list(recover(frozen, *cell, *rec.args))
        except Exception as exc:
            raise RecurrenceError(f"cell {format_cell(cell)}: {name} failed: "
                                  f"{type(exc).__name__}: {exc}") from None
        follow: list[Cell] = []
        for got in returned:
            read = check_cell(got, view.shape, RecurrenceError,
                              f"cell {format_cell(cell)}: {name} returned")
            if read not in reads:
                reads_text = ", ".join(format_cell(r) for r in sorted(reads)) or "nothing"
                raise RecurrenceError(
                    f"cell {format_cell(cell)}: {name} returned {format_cell(read)}, which the "
                    f"cell does not read (it reads {reads_text}); return only cells the cell "
                    "reads")
            if read not in follow:
                follow.append(read)
        return tuple(follow), False

    return step


def _loop(edges: Sequence[tuple[Cell, Cell]], start: Cell) -> list[Cell] | None:
    """A cycle of ``edges`` reached from ``start``, its first cell repeated last, or
    ``None`` (an iterative depth-first search: no recursion limit on long paths).

    Examples
    --------
    >>> _loop([((0, 2), (0, 1)), ((0, 1), (0, 0)), ((0, 0), (0, 1))], (0, 2))
    [(0, 1), (0, 0), (0, 1)]
    >>> _loop([((0, 2), (0, 1)), ((0, 2), (0, 0)), ((0, 1), (0, 0))], (0, 2)) is None
    True
    """
    after: dict[Cell, list[Cell]] = {}
    for a, b in edges:
        after.setdefault(a, []).append(b)
    path, on_path, done = [start], {start}, set()
    todo = [iter(after.get(start, ()))]
    while todo:
        nxt = next(todo[-1], None)
        if nxt is None:
            todo.pop()
            done.add(path[-1])
            on_path.discard(path.pop())
        elif nxt in on_path:
            return path[path.index(nxt):] + [nxt]
        elif nxt not in done:
            path.append(nxt)
            on_path.add(nxt)
            todo.append(iter(after.get(nxt, ())))
    return None


def target_cell(rec: Recurrence, target: Sequence[int] | None = None,
                table: np.ndarray | Cells | None = None) -> Cell:
    """The cell a solution of ``rec`` starts from: ``target`` (``UsageError`` when it is
    not a cell of the table), else the cell ``rec`` names as its answer
    (:meth:`depgraph.model.Recurrence.answer`), else the table's last cell.

    ``table``: the filled table, which a target function needs whole (a NumPy array); one
    not kept whole (``None``, as a score's; a :class:`Cells`) gives ``UsageError`` there.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(3, 4), dtype=np.int64)
    ... def ij(M, i, j):
    ...     return i + j
    >>> target_cell(ij), target_cell(ij, [1, 0])
    ((2, 3), (1, 0))
    >>> ij_best = recurrence(shape=(3, 4), dtype=np.int64, target=lambda M: (0, 0))(ij.func)
    >>> target_cell(ij_best, table=np.zeros((3, 4)))
    (0, 0)
    >>> target_cell(ij_best)
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: the target function <lambda> of 'ij' needs the whole filled table, which the score does not keep; give the cell (target=...) or leave out score=True
    """
    if target is not None:
        return check_cell(target, rec.shape, UsageError, "target")
    whole = table if isinstance(table, np.ndarray) else None
    return rec.answer(whole) or tuple(n - 1 for n in rec.shape)


#: What a walk found: the cells in the order found, the edges in order, the cells
#: undecided, and whether an edge reached a cell already seen (else the edges form a
#: tree from the target, which cannot loop).
Walked = tuple[Sequence[Cell], Sequence[tuple[Cell, Cell]], int, bool]

#: A walk given from outside (the runtime's compiled one): from the table, the target
#: and the Python step (for the cells it does not run itself), what it found, in the
#: Python walk's order; ``None`` where it does not walk this table.
Walker = Callable[[Any, Cell, Step], Walked | None]


def _walk(start: Cell, step: Step) -> Walked:
    """The breadth-first walk from ``start``, each cell's reads from ``step``."""
    seen, order = {start}, deque([start])
    cells: list[Cell] = []
    edges: list[tuple[Cell, Cell]] = []
    undecided, revisit = 0, False
    while order:
        cell = order.popleft()
        cells.append(cell)
        reads, unchosen = step(cell)
        undecided += unchosen
        for read in reads:
            edges.append((cell, read))
            if read in seen:
                revisit = True
            else:
                seen.add(read)
                order.append(read)
    return cells, edges, undecided, revisit


def solution(rec: Recurrence, table: np.ndarray | Cells, target: Sequence[int] | None = None,
             walker: Walker | None = None) -> Solution:
    """The cells whose reads decided ``target``'s value (module docstring), from
    ``rec``'s filled ``table`` (an array, or :class:`Cells`); ``target`` defaults to the
    cell the recurrence names as its answer, else the table's last cell
    (:func:`target_cell`).  ``UsageError`` for a ``target`` outside the table;
    ``RecurrenceError`` naming the cell when the walk cannot go on (a recovery function
    returning a cell the cell does not read, a loop).  ``walker``: a walk that finds
    what this one would, faster (:data:`Walker`), used where the recurrence names no
    recovery function.

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
    start = target_cell(rec, target, table)
    view = _View(table)
    view.focus(start)
    decided = table[start]  # read now: the walk goes on to other pieces of a Cells
    who = "the solution walk" if rec.recover is None else \
        f"the recovery function {getattr(rec.recover, '__name__', repr(rec.recover))}"
    who += f" of {rec.name!r}"
    step = _decided(rec, view) if rec.recover is None else \
        _recovered(rec, view, rec.recover, who)
    walked = walker(table, start, step) if walker is not None and rec.recover is None \
        else None
    cells, edges, undecided, revisit = walked if walked is not None else _walk(start, step)
    loop = _loop(edges, start) if revisit else None
    if loop is not None:
        raise RecurrenceError(
            f"{who} loops at cell {format_cell(loop[0])}: "
            f"{' -> '.join(format_cell(c) for c in loop)}; following the cells that decided "
            "a value must end at cells that read nothing (was the table filled by this "
            "recurrence?)")
    return Solution(start, decided, tuple(edges), tuple(cells), undecided)


def aligned(found: Solution, x: Sequence[str], y: Sequence[str], gap: str = "-"
            ) -> tuple[str, str]:
    """The two sequences aligned along a path ``found`` through an alignment table (row
    ``i`` after ``x[:i]``, column ``j`` after ``y[:j]``: LCS, edit distance,
    Smith-Waterman), from the path's last cell to its target: a diagonal step pairs
    ``x[i-1]`` with ``y[j-1]``, a step down ``x[i-1]`` with ``gap``, a step right ``gap``
    with ``y[j-1]``.  ``UsageError`` unless ``found`` is such a path.

    Examples
    --------
    >>> path = Solution((2, 3), 2, (((2, 3), (2, 2)), ((2, 2), (1, 1)), ((1, 1), (0, 0))),
    ...                 ((2, 3), (2, 2), (1, 1), (0, 0)), 0)
    >>> aligned(path, "AC", "ACG")
    ('AC-', 'ACG')
    """
    if not found.is_path:
        raise UsageError(f"the solution from {found.target} is not a path (a cell with "
                         "several reads on it): only a path aligns two sequences")
    steps = dict(found.edges)
    top, bottom = [], []
    for cell in found.cells[:-1]:
        (i, j), (a, b) = cell, steps[cell]
        if (i - a, j - b) not in ((1, 1), (1, 0), (0, 1)):
            raise UsageError(f"the solution steps from {cell} to {(a, b)}: an alignment "
                             "steps one row up, one column left, or both")
        top.append(x[i - 1] if a < i else gap)
        bottom.append(y[j - 1] if b < j else gap)
    return "".join(reversed(top)), "".join(reversed(bottom))
