"""Prove the reads a :class:`~depgraph.analysis.symbolic.Walk` collected in bounds, and find
their offsets' spans (in 2-D their regions), for every shape at once: a
:class:`~depgraph.analysis.proof.Certificate`; and prove a hyperplane ``pi`` puts every
read on an earlier step than its cell's (:func:`later_read`); where no certificate
holds, which reads are proven all the same (:func:`trusted`).

An exact simplex (:func:`depgraph.analysis.simplex.least_value`, sympy's method in
plain fractions) gives, under a path's
premises and ``0 <= x_k < n_k`` along each axis ``k``, each index's least and greatest
value (in bounds: ``0 <= index <= extent - 1``), each offset's (its span and signs, so
in 2-D its region), and the least value of ``-pi . offset - 1`` (legal: at least 0).

The premises and indices are polynomials: each product of symbols (a monomial such as
``k*w``) is a variable of its own in the linear program, which then allows more than the
polynomials do (a relaxation: a least value it finds is no greater than the true one, and
premises it finds contradictory are).  What it knows of a monomial is only that, when each
factor is at least some ``low >= 0``, the product is at least the product of the lows.

Assumptions: every symbol is an integer; a floor on the arguments' elements that index
``M`` (``min(w) >= floor``) and the size and data facts given are taken as premises, and
become the certificate's requirements.  A bound on an array's data is taken of an
element only where the element's read is proven inside the array (:func:`_inside`).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import Any

import numpy as np

from depgraph.analysis.bitwise import bit_facts
from depgraph.analysis.proof import Certificate, Edges, ProvenRead, Requirement, Span, Trusted
from depgraph.analysis.simplex import Infeasible, Unbounded, least_value
from depgraph.analysis.symbolic import PathRead, Walk
from patterns import matching, region_of

__all__ = ["Prover", "prove", "trusted", "later_read"]


class Prover:
    """Least values of polynomials under premises, by an exact simplex over their
    monomials (module docstring)."""

    def __init__(self, walk: Walk, floor: int | None, facts: tuple = ()) -> None:
        sp = walk.sympy
        self.sp, self.walk = sp, walk
        self.floor, self.facts = floor, facts
        i = [walk.index[x] for x in walk.ir.index]
        self.domain = [("ge", x) for x in i] + [("ge", n - 1 - x) for x, n in zip(i, walk.extent)] \
            + [("ge", n - 1) for n in walk.extent] \
            + ([("ge", sym - floor) for sym in walk.indexing()] if floor is not None else []) \
            + [atom for atoms, _ in facts for atom in atoms] + walk.bounds
        self.domain_forms = {e for _, e in self.domain}
        self.nonneg = set(i) | set(walk.extent)
        self.coefficients: dict[Any, dict[Any, Any]] = {}
        self.memo: dict[Any, Any] = {}
        self.known: dict[tuple, list[Any]] = {}
        self._extrema_bounds()

    def _extrema_bounds(self) -> None:
        """Add to the domain what the walk's bounds on a ``min`` (``max``) do not say:
        ``min(a, b, ...)`` is one of its arguments, so at least the least of their least
        values over the domain (``max``: at most the greatest of their greatest), where
        each has one; inner calls first, so an outer one sees their bounds (drift's
        ``min(max(j + d, 0), m - 1) >= 0``).

        Examples
        --------
        >>> import ast
        >>> from depgraph.analysis.symbolic import Walk
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i, min(max(j - 2, 0), M.shape[1] - 1)]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> x = w.polynomial(ast.parse("min(max(j - 2, 0), M.shape[1] - 1)", mode="eval").body, {})
        >>> Prover(w, None).interval(x, ())
        (0, None)
        """
        for name, forms, x in self.walk.extrema:
            side = 1 if name == "min" else -1
            leasts = [self.least(side * f, ()) for f in forms]
            if all(v is not None and v != "never" for v in leasts):
                self.domain.append(("ge", side * x - min(leasts)))
                self.domain_forms.add(self.domain[-1][1])
                self.memo.clear()  # found without the new fact
                self.known.clear()

    def least(self, form: Any, premises: tuple, products: bool = True) -> Any:
        """The least value of ``form``; ``None`` when unbounded, ``"never"`` when the
        premises cannot hold together (the path is never taken).  ``products``: whether
        the monomials get the facts their factors' bounds give (:meth:`_product_facts`).
        A form that only takes integer values (integer coefficients, integer symbols)
        takes none below the linear program's least rounded up, which is what is
        returned: ``j // 2`` of ``j >= 0`` is at least ``(j - 1) / 2``, over the rationals
        ``-1/2``, so 0.

        Examples
        --------
        >>> import ast
        >>> from depgraph.analysis.symbolic import Walk
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i, j // 2]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> half = w.polynomial(ast.parse("j // 2", mode="eval").body, {})
        >>> Prover(w, None).least(half, ()), Prover(w, None).least(half / 2, ())
        (0, -1/4)
        """
        key = (form, premises, products)
        if key in self.memo:
            return self.memo[key]
        rows = [self._coefficients(e) for e in self._inequalities(premises)]
        objective = self._coefficients(form)
        monomials = sorted(set().union(objective, *rows) - {1}, key=str)
        if products:  # a product's factors may be new columns: each row's terms all kept
            rows += self._product_facts(monomials, premises)
            monomials = sorted(set().union(objective, *rows) - {1}, key=str)
        # linprog's variables are >= 0: the indices and extents are; any other is x+ - x-
        columns = [(s, 1) for s in monomials] + \
            [(s, -1) for s in monomials if s not in self.nonneg]
        A = [[-row.get(s, 0) * sign for s, sign in columns] for row in rows]
        b = [row.get(1, 0) for row in rows]
        c = [objective.get(s, 0) * sign for s, sign in columns]
        try:
            value = least_value(c, A, b) if columns else Fraction(0)
            result = self.sp.Rational(value.numerator, value.denominator) + objective.get(1, 0)
            if self._integral(objective):
                result = self.sp.ceiling(result)
        except Unbounded:
            result = None
        except Infeasible:
            result = "never"
        self.memo[key] = result
        return result

    def _integral(self, coefficients: dict[Any, Any]) -> bool:
        """Whether a form of these coefficients (:meth:`_coefficients`) takes only integer
        values: every coefficient an integer, every monomial a product of integer
        symbols."""
        return all(c.is_integer for c in coefficients.values()) and all(
            m == 1 or m.free_symbols <= self.walk.integral for m in coefficients)

    def _product_facts(self, monomials: list[Any], premises: tuple) -> list[dict[Any, Any]]:
        """``m - low >= 0`` (as coefficients) for each product of symbols ``m`` among
        ``monomials`` whose every factor ``f`` is at least some ``low_f >= 0`` under
        ``premises``, ``low`` the product of the ``low_f``, and for a product ``a b`` of
        two symbols also ``(a - low_a)(b - low_b) >= 0`` (``a b >= low_b a + low_a b -
        low_a low_b``: so ``m * c >= m`` where ``c >= 1``); nothing for one whose factor
        may be negative.  Each ``low_f`` is a least value found without such facts: no
        greater than the true one, and an integer's rounded up.

        Examples
        --------
        >>> from depgraph.analysis.symbolic import Walk
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i, j]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> i, j = w.index["i"], w.index["j"]
        >>> Prover(w, None).least(i * j - j, (("ge", i - 1),))  # i >= 1: i j >= j
        0
        """
        rows = []
        for m in monomials:
            powers = m.as_powers_dict()
            if sum(powers.values()) < 2:
                continue  # a symbol, not a product
            low = self.sp.Integer(1)
            lows = {}
            for factor, power in powers.items():
                least = self.least(factor, premises, products=False)
                if not _at_least(least, 0):
                    break
                lows[factor] = self.sp.ceiling(least)
                low *= lows[factor] ** power
            else:
                rows.append({m: 1, 1: -low})
                if len(lows) == 2 and sum(powers.values()) == 2:  # a b of two symbols
                    (a, la), (b, lb) = lows.items()
                    # (a - la)(b - lb) >= 0: a b >= lb a + la b - la lb
                    rows.append({m: 1, a: -lb, b: -la, 1: la * lb})
        return rows

    def _coefficients(self, form: Any) -> dict[Any, Any]:
        """``form``'s coefficient of each monomial, and its constant under ``1``."""
        if form not in self.coefficients:
            self.coefficients[form] = dict(self.sp.expand(form).as_coefficients_dict())
        return self.coefficients[form]

    def _inequalities(self, premises: tuple) -> list[Any]:
        """The forms ``e >= 0`` the domain and ``premises`` give: each ``e != 0`` with
        ``e >= 0`` known becomes ``e >= 1`` on integers (``e <= 0`` known, ``e <= -1``)."""
        if premises in self.known:
            return self.known[premises]
        ge = [e for kind, e in self.domain + list(premises) if kind == "ge"]
        plain = tuple(("ge", g) for g in ge if g not in self.domain_forms)
        self.known[premises] = ge  # while strengthening: the plain inequalities
        for e in (e for kind, e in premises if kind == "ne"):
            if _at_least(self.least(e, plain), 0):
                ge.append(e - 1)
            elif _at_least(self.least(-e, plain), 0):
                ge.append(-e - 1)
        if self.walk.bitwise or self.walk.powers or self.walk.shifts:
            bit_facts(self, premises, ge)
            # found while the list grew: less than it now says
            self.memo = {k: v for k, v in self.memo.items() if k[1] != premises}
        return ge

    def interval(self, form: Any, premises: tuple) -> tuple[Any, Any] | None:
        """``(least, greatest)`` of ``form`` (either ``None`` when unbounded), or ``None``
        when the premises never hold."""
        lo, neg = self.least(form, premises), self.least(-form, premises)
        if lo == "never" or neg == "never":
            return None
        return lo, None if neg is None else -neg

    def span(self, form: Any, premises: tuple) -> Span | None:
        """:meth:`interval` of an integer ``form``, its ends rounded inwards to integers."""
        found = self.interval(form, premises)
        if found is None:
            return None
        lo, hi = found
        return (None if lo is None else int(self.sp.ceiling(lo)),
                None if hi is None else int(self.sp.floor(hi)))


