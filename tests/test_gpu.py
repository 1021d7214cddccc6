"""Real-GPU tests at real sizes (>= 4096 x 4096): ``DEPGRAPH_GPU=1 pytest -m gpu``.

They skip where no real CUDA GPU is usable (CI runs the same kernels under the simulator
in the test_cuda_*.py files at tiny sizes).
"""

import os
import sys

import numpy as np
import pytest
from sources import twice_with_one_cache
from stencil import make_stencil, pattern_offsets

from depgraph import cell_ir, fill, load, score, verify_score
from depgraph.errors import OutOfBoundsError
from patterns import BY_CODE, CANONICAL
from runtime.backends.cuda import (
    bands,
    cells,
    device,
    steps,
    strip_layout,
    strips,
    tiles,
)
from runtime.backends.cuda import score as gpu_score
from runtime.schedule.plan import make_plan

REAL = device.status()[0] and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1"
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not REAL, reason="needs a real CUDA GPU")]


@pytest.mark.parametrize("path, size", [("examples/lcs.py", 4096), ("examples/binomial.py", 4096),
                                        ("examples/matrix_chain.py", 1024)])
def test_thesis_cases_on_the_gpu(path, size):
    rec = load(path, size=size)
    r = fill(rec, backend="cuda", verify=True)
    assert r.backend == "cuda" and r.verified
    assert r.schedule == {"lcs": "tiled", "binomial": "pattern", "matrix_chain": "pattern"}[rec.name]
    assert fill(rec, backend="cuda", schedule="pattern", verify=True).verified


def test_knapsack_rows_on_the_gpu():
    from knapsack import make_knapsack

    rng = np.random.default_rng(7)
    rec = make_knapsack(rng.integers(1, 400, 4096), rng.integers(1, 1000, 4096), 65535)
    r = fill(rec, backend="cuda", verify=True)
    assert r.pattern == "RUD" and r.verified


@pytest.mark.parametrize("code", CANONICAL)
def test_random_stencil_every_pattern_at_4096(code):
    rng = np.random.default_rng(CANONICAL.index(code))
    rec = make_stencil(pattern_offsets(rng, code, reach=3, count=3), (4096, 4096), 11)
    plan = make_plan(rec)
    for c in plan.patterns:
        p = BY_CODE[c]
        layout = "F" if p.storage == "columns" else "C"
        out = steps.pattern_fill(rec, p.index, p.steps(rec.shape), layout).table
        np.testing.assert_array_equal(out, plan.reference)
        np.testing.assert_array_equal(steps.cooperative_fill(rec, cell_ir(rec), p.index, layout).table,
                                      plan.reference)
        if c in ("NOSE", "SENO", "SONE", "NESO"):
            for tile in (32, 64, 100):
                np.testing.assert_array_equal(tiles.tiled_fill(rec, cell_ir(rec), p.index, tile).table,
                                              plan.reference)


def test_stage_fill_on_the_gpu():
    rng = np.random.default_rng(3)
    rec = make_stencil(pattern_offsets(rng, "NOSE", reach=2, count=3), (700, 600), 5, np.float64)
    r = fill(rec, backend="cuda", schedule="stages", verify=True)
    assert r.schedule == "stages" and r.verified


