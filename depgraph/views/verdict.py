"""The thesis's question, answered from a report's rows: does the dependency graph pay for
itself, and from which size on does the pattern fill (where no pattern fits, the
hyperplane fill) beat graph + stage fill (:func:`compute_verdict`).

Assumption: rows are the JSON-ready dictionaries of
:func:`depgraph.views.report_measure.measure_row`, their top-level fill times set.
"""

from __future__ import annotations

from typing import Any

from depgraph.views.report_data import seconds_text

__all__ = ["compute_verdict"]


def _from_on(flags: list[bool]) -> int | None:
    """The first index from which every flag is true (``None`` if the last is false).

    Examples
    --------
    >>> _from_on([False, True, True]), _from_on([True, False]), _from_on([True, True])
    (1, None, 0)
    """
    k = len(flags)
    while k > 0 and flags[k - 1]:
        k -= 1
    return None if k == len(flags) else k


def compute_verdict(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The thesis's question, answered from a report's rows (their JSON form).

    For each row with the graph measured: ``overhead_s`` = trace + graph + stages
    (Algorithm 1); ``graph_path_s`` = ``overhead_s`` + the stage fill.  The graph *pays for
    itself* when ``graph_path_s`` < the sequential fill, i.e. when the time the stage
    schedule saves over the sequential fill exceeds what building it cost.  The pattern
    fill *beats the graph* when ``pattern_s`` < ``graph_path_s``, and where no pattern
    fits, the hyperplane fill when ``hyperplane_s`` < ``graph_path_s``; "from which size
    on" is the smallest measured size from which it does at every larger measured size.
    Fill times are the rows' top-level ones (``fill.sequential_s``, ``fill.pattern_s``,
    ``fill.hyperplane_s``, ``fill.stages_s``).
    """
    per: list[dict[str, Any]] = []
    for r in rows:
        ov, f = r["overhead"], r["fill"]
        entry: dict[str, Any] = {"label": r.get("short", r["label"]), "size": r["size"],
                                 "cells": r["cells"],
                                 "pattern": r["pattern"], "overhead_s": None,
                                 "stage_fill_s": f.get("stages_s"),
                                 "sequential_s": f.get("sequential_s"),
                                 "pattern_s": f.get("pattern_s"),
                                 "hyperplane": r.get("hyperplane"),
                                 "hyperplane_s": f.get("hyperplane_s"), "graph_path_s": None,
                                 "saved_s": None, "graph_pays": None,
                                 "pattern_beats_graph": None, "hyperplane_beats_graph": None}
        if r.get("skipped") or r.get("error") or ov.get("trace_s") is None:
            per.append(entry)
            continue
        overhead = ov["trace_s"] + ov["graph_s"] + ov["stages_s"]
        entry["overhead_s"] = overhead
        if f.get("stages_s") is not None:
            path = overhead + f["stages_s"]
            entry["graph_path_s"] = path
            if f.get("sequential_s") is not None:
                entry["saved_s"] = f["sequential_s"] - f["stages_s"]
                entry["graph_pays"] = path < f["sequential_s"]
            for schedule in ("pattern", "hyperplane"):
                if f.get(f"{schedule}_s") is not None:
                    entry[f"{schedule}_beats_graph"] = f[f"{schedule}_s"] < path
        per.append(entry)

    pays = [e for e in per if e["graph_pays"] is not None]
    measured = [r for r in rows if not r.get("skipped") and not r.get("error")]
    has_pattern = any(r["pattern"] for r in measured)
    if not measured:
        return _verdict(f"For {name}, nothing could be measured ({_why_undecided(rows)}).",
                        per, None, None, None)
    # part one: does the graph pay for itself (against the sequential fill)
    pays_from = None
    if not pays:
        part1 = f"whether the graph pays for itself could not be measured ({_why_undecided(rows)})"
    else:
        last = pays[-1]
        saved = last["saved_s"]
        at = f" at {last['label']}" if len(pays) > 1 else ""
        cost = f"tracing, building and staging it costs {seconds_text(last['overhead_s'])}{at}"
        if saved < 0:
            gain = f"the stage fill is {seconds_text(-saved)} slower than the sequential fill"
        elif saved < last["overhead_s"]:
            gain = f"the stage fill saves only {seconds_text(saved)} over the sequential fill"
        else:
            gain = f"the stage fill saves {seconds_text(saved)} over the sequential fill"
        flags = [e["graph_pays"] for e in pays]
        k = _from_on(flags)
        pays_from = None if k is None else pays[k]["label"]
        if len(pays) == 1:
            where = f"at {last['label']}"
        elif not any(flags):
            where = "at any size measured"
        elif all(flags):
            where = "at every size measured"
        elif k is not None:
            where = f"from {pays_from} on"
        else:
            where = "only at " + ", ".join(e["label"] for e in pays if e["graph_pays"])
        if any(flags):
            part1 = f"the graph pays for itself {where}: {cost} and {gain}"
        else:
            part1 = f"the graph does not pay for itself {where}: {cost}, while {gain}"
    # part two: from which size on does the pattern (else the hyperplane) fill beat
    # graph + stage fill
    wins_from = hyperplane_from = None
    no_pattern = (f"patterns are for 2-D tables and this one is {len(measured[0]['shape'])}-D"
                  if all(len(r["shape"]) != 2 for r in measured) else "no pattern fits")
    pis = {tuple(r["hyperplane"]) for r in measured if r.get("hyperplane")}
    if has_pattern:
        pat = next(r["pattern"] for r in rows if r["pattern"])
        part2, wins_from = _beats(per, "pattern", f"the {pat} pattern fill", rows)
    elif pis:
        what = f"the hyperplane pi = {pis.pop()} fill" if len(pis) == 1 else "the hyperplane fill"
        beats, hyperplane_from = _beats(per, "hyperplane", what, rows)
        part2 = f"{no_pattern}; {beats}"
    else:
        part2 = f"{no_pattern}, so the graph's stage schedule is the only parallel fill"
    return _verdict(f"For {name}, {part1}; {part2}.", per, pays_from, wins_from,
                    hyperplane_from)


def _beats(per: list[dict[str, Any]], schedule: str, what: str,
           rows: list[dict[str, Any]]) -> tuple[str, str | None]:
    """Whether, and from which size on, the fill of ``schedule`` (``"pattern"`` or
    ``"hyperplane"``; ``what`` names it) beats graph + stage fill, in words, and that
    size's label (``None`` when it does not at the largest size)."""
    beats = [e for e in per if e[f"{schedule}_beats_graph"] is not None]
    if not beats:
        return (f"{what} could not be compared with graph + stage fill ("
                + _why_undecided(rows) + ")"), None
    flags = [e[f"{schedule}_beats_graph"] for e in beats]
    k = _from_on(flags)
    if k is None:
        e = beats[-1]
        where = "at the largest size measured" if len(beats) > 1 else f"at {e['label']}"
        there = f" at {e['label']}" if len(beats) > 1 else ""
        return (f"{what} does not beat graph + stage fill {where} "
                f"({seconds_text(e[f'{schedule}_s'])} against "
                f"{seconds_text(e['graph_path_s'])}{there})"), None
    e = beats[k]
    wins_from = e["label"]
    nums = f"{seconds_text(e[f'{schedule}_s'])} against {seconds_text(e['graph_path_s'])}"
    if len(beats) == 1:
        return f"{what} beats graph + stage fill at {wins_from} ({nums})", wins_from
    if k == 0:
        return (f"{what} beats graph + stage fill at every size measured, from {wins_from} "
                f"on ({nums} there)"), wins_from
    return f"{what} beats graph + stage fill from {wins_from} on ({nums} there)", wins_from