def _at_least(value: Any, bound: int) -> bool:
    """Whether a least value (``None`` unbounded, ``"never"`` infeasible) is ``>= bound``."""
    return value is not None and value != "never" and bool(value >= bound)


def _signs(lo: int | None, hi: int | None) -> list[int]:
    """The signs an integer in ``[lo, hi]`` may have (``None``: unbounded)."""
    return [s for s in (-1, 0, 1)
            if (s == -1 and (lo is None or lo < 0)) or (s == 1 and (hi is None or hi > 0))
            or (s == 0 and (lo is None or lo <= 0) and (hi is None or hi >= 0))]


def _union(a: Span, b: Span) -> Span:
    """The least span holding both (a read proven on two paths)."""
    return (None if a[0] is None or b[0] is None else min(a[0], b[0]),
            None if a[1] is None or b[1] is None else max(a[1], b[1]))


def prove(prover: Prover, elements_first: bool = False) -> Certificate | str:
    """The certificate of the reads ``prover``'s walk collected, assuming every element of
    the arguments that index ``M`` is at least the prover's floor (``None``: nothing
    assumed) and its size facts (premises and the requirement each becomes); or why
    there is none (the first read of ``M`` not proven, else the first read of an
    argument's element; with ``elements_first`` the other way round, which ends sooner
    a proof tried without a fact only the arguments' reads need)."""
    walk = prover.walk
    if elements_first and (outside := _outside(prover)):
        return outside
    proven: dict[tuple[str, int], tuple[tuple[str, ...], tuple[Span, ...], set[str]]] = {}
    for read in walk.reads:
        edges = _edges(prover, read)
        if edges is None:
            continue  # a path never taken (with the extents' facts, say)
        found = _read_proof(prover, read, edges)
        if isinstance(found, str):
            return found
        _merge(proven, read, *found)
    outside = None if elements_first else _outside(prover)
    if outside:
        return outside
    regions = tuple(sorted(set().union(*(r for *_, r in proven.values())))) if proven else ()
    reads = tuple(ProvenRead(text, line, offs, spans, tuple(sorted(regs)))
                  for (text, line), (offs, spans, regs)
                  in sorted(proven.items(), key=lambda kv: kv[0][1]))
    flat = walk.ir.ndim == 2  # regions, and so patterns, are a 2-D table's
    return Certificate(walk.ir.ndim, reads, regions, matching(regions) if flat else (),
                       _requirements(prover))


