"""``depgraph.fill`` (:mod:`runtime.run`): every backend and schedule against the sequential
reference, and the choices ``auto`` makes."""

import glob
import os
import re
from dataclasses import replace

import floyd_warshall
import lcs3
import numpy as np
import process_scheduling
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sources import THESIS, UNPROVEN_SKEW, load_lcs, same, slow_after
from stencil import acyclic_offsets, make_stencil, pattern_offsets

from depgraph import Family, analyze, cell_ir, fill, load, recurrence
from depgraph.errors import (
    CellFunctionError,
    CompileError,
    NoPatternError,
    OutOfBoundsError,
    UsageError,
)
from depgraph.frontend.loader import definitions, load_module
from patterns import BY_CODE, CANONICAL
from runtime.backends import cpu
from runtime.backends.cuda import device, steps
from runtime.schedule import choose, cpu_model
from runtime.schedule.cpu_model import CpuCosts
from runtime.schedule.plan import in_fill_plan, make_plan

EXAMPLES = [p if os.path.basename(p)[:-3] in THESIS else pytest.param(p, marks=pytest.mark.slow)
            for p in sorted(glob.glob("examples/*.py") + glob.glob("examples/catalog/*.py"))]


COMBOS = [("python", "auto"), ("python", "stages"), ("python", "sequential"),
          ("cpu", "auto"), ("cpu", "stages"), ("cpu", "sequential"),
          ("cuda", "auto"), ("cuda", "stages")]


HYPERPLANES = [("python", "hyperplane"), ("cpu", "hyperplane"), ("cuda", "hyperplane")]


def _example(path, size):
    obj = next(iter(definitions(load_module(path)).values()))
    return obj(size) if isinstance(obj, Family) else obj


@pytest.mark.parametrize("path", EXAMPLES)
def test_every_example_every_backend_and_schedule(path):
    rec = _example(path, 4)
    reference = analyze(rec).table  # the traced values, computed independently of runtime/
    for backend, schedule in COMBOS:
        if backend == "cuda" and rec.cells > 400:
            continue  # the simulator runs a Python thread per cell
        r = fill(rec, backend=backend, schedule=schedule)
        assert r.backend == backend
        same(r.table, reference)


# a pattern of each direction by default (each stencil fills by every pattern it matches)
@pytest.mark.parametrize("code", slow_after(4, ["RUD", "CRL", "NOSE", "NESO", "RDU", "CLR",
                                               "SENO", "SONE"]))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 7), m=st.integers(1, 7), count=st.integers(1, 4),
       seed=st.integers(0, 2**31), floats=st.booleans())
def test_random_stencils_every_matching_pattern(code, n, m, count, seed, floats):
    rng = np.random.default_rng(seed)
    offs = pattern_offsets(rng, code, reach=3, count=count)  # reaches past neighbours
    rec = make_stencil(offs, (n, m), seed, np.float64 if floats else np.int64)
    reference = analyze(rec).table
    plan = make_plan(rec)
    assert code in plan.patterns
    same(plan.reference, reference)
    for c in plan.patterns:  # every pattern that fits, not only the selected one
        p = BY_CODE[c]
        for layout in ("C", "F"):
            M = np.zeros(rec.shape, rec.dtype, order=layout)
            cpu.pattern_fill(rec, cell_ir(rec), M, p.index)
            same(M, reference)
    if n * m <= 25:
        p = BY_CODE[plan.pattern]
        same(steps.pattern_fill(rec, p.index, p.steps((n, m))).table, reference)
        same(fill(rec, backend="cuda", schedule="stages").table, reference)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 5), m=st.integers(1, 5), count=st.integers(1, 4),
       seed=st.integers(0, 2**31),
       dtype=st.sampled_from([np.int32, np.int64, np.float32, np.float64]),
       pi=st.sampled_from([(1, 0), (0, 1), (1, 1), (1, -1), (-1, 1), (2, 1), (1, -2)]))
def test_random_stencils_every_backend_and_schedule(n, m, count, seed, dtype, pi):
    # reads at random offsets a random order allows (within a pattern's regions or none),
    # per cell a random subset; every backend and schedule against the trace's values
    rng = np.random.default_rng(seed)
    rec = make_stencil(acyclic_offsets(rng, pi, reach=2, count=count), (n, m), seed, dtype)
    reference = analyze(rec).table
    combos = COMBOS + HYPERPLANES + ([("cuda", "ready")] if rec.dtype in steps.ATOMIC_DTYPES
                                     else [])
    for backend, schedule in combos:
        r = fill(rec, backend=backend, schedule=schedule, verify=True)
        assert r.backend == backend and r.table.dtype == rec.dtype
        same(r.table, reference)