def _verdict(sentence: str, per: list[dict[str, Any]], pays_from: str | None,
             wins_from: str | None, hyperplane_from: str | None) -> dict[str, Any]:
    decided = [e["graph_pays"] for e in per if e["graph_pays"] is not None]
    return {
        "sentence": sentence,
        "graph_pays": [e["graph_pays"] for e in per],
        "graph_pays_from": pays_from,
        "graph_pays_anywhere": any(decided) if decided else None,
        "pattern_beats_graph": [e["pattern_beats_graph"] for e in per],
        "pattern_wins_from": wins_from,
        "hyperplane_beats_graph": [e["hyperplane_beats_graph"] for e in per],
        "hyperplane_wins_from": hyperplane_from,
        "rows": per,
        "definition": ("overhead = trace_s + graph_s + stages_s (medians); graph path = "
                       "overhead + fill.stages_s; the graph pays when graph path < "
                       "fill.sequential_s; the pattern beats the graph when fill.pattern_s < "
                       "graph path (where no pattern fits, the hyperplane when "
                       "fill.hyperplane_s < graph path); 'from X on' = the smallest size "
                       "from which it holds at every larger size measured"),
    }


def _why_undecided(rows: list[dict[str, Any]]) -> str:
    reasons = []
    for r in rows:
        if r.get("skipped"):
            reasons.append(f"{r['label']} skipped")
        elif r.get("error"):
            reasons.append(f"{r['label']} failed")
        elif r["overhead"].get("skipped"):
            reasons.append(f"{r['label']}: graph not measured")
        elif r["fill"].get("stages_s") is None:
            reasons.append(f"{r['label']}: no stage fill time")
        elif r["fill"].get("sequential_s") is None:
            reasons.append(f"{r['label']}: no sequential fill time")
    return "; ".join(reasons) or "no size measured"
