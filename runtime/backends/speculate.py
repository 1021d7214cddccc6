"""A cell function's guards as selects: its body computed first, the guards applied last.

A *guard* is a statement ``if test: return value`` of the function's body (not nested,
no ``else``).  :func:`speculate` rewrites a parsed cell function so that it computes the
rest of its body whatever the cell, into one variable, and then, from the last guard to
the first, replaces that value by the guard's value where the guard's test holds.  The
LCS cell::

    if i == 0 or j == 0:
        return 0
    if X[i - 1] == Y[j - 1]:
        return M[i - 1, j - 1] + 1
    return max(M[i - 1, j], M[i, j - 1])

becomes (its loads of ``X`` and ``Y`` taken out by the caller, here ``x`` and ``y``)::

    _dg_v = max(M[i - 1, j], M[i, j - 1])
    _dg_v = M[i - 1, j - 1] + 1 if x == y else _dg_v
    _dg_v = 0 if i == 0 or j == 0 else _dg_v
    return _dg_v

The same value at every cell; but the compiled code is one two-way choice after another,
which LLVM turns into selects, where the guards before the rest left a branch for each
(the register strips' LCS cell: a branch and its convergence barrier on a block's first
row and first column, every step).

Assumptions: the rewritten function evaluates, at every cell, code the original skips
there: the rest of the body, and every guard's test.  That is only harmless when none of
it can fail or touch memory at any cell: the caller serves the reads of ``M`` and the
argument loads (:meth:`depgraph.frontend.ir.CellIR.runs_anywhere`), and :func:`speculate` itself
takes only numbers, names, ``+ - *``, bitwise ``& | ^ ~``, comparisons, ``and or not``,
conditional expressions, extents ``A.shape[k]`` and calls of ``min``, ``max``, ``abs`` and
the caller's ``calls`` (no division, power or shift, which can raise).  A name a guard
uses must not be assigned after that guard, so it has the same value where the guard
now stands.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Collection

__all__ = ["RESULT", "speculate", "extent", "stored"]

#: The variable the rewritten body computes its value into.
RESULT = "_dg_v"
#: Built-in functions a speculated body may call (the caller checks they are not rebound).
_CALLS = frozenset({"min", "max", "abs"})
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
_UNARY = (ast.USub, ast.UAdd, ast.Not, ast.Invert)
_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
#: The most statements a rewritten body may have (a guard-like ``if`` nested in the rest
#: copies the statements after it into both of its branches).
_MOST = 256


def _safe(node: ast.expr, calls: Collection[str]) -> bool:
    """Whether evaluating ``node`` can neither fail nor touch memory."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float, bool)
    if isinstance(node, ast.BinOp):
        return (isinstance(node.op, _BINOPS) and _safe(node.left, calls)
                and _safe(node.right, calls))
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, _UNARY) and _safe(node.operand, calls)
    if isinstance(node, ast.BoolOp):
        return all(_safe(v, calls) for v in node.values)
    if isinstance(node, ast.Compare):
        return (all(isinstance(op, _COMPARE) for op in node.ops)
                and all(_safe(v, calls) for v in (node.left, *node.comparators)))
    if isinstance(node, ast.IfExp):
        return all(_safe(v, calls) for v in (node.test, node.body, node.orelse))
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id in (_CALLS | set(calls))
                and not node.keywords and all(not isinstance(a, ast.Starred)
                                              and _safe(a, calls) for a in node.args))
    if isinstance(node, ast.Subscript):  # an extent of a named array
        return (extent(node) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name))
    return False


def extent(node: ast.Subscript) -> bool:
    """Whether ``node`` is an array's extent, ``A.shape[k]`` with an int literal ``k``."""
    return (isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int)


