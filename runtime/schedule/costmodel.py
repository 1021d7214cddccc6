"""Which one-launch GPU kernel fills a light recurrence's pattern fastest: a cost model
calibrated on the machine.

The candidates for a pattern whose cells are light (the planning sweep's rule,
``runtime.schedule.choose.TILE_MAX_CELL_S``):

- ``launches``: one launch per step (:func:`runtime.backends.cuda.steps.pattern_fill`);
- ``cooperative``: every step in one cooperative launch, a grid barrier between steps
  (:func:`runtime.backends.cuda.steps.cooperative_fill`), at the grid size the model
  likes best;
- ``bands``: each block owns a band of every row (or column) and waits on per-band
  progress counters, no barrier (:func:`runtime.backends.cuda.bands.band_fill`): on the
  bands before it when a diagonal pattern also fits the reads, else each read on its band;
- ``strips``: register strips in a diagonal pattern's frame
  (:func:`runtime.backends.cuda.strips.strip_fill`), when the reads are its three nearest
  neighbours.

Calibration (once per device, cached as JSON under ``$XDG_CACHE_HOME/depgraph``, or
``$DEPGRAPH_CACHE``; the bands' and the strips' parts only when a choice first has them
among its candidates, since each compiles a kernel of its own): the latency of an empty
launch and of a grid barrier (by grid size) measured directly; a cooperative step of one
round and each further round, and a band fill's step likewise, from timing those fills on
a built-in knapsack (the *rows probe*: ``max(M[i-1, j], M[i-1, j - W[i-1]] + V[i-1])``,
int64, whose values stay in int32, so the bands compute it there,
:func:`runtime.backends.cuda.bands.band_fill`), and a step of a register strip on a
built-in nearest-neighbour recurrence (the *probe*: ``(M[i-1, j-1] + M[i-1, j]) %
65521``, int32, which its remainder keeps in int32, so the strips compute it there:
:func:`runtime.backends.cuda.strips.strip_narrowing`).  Predictions, for a table ``n x
m`` (in the kernel's frame), ``S`` steps and ``N`` cells, ``T`` threads a block, ``U``
cells a thread a round, ``B_band`` bands of ``BAND_THREADS`` (as many as
are resident)::

    launches        S (launch + coop_step + (ceil(N / S / (B_max T)) - 1) round)
    cooperative(B)  S (barrier(B) + coop_step + (ceil(N / S / (B T U)) - 1) round)
    bands           S (band_step + (rounds - 1) band_round),
                    rounds = ceil(N / S / (B_band BAND_THREADS))
    strips          strip_step sqrt(R C / R_p C_p) (m / C + n / R + ceil(n / 32 R) (2 batch + 31))

where a step's first round (``coop_step``, ``band_step``) is measured apart from a further
one (a further round cost well under half a first one), bands whose reads wait on their
bands (no diagonal pattern fits the reads) are predicted as those waiting on the bands
before (they pass no grid barrier between steps either), and ``R x C`` is the strips'
block for the recurrence's cells
(:func:`runtime.backends.cuda.strip_layout.strip_block`; ``batch``, its
:func:`runtime.backends.cuda.strip_layout.strip_batch` for 4-byte cells), ``R_p x C_p``
the probe's (4x2), whose step is measured: a step of other blocks cost about the square
root of the cells' ratio to it (docs/benchmarks.md, the cost model).

Assumptions: the cells cost about what the probes' cost (light: a few loads and
arithmetic, one of them data-dependent in the rows probe), so the model compares the
kernels' overheads and parallelism, not the cell function; heavy cells are not modelled
and keep a launch per step.  Under numba's simulator nothing is measured: nominal
constants (H200 measurements) stand in, so the choice logic runs in tests.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from depgraph.frontend.ir import CellIR, cell_ir
from depgraph.model import Progress, Recurrence, recurrence
from patterns import BY_CODE, DIAGONAL_FLIPS
from depgraph.usercache import code_digest, measured_file, read_json, write_json
from runtime.backends.cuda import (
    bands,
    cells,
    device,
    steps,
    strip_layout,
    strip_source,
    strips,
)
from runtime.backends.cuda.bands import BAND_THREADS, band_fill
from runtime.backends.cuda.device import multiprocessors
from runtime.backends.cuda.steps import cooperative_fill
from runtime.backends.cuda.strips import serves_strips, strip_fill, strip_narrowing, strip_shape
from runtime.schedule.cpu_model import best_of, measuring

__all__ = ["Calibration", "Choice", "calibration", "choose", "predict", "cache_path", "KERNELS",
           "probe", "rows_probe", "strip_steps", "PROBE_DTYPE", "PARTS", "measure_steps",
           "strip_seconds"]

#: Candidate kernels, in the order ties are broken.
KERNELS = ("strips", "bands", "cooperative", "launches")
#: Threads a block and cells a thread a round of the cooperative fill.
THREADS, UNROLL = 256, 4
#: Cells of the strips' probe (:func:`probe`), whose block's step the calibration times.
PROBE_DTYPE = np.dtype(np.int32)
#: The parts of a calibration measured only when a choice first needs them: a band fill's
#: steps (rows and columns) and a register strip's step (patterns the strips serve).
PARTS = ("bands", "strips")


@dataclass(frozen=True)
class Calibration:
    """Latencies measured on one device, in seconds.

    ``barrier_s`` pairs grid sizes (blocks of ``THREADS``) with the time of one grid
    barrier; ``coop_s`` is a cooperative step of one round past its barrier, ``round_s``
    each further round of its grid-stride loop;
    ``band_s`` one step of a band fill whose bands take one round of cells a thread,
    ``band_round_s`` each further round of a step;
    ``strip_step_s`` one step of a register strip (these three ``None`` until their
    part of :data:`PARTS` is measured); ``code``, what was measured
    (:func:`measured_code`).
    """

    device: str
    multiprocessors: int
    launch_s: float
    barrier_s: tuple[tuple[int, float], ...]
    coop_s: float
    round_s: float
    band_s: float | None
    band_round_s: float | None
    strip_step_s: float | None
    measured: str
    code: str = ""

    def missing(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        """Those of ``parts`` (of :data:`PARTS`) not measured yet.

        Examples
        --------
        >>> SIMULATED.missing(PARTS), replace(SIMULATED, strip_step_s=None).missing(PARTS)
        ((), ('strips',))
        """
        known = {"bands": self.band_s, "strips": self.strip_step_s}
        return tuple(p for p in PARTS if p in parts and known[p] is None)

    def summary(self) -> str:
        """One line for the fill's notes."""
        bar = ", ".join(f"{b} blocks {s * 1e6:.1f}" for b, s in self.barrier_s)
        return (f"{self.device}, {self.measured}: launch {self.launch_s * 1e6:.1f} us, grid "
                f"barrier ({bar}) us")


