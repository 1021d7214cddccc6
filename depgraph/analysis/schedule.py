"""The schedule a recurrence's reads allow: a pattern, a hyperplane, or the stages.

SPEC section 4's selection rule picks a pattern for a 2-D table when one matches.  Where
none does (or the table is not 2-D), the hyperplane with the fewest steps
(:func:`patterns.hyperplane.find`) from the reads' offsets: those the source proves for
every size (:meth:`depgraph.frontend.ir.CellIR.read_offsets`, an axis whose index is not
``x + c`` unknown), else those the trace saw (exact at the traced size).  Where no
hyperplane is legal, the minimal stage sequence (Algorithm 1).

Assumption: traced offsets describe the traced size and data only; a fill at another
size plans again (:mod:`runtime.schedule.plan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.analysis.graph import DependencyGraph
from depgraph.frontend.ir import CellIR
from depgraph.frontend.source import SourceUnavailable
from patterns import BY_CODE
from patterns.hyperplane import Hyperplane, find

__all__ = ["Schedule", "schedule_of", "traced_offsets", "source_hyperplane"]


@dataclass(frozen=True)
class Schedule:
    """How a table can be filled in parallel steps.

    Attributes
    ----------
    kind : str
        ``"pattern"``, ``"hyperplane"`` or ``"stages"``.
    pi : tuple of int or None
        The linear schedule ``t(x) = pi . x`` (a pattern's own, or the hyperplane's);
        ``None`` for stages.
    steps : int or None
        Parallel steps (``None``: stages of a table not traced).
    basis : str
        What it rests on, in words.
    pattern : str or None
        The pattern's code, for ``kind == "pattern"``.
    """

    kind: str
    pi: tuple[int, ...] | None
    steps: int | None
    basis: str
    pattern: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``schedule`` field of ``analyze --json``.

        Examples
        --------
        >>> Schedule("hyperplane", (2, 1), 31, "the source").to_json()
        {'kind': 'hyperplane', 'pi': [2, 1], 'steps': 31}
        """
        return {"kind": self.kind, "pi": None if self.pi is None else list(self.pi),
                "steps": self.steps}

    def summary(self) -> str:
        """One line, as ``analyze`` prints it.

        Examples
        --------
        >>> Schedule("hyperplane", (2, 1), 31, "reads at constant offsets").summary()
        'hyperplane pi = (2, 1): 31 steps (reads at constant offsets)'
        """
        steps = "" if self.steps is None else f": {self.steps:,} steps"
        if self.kind == "pattern":
            return f"pattern {self.pattern}, pi = {tuple(self.pi or ())}{steps}"
        if self.kind == "hyperplane":
            return f"hyperplane pi = {tuple(self.pi or ())}{steps} ({self.basis})"
        return f"stages{steps} ({self.basis})"


def traced_offsets(graph: DependencyGraph) -> np.ndarray:
    """The distinct offsets ``y - x`` of the graph's edges, one row each.

    Examples
    --------
    >>> from depgraph.analysis.graph import from_edges
    >>> g = from_edges((2, 2), src=np.array([3, 3, 2]), dst=np.array([1, 2, 0]))
    >>> traced_offsets(g).tolist()
    [[-1, 0], [0, -1]]
    """
    src, dst = graph.edge_arrays()
    cells = graph.flat_cells()
    x = np.stack(np.unravel_index(cells[src], graph.shape), axis=1)
    y = np.stack(np.unravel_index(cells[dst], graph.shape), axis=1)
    if not len(x):
        return np.zeros((0, len(graph.shape)), dtype=np.int64)
    return np.unique((y - x).astype(np.int64), axis=0)


def source_hyperplane(ir: CellIR | None, shape: tuple[int, ...]
                      ) -> tuple[Hyperplane | None, str]:
    """The hyperplane the source's read offsets allow at every size, or ``None``, and
    why in words.

    Examples
    --------
    >>> from depgraph.frontend.ir import read_cell
    >>> def skew(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j + 1] + M[i, j - 1]
    >>> source_hyperplane(read_cell(skew, 2), (10, 12))
    (Hyperplane(pi=(2, 1)), 'reads at offsets (-1, 1), (0, -1) in the source')
    """
    if ir is None:
        return None, "no cell IR"
    try:
        offsets = ir.read_offsets()
    except SourceUnavailable as exc:
        return None, str(exc)
    shown = ", ".join(str(tuple("?" if x is None else x for x in d)).replace("'", "")
                      for d in offsets)
    found = find(offsets, shape)
    if found is None:
        return None, f"no hyperplane puts every read ({shown}) on an earlier step"
    return found, (f"reads at offsets {shown} in the source" if offsets else
                   "the cell reads no cell")


def schedule_of(shape: tuple[int, ...], pattern: str | None, ir: CellIR | None,
                graph: DependencyGraph | None, stage_count: int | None) -> Schedule:
    """The schedule of a table of ``shape`` (module docstring): its ``pattern`` when one
    was selected, else a hyperplane from the source's offsets, else from the traced
    ``graph``'s, else the stages (``stage_count`` of them, ``None`` when not traced).

    Examples
    --------
    >>> schedule_of((4, 5), "NOSE", None, None, 8).summary()
    'pattern NOSE, pi = (1, 1): 8 steps'
    """
    if pattern is not None:
        p = BY_CODE[pattern]
        return Schedule("pattern", p.pi, p.steps((shape[0], shape[1])), "regions", pattern)
    found, why = source_hyperplane(ir, shape)
    if found is not None:
        return Schedule("hyperplane", found.pi, found.steps(shape), why)
    if graph is not None:
        offsets = traced_offsets(graph)
        traced = find([tuple(int(x) for x in d) for d in offsets], shape)
        if traced is not None:
            return Schedule("hyperplane", traced.pi, traced.steps(shape),
                            f"the traced reads at this size ({why})")
        why = f"{why}; no hyperplane fits the traced reads"
    return Schedule("stages", None, stage_count, why)
