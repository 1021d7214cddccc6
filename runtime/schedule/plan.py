"""What a fill may do, decided at the size it runs: regions, pattern, stages, reference.

A schedule is only as good as the reads it was derived from, and reads may depend on the
data and the size.  So a plan is always made for the very recurrence being filled:

- tables (any dimension) whose reads a *certificate* proves in bounds for every shape
  (:mod:`depgraph.analysis.certify`), and within a pattern's regions (2-D) or on earlier
  steps of the hyperplane the source's offsets allow (proven, not assumed), whose data
  meets the certificate's requirements and whose values cannot leave the dtype
  (:func:`runtime.backends.walk.value_bounds`): nothing is run; the plan has no
  reference table until one is asked for (:attr:`Plan.reference`), which a checked
  sweep makes: in 2-D the one below, in any other dimension a compiled fill in a
  lexicographic order with every read checked (:func:`lex_reference`), else the trace.
- other tables, for a fill that can check its own reads (:func:`in_fill_plan`,
  which :func:`runtime.run.fill` asks for first): the regions the
  reads *may* fall in by their constant offsets along each axis
  (:meth:`depgraph.frontend.ir.CellIR.possible_regions`), or where those allow no
  pattern the regions of a certificate whose data requirements hold (a cell whose
  reads are proven but not its values), choose a pattern (2-D), else
  their offsets a hyperplane (any dimension), else the regions a sample of cells' reads
  fall in a pattern (2-D; :mod:`depgraph.frontend.sample`, only a guess), and the fill
  checks, where it runs, that each read is in the table and in the pattern's regions
  (on an earlier hyperplane), and each value fits, but for the reads a proof covers
  (:func:`depgraph.analysis.certify.trusted_reads`: process scheduling's ``M[k + 1, a]``
  and its reads of ``p`` and ``P``, where only ``M[k + 1, a + p[k]]`` may leave the
  table).  No table is filled before the fill (a guess runs a few dozen cells over
  zeros); a fill
  whose checks fail is not used, and the caller plans again with a checked sweep, which
  names the cell.
- other 2-D tables whose cell function's source is available: a *checked sweep* — the compiled
  sequential fill in a lexicographic order with every read of ``M`` checked
  (:mod:`runtime.backends.cpu`).  It records the region of every read, the first
  out-of-bounds read and the first value that does not fit an integer table.  If every
  read landed in a region the order had already filled, the pass was a valid sequential
  fill: its table is the reference and its regions are exact.  If not, the next order
  covering every region seen is tried (at most the eight orders).
- otherwise (other dimensions, stage schedules, no source, ``M`` used other than by
  reads of one cell, no lexicographic order fits):
  the Python trace of :func:`depgraph.analyze`, which also gives the stage arrays.

The plan carries the cell IR it was made with (:class:`depgraph.frontend.ir.CellIR`),
so every backend takes the same reading of the cell.

Assumption: the cell function is deterministic, so the same inputs give the same reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from depgraph.analysis.certify import (Certificate, certificate, may_raise, trusted_reads,
                                       unproven_hyperplane)
from depgraph.analysis.proof import Trusted
from depgraph.analysis.pipeline import Analysis, analyze
from depgraph.analysis.schedule import source_hyperplane
from depgraph.errors import CellFunctionError, CompileError, OutOfBoundsError, RecurrenceError
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.sample import sample_offsets
from depgraph.frontend.source import SourceUnavailable
from depgraph.frontend.trace import check_value
from depgraph.model import Recurrence
from patterns import (BY_CODE, SWEEPS, LexOrder, Sweep, lex_order, matching, region_of, select,
                      sweep_for)
from patterns.hyperplane import Hyperplane, Shear, shear, slab
from runtime.backends.cpu import ARG, MISFIT, OOB, regions_of_flags, sweep_fill
from runtime.backends.rewrite import unchecked_subscript
from runtime.backends.walk import argument_error, value_bounds

__all__ = ["Plan", "make_plan", "checked_sweep", "lex_reference", "certified_plan", "in_fill_plan",
           "shear_of"]


@dataclass(frozen=True, eq=False)
class Plan:
    """The schedule facts of one recurrence at its own size.

    Attributes
    ----------
    recurrence : Recurrence
    ir : CellIR
        The cell function as read once (:func:`depgraph.frontend.ir.read_cell`).
    regions, patterns, pattern :
        As in :class:`depgraph.Classification` (``None`` unless 2-D); for a checked
        fill, the regions the reads may fall in.
    sweep : Sweep or None
        A lexicographic order valid for these reads (2-D only).
    made_reference : ndarray or None
        The sequential reference table the plan made (``None`` for a certificate's plan;
        :attr:`reference` makes it when asked).
    analysis : Analysis or None
        The traced analysis (stage arrays) when the plan came from a trace.
    method : str
        ``"certificate"``, ``"checked fill"`` (the fill checks its reads),
        ``"checked sweep"`` or ``"trace"``.
    seconds : float
        Time taken to make the plan.
    notes : tuple of str
        Why the plan was made this way.
    cell_s : float or None
        Seconds per cell of the checked sweep: a measure of the cell function's cost.
    hyperplane : Hyperplane or None
        Where no pattern fits: the hyperplane the reads allow
        (:mod:`depgraph.analysis.schedule`), ``None`` when none does.
    trusted : Trusted or None
        For a checked fill: the reads a proof covers, which it need not check
        (:func:`depgraph.analysis.certify.trusted_reads`).
    """

    recurrence: Recurrence
    ir: CellIR
    regions: tuple[str, ...] | None
    patterns: tuple[str, ...] | None
    pattern: str | None
    sweep: Sweep | None
    made_reference: np.ndarray | None
    analysis: Analysis | None
    method: str
    seconds: float
    notes: tuple[str, ...] = field(default=())
    cell_s: float | None = None
    hyperplane: Hyperplane | None = None
    trusted: Trusted | None = None

    @property
    def reference(self) -> np.ndarray:
        """The sequential reference table: the one the plan made, or, for a plan that made
        none, one made now by a checked sweep, which trusts no proof and checks the reads
        once more (:func:`checked_sweep` in 2-D; :func:`lex_reference` in any other
        dimension, else the trace, which names what failed)."""
        if self.made_reference is None:
            rec = self.recurrence
            found = lex_reference(rec, self.ir) if rec.ndim != 2 else None
            table = found[0] if isinstance(found, tuple) else \
                make_plan(rec, self.ir, certified=False).made_reference
            object.__setattr__(self, "made_reference", table)
        assert self.made_reference is not None
        return self.made_reference

    @property
    def pattern_steps(self) -> int | None:
        if self.pattern is None:
            return None
        return BY_CODE[self.pattern].steps((self.recurrence.shape[0], self.recurrence.shape[1]))

    @property
    def linear(self) -> Hyperplane | None:
        """The linear schedule a fill by hyperplanes follows: the pattern's own ``pi``,
        else the plan's hyperplane (``None`` when neither)."""
        if self.pattern is not None:
            return Hyperplane(BY_CODE[self.pattern].pi)
        return self.hyperplane


