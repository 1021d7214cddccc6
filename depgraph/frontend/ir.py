"""The cell IR: what a cell function's source says about it, read once.

:func:`read_cell` parses the cell function once into a frozen :class:`CellIR`, which the
planner, the backends, the analysis and the views take as input instead of reading the
source again:

- ``reads``: every subscript of ``M`` in the source, in the order of ``ast.walk``: its
  index expressions (source text) and, per axis, its constant offset from the cell's own
  index (``M[i - 1, j]``: ``(-1, 0)``), ``None`` where the index is not the cell's index
  plus an integer literal (``M[i - 1, j - w[i]]``: ``(-1, None)``);
- ``opaque``: why the subscripts of ``M`` in the source may not be all it reads, or write
  (``M`` used other than by reads, an index reassigned), ``None`` when they are;
- ``loads``: the distinct loads of the cell's array parameters at index expressions of its
  indices and integer literals (``X[i - 1]``, ``A[i, 2 * j]``), which a kernel may make
  for the cell (a step ahead, once a row): the values its reads of ``M`` may depend on;
- ``guards``: the body's top-level ``if test: return value`` statements;
- ``straight``: whether the body is straight-line code that calls only pure functions;
  with :meth:`CellIR.runs_anywhere`, whether it may run at any index, harmlessly;
- ``pure``: whether the body writes no array: no store into a subscript, and no call but
  built-ins and numpy's or math's functions that write none, so a kernel's arrays are
  written by the kernel alone.

The IR holds what the *source* proves, whatever the size and the data.  The trace
(:mod:`depgraph.frontend.trace`) stays the ground truth for reads that depend on data; the
IR says which reads it could not prove (:meth:`CellIR.constant_offsets` raises
``SourceUnavailable`` naming the first).  A function whose source is not available gets
an IR with ``source`` ``None`` and ``unavailable`` saying why; every fact then asks the
trace.

Assumptions: the cell function is the one :func:`depgraph.recurrence` wrapped, its first
parameter the table and the next ``ndim`` its indices.
"""

from __future__ import annotations

import ast
import builtins
import copy
import types
import weakref
from collections.abc import Callable, Collection
from itertools import product
from dataclasses import dataclass
from typing import Any

from depgraph.frontend.source import (
    SourceUnavailable,
    definition_source,
    function_namespace,
)
from depgraph.model import Recurrence
from patterns import region_of

__all__ = ["Read", "Load", "Guard", "CellIR", "read_cell", "cell_ir", "index_offset",
           "range_parts", "is_extent", "LoadFinder", "HOISTED"]

#: The name prefix a hoisted load's value takes in a rewritten cell (``_dg_arg0``, ...).
HOISTED = "_dg_arg"
#: Built-in functions of numbers a cell may call and still run anywhere.
_PURE_BUILTINS = frozenset({"abs", "min", "max", "int", "float", "bool", "round", "pow"})
#: Modules whose functions a cell may call and still run anywhere.
_PURE_MODULES = frozenset({"math", "cmath", "numpy"})
#: The statements of straight-line code.
_STRAIGHT = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.Return, ast.Expr, ast.Pass)
_INDEX_OPS = (ast.Add, ast.Sub, ast.Mult)


@dataclass(frozen=True)
class Read:
    """One subscript of ``M`` in the source.

    ``index``: its index expressions as source text; ``offsets``: each axis's constant
    offset from the cell's own index, ``None`` where there is none (all ``None`` when the
    number of indices is not the table's); ``text``: the subscript; ``line``: its line in
    the definition (the ``def`` or its first decorator is line 1); ``order``: its place in
    the walk of the definition (:attr:`CellIR.reassigned` shares it); ``one_cell``: whether
    it names one cell (one index per axis, none a slice or starred).
    """

    index: tuple[str, ...]
    offsets: tuple[int | None, ...]
    text: str
    line: int
    order: int
    one_cell: bool

    @property
    def constant(self) -> bool:
        """Whether every axis has a constant offset."""
        return None not in self.offsets


@dataclass(frozen=True)
class Load:
    """A load of the array parameter ``array`` at index expressions of the cell's
    indices: ``index`` as format strings over the indices (``{0}`` the first)."""

    array: str
    index: tuple[str, ...]


