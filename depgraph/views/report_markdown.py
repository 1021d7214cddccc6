"""A report as Markdown (``report.md``): the verdict, the machine, the structure, what the
graph costs, the fills, the verdict size by size, skipped sizes and errors, the plots and
how it was measured.

Assumption: the report's rows are those of :func:`depgraph.views.report_measure.measure_row`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from depgraph.views.report_data import (
    ALL_SCHEDULES,
    BACKEND_ORDER,
    PLOTS,
    Report,
    bytes_text,
    schedules_of,
    seconds_text,
)
from depgraph.views.report_plots import measured_rows

__all__ = ["markdown"]


def _int(v: int | None) -> str:
    return "–" if v is None else f"{v:,}"


def _rate(v: float | None) -> str:
    if not v:
        return "–"
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= size:
            return f"{v / size:.1f} {unit}"
    return f"{v:.0f}"


def _table(head: Sequence[str], body: list[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return lines


def _clip(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters, ``|`` escaped for tables (the JSON keeps
    the whole message)."""
    one = " ".join(str(text).split()).replace("|", "\\|")
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _pi(row: dict[str, Any]) -> str:
    """The row's hyperplane ``pi`` as printed, ``–`` for none.

    Examples
    --------
    >>> _pi({"hyperplane": [2, 1]}), _pi({"hyperplane": None})
    ('(2, 1)', '–')
    """
    return str(tuple(row["hyperplane"])) if row.get("hyperplane") else "–"


def _schedule_name(row: dict[str, Any], schedule: str) -> str:
    """A schedule as a fill table names it: the hyperplane with its ``pi``."""
    return f"hyperplane pi = {_pi(row)}" if schedule == "hyperplane" else schedule


def _spread(e: dict[str, Any]) -> str:
    return f"{seconds_text(e['min_s'])}–{seconds_text(e['max_s'])}"