@pytest.mark.parametrize("path, size", [("examples/lcs.py", 1024), ("examples/matrix_chain.py", 300)])
def test_ready_check_fill_on_the_gpu(path, size):
    rec = load(path, size=size)
    r = fill(rec, backend="cuda", schedule="ready", verify=True)
    assert r.schedule == "ready" and r.verified


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
def test_strips_tiles_and_scores_at_4100(code, write_rec):
    from sources import neighbour_reads

    for far in (False, True):
        rec = load(write_rec(neighbour_reads(code, (4100, 4099), far)))
        plan = make_plan(rec)
        p = BY_CODE[code]
        res = tiles.tiled_fill(rec, cell_ir(rec), p.index)
        assert res.kernel.startswith("shared-memory" if far else "register strips")
        np.testing.assert_array_equal(res.table, plan.reference)
        np.testing.assert_array_equal(tiles.wave_fill(rec, cell_ir(rec), p.index, 32).table, plan.reference)
        score = gpu_score.score_fill(rec, cell_ir(rec), p.index)
        assert score.value == plan.reference[score.cell]
        if not far:  # strips storing no cell, 1024 of them through a ring of two rows
            for R in (1, 4):
                score = gpu_score.strip_score_fill(rec, cell_ir(rec), p.index, R)
                assert score.value == plan.reference[score.cell]


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
def test_guarded_cells_in_strips_at_4100(code, write_rec):
    from sources import guarded_reads

    rec = load(write_rec(guarded_reads(code, (4100, 4099))))
    plan = make_plan(rec)
    np.testing.assert_array_equal(strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index).table, plan.reference)
    score = gpu_score.strip_score_fill(rec, cell_ir(rec), BY_CODE[code].index)
    assert score.value == plan.reference[score.cell]


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_staged_grids_in_strips_at_4100(dtype):
    # the store warps load the grid, in the staged loads' 4x4 blocks
    from depgraph import recurrence

    G = np.random.default_rng(7).integers(0, 10, (4100, 4099)).astype(dtype)

    @recurrence(shape=G.shape, dtype=dtype, args=(G,))
    def min_path(M, i, j, G):
        if i == 0 or j == 0:
            return G[i, j]
        return G[i, j] + min(M[i - 1, j], M[i, j - 1])

    res = strips.strip_fill(min_path, cell_ir(min_path), BY_CODE["NOSE"].index)
    assert "4x4 cells a lane" in res.kernel and "loading the cells' arguments" in res.kernel
    np.testing.assert_array_equal(res.table, make_plan(min_path).reference)


@pytest.mark.parametrize("name", ["lcs", "edit_distance", "smith_waterman", "dtw"])
def test_alignment_cases_at_4100(name):
    # benchmarks/wave_cases.py's cases, one a test (each compiles about 15 kernels), so
    # that workers share them out
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from wave_cases import CASES

    rec = CASES[name](4100)
    plan = make_plan(rec)
    for R, C, K, narrow in ((8, 1, None, True), (4, 2, None, True), (2, 4, None, True),
                            (1, 8, None, True), (16, 1, None, True), (8, 4, None, True),
                            (8, 4, 4, True), (4, 2, 4, True), (4, 2, 0, True),
                            (8, 4, 0, True), (4, 2, None, False), (8, 4, None, False),
                            (4, 2, 0, False)):  # None: the default store warps
        np.testing.assert_allclose(strips.strip_fill(rec, cell_ir(rec), 4, R, cols_per_step=C,
                                                     store_warps=K, narrow=narrow).table,
                                   plan.reference, rtol=1e-6)
        if K is None and (R, C) in ((4, 2), (8, 4)):
            score = gpu_score.strip_score_fill(rec, cell_ir(rec), 4, R, C, narrow=narrow)
            assert np.isclose(score.value, plan.reference[-1, -1], rtol=1e-6)
    np.testing.assert_allclose(tiles.wave_fill(rec, cell_ir(rec), 4, 64).table, plan.reference, rtol=1e-6)
    assert np.isclose(gpu_score.score_fill(rec, cell_ir(rec), 4).value, plan.reference[-1, -1], rtol=1e-6)
    assert np.isclose(gpu_score.strip_score_fill(rec, cell_ir(rec), 4).value, plan.reference[-1, -1], rtol=1e-6)


def test_strip_vectors_and_diagonals_at_4096():
    # the 16-byte loads and stores (runtime.intrinsics) on the GPU, and blocks computed by
    # anti-diagonals, on tables of a multiple of 4 columns
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from wave_cases import CASES

    for name, make in CASES.items():
        rec = next(r for r in (make(4095), make(4096)) if r.shape[1] % 4 == 0)
        plan = make_plan(rec)
        for vectors, diagonals in ((True, False), (True, True), (False, True)):
            res = strips.strip_fill(rec, cell_ir(rec), 4, vectors=vectors, diagonals=diagonals)
            np.testing.assert_allclose(res.table, plan.reference, rtol=1e-6)
            assert ("16-byte stores" in res.kernel) == (vectors and rec.dtype.itemsize == 4)