def checked_sweep(rec: Recurrence, ir: CellIR
                  ) -> tuple[tuple[str, ...], Sweep, np.ndarray, float] | str:
    """Fill a 2-D table sequentially with checked reads, trying lexicographic orders.

    Returns ``(regions, sweep, table, seconds)`` from the first order in which every read
    was of a cell already filled (``seconds``: that sweep's run time), or a sentence
    saying why no order could be confirmed.  A real out-of-bounds read raises
    ``OutOfBoundsError`` naming the cell, the read and the shape; a read of an array
    argument outside it, ``CellFunctionError`` naming the cell (worded as the python
    backend's ``IndexError``); a value that does not
    fit an integer table's dtype, ``CellFunctionError`` naming the cell and the value.

    Raises ``SourceUnavailable`` when the function's source cannot be rewritten and
    ``CompileError`` when numba cannot compile it.
    """
    seen: set[str] = set()
    tried: set[Sweep] = set()
    while True:
        sweep = next((s for s in SWEEPS if seen <= s.covers and s not in tried), None)
        if sweep is None:
            return f"no lexicographic order fills the reads seen ({', '.join(sorted(seen))})"
        tried.add(sweep)
        table = np.zeros(rec.shape, dtype=rec.dtype)
        try:
            ck, timing = sweep_fill(rec, ir, table, sweep, checked=True)
        except CompileError:
            raise
        except RecurrenceError as exc:  # maybe from reading unfilled cells: the trace decides
            return f"the compiled sweep failed ({exc})"
        regions = set(regions_of_flags(ck))
        if regions <= sweep.covers:
            if ck[OOB]:
                cell, read = ck[OOB + 1 : OOB + 3], ck[OOB + 3 : OOB + 5]
                raise OutOfBoundsError(tuple(cell.tolist()), tuple(read.tolist()), rec.shape)
            if ck[ARG]:
                raise argument_error(rec, ck[ARG + 1 : ARG + 3], *ck[ARG + 3 : ARG + 6].tolist())
            if ck[MISFIT]:
                misfit(rec, table, tuple(ck[MISFIT + 1 : MISFIT + 3].tolist()))
            return tuple(sorted(regions)), sweep, table, timing.run_s
        seen |= regions


