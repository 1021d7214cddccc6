"""Prove from the cell function's source what holds at every size: a :class:`Certificate`.

A 2-D cell function's reads of ``M`` are proven in bounds, and their regions found, for
every shape ``n x m`` at once, so a fill need not check them cell by cell at the size it
runs.  :func:`certify` walks every path through the function's body, symbolically:

- an index expression is a linear form (a sympy expression) in the cell's indices ``i, j``,
  the table's extents ``n, m`` (``M.shape[k]``), loop variables, integer constants, and
  opaque symbols for what the source does not fix (an argument's element ``w[i - 1]``, a
  scalar argument, ``len(X)``);
- a path's premises are the branch tests that lead to the read (an ``if`` that returned
  before it, negated; ``a if t else b``; ``x and y``; a ``for k in range(lo, hi)`` gives
  ``lo <= k <= hi - 1``), as linear inequalities; a test that is not linear is dropped
  (a weaker premise, so still sound);
- sympy's exact simplex (:func:`sympy.solvers.simplex.linprog`) then gives, under the
  premises and ``0 <= i < n``, ``0 <= j < m``, each index's least and greatest value
  (in bounds: ``0 <= index <= extent - 1``) and each offset's (its sign, so the region).

Where an index holds an argument's element (knapsack's ``M[i - 1, j - w[i - 1]]``), the
proof may need a bound on that argument's data: ``min(w) >= 0``, then ``min(w) >= 1``
are tried, and the one needed is a :class:`Requirement` checked against the data in time
proportional to the argument (:meth:`Certificate.violated`).

The certificate is a fact of the source, the argument kinds and the module constants the
cell reads, not of the size: cached on disk by their digest (sympy: for a new cell only).

Assumptions: 2-D tables; the cell function's ``M``, indices and arguments are not
reassigned, and its reads are seen in its source (:attr:`CellIR.hidden` is ``None``);
integer index arithmetic (a float index is refused elsewhere).  Anything the walk does
not model (a ``while`` loop, a comprehension, a nested function, a read inside an index,
too many paths) and there is no certificate: the fill checks the reads itself.
"""

from __future__ import annotations

import ast
import builtins
import re
import dataclasses
import functools
import hashlib
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.source import function_namespace
from depgraph.usercache import folder, read_json, write_json
from patterns import matching, region_of

__all__ = ["Requirement", "ProvenRead", "Certificate", "certify", "certificate", "may_raise"]

#: Paths through the body beyond which the walk gives up (the branches multiply).
MAX_PATHS = 256
#: The data bounds tried, in order, for the arguments whose elements index ``M``.
LADDER = (None, 0, 1)


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
        a = _side(self.subject, table, names, shape)
        b = _side(self.bound, table, names, shape)
        return a >= b if self.relation == ">=" else a == b


