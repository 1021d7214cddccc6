"""``depgraph render`` and the view functions (issue 4; SPEC section 6).

DOT structure (one node per cell, one edge per direct dependency, grid positions), real
SVG/PNG/PDF files, odd shapes (1 x n, n x 1, no pattern, 3-D slices), a 2000 x 2000 stages
view in bounded memory, and the CLI's exit codes for bad requests.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from depgraph import analyze, recurrence
from depgraph.analysis import Analysis
from depgraph.analysis.classify import Classification
from depgraph.analysis.graph import DependencyGraph
from depgraph.analysis.stages import Stages
from depgraph.cli import main
from depgraph.errors import OutputError, RecurrenceError, TooLargeError, UsageError
from depgraph.model import Recurrence
from depgraph.frontend.provenance import solution
from depgraph.views.render import (
    dag_view,
    parse_slice,
    pattern_view,
    regions_view,
    render,
    solution_view,
    stages_view,
    summary,
)
from depgraph.views.render_dag import DX, DY, node_name
from depgraph.views.render_plots import block_max, critical_path
from patterns import BY_CODE

from lcs import make_lcs

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz `dot` is not installed")

lcs = make_lcs(b"AGCGTAG", b"GTCAGA")


@recurrence(shape=(6, 6), dtype=np.int64)
def chain(M, i, j):  # matrix-chain shape: Left and Down reads, pattern SONE
    if j <= i:
        return 0
    return min(M[i, k] + M[k + 1, j] + 1 for k in range(i, j))


@recurrence(shape=(1, 9), dtype=np.int64)
def row(M, i, j):
    return 1 if j < 2 else M[0, j - 1] + M[0, j - 2]


@recurrence(shape=(9, 1), dtype=np.int64)
def column(M, i, j):
    return 1 if i < 2 else M[i - 1, 0] + M[i - 2, 0]


@recurrence(shape=(6, 5), dtype=np.int64)
def updown(M, i, j):  # reads Up (top half), Down (bottom half) and Left: no pattern
    if i == 0 or i == 5:
        return 1
    left = M[i, j - 1] if j else 0
    return (M[i - 1, j] if i <= 2 else M[i + 1, j]) + left


@recurrence(shape=(3, 4, 5), dtype=np.int64)
def cube(M, i, j, k):
    if i == 0 or j == 0 or k == 0:
        return 1
    return M[i - 1, j, k] + M[i, j - 1, k] + M[i, j, k - 1]


@recurrence(shape=(4, 6), dtype=np.int64)
def skew(M, i, j):
    if i == 0 or j == 0 or j == 5:
        return 1
    return M[i - 1, j + 1] + M[i, j - 1]


@recurrence(shape=(12,), dtype=np.int64)
def fib(M, i):
    return i if i < 2 else M[i - 1] + M[i - 2]


_CACHE: dict[str, Analysis] = {}


def analysis_of(rec: Recurrence) -> Analysis:
    if rec.name not in _CACHE:
        _CACHE[rec.name] = analyze(rec)
    return _CACHE[rec.name]


MAGIC = {".png": b"\x89PNG", ".pdf": b"%PDF"}


def assert_format(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 200, path
    if path.suffix == ".svg":
        head = data[:400].lstrip()
        assert head.startswith(b"<?xml") or head.startswith(b"<svg"), head[:50]
        assert b"<svg" in data
    else:
        assert data.startswith(MAGIC[path.suffix]), data[:8]


NODE = re.compile(r"^\s*(c\d+(?:_\d+)*)\s*\[(.*)\]\s*$")
EDGE = re.compile(r"^\s*(c\d+(?:_\d+)*)\s*->\s*(c\d+(?:_\d+)*)\b")


def parse_dot(text: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Node statements (name -> attributes) and edge statements of a DOT text."""
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    for line in text.splitlines():
        if m := EDGE.match(line):
            edges.append((m.group(1), m.group(2)))
        elif m := NODE.match(line):
            assert m.group(1) not in nodes, f"node {m.group(1)} declared twice"
            nodes[m.group(1)] = m.group(2)
    return nodes, edges


