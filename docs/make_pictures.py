"""Generate the pictures of docs/guide.md and the pattern pages docs/patterns/<CODE>.md.

Run from anywhere (Graphviz's ``dot`` is needed for the DAG pictures)::

    python docs/make_pictures.py

It writes

- ``docs/img/<case>_<view>.png`` for the thesis's four case studies (binomial, knapsack,
  LCS, matrix chain) and the four views (dag, stages, regions, pattern), through the same
  ``depgraph.render.render`` that ``depgraph render`` calls;
- ``docs/img/pattern_<CODE>.png`` and ``docs/img/regions_<CODE>.png``: one example that
  selects each of the eight patterns, with its fill order and its region glyph;
- ``docs/patterns/<CODE>.md``: the page of each pattern, with the numbers of that example;
- ``docs/img/<example>_pattern.png``: the hyperplane of the examples no pattern fits;
- ``docs/img/<example>_solution.png``: the solution view, over the DAG (LCS) and over the
  stages (Smith-Waterman, from its best cell).

Examples come from ``examples/`` and ``examples/catalog/`` (each module states
``EXPECTED_PATTERN``).  No file there selects SENO or NESO, so two small recurrences
are written inline below (LCS of suffixes and LCS of a prefix against a suffix); their
source is shown on their pages and they run through ``depgraph render`` like any file.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import depgraph  # noqa: E402
from depgraph import render  # noqa: E402
from depgraph.frontend.loader import load_module  # noqa: E402
from patterns import BY_CODE, PATTERNS  # noqa: E402

IMG = ROOT / "docs" / "img"
PAGES = ROOT / "docs" / "patterns"

#: The thesis's four case studies and the family size drawn (small, so cells are legible).
#: The knapsack family's tables are 10 n + 1 columns wide, too wide for a legible DAG, so
#: its pictures use the textbook instance KNAPSACK below (same cell function).
CASES = [("binomial", 10), ("knapsack", None), ("lcs", 8), ("matrix_chain", 10)]

KNAPSACK = '''\
import numpy as np
from depgraph import recurrence

w = np.array([2, 3, 4, 5])  # item weights
p = np.array([3, 4, 5, 6])  # item profits
W = 8                       # capacity


@recurrence(shape=(len(w) + 1, W + 1), dtype=np.int64, args=(w, p))
def knapsack(M, i, j, w, p):
    if i == 0 or j == 0:
        return 0
    wi = w[i - 1]
    if wi > j:
        return M[i - 1, j]
    return max(M[i - 1, j], p[i - 1] + M[i - 1, j - wi])
'''

VIEWS = ["dag", "stages", "regions", "pattern"]

#: Preferred example of each pattern (file, family size); the first that selects the
#: pattern is drawn, else any file whose EXPECTED_PATTERN names it, else the inline one.
PREFERRED = {
    "RUD": [("examples/catalog/optimal_covering.py", 12), ("examples/binomial.py", 10)],
    "RDU": [("examples/catalog/stagecoach.py", 10)],
    "CLR": [("examples/catalog/shortest_path_acyclic.py", 10)],
    "CRL": [("examples/catalog/replacement.py", 8)],
    "NOSE": [("examples/catalog/edit_distance.py", 8), ("examples/lcs.py", 8)],
    "SENO": [],
    "SONE": [("examples/catalog/optimal_bst.py", 10), ("examples/matrix_chain.py", 10)],
    "NESO": [],
}

INLINE = {
    "SENO": '''\
import numpy as np
from depgraph import recurrence

X = np.frombuffer(b"GATTACA", dtype=np.uint8)
Y = np.frombuffer(b"TACGAT", dtype=np.uint8)


@recurrence(shape=(len(X) + 1, len(Y) + 1), dtype=np.int32, args=(X, Y))
def lcs_suffix(M, i, j, X, Y):
    """LCS of the suffixes X[i:] and Y[j:]: reads Down, Right and DownRight."""
    if i == len(X) or j == len(Y):
        return 0
    if X[i] == Y[j]:
        return M[i + 1, j + 1] + 1
    return max(M[i + 1, j], M[i, j + 1])
''',
    "NESO": '''\
import numpy as np
from depgraph import recurrence

X = np.frombuffer(b"GATTACA", dtype=np.uint8)
Y = np.frombuffer(b"TACGAT", dtype=np.uint8)


@recurrence(shape=(len(X) + 1, len(Y) + 1), dtype=np.int32, args=(X, Y))
def lcs_prefix_suffix(M, i, j, X, Y):
    """LCS of the prefix X[:i] and the suffix Y[j:]: reads Up, Right and UpRight."""
    if i == 0 or j == len(Y):
        return 0
    if X[i - 1] == Y[j]:
        return M[i - 1, j + 1] + 1
    return max(M[i - 1, j], M[i, j + 1])
''',
}

#: What each pattern's page says beyond the numbers.
PROSE = {
    "RUD": ("Row 0 first, then row 1, and so on down to row n-1; all cells of one row are "
            "one parallel step.", "A cell may read any cell of an earlier row, anywhere in "
            "that row.", "The thesis's binomial coefficients and 0/1 knapsack; integer "
            "knapsack, optimal covering, reliability design, segmented curve fitting."),
    "RDU": ("The last row first, then upward to row 0; all cells of one row are one "
            "parallel step.", "A cell may read any cell of a later row.", "Stage-by-stage "
            "decision problems written from the last stage back: stagecoach, inventory, "
            "optimal allotment, production, transportation, deadline scheduling."),
    "CLR": ("Column 0 first, then rightward; all cells of one column are one parallel "
            "step.", "A cell may read any cell of an earlier column.", "Fibonacci (as a "
            "1 x n table), NIM, shortest paths in an acyclic graph."),
    "CRL": ("The last column first, then leftward; all cells of one column are one "
            "parallel step.", "A cell may read any cell of a later column.", "Replacement, "
            "minimum spanning tree over subsets."),
    "NOSE": ("Anti-diagonals i+j = 0, 1, 2, ... from the top-left (NW) corner to the "
             "bottom-right (SE) one; the cells of one anti-diagonal are one parallel step.",
             "A cell may read cells above it in its column, left of it in its row, and "
             "anywhere up-left.", "The thesis's LCS; edit distance, sequence alignment."),
    "SENO": ("Anti-diagonals i+j from the bottom-right (SE) corner back to the top-left "
             "(NW) one; the cells of one anti-diagonal are one parallel step.", "A cell may "
             "read cells below it, right of it, and anywhere down-right.", "Recurrences over "
             "suffixes, such as the LCS of X[i:] and Y[j:] (inline below)."),
    "SONE": ("Diagonals j-i from the bottom-left (SW) corner to the top-right (NE) one: "
             "the main diagonal, then the one above it, ...; the cells of one diagonal are "
             "one parallel step.", "A cell may read cells left of it in its row, below it "
             "in its column, and anywhere down-left.", "Interval DPs: the thesis's matrix "
             "chain; optimal binary search tree, alphabetic radix-code tree."),
    "NESO": ("Diagonals j-i from the top-right (NE) corner to the bottom-left (SW) one; the "
             "cells of one diagonal are one parallel step.", "A cell may read cells above "
             "it, right of it, and anywhere up-right.", "Recurrences over a prefix of one "
             "sequence and a suffix of another (inline below)."),
}

GLYPH = [["UpLeft", "Up", "UpRight"], ["Left", None, "Right"],
         ["DownLeft", "Down", "DownRight"]]


def _analyze(rec: depgraph.Recurrence) -> depgraph.Analysis:
    return depgraph.analyze(rec)


def _draw(a: depgraph.Analysis, view: str, name: str) -> Path:
    path = render(a, view, IMG / name)
    print(f"wrote {path.relative_to(ROOT)}")
    return path


def case_studies() -> None:
    for stem, size in CASES:
        if size is None:
            with tempfile.TemporaryDirectory() as d:
                src = Path(d) / "knapsack_small.py"
                src.write_text(KNAPSACK)
                rec = depgraph.load(src)
        else:
            rec = depgraph.load(ROOT / "examples" / f"{stem}.py", size=size)
        a = _analyze(rec)
        for view in VIEWS:
            _draw(a, view, f"{stem}_{view}.png")


def _example_files() -> list[Path]:
    return sorted((ROOT / "examples").glob("*.py")) + sorted(
        (ROOT / "examples" / "catalog").glob("*.py"))


def _expected(path: Path) -> str | None:
    try:
        return getattr(load_module(path), "EXPECTED_PATTERN", None)
    except depgraph.DepgraphError:
        return None


def _example(code: str, tmp: Path) -> tuple[str, str, int | None, depgraph.Analysis]:
    """(label, command path, size, analysis) of an example that selects ``code``."""
    candidates = [(ROOT / f, n) for f, n in PREFERRED[code]]
    candidates += [(p, 12) for p in _example_files() if _expected(p) == code]
    for path, size in candidates:
        if not path.is_file():
            continue
        try:
            rec = depgraph.load(path, size=size)
        except depgraph.DepgraphError:
            try:
                rec, size = depgraph.load(path), None
            except depgraph.DepgraphError:
                continue
        a = _analyze(rec)
        if a.pattern == code:
            return str(path.relative_to(ROOT)), str(path.relative_to(ROOT)), size, a
    src = tmp / f"{code.lower()}_example.py"
    src.write_text(INLINE[code])
    a = _analyze(depgraph.load(src))
    return "inline", f"{code.lower()}_example.py", None, a


def _glyph_table(code: str) -> str:
    allowed = BY_CODE[code].allowed
    rows = ["| | | |", "|:-:|:-:|:-:|"]
    for line in GLYPH:
        cells = []
        for r in line:
            if r is None:
                cells.append("**x**")
            else:
                cells.append(f"**{r}** ✓" if r in allowed else r)
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _steps_formula(code: str) -> str:
    pi, pj = BY_CODE[code].pi
    if pi and pj:
        return "n + m - 1 (one step per diagonal)"
    return "n (one step per row)" if pi else "m (one step per column)"


def pattern_pages() -> None:
    PAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for p in PATTERNS:
            code = p.code
            label, cmd_path, size, a = _example(code, tmp)
            _draw(a, "pattern", f"pattern_{code}.png")
            _draw(a, "regions", f"regions_{code}.png")
            _write_page(code, label, cmd_path, size, a)


def _write_page(code: str, label: str, cmd_path: str, size: int | None,
                a: depgraph.Analysis) -> None:
    p = BY_CODE[code]
    order, reads, problems = PROSE[code]
    rec, cls = a.recurrence, a.classification
    n, m = rec.shape
    sz = f" --size {size}" if size is not None else ""
    counts = ", ".join(f"{r} ({k:,})" for r, k in sorted((cls.region_counts or {}).items()))
    others = [c for c in (cls.patterns or ()) if c != code]
    pi = p.pi
    sched = {(1, 0): "i", (-1, 0): "(n-1) - i", (0, 1): "j", (0, -1): "(m-1) - j",
             (1, 1): "i + j", (-1, -1): "(n-1) + (m-1) - (i + j)",
             (-1, 1): "(n-1) - i + j", (1, -1): "i + (m-1) - j"}[pi]
    if label == "inline":
        where = (f"No example file selects {code}, so this page uses a small recurrence, "
                 f"written inline in `docs/make_pictures.py`; save it as `{cmd_path}` to "
                 "draw it yourself:\n\n```python\n" + INLINE[code] + "```\n")
    else:
        mod = load_module(ROOT / label)
        problem = getattr(mod, "PROBLEM", rec.name)
        formulation = getattr(mod, "FORMULATION", "")
        where = (f"Example: **{problem}**, `{label}`" + (f" at `--size {size}`" if size else "")
                 + (f":\n\n    {formulation}\n" if formulation else ".\n"))
    also = (f" It also matches {', '.join(others)}, which need more steps or come later "
            "in the canonical order." if others else " No other pattern matches it.")
    files = [f"`{f.relative_to(ROOT)}`" for f in _example_files() if _expected(f) == code]
    listed = (f"Files in `examples/` that select it: {', '.join(files)}."
              if files else f"No file in `examples/` selects {code} yet.")
    steps = cls.pattern_stages
    verdict = ("as many as the minimal stage count" if steps == a.stages.count
               else f"{steps - a.stages.count:,} more than the {a.stages.count:,} minimal stages")
    page = f"""# {code}: {p.order}

