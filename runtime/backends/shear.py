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

The original shape (in the outside test and for ``M.shape``) comes in as arguments,
``_dg_n0, _dg_n1, ...`` before the recurrence's own, so a shear's sheared source is the
same at every size, and so are the kernels compiled for it (named by what the source is:
:func:`runtime.backends.cache.cell_digest`); they are not computed from ``M.shape``
(the box, from which the shear gives them back), since the register strips take only a
cell that uses ``M`` by its reads alone
(:meth:`depgraph.frontend.ir.CellIR.constant_offsets`).  The shift ``c`` stays a
literal in each index's expression: the kernels take a load of an argument only at an
expression of the indices and literals (:class:`depgraph.frontend.ir.LoadFinder`); it is
0 at every size unless ``U`` has a negative entry, and only then is the sheared source
made again for each size.

Assumptions: every read of the cell is at a constant offset
(:meth:`depgraph.frontend.ir.CellIR.read_offsets` has no unknown) and no read leaves the table (a
certificate proves it, or a checked sweep or the trace saw it at this size): the sheared
table's extra cells are never read by the table's own.
"""

from __future__ import annotations

import ast
import linecache
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR, index_offset, subscript_elements
from depgraph.frontend.source import function_namespace
from depgraph.model import Recurrence, recurrence
from patterns.hyperplane import Shear, linear_source
from runtime.backends.emit import digest

__all__ = ["sheared_recurrence", "unshear", "gather_line"]

_MADE: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _names(ndim: int) -> list[str]:
    """The sheared function's index names: ``_dg_p``, ``_dg_q`` in 2-D, else ``_dg_y0,
    _dg_y1, ...``."""
    return ["_dg_p", "_dg_q"] if ndim == 2 else [f"_dg_y{k}" for k in range(ndim)]


def _sides(ndim: int) -> list[str]:
    """The sheared function's arguments holding the original table's sides."""
    return [f"_dg_n{k}" for k in range(ndim)]


class _Sheared(ast.NodeTransformer):
    """Reads of ``table`` written at their offsets in the sheared coordinates,
    ``table.shape`` the original shape (its sides' arguments), and every other use of an
    index its expression in the sheared coordinates (``index``: the original indices'
    names, ``exprs`` those expressions), so the sheared cell's loads of its arguments
    are at expressions of its own indices, which the kernels may make for it."""

    def __init__(self, table: str, index: list[str], exprs: list[str], sh: Shear):
        self.table, self.index, self.sh = table, index, sh
        self.shape = f"({', '.join(_sides(len(index)))},)"
        self.exprs = dict(zip(index, exprs))

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.exprs and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.parse(f"({self.exprs[node.id]})", mode="eval").body,
                                     node)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == self.table:
            elts = subscript_elements(node)
            offsets = [index_offset(e, x) for e, x in zip(elts, self.index)]
        self.generic_visit(node)
        if isinstance(node.value, ast.Tuple) and isinstance(node.slice, ast.Constant):
            return ast.copy_location(node.value.elts[node.slice.value], node)  # M.shape[k]
        if not (isinstance(node.value, ast.Name) and node.value.id == self.table):
            return node
        assert len(elts) == len(self.index) and None not in offsets  # constant, as assumed
        at = ", ".join(f"{x} - {-k}" if k < 0 else f"{x} + {k}" if k else x
                       for x, k in zip(_names(len(self.index)), self.sh.offset(offsets)))
        new = ast.parse(f"{self.table}[{at}]", mode="eval").body
        return ast.copy_location(new, node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if (isinstance(node.value, ast.Name) and node.value.id == self.table
                and node.attr == "shape"):
            return ast.copy_location(ast.parse(self.shape, mode="eval").body, node)
        return node


def _source(ir: CellIR, sh: Shear) -> str:
    """The sheared cell function's source (module docstring).

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> from patterns.hyperplane import shear
    >>> @recurrence(shape=(3, 4), dtype=np.int64)
    ... def skew(M, i, j):
    ...     return 1 if i == 0 or j == 0 or j == M.shape[1] - 1 else M[i - 1, j + 1] + M[i, j - 1]
    >>> print(_source(cell_ir(skew), shear([(-1, 1), (0, -1)], (3, 4))), end="")
    def skew(M, _dg_p, _dg_q, _dg_n0, _dg_n1):
        if _dg_p < 0 or _dg_p >= _dg_n0 or _dg_q - _dg_p < 0 or (_dg_q - _dg_p >= _dg_n1):
            return 0
        return 1 if _dg_p == 0 or _dg_q - _dg_p == 0 or _dg_q - _dg_p == _dg_n1 - 1 else M[_dg_p - 1, _dg_q] + M[_dg_p, _dg_q - 1]
    """
    fn = ir.definition()
    names, sides = _names(ir.ndim), _sides(ir.ndim)
    # x = U^-1 (y - shift): each index a linear form in the sheared indices
    index = [linear_source(row, names, -int(np.dot(row, sh.shift))) for row in sh.inverse]
    outside = " or ".join(f"{x} < 0 or {x} >= {n}" for x, n in zip(index, sides))
    head = ast.parse(f"if {outside}:\n    return 0\n").body
    body = [_Sheared(ir.table, list(ir.index), index, sh).visit(stmt) for stmt in fn.body]
    fn.body = head + body
    # the sides before the recurrence's args, whose defaults (if any) stay last
    fn.args.args[1:1 + ir.ndim] = [ast.arg(name) for name in names + sides]
    fn.decorator_list = []
    fn.returns = None
    return ast.unparse(ast.fix_missing_locations(ast.Module([fn], type_ignores=[]))) + "\n"


def sheared_recurrence(rec: Recurrence, ir: CellIR, sh: Shear) -> Recurrence:
    """``rec`` on the table sheared by ``sh`` (module docstring): same name and dtype,
    shape ``sh.box``, args ``rec``'s sides then its own.  The sheared function is made
    once per cell function and sheared source, which is the same at every size of a
    shear whose ``U`` has no negative entry, so every size shares its compiled kernels.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> from patterns.hyperplane import shear
    >>> @recurrence(shape=(3, 4), dtype=np.int64)
    ... def skew(M, i, j):
    ...     return 1 if i == 0 or j == 0 or j == M.shape[1] - 1 else M[i - 1, j + 1] + M[i, j - 1]
    >>> s = sheared_recurrence(skew, cell_ir(skew), shear([(-1, 1), (0, -1)], (3, 4)))
    >>> s.shape, s.args, cell_ir(s).constant_offsets()
    ((3, 6), (3, 4), ((-1, 0), (0, -1)))
    """
    made = _MADE.setdefault(rec.func, {})
    source = _source(ir, sh)
    if source not in made:
        filename = f"<depgraph sheared {rec.name} {digest(source, {})}>"
        # registered so the cell IR (inspect) reads the sheared function's source
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = function_namespace(rec.func)
        exec(compile(source, filename, "exec"), namespace)
        made[source] = namespace[ir.definition().name]
    sides = tuple(int(n) for n in rec.shape)
    return recurrence(shape=sh.box, dtype=rec.dtype, args=sides + tuple(rec.args),
                      name=rec.name)(made[source])


def unshear(sheared: np.ndarray, sh: Shear, shape: tuple[int, ...]) -> np.ndarray:
    """The table of ``shape`` from its sheared table: cell ``x`` is ``sheared[U x + c]``.

    Examples
    --------
    >>> from patterns.hyperplane import shear
    >>> sh = shear([(-1, 1), (0, -1)], (2, 3))
    >>> unshear(np.arange(8).reshape(2, 4), sh, (2, 3)).tolist()
    [[0, 1, 2], [5, 6, 7]]
    """
    x = np.indices(shape)
    return sheared[tuple(sum(u * xk for u, xk in zip(row, x)) + c
                         for row, c in zip(sh.rows, sh.shift))]


def gather_line(sh: Shear, index: Sequence[str]) -> str:
    """The generated kernels' line that gathers cell ``index`` of ``M`` from the sheared
    table ``S``, the shift from ``M``'s shape (the same line at every size).

    Examples
    --------
    >>> from patterns.hyperplane import shear
    >>> gather_line(shear([(-1, 1), (0, -1)], (2, 3)), ["i", "j"])
    'M[i, j] = S[i, i + j]'
    >>> gather_line(shear([(1, -1), (0, -1)], (2, 3)), ["i", "j"])
    'M[i, j] = S[j, 0 - i + 1 * (M.shape[0] - 1)]'
    """
    shift = sh.shift_source([f"M.shape[{k}]" for k in range(len(index))])
    at = ", ".join(linear_source(row, index, 0) + (f" + {c}" if c != "0" else "")
                   for row, c in zip(sh.rows, shift or ("0",) * len(index)))
    return f"M[{', '.join(index)}] = S[{at}]"
