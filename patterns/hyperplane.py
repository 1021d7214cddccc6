"""Hyperplane schedules of a table of any number of dimensions (Lamport's method; SPEC
section 4's last paragraph).

A *hyperplane* ``pi`` (an integer vector, one entry per axis) runs cell ``x`` in step
``pi . x`` (counted from the smallest value on the table).  It is legal for a recurrence
when every read ``y`` of every cell ``x`` lies on an earlier hyperplane:
``pi . (y - x) <= -1``; then the cells of one step are independent.  The eight patterns
of a 2-D table are the hyperplanes ``(+-1, 0)``, ``(0, +-1)``, ``(+-1, +-1)`` checked by
regions; other ``pi`` schedule recurrences none of them fits (reads ``(-1, +1)`` and
``(0, -1)``: ``pi = (2, 1)``), and k-D tables (Floyd-Warshall: ``(1, 0, 0)``; the LCS of
three strings: ``(1, 1, 1)``).

A 2-D table whose reads are at constant offsets can also be *sheared* (:func:`shear`):
new coordinates ``(p, q) = U x + c``, ``U`` an integer matrix of determinant +-1, in which
every read is up and/or left, so the sheared table (the bounding box of the image, cells
outside the table left unused) fits the NOSE pattern and its tiled and register kernels.

A read's offset from its cell is given per axis as an integer, or ``None`` where it is not
known (it depends on the cell or on data): a legal ``pi`` is then 0 on that axis.  The
search (:func:`find`) takes the ``pi`` with the fewest steps among small vectors.

Step ``t`` of a table of shape ``(n0, n1, ...)`` in generated kernels
(:func:`step_source`): axes with a negative ``pi`` are walked backwards, so in that frame
``u`` every coefficient ``a = |pi|`` is non-negative and the step's cells are those with
``a . u = t``; one axis (a coefficient 1 where there is one) is solved from the others.

Assumptions: tables have at least one axis; a legal ``pi`` has small entries (at most
:data:`LIMITS` by dimension), which covers every recurrence whose reads are at small
constant offsets.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Hyperplane", "HyperplaneSource", "LIMITS", "find", "legal", "step_source",
           "breaking_read", "Shear", "shear", "slab", "linear_source"]

#: Largest ``|pi_k|`` :func:`find` tries, by number of dimensions (more dimensions, more
#: candidate vectors: ``(2 L + 1) ** k``).
LIMITS = {1: 1, 2: 8, 3: 4, 4: 2}

Offset = tuple[int | None, ...]


@dataclass(frozen=True)
class Hyperplane:
    """A linear schedule ``t(x) = pi . x`` of a table.

    Attributes
    ----------
    pi : tuple of int
        One coefficient per axis, not all zero.
    """

    pi: tuple[int, ...]

    def span(self, shape: Sequence[int]) -> int:
        """Values ``pi . x`` takes between its least and its greatest on ``shape``.

        Examples
        --------
        >>> Hyperplane((2, 1)).span((10, 12))
        30
        """
        return sum(abs(p) * (n - 1) for p, n in zip(self.pi, shape)) + 1

    def first(self, shape: Sequence[int]) -> int:
        """The least ``pi . x`` on ``shape`` (step 0's value).

        Examples
        --------
        >>> Hyperplane((1, -1)).first((3, 4))
        -3
        """
        return sum(min(0, p) * (n - 1) for p, n in zip(self.pi, shape))

    def widths(self, shape: Sequence[int]) -> np.ndarray:
        """Cells in each step ``0 .. span - 1`` (a step may hold none when no coefficient
        is 1): counts of ``a . u`` over the box, one axis at a time, summed over a sliding
        window within each residue class of the axis's coefficient.

        Examples
        --------
        >>> Hyperplane((2, 1)).widths((3, 2)).tolist()
        [1, 1, 1, 1, 1, 1]
        >>> Hyperplane((2, 0)).widths((3, 2)).tolist()
        [2, 0, 2, 0, 2]
        """
        size = self.span(shape)
        count = np.zeros(size, dtype=np.int64)
        count[0] = 1
        for p, n in zip(self.pi, shape):
            a = abs(p)
            if n == 0:
                return np.zeros(size, dtype=np.int64)
            if a == 0:
                count *= n
                continue
            rows = -(-size // a)
            grid = np.zeros(rows * a + a * n, dtype=np.int64)
            grid[a * n: a * n + size] = count  # n rows of zeros first: the window's tail
            cum = np.cumsum(grid.reshape(-1, a), axis=0)
            count = (cum[n:] - cum[:-n]).reshape(-1)[:size]
        return count

    def steps(self, shape: Sequence[int]) -> int:
        """Steps holding at least one cell on ``shape``.

        Examples
        --------
        >>> Hyperplane((2, 1)).steps((10, 12)), Hyperplane((1, 1, 1)).steps((3, 4, 5))
        (30, 10)
        """
        return _steps(self, tuple(int(n) for n in shape))

    def step_of(self, cells: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        """Step of each cell (rows of ``cells``, one column per axis), counted from 0.

        Examples
        --------
        >>> Hyperplane((2, 1)).step_of(np.array([[0, 0], [1, 3]]), (4, 4)).tolist()
        [0, 5]
        """
        return np.asarray(cells, dtype=np.int64) @ np.array(self.pi, dtype=np.int64) \
            - self.first(shape)

    def order(self, shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Every flat (C-order) cell of ``shape`` by step, and the steps' bounds
        (``cells[ptr[s]:ptr[s + 1]]`` is step ``s``; empty steps left out).

        Examples
        --------
        >>> cells, ptr = Hyperplane((1, 1)).order((2, 3))
        >>> cells.tolist(), ptr.tolist()
        ([0, 1, 3, 2, 4, 5], [0, 1, 3, 5, 6])
        """
        grids = np.indices(tuple(shape), dtype=np.int64).reshape(len(shape), -1)
        t = self.step_of(grids.T, shape)
        cells = np.argsort(t, kind="stable")
        bounds = np.flatnonzero(np.diff(t[cells])) + 1
        return cells, np.concatenate(([0], bounds, [cells.size])).astype(np.int64)

    def text(self) -> str:
        """``pi`` as printed.

        Examples
        --------
        >>> Hyperplane((2, 1)).text(), Hyperplane((1,)).text()
        ('(2, 1)', '(1,)')
        """
        return str(tuple(self.pi))


@functools.lru_cache(maxsize=64)
def _steps(hyperplane: Hyperplane, shape: tuple[int, ...]) -> int:
    """:meth:`Hyperplane.steps`, counted once per hyperplane and shape: planning,
    choosing and filling each ask for it."""
    if math.prod(shape) == 0:
        return 0
    return int(np.count_nonzero(hyperplane.widths(shape)))


def legal(pi: Sequence[int], offsets: Iterable[Offset]) -> bool:
    """Whether every read at ``offsets`` lies on an earlier hyperplane of ``pi``.

    Examples
    --------
    >>> legal((2, 1), [(-1, 1), (0, -1)]), legal((1, 1), [(-1, 1), (0, -1)])
    (True, False)
    >>> legal((1, 0, 0), [(-1, 0, None)]), legal((1, 1, 0), [(-1, 0, None)])
    (True, True)
    """
    return breaking_read(pi, offsets) is None


def breaking_read(pi: Sequence[int], offsets: Iterable[Offset]) -> Offset | None:
    """The first read offset ``pi`` does not put on an earlier hyperplane, or ``None``.

    Examples
    --------
    >>> breaking_read((1, 0), [(-1, 0), (0, -1)])
    (0, -1)
    """
    for d in offsets:
        if any(x is None and p != 0 for x, p in zip(d, pi)):
            return d
        if sum(p * x for p, x in zip(pi, d) if x is not None) > -1:
            return d
    return None


def _candidates(ndim: int, limit: int) -> np.ndarray:
    """Every non-zero integer vector with entries in ``-limit .. limit``."""
    axes = [np.arange(-limit, limit + 1)] * ndim
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, ndim)
    return grid[np.any(grid != 0, axis=1)]


