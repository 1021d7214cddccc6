"""Rewrite a cell function's reads of ``M`` so compiled code can check or redirect them.

The cell function's definition (from its :class:`depgraph.frontend.ir.CellIR`) is parsed
afresh; every load ``M[a, b, ...]`` (``M`` being its first parameter) becomes ``READ(M,
CHECK, x0, x1, ..., a, b, ...)``, where ``x0, x1, ...`` are the cell's own indices
captured on entry and ``CHECK`` is a new last parameter.  The caller supplies ``READ`` (a
numba function) in the namespace; the runtime's checked reads record the region of every
read and flag reads that leave the table.  The rewrite also takes the loads the IR found
out of the cell (:meth:`~depgraph.frontend.ir.CellIR.loads_of`), computes chosen values in
int32 (:mod:`depgraph.frontend.narrow`) and applies the guards last
(:mod:`runtime.backends.speculate`).

Assumption: the IR has the function's source.  A cell that uses ``M`` other than by
reads of one cell (:attr:`depgraph.frontend.ir.CellIR.hidden`) is refused
(``SourceUnavailable``): a read the rewrite cannot redirect would go unchecked.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from depgraph.analysis.proof import Edges, ReadKey, Trusted
from depgraph.frontend.ir import HOISTED, CellIR, LoadFinder, index_offset, subscript_elements
from depgraph.frontend.source import Position, SourceUnavailable, position
from runtime.backends import speculate as guards
from runtime.backends.emit import Emitter
from patterns import REGION_CODE, axis_signs
from patterns.hyperplane import Shear
from patterns.lexorder import LexOrder

__all__ = ["rewrite_reads", "guarded_read_source", "guarded_reads", "OffsetReads",
           "trusted_read_source",
           "hyperplane_read_source", "lex_read_source", "ArgReads", "arg_read_source",
           "unchecked_subscript", "CHECK", "KEPT", "NARROW", "TRUSTED"]

CHECK = "_dg_check"
#: The name of the read of ``M`` a proof covers (:meth:`OffsetReads.for_read`).
TRUSTED = "_dg_read_trusted"
KEPT = "_dg_kept"
NARROW = "_dg_i32"


def _reads_table(node: ast.Subscript, table: str) -> bool:
    """Whether ``node`` subscripts the table ``table``."""
    return isinstance(node.value, ast.Name) and node.value.id == table


class _Reads(ast.NodeTransformer):
    def __init__(self, table: str, cell: list[str], read: str, index: list[str] = (),
                 kept: Collection[tuple[int, ...]] = (), read_for: OffsetReads | None = None):
        self.table, self.cell, self.read = table, cell, read
        self.index, self.kept = list(index), list(kept)
        self.read_for = read_for
        self.count = 0

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        key = (ast.unparse(node), node.lineno)  # as a proof names it, before rewriting
        self.generic_visit(node)
        if not _reads_table(node, self.table):
            return node
        index = subscript_elements(node)
        self.count += 1
        args = [ast.Name(self.table, ast.Load()), ast.Name(CHECK, ast.Load())]
        offset = tuple(index_offset(e, x) for e, x in zip(index, self.index))
        if len(index) == len(self.index) and offset in self.kept:
            args.insert(2, ast.Name(f"{KEPT}{self.kept.index(offset)}", ast.Load()))
            return ast.copy_location(
                ast.Call(ast.Name(f"{self.read}_kept", ast.Load()), args + list(index), []), node)
        args += [ast.Name(c, ast.Load()) for c in self.cell] + list(index)
        read = (self.read_for.for_read(offset, key)
                if self.read_for and len(index) == len(self.index) else self.read)
        return ast.copy_location(ast.Call(ast.Name(read, ast.Load()), args, []), node)


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
        assert isinstance(node.target, ast.Name)  # the only target depgraph.frontend.narrow proves
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


class _ArgLoads(ast.NodeTransformer):
    """Each load ``X[a, b]`` of an array of ``reads`` (every index an expression, no
    slice) written ``read(X, CHECK, x0, x1, ..., a, b)``, ``read`` the one ``reads``
    names for the array and the count of indices, ``x0, x1, ...`` the ``cell``."""

    def __init__(self, reads: ArgReads, cell: list[str]) -> None:
        self.reads, self.cell = reads, cell

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        text = ast.unparse(node)  # as written, before its own subscripts are rewritten
        self.generic_visit(node)
        index = subscript_elements(node)
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == "shape" \
                or isinstance(base, ast.Name) and base.id in self.reads.others:
            return node  # an extent; an argument that is no array, which numba checks
        if not (isinstance(base, ast.Name) and base.id in self.reads.arrays):
            # a local array, a view (``A[i][j]``), a global: of unknown extent here
            raise SourceUnavailable(f"the read {text} (line {node.lineno}) is "
                                    "of an array that is not an argument, which compiled "
                                    "code would not check")
        if not isinstance(node.ctx, ast.Load) or any(isinstance(e, ast.Slice) for e in index):
            return node  # a slice is clamped into the array, in Python as compiled
        if (text, node.lineno) in self.reads.trusted:
            return node  # proven inside the array
        args = [node.value, ast.Name(CHECK, ast.Load())] + \
            [ast.Name(c, ast.Load()) for c in self.cell] + list(index)
        name = self.reads(node.value.id, len(index))
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), node)


class _Halt(ast.NodeTransformer):
    """Each ``while`` test joined with ``not stop``."""

    def __init__(self, stop: ast.expr) -> None:
        self.stop = stop

    def visit_While(self, node: ast.While) -> ast.AST:
        self.generic_visit(node)
        node.test = ast.BoolOp(ast.And(), [node.test, ast.UnaryOp(ast.Not(), self.stop)])
        return node


def rewrite_reads(ir: CellIR, read: str, name: str, cell_args: bool = True,
                  hoist: Collection[str] = (), narrow: Collection[Position] = (),
                  speculate: bool = False, kept: Sequence[tuple[int, ...]] = (),
                  read_for: OffsetReads | None = None,
                  stop: str | None = None, arg_reads: ArgReads | None = None) -> str:
    """Source of a copy of the cell function read as ``ir``, named ``name``, whose reads
    of ``M`` call ``read``.

    The call is ``read(M, CHECK, x0, x1, ..., a, b, ...)`` with the cell's own indices
    ``x0, x1, ...``, or ``read(M, CHECK, a, b, ...)`` when ``cell_args`` is false.

    ``hoist`` names array parameters whose loads at index expressions of the cell's
    indices and integer literals (``X[i - 1]``, ``A[i, 2 * j]``) become new last
    parameters ``_dg_arg0, _dg_arg1, ...``, one per distinct load
    (:meth:`~depgraph.frontend.ir.CellIR.loads_of`), so the caller loads them, for instance a step ahead or
    once for a row; nothing is taken out when a hoisted array or an index is assigned in
    the function.

    ``narrow`` (the positions of :class:`depgraph.frontend.narrow.Narrowing`) wraps the values
    there in ``_dg_i32(...)``, which the caller binds to ``numpy.int32``.

    With ``speculate``, the body is computed whatever the cell and its guards applied
    last, as selects, where :func:`runtime.backends.speculate.speculate` can (for a caller
    whose reads of ``M`` are harmless at any index, and that has checked
    :meth:`~depgraph.frontend.ir.CellIR.runs_anywhere`).

    ``kept`` are offsets from the cell whose values the caller may hold: a read written
    as the cell's indices plus the ``k``-th of them (``M[i - 1, j]`` for ``(-1, 0)``)
    calls ``read_kept(M, CHECK, _dg_kept{k}, a, b, ...)`` instead (``read`` with
    ``_kept`` added), ``_dg_kept{k}`` a new parameter after ``CHECK``; none does when an
    index is assigned in the function.

    ``read_for`` (:class:`OffsetReads`) names the function a read calls instead of
    ``read``, from the read's offset from the cell along each axis (``None`` where it is
    not a constant) and the read itself (a read a proof covers may go unchecked), so the
    caller may give each offset a read of its own; unused when an index is assigned in
    the function.

    ``stop``, for reads that check themselves: a test of ``CHECK`` that holds once a read
    has failed; each ``while`` loop then ends when it holds.  A failed read returns a
    stand-in value, on which a loop bounded by what it reads (a knapsack's
    ``while k * w[i] <= c`` with a negative weight) would never end, and the fill with it
    would never report the read.

    ``arg_reads`` (:class:`ArgReads`): each load of one of its arrays left in the body
    (not hoisted; every index an expression, no slice) calls the checked read it names,
    ``read(X, CHECK, x0, x1, ..., a, ...)``, with the cell's own indices captured on
    entry: a compiled read of an argument is not bounds-checked by numba.  A subscript
    of anything but an argument or an extent (a local array, a view ``A[i][j]``, a
    global) is then ``SourceUnavailable``: :func:`unchecked_subscript`.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def f(M, i, j, w):
    ...     return M[i - 1, j] + w
    >>> ir = read_cell(f, 2)
    >>> print(rewrite_reads(ir, "RD", "g"))  # doctest: +NORMALIZE_WHITESPACE
    def g(M, i, j, w, _dg_check):
        _dg_cell0 = i
        _dg_cell1 = j
        return RD(M, _dg_check, _dg_cell0, _dg_cell1, i - 1, j) + w
    >>> print(rewrite_reads(ir, "RD", "g", cell_args=False, kept=[(-1, 0)]))
    def g(M, i, j, w, _dg_check, _dg_kept0):
        return RD_kept(M, _dg_check, _dg_kept0, i - 1, j) + w
    >>> def h(M, i, j):
    ...     k = 1
    ...     while M[i - k, j] > 0:
    ...         k += 1
    ...     return k
    >>> print(rewrite_reads(read_cell(h, 2), "RD", "g", False, stop="_dg_check[0] != 0"))
    def g(M, i, j, _dg_check):
        k = 1
        while RD(M, _dg_check, i - k, j) > 0 and (not _dg_check[0] != 0):
            k += 1
        return k
    """
    fn = ir.definition()
    if ir.hidden:
        raise SourceUnavailable(ir.hidden)
    cell = [f"_dg_cell{k}" for k in range(ir.ndim)]
    index = list(ir.index)
    if ir.assigned & set(index):
        kept, read_for = (), None  # an offset from a reassigned index is not one from the cell
    tr = _Reads(ir.table, cell if cell_args else [], read, index, kept, read_for)
    to_int32 = _Narrow(narrow)
    body = [tr.visit(to_int32.visit(stmt)) for stmt in fn.body]
    entry = [
        ast.Assign([ast.Name(c, ast.Store())], ast.Name(x, ast.Load()))
        for x, c in zip(index, cell)
    ]
    loads = ir.loads_of(hoist)
    up = LoadFinder({load.array for load in loads}, index,
                    {load: f"{HOISTED}{k}" for k, load in enumerate(loads)})
    body = [up.visit(stmt) for stmt in body]
    assert tuple(up.found) == loads, "the rewritten body's loads differ from the IR's"
    if arg_reads is not None:
        checked = _ArgLoads(arg_reads, cell)
        body = [checked.visit(stmt) for stmt in body]
    if stop is not None:
        halt = _Halt(ast.parse(stop, mode="eval").body)
        body = [halt.visit(stmt) for stmt in body]
    fn.body = (entry if cell_args or arg_reads is not None else []) + body
    if speculate:
        guards.speculate(fn, (read, f"{read}_kept", NARROW))
    fn.decorator_list = []
    fn.name = name
    fn.args.args += ([ast.arg(CHECK)] + [ast.arg(f"{KEPT}{k}") for k in range(len(kept))]
                     + [ast.arg(f"{HOISTED}{k}") for k in range(len(loads))])
    fn.returns = None
    return ast.unparse(ast.fix_missing_locations(ast.Module([fn], type_ignores=[])))


def _axis_test(signs: frozenset[int], a: str, x: str, n: str,
               edges: tuple[bool, bool] = (False, False)) -> str:
    """The test that a read's index ``a`` along an axis of ``n`` cells lies in the table,
    on a side of the cell's own ``x`` among ``signs`` (-1 before, 0 on, 1 after); the
    table's first or last edge left untested where ``edges`` says a proof holds it (the
    index at least 0, at most ``n - 1``).

    Examples
    --------
    >>> _axis_test(frozenset({-1, 0}), "a", "x0", "n"), _axis_test(frozenset({1}), "b", "x1", "m")
    ('0 <= a <= x0', 'x1 < b < m')
    >>> _axis_test(frozenset({-1, 0, 1}), "b", "x1", "m", (True, False))
    'b < m'
    """
    if signs == {0}:
        return f"{a} == {x}"
    low, high = edges
    left = ("" if low else "0 <=") if -1 in signs else f"{x} <=" if 0 in signs else f"{x} <"
    right = ("" if high else f"< {n}") if 1 in signs else f"<= {x}" if 0 in signs else f"< {x}"
    test = " ".join(p for p in (left, a, right) if p) if left or right else "True"
    if signs == {-1, 1}:
        return f"{a} != {x}" if test == "True" else f"{test} and {a} != {x}"
    return test


def _constant_axis_test(signs: frozenset[int], d: int, a: str, n: str,
                        edges: tuple[bool, bool] = (False, False)) -> str:
    """:func:`_axis_test` for a read at the constant offset ``d`` from the cell along the
    axis: its side is known, so only the table's edge on that side is tested, where no
    proof holds it (``False`` when the side is not among ``signs``).

    Examples
    --------
    >>> up_or_on, after = frozenset({-1, 0}), frozenset({1})
    >>> _constant_axis_test(up_or_on, -1, "a", "n"), _constant_axis_test(after, -1, "a", "n")
    ('a >= 0', 'False')
    """
    side = (d > 0) - (d < 0)
    if side not in signs:
        return "False"
    if side == 0 or edges[side > 0]:
        return "True"
    return f"{a} >= 0" if side < 0 else f"{a} < {n}"


def guarded_read_source(allowed: Collection[str], load: str, flag: int,
                        offsets: tuple[int | None, ...] = (None, None),
                        edges: Edges = ((False, False), (False, False))) -> str:
    """Source of a read ``read(M, ck, x0, x1, a, b)`` of a 2-D table ``M`` by cell ``(x0,
    x1)`` that guards itself, for a fill that checks its own reads: a read outside the
    table, or in a region not among ``allowed`` (names of :data:`patterns.REGIONS`), sets
    ``ck[flag]`` and reads ``M[0, 0]`` instead (the fill is then not used); any other
    read is ``load``.  Nothing is stored on the way that passes.  The regions a pattern
    allows are the sides each axis may take, less the cell itself, so the test is two
    ranges (and, where both may stay, that the read is not of the cell), and an axis
    along which the read's offset from the cell is a known constant (``offsets``, each
    ``None`` where it is not; for a cell function that does not reassign its indices) the
    table's edge on that side alone; other sets test the read's region code against a
    mask (the caller binds ``int64``).  A table's edge that a proof holds the read
    inside (``edges``: whether its index is at least 0, and at most the last, along
    each axis) goes untested.

    Examples
    --------
    >>> print(guarded_read_source(("Left", "Up", "UpLeft"), "M[a, b]", 0), end="")
    def read(M, ck, x0, x1, a, b):
        if not (0 <= a <= x0 and 0 <= b <= x1 and (a != x0 or b != x1)):
            ck[0] = 1
            return M[0, 0]
        return M[a, b]
    >>> print(guarded_read_source(("Left", "Up"), "M[a, b]", 0).splitlines()[2])
        if a < 0 or a >= M.shape[0] or b < 0 or b >= M.shape[1] or ((10 >> code) & 1) == 0:
    >>> up = guarded_read_source(("Left", "Up", "UpLeft"), "M[a, b]", 0, (-1, None))
    >>> print(up.splitlines()[1])  # M[i - 1, ...]: the row's side is known
        if not (a >= 0 and 0 <= b <= x1):
    >>> down = guarded_read_source(("Down", "DownLeft", "DownRight"), "M[a, b]", 0, (1, None),
    ...                            ((True, True), (True, False)))
    >>> print(down.splitlines()[1])  # M[k + 1, a + p[k]] proven but for the last column
        if not (b < M.shape[1]):
    """
    codes = {REGION_CODE[r] for r in allowed}
    signs = axis_signs(allowed)
    product = {(si + 1) * 3 + sj + 1 for si in signs[0] for sj in signs[1]} - {REGION_CODE["Self"]}
    e = Emitter()
    with e.block("def read(M, ck, x0, x1, a, b)"):
        if codes == product:
            tests = [_axis_test(sign, a, x, n, edge) if d is None
                     else _constant_axis_test(sign, d, a, n, edge)
                     for sign, d, a, x, n, edge in zip(signs, offsets, "ab", ("x0", "x1"),
                                                        ("M.shape[0]", "M.shape[1]"), edges)]
            if 0 in signs[0] and 0 in signs[1] and not any(offsets):  # may be the cell itself
                tests.append("(a != x0 or b != x1)")
            tests = [t for t in tests if t != "True"] or ["True"]
            test = f"not ({' and '.join(tests)})"
        else:
            mask = sum(1 << c for c in codes)
            e("code = (int64(a > x0) - int64(a < x0) + 1) * 3 + int64(b > x1) - int64(b < x1) + 1")
            outside = [t for t, held in zip(("a < 0", "a >= M.shape[0]", "b < 0",
                                             "b >= M.shape[1]"), sum(edges, ())) if not held]
            test = " or ".join(outside + [f"(({mask} >> code) & 1) == 0"])
        with e.block(f"if {test}"):
            e(f"ck[{flag}] = 1", "return M[0, 0]")
        e(f"return {load}")
    return e.source


class OffsetReads:
    """The self-guarding reads of one cell function, one per offset from the cell it
    reads at (the ``read_for`` of :func:`rewrite_reads`), so each read tests only what
    its offset leaves open: ``make(offsets, edges)`` gives the source of the read
    (defining ``read``) at ``offsets`` (one per axis, ``None`` where not a constant),
    leaving untested the table's edges that ``edges`` says a proof holds (``None``:
    none).  ``reads`` maps each read's name to its source; ``"_dg_read"``, the read at
    unknown offsets, is always among them (a cell that reassigns an index calls it).
    The reads ``trusted`` names (:data:`depgraph.analysis.proof.ReadKey`: proven in
    bounds and in the caller's order) call ``plain`` (source defining ``read``, the load
    alone: :func:`trusted_read_source`); a read ``edges`` names, proven inside some of
    the table's edges, tests only the others (:func:`guarded_reads` makes both from a
    proof).

    Examples
    --------
    >>> reads = OffsetReads(lambda d, edges: guarded_read_source(
    ...     ("Left", "Up", "UpLeft"), "M[a, b]", 0, d, edges or ((False, False),) * 2), 2)
    >>> reads((-1, 0)), sorted(reads.reads)
    ('_dg_read_m1_p0', ['_dg_read', '_dg_read_m1_p0'])
    >>> print(reads.reads["_dg_read_m1_p0"].splitlines()[1])
        if not (a >= 0):
    >>> reads((-1, None), ((True, True), (True, False)))
    '_dg_read_m1_x_e1110'
    """

    def __init__(self, make: Callable[[tuple[int | None, ...], Edges | None], str], ndim: int,
                 trusted: Collection[ReadKey] = (), plain: str = "",
                 edges: Mapping[ReadKey, Edges] | None = None) -> None:
        self.make, self.ndim = make, ndim
        self.trusted, self.plain = frozenset(trusted), plain
        self.edges = dict(edges or {})
        self.reads = {"_dg_read": make((None,) * ndim, None)}

    def for_read(self, offsets: tuple[int | None, ...], key: ReadKey) -> str:
        """The name of the read that the read ``key`` at ``offsets`` calls."""
        if key in self.trusted:
            self.reads.setdefault(TRUSTED, self.plain)
            return TRUSTED
        return self(offsets, self.edges.get(key))

    def __call__(self, offsets: tuple[int | None, ...], edges: Edges | None = None) -> str:
        if edges is not None and not any(sum(edges, ())):
            edges = None
        if len(offsets) != self.ndim or (all(d is None for d in offsets) and edges is None):
            return "_dg_read"
        tag = "_".join("x" if d is None else f"m{-d}" if d < 0 else f"p{d}" for d in offsets)
        if edges is not None:
            tag += "_e" + "".join(str(int(held)) for held in sum(edges, ()))
        name = f"_dg_read_{tag}"
        if name not in self.reads:
            self.reads[name] = self.make(offsets, edges)
        return name


def guarded_reads(allowed: Collection[str], load: str, flag: int,
                  trusted: Trusted | None = None) -> OffsetReads:
    """The :class:`OffsetReads` of a fill of a 2-D table by a pattern whose regions are
    ``allowed``: each read by :func:`guarded_read_source` (``load``, ``flag``), less what
    ``trusted`` proves.

    Examples
    --------
    >>> from depgraph.analysis.proof import Trusted
    >>> proof = Trusted(((("M[i - 1, j]", 3), ("Up",)),), ())
    >>> reads = guarded_reads(("Left", "Up", "UpLeft"), "M[a, b]", 0, proof)
    >>> reads.for_read((-1, 0), ("M[i - 1, j]", 3)), reads.for_read((0, -1), ("M[i, j - 1]", 3))
    ('_dg_read_trusted', '_dg_read_p0_m1')
    """
    unproven = ((False, False),) * 2
    return OffsetReads(lambda d, edges: guarded_read_source(allowed, load, flag, d,
                                                            edges or unproven),
                       2, trusted.reads_in(allowed) if trusted else (),
                       trusted_read_source(load), dict(trusted.edges) if trusted else None)


def trusted_read_source(load: str) -> str:
    """Source of a read ``read(M, ck, x0, x1, a, b)`` of a 2-D table, called as
    :func:`guarded_read_source`'s are, that a proof covers: ``load`` alone.

    Examples
    --------
    >>> print(trusted_read_source("M[a, b]"), end="")
    def read(M, ck, x0, x1, a, b):
        return M[a, b]
    """
    e = Emitter()
    with e.block("def read(M, ck, x0, x1, a, b)"):
        e(f"return {load}")
    return e.source


def hyperplane_read_source(pi: Sequence[int], load: str, flag: int,
                           frame: Shear | None = None,
                           offsets: Sequence[int | None] | None = None) -> str:
    """Source of a read ``read(M, ck, x0, x1, ..., a0, a1, ...)`` of a table of
    ``len(pi)`` dimensions by cell ``x`` that guards itself, for a fill by the hyperplane
    ``pi`` (:mod:`patterns.hyperplane`) that checks its own reads: a read outside the
    table, or of a cell not on an earlier hyperplane (``pi . (a - x) > -1``), sets
    ``ck[flag]`` and reads the first cell instead (the fill is then not used); any other
    read is ``load`` (over ``a0, a1, ...``).  With ``frame``, a
    :class:`patterns.hyperplane.Shear`, ``M`` is the table it shears to: a read whose
    cell of the original table, ``inverse (a - shift)``, is outside that table fails too
    (a cell of the sheared table no cell of the original one is); the original sides
    and the shift are computed from ``M``'s shape, so the read is the same at every
    size.  Along an axis
    where the read's offset from the cell is a known constant (``offsets``, ``None``
    where not; for a cell function that does not reassign its indices), only the
    table's edge on the offset's side is tested, and with every offset known the order
    is decided here.

    Examples
    --------
    >>> print(hyperplane_read_source((2, 1), "M[a0, a1]", 9), end="")
    def read(M, ck, x0, x1, a0, a1):
        if a0 < 0 or a0 >= M.shape[0] or a1 < 0 or a1 >= M.shape[1] or 2 * (a0 - x0) + 1 * (a1 - x1) > -1:
            ck[9] = 1
            return M[0, 0]
        return M[a0, a1]
    >>> print(hyperplane_read_source((2, 1), "M[a0, a1]", 9, offsets=(-1, 1)).splitlines()[1])
        if a0 < 0 or a1 >= M.shape[1]:
    """
    ndim = len(pi)
    known = list(offsets) if offsets is not None else [None] * ndim
    bounds = _edges(known)
    if frame is not None:
        sides = frame.sides_source("M")
        shift = frame.shift_source(sides) or ("0",) * ndim
        for row, n in zip(frame.inverse, sides):
            at = " + ".join(f"{u} * (a{k} - ({c}))" for k, (u, c) in enumerate(zip(row, shift))
                            if u) or "0"
            bounds.append(f"not 0 <= {at} < {n}")
    if None in known:
        bounds.append(" + ".join(f"{p} * (a{k} - x{k})" for k, p in enumerate(pi) if p)
                      + " > -1")
    elif sum(p * d for p, d in zip(pi, known)) > -1:
        bounds = ["True"]  # this read is never on an earlier hyperplane
    return _self_guarded(ndim, bounds, load, flag)


def lex_read_source(order: LexOrder, load: str, flag: int,
                    offsets: Sequence[int | None] | None = None) -> str:
    """Source of a read ``read(M, ck, x0, x1, ..., a0, a1, ...)`` of a table of
    ``order.ndim`` dimensions by cell ``x`` that guards itself, for a sequential fill in
    the lexicographic ``order`` (:class:`patterns.lexorder.LexOrder`) that checks its own
    reads: a read outside the table, or of a cell that does not come before ``x`` in
    ``order`` (so not filled yet), sets ``ck[flag]`` and reads the first cell instead;
    any other read is ``load``.  Along an axis where the read's offset from the cell is a
    known constant (``offsets``, as :func:`hyperplane_read_source`'s), only the table's
    edge on the offset's side is tested, and the order is decided here as far as the
    known offsets decide it.

    Examples
    --------
    >>> from patterns.lexorder import LexOrder
    >>> up_down = LexOrder((0, 1), (1, -1))
    >>> print(lex_read_source(up_down, "M[a0, a1]", 9), end="")
    def read(M, ck, x0, x1, a0, a1):
        if a0 < 0 or a0 >= M.shape[0] or a1 < 0 or a1 >= M.shape[1] or not (a0 < x0 or (a0 == x0 and (a1 > x1))):
            ck[9] = 1
            return M[0, 0]
        return M[a0, a1]
    >>> print(lex_read_source(up_down, "M[a0, a1]", 9, offsets=(-1, None)).splitlines()[1])
        if a0 < 0 or a1 < 0 or a1 >= M.shape[1]:
    >>> print(lex_read_source(up_down, "M[a0, a1]", 9, offsets=(0, -1)).splitlines()[1])
        if True:
    """
    known = list(offsets) if offsets is not None else [None] * order.ndim
    bounds = _edges(known)
    first = "False"  # whether the read comes first, built from the inner axis outwards
    for axis, step in reversed(tuple(zip(order.axes, order.steps))):
        d = known[axis]
        if d is not None:
            first = first if d == 0 else str(d * step < 0)
            continue
        ahead = f"a{axis} {'<' if step > 0 else '>'} x{axis}"
        first = ahead if first == "False" else (
            f"a{axis} {'<=' if step > 0 else '>='} x{axis}" if first == "True"
            else f"{ahead} or (a{axis} == x{axis} and ({first}))")
    if first == "False":
        bounds = ["True"]  # this read never comes first
    elif first != "True":
        bounds.append(f"not ({first})")
    return _self_guarded(order.ndim, bounds, load, flag)


def _edges(known: Sequence[int | None]) -> list[str]:
    """The tests that a read at offsets ``known`` (``None`` where not a constant) from
    its cell leaves the table: along each axis the edge on the offset's side, both
    edges where the side is unknown, none where the offset is 0.

    Examples
    --------
    >>> _edges([-1, 0, None])
    ['a0 < 0', 'a2 < 0 or a2 >= M.shape[2]']
    """
    return [f"a{k} < 0 or a{k} >= M.shape[{k}]" if d is None
            else f"a{k} < 0" if d < 0 else f"a{k} >= M.shape[{k}]"
            for k, d in enumerate(known) if d != 0]


def _self_guarded(ndim: int, failing: Sequence[str], load: str, flag: int) -> str:
    """Source of a read ``read(M, ck, x0, ..., a0, ...)`` that sets ``ck[flag]`` and
    reads the first cell where any of the tests ``failing`` holds, else ``load``."""
    cells = ", ".join(f"x{k}" for k in range(ndim))
    reads = ", ".join(f"a{k}" for k in range(ndim))
    e = Emitter()
    with e.block(f"def read(M, ck, {cells}, {reads})"):
        with e.block(f"if {' or '.join(failing) or 'False'}"):
            e(f"ck[{flag}] = 1", f"return M[{', '.join('0' * ndim)}]")
        e(f"return {load}")
    return e.source


def arg_read_source(position: int, count: int, ndim: int, flag: int,
                    first: str | None = None, sink: str = "ck") -> str:
    """Source of a checked read ``read(X, ck, x0, ..., a0, ...)`` of the array argument
    ``X`` at ``position`` among the recurrence's args, by ``count`` indices, by the cell
    ``x`` of a table of ``ndim`` dimensions: an index outside what Python allows (``-n
    <= a < n`` along an axis of ``n``; a negative one counts from the end in Python as
    compiled) sets ``ck[flag]`` and reads ``X[0, ...]`` instead (the fill is then not
    used); with ``first``, a test that holds for the first failed read only, the cell,
    the argument's position, the axis and the index are recorded after the flag
    (``ck[flag + 1:flag + ndim + 4]``).  ``sink``: where the flag and the record go, an
    expression of ``ck`` (``ck[2]`` of a tuple ``ck``), ``ck`` itself by default.

    Examples
    --------
    >>> print(arg_read_source(1, 1, 2, 17, "ck[17] == 0"), end="")
    def read(X, ck, x0, x1, a0):
        if a0 < -X.shape[0] or a0 >= X.shape[0]:
            if ck[17] == 0:
                ck[18] = x0
                ck[19] = x1
                ck[20] = 1
                ck[21] = 0
                ck[22] = a0
            ck[17] = 1
            return X[0]
        return X[a0]
    """
    cells = "".join(f", x{k}" for k in range(ndim))
    index = [f"a{k}" for k in range(count)]
    e = Emitter()
    with e.block(f"def read(X, ck{cells}, {', '.join(index)})"):
        for axis, a in enumerate(index):
            with e.block(f"if {a} < -X.shape[{axis}] or {a} >= X.shape[{axis}]"):
                if first is not None:
                    with e.block(f"if {first}"):
                        at = flag + 1 + ndim
                        e(*(f"{sink}[{flag + 1 + k}] = x{k}" for k in range(ndim)),
                          f"{sink}[{at}] = {position}", f"{sink}[{at + 1}] = {axis}",
                          f"{sink}[{at + 2}] = {a}")
                e(f"{sink}[{flag}] = 1", f"return X[{', '.join('0' * count)}]")
        e(f"return X[{', '.join(index)}]")
    return e.source


class ArgReads:
    """The checked reads of a cell function's array arguments, for the ``arg_reads`` of
    :func:`rewrite_reads`: ``arrays`` maps the names of the array parameters whose loads
    are checked to their positions among the recurrence's args; ``make(position,
    count)`` gives the source of the read (defining ``read``) of the argument at
    ``position`` by ``count`` indices (:func:`arg_read_source`).  ``reads`` maps each
    read's name to its source.

    Examples
    --------
    >>> reads = ArgReads({"w": 0}, lambda p, count: arg_read_source(p, count, 2, 0))
    >>> reads("w", 1), sorted(reads.reads)
    ('_dg_argread0_1', ['_dg_argread0_1'])
    """

    def __init__(self, arrays: Mapping[str, int], make: Callable[[int, int], str],
                 others: Collection[str] = (), trusted: Collection[ReadKey] = ()) -> None:
        self.arrays, self.make = dict(arrays), make
        self.others, self.trusted = frozenset(others), frozenset(trusted)
        self.reads: dict[str, str] = {}

    @classmethod
    def of(cls, ir: CellIR, args: Sequence[Any], make: Callable[[int, int], str],
           trusted: Trusted | None = None) -> ArgReads:
        """The checked reads of every array among ``args``, the cell's arguments (the
        others, ``others``, left to numba, which checks a tuple's or a list's index, with
        the table, whose reads the rewrite serves), but the reads ``trusted`` proves
        inside their arrays, left as they are."""
        import numpy as np

        arrays = {p: k for k, (p, a) in enumerate(zip(ir.params, args))
                  if isinstance(a, np.ndarray)}
        return cls(arrays, make, {ir.table, *ir.params} - set(arrays),
                   trusted.elements if trusted else ())

    def __call__(self, array: str, count: int) -> str:
        position = self.arrays[array]
        name = f"_dg_argread{position}_{count}"
        if name not in self.reads:
            self.reads[name] = self.make(position, count)
        return name


def unchecked_subscript(ir: CellIR, args: Sequence[Any]) -> str | None:
    """Why a checked rewrite of the cell read as ``ir`` with ``args`` would be refused
    for a subscript of an array that is not an argument (:func:`rewrite_reads` with
    ``arg_reads``), or ``None`` (other reasons are the callers' to find); a caller then
    fills by the Python trace, which checks every read as Python does, or says it cannot.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> import numpy as np
    >>> def f(M, i, j, A):
    ...     return A[i][j] + M[i - 1, j]
    >>> unchecked_subscript(read_cell(f, 2), (np.zeros((2, 2)),))
    'the read A[i][j] (line 2) is of an array that is not an argument, which compiled code would not check'
    """
    try:
        fn = ir.definition()
    except SourceUnavailable:
        return None  # no rewrite at all: the callers' own reason
    if ir.hidden:
        return None  # M read through another name: no rewrite either
    check = _ArgLoads(ArgReads.of(ir, args, lambda p, c: ""), [])
    try:
        for stmt in fn.body:
            check.visit(stmt)
    except SourceUnavailable as exc:
        return str(exc)
    return None