def lex_reference(rec: Recurrence, ir: CellIR) -> tuple[np.ndarray, LexOrder, float] | str:
    """The sequential reference of a table of any number of dimensions, compiled: a fill
    one cell at a time in the lexicographic order the source's read offsets allow
    (:func:`patterns.lexorder.lex_order`), every read checked where it runs to be in the
    table and of a cell the order has filled already, and every value of an integer
    table to fit its dtype (:func:`runtime.backends.cpu.sweep_fill`).  It rests on no
    certificate or hyperplane: where no check failed, every cell read a filled cell.

    Returns ``(table, order, seconds)`` (``seconds``: the fill's run time), or a sentence
    saying why there is none: no order, a cell whose reads cannot be rewritten or do not
    compile, a failed check or an error raised in the fill.  The caller then traces,
    which computes the table in any order that works and names a read out of the table,
    a cycle or a value that does not fit, each as it always has.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(3, 4, 2), dtype=np.int64)
    ... def cube(M, i, j, k):
    ...     return 1 if i == 0 or j == 0 or k == 0 else M[i - 1, j, k] + M[i, j - 1, k - 1]
    >>> table, order, _ = lex_reference(cube, cell_ir(cube))
    >>> int(table[2, 3, 1]), order.text()
    (3, 'axis 0 up, axis 1 up, axis 2 up')
    >>> @recurrence(shape=(3, 4, 2), dtype=np.int64)
    ... def late(M, i, j, k):
    ...     return 1 if i == 2 else M[i + 1, j, k] + M[i, (j + 1) % 4, k]
    >>> lex_reference(late, cell_ir(late))
    'a read left the table or was of a cell not filled yet in the order axis 0 down, axis 1 up, axis 2 up'
    """
    try:
        order = lex_order(ir.read_offsets(), rec.ndim)
    except SourceUnavailable as exc:
        return str(exc)
    if order is None:
        return "no lexicographic order fills every read before its cell"
    table = np.zeros(rec.shape, dtype=rec.dtype)
    try:
        ck, timing = sweep_fill(rec, ir, table, order, checked=True)
    except (SourceUnavailable, CompileError, RecurrenceError) as exc:
        return f"the compiled sweep failed ({exc})"
    if ck[OOB]:
        return (f"a read left the table or was of a cell not filled yet in the order "
                f"{order.text()}")
    if ck[MISFIT]:
        return f"a value does not fit the table's dtype {rec.dtype}"
    return table, order, timing.run_s


class _Exact:
    """A table whose cells read as Python numbers, so a cell function computes in Python's
    exact integers, as the trace does, not in the table's wrapping dtype."""

    def __init__(self, table: np.ndarray):
        self.table, self.shape, self.ndim = table, table.shape, table.ndim

    def __getitem__(self, key: Any) -> Any:
        return self.table[key].item()


def misfit(rec: Recurrence, table: np.ndarray, cell: tuple[int, ...]) -> None:
    """Raise the error for the first ``cell`` of a checked sweep whose value does not fit
    the table's dtype, the value computed again in Python from ``table`` (every cell
    before it in the sweep was filled and fits, so it reads what the sweep read)."""
    try:
        value = rec.func(_Exact(table), *cell, *rec.args)
    except Exception:  # it runs only compiled (a compiled helper reads M, say)
        raise CellFunctionError(cell, f"its value is not a number or does not fit the "
                                      f"table's dtype {rec.dtype}") from None
    check_value(cell, value, rec.dtype)
    raise CellFunctionError(cell, f"its value {value!r} does not fit the table's dtype "
                                  f"{rec.dtype}")


