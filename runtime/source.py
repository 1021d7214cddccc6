"""Rewrite a cell function's reads of ``M`` so compiled code can check or redirect them.

The cell function's source is parsed; every load ``M[a, b, ...]`` (``M`` being its first
parameter) becomes ``READ(M, CHECK, x0, x1, ..., a, b, ...)``, where ``x0, x1, ...`` are
the cell's own indices captured on entry and ``CHECK`` is a new last parameter.  The
caller supplies ``READ`` (a numba function) in the namespace; the runtime's checked reads
record the region of every read and flag reads that leave the table.

Assumptions: the function's source can be found (``inspect.getsource``: it was defined in
a file, not typed at a prompt or built with ``exec``) and it reads ``M`` only by plain
subscripts.  Globals and closure variables are copied into the new namespace, so numba
sees the same names (closure values freeze as compile-time constants, as numba does for
closures anyway).
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import textwrap
import types
from collections.abc import Callable, Collection, Sequence
from typing import Any

from runtime import speculate as guards
from runtime.cache import CACHE

__all__ = ["SourceUnavailable", "rewrite_reads", "argument_loads", "runs_anywhere",
           "function_namespace", "constant_offsets", "axis_offsets", "Position", "position"]

CHECK = "_dg_check"
HOISTED = "_dg_arg"
KEPT = "_dg_kept"
NARROW = "_dg_i32"

#: Where a node sits in a parsed source: its class, first line and column, last line and
#: column; the same for a node of each parse of one source.
Position = tuple[str, int, int, int, int]


def position(node: ast.AST) -> Position:
    """The :data:`Position` of ``node``."""
    return (type(node).__name__, node.lineno, node.col_offset, node.end_lineno or 0,
            node.end_col_offset or 0)


class SourceUnavailable(Exception):
    """The cell function's source cannot be found or rewritten."""


def function_namespace(func: Callable[..., Any]) -> dict[str, Any]:
    """The globals a copy of ``func`` needs: its module globals plus its closure values."""
    ns = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            ns[name] = cell.cell_contents
    return ns


def _reads_table(node: ast.Subscript, table: str) -> bool:
    """Whether ``node`` subscripts the table ``table``."""
    return isinstance(node.value, ast.Name) and node.value.id == table


class _Reads(ast.NodeTransformer):
    def __init__(self, table: str, cell: list[str], read: str, index: list[str] = (),
                 kept: Collection[tuple[int, ...]] = ()):
        self.table, self.cell, self.read = table, cell, read
        self.index, self.kept = list(index), list(kept)
        self.count = 0

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if not _reads_table(node, self.table):
            return node
        if not isinstance(node.ctx, ast.Load):
            return node  # a write: the tracer already refuses those
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        self.count += 1
        args = [ast.Name(self.table, ast.Load()), ast.Name(CHECK, ast.Load())]
        offset = tuple(_offset(e, x) for e, x in zip(index, self.index))
        if len(index) == len(self.index) and offset in self.kept:
            args.insert(2, ast.Name(f"{KEPT}{self.kept.index(offset)}", ast.Load()))
            return ast.copy_location(
                ast.Call(ast.Name(f"{self.read}_kept", ast.Load()), args + list(index), []), node)
        args += [ast.Name(c, ast.Load()) for c in self.cell] + list(index)
        return ast.copy_location(ast.Call(ast.Name(self.read, ast.Load()), args, []), node)


class _Narrow(ast.NodeTransformer):
    """Every expression at one of ``positions`` wrapped in ``_dg_i32(...)``, every
    augmented assignment there written ``x = _dg_i32(x op value)``; subscripts' indices
    left alone."""

    def __init__(self, positions: Collection[Position]) -> None:
        self.positions = positions

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.value = self.visit(node.value)
        return self._wrap(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if position(node) not in self.positions:
            return node
        assert isinstance(node.target, ast.Name)  # the only target runtime.narrow proves
        value = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
        call = ast.Call(ast.Name(NARROW, ast.Load()), [value], [])
        return ast.copy_location(ast.Assign([node.target], call), node)

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Subscript) or not isinstance(node, ast.expr):
            return super().visit(node)
        return self._wrap(self.generic_visit(node))

    def _wrap(self, node: ast.expr) -> ast.expr:
        if position(node) not in self.positions:
            return node
        return ast.copy_location(ast.Call(ast.Name(NARROW, ast.Load()), [node], []), node)


