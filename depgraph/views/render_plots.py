"""The matplotlib views: stages heat map, region glyph, pattern fill order, and a
solution over the stages.

All figures are ``matplotlib.figure.Figure`` objects on the Agg canvas, made without
pyplot (no global state, nothing shown).  Tables are drawn as images, row 0 at the top
and column 0 at the left; when a table has more cells than the picture has pixels it is
aggregated first (the maximum of each block of cells), so a 10^7-cell table costs a few
megabytes, never one patch a cell.  Numbers go in the cells only when they fit.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from depgraph.usercache import compiled
from patterns import BY_CODE, PATTERNS, REGION_CODE, REGIONS, breaking_regions
from patterns.hyperplane import Hyperplane

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from depgraph.analysis.pipeline import Analysis
    from depgraph.frontend.provenance import Solution

__all__ = [
    "block_max",
    "critical_path",
    "stage_grid_figure",
    "stages_figure",
    "solution_figure",
    "regions_figure",
    "pattern_figure",
    "slice_text",
]

#: Most image rows / columns drawn; larger tables are aggregated to this.
MAX_PIXELS = 800
#: Most cells that get a number written in them.
MAX_NUMBERED = 2500
#: Most points of the critical path drawn (longer paths are thinned, ends kept).
MAX_PATH_POINTS = 4000

STAGE_CMAP = "viridis"
STEP_CMAP = "plasma"
PATH_COLOUR = "#ff3b30"

ARROW = {"RUD": "rows \u2193", "RDU": "rows \u2191", "CLR": "columns \u2192",
         "CRL": "columns \u2190", "NOSE": "anti-diagonals \u2198",
         "SENO": "anti-diagonals \u2196", "SONE": "diagonals \u2197",
         "NESO": "diagonals \u2199"}
#: Where the sweep arrow starts and ends, as fractions of (width, height) of the grid.
SWEEP = {"RUD": ((0.5, 0.0), (0.5, 1.0)), "RDU": ((0.5, 1.0), (0.5, 0.0)),
         "CLR": ((0.0, 0.5), (1.0, 0.5)), "CRL": ((1.0, 0.5), (0.0, 0.5)),
         "NOSE": ((0.0, 0.0), (1.0, 1.0)), "SENO": ((1.0, 1.0), (0.0, 0.0)),
         "SONE": ((0.0, 1.0), (1.0, 0.0)), "NESO": ((1.0, 0.0), (0.0, 1.0))}


# --------------------------------------------------------------------------- helpers


def _new_figure(figsize: tuple[float, float], constrained: bool = True) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained" if constrained else None)
    FigureCanvasAgg(fig)
    return fig


def block_max(a: np.ndarray, max_rows: int = MAX_PIXELS,
              max_cols: int = MAX_PIXELS) -> tuple[np.ndarray, int, int]:
    """Aggregate a 2-D array to at most ``max_rows x max_cols`` by block maximum.

    Returns ``(blocks, bi, bj)``: block ``(r, c)`` is the maximum of
    ``a[r*bi:(r+1)*bi, c*bj:(c+1)*bj]`` (the last blocks may be partial).  Small arrays come
    back as they are with ``bi = bj = 1``.  Temporaries are at most one aggregated axis
    times the other full axis.

    Examples
    --------
    >>> b, bi, bj = block_max(np.arange(20).reshape(4, 5), 2, 2)
    >>> b.tolist(), bi, bj
    ([[7, 9], [17, 19]], 2, 3)
    """
    rows, cols = a.shape
    bi = max(1, math.ceil(rows / max_rows))
    bj = max(1, math.ceil(cols / max_cols))
    out = a
    if bi > 1:
        out = np.maximum.reduceat(out, np.arange(0, rows, bi), axis=0)
    if bj > 1:
        out = np.maximum.reduceat(out, np.arange(0, cols, bj), axis=1)
    return out, bi, bj


_WALK = None


def _walk(indptr, indices, stage, start, path):  # pragma: no cover - compiled
    """The loop of :func:`critical_path`, compiled (:func:`depgraph.usercache.compiled`)."""
    v = start
    for k in range(len(path)):
        path[k] = v
        want = stage[v] - 1
        if want < 0:
            return k + 1
        # dependencies one stage lower; take the (k mod count)-th, so that among
        # equally long paths a staircase is drawn rather than a walk along an edge
        count = 0
        for e in range(indptr[v], indptr[v + 1]):
            if stage[indices[e]] == want:
                count += 1
        pick = k % count
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if stage[u] == want:
                if pick == 0:
                    v = u
                    break
                pick -= 1
    return len(path)


def critical_path(indptr: np.ndarray, indices: np.ndarray, stage: np.ndarray,
                  start: int) -> np.ndarray:
    """A longest path from ``start`` to a base case: nodes, ``start`` first.

    Each step goes to a dependency whose stage is one less, which exists by the
    definition of depth, so from a node of the deepest stage the path has
    ``stage[start] + 1`` nodes: as many as there are stages.  O(path length x degree)
    time, one index array of the path's length.

    Examples
    --------
    >>> from depgraph.analysis.graph import from_edges
    >>> g = from_edges((5,), src=np.array([1, 2, 3, 4, 4]), dst=np.array([0, 1, 2, 3, 0]))
    >>> critical_path(g.indptr, g.indices, np.array([0, 1, 2, 3, 4], np.int32), 4).tolist()
    [4, 3, 2, 1, 0]
    """
    global _WALK
    if _WALK is None:
        _WALK = compiled(_walk)
    start = int(start)
    dtype = np.int32 if len(stage) <= np.iinfo(np.int32).max else np.int64
    path = np.empty(int(stage[start]) + 1, dtype=dtype)
    count = _WALK(indptr, indices, stage, start, path)
    return path[:count]


def _stage_table(analysis: Analysis) -> np.ndarray:
    """The stage of every cell in the table's shape; a view, no copy, for whole tables."""
    g, rec = analysis.graph, analysis.recurrence
    if g.cells is None and g.n_nodes == rec.cells:
        return analysis.stages.stage.reshape(rec.shape)
    return analysis.stage_table()


