"""How many loop iterations a cell makes, on average over its table, read from its
source: what a looped cell costs against a light one, for ``auto``'s CPU choice
(:mod:`runtime.schedule.choose`).

A ``for x in range(a, b[, step])`` whose bounds are expressions of the cell's indices,
the table's extents (``M.shape[k]``) and integer literals runs ``max(0, ceil((b - a) /
step))`` times at each cell; those counts are evaluated with NumPy over a grid of up to
``SAMPLE`` cells a side spread over the table.  Loops one after another add; a loop
inside another runs its count on every outer iteration (its bounds may not name the
outer loop's variable); of an ``if``'s two branches the longer counts.

Assumptions: the estimate is a mean, for a cost model; a loop it cannot count (a
``while``, bounds that read an argument's data or another loop's variable) gives
``None``, and the caller keeps its own guess.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR, range_parts
from depgraph.frontend.source import SourceUnavailable

__all__ = ["mean_iterations", "SAMPLE"]

#: Cells a side of the grid the counts are evaluated on.
SAMPLE = 64


class _Uncounted(Exception):
    """A loop whose iterations the source does not fix."""


def _value(node: ast.expr, names: dict[str, np.ndarray], table: str,
           shape: tuple[int, ...]) -> Any:
    """``node`` over the grid: the indices in ``names``, ``M.shape[k]`` and integers."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name) and node.value.value.id == table
            and node.value.attr == "shape" and isinstance(node.slice, ast.Constant)):
        return shape[node.slice.value]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand, names, table, shape)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult,
                                                            ast.FloorDiv)):
        left = _value(node.left, names, table, shape)
        right = _value(node.right, names, table, shape)
        ops = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
               ast.FloorDiv: np.floor_divide}
        return ops[type(node.op)](left, right)
    raise _Uncounted(ast.unparse(node))


def _work(stmts: list[ast.stmt], names: dict[str, np.ndarray], table: str,
          shape: tuple[int, ...]) -> Any:
    """The loop iterations ``stmts`` make at each cell of the grid."""
    total: Any = 0
    for s in stmts:
        if isinstance(s, ast.While):
            raise _Uncounted("a while loop")
        if isinstance(s, ast.If):
            total = total + np.maximum(_work(s.body, names, table, shape),
                                       _work(s.orelse, names, table, shape))
        elif isinstance(s, ast.For):
            parts = range_parts(s.iter)
            if parts is None:
                raise _Uncounted(ast.unparse(s.iter))
            lo, hi, step = (_value(a, names, table, shape) for a in parts)
            if not isinstance(step, int) or step == 0:
                raise _Uncounted("a range whose step is not a literal")
            trips = np.maximum(0, -((lo - hi) // step) if step > 0 else -((hi - lo) // -step))
            total = total + trips * (1 + _work(s.body, names, table, shape))
        elif isinstance(s, (ast.With, ast.Try)):
            raise _Uncounted(type(s).__name__)
    return total


def mean_iterations(ir: CellIR, shape: tuple[int, ...]) -> float | None:
    """The loop iterations the cell makes, on average over a grid of the table's cells
    (module docstring); ``None`` where a loop's count is not fixed by its source.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def chain(M, i, j):
    ...     best = 0
    ...     for k in range(i + 1, j):
    ...         best = max(best, M[i, k] + M[k, j])
    ...     return best
    >>> mean_iterations(read_cell(chain, 2), (4, 4))  # 2, 1 and 1 iterations of 16 cells
    0.25
    >>> def sack(M, i, c, w):
    ...     k = 1
    ...     while k * w[i] <= c:
    ...         k += 1
    ...     return k
    >>> mean_iterations(read_cell(sack, 2), (4, 4)) is None
    True
    """
    try:
        fn = ir.definition()
    except SourceUnavailable:
        return None
    axes = [np.unique(np.linspace(0, n - 1, min(n, SAMPLE)).round().astype(np.int64))
            for n in shape]
    grid = np.meshgrid(*axes, indexing="ij")
    names = dict(zip(ir.index, grid))
    try:
        work = _work(fn.body, names, ir.table, shape)
    except _Uncounted:
        return None
    return float(np.mean(np.broadcast_to(work, grid[0].shape)))