def find(offsets: Iterable[Offset], shape: Sequence[int]) -> Hyperplane | None:
    """The legal hyperplane with the fewest steps on ``shape`` for reads at ``offsets``
    (rows of integers, ``None`` where an axis's offset is unknown), among vectors with
    entries up to :data:`LIMITS`; ties go to fewer non-zero entries, then smaller
    entries, then positive ones first (with no reads, every ``pi`` is legal: the unit
    vector along the shortest axis).  ``None`` when none is legal (the reads may form a
    cycle, or need a larger ``pi``).

    Examples
    --------
    >>> find([(-1, 1), (0, -1)], (10, 12))
    Hyperplane(pi=(2, 1))
    >>> find([(-1, 0, None), (-1, None, 0), (-1, 0, 0)], (5, 4, 4))
    Hyperplane(pi=(1, 0, 0))
    >>> find([(-1, -1, -1), (-1, 0, 0), (0, -1, 0), (0, 0, -1)], (3, 3, 3))
    Hyperplane(pi=(1, 1, 1))
    >>> find([(1, 0), (-1, 0)], (4, 4)) is None
    True
    >>> find([], (4, 3, 5))
    Hyperplane(pi=(0, 1, 0))
    """
    rows = [tuple(d) for d in offsets]
    ndim = len(shape)
    if not rows:
        shortest = min(range(ndim), key=lambda k: shape[k])
        return Hyperplane(tuple(int(k == shortest) for k in range(ndim)))
    unknown = np.array([[x is None for x in d] for d in rows], dtype=bool)
    known = np.array([[0 if x is None else x for x in d] for d in rows], dtype=np.int64)
    pis = _candidates(ndim, LIMITS.get(ndim, 1))
    free = ~np.any((pis[:, None, :] != 0) & unknown[None, :, :], axis=2).any(axis=1)
    ok = free & np.all(pis @ known.T <= -1, axis=1)
    if not ok.any():
        return None
    sides = np.array([max(n - 1, 0) for n in shape], dtype=np.int64)
    good = pis[ok]
    cost = np.abs(good) @ sides
    key = [(int(c), int(np.count_nonzero(p)), int(np.abs(p).sum()), tuple(int(-x) for x in p))
           for c, p in zip(cost, good)]
    best = min(range(len(good)), key=key.__getitem__)
    return Hyperplane(tuple(int(x) for x in good[best]))


