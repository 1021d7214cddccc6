"""How a score-only fill walks a recurrence: a diagonal pattern when its reads allow one,
else rows, else columns (:func:`score_plan`); and how a score recovers its solution from
checkpoints (:func:`block_plan`).

The walk comes from the cell IR's read offsets (:class:`depgraph.frontend.ir.CellIR`), not
from tracing the table, so a table far too large to hold can be scored:

- every read at a constant offset (``M[i - 1, j - 1]``) that a diagonal pattern allows
  (LCS, edit distance): the fill walks the anti-diagonals of the pattern's NOSE frame
  (:data:`patterns.DIAGONAL_FLIPS`) and keeps the last ``W``, ``W - 1`` the farthest
  read back in diagonals (the ``python`` backend walks rows and keeps the last ``K``,
  ``K - 1`` the farthest read upwards);
- or every read's row (column) at a constant offset of one sign, whatever its column
  (row), data-dependent included (knapsack's ``M[i - 1, j - w[i]]``): a row (column)
  pattern; the fill walks rows (columns) in that order and keeps the last ``K``.

A solution recovered in linear-ish memory (:mod:`runtime.backends.checkpoint`) walks rows
top to bottom, each left to right: every read's row a constant ``-R .. 0`` rows from its
cell's (its column anything), and a read in the cell's own row at a constant column to
its left.  Blocks of about ``sqrt(n R)`` rows keep the checkpoints and the block at
about ``2 sqrt(n R)`` rows together, the least.

Assumption: 2-D tables.
"""

from __future__ import annotations

import math

import numpy as np

from depgraph.errors import NoPatternError, UsageError, setting
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.source import SourceUnavailable
from depgraph.model import Recurrence
from patterns import (
    DIAGONAL_FLIPS,
    PATTERNS,
    REGIONS,
    frame_offset,
    matching,
    region_codes,
    select,
)
from runtime.backends.walk import BlockPlan, ScorePlan

__all__ = ["score_plan", "block_plan"]

#: Line patterns by (axis, walking backwards): their ``pi`` along that axis only.
_LINES = {(int(p.pi[0] == 0), min(p.pi) < 0): p.code for p in PATTERNS if 0 in p.pi}


def _diagonal_plan(ir: CellIR) -> ScorePlan | str:
    try:
        offsets = ir.constant_offsets()
    except SourceUnavailable as exc:
        return str(exc)
    di, dj = (np.array([o[k] for o in offsets], dtype=np.int64) for k in (0, 1))
    regions = {REGIONS[c] for c in region_codes(di, dj)}
    diagonal = [c for c in matching(regions) if c in DIAGONAL_FLIPS]
    if not diagonal:
        return f"no diagonal pattern allows the reads ({', '.join(sorted(regions))})"
    frame = [frame_offset(diagonal[0], o) for o in offsets]
    up = max((-du for du, _ in frame), default=0)
    left = max((-dv for _, dv in frame), default=0)
    back = max((-(du + dv) for du, dv in frame), default=0)
    return ScorePlan(diagonal[0], 0, DIAGONAL_FLIPS[diagonal[0]], up + 1, back, left, True)


def _line_plan(ir: CellIR, axis: int) -> ScorePlan | str:
    name = ("row", "column")[axis]
    try:
        offsets = list(ir.axis_offsets(axis))
    except SourceUnavailable as exc:
        return f"{name}s: {exc}"
    if not (all(c < 0 for c in offsets) or all(c > 0 for c in offsets)):
        return f"{name}s: reads {name}s {offsets} away, not all on one side"
    back = offsets[0] > 0
    flips = (back, False) if axis == 0 else (False, back)
    return ScorePlan(_LINES[axis, back], axis, flips, max(abs(c) for c in offsets) + 1, 0, 0,
                     False)