@dataclass(frozen=True)
class Guard:
    """A top-level ``if test: return value`` of the body, as source text."""

    test: str
    value: str
    line: int


@dataclass(frozen=True, eq=False)
class CellIR:
    """What the cell function's source says (module docstring).  ``other_use`` is the
    line of the first use of ``M`` other than a read, ``escape`` of the first other than
    a read or an extent (``M.shape``); ``None`` when there is none.

    Examples
    --------
    >>> def knapsack(M, i, j, w, v):
    ...     if i == 0:
    ...         return 0
    ...     if j < w[i]:
    ...         return M[i - 1, j]
    ...     return max(M[i - 1, j], M[i - 1, j - w[i]] + v[i])
    >>> ir = read_cell(knapsack, 2)
    >>> [r.offsets for r in ir.reads]
    [(-1, 0), (-1, 0), (-1, None)]
    >>> ir.axis_offsets(0), ir.guards[0].test
    ((-1,), 'i == 0')
    >>> ir.constant_offsets()
    Traceback (most recent call last):
    ...
    depgraph.frontend.source.SourceUnavailable: the read M[i - 1, j - w[i]] (line 6) is not at a constant offset
    """

    func: Callable[..., Any]
    ndim: int
    source: str | None
    unavailable: str | None
    table: str
    index: tuple[str, ...]
    params: tuple[str, ...]
    reads: tuple[Read, ...]
    reassigned: tuple[tuple[str, int, int], ...]
    other_use: int | None
    escape: int | None
    loads: tuple[Load, ...]
    unhoistable: bool
    assigned: frozenset[str]
    guards: tuple[Guard, ...]
    straight: bool
    pure: bool

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def opaque(self) -> str | None:
        """Why the subscripts of ``M`` in the source may not be all it reads, or ``None``."""
        if self.unavailable:
            return self.unavailable
        if self.reassigned:
            name, line, _ = self.reassigned[0]
            return f"index {name!r} is reassigned (line {line})"
        if self.other_use is not None:
            return f"{self.table!r} is used other than by reads (line {self.other_use})"
        return None

    @property
    def hidden(self) -> str | None:
        """Why redirecting the subscripts of ``M`` in the source would not catch every
        read and write of ``M`` the cell makes, or ``None``: no source, ``M`` used other
        than by reads and its extents (``M.shape``: written, aliased, passed to a
        function), or a read of more than one cell (a slice).  Compiled code that checks
        or serves the reads needs ``None``.

        Examples
        --------
        >>> def alias(M, i, j):
        ...     T = M
        ...     return T[i - 1, j]
        >>> def rows(M, i, j):
        ...     return M[i - 1, :].max()
        >>> read_cell(alias, 2).hidden, read_cell(rows, 2).hidden
        ("'M' is used other than by reads (line 2)", 'the read M[i - 1, :] (line 2) is not of one cell')
        """
        if self.unavailable:
            return self.unavailable
        if self.escape is not None:
            return f"{self.table!r} is used other than by reads (line {self.escape})"
        partial = next((r for r in self.reads if not r.one_cell), None)
        if partial is not None:
            return f"the read {partial.text} (line {partial.line}) is not of one cell"
        return None

    def definition(self) -> ast.FunctionDef:
        """A fresh parse of the ``def`` (callers may change it); ``SourceUnavailable``
        without source."""
        if self.source is None:
            raise SourceUnavailable(self.unavailable or "no source")
        fn = next(n for n in ast.parse(self.source).body if isinstance(n, ast.FunctionDef))
        return fn

    def _offsets(self, offset: Callable[[Read], Any], extents: bool = False) -> tuple[Any, ...]:
        """``offset(read)`` of every read, in walk order, sorted and distinct;
        ``SourceUnavailable`` naming the first obstacle in walk order: an index
        reassigned, or a read ``offset`` gives ``None`` for; then a use of ``M`` other
        than a read (or, with ``extents``, other than a read or ``M.shape``)."""
        if self.source is None:
            raise SourceUnavailable(self.unavailable or "no source")
        events = sorted([(r.order, r) for r in self.reads]
                        + [(o, (name, line)) for name, line, o in self.reassigned],
                        key=lambda e: e[0])
        found = []
        for _, event in events:
            if isinstance(event, tuple):
                raise SourceUnavailable(f"index {event[0]!r} is reassigned (line {event[1]})")
            value = offset(event)
            if value is None:
                raise SourceUnavailable(
                    f"the read {event.text} (line {event.line}) is not at a constant offset")
            found.append(value)
        other = self.escape if extents else self.other_use
        if other is not None:
            raise SourceUnavailable(f"{self.table!r} is used other than by reads (line {other})")
        return tuple(sorted(set(found)))

    def constant_offsets(self) -> tuple[tuple[int, ...], ...]:
        """The distinct offsets of the reads of ``M`` when every read is written
        ``M[x0 + c0, x1 + c1, ...]`` with integer literals ``c`` (``x`` the index
        parameters, never reassigned) and ``M`` is used in no other way: then the reads
        are the same at every size and for every input.  ``SourceUnavailable``
        otherwise, naming the first read or use that does not fit.

        Examples
        --------
        >>> def f(M, i, j, X):
        ...     if i == 0 or j == 0:
        ...         return 0
        ...     return max(M[i - 1, j], M[i, j - 1] + X[i])
        >>> read_cell(f, 2).constant_offsets()
        ((-1, 0), (0, -1))
        """
        return self._offsets(lambda r: r.offsets if r.constant else None)

    def axis_offsets(self, axis: int) -> tuple[int, ...]:
        """The distinct offsets along index ``axis`` of the reads of ``M`` when every
        read's index there is ``x + c`` (an integer literal ``c``), whatever its other
        indices (data-dependent ones included), under the rules of
        :meth:`constant_offsets`; ``SourceUnavailable`` otherwise."""
        return self._offsets(lambda r: r.offsets[axis])

    def read_offsets(self) -> tuple[tuple[int | None, ...], ...]:
        """The distinct offsets of the reads of ``M`` from the cell, an integer along each
        axis whose index is ``x + c`` (an integer literal ``c``) and ``None`` along the
        others (a read's place there depends on the cell or on data), any number of
        dimensions; under the rules of :meth:`possible_regions` (``SourceUnavailable``
        for a read the source hides, or one that does not name one cell).

        Examples
        --------
        >>> def fw(M, k, i, j):
        ...     return min(M[k - 1, i, j], M[k - 1, i, k - 1] + M[k - 1, k - 1, j])
        >>> read_cell(fw, 3).read_offsets()
        ((-1, 0, 0), (-1, 0, None), (-1, None, 0))
        """
        def coded(read: Read) -> tuple[tuple[bool, int], ...] | None:
            if not read.one_cell or len(read.offsets) != self.ndim:
                return None
            return tuple((d is None, d or 0) for d in read.offsets)  # sortable

        return tuple(tuple(None if unknown else d for unknown, d in found)
                     for found in self._offsets(coded, extents=True))

    def possible_regions(self) -> tuple[str, ...]:
        """The regions (:data:`patterns.REGIONS`, ``"Self"`` included) the reads of a 2-D
        table's ``M`` may fall in, from each axis's constant offset: an axis without one
        (``M[i - 1, j - w[i]]``) may go either way or stay.  Under the rules of
        :meth:`constant_offsets` (``M.shape`` allowed too), so no read the source hides
        is left out; ``SourceUnavailable`` otherwise.

        Examples
        --------
        >>> def f(M, i, j, w):
        ...     return M[i - 1, j] + M[i - 1, j - w[i]]
        >>> read_cell(f, 2).possible_regions()
        ('Up', 'UpLeft', 'UpRight')
        """
        def regions(read: Read) -> tuple[str, ...] | None:
            if len(read.offsets) != 2 or self.ndim != 2:
                return None
            signs = [(-1, 0, 1) if d is None else (d,) for d in read.offsets]
            return tuple(sorted({region_of(di, dj) for di, dj in product(*signs)}))

        return tuple(sorted({r for found in self._offsets(regions, extents=True) for r in found}))

    def loads_of(self, arrays: Collection[str]) -> tuple[Load, ...]:
        """The loads a kernel may make for the cell among those of ``arrays``, in the
        order of their first use: none when one of those arrays or an index is assigned
        in the function (its value would not be the parameter's).

        Examples
        --------
        >>> def f(M, i, j, X, Y):
        ...     if i == 0 or j == 0:
        ...         return 0
        ...     return M[i - 1, j] + (X[i - 1] == Y[j - 1]) + X[i - 1] * Y[M[0, 0]]
        >>> read_cell(f, 2).loads_of(("X", "Y"))
        (Load(array='X', index=('{0} - 1',)), Load(array='Y', index=('{1} - 1',)))
        """
        chosen = set(arrays) & set(self.params)
        if self.assigned & (chosen | set(self.index)):
            return ()
        return tuple(load for load in self.loads if load.array in chosen)

    def runs_anywhere(self, hoist: Collection[str]) -> bool:
        """Whether the cell, its loads of the arrays ``hoist`` made by the caller
        (:meth:`loads_of`) and its reads of ``M`` served by the caller, may run at
        indices outside the table and on any values read, harmlessly: straight-line code
        (no loop, ``raise`` or nested function), no subscript left but reads of ``M`` and
        extents ``A.shape[k]`` (``k`` a literal), no call but of the built-ins ``abs, min,
        max, int, float, bool, round, pow`` and of functions of ``math``, ``cmath`` and
        ``numpy``.  Such a cell touches no memory the caller does not give it and always
        finishes, so a kernel may compute it past the table's edge and drop the value.
        ``False`` without source.

        Examples
        --------
        >>> def f(M, i, j, X, Y):
        ...     if i == 0 or j == 0:
        ...         return 0
        ...     return max(M[i - 1, j], M[i - 1, j - 1] + (X[i - 1] == Y[j - 1]))
        >>> ir = read_cell(f, 2)
        >>> ir.runs_anywhere(("X", "Y")), ir.runs_anywhere(("X",))
        (True, False)
        """
        if self.source is None or not self.straight or self.unhoistable:
            return False
        taken = {load.array for load in self.loads_of(hoist)}
        return all(load.array in taken for load in self.loads)