def trusted(prover: Prover) -> Trusted:
    """What ``prover`` proves of its walk's reads where :func:`prove` finds no certificate
    (:class:`~depgraph.analysis.proof.Trusted`): each read of ``M`` proven on every path
    that makes it, and each read of an argument's element proven inside its array, under
    the same premises and requirements.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph.analysis.symbolic import Walk
    >>> from depgraph.frontend.ir import read_cell
    >>> def drift(M, i, j, d):
    ...     if i == 0:
    ...         return 0
    ...     return M[i - 1, j] + M[i - 1, j + d[i - 1]]
    >>> walk = Walk(read_cell(drift, 2), (np.zeros(3, np.int64),), (4, 9))
    >>> walk.block(list(walk.ir.definition().body), {}, ())
    >>> t = trusted(Prover(walk, None, tuple(walk.facts())))
    >>> t.reads, t.elements
    (((('M[i - 1, j]', 4), ('Up',)),), (('d[i - 1]', 4),))
    >>> [str(r) for r in t.requires]
    ['d.shape[0] == M.shape[0] - 1']
    """
    walk = prover.walk
    proven: dict[tuple[str, int], tuple[tuple[str, ...], tuple[Span, ...], set[str]]] = {}
    failed = set(walk.untraced)
    held: dict[tuple[str, int], Edges] = {}  # the edges proven on every path of a read
    for read in walk.reads:
        edges = _edges(prover, read)
        if edges is None:
            continue  # a path never taken
        key = (read.text, read.line)
        held[key] = tuple((a[0] and b[0], a[1] and b[1])
                          for a, b in zip(held.get(key, edges), edges))
        found = _read_proof(prover, read, edges)
        if isinstance(found, str):
            failed.add(key)
        else:
            _merge(proven, read, *found)
    reads = tuple((key, tuple(sorted(regions))) for key, (_, _, regions)
                  in sorted(proven.items(), key=lambda kv: kv[0][1]) if key not in failed)
    inside: dict[tuple[str, int], bool] = {}
    for array, read in walk.elements:
        key = (read.text, read.line)
        inside[key] = inside.get(key, True) and _inside(prover, array, read)
    return Trusted(reads, tuple(key for key, kept in inside.items() if kept),
                   _requirements(prover),
                   tuple((key, edges) for key, edges in held.items()
                         if key in failed and key not in walk.untraced
                         and any(sum(edges, ()))))


