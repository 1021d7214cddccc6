"""Prove that an integer cell function's arithmetic fits in 32 bits, so kernels may run it there.

numba types integer arithmetic in 64 bits (``int32 + int32`` is ``int64``), so a cell
such as Smith-Waterman's ``max(0, M[i-1, j-1] + s, M[i-1, j] - 1, M[i, j-1] - 1)``
compares in 64 bits even on an int32 table; on a GPU that costs twice the instructions
and registers.  Wrapping every integer value of the cell in ``int32(...)``
(:func:`runtime.backends.rewrite.rewrite_reads` with ``narrow``) keeps it in 32 bits, and gives
the same table exactly when no value the cell computes leaves the int32 range.  This
module proves that before any cell runs, by interval arithmetic over the cell's source:

1. Every value is bounded in terms of the least and greatest value ``L`` and ``H`` the
   cell's reads of ``M`` may return: below by ``min(L + p, c)`` and above by
   ``max(H + q, d)`` (a missing term dropped), for numbers ``p, q, c, d``
   (:class:`Side`).  Constants, the cell's indices (``0 ... n - 1``) and its array
   arguments (their least and greatest element) have plain bounds; ``+`` and ``-`` add a
   plain bound to a read's; ``max``, ``min`` and a choice between branches combine them.
2. A cell whose reads are all at most ``k`` steps from a cell that reads nothing (its
   depth) then lies in ``[c + k min(p, 0), d + k max(q, 0)]``, by induction on ``k``; a
   fill of ``steps`` steps has depth below ``steps``.
3. With the reads in that range, every integer value the cell computes is bounded
   plainly; all must lie in int32.

Assumptions: the cell is straight-line Python (assignments, ``if``, ``return``) over its
indices, its table reads, integer or boolean array or scalar arguments, integer
constants and module-level integer constants, with ``+``, ``-``, ``*``, ``%`` by a
positive number, unary ``-``, comparisons, ``and``/``or``/``not`` of booleans,
conditional expressions and the builtins ``max``, ``min`` and ``abs``.  Anything else
(a loop, a float, a sum of two reads, a product of a read, any other call) and the
proof is not attempted: the cell keeps numba's 64-bit arithmetic.
"""

from __future__ import annotations

import ast
import builtins
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR, range_parts
from depgraph.frontend.source import (
    Position,
    SourceUnavailable,
    function_namespace,
    position,
)

__all__ = ["Side", "Narrowing", "narrowing"]

INT32 = (-(2 ** 31), 2 ** 31 - 1)


@dataclass(frozen=True)
class Side:
    """One side of a value's bound: ``min(R + rel, abs)`` for a lower bound, ``max(R +
    rel, abs)`` for an upper one, ``R`` being the least (greatest) value a read of ``M``
    returns; a ``None`` term is left out (never both)."""

    rel: float | None
    abs: float | None


@dataclass(frozen=True)
class _Value:
    kind: str  # "int" or "bool"
    lo: Side
    hi: Side

    @property
    def plain(self) -> bool:
        return self.lo.rel is None and self.hi.rel is None


@dataclass(frozen=True)
class Narrowing:
    """A proof that a cell's arithmetic fits in int32: ``values``, the least and
    greatest value a cell of the table may take; ``extremes``, the least and greatest
    integer any cell computes on the way; ``positions``, where the cell's integer values
    sit in its source (:func:`depgraph.frontend.source.position`), for the rewrite."""

    values: tuple[int, int]
    extremes: tuple[int, int]
    positions: frozenset[Position]


class _Unsupported(Exception):
    pass


def _plain(kind: str, lo: float, hi: float) -> _Value:
    return _Value(kind, Side(None, lo), Side(None, hi))


def _terms(sides: Sequence[Side], pick: Any) -> Side:
    rels = [s.rel for s in sides if s.rel is not None]
    abss = [s.abs for s in sides if s.abs is not None]
    return Side(pick(rels) if rels else None, pick(abss) if abss else None)


def _either(sides: Sequence[Side], better: Any) -> Side:
    """A side that bounds the max (min) of values from one of theirs: a plain one when
    there is one (the best), else the one with the best relative term."""
    plain = [s.abs for s in sides if s.rel is None]
    if plain:
        return Side(None, better(plain))
    return better(sides, key=lambda s: s.rel)


def _union(values: Sequence[_Value]) -> _Value:
    kind = "int" if any(v.kind == "int" for v in values) else "bool"
    return _Value(kind, _terms([v.lo for v in values], min), _terms([v.hi for v in values], max))