@dataclass(frozen=True)
class HyperplaneSource:
    """Step ``t`` of a hyperplane as source text, for generated kernels: the table's
    sides are ``n0, n1, ...``, a cell's indices ``x0, x1, ...``, and ``u0, u1, ...`` the
    same in the frame where every coefficient is non-negative (an axis of negative
    ``pi`` walked backwards).

    One axis is ``solved`` for from the others; the last of the others, ``inner``, runs
    over an exact range; the rest (``outer``, in C order) are counted together by ``o``
    in ``range(outer_count)``.  For each ``o`` the lines ``outer_cell`` bind their ``x``
    and ``rem`` (what is left of ``t`` for the inner and solved axes), the lines
    ``inner_range`` bind ``lo`` and ``hi``, and for ``q`` in ``range(lo, hi)`` the lines
    ``inner_cell`` bind the inner and solved ``x``; the cell is one where ``valid`` holds
    (``"True"`` unless the solved coefficient is not 1).  ``span`` is the number of steps
    (empty ones included).
    """

    span: str
    solved: int
    inner: int
    outer: tuple[int, ...]
    outer_count: str
    outer_cell: tuple[str, ...]
    inner_range: tuple[str, ...]
    inner_cell: tuple[str, ...]
    valid: str
    ndim: int = 2

    @property
    def index(self) -> str:
        """The cell's indices as source, ``x0, x1, ...``."""
        return ", ".join(f"x{k}" for k in range(self.ndim))

    @property
    def sides(self) -> tuple[str, ...]:
        """The lines binding ``n0, n1, ...`` from the table ``M``."""
        return tuple(f"n{k} = M.shape[{k}]" for k in range(self.ndim))


def _solved_axis(pi: Sequence[int]) -> int:
    """The axis a step's cells are solved for: one whose coefficient is 1 (the first, so
    the fastest axes are the ones a step runs along), else the first non-zero one."""
    unit = [k for k, p in enumerate(pi) if abs(p) == 1]
    return unit[0] if unit else next(k for k, p in enumerate(pi) if p != 0)


