"""The dependency graph ``G_f`` as compact CSR arrays (SPEC section 2).

One vertex per traced cell, one edge ``(x, y)`` for each distinct ``y`` in ``Γ(x)``: edges
point from a cell to what it needs.  Two CSR structures hold it: ``indptr``/``indices``
(dependencies of each node) and ``rindptr``/``rindices`` (dependents of each node), so
Algorithm 1 can peel over reverse adjacency.  Node ``k`` is the cell with flat (C-order)
index ``cells[k]``, or ``k`` itself when the whole table was traced (``cells is None``).

Memory: ``indices`` and ``rindices`` are int32 (4 bytes an edge each, 8 in all) while there
are fewer than 2**31 nodes; the pointers are int32 while there are fewer than 2**31 edges
(8 bytes a node for both); ``cells`` adds 4-8 bytes a node only for target graphs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import networkx

__all__ = ["DependencyGraph", "from_edges", "from_trace"]

_INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True, eq=False)
class DependencyGraph:
    """Dependencies and dependents of every node, as CSR arrays.

    Examples
    --------
    >>> g = from_edges((1, 3), src=np.array([1, 2, 2]), dst=np.array([0, 1, 1]))
    >>> g.n_nodes, g.n_edges, g.dependencies(2).tolist(), g.dependents(0).tolist()
    (3, 2, [1], [1])
    >>> g.base_cases().tolist()
    [0]
    """

    shape: tuple[int, ...]
    indptr: np.ndarray
    indices: np.ndarray
    rindptr: np.ndarray
    rindices: np.ndarray
    cells: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.indptr) - 1

    @property
    def n_edges(self) -> int:
        return len(self.indices)

    @property
    def nbytes(self) -> int:
        """Bytes held by the graph's arrays."""
        arrays = [self.indptr, self.indices, self.rindptr, self.rindices]
        if self.cells is not None:
            arrays.append(self.cells)
        return int(sum(a.nbytes for a in arrays))

    def out_degree(self) -> np.ndarray:
        """``g+(x) = |Γ(x)|`` of every node."""
        return np.diff(self.indptr)

    def base_cases(self) -> np.ndarray:
        """Nodes with no dependencies."""
        return np.flatnonzero(self.out_degree() == 0)

    def dependencies(self, node: int) -> np.ndarray:
        return self.indices[self.indptr[node] : self.indptr[node + 1]]

    def dependents(self, node: int) -> np.ndarray:
        return self.rindices[self.rindptr[node] : self.rindptr[node + 1]]

    def flat_cells(self) -> np.ndarray:
        """Flat (C-order) cell index of every node."""
        if self.cells is None:
            return np.arange(self.n_nodes, dtype=np.int64)
        return self.cells.astype(np.int64, copy=False)

    def cell(self, node: int) -> tuple[int, ...]:
        """The index tuple of a node."""
        flat = int(node if self.cells is None else self.cells[node])
        return tuple(int(c) for c in np.unravel_index(flat, self.shape))

    def node_of(self, cell: tuple[int, ...]) -> int:
        """The node of an index tuple (``KeyError`` when the cell is not in the graph)."""
        flat = int(np.ravel_multi_index(cell, self.shape))
        if self.cells is None:
            return flat
        k = int(np.searchsorted(self.cells, flat))
        if k == len(self.cells) or self.cells[k] != flat:
            raise KeyError(cell)
        return k

    def edge_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` node arrays of every edge, grouped by ``src``."""
        src = np.repeat(np.arange(self.n_nodes, dtype=np.int64), self.out_degree())
        return src, self.indices.astype(np.int64)

    def to_networkx(self, max_nodes: int = 200_000) -> networkx.DiGraph:
        """A networkx ``DiGraph`` over index tuples, for small tables.

        Examples
        --------
        >>> g = from_edges((1, 2), src=np.array([1]), dst=np.array([0]))
        >>> sorted(g.to_networkx().edges())
        [((0, 1), (0, 0))]
        """
        import networkx as nx

        if self.n_nodes > max_nodes:
            raise ValueError(
                f"{self.n_nodes:,} nodes is too many for networkx here (max_nodes={max_nodes:,})"
            )
        cells = [tuple(int(c) for c in t) for t in zip(*np.unravel_index(self.flat_cells(), self.shape))]
        g = nx.DiGraph()
        g.add_nodes_from(cells)
        src, dst = self.edge_arrays()
        g.add_edges_from((cells[a], cells[b]) for a, b in zip(src.tolist(), dst.tolist()))
        return g


def _index_dtype(bound: int) -> type:
    return np.int32 if bound <= _INT32_MAX else np.int64


def _csr(keys: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    counts = np.bincount(rows, minlength=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr.astype(_index_dtype(len(keys)), copy=False)


def from_edges(
    shape: tuple[int, ...],
    src: np.ndarray,
    dst: np.ndarray,
    n_nodes: int | None = None,
    cells: np.ndarray | None = None,
) -> DependencyGraph:
    """Build the graph from edge arrays (node ids), dropping repeated edges.

    Parameters
    ----------
    shape : tuple of int
        The table shape.
    src, dst : ndarray of int
        Edge ``k`` says node ``src[k]`` reads node ``dst[k]``.
    n_nodes : int, optional
        Number of nodes; default ``len(cells)`` or the product of ``shape``.
    cells : ndarray, optional
        Sorted flat cell index of each node, when only part of the table is in the graph.

    Examples
    --------
    >>> g = from_edges((2, 2), np.array([3, 3, 3]), np.array([1, 2, 1]))
    >>> g.n_edges, g.dependencies(3).tolist()
    (2, [1, 2])
    """
    if n_nodes is None:
        n_nodes = len(cells) if cells is not None else int(np.prod(shape))
    key = np.asarray(src, dtype=np.int64) * n_nodes
    key += np.asarray(dst, dtype=np.int64)
    key.sort()  # by (src, dst); a plain sort beats np.unique's hashing here
    if len(key) > 1:
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]  # drop repeated edges
    node_t = _index_dtype(n_nodes)
    s = (key // n_nodes).astype(node_t)
    key %= n_nodes
    indices = key.astype(node_t)
    del key
    indptr = _csr(indices, s, n_nodes)
    order = np.argsort(indices, kind="stable")
    rindices = s[order]
    del order
    rindptr = _csr(rindices, indices, n_nodes)
    del s
    if cells is not None:
        cells = np.asarray(cells).astype(_index_dtype(int(np.prod(shape))))
    return DependencyGraph(tuple(shape), indptr, indices, rindptr, rindices, cells)


def from_trace(shape: tuple[int, ...], cells: np.ndarray, ends: np.ndarray, reads: np.ndarray,
               whole: bool) -> DependencyGraph:
    """Build the graph from a trace's finish order and read log.

    ``cells[k]`` read ``reads[ends[k-1]:ends[k]]`` (flat indices).  With ``whole`` every
    cell of the table is a node and node ids are flat indices; otherwise nodes are the
    traced cells, sorted.

    Examples
    --------
    >>> g = from_trace((1, 3), np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([0, 1]), True)
    >>> g.n_edges, g.dependencies(2).tolist()
    (2, [1])
    """
    counts = np.diff(ends, prepend=0)
    src = np.repeat(cells, counts)
    if whole:
        return from_edges(shape, src, reads)
    nodes = np.sort(cells)
    return from_edges(
        shape, np.searchsorted(nodes, src), np.searchsorted(nodes, reads), len(nodes), nodes
    )
