"""Prove from the cell function's source what holds at every size: a :class:`Certificate`.

A cell function's reads of ``M`` (a table of any number of dimensions) are proven in
bounds, and their offsets' spans found (in 2-D their regions), for every shape at once,
so a fill need not check them cell by cell at the size it runs.  :func:`certify` walks
every path through the function's body, symbolically
(:mod:`depgraph.analysis.symbolic`: each read's index and its path's premises as
polynomials, ``for`` and ``while`` loops walked once for all their iterations), and
proves each read's bounds and offsets by exact linear programming over the polynomials'
monomials (:mod:`depgraph.analysis.prover`).  Where no pattern orders the fill (a 2-D
table's reads outside every pattern's regions, or a table of other dimensions), a
hyperplane ``pi`` does when :func:`unproven_hyperplane` proves, the same way, that it
puts every read on an earlier step than its cell's.

Where an index holds an argument's element (knapsack's ``M[i - 1, j - w[i - 1]]``, the
integer knapsack's ``M[i - 1, c - k * w[i - 1]]``), the proof may need a bound on that
argument's data: ``min(w) >= 0``, then ``min(w) >= 1`` are tried, and the one needed is
a :class:`Requirement` checked against the data in time proportional to the argument
(:meth:`Certificate.violated`).  So may it need a size fact (Floyd-Warshall's
``M.shape[0] == M.shape[2] + 1``, the knapsack's ``w.shape[0] == M.shape[0] - 1``), and
where those are not enough, a ceiling on an argument's data that indexes ``M`` or bounds
an index (``max(d) <= M.shape[1] - 1``): only those it needs are kept as requirements.
Every read of an array argument's element (of any dtype) is proven inside the argument,
Python's negative indices counted in, or there is no certificate: a compiled read past
its end is not checked (so, too, a bound on the argument's data holds of the elements
the cell reads only then).  A subscript of an array that is not an argument (a local
one, a view ``A[i][j]``) and there is none.

The certificate is a fact of the source, the argument kinds and the module constants the
cell reads, not of the size: cached on disk by their digest and the prover's modules'
(sympy: for a new cell only); so is each hyperplane's proof.

Assumptions: the cell function's ``M``, indices and arguments are not reassigned, and
its reads are seen in its source (:attr:`CellIR.hidden` is ``None``); integer index
arithmetic (a float index is refused elsewhere).  Anything the walk does not model (a
``while`` loop with an ``else``, a comprehension, a nested function, a read inside an
index, too many paths) and there is no certificate: the fill checks the reads itself.  A
certificate says nothing of whether a loop in the cell ends.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from depgraph.analysis import bitwise, proof, prover, simplex, symbolic
from depgraph.analysis.proof import Certificate, ProvenRead, Requirement, Trusted
from depgraph.analysis.prover import Prover, later_read, prove
from depgraph.analysis.symbolic import SMALL, GiveUp, Walk
from depgraph.frontend.ir import CellIR, cell_ir, is_extent
from depgraph.frontend.source import function_namespace
from depgraph.usercache import folder, read_json, write_json

__all__ = ["Requirement", "ProvenRead", "Certificate", "certify", "certificate", "may_raise",
           "certify_hyperplane", "unproven_hyperplane", "arguments_proven", "trust",
           "trusted_reads"]

#: The data bounds tried, in order, for the arguments whose elements index ``M``.
LADDER = (None, 0, 1)


#: Functions a cell may call and still be certain not to raise.
_SAFE_CALLS = frozenset({"min", "max", "abs", "int", "float", "bool", "range", "len"})


def may_raise(ir: CellIR) -> str | None:
    """Why the cell function read as ``ir`` might raise (a ``raise`` or ``assert``, a
    division by what may be zero, a call of a function but ``min``, ``max``, ``abs``,
    ...), or ``None``: a fill that skips the checked sweep must not meet an exception it
    would have named, since a GPU kernel or a parallel region raises none.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def f(M, i, j):
    ...     return M[i - 1, j] // (j - 3)
    >>> may_raise(read_cell(f, 2))
    'it may divide by zero (line 2)'
    """
    fn = ir.definition()
    slices = {id(n.slice) for stmt in fn.body for n in ast.walk(stmt)
              if isinstance(n, ast.Subscript)}
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
        if isinstance(node, (ast.List, ast.Dict, ast.Set)) or \
                isinstance(node, ast.Tuple) and id(node) not in slices:
            return f"it builds {ast.unparse(node)}, not a number (line {node.lineno})"
        if isinstance(node, (ast.Raise, ast.Assert)):
            return f"it may raise (line {node.lineno})"
        if isinstance(node, ast.Constant) and node.value is None or \
                isinstance(node, ast.Return) and node.value is None:
            return f"it may return None (line {node.lineno})"
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, complex)):
            return f"it uses {node.value!r}, not a number (line {node.lineno})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) \
                and not (isinstance(node.right, ast.Constant) and node.right.value) \
                and not is_extent(node.right, ir.table):  # at least 1 where a cell is
            return f"it may divide by zero (line {node.lineno})"
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                               and node.func.id in _SAFE_CALLS):
            return f"it calls {ast.unparse(node.func)}, which may raise (line {node.lineno})"
    return None


def _floats(fn: ast.FunctionDef, params: dict[str, Any], namespace: dict[str, Any]) -> str | None:
    """Where the cell may compute a float (a float literal, ``/``, ``**``, ``float()``, an
    attribute such as ``np.inf``, a float argument or module constant), or ``None``."""
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, (float, complex)):
            return f"the float {node.value!r} (line {line})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Pow)):
            return f"{ast.unparse(node)} (line {line})"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "float":
            return f"{ast.unparse(node)} (line {line})"
        if isinstance(node, ast.Attribute) and node.attr != "shape":
            return f"{ast.unparse(node)} (line {line})"
        if isinstance(node, ast.Name):
            value = params.get(node.id, namespace.get(node.id))
            kind = value.dtype.kind if isinstance(value, (np.ndarray, np.generic)) else \
                "f" if isinstance(value, (float, complex)) else "i"
            if kind in "fc":
                return f"{node.id}, a float (line {line})"
    return None


def certify(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...]) -> Certificate | str:
    """The certificate of the cell function read as ``ir`` with arguments like ``args``
    for a table like ``shape`` (their kinds matter, and the size facts the proof needs
    become requirements), or why there is none (module docstring)."""
    found = _proven(ir, args, shape)
    return found if isinstance(found, str) else found[0]


def certify_hyperplane(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...],
                       pi: tuple[int, ...]) -> str | None:
    """Why hyperplane ``pi`` is not proven to put every read of the cell function read as
    ``ir`` on an earlier step than its cell's, for every shape, under the premises of
    :func:`certify`'s certificate (its requirements); ``None`` when it is proven.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def lcs3(M, i, j, k):
    ...     if i == 0 or j == 0 or k == 0:
    ...         return 0
    ...     return max(M[i - 1, j, k], M[i, j - 1, k], M[i, j, k - 1])
    >>> certify_hyperplane(read_cell(lcs3, 3), (), (4, 5, 6), (1, 1, 1)) is None
    True
    >>> certify_hyperplane(read_cell(lcs3, 3), (), (4, 5, 6), (1, 1, 0))
    'the read M[i, j, k - 1] (line 4) may not be on an earlier hyperplane of pi = (1, 1, 0)'
    """
    found = _proven(ir, args, shape)
    return f"no certificate ({found})" if isinstance(found, str) else later_read(found[1], pi)


def _proven(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...]
            ) -> tuple[Certificate, Prover] | str:
    """:func:`certify`'s certificate and the prover that proved it (its premises: the
    data's floor and the size facts needed), or why there is none."""
    walk = _walked(ir, args, shape)
    if isinstance(walk, str):
        return walk
    fn = ir.definition()
    why = ""
    for attempt in _provers(walk):
        found = prove(attempt)
        if isinstance(found, Certificate):
            found, attempt = _fewest_facts(found, attempt)
            return dataclasses.replace(found, floats=_floats(fn, walk.params,
                                                             walk.namespace)), attempt
        why = found  # the attempt that assumes the most: what it cannot prove, none can
    return why