def _maximum(values: Sequence[_Value]) -> _Value:
    return _Value("int", _either([v.lo for v in values], max), _terms([v.hi for v in values], max))


def _minimum(values: Sequence[_Value]) -> _Value:
    return _Value("int", _terms([v.lo for v in values], min), _either([v.hi for v in values], min))


def _shift(side: Side, by: float) -> Side:
    return Side(None if side.rel is None else side.rel + by,
                None if side.abs is None else side.abs + by)


def _add(a: _Value, b: _Value) -> _Value:
    if not b.plain:
        a, b = b, a
    if not b.plain:
        raise _Unsupported("a sum of two reads")
    assert b.lo.abs is not None and b.hi.abs is not None
    return _Value("int", _shift(a.lo, b.lo.abs), _shift(a.hi, b.hi.abs))


def _negate(a: _Value) -> _Value:
    if not a.plain:
        raise _Unsupported("a negated read")
    assert a.lo.abs is not None and a.hi.abs is not None
    return _plain("int", -a.hi.abs, -a.lo.abs)


def _bounds(a: _Value) -> tuple[float, float]:
    if not a.plain:
        raise _Unsupported("a product or remainder of a read")
    assert a.lo.abs is not None and a.hi.abs is not None
    return a.lo.abs, a.hi.abs


def _multiply(a: _Value, b: _Value) -> _Value:
    for one, other in ((a, b), (b, a)):
        if one.plain and one.lo.abs == one.hi.abs == 1:
            return _Value("int", other.lo, other.hi)
    (al, ah), (bl, bh) = _bounds(a), _bounds(b)
    corners = [x * y if x and y else 0 for x in (al, ah) for y in (bl, bh)]  # 0 * inf is 0
    return _plain("int", min(corners), max(corners))


def _modulo(a: _Value, b: _Value) -> _Value:
    _bounds(a)
    bl, bh = _bounds(b)
    if bl <= 0:
        raise _Unsupported("a remainder by a number that may not be positive")
    return _plain("int", 0, bh - 1)


def _absolute(a: _Value) -> _Value:
    lo, hi = _bounds(a)
    return _plain("int", 0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))


_BINARY = {ast.Add: _add, ast.Sub: lambda a, b: _add(a, _negate(b)), ast.Mult: _multiply,
           ast.Mod: _modulo}
_BUILTINS = {"max": _maximum, "min": _minimum}
_BOOL = _plain("bool", 0, 1)


def _kind(dtype: np.dtype) -> str:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "bool"
    if dt.kind == "i" or (dt.kind == "u" and dt.itemsize <= 4):
        return "int"  # not uint64: numba takes uint64 with int64 to float64
    raise _Unsupported(f"values of type {dt}")