@pytest.mark.parametrize("shape", [(1, 9), (9, 1), (3, 8), (8, 3)])
def test_thin_and_non_square(shape):
    @recurrence(shape=shape, dtype=np.int64)
    def paths(M, i, j):
        if i == 0 or j == 0:
            return 1
        return M[i - 1, j] + M[i, j - 1] + M[i - 1, j - 1]

    reference = analyze(paths).table
    for backend, schedule in COMBOS + HYPERPLANES:
        same(fill(paths, backend=backend, schedule=schedule).table, reference)


def test_three_dimensional_hyperplane_and_stage_fills():
    @recurrence(shape=(3, 4, 5), dtype=np.float64)
    def box(M, i, j, k):
        if i == 0 or j == 0 or k == 0:
            return 1.0 + 0.1 * (i + j + k)
        return 0.3 * M[i - 1, j, k] + 0.3 * M[i, j - 1, k] + 0.4 * M[i, j, k - 1]

    reference = analyze(box).table
    for backend in ("python", "cpu", "cuda"):
        r = fill(box, backend=backend)
        # on the cpu, 60 cells: the model finds the hyperplanes not worth their steps
        assert r.schedule == ("sequential" if backend == "cpu" else "hyperplane")
        assert r.pattern is None and r.pi == (None if backend == "cpu" else (1, 1, 1))
        same(r.table, reference)
        r = fill(box, backend=backend, schedule="hyperplane", verify=True)
        assert (r.schedule, r.pi, r.steps) == ("hyperplane", (1, 1, 1), 10)
        same(r.table, reference)
    assert fill(box, backend="cpu", schedule="stages").schedule == "stages"
    assert fill(box, backend="cpu", schedule="sequential").schedule == "sequential"
    with pytest.raises(NoPatternError, match="3-D.*--schedule hyperplane|3-D.*schedule='hyperplane'"):
        fill(box, backend="cpu", schedule="pattern")


SKEW = """
@recurrence(shape=({n}, {m}), dtype=np.int64, args=(np.arange({n} * {m}).reshape({n}, {m}),))
def skew(S, i, j, A):
    if i == 0 or j == 0 or j == S.shape[1] - 1:
        return A[i, j]
    return (S[i - 1, j + 1] * 3 + S[i, j - 1] + A[i, j]) % 1000003
"""


@pytest.mark.parametrize("backend", ["python", "cpu", "cuda"])
@pytest.mark.parametrize("shape", [(1, 7), (7, 1), (6, 9), (9, 4)])
def test_a_recurrence_no_pattern_fits_is_filled_by_its_hyperplane(write_rec, backend, shape):
    rec = load(write_rec(SKEW.format(n=shape[0], m=shape[1])))
    reference = analyze(rec).table
    r = fill(rec, backend=backend, verify=True)
    same(r.table, reference)
    notes = " ".join(r.notes)
    if shape[0] > 1 and shape[1] > 2:  # a row or a column is a pattern's
        assert "no pattern fits" in notes and "hyperplane pi = (2, 1)" in notes
        assert r.schedule == ("sequential" if backend == "cpu" else "hyperplane")
    r = fill(rec, backend=backend, schedule="hyperplane", verify=True)
    assert r.schedule == "hyperplane" and r.pi is not None
    same(r.table, reference)


@pytest.mark.parametrize("source, m, schedule, said", [
    # the sheared table's cells outside the table are filled too: a wide table, whose
    # sheared box is not much larger, pays for it; a square one, whose box is twice the
    # table, does not on two threads
    (SKEW, 4000, "hyperplane", "sheared into a 300x4299 table"),
    (SKEW, 400, "sequential", "sheared into a 300x699 table"),
    # no certificate (the guard's bound is data), so no shear: the steps' cells are a row
    # apart, each a cache line of its own, which the model counts against the steps
    (UNPROVEN_SKEW, 400, "sequential", f"a cell of a step {cpu_model.SCATTERED}x")])
def test_auto_weighs_the_cpu_hyperplanes_by_the_model(write_rec, monkeypatch, source, m,
                                                      schedule, said):
    rec = load(write_rec(source.format(n=300, m=m)))
    monkeypatch.setattr(cpu_model, "calibration", lambda threads: CpuCosts(
        "test", threads, 1e-6, 1e-9, 0.0, True, ""))
    monkeypatch.setattr(choose, "barrier_threads", lambda: 2)
    monkeypatch.setattr(cpu_model, "busy_cores", lambda: 0)
    r = fill(rec, backend="cpu", verify=True)
    notes = " ".join(r.notes)
    assert r.schedule == schedule and "predicted on 2 threads" in notes and said in notes, notes


#: 3-D tables a certificate proves, a side of 1 and non-cubic among them: (the
#: recurrence's maker, its reference, their arguments).
CERTIFIED_3D = {
    "floyd-warshall 2x1x1": (floyd_warshall.make_floyd_warshall, floyd_warshall.reference,
                             floyd_warshall.data(1)),
    "floyd-warshall 6x5x5": (floyd_warshall.make_floyd_warshall, floyd_warshall.reference,
                             floyd_warshall.data(5)),
    "lcs3 1x3x4": (lcs3.make_lcs3, lcs3.reference, ("", "AC", "GTA")),
    "lcs3 7x4x2": (lcs3.make_lcs3, lcs3.reference, ("ACGTTA", "CAT", "G")),
}