def _provers(walk: Walk) -> Iterator[Prover]:
    """Provers of ``walk``'s reads under more and more premises, in the order a proof
    tries them: the size facts only where needed, the data's ceilings only where those
    are not enough, and for each, the floors of :data:`LADDER` on the data whose
    elements index ``M`` (none where no element does)."""
    sizes = tuple(walk.facts())
    for facts in dict.fromkeys(((), sizes, sizes + tuple(walk.ceilings()))):
        for floor in LADDER if walk.indexing() else (None,):
            yield Prover(walk, floor, facts)


def _walked(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...],
            lenient: bool = False) -> Walk | str:
    """Every path through the cell function read as ``ir``, walked
    (:class:`~depgraph.analysis.symbolic.Walk`, ``lenient`` or not), or why it cannot be."""
    if ir.hidden:
        return ir.hidden
    if ir.reassigned:
        name, line, _ = ir.reassigned[0]
        return f"index {name!r} is reassigned (line {line})"
    fn = ir.definition()
    raises = may_raise(ir)
    if raises:
        return raises
    known = {ir.table, *ir.index, *ir.params, *ir.assigned, *function_namespace(ir.func),
             *dir(builtins)}
    unknown = next((n for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Load) and n.id not in known), None)
    if unknown is not None:
        return f"it uses {unknown.id!r}, which is not defined (line {unknown.lineno})"
    walk = Walk(ir, args, shape, lenient)
    try:
        walk.block(list(fn.body), {}, ())
    except (GiveUp, RecursionError) as exc:
        return str(exc)
    return walk