def test_strips_choose_their_order_by_timing_once(tmp_path, monkeypatch):
    # the default strip fill times both orders on a probe, keeps the faster on disk, and a
    # later process (a fresh kernel cache) takes the kept choice without timing anything
    from runtime.backends.cache import KernelCache

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from wave_cases import CASES

    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path))
    rec = CASES["lcs"](4095)
    res = strips.strip_fill(rec, cell_ir(rec), 4)
    np.testing.assert_array_equal(res.table, make_plan(rec).reference)
    assert "chosen by timing" in res.kernel
    (key, chosen), = strips._cached_orders().items()
    assert ("anti-diagonals" in res.kernel) == chosen

    def untimed(*args, **kwargs):
        raise AssertionError("timed again")

    monkeypatch.setattr(strips, "CACHE", KernelCache())
    monkeypatch.setattr(strips, "_strips", untimed)
    nw = strips.strip_narrowing(rec, cell_ir(rec))
    R, C = strip_layout.strip_block(rec.dtype, nw is not None)
    K = strip_layout.strip_store_warps(R, C, cells.register_type(rec, nw))
    assert strips.strip_order(rec, cell_ir(rec), 4, R, C, K, nw, True) is chosen


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32", "float64"])
def test_strips_of_every_cell_type_at_4100(dtype, write_rec):
    from sources import neighbour_reads

    rec = load(write_rec(neighbour_reads("NOSE", (4100, 4099), far=False, dtype=dtype)))
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index)
    np.testing.assert_allclose(res.table, make_plan(rec).reference, rtol=1e-6)


@pytest.mark.parametrize("code, frame", [("RUD", "NOSE"), ("RDU", "SENO"), ("CLR", "SONE"),
                                         ("CRL", "NESO")])
def test_bands_at_4100(code, frame):
    rng = np.random.default_rng(7)
    regions = sorted(BY_CODE[code].allowed & BY_CODE[frame].allowed)
    from stencil import SIGNS

    offsets = {tuple(int(s * rng.integers(1, 40)) for s in SIGNS[regions[k % 2]]) for k in range(6)}
    rec = make_stencil(np.array(sorted(offsets)), (4100, 4099), 5, np.int64)
    plan = make_plan(rec)
    for wait, threads, blocks, unroll in ((frame, 512, None, 1), (frame, 256, 100, 3),
                                          (None, 512, None, 1)):
        res = bands.band_fill(rec, cell_ir(rec), BY_CODE[code].index, wait, threads, blocks, unroll)
        np.testing.assert_array_equal(res.table, plan.reference)


@pytest.mark.parametrize("code, offsets", [("RUD", [(-1, -30), (-1, 17), (-3, 2), (-1, 0)]),
                                           ("CRL", [(-9, 1), (25, 1), (0, 3)])])
def test_bands_reading_both_sides_at_4100(code, offsets):
    rec = make_stencil(np.array(offsets), (4100, 4099), 1, np.int64)
    plan = make_plan(rec)
    assert plan.patterns == (code,)
    res = bands.band_fill(rec, cell_ir(rec), BY_CODE[code].index)
    assert res.kernel.endswith("each read waiting on its band")
    np.testing.assert_array_equal(res.table, plan.reference)


def test_cost_model_calibrates_and_picks_on_the_gpu():
    from runtime.schedule import costmodel

    cal = costmodel.calibration(refresh=True)
    assert cal.launch_s > 0 and all(s > 0 for _, s in cal.barrier_s)
    assert cal.coop_s > 0 and cal.round_s >= 0 and cal.band_s > 0 and cal.band_round_s >= 0 and cal.strip_step_s > 0
    assert costmodel.cache_path(cal.device).exists()
    import knapsack

    rng = np.random.default_rng(1)
    rec = knapsack.make_knapsack(rng.integers(1, 1001, 300), rng.integers(1, 1001, 300), 200000)
    r = fill(rec, backend="cuda", verify=True)
    assert r.verified and any("cost model: " in x for x in r.notes)


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
def test_score_only_at_4100(code, write_rec):
    from sources import neighbour_reads

    rec = load(write_rec(neighbour_reads(code, (4100, 4099), far=True)))
    res = score(rec, "cuda")
    assert res.pattern == code and res.kept == 4 * 4100
    verify_score(res, rec)


