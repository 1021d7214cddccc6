"""depgraph: dependency graphs, minimal stages, fill patterns and parallel fills for
dynamic-programming recurrences written as one plain Python cell function.

``import depgraph`` imports NumPy only; numba, numba.cuda, graphviz and matplotlib are
imported when the work that needs them runs.
"""

from depgraph.analysis import Analysis, analyze
from depgraph.api import Family, Recurrence, family, recurrence
from depgraph.classify import Classification, classify
from depgraph.errors import DepgraphError
from depgraph.graph import DependencyGraph
from depgraph.loader import load
from depgraph.stages import Stages, stages
from depgraph.trace import Trace, trace

__all__ = [
    "Analysis",
    "Classification",
    "DependencyGraph",
    "DepgraphError",
    "Family",
    "Recurrence",
    "Stages",
    "Trace",
    "analyze",
    "classify",
    "family",
    "load",
    "recurrence",
    "stages",
    "trace",
]
__version__ = "0.1.0"
