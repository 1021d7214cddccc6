"""A score-only fill's walk: how it goes and what it keeps of the table (:class:`ScorePlan`),
what it found (:class:`ScoreResult`), the slot of a cell in a ring of the last rows
(columns), and the checked read of a ring or a window of anti-diagonals.

A score-only fill (:func:`runtime.run.score`) keeps only the cells still to be read: the
last ``K`` rows (columns) of a walk by rows (columns), slice ``t`` in slot ``t % K``, or
the last ``W`` anti-diagonals of a diagonal walk.  Its reads of ``M`` are rewritten into
reads of that buffer, checked against the table's shape (kept in ``ck[0:2]``); the first
out-of-bounds read is recorded in ``ck[2:7]`` as (flag, cell, read).

Assumptions: 2-D tables; the buffer's reads reach only cells it still holds (the walk
keeps enough slices for the farthest read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from patterns import BY_CODE, last_cell
from runtime.backends.emit import Emitter

__all__ = ["ScorePlan", "ScoreResult", "slot", "ring_slot", "checked_read_source",
           "ring_result"]


@dataclass(frozen=True)
class ScorePlan:
    """How a score-only fill walks a recurrence: ``pattern``'s order, slices along
    ``axis`` (0 rows, 1 columns) in order, ``flips`` (rows, columns reversed), the last
    ``keep`` slices kept; ``back``: how many anti-diagonals a diagonal pattern's reads go
    back (0 for line patterns); ``left``: how far a diagonal pattern's reads go back across
    slices (0 for line patterns); ``gpu``: whether the GPU window fill serves it."""

    pattern: str
    axis: int
    flips: tuple[bool, bool]
    keep: int
    back: int
    left: int
    gpu: bool

    @property
    def diagonals(self) -> int:
        """Anti-diagonals a diagonal pattern's window keeps: ``back`` and this one."""
        return self.back + 1

    def last(self, shape: tuple[int, ...]) -> tuple[int, int]:
        """The cell the walk fills last."""
        return last_cell(self.flips, shape)


@dataclass(frozen=True)
class ScoreResult:
    """A score-only fill: the value of ``cell``, the last cell ``pattern`` fills, and for
    a walk by rows (columns) ``line``, the whole last row (column) filled.

    ``kept`` is the number of cells the fill held at once; times in seconds (``check_s``:
    the CPU check of the edge cells before a GPU fill).
    """

    value: Any
    cell: tuple[int, int]
    pattern: str
    backend: str
    kept: int
    compute_s: float
    compile_s: float
    h2d_s: float = 0.0
    check_s: float = 0.0
    notes: tuple[str, ...] = field(default=())
    line: np.ndarray | None = None

    @property
    def line_kind(self) -> str | None:
        """``"row"`` or ``"column"``: what ``line`` is (the pattern's storage order);
        ``None`` without a line."""
        return None if self.line is None else BY_CODE[self.pattern].storage[:-1]

    @property
    def line_at(self) -> tuple[Any, Any] | None:
        """Where ``line`` sits in the table: ``(i, slice(None))`` for a row,
        ``(slice(None), j)`` for a column; ``None`` without a line."""
        if self.line is None:
            return None
        i, j = self.cell
        return (i, slice(None)) if self.line_kind == "row" else (slice(None), j)

    @property
    def line_name(self) -> str | None:
        """``line_at`` written as ``M[i, :]`` or ``M[:, j]``."""
        at = self.line_at
        return None if at is None else (
            "M[" + ", ".join(":" if isinstance(k, slice) else str(k) for k in at) + "]")

    def to_json(self) -> dict[str, Any]:
        value = self.value.item() if isinstance(self.value, np.generic) else self.value
        return {"value": value, "cell": list(self.cell), "pattern": self.pattern,
                "backend": self.backend, "kept_cells": self.kept,
                "compute_s": self.compute_s, "compile_s": self.compile_s,
                "h2d_s": self.h2d_s, "check_s": self.check_s, "notes": list(self.notes),
                "line": self.line_name, "line_kind": self.line_kind,
                "line_cells": None if self.line is None else len(self.line)}


def slot(axis: int, i: str, j: str, K: int) -> str:
    """Where cell ``(i, j)`` lives in the ring ``B`` of ``K`` slices: its row (column)
    modulo ``K``; the source text, for a compiled walk (a constant ``K``: a modulo by the
    ring's shape, read at run time, made every read an integer division).

    Examples
    --------
    >>> slot(0, "i", "j", 3), slot(1, "i", "j", 2)
    ('i % 3, j', 'i, j % 2')
    """
    return f"{i} % {K}, {j}" if axis == 0 else f"{i}, {j} % {K}"


def ring_slot(axis: int, B: np.ndarray, i: int, j: int) -> tuple[int, int]:
    """:func:`slot` in Python.

    Examples
    --------
    >>> ring_slot(0, np.zeros((3, 5)), 7, 4)
    (1, 4)
    """
    return (i % B.shape[0], j) if axis == 0 else (i, j % B.shape[1])


def checked_read_source(record: str, found: Sequence[str]) -> str:
    """Source of a checked read ``read(B, ck, x0, x1, a, b)`` of the ring or window
    ``B``: an out-of-bounds read is recorded in ``ck`` when ``record`` holds (``True``
    on the CPU, each thread its own ``ck``; on the GPU, only for the first thread to set
    the flag) and reads ``B[0, 0]``; an in-bounds read runs the lines ``found``.

    Examples
    --------
    >>> print(checked_read_source("True", ["return B[a % 2, b]"]), end="")
    def read(B, ck, x0, x1, a, b):
        if a < 0 or a >= ck[0] or b < 0 or b >= ck[1]:
            if True:
                ck[3] = x0
                ck[4] = x1
                ck[5] = a
                ck[6] = b
            ck[2] = 1
            return B[0, 0]
        return B[a % 2, b]
    """
    e = Emitter()
    with e.block("def read(B, ck, x0, x1, a, b)"):
        with e.block("if a < 0 or a >= ck[0] or b < 0 or b >= ck[1]"):
            with e.block(f"if {record}"):
                e("ck[3] = x0", "ck[4] = x1", "ck[5] = a", "ck[6] = b")
            e("ck[2] = 1", "return B[0, 0]")
        e(*found)
    return e.source


def ring_result(plan: ScorePlan, B: np.ndarray, last: tuple[int, int], backend: str,
                run_s: float, compile_s: float, notes: Sequence[str]) -> ScoreResult:
    """The result of a walk that kept ring ``B``: the last cell, and for rows (columns)
    the last line."""
    at = ring_slot(plan.axis, B, *last)
    line = None
    if not plan.gpu:
        line = B[at[0]].copy() if plan.axis == 0 else B[:, at[1]].copy()
    return ScoreResult(B[at], last, plan.pattern, backend, B.size, run_s, compile_s,
                       notes=tuple(notes), line=line)
