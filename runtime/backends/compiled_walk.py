"""The solution walk compiled: the breadth-first walk of
:func:`depgraph.frontend.provenance.solution` in one numba function, each cell's step
the compiled provenance step (:mod:`runtime.backends.provenance_step`).

The walk keeps the cells in the order found (its queue: a cell is taken from it in the
order it was put in), the edges in order (each end as where its cell was found in the
queue), a hash map of the cells seen to where they were found, the count of
undecided cells and whether an edge reached a cell already seen (only then may the
edges loop: :func:`depgraph.frontend.provenance.solution` looks for a loop then).  It
runs over a *window*: a dense array of the table's cells from an origin, the whole
table for a NumPy array; a :class:`depgraph.frontend.provenance.Cells` that has a
``window(cell)`` method gives one holding the cell and the cells it reads (or ``None``).
Where a step reads outside its window the walk returns to Python, which asks for the
window of that cell; where the step cannot go on (module docstring of
:mod:`runtime.backends.provenance_step`), or the window of the cell does not hold its
reads either, the Python step runs that cell and the compiled walk goes on after it.

Assumptions: those of :mod:`runtime.backends.provenance_step`; a window holds the values
the table holds (a refilled piece of a table equals the table: the cell function is
deterministic); flat cell indices fit 64 bits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from depgraph.errors import CompileError, RecurrenceError
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.provenance import Cells, Walked
from depgraph.frontend.source import SourceUnavailable, function_namespace
from depgraph.model import Recurrence
from runtime.backends import cpu
from runtime.backends.cache import CACHE
from runtime.backends.emit import (
    Emitter,
    arg_tail,
    compile_kept,
    compile_source,
    digest,
    remember,
)
from runtime.backends.provenance_step import (
    CAP,
    COMPARED,
    OUTSIDE,
    PYTHON,
    STOP,
    WHY,
    NotCompiled,
    arg_helper_source,
    helpers_source,
    step_source,
    wide_type,
)

__all__ = ["CompiledWalk", "compiled_walk", "prepare"]

#: How the walk's step, its helpers and its seen set are compiled: inlined into the walk
#: kernel, and the step's key says so (a kernel calling a function made from generated
#: source is not loaded from numba's disk cache in a later process).
_INLINED = {"inline": "always"}

Cell = tuple[int, ...]
#: The slots of the walk's ``pos``: the next cell to step, the cells found, the edges,
#: the undecided cells, whether an edge reached a cell already seen, and why it returned.
HEAD, TAIL, EDGES, UNDECIDED, REVISIT, CODE = range(6)
#: Why the walk returned, besides the step's ``OUTSIDE`` and ``PYTHON``: done, or its
#: arrays are full.
DONE, GROW = 0, 3


def _seen_sources() -> tuple[str, str]:
    """Sources of ``seen_put(H, key, at)`` (a hash map of flat cells to where the walk
    found them, in ``H``'s rows ``(key, at)``, a power of two of rows, key ``-1`` empty; at
    most half full: ``-1`` where ``key`` was new, put in at ``at``, else where it was
    found) and of ``seen_fill(H, cells, count)`` (the first ``count`` cells put in at
    their places), apart: each is compiled from a file of its own, the second seeing the
    first compiled."""
    put, fill = Emitter(), Emitter()
    with put.block("def seen_put(H, key, at)"):
        put("mask = H.shape[0] - 1", "h = key * -7046029254386353131",  # Fibonacci hashing
            "h = (h ^ (h >> 32)) & mask")
        with put.block("while True"):
            put("v = H[h, 0]")
            with put.block("if v == key"):
                put("return H[h, 1]")
            with put.block("if v == -1"):
                put("H[h, 0] = key", "H[h, 1] = at", "return -1")
            put("h = (h + 1) & mask")
    with fill.block("def seen_fill(H, cells, count)"):
        with fill.block("for q in range(count)"):
            fill("seen_put(H, cells[q], q)")
    return put.source, fill.source


def _seen() -> dict[str, Any]:
    """The compiled ``seen_put`` and ``seen_fill`` (:func:`_seen_sources`), kept on disk
    like the kernels (the walk calls them from Python too, as it starts and grows)."""

    def build() -> dict[str, Any]:
        def jit(func: Any, cache: bool) -> Any:
            return cpu.jit(func, cache=cache, **_INLINED)

        built: dict[str, Any] = {}
        for name, source in zip(("seen_put", "seen_fill"), _seen_sources()):
            key = digest(source, built)
            built[name] = remember(compile_kept(source, name, dict(built), f"s{key}", jit), key)
        return built

    return CACHE.get(_seen_sources, ("seen",), build)


def prepare() -> None:
    """Load the hash map every compiled walk starts with (:func:`_seen`), and with it, in
    a process that has run no CPU function yet (one that filled on the GPU), numba's CPU
    target, whose start (imports, scipy's among them where it is installed) took a few
    tenths of a second: a caller waiting on the device has it done meanwhile.

    Examples
    --------
    >>> prepare()
    """
    _seen()["seen_put"](np.full((2, 2), -1, dtype=np.int64), 0, 0)


def _walk_source(ndim: int, nargs: int) -> str:
    """Source of ``walk(M, o, n, st, pos, cells, edges, seen, *args)``: the walk over the
    window ``M`` (first cell ``o`` of a table of shape ``n``) from ``pos[HEAD]`` until
    every cell found is stepped (``pos[CODE]`` = ``DONE``), its arrays could overflow
    (``GROW``), or a step stopped (its ``WHY``), each cell's state stored as it is
    done."""
    args = arg_tail(nargs)
    e = Emitter()
    with e.block(f"def walk(M, o, n, st, pos, cells, edges, seen{args})"):
        with e.block(f"while pos[{HEAD}] < pos[{TAIL}]"):
            with e.block(f"if pos[{TAIL}] + {CAP} > cells.shape[0] or pos[{EDGES}] + {CAP} > "
                         f"edges.shape[0] or 2 * (pos[{TAIL}] + {CAP}) > seen.shape[0]"):
                e(f"pos[{CODE}] = {GROW}", "return")
            e(f"c = cells[pos[{HEAD}]]", "f = c")
            for k in reversed(range(1, ndim)):
                e(f"x{k} = f % n[{k}]", f"f //= n[{k}]")
            e("x0 = f", f"st[{STOP}] = 0", f"st[{COMPARED}] = 0", f"st[{WHY}] = 0")
            e(f"r = cell(M, st, o, n, {', '.join(f'x{k}' for k in range(ndim))}{args})")
            with e.block(f"if st[{STOP}] != 0"):
                e(f"pos[{CODE}] = st[{WHY}]", "return")
            e("k = r[0]", f"t = pos[{TAIL}]", f"d = pos[{EDGES}]")
            with e.block("for q in range(k)"):
                e("x = r[1 + q]", f"edges[d, 0] = pos[{HEAD}]", "at = seen_put(seen, x, t)")
                with e.block("if at < 0"):
                    e("cells[t] = x", "edges[d, 1] = t", "t += 1")
                with e.block("else"):
                    e("edges[d, 1] = at", f"pos[{REVISIT}] = 1")
                e("d += 1")
            with e.block(f"if k > 1 and st[{COMPARED}] == 0"):  # a sum nothing chose
                e(f"pos[{UNDECIDED}] += 1")
            e(f"pos[{TAIL}] = t", f"pos[{EDGES}] = d", f"pos[{HEAD}] += 1")
        e(f"pos[{CODE}] = {DONE}")
    return e.source


class CompiledWalk:
    """The compiled walk of ``rec``'s solution (module docstring), a
    :data:`depgraph.frontend.provenance.Walker`; :class:`NotCompiled` (or
    ``SourceUnavailable``) where its cell function has a construct the translation does
    not take.  ``steps``: the cells the compiled step ran, ``python_steps`` those the
    Python step ran, ``windows`` the windows asked for, ``compile_s`` the seconds numba
    took compiling, after a call."""

    def __init__(self, rec: Recurrence, ir: CellIR):
        arrays = frozenset(p for p, a in zip(ir.params, rec.args) if isinstance(a, np.ndarray))
        self.rec, self.ndim = rec, ir.ndim
        self.source, counts = step_source(ir, arrays, function_namespace(rec.func))
        self.helpers = helpers_source(ir.ndim) + "".join(arg_helper_source(c) for c in counts)
        self.python_steps = self.windows = 0
        self.compile_s = 0.0

    def _kernel(self, wide: type) -> Callable[[bool], Any]:
        """The walk's kernel for reads widened to ``wide``."""
        key = digest(self.source, {"helpers": self.helpers, "wide": wide.__name__,
                                   "cell": self.rec.func, "jit": _INLINED})

        def build() -> Any:
            ns: dict[str, Any] = {"_dg_E": (0,) * (CAP + 1), "_dg_WIDE": wide,
                                  "_dg_ZERO": wide(0)}
            compile_source(self.helpers, "_dg_union", ns)
            helpers = {name: cpu.jit(f, **_INLINED) for name, f in ns.items()
                       if name.startswith("_dg_") and callable(f) and name != "_dg_WIDE"}
            ns.update(helpers)
            names = {**function_namespace(self.rec.func), **ns}
            step = compile_source(self.source, "_dg_step", names)
            return remember(cpu.jit(step, **_INLINED), key)

        step = CACHE.get(self.rec.func, ("walk step", key), build)
        return cpu.kernel(self.rec, _walk_source(self.ndim, len(self.rec.args)), "walk", step,
                          {"seen_put": _seen()["seen_put"]})

    def __call__(self, table: np.ndarray | Cells, start: Cell,
                 step: Callable[[Cell], tuple[tuple[Cell, ...], bool]]) -> Walked | None:
        """The walk from ``start`` over ``table`` (``step``: the Python step, for the
        cells the compiled one does not run), or ``None`` where it does not walk this
        table (no window, values it does not serve, a cell numba does not compile)."""
        windowed = not isinstance(table, np.ndarray)
        if windowed and not hasattr(table, "window"):
            return None
        shape = tuple(int(s) for s in table.shape)
        M, o = (table, (0,) * len(shape)) if not windowed else (None, (0,) * len(shape))
        state = _State(shape, start)
        make: Callable[[bool], Any] | None = None
        asked = -1  # the cell whose window is held (windowed)
        while True:
            head = int(state.pos[HEAD])
            if head == state.pos[TAIL]:  # after a Python step: every cell found stepped
                return state.walked()
            if windowed and M is None:
                got = table.window(state.cell(head))  # type: ignore[union-attr]
                self.windows += 1
                if got is None:
                    self._python(state, step, head)
                    continue
                (M, o), asked = got, head
            if make is None:
                wide = wide_type(M.dtype)
                if wide is None:
                    return None
                make = self._kernel(wide)
            code = self._run(make, M, o, state)
            if code is None:
                return None
            if code == DONE:
                return state.walked()
            if code == GROW:
                state.grow(CAP)
                continue
            head = int(state.pos[HEAD])
            if code == OUTSIDE and windowed and asked != head:
                M = None  # the window of this cell, next
                continue
            self._python(state, step, head)
            if windowed:
                M = None  # the Python step may have refilled the piece the window showed

    def _run(self, make: Callable[[bool], Any], M: np.ndarray, o: tuple[int, ...],
             state: _State) -> int | None:
        """The compiled walk from the state's head; why it returned (``None``: numba did
        not compile it, so the Python walk goes)."""
        try:
            timing = cpu.call(make, M, tuple(int(x) for x in o), state.shape, state.st, state.pos,
                     state.cells, state.edges, state.seen, *self.rec.args)
        except CompileError:
            return None
        except RecurrenceError:  # the compiled step raised (a division by zero): Python's turn
            return PYTHON
        self.compile_s += timing.compile_s
        return int(state.pos[CODE])

    def _python(self, state: _State, step: Callable[[Cell], tuple[tuple[Cell, ...], bool]],
                head: int) -> None:
        """The Python step of the cell at ``head``, its reads put in the state."""
        self.python_steps += 1
        reads, unchosen = step(state.cell(head))
        state.grow(len(reads))
        state.put(head, reads, unchosen)


class _State:
    """What a compiled walk has found (module docstring), in arrays it grows."""

    def __init__(self, shape: tuple[int, ...], start: Cell):
        self.shape = shape
        self.st = np.zeros(3, dtype=np.int64)
        self.pos = np.zeros(6, dtype=np.int64)
        self.cells = np.empty(1024, dtype=np.int64)
        self.edges = np.empty((1024, 2), dtype=np.int64)
        self.seen = np.full((4096, 2), -1, dtype=np.int64)
        self.cells[0] = np.ravel_multi_index(start, shape)
        self.pos[TAIL] = 1
        _seen()["seen_put"](self.seen, self.cells[0], 0)

    def cell(self, k: int) -> Cell:
        """The ``k``-th cell found."""
        return tuple(int(x) for x in np.unravel_index(int(self.cells[k]), self.shape))

    def grow(self, more: int) -> None:
        """Room for ``more`` cells and edges past those of the arrays' checks."""
        tail, edges = int(self.pos[TAIL]), int(self.pos[EDGES])
        if tail + more + CAP > len(self.cells):
            self.cells = np.concatenate([self.cells, np.empty(max(len(self.cells), more + CAP),
                                                              dtype=np.int64)])
        if edges + more + CAP > len(self.edges):
            self.edges = np.concatenate([self.edges, np.empty((max(len(self.edges), more + CAP),
                                                               2), dtype=np.int64)])
        if 2 * (tail + more + CAP) > len(self.seen):
            size = len(self.seen)
            while 2 * (tail + more + CAP) > size:
                size *= 4
            self.seen = np.full((size, 2), -1, dtype=np.int64)
            _seen()["seen_fill"](self.seen, self.cells, tail)

    def put(self, head: int, reads: tuple[Cell, ...], unchosen: bool) -> None:
        """The reads the Python step found for the cell at ``head``."""
        seen_put = _seen()["seen_put"]
        for read in reads:
            tail, x = int(self.pos[TAIL]), np.ravel_multi_index(read, self.shape)
            at = seen_put(self.seen, x, tail)
            if at < 0:
                self.cells[tail] = x
                self.pos[TAIL] += 1
            else:
                self.pos[REVISIT] = 1
            self.edges[self.pos[EDGES]] = (head, tail if at < 0 else at)
            self.pos[EDGES] += 1
        self.pos[UNDECIDED] += unchosen
        self.pos[HEAD] = head + 1

    def walked(self) -> Walked:
        """The cells, the edges, the undecided count and whether an edge reached a cell
        already seen, as Python values: each cell one tuple, which every edge holding it
        shares (the edges hold where their cells were found)."""
        flat = self.cells[:self.pos[TAIL]]
        cells = list(zip(*(a.tolist() for a in np.unravel_index(flat, self.shape))))
        ends, found = self.edges[:self.pos[EDGES]], cells.__getitem__
        edges = list(zip(map(found, ends[:, 0].tolist()), map(found, ends[:, 1].tolist())))
        return cells, edges, int(self.pos[UNDECIDED]), bool(self.pos[REVISIT])


def compiled_walk(rec: Recurrence) -> CompiledWalk | None:
    """The compiled walk of ``rec``'s solution, or ``None`` where the translation does
    not take its cell function (the Python walk then runs) or it recovers by its own
    function (``recover=``, which the walk calls in Python)."""
    if rec.recover is not None:
        return None
    try:
        return CompiledWalk(rec, cell_ir(rec))
    except (NotCompiled, SourceUnavailable):
        return None