def _side(text: str, table: str, names: dict[str, Any], shape: tuple[int, ...]) -> int:
    """The value of one side of a :class:`Requirement`: an integer, ``min(a)``,
    ``len(a)``, ``a.shape[k]`` (``table.shape[k]`` the table's), a scalar argument, each
    plus an integer; ``names`` the arguments by name.

    Examples
    --------
    >>> _side("len(P) - 1", "M", {"P": [3, 4, 5]}, (2, 2))
    2
    >>> _side("M.shape[1] + 2", "M", {}, (4, 6))
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
                got = _side(req.subject, table, names, rec.shape)
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


class _GiveUp(Exception):
    """The walk met something it does not model: no certificate."""


@dataclass(frozen=True)
class _Read:
    text: str
    line: int
    index: tuple[Any, ...]
    premises: tuple[tuple[str, Any], ...]


class _Walk:
    """Every path through a cell function's body, collecting each read of ``M`` with the
    premises of its path (module docstring)."""

    def __init__(self, ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...]) -> None:
        import sympy  # the prover's own dependency: only for a cell not proven before

        self.sympy = sympy
        self.ir, self.shape = ir, shape
        self.index = {x: sympy.Symbol(x, integer=True) for x in ir.index}
        self.extent = [sympy.Symbol(f"_n{k}", integer=True) for k in range(ir.ndim)]
        self.params = dict(zip(ir.params, args))
        self.namespace = function_namespace(ir.func)
        self.opaque: dict[str, Any] = {}  # source text -> its symbol
        self.loads: dict[Any, str] = {}  # an element's symbol -> its array
        self.integral: set[Any] = set(self.index.values()) | set(self.extent)
        self.display: dict[Any, Any] = {n: sympy.Symbol(f"{ir.table}.shape[{k}]")
                                         for k, n in enumerate(self.extent)}
        self.reads: list[_Read] = []
        self.paths = 0
        self.loops = 0

    def facts(self) -> list[tuple[tuple[tuple[str, Any], ...], Requirement]]:
        """What this instance's sizes say that the source does not: a square table, an
        argument's extent or a scalar argument equal to a table extent plus up to 2; each
        as premises and the requirement that a later instance checks."""
        n, table = self.extent, self.ir.table
        out = []
        if self.shape[0] == self.shape[1]:
            out.append(((("ge", n[0] - n[1]), ("ge", n[1] - n[0])),
                        Requirement(f"{table}.shape[0]", "==", f"{table}.shape[1]")))
        names = dict(self.params)
        for text, sym in self.opaque.items():
            if sym in self.loads or not re.fullmatch(r"len\(\w+\)|\w+\.shape\[\d+\]|\w+", text):
                continue
            try:
                value = _side(text, table, names, self.shape)
            except (KeyError, IndexError, TypeError, ValueError):
                continue
            for axis, size in enumerate(self.shape):
                shift = value - size
                if abs(shift) <= 2:
                    bound = f"{table}.shape[{axis}]" + (
                        f" {'+' if shift > 0 else '-'} {abs(shift)}" if shift else "")
                    out.append(((("ge", sym - n[axis] - shift), ("ge", n[axis] + shift - sym)),
                                Requirement(text, "==", bound)))
                    break
        return out

    def indexing(self) -> list[Any]:
        """The symbols of arguments' elements that the reads' indices hold."""
        return sorted({s for r in self.reads for e in r.index for s in e.free_symbols
                       if s in self.loads}, key=str)

    def _symbol(self, text: str, integral: bool, array: str | None = None) -> Any:
        if text not in self.opaque:
            sym = self.sympy.Symbol(f"_o{len(self.opaque)}", integer=integral)
            self.opaque[text] = sym
            self.display[sym] = self.sympy.Symbol(text)
            if integral:
                self.integral.add(sym)
            if array is not None:
                self.loads[sym] = array
        return self.opaque[text]

    def linear(self, node: ast.expr, env: dict[str, Any]) -> Any | None:
        """``node`` as a linear form, or ``None`` when it is not one."""
        sp = self.sympy
        if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
            return sp.Integer(int(node.value))
        if isinstance(node, ast.Name):
            return self._name(node.id, env)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.linear(node.operand, env)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = self.linear(node.left, env), self.linear(node.right, env)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            return a * b if a.is_number or b.is_number else None
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "len" and len(node.args) == 1:
            return self._symbol(ast.unparse(node), True)
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
        if isinstance(base, ast.Name) and base.id in self.params and base.id not in env:
            data = self.params[base.id]
            if isinstance(data, np.ndarray) and data.dtype.kind in "iub":
                return self._symbol(ast.unparse(node), True, base.id)
        return None

    def conditions(self, node: ast.expr, env: dict[str, Any],
                   holds: bool) -> list[list[tuple[str, Any]]]:
        """``node`` being ``holds``, as alternatives (a disjunction) of conjunctions of
        atoms ``("ge", e)`` (``e >= 0``) and ``("ne", e)`` (``e != 0``); what is not
        linear is dropped (``[[]]``: no premise)."""
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
        a, b = self.linear(left, env), self.linear(right, env)
        if a is None or b is None:
            return [[]]
        step = 1 if (a - b).free_symbols <= self.integral else 0  # strict: > on integers
        flips = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt,
                 ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
        kind = type(op) if holds else flips.get(type(op))
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
                raise _GiveUp(f"a read of M inside {type(node).__name__} (line {node.lineno})")
            return
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id == self.ir.table:
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            index = tuple(self.linear(e, env) for e in elements)
            if len(index) != self.ir.ndim or any(e is None for e in index):
                raise _GiveUp(f"the read {ast.unparse(node)} (line {node.lineno}) is not at "
                              "a linear index")
            self.reads.append(_Read(ast.unparse(node), node.lineno, index, premises))
            for e in elements:
                self.expression(e, env, premises)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expression(child, env, premises)

    def block(self, stmts: list[ast.stmt], env: dict[str, Any], premises: tuple) -> None:
        """Walk ``stmts`` on one path, forking at each ``if``."""
        self.paths += 1
        if self.paths > MAX_PATHS:
            raise _GiveUp(f"more than {MAX_PATHS} paths through the body")
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
            elif not isinstance(s, ast.Pass):
                raise _GiveUp(f"a {type(s).__name__} statement (line {s.lineno})")

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
                env[t.id] = self.linear(value, env) if value is not None else None
            elif isinstance(t, ast.Name):
                env[t.id] = None
            elif isinstance(t, (ast.Tuple, ast.List)):
                for e in t.elts:
                    if not isinstance(e, ast.Name):
                        raise _GiveUp(f"an assignment to {ast.unparse(e)} (line {s.lineno})")
                    env[e.id] = None
            else:
                raise _GiveUp(f"an assignment to {ast.unparse(t)} (line {s.lineno})")

    def _loop(self, s: ast.For, env: dict[str, Any], premises: tuple) -> None:
        call = s.iter
        if not (isinstance(s.target, ast.Name) and isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name) and call.func.id == "range"
                and 1 <= len(call.args) <= 3 and not s.orelse):
            raise _GiveUp(f"a loop other than over range() (line {s.lineno})")
        for a in call.args:
            self.expression(a, env, premises)
        bounds = [self.linear(a, env) for a in call.args]
        lo, hi = (self.sympy.Integer(0), bounds[0]) if len(bounds) == 1 else bounds[:2]
        step = bounds[2] if len(bounds) == 3 else self.sympy.Integer(1)
        if step is None or not step.is_number or step == 0:
            raise _GiveUp(f"a range() without a constant step (line {s.lineno})")
        inner = dict(env)
        for n in ast.walk(s):  # names the body assigns change from one iteration to the next
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                inner[n.id] = None
        self.loops += 1
        k = self.sympy.Symbol(f"_k{self.loops}", integer=True)
        self.integral.add(k)
        self.display[k] = self.sympy.Symbol(s.target.id)
        inner[s.target.id] = k
        within: tuple = ()
        if lo is not None and hi is not None:
            within = (("ge", k - lo), ("ge", hi - 1 - k)) if step > 0 else \
                (("ge", lo - k), ("ge", k - hi - 1))
        self.block(list(s.body), inner, premises + within)
        for name in inner:
            if name not in env or inner[name] is not env.get(name):
                env[name] = None


class _Prover:
    """Least values of linear forms under premises, by sympy's exact simplex."""

    def __init__(self, walk: _Walk, floor: int | None, facts: tuple = ()) -> None:
        sp = walk.sympy
        self.sp, self.walk = sp, walk
        i = [walk.index[x] for x in walk.ir.index]
        self.domain = [("ge", x) for x in i] + [("ge", n - 1 - x) for x, n in zip(i, walk.extent)] \
            + [("ge", n - 1) for n in walk.extent] \
            + ([("ge", sym - floor) for sym in walk.indexing()] if floor is not None else []) \
            + [atom for atoms, _ in facts for atom in atoms]
        self.domain_forms = {e for _, e in self.domain}
        self.nonneg = set(i) | set(walk.extent)
        self.coefficients: dict[Any, dict[Any, Any]] = {}
        self.memo: dict[Any, Any] = {}
        self.known: dict[tuple, list[Any]] = {}

    def least(self, form: Any, premises: tuple) -> Any:
        """The least value of ``form``; ``None`` when unbounded, ``"never"`` when the
        premises cannot hold together (the path is never taken)."""
        from sympy.solvers.simplex import InfeasibleLPError, UnboundedLPError, linprog

        key = (form, premises)
        if key in self.memo:
            return self.memo[key]
        ge = self._inequalities(premises)
        symbols = sorted(set().union(form.free_symbols, *(e.free_symbols for e in ge)), key=str)
        # linprog's variables are >= 0: the indices and extents are; any other is x+ - x-
        columns = [(s, 1) for s in symbols] + [(s, -1) for s in symbols if s not in self.nonneg]
        rows = [self._coefficients(e) for e in ge]
        A = self.sp.Matrix([[-row.get(s, 0) * sign for s, sign in columns] for row in rows]) \
            if ge else self.sp.zeros(0, len(columns))
        b = self.sp.Matrix([row.get(1, 0) for row in rows]) if ge else self.sp.zeros(0, 1)
        objective = self._coefficients(form)
        c = self.sp.Matrix([[objective.get(s, 0) * sign for s, sign in columns]])
        try:
            value, _ = linprog(c, A, b) if columns else (self.sp.Integer(0), None)
            result = value + objective.get(1, 0)
        except UnboundedLPError:
            result = None
        except InfeasibleLPError:
            result = "never"
        self.memo[key] = result
        return result

    def _coefficients(self, form: Any) -> dict[Any, Any]:
        """``form``'s coefficient of each symbol, and its constant under ``1``."""
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
        return ge

    def interval(self, form: Any, premises: tuple) -> tuple[Any, Any] | None:
        """``(least, greatest)`` of ``form`` (either ``None`` when unbounded), or ``None``
        when the premises never hold."""
        lo, neg = self.least(form, premises), self.least(-form, premises)
        if lo == "never" or neg == "never":
            return None
        return lo, None if neg is None else -neg