def _safe_statements(stmts: list[ast.stmt], calls: Collection[str]) -> bool:
    """Whether ``stmts`` are assignments to names, ``if``, ``return`` of a value and
    ``pass``, all of whose expressions are :func:`_safe`."""
    for s in stmts:
        if isinstance(s, ast.Assign):
            ok = all(isinstance(t, ast.Name) for t in s.targets) and _safe(s.value, calls)
        elif isinstance(s, ast.AugAssign):
            ok = (isinstance(s.target, ast.Name) and isinstance(s.op, _BINOPS)
                  and _safe(s.value, calls))
        elif isinstance(s, ast.If):
            ok = (_safe(s.test, calls) and _safe_statements(s.body, calls)
                  and _safe_statements(s.orelse, calls))
        elif isinstance(s, ast.Return):
            ok = s.value is not None and _safe(s.value, calls)
        else:
            ok = isinstance(s, ast.Pass)
        if not ok:
            return False
    return True


def _guard(s: ast.stmt) -> bool:
    """Whether ``s`` is ``if test: return value`` with no ``else``."""
    return (isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
            and isinstance(s.body[0], ast.Return) and s.body[0].value is not None)


def _returns(s: ast.stmt) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(s))


def _lower(stmts: list[ast.stmt]) -> list[ast.stmt] | None:
    """``stmts`` with each ``return value`` written ``_dg_v = value`` and nothing after
    it: an ``if`` that returns inside takes the statements after it into each branch.
    ``None`` when a path ends without a return."""
    out: list[ast.stmt] = []
    for k, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            assert s.value is not None
            out.append(ast.copy_location(ast.Assign([ast.Name(RESULT, ast.Store())], s.value), s))
            return out
        if isinstance(s, ast.If) and _returns(s):
            after = stmts[k + 1:]
            body = _lower(s.body + copy.deepcopy(after))
            orelse = _lower(s.orelse + copy.deepcopy(after))
            if body is None or orelse is None:
                return None
            out.append(ast.copy_location(ast.If(s.test, body, orelse), s))
            return out
        out.append(s)
    return None


def stored(nodes: list[ast.stmt]) -> set[str]:
    """The names ``nodes`` assign (or delete)."""
    return {n.id for s in nodes for n in ast.walk(s)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _loaded(nodes: list[ast.AST]) -> set[str]:
    return {n.id for s in nodes for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def speculate(fn: ast.FunctionDef, calls: Collection[str] = ()) -> bool:
    """Rewrite ``fn``'s body, in place, to compute its value whatever the cell and apply
    its guards last, as selects (module docstring); whether it did.  It does not when
    ``fn`` has no guard, when some code in it is not known to be harmless at every cell
    (``calls``: the names of further functions it may call), when a name a guard uses is
    assigned after that guard, or when a path through the body returns no value.

    Examples
    --------
    >>> fn = ast.parse('''
    ... def f(M, i, j, X, Y):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     if X == Y:
    ...         return M + 1
    ...     return max(M, i)
    ... ''').body[0]
    >>> speculate(fn)
    True
    >>> print(ast.unparse(fn))
    def f(M, i, j, X, Y):
        _dg_v = max(M, i)
        _dg_v = M + 1 if X == Y else _dg_v
        _dg_v = 0 if i == 0 or j == 0 else _dg_v
        return _dg_v
    >>> speculate(ast.parse('def g(M, i, j):\\n    if i == 0:\\n        return 0\\n'
    ...                     '    return M // j').body[0])
    False
    """
    body = fn.body
    guards = [s for s in body if _guard(s)]
    if not guards or not _safe_statements(body, calls):
        return False
    if any(_loaded([s]) & stored(body[k + 1:]) for k, s in enumerate(body) if _guard(s)):
        return False
    rest = _lower([s for s in body if not _guard(s)])
    if rest is None:
        return False
    picks: list[ast.stmt] = []
    for g in reversed(guards):
        assert isinstance(g, ast.If) and isinstance(g.body[0], ast.Return)
        value = g.body[0].value
        assert value is not None
        pick = ast.IfExp(g.test, value, ast.Name(RESULT, ast.Load()))
        picks.append(ast.copy_location(ast.Assign([ast.Name(RESULT, ast.Store())], pick), g))
    new = rest + picks + [ast.Return(ast.Name(RESULT, ast.Load()))]
    if sum(1 for s in new for _ in ast.walk(s) if isinstance(_, ast.stmt)) > _MOST:
        return False
    fn.body = new
    return True
