"""The report's plots (matplotlib, Agg, imported when drawn).

- ``time_vs_size.png``: every executor's fill time against the table's cells, log-log,
  median with min-max bars, beside the graph's overhead (trace + graph + stages) and
  graph + stage fill;
- ``speedup.png``: speed-up of every executor, and of graph + stage fill, over the
  sequential fill;
- ``overhead.png``: where the graph's time goes (trace / graph / Algorithm 1), the
  overhead against the fill times, and graph bytes against table bytes.

A report with one row (a fixed recurrence) gets bar charts instead of lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from depgraph.views.files import atomic_write
from depgraph.views.report_data import (
    ALL_SCHEDULES,
    BACKEND_ORDER,
    Report,
    bytes_text,
    seconds_text,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["write_plots", "time_figure", "speedup_figure", "overhead_figure", "measured_rows"]

DPI = 130
COLOURS = {"sequential": "#4C72B0", "pattern": "#55A868", "hyperplane": "#937860",
           "stages": "#DD8452",
           "overhead": "#444444", "graph_path": "#C44E52",
           "trace": "#8172B3", "graph": "#64B5CD", "alg1": "#CCB974"}
STYLES = {"cpu": ("-", "o"), "cuda": ("--", "s"), "python": (":", "^")}


def _new_figure(figsize: tuple[float, float]) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def measured_rows(rep: Report) -> list[dict[str, Any]]:
    return [r for r in rep.rows if not r.get("skipped") and not r.get("error")]


def _series(rep: Report) -> list[dict[str, Any]]:
    """One series per measured executor: label, colour, style, points."""
    out = []
    rows = measured_rows(rep)
    for b in BACKEND_ORDER:
        for s in ALL_SCHEDULES:
            pts = []
            for r in rows:
                e = r["fill"].get(b, {}).get(s, {})
                if e.get("median_s"):
                    pts.append((r, e["median_s"], e["min_s"], e["max_s"]))
            if pts:
                ls, mk = STYLES[b]
                out.append({"label": f"{b} {s}", "backend": b, "schedule": s,
                            "colour": COLOURS[s], "ls": ls, "marker": mk, "points": pts})
    return out


def _marker_style(s: dict[str, Any]) -> dict[str, Any]:
    """Hollow, larger markers for the overhead, so graph + stage fill under it shows."""
    if s.get("hollow"):
        return {"ms": 7, "mfc": "none", "mew": 1.2, "zorder": 3}
    return {"ms": 4}


def _graph_series(rep: Report) -> list[dict[str, Any]]:
    rows = measured_rows(rep)
    ov = [(r, r["overhead"]["total_s"]) for r in rows if r["overhead"].get("total_s")]
    path = [(r, r["overhead"]["total_s"] + r["fill"]["stages_s"]) for r in rows
            if r["overhead"].get("total_s") and r["fill"].get("stages_s") is not None]
    out = []
    if ov:
        out.append({"label": "graph overhead (trace + graph + stages)", "colour": COLOURS["overhead"],
                    "ls": (0, (1, 1)), "marker": "D", "hollow": True,
                    "points": [(r, v, v, v) for r, v in ov]})
    if path:
        out.append({"label": f"graph + stage fill ({rep.primary})", "colour": COLOURS["graph_path"],
                    "ls": "-.", "marker": "X", "points": [(r, v, v, v) for r, v in path]})
    return out


def _title(rep: Report, what: str) -> str:
    runs = rep.settings.get("repeat")
    return f"{rep.name}: {what}" + (f"\nmedian of {runs} runs, bars min–max" if runs else "")


def _cells_axis(ax: Axes, rows: list[dict[str, Any]]) -> None:
    import matplotlib.ticker as mt

    ax.set_xscale("log")
    ax.set_xlabel("table cells")
    xs = sorted({r["cells"] for r in rows})
    lo, hi = xs[0], xs[-1]
    ax.set_xlim(lo / 1.6, hi * 1.6)
    ax.xaxis.set_major_formatter(mt.FuncFormatter(lambda v, _: _num(v)))
    top = ax.secondary_xaxis("top")
    top.set_xticks(xs)
    top.set_xticklabels([_short(r) for r in sorted(rows, key=lambda r: r["cells"])],
                        fontsize=7)
    top.tick_params(axis="x", which="minor", top=False, labeltop=False)


def _short(row: dict[str, Any]) -> str:
    return f"n={row['size']}" if row.get("size") is not None else row["label"]


def _faster(v: float) -> str:
    """A speed-up as words.

    Examples
    --------
    >>> _faster(12.5), _faster(0.02), _faster(1.0)
    ('12.5× faster', '50× slower', 'as fast')
    """
    if abs(v - 1.0) < 1e-9:
        return "as fast"
    if v > 1:
        return f"{v:,.3g}× faster"
    x = 1 / v
    return f"{x:,.0f}× slower" if x >= 1000 else f"{x:.3g}× slower"


def _log_limits(ax: Axes, values: Sequence[float], axis: str = "y", room: float = 4.0) -> None:
    """Log-axis limits spanning at least a decade (so a major tick is always labelled),
    with ``room`` (a factor) above the largest value."""
    import matplotlib.ticker as mt

    vals = [v for v in values if v and v > 0]
    if not vals:
        return
    lo, hi = min(vals) / 4, max(vals) * room
    getattr(ax, f"set_{axis}lim")(lo, hi)
    getattr(ax, f"{axis}axis").set_minor_formatter(mt.NullFormatter())


def _times(v: float) -> str:
    """A speed-up tick: ``0.01×``, ``100×``, and powers of ten beyond."""
    if v <= 0:
        return ""
    if 1e-3 <= v < 1e4:
        return f"{v:g}×"
    return f"$10^{{{round(math.log10(v))}}}$×"


def _num(v: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= size:
            x = v / size
            return f"{x:.0f}{unit}" if x >= 10 or x == int(x) else f"{x:.1f}{unit}"
    return f"{v:.0f}"


def _seconds_axis(ax: Axes, axis: str = "y") -> None:
    import matplotlib.ticker as mt

    fmt = mt.FuncFormatter(lambda v, _: seconds_text(v))
    getattr(ax, f"set_{axis}scale")("log")
    getattr(ax, f"{axis}axis").set_major_formatter(fmt)


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=9,
            transform=ax.transAxes)
    ax.set_axis_off()


def _bars(ax: Axes, series: list[dict[str, Any]], value: Any, axis_label: str,
          seconds: bool = True) -> None:
    """Horizontal bars, one per series, of a one-row report."""
    labels, vals, errs, colours = [], [], [], []
    for s in series:
        r, med, lo, hi = s["points"][0]
        v = value(s, med)
        if v is None:
            continue
        labels.append(s["label"])
        vals.append(v)
        scale = v / med if med else 1.0
        errs.append((max(v - lo * scale, 0), max(hi * scale - v, 0)))
        colours.append(s["colour"])
    if not vals:
        _empty(ax, "nothing measured")
        return
    y = list(range(len(vals)))[::-1]
    err = [[e[0] for e in errs], [e[1] for e in errs]]
    ax.barh(y, vals, color=colours, xerr=err, capsize=3, alpha=0.9)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    if seconds:
        _seconds_axis(ax, "x")
    else:
        ax.set_xscale("log")
    ax.set_xlabel(axis_label)
    for yi, v, (_, up) in zip(y, vals, errs):
        text = seconds_text(v) if seconds else _faster(v)
        ax.text((v + up) * 1.12, yi, text, va="center", fontsize=7)
    if not seconds:
        import matplotlib.ticker as mt

        ax.xaxis.set_major_formatter(mt.FuncFormatter(lambda v, _: _times(v)))
    lows = [v - e[0] for v, e in zip(vals, errs)] + ([1.0] if not seconds else [])
    highs = [v + e[1] for v, e in zip(vals, errs)] + ([1.0] if not seconds else [])
    _log_limits(ax, lows + highs, "x", room=40.0)


def time_figure(rep: Report) -> Figure:
    """Fill time per executor against size (log-log), with the graph's cost beside."""
    rows = measured_rows(rep)
    series = _series(rep) + _graph_series(rep)
    fig = _new_figure((7.8, 4.6))
    ax = fig.add_subplot()
    if not series:
        _empty(ax, "nothing was measured (see the report's errors and skips)")
        return fig
    if len(rows) == 1:
        _bars(ax, series, lambda s, med: med, "seconds (log)")
        ax.set_title(_title(rep, f"time of each fill at {rows[0]['label']}"), fontsize=10)
        return fig
    for s in series:
        xs = [p[0]["cells"] for p in s["points"]]
        ys = [p[1] for p in s["points"]]
        err = [[p[1] - p[2] for p in s["points"]], [p[3] - p[1] for p in s["points"]]]
        ax.errorbar(xs, ys, yerr=err, label=s["label"], color=s["colour"], ls=s["ls"],
                    marker=s["marker"], capsize=2, lw=1.4,
                    **_marker_style(s))
    _cells_axis(ax, rows)
    _seconds_axis(ax)
    _log_limits(ax, [v for s in series for p in s["points"] for v in p[1:]])
    ax.set_ylabel("seconds (log)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(_title(rep, "fill time against size"), fontsize=10)
    return fig


def speedup_figure(rep: Report) -> Figure:
    """Speed-up of every executor (and graph + stage fill) over the sequential fill."""
    rows = measured_rows(rep)
    base = {id(r): r["fill"].get("sequential_s") for r in rows}
    seq_b = next((r["fill"].get("sequential_backend") for r in rows
                  if r["fill"].get("sequential_backend")), None)
    series = [s for s in _series(rep) + _graph_series(rep)
              if not (s.get("schedule") == "sequential" and s.get("backend") == seq_b)]
    fig = _new_figure((7.8, 4.6))
    ax = fig.add_subplot()
    sp = []
    for s in series:
        pts = [(r, base[id(r)] / med, base[id(r)] / hi, base[id(r)] / lo)
               for r, med, lo, hi in s["points"] if base.get(id(r)) and med > 0 and lo > 0]
        if pts:
            sp.append({**s, "points": pts})
    if not sp:
        _empty(ax, "no sequential fill was measured, so no speed-up can be shown")
        return fig
    what = f"speed-up over the sequential fill ({seq_b}, one core)"
    if len(rows) == 1:
        _bars(ax, sp, lambda s, med: med, "speed-up (×, log)", seconds=False)
        ax.axvline(1.0, color="#888888", lw=1, ls="--")
        ax.set_title(_title(rep, what + f" at {rows[0]['label']}"), fontsize=10)
        return fig
    for s in sp:
        xs = [p[0]["cells"] for p in s["points"]]
        ys = [p[1] for p in s["points"]]
        err = [[p[1] - p[2] for p in s["points"]], [p[3] - p[1] for p in s["points"]]]
        ax.errorbar(xs, ys, yerr=err, label=s["label"], color=s["colour"], ls=s["ls"],
                    marker=s["marker"], capsize=2, lw=1.4,
                    **_marker_style(s))
    ax.axhline(1.0, color="#888888", lw=1, ls="--")
    ax.text(0.01, 1.0, " sequential = 1×", transform=ax.get_yaxis_transform(), fontsize=7,
            va="bottom", color="#555555")
    _cells_axis(ax, rows)
    ax.set_yscale("log")
    import matplotlib.ticker as mt

    ax.yaxis.set_major_formatter(mt.FuncFormatter(lambda v, _: _times(v)))
    _log_limits(ax, [1.0] + [v for s in sp for p in s["points"] for v in p[1:]])
    ax.set_ylabel("speed-up (×, log; above 1 is faster)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(_title(rep, what), fontsize=10)
    return fig


def overhead_figure(rep: Report) -> Figure:
    """Where the graph's time goes, overhead against fills, graph bytes against table bytes."""
    rows = [r for r in measured_rows(rep) if r["overhead"].get("total_s")]
    fig = _new_figure((11.5, 4.2))
    a1, a2, a3 = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1.5, 1]})
    if not rows:
        why = next((r["overhead"].get("skipped") for r in rep.rows
                    if r["overhead"].get("skipped")), None)
        for ax in (a1, a2, a3):
            _empty(ax, "the graph was not measured" + (f":\n{why}" if why else ""))
        return fig
    names = [_short(r) for r in rows]
    x = np.arange(len(rows))
    # (a) share of trace / graph build / Algorithm 1
    bottom = np.zeros(len(rows))
    totals = np.array([r["overhead"]["total_s"] for r in rows])
    for key, label, col in (("trace_s", "trace (Python)", COLOURS["trace"]),
                            ("graph_s", "graph build (CSR)", COLOURS["graph"]),
                            ("stages_s", "stages (Algorithm 1)", COLOURS["alg1"])):
        share = np.array([r["overhead"][key] for r in rows]) / totals * 100
        a1.bar(x, share, bottom=bottom, color=col, label=label, width=0.6)
        bottom += share
    for xi, t in zip(x, totals):
        a1.text(xi, 101, seconds_text(t), ha="center", va="bottom", fontsize=7)
    a1.set_ylim(0, 115)
    a1.set_yticks([0, 25, 50, 75, 100])
    a1.set_ylabel("share of the graph's overhead (%)")
    a1.set_xticks(x)
    a1.set_xticklabels(names, fontsize=7, rotation=30 if len(rows) > 4 else 0)
    a1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2,
              frameon=False)
    a1.set_title("where the graph's time goes\n(total above each bar)", fontsize=9)
    # (b) overhead against the fills (primary backend), log scale
    groups = [("graph overhead", COLOURS["overhead"], lambda r: r["overhead"]["total_s"]),
              (f"sequential ({rows[0]['fill'].get('sequential_backend') or '–'})",
               COLOURS["sequential"], lambda r: r["fill"].get("sequential_s")),
              (f"pattern ({rep.primary})", COLOURS["pattern"], lambda r: r["fill"].get("pattern_s")),
              (f"hyperplane ({rep.primary})", COLOURS["hyperplane"],
               lambda r: r["fill"].get("hyperplane_s")),
              (f"stage fill ({rep.primary})", COLOURS["stages"], lambda r: r["fill"].get("stages_s"))]
    groups = [g for g in groups if any(g[2](r) for r in rows)]  # no empty legend entries
    w = 0.8 / len(groups)
    for k, (label, col, get) in enumerate(groups):
        vals = [get(r) for r in rows]
        xs = [xi + (k - (len(groups) - 1) / 2) * w for xi, v in zip(x, vals) if v]
        a2.bar(xs, [v for v in vals if v], width=w, color=col, label=label)
    _seconds_axis(a2)
    _log_limits(a2, [g(r) for _, _, g in groups for r in rows], room=30.0)
    a2.set_xticks(x)
    a2.set_xticklabels(names, fontsize=7, rotation=30 if len(rows) > 4 else 0)
    a2.set_ylabel("seconds (log)")
    a2.grid(True, axis="y", which="major", alpha=0.3)
    a2.legend(fontsize=7, loc="upper left", framealpha=0.9, ncol=2)
    a2.set_title("the graph's overhead against the fills", fontsize=9)
    # (c) graph bytes against table bytes
    gb = [r["overhead"]["graph_bytes"] for r in rows]
    tb = [r["table_bytes"] for r in rows]
    a3.bar(x - 0.2, gb, width=0.4, color=COLOURS["overhead"], label="graph (CSR)")
    a3.bar(x + 0.2, tb, width=0.4, color=COLOURS["sequential"], label="table")
    for xi, g, t in zip(x, gb, tb):
        a3.text(xi - 0.2, g, f"{g / t:.0f}×" if t else "", ha="center", va="bottom", fontsize=7)
    a3.set_yscale("log")
    import matplotlib.ticker as mt

    a3.yaxis.set_major_formatter(mt.FuncFormatter(lambda v, _: bytes_text(v)))
    a3.set_xticks(x)
    a3.set_xticklabels(names, fontsize=7, rotation=30 if len(rows) > 4 else 0)
    a3.set_ylabel("bytes (log)")
    _log_limits(a3, gb + tb, room=20.0)
    a3.legend(fontsize=7, loc="upper left", framealpha=0.9, ncol=2)
    a3.set_title("memory: graph against table\n(graph/table above)", fontsize=9)
    fig.suptitle(f"{rep.name}: what the dependency graph costs (median of "
                 f"{rep.settings.get('repeat')} runs)", fontsize=10)
    return fig


def write_plots(rep: Report, out: Path) -> list[Path]:
    """Draw the three plots into ``out``; returns their paths."""
    paths = []
    for name, make in (("time_vs_size.png", time_figure), ("speedup.png", speedup_figure),
                       ("overhead.png", overhead_figure)):
        fig = make(rep)
        paths.append(atomic_write(out / name, lambda tmp: fig.savefig(tmp, format="png", dpi=DPI)))
    return paths