def _deepest_path(analysis: Analysis) -> np.ndarray:
    """Flat cells of a critical path from the deepest stage (its last cell, C order)."""
    g, st = analysis.graph, analysis.stages
    if st.count == 0:
        return np.zeros(0, dtype=np.int64)
    last = st.nodes(st.count - 1)
    if g.cells is None:
        start = int(last.max())
    else:
        start = int(last[np.argmax(g.cells[last])])
    nodes = critical_path(g.indptr, g.indices, st.stage, start)
    return nodes if g.cells is None else g.cells[nodes]


def slice_text(index: Sequence[Any], shape: Sequence[int]) -> str:
    """``M[:, :, 3]`` for a slice of a k-D table, ``""`` for a whole 1-D/2-D table.

    Examples
    --------
    >>> slice_text((slice(None), 2, slice(None)), (3, 4, 5))
    'M[:, 2, :]'
    """
    if len(shape) <= 2:
        return ""
    return "M[" + ", ".join(":" if isinstance(p, slice) else str(p) for p in index) + "]"


def _free_axes(index: Sequence[Any]) -> list[int]:
    return [k for k, p in enumerate(index) if isinstance(p, slice)]


def _as_2d(table: np.ndarray, index: Sequence[Any]) -> np.ndarray:
    """The 2-D array the picture shows: the slice, or a 1-D table as a 1 x n strip."""
    out = table[tuple(index)]
    return out.reshape(1, -1) if out.ndim == 1 else out