#: Stand-ins under the simulator (measurements on an H200, rounded).
SIMULATED = Calibration("numba's CUDA simulator (nominal H200 constants)", 132, 19e-6,
                        ((132, 1.3e-6), (264, 1.7e-6), (528, 2.5e-6), (1056, 4.4e-6)),
                        3.1e-6, 1.3e-6, 2.7e-6, 0.85e-6, 0.69e-6, "not measured")


@dataclass(frozen=True)
class Choice:
    """The kernel the model picked, its frame (a diagonal pattern's code, for strips, and
    for bands that wait only on the bands before them), its grid (cooperative), and every
    candidate's predicted seconds."""

    kernel: str
    frame: str | None
    blocks: int | None
    predicted: tuple[tuple[str, float], ...]

    def note(self) -> str:
        """Why, for the fill's notes."""
        est = ", ".join(f"{k} {s * 1e3:.3g} ms" for k, s in self.predicted)
        return f"cost model: {est}: {self.kernel}"


def cache_path(device: str) -> Path:
    """Where the calibration of ``device`` is kept."""
    return measured_file("calibration", device)


def measured_code() -> str:
    """A digest of the code a calibration measures: this module and the kernel families
    it times, so a calibration made before any of them changed is measured again."""
    return code_digest((sys.modules[__name__], bands, cells, device, steps, strip_layout,
                        strip_source, strips))


