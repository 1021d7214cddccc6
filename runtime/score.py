"""Score-only fills: the value of the last cell a diagonal pattern fills, keeping only the
cells still to be read, so a table far too large to hold (a 10⁶ × 10⁶ LCS) is scored in
O(n) memory.

Assumptions: the recurrence is 2-D and every read of ``M`` is at a constant offset
(:func:`runtime.source.constant_offsets`), so the reads' regions, and a diagonal pattern
that allows them, are known from the source without tracing the table.  The fill walks
the pattern's NOSE frame (:data:`patterns.DIAGONAL_FLIPS`) row by row and keeps the last
``K`` rows, ``K - 1`` being the farthest read upwards (CPU and ``python`` backends), or
the last anti-diagonals (:func:`runtime.cuda.score_fill`, GPU).  Reads are checked on the
CPU: every read on the CPU backends; on the GPU, the cells within the farthest read of
the frame's first rows and columns (the only cells whose constant offsets can leave the
table) are filled first on the CPU with checked reads, so an out-of-bounds read is
reported, naming the cell and the read, as in every other fill.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from depgraph.api import Recurrence
from depgraph.errors import NoPatternError, OutOfBoundsError, RecurrenceError
from patterns import BY_CODE, DIAGONAL_FLIPS, REGIONS, matching, region_codes
from runtime.cache import CACHE, arg_tail, compile_source
from runtime.source import SourceUnavailable, constant_offsets, function_namespace, rewrite_reads

__all__ = ["ScoreResult", "score_pattern", "score", "verify_score"]


@dataclass(frozen=True)
class ScoreResult:
    """A score-only fill: the value of ``cell``, the last cell ``pattern`` fills.

    ``kept`` is the number of cells the fill held at once; times in seconds (``check_s``:
    the CPU check of the edge cells before a GPU fill).
    """

    value: Any
    cell: tuple[int, int]
    pattern: str
    backend: str
    kept: int
    compute_s: float
    compile_s: float
    h2d_s: float = 0.0
    check_s: float = 0.0
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        value = self.value.item() if isinstance(self.value, np.generic) else self.value
        return {"value": value, "cell": list(self.cell), "pattern": self.pattern,
                "backend": self.backend, "kept_cells": self.kept,
                "compute_s": self.compute_s, "compile_s": self.compile_s,
                "h2d_s": self.h2d_s, "check_s": self.check_s, "notes": list(self.notes)}


def score_pattern(rec: Recurrence) -> tuple[str, list[tuple[int, int]]]:
    """The diagonal pattern a score-only fill walks, and the reads' constant offsets.

    ``NoPatternError`` when the recurrence is not 2-D, its reads are not at constant
    offsets, or no diagonal pattern allows them.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> score_pattern(paths)
    ('NOSE', [(-1, 0), (0, -1)])
    """
    if rec.ndim != 2:
        raise NoPatternError(f"a score-only fill takes 2-D tables, not {rec.ndim}-D")
    try:
        offsets = constant_offsets(rec.func, 2)
    except SourceUnavailable as exc:
        raise NoPatternError(f"a score-only fill needs every read of M at a constant offset "
                             f"(like M[i - 1, j - 1]): {exc}") from None
    di, dj = (np.array([o[k] for o in offsets], dtype=np.int64) for k in (0, 1))
    regions = {REGIONS[c] for c in region_codes(di, dj)}
    diagonal = [c for c in matching(regions) if c in DIAGONAL_FLIPS]
    if not diagonal:
        raise NoPatternError(f"no diagonal pattern allows the reads ({', '.join(sorted(regions))}), "
                             "so no score-only fill")
    return diagonal[0], offsets


def _frame(code: str, offsets: list[tuple[int, int]]) -> tuple[int, int]:
    """Rows and columns a frame cell reads back at most: ``(K - 1, Kc)``."""
    rows, cols = DIAGONAL_FLIPS[code]
    up = max((di if rows else -di for di, _ in offsets), default=0)
    left = max((dj if cols else -dj for _, dj in offsets), default=0)
    return up, left


_RING = """
def ring(B, ck, u0, u1, v1, n, m{args}):
    K = B.shape[0]
    for u in range(u0, u1):
        i = {i}
        for v in range(v1):
            j = {j}
            B[i % K, j] = cell(B, i, j{args}, ck)