def trust(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...]
          ) -> tuple[Trusted, ...] | str:
    """The reads of the cell function read as ``ir`` (with arguments like ``args``, a
    table like ``shape``) that a proof covers where no certificate covers them all
    (:func:`depgraph.analysis.prover.trusted`), under each set of premises a certificate
    would try (the size facts, the data's floors and ceilings), each distinct one once;
    or why the function cannot be walked.  Meant for a cell without a certificate: of
    one with, it may say less."""
    walk = _walked(ir, args, shape, lenient=True)
    if isinstance(walk, str):
        return walk
    return tuple(dict.fromkeys(prover.trusted(p) for p in _provers(walk)))


def _fewest_facts(cert: Certificate, prover: Prover) -> tuple[Certificate, Prover]:
    """The certificate proven again without each of the prover's size and data facts in
    turn, where it holds without it: a requirement the proof does not need would refuse
    tables it holds for.  The powers of two go first (a side's against another's, then
    the side alone: the weakest kept), then the facts of the arguments, the last offered
    first, then the table's own: of facts that say the same, the table's are kept (a
    square table's ``M.shape[0] == M.shape[1]`` rather than each side against an
    argument's length)."""
    table = f"{prover.walk.ir.table}.shape["
    powers = [f for f in prover.facts if f[1].power_of_two]
    own = [f for f in prover.facts if f[1].subject.startswith(table) and f not in powers]
    for fact in powers + [f for f in reversed(prover.facts) if f not in own + powers] + own:
        fewer = Prover(prover.walk, prover.floor, tuple(f for f in prover.facts if f is not fact))
        found = prove(fewer, elements_first=True)
        if isinstance(found, Certificate):
            cert, prover = found, fewer
    return cert, prover


#: The sources a certificate is a fact of: the values, the walk and its bit operations,
#: the prover, its linear programs, and this module.
_PROVER_SOURCES = (proof.__file__, symbolic.__file__, bitwise.__file__, prover.__file__,
                    simplex.__file__, __file__)


@functools.cache
def _prover_digest() -> str:
    """A digest of the prover's modules' source: a change to any is a new certificate."""
    digest = hashlib.sha256()
    for source in _PROVER_SOURCES:
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()