def _at_least(value: Any, bound: int) -> bool:
    """Whether a least value (``None`` unbounded, ``"never"`` infeasible) is ``>= bound``."""
    return value is not None and value != "never" and value >= bound


def _signs(lo: Any, hi: Any) -> list[int]:
    """The signs an integer in ``[lo, hi]`` may have (``None``: unbounded)."""
    return [s for s in (-1, 0, 1)
            if (s == -1 and (lo is None or lo < 0)) or (s == 1 and (hi is None or hi > 0))
            or (s == 0 and (lo is None or lo <= 0) and (hi is None or hi >= 0))]


def _prove(walk: _Walk, floor: int | None, facts: tuple = ()) -> Certificate | str:
    prover = _Prover(walk, floor, facts)
    proven: dict[tuple[str, int], tuple[tuple[str, ...], set[str]]] = {}
    for read in walk.reads:
        signs = []
        for axis, e in enumerate(read.index):
            own = walk.index[walk.ir.index[axis]]
            span = prover.interval(e, read.premises)
            top = "never" if span is None else prover.least(walk.extent[axis] - 1 - e,
                                                            read.premises)
            if span is None or top == "never":
                break  # a path never taken (with the extents' facts, say)
            lo, hi = span
            if lo is None or lo < 0 or top is None or top < 0:
                return f"the read {read.text} (line {read.line}) may leave the table"
            offset = prover.interval(e - own, read.premises)
            assert offset is not None
            signs.append(_signs(*offset))
        else:
            regions = {region_of(a, b) for a, b in product(*signs)}
            if "Self" in regions:
                return f"the read {read.text} (line {read.line}) may be of the cell itself"
            offsets = tuple(str((e - walk.index[x]).subs(walk.display))
                            for e, x in zip(read.index, walk.ir.index))
            key = (read.text, read.line)
            old = proven.get(key, (offsets, set()))
            proven[key] = (offsets if old[0] == offsets else ("?",) * len(offsets),
                           old[1] | regions)
    regions = tuple(sorted(set().union(*(r for _, r in proven.values())))) if proven else ()
    arrays = sorted({walk.loads[sym] for sym in walk.indexing()}) if floor is not None else []
    reads = tuple(ProvenRead(text, line, offs, tuple(sorted(regs)))
                  for (text, line), (offs, regs) in sorted(proven.items(), key=lambda kv: kv[0][1]))
    return Certificate(reads, regions, matching(regions),
                       tuple(Requirement(f"min({a})", ">=", str(floor)) for a in arrays)
                       + tuple(req for _, req in facts))


