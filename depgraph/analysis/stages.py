"""Algorithm 1: the minimal stage sequence, by peeling base cases (SPEC section 3).

Repeatedly take the base cases of the graph induced by the cells not yet taken; each round
is one stage.  Implemented in O(V + E) as Kahn's algorithm over the reverse adjacency:
every node keeps its remaining out-degree; a node whose count reaches zero joins the queue.
The queue is processed in order, so it holds nodes in non-decreasing stage order, and a
node's stage is one more than the stage of the last dependency peeled before it — its
depth ``D(x)``, the length of the longest path to a base case.

Everything else derives from that one peel: the stage of every node, the nodes sorted by
stage (``order``) and the stage boundaries (``ptr``).  Any number of dimensions: the peel
sees only the graph.  Nodes left unpeeled lie on or behind a cycle; one cycle is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from depgraph.analysis.graph import DependencyGraph
from depgraph.errors import CycleError
from depgraph.usercache import compiled

__all__ = ["Stages", "peel", "stages"]


@dataclass(frozen=True, eq=False)
class Stages:
    """The minimal stage sequence ``S_0 ... S_D``.

    Attributes
    ----------
    stage : ndarray of int32
        ``D(x)`` of every node.
    order : ndarray
        Nodes sorted by stage (stage ``k`` is ``order[ptr[k]:ptr[k + 1]]``).
    ptr : ndarray of int64
        Stage boundaries in ``order``.
    """

    stage: np.ndarray
    order: np.ndarray
    ptr: np.ndarray

    @property
    def count(self) -> int:
        """Number of stages, ``D(G) + 1``."""
        return len(self.ptr) - 1

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.ptr)

    @property
    def max_width(self) -> int:
        return int(self.widths.max()) if self.count else 0

    def nodes(self, k: int) -> np.ndarray:
        """The nodes of stage ``k``."""
        return self.order[self.ptr[k] : self.ptr[k + 1]]


def _peel_csr(indptr, rindptr, rindices):  # pragma: no cover - compiled
    """The loop of :func:`peel`, compiled (:func:`depgraph.usercache.compiled`)."""
    n = len(indptr) - 1
    remaining = np.empty(n, np.int64)
    stage = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int64)
    tail = 0
    for v in range(n):
        remaining[v] = indptr[v + 1] - indptr[v]
        if remaining[v] == 0:
            stage[v] = 0
            queue[tail] = v
            tail += 1
    head = 0
    while head < tail:
        v = queue[head]
        head += 1
        nxt = stage[v] + 1
        for k in range(rindptr[v], rindptr[v + 1]):
            u = rindices[k]
            remaining[u] -= 1
            if remaining[u] == 0:
                stage[u] = nxt
                queue[tail] = u
                tail += 1
    return stage, queue[:tail]


_KERNEL = None


def peel(graph: DependencyGraph) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1's one primitive: the stage of every node and the nodes in peel order.

    Raises ``CycleError`` naming one cycle when the graph is not a DAG.

    Examples
    --------
    >>> from depgraph.analysis.graph import from_edges
    >>> g = from_edges((4,), src=np.array([1, 2, 3, 3]), dst=np.array([0, 1, 2, 0]))
    >>> stage, order = peel(g)
    >>> stage.tolist(), order.tolist()
    ([0, 1, 2, 3], [0, 1, 2, 3])
    """
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = compiled(_peel_csr)
    stage, order = _KERNEL(graph.indptr, graph.rindptr, graph.rindices)
    if len(order) < graph.n_nodes:
        raise CycleError(_find_cycle(graph, stage))
    return stage, order


def stages(graph: DependencyGraph) -> Stages:
    """The minimal stage sequence of a DAG.

    Examples
    --------
    >>> from depgraph.analysis.graph import from_edges
    >>> g = from_edges((2, 2), src=np.array([1, 2, 3, 3]), dst=np.array([0, 0, 1, 2]))
    >>> s = stages(g)
    >>> s.count, s.widths.tolist(), s.nodes(1).tolist()
    (3, [1, 2, 1], [1, 2])
    """
    stage, order = peel(graph)
    counts = np.bincount(stage, minlength=1 if graph.n_nodes == 0 else 0)
    ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return Stages(stage, order, ptr)


def _find_cycle(graph: DependencyGraph, stage: np.ndarray) -> list[tuple[int, ...]]:
    """Walk dependencies among unpeeled nodes until one repeats: that loop is a cycle.

    Every unpeeled node has a dependency that is unpeeled too, so the walk never stops.
    """
    left = stage < 0
    node = int(np.flatnonzero(left)[0])
    seen: dict[int, int] = {}
    path: list[int] = []
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        deps = graph.dependencies(node)
        node = int(deps[left[deps]][0])
    loop = [*path[seen[node] :], node]
    return [graph.cell(v) for v in loop]