_MEMO: dict[str, Calibration] = {}


def calibration(refresh: bool = False, progress: Progress | None = None,
                needs: tuple[str, ...] = PARTS) -> Calibration:
    """The current device's calibration with the ``needs`` of :data:`PARTS` measured:
    from memory, else from its cache file, else measured now (a few seconds a part,
    mostly compiling; ``progress`` shows the steps) and written to the cache file.  A part
    a kept calibration lacks is measured and added to it; ``refresh`` measures all anew."""
    ok, card = device.status()
    if card.startswith("numba's CUDA simulator"):
        return SIMULATED
    path = cache_path(card)
    code = measured_code()
    cal = None if refresh else _MEMO.get(card) or _kept(path, card, code)
    parts = PARTS if refresh else needs if cal is None else cal.missing(needs)
    if cal is None or parts:
        what = ", ".join(("the latencies",) * (cal is None) + parts)
        done = (progress(f"calibrating the GPU cost model ({what}), once for {card} "
                         f"(cached in {path}); steps", measure_steps(parts, cal))
                if progress else lambda step: None)
        with measuring():
            cal = measure(card, code, done, parts, cal)
        write_json(path, asdict(cal))
    _MEMO[card] = cal
    return cal


def _kept(path: Path, card: str, code: str) -> Calibration | None:
    """The calibration kept in ``path``, if it is whole and was measured on ``card`` by
    this ``code``."""
    raw = read_json(path)
    try:
        raw["barrier_s"] = tuple(tuple(x) for x in raw["barrier_s"])
        cal = Calibration(**raw)
    except (TypeError, KeyError):
        return None  # none, an old or a damaged file: measure again
    return cal if cal.code == code and cal.device == card else None


def _probe_cell(M: Any, i: int, j: int) -> int:
    if i == 0 or j == 0:
        return 1
    return (M[i - 1, j - 1] + M[i - 1, j]) % 65521


def probe(n: int, m: int) -> Recurrence:
    """The light recurrence the calibration times the strips on (reads up and up-left: it
    fits RUD and NOSE, and strips serve it).

    Examples
    --------
    >>> probe(3, 4).shape
    (3, 4)
    """
    return recurrence(shape=(n, m), dtype=PROBE_DTYPE, name="probe")(_probe_cell)


def _rows_cell(M: Any, i: int, j: int, W: Any, V: Any) -> int:
    if i == 0:
        return 0
    w = W[i - 1]
    if w <= j:
        return max(M[i - 1, j], M[i - 1, j - w] + V[i - 1])
    return M[i - 1, j]


def rows_probe(n: int, m: int) -> Recurrence:
    """The light recurrence the calibration times the row kernels on (bands, cooperative
    steps, launches): a 0/1 knapsack over ``n - 1`` seeded items of weights 1 to 1024, the
    shape of most row recurrences (int64 cells, the row above read at the same column and
    at an offset loaded from an argument).

    Examples
    --------
    >>> rec = rows_probe(3, 5)
    >>> rec.shape, rec.dtype.name
    ((3, 5), 'int64')
    """
    rng = np.random.default_rng(n)
    W, V = rng.integers(1, 1025, n), rng.integers(1, 1025, n)
    return recurrence(shape=(n, m), dtype=np.int64, args=(W, V), name="rows_probe")(_rows_cell)


def strip_steps(n: int, m: int, block: tuple[int, int]) -> float:
    """Steps of the register-strip fill of an ``n x m`` table (its frame), ``block`` the
    rows and columns of a lane's block, each step weighed by the square root of its cells
    against the probe's block (the model's docstring).

    Examples
    --------
    >>> strip_steps(4096, 8192, (4, 2))  # the probe's own block: plain steps
    6368.0
    """
    (R, C), (pr, pc) = block, strip_layout.strip_block(PROBE_DTYPE)
    steps = m / C + n / R + math.ceil(n / (32 * R)) * (
        2 * strip_layout.strip_batch(R, C, PROBE_DTYPE) + 31)
    return steps * math.sqrt(R * C / (pr * pc))