def _index(k: int, pi: Sequence[int]) -> str:
    """Binding ``x{k}`` from ``u{k}``."""
    return f"x{k} = n{k} - 1 - u{k}" if pi[k] < 0 else f"x{k} = u{k}"


def step_source(pi: Sequence[int]) -> HyperplaneSource:
    """:class:`HyperplaneSource` of hyperplane ``pi`` (a 1-D table's one cell a step
    counts as its inner axis, solved for by itself).

    Examples
    --------
    >>> src = step_source((2, 1))
    >>> src.span, src.solved, src.inner, src.outer, src.outer_count
    ('2 * (n0 - 1) + 1 * (n1 - 1) + 1', 1, 0, (), '1')
    >>> for line in src.outer_cell + src.inner_range + src.inner_cell: print(line)
    rem = t
    lo = max(0, -((-(rem - 1 * (n1 - 1))) // 2))
    hi = min(n0, rem // 2 + 1)
    u0 = q
    x0 = u0
    u1 = rem - 2 * u0
    x1 = u1
    >>> step_source((1, 1, 1)).outer, step_source((1, 1, 1)).valid
    ((1,), 'True')
    """
    ndim = len(pi)
    a = [abs(p) for p in pi]
    solved = _solved_axis(pi)
    along = [k for k in range(ndim) if k != solved]
    if not along:
        return HyperplaneSource(f"{a[0]} * (n0 - 1) + 1", 0, 0, (), "1", ("rem = t",),
                                ("lo = 0", "hi = 1"), (f"u0 = rem // {a[0]}", _index(0, pi)),
                                "True" if a[0] == 1 else f"rem % {a[0]} == 0", 1)
    inner, outer = along[-1], tuple(along[:-1])
    span = " + ".join(f"{a[k]} * (n{k} - 1)" for k in range(ndim) if a[k]) + " + 1"
    outer_cell = ["r = o"] if outer else []
    for k in reversed(outer):
        outer_cell += [f"u{k} = r % n{k}", f"r = r // n{k}"]
    outer_cell += [_index(k, pi) for k in outer]
    outer_cell.append("rem = t" + "".join(f" - {a[k]} * u{k}" for k in outer if a[k]))
    top = f"{a[solved]} * (n{solved} - 1)"
    if a[inner]:  # 0 <= rem - a_i u_i <= a_s (n_s - 1): u_i between two quotients
        inner_range = (f"lo = max(0, -((-(rem - {top})) // {a[inner]}))",
                       f"hi = min(n{inner}, rem // {a[inner]} + 1)")
    else:  # the inner axis is free: every u_i, or none when rem leaves the solved axis
        inner_range = ("lo = 0", f"hi = n{inner} if 0 <= rem <= {top} else 0")
    left = f"rem - {a[inner]} * u{inner}" if a[inner] else "rem"
    quotient = left if a[solved] == 1 else f"({left}) // {a[solved]}"
    inner_cell = (f"u{inner} = q", _index(inner, pi), f"u{solved} = {quotient}",
                  _index(solved, pi))
    valid = "True" if a[solved] == 1 else f"({left}) % {a[solved]} == 0"
    outer_count = " * ".join(f"n{k}" for k in outer) or "1"
    return HyperplaneSource(span, solved, inner, outer, outer_count, tuple(outer_cell),
                            inner_range, inner_cell, valid, ndim)


