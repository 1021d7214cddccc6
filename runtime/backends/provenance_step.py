"""A compiled provenance step: the cells a cell's returned value was computed from, as
the solution walk's Python step finds them (:mod:`depgraph.frontend.provenance`), from
a translation of the cell function's source.

Every value the translated function computes that may come from ``M`` is a pair
``(value, reads)``, ``reads`` a tuple ``(count, c0, .., c{CAP-1})`` of the table's flat
cell indices (C order), so the step follows the Python rules of ``_Tracked``: a read of
``M`` carries that one cell; ``+ - * / // %`` and unary ``-``, ``+``, ``abs`` carry the
union of their operands' reads (left's first, no repeats); Python's ``max`` and ``min``
return the winning operand with its reads (the first on a tie, as ``b > a`` decides
``max(a, b)``); a comparison with a read operand sets the step's *compared* flag and
gives a plain bool; ``int()``, ``float()``, ``bool()``, ``not`` give plain values, as
the Python step's ``__int__``, ``__float__`` and ``__bool__`` do; control flow runs as
written, so an untaken branch reads nothing.  Values that no read reaches (the cell's
indices, literals, the arguments' elements) stay plain, computed as written.

The step stops, setting ``st[STOP]`` and ``st[WHY]``, where it cannot go on exactly:
``OUTSIDE`` for a read of a cell in the table but outside the window of cells it was
given (the walk asks for another), ``PYTHON`` where the Python step must run the cell:
a read outside the table or of an argument out of its bounds (the Python step raises
the walk's error), a union of more than :data:`CAP` reads, a read value given to an
operation the rules above do not cover (``**``, bit operations, ``round``, a call of
another function: the Python step knows what they do with it).  A construct the
translation does not take (a comprehension, a subscript store, a tuple, an attribute of
a computed value, ``max`` of one iterable, ...) raises :class:`NotCompiled`: the whole
walk is then the Python one.

Assumptions: the cell function reads ``M`` only by subscripts of one cell each (the IR
refuses others); its table holds integers of at most 32 bits, or 64-bit floats (the
Python step's values then compare and add as the compiled ones do: a read is widened
to 64 bits as the Python step turns it into a Python number); no intermediate integer
leaves 64 bits (Python's would not wrap).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR, subscript_elements
from runtime.backends.emit import Emitter

__all__ = ["CAP", "STOP", "COMPARED", "WHY", "OUTSIDE", "PYTHON", "NotCompiled",
           "helpers_source", "step_source", "wide_type"]

#: The most reads a value carries in the compiled step; a union past it stops the step.
CAP = 4
#: The slots of the step's ``st``: stopped, compared, and why it stopped.
STOP, COMPARED, WHY = 0, 1, 2
#: Why a step stopped: a read outside its window; the Python step must run the cell.
OUTSIDE, PYTHON = 1, 2

_ARITH = {ast.Add: ("add", "+"), ast.Sub: ("sub", "-"), ast.Mult: ("mul", "*"),
          ast.Div: ("div", "/"), ast.FloorDiv: ("floordiv", "//"), ast.Mod: ("mod", "%")}
_OPAQUE = {ast.Pow: ("pow", "**"), ast.LShift: ("lshift", "<<"), ast.RShift: ("rshift", ">>"),
           ast.BitOr: ("bitor", "|"), ast.BitAnd: ("bitand", "&"), ast.BitXor: ("bitxor", "^")}
_COMPARE = {ast.Lt: ("lt", "<"), ast.LtE: ("le", "<="), ast.Gt: ("gt", ">"),
            ast.GtE: ("ge", ">="), ast.Eq: ("eq", "=="), ast.NotEq: ("ne", "!=")}
_EMPTY = "_dg_E"


class NotCompiled(Exception):
    """A construct of the cell function the translation does not take."""


def wide_type(dtype: np.dtype) -> type | None:
    """The type a read of a table of ``dtype`` is widened to in the step (``None``:
    a table the step does not serve, whose values the Python step computes with in
    ways the compiled one would not match).

    Examples
    --------
    >>> wide_type(np.dtype(np.int32)), wide_type(np.dtype(np.float64)), wide_type(np.dtype(np.float32))
    (<class 'numpy.int64'>, <class 'numpy.float64'>, None)
    """
    if dtype.kind == "i" or dtype.kind == "u" and dtype.itemsize < 8:
        return np.int64
    return np.float64 if dtype == np.float64 else None


def helpers_source(ndim: int) -> str:
    """Source of the helpers the translated step calls, for a table of ``ndim``
    dimensions (module docstring); names ``_dg_E`` (no reads), ``_dg_WIDE`` and
    ``_dg_ZERO`` (the widened type and its zero) are the caller's to bind."""
    e = Emitter()
    slots = [f"r{k}" for k in range(CAP)]
    with e.block("def _dg_union(st, a, b)"):
        e("if b[0] == 0:", "    return a", "if a[0] == 0:", "    return b",
          "n = a[0]", f"{', '.join(slots)} = {', '.join(f'a[{k + 1}]' for k in range(CAP))}")
        with e.block("for q in range(b[0])"):
            e("x = b[1 + q]")
            held = " or ".join(f"(n > {k} and x == r{k})" for k in range(CAP))
            with e.block(f"if {held}"):
                e("continue")
            with e.block(f"if n == {CAP}"):
                e(f"st[{STOP}] = 1", f"st[{WHY}] = {PYTHON}", "return a")
            for k in range(1, CAP):
                with e.block(f"{'if' if k == 1 else 'elif'} n == {k}"):
                    e(f"r{k} = x")
            e("n += 1")
        e(f"return (n, {', '.join(slots)})")
    for name, op in _ARITH.values():
        with e.block(f"def _dg_{name}(st, a, b)"):
            e(f"return (a[0] {op} b[0], _dg_union(st, a[1], b[1]))")
    with e.block("def _dg_plain(st, a)"):  # a value the rules do not follow: read, stop
        with e.block("if a[1][0] > 0"):
            e(f"st[{STOP}] = 1", f"st[{WHY}] = {PYTHON}")
        e("return a[0]")
    for name, op in _OPAQUE.values():
        with e.block(f"def _dg_{name}(st, a, b)"):
            e(f"return (_dg_plain(st, a) {op} _dg_plain(st, b), {_EMPTY})")
    for name, op in _COMPARE.values():
        with e.block(f"def _dg_{name}(st, a, b)"):
            with e.block("if a[1][0] > 0 or b[1][0] > 0"):
                e(f"st[{COMPARED}] = 1")
            e(f"return a[0] {op} b[0]")
    for name, op in (("max", ">"), ("min", "<")):  # Python's: the item replaces the best
        with e.block(f"def _dg_{name}(st, a, b)"):
            with e.block("if a[1][0] > 0 or b[1][0] > 0"):
                e(f"st[{COMPARED}] = 1")
            e(f"return b if b[0] {op} a[0] else a")
    with e.block("def _dg_neg(a)"):
        e("return (-a[0], a[1])")
    with e.block("def _dg_abs(a)"):
        e("return (abs(a[0]), a[1])")
    with e.block("def _dg_truth(a)"):
        e("return bool(a[0])")
    reads = [f"a{k}" for k in range(ndim)]
    with e.block(f"def _dg_read(M, st, o, n, {', '.join(reads)})"):
        outside = " or ".join(f"{a} < 0 or {a} >= n[{k}]" for k, a in enumerate(reads))
        with e.block(f"if {outside}"):
            e(f"st[{STOP}] = 1", f"st[{WHY}] = {PYTHON}", f"return (_dg_ZERO, {_EMPTY})")
        e(*(f"u{k} = {a} - o[{k}]" for k, a in enumerate(reads)))
        away = " or ".join(f"u{k} < 0 or u{k} >= M.shape[{k}]" for k in range(ndim))
        with e.block(f"if {away}"):
            e(f"st[{STOP}] = 1", f"st[{WHY}] = max(st[{WHY}], {OUTSIDE})",
              f"return (_dg_ZERO, {_EMPTY})")
        flat = reads[0]
        for k in range(1, ndim):
            flat = f"({flat}) * n[{k}] + {reads[k]}"
        e(f"return (_dg_WIDE(M[{', '.join(f'u{k}' for k in range(ndim))}]), "
          f"(1, {flat}{', 0' * (CAP - 1)}))")
    return e.source