def _requirements(prover: Prover) -> tuple[Requirement, ...]:
    """What ``prover``'s proofs assume of the data and sizes: its floor on each argument
    whose elements index ``M``, and its facts."""
    walk = prover.walk
    arrays = sorted({walk.loads[sym] for sym in walk.indexing()}) \
        if prover.floor is not None else []
    return (tuple(Requirement(f"min({a})", ">=", str(prover.floor)) for a in arrays)
            + tuple(req for _, req in prover.facts))


def _read_proof(prover: Prover, read: PathRead, edges: Edges
                ) -> tuple[tuple[str, ...], tuple[Span, ...], set[str]] | str:
    """One path's read of ``M``, taken, whose :func:`_edges` are ``edges``, proven in
    bounds: its offsets' source text and spans, and the regions it may fall in (a 2-D
    table's); or why it is not proven."""
    walk = prover.walk
    if not all(sum(edges, ())):
        return f"the read {read.text} (line {read.line}) may leave the table"
    spans = []
    for axis, e in enumerate(read.index):
        offset = prover.span(e - walk.index[walk.ir.index[axis]], read.premises)
        assert offset is not None
        spans.append(offset)
    signs = [_signs(*s) for s in spans]
    if all(0 in s for s in signs):  # every offset may be 0 at once
        return f"the read {read.text} (line {read.line}) may be of the cell itself"
    regions = {region_of(a, b) for a, b in product(*signs)} if walk.ir.ndim == 2 else set()
    offsets = tuple(str((e - walk.index[x]).subs(walk.display))
                    for e, x in zip(read.index, walk.ir.index))
    return offsets, tuple(spans), regions