@pytest.mark.parametrize("backend, schedule", [("cpu", "auto"), ("cpu", "hyperplane"),
                                               ("cpu", "sequential"), ("cuda", "auto"),
                                               ("cuda", "hyperplane"),
                                               ("python", "sequential")])
@pytest.mark.parametrize("case", sorted(CERTIFIED_3D))
def test_a_certified_3d_table_is_filled_with_no_read_checked(case, backend, schedule):
    make, reference, args = CERTIFIED_3D[case]
    rec = make(*args)
    plan = make_plan(rec, cell_ir(rec))
    assert plan.method == "certificate"
    r = fill(rec, backend=backend, schedule=schedule, plan=plan)
    notes = " ".join(r.notes)
    assert "reads proven for every shape" in notes and "checks each read" not in notes
    np.testing.assert_array_equal(r.table, reference(*args))


@pytest.mark.parametrize("case, kernel", [("floyd-warshall 6x5x5", "hyperplane pi = (1, 0, 0)"),
                                          ("lcs3 7x4x2", "filled by its slabs")])
def test_a_certified_3d_gpu_fill_of_heavy_cells_checks_no_read(monkeypatch, case, kernel):
    # heavy cells: a launch per step, whose cell reads the table as it is (a light cell's
    # cooperative launch checks its reads, which is how it reads past L1)
    from runtime import run

    make, reference, args = CERTIFIED_3D[case]
    monkeypatch.setattr(run, "light", lambda plan: False)
    r = fill(make(*args), backend="cuda")
    said = next(n for n in r.notes if n.startswith("kernel"))
    assert kernel in said and "a launch per step" in said and "checked" not in said, said
    np.testing.assert_array_equal(r.table, reference(*args))


def test_a_k_dimensional_read_out_of_the_table_is_named(write_rec):
    rec = load(write_rec("""
idx = np.arange(5)
idx[3] = 7
@recurrence(shape=(4, 5, 5), dtype=np.int64, args=(idx,))
def bad(M, k, i, j, idx):
    return i + j if k == 0 else M[k - 1, i, idx[j]] + 1
"""))
    for backend in ("cpu", "cuda"):
        for schedule in ("auto", "hyperplane"):
            with pytest.raises(OutOfBoundsError, match=r"cell \(1, 0, 3\) reads \(0, 0, 7\)"):
                fill(rec, backend=backend, schedule=schedule)


def test_a_hyperplane_asked_where_none_is_legal(write_rec):
    rec = load(write_rec("""
@recurrence(shape=(4, 5), dtype=np.int64)
def both(M, i, j):
    if i == 0 or j == 0 or j == 4:
        return 1
    return M[i - 1, j] + (M[i, j - 1] if i % 2 else M[i, j + 1])
"""))
    for backend in ("cpu", "python"):
        with pytest.raises(NoPatternError, match="no hyperplane"):
            fill(rec, backend=backend, schedule="hyperplane")


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_auto_without_pattern_uses_stages_and_says_why(write_rec, backend):
    from depgraph import load

    rec = load(write_rec("""
@recurrence(shape=(5, 5), dtype=np.int64)
def zig(M, i, j):
    if i == 0:
        return j
    if i % 2 == 1:
        return M[i - 1, j] + (M[i, j - 1] if j > 0 else 0)
    return M[i - 1, j] + (M[i, j + 1] if j < 4 else 0)
"""))
    r = fill(rec, backend=backend, verify=True)
    # on the cpu, 25 cells: the model finds the stages not worth their steps
    assert r.schedule == ("sequential" if backend == "cpu" else "stages") and r.verified
    assert "no pattern fits" in " ".join(r.notes)
    with pytest.raises(NoPatternError, match=r"reads fall in Left, Right, Up.*RUD by Left, Right"):
        fill(rec, backend=backend, schedule="pattern")


def test_compile_failure_names_the_problem_and_auto_falls_back(write_rec):
    from depgraph import load

    rec = load(write_rec("""
TABLE = {0: 1}

@recurrence(shape=(2, 3), dtype=np.int64)
def uses_dict(M, i, j):
    return TABLE.get(j, 2) + (M[i, j - 1] if j > 0 else 0)
"""))
    with pytest.raises(CompileError, match="backend='python'"):
        fill(rec, backend="cpu")
    r = fill(rec, backend="auto")
    assert r.backend == "python" and "falling back to the python backend" in " ".join(r.notes)
    assert r.table.tolist() == [[1, 3, 5], [1, 3, 5]]