def certified_plan(rec: Recurrence, ir: CellIR) -> Plan | str:
    """The plan a certificate gives ``rec`` with no pass over the table, or why there is
    none (module docstring): a pattern the regions it proves allow (2-D), else the
    hyperplane of the source's read offsets (:func:`source_hyperplane`), which the
    certificate's premises must prove puts every read on an earlier step
    (:func:`depgraph.analysis.certify.unproven_hyperplane`), any dimension.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(3, 4), dtype=np.int64)
    ... def grid(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> p = certified_plan(grid, cell_ir(grid))
    >>> p.method, p.pattern, p.made_reference is None, int(p.reference[2, 3])
    ('certificate', 'NOSE', True, 10)
    >>> @recurrence(shape=(3, 4, 2), dtype=np.int64)
    ... def cube(M, i, j, k):
    ...     return 1 if i == 0 or j == 0 or k == 0 else M[i - 1, j, k] + M[i, j - 1, k - 1]
    >>> p = certified_plan(cube, cell_ir(cube))
    >>> p.method, p.regions, p.hyperplane, int(p.reference[2, 3, 1])
    ('certificate', None, Hyperplane(pi=(1, 0, 1)), 3)
    """
    t0 = time.perf_counter()
    cert = certificate(rec, ir)
    if not isinstance(cert, Certificate):
        return f"no certificate ({cert})"
    broken = cert.violated(rec, ir.params, ir.table)
    if broken:
        return f"the certificate needs {broken}"
    flat = rec.ndim == 2  # regions and patterns are a 2-D table's
    pattern = select(cert.regions, (rec.shape[0], rec.shape[1])) if flat else None
    found, why = (None, "") if pattern is not None else source_hyperplane(ir, rec.shape)
    if pattern is None and found is None:
        return (f"no pattern allows every region the certificate leaves open "
                f"({', '.join(cert.regions)}), and no hyperplane fits: {why}" if flat else
                f"no hyperplane fits: {why}")
    if found is not None:
        # proven under the certificate's premises, not taken on trust of the source's
        # offsets: a read the offsets do not describe is caught here
        unproven = unproven_hyperplane(rec, found.pi, ir)
        if unproven:
            return f"hyperplane pi = {found.text()} is not proven: {unproven}"
    if rec.dtype.kind in "iu" and cert.floats:
        return f"the cell may compute a float ({cert.floats}) for an integer table"
    steps = BY_CODE[pattern].steps((rec.shape[0], rec.shape[1])) if pattern \
        else found.steps(rec.shape)
    if value_bounds(rec, ir, steps) is not None:
        return f"no proof that every value fits {rec.dtype}"
    note = f"reads proven for every shape, no pass over the table: {cert.summary()}"
    if found is not None:
        note += (f"; {why}: hyperplane pi = {found.text()}, proven to put every read on an "
                 f"earlier step")
    return Plan(rec, ir, cert.regions if flat else None, cert.patterns if flat else None,
                pattern, sweep_for(cert.regions) if flat else None, None, None, "certificate",
                time.perf_counter() - t0, (note,), hyperplane=found)