def _edges(prover: Prover, read: PathRead) -> Edges | None:
    """Along each axis, whether one path's read of ``M`` is proven at least 0 and at most
    the axis's last index (:data:`~depgraph.analysis.proof.Edges`); ``None`` for a path
    never taken."""
    walk = prover.walk
    edges = []
    for axis, e in enumerate(read.index):
        span = prover.interval(e, read.premises)
        top = "never" if span is None else prover.least(walk.extent[axis] - 1 - e,
                                                        read.premises)
        if span is None or top == "never":
            return None
        edges.append((_at_least(span[0], 0), _at_least(top, 0)))
    return tuple(edges)


def _merge(proven: dict[tuple[str, int], tuple[tuple[str, ...], tuple[Span, ...], set[str]]],
           read: PathRead, offsets: tuple[str, ...], spans: tuple[Span, ...],
           regions: set[str]) -> None:
    """``read``'s proof on one more path joined to those of its other paths: the same
    offsets or ``?``, the least spans holding both, the union of the regions."""
    key = (read.text, read.line)
    old = proven.get(key, (offsets, spans, set()))
    proven[key] = (offsets if old[0] == offsets else ("?",) * len(offsets),
                   tuple(map(_union, old[1], spans)), old[2] | regions)


def _outside(prover: Prover) -> str | None:
    """Why some element read is not proven inside its array, or ``None``: a compiled read
    past its end is not checked, and a bound on the array's data would not hold of what
    it reads."""
    for array, read in prover.walk.elements:
        if not _inside(prover, array, read):
            return f"the read {read.text} (line {read.line}) may leave {array}"
    return None


def _inside(prover: Prover, array: str, read: PathRead) -> bool:
    """Whether the read of an element of the argument ``array`` is proven inside it for
    every shape (Python's negative indices counted in): ``-n <= index <= n - 1`` along
    each axis of ``n`` elements, or its path never taken.  What a bound on the array's
    data says of the element holds only then: a compiled read past the array's end is
    not checked, and reads what the array does not hold."""
    walk = prover.walk
    if len(read.index) > np.ndim(walk.params[array]) or any(e is None for e in read.index):
        return False
    for axis, e in enumerate(read.index):
        n = walk.extent_of(array, axis)
        low, high = prover.least(e + n, read.premises), prover.least(n - 1 - e, read.premises)
        if "never" in (low, high):
            return True
        if not (_at_least(low, 0) and _at_least(high, 0)):
            return False
    return True


def later_read(prover: Prover, pi: tuple[int, ...]) -> str | None:
    """The first read of ``prover``'s walk that hyperplane ``pi`` may not put on an earlier
    step than its cell's, worded; ``None`` when it puts every one there: for each read
    ``y`` of cell ``x``, the least value of ``-pi . (y - x) - 1`` under the read's
    premises (and the prover's domain, floor and size facts) is at least 0, so
    ``pi . (y - x) <= -1``."""
    walk = prover.walk
    cell = [walk.index[x] for x in walk.ir.index]
    for read in walk.reads:
        ahead = -sum((p * (e - x) for p, e, x in zip(pi, read.index, cell)),
                     walk.sympy.Integer(0)) - 1
        least = prover.least(walk.sympy.expand(ahead), read.premises)
        if least != "never" and not _at_least(least, 0):
            return (f"the read {read.text} (line {read.line}) may not be on an earlier "
                    f"hyperplane of pi = {tuple(pi)}")
    return None
