"""The CPU fill model (:mod:`runtime.schedule.cpu_model`) and ``auto``'s choice on the cpu
backend by its predictions: never a parallel fill that a sequential one beats."""

import json

import numpy as np
import pytest
from stencil import make_stencil

from depgraph import fill, recurrence
from patterns import BY_CODE
from patterns.eight import step_line
from runtime.backends import cpu
from runtime.schedule import choose as choice
from runtime.schedule import cpu_model
from runtime.schedule.cpu_model import CpuCosts, predict, step_rounds
from runtime.schedule.plan import make_plan

COSTS = CpuCosts("test CPU", 2, 2e-9, 1e-7, 0.0, "now", "")


@pytest.fixture
def costs(monkeypatch):
    """Fixed costs, so the choices do not depend on this machine's timing."""
    monkeypatch.setattr(cpu_model, "calibration", lambda threads: COSTS)
    monkeypatch.setattr(cpu_model, "busy_cores", lambda: 0)
    monkeypatch.setattr(choice, "barrier_threads", lambda: 2)
    return COSTS


def test_step_rounds_are_the_steps_widths_shared_out():
    for code in ("RUD", "CRL", "NOSE", "SONE"):
        for shape in ((1, 1), (1, 9), (9, 1), (7, 11), (12, 5), (64, 64)):
            n, m = shape
            p = BY_CODE[code]
            widths = np.array([step_line(p.index, t, n, m)[4] for t in range(p.steps(shape))])
            assert widths.sum() == n * m
            for threads in (1, 2, 3, 16):
                assert step_rounds(n, m, code, threads) == (
                    int(np.sum(-(-widths // threads))), len(widths))


def test_a_new_tables_first_touch_is_paid_whatever_the_threads():
    touchy = CpuCosts("test CPU", 2, 2e-9, 1e-7, 1e-10, "now", "")
    plain, touched = (predict(c, (1001, 100001), "RUD", 2e-9, 2, 8) for c in (COSTS, touchy))
    extra = 1001 * 100001 * 8 * 1e-10
    assert all(touched[k] == pytest.approx(plain[k] + extra) for k in plain)


def test_a_row_of_one_cell_steps_is_sequential_and_wide_tables_are_parallel():
    chain = predict(COSTS, (1, 100000), "CLR", 2e-9, 2)
    assert chain["pattern"] > 50 * chain["sequential"]  # a barrier a cell
    rows = predict(COSTS, (1001, 100001), "RUD", 2e-9, 2)
    assert rows["pattern"] == pytest.approx(1001 * (50001 * 2e-9 + 1e-7))
    diag = predict(COSTS, (12001, 12001), "NOSE", 2e-9, 2)
    assert set(diag) == {"sequential", "tiled", "pattern"}
    # half, and a little more: an anti-diagonal of an odd number of tiles leaves a thread idle
    # for a tile, and there is a barrier after each
    assert diag["sequential"] / 2 < diag["tiled"] < 1.03 * diag["sequential"] / 2
    # each diagonal's cells a row apart: a cache line a cell
    assert diag["pattern"] > cpu_model.SCATTERED / 2 * diag["tiled"]


def test_auto_picks_by_predicted_time_and_says_why(costs):
    diag = make_stencil(np.array([[-1, 0], [0, -1]]), (300, 200), 1)  # NOSE
    r = fill(diag, backend="cpu", verify=True)
    why = " ".join(r.notes)
    assert r.schedule == "tiled" and r.verified
    assert "predicted on 2 threads" in why and "tiles" in why and "sequential" in why
    small = make_stencil(np.array([[-1, 0], [0, -1]]), (40, 40), 1)  # one tile
    r = fill(small, backend="cpu", verify=True)
    assert r.schedule == "sequential" and r.verified
    assert "no parallel fill beats the sequential one" in " ".join(r.notes)
    rows = make_stencil(np.array([[-1, 0], [-1, 1]]), (30, 4000), 1)  # RUD
    assert fill(rows, backend="cpu", verify=True).schedule == "pattern"
    chain = make_stencil(np.array([[0, -1]]), (1, 5000), 1)  # one cell a step
    assert fill(chain, backend="cpu", verify=True).schedule == "sequential"


def test_a_core_busy_with_other_work_keeps_the_fill_sequential(costs, monkeypatch):
    # a barrier would wait a time slice a step for a thread without a core
    import os

    cores = len(os.sched_getaffinity(0))
    monkeypatch.setattr(choice, "barrier_threads", lambda: cores)
    monkeypatch.setattr(cpu_model, "busy_cores", lambda: 1)
    diag = make_stencil(np.array([[-1, 0], [0, -1]]), (300, 200), 1)
    r = fill(diag, backend="cpu", verify=True)
    why = " ".join(r.notes)
    assert r.schedule == "sequential" and r.verified
    assert f"other work keeps 1 of the {cores} cores busy" in why
    assert (f"ask for {cores - 1} threads" in why) == (cores > 2)  # 1 free: sequential
    monkeypatch.setattr(cpu_model, "busy_cores", lambda: 0)
    assert fill(diag, backend="cpu").schedule == ("tiled" if cores > 1 else "sequential")


def test_a_cell_with_a_loop_counts_as_its_mean_iterations_of_light_cells(costs):
    import matrix_chain

    plan = make_plan(matrix_chain.matrix_chain(60))  # under SAMPLE a side: every cell
    assert not plan.ir.straight and plan.cell_s is None
    i, j = np.indices((60, 60))
    light = 1 + np.maximum(0, j - i - 1).mean()  # range(i + 1, j) at every cell
    schedule, why = choice.choose_schedule("auto", plan, "cpu")
    assert f"x {light:.3g}, for its loops' mean iterations" in why
    assert f"a cell {2e-9 * light * 1e9:.3g} ns" in why


def test_a_loop_its_source_does_not_count_is_a_guess_of_light_cells(costs):
    import integer_knapsack  # while k * w <= c: the data decide the count

    plan = make_plan(integer_knapsack.integer_knapsack(100))
    assert not plan.ir.straight and plan.cell_s is None
    schedule, why = choice.choose_schedule("auto", plan, "cpu")
    assert f"x {cpu_model.LOOP_CELLS}, for its loop" in why
    assert f"a cell {2e-9 * cpu_model.LOOP_CELLS * 1e9:.3g} ns" in why


def test_heavy_cells_on_diagonals_split_each_diagonal_light_ones_take_tiles(costs):
    # a diagonal of tiles holds few tiles: with a heavy cell their imbalance costs more
    # than a barrier a diagonal; with a light cell the barriers and the scattered cells
    # of a diagonal cost more than the tiles
    import matrix_chain

    heavy = make_plan(matrix_chain.matrix_chain(1024))
    assert choice.choose_schedule("auto", heavy, "cpu")[0] == "pattern"
    light = make_plan(make_stencil(np.array([[-1, 0], [0, -1]]), (2000, 2000), 1))
    assert choice.choose_schedule("auto", light, "cpu")[0] == "tiled"
    r = fill(matrix_chain.matrix_chain(300), backend="cpu", verify=True)
    assert r.schedule == "pattern" and r.verified


def test_without_a_pattern_auto_weighs_the_hyperplanes_against_the_sequential_fill(costs):
    # a 1 x 3000 chain through a 3-D table's first axis would be 3000 one-cell steps;
    # a wide 3-D box has wide hyperplanes
    @recurrence(shape=(3000, 1, 1), dtype=np.int64)
    def chain(M, i, j, k):
        return 1 if i == 0 else M[i - 1, j, k] + 1

    @recurrence(shape=(20, 40, 40), dtype=np.float64)
    def box(M, i, j, k):
        if i == 0 or j == 0 or k == 0:
            return 1.0
        return 0.5 * M[i - 1, j, k] + 0.25 * M[i, j - 1, k] + 0.25 * M[i, j, k - 1]

    r = fill(chain, backend="cpu", verify=True)
    assert r.schedule == "sequential" and r.verified
    assert "the hyperplanes (3000)" in " ".join(r.notes)
    r = fill(box, backend="cpu", verify=True)
    assert (r.schedule, r.pi) == ("hyperplane", (1, 1, 1)) and r.verified
    r = fill(box, backend="cpu", schedule="stages", verify=True)
    assert r.schedule == "stages" and r.verified


def test_costs_are_measured_once_and_kept(tmp_path, monkeypatch):
    measured = []
    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path))
    monkeypatch.setattr(cpu_model, "_MEMO", {})
    monkeypatch.setattr(cpu_model, "_measure", lambda machine, threads, code: measured.append(
        threads) or CpuCosts(machine, threads, 2e-9, 1e-7, 0.0, "now", code))
    first = cpu_model.calibration(2)
    monkeypatch.setattr(cpu_model, "_MEMO", {})
    assert cpu_model.calibration(2) == first and measured == [2]
    cpu_model.calibration(1)
    assert measured == [2, 1]  # per thread count
    (kept,) = tmp_path.glob("cpu-costs-*-2.json")
    kept.write_text(json.dumps({**json.loads(kept.read_text()), "code": "other code"}))
    monkeypatch.setattr(cpu_model, "_MEMO", {})
    cpu_model.calibration(2)
    assert measured == [2, 1, 2]  # measured by other code: again


def test_the_costs_measured_here_are_positive(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_model, "PROBE_SHAPE", (256, 256))
    monkeypatch.setattr(cpu_model, "ROWS_SHAPE", (128, 256))
    threads = cpu.barrier_threads()
    got = cpu_model._measure("here", threads, "code")
    assert 0 < got.cell_s < 1e-6 and 0 <= got.barrier_s < 1e-3 and got.threads == threads
    assert 0 <= got.touch_s < 1e-6


@pytest.mark.parametrize("running, busy, sleeps", [
    ([1, 3, 3], 0, 0),  # the first look sees no other work: one look, no wait
    ([3, 2, 4, 3, 2], 1, 4),  # busy at every look: the least of five, a wait between
    ([4, 1, 4], 0, 1),  # a look that sees none ends them
])
def test_busy_cores_looks_until_it_sees_a_free_machine(running, busy, sleeps, monkeypatch):
    # /proc/loadavg's running tasks at each look, this process's own thread among them
    counts = iter(running)
    waits = []

    class Proc:
        def __init__(self, path):
            self.path = path

        def read_text(self):
            assert self.path == "/proc/loadavg"
            return f"0.5 0.4 0.3 {next(counts)}/200 4242\n"

        def iterdir(self):
            return iter(())

    monkeypatch.setattr(cpu_model, "Path", Proc)
    monkeypatch.setattr(cpu_model.time, "sleep", waits.append)
    assert cpu_model.busy_cores() == busy
    assert len(waits) == sleeps