def test_cuda_needs_a_usable_gpu(monkeypatch):
    from depgraph.errors import BackendUnavailableError

    monkeypatch.setattr(device, "status", lambda: (False, "no CUDA GPU here"))

    @recurrence(shape=(2, 2), dtype=np.int64)
    def one(M, i, j):
        return 1

    with pytest.raises(BackendUnavailableError, match="no CUDA GPU here"):
        fill(one, backend="cuda")
    assert fill(one).backend == "cpu"  # auto


def test_plan_must_belong_to_the_recurrence():
    @recurrence(shape=(3, 3), dtype=np.int64)
    def a(M, i, j):
        return 1 if i == 0 else M[i - 1, j]

    @recurrence(shape=(4, 4), dtype=np.int64)
    def b(M, i, j):
        return 1 if j == 0 else M[i, j - 1]

    with pytest.raises(UsageError, match="plan"):
        fill(b, plan=make_plan(a))


def test_sequential_on_cuda_is_a_usage_error():
    @recurrence(shape=(2, 2), dtype=np.int64)
    def one(M, i, j):
        return 1

    with pytest.raises(UsageError, match="sequential"):
        fill(one, backend="cuda", schedule="sequential")


def test_verify_reports_agreement():
    @recurrence(shape=(6, 6), dtype=np.float32)
    def avg(M, i, j):
        if i == 0 or j == 0:
            return 1.0
        return (M[i - 1, j] + M[i, j - 1]) / 3.0 + 0.1

    r = fill(avg, backend="cpu", verify=True)
    assert r.verified.startswith("matches the sequential reference")
    assert r.table.dtype == np.float32


def test_ready_check_needs_cuda_and_atomic_dtypes():
    from depgraph.errors import RecurrenceError

    @recurrence(shape=(2, 2), dtype=np.int8)
    def small(M, i, j):
        return 1 if i == 0 else M[i - 1, j]

    with pytest.raises(UsageError, match="cuda backend"):
        fill(small, backend="cpu", schedule="ready")
    with pytest.raises(RecurrenceError, match="not int8"):
        fill(small, backend="cuda", schedule="ready")


def test_kernels_are_shared_across_family_sizes_but_not_closures():
    import lcs as lcs_example

    a = lcs_example.make_lcs(b"ACGT", b"AGT")
    b = lcs_example.make_lcs(b"GATTACA", b"TAC")
    assert a.func is not b.func
    ta, tb = fill(a, backend="cpu"), fill(b, backend="cpu")
    assert ta.compile_s >= 0 and tb.compile_s < 0.05  # b reuses a's kernels
    assert int(ta.table[-1, -1]) == 3 and int(tb.table[-1, -1]) == 3

    def make(c):
        @recurrence(shape=(1, 3), dtype=np.int64)
        def plus(M, i, j):
            return c if j == 0 else M[i, j - 1] + c
        return plus

    assert fill(make(1), backend="cpu").table.tolist() == [[1, 2, 3]]
    assert fill(make(5), backend="cpu").table.tolist() == [[5, 10, 15]]  # closure: own kernels


@pytest.mark.parametrize("backend", ["cuda", "cpu"])
def test_tiled_is_auto_for_diagonals_only(backend, monkeypatch):
    # on the cpu, by the model's predictions (fixed costs here): tables worth the threads
    big = backend == "cpu"
    if big:
        monkeypatch.setattr(cpu_model, "calibration", lambda threads: CpuCosts(
            "test CPU", threads, 2e-9, 1e-7, 0.0, "now", ""))
        monkeypatch.setattr(choose, "barrier_threads", lambda: 2)
        monkeypatch.setattr(cpu_model, "busy_cores", lambda: 0)
    # Up and Left: NOSE only; on the GPU reads proven (the tiles are for unchecked fills)
    diag = make_stencil(np.array([[-1, 0], [0, -1]]), (300, 200), 1) if big else load_lcs()
    r = fill(diag, backend=backend, verify=True)
    assert r.schedule == "tiled" and r.pattern == "NOSE" and r.verified
    rows = make_stencil(np.array([[-1, 0]]), (30, 4000) if big else (3, 3), 1)
    assert fill(rows, backend=backend).schedule == "pattern"
    with pytest.raises(UsageError, match="diagonal patterns"):
        fill(rows, backend=backend, schedule="tiled")
    with pytest.raises(UsageError, match="cpu and cuda backends"):
        fill(diag, backend="python", schedule="tiled")


