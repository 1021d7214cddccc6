import json
from dataclasses import replace

import numpy as np
import pytest

from depgraph import cell_ir
from depgraph.views.progress import progress
from runtime.backends.cuda import device
from runtime.backends.cuda.strip_layout import strip_batch, strip_block
from runtime.schedule import costmodel
from runtime.schedule.costmodel import (
    SIMULATED,
    Calibration,
    choose,
    predict,
    probe,
    strip_steps,
)


def _read(rec):
    """A recurrence and its cell IR, as ``choose`` takes them."""
    return rec, cell_ir(rec)


CAL = Calibration("test GPU", 132, 19e-6, ((132, 1.3e-6), (264, 1.7e-6), (528, 2.5e-6)),
                  2.0e-6, 1.0e-6, 1.5e-6, 0.5e-6, 0.67e-6, "now")


def test_square_nearest_rows_take_register_strips():
    # binomial-like 16384^2: a barrier or a tile diagonal per row costs more than strips
    c = choose(*_read(probe(16384, 16384)), "RUD", ("RUD", "NOSE"), 16384, CAL)
    assert (c.kernel, c.frame, c.blocks) == ("strips", "NOSE", None)
    assert [k for k, _ in c.predicted][0] == "strips"
    # the probe's remainder keeps it in int32, so its strips take the 8x4 blocks
    strips = dict(c.predicted)["strips"]
    assert strips == pytest.approx(CAL.strip_step_s * strip_steps(16384, 16384, (8, 4)))


def test_far_reads_leave_bands_and_barriers_to_the_model():
    import knapsack

    rng = np.random.default_rng(0)
    rec = knapsack.make_knapsack(rng.integers(1, 1001, 1000), rng.integers(1, 1001, 1000),
                                 10**6 - 1)  # built, not filled
    c = choose(rec, cell_ir(rec), "RUD", ("RUD", "NOSE"), 1001, CAL)
    assert set(dict(c.predicted)) == {"bands", "cooperative", "launches"}  # j - w[i]: no strips
    assert c.kernel == c.predicted[0][0] and c.frame == ("NOSE" if c.kernel == "bands" else None)
    bands = dict(c.predicted)["bands"]
    assert bands == pytest.approx(1001 * (1.5e-6 + 3 * 0.5e-6))  # 528 bands of 512: 4 rounds


def test_knapsack_takes_the_bands_with_the_h200_constants():
    import knapsack

    rng = np.random.default_rng(1000)
    rec = knapsack.make_knapsack(rng.integers(1, 1001, 1000), rng.integers(1, 1001, 1000),
                                 10**6 - 1)
    c = choose(rec, cell_ir(rec), "RUD", ("RUD", "NOSE"), 1001, SIMULATED)
    assert (c.kernel, c.frame) == ("bands", "NOSE")  # as measured (docs/benchmarks.md)
    assert dict(c.predicted)["bands"] == pytest.approx(1001 * (2.7e-6 + 3 * 0.85e-6))


def test_rows_probe_is_a_knapsack_whose_reads_fit_the_bands_frame():
    from runtime.schedule.plan import make_plan

    rec = costmodel.rows_probe(6, 3000)
    plan = make_plan(rec)
    assert rec.dtype == np.int64 and {"RUD", "NOSE"} <= set(plan.patterns)
    W, V = rec.args
    best = [0] * 3000
    for w, v in zip(W[:5], V[:5]):  # the textbook 0/1 knapsack, one item a row
        best = [max(best[j], best[j - w] + v) if w <= j else best[j] for j in range(3000)]
    assert plan.reference[-1].tolist() == best and best[-1] > 0


def test_short_wide_tables_leave_strips():
    # 64 rows of 2^20 cells: a strip would walk 2^20 columns with 2 warps
    pred = predict(CAL, "RUD", (64, 1 << 20), 64, "NOSE")
    assert pred["strips"][0] > 100 * pred["bands"][0]