@dataclass(frozen=True)
class Shear:
    """Coordinates ``y = U x + c`` of a table, ``U`` an integer matrix of determinant
    +-1 (its ``rows``; ``inverse`` its inverse, integer too), ``shift`` the ``c`` that
    makes the least of each coordinate on the table 0, ``box`` the sheared table's shape.
    ``frame`` says what the reads are in the new coordinates: ``"NOSE"`` (2-D: each up
    and/or left, :func:`shear`) or ``"slab"`` (each on an earlier slab of the first axis,
    :func:`slab`).

    Examples
    --------
    >>> s = shear([(-1, 1), (0, -1)], (3, 4))
    >>> s.rows, s.shift, s.box
    (((1, 0), (1, 1)), (0, 0), (3, 6))
    >>> s.to_frame((2, 3)), s.from_frame((2, 5))
    ((2, 5), (2, 3))
    >>> s.offset((-1, 1)), s.offset((0, -1))
    ((-1, 0), (0, -1))
    """

    rows: tuple[tuple[int, ...], ...]
    inverse: tuple[tuple[int, ...], ...]
    shift: tuple[int, ...]
    box: tuple[int, ...]
    frame: str = "NOSE"

    def to_frame(self, x: Sequence[int]) -> tuple[int, ...]:
        """The sheared coordinates of cell ``x``."""
        return tuple(int(np.dot(r, x)) + c for r, c in zip(self.rows, self.shift))

    def from_frame(self, y: Sequence[int]) -> tuple[int, ...]:
        """The cell at sheared coordinates ``y`` (maybe outside the table)."""
        moved = [v - c for v, c in zip(y, self.shift)]
        return tuple(int(np.dot(r, moved)) for r in self.inverse)

    def offset(self, d: Sequence[int]) -> tuple[int, ...]:
        """A read offset in the sheared coordinates."""
        return tuple(int(np.dot(r, d)) for r in self.rows)

    def sides_source(self, table: str) -> tuple[str, ...]:
        """The original table's sides as source, from the shape of the sheared table
        ``table``, so generated code that needs them serves every size: each side of
        the box is the span of its coordinate, ``box_k - 1 = sum_j |U_kj| (n_j - 1)``,
        and the matrix ``|U|`` has an integer inverse too (its determinant is +-1, as
        ``U``'s is: in 2-D, ``a d`` and ``b c`` never have opposite signs when
        ``a d - b c = +-1``, so ``|a d| - |b c| = +-1``; a slab's ``|U|`` is the
        identity but for the step's row, whose entry on the solved axis is 1).

        Examples
        --------
        >>> s = shear([(-1, 1), (0, -1)], (3, 4))
        >>> s.box, s.sides_source("S")
        ((3, 6), ('S.shape[0]', 'S.shape[1] + 1 - S.shape[0]'))
        >>> slab(Hyperplane((1, 2, 1)), (3, 4, 5)).sides_source("M")[0]
        'M.shape[0] + 3 - 2 * M.shape[1] - M.shape[2]'
        """
        spans = np.abs(np.array(self.rows, dtype=np.int64))
        back = np.rint(np.linalg.inv(spans)).astype(np.int64)
        assert (back @ spans == np.eye(len(spans), dtype=np.int64)).all()  # the docstring's
        names = [f"{table}.shape[{k}]" for k in range(len(spans))]
        return tuple(linear_source(row, names, 1 - int(row.sum())) for row in back)

    def shift_source(self, sides: Sequence[str]) -> tuple[str, ...] | None:
        """The shift ``c`` as source (one expression a coordinate) from the original
        table's sides given as source (``n.shape[k]``, or :meth:`sides_source`): the
        least of each coordinate over the table is ``-sum_j max(-U_kj, 0) (n_j - 1)``;
        ``None`` where ``U`` has no negative entry (the shift is 0 at every size).

        Examples
        --------
        >>> shear([(-1, 1), (0, -1)], (3, 4)).shift_source(["n0", "n1"]) is None
        True
        >>> slab(Hyperplane((1, -2)), (3, 4)).shift_source(["n0", "n1"])
        ('2 * (n1 - 1)', '0')
        """
        if min(min(row) for row in self.rows) >= 0:
            return None
        return tuple(" + ".join(f"{-u} * ({n} - 1)" for u, n in zip(row, sides) if u < 0) or "0"
                     for row in self.rows)