#: Functions a cell may call and still be certain not to raise.
_SAFE_CALLS = frozenset({"min", "max", "abs", "int", "float", "bool", "range", "len"})


def may_raise(ir: CellIR) -> str | None:
    """Why the cell function read as ``ir`` might raise (a ``raise`` or ``assert``, a
    division by what may be zero, a call of a function but ``min``, ``max``, ``abs``,
    ...), or ``None``: a fill that skips the checked sweep must not meet an exception it
    would have named, since a GPU kernel or a parallel region raises none.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def f(M, i, j):
    ...     return M[i - 1, j] // (j - 3)
    >>> may_raise(read_cell(f, 2))
    'it may divide by zero (line 2)'
    """
    fn = ir.definition()
    slices = {id(n.slice) for stmt in fn.body for n in ast.walk(stmt)
              if isinstance(n, ast.Subscript)}
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
        if isinstance(node, (ast.List, ast.Dict, ast.Set)) or \
                isinstance(node, ast.Tuple) and id(node) not in slices:
            return f"it builds {ast.unparse(node)}, not a number (line {node.lineno})"
        if isinstance(node, (ast.Raise, ast.Assert)):
            return f"it may raise (line {node.lineno})"
        if isinstance(node, ast.Constant) and node.value is None or \
                isinstance(node, ast.Return) and node.value is None:
            return f"it may return None (line {node.lineno})"
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, complex)):
            return f"it uses {node.value!r}, not a number (line {node.lineno})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) \
                and not (isinstance(node.right, ast.Constant) and node.right.value):
            return f"it may divide by zero (line {node.lineno})"
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                               and node.func.id in _SAFE_CALLS):
            return f"it calls {ast.unparse(node.func)}, which may raise (line {node.lineno})"
    return None


