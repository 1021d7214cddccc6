"""Region classification of a 2-D recurrence and pattern selection (SPEC section 4).

Every edge ``(x, y)`` gives an offset ``d = y - x``; its signs name one of eight regions.
A recurrence matches a pattern when all its offsets lie in the pattern's allowed regions.
Checking direct dependencies is enough: each allowed set is closed under addition, so
``Γ ⊆ A`` implies ``Γ+ ⊆ A``.  Tables of other dimensions get ``None`` for regions and
patterns (the stage schedule still applies).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from depgraph.analysis.graph import DependencyGraph
from patterns import BY_CODE, REGIONS, matching, region_codes, select

__all__ = ["Classification", "classify", "region_counts"]

_BLOCK = 1 << 18


@dataclass(frozen=True)
class Classification:
    """Where the reads fall and which patterns fit.

    Attributes
    ----------
    regions : tuple of str or None
        Sorted names of the regions the direct dependencies fall in (``None`` unless 2-D).
    region_counts : dict or None
        Number of direct dependencies (edges) in each region.
    patterns : tuple of str or None
        Every matching pattern code, canonical order.
    pattern : str or None
        The selected pattern: fewest steps, ties by canonical order.
    pattern_stages : int or None
        The selected pattern's step count.
    """

    regions: tuple[str, ...] | None
    region_counts: dict[str, int] | None
    patterns: tuple[str, ...] | None
    pattern: str | None
    pattern_stages: int | None


def region_counts(graph: DependencyGraph) -> dict[str, int]:
    """Number of edges of a 2-D graph in each region (only regions with edges).

    Examples
    --------
    >>> from depgraph.analysis.graph import from_edges
    >>> g = from_edges((2, 2), src=np.array([3, 3, 2]), dst=np.array([1, 2, 0]))
    >>> region_counts(g)
    {'Up': 2, 'Left': 1}
    """
    counts = np.zeros(len(REGIONS), dtype=np.int64)
    m = graph.shape[1]
    cells = graph.flat_cells()
    deg = graph.out_degree()
    for a in range(0, graph.n_nodes, _BLOCK):  # blocks of nodes bound the temporaries
        b = min(a + _BLOCK, graph.n_nodes)
        lo, hi = graph.indptr[a], graph.indptr[b]
        xi, xj = np.divmod(np.repeat(cells[a:b], deg[a:b]), m)
        yi, yj = np.divmod(cells[graph.indices[lo:hi]], m)
        counts += np.bincount(region_codes(yi - xi, yj - xj), minlength=len(REGIONS))
    return {REGIONS[c]: int(k) for c, k in enumerate(counts) if k}


def classify(graph: DependencyGraph) -> Classification:
    """Classify a recurrence's graph by region checks over its direct dependencies.

    Examples
    --------
    >>> from depgraph.analysis.graph import from_edges
    >>> # 2x2 LCS-like table: (1,1) reads (0,0), (0,1), (1,0)
    >>> g = from_edges((2, 2), src=np.array([3, 3, 3]), dst=np.array([0, 1, 2]))
    >>> c = classify(g)
    >>> c.regions, c.patterns, c.pattern, c.pattern_stages
    (('Left', 'Up', 'UpLeft'), ('NOSE',), 'NOSE', 3)
    """
    if len(graph.shape) != 2:
        return Classification(None, None, None, None, None)
    counts = region_counts(graph)
    regions = tuple(sorted(counts))
    shape = (graph.shape[0], graph.shape[1])
    code = select(regions, shape)
    return Classification(
        regions=regions,
        region_counts=counts,
        patterns=matching(regions),
        pattern=code,
        pattern_stages=None if code is None else BY_CODE[code].steps(shape),
    )
