"""The eight regions of a 2-D read offset (SPEC section 4, thesis figure 4.2).

For a cell ``x = (i, j)`` reading ``y``, the offset ``d = y - x`` falls in one region by the
signs of ``d_i`` (rows grow downward) and ``d_j`` (columns grow right).  ``d = (0, 0)`` is a
self-read, which is no region: the tracer reports it as a cycle before it gets here.

Region codes are small integers so whole edge arrays classify in one vectorised step; the
code of a sign pair ``(si, sj)`` in ``{-1, 0, 1}^2`` is ``(si + 1) * 3 + (sj + 1)``, which is
also its position in the 3x3 glyph read row by row.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["REGIONS", "REGION_CODE", "SELF", "region_of", "region_codes", "region_names",
           "axis_signs"]

#: Region names by code (code = (sign(d_i) + 1) * 3 + (sign(d_j) + 1)); code 4 is the cell itself.
REGIONS: tuple[str, ...] = (
    "UpLeft", "Up", "UpRight",
    "Left", "Self", "Right",
    "DownLeft", "Down", "DownRight",
)
REGION_CODE: dict[str, int] = {name: code for code, name in enumerate(REGIONS)}
SELF = REGION_CODE["Self"]


def region_of(di: int, dj: int) -> str:
    """Name the region of one offset.

    Examples
    --------
    >>> region_of(-1, -1), region_of(-3, 0), region_of(0, 2), region_of(1, -1)
    ('UpLeft', 'Up', 'Right', 'DownLeft')
    """
    return REGIONS[(int(np.sign(di)) + 1) * 3 + int(np.sign(dj)) + 1]


def region_codes(di: np.ndarray, dj: np.ndarray) -> np.ndarray:
    """Region code of every offset in two arrays (vectorised :func:`region_of`).

    Examples
    --------
    >>> region_codes(np.array([-1, 0, 2]), np.array([0, -5, 1])).tolist()
    [1, 3, 8]
    """
    return ((np.sign(di) + 1) * 3 + np.sign(dj) + 1).astype(np.int8)


def axis_signs(regions: Iterable[str]) -> tuple[frozenset[int], frozenset[int]]:
    """The signs (-1, 0, 1) a read's row offset and column offset take over ``regions``.

    Examples
    --------
    >>> rows, columns = axis_signs(("UpLeft", "Up", "UpRight"))
    >>> sorted(rows), sorted(columns)
    ([-1], [-1, 0, 1])
    """
    codes = [REGION_CODE[r] for r in regions]
    return frozenset(c // 3 - 1 for c in codes), frozenset(c % 3 - 1 for c in codes)


def region_names(codes: np.ndarray) -> tuple[str, ...]:
    """Sorted names of the distinct regions among ``codes``.

    Examples
    --------
    >>> region_names(np.array([3, 0, 1, 1]))
    ('Left', 'Up', 'UpLeft')
    """
    return tuple(sorted(REGIONS[c] for c in np.unique(codes)))