def _floats(fn: ast.FunctionDef, params: dict[str, Any], namespace: dict[str, Any]) -> str | None:
    """Where the cell may compute a float (a float literal, ``/``, ``**``, ``float()``, an
    attribute such as ``np.inf``, a float argument or module constant), or ``None``."""
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, (float, complex)):
            return f"the float {node.value!r} (line {line})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Pow)):
            return f"{ast.unparse(node)} (line {line})"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "float":
            return f"{ast.unparse(node)} (line {line})"
        if isinstance(node, ast.Attribute) and node.attr != "shape":
            return f"{ast.unparse(node)} (line {line})"
        if isinstance(node, ast.Name):
            value = params.get(node.id, namespace.get(node.id))
            kind = value.dtype.kind if isinstance(value, (np.ndarray, np.generic)) else \
                "f" if isinstance(value, (float, complex)) else "i"
            if kind in "fc":
                return f"{node.id}, a float (line {line})"
    return None


def certify(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...]) -> Certificate | str:
    """The certificate of the 2-D cell function read as ``ir`` with arguments like
    ``args`` for a table like ``shape`` (their kinds matter, and the size facts the proof
    needs become requirements), or why there is none (module docstring)."""
    if ir.ndim != 2:
        return "certificates are for 2-D tables"
    if ir.hidden:
        return ir.hidden
    if ir.reassigned:
        name, line, _ = ir.reassigned[0]
        return f"index {name!r} is reassigned (line {line})"
    fn = ir.definition()
    raises = may_raise(ir)
    if raises:
        return raises
    known = {ir.table, *ir.index, *ir.params, *ir.assigned, *function_namespace(ir.func),
             *dir(builtins)}
    unknown = next((n for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Load) and n.id not in known), None)
    if unknown is not None:
        return f"it uses {unknown.id!r}, which is not defined (line {unknown.lineno})"
    walk = _Walk(ir, args, shape)
    try:
        walk.block(list(fn.body), {}, ())
    except (_GiveUp, RecursionError) as exc:
        return str(exc)
    why = ""
    sizes = tuple(walk.facts())
    floors = LADDER if walk.indexing() else (None,)
    for facts in ((), sizes) if sizes else ((),):  # the size facts only where needed
        for floor in floors:
            found = _prove(walk, floor, facts)
            if isinstance(found, Certificate):
                return dataclasses.replace(found, floats=_floats(fn, walk.params, walk.namespace))
            why = why or found
    return why


