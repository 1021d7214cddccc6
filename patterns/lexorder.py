"""Lexicographic orders of a table of any number of dimensions: one cell at a time, the
axes nested outer to inner, each walked up or down.

A 2-D table's eight such orders are :class:`patterns.Sweep`'s (:attr:`Sweep.order`); a
k-D table's sequential reference fill (:mod:`runtime.schedule.plan`) walks the one
:func:`lex_order` picks from the source's read offsets, checking each read where it
runs.  A read at offset ``d`` from its cell (an integer per axis, ``None`` where it is
not known: it depends on the cell or on data) comes before its cell when, along the
order's axes outer to inner, the first component of ``d`` that is not 0 points against
that axis's walk.

Assumption: tables have at least one axis.  An order is only a proposal: where an
offset is unknown, whether the read comes first is decided by the fill's own checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["LexOrder", "lex_order"]

Offset = Sequence[int | None]


@dataclass(frozen=True)
class LexOrder:
    """A lexicographic order: ``axes`` outer to inner, walked ascending where ``steps``
    is ``+1`` and descending where it is ``-1``.

    Attributes
    ----------
    axes : tuple of int
        Every axis of the table once, outer to inner.
    steps : tuple of int
        ``+1`` or ``-1`` for each entry of ``axes``.
    """

    axes: tuple[int, ...]
    steps: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.axes)

    def before(self, offset: Offset) -> bool | None:
        """Whether a read at ``offset`` from its cell is of a cell that comes first:
        ``None`` where an unknown component decides it (the cell itself is not first).

        Examples
        --------
        >>> o = LexOrder((0, 1, 2), (1, 1, -1))
        >>> o.before((-1, None, 3)), o.before((0, 0, 1)), o.before((0, None, 0))
        (True, True, None)
        >>> o.before((0, 0, 0)), o.before((0, 1, -5))
        (False, False)
        """
        for axis, step in zip(self.axes, self.steps):
            d = offset[axis]
            if d is None:
                return None
            if d != 0:
                return d * step < 0
        return False

    def text(self) -> str:
        """The order as printed: its axes outer to inner, each with its walk.

        Examples
        --------
        >>> LexOrder((1, 0), (1, -1)).text()
        'axis 1 up, axis 0 down'
        """
        return ", ".join(f"axis {a} {'up' if s > 0 else 'down'}"
                         for a, s in zip(self.axes, self.steps))


def lex_order(offsets: Iterable[Offset], ndim: int) -> LexOrder | None:
    """An order in which no read at ``offsets`` is known to come after its cell, or
    ``None`` when none is found.

    Axis by axis, outer to inner: the first axis left (ascending walk first) along which
    no read not yet placed before its cell has a known component pointing with the
    walk; the reads with a known non-zero component there are then placed.  An axis
    where a read's component is unknown is taken after the axes where another of its
    components is known and not 0.  A read left with unknown components is decided
    where the fill runs.  With every offset known this finds an order whenever one
    exists (placing reads never forbids an axis later); a read of the cell itself has
    none.

    Examples
    --------
    >>> lex_order([(-1, 0, 0), (-1, 0, None), (-1, None, 0)], 3)
    LexOrder(axes=(0, 1, 2), steps=(1, 1, 1))
    >>> lex_order([(0, 1), (-1, 2)], 2)
    LexOrder(axes=(0, 1), steps=(1, -1))
    >>> lex_order([(0, 1, -1), (1, 0, 0), (0, 0, 1)], 3)
    LexOrder(axes=(0, 1, 2), steps=(-1, -1, -1))
    >>> lex_order([(None, -1, 0)], 3)  # axis 1 places the read; axis 0 could not
    LexOrder(axes=(1, 0, 2), steps=(1, 1, 1))
    >>> lex_order([(-1, 1), (1, -1)], 2) is None, lex_order([(0, 0)], 2) is None
    (True, True)
    """
    left = [tuple(d) for d in offsets]
    axes: list[int] = []
    steps: list[int] = []
    while len(axes) < ndim:
        free = [a for a in range(ndim) if a not in axes]
        # an axis where a read's component is unknown goes after those where it is known
        # and not 0, which place the read whatever the unknown one turns out to be
        free = sorted(free, key=lambda a: any(
            d[a] is None and any(d[b] for b in free if b != a) for d in left))
        found = next(((a, s) for a in free for s in (1, -1)
                      if all(d[a] is None or d[a] * s <= 0 for d in left)), None)
        if found is None:
            return None
        axis, step = found
        axes.append(axis)
        steps.append(step)
        left = [d for d in left if d[axis] is None or d[axis] == 0]
    if any(all(x == 0 for x in d) for d in left):
        return None  # a read of the cell itself
    return LexOrder(tuple(axes), tuple(steps))
