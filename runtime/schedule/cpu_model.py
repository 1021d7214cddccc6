"""Which CPU fill ``auto`` takes: the sequential fill or a parallel one (the pattern fill
for rows and columns, the tiles for diagonals), by predicted time, from two costs
calibrated once per machine and thread count.

A parallel fill pays a barrier per step (per diagonal of tiles for the tiles); the
sequential fill pays none, and each cell costs about the same in both (the same compiled
cell).  So for ``p`` threads, a cell's cost ``c`` and a parallel step's ``b``::

    sequential   N c + B f
    pattern      sum over steps s of (ceil(w_s / p) c + b) + B f      w_s: cells of step s
    tiles        sum over tile diagonals d of (ceil(t_d / p) N / t c + b) + B f
                 t_d: tiles of diagonal d, t tiles in all

where ``B f`` is the first touch of the new table's ``B`` bytes, ``f`` a byte: the
kernel's page faults and zeroing, which more threads do not make faster (a large part of
a light cell's fill: docs/benchmarks.md).

The pattern fill is the candidate of rows and columns; diagonals have two, the tiles and
the pattern fill. A diagonal step in a row-major table touches a cache line a cell
(``SCATTERED - 1`` light cells more than the sweep's), which the tiles, filled in the
table's memory order, do not (docs/benchmarks.md), and the tiles pass a barrier a
diagonal of tiles, not of cells; but a diagonal of tiles holds few tiles, so where a
cell is heavy (a loop) and a barrier cheap beside it, splitting each diagonal's cells
among the threads balances better.  A parallel fill is taken only when
predicted at most ``MARGIN`` of the sequential fill, so the model's errors land on the
side of the sequential fill (issue 41: a parallel pick never more than 1.2x slower than
it).  ``c`` is the planning sweep's measure of the cell where the plan has one, else the
calibrated light cell's cost, times one more than the loop iterations the source fixes
on average (:func:`runtime.schedule.loop_trips.mean_iterations`), or ``LOOP_CELLS`` for a
loop whose count the source does not fix.

Calibration (:func:`calibration`, cached as JSON in the cache root per machine and thread
count): ``c`` from the sequential fill of a 1024 x 1024 light probe (an LCS of random
letters); ``f`` from writing a new 64 MiB array and then writing it again; ``b``, what a
step of the pattern fill costs beyond its share of the cells, from a light row probe
(1024 rows of 2048 cells, each reading the row above) filled both ways: ``(T_pattern -
T_sequential / p) / rows``.  That is more than a bare barrier: it holds the threads'
waits for each other when their chunks take unequal times, and the rows' split between
them.

Assumptions: numba's threads run at once (``runtime.backends.cpu.barrier_threads``),
each on a core of its own: where other work keeps some of this process's cores busy
(:func:`busy_cores`), a barrier waits for a thread without a core, a scheduler's time
slice a step, which no calibration foresees, so ``choose`` then fills sequentially.
"""

from __future__ import annotations

import functools
import math
import platform
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from depgraph.frontend.ir import cell_ir
from depgraph.model import recurrence
from depgraph.usercache import code_digest, measured_file, read_json, write_json
from patterns import BY_CODE, DIAGONAL_FLIPS, Sweep
from runtime.backends import cpu

__all__ = ["CpuCosts", "calibration", "measuring", "measuring_s", "predict", "predict_steps",
           "step_rounds", "MARGIN", "LOOP_CELLS", "SCATTERED", "busy_cores", "best_of"]

#: A parallel fill is taken when predicted at most this share of the sequential fill's time.
MARGIN = 0.8
#: A cell with a loop whose count its source does not fix counts as this many light cells.
LOOP_CELLS = 8
#: A cell of a step whose cells are a row apart or more (a 2-D hyperplane's) counts as
#: this many light cells: each takes a cache line of its own, where the sequential sweep
#: takes a line for eight (docs/benchmarks.md: 3-4x on anti-diagonals, 5x on pi = (2, 1)).
SCATTERED = 4
#: The light probe's shape, the row probe's, and the bytes of the first-touch probe.
PROBE_SHAPE, ROWS_SHAPE, TOUCH_BYTES = (1024, 1024), (1024, 2048), 64 << 20