def _definition(func: Callable[..., Any], ndim: int) -> ast.FunctionDef:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError) as exc:
        raise SourceUnavailable(f"the source of {func.__name__!r} is not available ({exc})") from None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None or len(fn.args.args) < 1 + ndim:
        raise SourceUnavailable(f"could not find the definition of {func.__name__!r}")
    return fn


def _offset(node: ast.expr, name: str) -> int | None:
    """``k`` when ``node`` is ``name``, ``name + k`` or ``name - k`` (``k`` an int literal)."""
    if isinstance(node, ast.Name) and node.id == name:
        return 0
    if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
            and isinstance(node.left, ast.Name) and node.left.id == name
            and isinstance(node.right, ast.Constant) and type(node.right.value) is int):
        return node.right.value if isinstance(node.op, ast.Add) else -node.right.value
    return None


def _reads(func: Callable[..., Any], ndim: int,
           offset: Callable[[list[ast.expr]], Any]) -> list[Any]:
    """``offset(indices)`` of every read of ``M`` in the cell function (``None``
    when the read does not fit); ``SourceUnavailable`` naming the first read that does
    not fit, an index parameter reassigned, or a use of ``M`` other than a read."""
    fn = _definition(func, ndim)
    params = [a.arg for a in fn.args.args]
    table, index = params[0], params[1:1 + ndim]
    found: list[Any] = []
    subscripts: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in index and not isinstance(node.ctx, ast.Load):
            raise SourceUnavailable(f"index {node.id!r} is reassigned (line {node.lineno})")
        if isinstance(node, ast.Subscript) and _reads_table(node, table):
            subscripts.add(id(node.value))
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            found.append(offset(list(elts)))
            if found[-1] is None:
                raise SourceUnavailable(
                    f"the read {ast.unparse(node)} (line {node.lineno}) is not at a constant offset")
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id == table and id(node) not in subscripts:
            raise SourceUnavailable(f"{table!r} is used other than by reads (line {node.lineno})")
    return found


def constant_offsets(func: Callable[..., Any], ndim: int) -> list[tuple[int, ...]]:
    """The offsets of the cell function's reads of ``M`` when every read is written as
    ``M[x0 + c0, x1 + c1, ...]`` with integer literals ``c`` (``x`` its index parameters,
    never reassigned) and ``M`` is used in no other way: then the reads are the same at
    every size and for every input, whatever the data.  ``SourceUnavailable`` otherwise,
    naming the first read or use that does not fit.

    Examples
    --------
    >>> def f(M, i, j, X):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     return max(M[i - 1, j], M[i, j - 1] + X[i])
    >>> constant_offsets(f, 2)
    [(-1, 0), (0, -1)]

    The offsets (or why they cannot be found) are found once per cell function
    (:func:`_once`), not on every call.
    """

    def build() -> tuple[tuple[int, ...], ...]:
        index = [a.arg for a in _definition(func, ndim).args.args][1:1 + ndim]

        def offsets(elts: list[ast.expr]) -> tuple[int, ...] | None:
            offs = [_offset(e, x) for e, x in zip(elts, index)]
            return None if len(elts) != ndim or None in offs else tuple(int(o or 0) for o in offs)

        return tuple(sorted(set(_reads(func, ndim, offsets))))

    return list(_once(func, ("constant-offsets", ndim), build))