@pytest.mark.parametrize("code", slow_after(2, ["NOSE", "SONE", "SENO", "NESO"]))
@pytest.mark.parametrize("shape", [(1, 9), (9, 1), (7, 11), (12, 5)])
def test_cpu_tiles_fill_every_diagonal_pattern_as_the_reference(code, shape):
    rng = np.random.default_rng(CANONICAL.index(code))
    rec = make_stencil(pattern_offsets(rng, code, reach=3, count=3), shape, 7)
    reference = analyze(rec).table
    for tile in ((1, 1), (2, 2), (3, 2), (2, 5), (64, 64), cpu.TILE):
        M = np.zeros(rec.shape, dtype=rec.dtype)
        ck, _ = cpu.tiled_fill(rec, cell_ir(rec), M, BY_CODE[code].index, tile=tile,
                               checked=tile[0] == 3)
        same(M, reference)
        assert not ck[cpu.OOB] and not ck[cpu.MISFIT]


def test_cpu_tiles_suit_the_cell_and_the_table_and_fill_as_the_reference():
    # a cell with a loop gets square tiles; one without, long rows cut to the table's width
    import lcs
    import matrix_chain

    loop = matrix_chain.matrix_chain(150)  # SONE: its first frame column is the last one
    rng = np.random.default_rng(3)
    straight = lcs.make_lcs(rng.integers(0, 4, 39), rng.integers(0, 4, 299))  # 40 x 300
    assert cpu.tile_for(150, 2, cell_ir(loop).straight) == cpu.LOOP_TILE
    assert cpu.tile_for(300, 2, cell_ir(straight).straight) == (cpu.TILE[0], 75)
    for rec, code in ((loop, "SONE"), (straight, "NOSE")):
        M = np.zeros(rec.shape, dtype=rec.dtype)
        ck, _ = cpu.tiled_fill(rec, cell_ir(rec), M, BY_CODE[code].index)
        same(M, analyze(rec).table)


def test_auto_tiles_light_cells_and_keeps_steps_for_heavy_ones(monkeypatch):
    from runtime.schedule import choose
    from runtime.schedule.choose import TILE_MAX_CELL_S
    from runtime.schedule.choose import choose_schedule as _choose_schedule

    # two threads, each with a core, and fixed costs (a barrier calibrated on a busy
    # machine would make one thread win), however busy the machine running the test is
    monkeypatch.setattr(choose, "barrier_threads", lambda: 2)
    monkeypatch.setattr(choose.cpu_model, "busy_cores", lambda: 0)
    monkeypatch.setattr(cpu_model, "calibration", lambda threads: CpuCosts(
        "test CPU", threads, 2e-9, 1e-7, 0.0, "now", ""))

    plan = make_plan(make_stencil(np.array([[-1, 0], [0, -1]]), (256, 256), 1))
    assert plan.pattern == "NOSE" and plan.cell_s > 0
    light = replace(plan, cell_s=TILE_MAX_CELL_S / 10)
    heavy = replace(plan, cell_s=TILE_MAX_CELL_S * 10)
    assert _choose_schedule("auto", light, "cuda")[0] == "tiled"
    assert _choose_schedule("auto", heavy, "cuda")[0] == "pattern"
    assert _choose_schedule("auto", light, "cpu")[0] == "tiled"  # by tiles whatever the cells


def test_compare_names_the_first_differing_cell():
    from depgraph import compare
    from depgraph.errors import RecurrenceError

    ref = np.arange(6.0).reshape(2, 3)
    assert compare(ref + 1e-12, ref).startswith("matches")
    with pytest.raises(RecurrenceError, match=r"cell \(1, 2\) is 9\.0, the sequential reference has 5\.0"):
        compare(np.where(ref == 5.0, 9.0, ref), ref)
    with pytest.raises(RecurrenceError, match=r"cell \(0, 1\)"):
        compare(np.array([[0, 7]]), np.array([[0, 1]]))


def test_cell_functions_that_allocate_compile_with_reference_counting():
    @recurrence(shape=(4, 6), dtype=np.int64)
    def allocating(M, i, j):
        if i == 0:
            return j
        buf = np.zeros(2, dtype=np.int64)  # needs numba's reference counting
        buf[0] = M[i - 1, j]
        return buf[0] + buf[1] + 1

    plan = make_plan(allocating)
    for schedule in ("pattern", "stages", "sequential"):
        r = fill(allocating, backend="cpu", schedule=schedule, plan=plan)
        same(r.table, plan.reference)


def test_light_rows_take_the_cost_models_kernel_on_cuda():
    import binomial

    r = fill(binomial.make_binomial(20), backend="cuda", verify=True)
    assert r.schedule == "pattern" and r.verified
    kernel = next(x for x in r.notes if x.startswith("kernel: "))
    assert kernel.startswith("kernel: register strips") and kernel.endswith(": strips")