def test_ring_score_of_rows_and_columns_at_4100(write_rec):
    # the knapsack (a read at j - w[i], far), and reads one and two lines back in all four
    # line patterns, one at a data-dependent place (tests/test_score.py's line_reads)
    from knapsack import make_knapsack
    from test_score import line_reads

    rng = np.random.default_rng(11)
    recs = [make_knapsack(rng.integers(1, 400, 4100), rng.integers(1, 1000, 4100), 65535)]
    recs += [load(write_rec(line_reads(code, (4100, 4099)))) for code in ("RUD", "RDU", "CLR", "CRL")]
    for rec in recs:
        res = score(rec, "cuda")
        assert res.backend == "cuda" and res.line is not None
        assert verify_score(res, rec).endswith("equals the sequential reference exactly")


def test_the_integer_knapsacks_proven_reads_go_unchecked_at_real_size():
    """Its while loop's reads are proven for every shape (``min(w) >= 0``): no checks."""
    knap = load("examples/catalog/integer_knapsack.py", size=500)
    r = fill(knap, backend="cuda", verify=True)
    assert "checks each read" not in " ".join(r.notes) and r.verified


def test_a_checked_fill_at_real_sizes(write_rec):
    """Reads no certificate proves (a loop in the cell, a column read from the data),
    checked where the GPU fill runs: right tables, and a bad read in one late row of a
    4096 x 4096 table named as the sweep names it, with no table."""
    from test_run import LOOPED

    rec = load(write_rec(LOOPED.format(low=1, odd=2, cols=4096, dtype="int64")), size=4095)
    r = fill(rec, backend="cuda", verify=True)
    assert "a launch per step, every read checked" in " ".join(r.notes) and r.verified
    drift = load(write_rec("""
d = np.random.default_rng(5).integers(0, 4, 4096)
@recurrence(shape=(4097, 4096), dtype=np.int32, args=(d,))
def drift(M, i, j, d):
    if i == 0:
        return j % 7
    # no proof follows a shift left by a variable
    return max(M[i - 1, j], M[i - 1, (j << d[i - 1]) % M.shape[1]] + 1) % 1000
"""))
    r = fill(drift, backend="cuda", verify=True)
    assert "cooperative launch, every read checked" in " ".join(r.notes) and r.verified
    bad = load(write_rec(LOOPED.format(low=1, odd=-4, cols=4096, dtype="int64")), size=4095)
    with pytest.raises(OutOfBoundsError, match=r"cell \(2048, \d+\) reads \(2047, \d+\), outside shape \(4096, 4096\)"):
        fill(bad, backend="cuda")


_SECOND_PROCESS = """
import sys
import depgraph
from numba.cuda.descriptor import cuda_target
from runtime.backends.cache import CACHE

refreshed = []
context = cuda_target.target_context
refresh = context.refresh
context.refresh = lambda: refreshed.append(1) or refresh()
for path, size in [("examples/lcs.py", 4096), ("examples/knapsack.py", 300)]:
    depgraph.fill(depgraph.load(path, size=size), backend="cuda", copy_back=False)
kernels = [k for ks in CACHE._store.values() for k in ks.values() if hasattr(k, "stats")]
print(sum(sum(k.stats.cache_hits.values()) for k in kernels),
      sum(sum(k.stats.cache_misses.values()) for k in kernels), len(refreshed))
"""


def test_a_second_process_loads_its_kernels_and_compiles_none(tmp_path):
    # the first process compiles and keeps its kernels; the second loads each from the
    # cache root, compiles none, and never installs numba's lowering registries
    first, (hits, misses, refreshed) = twice_with_one_cache(_SECOND_PROCESS, tmp_path)
    assert hits >= 2 and misses == 0 and refreshed == 0
    assert first[1] >= 2  # the first process did compile


