"""Analysis: the dependency graph of a traced recurrence, its minimal stages (Algorithm 1)
and the regions and patterns its reads fit.

- :mod:`depgraph.analysis.graph`: the graph as CSR arrays;
- :mod:`depgraph.analysis.stages`: Algorithm 1 in O(V + E);
- :mod:`depgraph.analysis.classify`: regions and the eight patterns (SPEC section 4);
- :mod:`depgraph.analysis.pipeline`: ``analyze``, the four in a row, timed; and
  ``certified_analysis``, what a certificate answers for a table too large to trace.
"""

from depgraph.analysis.classify import Classification, classify
from depgraph.analysis.graph import DependencyGraph
from depgraph.analysis.pipeline import Analysis, analyze, certified_analysis
from depgraph.analysis.stages import Stages, stages

__all__ = ["Analysis", "Classification", "DependencyGraph", "Stages", "analyze",
           "certified_analysis", "classify", "stages"]