@functools.cache
def _prover_digest() -> str:
    """A digest of this module's source: a change to the prover is a new certificate."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def _size_facts(args: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The size facts :meth:`_Walk.facts` may use, coarsely: whether the table is square,
    and how each argument's extents (a scalar's value) sit against the table's."""
    def near(v: int) -> tuple[int | None, ...]:
        return tuple(v - n if abs(v - n) <= 2 else None for n in shape)

    sizes = [near(int(a)) if isinstance(a, (int, np.integer)) else
             tuple(near(d) for d in np.shape(a)) for a in args]
    return (shape[0] == shape[-1], tuple(sizes))


def _key(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...]) -> str:
    """What a certificate depends on: the source, the module constants it names, the
    arguments' kinds, and the prover itself."""
    ns = function_namespace(ir.func)
    names = sorted({n.id for n in ast.walk(ir.definition()) if isinstance(n, ast.Name)})
    constants = [(n, repr(ns[n])) for n in names if isinstance(ns.get(n), (int, np.integer))]
    kinds = [a.dtype.str if isinstance(a, np.ndarray) else type(a).__name__ for a in args]
    text = repr((ir.source, ir.ndim, constants, kinds, _size_facts(args, shape),
                 _prover_digest()))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def certificate(rec: Any, ir: CellIR | None = None) -> Certificate | str:
    """:func:`certify` of a recurrence, kept on disk per digest of what it depends on.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> w = np.array([2, 3, 1]); p = np.array([4, 5, 3])
    >>> @recurrence(shape=(4, 6), dtype=np.int64, args=(w, p))
    ... def knapsack(M, i, j, w, p):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     wi = w[i - 1]
    ...     if wi > j:
    ...         return M[i - 1, j]
    ...     return max(M[i - 1, j], p[i - 1] + M[i - 1, j - wi])
    >>> cert = certificate(knapsack)
    >>> [str(r) for r in cert.requires], cert.regions
    (['min(w) >= 0'], ('Up', 'UpLeft'))
    >>> from dataclasses import replace
    >>> cert.violated(replace(knapsack, args=(np.array([2, -1, 1]), p)), ("w", "p"))
    'min(w) >= 0 does not hold (min(w) is -1)'
    """
    ir = ir or cell_ir(rec)
    if ir.source is None:
        return ir.unavailable or "no source"
    key = _key(ir, rec.args, rec.shape)
    try:
        path = folder("certificates") / f"{key}.json"
    except OSError:
        path = None
    stored = read_json(path) if path is not None else None
    if isinstance(stored, dict) and "why" in stored:
        return str(stored["why"])
    if isinstance(stored, dict):
        try:
            return Certificate.from_json(stored)
        except (KeyError, TypeError, ValueError, IndexError):
            pass  # damaged: proven again
    found = certify(ir, rec.args, rec.shape)
    if path is not None:
        write_json(path, found.to_json() if isinstance(found, Certificate) else {"why": found})
    return found
