"""The eight fill patterns of a 2-D table (SPEC section 4, thesis section 4.2).

Each pattern is a linear schedule ``t(x) = pi . x + offset`` (Lamport's hyperplane method)
that walks the table by rows, columns or diagonals.  A recurrence *matches* a pattern when
every direct dependency lies in the pattern's allowed regions; each allowed set is closed
under addition, so checking direct dependencies is the same as checking absolute ones.
Within one step every cell is independent, so one step is one parallel launch.

This module is the single definition that analysis, rendering and the runtime use:
allowed regions, step order, the cells of each step (:func:`step_line`, plain Python that
numba compiles for CPU and GPU) and the storage order that keeps a step contiguous.

Assumptions: tables are 2-D with shape ``(n, m)``; ``n`` rows, ``m`` columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from patterns.lexorder import LexOrder
from patterns.regions import REGION_CODE, REGIONS

__all__ = [
    "Pattern",
    "PATTERNS",
    "CANONICAL",
    "BY_CODE",
    "step_line",
    "matching",
    "select",
    "breaking_regions",
    "Sweep",
    "SWEEPS",
    "sweep_for",
    "StepSource",
    "STEP_SOURCE",
    "DIAGONAL_FLIPS",
    "last_cell",
    "frame_offset",
]


@dataclass(frozen=True)
class Pattern:
    """One of the eight fill patterns.

    Attributes
    ----------
    code : str
        ``RUD``, ``RDU``, ``CLR``, ``CRL``, ``NOSE``, ``SENO``, ``SONE`` or ``NESO``.
    index : int
        Position in the canonical order (what compiled code receives).
    order : str
        The fill order in words.
    allowed : frozenset of str
        Regions the reads may fall in.
    pi : tuple of int
        Hyperplane direction: cell ``x`` runs in step ``pi . x + offset``.
    storage : str
        Table layout that keeps one step contiguous: ``"rows"``, ``"columns"``,
        ``"antidiagonals"`` (``i + j`` constant) or ``"diagonals"`` (``j - i`` constant).
    """

    code: str
    index: int
    order: str
    allowed: frozenset[str]
    pi: tuple[int, int]
    storage: str

    def steps(self, shape: tuple[int, int]) -> int:
        """Number of steps (parallel launches) on a table of ``shape``.

        Examples
        --------
        >>> BY_CODE["RUD"].steps((5, 7)), BY_CODE["CRL"].steps((5, 7)), BY_CODE["NOSE"].steps((5, 7))
        (5, 7, 11)
        """
        n, m = shape
        return abs(self.pi[0]) * (n - 1) + abs(self.pi[1]) * (m - 1) + 1

    def step_of(self, i: np.ndarray, j: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        """Step of each cell ``(i, j)``, counted from 0.

        Examples
        --------
        >>> BY_CODE["SONE"].step_of(np.array([2, 0]), np.array([0, 3]), (3, 4)).tolist()
        [0, 5]
        """
        n, m = shape
        pi, pj = self.pi
        offset = -(min(0, pi) * (n - 1) + min(0, pj) * (m - 1))
        return pi * np.asarray(i) + pj * np.asarray(j) + offset

    def allows(self, regions: Iterable[str]) -> bool:
        """Whether every region in ``regions`` is allowed."""
        return set(regions) <= self.allowed


def _p(code: str, index: int, order: str, allowed: str, pi: tuple[int, int], storage: str) -> Pattern:
    names = frozenset(allowed.split())
    assert names <= set(REGION_CODE), names
    return Pattern(code, index, order, names, pi, storage)


PATTERNS: tuple[Pattern, ...] = (
    _p("RUD", 0, "rows, top to bottom", "UpLeft Up UpRight", (1, 0), "rows"),
    _p("RDU", 1, "rows, bottom to top", "DownLeft Down DownRight", (-1, 0), "rows"),
    _p("CLR", 2, "columns, left to right", "UpLeft Left DownLeft", (0, 1), "columns"),
    _p("CRL", 3, "columns, right to left", "UpRight Right DownRight", (0, -1), "columns"),
    _p("NOSE", 4, "anti-diagonals i+j ascending (NW to SE)", "UpLeft Up Left", (1, 1),
       "antidiagonals"),
    _p("SENO", 5, "anti-diagonals i+j descending (SE to NW)", "Right DownRight Down", (-1, -1),
       "antidiagonals"),
    _p("SONE", 6, "diagonals j-i ascending (SW to NE)", "Left DownLeft Down", (-1, 1),
       "diagonals"),
    _p("NESO", 7, "diagonals j-i descending (NE to SW)", "Up UpRight Right", (1, -1),
       "diagonals"),
)
#: Pattern codes in canonical order.
CANONICAL: tuple[str, ...] = tuple(p.code for p in PATTERNS)
BY_CODE: dict[str, Pattern] = {p.code: p for p in PATTERNS}


def step_line(p: int, t: int, n: int, m: int) -> tuple[int, int, int, int, int]:
    """Cells of step ``t`` of pattern ``p`` (canonical index) as a line.

    Returns ``(i0, j0, di, dj, count)``: the step's cells are ``(i0 + k*di, j0 + k*dj)``
    for ``k`` in ``range(count)``.  Plain Python so numba compiles it for CPU and GPU.

    Examples
    --------
    >>> step_line(0, 2, 4, 5)    # RUD: row 2
    (2, 0, 0, 1, 5)
    >>> step_line(4, 1, 4, 5)    # NOSE: cells with i + j = 1
    (0, 1, 1, -1, 2)
    >>> step_line(6, 0, 4, 5)    # SONE: the SW corner first
    (3, 0, 1, 1, 1)
    """
    if p == 0:
        return t, 0, 0, 1, m
    if p == 1:
        return n - 1 - t, 0, 0, 1, m
    if p == 2:
        return 0, t, 1, 0, n
    if p == 3:
        return 0, m - 1 - t, 1, 0, n
    if p == 4 or p == 5:
        s = t if p == 4 else n + m - 2 - t
        i0 = max(0, s - m + 1)
        return i0, s - i0, 1, -1, min(n - 1, s) - i0 + 1
    d = t - (n - 1) if p == 6 else m - 1 - t
    i0 = max(0, -d)
    return i0, i0 + d, 1, 1, min(n - 1, m - 1 - d) - i0 + 1


def matching(regions: Iterable[str]) -> tuple[str, ...]:
    """All pattern codes whose allowed regions contain ``regions``, canonical order.

    Examples
    --------
    >>> matching({"UpLeft", "Up", "Left"})
    ('NOSE',)
    >>> matching({"Up", "UpLeft"})
    ('RUD', 'NOSE')
    """
    regs = set(regions)
    return tuple(p.code for p in PATTERNS if p.allows(regs))


def select(regions: Iterable[str], shape: tuple[int, int]) -> str | None:
    """The selected pattern: fewest steps among the matches, ties by canonical order.

    Examples
    --------
    >>> select({"Up", "UpLeft"}, (10, 10))
    'RUD'
    >>> select({"Left"}, (1, 30))
    'CLR'
    >>> select({"Up", "Down"}, (4, 4)) is None
    True
    """
    codes = matching(regions)
    if not codes:
        return None
    return min(codes, key=lambda c: (BY_CODE[c].steps(shape), CANONICAL.index(c)))


def breaking_regions(regions: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each pattern, the read regions it does not allow (empty when it matches).

    Examples
    --------
    >>> breaking_regions({"Up", "Left"})["RUD"]
    ('Left',)
    """
    regs = set(regions)
    return {p.code: tuple(sorted(regs - p.allowed)) for p in PATTERNS}