class _Cell:
    """The abstract interpreter: the cell's values for reads bounded by ``read``;
    ``loads`` holds the bounds of each array's elements once found (its least and
    greatest), shared by the interpreters of one proof."""

    def __init__(self, fn: ast.FunctionDef, names: dict[str, Any], index: dict[str, _Value],
                 read: _Value, loads: dict[str, _Value], shape: Sequence[int] = (),
                 loops: bool = False) -> None:
        self.fn, self.names, self.index, self.read, self.loads = fn, names, index, read, loads
        self.shape, self.loops = tuple(shape), loops
        self.table = fn.args.args[0].arg
        self.seen: dict[Position, _Value] = {}
        self.returns: list[_Value] = []

    def run(self) -> _Value:
        if self.block(self.fn.body, dict(self.index)) is not None:
            raise _Unsupported("a path that returns no value")
        if not self.returns:
            raise _Unsupported("no return")
        return _union(self.returns)

    def block(self, body: list[ast.stmt], env: dict[str, _Value]) -> dict[str, _Value] | None:
        """``env`` after ``body``, or ``None`` when every path through it returned."""
        for stmt in body:
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                self.returns.append(self.expr(stmt.value, env))
                return None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                env = {**env, stmt.targets[0].id: self.expr(stmt.value, env)}
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and stmt.value is not None:
                env = {**env, stmt.target.id: self.expr(stmt.value, env)}
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
                    and type(stmt.op) in _BINARY and stmt.target.id in env:
                value = _BINARY[type(stmt.op)](env[stmt.target.id], self.expr(stmt.value, env))
                self.seen[position(stmt)] = value
                env = {**env, stmt.target.id: value}
            elif isinstance(stmt, ast.If):
                self.expr(stmt.test, env)
                ends = [self.block(stmt.body, env), self.block(stmt.orelse, env)]
                live = [e for e in ends if e is not None]
                if not live:
                    return None
                env = {k: _union([e[k] for e in live if k in e])
                       for k in set().union(*live)}
            elif isinstance(stmt, ast.For) and self.loops:
                env = self.loop(stmt, env)
            elif isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr)
                                                and isinstance(stmt.value, ast.Constant)):
                continue
            else:
                raise _Unsupported(f"the statement on line {stmt.lineno}")
        return env

    def loop(self, stmt: ast.For, env: dict[str, _Value]) -> dict[str, _Value]:
        """``env`` after ``for name in range(...)``, which may run any number of times:
        the body is walked with what comes into it widened by what came out of it, until
        nothing widens (``_Unsupported`` when that does not happen soon, or the loop is
        not over a ``range`` of plainly bounded integers)."""
        parts = range_parts(stmt.iter)
        if not (isinstance(stmt.target, ast.Name) and not stmt.orelse and parts is not None
                and self.names.get("range", range) is range):
            raise _Unsupported(f"the loop on line {stmt.lineno}")
        start, stop, by = [self.expr(part, env) for part in parts]
        if any(not e.plain or e.kind != "int" for e in (start, stop, by)):
            raise _Unsupported(f"the range on line {stmt.lineno}")
        step = _bounds(by)
        if step[0] != step[1] or step[0] == 0:
            raise _Unsupported(f"the range's step on line {stmt.lineno}")
        lo, hi = ((start.lo.abs, stop.hi.abs - 1) if step[0] > 0
                  else (stop.lo.abs + 1, start.hi.abs))
        if lo > hi:  # the range is empty whatever the cell
            return env
        name, before = stmt.target.id, env
        for _ in range(8):
            inside = {**env, name: _plain("int", lo, hi)}
            after = self.block(stmt.body, inside)
            widened = before if after is None else \
                {k: _union([e[k] for e in (before, after) if k in e])
                 for k in set(before) | set(after)}
            if widened == env:
                return env
            env = widened
        raise _Unsupported(f"the values of the loop on line {stmt.lineno} keep growing")

    def expr(self, node: ast.expr, env: dict[str, _Value]) -> _Value:
        value = self._expr(node, env)
        if value.kind == "int":
            self.seen[position(node)] = value
        return value

    def _expr(self, node: ast.expr, env: dict[str, _Value]) -> _Value:
        if isinstance(node, ast.Constant):
            if type(node.value) is bool:
                return _plain("bool", int(node.value), int(node.value))
            if type(node.value) is int:
                return _plain("int", node.value, node.value)
            raise _Unsupported(f"the constant {node.value!r}")
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return self.constant(self.names.get(node.id, None), node.id)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "shape" and isinstance(node.value.value, ast.Name) \
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
            name = node.value.value.id  # an extent, M.shape[k] or A.shape[k]
            owner = self.names.get(name)
            sides = self.shape if name == self.table else getattr(owner, "shape", None)
            if isinstance(sides, tuple) and -len(sides) <= node.slice.value < len(sides):
                side = int(sides[node.slice.value])
                return _plain("int", side, side)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if node.value.id == self.table:
                return self.read
            array = self.names.get(node.value.id)
            if isinstance(array, np.ndarray):
                return self.load(node.value.id, array)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](self.expr(node.left, env), self.expr(node.right, env))
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                return _negate(operand)
            if isinstance(node.op, ast.Not):
                return _BOOL
            if isinstance(node.op, ast.UAdd):
                return operand
        if isinstance(node, ast.Compare):
            for sub in (node.left, *node.comparators):
                self.expr(sub, env)
            return _BOOL
        if isinstance(node, ast.BoolOp):
            if all(self.expr(v, env).kind == "bool" for v in node.values):
                return _BOOL
            raise _Unsupported("and/or of numbers")
        if isinstance(node, ast.IfExp):
            self.expr(node.test, env)
            return _union([self.expr(node.body, env), self.expr(node.orelse, env)])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords \
                and self.names.get(node.func.id, getattr(builtins, node.func.id, None)) \
                is getattr(builtins, node.func.id, object()):
            args = [self.expr(a, env) for a in node.args]
            if node.func.id in _BUILTINS and len(args) >= 2:
                return _BUILTINS[node.func.id](args)
            if node.func.id == "abs" and len(args) == 1:
                return _absolute(args[0])
        raise _Unsupported(f"the expression {ast.unparse(node)}")

    def load(self, name: str, array: np.ndarray) -> _Value:
        """The bounds of an element of ``array`` (an empty one is never loaded from: 0
        stands in)."""
        if name not in self.loads:
            kind = _kind(array.dtype)
            self.loads[name] = (_plain(kind, int(array.min()), int(array.max())) if array.size
                                else _plain(kind, 0, 0))
        return self.loads[name]

    def constant(self, value: Any, name: str) -> _Value:
        if isinstance(value, (bool, np.bool_)):
            return _plain("bool", int(value), int(value))
        if isinstance(value, (int, np.integer)):
            _kind(np.asarray(value).dtype)
            return _plain("int", int(value), int(value))
        raise _Unsupported(f"the name {name!r}")