def _path_in_view(path: np.ndarray, shape: tuple[int, ...], index: Sequence[Any],
                  most: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) in the picture of the path cells that lie in the shown slice.

    Paths longer than ``most`` cells (a 1 x 10^7 chain) are sampled evenly, ends kept,
    before their indices are unravelled: the picture has far fewer pixels anyway.
    """
    shape = tuple(shape)
    if len(shape) > 2:
        keep = np.ones(len(path), dtype=bool)
        stride = 1
        for k in range(len(shape) - 1, -1, -1):
            if not isinstance(index[k], slice):
                keep &= (path // stride) % shape[k] == index[k]
            stride *= shape[k]
        path = path[keep]
    if len(path) > most:
        path = path[np.linspace(0, len(path) - 1, most).round().astype(np.int64)]
    idx = np.unravel_index(path, shape)
    if len(shape) == 1:
        return np.zeros_like(idx[0]), idx[0]
    a, b = _free_axes(index)
    return idx[a], idx[b]


def _axis_labels(shape: tuple[int, ...], index: Sequence[Any]) -> tuple[str, str]:
    if len(shape) == 1:
        return "", "index i"
    if len(shape) == 2:
        return "row i", "column j"
    a, b = _free_axes(index)
    return f"axis {a} index", f"axis {b} index"


def _plan(rows: int, cols: int) -> tuple[float, float]:
    """Inches of the grid (width, height): square cells, except that a long strip is
    drawn at least 0.3 inch thick."""
    cell = min(0.5, 7.0 / cols, 6.0 / rows)
    w, h = cols * cell, rows * cell
    return max(w, min(cols * 0.5, 0.3)), max(h, min(rows * 0.5, 0.3))


def _text_colour(rgba: Sequence[float]) -> str:
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _fmt(n: int) -> str:
    return f"{n:,}"


def _heat(
    values: np.ndarray,
    count: int,
    cmap_name: str,
    bar_label: str,
    title: str,
    axis_labels: tuple[str, str],
    numbers: bool = True,
) -> tuple[Figure, Axes, int, int, bool]:
    """A heat map of non-negative integers (``-1`` = not drawn) with a colour bar.

    Returns the figure, its axes, the block sizes (1 when not aggregated) and whether
    the cells got numbers.  Data coordinates are cell indices: cell ``(i, j)`` is
    centred at ``x = j, y = i``; row 0 is at the top, column 0 at the left.  The layout
    is computed in inches (grid, tick labels, colour bar, title), so every shape, from
    one cell to a long strip, gets square cells and no wasted space.
    """
    import matplotlib
    from matplotlib.colors import BoundaryNorm, Normalize

    rows, cols = values.shape
    agg, bi, bj = _block_max_any(values)
    w, h = _plan(rows, cols)
    horizontal = h < 1.6  # a low grid gets its colour bar below, not beside it
    left = 0.55 + 0.08 * len(f"{rows - 1:,}")
    right = 0.25 if horizontal else 1.25
    bottom = 0.95 if horizontal else 0.25
    if bi > 1 or bj > 1:
        title += f"\neach pixel is the maximum over a block of {bi} x {bj} cells"
    fig_w = max(left + w + right, 5.2)
    title = _wrap_lines(title, int(fig_w * 12))
    top = 0.62 + 0.19 * (title.count("\n") + 1)
    fig_h = bottom + h + top
    fig = _new_figure((fig_w, fig_h), constrained=False)
    x0 = left + (fig_w - left - w - right) / 2
    ax = fig.add_axes((x0 / fig_w, bottom / fig_h, w / fig_w, h / fig_h))
    cmap = matplotlib.colormaps[cmap_name].with_extremes(bad="#d9d9d9")
    top_stage = max(count, 1)
    if top_stage <= 32:
        norm: Any = BoundaryNorm(np.arange(-0.5, top_stage + 0.5), cmap.N)
    else:
        norm = Normalize(0, top_stage - 1)
    im = ax.imshow(np.ma.masked_less(agg, 0), cmap=cmap, norm=norm, aspect="auto",
                   interpolation="nearest",
                   extent=(-0.5, agg.shape[1] * bj - 0.5, agg.shape[0] * bi - 0.5, -0.5))
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    label_in = 0.09 * len(f"{cols - 1:,}") + 0.25  # inches one x tick label needs
    if cols <= min(w / label_in, 12):
        ax.set_xticks(range(cols))
    else:
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(
            integer=True, nbins=max(2, min(10, int(w / label_in)))))
    if rows <= min(h / 0.17, 12):
        ax.set_yticks(range(rows))
    else:
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(
            integer=True, nbins=max(2, min(10, int(h / 0.4)))))
    commas = matplotlib.ticker.FuncFormatter(lambda v, _: f"{int(round(v)):,}")
    ax.xaxis.set_major_formatter(commas)
    ax.yaxis.set_major_formatter(commas)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_ylabel(axis_labels[0])
    ax.set_xlabel(axis_labels[1])
    if horizontal:
        bw = min(max(w, 3.0), fig_w - 0.6)
        cax = fig.add_axes(((fig_w - bw) / 2 / fig_w, 0.5 / fig_h, bw / fig_w, 0.16 / fig_h))
        room = bw
    else:
        bh = max(h, 1.6)
        cax = fig.add_axes(((x0 + w + 0.18) / fig_w, (bottom + (h - bh) / 2) / fig_h,
                            0.18 / fig_w, bh / fig_h))
        room = bh
    cb = fig.colorbar(im, cax=cax, orientation="horizontal" if horizontal else "vertical")
    cb.set_label(bar_label)
    cb.formatter = commas
    if not horizontal:
        cb.locator = matplotlib.ticker.MaxNLocator(integer=True, nbins=max(2, int(room / 0.4)))
    else:
        cb.locator = matplotlib.ticker.MaxNLocator(
            integer=True, nbins=max(2, int(room / (0.09 * len(f"{top_stage:,}") + 0.3))))
    cb.update_ticks()
    if top_stage <= 32:
        every = max(1, math.ceil(top_stage / max(2, int(room / 0.32))))
        cb.set_ticks(list(range(0, top_stage, every)))
        cb.minorticks_off()
    fig.text(0.12 / fig_w, 1 - 0.1 / fig_h, title, fontsize=10.5, ha="left", va="top")
    numbered = False
    if numbers and bi == bj == 1 and rows * cols <= MAX_NUMBERED:
        numbered = _numbers(ax, values, cmap, norm, w / cols, h / rows)
    return fig, ax, bi, bj, numbered


def _numbers(ax: Axes, values: np.ndarray, cmap: Any, norm: Any, cw: float, ch: float) -> bool:
    """Write each cell's value in it when the text fits the cell (sizes in inches)."""
    cell_pt = 72 * min(cw, ch)
    digits = max(len(str(int(values.max()))), 1)
    size = min(9.0, cell_pt * 0.55, cell_pt * 0.85 / (0.62 * digits))
    if size < 4.5:
        return False
    for (i, j), v in np.ndenumerate(values):
        if v < 0:
            continue
        ax.text(j, i, str(int(v)), ha="center", va="center", fontsize=size,
                color=_text_colour(cmap(norm(v))), zorder=6)
    return True


