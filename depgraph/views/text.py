"""The commands' text output: what ``depgraph run`` (a fill, a score) and ``depgraph
analyze`` print without ``--json``, each from the command's JSON data (a dict), so the two
outputs say the same things.

Assumptions: the dicts hold the fields the commands' ``--json`` objects hold.
"""

from __future__ import annotations

from typing import Any

from depgraph.analysis.schedule import Schedule
from depgraph.memory import format_bytes

__all__ = ["format_run", "format_score", "format_analysis", "preview"]


def _head(d: dict[str, Any], what: str) -> list[str]:
    """The first lines of ``depgraph run``'s text: the recurrence, the backend, ``what``
    was done, and the fill's time."""
    rate = f"{d['cells_per_s']:,.0f} cells/s" if d["cells_per_s"] else "n/a"
    return [
        f"recurrence   {d['name']}  shape {tuple(d['shape'])}  dtype {d['dtype']}  ({d['cells']:,} cells)",
        f"backend      {d['backend']}",
        what,
        f"fill         {d['compute_s']:.4f} s compute ({rate}); compiling {d['compile_s']:.2f} s apart",
    ]


def _why(d: dict[str, Any]) -> list[str]:
    return [f"why          {note}" for note in d["notes"]] + (
        [f"verify       {d['verified']}"] if d["verified"] else [])


def format_score(d: dict[str, Any]) -> str:
    """The readable text of ``depgraph run --score``."""
    what = "the recurrence's answer" if d["answer"] else f"the last cell of {d['pattern']}"
    lines = _head(d, f"score        M{tuple(d['cell'])} = {d['value']}  ({what})")
    if d["line"] is not None:
        lines.append(f"{'last ' + d['line_kind']:<12} {d['line']} ({d['line_cells']:,} cells): "
                     f"{d['line_preview']}")
    lines.append(f"memory       {d['kept_cells']:,} cells kept at once, of {d['cells']:,}")
    if d.get("recovery"):
        r = d["recovery"]
        held = (f"tiles of {r['block_rows']:,} x {r['block_rows']:,} being filled"
                if d["backend"] == "cuda" else f"a block of {r['block_rows']:,} rows")
        lines[-1] += (f": {format_bytes(d['solution_memory_bytes'])} (checkpoints "
                      f"{format_bytes(r['checkpoint_bytes'])}, {held} "
                      f"{format_bytes(r['block_bytes'])})")
    if d["backend"] == "cuda" and not d.get("recovery"):
        lines.append(f"checks       edge cells on the CPU {d['check_s']:.4f} s; "
                     f"host->device {d['h2d_s']:.4f} s")
    lines += _time(d)
    return "\n".join(lines + _tail(d))


def _tail(d: dict[str, Any]) -> list[str]:
    """The last lines of ``depgraph run``'s text, a fill's or a score's: why, the
    solution and the file saved, each where there is one."""
    return (_why(d) + ([f"solution     {d['solution_summary']}"]
                       if d.get("solution_summary") else [])
            + ([f"saved        {d['output']}"] if d["output"] else []))


def _time(d: dict[str, Any]) -> list[str]:
    """The line of a run's phases (``--json``'s ``phases``), none without them."""
    p = d.get("phases")
    if not p:
        return []
    parts = [(k[:-2].replace("_", " "), v) for k, v in p.items()
             if k != "total_s" and v is not None]
    return [f"time         {p['total_s']:.2f} s in all: "
            + ", ".join(f"{name} {v:.3f}" for name, v in parts)]


def preview(line: Any, ends: int = 4) -> str:
    """The first and last values of a line, ``a, b, ..., y, z``."""
    values = [str(v) for v in line.tolist()]
    if len(values) > 2 * ends:
        values = values[:ends] + ["..."] + values[-ends:]
    return ", ".join(values)