def _size_facts(args: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The size and data facts :meth:`~depgraph.analysis.symbolic.Walk.facts` and
    :meth:`~depgraph.analysis.symbolic.Walk.ceilings` may use, coarsely: how each table
    extent, and each argument's extents (a scalar's value), sit against the table's and
    against the log2 of those that are powers of two, the small extents' values, which
    extents each integer array's greatest element is below, and which are powers of
    two."""
    # each extent's log2 where it is a power of two (a bitmask's table)
    logs = [n.bit_length() - 1 if n >= 1 and n & (n - 1) == 0 else None for n in shape]

    def near(v: int) -> tuple[int | None, ...]:
        return tuple(v - n if abs(v - n) <= 2 else None for n in shape) + \
            tuple(v - L if L is not None and abs(v - L) <= 2 else None for L in logs)

    sizes = [near(int(a)) if isinstance(a, (int, np.integer)) else
             tuple(near(d) for d in np.shape(a)) for a in args]
    below = [tuple(int(a.max()) <= n - 1 for n in shape)
             for a in args if isinstance(a, np.ndarray) and a.dtype.kind in "iub" and a.size]
    return (tuple(near(n) for n in shape), tuple(sizes),
            tuple(n if n <= SMALL else None for n in shape), tuple(below), tuple(logs))


def _key(ir: CellIR, args: tuple[Any, ...], shape: tuple[int, ...]) -> str:
    """What a certificate depends on: the source, the module constants it names, the
    arguments' kinds, and the prover itself."""
    ns = function_namespace(ir.func)
    names = sorted({n.id for n in ast.walk(ir.definition()) if isinstance(n, ast.Name)})
    constants = [(n, repr(ns[n])) for n in names if isinstance(ns.get(n), (int, np.integer))]
    kinds = [a.dtype.str if isinstance(a, np.ndarray) else type(a).__name__ for a in args]
    text = repr((ir.source, ir.ndim, constants, kinds, _size_facts(args, shape),
                 _prover_digest()))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def certificate(rec: Any, ir: CellIR | None = None) -> Certificate | str:
    """:func:`certify` of a recurrence, kept on disk per digest of what it depends on.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> w = np.array([2, 3, 1]); p = np.array([4, 5, 3])
    >>> @recurrence(shape=(4, 6), dtype=np.int64, args=(w, p))
    ... def knapsack(M, i, j, w, p):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     wi = w[i - 1]
    ...     if wi > j:
    ...         return M[i - 1, j]
    ...     return max(M[i - 1, j], p[i - 1] + M[i - 1, j - wi])
    >>> cert = certificate(knapsack)
    >>> [str(r) for r in cert.requires], cert.regions
    (['min(w) >= 0', 'w.shape[0] == M.shape[0] - 1', 'p.shape[0] == M.shape[0] - 1'], ('Up', 'UpLeft'))
    >>> from dataclasses import replace
    >>> cert.violated(replace(knapsack, args=(np.array([2, -1, 1]), p)), ("w", "p"))
    'min(w) >= 0 does not hold (min(w) is -1)'
    """
    ir = ir or cell_ir(rec)
    if ir.source is None:
        return ir.unavailable or "no source"
    return _kept(_key(ir, rec.args, rec.shape), lambda: certify(ir, rec.args, rec.shape),
                 lambda found: found.to_json() if isinstance(found, Certificate)
                 else {"why": found},
                 lambda d: str(d["why"]) if "why" in d else Certificate.from_json(d))