def axis_offsets(func: Callable[..., Any], ndim: int, axis: int) -> list[int]:
    """The offsets along index ``axis`` of the cell function's reads of ``M`` when every
    read's index there is ``x + c`` (an integer literal ``c``), whatever its other
    indices (data-dependent ones included), under the same rules as
    :func:`constant_offsets`; ``SourceUnavailable`` otherwise.

    Examples
    --------
    >>> def knapsack(M, i, j, w, v):
    ...     if i == 0:
    ...         return 0
    ...     if j < w[i]:
    ...         return M[i - 1, j]
    ...     return max(M[i - 1, j], M[i - 1, j - w[i]] + v[i])
    >>> axis_offsets(knapsack, 2, 0)
    [-1]

    Found once per cell function, as :func:`constant_offsets`.
    """

    def build() -> tuple[int, ...]:
        x = [a.arg for a in _definition(func, ndim).args.args][1 + axis]
        return tuple(sorted(set(_reads(func, ndim, lambda elts: _offset(elts[axis], x)
                                       if len(elts) == ndim else None))))

    return list(_once(func, ("axis-offsets", ndim, axis), build))


def _once(func: Callable[..., Any], key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """What ``build`` (which reads ``func``'s source) returns, or the
    ``SourceUnavailable`` it raises, found once per cell function (:data:`CACHE`): the
    fills and the cost model ask again for every frame and on every call."""

    def outcome() -> tuple[bool, Any]:
        try:
            return True, build()
        except SourceUnavailable as exc:
            return False, exc.args

    ok, value = CACHE.get(func, key, outcome)
    if not ok:
        raise SourceUnavailable(*value)
    return value


_INDEX_OPS = (ast.Add, ast.Sub, ast.Mult)


def _index_expr(node: ast.expr, index: set[str]) -> bool:
    """Whether ``node`` is built from the cell's indices and integer literals by ``+``,
    ``-`` and ``*`` alone: computable, and cheap, at the cell's entry."""
    if isinstance(node, ast.Name):
        return node.id in index
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and _index_expr(node.operand, index)
    return (isinstance(node, ast.BinOp) and isinstance(node.op, _INDEX_OPS)
            and _index_expr(node.left, index) and _index_expr(node.right, index))


class _Hoist(ast.NodeTransformer):
    """Loads of the arrays ``arrays`` at index expressions of the cell's indices
    ``index`` (:func:`_index_expr`), each distinct one replaced by the name
    ``_dg_arg{k}``; ``loads`` lists them as ``(array, index expressions)``, ``k`` their
    place in it, the expressions as format strings over the cell's indices (``{0}`` the
    first)."""

    def __init__(self, arrays: set[str], index: list[str]) -> None:
        self.arrays, self.index = arrays, index
        self.loads: dict[tuple[str, tuple[str, ...]], str] = {}

    def _template(self, node: ast.expr) -> str:
        node = copy.deepcopy(node)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                sub.id = f"{{{self.index.index(sub.id)}}}"
        return ast.unparse(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if not (isinstance(node.value, ast.Name) and node.value.id in self.arrays
                and isinstance(node.ctx, ast.Load)):
            return node
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not all(_index_expr(e, set(self.index)) for e in elts):
            return node
        key = (node.value.id, tuple(self._template(e) for e in elts))
        name = self.loads.setdefault(key, f"{HOISTED}{len(self.loads)}")
        return ast.copy_location(ast.Name(name, ast.Load()), node)


def _hoisted(fn: ast.FunctionDef, ndim: int, hoist: Collection[str]) -> _Hoist:
    """The :class:`_Hoist` pass for ``fn`` (not yet run): no array when a hoisted array or
    an index is assigned in the function."""
    params = [a.arg for a in fn.args.args]
    index = params[1:1 + ndim]
    arrays = set(hoist) & set(params[1 + ndim:])
    assigned = guards.stored([fn])
    return _Hoist(set() if assigned & (arrays | set(index)) else arrays, index)


def argument_loads(func: Callable[..., Any], ndim: int,
                   hoist: Collection[str]) -> list[tuple[str, tuple[str, ...]]]:
    """The loads :func:`rewrite_reads` takes out of the cell function for ``hoist``, in
    the order of its extra parameters: ``(array, index expressions)``, the expressions
    as format strings over the cell's indices (``{0}`` the first).

    Examples
    --------
    >>> def f(M, i, j, X, Y):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     return M[i - 1, j] + (X[i - 1] == Y[j - 1]) + X[i - 1] * Y[M[0, 0]]
    >>> argument_loads(f, 2, ("X", "Y"))
    [('X', ('{0} - 1',)), ('Y', ('{1} - 1',))]
    """
    fn = _definition(func, ndim)
    up = _hoisted(fn, ndim, hoist)
    for stmt in fn.body:  # the body only, as rewrite_reads: the same loads in the same order
        up.visit(stmt)
    return list(up.loads)


#: Built-in functions of numbers a cell may call and still run anywhere (:func:`runs_anywhere`).
_PURE_BUILTINS = frozenset({"abs", "min", "max", "int", "float", "bool", "round", "pow"})
#: Modules whose functions a cell may call and still run anywhere.
_PURE_MODULES = frozenset({"math", "cmath", "numpy"})
#: The statements of straight-line code.
_STRAIGHT = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.Return, ast.Expr, ast.Pass)


def runs_anywhere(func: Callable[..., Any], ndim: int, hoist: Collection[str]) -> bool:
    """Whether the cell function, its loads of ``hoist`` taken out (:func:`argument_loads`)
    and its reads of ``M`` served by the caller, may run at indices outside the table and
    on any values read, harmlessly: straight-line code (no loop, ``raise`` or nested
    function), no subscript left but reads of ``M`` and extents ``A.shape[k]`` (``k`` a
    literal), no call but of the built-ins ``abs, min, max, int, float, bool, round, pow``
    and of functions of ``math``, ``cmath`` and ``numpy``.  Such a cell touches no memory
    the caller does not give it and always finishes, so a kernel may compute it past the
    table's edge and drop the value (the register strips' partial blocks,
    :func:`runtime.cuda.strip_fill`).
    ``False`` when the source is not available.

    Examples
    --------
    >>> def f(M, i, j, X, Y):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     return max(M[i - 1, j], M[i - 1, j - 1] + (X[i - 1] == Y[j - 1]))
    >>> runs_anywhere(f, 2, ("X", "Y")), runs_anywhere(f, 2, ("X",))
    (True, False)
    >>> def g(M, i, j, X):
    ...     for k in range(i):
    ...         X[0] += 1
    ...     return M[i - 1, j]
    >>> runs_anywhere(g, 2, ("X",))
    False
    """

    def build() -> bool:
        fn = _definition(func, ndim)
        table = fn.args.args[0].arg
        ns = function_namespace(func)
        up = _hoisted(fn, ndim, hoist)
        body = [up.visit(copy.deepcopy(stmt)) for stmt in fn.body]
        for node in (sub for stmt in body for sub in ast.walk(stmt)):
            if isinstance(node, ast.stmt) and not isinstance(node, _STRAIGHT):
                return False
            if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                 ast.GeneratorExp)):
                return False
            if isinstance(node, ast.Subscript) and not (
                    isinstance(node.ctx, ast.Load) and (_reads_table(node, table)
                                                        or guards.extent(node))):
                return False
            if isinstance(node, ast.Call) and not _pure_call(node.func, ns):
                return False
        return True

    try:
        return bool(_once(func, ("runs-anywhere", ndim, tuple(sorted(hoist))), build))
    except SourceUnavailable:
        return False


