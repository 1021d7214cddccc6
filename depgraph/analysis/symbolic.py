"""Walk every path through a cell function's body (a table of any number of dimensions),
symbolically, collecting each read of ``M`` with the premises of its path (:class:`Walk`),
for :mod:`depgraph.analysis.certify` to prove in bounds:

- an index expression is a polynomial (a sympy expression: sums and products) in the
  cell's indices (``i, j``, ``k, i, j``...), the table's extents (``M.shape[k]``, one a
  dimension), loop variables,
  integer constants, and opaque integer symbols for what the source does not fix (an
  argument's element ``w[i - 1]``, one per index value; a scalar argument, ``len(X)``);
- a path's premises are the branch tests that lead to the read (an ``if`` that returned
  before it, negated; ``a if t else b``; ``x and y``; a ``for k in range(lo, hi)`` gives
  ``lo <= k <= hi - 1``, each end that is a polynomial; a ``while`` loop's test, in its body), as polynomial
  inequalities; a test that is not a comparison of polynomials is dropped (a weaker
  premise, so still sound);
- a loop's body is walked once for all its iterations: a ``for`` loop's variable is a
  symbol within its range; a ``while`` loop's *induction variable* (known before the
  loop, and assigned in it only by ``x += c``, or only by ``x -= c``, ``c`` a positive
  integer literal) a symbol at least (at most) its value before the loop; every other
  name the loop assigns is unknown in it, and every name it assigns is unknown after it;
- ``max(a, b, ...)`` (``min``) of polynomials, wherever it is computed (``x = max(0,
  j - d)``, ``range(1, min(a, d[k]) + 1)``), is a symbol at least (at most) each of them
  (:attr:`Walk.bounds`);
- ``a & b``, ``a % b`` and ``a // b`` of polynomials (a column wrapped round the table,
  ``(j + d) % M.shape[1]``) are symbols bounded as Python's integer arithmetic bounds
  them, where the divisor's or mask's sign is known for every size (:meth:`Walk._bounded`);
  a shift by a constant ``c`` is ``a * 2**c`` (``<<``) or ``a // 2**c`` (``>>``);
- ``a | b``, ``a ^ b`` and ``1 << c`` (``c`` not a constant) are symbols whose bounds hold
  only where their operands' do (both at least 0, below a power of two), which the
  prover finds under each path's premises, a test ``(a >> c) & 1 == 0`` among them
  (:mod:`depgraph.analysis.bitwise`).

Assumptions: the cell function's ``M``, indices and arguments are not reassigned, and its
reads are seen in its source; integer index arithmetic.  What the walk does not model (a
``while`` loop with an ``else``, a comprehension, a nested function, a read inside an
index, too many paths) raises :class:`GiveUp`.  A value the walk cannot follow is
``None``: unknown, so nothing is proven from it.  Whether a loop ends is not the walk's
concern: only what each read may be when it is made.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Hashable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from depgraph.analysis.bitwise import BitOps
from depgraph.analysis.proof import Requirement, side_value
from depgraph.frontend.ir import CellIR, range_parts, subscript_elements
from depgraph.frontend.source import function_namespace

__all__ = ["MAX_PATHS", "SMALL", "GiveUp", "PathRead", "Walk"]

#: Paths through the body beyond which the walk gives up (the branches multiply).
MAX_PATHS = 256

#: A table extent up to which the walk offers "the extent is this constant" as a size fact.
SMALL = 2


#: The operators :meth:`Walk._bounded` bounds, as the source writes them.
_OPERATORS = {ast.BitAnd: "&", ast.Mod: "%", ast.FloorDiv: "//"}


class GiveUp(Exception):
    """The walk met something it does not model: no certificate."""


@dataclass(frozen=True)
class PathRead:
    """A read of ``M`` on one path: its source text and line, its index (a polynomial per
    axis) and the premises of its path."""

    text: str
    line: int
    index: tuple[Any, ...]
    premises: tuple[tuple[str, Any], ...]


def _equal(a: Any, b: Any, shift: int, a_text: str, b_text: str
           ) -> tuple[tuple[tuple[str, Any], ...], Requirement]:
    """The fact ``a == b + shift`` as premises, and as the requirement worded by the sides'
    texts (``a_text == b_text + shift``)."""
    bound = b_text + (f" {'+' if shift > 0 else '-'} {abs(shift)}" if shift else "")
    return (("ge", a - b - shift), ("ge", b + shift - a)), Requirement(a_text, "==", bound)


def _extent(node: ast.Subscript) -> bool:
    """Whether ``node`` is an extent ``A.shape[k]``."""
    return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"


class Walk(BitOps):
    """Every path through a cell function's body, collecting each read of ``M`` with the
    premises of its path (module docstring)."""

    def __init__(self, ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...],
                 lenient: bool = False) -> None:
        import sympy  # the prover's own dependency: only for a cell not proven before

        self.sympy = sympy
        self.ir, self.shape = ir, shape
        self.index = {x: sympy.Symbol(x, integer=True) for x in ir.index}
        self.extent = [sympy.Symbol(f"_n{k}", integer=True) for k in range(ir.ndim)]
        self.params = dict(zip(ir.params, args))
        self.namespace = function_namespace(ir.func)
        # what a symbol stands for -> the symbol: its source text (``len(X)``, a scalar
        # argument), or an argument's element by its array and its index's forms
        self.opaque: dict[Hashable, Any] = {}
        self.loads: dict[Any, str] = {}  # an element's symbol -> its array
        self.integral: set[Any] = set(self.index.values()) | set(self.extent)
        self.display: dict[Any, Any] = {n: sympy.Symbol(f"{ir.table}.shape[{k}]")
                                         for k, n in enumerate(self.extent)}
        self.reads: list[PathRead] = []
        #: each read of an array argument's element (any dtype), with its array
        self.elements: list[tuple[str, PathRead]] = []
        #: with ``lenient``, each read of ``M`` at an index the walk cannot follow (its
        #: text and line), where a strict walk gives up: a proof of the others may stand
        self.lenient = lenient
        self.untraced: list[tuple[str, int]] = []
        #: what holds of the symbols of ``max``/``min`` calls wherever they are computed
        self.bounds: list[tuple[str, Any]] = []
        #: each ``max`` (``min``) call's symbol, with its function's name and its
        #: arguments' forms, in the order first met (an inner call before an outer one)
        self.extrema: list[tuple[str, tuple[Any, ...], Any]] = []
        #: the greatest values of the ``&``/``%`` symbols by a constant (a mask's ``c``, a
        #: modulus less 1), which an extent above them keeps inside the table
        self.tops: set[int] = set()
        #: each ``a | b`` and ``a ^ b`` symbol, with its operator and operands' forms, and
        #: each ``1 << c`` symbol (``c`` not a constant) with its exponent's form, in the
        #: order first met (inner first): bounded by the prover under each path's premises
        #: (:func:`depgraph.analysis.bitwise.bit_facts`), not for every value
        self.bitwise: list[tuple[type, Any, Any, Any]] = []
        self.powers: list[tuple[Any, Any]] = []
        #: each ``a >> c`` symbol (``c`` not a constant) with its operands' forms, bounded
        #: as those are
        self.shifts: list[tuple[Any, Any, Any]] = []
        #: ``log2(M.shape[k])`` of each table extent, which a size fact may tie to a side
        self.logs = [sympy.Symbol(f"_l{k}", integer=True) for k in range(ir.ndim)]
        self.integral |= set(self.logs)
        self.display.update({L: sympy.Symbol(f"log2({ir.table}.shape[{k}])")
                             for k, L in enumerate(self.logs)})
        self.paths = 0
        self.loops = 0

    def facts(self) -> list[tuple[tuple[tuple[str, Any], ...], Requirement]]:
        """What this instance's sizes say that the source does not, each as premises and
        the requirement that a later instance checks:

        - a table extent equal to another plus up to 2 (a square table; Floyd-Warshall's
          ``(n + 1) x n x n``), or to a constant up to :data:`SMALL` (two lines of an
          assembly line);
        - an argument's extent or a scalar argument equal to a table extent plus up to 2,
          and an array argument's extents equal to each other plus up to 2;
        - a table extent above the greatest value of an ``a & c`` or ``a % c`` by a
          constant ``c`` (``M.shape[1] >= 64`` for a column ``(j + d) & 63``), or above a
          read's constant index (``M.shape[0] >= 2`` for ``M[1, t + 1]``).

        Only of what a read's index or premises hold (an array's extent: of an array
        whose element they hold; or of one the cell reads an element of, which must be
        proven inside it, against the axes of the cell's indices those reads hold): no
        other fact can help prove a read.

        Examples
        --------
        >>> from depgraph.frontend.ir import read_cell
        >>> def fw(M, k, i, j):
        ...     return M[k - 1, i, k - 1]
        >>> [str(req) for _, req in Walk(read_cell(fw, 3), (), (5, 4, 4)).facts()]
        ['M.shape[0] == M.shape[1] + 1', 'M.shape[0] == M.shape[2] + 1', 'M.shape[1] == M.shape[2]']
        """
        n, table = self.extent, self.ir.table
        out = [_equal(n[a], n[b], self.shape[a] - self.shape[b], f"{table}.shape[{a}]",
                      f"{table}.shape[{b}]")
               for a, b in combinations(range(self.ir.ndim), 2)
               if abs(self.shape[a] - self.shape[b]) <= 2]
        out += [_equal(n[a], self.sympy.Integer(size), 0, f"{table}.shape[{a}]", str(size))
                for a, size in enumerate(self.shape) if size <= SMALL]
        out += [((("ge", n[a] - top - 1),), Requirement(f"{table}.shape[{a}]", ">=", str(top + 1)))
                for top in sorted(self.tops) for a, size in enumerate(self.shape)
                if size >= top + 1]
        # a read at a constant index past the first: the extent above it (M[1, t + 1])
        fixed = sorted({(a, int(e)) for r in self.reads for a, e in enumerate(r.index)
                        if e is not None and e.is_Integer and 1 <= int(e) < self.shape[a]})
        out += [((("ge", n[a] - c - 1),), Requirement(f"{table}.shape[{a}]", ">=", str(c + 1)))
                for a, c in fixed]
        out += self._power_facts()
        used = self._used()
        arrays = {self.loads[sym] for sym in used if sym in self.loads}
        # an array's extent that no read's index holds is there to prove the array's own
        # element reads: along each of its axes, against the table's axes of the cell's
        # indices those reads' indices hold there (LCS's Y[j - 1]: Y's length against the
        # columns), against every axis where one holds none (a loop's variable)
        cell = [self.index[x] for x in self.ir.index]
        axes: dict[str, set[int]] = {}
        for array, read in self.elements:
            for d, e in enumerate(read.index):
                held = [k for k, x in enumerate(cell) if e is not None and x in e.free_symbols]
                axes.setdefault(f"{array}.shape[{d}]", set()).update(
                    held or range(self.ir.ndim))
        readers = {text.split(".")[0] for text in axes}
        sides: dict[str, list[tuple[str, Any, int]]] = {}  # each array's extents met
        for text, sym, value in self.side_values():
            owner = text.split(".")[0]
            if sym not in used and owner not in arrays and owner not in readers:
                continue
            against = range(self.ir.ndim) if sym in used else \
                sorted(axes.get(text, axes.get(f"{text[4:-1]}.shape[0]", ()))) \
                or range(self.ir.ndim)
            out += [_equal(sym, n[axis], value - self.shape[axis], text, f"{table}.shape[{axis}]")
                    for axis in against if abs(value - self.shape[axis]) <= 2]
            if re.fullmatch(r"\w+\.shape\[\d+\]", text):
                sides.setdefault(owner, []).append((text, sym, value))
        # a square argument (a cost matrix, a table of binomial terms): its sides against
        # each other, where its element reads need them and no table extent links them
        out += [_equal(a, b, va - vb, ta, tb) for met in sides.values()
                for (ta, a, va), (tb, b, vb) in combinations(met, 2) if abs(va - vb) <= 2]
        return out

    def side_values(self) -> list[tuple[str, Any, int]]:
        """Each symbol of a side this instance gives a value (an argument's extent,
        ``len(X)``, a scalar argument), with its source text and that value."""
        out = []
        names = dict(self.params)
        for text, sym in self.opaque.items():  # an element's key is no text
            if sym in self.loads or not isinstance(text, str) \
                    or not re.fullmatch(r"len\(\w+\)|\w+\.shape\[\d+\]|\w+", text):
                continue
            try:
                out.append((text, sym, side_value(text, self.ir.table, names, self.shape)))
            except (KeyError, IndexError, TypeError, ValueError):
                continue
        return out

    def _used(self) -> set[Any]:
        """The symbols the reads' indices and premises hold, and the ``max``/``min``
        symbols' bounds: the only ones a fact can help prove a read with."""
        forms = [e for r in self.reads for e in r.index] + \
            [e for r in self.reads for _, e in r.premises] + [e for _, e in self.bounds]
        return self._held(forms)

    def ceilings(self) -> list[tuple[tuple[tuple[str, Any], ...], Requirement]]:
        """What this instance's data say of an integer array argument whose element a
        read's index or premises hold: every element at most a table extent less 1
        (``max(d) <= M.shape[1] - 1``: a deadline, a stock's next level, as an index or
        a bound of one), for each axis it holds for; and, of an array whose element a shift
        ``a >> c`` by a variable holds in ``c``, every element at most 63 (``max(s) <=
        63``: a shift of int64 by more is undefined, to LLVM); as premises on each of the
        array's elements' symbols, and the requirement that a later instance checks."""
        used = self._used()
        shifting = self._held([c for _, c, _ in self.shifts])
        out = []
        for array in sorted({self.loads[sym] for sym in used if sym in self.loads}):
            data = self.params[array]
            if data.size == 0:
                continue
            top = int(data.max())
            elements = [sym for sym, a in self.loads.items() if a == array]
            out += [(tuple(("ge", self.extent[axis] - 1 - sym) for sym in elements),
                     Requirement(f"max({array})", "<=", f"{self.ir.table}.shape[{axis}] - 1"))
                    for axis, size in enumerate(self.shape) if top <= size - 1]
            if top <= 63 and shifting & set(elements):
                out.append((tuple(("ge", 63 - sym) for sym in elements),
                            Requirement(f"max({array})", "<=", "63")))
        return out

    def indexing(self) -> list[Any]:
        """The symbols of arguments' elements that the reads' indices hold."""
        return sorted({s for s in self._held([e for r in self.reads for e in r.index])
                       if s in self.loads}, key=str)

    def _symbol(self, text: str, integral: bool, array: str | None = None,
                key: Hashable | None = None) -> Any:
        """The symbol standing for what ``key`` names (``text`` itself by default), shown as
        ``text``; ``array``: the argument it is an element of."""
        key = text if key is None else key
        if key not in self.opaque:
            sym = self.sympy.Symbol(f"_o{len(self.opaque)}", integer=integral)
            self.opaque[key] = sym
            self.display[sym] = self.sympy.Symbol(text)
            if integral:
                self.integral.add(sym)
            if array is not None:
                self.loads[sym] = array
        return self.opaque[key]

    def polynomial(self, node: ast.expr, env: dict[str, Any]) -> Any | None:
        """``node`` as a polynomial in the walk's symbols (sums and products of them and of
        integers), or ``None`` when it is not one."""
        sp = self.sympy
        if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
            return sp.Integer(int(node.value))
        if isinstance(node, ast.Name):
            return self._name(node.id, env)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.polynomial(node.operand, env)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = self.polynomial(node.left, env), self.polynomial(node.right, env)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            return self.sympy.expand(a * b)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.Mod,
                                                                ast.FloorDiv)):
            return self._bounded(node, env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.RShift)):
            return self._shifted(node, env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.BitXor)):
            return self._bitwise(node, env)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "len" and len(node.args) == 1:
            of = node.args[0]
            if isinstance(of, ast.Name) and isinstance(self.params.get(of.id), np.ndarray):
                return self.extent_of(of.id, 0)  # one symbol, however the source writes it
            return self._symbol(ast.unparse(node), True)
        if isinstance(node, ast.Call):
            return self._extremum(node, env)
        return None

    def _name(self, name: str, env: dict[str, Any]) -> Any | None:
        if name in env:
            return env[name]
        if name in self.index:
            return self.index[name]
        if name in self.params:
            value = self.params[name]
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                return self._symbol(name, True)
            return None
        value = self.namespace.get(name)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return self.sympy.Integer(int(value))
        return None

    def _subscript(self, node: ast.Subscript, env: dict[str, Any]) -> Any | None:
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == "shape" \
                and isinstance(base.value, ast.Name) and isinstance(node.slice, ast.Constant):
            axis = node.slice.value
            if base.value.id == self.ir.table and isinstance(axis, int) and 0 <= axis < self.ir.ndim:
                return self.extent[axis]
            return self._symbol(ast.unparse(node), True)
        array = self._element_array(node, env)
        if array is not None:
            # one element per index value, not per text: ``w[k]`` before and after
            # ``k += 1`` are two elements; an index the walk cannot follow, a new one
            at = self._element_index(node, env)
            key = (array, at) if all(e is not None for e in at) else (array, len(self.opaque))
            return self._symbol(ast.unparse(node), True, array, key)
        return None

    def _element_array(self, node: ast.Subscript, env: dict[str, Any]) -> str | None:
        """The integer array argument ``node`` reads an element of, or ``None``."""
        base = node.value
        if isinstance(base, ast.Name) and base.id in self.params and base.id not in env:
            data = self.params[base.id]
            if isinstance(data, np.ndarray) and data.dtype.kind in "iub":
                return base.id
        return None

    def _argument(self, node: ast.Subscript, env: dict[str, Any]) -> str | None:
        """The array argument (of any dtype) ``node`` reads an element of, or ``None``."""
        base = node.value
        if isinstance(base, ast.Name) and base.id in self.params and base.id not in env \
                and isinstance(self.params[base.id], np.ndarray):
            return base.id
        return None

    def _element_index(self, node: ast.Subscript, env: dict[str, Any]) -> tuple[Any, ...]:
        """The index of an element read ``node``, a polynomial (or ``None``) per axis."""
        return tuple(self.polynomial(e, env) for e in subscript_elements(node))

    def _element_read(self, node: ast.Subscript, env: dict[str, Any], premises: tuple) -> None:
        """Keep the read ``node`` of an array argument's element with its path's premises
        (:attr:`elements`), and make the array's extents symbols (``w.shape[0]``), which
        :meth:`facts` may tie to the table's: a data requirement on the array holds of
        the elements its reads give only where each read is proven inside the array (a
        read past its end reads what the array does not hold)."""
        array = self._argument(node, env)
        assert array is not None
        index = self._element_index(node, env)
        for k in range(min(len(index), np.ndim(self.params[array]))):
            self.extent_of(array, k)
        self.elements.append((array, PathRead(ast.unparse(node), node.lineno, index, premises)))

    def extent_of(self, array: str, axis: int) -> Any:
        """The symbol of an array argument's extent along ``axis``."""
        return self._symbol(f"{array}.shape[{axis}]", True)

    def conditions(self, node: ast.expr, env: dict[str, Any],
                   holds: bool) -> list[list[tuple[str, Any]]]:
        """``node`` being ``holds``, as alternatives (a disjunction) of conjunctions of
        atoms ``("ge", e)`` (``e >= 0``), ``("ne", e)`` (``e != 0``) and ``("clear", (a,
        c))`` (bit ``c`` of ``a`` is 0, :meth:`_bit_clear`); what is not a comparison of
        polynomials is dropped (``[[]]``: no premise)."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.conditions(node.operand, env, not holds)
        if isinstance(node, ast.BoolOp):
            parts = [self.conditions(v, env, holds) for v in node.values]
            if isinstance(node.op, ast.And) == holds:  # a conjunction
                out: list[list[tuple[str, Any]]] = [[]]
                for alternatives in parts:
                    out = [a + b for a in out for b in alternatives]
                    if len(out) > 16:
                        return [[]]
                return out
            return [a for alternatives in parts for a in alternatives]
        if isinstance(node, ast.Compare):
            out = [[]]
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                atoms = self._compare(left, op, right, env, holds)
                if len(node.ops) > 1 and not holds:
                    return [[]]  # a negated chain is a disjunction of its parts
                out = [a + b for a in out for b in atoms]
                left = right
            return out
        return [[]]

    def _compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr, env: dict[str, Any],
                 holds: bool) -> list[list[tuple[str, Any]]]:
        flips = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt,
                 ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
        kind = type(op) if holds else flips.get(type(op))
        clear = self._bit_clear(left, right, env) if kind is ast.Eq else None
        if clear is not None:
            return [[("clear", clear)]]
        a, b = self.polynomial(left, env), self.polynomial(right, env)
        if a is None or b is None:
            return [[]]
        step = 1 if (a - b).free_symbols <= self.integral else 0  # strict: > on integers
        if kind is ast.Lt:
            return [[("ge", b - a - step)]]
        if kind is ast.LtE:
            return [[("ge", b - a)]]
        if kind is ast.Gt:
            return [[("ge", a - b - step)]]
        if kind is ast.GtE:
            return [[("ge", a - b)]]
        if kind is ast.Eq:
            return [[("ge", a - b), ("ge", b - a)]]
        if kind is ast.NotEq:
            return [[("ne", a - b)]] if step else [[]]
        return [[]]

    def expression(self, node: ast.expr, env: dict[str, Any], premises: tuple) -> None:
        """Collect the reads of ``M`` in ``node`` under ``premises``, with the extra
        premises of conditional expressions and ``and``/``or``."""
        if isinstance(node, ast.IfExp):
            self.expression(node.test, env, premises)
            for holds, branch in ((True, node.body), (False, node.orelse)):
                for alt in self.conditions(node.test, env, holds):
                    self.expression(branch, env, premises + tuple(alt))
            return
        if isinstance(node, ast.BoolOp):
            before: list[list[tuple[str, Any]]] = [[]]
            for value in node.values:
                for alt in before:
                    self.expression(value, env, premises + tuple(alt))
                step = self.conditions(value, env, isinstance(node.op, ast.And))
                before = [a + b for a in before for b in step]
                if len(before) > 16:
                    before = [[]]
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp, ast.NamedExpr)):
            if any(isinstance(n, ast.Name) and n.id == self.ir.table for n in ast.walk(node)):
                raise GiveUp(f"a read of M inside {type(node).__name__} (line {node.lineno})")
            return
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id == self.ir.table:
            elements = subscript_elements(node)
            index = tuple(self.polynomial(e, env) for e in elements)
            if len(index) != self.ir.ndim or any(e is None for e in index):
                if not self.lenient:
                    raise GiveUp(f"the read {ast.unparse(node)} (line {node.lineno}) is not "
                                 "at a polynomial index")
                self.untraced.append((ast.unparse(node), node.lineno))
            else:
                self.reads.append(PathRead(ast.unparse(node), node.lineno, index, premises))
            for e in elements:
                self.expression(e, env, premises)
            return
        if isinstance(node, ast.Subscript) and self._argument(node, env) is not None:
            self._element_read(node, env, premises)
        elif isinstance(node, ast.Subscript) and not _extent(node) and not any(
                isinstance(e, ast.Slice) for e in subscript_elements(node)):
            # an element of a local array or of a view (``A[i][j]``) is read unchecked by
            # compiled code, and the walk follows no array but the arguments
            raise GiveUp(f"the read {ast.unparse(node)} (line {node.lineno}) is of an array "
                         "that is not an argument")
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expression(child, env, premises)

    def block(self, stmts: list[ast.stmt], env: dict[str, Any], premises: tuple) -> None:
        """Walk ``stmts`` on one path, forking at each ``if``."""
        self.paths += 1
        if self.paths > MAX_PATHS:
            raise GiveUp(f"more than {MAX_PATHS} paths through the body")
        for k, s in enumerate(stmts):
            rest = stmts[k + 1:]
            if isinstance(s, ast.Return):
                if s.value is not None:
                    self.expression(s.value, env, premises)
                return
            if isinstance(s, (ast.Raise, ast.Break, ast.Continue)):
                return
            if isinstance(s, ast.If):
                self.expression(s.test, env, premises)
                for holds, branch in ((True, s.body), (False, s.orelse)):
                    for alt in self.conditions(s.test, env, holds):
                        self.block(branch + rest, dict(env), premises + tuple(alt))
                return
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                if s.value is not None:
                    self.expression(s.value, env, premises)
                self._assign(s, env)
            elif isinstance(s, ast.Expr):
                self.expression(s.value, env, premises)
            elif isinstance(s, ast.For):
                self._loop(s, env, premises)
            elif isinstance(s, ast.While):
                self._while(s, env, premises)
            elif not isinstance(s, ast.Pass):
                raise GiveUp(f"a {type(s).__name__} statement (line {s.lineno})")

    def _extremum(self, call: ast.Call, env: dict[str, Any]) -> Any | None:
        """``max(a, b, ...)`` (``min``) of polynomials, with Python's own ``max`` (``min``),
        as a symbol of its own, one per function and arguments' forms, with the facts
        ``x >= a``, ``x >= b``, ... (``<=``) in :attr:`bounds`: its value meets them, so
        what holds for every such symbol holds for it (a relaxation: it is also one of
        them); ``None`` for a call of any other kind.

        Examples
        --------
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i, max(0, j - 2)]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> x = w.polynomial(ast.parse("max(0, j - 2)", mode="eval").body, {})
        >>> w.display[x], w.bounds
        (max(0, j - 2), [('ge', _o0), ('ge', _o0 - j + 2)])
        """
        name = call.func.id if isinstance(call.func, ast.Name) else None
        if name not in ("max", "min") or len(call.args) < 2 or call.keywords \
                or self.namespace.get(name, getattr(builtins, name)) is not getattr(builtins, name):
            return None  # not Python's own max (min) of two values or more
        forms = [self.polynomial(a, env) for a in call.args]
        if any(f is None for f in forms):
            return None
        key = (name, tuple(forms))
        known = key in self.opaque
        x = self._symbol(ast.unparse(call), all(f.is_integer for f in forms), key=key)
        if not known:
            side = 1 if name == "max" else -1
            self.bounds += [("ge", side * (x - f)) for f in forms]
            self.extrema.append((name, tuple(forms), x))
        return x

    def _bounded(self, node: ast.BinOp, env: dict[str, Any]) -> Any | None:
        """``a & b``, ``a % b`` or ``a // b`` of integer polynomials as a symbol of its own
        (one per operator and operands' forms), with what Python's (and numba's) integer
        arithmetic says of it in :attr:`bounds`, whatever ``a`` is:

        - ``0 <= a & b <= b`` where ``b >= 0`` (either side; two's complement);
        - ``0 <= a % b <= b - 1`` where ``b >= 1`` (the sign of the divisor);
        - ``b x <= a <= b x + b - 1`` for ``x = a // b``, ``b`` a positive constant (floor).

        "Where": for every size, ``b`` a constant or a table extent plus a constant (an
        extent is at least 1 wherever there is a cell to read from); ``None`` otherwise,
        or for operands that are not integer polynomials.

        Examples
        --------
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i, (j + 5) % M.shape[1]]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> x = w.polynomial(ast.parse("(j + 5) % M.shape[1]", mode="eval").body, {})
        >>> w.display[x], w.bounds
        (((j + 5) % M.shape[1]), [('ge', _o0), ('ge', _n1 - _o0 - 1)])
        """
        a, b = self.polynomial(node.left, env), self.polynomial(node.right, env)
        if a is None or b is None or not (a.is_integer and b.is_integer):
            return None
        op = type(node.op)
        if op is ast.BitAnd and self._least(b) is None:
            a, b = b, a
        least = self._least(b)
        if least is None or least < (0 if op is ast.BitAnd else 1) \
                or op is ast.FloorDiv and not b.is_Integer:
            return None
        x, known = self.operation(node, _OPERATORS[op], a, b)
        if not known:
            self.bounds += ([("ge", x), ("ge", b - x)] if op is ast.BitAnd else
                            [("ge", x), ("ge", b - 1 - x)] if op is ast.Mod else
                            [("ge", a - b * x), ("ge", b * x + b - 1 - a)])
            if b.is_Integer and op is not ast.FloorDiv:
                self.tops.add(int(b) - (op is ast.Mod))
        return x

    def operation(self, node: ast.BinOp, shown: str, a: Any, b: Any) -> tuple[Any, bool]:
        """The integer symbol of a binary operation ``node`` of operands' forms ``a`` and
        ``b``, shown with the operator ``shown``, one per operator and forms; and whether
        it was made before."""
        key = (type(node.op).__name__, a, b)
        known = key in self.opaque
        left, right = (f"({ast.unparse(side)})" if isinstance(side, ast.BinOp)
                       else ast.unparse(side) for side in (node.left, node.right))
        return self._symbol(f"({left} {shown} {right})", True, key=key), known

    def _shifted(self, node: ast.BinOp, env: dict[str, Any]) -> Any | None:
        """``a << c`` as ``a * 2**c`` and ``a >> c`` as ``a // 2**c`` (the same symbol:
        Python's and numba's shifts of integers are those, negative ``a`` too), for an
        integer polynomial ``a`` and a constant ``0 <= c <= 62``; ``1 << c`` of an
        integer polynomial ``c`` as a symbol of its own, recorded in :attr:`powers`, and
        ``a >> c`` likewise, in :attr:`shifts`; ``None`` otherwise.

        Examples
        --------
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i >> 1, j << 2]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> up = w.polynomial(ast.parse("i >> 1", mode="eval").body, {})
        >>> w.polynomial(ast.parse("j << 2", mode="eval").body, {}), w.display[up]
        (4*j, (i // 2))
        >>> up is w.polynomial(ast.parse("i // 2", mode="eval").body, {})
        True
        """
        a, c = self.polynomial(node.left, env), self.polynomial(node.right, env)
        if a is None or c is None or not a.is_integer or not c.is_integer:
            return None
        if not c.is_Integer and isinstance(node.op, ast.RShift):  # bounded by ``a``
            y, known = self.operation(node, ">>", a, c)
            if not known:
                self.shifts.append((a, c, y))
            return y
        if not c.is_Integer:  # ``1 << c``: a power of two the prover bounds, nothing else
            if a != 1:
                return None
            known = ("<<", c) in self.opaque
            y = self._symbol(f"(1 << {ast.unparse(node.right)})", True, key=("<<", c))
            if not known:
                self.powers.append((c, y))
            return y
        if not 0 <= int(c) <= 62:
            return None
        if isinstance(node.op, ast.LShift):
            return self.sympy.expand(a * (2 ** int(c)))
        power = ast.Constant(2 ** int(c))
        return self._bounded(ast.BinOp(left=node.left, op=ast.FloorDiv(), right=power), env)

    def _least(self, e: Any) -> int | None:
        """The least value of ``e`` over every size, where ``e`` is an integer constant or
        a sum of table extents (each at least 1) with non-negative coefficients and a
        constant; ``None`` for any other form."""
        if e.is_Integer:
            return int(e)
        if not e.free_symbols <= set(self.extent):
            return None
        poly = self.sympy.Poly(e, *self.extent)
        if poly.total_degree() > 1 or any(poly.coeff_monomial(n) < 0 for n in self.extent):
            return None
        return int(e.subs({n: 1 for n in self.extent}))

    def _assign(self, s: ast.stmt, env: dict[str, Any]) -> None:
        if isinstance(s, ast.AugAssign):
            target = s.target
            value = ast.BinOp(left=ast.Name(id=target.id, ctx=ast.Load()), op=s.op,
                              right=s.value) if isinstance(target, ast.Name) else None
            targets = [target]
        else:
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            value = s.value
        for t in targets:
            if isinstance(t, ast.Name) and len(targets) == 1:
                env[t.id] = self.polynomial(value, env) if value is not None else None
            elif isinstance(t, ast.Name):
                env[t.id] = None
            elif isinstance(t, (ast.Tuple, ast.List)):
                for e in t.elts:
                    if not isinstance(e, ast.Name):
                        raise GiveUp(f"an assignment to {ast.unparse(e)} (line {s.lineno})")
                    env[e.id] = None
            else:
                raise GiveUp(f"an assignment to {ast.unparse(t)} (line {s.lineno})")

    def _loop(self, s: ast.For, env: dict[str, Any], premises: tuple) -> None:
        parts = range_parts(s.iter)
        if parts is None or not isinstance(s.target, ast.Name) or s.orelse:
            raise GiveUp(f"a loop other than over range() (line {s.lineno})")
        for a in parts:
            self.expression(a, env, premises)
        lo, hi, step = (self.polynomial(a, env) for a in parts)
        if step is None or not step.is_number or step == 0:
            raise GiveUp(f"a range() without a constant step (line {s.lineno})")
        inner = dict(env)
        for n in ast.walk(s):  # names the body assigns change from one iteration to the next
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                inner[n.id] = None
        self.loops += 1
        k = self.sympy.Symbol(f"_k{self.loops}", integer=True)
        self.integral.add(k)
        self.display[k] = self.sympy.Symbol(s.target.id)
        inner[s.target.id] = k
        within: tuple = ()  # each end bounds k on its own: range(1, min(a, b) + 1) does
        if lo is not None:
            within += (("ge", k - lo if step > 0 else lo - k),)
        if hi is not None:
            within += (("ge", hi - 1 - k if step > 0 else k - hi - 1),)
        self.block(list(s.body), inner, premises + within)
        for name in inner:
            if name not in env or inner[name] is not env.get(name):
                env[name] = None

    def _while(self, s: ast.While, env: dict[str, Any], premises: tuple) -> None:
        """Walk a ``while`` loop's body once for all its iterations: each induction variable
        (:meth:`_inductions`) a new symbol on its side of its value before the loop, every
        other name the loop assigns unknown, and the test holding.  After the loop every
        name it assigns is unknown: it may run any number of times, or end at a
        ``break``, so neither the test's failing nor a count of iterations is known."""
        if s.orelse:
            raise GiveUp(f"a while loop with an else (line {s.lineno})")
        assigned = {n.id for n in ast.walk(s)
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        inner = dict(env) | dict.fromkeys(assigned)
        within: tuple = ()
        for name, direction in self._inductions(s, env).items():
            self.loops += 1
            x = self.sympy.Symbol(f"_k{self.loops}", integer=True)
            self.integral.add(x)
            self.display[x] = self.sympy.Symbol(name)
            inner[name] = x
            within += (("ge", direction * (x - env[name])),)
        self.expression(s.test, inner, premises + within)
        for alt in self.conditions(s.test, inner, True):
            self.block(list(s.body), dict(inner), premises + within + tuple(alt))
        env.update(dict.fromkeys(assigned))

    @staticmethod
    def _inductions(s: ast.While, env: dict[str, Any]) -> dict[str, int]:
        """The loop's induction variables, each with its direction (``1`` up, ``-1``
        down): a name known before the loop (a polynomial in ``env``) whose every
        assignment in the loop, test included, is ``x += c`` (or every one ``x -= c``),
        ``c`` a positive integer literal; so in the loop it is never below (above) its
        value before it.

        Examples
        --------
        >>> source = "while k < n:\\n k += 1\\n j -= 2\\n if j < 0:\\n  k = 0"
        >>> Walk._inductions(ast.parse(source).body[0], {"k": 0, "j": 5})
        {'j': -1}
        """
        directions: dict[str, set[int]] = {}
        steps = set()  # the targets of those assignments
        for n in ast.walk(s):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) \
                    and isinstance(n.op, (ast.Add, ast.Sub)) \
                    and isinstance(n.value, ast.Constant) \
                    and type(n.value.value) is int and n.value.value > 0:
                directions.setdefault(n.target.id, set()).add(
                    1 if isinstance(n.op, ast.Add) else -1)
                steps.add(id(n.target))
        others = {n.id for n in ast.walk(s) if isinstance(n, ast.Name)
                  and not isinstance(n.ctx, ast.Load) and id(n) not in steps}
        return {name: next(iter(ways)) for name, ways in directions.items()
                if len(ways) == 1 and name not in others and env.get(name) is not None}