def _table_bounds(run: Callable[[_Value], Any], steps: int) -> tuple[float, float] | None:
    """The least and greatest value a cell may take: what the cell returns whatever its
    reads return, when that is bounded (a remainder, say); else, when every value is
    bounded in terms of the reads' (:class:`Side`), the bounds after ``steps - 1`` steps
    of growth (the module's step 2)."""
    anything = run(_plain("int", -math.inf, math.inf))
    if anything:
        lo, hi = anything[0].lo.abs, anything[0].hi.abs
        if math.isfinite(lo) and math.isfinite(hi):
            return lo, hi
    relative = run(_Value("int", Side(0, None), Side(0, None)))
    if not relative:
        return None
    (p, c), (q, d) = (relative[0].lo.rel, relative[0].lo.abs), \
        (relative[0].hi.rel, relative[0].hi.abs)
    if c is None or d is None:
        return None
    depth = max(steps - 1, 0)
    return c + depth * min(p or 0, 0), d + depth * max(q or 0, 0)


def narrowing(ir: CellIR, shape: Sequence[int], dtype: np.dtype, args: Sequence[Any],
              steps: int, loops: bool = False) -> Narrowing | None:
    """The proof that the cell function read as ``ir``, of a table of ``shape`` and ``dtype``, with
    ``args``, filled in ``steps`` steps (each cell reading only cells of earlier steps),
    computes every integer in int32; ``None`` when it cannot be given (see the module's
    assumptions) or a value may leave int32.

    Examples
    --------
    >>> def lcs(M, i, j, X, Y):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     if X[i - 1] == Y[j - 1]:
    ...         return M[i - 1, j - 1] + 1
    ...     return max(M[i - 1, j], M[i, j - 1])
    >>> from depgraph.frontend.ir import read_cell
    >>> X = np.array([0, 1, 2]); Y = np.array([2, 1])
    >>> narrowing(read_cell(lcs, 2), (4, 3), np.int32, (X, Y), steps=6).values
    (0, 5)
    >>> def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> narrowing(read_cell(paths, 2), (4, 3), np.int32, (), steps=6) is None  # two reads
    True
    """
    if np.dtype(dtype).kind != "i":
        return None
    try:
        fn = ir.definition()
    except SourceUnavailable:
        return None
    names = {**function_namespace(ir.func), **dict(zip(ir.params, args))}
    index = {p: _plain("int", 0, n - 1) for p, n in zip(ir.index, shape)}
    loads: dict[str, _Value] = {}

    def run(read: _Value) -> tuple[_Value, dict[Position, _Value]] | None:
        """What the cell returns when its reads return ``read``, and its integer values."""
        cell = _Cell(fn, names, index, read, loads, shape, loops)
        try:
            return cell.run(), cell.seen
        except (_Unsupported, RecursionError):
            return None

    bounds = _table_bounds(run, steps)
    plain = run(_plain("int", *bounds)) if bounds else None
    if not bounds or not plain:
        return None
    lo, hi = bounds
    seen = plain[1]
    values = [v for val in seen.values() for v in (val.lo.abs, val.hi.abs)]
    extremes = (min(values, default=lo), max(values, default=hi))
    if not (INT32[0] <= min(lo, extremes[0]) and max(hi, extremes[1]) <= INT32[1]):
        return None
    assert all(map(math.isfinite, extremes))
    return Narrowing((int(lo), int(hi)), (int(extremes[0]), int(extremes[1])),
                     frozenset(seen))