def _pure_call(f: ast.expr, ns: dict[str, Any]) -> bool:
    """Whether ``f``, a called expression in a function of namespace ``ns``, names one
    of :data:`_PURE_BUILTINS` or a function of one of :data:`_PURE_MODULES`."""
    if isinstance(f, ast.Name):
        return f.id in _PURE_BUILTINS and ns.get(f.id, getattr(builtins, f.id)) is \
            getattr(builtins, f.id)
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        mod = ns.get(f.value.id)
        return isinstance(mod, types.ModuleType) and mod.__name__ in _PURE_MODULES
    return False


def rewrite_reads(func: Callable[..., Any], ndim: int, read: str, name: str,
                  cell_args: bool = True, hoist: Collection[str] = (),
                  narrow: Collection[Position] = (), speculate: bool = False,
                  kept: Sequence[tuple[int, ...]] = ()) -> str:
    """Source of a copy of ``func`` named ``name`` whose reads of ``M`` call ``read``.

    The call is ``read(M, CHECK, x0, x1, ..., a, b, ...)`` with the cell's own indices
    ``x0, x1, ...``, or ``read(M, CHECK, a, b, ...)`` when ``cell_args`` is false.

    ``hoist`` names array parameters whose loads at index expressions of the cell's
    indices and integer literals (``X[i - 1]``, ``A[i, 2 * j]``) become new last
    parameters ``_dg_arg0, _dg_arg1, ...``, one per distinct load
    (:func:`argument_loads`), so the caller loads them, for instance a step ahead or
    once for a row; nothing is taken out when a hoisted array or an index is assigned in
    the function.

    ``narrow`` (the positions of :class:`runtime.narrow.Narrowing`) wraps the values
    there in ``_dg_i32(...)``, which the caller binds to ``numpy.int32``.

    With ``speculate``, the body is computed whatever the cell and its guards applied
    last, as selects, where :func:`runtime.speculate.speculate` can (for a caller whose
    reads of ``M`` are harmless at any index, and that has checked :func:`runs_anywhere`).

    ``kept`` are offsets from the cell whose values the caller may hold: a read written
    as the cell's indices plus the ``k``-th of them (``M[i - 1, j]`` for ``(-1, 0)``)
    calls ``read_kept(M, CHECK, _dg_kept{k}, a, b, ...)`` instead (``read`` with
    ``_kept`` added), ``_dg_kept{k}`` a new parameter after ``CHECK``; none does when an
    index is assigned in the function.

    Examples
    --------
    >>> def f(M, i, j, w):
    ...     return M[i - 1, j] + w
    >>> print(rewrite_reads(f, 2, "RD", "g"))  # doctest: +NORMALIZE_WHITESPACE
    def g(M, i, j, w, _dg_check):
        _dg_cell0 = i
        _dg_cell1 = j
        return RD(M, _dg_check, _dg_cell0, _dg_cell1, i - 1, j) + w
    >>> print(rewrite_reads(f, 2, "RD", "g", cell_args=False, kept=[(-1, 0)]))
    def g(M, i, j, w, _dg_check, _dg_kept0):
        return RD_kept(M, _dg_check, _dg_kept0, i - 1, j) + w
    """
    fn = _definition(func, ndim)
    params = [a.arg for a in fn.args.args]
    cell = [f"_dg_cell{k}" for k in range(ndim)]
    index = params[1:1 + ndim]
    if guards.stored([fn]) & set(index):
        kept = ()  # an offset from a reassigned index is not one from the cell
    tr = _Reads(params[0], cell if cell_args else [], read, index, kept)
    to_int32 = _Narrow(narrow)
    body = [tr.visit(to_int32.visit(stmt)) for stmt in fn.body]
    entry = [
        ast.Assign([ast.Name(c, ast.Store())], ast.Name(params[1 + k], ast.Load()))
        for k, c in enumerate(cell)
    ]
    up = _hoisted(fn, ndim, hoist)
    body = [up.visit(stmt) for stmt in body]
    fn.body = (entry if cell_args else []) + body
    if speculate:
        guards.speculate(fn, (read, f"{read}_kept", NARROW))
    fn.decorator_list = []
    fn.name = name
    fn.args.args += ([ast.arg(CHECK)] + [ast.arg(f"{KEPT}{k}") for k in range(len(kept))]
                     + [ast.arg(v) for v in up.loads.values()])
    fn.returns = None
    return ast.unparse(ast.fix_missing_locations(ast.Module([fn], type_ignores=[])))
