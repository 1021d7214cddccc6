"""A 2-D recurrence that only a hyperplane fits, recast as a NOSE recurrence on a sheared
table (:class:`patterns.hyperplane.Shear`), so the pattern fills (on the CPU the tiles,
on the GPU the cost model's kernels) fill it; and the sheared table mapped back.

The sheared cell function is generated from the cell's source: it takes the sheared
coordinates ``(p, q)``, returns 0 for a cell of the sheared table that is outside the
original one (no cell of the table reads it), and runs the original body with each read
of ``M`` written at its offset in the sheared coordinates (``M[i - 1, j + 1]`` becomes
``M[p - 1, q]``), each other use of an index its expression in ``(p, q)`` (``A[i, j]``
becomes ``A[p, q - p]``) and ``M.shape`` the original shape, so the cell IR of the
sheared function sees reads at constant offsets that NOSE allows and loads of its
arguments at expressions of its own indices, as the pattern kernels want.

Assumptions: every read of the cell is at a constant offset
(:meth:`depgraph.frontend.ir.CellIR.read_offsets` has no unknown) and no read leaves the table (a
certificate proves it, or a checked sweep or the trace saw it at this size): the sheared
table's extra cells are never read by the table's own.
"""

from __future__ import annotations

import ast
import linecache
import weakref
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR, index_offset
from depgraph.frontend.source import function_namespace
from depgraph.model import Recurrence, recurrence
from patterns.hyperplane import Shear
from runtime.backends.emit import digest

__all__ = ["sheared_recurrence", "unshear"]

_MADE: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()
P, Q = "_dg_p", "_dg_q"


class _Sheared(ast.NodeTransformer):
    """Reads of ``table`` written at their offsets in the sheared coordinates,
    ``table.shape`` the original shape, and every other use of an index its expression
    in the sheared coordinates (``index``: the original indices' names, ``exprs`` those
    expressions), so the sheared cell's loads of its arguments are at expressions of its
    own indices, which the kernels may make for it."""

    def __init__(self, table: str, index: list[str], exprs: list[str], sh: Shear,
                 shape: tuple[int, ...]):
        self.table, self.index, self.sh, self.shape = table, index, sh, shape
        self.exprs = dict(zip(index, exprs))

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.exprs and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.parse(f"({self.exprs[node.id]})", mode="eval").body,
                                     node)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == self.table:
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            offsets = [index_offset(e, x) for e, x in zip(elts, self.index)]
        self.generic_visit(node)
        if isinstance(node.value, ast.Tuple) and isinstance(node.slice, ast.Constant):
            return ast.copy_location(node.value.elts[node.slice.value], node)  # M.shape[k]
        if not (isinstance(node.value, ast.Name) and node.value.id == self.table):
            return node
        assert len(elts) == 2 and None not in offsets  # constant offsets, as assumed
        at = ", ".join(f"{x} - {-k}" if k < 0 else f"{x} + {k}" if k else x
                       for x, k in zip((P, Q), self.sh.offset(offsets)))
        new = ast.parse(f"{self.table}[{at}]", mode="eval").body
        return ast.copy_location(new, node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if (isinstance(node.value, ast.Name) and node.value.id == self.table
                and node.attr == "shape"):
            return ast.copy_location(ast.parse(repr(self.shape), mode="eval").body, node)
        return node


def _linear(cp: int, cq: int, const: int) -> str:
    """``cp * p + cq * q + const`` as plain source, its added terms first (no unary
    minus, which the cell IR would not read as an expression of the indices).

    Examples
    --------
    >>> _linear(1, 0, 0), _linear(-1, 1, 0), _linear(2, -1, -3), _linear(-1, 0, 0)
    ('_dg_p', '_dg_q - _dg_p', '2 * _dg_p - _dg_q - 3', '0 - _dg_p')
    """
    terms = [(k, (f"{abs(k)} * {name}" if abs(k) != 1 else name) if name else str(abs(k)))
             for k, name in ((cp, P), (cq, Q), (const, "")) if k]
    added = [text for k, text in terms if k > 0] or ["0"]
    return " - ".join([" + ".join(added)] + [text for k, text in terms if k < 0])


def _source(ir: CellIR, sh: Shear, shape: tuple[int, ...]) -> str:
    """The sheared cell function's source (module docstring)."""
    fn = ir.definition()
    (a, b), (c, d) = sh.rows
    det = a * d - b * c
    s0, s1 = sh.shift  # x = U^-1 ((p, q) - shift), U^-1 = det * ((d, -b), (-c, a))
    i = _linear(det * d, -det * b, -det * (d * s0 - b * s1))
    j = _linear(-det * c, det * a, -det * (a * s1 - c * s0))
    head = ast.parse(f"if {i} < 0 or {i} >= {shape[0]} or {j} < 0 or {j} >= {shape[1]}:\n"
                     f"    return 0\n").body
    body = [_Sheared(ir.table, list(ir.index), [i, j], sh, shape).visit(stmt)
            for stmt in fn.body]
    fn.body = head + body
    fn.args.args[1:3] = [ast.arg(P), ast.arg(Q)]
    fn.decorator_list = []
    fn.returns = None
    return ast.unparse(ast.fix_missing_locations(ast.Module([fn], type_ignores=[]))) + "\n"


def sheared_recurrence(rec: Recurrence, ir: CellIR, sh: Shear) -> Recurrence:
    """``rec`` on the table sheared by ``sh`` (module docstring): same name, dtype and
    args, shape ``sh.box``.  The sheared function is made once per cell function, shear
    and shape, so its compiled kernels are kept with it.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> from patterns.hyperplane import shear
    >>> @recurrence(shape=(3, 4), dtype=np.int64)
    ... def skew(M, i, j):
    ...     return 1 if i == 0 or j == 0 or j == M.shape[1] - 1 else M[i - 1, j + 1] + M[i, j - 1]
    >>> s = sheared_recurrence(skew, cell_ir(skew), shear([(-1, 1), (0, -1)], (3, 4)))
    >>> s.shape, cell_ir(s).constant_offsets()
    ((3, 6), ((-1, 0), (0, -1)))
    """
    made = _MADE.setdefault(rec.func, {})
    key = (sh, rec.shape)
    if key not in made:
        source = _source(ir, sh, rec.shape)
        filename = f"<depgraph sheared {rec.name} {digest(source, {})}>"
        # registered so the cell IR (inspect) reads the sheared function's source
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = function_namespace(rec.func)
        exec(compile(source, filename, "exec"), namespace)
        made[key] = namespace[ir.definition().name]
    return recurrence(shape=sh.box, dtype=rec.dtype, args=rec.args, name=rec.name)(made[key])


def unshear(sheared: np.ndarray, sh: Shear, shape: tuple[int, ...]) -> np.ndarray:
    """The table of ``shape`` from its sheared table: cell ``x`` is ``sheared[U x + c]``.

    Examples
    --------
    >>> from patterns.hyperplane import shear
    >>> sh = shear([(-1, 1), (0, -1)], (2, 3))
    >>> unshear(np.arange(8).reshape(2, 4), sh, (2, 3)).tolist()
    [[0, 1, 2], [5, 6, 7]]
    """
    i, j = np.indices(shape)
    (a, b), (c, d) = sh.rows
    return sheared[a * i + b * j + sh.shift[0], c * i + d * j + sh.shift[1]]