def expected_edges(a: Analysis) -> list[tuple[str, str]]:
    src, dst = a.graph.edge_arrays()
    return [(node_name(a.graph.cell(s)), node_name(a.graph.cell(d)))
            for s, d in zip(src.tolist(), dst.tolist())]


# --------------------------------------------------------------------------- dag


@pytest.mark.parametrize("rec", [lcs, chain, row, column, cube, fib], ids=lambda r: r.name)
def test_dot_has_one_node_per_cell_and_one_edge_per_dependency(rec, tmp_path):
    a = analysis_of(rec)
    path = render(a, "dag", tmp_path / "g.dot")
    nodes, edges = parse_dot(path.read_text())
    cells = {node_name(c) for c in np.ndindex(*rec.shape)}
    assert set(nodes) == cells and len(nodes) == rec.cells
    assert len(edges) == a.graph.n_edges
    assert sorted(edges) == sorted(expected_edges(a))
    assert len(set(edges)) == len(edges)


def test_dot_places_cells_on_the_grid_row_0_on_top(tmp_path):
    nodes, _ = parse_dot(render(analysis_of(lcs), "dag", tmp_path / "g.dot").read_text())
    for name, attrs in nodes.items():
        i, j = (int(p) for p in name[1:].split("_"))
        x, y = (float(v) for v in re.search(r'pos="([-\d.]+),([-\d.]+)!"', attrs).groups())
        assert x == pytest.approx(j * DX, abs=1e-3)  # column grows to the right
        assert y == pytest.approx(-i * DY, abs=1e-3)  # row grows downward (neato's y is up)
    assert "layout=neato" in dag_view(analysis_of(lcs)).source


def test_dot_colours_by_stage_and_labels_values():
    a = analysis_of(lcs)
    nodes, _ = parse_dot(dag_view(a).source)
    stage = a.stage_table()
    fills: dict[int, set[str]] = {}
    for name, attrs in nodes.items():
        i, j = (int(p) for p in name[1:].split("_"))
        fill = re.search(r'fillcolor="(#[0-9a-f]{6})"', attrs).group(1)
        fills.setdefault(int(stage[i, j]), set()).add(fill)
        assert f"{i},{j}" in attrs and f"<b>{a.table[i, j]}</b>" in attrs
    assert all(len(f) == 1 for f in fills.values())  # one colour per stage
    assert len({next(iter(f)) for f in fills.values()}) == a.stages.count


def test_dag_refuses_large_tables():
    with pytest.raises(TooLargeError, match="stages"):
        dag_view(analysis_of(lcs), max_cells=10)


@needs_dot
@pytest.mark.parametrize("suffix", [".svg", ".png", ".pdf"])
def test_dag_pictures_are_real_files(suffix, tmp_path):
    path = render(analysis_of(chain), "dag", tmp_path / f"g{suffix}")
    assert_format(path)
    assert [p.name for p in tmp_path.iterdir()] == [f"g{suffix}"]