def range_parts(node: ast.expr) -> tuple[ast.expr, ast.expr, ast.expr] | None:
    """The start, stop and step of a ``range(...)`` call, the literals 0 and 1 where it
    leaves them out (placed at the call, as a node of the source is); ``None`` for
    anything else.

    Examples
    --------
    >>> [ast.unparse(e) for e in range_parts(ast.parse("range(i + 1, j)", mode="eval").body)]
    ['i + 1', 'j', '1']
    >>> range_parts(ast.parse("zip(a, b)", mode="eval").body) is None
    True
    """
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "range" and 1 <= len(node.args) <= 3 and not node.keywords):
        return None
    args = node.args
    start = args[0] if len(args) > 1 else ast.copy_location(ast.Constant(0), node)
    stop = args[1] if len(args) > 1 else args[0]
    step = args[2] if len(args) == 3 else ast.copy_location(ast.Constant(1), node)
    return start, stop, step


def index_offset(node: ast.expr, name: str) -> int | None:
    """``k`` when ``node`` is ``name``, ``name + k`` or ``name - k`` (``k`` an int literal).

    Examples
    --------
    >>> index_offset(ast.parse("i - 2", mode="eval").body, "i")
    -2
    >>> index_offset(ast.parse("j - 2", mode="eval").body, "i") is None
    True
    """
    if isinstance(node, ast.Name) and node.id == name:
        return 0
    if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
            and isinstance(node.left, ast.Name) and node.left.id == name
            and isinstance(node.right, ast.Constant) and type(node.right.value) is int):
        return node.right.value if isinstance(node.op, ast.Add) else -node.right.value
    return None


