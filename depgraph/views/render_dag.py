"""The dag view: the dependency graph as Graphviz DOT, nodes pinned to the table's grid.

Every cell is one node at its grid position (row ``i`` downward, column ``j`` rightward;
1-D tables as one row; k-D tables as 2-D tiles of the last two axes laid left to right),
filled with the colour of its stage; a legend under the title maps colours to stages.  Every
direct dependency ``y`` of ``x`` is one edge ``x -> y``.  The graph asks for the ``neato``
layout with pinned positions (``pos="x,y!"``, inches), so ``dot -Tsvg FILE.dot`` draws it
as is; it routes the edges around the nodes on tables of up to ``SPLINE_NODES`` cells
and draws straight edges on larger ones (routing there takes Graphviz minutes).

Given a solution (:mod:`depgraph.frontend.provenance`), its cells are framed and its
edges drawn in red over the rest, which is drawn fainter (the solution view).

Node names are ``c`` and the indices joined by ``_`` (``c3_4`` is cell ``(3, 4)``).
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

import numpy as np

from depgraph.errors import TooLargeError

if TYPE_CHECKING:
    import graphviz

    from depgraph.analysis.pipeline import Analysis
    from depgraph.frontend.provenance import Solution

__all__ = ["dag_digraph", "node_name", "stage_colours", "grid_positions"]

#: Grid spacing (inches) between columns and rows, and the node box size.
DX, DY = 1.05, 0.8
NODE_W, NODE_H = 0.82, 0.56
#: Graphs up to this many nodes get edges routed around the nodes (``splines=true``);
#: neato's routing grows about quadratically (2 s at 100 nodes, 80 s at 400), so larger
#: graphs get straight edges, drawn in well under a second.
SPLINE_NODES = 130
#: At most this many legend swatches; more stages are shown every k-th.
LEGEND_ROWS = 24
#: The colour of a solution's cells and edges.
SOLUTION_COLOUR = "#d62728"


def node_name(cell: tuple[int, ...]) -> str:
    """The DOT node name of a cell.

    Examples
    --------
    >>> node_name((3, 4)), node_name((7,))
    ('c3_4', 'c7')
    """
    return "c" + "_".join(str(int(c)) for c in cell)


def stage_colours(count: int) -> list[str]:
    """One fill colour per stage (``#rrggbb``), light enough for black text on most.

    Examples
    --------
    >>> stage_colours(3)[0].startswith("#"), len(stage_colours(3))
    (True, 3)
    """
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    out = []
    for s in range(max(count, 1)):
        r, g, b, _ = cmap(s / max(count - 1, 1))
        out.append("#%02x%02x%02x" % tuple(int(round(255 * c)) for c in (r, g, b)))
    return out[:count] if count else []


def _text_colour(fill: str) -> str:
    r, g, b = (int(fill[k : k + 2], 16) / 255 for k in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def grid_positions(cells: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
    """Grid column and row of every cell (flat indices), and the number of grid columns.

    k-D tables (k > 2) are tiles of the last two axes, one per index of the leading axes,
    left to right with one empty column between tiles.

    Examples
    --------
    >>> x, y, w = grid_positions(np.arange(6), (2, 3))
    >>> x.tolist(), y.tolist(), w
    ([0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 1, 1], 3)
    >>> grid_positions(np.arange(4), (4,))[0].tolist()
    [0, 1, 2, 3]
    """
    idx = np.unravel_index(np.asarray(cells, dtype=np.int64), shape)
    if len(shape) == 1:
        return idx[0], np.zeros_like(idx[0]), shape[0]
    if len(shape) == 2:
        return idx[1], idx[0], shape[1]
    lead = np.ravel_multi_index(idx[:-2], shape[:-2])
    m = shape[-1]
    tiles = math.prod(shape[:-2])
    return lead * (m + 1) + idx[-1], idx[-2], tiles * (m + 1) - 1


def _value_text(v: object) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "T" if v else "F"
    if isinstance(v, (np.integer, int)):
        return str(int(v))
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f.is_integer() and abs(f) < 1e6:
        return str(int(f))
    return f"{f:.3g}"


def dag_digraph(analysis: Analysis, max_cells: int = 400, chosen: Solution | None = None
                ) -> graphviz.Digraph:
    """Build the DAG of an analysis as a ``graphviz.Digraph`` (see the module docstring),
    with the solution ``chosen`` drawn in red over it when given."""
    import graphviz

    rec, g, st = analysis.recurrence, analysis.graph, analysis.stages
    shape = tuple(rec.shape)
    if g.n_nodes > max_cells:
        raise TooLargeError(
            f"the dag view draws one node per cell, and this graph has {g.n_nodes:,} "
            f"(shape {shape}), more than max_cells={max_cells:,}. Use the stages view, "
            "which aggregates large tables."
        )
    flat = g.flat_cells()
    gx, gy, width = grid_positions(flat, shape)
    cells = list(zip(*(a.tolist() for a in np.unravel_index(flat, shape))))
    names = [node_name(c) for c in cells]
    colours = stage_colours(st.count)
    values = analysis.table.reshape(-1)
    texts = [_value_text(values[k]) for k in flat.tolist()]
    show_values = all(len(t) <= 6 for t in texts)

    dims = "x".join(str(s) for s in shape)
    title = (f"{rec.name} ({dims}): {g.n_nodes:,} cells, {g.n_edges:,} edges "
             f"(x -> y: cell x reads cell y), {st.count:,} stages")
    on_path = set(chosen.cells) if chosen else set()
    path_edges = set(chosen.edges) if chosen else set()
    if chosen:
        title += (f"; red: the solution from {chosen.target}, the reads that decided its "
                  f"value ({len(chosen.cells):,} cells)")
    dot = graphviz.Digraph(name=rec.name or "depgraph")
    splines = "true" if g.n_nodes <= SPLINE_NODES else "false"
    dot.attr("graph", layout="neato", splines=splines, outputorder="edgesfirst",
             label=_label(title, st, colours), labelloc="t", labeljust="l", fontname="Helvetica", fontsize="16",
             pad="0.3", bgcolor="white")
    dot.attr("node", shape="box", style="rounded,filled", fixedsize="true",
             width=f"{NODE_W}", height=f"{NODE_H}", fontname="Helvetica", fontsize="10",
             penwidth="0.6", color="#333333")
    dot.attr("edge", color="#44444444" if chosen else "#44444499", arrowsize="0.55",
             penwidth="0.8")
    stage = st.stage
    for k, name in enumerate(names):
        cell = cells[k]
        s = int(stage[k])
        fill = colours[s]
        idx = ",".join(str(c) for c in cell)
        if show_values and texts[k]:
            label = f"<{html.escape(idx)}<br/><b>{html.escape(texts[k])}</b>>"
        else:
            label = f"<{html.escape(idx)}>"
        mark = {"color": SOLUTION_COLOUR, "penwidth": "3"} if cell in on_path else {}
        dot.node(name, label=label, pos=f"{gx[k] * DX:.3f},{-gy[k] * DY:.3f}!",
                 fillcolor=fill, fontcolor=_text_colour(fill), tooltip=f"{cell}: stage {s}",
                 **mark)
    src, dst = g.edge_arrays()
    for a, b in zip(src.tolist(), dst.tolist()):
        mark = {"color": SOLUTION_COLOUR, "penwidth": "2.4"} \
            if (cells[a], cells[b]) in path_edges else {}
        dot.edge(names[a], names[b], **mark)
    return dot


def _label(title: str, st: object, colours: list[str]) -> str:
    """The graph's label: the title and, under it, the stage legend (colour swatches).

    The legend lives in the graph label, not in a node, so the DOT has exactly one node
    per cell.
    """
    count = st.count  # type: ignore[attr-defined]
    every = max(1, math.ceil(count / LEGEND_ROWS))
    shown = list(range(0, count, every))
    if shown and shown[-1] != count - 1:
        shown.append(count - 1)
    swatches = "".join(
        f'<td bgcolor="{colours[s]}" width="26" height="18"><font color="{_text_colour(colours[s])}"'
        f' point-size="10">{s}</font></td>'
        for s in shown
    )
    note = f" (one in {every} shown)" if every > 1 else ""
    legend = (f'<table border="0" cellborder="1" cellspacing="0" cellpadding="2" color="#666666">'
              f'<tr><td border="0" align="right"><font point-size="11">stage{note}:&nbsp;</font></td>'
              f"{swatches}</tr></table>")
    return ('<<table border="0" cellborder="0" cellspacing="4">'
            f'<tr><td align="left">{html.escape(title)}</td></tr>'
            f'<tr><td align="left">{legend}</td></tr></table>>')