def in_fill_plan(rec: Recurrence, ir: CellIR) -> Plan | str:
    """A plan for a fill that checks its own reads (module docstring), or why there is
    none: the pattern the regions the reads may fall in allow (2-D), else the hyperplane
    their offsets allow (any dimension), else the pattern a sample of the reads allows
    (2-D), with no pass over the table.
    A cell that may raise (:func:`depgraph.analysis.certify.may_raise`) has none: a
    parallel fill would lose the exception (numba's parallel regions and the GPU raise
    none), which the checked sweep names.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> w = np.array([2, 0, 1])
    >>> @recurrence(shape=(4, 5), dtype=np.int64, args=(w,))
    ... def sack(M, i, j, w):
    ...     return 0 if i == 0 else max(M[i - 1, j], M[i - 1, j - w[i - 1]] + 1)
    >>> p = in_fill_plan(sack, cell_ir(sack))
    >>> p.method, p.regions, p.pattern, p.made_reference is None
    ('checked fill', ('Up', 'UpLeft', 'UpRight'), 'RUD', True)
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def skew(M, i, j):
    ...     return 1 if i == 0 or j == 0 or j == 4 else M[i - 1, j + 1] + M[i, j - 1]
    >>> p = in_fill_plan(skew, cell_ir(skew))
    >>> p.pattern, p.hyperplane
    (None, Hyperplane(pi=(2, 1)))
    """
    t0 = time.perf_counter()
    try:
        ir.definition()
        if ir.hidden:
            return ir.hidden
        raises = may_raise(ir)
        if raises:  # a parallel fill loses an exception, a GPU raises none
            return f"{raises}, which a parallel fill could not report"
        unchecked = unchecked_subscript(ir, rec.args)
        if unchecked:  # the trace checks it, as Python does
            return unchecked
        regions = ir.possible_regions() if rec.ndim == 2 else None
    except SourceUnavailable as exc:
        return str(exc)
    pattern = None if regions is None else select(regions, (rec.shape[0], rec.shape[1]))
    how = "their constant offsets along each axis"
    if regions is not None and pattern is None:
        # the constant offsets leave too much open (nim's M[k, m - t]); a certificate may
        # not (its values, not its reads, unproven): the fill still checks every read
        cert = certificate(rec, ir)
        if isinstance(cert, Certificate) and not cert.violated(rec, ir.params, ir.table):
            regions, how = cert.regions, "the certificate"
            pattern = select(regions, (rec.shape[0], rec.shape[1]))
    if pattern is not None:
        note = (f"reads may fall in {', '.join(regions or ())} ({how}): the fill checks "
                f"each read, and each value, where it runs")
        return _pattern_plan(rec, ir, regions or (), pattern, note, t0)
    found, why = source_hyperplane(ir, rec.shape)
    if found is None:
        if regions is None:
            return f"no hyperplane fits: {why}"
        guessed = _guessed(rec, ir, regions, t0)
        if isinstance(guessed, Plan):
            return guessed
        return (f"no pattern allows every region the reads may fall in "
                f"({', '.join(regions)}), no hyperplane fits ({why}), and {guessed}")
    note = (f"{why}: hyperplane pi = {found.text()}; the fill checks each read (in the "
            f"table, on an earlier hyperplane), and each value, where it runs")
    trusted = trusted_reads(rec, ir)
    return Plan(rec, ir, regions, () if regions is not None else None, None,
                None if regions is None else sweep_for(regions), None, None, "checked fill",
                time.perf_counter() - t0, (note,) + _unchecked(trusted), hyperplane=found,
                trusted=trusted)


def _guessed(rec: Recurrence, ir: CellIR, possible: tuple[str, ...], t0: float) -> Plan | str:
    """A checked fill's plan by the pattern the regions of a sample of ``rec``'s reads
    allow (:func:`depgraph.frontend.sample.sample_offsets`), where the source's offsets
    leave the ``possible`` regions; or why there is none.  Only a guess: the fill checks
    each read against the pattern, and one it does not allow sends the planner back to the
    checked sweep."""
    offsets = sample_offsets(rec)
    if offsets is None:
        return "no sample of the reads could be taken"
    seen = tuple(sorted({region_of(di, dj) for di, dj in offsets} & set(possible)))
    pattern = select(seen, (rec.shape[0], rec.shape[1])) if "Self" not in seen else None
    if pattern is None:
        return (f"the reads of a sample of cells fall in {', '.join(seen) or 'none'}, which "
                "no pattern allows")
    note = (f"the reads of a sample of cells fall in {', '.join(seen)}, which {pattern} "
            f"allows (a guess): the fill checks each read, and each value, where it runs, "
            f"and any other read sends it back to the checked sweep")
    return _pattern_plan(rec, ir, seen, pattern, note, t0)


def _pattern_plan(rec: Recurrence, ir: CellIR, regions: tuple[str, ...], pattern: str,
                  note: str, t0: float) -> Plan:
    """The plan of a fill by ``pattern`` that checks its own reads, which may fall in
    ``regions`` (``note`` says how that is known; planning began at ``t0``), but those a
    proof covers."""
    trusted = trusted_reads(rec, ir)
    return Plan(rec, ir, regions, matching(regions), pattern, sweep_for(regions), None, None,
                "checked fill", time.perf_counter() - t0,
                (note,) + _unchecked(trusted, BY_CODE[pattern].allowed), trusted=trusted)