def _index_expr(node: ast.expr, index: Collection[str]) -> bool:
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


def subscript_elements(node: ast.Subscript) -> list[ast.expr]:
    """The index expressions of a subscript, one per axis it names.

    Examples
    --------
    >>> [ast.unparse(e) for e in subscript_elements(ast.parse("A[i, j + 1]", mode="eval").body)]
    ['i', 'j + 1']
    """
    return node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]


class LoadFinder(ast.NodeTransformer):
    """Loads of the arrays ``arrays`` at index expressions of the cell's indices
    ``index`` (children before their parent, as :class:`ast.NodeTransformer` visits), as
    :class:`Load` keys in the order first met; with ``names`` (a name for each key), each
    such load is replaced by its name."""

    def __init__(self, arrays: Collection[str], index: list[str],
                 names: dict[Load, str] | None = None) -> None:
        self.arrays, self.index, self.names = set(arrays), index, names
        self.found: list[Load] = []

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
        elts = subscript_elements(node)
        if not all(_index_expr(e, self.index) for e in elts):
            return node
        key = Load(node.value.id, tuple(self._template(e) for e in elts))
        if key not in self.found:
            self.found.append(key)
        if self.names is None:
            return node
        return ast.copy_location(ast.Name(self.names[key], ast.Load()), node)


