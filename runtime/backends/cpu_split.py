"""A checked row or column pattern fill's steps split where reads need no check: the
range of a step in which each read at ``q + c`` (``q`` the index along the step, ``c``
the same for every cell of the step) lies in the table, filled by a copy of the cell that
reads there unchecked, the rest of the step by the checked cell (LLVM's inductive range
check elimination, which numba's passes do not run, done where the fill is generated).

A read no proof covers costs a test and a branch in every cell, with the store of a flag
behind it, which in a light cell is a large part of its work (docs/benchmarks.md).  A
read such as process scheduling's ``M[k + 1, a + p[k]]`` (RDU) lies in the table for
every ``a`` but the last ``p[k]`` of a row, which a proof cannot say (``a + p[k] <=
P[k + 1]`` is a fact of prefix sums), but the fill can compute once a step:
:func:`split` finds such reads and writes ``span(M, x, *params)``, the range of ``q`` in
which every one of them lies in the table and in a region the pattern allows, for the
step at index ``x``.

Assumptions: a 2-D table filled by RUD, RDU, CLR or CRL (a step along one axis; the
regions allowed put no limit along the step, and one side across it); a cell function
that writes nothing (its arguments cannot change between ``span`` and the cell) and
does not reassign its indices; a local the cell assigns once, at its body's top level,
holds its value wherever a read uses it (a read before the assignment would fail).
``span`` reads the arguments' elements a read's ``c`` needs, each tested inside its
array first, for every step, where the cell may not: a test that fails leaves the step
to the checked cell.  ``c`` is built from integer
literals, the step's index, the parameters and their elements and extents by ``+``,
``-`` and ``*``, so it computes as in the cell (int64 arithmetic, wrapping alike); a
``c`` past the table's side makes the range empty before ``q + c`` could wrap.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.analysis.proof import ReadKey, Trusted
from depgraph.frontend.ir import CellIR, is_extent, subscript_elements
from patterns import BY_CODE, STEP_SOURCE, axis_signs
from runtime.backends.emit import Emitter

__all__ = ["Split", "split", "widened"]

_OPS = (ast.Add, ast.Sub, ast.Mult)


@dataclass(frozen=True)
class Split:
    """What :func:`split` found: the reads a step's middle range reads unchecked, and the
    source of ``span`` (module docstring), whose ``(lo, hi)`` is that range (empty
    where ``lo >= hi``)."""

    reads: tuple[ReadKey, ...]
    source: str


def widened(trusted: Trusted | None, found: Split, allowed: Collection[str]) -> Trusted:
    """``trusted`` with ``found``'s reads as proven in the regions ``allowed``: what the
    middle range's copy of the cell leaves unchecked.

    Examples
    --------
    >>> t = widened(None, Split((("M[i - 1, j + d[i]]", 3),), ""), ("Up", "UpLeft", "UpRight"))
    >>> sorted(t.reads_in(("Up", "UpLeft", "UpRight")))
    [('M[i - 1, j + d[i]]', 3)]
    """
    regions = tuple(sorted(allowed))
    base = trusted or Trusted((), ())
    return dataclasses.replace(base, reads=base.reads + tuple((k, regions) for k in found.reads))


def split(ir: CellIR, code: str, trusted: Trusted | None, args: tuple[Any, ...]
          ) -> Split | None:
    """The reads of the cell ``ir`` that pattern ``code``'s checked fill may leave
    unchecked on part of each step, and ``span`` (module docstring); ``None`` where
    there is none: a diagonal pattern, a cell that writes an array or reassigns an
    index, or no read outside ``trusted`` whose index along the step is the step's
    index plus or minus an amount the same along the step and whose index across it
    is the same along the step.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> p = np.array([2, 1, 3])
    >>> @recurrence(shape=(4, 7), dtype=np.int64, args=(p,))
    ... def load(M, k, a, p):
    ...     if k == 3 or a > 3:
    ...         return a
    ...     return min(M[k + 1, a + p[k]], M[k + 1, a])
    >>> found = split(cell_ir(load), "RDU", None, load.args)
    >>> found.reads
    (('M[k + 1, a + p[k]]', 5), ('M[k + 1, a]', 5))
    >>> print(found.source, end="")
    def span(M, k, p):
        _dg_lo = 0
        _dg_hi = M.shape[1]
        _dg_x0 = k + 1
        if not (k < _dg_x0 < M.shape[0]):
            return (0, 0)
        if not (0 <= k < p.shape[0]):
            return (0, 0)
        _dg_v0 = p[k]
        _dg_c0 = _dg_v0
        if not (-M.shape[1] < _dg_c0 < M.shape[1]):
            return (0, 0)
        _dg_lo = max(_dg_lo, -_dg_c0)
        _dg_hi = min(_dg_hi, M.shape[1] - _dg_c0)
        _dg_x1 = k + 1
        if not (k < _dg_x1 < M.shape[0]):
            return (0, 0)
        return (_dg_lo, _dg_hi)
    >>> split(cell_ir(load), "NOSE", None, load.args) is None
    True
    """
    if code not in BY_CODE or ir.ndim != 2 or ir.hidden or not ir.pure \
            or set(ir.index) & ir.assigned:
        return None
    along = 0 if STEP_SOURCE[code].i == "q" else 1  # the axis a step runs along
    across = 1 - along
    allowed = BY_CODE[code].allowed
    signs = axis_signs(allowed)
    side = signs[across]
    if signs[along] != {-1, 0, 1} or len(side) != 1 or 0 in side:
        return None
    proven = trusted.reads_in(allowed) if trusted else frozenset()
    arrays = {name for name, value in zip(ir.params, args) if isinstance(value, np.ndarray)}
    known = ({ir.index[across]} | set(ir.params)) - ir.assigned
    inline = _Inline(_bound(ir, known, arrays))
    found: dict[ReadKey, tuple[ast.expr, int, ast.expr | None]] = {}
    for read in ir.reads:
        key = (read.text, read.line)
        if key in proven or key in found or not read.one_cell or len(read.index) != 2:
            continue
        at = inline.visit(ast.parse(read.index[across], mode="eval").body)
        offset = _offset(inline.visit(ast.parse(read.index[along], mode="eval").body),
                         ir.index[along])
        if offset is None or not _invariant(at, known, arrays, ir.table):
            continue
        sign, amount = offset
        if amount is not None and not _invariant(amount, known, arrays, ir.table):
            continue
        found[key] = (at, sign, amount)
    if not found:
        return None
    return Split(tuple(found), _span_source(ir, along, min(side), list(found.values())))


def _bound(ir: CellIR, known: Collection[str], arrays: Collection[str]
           ) -> dict[str, ast.expr]:
    """The cell's locals that hold the same value in every cell of a step: each assigned
    once in the function, by a statement of its body's top level, a value
    :func:`_invariant` accepts (of ``known`` names and the locals before it, whose values
    it holds in their place); by name, their values so written.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def f(M, k, a, p):
    ...     t = p[k] + 1
    ...     u = t * 2
    ...     if a > t:
    ...         u = 0
    ...     return M[k + 1, a + t] + u
    >>> found = _bound(read_cell(f, 2), {"k", "p"}, {"p"})
    >>> {name: ast.unparse(value) for name, value in found.items()}
    {'t': 'p[k] + 1'}
    """
    fn = ir.definition()
    stores: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
    bound: dict[str, ast.expr] = {}
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and stores[stmt.targets[0].id] == 1:
            value = _Inline(bound).visit(copy.deepcopy(stmt.value))
            if _invariant(value, known, arrays, ir.table):
                bound[stmt.targets[0].id] = value
    return bound


class _Inline(ast.NodeTransformer):
    """Each name of a local :func:`_bound` found replaced by its value."""

    def __init__(self, bound: dict[str, ast.expr]) -> None:
        self.bound = bound

    def visit_Name(self, node: ast.Name) -> ast.expr:
        value = self.bound.get(node.id)
        return node if value is None or not isinstance(node.ctx, ast.Load) \
            else copy.deepcopy(value)


def _offset(node: ast.expr, q: str) -> tuple[int, ast.expr | None] | None:
    """``(1, c)`` for ``q + c`` or ``c + q``, ``(-1, c)`` for ``q - c``, ``(1, None)`` for
    ``q`` itself; ``None`` otherwise.

    Examples
    --------
    >>> sign, c = _offset(ast.parse("j - w[i]", mode="eval").body, "j")
    >>> sign, ast.unparse(c)
    (-1, 'w[i]')
    >>> _offset(ast.parse("2 * j", mode="eval").body, "j") is None
    True
    """
    if isinstance(node, ast.Name) and node.id == q:
        return 1, None
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))):
        return None
    if isinstance(node.left, ast.Name) and node.left.id == q:
        return (1 if isinstance(node.op, ast.Add) else -1), node.right
    if isinstance(node.op, ast.Add) and isinstance(node.right, ast.Name) and node.right.id == q:
        return 1, node.left
    return None


def _invariant(node: ast.expr, known: Collection[str], arrays: Collection[str],
               table: str) -> bool:
    """Whether ``node`` is built from integer literals, the names ``known`` (not arrays),
    elements of ``arrays`` at such expressions and extents of those or of ``table``, by
    ``+``, ``-`` and ``*``: the same for every cell of a step, and computable without
    raising once each element is tested inside its array."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Name):
        return node.id in known and node.id not in arrays
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and _invariant(node.operand, known, arrays, table)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _OPS) and all(
            _invariant(x, known, arrays, table) for x in (node.left, node.right))
    if is_extent(node):
        owner = node.value.value  # type: ignore[attr-defined]
        return isinstance(owner, ast.Name) and (owner.id == table or owner.id in arrays)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and node.value.id in arrays and node.value.id in known:
        return all(not isinstance(x, (ast.Slice, ast.Starred))
                   and _invariant(x, known, arrays, table) for x in subscript_elements(node))
    return False