@dataclass(frozen=True)
class Sweep:
    """A lexicographic one-cell-at-a-time order of a 2-D table.

    ``axis`` 0 walks rows outer (row by row), 1 columns outer; ``si``/``sj`` are +1 for
    ascending, -1 for descending row/column indices.  ``covers`` are the read regions that
    are always computed before the cell in this order.
    """

    axis: int
    si: int
    sj: int

    @property
    def covers(self) -> frozenset[str]:
        """Regions already filled when a cell's turn comes.

        Examples
        --------
        >>> sorted(Sweep(0, 1, 1).covers)
        ['Left', 'Up', 'UpLeft', 'UpRight']
        """
        out = set()
        for a in (-1, 0, 1):
            for b in (-1, 0, 1):
                outer, inner = (a, b) if self.axis == 0 else (b, a)
                so, si = (self.si, self.sj) if self.axis == 0 else (self.sj, self.si)
                if outer == -so or (outer == 0 and inner == -si):
                    out.add(REGIONS[(a + 1) * 3 + b + 1])
        return frozenset(out)

    @property
    def order(self) -> LexOrder:
        """The same order as a :class:`patterns.lexorder.LexOrder`.

        Examples
        --------
        >>> Sweep(1, 1, -1).order
        LexOrder(axes=(1, 0), steps=(-1, 1))
        """
        steps = (self.si, self.sj) if self.axis == 0 else (self.sj, self.si)
        return LexOrder((self.axis, 1 - self.axis), steps)


