"""depgraph: dependency graphs, minimal stages, fill patterns and parallel fills for
dynamic-programming recurrences written as one plain Python cell function.

The library's calls are here, at the top level:

- make a recurrence: :func:`recurrence`, :func:`family`; load one from a file:
  :func:`load`, :func:`pick`;
- read it: :func:`cell_ir` (what the cell function's source says), :func:`trace` (what
  each cell reads, run in plain Python);
- analyze it: :func:`analyze` (the DAG, Algorithm 1's stages, regions and patterns);
  :func:`certified_analysis` (what a certificate answers for a table too large to trace);
- fill it: :func:`fill` (the table, on the GPU or every CPU core), :func:`score` (the
  last cell, in O(n) memory), :func:`compare` and :func:`verify_score` (against the
  sequential reference); :func:`solution` (the cells whose reads decided a cell's value)
  and :func:`aligned` (two sequences aligned along one);
- look at it: :func:`render` (the DAG, stages, regions, pattern), :func:`report` (what
  the graph costs against the fills).

Errors all derive from :class:`DepgraphError`.  ``import depgraph`` imports NumPy and the
model, frontend and analysis; the runtime and the views when one of their calls is first
used; numba, numba.cuda, graphviz and matplotlib when the work that needs them runs.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from depgraph.analysis import (
                               Analysis,
                               Classification,
                               DependencyGraph,
                               Stages,
                               analyze,
                               certified_analysis,
                               classify,
                               stages,
)
from depgraph.errors import DepgraphError
from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.frontend.loader import load, pick
from depgraph.frontend.provenance import Solution, aligned, solution
from depgraph.frontend.trace import Trace, trace
from depgraph.model import Family, Progress, Recurrence, family, recurrence

if TYPE_CHECKING:
    from depgraph.views.render import render
    from depgraph.views.report import Report, report
    from runtime.backends.walk import ScorePlan, ScoreResult
    from runtime.run import FillResult, compare, fill
    from runtime.score_only import score, verify_score
    from runtime.schedule.score_plan import score_plan

#: The calls of the runtime and the views, imported on first use: a recurrence file's
#: ``from depgraph import recurrence`` and ``depgraph analyze`` need neither.
_LAZY = {
    "render": "depgraph.views.render",
    "Report": "depgraph.views.report",
    "report": "depgraph.views.report",
    "ScorePlan": "runtime.backends.walk",
    "ScoreResult": "runtime.backends.walk",
    "FillResult": "runtime.run",
    "compare": "runtime.run",
    "fill": "runtime.run",
    "score": "runtime.score_only",
    "verify_score": "runtime.score_only",
    "score_plan": "runtime.schedule.score_plan",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'depgraph' has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "Analysis",
    "CellIR",
    "Classification",
    "DependencyGraph",
    "DepgraphError",
    "Family",
    "FillResult",
    "Progress",
    "Recurrence",
    "Report",
    "ScorePlan",
    "ScoreResult",
    "Solution",
    "Stages",
    "Trace",
    "aligned",
    "analyze",
    "cell_ir",
    "certified_analysis",
    "classify",
    "compare",
    "family",
    "fill",
    "load",
    "pick",
    "recurrence",
    "render",
    "report",
    "score",
    "score_plan",
    "solution",
    "stages",
    "trace",
    "verify_score",
]
__version__ = "0.1.0"
