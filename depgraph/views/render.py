"""Pictures of a recurrence: the DAG, its stages, its regions, its fill pattern and a
solution.

``depgraph render FILE --view dag|stages|regions|pattern|solution -o OUT`` (SPEC section
6).  Each
view is also a library function that returns the figure object, apart from writing it:

- :func:`dag_view` -> ``graphviz.Digraph``: one node per cell at its grid position (row 0
  at the top, column 0 at the left), coloured by stage, one edge ``x -> y`` per direct
  dependency ``y`` in ``Γ(x)``.  Tables larger than ``max_cells`` are refused.
- :func:`stages_view` -> matplotlib ``Figure``: every cell's stage as a heat map with the
  stage count, the widest stage and one critical (longest) path; aggregated by block
  maximum when cells outnumber pixels.  k-D tables show a 2-D slice (by default the
  middle one of the leading axes).
- :func:`regions_view` -> ``Figure``: the 3x3 region glyph (thesis figure 4.2) with the
  reads per region, beside the allowed regions of the eight patterns.
- :func:`pattern_view` -> ``Figure``: the selected pattern's step of every cell and the
  direction of its sweep (thesis figures 4.3/4.4), or the stage order when none fits.
- :func:`solution_view` -> ``graphviz.Digraph`` or ``Figure``: the cells whose reads
  decided a target's value (:mod:`depgraph.frontend.provenance`) in red over the DAG of
  a table of up to ``max_cells`` cells, else over its stages heat map.

:func:`render` writes one view to a file whose suffix picks the format (``.dot``, ``.svg``,
``.png``, ``.pdf``), through a temporary file in the same directory, so a failure leaves
nothing half-written.  The DOT text needs no Graphviz program; SVG/PNG/PDF of the DAG need
Graphviz's ``dot``.  graphviz and matplotlib are imported only when a view is drawn.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from depgraph.analysis.pipeline import Analysis
from depgraph.errors import (
    DepgraphError,
    RecurrenceError,
    TooLargeError,
    UsageError,
    setting,
)
from depgraph.frontend.provenance import Solution, solution
from depgraph.model import check_cell
from depgraph.views.files import atomic_write, check_writable, write_text
from depgraph.views.render_dag import dag_digraph
from depgraph.views.render_plots import (
    pattern_figure,
    regions_figure,
    solution_figure,
    stages_figure,
)

if TYPE_CHECKING:
    import graphviz
    from matplotlib.figure import Figure

__all__ = [
    "VIEWS",
    "FORMATS",
    "DEFAULT_MAX_CELLS",
    "GraphvizMissingError",
    "dag_view",
    "stages_view",
    "regions_view",
    "pattern_view",
    "solution_view",
    "render",
    "parse_slice",
    "check_request",
    "check_view",
    "check_suffix",
    "summary",
]

#: The views, in the order the CLI lists them.
VIEWS: tuple[str, ...] = ("dag", "stages", "regions", "pattern", "solution")
#: Output formats (by suffix) of each view.
FORMATS: dict[str, tuple[str, ...]] = {
    "dag": (".dot", ".svg", ".png", ".pdf"),
    "stages": (".svg", ".png", ".pdf"),
    "regions": (".svg", ".png", ".pdf"),
    "pattern": (".svg", ".png", ".pdf"),
    "solution": (".dot", ".svg", ".png", ".pdf"),  # .dot: the DAG of a small table
}
#: Largest table (cells) the dag view draws unless told otherwise.
DEFAULT_MAX_CELLS = 400
#: Resolution of PNG output of the matplotlib views.
DPI = 150

_INSTALL_DOT = (
    "Install Graphviz (Debian/Ubuntu: `apt-get install graphviz`; Fedora: `dnf install "
    "graphviz`; macOS: `brew install graphviz`)"
)


class GraphvizMissingError(DepgraphError):
    """SVG/PNG/PDF of the DAG were asked for but Graphviz's ``dot`` is not on PATH (exit 1)."""

    exit_code = 1


# --------------------------------------------------------------------------- the views


def dag_view(analysis: Analysis, max_cells: int = DEFAULT_MAX_CELLS) -> graphviz.Digraph:
    """The dependency DAG as a ``graphviz.Digraph`` (neato layout, nodes pinned to the grid).

    One node per cell, placed at its grid position and coloured by stage (legend at the
    right); one edge ``x -> y`` for each direct dependency ``y`` of ``x``.  Raises
    ``TooLargeError`` when the graph has more than ``max_cells`` nodes.

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import analyze, recurrence
    >>> @recurrence(shape=(2, 3), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> src = dag_view(analyze(paths)).source
    >>> src.count("->")
    4
    """

    return dag_digraph(analysis, max_cells=max_cells)