def _thin(rows: np.ndarray, cols: np.ndarray, bi: int, bj: int) -> tuple[np.ndarray, np.ndarray]:
    """Path points to draw: snapped to blocks when aggregated, at most MAX_PATH_POINTS."""
    if bi > 1 or bj > 1:
        rb, cb = rows // bi, cols // bj
        keep = np.ones(len(rows), dtype=bool)
        keep[1:] = (rb[1:] != rb[:-1]) | (cb[1:] != cb[:-1])
        keep[-1:] = True
        rows = rb[keep] * bi + (bi - 1) / 2
        cols = cb[keep] * bj + (bj - 1) / 2
    if len(rows) > MAX_PATH_POINTS:
        sel = np.unique(np.linspace(0, len(rows) - 1, MAX_PATH_POINTS).round().astype(np.int64))
        rows, cols = rows[sel], cols[sel]
    return rows, cols


def _draw_path(ax: Axes, rows: np.ndarray, cols: np.ndarray, bi: int, bj: int,
               boxes: bool, joined: bool = True) -> None:
    """The critical path: a red line from a star (deepest stage) to a square (a base
    case); with ``boxes`` (numbered cells) each path cell is framed in red instead of
    marked, so its number stays readable; not ``joined`` (cells that are no path), the
    cells are marked, or framed, and no line drawn."""
    from matplotlib import patheffects
    from matplotlib.patches import Rectangle

    if len(rows) == 0:
        return
    r, c = _thin(rows.astype(np.float64), cols.astype(np.float64), bi, bj)
    if boxes:
        for y, x in zip(r.tolist(), c.tolist()):
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, ec=PATH_COLOUR,
                                   lw=2.0, zorder=5))
        if joined:
            ax.plot(c, r, color=PATH_COLOUR, lw=1.2, alpha=0.7, zorder=4)
        return
    outline = [patheffects.Stroke(linewidth=3.2, foreground="white"), patheffects.Normal()]
    many = len(r) > 80
    if not joined:
        ax.plot(c, r, color=PATH_COLOUR, marker="s" if many else "o", ms=2 if many else 5,
                mec="white", mew=0.6, ls="none", zorder=3)
        return
    ax.plot(c, r, color=PATH_COLOUR, lw=1.0 if many else 1.6, marker=None if many else "o",
            ms=3, path_effects=outline, zorder=3, solid_joinstyle="round")
    ax.plot(c[:1], r[:1], marker="*", ms=13, color=PATH_COLOUR, mec="white", mew=1.0,
            zorder=4, ls="none")
    ax.plot(c[-1:], r[-1:], marker="s", ms=6, color=PATH_COLOUR, mec="white", mew=1.0,
            zorder=4, ls="none")