[Back to the guide](../guide.md#the-eight-patterns)

**Fill order.** {order} As a linear schedule (Lamport's hyperplane method) cell `(i, j)`
runs in step `{sched}`, that is `t(x) = π·x + c` with `π = {pi}`.

**Allowed regions.** {", ".join(r for row in GLYPH for r in row if r in p.allowed)}.
{reads} The cell itself is the **x** in the middle:

{_glyph_table(code)}

A recurrence matches {code} when every direct dependency of every cell falls in these
regions (SPEC section 4); the set is closed under addition, so the absolute dependencies
fall there too, and the cells of one step never depend on each other.

**Steps.** {_steps_formula(code)} on an `n x m` table: each step is one parallel launch.
Storage order that keeps a step contiguous in memory: **{p.storage}**.

**Where it shows up.** {problems} {listed}

## Example

{where}
`depgraph analyze` finds reads in {counts or "no region"}: pattern **{code}** is selected.{also}
On this {n} x {m} table {code} takes **{steps:,} steps**, {verdict}.

```sh
depgraph render {cmd_path}{sz} --view pattern -o pattern_{code}.png
depgraph render {cmd_path}{sz} --view regions -o regions_{code}.png
```

![{code} fill order on {rec.name} ({n}x{m})](../img/pattern_{code}.png)

Each cell shows the step in which {code} computes it; the arrow is the direction of the
sweep. Cells with the same number are independent and run together.

![Regions of {rec.name} against the eight patterns](../img/regions_{code}.png)

Left: where the reads of {rec.name} fall. Right: the eight patterns, green squares for the
regions each allows, ● for a region read and allowed, ✗ for one read but not allowed;
{code} is framed in orange as the selected pattern.
"""
    path = PAGES / f"{code}.md"
    path.write_text(page, encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


#: The examples no pattern fits (file, family size): their hyperplane's pattern view.
HYPERPLANES = [("skew", 10), ("lcs3", 8)]


def hyperplane_pictures() -> None:
    for stem, size in HYPERPLANES:
        a = _analyze(depgraph.load(ROOT / "examples" / f"{stem}.py", size=size))
        _draw(a, "pattern", f"{stem}_pattern.png")


#: The solution view's examples (file, family size): a small table over its DAG, a
#: larger one over its stages.
SOLUTIONS = [("lcs", 8), ("smith_waterman", 60)]


def solution_pictures() -> None:
    for stem, size in SOLUTIONS:
        a = _analyze(depgraph.load(ROOT / "examples" / f"{stem}.py", size=size))
        _draw(a, "solution", f"{stem}_solution.png")


def main() -> int:
    IMG.mkdir(parents=True, exist_ok=True)
    case_studies()
    pattern_pages()
    hyperplane_pictures()
    solution_pictures()
    return 0


if __name__ == "__main__":
    sys.exit(main())