def _stored(fn: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(fn)
                     if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))


def _guard(s: ast.stmt) -> bool:
    """Whether ``s`` is ``if test: return value`` with no ``else``."""
    return (isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
            and isinstance(s.body[0], ast.Return) and s.body[0].value is not None)


#: Attributes of ``M`` that read no cell.
_EXTENTS = frozenset({"shape", "ndim", "size", "dtype"})


def is_extent(node: ast.expr, array: str | None = None) -> bool:
    """Whether ``node`` is an array's extent, ``A.shape[k]`` with an int literal ``k`` (of
    the array named ``array``, where given).

    Examples
    --------
    >>> is_extent(ast.parse("M.shape[1]", mode="eval").body, "M")
    True
    >>> is_extent(ast.parse("X.shape[0]", mode="eval").body, "M")
    False
    """
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int
            and (array is None or isinstance(node.value.value, ast.Name)
                 and node.value.value.id == array))


def _builtin(name: str, ns: dict[str, Any]) -> bool:
    """Whether ``name``, in a function of namespace ``ns``, is Python's built-in of that
    name (not one the namespace binds to something else)."""
    return hasattr(builtins, name) and ns.get(name, getattr(builtins, name)) is \
        getattr(builtins, name)


def _pure_call(f: ast.expr, ns: dict[str, Any]) -> bool:
    """Whether ``f``, a called expression in a function of namespace ``ns``, names one
    of :data:`_PURE_BUILTINS` or a function of one of :data:`_PURE_MODULES`."""
    if isinstance(f, ast.Name):
        return f.id in _PURE_BUILTINS and _builtin(f.id, ns)
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        mod = ns.get(f.value.id)
        return isinstance(mod, types.ModuleType) and mod.__name__ in _PURE_MODULES
    return False


def _straight(body: list[ast.stmt], ns: dict[str, Any]) -> bool:
    """Whether ``body`` is straight-line code calling only pure functions
    (:meth:`CellIR.runs_anywhere`)."""
    for node in (sub for stmt in body for sub in ast.walk(stmt)):
        if isinstance(node, ast.stmt) and not isinstance(node, _STRAIGHT):
            return False
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            return False
        if isinstance(node, ast.Call) and not _pure_call(node.func, ns):
            return False
    return True


#: Functions of :data:`_PURE_MODULES` that write an array they are given.
_WRITERS = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"})


def _writes_nothing(call: ast.Call, ns: dict[str, Any]) -> bool:
    """Whether ``call`` writes no array: a built-in function, or a function of one of
    :data:`_PURE_MODULES` but those of :data:`_WRITERS`, with no ``out=``."""
    f = call.func
    if isinstance(f, ast.Name):
        return _builtin(f.id, ns)
    return (_pure_call(f, ns) and isinstance(f, ast.Attribute) and f.attr not in _WRITERS
            and not any(k.arg == "out" for k in call.keywords))


def _pure(body: list[ast.stmt], ns: dict[str, Any]) -> bool:
    """Whether ``body`` stores into no subscript and calls only functions that write no
    array (:attr:`CellIR.pure`)."""
    return not any(isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load)
                   or isinstance(node, ast.Call) and not _writes_nothing(node, ns)
                   or isinstance(node, ast.Lambda)
                   for stmt in body for node in ast.walk(stmt))