def format_run(d: dict[str, Any]) -> str:
    """The readable text of ``depgraph run``."""
    pattern = f" {d['pattern']}" if d["pattern"] else (
        f" pi = {tuple(d['pi'])}" if d.get("pi") else "")
    lines = _head(d, f"schedule     {d['schedule']}{pattern}: {d['steps']:,} steps")
    if d["backend"] == "cuda":
        back = ("none: the table stays on the device (-o or --verify copies it back)"
                if d["on_device"] else f"{d['d2h_s']:.4f} s")
        lines.append(f"transfers    host->device {d['h2d_s']:.4f} s, device->host {back} "
                     "(apart from compute)")
    lines.append(f"planning     {d['plan_s']:.4f} s")
    lines += _time(d)
    if d["target"] is not None:
        lines.append(f"value        M{tuple(d['target'])} = {d['value']} ("
                     + ("the recurrence's answer)" if d.get("answer") else "the last cell filled)"))
    return "\n".join(lines + _tail(d))


def _source_reads(d: dict[str, Any]) -> str:
    """What the cell IR says of the reads: the subscripts of ``M`` in the source, and
    whether their offsets are constant (else the trace decides).

    Examples
    --------
    >>> _source_reads({"source_reads": [{"read": "M[i - 1, j]", "offset": [-1, 0]}],
    ...                "source_opaque": None})
    'reads M[i - 1, j], at constant offsets (-1, 0)'
    """
    reads = d["source_reads"]
    if reads is None:
        return f"not read: {d['source_opaque']}; the trace alone decides"
    texts = list(dict.fromkeys(r["read"] for r in reads)) or ["nothing"]
    offsets = list(dict.fromkeys(tuple(r["offset"]) for r in reads))
    if d["source_opaque"] is None and all(None not in o for o in offsets):
        return (f"reads {', '.join(texts)}, at constant offsets "
                + ", ".join(str(o) for o in offsets))
    if d["source_opaque"] is None and all(any(x is not None for x in o) for o in offsets):
        shown = ", ".join(str(tuple("?" if x is None else x for x in o)).replace("'", "")
                          for o in offsets)
        return (f"reads {', '.join(texts)}, at offsets {shown} (?: not a constant along "
                f"that axis)")
    why = f": {d['source_opaque']}" if d["source_opaque"] else ""
    return f"reads {', '.join(texts)}, not all at constant offsets{why}; the trace decides"


def _answer(d: dict[str, Any]) -> list[str]:
    """The ``answer`` line of ``depgraph analyze``: the cell the recurrence names as its
    answer (or the function that finds it in the filled table), none where it names none.

    Examples
    --------
    >>> _answer({"answer_cell": [0, 9], "answer_function": None, "target": None})
    ['answer       cell (0, 9), named by the recurrence (--target 0,9 keeps its solution-generated graph)']
    >>> _answer({"answer_cell": None, "answer_function": "best", "target": [3, 3]})
    ['answer       the cell best finds in the whole filled table (not traced whole here)']
    """
    cell, finder = d["answer_cell"], d["answer_function"]
    if cell is None and finder is None:
        return []
    if finder is None:
        graph = ("its solution-generated graph above" if d["target"] == cell else
                 f"--target {','.join(map(str, cell))} keeps its solution-generated graph")
        return [f"answer       cell {tuple(cell)}, named by the recurrence ({graph})"]
    if cell is None:
        return [f"answer       the cell {finder} finds in the whole filled table (not traced "
                "whole here)"]
    return [f"answer       cell {tuple(cell)}, where {finder} finds it in the filled table"]


def _format_certified(d: dict[str, Any]) -> str:
    """The readable text of ``depgraph analyze`` answered by a certificate alone
    (:func:`depgraph.certified_analysis`)."""
    pattern = (f"{d['pattern']}: {d['pattern_stages']:,} steps" if d["pattern"]
               else "none: no pattern fits")
    flat = [  # the regions and patterns of a 2-D table
        f"regions      {', '.join(d['regions']) or 'none (no reads)'} (proven for every shape)",
        f"patterns     {', '.join(d['patterns']) or 'none match'}",
        f"selected     {pattern}"] if d["regions"] is not None else []
    return "\n".join([
        f"recurrence   {d['name']}  shape {tuple(d['shape'])}  dtype {d['dtype']}",
        *_answer(d),
        f"cells        {d['cells']:,}, not traced: {d['not_traced']}",
        f"certificate  {_certificate_line(d)}",
        *flat,
        f"schedule     {_schedule_line(d)}",
        f"needs trace  {', '.join(d['needs_trace'])}: run at a size whose trace fits",
    ])