def stages_view(analysis: Analysis, slice: str | Sequence[Any] | None = None) -> Figure:
    """Heat map of every cell's stage with the critical path (a matplotlib ``Figure``).

    ``slice`` picks a 2-D slice of a k-D table (k > 2), e.g. ``":,:,3"`` (by default the
    last two axes at the middle of each other axis); 1-D tables show
    as a 1 x n strip.  Large tables are aggregated (block maximum), never one patch a cell.
    """

    return stages_figure(analysis, parse_slice(slice, analysis.recurrence.shape))


def regions_view(analysis: Analysis) -> Figure:
    """The 3x3 region glyph with reads per region, beside the eight patterns' regions.

    Raises ``RecurrenceError`` unless the table is 2-D: regions are defined for 2-D tables.
    """

    _check_regions(analysis.recurrence.shape)
    return regions_figure(analysis)


def pattern_view(analysis: Analysis, slice: str | Sequence[Any] | None = None) -> Figure:
    """The selected pattern's fill order: the step of every cell and the sweep direction.

    With no pattern (none fits, or the table is not 2-D) the title says so and the
    stage order is shown instead, or, where a hyperplane fits
    (:mod:`depgraph.analysis.schedule`), each cell's hyperplane step; ``slice`` as in
    :func:`stages_view`.
    """

    return pattern_figure(analysis, parse_slice(slice, analysis.recurrence.shape))


def solution_view(analysis: Analysis, found: Solution | None = None,
                  max_cells: int = DEFAULT_MAX_CELLS,
                  slice: str | Sequence[Any] | None = None) -> graphviz.Digraph | Figure:
    """The solution ``found`` (by default the one from the recurrence's answer, else the
    table's last cell, over the analysis's table) in red: over the DAG
    (:func:`dag_view`) when the table has at most ``max_cells`` cells, else over the
    stages heat map (:func:`stages_view`, ``slice`` as there).

    Examples
    --------
    >>> import numpy as np
    >>> from depgraph import analyze, recurrence
    >>> @recurrence(shape=(2, 3), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else max(M[i - 1, j], M[i, j - 1])
    >>> solution_view(analyze(paths)).source.count("#d62728")  # (1, 2) -> (0, 2): a tie
    3
    """
    a = analysis
    if found is None:
        found = solution(a.recurrence, a.table)
    if a.recurrence.cells <= max_cells:
        return dag_digraph(a, max_cells, found)
    return solution_figure(a, parse_slice(slice, a.recurrence.shape), found)


# --------------------------------------------------------------------------- checks