def test_a_strip_step_weighs_its_blocks_cells():
    # float32 cells take 8x4 blocks, int32 and int64 the probe's 4x2: half the steps, each
    # costing sqrt(32 / 8) = 2 probe steps; a 4x1 block's step sqrt(1 / 2) of one
    n = m = 32768

    def strips(dtype: str) -> float:
        block = strip_block(np.dtype(dtype))
        return predict(CAL, "NOSE", (n, m), n + m - 1, "NOSE", block)["strips"][0]

    def steps(R: int, C: int) -> float:
        return m / C + n / R + -(-n // (32 * R)) * (2 * strip_batch(R, C, np.dtype(np.int32)) + 31)

    assert strips("int32") == pytest.approx(CAL.strip_step_s * steps(4, 2))
    assert strips("float32") == pytest.approx(CAL.strip_step_s * 2 * steps(8, 4))
    assert strips("int64") == pytest.approx(CAL.strip_step_s * steps(4, 2))
    assert strip_steps(n, m, (4, 1)) == pytest.approx(0.5 ** 0.5 * steps(4, 1))


def test_rows_no_diagonal_fits_pick_the_grid_with_the_least_barrier_and_rounds():
    pred = predict(CAL, "RUD", (1000, 1000), 1000, None)
    assert set(pred) == {"bands", "cooperative", "launches"}
    # bands whose reads wait on their bands: a round a step, as with a frame (no barrier)
    assert pred["bands"][0] == pytest.approx(1000 * 1.5e-6)
    seconds, blocks = pred["cooperative"]
    assert blocks == 132  # one round a step everywhere: the cheapest barrier wins
    assert seconds == pytest.approx(1000 * (1.3e-6 + 2.0e-6))  # a step of one round
    assert pred["launches"][0] == pytest.approx(1000 * (19e-6 + 2.0e-6))
    wide = predict(CAL, "RUD", (100, 10**7), 100, None)["cooperative"]
    assert wide[1] == 528  # many rounds a step: more blocks pay for their barrier
    # 10^7 cells a step in rounds of 528 x 256 x 4: the first and 18 further
    assert wide[0] == pytest.approx(100 * (2.5e-6 + 2.0e-6 + 18 * 1.0e-6))


def test_note_names_every_candidate_and_the_pick():
    c = choose(*_read(probe(64, 64)), "RUD", ("RUD",), 64, CAL)
    assert c.kernel == "bands" and c.note().startswith("cost model: bands ")
    assert c.note().endswith(": bands") and "launches" in c.note() and "cooperative" in c.note()


def _fake_measure(measured):
    """A ``measure`` that notes each call's card and parts and measures nothing."""
    def measure(card, code, done, parts=costmodel.PARTS, base=None):
        measured.append((card, parts, base is None))
        for step in range(1, costmodel.measure_steps(parts, base) + 1):
            done(step)
        cal = base or replace(CAL, device=card, code=code, band_s=None, band_round_s=None,
                              strip_step_s=None)
        known = {"bands": {"band_s": CAL.band_s, "band_round_s": CAL.band_round_s},
                 "strips": {"strip_step_s": CAL.strip_step_s}}
        return replace(cal, **{k: v for p in parts for k, v in known[p].items()})
    return measure


def _fake_gpu(monkeypatch, tmp_path, card):
    """A GPU named ``card`` whose calibration measures nothing, an empty cache and
    memory; the list of what was measured."""
    measured = []
    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path))
    monkeypatch.setattr(device, "status", lambda: (True, card))
    monkeypatch.setattr(costmodel, "measure", _fake_measure(measured))
    monkeypatch.setattr(costmodel, "_MEMO", {})
    return measured


def test_calibration_is_measured_once_and_cached(tmp_path, monkeypatch):
    measured = _fake_gpu(monkeypatch, tmp_path, "CUDA GPU Test 1")
    first = costmodel.calibration()
    path = costmodel.cache_path("CUDA GPU Test 1")
    assert path.name == "calibration-cuda-gpu-test-1.json" and path.exists()
    monkeypatch.setattr(costmodel, "_MEMO", {})
    assert costmodel.calibration() == first
    assert measured == [("CUDA GPU Test 1", ("bands", "strips"), True)]
    raw = json.loads(path.read_text())
    path.write_text(json.dumps({**raw, "code": "measured by other code"}))
    monkeypatch.setattr(costmodel, "_MEMO", {})
    costmodel.calibration()
    assert len(measured) == 2  # a file from other code is measured again


def test_a_part_is_measured_when_a_choice_first_needs_it(tmp_path, monkeypatch):
    # a diagonal pattern the strips serve needs no bands; a row pattern then adds them
    measured = _fake_gpu(monkeypatch, tmp_path, "CUDA GPU Test 3")
    rec, ir = _read(probe(512, 512))
    assert choose(rec, ir, "NOSE", ("NOSE",), 1023).kernel == "strips"
    assert measured == [("CUDA GPU Test 3", ("strips",), True)]
    kept = json.loads(costmodel.cache_path("CUDA GPU Test 3").read_text())
    assert kept["band_s"] is None and kept["strip_step_s"] == CAL.strip_step_s
    monkeypatch.setattr(costmodel, "_MEMO", {})  # a later process: from the file
    choose(rec, ir, "RUD", ("RUD", "NOSE"), 512)
    assert measured[1:] == [("CUDA GPU Test 3", ("bands",), False)]  # latencies kept
    cal = costmodel.calibration()
    assert cal.band_s == CAL.band_s and cal.strip_step_s == CAL.strip_step_s
    assert len(measured) == 2


def test_simulator_uses_nominal_constants(monkeypatch):
    monkeypatch.setattr(device, "status", lambda: (True, "numba's CUDA simulator (...)"))
    assert costmodel.calibration() is SIMULATED


def test_calibration_shows_its_steps_on_a_terminal(tmp_path, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    _fake_gpu(monkeypatch, tmp_path, "CUDA GPU Test 2")
    monkeypatch.setattr(sys, "stderr", Terminal())
    costmodel.calibration(progress=progress)  # the reporter the CLI gives
    shown = sys.stderr.getvalue()
    assert ("calibrating the GPU cost model (the latencies, bands, strips), once for CUDA GPU "
            "Test 2") in shown
    assert shown.endswith("steps: 5/5 (100%)\n")
