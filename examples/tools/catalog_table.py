"""Generate ``docs/catalog.md``: every example analysed by depgraph against the thesis.

Run from the repository root::

    python examples/tools/catalog_table.py > docs/catalog.md

It loads every ``examples/*.py`` and ``examples/catalog/*.py`` family at one size,
runs ``depgraph.analyze`` and prints the regions its reads fall in (edges per region),
the pattern the thesis's table lists, the pattern depgraph selects, every matching
pattern and the schedule (the pattern, else a hyperplane, else the stages).  It also analyses a few other layouts of the same DPs, to show where the
pattern depends on how the table is laid out.  (This script lives in ``examples/tools/``
so that globs over ``examples/*.py`` and ``examples/catalog/*.py`` see recurrence files
only.)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from depgraph import analyze, load, recurrence  # noqa: E402

SIZE = 12
SMALL = {"min_spanning_tree": 6, "optimal_assignment": 6}  # tables of size V x 2^V


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"_catalog_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _reads(a) -> str:
    if a.regions is None:  # regions are defined for 2-D tables only
        return f"n/a ({a.recurrence.ndim}-D)"
    counts = a.classification.region_counts or {}
    return ", ".join(f"{r} ({counts[r]})" for r in a.regions) or "none"


def _schedule(a) -> str:
    """The schedule's kind: the pattern's code, the hyperplane's ``pi``, or stages."""
    s = a.schedule
    if s.kind == "pattern":
        return s.pattern
    if s.kind == "hyperplane":
        return f"hyperplane pi = {tuple(s.pi)}"
    return "stages"


def rows():
    files = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "examples" / "catalog").glob("*.py"))
    for path in files:
        mod = _module(path)
        n = SMALL.get(path.stem, SIZE)
        a = analyze(load(path, size=n))
        yield {
            "file": str(path.relative_to(ROOT)),
            "problem": mod.PROBLEM,
            "formulation": mod.FORMULATION,
            "size": n,
            "shape": "x".join(map(str, a.recurrence.shape)),
            "reads": _reads(a),
            "catalog": path.parent.name == "catalog",
            "thesis": mod.THESIS_PATTERN,
            "selected": a.pattern,
            "matching": "n/a" if a.patterns is None else ", ".join(a.patterns) or "none",
            "schedule": _schedule(a),
            "stages": a.stages.count,
            "steps": a.schedule.steps,
        }


def layouts():
    """Other layouts of three catalog DPs: same values, other reads, other pattern."""
    out = []

    ks = _module(ROOT / "examples" / "catalog" / "integer_knapsack.py")
    w, p, cap = ks.data(SIZE)

    @recurrence(shape=(len(w) + 1, cap + 1), dtype=np.int64, args=(w, p))
    def integer_knapsack_one_line(M, i, c, w, p):
        if i == 0:
            return 0
        if w[i - 1] > c:
            return M[i - 1, c]
        return max(M[i - 1, c], p[i - 1] + M[i, c - w[i - 1]])

    staged = analyze(ks.make_integer_knapsack(w, p, cap))
    one = analyze(integer_knapsack_one_line)
    assert np.array_equal(staged.table, one.table)
    out.append(("Integer knapsack", "one-line form `max(M[i-1,c], p_i + M[i,c-w_i])`",
                _reads(one), one.pattern, "RUD (stage-and-decision form, the catalog file)"))

    rp = _module(ROOT / "examples" / "catalog" / "replacement.py")
    T, c, s, P = rp.data(SIZE)

    @recurrence(shape=(T + 1, len(c)), dtype=np.int64, args=(c, s, P, T))
    def replacement_time_rows(M, t, a, c, s, P, T):
        if t == T:
            return -s[a]
        replace = P - s[a] + c[0] + M[t + 1, 1]
        if a + 1 < c.shape[0]:
            return min(c[a] + M[t + 1, a + 1], replace)
        return replace

    tr = analyze(replacement_time_rows)
    assert np.array_equal(tr.table.T, analyze(rp.make_replacement(T, c, s, P)).table)
    out.append(("Replacement", "transposed: rows = period, columns = age",
                _reads(tr), tr.pattern, "CRL (rows = age, columns = period, the catalog file)"))

    al = _module(ROOT / "examples" / "catalog" / "assembly_line_balancing.py")
    a_, t_, e_, x_ = al.data(SIZE)

    @recurrence(shape=(2, a_.shape[1]), dtype=np.int64, args=(a_, t_, x_))
    def assembly_lines_as_rows(M, l, j, a, t, x):
        if j == a.shape[1] - 1:
            return a[l, j] + x[l]
        return a[l, j] + min(M[l, j + 1], t[l, j] + M[1 - l, j + 1])

    lr = analyze(assembly_lines_as_rows)
    assert np.array_equal(lr.table.T, analyze(al.make_assembly_line_balancing(a_, t_, e_, x_)).table)
    out.append(("Assembly line", "transposed: rows = line, columns = station",
                _reads(lr), lr.pattern, "RDU (rows = station, columns = line, the catalog file)"))
    return out