def _read(func: Callable[..., Any], ndim: int) -> CellIR:
    try:
        source = definition_source(func, ndim)
    except SourceUnavailable as exc:
        return CellIR(func, ndim, None, str(exc), "M", (), (), (), (), None, None, (), True,
                      frozenset(), (), False, False)
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))
    names = [a.arg for a in fn.args.args]
    table, index, params = names[0], names[1:1 + ndim], names[1 + ndim:]
    reads, reassigned, subscripts = [], [], set()
    for order, node in enumerate(ast.walk(fn)):
        if isinstance(node, ast.Name) and node.id in index and not isinstance(node.ctx, ast.Load):
            reassigned.append((node.id, node.lineno, order))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id == table and isinstance(node.ctx, ast.Load):
            subscripts.add(id(node.value))
            elts = subscript_elements(node)
            offsets = tuple(index_offset(e, x) for e, x in zip(elts, index)) \
                if len(elts) == ndim else (None,) * ndim
            one_cell = len(elts) == ndim and not any(
                isinstance(e, (ast.Slice, ast.Starred)) for e in elts)
            reads.append(Read(tuple(ast.unparse(e) for e in elts), offsets,
                              ast.unparse(node), node.lineno, order, one_cell))
    other = next((n.lineno for n in ast.walk(fn) if isinstance(n, ast.Name)
                  and n.id == table and id(n) not in subscripts), None)
    extents = {id(n.value) for n in ast.walk(fn) if isinstance(n, ast.Attribute)
               and isinstance(n.value, ast.Name) and n.attr in _EXTENTS}
    escape = next((n.lineno for n in ast.walk(fn) if isinstance(n, ast.Name)
                   and n.id == table and id(n) not in subscripts | extents), None)
    finder = LoadFinder(params, index)
    for stmt in fn.body:
        finder.visit(stmt)
    unhoistable = any(isinstance(n, ast.Subscript) and not is_extent(n) and not (
        isinstance(n.value, ast.Name) and n.value.id in (table, *params)
        and isinstance(n.ctx, ast.Load)
        and (n.value.id == table or all(_index_expr(e, index) for e in subscript_elements(n))))
        for stmt in fn.body for n in ast.walk(stmt))
    guards = tuple(Guard(ast.unparse(s.test), ast.unparse(s.body[0].value), s.lineno)
                   for s in fn.body if _guard(s))
    ns = function_namespace(func)
    return CellIR(func, ndim, source, None, table, tuple(index), tuple(params), tuple(reads),
                  tuple(reassigned), other, escape, tuple(finder.found), unhoistable, _stored(fn),
                  guards, _straight(fn.body, ns), _pure(fn.body, ns))


_READ: weakref.WeakKeyDictionary[Any, dict[int, CellIR]] = weakref.WeakKeyDictionary()


def read_cell(func: Callable[..., Any], ndim: int) -> CellIR:
    """The :class:`CellIR` of cell function ``func`` of an ``ndim``-D table, read once
    per function.

    Examples
    --------
    >>> def lcs(M, i, j, X, Y):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     if X[i - 1] == Y[j - 1]:
    ...         return M[i - 1, j - 1] + 1
    ...     return max(M[i - 1, j], M[i, j - 1])
    >>> ir = read_cell(lcs, 2)
    >>> ir.constant_offsets(), ir.opaque, [g.test for g in ir.guards]
    (((-1, -1), (-1, 0), (0, -1)), None, ['i == 0 or j == 0', 'X[i - 1] == Y[j - 1]'])
    >>> read_cell(lcs, 2) is ir
    True
    """
    by_ndim = _READ.setdefault(func, {})
    if ndim not in by_ndim:
        by_ndim[ndim] = _read(func, ndim)
    return by_ndim[ndim]


def cell_ir(rec: Recurrence) -> CellIR:
    """The :class:`CellIR` of a recurrence's cell function (:func:`read_cell`).

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(3, 4), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> cell_ir(paths).constant_offsets()
    ((-1, 0), (0, -1))
    """
    return read_cell(rec.func, rec.ndim)
