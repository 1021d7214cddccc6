"""What a proof of a cell function's reads establishes: a :class:`Certificate`, the reads it
proves (:class:`ProvenRead`) and what an instance's data and sizes must satisfy for it to
hold (:class:`Requirement`), as values kept on disk as JSON.

:mod:`depgraph.analysis.certify` proves them; this module only holds and words them.
Assumptions: 2-D tables (a read's offsets are worded along ``i`` and ``j``); a requirement's
sides are of the few forms :func:`side_value` reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Requirement", "ProvenRead", "Certificate", "side_value"]


@dataclass(frozen=True)
class Requirement:
    """``subject relation bound``, what an instance must satisfy for the certificate to
    hold: ``min(w) >= 0`` of an argument's data, or a size fact the proof used,
    ``M.shape[0] == M.shape[1]`` or ``len(P) == M.shape[0] + 1`` (the table by its name in
    the cell); checked in time proportional to the arguments
    (:meth:`Certificate.violated`)."""

    subject: str
    relation: str
    bound: str

    def __str__(self) -> str:
        return f"{self.subject} {self.relation} {self.bound}"

    def holds(self, table: str, names: dict[str, Any], shape: tuple[int, ...]) -> bool:
        a = side_value(self.subject, table, names, shape)
        b = side_value(self.bound, table, names, shape)
        return a >= b if self.relation == ">=" else a == b


def side_value(text: str, table: str, names: dict[str, Any], shape: tuple[int, ...]) -> int:
    """The value of one side of a :class:`Requirement`: an integer, ``min(a)``,
    ``len(a)``, ``a.shape[k]`` (``table.shape[k]`` the table's), a scalar argument, each
    plus an integer; ``names`` the arguments by name.

    Examples
    --------
    >>> side_value("len(P) - 1", "M", {"P": [3, 4, 5]}, (2, 2))
    2
    >>> side_value("M.shape[1] + 2", "M", {}, (4, 6))
    8
    """
    found = re.fullmatch(r"(.*?)(?: ([+-]) (\d+))?", text)
    assert found is not None
    head, sign, extra = found.groups()
    shift = int(extra or 0) * (-1 if sign == "-" else 1)
    if re.fullmatch(r"-?\d+", head):
        return int(head) + shift
    call = re.fullmatch(r"(min|len)\((\w+)\)", head)
    if call:
        data = np.asarray(names[call.group(2)])
        return (int(data.min()) if call.group(1) == "min" else len(data)) + shift
    extent = re.fullmatch(r"(\w+)\.shape\[(\d+)\]", head)
    if extent:
        sizes = shape if extent.group(1) == table else np.shape(names[extent.group(1)])
        return int(sizes[int(extent.group(2))]) + shift
    return int(names[head]) + shift


@dataclass(frozen=True)
class ProvenRead:
    """A read of ``M`` proven in bounds: its source text and line, its offset from the
    cell per axis (source text: ``-1``, ``k - j``, ``-w[i - 1]``), and the regions it may
    fall in."""

    text: str
    line: int
    offsets: tuple[str, ...]
    regions: tuple[str, ...]


@dataclass(frozen=True)
class Certificate:
    """What holds for every shape: each read in bounds, within ``regions``, so
    ``patterns`` (canonical order) are valid fill orders; provided ``requires`` holds of
    the arguments' data.  ``floats``: where the cell may compute a float (a value an
    integer table must then check), ``None`` when its arithmetic is all integer.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> from depgraph.analysis.certify import certificate
    >>> @recurrence(shape=(5, 6), dtype=np.int64)
    ... def paths(M, i, j):
    ...     if i == 0 or j == 0:
    ...         return 1
    ...     return M[i - 1, j] + M[i, j - 1]
    >>> cert = certificate(paths)
    >>> cert.regions, cert.patterns
    (('Left', 'Up'), ('NOSE',))
    >>> cert.summary()
    'NOSE holds for every shape: reads (i - 1, j) in Up, (i, j - 1) in Left, always in bounds'
    """

    reads: tuple[ProvenRead, ...]
    regions: tuple[str, ...]
    patterns: tuple[str, ...]
    requires: tuple[Requirement, ...] = ()
    floats: str | None = None

    def violated(self, rec: Any, params: tuple[str, ...], table: str = "M") -> str | None:
        """The first requirement ``rec`` (its shape and its arguments, named ``params``)
        breaks, worded; ``None`` when every one holds."""
        names = dict(zip(params, rec.args))
        for req in self.requires:
            if not req.holds(table, names, rec.shape):
                got = side_value(req.subject, table, names, rec.shape)
                return f"{req} does not hold ({req.subject} is {got})"
        return None

    def summary(self) -> str:
        """One line: the patterns, the reads and their regions, and what the data needs."""
        reads = ", ".join(dict.fromkeys(
            f"({', '.join(_at(x, o) for x, o in zip('ij', r.offsets))}) in "
            f"{'/'.join(r.regions)}" for r in self.reads))
        when = f" when {', '.join(map(str, self.requires))}" if self.requires else ""
        held = (f"{', '.join(self.patterns)} hold{'s' * (len(self.patterns) == 1)}"
                if self.patterns else "no pattern holds")
        return f"{held} for every shape{when}: reads {reads or 'nothing'}, always in bounds"

    def to_json(self) -> dict[str, Any]:
        return {"patterns": list(self.patterns), "regions": list(self.regions),
                "requires": [[r.subject, r.relation, r.bound] for r in self.requires],
                "floats": self.floats,
                "reads": [{"read": r.text, "line": r.line, "offset": list(r.offsets),
                           "regions": list(r.regions)} for r in self.reads],
                "summary": self.summary()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Certificate:
        reqs = tuple(Requirement(*r) for r in d["requires"])
        reads = tuple(ProvenRead(r["read"], r["line"], tuple(r["offset"]), tuple(r["regions"]))
                      for r in d["reads"])
        return Certificate(reads, tuple(d["regions"]), tuple(d["patterns"]), reqs, d["floats"])


def _at(index: str, offset: str) -> str:
    """``i - 1`` for index ``i`` and offset ``-1``."""
    if offset == "0":
        return index
    return f"{index} - {offset[1:]}" if offset.startswith("-") else f"{index} + {offset}"

