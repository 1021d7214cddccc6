"""A report's data: its rows and verdict as plain JSON-ready values, the words and
units every view of a report shares, and the backends a report is asked to measure.

:class:`Report` is what :func:`depgraph.views.report.report` returns and what the plots
(:mod:`depgraph.views.report_plots`) and the Markdown
(:mod:`depgraph.views.report_markdown`) draw from.

Assumption: rows are the dictionaries :func:`depgraph.views.report_measure.measure_row`
makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from depgraph.errors import UsageError, setting
from depgraph.memory import format_bytes
from runtime.schedule.choose import resolve_backend

__all__ = ["Report", "BACKEND_ORDER", "SCHEDULES", "ALL_SCHEDULES", "PLOTS", "parse_backends",
           "schedules_of", "seconds_text", "bytes_text", "json_default"]

#: Backends in the order rows list them.
BACKEND_ORDER: tuple[str, ...] = ("python", "cpu", "cuda")
#: Schedules measured on each backend at every size.
SCHEDULES: tuple[str, ...] = ("sequential", "pattern", "stages")
#: Every schedule a row may hold, in the order rows list them: the hyperplane's only
#: where no pattern fits and a hyperplane does (:func:`schedules_of`).
ALL_SCHEDULES: tuple[str, ...] = ("sequential", "pattern", "hyperplane", "stages")
#: The PNG plots a report writes.
PLOTS: tuple[str, ...] = ("time_vs_size.png", "speedup.png", "overhead.png")


def parse_backends(text: str | Sequence[str] | None) -> list[str]:
    """The backends a report measures: ``all`` (python for small sizes, cpu, cuda when a
    real GPU is usable), ``auto`` (what ``depgraph run`` would use) or a comma list.

    Examples
    --------
    >>> parse_backends("cpu,python")
    ['python', 'cpu']
    >>> parse_backends("all")
    ['python', 'cpu', 'cuda']
    """
    if text is None:
        text = "all"
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text) if t.strip()]
    out: set[str] = set()
    for t in items:
        if t == "all":
            out.update(BACKEND_ORDER)
        elif t == "auto":
            out.add(resolve_backend("auto")[0])
        elif t in BACKEND_ORDER:
            out.add(t)
        else:
            raise UsageError(f"{setting('backend', text)}: unknown backend {t!r}; give all, "
                             f"auto or a comma list of {', '.join(BACKEND_ORDER)}")
    if not out:
        raise UsageError(f"{setting('backend')}: give all, auto or a comma list of python, "
                         "cpu, cuda")
    return [b for b in BACKEND_ORDER if b in out]


def schedules_of(row: dict[str, Any]) -> tuple[str, ...]:
    """The schedules measured on each backend at a row's size: :data:`SCHEDULES`, and
    the hyperplane where the row has one (its ``pi``; no pattern fits).

    Examples
    --------
    >>> schedules_of({"hyperplane": [2, 1]}), schedules_of({"hyperplane": None})
    (('sequential', 'pattern', 'hyperplane', 'stages'), ('sequential', 'pattern', 'stages'))
    """
    return tuple(s for s in ALL_SCHEDULES
                 if s in SCHEDULES or (s == "hyperplane" and row.get("hyperplane")))


def seconds_text(s: float | None) -> str:
    """Seconds, readably.

    Examples
    --------
    >>> seconds_text(0.0123), seconds_text(2.5), seconds_text(4.2e-5)
    ('12.3 ms', '2.50 s', '42.0 µs')
    """
    if s is None:
        return "–"
    a = abs(s)
    if a >= 1:
        return f"{s:.2f} s"
    if a >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.1f} µs"


def bytes_text(n: float | None) -> str:
    """A byte count for a person (:func:`depgraph.memory.format_bytes`), ``–`` for none.

    Examples
    --------
    >>> bytes_text(216_000), bytes_text(None)
    ('0.2 MB', '–')
    """
    return "–" if n is None else format_bytes(n)


@dataclass
class Report:
    """A finished report: rows (JSON-ready dicts), the verdict and the machine; ``files``,
    the names written (:func:`depgraph.views.report.write_report`)."""

    name: str
    kind: str  # "family" or "recurrence"
    source: str | None
    rows: list[dict[str, Any]]
    backends: dict[str, str]
    primary: str
    primary_why: str
    verdict: dict[str, Any]
    machine: dict[str, Any]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def sentence(self) -> str:
        return self.verdict["sentence"]

    def failed_rows(self) -> list[dict[str, Any]]:
        """Rows where the recurrence itself failed (invalid at that size)."""
        return [r for r in self.rows if r.get("error")]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "primary_backend": self.primary,
            "primary_why": self.primary_why,
            "backends": self.backends,
            "verdict": self.verdict,
            "machine": self.machine,
            "settings": self.settings,
            "notes": self.notes,
            "rows": self.rows,
        }


def json_default(o: Any) -> Any:
    """NumPy numbers and arrays as JSON (``json.dumps(default=...)``)."""
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
