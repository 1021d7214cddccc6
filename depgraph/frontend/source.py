"""Reading a cell function's source: its definition, parsed, and the names it sees.

Assumptions: the function's source can be found (``inspect.getsource``: it was defined in
a file, not typed at a prompt or built with ``exec``) and starts with its ``def``.
Globals and closure variables are what a copy of the function compiled elsewhere needs, so
:func:`function_namespace` gives both (closure values freeze as compile-time constants, as
numba does for closures anyway).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

__all__ = ["SourceUnavailable", "Position", "position", "definition_source",
           "function_namespace"]

#: Where a node sits in a parsed source: its class, first line and column, last line and
#: column; the same for a node of each parse of one source.
Position = tuple[str, int, int, int, int]


def position(node: ast.AST) -> Position:
    """The :data:`Position` of ``node``.

    Examples
    --------
    >>> position(ast.parse("x + 1").body[0].value)
    ('BinOp', 1, 0, 1, 5)
    """
    return (type(node).__name__, node.lineno, node.col_offset, node.end_lineno or 0,
            node.end_col_offset or 0)


class SourceUnavailable(Exception):
    """The cell function's source cannot be found, or says too little for what was asked."""


def function_namespace(func: Callable[..., Any]) -> dict[str, Any]:
    """The globals a copy of ``func`` needs: its module globals plus its closure values.

    Examples
    --------
    >>> def outer(k):
    ...     def cell(M, i):
    ...         return k
    ...     return cell
    >>> function_namespace(outer(7))["k"]
    7
    """
    ns = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            ns[name] = cell.cell_contents
    return ns


def definition_source(func: Callable[..., Any], ndim: int) -> str:
    """The dedented source of ``func``'s ``def`` (decorators included), which takes the
    table and ``ndim`` indices at least; ``SourceUnavailable`` saying why not.

    Examples
    --------
    >>> def cell(M, i):
    ...     return i
    >>> print(definition_source(cell, 1))
    def cell(M, i):
        return i
    <BLANKLINE>
    >>> definition_source(cell, 2)
    Traceback (most recent call last):
    ...
    depgraph.frontend.source.SourceUnavailable: could not find the definition of 'cell'
    """
    try:
        text = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(text)
    except (OSError, TypeError, SyntaxError) as exc:
        raise SourceUnavailable(f"the source of {func.__name__!r} is not available ({exc})") from None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None or len(fn.args.args) < 1 + ndim:
        raise SourceUnavailable(f"could not find the definition of {func.__name__!r}")
    return text