def test_the_command_hands_the_gpu_back_before_its_output_and_its_phases_add_up():
    # the driver's teardown (the context, the unified-memory file) is a phase of the
    # command, not time after its output
    import json
    import subprocess

    root = os.path.join(os.path.dirname(__file__), "..")
    r = subprocess.run([sys.executable, "-m", "depgraph", "run", "examples/lcs.py", "--size",
                        "4096", "--backend", "cuda", "--json"], capture_output=True, text=True,
                       cwd=root)
    assert r.returncode == 0, r.stderr[-2000:]
    phases = json.loads(r.stdout)["phases"]
    parts = sum(v for k, v in phases.items() if k != "total_s" and v is not None)
    assert phases["release_s"] > 0 and abs(parts - phases["total_s"]) < 0.05 * phases["total_s"]


@pytest.mark.parametrize("path, size, pi", [("examples/skew.py", 4096, (2, 1)),
                                            ("examples/floyd_warshall.py", 256, (1, 0, 0)),
                                            ("examples/lcs3.py", 256, (1, 1, 1))])
def test_hyperplanes_at_real_sizes(path, size, pi):
    from patterns.hyperplane import Hyperplane
    from runtime.backends.cuda import hyperplanes

    rec = load(path, size=size)
    reference = fill(rec, backend="cpu", schedule="sequential").table
    r = fill(rec, backend="cuda")
    assert (r.schedule, r.pi) == ("hyperplane", pi)
    np.testing.assert_array_equal(r.table, reference)
    ir = cell_ir(rec)
    found = Hyperplane(pi)
    for checked in (False, True):
        for cooperative in (False, True):
            checks = cells.Checks(ir, (), None, pi) if checked else None
            res = hyperplanes.hyperplane_fill(rec, ir, found, checks=checks,
                                              cooperative=cooperative)
            np.testing.assert_array_equal(res.table, reference)
            assert res.checks is None or res.checks[0] == 0
    if rec.name == "floyd_warshall":
        from floyd_warshall import reference as numpy_floyd_warshall

        np.testing.assert_array_equal(r.table[-1], numpy_floyd_warshall(rec.args[0])[-1])


def test_launches_go_straight_to_the_driver_and_fill_as_numba_does(monkeypatch):
    """A fill of a launch per step marshals its device arrays once and launches through
    the driver (``device._launch_all``): the same table as numba's own launches."""
    rec = load("examples/lcs.py", size=1500)
    p = BY_CODE["NOSE"]
    direct = []
    found = device._direct_launch
    monkeypatch.setattr(device, "_direct_launch",
                        lambda kern: direct.append(found(kern)) or direct[-1])
    ours = steps.pattern_fill(rec, p.index, p.steps(rec.shape))
    monkeypatch.setattr(device, "_direct_launch", lambda kern: None)
    numbas = steps.pattern_fill(rec, p.index, p.steps(rec.shape))
    assert direct and direct[0] is not None
    assert np.array_equal(ours.table, numbas.table)
    assert np.array_equal(ours.table, fill(rec, backend="cpu", schedule="sequential").table)


def test_a_solution_is_read_on_the_device_at_4096():
    """LCS 4096²'s path read from the table left on the GPU, a tile at a time: the same
    cells and edges as the walk over the table copied back."""
    rec = load("examples/lcs.py", size=4096)
    here = fill(rec, backend="cuda", copy_back=False, solution=True)
    assert here.table is None and any("solution read on the device" in n for n in here.notes)
    back = fill(rec, backend="cuda", solution=True)
    assert here.solution.to_json() == back.solution.to_json()


@pytest.mark.parametrize("path, size, target", [("examples/lcs.py", 4097, True),
                                                ("examples/catalog/edit_distance.py", 3000, True),
                                                ("examples/smith_waterman.py", 2500, (1250, 2000))])
def test_a_scores_solution_from_the_tiles_edges(path, size, target):
    """The path recovered from the GPU tiles' edges (the table never held) is the CPU
    checkpoints' own: same cells, edges and value."""
    rec = load(path, size=size)
    gpu = score(rec, backend="cuda", solution=target)
    cpu = score(rec, backend="cpu", solution=target)
    assert gpu.backend == "cuda" and gpu.recovery.plan.rows == 256
    assert gpu.recovery.solution.to_json() == cpu.recovery.solution.to_json()
    assert gpu.value == pytest.approx(cpu.value, rel=1e-12)