def measure_steps(parts: tuple[str, ...], base: Calibration | None = None) -> int:
    """The steps :func:`measure` reports as it goes.

    Examples
    --------
    >>> measure_steps(PARTS), measure_steps(("strips",), SIMULATED)
    (5, 1)
    """
    return (3 if base is None else 0) + len(parts)


def measure(device: str, code: str, done: Callable[[int], None] = lambda step: None,
            parts: tuple[str, ...] = PARTS, base: Calibration | None = None) -> Calibration:
    """Time the latencies and the cooperative fill (unless ``base`` has them) and the
    fills of ``parts`` (of :data:`PARTS`) on the current device (its code
    :func:`measured_code`), calling ``done`` with each of the :func:`measure_steps` steps
    finished."""
    steps = iter(range(1, measure_steps(parts, base) + 1))
    cal = base or _measure_latencies(device, code, lambda: done(next(steps)))
    sms = cal.multiprocessors
    if "bands" in parts:
        across = _bands(sms) * BAND_THREADS  # one round a band
        band, band_further = _rounds(1024, lambda rec: band_fill(
            rec, cell_ir(rec), BY_CODE["RUD"].index, "NOSE", copy_back=False).compute_s,
            lambda k: k * across)
        cal = replace(cal, band_s=band, band_round_s=band_further)
        done(next(steps))
    if "strips" in parts:
        rec = probe(4096, 8192)
        # one cell order, not the faster of two: the step's unit needs one kernel
        strips = best_of(lambda: strip_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index,
                                          copy_back=False, diagonals=False).compute_s)
        cal = replace(cal, strip_step_s=strips / strip_steps(
            4096, 8192, _strips_block(rec, cell_ir(rec))))
        done(next(steps))
    return cal


def _rounds(steps: int, fill: Callable[[Recurrence], float], width: Callable[[int], int]
            ) -> tuple[float, float]:
    """A step of one round and each further round, from ``fill``: ``steps`` steps of
    ``k`` rounds each (``width(k)`` cells a step) of the rows probe, at one round a step
    and at four."""
    one, four = (best_of(lambda rec=rows_probe(steps, width(k)): fill(rec)) for k in (1, 4))
    return one / steps, max(four - one, 0.0) / (3 * steps)


def _measure_latencies(device: str, code: str, done: Callable[[], None]) -> Calibration:
    """The calibration's first three steps: an empty launch, grid barriers, and a
    cooperative fill's steps; the parts of :data:`PARTS` left ``None``."""
    from runtime.backends.cuda import probes  # numba.cuda: only a calibration needs it

    sms = multiprocessors()
    launch = probes.launch_latency()
    done()
    barriers = tuple((k * sms, probes.barrier_latency(k * sms)) for k in (1, 2, 4, 8))
    done()
    rows = BY_CODE["RUD"].index

    blocks, bar = barriers[1]
    coop, further = _rounds(64, lambda rec: cooperative_fill(
        rec, cell_ir(rec), rows, "C", False, THREADS, blocks, UNROLL).compute_s,
        lambda k: k * blocks * THREADS * UNROLL)
    done()
    return Calibration(device, sms, launch, barriers, max(coop - bar, 0.0), further, None,
                       None, None, time.strftime("%Y-%m-%d %H:%M", time.localtime()), code)


def strip_seconds(rec: Recurrence, ir: CellIR) -> float:
    """The register strips' fill of ``rec`` predicted in seconds, measuring nothing: by
    this device's kept calibration where it has the strips' part, else by the nominal
    constants (:data:`SIMULATED`'s, an H200's; a slower GPU's fill is longer).

    Examples
    --------
    >>> from depgraph import cell_ir
    >>> rec = probe(4096, 8192)
    >>> 0.001 < strip_seconds(rec, cell_ir(rec)) < 0.01
    True
    """
    ok, card = device.status()
    cal = _MEMO.get(card) if ok else None
    if ok and cal is None and not card.startswith("numba's CUDA simulator"):
        cal = _kept(cache_path(card), card, measured_code())
        if cal is not None:  # calibration() measures the parts it lacks, if asked
            _MEMO[card] = cal
    step = cal.strip_step_s if cal is not None and cal.strip_step_s else SIMULATED.strip_step_s
    n, m = rec.shape
    return step * strip_steps(int(n), int(m), _strips_block(rec, ir))