HEADER = """# Catalog of example recurrences

Generated by `python examples/tools/catalog_table.py > docs/catalog.md` from actual
`depgraph.analyze` runs (family size {size}; {small} for the tables of size `V x 2^V`).
The thesis's table is section 4.2.3 ("Patrones en algunos algoritmos de programación
dinámica") of the seed thesis, which lists problems from Lew & Mauch, *Dynamic
Programming: A Computational Tool* (Springer, 2007); each file's docstring states its
formulation (rows, columns, recurrence, reference) and its data.

Columns: **reads** are the regions of the direct dependencies found by the trace, with
the number of distinct edges in each; **thesis** is the pattern in the thesis's table;
**selected** is the pattern depgraph picks (fewest steps, ties in canonical order);
**matching** lists every pattern whose regions hold all reads; **schedule** is how
depgraph fills the table in parallel steps: the selected pattern, else the hyperplane
`pi` with the fewest steps (cell `x` in step `pi . x`), else the stages; **stages** is
the minimal stage count (Algorithm 1) and **steps** the schedule's step count.  A dash
in **thesis** or **selected**: the problem is not in the thesis's table, or no pattern
applies.
"""


def main() -> None:
    table = list(rows())
    print(HEADER.format(size=SIZE, small=", ".join(f"{v} for `{k}`" for k, v in SMALL.items())))
    print("| file | problem | formulation | shape | reads | thesis | selected | matching | schedule "
          "| stages | steps |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in table:
        flag = "" if r["thesis"] is None or r["selected"] == r["thesis"] else " **(differs)**"
        print(f"| `{r['file']}` | {r['problem']} | `{r['formulation']}` | {r['shape']} | {r['reads']} "
              f"| {r['thesis'] or '—'} | {r['selected'] or '—'}{flag} | {r['matching']} "
              f"| {r['schedule']} | {r['stages']} | {r['steps']} |")
    thesis = [r for r in table if r["thesis"] is not None]
    beyond = [r for r in table if r["thesis"] is None]
    cases = sum(not r["catalog"] for r in thesis)
    differs = [r for r in thesis if r["selected"] != r["thesis"]]
    print()
    print(f"{len(table)} files: the thesis's {cases} case studies, {len(thesis) - cases} catalog "
          f"problems and {len(beyond)} recurrences outside the thesis's table; of the thesis's "
          f"{len(thesis)}, {len(thesis) - len(differs)} select the thesis's pattern, "
          f"{len(differs)} differ.")
    print()
    print("## Where the trace and the thesis disagree")
    print()
    if differs:
        for r in differs:
            print(f"- `{r['file']}`: thesis {r['thesis']}, depgraph selects {r['selected']} (reads {r['reads']}).")
    else:
        print("Nowhere, for the formulations in these files: every file's traced reads fall in the "
              "thesis's pattern and depgraph selects that pattern.  The next section shows that "
              "this depends on laying the table out the way the thesis's pattern implies.")
    print()
    print("## The pattern belongs to a layout, not to a problem")
    print()
    print("The same DP written another way reads other regions.  These layouts give the same "
          "values (checked when this page is generated) and another pattern:")
    print()
    print("| DP | other layout | its reads | its pattern | the catalog file |")
    print("|---|---|---|---|---|")
    for name, layout, reads, pattern, ours in layouts():
        print(f"| {name} | {layout} | {reads} | {pattern} | {ours} |")
    print(NOTES)
    print(BEYOND)
    for r in beyond:
        print(f"- `{r['file']}` ({r['problem']}, shape {r['shape']}): {r['schedule']}, "
              f"{r['steps']} steps against {r['stages']} minimal stages.")


NOTES = """
For the integer knapsack the thesis's RUD needs the stage-and-decision form (choose how
many copies of item `i`, reading only row `i - 1`); the common one-line textbook form
reads its own row (Left) and is NOSE.  The tests check that both give the same table.

## Other remarks

- **Several patterns match most problems.**  The RDU problems read row `i + 1` only; when
  those reads never go right (allotment, distribution, ILP, covering-as-knapsack,
  transportation, production) SONE matches too, and when they never go left (deadline
  scheduling, process scheduling, assignment) SENO matches too.  The RUD problems that read
  only UpLeft (reliability, covering, curve fitting) also match CLR and NOSE.  RDU or RUD
  is selected because it needs fewer steps (rows) than the diagonals, and than the columns
  whenever the table has no more rows than columns.
- **The thesis's CLR problems are one-dimensional.**  Fibonacci is a `1 x (n+1)` table
  whose reads are all Left: CLR, NOSE and SONE all take `n + 1` steps and the canonical
  order picks CLR.  NIM and shortest paths in a DAG get a second dimension here (the
  take-limit; the source vertex) whose rows are independent, so CLR wins on steps.
- **Exponential states.**  The minimum spanning tree (`V x 2^V`, rows = root, columns =
  vertex set, reads Right: CRL) and the assignment problem (`(n+1) x 2^n`, rows = person,
  columns = job set, reads DownRight: RDU) index a column by a set (a bitmask), so the
  column of a read is always to the right.  Keep their sizes small.
- **Degenerate sizes.**  At size 1 some families have a table that reads nothing (one
  cell, or one row of base cases): every pattern matches and RUD is selected (one row is
  one RUD step; a single column of base cases, as in an LCS with an empty string, is one
  CLR step and selects CLR).  The tests start those families at size 2 and check the
  degenerate cases separately.
- **The thesis's count.**  The table's text says 31 of Lew & Mauch's 47 problems fit a
  pattern, but it lists 32 names (4 case studies + 28 more); all 32 have a file here.
- **Where a problem's name leaves the formulation open** (optimal investment, optimal
  distribution, process scheduling, production, transportation), the file's docstring
  states the formulation chosen; each is a standard stage-by-stage DP of that problem
  with the stage on the rows.  Lew & Mauch's own formulations were not at hand, so these
  files follow the problem names in the thesis's table and standard textbook versions.
- **Checked answers.**  Besides comparing every table with a second implementation, the
  tests check the thesis's answers (LCS 4, matrix chain 180, `C(10,4) = 210`), Hillier &
  Lieberman's Las Vegas answer (20/27), and several optima against another algorithm or
  brute force (Kruskal for the MST, permutations for the assignment, the profit-greedy
  schedule for deadlines, enumeration for ILP, covering and two-processor scheduling,
  Cormen's forward FASTEST-WAY for the assembly line).
"""

BEYOND = """
## Beyond the eight patterns: hyperplanes

Three files are not in the thesis's table: recurrences no pattern schedules, each filled
by a hyperplane `pi` instead (cell `x` runs in step `pi . x`; every read is on an
earlier step), found from the reads' offsets in the source
(`patterns/hyperplane.py`).  The best walk with steps right and down-left
(`examples/skew.py`) reads Left and UpRight, which no pattern's regions hold together;
`pi = (2, 1)` puts both reads one step back.  Floyd-Warshall's `(n+1) x n x n` stack of
distance matrices and the LCS of three strings are 3-D, where regions and patterns are
not defined: one layer a step, `pi = (1, 0, 0)`, and the anti-diagonal planes
`i + j + k = t`, `pi = (1, 1, 1)`.  The hyperplane can take more steps than the minimal
stages (the LCS of three strings: its base cases are all in stage 0, not spread along
the planes), but needs no graph.
"""


if __name__ == "__main__":
    main()