def _unchecked(trusted: Trusted | None, allowed: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The note saying what a checked fill in the order of a pattern whose regions are
    ``allowed`` (none: another order) leaves to the proof ``trusted``, if anything."""
    said = trusted.summary(allowed) if trusted else ""
    return (f"a proof covers {said}: the fill leaves that unchecked",) if said else ()


def make_plan(rec: Recurrence, ir: CellIR | None = None, need_stages: bool = False,
              progress: Callable[[int], None] | None = None, certified: bool = True) -> Plan:
    """Decide the schedule facts for ``rec`` at its own size (see the module docstring);
    ``ir``, the cell IR when the caller has it (:func:`depgraph.frontend.ir.cell_ir`);
    ``certified``: whether a certificate may stand in for the checked sweep.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(3, 3), dtype=np.int64)
    ... def grid(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> p = make_plan(grid, need_stages=True)
    >>> p.method, p.pattern, int(p.reference[2, 2])
    ('trace', 'NOSE', 6)
    """
    t0 = time.perf_counter()
    ir = ir or cell_ir(rec)
    notes: list[str] = []
    if not need_stages and certified:
        proven = certified_plan(rec, ir)
        if isinstance(proven, Plan):
            return proven
        notes.append(f"reads not proven for every shape: {proven}")
    if rec.ndim == 2 and not need_stages:
        try:
            found = checked_sweep(rec, ir)
        except SourceUnavailable as exc:
            found = str(exc)
        if isinstance(found, str):
            notes.append(f"reads not confirmed by a compiled checked sweep: {found}; traced instead")
        else:
            regions, sweep, table, sweep_s = found
            notes.append(f"reads checked at this size by a compiled sequential sweep "
                         f"({'rows' if sweep.axis == 0 else 'columns'} outer)")
            shape2 = (rec.shape[0], rec.shape[1])
            pattern = select(regions, shape2)
            # the sweep read every cell in the table: the source's offsets are the reads
            found = source_hyperplane(ir, rec.shape)[0] if pattern is None else None
            return Plan(rec, ir, regions, matching(regions), pattern, sweep, table, None,
                        "checked sweep", time.perf_counter() - t0, tuple(notes),
                        sweep_s / rec.cells, found)
    a = analyze(rec, progress=progress)
    cls = a.classification
    sweep = sweep_for(cls.regions) if cls.regions is not None else None
    sched = a.schedule
    found = Hyperplane(sched.pi) if sched and sched.kind == "hyperplane" and sched.pi else None
    return Plan(rec, ir, cls.regions, cls.patterns, cls.pattern, sweep, a.table, a, "trace",
                time.perf_counter() - t0, tuple(notes), hyperplane=found)


def shear_of(plan: Plan, backend: str) -> Shear | None:
    """The shear a fill of the plan's hyperplane on ``backend`` may take instead
    (:mod:`runtime.backends.shear`), where the source puts every read at a constant
    offset: a 2-D table's NOSE shear where the plan knows every read in bounds (its
    method is not a checked fill's: the sheared table's extra cells would hide a read
    out of the table); on the GPU, a k-D table's slab shear (its steps contiguous), whose
    fill checks that each read is of a cell of the table.  ``None`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def skew(M, i, j):
    ...     return 1 if i == 0 or j == 0 or j == M.shape[1] - 1 else M[i - 1, j + 1] + M[i, j - 1]
    >>> shear_of(certified_plan(skew, cell_ir(skew)), "cpu").box
    (4, 8)
    """
    rec, found = plan.recurrence, plan.hyperplane
    if found is None or (rec.ndim == 2 and plan.method == "checked fill") or (
            rec.ndim > 2 and backend != "cuda") or rec.ndim < 2:
        return None
    try:
        offsets = plan.ir.read_offsets()
    except SourceUnavailable:
        return None
    if any(None in d for d in offsets):
        return None
    return shear(offsets, rec.shape) if rec.ndim == 2 else slab(found, rec.shape)