def arg_helper_source(count: int) -> str:
    """Source of ``_dg_arg{count}(X, st, a0, ..)``: an argument's element, or a stop
    where Python's indexing would fail (``-n <= a < n`` along each axis)."""
    index = [f"a{k}" for k in range(count)]
    e = Emitter()
    with e.block(f"def _dg_arg{count}(X, st, {', '.join(index)})"):
        bad = " or ".join(f"{a} < -X.shape[{k}] or {a} >= X.shape[{k}]"
                          for k, a in enumerate(index))
        with e.block(f"if {bad}"):
            e(f"st[{STOP}] = 1", f"st[{WHY}] = {PYTHON}", f"return X[{', '.join('0' * count)}]")
        e(f"return X[{', '.join(index)}]")
    return e.source


class _Translate:
    """The translation of one cell function (:func:`step_source`)."""

    def __init__(self, ir: CellIR, arrays: frozenset[str], namespace: Mapping[str, Any]):
        fn = ir.definition()
        self.fn, self.table, self.arrays, self.ns = fn, ir.table, arrays, namespace
        self.params, self.ndim = [*ir.index, *ir.params], ir.ndim
        targets: dict[str, set[str]] = {}  # each local: how it is assigned
        for node in ast.walk(fn):
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                targets.setdefault(node.target.id, set()).add("for")
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    for name in ast.walk(t):
                        if isinstance(name, ast.Name):
                            targets.setdefault(name.id, set()).add("set")
        #: Locals holding pairs: every name assigned other than as a loop's counter.
        self.pairs = {name for name, how in targets.items() if "set" in how}
        self.locals = set(targets)
        self.counters = 0
        self.args_used: set[int] = set()

    def temp(self) -> str:
        self.counters += 1
        return f"_dg_t{self.counters}"

    # -- expressions: (source, whether it is a pair) -------------------------------------

    def lift(self, node: ast.expr) -> str:
        text, pair = self.expr(node)
        return text if pair else f"({text}, {_EMPTY})"

    def value(self, node: ast.expr) -> str:
        """A plain value, as Python would use a read one there (an index, a range)."""
        text, pair = self.expr(node)
        return f"{text}[0]" if pair else text

    def truth(self, node: ast.expr) -> str:
        text, pair = self.expr(node)
        return f"_dg_truth({text})" if pair else f"({text})"

    def expr(self, node: ast.expr) -> tuple[str, bool]:
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise NotCompiled(f"{type(node).__name__} at line {getattr(node, 'lineno', '?')}")
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> tuple[str, bool]:
        if type(node.value) not in (int, float, bool):
            raise NotCompiled(f"the constant {node.value!r}")
        return repr(node.value), False

    def expr_Name(self, node: ast.Name) -> tuple[str, bool]:
        if node.id == self.table:
            raise NotCompiled(f"{self.table} used other than by a read")
        return node.id, node.id in self.pairs

    def expr_Attribute(self, node: ast.Attribute) -> tuple[str, bool]:
        base = node.value
        if isinstance(base, ast.Name) and base.id == self.table and node.attr == "shape":
            return "_dg_n", False
        if not isinstance(base, ast.Name) or base.id == self.table or base.id in self.locals:
            raise NotCompiled(f"the attribute {ast.unparse(node)}")
        return ast.unparse(node), False

    def expr_Subscript(self, node: ast.Subscript) -> tuple[str, bool]:
        index = subscript_elements(node)
        if any(isinstance(x, (ast.Slice, ast.Starred)) for x in index):
            raise NotCompiled(f"the slice {ast.unparse(node)}")
        values = ", ".join(self.value(x) for x in index)
        base = node.value
        if isinstance(base, ast.Name) and base.id == self.table:
            if len(index) != self.ndim:
                raise NotCompiled(f"the read {ast.unparse(node)} of {self.ndim} indices")
            return f"_dg_read({self.table}, _dg_st, _dg_o, _dg_n, {values})", True
        if isinstance(base, ast.Name) and base.id in self.arrays and base.id not in self.locals:
            self.args_used.add(len(index))
            return f"_dg_arg{len(index)}({base.id}, _dg_st, {values})", False
        if isinstance(base, ast.Attribute) and base.attr == "shape" and len(index) == 1:
            return f"{self.expr(base)[0]}[{values}]", False
        raise NotCompiled(f"the subscript {ast.unparse(node)}")

    def expr_BinOp(self, node: ast.BinOp) -> tuple[str, bool]:
        (a, pa), (b, pb) = self.expr(node.left), self.expr(node.right)
        names = _ARITH.get(type(node.op)) or _OPAQUE.get(type(node.op))
        if names is None:
            raise NotCompiled(f"the operator of {ast.unparse(node)}")
        if not (pa or pb):
            return f"({a} {names[1]} {b})", False
        return f"_dg_{names[0]}(_dg_st, {self.lift(node.left)}, {self.lift(node.right)})", True

    def expr_UnaryOp(self, node: ast.UnaryOp) -> tuple[str, bool]:
        a, pair = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            return f"(not {self.truth(node.operand)})", False
        if not pair:
            return f"({_UNARY[type(node.op)]}{a})", False
        if isinstance(node.op, ast.UAdd):
            return a, True
        if isinstance(node.op, ast.USub):
            return f"_dg_neg({a})", True
        return f"(~_dg_plain(_dg_st, {a}), {_EMPTY})", True

    def expr_Compare(self, node: ast.Compare) -> tuple[str, bool]:
        sides = [node.left, *node.comparators]
        kinds = [self.expr(s)[1] for s in sides]
        if not any(kinds):
            if not all(type(op) in _COMPARE for op in node.ops):
                raise NotCompiled(f"the comparison {ast.unparse(node)}")
            return f"({ast.unparse(self._plain_copy(node))})", False
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
            raise NotCompiled(f"the comparison {ast.unparse(node)}")
        name = _COMPARE[type(node.ops[0])][0]
        return f"_dg_{name}(_dg_st, {self.lift(node.left)}, {self.lift(node.comparators[0])})", False

    def _plain_copy(self, node: ast.Compare) -> ast.expr:
        """``node`` with each side written as translated (all plain)."""
        sides = [ast.parse(self.expr(s)[0], mode="eval").body
                 for s in [node.left, *node.comparators]]
        return ast.Compare(sides[0], node.ops, sides[1:])

    def expr_BoolOp(self, node: ast.BoolOp) -> tuple[str, bool]:
        if not any(self.expr(v)[1] for v in node.values):
            joined = f" {'and' if isinstance(node.op, ast.And) else 'or'} ".join(
                f"({self.expr(v)[0]})" for v in node.values)
            return f"({joined})", False
        rest = node.values[-1]
        text = self.lift(rest)
        for first in reversed(node.values[:-1]):  # a and (b and c): the same value
            t = self.temp()
            head = f"_dg_truth(({t} := {self.lift(first)}))"
            text = (f"({text} if {head} else {t})" if isinstance(node.op, ast.And)
                    else f"({t} if {head} else {text})")
        return text, True

    def expr_IfExp(self, node: ast.IfExp) -> tuple[str, bool]:
        test = self.truth(node.test)
        (a, pa), (b, pb) = self.expr(node.body), self.expr(node.orelse)
        if not (pa or pb):
            return f"({a} if {test} else {b})", False
        return f"({self.lift(node.body)} if {test} else {self.lift(node.orelse)})", True

    def expr_Call(self, node: ast.Call) -> tuple[str, bool]:
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise NotCompiled(f"the call {ast.unparse(node)}")
        func = node.func
        name = func.id if isinstance(func, ast.Name) and func.id not in self.locals else None
        builtin = name is not None and self.ns.get(name, getattr(builtins, name, None)) \
            is getattr(builtins, name, object())
        kinds = [self.expr(a)[1] for a in node.args]
        if builtin and name in ("max", "min") and len(node.args) >= 2 and not node.keywords:
            if not any(kinds):
                return f"{name}({', '.join(self.expr(a)[0] for a in node.args)})", False
            text = self.lift(node.args[0])
            for a in node.args[1:]:
                text = f"_dg_{name}(_dg_st, {text}, {self.lift(a)})"
            return text, True
        if builtin and name == "abs" and len(node.args) == 1 and not node.keywords and kinds[0]:
            return f"_dg_abs({self.expr(node.args[0])[0]})", True
        if builtin and name in ("int", "float", "bool") and len(node.args) == 1 \
                and not node.keywords:
            return f"{name}({self.value(node.args[0])})", False
        if builtin and name in ("max", "min", "range"):
            raise NotCompiled(f"the call {ast.unparse(node)}")
        if name is None and not isinstance(func, ast.Attribute):
            raise NotCompiled(f"the call {ast.unparse(node)}")
        callee = name if name is not None else self.expr(func)[0]
        args = [f"_dg_plain(_dg_st, {t})" if pair else t
                for t, pair in (self.expr(a) for a in node.args)]
        for kw in node.keywords:
            if kw.arg is None:
                raise NotCompiled(f"the call {ast.unparse(node)}")
            t, pair = self.expr(kw.value)
            args.append(f"{kw.arg}={f'_dg_plain(_dg_st, {t})' if pair else t}")
        return f"{callee}({', '.join(args)})", False

    # -- statements -----------------------------------------------------------------------

    def body(self, e: Emitter, stmts: list[ast.stmt]) -> None:
        """``stmts`` translated, or ``pass`` where they add no line."""
        lines = len(e.lines)
        for stmt in stmts:
            method = getattr(self, f"stmt_{type(stmt).__name__}", None)
            if method is None:
                raise NotCompiled(f"the statement {type(stmt).__name__} at line {stmt.lineno}")
            method(e, stmt)
        if len(e.lines) == lines:
            e("pass")

    def stmt_Return(self, e: Emitter, node: ast.Return) -> None:
        if node.value is None:
            raise NotCompiled(f"a return of nothing at line {node.lineno}")
        text, pair = self.expr(node.value)
        if pair:
            e(f"return {text}[1]")
        else:  # evaluated all the same: an argument's read may fail there
            t = self.temp()
            e(f"{t} = {text}", f"return {_EMPTY}")

    def _target(self, target: ast.expr) -> str:
        if not isinstance(target, ast.Name) or target.id == self.table:
            raise NotCompiled(f"the assignment to {ast.unparse(target)}")
        return target.id

    def stmt_Assign(self, e: Emitter, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise NotCompiled(f"the assignment at line {node.lineno}")
        e(f"{self._target(node.targets[0])} = {self.lift(node.value)}")

    def stmt_AnnAssign(self, e: Emitter, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        e(f"{self._target(node.target)} = {self.lift(node.value)}")

    def stmt_AugAssign(self, e: Emitter, node: ast.AugAssign) -> None:
        name = self._target(node.target)
        binop = ast.BinOp(ast.Name(name, ast.Load()), node.op, node.value)
        text, pair = self.expr_BinOp(binop)
        e(f"{name} = {text if pair else f'({text}, {_EMPTY})'}")

    def stmt_If(self, e: Emitter, node: ast.If) -> None:
        with e.block(f"if {self.truth(node.test)}"):
            self.body(e, node.body)
        if node.orelse:
            with e.block("else"):
                self.body(e, node.orelse)

    def stmt_While(self, e: Emitter, node: ast.While) -> None:
        if node.orelse:
            raise NotCompiled(f"while ... else at line {node.lineno}")
        # a stopped step reads stand-ins, on which a loop bounded by reads may not end
        with e.block(f"while _dg_st[{STOP}] == 0 and {self.truth(node.test)}"):
            self.body(e, node.body)

    def stmt_For(self, e: Emitter, node: ast.For) -> None:
        it = node.iter
        if node.orelse or not isinstance(node.target, ast.Name) or not (
                isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id == "range" and "range" not in self.locals
                and self.ns.get("range", range) is range and not it.keywords
                and 1 <= len(it.args) <= 3):
            raise NotCompiled(f"the loop at line {node.lineno} (a for over range alone)")
        bounds = ", ".join(self.value(a) for a in it.args)
        name = node.target.id
        if name in self.pairs:
            t = self.temp()
            with e.block(f"for {t} in range({bounds})"):
                e(f"{name} = ({t}, {_EMPTY})")
                self.body(e, node.body)
        else:
            with e.block(f"for {name} in range({bounds})"):
                self.body(e, node.body)

    def stmt_Expr(self, e: Emitter, node: ast.Expr) -> None:
        if not isinstance(node.value, ast.Constant):
            raise NotCompiled(f"the expression statement at line {node.lineno}")

    def stmt_Pass(self, e: Emitter, node: ast.Pass) -> None:
        """Nothing (an empty block gets its ``pass`` from :meth:`body`)."""

    def stmt_Break(self, e: Emitter, node: ast.Break) -> None:
        e("break")

    def stmt_Continue(self, e: Emitter, node: ast.Continue) -> None:
        e("continue")

    def function(self) -> str:
        head = []
        for p in self.params:  # a parameter assigned in the body holds pairs from entry
            head.append(f"_dg_in_{p}" if p in self.pairs else p)
        e = Emitter()
        with e.block(f"def _dg_step({self.table}, _dg_st, _dg_o, _dg_n, {', '.join(head)})"):
            for p in self.params:
                if p in self.pairs:
                    e(f"{p} = (_dg_in_{p}, {_EMPTY})")
            self.body(e, self.fn.body)
            e(f"return {_EMPTY}")
        return e.source


_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}


def step_source(ir: CellIR, arrays: frozenset[str], namespace: Mapping[str, Any]
                ) -> tuple[str, set[int]]:
    """Source of ``_dg_step(M, _dg_st, _dg_o, _dg_n, *index, *args)``, the compiled provenance step of
    the cell function read as ``ir`` (module docstring): the reads tuple of the value it
    returns for the cell ``index``, its reads of ``M`` served from the window ``M`` whose
    first cell is the table's ``o`` (a table of shape ``n``), ``st`` its flags; and the
    counts of indices its reads of the argument arrays ``arrays`` (parameter names) use
    (each needs ``_dg_arg{count}``, :func:`arg_helper_source`).  ``namespace``: the
    function's globals, to tell Python's ``max``, ``min`` and ``range`` from others.
    :class:`NotCompiled` for a construct it does not take.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def lcs(M, i, j, X, Y):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     if X[i - 1] == Y[j - 1]:
    ...         return M[i - 1, j - 1] + 1
    ...     return max(M[i - 1, j], M[i, j - 1])
    >>> src, counts = step_source(read_cell(lcs, 2), frozenset({"X", "Y"}), {})
    >>> print(src, end="")  # doctest: +NORMALIZE_WHITESPACE
    def _dg_step(M, _dg_st, _dg_o, _dg_n, i, j, X, Y):
        if ((((i == 0)) or ((j == 0)))):
            _dg_t1 = 0
            return _dg_E
        if ((_dg_arg1(X, _dg_st, i - 1) == _dg_arg1(Y, _dg_st, j - 1))):
            return _dg_add(_dg_st, _dg_read(M, _dg_st, _dg_o, _dg_n, (i - 1), (j - 1)), (1, _dg_E))[1]
        return _dg_max(_dg_st, _dg_read(M, _dg_st, _dg_o, _dg_n, (i - 1), j), _dg_read(M, _dg_st, _dg_o, _dg_n, i, (j - 1)))[1]
        return _dg_E
    >>> counts
    {1}
    """
    if ir.hidden:
        raise NotCompiled(ir.hidden)
    tr = _Translate(ir, arrays, namespace)
    return tr.function(), tr.args_used