def trusted_reads(rec: Any, ir: CellIR | None = None) -> Trusted | None:
    """Of :func:`trust`'s proofs of a recurrence (kept on disk beside its certificate),
    the one covering the most whose requirements ``rec``'s data and sizes meet (the
    first, of those covering as many); ``None`` where the cell cannot be walked or
    ``rec`` breaks what each proof assumes: a fill then checks every read.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> d = np.array([1, -2, 3])
    >>> @recurrence(shape=(4, 9), dtype=np.int64, args=(d,))
    ... def drift(M, i, j, d):
    ...     if i == 0:
    ...         return 0
    ...     return M[i - 1, j] + M[i - 1, j + d[i - 1]]
    >>> t = trusted_reads(drift)
    >>> sorted(t.reads_in(("Up", "UpLeft", "UpRight"))), t.elements
    ([('M[i - 1, j]', 5)], (('d[i - 1]', 5),))
    """
    ir = ir or cell_ir(rec)
    if ir.source is None:
        return None
    found = _kept(f"{_key(ir, rec.args, rec.shape)}-trusted",
                  lambda: trust(ir, rec.args, rec.shape),
                  lambda t: {"why": t} if isinstance(t, str) else
                  {"proofs": [proof.to_json() for proof in t]},
                  lambda d: str(d["why"]) if "why" in d else
                  tuple(Trusted.from_json(proof) for proof in d["proofs"]))
    if isinstance(found, str):
        return None

    def covered(t: Trusted) -> tuple[int, int]:  # whole reads, then the edges of others
        return len(t.reads) + len(t.elements), sum(sum(sum(e, ())) for _, e in t.edges)

    held = [t for t in found if t.violated(rec, ir.params, ir.table) is None]
    return max(held, key=covered, default=None)


def arguments_proven(rec: Any, ir: CellIR | None = None) -> bool:
    """Whether every read of ``rec``'s array arguments is proven inside its array at
    ``rec``'s size and data: it has a certificate (which proves them, or there is none)
    whose requirements ``rec`` meets.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> def sack(w):
    ...     @recurrence(shape=(4, 3), dtype=np.int64, args=(w,))
    ...     def cell(M, i, j, w):
    ...         return 0 if i == 0 else M[i - 1, j] + w[i - 1]
    ...     return cell
    >>> arguments_proven(sack(np.ones(3, np.int64))), arguments_proven(sack(np.ones(2, np.int64)))
    (True, False)
    """
    ir = ir or cell_ir(rec)
    cert = certificate(rec, ir)
    return isinstance(cert, Certificate) and cert.violated(rec, ir.params, ir.table) is None


def unproven_hyperplane(rec: Any, pi: tuple[int, ...], ir: CellIR | None = None) -> str | None:
    """:func:`certify_hyperplane` of a recurrence, kept on disk beside its certificate.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 3, 3), dtype=np.int64)
    ... def layers(M, k, i, j):
    ...     return 0 if k == 0 else M[k - 1, i, j] + M[k - 1, i, k - 1]
    >>> unproven_hyperplane(layers, (1, 0, 0)) is None
    True
    >>> unproven_hyperplane(layers, (1, 0, 1))
    'the read M[k - 1, i, k - 1] (line 3) may not be on an earlier hyperplane of pi = (1, 0, 1)'
    """
    ir = ir or cell_ir(rec)
    if ir.source is None:
        return ir.unavailable or "no source"
    name = f"{_key(ir, rec.args, rec.shape)}-pi{'_'.join(map(str, pi))}"
    return _kept(name, lambda: certify_hyperplane(ir, rec.args, rec.shape, tuple(pi)),
                 lambda why: {"why": why}, _why)


def _why(stored: dict[str, Any]) -> str | None:
    """A stored hyperplane proof's answer (``TypeError`` when it is not one)."""
    why = stored["why"]
    if why is not None and not isinstance(why, str):
        raise TypeError(f"not a proof's answer: {why!r}")
    return why


Found = TypeVar("Found")


def _kept(name: str, prove_now: Callable[[], Found], encode: Callable[[Found], dict[str, Any]],
          decode: Callable[[dict[str, Any]], Found]) -> Found:
    """What ``prove_now`` finds, kept on disk as ``name`` in the certificates' folder
    (``encode`` writes it, ``decode`` reads it back); a damaged entry is proven again."""
    try:
        path = folder("certificates") / f"{name}.json"
    except OSError:
        path = None
    stored = read_json(path) if path is not None else None
    if isinstance(stored, dict):
        try:
            return decode(stored)
        except (KeyError, TypeError, ValueError, IndexError):
            pass  # damaged: proven again
    found = prove_now()
    if path is not None:
        write_json(path, encode(found))
    return found