def _dims(shape: Sequence[int]) -> str:
    return "x".join(str(int(s)) for s in shape)


# --------------------------------------------------------------------------- stages


def stage_grid_figure(
    stage_table: np.ndarray,
    title: str,
    count: int | None = None,
    path: tuple[np.ndarray, np.ndarray] | None = None,
    axis_labels: tuple[str, str] = ("row i", "column j"),
    joined: bool = True,
) -> Figure:
    """The stages heat map of a 2-D stage table (``-1`` = not in the graph).

    The low-level drawing under :func:`stages_figure`: any size of table, aggregated by
    block maximum to at most ``MAX_PIXELS`` a side; ``path`` is an optional critical
    path as (rows, cols) arrays, drawn as a red line from a star (deepest stage) to a
    square (a base case), or as red marks where not ``joined``.

    Examples
    --------
    >>> fig = stage_grid_figure(np.add.outer(np.arange(3), np.arange(3)), "3x3")
    >>> type(fig).__name__
    'Figure'
    """
    values = np.asarray(stage_table)
    if values.ndim == 1:
        values = values.reshape(1, -1)
    if count is None:
        count = int(values.max()) + 1 if values.size else 0
    fig, ax, bi, bj, numbered = _heat(values, count, STAGE_CMAP, "stage (0 = base cases)",
                                      title, axis_labels)
    if path is not None:
        _draw_path(ax, np.asarray(path[0]), np.asarray(path[1]), bi, bj, numbered, joined)
    return fig


def stages_figure(analysis: Analysis, index: Sequence[Any]) -> Figure:
    """Stages view of an analysis; ``index`` is the slice (see ``render.parse_slice``)."""
    rec, st = analysis.recurrence, analysis.stages
    shape = tuple(rec.shape)
    values = _as_2d(_stage_table(analysis), index)
    path = _deepest_path(analysis)
    prow, pcol = _path_in_view(path, shape, index)
    where = slice_text(index, shape)
    head = f"{rec.name} ({_dims(shape)})" + (f", slice {where}" if where else "")
    title = (f"{head}: {_fmt(st.count)} stages (Algorithm 1), widest stage "
             f"{_fmt(st.max_width)} cell{'s' if st.max_width != 1 else ''}")
    line = (f"red: a critical path (longest chain of dependencies), {_fmt(len(path))} cells "
            "from the deepest stage to a base case")
    if where:
        line += f"; {_fmt(len(prow))} of them lie in this slice"
    hidden = analysis.graph.n_nodes < rec.cells
    title += "\n" + line + (" (grey: not in the graph)" if hidden else "")
    return stage_grid_figure(values, title, st.count, (prow, pcol), _axis_labels(shape, index))


def solution_figure(analysis: Analysis, index: Sequence[Any], found: Solution) -> Figure:
    """The solution ``found`` over the stages heat map (the solution view of a large
    table): a path from its target (a star) to where it ends (a square), or, for a tree,
    its cells marked; ``index`` is the slice."""
    rec, st = analysis.recurrence, analysis.stages
    shape = tuple(rec.shape)
    flat = np.ravel_multi_index(tuple(np.array(found.cells).T), shape)
    rows, cols = _path_in_view(flat, shape, index)
    where = slice_text(index, shape)
    head = f"{rec.name} ({_dims(shape)})" + (f", slice {where}" if where else "")
    drawn = ("its path from the target (star) to where it ends (square)" if found.is_path
             else "its cells")
    title = (f"{head}: the solution from M{found.target} = {found.value}, "
             f"{_fmt(len(found.cells))} cells, the reads that decided its value\n"
             f"red: {drawn}" + (f"; {_fmt(len(rows))} lie in this slice" if where else "")
             + f", over the {_fmt(st.count)} stages (Algorithm 1)")
    return stage_grid_figure(_as_2d(_stage_table(analysis), index), title, st.count,
                             (rows, cols), _axis_labels(shape, index), found.is_path)