def _certificate_line(d: dict[str, Any]) -> str:
    """The ``certificate`` of an ``analyze`` object in words: what it proves (and of the
    hyperplane schedule, whether it puts every read on an earlier step), or why there is
    none.

    Examples
    --------
    >>> _certificate_line({"certificate": None, "certificate_why": "it may raise (line 3)"})
    'none: it may raise (line 3)'
    >>> _certificate_line({"certificate": {"summary": "proven for every shape: reads (k - 1, i) "
    ...                    "at (-1, 0), always in bounds", "hyperplane": {"pi": [1, 0],
    ...                    "proven": True, "why": None}}})
    'proven for every shape: reads (k - 1, i) at (-1, 0), always in bounds; pi = (1, 0) puts every read on an earlier step'
    """
    cert = d["certificate"]
    if cert is None:
        return f"none: {d['certificate_why']}"
    plane = cert.get("hyperplane")
    if plane is None:
        return cert["summary"]
    pi = tuple(plane["pi"])
    said = ("puts every read on an earlier step" if plane["proven"] else
            f"not proven ({plane['why']})")
    return f"{cert['summary']}; pi = {pi} {said}"


def _schedule_line(d: dict[str, Any]) -> str:
    """The ``schedule`` of an ``analyze`` object in words.

    Examples
    --------
    >>> _schedule_line({"schedule": {"kind": "hyperplane", "pi": [2, 1], "steps": 31},
    ...                 "schedule_why": "reads at offsets (-1, 1), (0, -1) in the source",
    ...                 "pattern": None})
    'hyperplane pi = (2, 1): 31 steps (reads at offsets (-1, 1), (0, -1) in the source)'
    """
    s = d["schedule"]
    pi = None if s["pi"] is None else tuple(s["pi"])
    return Schedule(s["kind"], pi, s["steps"], d["schedule_why"] or "", d["pattern"]).summary()


def format_analysis(d: dict[str, Any]) -> str:
    """The readable text of ``depgraph analyze``."""
    if d.get("needs_trace"):
        return _format_certified(d)
    t = d["timings"]
    lines = [
        f"recurrence   {d['name']}  shape {tuple(d['shape'])}  dtype {d['dtype']}",
    ]
    if d["target"] is not None:
        lines.append(f"target       {tuple(d['target'])}: solution-generated graph only "
                     f"({d['cells']:,} of {d['table_cells']:,} cells)")
    lines += _answer(d)
    lines += [
        f"cells        {d['cells']:,}",
        f"edges        {d['edges']:,} direct dependencies",
        f"base cases   {d['base_cases']:,}",
        f"stages       {d['stages']:,} (minimal, Algorithm 1); widest stage {d['max_stage_width']:,} cells",
        f"source       {_source_reads(d)}",
        f"certificate  {_certificate_line(d)}",
    ]
    if d["regions"] is None:
        lines.append(f"regions      n/a ({len(d['shape'])}-D table: patterns are for 2-D tables)")
    else:
        counts = d["region_counts"] or {}
        regs = ", ".join(f"{r} ({counts[r]:,})" for r in d["regions"]) or "none (no reads)"
        lines.append(f"regions      {regs}")
        lines.append(f"patterns     {', '.join(d['patterns']) or 'none match'}")
        if d["pattern"]:
            lines.append(f"selected     {d['pattern']}: {d['pattern_stages']:,} steps "
                         f"(minimal stages {d['stages']:,})")
        else:
            lines.append("selected     none: no pattern fits")
    lines.append(f"schedule     {_schedule_line(d)}")
    rate = d["trace_cells_per_s"]
    lines += [
        f"time         trace {t['trace_s']:.3f} s ({rate:,.0f} cells/s), graph {t['graph_s']:.3f} s, "
        f"stages {t['stages_s']:.3f} s, classify {t['classify_s']:.3f} s",
        f"memory       graph {format_bytes(d['graph_bytes'])} "
        f"({d['graph_bytes'] / max(d['edges'], 1):.1f} B/edge incl. pointers), "
        f"table {format_bytes(d['table_bytes'])}",
    ]
    return "\n".join(lines)