def markdown(rep: Report, plots: Sequence[str] = PLOTS) -> str:
    """The report as Markdown: verdict, machine, structure, overhead, fills, plots, method."""
    m = rep.machine
    rows = rep.rows
    ok_rows = measured_rows(rep)
    src = f" (`{rep.source}`)" if rep.source else ""
    out = [f"# What the graph costs: {rep.name}{src}", ""]
    out += [f"**Verdict.** {rep.sentence}", ""]
    out += [f"{'A family: one row per size' if rep.kind == 'family' else 'A fixed recurrence: one row'}; "
            f"times are medians of {rep.settings['repeat']} runs (a run over "
            f"{rep.settings['long_run_s']:g} s is timed once) with min–max; the number of runs "
            "is given with every time. Top-level fill times are on the "
            f"**{rep.primary}** backend ({rep.primary_why}); the sequential baseline is the "
            "one-core compiled fill.", ""]
    out += ["## Machine", ""]
    gpu = m["gpu"] if m["gpu"] else f"none — {m['gpu_why_none']}"
    out += [f"- CPU: {m['cpu']}, {m['cores']} cores ({m['cores_usable']} usable, "
            f"numba threads {m['numba_threads']}, threading layer {m['threading_layer'] or '–'})",
            f"- GPU: {gpu}",
            f"- Python {m['python']}, NumPy {m['numpy']}, numba {m['numba']}, numba-cuda "
            f"{m['numba_cuda'] or 'not installed'}, matplotlib {m['matplotlib']}, depgraph "
            f"{m['depgraph']}",
            f"- Platform: {m['platform']}",
            f"- Date: {m['date']}", ""]
    out += ["Backends:", ""]
    out += [f"- **{b}**: {why}" for b, why in rep.backends.items()]
    out += [""]
    for note in rep.notes:
        out += [f"> {note}", ""]

    out += ["## Structure", ""]
    # where no pattern fits, the hyperplane a fill follows instead, with its steps
    hyperplanes = any(r.get("hyperplane") for r in rows)
    body = []
    for r in rows:
        body.append([r["label"], _int(r["cells"]), _int(r["edges"]), _int(r["stages"]),
                     _int(r["max_stage_width"]), ", ".join(r["regions"] or []) or "–",
                     r["pattern"] or "none", _int(r["pattern_steps"])]
                    + ([_pi(r), _int(r.get("hyperplane_steps"))] if hyperplanes else []))
    out += _table(["size", "cells", "edges", "stages (minimal)", "widest stage", "regions",
                   "pattern", "pattern steps"]
                  + (["hyperplane pi", "hyperplane steps"] if hyperplanes else []), body)
    out += [""]

    out += ["## What the graph costs", "",
            "Trace (the cell function run in plain Python, recording its reads), CSR graph "
            "build and Algorithm 1 (minimal stages), each the median of the runs stated "
            "(spread min–max); classification of the regions is shown apart. The checked "
            "sweep is the compiled sequential fill with every read checked: it gives the "
            "pattern and the reference without a graph.", ""]
    body = []
    for r in rows:
        ov = r["overhead"]
        if r.get("skipped") or r.get("error"):
            body.append([r["label"]] + ["–"] * 9)
            continue
        if ov.get("trace_s") is None:
            body.append([r["label"], "not measured", "–", "–", "–", "–", "–",
                         bytes_text(r["table_bytes"]), "–", seconds_text(r.get("plan_s"))])
            continue
        body.append([
            r["label"],
            f"{seconds_text(ov['trace_s'])} ({seconds_text(ov['trace_spread_s'][0])}–{seconds_text(ov['trace_spread_s'][1])})",
            f"{seconds_text(ov['graph_s'])} ({seconds_text(ov['graph_spread_s'][0])}–{seconds_text(ov['graph_spread_s'][1])})",
            f"{seconds_text(ov['stages_s'])} ({seconds_text(ov['stages_spread_s'][0])}–{seconds_text(ov['stages_spread_s'][1])})",
            seconds_text(ov["classify_s"]), f"**{seconds_text(ov['total_s'])}**", str(ov["runs"]),
            f"{bytes_text(ov['graph_bytes'])} ({ov['graph_per_table']:.1f}× table, "
            f"{ov['bytes_per_edge']:.1f} B/edge)" if ov.get("bytes_per_edge") else bytes_text(ov["graph_bytes"]),
            bytes_text(r["table_bytes"]), seconds_text(r.get("plan_s")),
        ])
    out += _table(["size", "trace", "graph build", "stages (Alg. 1)", "classify",
                   "overhead (trace+graph+stages)", "runs", "graph memory", "table memory",
                   "checked sweep"], body)
    out += [""]
    for r in rows:
        if r["overhead"].get("skipped"):
            out += [f"- {r['label']}: graph not measured — {r['overhead']['skipped']}"]
    out += [""]

    out += ["## Fills", "",
            "Every fill was compared with the sequential reference before it was timed; the "
            "table's pages were touched before each timed run; compilation is shown apart and "
            "not in the times. GPU times are compute only, host→device and device→host copies "
            "apart.", ""]
    for b in BACKEND_ORDER:
        if b not in rep.backends:
            continue
        out += [f"### {b}", ""]
        if b == "cuda" and not any("sequential" in r["fill"].get("cuda", {}) or
                                   "pattern" in r["fill"].get("cuda", {}) for r in rows):
            out += [f"Not measured: {rep.backends[b]}.", ""]
            continue
        body = []
        for r in rows:
            fb = r["fill"].get(b)
            if fb is None:
                continue
            if "unavailable" in fb or "skipped" in fb:
                body.append([r["label"], "all", f"not run: {fb.get('unavailable') or fb.get('skipped')}"]
                            + ["–"] * (7 if b == "cuda" else 5))
                continue
            for s in schedules_of(r):
                e, name = fb.get(s, {}), _schedule_name(r, s)
                if "skipped" in e:
                    cells = [r["label"], name, f"n/a: {e['skipped']}"] + ["–"] * 5
                elif "error" in e:
                    cells = [r["label"], name, f"**error**: {_clip(e['error'])}"] + ["–"] * 5
                else:
                    note = " (one run: long)" if e.get("single_run") else ""
                    cells = [r["label"], name, seconds_text(e["median_s"]), _spread(e),
                             f"{e['runs']}{note}", _rate(e["cells_per_s"]), _int(e["steps"]),
                             "–" if b == "python" else seconds_text(e["compile_s"])]
                if b == "cuda":
                    cells += [seconds_text(e.get("h2d_s")), seconds_text(e.get("d2h_s"))] if "median_s" in e \
                        else ["–", "–"]
                body.append(cells)
        head = ["size", "schedule", "median", "min–max", "runs", "cells/s", "steps", "compile"]
        if b == "cuda":
            head += ["host→device", "device→host"]
        out += _table(head, body) + [""]

    out += ["## The verdict, size by size", "",
            f"{rep.verdict['definition'][:1].upper()}{rep.verdict['definition'][1:]}.", ""]
    body = []
    for e in rep.verdict["rows"]:
        def yn(v: bool | None) -> str:
            return "–" if v is None else ("yes" if v else "no")

        body.append([e["label"], seconds_text(e["overhead_s"]), seconds_text(e["stage_fill_s"]),
                     seconds_text(e["graph_path_s"]), seconds_text(e["sequential_s"]), seconds_text(e["pattern_s"]),
                     yn(e["graph_pays"]), yn(e["pattern_beats_graph"])]
                    + ([seconds_text(e.get("hyperplane_s")), yn(e.get("hyperplane_beats_graph"))]
                       if hyperplanes else []))
    out += _table(["size", "graph overhead", "stage fill", "graph + stage fill", "sequential",
                   "pattern", "graph pays?", "pattern beats graph?"]
                  + (["hyperplane", "hyperplane beats graph?"] if hyperplanes else []), body)
    out += ["", f"**{rep.sentence}**", ""]

    skipped = [r for r in rows if r.get("skipped")]
    failed = [r for r in rows if r.get("error")]
    errs = [(r, b, s, r["fill"][b][s]["error"]) for r in ok_rows for b in BACKEND_ORDER
            for s in ALL_SCHEDULES if isinstance(r["fill"].get(b), dict)
            and "error" in r["fill"][b].get(s, {})]
    notes = [(r, n) for r in rows for n in r.get("notes", [])]
    if skipped or failed or errs or notes:
        out += ["## Skipped sizes, errors and notes", ""]
        out += [f"- skipped: {r['skipped']}" for r in skipped]
        out += [f"- {r['label']}: the recurrence failed: {r['error']}" for r in failed]
        out += [f"- {r['label']}: {b} {s} failed: {_clip(msg, 600)}" for r, b, s, msg in errs]
        out += [f"- {r['label']}: {_clip(n, 600)}" for r, n in notes]
        out += [""]

    if plots:
        out += ["## Plots", ""]
        captions = {"time_vs_size.png": "Fill time against size, every executor, with the graph's cost",
                    "speedup.png": "Speed-up over the sequential fill",
                    "overhead.png": "What the graph costs: time split, against the fills, memory"}
        for p in plots:
            out += [f"![{captions.get(p, p)}]({p})", ""]

    out += ["## How this was measured", "",
            "- Overhead: `depgraph.analyze` run repeatedly (trace, CSR graph, Algorithm 1, "
            "classification timed apart); Algorithm 1's compiled kernel was loaded before the "
            "first row, so no row pays numba's import.",
            "- Fills: `depgraph.fill` on each backend with the plan made here: cpu (numba; "
            "sequential is one core in a lexicographic order, pattern, hyperplane and stages "
            "use every core), cuda (the kernel `depgraph run` takes: for light cells one launch chosen "
            "by the cost model, else a launch per step; table allocated on the device), "
            "python (the reference); each executor is "
            "run once and compared with the reference (the compiled checked sweep, or the "
            "trace), then timed.",
            "- Sizes whose table does not fit memory are skipped; sizes whose trace does not "
            "fit (or is over the trace cap) keep their pattern and sequential fills.",
            "- `report.json` holds every number here, including each run's time.", ""]
    if hyperplanes:
        out[-1:] = ["- Where no pattern fits, the hyperplane `pi` the reads allow is one more "
                    "schedule (`depgraph run --schedule hyperplane`: a parallel step per "
                    "hyperplane `pi . x = t`; a 2-D table whose reads are known in bounds is "
                    "sheared so the pattern kernels fill it, then gathered back, within the "
                    "time), timed like the others.", ""]
    return "\n".join(out)