def test_a_gpu_fill_larger_than_the_free_device_memory_says_so(write_rec, monkeypatch, capsys):
    # checked before any device allocation: an error naming the sizes, exit status 1, no
    # CUDA traceback; the same check covers a score's window on the device
    from depgraph import score
    from depgraph.cli import main
    from depgraph.errors import TooLargeError

    monkeypatch.setattr(device, "free_memory", lambda: 1000.0)
    path = write_rec("""
        @recurrence(shape=(30, 40), dtype=np.int64)
        def grid(M, i, j):
            return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    """)
    assert main(["run", path, "--backend", "cuda"]) == 1
    err = capsys.readouterr().err
    assert re.search(r"the GPU fill needs [0-9.]+ kB on the device \(the \(30, 40\) int64 table "
                     r"9.6 kB, args and schedule [0-9.]+ kB\), more than the 1.0 kB free; fill on "
                     r"the CPU \(--backend cpu\) or keep only the score \(--score\)", err)
    assert "Traceback" not in err
    monkeypatch.setattr(device, "free_memory", lambda: 100.0)
    with pytest.raises(TooLargeError, match=r"the GPU score needs [0-9.]+ kB on the device \(the "
                       r"cells it keeps [0-9.]+ kB, args and schedule [0-9.]+ kB\), more than "
                       r"the 0.1 kB free; fill on the CPU \(backend='cpu'\)$"):
        score(load(path), "cuda")


LOOPED = """
@family
def looped(n):
    rng = np.random.default_rng(n)
    w = rng.integers({low}, 5, n).astype(np.int64)
    w[n // 2] = {odd}
    v = rng.integers(1, 9, n).astype(np.int64)
    @recurrence(shape=(n + 1, {cols}), dtype=np.{dtype}, args=(w, v))
    def looped(M, i, j, w, v):
        if i == 0:
            return j % 3
        best = M[i - 1, j]
        k = 1
        while k <= 3:
            best = max(best, M[i - 1, j - k * w[i - 1]] + k * v[i - 1] if j >= k * w[i - 1] else best)
            k = k + 1  # not k += 1: the certificate follows no k, so the fill checks
        return best
    return looped
"""


@pytest.mark.parametrize("backend, schedule", [("cpu", "auto"), ("cpu", "sequential"),
                                               ("cuda", "auto"), ("cuda", "pattern")])
@pytest.mark.parametrize("n, cols", [(1, 9), (12, 1), (17, 23)])
def test_a_fill_checks_the_reads_no_certificate_proves(write_rec, backend, schedule, n, cols):
    # a loop in the cell: no certificate; the reads go up a row, so RUD, checked in the fill
    rec = load(write_rec(LOOPED.format(low=1, odd=2, cols=cols, dtype="int64")), size=n)
    assert in_fill_plan(rec, cell_ir(rec)).method == "checked fill"
    r = fill(rec, backend=backend, schedule=schedule, verify=True)
    assert "checks each read" in " ".join(r.notes)
    assert r.verified == "equals the sequential reference exactly"
    assert "checks failed" not in " ".join(r.notes)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_checked_fill_names_the_bad_read_and_returns_no_table(write_rec, backend):
    # a negative weight in one row reads past the right edge there, and only there
    rec = load(write_rec(LOOPED.format(low=1, odd=-4, cols=30, dtype="int64")), size=20)
    with pytest.raises(OutOfBoundsError, match=r"cell \(11, \d+\) reads \(10, \d+\), outside shape \(21, 30\)"):
        fill(rec, backend=backend)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_checked_fill_names_a_value_that_does_not_fit(write_rec, backend):
    rec = load(write_rec(LOOPED.format(low=1, odd=1, cols=40, dtype="int8")), size=40)
    with pytest.raises(CellFunctionError, match=r"cell \(\d+, \d+\).*does not fit the table's dtype int8"):
        fill(rec, backend=backend)


def test_a_checked_fill_whose_checks_fail_falls_back_to_the_sweep(write_rec, monkeypatch):
    """Checks that fail on a valid fill (here forced) cost a sweep, never a wrong table."""
    from runtime import run

    rec = load(write_rec(LOOPED.format(low=1, odd=2, cols=23, dtype="int64")), size=17)
    monkeypatch.setattr(run, "_checked", lambda ck, allowed: (_ for _ in ()).throw(run._ChecksFailed()))
    r = fill(rec, backend="cpu", verify=True)
    assert "the fill's own checks failed" in " ".join(r.notes)
    assert r.verified == "equals the sequential reference exactly"


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_checked_fill_checks_only_what_no_proof_covers(backend):
    # process scheduling's M[k + 1, a + p[k]] may pass the last column (a fact of P's
    # prefix sums no proof states); its other edges, M[k + 1, a] and the reads of p and P
    # are proven, so the fill checks one edge of one read
    times = [3, 1, 4, 1, 5, 2, 6, 2]
    rec = process_scheduling.make_process_scheduling(np.array(times))
    assert rec.shape == (9, sum(times) + 1)
    plan = in_fill_plan(rec, cell_ir(rec))
    assert plan.pattern == "RDU" and plan.trusted is not None
    assert plan.trusted.reads_in(BY_CODE["RDU"].allowed) == {("M[k + 1, a]", 8)}
    assert dict(plan.trusted.edges) == {("M[k + 1, a + p[k]]", 8): ((True, True), (True, False))}
    assert set(plan.trusted.elements) == {("P[n]", 5), ("P[k]", 6), ("p[k]", 8)}
    r = fill(rec, backend=backend, verify=True)
    assert "checks each read" in " ".join(r.notes) and r.verified
    # one column short: the unproven edge fails at one cell of the last row but one
    with pytest.raises(OutOfBoundsError, match=r"cell \(7, 22\) reads \(8, 24\), outside shape "
                       r"\(9, 24\)"):
        fill(replace(rec, shape=(9, sum(times))), backend=backend)
    # a negative time breaks the proof of the first column's edge, which is then checked
    bad = replace(process_scheduling.make_process_scheduling(
        np.array(times[:6] + [-3] + times[7:])), shape=rec.shape)
    assert dict(in_fill_plan(bad, cell_ir(bad)).trusted.edges)[("M[k + 1, a + p[k]]", 8)] \
        == ((True, True), (False, False))
    with pytest.raises(OutOfBoundsError, match=r"cell \(6, [0-2]\) reads \(7, -[1-3]\), outside"):
        fill(bad, backend=backend)