# --------------------------------------------------------------------------- pattern


def _step_blocks(code: str, rows: int, cols: int, bi: int, bj: int) -> np.ndarray:
    """Step of every cell, or block maximum of the steps, without a full-size array."""
    p = BY_CODE[code]
    pi, pj = p.pi
    i_lo = np.arange(0, rows, bi)
    i_hi = np.minimum(i_lo + bi, rows) - 1
    j_lo = np.arange(0, cols, bj)
    j_hi = np.minimum(j_lo + bj, cols) - 1
    i = i_hi if pi > 0 else i_lo
    j = j_hi if pj > 0 else j_lo
    return p.step_of(i[:, None], j[None, :], (rows, cols)).astype(np.int64)


def pattern_figure(analysis: Analysis, index: Sequence[Any]) -> Figure:
    """Pattern view: step of every cell under the selected pattern, and the sweep arrow."""
    rec, st, cls = analysis.recurrence, analysis.stages, analysis.classification
    shape = tuple(rec.shape)
    code = cls.pattern
    sched = analysis.schedule
    if code is None and sched is not None and sched.kind == "hyperplane" and sched.pi:
        return _hyperplane_figure(analysis, Hyperplane(sched.pi), sched.basis, index)
    if code is None:
        if len(shape) != 2:
            where = slice_text(index, shape)
            why = (f"no pattern: patterns are defined for 2-D tables, this one is "
                   f"{len(shape)}-D")
            shown = f"slice {where}" if where else "the table"
        else:
            regs = ", ".join(cls.regions or ()) or "none"
            why = f"no pattern fits: the reads fall in {regs}, which none of the eight patterns allows all of"
            shown = "the table"
        title = (f"{rec.name} ({_dims(shape)}): {why}\nshowing the stage order of {shown} "
                 f"instead: {_fmt(st.count)} stages (Algorithm 1) fill it")
        values = _as_2d(_stage_table(analysis), index)
        return stage_grid_figure(values, title, st.count, None, _axis_labels(shape, index))

    p = BY_CODE[code]
    rows, cols = shape
    steps = int(cls.pattern_stages if cls.pattern_stages is not None else p.steps((rows, cols)))
    bi = max(1, math.ceil(rows / MAX_PIXELS))
    bj = max(1, math.ceil(cols / MAX_PIXELS))
    grid = _step_blocks(code, rows, cols, bi, bj)
    extra = steps - st.count
    verdict = (f"as few as the {_fmt(st.count)} minimal stages" if extra == 0 else
               f"{_fmt(extra)} more launch{'es' if extra > 1 else ''} than the "
               f"{_fmt(st.count)} minimal stages")
    others = [c for c in (cls.patterns or ()) if c != code]
    title = (f"{rec.name} ({_dims(shape)}): pattern {code}, {p.order}\n"
             f"{_fmt(steps)} steps (one parallel launch each): {verdict}"
             + (f"\nalso matching: {', '.join(others)}" if others else ""))
    values = grid if bi == bj == 1 else _Expanded(grid, rows, cols)
    fig, ax, _, _, _ = _heat(values, steps, STEP_CMAP, f"step of {code} (0 = first launch)",
                          title, ("row i", "column j"))
    _sweep_arrow(ax, code, rows, cols)
    return fig