@dataclass(frozen=True)
class CpuCosts:
    """A light cell's seconds, what a parallel step costs beyond its cells (a barrier and
    the threads' waits: ``barrier_s``) on ``threads`` threads of ``machine``, and the
    first touch of a new table's byte (``touch_s``);
    ``code``, a digest of the fills measured (:func:`_measured_code`)."""

    machine: str
    threads: int
    cell_s: float
    barrier_s: float
    touch_s: float
    measured: str
    code: str


def step_rounds(n: int, m: int, code: str, threads: int) -> tuple[int, int]:
    """How many cells the busiest of ``threads`` threads fills over the steps of pattern
    ``code`` on an ``n x m`` table (each step's ``ceil(w / threads)``, summed), and how
    many steps there are; in closed form, since a chain of millions of one-cell steps
    would otherwise cost its prediction more than its fill.

    Examples
    --------
    >>> step_rounds(2, 3, "RUD", 2), step_rounds(2, 3, "NOSE", 2)  # widths 3, 3; 1, 2, 2, 1
    ((4, 2), (4, 4))
    >>> step_rounds(1, 10**8, "CLR", 16)
    (100000000, 100000000)
    """
    if code in ("RUD", "RDU"):
        return n * -(-m // threads), n
    if code in ("CLR", "CRL"):
        return m * -(-n // threads), m
    short, long = min(n, m), max(n, m)
    # widths 1, 2, ..., short - 1 on each side of long - short + 1 steps of short cells
    q, r = divmod(short - 1, threads)
    ramp = threads * q * (q + 1) // 2 + r * (q + 1)
    return 2 * ramp + (long - short + 1) * -(-short // threads), n + m - 1


def predict(costs: CpuCosts, shape: tuple[int, int], code: str, cell_s: float,
            threads: int, itemsize: int = 8, straight: bool = True) -> dict[str, float]:
    """Predicted seconds of the sequential fill and of the parallel ones (``pattern``;
    for diagonals ``tiled`` too), for a table of ``shape`` in pattern ``code``,
    ``cell_s`` a cell, ``itemsize`` bytes a cell; the tiles those
    :func:`runtime.backends.cpu.tile_for` gives a cell without loops (``straight``) or
    with them.

    Examples
    --------
    >>> costs = CpuCosts("test", 2, 2e-9, 1e-6, 0.0, "now", "")
    >>> p = predict(costs, (1, 100000), "CLR", 2e-9, 2)  # a row of one-cell steps
    >>> p["pattern"] > 100 * p["sequential"]
    True
    >>> p = predict(costs, (12001, 12001), "NOSE", 2e-9, 2)
    >>> sorted(p), p["tiled"] < 0.6 * p["sequential"], p["tiled"] < p["pattern"]
    (['pattern', 'sequential', 'tiled'], True, True)
    >>> p = predict(costs, (1024, 1024), "SONE", 300 * 2e-9, 16, straight=False)  # 300 light
    >>> p["pattern"] < p["tiled"]
    True
    """
    n, m = shape
    touch = n * m * itemsize * costs.touch_s
    out = {"sequential": n * m * cell_s + touch}
    if code in DIAGONAL_FLIPS:
        tile = cpu.tile_for(m, threads, straight)
        grid = (math.ceil(n / tile[0]), math.ceil(m / tile[1]))
        per_tile = n * m / (grid[0] * grid[1])  # the edge tiles are smaller: their mean
        out["tiled"] = _rounds_s(costs, *step_rounds(*grid, "NOSE", threads),
                                 per_tile * cell_s) + touch
        cell_s += (SCATTERED - 1) * costs.cell_s  # a cache line a cell
    out["pattern"] = _rounds_s(costs, *step_rounds(n, m, code, threads), cell_s) + touch
    return out


def _rounds_s(costs: CpuCosts, rounds: int, steps: int, cell_s: float) -> float:
    """Seconds of ``steps`` parallel steps whose busiest thread fills ``rounds`` cells
    (or tiles) of ``cell_s`` each in all: those, and a parallel step's cost each."""
    return rounds * cell_s + steps * costs.barrier_s


def predict_steps(costs: CpuCosts, widths: np.ndarray, cell_s: float, threads: int) -> float:
    """Predicted seconds of parallel steps of ``widths`` cells (or tiles) each, ``cell_s``
    one, on ``threads`` threads, a table's first touch left out (the stages' fill, say,
    with the stage widths).

    Examples
    --------
    >>> costs = CpuCosts("test", 2, 2e-9, 1e-6, 0.0, "now", "")
    >>> # rounds of 1 + 2 + 1 cells a thread, and 3 steps
    >>> round(predict_steps(costs, np.array([1, 4, 1]), 1e-6, 2) * 1e6, 3)
    7.0
    """
    return float(_rounds_s(costs, int(np.sum(-(-np.asarray(widths) // threads))),
                           len(widths), cell_s))


@functools.cache
def _machine() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else the platform's)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        found = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
        if found:
            return found.group(1).strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def _measured_code() -> str:
    """A digest of this module and the CPU fills it times, so a calibration made before
    either changed is measured again."""
    return code_digest((sys.modules[__name__], cpu))


def _light_cell(M: Any, i: int, j: int, X: Any, Y: Any) -> int:
    if i == 0 or j == 0:
        return 0
    if X[i - 1] == Y[j - 1]:
        return M[i - 1, j - 1] + 1
    return max(M[i - 1, j], M[i, j - 1])


def _row_cell(M: Any, i: int, j: int, X: Any, Y: Any) -> int:
    if i == 0 or j == 0:
        return 0
    if X[i - 1] == Y[j - 1]:
        return M[i - 1, j - 1] + 1
    return M[i - 1, j]


_MEMO: dict[tuple[str, int], CpuCosts] = {}
#: Seconds this process has spent measuring cost models, and how deep the measures now
#: running are nested (a measure inside another counts once).
_MEASURING = {"seconds": 0.0, "depth": 0}


@contextmanager
def measuring() -> Iterator[None]:
    """Time what runs inside as measuring a cost model, this module's or the GPU's
    (:func:`measuring_s`)."""
    t0 = time.perf_counter()
    _MEASURING["depth"] += 1
    try:
        yield
    finally:
        _MEASURING["depth"] -= 1
        if _MEASURING["depth"] == 0:
            _MEASURING["seconds"] += time.perf_counter() - t0


def measuring_s() -> float:
    """Seconds this process has spent measuring cost models so far: a fill that measures
    one reports the difference as its calibration phase.

    Examples
    --------
    >>> before = measuring_s()
    >>> with measuring():
    ...     with measuring():
    ...         time.sleep(0.01)
    >>> 0.01 <= measuring_s() - before < 0.5
    True
    """
    return _MEASURING["seconds"]


def calibration(threads: int) -> CpuCosts:
    """This machine's costs on ``threads`` threads: from memory, else from the cache
    file, else measured now (a second or so, most of it compiling two probes' fills the
    first time) and kept."""
    machine = _machine()
    key = (machine, threads)
    if key in _MEMO:
        return _MEMO[key]
    path = measured_file("cpu-costs", f"{machine} {threads}")
    code = _measured_code()
    raw = read_json(path)
    try:
        costs = CpuCosts(**raw)
    except TypeError:  # none, or an old or damaged file
        costs = None
    if costs is None or costs.code != code or (costs.machine, costs.threads) != key:
        with measuring():
            costs = _measure(machine, threads, code)
        write_json(path, asdict(costs))
    _MEMO[key] = costs
    return costs


def busy_cores(looks: int = 5) -> int:
    """Cores other work keeps busy now: the kernel's count of running tasks
    (``/proc/loadavg``) less this process's own running threads (the one reading, and
    numba's workers still spinning after a parallel region), the least of up to ``looks``
    a millisecond apart (a task that runs for an instant holds no core), so the first
    look that sees none ends them (an idle machine costs one look, not ``looks``
    milliseconds); 0 where it cannot be read.

    Examples
    --------
    >>> busy_cores() >= 0
    True
    """
    least = None
    for look in range(looks):
        if look:
            time.sleep(0.001)
        try:
            running = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
            own = sum(_running(task) for task in Path("/proc/self/task").iterdir())
        except (OSError, ValueError, IndexError):
            return 0
        busy = running - max(own, 1)
        if busy <= 0:
            return 0
        least = busy if least is None else min(least, busy)
    return least or 0


def _running(task: Path) -> bool:
    """Whether the thread ``task`` (a ``/proc/self/task`` entry) is running now."""
    try:
        return task.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0] == "R"
    except (OSError, IndexError):
        return False


def best_of(run: Callable[[], float]) -> float:
    """The least of three timed runs (``run`` returns its seconds), after one that
    compiles: the calibrations' measure of a fill.

    Examples
    --------
    >>> times = iter([9.0, 3.0, 2.0, 4.0])
    >>> best_of(lambda: next(times))
    2.0
    """
    run()
    return min(run() for _ in range(3))


def _measure(machine: str, threads: int, code: str) -> CpuCosts:
    """Time the light probe's sequential fill, a new array's first touch, and the row
    probe's sequential fill and pattern fill on ``threads`` threads."""
    light, rows = (_probe(cell, shape, name) for cell, shape, name in (
        (_light_cell, PROBE_SHAPE, "cpu_probe"), (_row_cell, ROWS_SHAPE, "cpu_rows")))
    light_ir, rows_ir = cell_ir(light), cell_ir(rows)
    seq = best_of(lambda: cpu.sweep_fill(light, light_ir, cpu.touched_table(light),
                                       Sweep(0, 1, 1), False)[1].run_s)
    rows_seq = best_of(lambda: cpu.sweep_fill(rows, rows_ir, cpu.touched_table(rows),
                                            Sweep(0, 1, 1), False)[1].run_s)
    with cpu.thread_count(threads):
        rows_par = best_of(lambda: cpu.pattern_fill(rows, rows_ir, cpu.touched_table(rows),
                                                  BY_CODE["RUD"].index)[1].run_s)
    step_s = max(rows_par - rows_seq / threads, 0.0) / rows.shape[0]
    return CpuCosts(machine, threads, seq / light.cells, step_s, best_of(_touch_cost),
                    time.strftime("%Y-%m-%d %H:%M", time.localtime()), code)


def _touch_cost(nbytes: int = TOUCH_BYTES) -> float:
    """Seconds a byte of a new array's first write costs beyond a second write (its page
    faults and zeroing); the array is large enough that the allocator maps it anew."""
    a = np.zeros(nbytes // 8, dtype=np.int64)
    t0 = time.perf_counter()
    a.fill(1)
    t1 = time.perf_counter()
    a.fill(2)
    t2 = time.perf_counter()
    return max((t1 - t0) - (t2 - t1), 0.0) / nbytes


def _probe(cell: Any, shape: tuple[int, int], name: str) -> Any:
    """A probe recurrence of ``cell`` over two seeded random sequences of four letters."""
    rng = np.random.default_rng(shape[0])
    X, Y = (rng.integers(0, 4, k).astype(np.uint8) for k in shape)
    return recurrence(shape=shape, dtype=np.int32, args=(X, Y), name=name)(cell)