def parse_slice(spec: str | Sequence[Any] | None, shape: Sequence[int]) -> tuple[Any, ...]:
    """Turn a slice spec (``--slice``) into an index tuple with exactly two full slices (one for 1-D).

    ``spec`` has one entry per axis: ``:`` for the two axes to show, an index for every
    other axis; without one, a k-D table shows its last two axes at the middle index of
    each other axis.  2-D tables need no slice; 1-D tables need none and show as a strip.

    Examples
    --------
    >>> parse_slice(":,:,3", (4, 5, 6))
    (slice(None, None, None), slice(None, None, None), 3)
    >>> parse_slice(None, (4, 5))
    (slice(None, None, None), slice(None, None, None))
    >>> parse_slice(None, (4, 5, 6))   # k-D: the middle of each leading axis
    (2, slice(None, None, None), slice(None, None, None))
    """
    shape = tuple(int(s) for s in shape)
    k = len(shape)
    full = slice(None)
    if isinstance(spec, tuple) and all(isinstance(p, (int, slice)) for p in spec):
        parts: list[str] = [":" if isinstance(p, slice) else str(p) for p in spec]
    elif spec is None:
        return tuple(n // 2 for n in shape[:-2]) + (full,) * min(k, 2)
    else:
        parts = [p.strip() for p in str(spec).split(",")]
    want = min(k, 2)
    if len(parts) != k or sum(p == ":" for p in parts) != want:
        raise UsageError(
            f"{setting('slice', spec)} does not fit a {k}-D table (shape {shape}): "
            + (_slice_syntax(k) if k > 2 else
               f"a {k}-D table is drawn whole; give {','.join([':'] * k)} or no "
               f"{setting('slice')}")
        )
    out: list[Any] = []
    for axis, (p, n) in enumerate(zip(parts, shape)):
        if p == ":":
            out.append(full)
            continue
        try:
            idx = int(p)
        except ValueError:
            raise UsageError(
                f"{setting('slice', spec)}: entry {axis} is {p!r}, not ':' or an integer index"
            ) from None
        if not 0 <= idx < n:
            raise UsageError(
                f"{setting('slice', spec)}: index {idx} is outside axis {axis} of shape {shape} "
                f"(0..{n - 1})"
            )
        out.append(idx)
    return tuple(out)


def _slice_syntax(k: int) -> str:
    a = ",".join([":", ":"] + ["0"] * (k - 2))
    b = ",".join(["0"] * (k - 2) + [":", ":"])
    return (
        f"give {setting('slice')} with one entry per axis, ':' for the two axes to show and "
        f"an index for each other axis, e.g. {setting('slice', a)} or {setting('slice', b)}"
    )


def _check_regions(shape: Sequence[int]) -> None:
    if len(shape) != 2:
        raise RecurrenceError(
            f"regions are defined for 2-D tables (a read's offset d = y - x falls Up, Down, "
            f"Left, Right or in a corner); this table is {len(shape)}-D (shape "
            f"{tuple(shape)}). The stage schedule still applies: use "
            f"{setting('view', 'stages')}"
            + (f" with {setting('slice')}" if len(shape) > 2 else "")
            + (". A 1-D recurrence written as a 1 x n table gets regions and patterns"
               if len(shape) == 1 else "")
            + "."
        )


def check_view(view: str) -> str:
    """The view named ``view``; ``UsageError`` unless it is one of :data:`VIEWS`."""
    v = str(view).strip().lower()
    if v not in VIEWS:
        raise UsageError(f"no view {view!r}: choose one of {', '.join(VIEWS)}")
    return v


def check_suffix(view: str, path: Path) -> str:
    """The suffix of ``path``; ``UsageError`` unless it is a format of ``view``."""
    suffix = path.suffix.lower()
    allowed = FORMATS[view]
    if suffix not in allowed:
        what = f"suffix {suffix!r}" if suffix else "no suffix"
        extra = "" if ".dot" in allowed else (" (.dot is for the dag view, and the solution "
                                              "view of a small table)")
        raise UsageError(
            f"cannot write the {view} view to {str(path)!r}: {what}; the format comes from "
            f"the suffix: {', '.join(allowed)}{extra}"
        )
    return suffix


def check_request(
    view: str,
    path: str | os.PathLike[str],
    shape: Sequence[int],
    max_cells: int | None = DEFAULT_MAX_CELLS,
    slice: str | Sequence[Any] | None = None,
    target: Sequence[int] | None = None,
) -> tuple[str, Path, tuple[Any, ...] | None]:
    """Check a render request before any tracing; return ``(view, path, index)``.

    Raises ``UsageError`` for an unknown view, an unsupported suffix, an unwritable
    path, a missing or bad ``slice``, a ``target`` outside the table or for another view
    than the solution, a ``.dot`` solution of a table over ``max_cells`` (drawn over the
    stages); ``TooLargeError`` for a DAG over ``max_cells``; ``RecurrenceError`` for
    regions of a table that is not 2-D.

    Examples
    --------
    >>> check_request("stages", "out.png", (3, 4))[0]
    'stages'
    >>> check_request("heat", "out.png", (3, 4))
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: no view 'heat': choose one of dag, stages, regions, pattern, solution
    """
    v = check_view(view)
    p = Path(path)
    check_writable(p)
    check_suffix(v, p)
    shape = tuple(int(s) for s in shape)
    index: tuple[Any, ...] | None = None
    limit = DEFAULT_MAX_CELLS if max_cells is None else int(max_cells)
    if limit < 1 and v in ("dag", "solution"):
        raise UsageError(f"{setting('max_cells')} must be a positive integer, got {limit}")
    if target is not None:
        if v != "solution":
            raise UsageError(f"{setting('target')} picks where the solution view starts; the "
                             f"{v} view draws no solution")
        check_cell(target, shape, UsageError, setting("target"))
    if v == "solution" and math.prod(shape) > limit:
        if p.suffix.lower() == ".dot":
            raise UsageError(
                f"the solution of a table of {math.prod(shape):,} cells, more than "
                f"{setting('max_cells', f'{limit:,}')}, is drawn over its stages heat map: "
                f"write it as .svg, .png or .pdf (or raise {setting('max_cells')} to draw the "
                "DAG)")
        index = parse_slice(slice, shape)
    elif v in ("dag", "solution"):
        if v == "dag":
            _check_dag_size(shape, limit)
        if slice is not None:
            raise UsageError(f"{setting('slice')} applies to the stages and pattern views and "
                             f"the solution view of a table over {setting('max_cells')}; the "
                             f"{v} view draws the whole table")
    elif v == "regions":
        _check_regions(shape)
        if slice is not None:
            raise UsageError(f"{setting('slice')} applies to the stages and pattern views; "
                             "regions need a 2-D table")
    else:
        index = parse_slice(slice, shape)
    return v, p, index


def _check_dag_size(shape: Sequence[int], limit: int) -> None:
    cells = math.prod(shape)
    if cells > limit:
        raise TooLargeError(
            f"the dag view draws one node per cell, and this table has {cells:,} cells "
            f"(shape {tuple(shape)}), more than {setting('max_cells', f'{limit:,}')}: no one "
            f"can read that many nodes. Use {setting('view', 'stages')} (any size; it "
            f"aggregates large tables), a smaller {setting('size')}, or raise "
            f"{setting('max_cells')}."
        )


# --------------------------------------------------------------------------- writing


def _write_figure(fig: Figure, path: Path, fmt: str) -> Path:
    def write(tmp: str) -> None:
        fig.savefig(tmp, format=fmt, dpi=DPI)

    try:
        return atomic_write(path, write)
    finally:
        fig.clear()


def _write_dag(source: str, path: Path, fmt: str) -> Path:
    if fmt == "dot":
        return write_text(path, source)
    dot = shutil.which("dot")
    if dot is None:
        dot_path = write_text(path.with_suffix(".dot"), source)
        raise GraphvizMissingError(
            f"writing the dag view as .{fmt} needs Graphviz's `dot` program, which is not on "
            f"PATH. {_INSTALL_DOT}, then run again, or draw the DOT file written to "
            f"{str(dot_path)!r} with `dot -T{fmt} {dot_path} -o {path}`."
        )

    def write(tmp: str) -> None:
        proc = subprocess.run(
            [dot, f"-T{fmt}", "-o", tmp], input=source.encode("utf-8"),
            capture_output=True, check=False,
        )
        if proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise DepgraphError(
                f"Graphviz `dot -T{fmt}` failed (exit {proc.returncode}): "
                + (msg[-1] if msg else "no message")
            )

    return atomic_write(path, write)


def render(
    analysis: Analysis,
    view: str,
    path: str | os.PathLike[str],
    max_cells: int | None = DEFAULT_MAX_CELLS,
    slice: str | Sequence[Any] | None = None,
    found: Solution | None = None,
) -> Path:
    """Write one view of an analysis to ``path``; the suffix picks the format.

    ``found``: the solution the solution view draws (by default
    :func:`solution_view`'s).  Returns the path written.  The file appears whole or not
    at all.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from depgraph import analyze, recurrence
    >>> @recurrence(shape=(2, 2), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = render(analyze(paths), "dag", f"{d}/paths.dot")
    ...     p.read_text().count("->")
    2
    """
    v, p, index = check_request(view, path, analysis.recurrence.shape, max_cells, slice)
    fmt = p.suffix.lower().lstrip(".")
    limit = DEFAULT_MAX_CELLS if max_cells is None else max_cells
    if v == "dag":
        return _write_dag(dag_view(analysis, limit).source, p, fmt)
    if v == "solution":
        import graphviz

        fig = solution_view(analysis, found, limit, index)
        if isinstance(fig, graphviz.Digraph):
            return _write_dag(fig.source, p, fmt)
    elif v == "stages":
        fig = stages_view(analysis, index)
    elif v == "regions":
        fig = regions_view(analysis)
    else:
        fig = pattern_view(analysis, index)
    return _write_figure(fig, p, fmt)


def summary(analysis: Analysis, view: str, found: Solution | None = None) -> str:
    """What a view of ``analysis`` shows, in a few words (the line ``render`` prints);
    ``found``: the solution view's solution."""
    st = analysis.stages
    if view == "solution" and found is not None:
        return f"the solution: {found.summary()}"
    if view == "dag":
        return (f"{analysis.graph.n_nodes:,} nodes, {analysis.graph.n_edges:,} edges, "
                f"{st.count:,} stages")
    if view == "stages":
        return f"{st.count:,} stages, widest {st.max_width:,} cells"
    if view == "regions":
        regs = ", ".join(analysis.regions or ()) or "no reads"
        return f"reads {regs}; pattern {analysis.pattern or 'none'}"
    cls = analysis.classification
    sched = analysis.schedule
    if cls.pattern is None and sched is not None and sched.kind == "hyperplane":
        return f"no pattern; hyperplane pi = {tuple(sched.pi or ())}: {sched.steps:,} steps"
    if cls.pattern is None:
        return f"no pattern, {st.count:,} stages shown"
    return f"pattern {cls.pattern}: {cls.pattern_stages:,} steps (minimal stages {st.count:,})"