class _Loads(ast.NodeTransformer):
    """Each element load of an expression :func:`_invariant` accepts replaced by a name,
    its indices computed and tested inside the array first (``span`` returns an empty
    range where one is not), inner loads first."""

    def __init__(self, e: Emitter) -> None:
        self.e, self.count = e, 0

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if is_extent(node):
            return node
        self.generic_visit(node)
        array = ast.unparse(node.value)
        places = []
        for axis, x in enumerate(subscript_elements(node)):
            text = ast.unparse(x)
            if not isinstance(x, (ast.Name, ast.Constant)):  # computed once
                self.e(f"_dg_i{self.count}_{axis} = {text}")
                text = f"_dg_i{self.count}_{axis}"
            with self.e.block(f"if not (0 <= {text} < {array}.shape[{axis}])"):
                self.e("return (0, 0)")
            places.append(text)
        value = f"_dg_v{self.count}"
        self.count += 1
        self.e(f"{value} = {array}[{', '.join(places)}]")
        return ast.copy_location(ast.Name(value, ast.Load()), node)


def _span_source(ir: CellIR, along: int, side: int,
                 reads: list[tuple[ast.expr, int, ast.expr | None]]) -> str:
    """``span`` (module docstring) for ``reads``: each its index across the step (on the
    pattern's ``side`` of the step's own, -1 before, 1 after, and in the table), the
    sign of ``q`` against ``c`` and ``c`` itself (``None``: 0) along it."""
    table, x = ir.table, ir.index[1 - along]
    extent, width = f"{table}.shape[{1 - along}]", f"{table}.shape[{along}]"
    e = Emitter()
    loads = _Loads(e)
    with e.block(f"def span({', '.join([table, x, *ir.params])})"):
        e("_dg_lo = 0", f"_dg_hi = {width}")
        for k, (at, sign, amount) in enumerate(reads):
            e(f"_dg_x{k} = {ast.unparse(loads.visit(at))}")
            inside = f"0 <= _dg_x{k} < {x}" if side < 0 else f"{x} < _dg_x{k} < {extent}"
            with e.block(f"if not ({inside})"):
                e("return (0, 0)")
            if amount is None:
                continue
            e(f"_dg_c{k} = {ast.unparse(loads.visit(amount))}")
            with e.block(f"if not (-{width} < _dg_c{k} < {width})"):
                e("return (0, 0)")
            # q + c inside 0..width - 1: q from -c to width - 1 - c (q - c: from c)
            low, high = (f"-_dg_c{k}", f"{width} - _dg_c{k}") if sign > 0 else \
                (f"_dg_c{k}", f"{width} + _dg_c{k}")
            e(f"_dg_lo = max(_dg_lo, {low})", f"_dg_hi = min(_dg_hi, {high})")
        e("return (_dg_lo, _dg_hi)")
    return e.source