def _hyperplane_figure(analysis: Analysis, found: Hyperplane, basis: str,
                       index: Sequence[Any]) -> Figure:
    """Pattern view of a recurrence no pattern fits but a hyperplane does: the step
    ``pi . x`` of every cell of the slice shown."""
    rec, st = analysis.recurrence, analysis.stages
    shape = tuple(rec.shape)
    axes = np.indices(tuple(n for n, k in zip(shape, index) if isinstance(k, slice)))
    free = iter(axes)
    cells = np.stack([next(free) if isinstance(k, slice) else np.full(axes.shape[1:], k)
                      for k in index], axis=-1)
    values = found.step_of(cells.reshape(-1, len(shape)), shape).reshape(axes.shape[1:])
    steps = found.steps(shape)
    where = slice_text(index, shape)
    extra = steps - st.count
    verdict = (f"as few as the {_fmt(st.count)} minimal stages" if extra <= 0 else
               f"{_fmt(extra)} more than the {_fmt(st.count)} minimal stages")
    title = (f"{rec.name} ({_dims(shape)})" + (f", slice {where}" if where else "")
             + (": no pattern fits" if len(shape) == 2 else
                f": patterns are for 2-D tables, this one is {len(shape)}-D")
             + f"; hyperplane pi = {found.text()}\n{_fmt(steps)} steps "
             f"(one parallel launch each, cells with equal pi . x together): {verdict}\n"
             + textwrap.shorten(basis, 110))
    if values.ndim == 1:
        values = values[None, :]
    fig, _, _, _, _ = _heat(values, steps, STEP_CMAP, "step pi . x (0 = first launch)", title,
                            _axis_labels(shape, index))
    return fig


class _Expanded:
    """An already aggregated block grid standing in for the full ``rows x cols`` table.

    ``_heat`` asks it for its shape and hands it to ``block_max``, which returns the
    blocks as they are: the pattern view never builds a full-size step array.
    """

    def __init__(self, blocks: np.ndarray, rows: int, cols: int):
        self.blocks, self.shape, self.size = blocks, (rows, cols), rows * cols
        self.ndim = 2


def _block_max_any(values: Any) -> tuple[np.ndarray, int, int]:
    if isinstance(values, _Expanded):
        rows, cols = values.shape
        return (values.blocks, max(1, math.ceil(rows / MAX_PIXELS)),
                max(1, math.ceil(cols / MAX_PIXELS)))
    return block_max(values)


def _sweep_arrow(ax: Axes, code: str, rows: int, cols: int) -> None:
    from matplotlib import patheffects

    (fx0, fy0), (fx1, fy1) = SWEEP[code]
    inset = 0.12

    def at(fx: float, fy: float) -> tuple[float, float]:
        fx = inset + (1 - 2 * inset) * fx
        fy = inset + (1 - 2 * inset) * fy
        return -0.5 + fx * cols, -0.5 + fy * rows

    start, end = at(fx0, fy0), at(fx1, fy1)
    ax.annotate(
        "", xy=end, xytext=start, zorder=4,
        arrowprops=dict(arrowstyle="-|>,head_width=0.5,head_length=0.9", lw=3.5,
                        color="white", alpha=0.75, shrinkA=0, shrinkB=0,
                        path_effects=[patheffects.Stroke(linewidth=6, foreground="black",
                                                         alpha=0.6), patheffects.Normal()]),
    )


# --------------------------------------------------------------------------- regions


def _glyph(ax: Axes, fill: dict[int, str], text: dict[int, tuple[str, str, str]],
           frame: str | None = None, frame_width: float = 0.0, fontsize: float = 9.0) -> None:
    """A 3x3 glyph: square ``c`` (region code, row by row, Up at the top) filled and labelled."""
    from matplotlib.patches import Rectangle

    for c in range(9):
        r, col = divmod(c, 3)
        ax.add_patch(Rectangle((col, r), 1, 1, facecolor=fill.get(c, "white"),
                               edgecolor="#555555", lw=0.8))
        if c in text:
            s, colour, weight = text[c]
            ax.text(col + 0.5, r + 0.5, s, ha="center", va="center", color=colour,
                    fontweight=weight, fontsize=fontsize)
    ax.set_xlim(-0.04, 3.04)
    ax.set_ylim(3.04, -0.04)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(frame is not None)
        if frame is not None:
            side.set_edgecolor(frame)
            side.set_linewidth(frame_width)