def test_without_dot_the_dot_file_is_still_written(monkeypatch, write_rec, tmp_path, capsys):
    monkeypatch.setattr("depgraph.views.render.shutil.which", lambda name: None)
    src = write_rec("""
        @recurrence(shape=(3, 3), dtype=np.int64)
        def paths(M, i, j):
            return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    """)
    out = tmp_path / "g.svg"
    assert main(["render", src, "--view", "dag", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "apt-get install graphviz" in err and "Traceback" not in err
    assert not out.exists()
    nodes, edges = parse_dot((tmp_path / "g.dot").read_text())
    assert len(nodes) == 9 and len(edges) == 8


# --------------------------------------------------------------------------- matplotlib views


@pytest.mark.parametrize("view", ["stages", "regions", "pattern"])
@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_figure_views_write_real_files(view, suffix, tmp_path):
    path = render(analysis_of(lcs), view, tmp_path / f"v{suffix}")
    assert_format(path)
    assert [p.name for p in tmp_path.iterdir()] == [f"v{suffix}"]


def _image(fig):
    ax = fig.axes[0]
    return ax, np.ma.filled(ax.images[0].get_array(), -1)


def test_stages_view_shows_every_cell_stage_row_0_on_top():
    a = analysis_of(lcs)
    ax, img = _image(stages_view(a))
    assert np.array_equal(img, a.stage_table())
    bottom, top = ax.get_ylim()
    assert top < bottom  # row 0 at the top
    assert ax.get_xlim()[0] < ax.get_xlim()[1]  # column 0 at the left


def test_critical_path_is_a_longest_chain():
    a = analysis_of(lcs)
    g, st = a.graph, a.stages
    start = int(st.nodes(st.count - 1)[0])
    path = critical_path(g.indptr, g.indices, st.stage, start).tolist()
    assert len(path) == st.count
    for x, y in zip(path, path[1:]):
        assert y in g.dependencies(x).tolist() and st.stage[y] == st.stage[x] - 1
    assert st.stage[path[-1]] == 0


def test_block_max_matches_a_plain_loop():
    rng = np.random.default_rng(1)
    a = rng.integers(-1, 50, size=(37, 23))
    b, bi, bj = block_max(a, 5, 4)
    assert b.shape == (-(-37 // bi), -(-23 // bj)) and b.shape[0] <= 5 and b.shape[1] <= 4
    for r in range(b.shape[0]):
        for c in range(b.shape[1]):
            assert b[r, c] == a[r * bi:(r + 1) * bi, c * bj:(c + 1) * bj].max()


def test_pattern_view_numbers_cells_by_step():
    a = analysis_of(chain)
    assert a.pattern == "SONE"
    fig = pattern_view(a)
    ax, img = _image(fig)
    i, j = np.indices(chain.shape)
    assert np.array_equal(img, BY_CODE["SONE"].step_of(i, j, chain.shape))
    title = fig.texts[0].get_text()
    assert "SONE" in title and f"{a.classification.pattern_stages} steps" in title
    assert f"{a.stages.count} minimal stages" in title
    numbers = [t for t in ax.texts if type(t).__name__ == "Text"]
    assert len(numbers) == chain.cells  # one number per cell
    assert sorted(int(t.get_text()) for t in numbers) == sorted(img.ravel().tolist())
    arrows = [t for t in ax.texts if type(t).__name__ == "Annotation"]
    assert len(arrows) == 1  # the sweep: from the SW corner toward the NE
    (x0, y0), (x1, y1) = arrows[0].xyann, arrows[0].xy
    assert x1 > x0 and y1 < y0


def test_pattern_view_without_a_pattern_shows_stages():
    a = analysis_of(updown)
    assert a.pattern is None
    fig = pattern_view(a)
    _, img = _image(fig)
    assert np.array_equal(img, a.stage_table())
    assert "no pattern" in fig.texts[0].get_text()


def test_regions_view_counts_reads_and_marks_patterns():
    a = analysis_of(lcs)
    fig = regions_view(a)
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    for region, k in a.classification.region_counts.items():
        assert f"{region}\n{k:,} reads" in texts
    labels = [ax.get_xlabel() for ax in fig.axes[1:]]
    assert len(labels) == 8 and sum("selected" in s for s in labels) == 1
    steps = a.classification.pattern_stages
    assert f"selected: {steps} steps" in labels[4]  # NOSE, canonical position 4


@pytest.mark.parametrize("rec", [row, column], ids=lambda r: r.name)
def test_strips(rec, tmp_path):
    a = analysis_of(rec)
    for view in ("stages", "pattern", "regions"):
        assert_format(render(a, view, tmp_path / f"{view}.png"))
    _, img = _image(stages_view(a))
    assert img.shape == rec.shape


def test_one_dimensional_table_is_a_strip(tmp_path):
    a = analysis_of(fib)
    _, img = _image(stages_view(a))
    assert img.shape == (1, 12)
    fig = pattern_view(a)
    assert "2-D" in fig.texts[0].get_text()
    with pytest.raises(RecurrenceError, match="2-D"):
        regions_view(a)


def test_three_dimensional_table_by_slices(tmp_path):
    a = analysis_of(cube)
    _, img = _image(stages_view(a, ":,2,:"))
    assert np.array_equal(img, a.stage_table()[:, 2, :])
    _, img = _image(stages_view(a, "1,:,:"))
    assert img.shape == (4, 5)
    assert "M[1, :, :]" in stages_view(a, "1,:,:").texts[0].get_text()
    assert_format(render(a, "pattern", tmp_path / "p.png", slice=":,:,4"))
    _, img = _image(stages_view(a))  # by default the middle slice of the first axis
    assert np.array_equal(img, a.stage_table()[a.recurrence.shape[0] // 2])
    assert "slice M[" in stages_view(a).texts[0].get_text()
    with pytest.raises(RecurrenceError, match="2-D"):
        regions_view(a)


def test_pattern_view_draws_the_hyperplanes_where_no_pattern_fits():
    a = analysis_of(cube)  # reads along each axis: pi = (1, 1, 1)
    fig = pattern_view(a, "1,:,:")
    title = fig.texts[0].get_text()
    assert "hyperplane pi = (1, 1, 1)" in title and "M[1, :, :]" in title
    _, img = _image(fig)
    rows, cols = np.indices(img.shape)
    assert np.array_equal(img, 1 + rows + cols)  # the step pi . x of each cell
    s = analysis_of(skew)
    fig = pattern_view(s)
    assert "hyperplane pi = (2, 1)" in fig.texts[0].get_text()
    _, img = _image(fig)
    rows, cols = np.indices(img.shape)
    assert np.array_equal(img, 2 * rows + cols)
    assert summary(s, "pattern") == "no pattern; hyperplane pi = (2, 1): 12 steps"


# --------------------------------------------------------------------------- solution

RED = "#d62728"


def _red(text: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The nodes and edges a DOT text draws in the solution's colour."""
    nodes, _ = parse_dot(text)
    edges = {(m.group(1), m.group(2)) for line in text.splitlines()
             if (m := EDGE.match(line)) and RED in line}
    return {n for n, attrs in nodes.items() if RED in attrs}, edges


@pytest.mark.parametrize("rec", [lcs, chain, row, column, fib], ids=lambda r: r.name)
def test_solution_view_draws_the_solution_over_the_dag(rec):
    a = analysis_of(rec)
    found = solution(rec, a.table)
    text = solution_view(a).source
    nodes, edges = parse_dot(text)
    assert len(nodes) == rec.cells and len(edges) == a.graph.n_edges  # the whole DAG
    red_nodes, red_edges = _red(text)
    assert red_nodes == {node_name(c) for c in found.cells}
    assert red_edges == {(node_name(x), node_name(y)) for x, y in found.edges}
    assert f"the solution from {found.target}" in text


def test_solution_view_from_another_target():
    a = analysis_of(lcs)
    found = solution(lcs, a.table, (3, 2))
    red_nodes, _ = _red(solution_view(a, found).source)
    assert node_name((3, 2)) in red_nodes and node_name((7, 6)) not in red_nodes
    assert red_nodes == {node_name(c) for c in found.cells}


def test_solution_view_of_a_large_table_is_over_the_stages(tmp_path):
    rng = np.random.default_rng(4)
    big = make_lcs(rng.integers(0, 4, 59), rng.integers(0, 4, 44))  # 60 x 45: no numbers
    a = analyze(big)
    found = solution(big, a.table)
    fig = solution_view(a, max_cells=400)
    assert f"the solution from M{found.target}" in fig.texts[0].get_text()
    line = fig.axes[0].lines[0]  # the path, from the target to its end
    assert [(int(r), int(c)) for r, c in zip(line.get_ydata(), line.get_xdata())] == list(found.cells)
    path = render(a, "solution", tmp_path / "s.png", max_cells=400, found=found)
    assert_format(path)
    assert summary(a, "solution", found) == f"the solution: {found.summary()}"
    with pytest.raises(UsageError, match="drawn over its stages heat map"):
        render(a, "solution", tmp_path / "s.dot", max_cells=400)


def test_solution_view_of_a_tree_marks_its_cells():
    a = analysis_of(chain)
    found = solution(chain, a.table, (0, 5))
    assert not found.is_path
    fig = solution_view(a, found, max_cells=4)  # numbered cells: each framed in red
    framed = {(int(p.get_y() + 0.5), int(p.get_x() + 0.5)) for p in fig.axes[0].patches
              if p.get_edgecolor()[:3] != (0.0, 0.0, 0.0) and not p.get_fill()}
    assert framed == set(found.cells) and not fig.axes[0].lines  # no line through a tree


def test_solution_view_of_a_slice(tmp_path):
    a = analysis_of(cube)
    found = solution(cube, a.table)
    fig = solution_view(a, found, max_cells=10, slice="2,:,:")
    assert "M[2, :, :]" in fig.texts[0].get_text()
    shown = sum(c[0] == 2 for c in found.cells)
    assert f"{shown} lie in this slice" in fig.texts[0].get_text()
    assert_format(render(a, "solution", tmp_path / "c.svg", max_cells=10, slice="2,:,:"))


def test_cli_solution_view(write_rec, tmp_path, capsys):
    out = tmp_path / "s.dot"
    assert main(["render", write_rec(PATHS), "--view", "solution", "--target", "2,3",
                 "-o", str(out)]) == 0
    line = capsys.readouterr().out
    assert "solution view" in line and "the solution: " in line and "from M(2, 3)" in line
    red_nodes, _ = _red(out.read_text())
    assert node_name((2, 3)) in red_nodes


def test_parse_slice():
    full = slice(None)
    assert parse_slice("2, :, :", (3, 4, 5)) == (2, full, full)
    assert parse_slice(None, (7,)) == (full,)
    assert parse_slice(None, (3, 4, 5)) == (1, full, full)
    assert parse_slice(None, (3, 4, 5, 6)) == (1, 2, full, full)
    for bad in (":,:,:", "1,2,:", ":,:", ":,:,5", ":,:,x", ":,:,-1"):
        with pytest.raises(UsageError):
            parse_slice(bad, (3, 4, 5))


def grid_analysis(n: int, m: int) -> Analysis:
    """The analysis of ``M[i,j] = M[i-1,j] + M[i,j-1]`` built directly, without tracing."""
    k = np.arange(n * m, dtype=np.int64)
    i, j = np.divmod(k, m)
    up, left = i > 0, j > 0
    indptr = np.zeros(n * m + 1, np.int32)
    np.cumsum(up.astype(np.int32) + left, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), np.int32)
    start = indptr[:-1].astype(np.int64)
    indices[start[up]] = (k - m)[up]
    indices[(start + up)[left]] = (k - 1)[left]
    stage = (i + j).astype(np.int32)
    del k, i, j, up, left, start
    order = np.argsort(stage, kind="stable").astype(np.int32)
    ptr = np.zeros(n + m, np.int64)
    np.cumsum(np.bincount(stage), out=ptr[1:])
    none = np.zeros(0, np.int32)
    graph = DependencyGraph((n, m), indptr, indices, np.zeros(n * m + 1, np.int32), none)
    rec = Recurrence(lambda M, i, j: 0, (n, m), np.dtype(np.int64), (), "grid")
    cls = Classification(("Left", "Up"), {"Left": 1, "Up": 1}, ("NOSE",), "NOSE", n + m - 1)
    return Analysis(rec, None, graph, Stages(stage, order, ptr), cls, {})  # type: ignore[arg-type]


def test_stages_view_of_2000_by_2000_in_bounded_memory(tmp_path):
    a = grid_analysis(2000, 2000)
    render(grid_analysis(3, 3), "stages", tmp_path / "warm.png")  # imports, kernel compile
    tracemalloc.start()
    try:
        out = render(a, "stages", tmp_path / "big.png")
        peak = tracemalloc.get_traced_memory()[1]
        render(a, "pattern", tmp_path / "bigp.png")
        peak = max(peak, tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
    assert peak < 300e6, f"peak {peak / 1e6:.0f} MB"
    assert_format(out)
    _, img = _image(stages_view(a))
    assert img.shape[0] <= 800 and img.shape[1] <= 800  # aggregated, not 4e6 pixels
    assert img[-1, -1] == 3998 and img[0, 0] == 4  # max of the 3 x 3 block (0..2, 0..2)


def test_import_depgraph_stays_light():
    code = ("import sys, depgraph, depgraph.views.render, depgraph.cli; "
            "print(sorted(m for m in ('matplotlib', 'graphviz') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


# --------------------------------------------------------------------------- CLI


PATHS = """
@recurrence(shape=(4, 5), dtype=np.int64)
def paths(M, i, j):
    return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
"""
CUBE = """
@recurrence(shape=(3, 3, 3), dtype=np.int64)
def cube(M, i, j, k):
    return 1 if i == 0 else M[i - 1, j, k]
"""
BIG = """
@recurrence(shape=(500, 500), dtype=np.int64)
def big(M, i, j):
    raise RuntimeError("must not be traced")
"""


@pytest.mark.parametrize("view,suffix", [("dag", ".dot"), ("stages", ".png"),
                                         ("regions", ".svg"), ("pattern", ".pdf"),
                                         ("solution", ".dot")])
def test_cli_writes_each_view(view, suffix, write_rec, tmp_path, capsys):
    out = tmp_path / f"out{suffix}"
    assert main(["render", write_rec(PATHS), "--view", view, "-o", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"wrote {out}") and view in line and "\n" not in line
    if suffix == ".dot":
        nodes, edges = parse_dot(out.read_text())
        assert len(nodes) == 20 and len(edges) == 24
    else:
        assert_format(out)


@pytest.mark.parametrize("args,code,message", [
    (["--view", "heat", "-o", "{d}/o.png"], 2, "no view 'heat'"),
    (["--view", "stages", "-o", "{d}/o.jpg"], 2, "suffix '.jpg'"),
    (["--view", "stages", "-o", "{d}/o.dot"], 2, ".dot is for the dag view"),
    (["--view", "stages", "-o", "{d}/o"], 2, "no suffix"),
    (["--view", "stages", "-o", "{d}/missing/o.png"], 2, "does not exist"),
    (["--view", "stages", "-o", "{d}"], 2, "directory"),
    (["--view", "stages", "--slice", "1,:", "-o", "{d}/o.png"], 2, "--slice"),
    (["--view", "dag", "--max-cells", "5", "-o", "{d}/o.dot"], 1, "--max-cells 5"),
    (["--view", "stages", "--target", "1,1", "-o", "{d}/o.png"], 2,
     "--target picks where the solution view starts; the stages view draws no solution"),
    (["--view", "solution", "--target", "9,9", "-o", "{d}/o.dot"], 2,
     "--target (9, 9): outside the table's shape"),
    (["--view", "solution", "--target", "1,1,1", "-o", "{d}/o.dot"], 2, "3 indices"),
    (["--view", "solution", "--max-cells", "5", "-o", "{d}/o.dot"], 2,
     "is drawn over its stages heat map: write it as .svg, .png or .pdf"),
    (["--view", "solution", "--slice", ":,:", "-o", "{d}/o.dot"], 2,
     "the solution view draws the whole table"),
])
def test_cli_bad_requests(args, code, message, write_rec, tmp_path, capsys):
    d = tmp_path / "out"
    d.mkdir()
    argv = ["render", write_rec(PATHS)] + [a.format(d=d) for a in args]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert list(d.iterdir()) == []  # nothing written, no temporary left behind


def test_cli_checks_before_tracing(write_rec, tmp_path, capsys):
    src = write_rec(BIG)
    assert main(["render", src, "--view", "dag", "-o", str(tmp_path / "o.svg")]) == 1
    err = capsys.readouterr().err
    assert "250,000 cells" in err and "--view stages" in err and "must not" not in err
    assert main(["render", src, "--view", "stages", "-o", str(tmp_path / "x" / "o.png")]) == 2


def test_cli_k_dimensional_tables(write_rec, tmp_path, capsys):
    src = write_rec(CUBE)
    assert main(["render", src, "--view", "stages", "-o", str(tmp_path / "o.png")]) == 0
    assert_format(tmp_path / "o.png")
    assert main(["render", src, "--view", "stages", "--slice", ":,:",
                 "-o", str(tmp_path / "o.png")]) == 2
    assert "--slice :,:,0" in capsys.readouterr().err
    assert main(["render", src, "--view", "regions", "-o", str(tmp_path / "o.png")]) == 1
    assert "regions are defined for 2-D tables" in capsys.readouterr().err
    assert main(["render", src, "--view", "stages", "--slice", ":,1,:",
                 "-o", str(tmp_path / "o.png")]) == 0
    assert_format(tmp_path / "o.png")
    assert main(["render", src, "--view", "dag", "-o", str(tmp_path / "o.dot")]) == 0
    nodes, edges = parse_dot((tmp_path / "o.dot").read_text())
    assert len(nodes) == 27 and len(edges) == 18


def test_cli_bad_recurrence_is_exit_1(write_rec, tmp_path, capsys):
    src = write_rec("""
        @recurrence(shape=(3, 3), dtype=np.int64)
        def cyc(M, i, j):
            return M[(i + 1) % 3, j]
    """)
    assert main(["render", src, "--view", "stages", "-o", str(tmp_path / "o.png")]) == 1
    assert "cyclic" in capsys.readouterr().err
    assert not (tmp_path / "o.png").exists()


def test_failed_write_leaves_nothing(monkeypatch, tmp_path):
    from matplotlib.figure import Figure

    def boom(self, *args, **kwargs):
        Path(args[0]).write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(Figure, "savefig", boom)
    with pytest.raises(OutputError, match=r"could not write .*o.png': disk full; nothing was"):
        render(analysis_of(lcs), "stages", tmp_path / "o.png")
    assert list(tmp_path.iterdir()) == []


def test_two_writers_of_one_file_never_share_a_temporary_file(tmp_path):
    from depgraph.views.files import atomic_write, write_text

    temporaries = []

    def outer(tmp: str) -> None:  # a second writer of the same path while this one writes
        temporaries.append(tmp)
        write_text(tmp_path / "report.md", "second")
        Path(tmp).write_text("first")

    atomic_write(tmp_path / "report.md", outer)
    assert (tmp_path / "report.md").read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]
    assert temporaries[0] != str(tmp_path / "report.md")


@pytest.mark.skipif(sys.platform == "win32" or (hasattr(__import__("os"), "geteuid")
                    and __import__("os").geteuid() == 0), reason="root can write anywhere")
def test_cli_unwritable_directory(write_rec, tmp_path, capsys):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        assert main(["render", write_rec(PATHS), "--view", "stages",
                     "-o", str(d / "o.png")]) == 2
        assert "not writable" in capsys.readouterr().err
    finally:
        d.chmod(0o700)
