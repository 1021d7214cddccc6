"""``analyze``: trace, build the graph, compute stages and classify (``depgraph analyze``).

The pipeline is trace (plain Python, values and reads) -> CSR graph -> Algorithm 1 ->
region classification.  Each step is timed apart; the result is a frozen dataclass whose
``to_json()`` is the object SPEC section 6 names, and the recurrence's answer where it
names one (``target=``; the graph is the whole table's all the same: ``analyze(rec,
target=...)`` keeps a cell's solution-generated graph only).  It carries the cell IR too
(:class:`depgraph.frontend.ir.CellIR`): what the source says of the reads, beside what the
trace saw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.analysis.certify import Certificate, certificate, unproven_hyperplane
from depgraph.analysis.classify import Classification, classify
from depgraph.analysis.graph import DependencyGraph, from_trace
from depgraph.analysis.schedule import Schedule, schedule_of
from depgraph.analysis.stages import Stages, stages
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.trace import Trace, trace
from depgraph.model import Recurrence
from patterns import BY_CODE, select

__all__ = ["Analysis", "analyze", "certified_analysis", "NEEDS_TRACE"]


@dataclass(frozen=True, eq=False)
class Analysis:
    """Everything ``analyze`` found about one recurrence.

    Attributes
    ----------
    recurrence : Recurrence
    trace : Trace
        Values (the sequential reference table) and the raw read log.
    graph : DependencyGraph
    stages : Stages
    classification : Classification
    timings : dict
        Seconds spent in ``trace_s``, ``graph_s``, ``stages_s`` and ``classify_s``.
    target : tuple of int or None
        The target cell when only its solution-generated graph was traced.
    ir : CellIR or None
        The cell function as its source reads (:func:`depgraph.frontend.ir.cell_ir`).
    schedule : Schedule or None
        The pattern, hyperplane or stages the reads allow
        (:func:`depgraph.analysis.schedule.schedule_of`).
    """

    recurrence: Recurrence
    trace: Trace
    graph: DependencyGraph
    stages: Stages
    classification: Classification
    timings: dict[str, float]
    target: tuple[int, ...] | None = None
    ir: CellIR | None = None
    schedule: Schedule | None = None

    @property
    def table(self) -> np.ndarray:
        """The traced values: the sequential reference fill."""
        return self.trace.table

    @property
    def pattern(self) -> str | None:
        return self.classification.pattern

    @property
    def patterns(self) -> tuple[str, ...] | None:
        return self.classification.patterns

    @property
    def regions(self) -> tuple[str, ...] | None:
        return self.classification.regions

    def stage_table(self) -> np.ndarray:
        """The stage of every cell as an array of the table's shape (-1: not in the graph)."""
        out = np.full(self.recurrence.cells, -1, dtype=np.int32)
        out[self.graph.flat_cells()] = self.stages.stage
        return out.reshape(self.recurrence.shape)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object of ``depgraph analyze``.

        Examples
        --------
        >>> from depgraph import recurrence
        >>> @recurrence(shape=(2, 3), dtype=np.int64)
        ... def paths(M, i, j):
        ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
        >>> d = analyze(paths).to_json()
        >>> d["cells"], d["edges"], d["stages"], d["patterns"], d["pattern"]
        (6, 4, 3, ['NOSE'], 'NOSE')
        """
        rec, cls = self.recurrence, self.classification
        g = self.graph
        return {
            "name": rec.name,
            "shape": list(rec.shape),
            "cells": g.n_nodes,
            "edges": g.n_edges,
            "base_cases": int(len(g.base_cases())),
            "stages": self.stages.count,
            "max_stage_width": self.stages.max_width,
            "regions": None if cls.regions is None else list(cls.regions),
            "patterns": None if cls.patterns is None else list(cls.patterns),
            "pattern": cls.pattern,
            "pattern_stages": cls.pattern_stages,
            "region_counts": cls.region_counts,
            "target": None if self.target is None else list(self.target),
            "table_cells": rec.cells,
            "dtype": str(rec.dtype),
            "graph_bytes": g.nbytes,
            "table_bytes": rec.cells * rec.dtype.itemsize,
            "reruns": self.trace.reruns,
            "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "trace_cells_per_s": g.n_nodes / self.timings["trace_s"]
            if self.timings["trace_s"] > 0 else None,
            "source_reads": None if self.ir is None or self.ir.source is None else [
                {"read": r.text, "offset": list(r.offsets)} for r in self.ir.reads],
            "source_opaque": None if self.ir is None else self.ir.opaque,
            **_schedule_fields(self.schedule),
            **self._certificate(),
            **_answer_fields(rec, self.table if self.trace.mask is None else None),
        }

    def _certificate(self) -> dict[str, Any]:
        """``certificate``: what was proven for every shape, whether this data meets its
        requirements, and, where the schedule is a hyperplane, whether the certificate
        proves it (:func:`_hyperplane_proof`); or ``None`` with ``certificate_why``."""
        rec = self.recurrence
        ir = self.ir or cell_ir(rec)
        found = certificate(rec, ir)
        if not isinstance(found, Certificate):
            return {"certificate": None, "certificate_why": found}
        broken = found.violated(rec, ir.params, ir.table)
        return {"certificate": {**found.to_json(), "holds_for_this_data": broken is None,
                                "hyperplane": _hyperplane_proof(rec, ir, self.schedule)},
                "certificate_why": broken}


def _hyperplane_proof(rec: Recurrence, ir: CellIR, schedule: Schedule | None
                      ) -> dict[str, Any] | None:
    """The certificate's word on a hyperplane ``schedule``: its ``pi``, whether it is
    ``proven`` to put every read on an earlier step, and ``why`` not; ``None`` for
    another schedule.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(3, 4, 5), dtype=np.int64)
    ... def cube(M, i, j, k):
    ...     return 0 if i == 0 or k == 0 else M[i - 1, j, k] + M[i, j, k - 1]
    >>> _hyperplane_proof(cube, cell_ir(cube), Schedule("hyperplane", (1, 0, 1), 7, ""))
    {'pi': [1, 0, 1], 'proven': True, 'why': None}
    """
    if schedule is None or schedule.kind != "hyperplane" or schedule.pi is None:
        return None
    why = unproven_hyperplane(rec, schedule.pi, ir)
    return {"pi": list(schedule.pi), "proven": why is None, "why": why}


def _answer_fields(rec: Recurrence, table: np.ndarray | None) -> dict[str, Any]:
    """``answer_cell``: the cell ``rec`` names as its answer (``target=``), found in the
    whole filled ``table`` by its target function (``answer_function``, its name), ``None``
    where it names none, or a function without ``table``.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> chain = recurrence(shape=(3, 3), target=(0, 2))(lambda M, i, j: 0)
    >>> _answer_fields(chain, None)
    {'answer_cell': [0, 2], 'answer_function': None}
    """
    found = None if table is None and callable(rec.target) else rec.answer(table)
    return {"answer_cell": None if found is None else list(found),
            "answer_function": rec.answer_function}


def _schedule_fields(schedule: Schedule | None) -> dict[str, Any]:
    """``schedule`` (SPEC section 6) and ``schedule_why``, what it rests on."""
    if schedule is None:
        return {"schedule": None, "schedule_why": None}
    return {"schedule": schedule.to_json(), "schedule_why": schedule.basis}


def analyze(
    rec: Recurrence,
    target: Sequence[int] | None = None,
    progress: Callable[[int], None] | None = None,
    memory_limit: int | None = None,
) -> Analysis:
    """Trace a recurrence, build its dependency graph, stage it and classify it.

    Parameters
    ----------
    rec : Recurrence
    target : tuple of int, optional
        Keep only the solution-generated graph of this cell (default: the whole table's
        graph, whatever cell the recurrence names as its answer; ``to_json`` says which,
        ``answer_cell``).
    progress : callable, optional
        Receives the number of traced cells now and then.
    memory_limit : int, optional
        Bytes the trace may use (default: the memory available).

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import recurrence
    >>> X = np.frombuffer(b"AGCGTAG", dtype=np.uint8)
    >>> Y = np.frombuffer(b"GTCAGA", dtype=np.uint8)
    >>> @recurrence(shape=(len(X) + 1, len(Y) + 1), dtype=np.int32, args=(X, Y))
    ... def lcs(M, i, j, X, Y):
    ...     if i == 0 or j == 0:
    ...         return 0
    ...     if X[i - 1] == Y[j - 1]:
    ...         return M[i - 1, j - 1] + 1
    ...     return max(M[i - 1, j], M[i, j - 1])
    >>> a = analyze(lcs)
    >>> int(a.table[-1, -1]), a.pattern, a.stages.count
    (4, 'NOSE', 12)
    """
    t0 = time.perf_counter()
    tr: Trace = trace(rec, target=target, progress=progress, memory_limit=memory_limit)
    t1 = time.perf_counter()
    graph = from_trace(rec.shape, tr.cells, tr.ends, tr.reads, whole=tr.mask is None)
    t2 = time.perf_counter()
    st = stages(graph)
    t3 = time.perf_counter()
    cls = classify(graph)
    ir = cell_ir(rec)
    sched = schedule_of(rec.shape, cls.pattern, ir, graph if target is None else None,
                        st.count)
    t4 = time.perf_counter()
    timings = {"trace_s": t1 - t0, "graph_s": t2 - t1, "stages_s": t3 - t2, "classify_s": t4 - t3}
    tgt = None if target is None else tuple(int(t) for t in target)
    return Analysis(rec, tr, graph, st, cls, timings, tgt, ir, sched)


#: Fields of ``analyze --json`` only a trace gives (the graph's own counts).
NEEDS_TRACE = ("edges", "base_cases", "stages", "max_stage_width", "region_counts",
               "graph_bytes", "reruns", "trace_cells_per_s")


def certified_analysis(rec: Recurrence, why: str) -> dict[str, Any] | None:
    """The ``analyze --json`` object of a table too large to trace (``why``), from a
    certificate that holds for this data: for a 2-D table the regions the reads are
    proven to fall in, the patterns and the pattern's steps, for any table its schedule
    (a k-D table's only where the certificate proves its hyperplane); the fields only a
    trace gives
    (:data:`NEEDS_TRACE`) are ``None`` and listed in ``needs_trace``.  ``None`` without
    such a certificate.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(10**6, 10**6), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> d = certified_analysis(paths, "too large to trace")
    >>> d["regions"], d["pattern"], d["pattern_stages"], d["stages"], d["needs_trace"][0]
    (['Left', 'Up'], 'NOSE', 1999999, None, 'edges')
    """
    ir = cell_ir(rec)
    found = certificate(rec, ir)
    if not isinstance(found, Certificate) or found.violated(rec, ir.params, ir.table):
        return None
    flat = rec.ndim == 2
    shape2 = (rec.shape[0], rec.shape[1])
    pattern = select(found.regions, shape2) if flat else None
    schedule = schedule_of(rec.shape, pattern, ir, None, None)
    hyperplane = _hyperplane_proof(rec, ir, schedule)
    if not flat and not (hyperplane and hyperplane["proven"]):
        return None  # a k-D table: what is proven is its schedule, or nothing
    return {
        "name": rec.name, "shape": list(rec.shape), "cells": rec.cells,
        "regions": list(found.regions) if flat else None,
        "patterns": list(found.patterns) if flat else None, "pattern": pattern,
        "pattern_stages": None if pattern is None else BY_CODE[pattern].steps(shape2),
        "target": None, "table_cells": rec.cells, "dtype": str(rec.dtype),
        "table_bytes": rec.cells * rec.dtype.itemsize, "timings": {},
        "source_reads": [{"read": r.text, "offset": list(r.offsets)} for r in ir.reads],
        "source_opaque": ir.opaque,
        **_schedule_fields(schedule),
        "certificate": {**found.to_json(), "holds_for_this_data": True,
                        "hyperplane": hyperplane},
        "certificate_why": None,
        **_answer_fields(rec, None),
        **{k: None for k in NEEDS_TRACE},
        "needs_trace": list(NEEDS_TRACE),
        "not_traced": why,
    }