def _strips_block(rec: Recurrence, ir: CellIR) -> tuple[int, int]:
    """The block :func:`runtime.backends.cuda.strips.strip_fill` takes for ``rec`` by
    default (:func:`runtime.backends.cuda.strips.strip_shape`): by its cell type, whether
    the strips may compute its cells in int32, and whether the store warps load its grid."""
    R, C, _, _ = strip_shape(rec, ir, strip_narrowing(rec, ir))
    return R, C


def _bands(sms: int) -> int:
    """Bands of a band fill on ``sms`` multiprocessors: as many blocks of
    ``BAND_THREADS`` as 2048 threads a multiprocessor hold."""
    return sms * (2048 // BAND_THREADS)


def predict(cal: Calibration, code: str, shape: tuple[int, int], steps: int,
            strip_frame: str | None,
            strip_block: tuple[int, int] | None = None) -> dict[str, tuple[float, int | None]]:
    """Predicted seconds (and grid, for ``cooperative``) of each candidate for pattern
    ``code`` on a table of ``shape`` filled in ``steps`` steps; ``strip_frame`` is the
    diagonal pattern the strips would use, or ``None`` (no strips);
    ``strip_block`` the strips' ``(R, C)`` block
    (:func:`runtime.backends.cuda.strip_layout.strip_block`; by default the unit of
    :func:`strip_steps`, the probe's block in 64-bit arithmetic)."""
    n, m = shape
    per_step = n * m / max(steps, 1)
    out: dict[str, tuple[float, int | None]] = {}
    if strip_frame is not None:
        block = strip_block or strip_layout.strip_block(PROBE_DTYPE)
        out["strips"] = (cal.strip_step_s * strip_steps(n, m, block), None)
    if code not in DIAGONAL_FLIPS:  # rows or columns
        rounds = math.ceil(per_step / (_bands(cal.multiprocessors) * BAND_THREADS))
        out["bands"] = (steps * (cal.band_s + (rounds - 1) * cal.band_round_s), None)

    def step(cells: int) -> float:  # a cooperative step's rounds of ``cells`` cells each
        return cal.coop_s + (math.ceil(per_step / cells) - 1) * cal.round_s

    out["cooperative"] = min((steps * (bar + step(b * THREADS * UNROLL)), b)
                             for b, bar in cal.barrier_s)
    most = max(b for b, _ in cal.barrier_s)
    out["launches"] = (steps * (cal.launch_s + step(most * THREADS)), None)
    return out


def choose(rec: Recurrence, ir: CellIR, code: str, patterns: tuple[str, ...], steps: int,
           cal: Calibration | None = None, progress: Progress | None = None) -> Choice:
    """The model's kernel for a light recurrence with pattern ``code`` (``patterns``: every
    pattern its reads fit), the calibration ``cal`` (by default this device's, measured
    once with ``progress``)."""
    frames = [c for c in patterns if c in DIAGONAL_FLIPS]
    strip_frame = next((f for f in frames if serves_strips(rec, ir, f)), None)
    needs = ("bands",) * (code not in DIAGONAL_FLIPS) + ("strips",) * (strip_frame is not None)
    cal = cal or calibration(progress=progress, needs=needs)
    band_frame = frames[0] if frames else None
    shape = (int(rec.shape[0]), int(rec.shape[1]))
    block = _strips_block(rec, ir) if strip_frame is not None else None
    pred = predict(cal, code, shape, steps, strip_frame, block)
    kernel = min(pred, key=lambda k: (pred[k][0], KERNELS.index(k)))
    frame = strip_frame if kernel == "strips" else band_frame if kernel == "bands" else None
    ranked = tuple(sorted(((k, v[0]) for k, v in pred.items()), key=lambda kv: kv[1]))
    return Choice(kernel, frame, pred[kernel][1], ranked)