GUARDED = """
d = np.ones(12, dtype=np.int64)
d[0] = {first}
@recurrence(shape=(9, 12), dtype=np.int64, args=(d,))
def guarded(M, i, j, d):
    if i == 0:
        return j
    s = M[i - 1, j]
    if d[j] > 0:
        s += M[i, j - 1]
    k = 0
    while k < 1:
        k += 1
    return s
"""


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_checked_diagonal_fill_names_a_bad_read(write_rec, backend):
    # M[i, j - 1] at j = 0 (d's data guards it) keeps the certificate away; the reads go
    # up and left: NOSE, checked in the fill (on the cpu its tiles, asked for: auto fills
    # a table this small sequentially)
    schedule = "tiled" if backend == "cpu" else "auto"
    r = fill(load(write_rec(GUARDED.format(first=0))), backend=backend, schedule=schedule,
             verify=True)
    assert r.pattern == "NOSE" and "checks each read" in " ".join(r.notes) and r.verified
    with pytest.raises(OutOfBoundsError, match=r"cell \(\d, 0\) reads \(\d, -1\), outside shape \(9, 12\)"):
        fill(load(write_rec(GUARDED.format(first=1))), backend=backend, schedule=schedule)


def test_auto_on_one_cpu_thread_fills_sequentially():
    diag = make_stencil(np.array([[-1, 0], [0, -1]]), (6, 5), 1)
    one = fill(diag, backend="cpu", threads=1, verify=True)
    assert one.schedule == "sequential" and one.verified
    assert "auto: one CPU thread" in " ".join(one.notes)
    if cpu.barrier_threads() > 1:  # a table this small: sequential on any threads
        assert fill(diag, backend="cpu").schedule == "sequential"



@pytest.mark.parametrize("backend", ["python", "cpu", "cuda"])
@pytest.mark.parametrize("shape", [(1, 6), (6, 1), (4, 7)])
def test_the_target_is_the_recurrences_answer(backend, shape):
    A = np.random.default_rng(sum(shape)).integers(-3, 4, shape)  # ties: argmax's first

    def best(M):
        return np.unravel_index(np.argmax(M), M.shape)

    def kadane(M, i, j, A):  # the best run along a row ending at (i, j)
        return A[i, j] + (max(0, M[i, j - 1]) if j > 0 else 0)

    by_function = recurrence(shape=shape, dtype=np.int64, args=(A,), target=best)(kadane)
    res = fill(by_function, backend=backend, copy_back=False, solution=True)
    assert res.table is not None  # a target function needs the table on the host
    assert res.target == best(res.table) and res.value == res.table.max()
    assert res.solution.target == res.target
    corner = recurrence(shape=shape, dtype=np.int64, args=(A,), target=(0, 0))(kadane)
    res = fill(corner, backend=backend, copy_back=False)
    assert res.target == (0, 0) and res.value == A[0, 0]
    assert (res.table is None) == (backend == "cuda")  # a cell needs no table back


#: A knapsack whose table has more rows than its weights have elements: ``w[i - 1]`` is
#: past the end of ``w`` from row 4 on.
SHORT_WEIGHTS = """
w = np.array([1, 2, 3], dtype=np.int64)

@recurrence(shape=(6, 5), dtype=np.int64, args=(w,))
def sack(M, i, j, w):
    if i == 0:
        return 0
    best = M[i - 1, j]
    if w[i - 1] <= j:
        best = max(best, M[i - 1, j - w[i - 1]] + 1)
    return best
"""