#: All eight lexicographic orders, row-major top-down left-right first.
SWEEPS: tuple[Sweep, ...] = tuple(
    Sweep(axis, si, sj) for axis in (0, 1) for si in (1, -1) for sj in (1, -1)
)


def sweep_for(regions: Iterable[str]) -> Sweep | None:
    """The first lexicographic order in which every read in ``regions`` is ready.

    This is the sequential fill order of a pattern: ``sweep_for(p.allowed)``.

    Examples
    --------
    >>> sweep_for(BY_CODE["SONE"].allowed)
    Sweep(axis=0, si=-1, sj=1)
    >>> sweep_for({"Up", "Down"}) is None
    True
    """
    regs = set(regions)
    return next((s for s in SWEEPS if regs <= s.covers), None)


@dataclass(frozen=True)
class StepSource:
    """Step ``t`` of a pattern as source text, for generated kernels (the same geometry as
    :func:`step_line`, written so compiled loops index from a ``range``, which numba and
    LLVM optimise far better than indices computed from a returned tuple).

    In a table of ``n`` rows and ``m`` columns, ``steps`` is the number of steps; ``fix``
    binds the step's constant from ``t``; the step's cells are ``(i, j)`` for ``q`` in
    ``range(lo, hi)``.
    """

    steps: str
    fix: str
    lo: str
    hi: str
    i: str
    j: str


_ANTI = ("n + m - 1", "max(0, s - m + 1)", "min(n - 1, s) + 1", "q", "s - q")
_DIAG = ("n + m - 1", "max(0, -d)", "min(n - 1, m - 1 - d) + 1", "q", "q + d")
STEP_SOURCE: dict[str, StepSource] = {
    "RUD": StepSource("n", "r = t", "0", "m", "r", "q"),
    "RDU": StepSource("n", "r = n - 1 - t", "0", "m", "r", "q"),
    "CLR": StepSource("m", "c = t", "0", "n", "q", "c"),
    "CRL": StepSource("m", "c = m - 1 - t", "0", "n", "q", "c"),
    "NOSE": StepSource(_ANTI[0], "s = t", *_ANTI[1:]),
    "SENO": StepSource(_ANTI[0], "s = n + m - 2 - t", *_ANTI[1:]),
    "SONE": StepSource(_DIAG[0], "d = t - (n - 1)", *_DIAG[1:]),
    "NESO": StepSource(_DIAG[0], "d = m - 1 - t", *_DIAG[1:]),
}


#: Each diagonal pattern is NOSE on the table with its rows and/or columns reversed:
#: ``(reverse rows, reverse columns)``, where its ``pi`` is negative.  Cell ``(u, v)`` of
#: the NOSE walk is ``(n - 1 - u if rows else u, m - 1 - v if columns else v)``.
DIAGONAL_FLIPS: dict[str, tuple[bool, bool]] = {
    p.code: (p.pi[0] < 0, p.pi[1] < 0) for p in PATTERNS if 0 not in p.pi}


def frame_offset(code: str, offset: tuple[int, int]) -> tuple[int, int]:
    """A read offset as seen in diagonal pattern ``code``'s NOSE frame
    (:data:`DIAGONAL_FLIPS`): the pattern allows it when neither part is positive.

    Examples
    --------
    >>> frame_offset("SENO", (1, 0)), frame_offset("NESO", (-1, 1))
    ((-1, 0), (-1, -1))
    """
    rows, cols = DIAGONAL_FLIPS[code]
    return (-offset[0] if rows else offset[0], -offset[1] if cols else offset[1])


def last_cell(flips: tuple[bool, bool], shape: tuple[int, ...]) -> tuple[int, int]:
    """The cell a walk of a 2-D table of ``shape`` fills last when it runs its rows and/or
    columns backwards (``flips``, as in :data:`DIAGONAL_FLIPS`): the far corner.

    Examples
    --------
    >>> last_cell(DIAGONAL_FLIPS["NOSE"], (3, 4)), last_cell(DIAGONAL_FLIPS["SENO"], (3, 4))
    ((2, 3), (0, 0))
    """
    return (0 if flips[0] else shape[0] - 1, 0 if flips[1] else shape[1] - 1)
