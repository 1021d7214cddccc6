"""What a proof of a cell function's reads establishes: a :class:`Certificate`, the reads it
proves (:class:`ProvenRead`) and what an instance's data and sizes must satisfy for it to
hold (:class:`Requirement`), as values kept on disk as JSON; and, where no certificate
proves every read, which reads a proof still covers (:class:`Trusted`), so a fill that
checks its own reads checks only the others.

:mod:`depgraph.analysis.certify` proves them; this module only holds and words them.
Assumptions: a table of any number of dimensions (regions and patterns are a 2-D table's
only); a requirement's sides are of the few forms :func:`side_value` reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Requirement", "Span", "ProvenRead", "Certificate", "Trusted", "ReadKey", "Edges",
           "side_value"]


@dataclass(frozen=True)
class Requirement:
    """``subject relation bound``, what an instance must satisfy for the certificate to
    hold: ``min(w) >= 0`` or ``max(d) <= M.shape[1] - 1`` of an argument's data, or a
    size fact the proof used,
    ``M.shape[0] == M.shape[1]``, ``len(P) == M.shape[0] + 1``, ``M.shape[1] is a power
    of two`` or ``M.shape[1] == 2 ** len(C)`` (the table by its name in the cell);
    checked in time proportional to the arguments (:meth:`Certificate.violated`)."""

    subject: str
    relation: str
    bound: str

    def __str__(self) -> str:
        return f"{self.subject} {self.relation} {self.bound}"

    @property
    def power_of_two(self) -> bool:
        """Whether it says its subject is a power of two (alone, or of another side)."""
        return self.relation == "is" or self.bound.startswith("2 ** ")

    def holds(self, table: str, names: dict[str, Any], shape: tuple[int, ...]) -> bool:
        a = side_value(self.subject, table, names, shape)
        if self.relation == "is":  # the one such bound: "a power of two"
            return a >= 1 and a & (a - 1) == 0
        b = side_value(self.bound, table, names, shape)
        return {">=": a >= b, "<=": a <= b, "==": a == b}[self.relation]


def side_value(text: str, table: str, names: dict[str, Any], shape: tuple[int, ...]) -> int:
    """The value of one side of a :class:`Requirement`: an integer, ``min(a)``,
    ``max(a)``, ``len(a)``, ``a.shape[k]`` (``table.shape[k]`` the table's), a scalar argument, each
    plus an integer; ``names`` the arguments by name.

    Examples
    --------
    >>> side_value("len(P) - 1", "M", {"P": [3, 4, 5]}, (2, 2))
    2
    >>> side_value("M.shape[1] + 2", "M", {}, (4, 6))
    8
    >>> side_value("max(d)", "M", {"d": [3, 1, 4]}, (2, 2))
    4
    >>> side_value("2 ** (M.shape[0] - 1)", "M", {}, (4, 8))
    8
    """
    if text.startswith("2 ** "):  # a power of two of a side
        inner = text[len("2 ** "):]
        return 2 ** side_value(inner[1:-1] if inner.startswith("(") else inner, table, names, shape)
    found = re.fullmatch(r"(.*?)(?: ([+-]) (\d+))?", text)
    assert found is not None
    head, sign, extra = found.groups()
    shift = int(extra or 0) * (-1 if sign == "-" else 1)
    if re.fullmatch(r"-?\d+", head):
        return int(head) + shift
    call = re.fullmatch(r"(min|max|len)\((\w+)\)", head)
    if call:
        data = np.asarray(names[call.group(2)])
        how = call.group(1)
        return (len(data) if how == "len" else int(getattr(data, how)())) + shift
    extent = re.fullmatch(r"(\w+)\.shape\[(\d+)\]", head)
    if extent:
        sizes = shape if extent.group(1) == table else np.shape(names[extent.group(1)])
        return int(sizes[int(extent.group(2))]) + shift
    return int(names[head]) + shift


#: The least and greatest value an offset may take for every shape (``None``: no bound).
Span = tuple[int | None, int | None]


@dataclass(frozen=True)
class ProvenRead:
    """A read of ``M`` proven in bounds: its source text and line, its offset from the
    cell per axis (source text: ``-1``, ``k - j``, ``-w[i - 1]``), each offset's least and
    greatest value for every shape (its :data:`Span`, so its signs), and the regions it
    may fall in (a 2-D table's; ``()`` otherwise)."""

    text: str
    line: int
    offsets: tuple[str, ...]
    spans: tuple[Span, ...]
    regions: tuple[str, ...]

    def shown(self) -> str:
        """The read's index as the source writes it: ``(k - 1, i, k - 1)``.

        Examples
        --------
        >>> ProvenRead("M[k - 1, i, k - 1]", 3, ("-1", "0", "-j + k - 1"),
        ...            ((-1, -1), (0, 0), (None, None)), ()).shown()
        '(k - 1, i, k - 1)'
        """
        return f"({self.text.split('[', 1)[1][:-1]})"

    def at(self) -> str:
        """The offset along each axis: a constant, a range, a bound, or ``?``.

        Examples
        --------
        >>> ProvenRead("M[k - 1, i, k - 1]", 3, ("-1", "0", "-j + k - 1"),
        ...            ((-1, -1), (-2, 0), (None, None)), ()).at()
        '(-1, -2..0, ?)'
        """
        return f"({', '.join(_span_text(*s) for s in self.spans)})"


def _violated(requires: tuple[Requirement, ...], rec: Any, params: tuple[str, ...],
              table: str) -> str | None:
    """The first of ``requires`` that ``rec`` (its shape and its arguments, named
    ``params``) breaks, worded; ``None`` when every one holds."""
    names = dict(zip(params, rec.args))
    for req in requires:
        if not req.holds(table, names, rec.shape):
            got = side_value(req.subject, table, names, rec.shape)
            return f"{req} does not hold ({req.subject} is {got})"
    return None


def _span_text(lo: int | None, hi: int | None) -> str:
    """A :data:`Span` in words: ``-1``, ``-2..0``, ``<= -1``, ``>= 1`` or ``?``."""
    if lo is not None and lo == hi:
        return str(lo)
    if lo is None and hi is None:
        return "?"
    if lo is None:
        return f"<= {hi}"
    return f">= {lo}" if hi is None else f"{lo}..{hi}"


@dataclass(frozen=True)
class Certificate:
    """What holds for every shape of an ``ndim``-D table: each read in bounds, at offsets
    within its spans; in 2-D, within ``regions``, so ``patterns`` (canonical order) are
    valid fill orders (both ``()`` in other dimensions, where
    :func:`depgraph.analysis.certify.unproven_hyperplane` proves a hyperplane instead);
    provided ``requires`` holds of the arguments' data and sizes.  ``floats``: where the
    cell may compute a float (a value an integer table must then check), ``None`` when
    its arithmetic is all integer.

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
    >>> @recurrence(shape=(4, 3, 3), dtype=np.int64)
    ... def layers(M, k, i, j):
    ...     return 0 if k == 0 else M[k - 1, i, j] + M[k - 1, i, k - 1]
    >>> certificate(layers).summary()
    'proven for every shape when M.shape[0] == M.shape[2] + 1: reads (k - 1, i, j) at (-1, 0, 0), (k - 1, i, k - 1) at (-1, 0, ?), always in bounds'
    """

    ndim: int
    reads: tuple[ProvenRead, ...]
    regions: tuple[str, ...]
    patterns: tuple[str, ...]
    requires: tuple[Requirement, ...] = ()
    floats: str | None = None

    def violated(self, rec: Any, params: tuple[str, ...], table: str = "M") -> str | None:
        """The first requirement ``rec`` (its shape and its arguments, named ``params``)
        breaks, worded; ``None`` when every one holds."""
        return _violated(self.requires, rec, params, table)

    def summary(self) -> str:
        """One line: what holds (the patterns, in 2-D), each read and where it falls (its
        regions in 2-D, else its offsets), and what the data needs."""
        flat = self.ndim == 2
        reads = ", ".join(dict.fromkeys(
            f"{r.shown()} in {'/'.join(r.regions)}" if flat else f"{r.shown()} at {r.at()}"
            for r in self.reads))
        when = f" when {', '.join(map(str, self.requires))}" if self.requires else ""
        held = ("proven" if not flat else
                f"{', '.join(self.patterns)} hold{'s' * (len(self.patterns) == 1)}"
                if self.patterns else "no pattern holds")
        return f"{held} for every shape{when}: reads {reads or 'nothing'}, always in bounds"

    def to_json(self) -> dict[str, Any]:
        """The certificate as ``analyze --json`` gives it (``regions`` and ``patterns``
        ``None`` unless 2-D, as the analysis's own)."""
        flat = self.ndim == 2
        return {"ndim": self.ndim,
                "patterns": list(self.patterns) if flat else None,
                "regions": list(self.regions) if flat else None,
                "requires": [[r.subject, r.relation, r.bound] for r in self.requires],
                "floats": self.floats,
                "reads": [{"read": r.text, "line": r.line, "offset": list(r.offsets),
                           "span": [list(s) for s in r.spans], "regions": list(r.regions)}
                          for r in self.reads],
                "summary": self.summary()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Certificate:
        reqs = tuple(Requirement(*r) for r in d["requires"])
        reads = tuple(ProvenRead(r["read"], r["line"], tuple(r["offset"]),
                                 tuple((lo, hi) for lo, hi in r["span"]), tuple(r["regions"]))
                      for r in d["reads"])
        return Certificate(int(d["ndim"]), reads, tuple(d["regions"] or ()),
                           tuple(d["patterns"] or ()), reqs, d["floats"])


#: A read in the source: its text as :func:`ast.unparse` writes it, and its line.
ReadKey = tuple[str, int]
#: Along each axis of a table, whether a read's index is proven at least 0, and whether
#: at most the last index: the table's edges a proof holds it inside.
Edges = tuple[tuple[bool, bool], ...]


@dataclass(frozen=True)
class Trusted:
    """What a proof covers of a cell function whose reads no :class:`Certificate` proves
    all of: each read of ``M`` proven in bounds on every path that makes it, with the
    regions it may fall in (``reads``: its :data:`ReadKey` and regions, a 2-D table's,
    ``()`` otherwise), each other read of ``M`` proven inside some of the table's edges
    (``edges``: its :data:`Edges`), and each read of an array argument's element proven
    inside the array (``elements``), provided ``requires`` holds of the data and sizes.
    A fill that checks its own reads need check only the others: a proof's premises are
    the tests of its path, which the fill computes from the values it really reads (a
    failed checked read returns an element the data requirements hold of).

    Examples
    --------
    >>> t = Trusted(((("M[i - 1, j]", 3), ("Up",)), (("M[i, j + d[i]]", 4), ("Left", "Right"))),
    ...             (("d[i]", 4),), (Requirement("d.shape[0]", "==", "M.shape[0]"),),
    ...             ((("M[i - 1, j + d[i]]", 4), ((True, True), (False, True))),))
    >>> sorted(t.reads_in(("Left", "Up", "UpLeft")))
    [('M[i - 1, j]', 3)]
    >>> Trusted.from_json(t.to_json()) == t
    True
    """

    reads: tuple[tuple[ReadKey, tuple[str, ...]], ...]
    elements: tuple[ReadKey, ...]
    requires: tuple[Requirement, ...] = ()
    edges: tuple[tuple[ReadKey, Edges], ...] = ()

    def reads_in(self, allowed: tuple[str, ...] | frozenset[str]) -> frozenset[ReadKey]:
        """The reads of ``M`` proven in bounds and in regions among ``allowed`` (names of
        :data:`patterns.REGIONS`), so in a 2-D pattern's order; none of a table of other
        dimensions, whose reads have no regions."""
        return frozenset(key for key, regions in self.reads
                         if regions and set(regions) <= set(allowed))

    def violated(self, rec: Any, params: tuple[str, ...], table: str = "M") -> str | None:
        """As :meth:`Certificate.violated`."""
        return _violated(self.requires, rec, params, table)

    def summary(self, allowed: tuple[str, ...] | frozenset[str] = ()) -> str:
        """What a fill in the order of a pattern whose regions are ``allowed`` (none: an
        order no proof covers, so of ``M`` nothing) leaves unchecked, in words; ``""``
        when nothing.

        Examples
        --------
        >>> t = Trusted(((("M[k + 1, a]", 8), ("Down",)),), (("p[k]", 8),),
        ...             edges=((("M[k + 1, a + p[k]]", 8), ((True, True), (True, False))),))
        >>> t.summary(("Down", "DownLeft", "DownRight"))
        'M[k + 1, a] (line 8) in bounds; p[k] (line 8) inside its array; M[k + 1, a + p[k]] (line 8) inside all but the last column'
        >>> t.summary()
        'p[k] (line 8) inside its array'
        """
        def names(keys: Any) -> str:
            return ", ".join(f"{text} (line {line})" for text, line in keys)

        whole = sorted(self.reads_in(allowed), key=lambda k: k[1])
        arrays = "its array" if len(self.elements) == 1 else "their arrays"
        parts = [f"{names(whole)} in bounds" if whole else "",
                 f"{names(self.elements)} inside {arrays}" if self.elements else ""]
        for key, edges in self.edges if allowed else ():
            axes = (("row", "column") if len(edges) == 2
                    else [f"index {k}" for k in range(len(edges))])
            missing = [f"{'first' if side == 0 else 'last'} {axis}"
                       for axis, held in zip(axes, edges) for side in (0, 1) if not held[side]]
            parts.append(f"{names([key])} inside all but the {' and '.join(missing)}")
        return "; ".join(p for p in parts if p)

    def to_json(self) -> dict[str, Any]:
        return {"reads": [[text, line, list(regions)] for (text, line), regions in self.reads],
                "elements": [[text, line] for text, line in self.elements],
                "requires": [[r.subject, r.relation, r.bound] for r in self.requires],
                "edges": [[text, line, [list(e) for e in edges]]
                          for (text, line), edges in self.edges]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Trusted:
        return Trusted(tuple(((str(text), int(line)), tuple(regions))
                             for text, line, regions in d["reads"]),
                       tuple((str(text), int(line)) for text, line in d["elements"]),
                       tuple(Requirement(*r) for r in d["requires"]),
                       tuple(((str(text), int(line)), tuple((bool(lo), bool(hi)) for lo, hi in e))
                             for text, line, e in d["edges"]))