def test_an_argument_read_past_its_end_ends_the_run_as_the_python_backend_does(
        write_rec, tmp_path, capsys):
    from depgraph.cli import main

    path = write_rec(SHORT_WEIGHTS)
    said = {}
    for backend in ("python", "cpu", "cuda"):
        out = tmp_path / f"{backend}.npy"
        for score in ((), ("--score",)):
            assert main(["run", path, "--backend", backend, "-o", str(out), *score]) == 1
            err = capsys.readouterr().err
            assert "Traceback" not in err and not out.exists()
            said[backend, bool(score)] = err.strip().splitlines()[-1]
    expected = ("depgraph: error: cell (4, 0): the cell function failed: IndexError: index 3 "
                "is out of bounds for axis 0 with size 3")
    assert {said[b, False] for b in ("python", "cpu", "cuda")} == {expected}
    for backend in ("python", "cpu", "cuda"):  # a score walks its own order: a cell of row 4
        assert re.fullmatch(r"depgraph: error: cell \(4, \d\): the cell function failed: "
                            r"IndexError: index 3 is out of bounds for axis 0 with size 3",
                            said[backend, True]), said[backend, True]


@pytest.mark.parametrize("backend, schedule", [("cpu", "auto"), ("cpu", "pattern"),
                                               ("cpu", "tiled"), ("cpu", "sequential"),
                                               ("cpu", "hyperplane"), ("cuda", "auto"),
                                               ("cuda", "pattern"), ("cuda", "hyperplane"),
                                               ("python", "auto")])
def test_an_argument_read_out_of_range_at_one_late_cell_is_named(write_rec, backend, schedule):
    rec = load(write_rec("""
d = np.arange(7, dtype=np.int64)

@recurrence(shape=(6, 7), dtype=np.int64, args=(d,))
def late(M, i, j, d):
    if i == 0 or j == 0:
        return 1
    k = j
    if i == 5 and j == 6:
        k = 7
    return M[i - 1, j] + M[i, j - 1] + d[k]
"""))
    with pytest.raises(CellFunctionError, match=re.escape(
            "cell (5, 6): the cell function failed: IndexError: index 7 is out of bounds "
            "for axis 0 with size 7")):
        fill(rec, backend=backend, schedule=schedule)
    score = __import__("runtime.score_only", fromlist=["score"]).score
    if backend != "python":
        with pytest.raises(CellFunctionError, match=re.escape("cell (5, 6)")):
            score(rec, backend=backend)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_an_argument_read_at_a_negative_index_python_allows_wraps_as_in_python(
        write_rec, backend):
    rec = load(write_rec("""
g = np.array([5, -3, 8, 2, 7], dtype=np.int64)

@recurrence(shape=(6, 4), dtype=np.int64, args=(g,))
def wraps(M, i, j, g):
    if i == 0 or j == 0:
        return i + j
    return max(M[i - 1, j], M[i, j - 1]) + g[i - 5] * g[j - 4]
"""))
    reference = fill(rec, backend="python").table
    for schedule in ("auto", "pattern"):
        np.testing.assert_array_equal(fill(rec, backend=backend, schedule=schedule).table,
                                      reference)


@pytest.mark.parametrize("columns, fails", [(4, False), (3, True)])
def test_a_read_of_a_view_of_an_argument_is_checked_by_the_trace(write_rec, columns, fails):
    # A[i - 1][j]: the row is an argument's, its element a view's, whose extent no
    # compiled check knows; the trace reads it as Python does
    rec = load(write_rec(f"""
A = np.arange(3 * {columns}, dtype=np.int64).reshape(3, {columns})

@recurrence(shape=(4, 4), dtype=np.int64, args=(A,))
def view(M, i, j, A):
    return j if i == 0 else M[i - 1, j] + A[i - 1][j]
"""))
    for backend in ("cpu", "cuda"):
        if fails:
            with pytest.raises(CellFunctionError, match=re.escape(
                    "cell (1, 3): the cell function failed: IndexError: index 3 is out of "
                    "bounds for axis 0 with size 3")):
                fill(rec, backend=backend)
            continue
        r = fill(rec, backend=backend)
        assert "is of an array that is not an argument" in " ".join(r.notes)
        np.testing.assert_array_equal(r.table, fill(rec, backend="python").table)


def test_a_k_dimensional_argument_read_out_of_range_is_named(write_rec):
    # a 3-D checked fill flags the read; the trace then names the cell
    rec = load(write_rec("""
d = np.arange(4, dtype=np.int64)

@recurrence(shape=(3, 4, 5), dtype=np.int64, args=(d,))
def late(M, k, i, j, d):
    if k == 0:
        return i + j
    return M[k - 1, i, j] + d[j]
"""))
    for backend in ("cpu", "cuda"):
        for schedule in ("auto", "hyperplane"):
            with pytest.raises(CellFunctionError, match=re.escape(
                    "cell (1, 0, 4): the cell function failed: IndexError: index 4 is out of "
                    "bounds for axis 0 with size 4")):
                fill(rec, backend=backend, schedule=schedule)