"""


def _ring_kernel(rec: Recurrence, code: str) -> Callable[[bool], Any]:
    """The CPU ring sweep of ``code``'s frame with checked reads: rows ``u0 .. u1 - 1``,
    each its first ``v1`` columns; table row ``i`` lives in ring row ``i % K``; the first
    out-of-bounds read is kept in ``ck[2:7]`` (flag, cell, read), ``ck[0]`` the rows."""
    from runtime import cpu

    def build_cell() -> Any:
        numba = cpu._numba()

        @numba.njit(inline="always")
        def read(B, ck, x0, x1, a, b):  # pragma: no cover - compiled
            if a < 0 or a >= ck[0] or b < 0 or b >= B.shape[1]:
                ck[2] = 1
                ck[3] = x0
                ck[4] = x1
                ck[5] = a
                ck[6] = b
                return B[0, 0]
            return B[a % B.shape[0], b]

        ns = function_namespace(rec.func)
        ns["_dg_read"] = read
        src = rewrite_reads(rec.func, 2, "_dg_read", "_dg_cell")
        return cpu._jit(compile_source(src, "_dg_cell", ns), inline="always")

    rows, cols = DIAGONAL_FLIPS[code]
    cell = CACHE.get(rec.func, ("cpu", "ring-cell"), build_cell)
    src = _RING.format(args=arg_tail(len(rec.args)), i="n - 1 - u" if rows else "u",
                       j="m - 1 - v" if cols else "v")
    return cpu._kernel(rec, f"ring-{code}", src, "ring", cell)


def _raise_out_of_bounds(ck: np.ndarray, shape: tuple[int, int]) -> None:
    if ck[2]:
        raise OutOfBoundsError((int(ck[3]), int(ck[4])), (int(ck[5]), int(ck[6])), shape)


class _Ring:
    """``M`` for the ``python`` backend: the last ``K`` rows, reads checked."""

    def __init__(self, rec: Recurrence, K: int) -> None:
        self.buf = np.zeros((K, rec.shape[1]), dtype=rec.dtype)
        self.shape, self.cell = rec.shape, (0, 0)

    def __getitem__(self, key: tuple[int, int]) -> Any:
        a, b = int(key[0]), int(key[1])
        if not (0 <= a < self.shape[0] and 0 <= b < self.shape[1]):
            raise OutOfBoundsError(self.cell, (a, b), self.shape)
        return self.buf[a % len(self.buf), b]


def _python_score(rec: Recurrence, code: str, K: int,
                  progress: Callable[[int], None] | None) -> tuple[Any, float]:
    rows, cols = DIAGONAL_FLIPS[code]
    n, m = rec.shape
    ring = _Ring(rec, K)
    t0 = time.perf_counter()
    for u in range(n):
        i = n - 1 - u if rows else u
        for v in range(m):
            j = m - 1 - v if cols else v
            ring.cell = (i, j)
            try:
                ring.buf[i % K, j] = rec.func(ring, i, j, *rec.args)
            except RecurrenceError:
                raise
            except Exception as exc:
                raise RecurrenceError(f"cell {(i, j)} raised {type(exc).__name__}: {exc}") from None
        if progress:
            progress((u + 1) * m)
    last = (0 if rows else n - 1, 0 if cols else m - 1)
    return ring.buf[last[0] % K, last[1]], time.perf_counter() - t0


def score(rec: Recurrence, backend: str = "auto",
          progress: Callable[[int], None] | None = None) -> ScoreResult:
    """The value of the last cell of ``rec``'s diagonal pattern (see the module
    docstring), filled on ``backend`` (``auto``, ``cuda``, ``cpu`` or ``python``);
    ``progress`` is called with the cells done so far (CPU backends).

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 5), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> r = score(paths, backend="cpu")
    >>> r.cell, int(r.value), r.pattern, r.kept
    ((3, 4), 35, 'NOSE', 10)
    """
    from runtime.fill import resolve_backend

    code, offsets = score_pattern(rec)
    backend, why = resolve_backend(backend)
    up, left = _frame(code, offsets)
    K = up + 1
    n, m = rec.shape
    rows, cols = DIAGONAL_FLIPS[code]
    last = (0 if rows else n - 1, 0 if cols else m - 1)
    notes = [why, f"reads at constant offsets allow {code}"]
    if backend != "cuda":
        notes.append(f"the last {K} rows kept")
    if backend == "python":
        value, run_s = _python_score(rec, code, K, progress)
        return ScoreResult(value, last, code, backend, K * m, run_s, 0.0, notes=tuple(notes))
    from runtime import cpu

    kern = _ring_kernel(rec, code)
    B = np.zeros((K, m), dtype=rec.dtype)
    ck = np.zeros(7, dtype=np.int64)
    ck[0] = n
    if backend == "cpu":
        notes.append("one core: the sweep keeps rows in order")
        chunk = max(1, n // 100)
        compile_s = run_s = 0.0
        for u0 in range(0, n, chunk):
            t = cpu._call(kern, B, ck, u0, min(n, u0 + chunk), m, n, m, *rec.args)
            compile_s, run_s = compile_s + t.compile_s, run_s + t.run_s
            _raise_out_of_bounds(ck, rec.shape)
            if progress:
                progress(min(n, u0 + chunk) * m)
        value = B[last[0] % K, last[1]]
        return ScoreResult(value, last, code, backend, K * m, run_s, compile_s,
                           notes=tuple(notes))
    # the GPU: the edge cells checked on the CPU first (the first K rows, then the first
    # `left` columns of every row: reads go up and left, so these cells read only these)
    check_s = cpu._call(kern, B, ck, 0, min(n, K), m, n, m, *rec.args).run_s
    if left:
        check_s += cpu._call(kern, B, ck, min(n, K), n, min(m, left), n, m, *rec.args).run_s
    _raise_out_of_bounds(ck, rec.shape)
    from runtime import cuda

    res = cuda.score_fill(rec, BY_CODE[code].index)
    notes += [f"the last {res.window} anti-diagonals kept",
              f"edge cells checked on the CPU first ({min(n, K)} rows, {min(m, left)} columns)"]
    return ScoreResult(res.value, res.cell, code, backend, res.window * n, res.compute_s,
                       res.compile_s, res.h2d_s, check_s, tuple(notes))


def verify_score(result: ScoreResult, reference: np.ndarray) -> str:
    """Compare a score with the sequential reference table's cell, as
    :func:`runtime.fill.compare` compares tables (``RecurrenceError`` when they differ)."""
    from runtime.fill import compare

    table = reference.copy()
    table[result.cell] = result.value
    return f"M{result.cell} {compare(table, reference)}"