def regions_figure(analysis: Analysis) -> Figure:
    """Regions view of a 2-D analysis (see ``render.regions_view``)."""
    import matplotlib
    from matplotlib.patches import FancyArrowPatch

    rec, st, cls = analysis.recurrence, analysis.stages, analysis.classification
    counts = dict(cls.region_counts or {})
    total = sum(counts.values())
    matched = set(cls.patterns or ())
    selected = cls.pattern
    breaks = breaking_regions(counts)

    fig = _new_figure((13.0, 6.0))
    outer = fig.add_gridspec(1, 2, width_ratios=[1.0, 1.55], wspace=0.04)
    ax = fig.add_subplot(outer[0])
    blues = matplotlib.colormaps["Blues"]
    fill, text = {}, {}
    centre = REGION_CODE["Self"]
    for c, name in enumerate(REGIONS):
        if c == centre:
            fill[c] = "#3a3a3a"
            text[c] = ("x\nthe cell", "white", "bold")
            continue
        k = counts.get(name, 0)
        if k:
            share = k / total
            shade = blues(0.2 + 0.5 * share)
            fill[c] = matplotlib.colors.to_hex(shade)
            text[c] = (f"{name}\n{_fmt(k)} reads\n({100 * share:.0f}%)", _text_colour(shade),
                       "bold")
        else:
            text[c] = (f"{name}\nno reads", "#9a9a9a", "normal")
    _glyph(ax, fill, text, fontsize=11.0)
    for c, name in enumerate(REGIONS):
        if counts.get(name):
            r, col = divmod(c, 3)
            d = np.array([col - 1.0, r - 1.0])
            start = np.array([1.5, 1.5]) + 0.30 * d
            end = np.array([1.5, 1.5]) + 0.62 * d
            ax.add_patch(FancyArrowPatch(tuple(start), tuple(end), arrowstyle="-|>",
                                         mutation_scale=14, color="#d62728", lw=1.8,
                                         zorder=4))
    regs = ", ".join(cls.regions or ()) or "none (no cell reads another)"
    ax.set_title(f"where the reads of {rec.name} fall\n(d = y - x for each direct "
                 f"dependency y of x; {_fmt(total)} reads)", fontsize=10.5)
    ax.set_xlabel(f"regions read: {regs}", fontsize=10)

    right = outer[1].subgridspec(2, 4, hspace=0.05, wspace=0.08)
    green, picked = "#2e8b57", "#ff8c00"
    for k, p in enumerate(PATTERNS):
        sub = fig.add_subplot(right[k // 4, k % 4])
        fill, text = {}, {}
        for c, name in enumerate(REGIONS):
            if c == centre:
                fill[c] = "#8c8c8c"
                continue
            if name in p.allowed:
                fill[c] = "#bfe5c8"
            if counts.get(name):
                ok = name in p.allowed
                text[c] = ("\u25cf" if ok else "\u2717", "#1f4e79" if ok else "#d62728",
                           "bold")
        steps = p.steps((rec.shape[0], rec.shape[1]))
        if p.code == selected:
            status, colour, frame, fw = f"selected: {_fmt(steps)} steps", picked, picked, 4.0
        elif p.code in matched:
            status, colour, frame, fw = f"matches: {_fmt(steps)} steps", green, green, 2.0
        else:
            status = "no: " + ", ".join(breaks[p.code]) + " not allowed"
            colour, frame, fw = "#777777", None, 0.0
        _glyph(sub, fill, text, frame, fw, fontsize=13.0)
        sub.set_title(f"{p.code}\n{ARROW[p.code]}", fontsize=10,
                      fontweight="bold" if p.code in matched else "normal")
        sub.set_xlabel(_wrap(status, 26), fontsize=8.5, color=colour,
                       fontweight="bold" if p.code == selected else "normal")
    if selected:
        verdict = (f"selected {selected}: {_fmt(cls.pattern_stages or 0)} steps against "
                   f"{_fmt(st.count)} minimal stages")
    else:
        verdict = f"no pattern fits: fill by the {_fmt(st.count)} stages"
    fig.suptitle(
        f"{rec.name} ({_dims(rec.shape)}): regions and the eight patterns "
        f"(green: regions a pattern allows; \u25cf read and allowed, \u2717 read but not "
        f"allowed)\nmatching: {', '.join(cls.patterns or ()) or 'none'}; {verdict}",
        fontsize=11, x=0.01, ha="left",
    )
    return fig


def _wrap_lines(text: str, width: int) -> str:
    """Wrap every line of a title to ``width`` characters."""
    return "\n".join(w for line in text.split("\n")
                     for w in (textwrap.wrap(line, width) or [line]))


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text