def score_plan(rec: Recurrence, ir: CellIR | None = None) -> ScorePlan:
    """How a score-only fill walks ``rec`` (see the module docstring): a diagonal
    pattern when its reads allow one, else rows, else columns; ``ir``, the cell IR when
    the caller has it (:func:`depgraph.frontend.ir.cell_ir`).

    ``NoPatternError`` when the recurrence is not 2-D or its reads fit neither.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> score_plan(paths)
    ScorePlan(pattern='NOSE', axis=0, flips=(False, False), keep=2, back=1, left=1, gpu=True)
    >>> @recurrence(shape=(4, 5), dtype=np.int64, args=(np.array([1, 2, 1, 3]),))
    ... def knap(M, i, j, w):
    ...     return 0 if i == 0 else max(M[i - 1, j], M[i - 1, j - w[i]] + 1 if j >= w[i] else 0)
    >>> score_plan(knap)
    ScorePlan(pattern='RUD', axis=0, flips=(False, False), keep=2, back=0, left=0, gpu=False)
    """
    if rec.ndim != 2:
        raise NoPatternError(f"a score-only fill takes 2-D tables, not {rec.ndim}-D")
    ir = ir or cell_ir(rec)
    why = []
    for plan in (_diagonal_plan(ir), _line_plan(ir, 0), _line_plan(ir, 1)):
        if isinstance(plan, ScorePlan):
            return plan
        why.append(plan)
    raise NoPatternError("a score-only fill needs the reads of M at constant offsets, in a "
                         "diagonal pattern or along rows or columns: " + "; ".join(why))


def block_plan(rec: Recurrence, ir: CellIR | None = None, rows: int | None = None
               ) -> BlockPlan:
    """How a score recovers ``rec``'s solution from checkpoints (module docstring), in
    blocks of ``rows`` rows (default: about ``sqrt(n R)``); ``UsageError`` saying why
    when the reads do not allow it.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(100, 50), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> block_plan(paths)
    BlockPlan(rows=10, halo=1, trim=True, pattern='NOSE')
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def down(M, i, j):
    ...     return 1 if i == 3 else M[i + 1, j]
    >>> block_plan(down)
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: the solution of a score is recovered by rows, top to bottom: it needs every read a constant number of rows up, or left in its own row, and M[i + 1, j] goes down; leave out score=True to recover it from the whole table
    """
    if rec.ndim != 2:
        raise UsageError(f"the solution of a score is recovered in 2-D tables, not "
                         f"{rec.ndim}-D; leave out {setting('score', True)} to recover it "
                         "from the whole table")
    ir = ir or cell_ir(rec)
    whole = f"leave out {setting('score', True)} to recover it from the whole table"
    try:
        offsets = ir.read_offsets()
        regions = ir.possible_regions()
    except SourceUnavailable as exc:
        raise UsageError(f"the solution of a score needs the reads of M at constant "
                         f"offsets in the source: {exc}; {whole}") from None
    bad = next((o for o in offsets if o[0] is None or o[0] > 0
                or o[0] == 0 and (o[1] is None or o[1] >= 0)), None)
    if bad is not None:
        text = ", ".join(f"{x}" if d == 0 else "?" if d is None else f"{x} {'+-'[d < 0]} {abs(d)}"
                         for x, d in zip(ir.index, bad))
        raise UsageError(f"the solution of a score is recovered by rows, top to bottom: it "
                         f"needs every read a constant number of rows up, or left in its own "
                         f"row, and M[{text}] goes {_way(bad)}; {whole}")
    halo = max((-o[0] for o in offsets), default=0)
    n = rec.shape[0]
    if rows is None:
        rows = math.isqrt(n * max(halo, 1))
    if rows < 1:
        raise UsageError(f"{setting('block_rows', rows)}: give at least 1")
    trim = all(o[1] is not None and o[1] <= 0 for o in offsets)
    pattern = select(regions, (rec.shape[0], rec.shape[1])) or "rows"
    return BlockPlan(min(rows, n), halo, trim, pattern)


def _way(offset: tuple[int | None, ...]) -> str:
    """Where a read at ``offset`` goes, for a message.

    Examples
    --------
    >>> _way((1, 0)), _way((0, 2)), _way((None, -1)), _way((0, None))
    ('down', 'right', 'a varying number of rows', 'along its own row to a varying column')
    """
    di, dj = offset
    if di is None:
        return "a varying number of rows"
    if di > 0:
        return "down"
    return "along its own row to a varying column" if dj is None else "right"