def _inverse2(r1: Sequence[int], r2: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The inverse of the 2 x 2 integer matrix of rows ``r1``, ``r2`` (determinant +-1)."""
    (a, b), (c, d) = r1, r2
    det = a * d - b * c
    return ((det * d, -det * b), (-det * c, det * a))


def shear(offsets: Iterable[Sequence[int]], shape: Sequence[int], limit: int = 3
          ) -> Shear | None:
    """The NOSE :class:`Shear` of a 2-D table of ``shape`` with reads at constant
    ``offsets`` whose sheared table has the fewest cells, among rows with entries up to
    ``limit`` (ties: the smaller entries, the smaller first row, so a shear that keeps
    the rows is preferred); ``None`` when there is none (the reads need a hyperplane with
    larger entries, or have no legal order).

    Examples
    --------
    >>> shear([(-1, 2), (0, -1)], (4, 4)).rows
    ((1, 0), (2, 1))
    >>> shear([(0, 1), (0, -1)], (4, 4)) is None
    True
    """
    reads = np.array([tuple(d) for d in offsets], dtype=np.int64).reshape(-1, 2)
    vectors = _candidates(2, limit)
    weak = vectors[np.all(vectors @ reads.T <= 0, axis=1)] if len(reads) else vectors
    sides = np.array([n - 1 for n in shape], dtype=np.int64)
    best: tuple[tuple[int, ...], Shear] | None = None
    for r1 in weak:
        for r2 in weak:
            det = int(r1[0] * r2[1] - r1[1] * r2[0])
            if abs(det) != 1:
                continue
            spans = (int(np.abs(r1) @ sides) + 1, int(np.abs(r2) @ sides) + 1)
            key = (spans[0] * spans[1], int(np.abs(r1).sum() + np.abs(r2).sum()),
                   int(np.abs(r1).sum()), tuple(int(-x) for x in (*r1, *r2)))
            if best is None or key < best[0]:
                shift = (-int(np.minimum(r1, 0) @ sides), -int(np.minimum(r2, 0) @ sides))
                rows = ((int(r1[0]), int(r1[1])), (int(r2[0]), int(r2[1])))
                best = (key, Shear(rows, _inverse2(*rows), shift, spans))
    return None if best is None else best[1]


def slab(hyperplane: Hyperplane, shape: Sequence[int]) -> Shear | None:
    """The :class:`Shear` whose first coordinate is the hyperplane's step (``pi . x``
    less its least value) and whose others are the other axes' indices, so each step is
    a contiguous slab of the sheared table; ``None`` unless ``pi`` has an entry +-1 (the
    axis solved for, whose index the step and the others give back).

    Examples
    --------
    >>> s = slab(Hyperplane((1, 1, 1)), (3, 4, 5))
    >>> s.rows, s.shift, s.box
    (((1, 1, 1), (0, 1, 0), (0, 0, 1)), (0, 0, 0), (10, 4, 5))
    >>> s.to_frame((2, 3, 4)), s.from_frame((9, 3, 4)), s.offset((0, 0, -1))
    ((9, 3, 4), (2, 3, 4), (-1, 0, -1))
    """
    pi = hyperplane.pi
    if not any(abs(p) == 1 for p in pi):
        return None
    solved = _solved_axis(pi)
    others = [k for k in range(len(pi)) if k != solved]
    units = [tuple(int(k == o) for k in range(len(pi))) for o in others]
    back = [0] * len(pi)  # x_solved = pi_s (y0 - c0 - sum of pi_o y_o): pi_s is +-1
    back[0] = pi[solved]
    for at, o in enumerate(others, 1):
        back[at] = -pi[solved] * pi[o]
    inverse = [tuple(int(at == others.index(k) + 1) for at in range(len(pi)))
               if k != solved else tuple(back) for k in range(len(pi))]
    return Shear((tuple(pi), *units), tuple(inverse), (-hyperplane.first(shape),) + (0,) * len(others),
                 (hyperplane.span(shape), *(shape[o] for o in others)), "slab")


def linear_source(coefficients: Sequence[int], names: Sequence[str], const: int) -> str:
    """``sum(c * name) + const`` as plain source, its added terms first (no unary minus,
    which the cell IR would not read as an expression of the indices).

    Examples
    --------
    >>> p = ["_dg_p", "_dg_q"]
    >>> linear_source((1, 0), p, 0), linear_source((-1, 1), p, 0)
    ('_dg_p', '_dg_q - _dg_p')
    >>> linear_source((2, -1), p, -3), linear_source((-1, 0), p, 0)
    ('2 * _dg_p - _dg_q - 3', '0 - _dg_p')
    """
    terms = [(k, (f"{abs(k)} * {name}" if abs(k) != 1 else name) if name else str(abs(k)))
             for k, name in (*zip(coefficients, names), (const, "")) if k]
    added = [text for k, text in terms if k > 0] or ["0"]
    return " - ".join([" + ".join(added)] + [text for k, text in terms if k < 0])
