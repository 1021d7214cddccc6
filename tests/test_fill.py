"""Every executor on every backend against the sequential reference."""

import glob
import os
import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sources import guarded_reads, neighbour_reads
from stencil import make_stencil, pattern_offsets

from depgraph import Family, analyze, load, recurrence
from depgraph.errors import CompileError, NoPatternError, UsageError
from depgraph.loader import definitions, load_module
from patterns import BY_CODE, CANONICAL, DIAGONAL_FLIPS
from runtime import cpu
from runtime.fill import fill
from runtime.plan import make_plan

#: What a strip fill's label adds for neighbour_reads' cells, computed in int32: their
#: remainder by 1000003 bounds them whatever they read.
NEAR_INT32 = ", int32 arithmetic, proven exact for values 0..1000002"
EXAMPLES = sorted(glob.glob("examples/*.py") + glob.glob("examples/catalog/*.py"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
COMBOS = [("python", "auto"), ("python", "stages"), ("python", "sequential"),
          ("cpu", "auto"), ("cpu", "stages"), ("cpu", "sequential"),
          ("cuda", "auto"), ("cuda", "stages")]


def _example(path, size):
    obj = next(iter(definitions(load_module(path)).values()))
    return obj(size) if isinstance(obj, Family) else obj


def _same(a, b):
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("path", EXAMPLES)
def test_every_example_every_backend_and_schedule(path):
    rec = _example(path, 4)
    reference = analyze(rec).table  # the traced values, computed independently of runtime/
    for backend, schedule in COMBOS:
        if backend == "cuda" and rec.cells > 400:
            continue  # the simulator runs a Python thread per cell
        r = fill(rec, backend=backend, schedule=schedule)
        assert r.backend == backend
        _same(r.table, reference)


@pytest.mark.parametrize("code", CANONICAL)
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
    _same(plan.reference, reference)
    for c in plan.patterns:  # every pattern that fits, not only the selected one
        p = BY_CODE[c]
        for layout in ("C", "F"):
            M = np.zeros(rec.shape, rec.dtype, order=layout)
            cpu.pattern_fill(rec, M, p.index)
            _same(M, reference)
    if n * m <= 25:
        from runtime import cuda

        p = BY_CODE[plan.pattern]
        _same(cuda.pattern_fill(rec, p.index, p.steps((n, m))).table, reference)
        _same(fill(rec, backend="cuda", schedule="stages").table, reference)


@pytest.mark.parametrize("shape", [(1, 9), (9, 1), (3, 8), (8, 3)])
def test_thin_and_non_square(shape):
    @recurrence(shape=shape, dtype=np.int64)
    def paths(M, i, j):
        if i == 0 or j == 0:
            return 1
        return M[i - 1, j] + M[i, j - 1] + M[i - 1, j - 1]

    reference = analyze(paths).table
    for backend, schedule in COMBOS:
        _same(fill(paths, backend=backend, schedule=schedule).table, reference)


def test_three_dimensional_stage_fill():
    @recurrence(shape=(3, 4, 5), dtype=np.float64)
    def box(M, i, j, k):
        if i == 0 or j == 0 or k == 0:
            return 1.0 + 0.1 * (i + j + k)
        return 0.3 * M[i - 1, j, k] + 0.3 * M[i, j - 1, k] + 0.4 * M[i, j, k - 1]

    reference = analyze(box).table
    for backend in ("python", "cpu", "cuda"):
        r = fill(box, backend=backend)
        assert r.schedule == "stages" and r.pattern is None
        _same(r.table, reference)
    assert fill(box, backend="cpu", schedule="sequential").schedule == "sequential"
    with pytest.raises(NoPatternError, match="3-D"):
        fill(box, backend="cpu", schedule="pattern")


def test_auto_without_pattern_uses_stages_and_says_why(write_rec):
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
    r = fill(rec, backend="cpu", verify=True)
    assert r.schedule == "stages" and "no pattern fits" in " ".join(r.notes)
    with pytest.raises(NoPatternError, match=r"reads fall in Left, Right, Up.*RUD by Left, Right"):
        fill(rec, backend="cpu", schedule="pattern")


def test_compile_failure_names_the_problem_and_auto_falls_back(write_rec):
    from depgraph import load

    rec = load(write_rec("""
TABLE = {0: 1}

@recurrence(shape=(2, 3), dtype=np.int64)
def uses_dict(M, i, j):
    return TABLE.get(j, 2) + (M[i, j - 1] if j > 0 else 0)
"""))
    with pytest.raises(CompileError, match="--backend python"):
        fill(rec, backend="cpu")
    r = fill(rec, backend="auto")
    assert r.backend == "python" and "falling back to the python backend" in " ".join(r.notes)
    assert r.table.tolist() == [[1, 3, 5], [1, 3, 5]]


def test_cuda_needs_a_usable_gpu(monkeypatch):
    from depgraph.errors import BackendUnavailableError
    from runtime import cuda

    monkeypatch.setattr(cuda, "status", lambda: (False, "no CUDA GPU here"))

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


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_ready_check_fill_on_the_simulator(dtype):
    rng = np.random.default_rng(4)
    rec = make_stencil(pattern_offsets(rng, "SONE", reach=2, count=3), (5, 4), 9, dtype)
    reference = analyze(rec).table
    r = fill(rec, backend="cuda", schedule="ready", verify=True)
    assert r.schedule == "ready" and r.steps == 1
    _same(r.table, reference)


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


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
@pytest.mark.parametrize("tile, dtype", [(2, np.int64), (3, np.int64), (3, np.float32)])
def test_tiled_fill_reads_past_the_tile_edge(code, tile, dtype):
    from runtime import cuda

    rng = np.random.default_rng(tile)
    offs = pattern_offsets(rng, code, reach=3, count=3)  # offsets up to 3 > tile
    rec = make_stencil(offs, (7, 5), tile, dtype)  # sizes not multiples of the tile
    plan = make_plan(rec)
    _same(cuda.tiled_fill(rec, BY_CODE[code].index, tile).table, plan.reference)


def test_tiled_is_auto_on_cuda_for_diagonals_only():
    diag = make_stencil(np.array([[-1, 0], [0, -1]]), (4, 4), 1)  # Up and Left: NOSE only
    r = fill(diag, backend="cuda", verify=True)
    assert r.schedule == "tiled" and r.pattern == "NOSE" and r.verified
    rows = make_stencil(np.array([[-1, 0]]), (3, 3), 1)
    assert fill(rows, backend="cuda").schedule == "pattern"
    with pytest.raises(UsageError, match="diagonal patterns"):
        fill(rows, backend="cuda", schedule="tiled")
    with pytest.raises(UsageError, match="cuda backend"):
        fill(diag, backend="cpu", schedule="tiled")


def test_auto_tiles_light_cells_and_keeps_steps_for_heavy_ones():
    from dataclasses import replace

    from runtime.fill import TILE_MAX_CELL_S, _choose_schedule

    plan = make_plan(make_stencil(np.array([[-1, 0], [0, -1]]), (256, 256), 1))
    assert plan.pattern == "NOSE" and plan.cell_s > 0
    light = replace(plan, cell_s=TILE_MAX_CELL_S / 10)
    heavy = replace(plan, cell_s=TILE_MAX_CELL_S * 10)
    assert _choose_schedule("auto", light, "cuda")[0] == "tiled"
    assert _choose_schedule("auto", heavy, "cuda")[0] == "pattern"
    assert _choose_schedule("auto", light, "cpu")[0] == "pattern"


def test_compare_names_the_first_differing_cell():
    from depgraph.errors import RecurrenceError
    from runtime.fill import compare

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
        _same(r.table, plan.reference)


@pytest.mark.parametrize("code", ["NOSE", "SONE"])
def test_tiled_fill_without_source_uses_one_launch_per_tile_diagonal(code, monkeypatch):
    from runtime import cuda
    from runtime.source import SourceUnavailable

    def unavailable(*_):
        raise SourceUnavailable("test")

    monkeypatch.setattr(cuda, "_tile_cell", unavailable)
    rec = make_stencil(pattern_offsets(np.random.default_rng(3), code, reach=3, count=3),
                       (7, 5), 2, np.int64)
    res = cuda.tiled_fill(rec, BY_CODE[code].index, 2)
    assert res.launches == 4 + 3 - 1  # one per diagonal of 2x2 tiles
    _same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
@pytest.mark.parametrize("shape", [(7, 9), (9, 4), (1, 6)])
def test_score_fill_keeps_only_the_live_diagonals(code, shape, write_rec):
    from runtime import cuda

    rec = load(write_rec(neighbour_reads(code, shape, far=True)))
    res = cuda.score_fill(rec, BY_CODE[code].index, threads=4)
    assert res.kept == 4 * shape[0]  # the read two rows, one column back: 3 diagonals back
    rows, cols = DIAGONAL_FLIPS[code]
    assert res.cell == ((0 if rows else shape[0] - 1), (0 if cols else shape[1] - 1))
    assert res.value == make_plan(rec).reference[res.cell]


@pytest.mark.parametrize("code, shape, R, C", [
    ("NOSE", (5, 7), 1, 1), ("SENO", (5, 7), 1, 2), ("SONE", (5, 7), 2, 1), ("NESO", (5, 7), 2, 4),
    ("NOSE", (37, 35), 2, 4), ("SENO", (70, 9), 2, 2), ("NOSE", (1, 40), 2, 4),
    ("NOSE", (40, 1), 1, 2), ("SONE", (70, 70), 1, 4)])
def test_strip_fill_keeps_cells_in_registers(code, shape, R, C, write_rec):
    # several strips of 32 R rows, blocks of R x C cells, batches of the row above,
    # columns not a multiple of C, thin tables
    from runtime import cuda

    rec = load(write_rec(neighbour_reads(code, shape, far=False)))
    res = cuda.strip_fill(rec, BY_CODE[code].index, R, cols_per_step=C)
    _same(res.table, make_plan(rec).reference)
    K = cuda.strip_store_warps(R, C, np.dtype(np.int32))
    assert K == 2
    i4 = np.dtype(np.int32)
    vec = cuda._ring_vectors(R, C, K, cuda.strip_batch(R, C, i4), DIAGONAL_FLIPS[code][1],
                             shape[1], i4, np.dtype(rec.dtype)) == 4  # on by default
    assert res.kernel == (f"register strips of {32 * R} rows ({R}x{C} cells a lane, {K} store "
                          f"warps{', 16-byte stores' if vec else ''}{NEAR_INT32})")


@pytest.mark.parametrize("code, shape, R, C, dtype", [
    ("NOSE", (101, 6), 1, 1, "int64"), ("SENO", (101, 5), 1, 2, "int32"),
    ("SONE", (70, 4), 1, 1, "float64"), ("NESO", (130, 3), 2, 1, "int64"),
    ("NOSE", (1, 9), 1, 4, "float32"), ("SONE", (9, 1), 1, 1, "int64"),
    ("NESO", (101, 11), 1, 4, "int32")])
def test_strip_score_fill_stores_no_cell_and_reuses_two_slots(code, shape, R, C, dtype, write_rec):
    # the strips' last rows in a ring of two slots: four strips and more rewrite a slot, the
    # tags in their words keep an old row from being read as new; only the last cell leaves,
    # from whichever cell of a lane's block it is
    from runtime import cuda

    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = cuda.strip_score_fill(rec, BY_CODE[code].index, R, C)
    rows, cols = DIAGONAL_FLIPS[code]
    assert res.cell == ((0 if rows else shape[0] - 1), (0 if cols else shape[1] - 1))
    _same(np.asarray(res.value), make_plan(rec).reference[res.cell])
    strips = -(-shape[0] // (32 * R))
    assert res.kept == min(2, max(1, strips - 1)) * (shape[1] + C)  # a slot: m + C values
    note = NEAR_INT32 if dtype in ("int32", "int64") else ""
    assert res.note.startswith(f"register strips of {32 * R} rows ({R}x{C} cells a lane{note}) "
                               "in one launch, no cell stored")


def _loading_reads(code: str, shape: tuple[int, int]) -> str:
    """A nearest-neighbour recurrence in ``code``'s frame that loads its arguments in every
    way the strips treat apart: by row, by column, by both, at a wrapped index, in an
    untaken branch past the array's end, at a data-dependent index, from an empty array,
    by column across the whole row (``Y``)."""
    rows, cols = DIAGONAL_FLIPS[code]
    up, left = ("r + 1" if rows else "r - 1"), ("c + 1" if cols else "c - 1")
    n, m = shape
    return f"""
X = np.arange(1, {n + 1}, dtype=np.int64) * 7 % 11
A = np.arange({n * m}, dtype=np.int64).reshape({n}, {m}) * 5 % 13
V = np.array([3, 1, 4], dtype=np.int64)
E = np.zeros(0, dtype=np.int64)
Y = np.arange({m}, dtype=np.int64) * 3 + 1

@recurrence(shape={shape}, dtype=np.int64, args=(X, A, V, E, Y, 2))
def rec(T, r, c, X, A, V, E, Y, k):
    total = X[r - 1] + A[r, c] * k + X[(r + c) % X.shape[0]] + Y[c]
    if c < 3:
        total += V[c]
    if E.shape[0] > 0:
        total += E[c]
    if 0 <= {up} < {n}:
        total += 2 * T[{up}, c] + V[T[{up}, c] % 3]
        if 0 <= {left} < {m}:
            total += T[{up}, {left}]
    if 0 <= {left} < {m}:
        total += T[r, {left}]
    return total % 1000003
"""


@pytest.mark.parametrize("code, shape, R, C", [
    ("NOSE", (37, 35), 2, 4), ("SONE", (70, 9), 1, 2), ("NESO", (1, 40), 1, 4),
    ("SENO", (40, 1), 2, 2), ("NOSE", (65, 300), 2, 4)])
def test_strips_load_the_cells_arguments_ahead(code, shape, R, C, write_rec):
    # the kernel makes the cell's loads at index expressions of its indices, each clamped
    # into its array: once a strip by row (through shared memory), a batch ahead by column
    # only (through a window in shared memory, which 300 columns wrap), a step ahead by both
    from runtime import cuda

    rec = load(write_rec(_loading_reads(code, shape)))
    arrays, loads = cuda._argument_loads(rec)
    assert arrays == ("X", "A", "V", "Y") and len(loads) == 4
    res = cuda.strip_fill(rec, BY_CODE[code].index, R, cols_per_step=C)
    _same(res.table, make_plan(rec).reference)
    score = cuda.strip_score_fill(rec, BY_CODE[code].index, R)
    _same(np.asarray(score.value), make_plan(rec).reference[score.cell])


def test_tall_scores_take_wider_blocks(write_rec, monkeypatch):
    # from SCORE_TALL rows on (lowered here), the score's strips take SCORE_BLOCK blocks;
    # 4-byte floats and cells computed in int32 at any height
    from runtime import cuda

    monkeypatch.setattr(cuda, "SCORE_TALL", 300)
    for rows, dtype, narrow, note in (
            (299, "int32", False, "128 rows (4x1 cells a lane)"),
            (300, "int32", False, "256 rows (8x4 cells a lane)"),
            (40, "int64", True, f"256 rows (8x4 cells a lane{NEAR_INT32})"),
            (40, "float32", True, "256 rows (8x4 cells a lane)")):
        rec = load(write_rec(neighbour_reads("NOSE", (rows, 6), far=False, dtype=dtype)))
        res = cuda.strip_score_fill(rec, BY_CODE["NOSE"].index, narrow=narrow)
        assert res.note.startswith(f"register strips of {note} in one launch")
        _same(np.asarray(res.value), make_plan(rec).reference[-1, -1])


@pytest.mark.parametrize("dtype, narrow, block", [
    ("float32", True, "256 rows (8x4 cells a lane, 4 store warps)"),
    ("int32", True, f"256 rows (8x4 cells a lane, 4 store warps{NEAR_INT32})"),
    ("int64", True, f"256 rows (8x4 cells a lane, 4 store warps{NEAR_INT32})"),
    ("int32", False, "128 rows (4x2 cells a lane, 2 store warps)"),
    ("int64", False, "128 rows (4x2 cells a lane, 2 store warps)"),
    ("uint32", True, "128 rows (4x2 cells a lane, 2 store warps)")])
def test_strips_take_their_block_by_cell_type(dtype, narrow, block, write_rec):
    # 4-byte floats and cells computed in int32 take 8x4 blocks, other cells 4x2, and as
    # many store warps as fit
    from runtime import cuda

    rec = load(write_rec(neighbour_reads("NOSE", (37, 11), far=False, dtype=dtype)))
    res = cuda.strip_fill(rec, BY_CODE["NOSE"].index, narrow=narrow)
    assert res.kernel == f"register strips of {block}"
    _same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32", "float64"])
def test_strips_hand_every_cell_type_to_the_strip_below(dtype, write_rec):
    # boundary values of 1 word (4 bytes) and 2 words (8 bytes; int64 in the tests
    # above), floats bit for bit
    from runtime import cuda

    rec = load(write_rec(neighbour_reads("SONE", (70, 9), far=False, dtype=dtype)))
    res = cuda.strip_fill(rec, BY_CODE["SONE"].index, 1, cols_per_step=2)
    _same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("code, dtype", [("NOSE", "int32"), ("NESO", "int64"), ("SENO", "float32")])
def test_strips_hand_rows_down_through_a_ring_of_two_slots(code, dtype, write_rec):
    # seven strips of 32 rows share the two slots of the whole-table fill's boundary ring
    # (each slot rewritten three times), as the score's strips do
    from runtime import cuda

    rec = load(write_rec(neighbour_reads(code, (200, 13), far=False, dtype=dtype)))
    _, _, (ring, _), (strips, slots) = cuda._strip_kernel(rec, BY_CODE[code].index, 1, 2, False)
    assert (strips, slots) == (7, 2) and ring.size == 2 * (13 + 2) * cuda._words(rec.dtype)
    res = cuda.strip_fill(rec, BY_CODE[code].index, 1, cols_per_step=2)
    _same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("code, shape, dtype, C", [
    ("NOSE", (70, 9), "int32", 2), ("SENO", (69, 11), "float32", 4),
    ("SONE", (69, 10), "int32", 4), ("NESO", (70, 11), "float32", 2),
    ("NOSE", (2, 41), "uint32", 4)])
def test_strips_store_four_byte_cells_in_pairs(code, shape, dtype, C, write_rec):
    # without store warps, blocks of even R and C store two 4-byte cells an 8-byte word:
    # every flip of rows and columns, odd and even table sizes (which shift the pairs),
    # full and partial blocks; the table matches the reference cell for cell
    from runtime import cuda

    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = cuda.strip_fill(rec, BY_CODE[code].index, 2, cols_per_step=C, store_warps=0)
    note = NEAR_INT32 if dtype == "int32" else ""
    assert res.kernel == f"register strips of 64 rows (2x{C} cells a lane{note})"
    _same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("code, shape, R, C, K, dtype, narrow", [
    ("SENO", (70, 9), 2, 2, 1, "int32", True), ("SONE", (37, 35), 1, 4, 2, "int64", False),
    ("NESO", (70, 70), 4, 2, 1, "float32", True), ("NOSE", (1, 40), 2, 4, 4, "int32", False),
    ("NOSE", (40, 1), 1, 2, 1, "int64", True), ("SENO", (101, 3), 1, 1, 2, "float64", True),
    ("SONE", (300, 21), 8, 4, 4, "float32", True), ("NESO", (130, 19), 4, 8, 4, "int32", True),
    ("SENO", (260, 7), 8, 4, 2, "float64", True),
    ("SONE", (33, 66), 3, 2, 0, "int64", True), ("NESO", (33, 20), 3, 2, 0, "int64", False)])
def test_strips_store_through_store_warps(code, shape, R, C, K, dtype, narrow, write_rec):
    # K warps beside the compute warp store its cells from a ring in shared memory: every
    # flip, tables thinner than a block, several strips, runs cut by the table's edges,
    # batches of 4 steps and (8x4 blocks of 8-byte cells, whose ring of 4 would not fit) of
    # 2; K = 0 (3 rows a lane, where the default count's runs would not cover a strip
    # evenly) stores as before; integer cells computed in int32 (int64 ones widened as they
    # are stored) or as numba types them
    from runtime import cuda

    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = cuda.strip_fill(rec, BY_CODE[code].index, R, cols_per_step=C, store_warps=K,
                          narrow=narrow)
    _same(res.table, make_plan(rec).reference)
    note = NEAR_INT32 if narrow and dtype.startswith("int") else ""
    assert res.kernel.replace(", 16-byte stores", "").endswith(  # vectors: on by default
        f", {K} store warps{note})" if K else f" cells a lane{note})")


@pytest.mark.parametrize("code, shape, R, C, dtype, vectors, diagonals, stored", [
    ("NOSE", (300, 36), 8, 4, "int32", True, True, True),
    ("SONE", (100, 24), 8, 4, "float32", True, False, True),
    ("NOSE", (1, 40), 2, 4, "int32", True, False, True),
    ("SENO", (70, 40), 2, 4, "int32", True, True, False),
    ("NOSE", (65, 9), 8, 4, "int32", True, False, False),
    ("NOSE", (40, 12), 2, 4, "int64", True, True, False)])
def test_strips_with_vectors_and_diagonals(code, shape, R, C, dtype, vectors, diagonals, stored,
                                           write_rec):
    # the store warps move 16-byte vectors only where every vector is one aligned word of
    # the ring and the table (4-byte cells, columns not flipped, a multiple of 4 columns:
    # not SENO's flipped columns, 9 columns, int64 cells); the order of a block's cells
    # changes the code, not the table
    from runtime import cuda

    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = cuda.strip_fill(rec, BY_CODE[code].index, R, cols_per_step=C, store_warps=4,
                          vectors=vectors, diagonals=diagonals)
    _same(res.table, make_plan(rec).reference)
    assert ("16-byte stores" in res.kernel) == stored
    assert ("anti-diagonals" in res.kernel) == diagonals


def _clamped_reads(shape: tuple[int, int]) -> str:
    """A nearest-neighbour NOSE recurrence whose loads of its arguments stay in the cell
    (an index through ``max``: not an index expression the kernels take out), so the
    cell does not run anywhere: past the table's last row, ``X[max(i, 0)]`` leaves ``X``."""
    n, m = shape
    return f"""
X = np.arange({n}, dtype=np.int64) * 7 % 11
Y = np.arange({m}, dtype=np.int64) * 5 % 13

@recurrence(shape={shape}, dtype=np.int64, args=(X, Y))
def rec(M, i, j, X, Y):
    total = X[max(i, 0)] + 2 * Y[max(j, 0)]
    if i > 0:
        total += M[i - 1, j]
        if j > 0:
            total += 3 * M[i - 1, j - 1]
    if j > 0:
        total += M[i, j - 1]
    return total % 1000003
"""


def test_strip_order_is_rows_where_nothing_is_timed(write_rec):
    # under the simulator (and without store warps) the strips take rows, and say nothing
    # of a choice
    from runtime import cuda

    rec = load(write_rec(neighbour_reads("NOSE", (40, 44), far=False)))
    assert cuda.strip_order(rec, BY_CODE["NOSE"].index, 8, 4, 4, None, True) is False
    assert cuda.strip_order(rec, BY_CODE["NOSE"].index, 8, 4, 0, None, True) is False
    res = cuda.strip_fill(rec, BY_CODE["NOSE"].index)
    assert "chosen" not in res.kernel and "anti-diagonals" not in res.kernel
    _same(res.table, make_plan(rec).reference)


def test_strip_orders_kept_on_disk(tmp_path, monkeypatch):
    from runtime import cuda

    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path / "cache"))
    assert cuda._cached_orders() == {}
    cuda._keep_order("a", True)
    cuda._keep_order("b", False)
    assert cuda._cached_orders() == {"a": True, "b": False}
    assert (tmp_path / "cache" / "strip-orders.json").exists()
    (tmp_path / "cache" / "strip-orders.json").write_text("{not json")
    assert cuda._cached_orders() == {}  # a damaged file: chosen again
    cuda._keep_order("c", True)
    assert cuda._cached_orders() == {"c": True}


def test_strip_order_digest_names_the_cell_the_device_and_the_kernel(write_rec, monkeypatch):
    from runtime import cuda
    from runtime.cache import compile_source

    one = load(write_rec(neighbour_reads("NOSE", (40, 44), far=False)))
    two = load(write_rec(neighbour_reads("NOSE", (40, 44), far=False, dtype="float32")))
    digest = cuda._order_digest(one, "GPU A", ("NOSE", 8, 4, 4, True, None))
    assert digest == cuda._order_digest(one, "GPU A", ("NOSE", 8, 4, 4, True, None))
    # the same cell with a nested code object, compiled twice: one digest (no addresses)
    src = "def nested(M, i, j):\n    return sum(k for k in range(i)) + j\n"
    twice = [recurrence(shape=(4, 4), dtype=np.int32)(compile_source(src, "nested", {}))
             for _ in range(2)]
    assert repr(twice[0].func.__code__.co_consts) != repr(twice[1].func.__code__.co_consts)
    assert cuda._order_digest(twice[0], "GPU A", ()) == cuda._order_digest(twice[1], "GPU A", ())
    assert len({digest, cuda._order_digest(one, "GPU B", ("NOSE", 8, 4, 4, True, None)),
                cuda._order_digest(one, "GPU A", ("NOSE", 8, 4, 2, True, None)),
                cuda._order_digest(two, "GPU A", ("NOSE", 8, 4, 4, True, None))}) == 4
    # a new version of the kernels' source makes the kept orders stale
    monkeypatch.setattr(cuda, "STRIP_SOURCE_VERSION", cuda.STRIP_SOURCE_VERSION + 1)
    assert cuda._order_digest(one, "GPU A", ("NOSE", 8, 4, 4, True, None)) != digest


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
def test_strips_compute_whole_blocks_past_the_edge_for_cells_that_run_anywhere(code, write_rec,
                                                                              monkeypatch):
    # 40 x 9: a last strip of 8 rows (32 a strip) and a last block of 1 column (4 a
    # block).  A cell that runs anywhere takes no guarded copy of its block, a cell that
    # loads its arguments itself does (run anywhere, it would load past X's end); both
    # fill the whole table and the score as the reference does
    from runtime import cuda
    from runtime.source import runs_anywhere

    sources: list[str] = []
    build = cuda._strip_source
    monkeypatch.setattr(cuda, "_strip_source", lambda *a: sources.append(build(*a)) or sources[-1])
    shape = (40, 9)
    anywhere = load(write_rec(neighbour_reads(code, shape, far=False)))
    assert runs_anywhere(anywhere.func, 2, ("W",))
    recs = [anywhere]
    if code == "NOSE":
        guarded = load(write_rec(_clamped_reads(shape)))
        assert not runs_anywhere(guarded.func, 2, ("X", "Y"))
        recs.append(guarded)
    for rec in recs:
        ref = make_plan(rec).reference
        _same(cuda.strip_fill(rec, BY_CODE[code].index, 1, cols_per_step=4).table, ref)
        score = cuda.strip_score_fill(rec, BY_CODE[code].index, 1, 4)
        _same(np.asarray(score.value), ref[score.cell])
    checks = ["if ub + 0 < n and v0 + 3 < m:" in src for src in sources]
    assert checks == [False, False] + ([True, True] if code == "NOSE" else [])


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
def test_strips_apply_a_cells_guards_last(code, write_rec, monkeypatch):
    # 40 x 9 (a last strip of 8 rows, a last block of 1 column): a cell written with
    # guards on the frame's first row and column and on its data is computed whole at
    # every cell, its guards applied last (runtime.speculate), and fills the table and
    # the score as the reference does
    from runtime import cuda, speculate

    done: list[bool] = []
    build = speculate.speculate
    monkeypatch.setattr(speculate, "speculate",
                        lambda fn, calls=(): done.append(build(fn, calls)) or done[-1])
    rec = load(write_rec(guarded_reads(code, (40, 9))))
    ref = make_plan(rec).reference
    _same(cuda.strip_fill(rec, BY_CODE[code].index, 1, cols_per_step=4).table, ref)
    score = cuda.strip_score_fill(rec, BY_CODE[code].index, 1, 4)
    _same(np.asarray(score.value), ref[score.cell])
    assert done == [True]  # one cell function for both, its guards applied last


def test_store_warps_cover_the_strip_and_fit_in_shared_memory(write_rec):
    # by default as many store warps as keep a lane at 32 cells a batch (2 to 4), none
    # when their runs would not cover a strip or their ring would not fit; a count asked
    # for that does either is an error
    from runtime import cuda

    i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    assert [cuda.strip_store_warps(R, C, i4) for R, C in ((4, 2), (8, 4), (1, 1), (3, 2))] == [
        2, 4, 2, 0]
    assert cuda.strip_store_warps(8, 8, i4) == 4 and cuda.strip_store_warps(8, 8, i8) == 0
    rec = load(write_rec(neighbour_reads("NOSE", (40, 9), far=False)))
    with pytest.raises(ValueError, match="3 store warps do not cover strips of 4x2 blocks"):
        cuda.strip_fill(rec, BY_CODE["NOSE"].index, 4, cols_per_step=2, store_warps=3)
    with pytest.raises(ValueError, match="would take 66592 bytes of shared memory"):
        cuda.strip_fill(rec, BY_CODE["NOSE"].index, 8, cols_per_step=8, store_warps=4,
                        narrow=False)  # int64 cells; in int32 (by default here) they fit


def test_tiled_fill_takes_strips_for_nearest_reads(write_rec):
    from runtime import cuda

    rec = load(write_rec(neighbour_reads("NESO", (6, 5), far=False)))
    res = cuda.tiled_fill(rec, BY_CODE["NESO"].index, 4)
    assert res.kernel == f"register strips of 256 rows (8x4 cells a lane, 4 store warps{NEAR_INT32})"
    _same(res.table, make_plan(rec).reference)


def test_farther_reads_leave_the_strips_for_tiles(write_rec):
    from runtime import cuda

    rec = load(write_rec(neighbour_reads("NOSE", (9, 7), far=True)))
    with pytest.raises(ValueError, match="nearest"):
        cuda.strip_fill(rec, BY_CODE["NOSE"].index)
    res = cuda.tiled_fill(rec, BY_CODE["NOSE"].index, 4)
    assert res.kernel.startswith("shared-memory tiles")
    _same(res.table, make_plan(rec).reference)


def test_score_fill_needs_reads_at_constant_offsets():
    from runtime import cuda
    from runtime.source import SourceUnavailable

    rec = make_stencil(pattern_offsets(np.random.default_rng(1), "NOSE", reach=2, count=2),
                       (5, 5), 1, np.int64)
    with pytest.raises(SourceUnavailable, match="not at a constant offset"):
        cuda.score_fill(rec, BY_CODE["NOSE"].index)
    with pytest.raises(ValueError, match="outside SENO"):
        cuda.score_fill(load_lcs(), BY_CODE["SENO"].index)
    with pytest.raises(ValueError, match="diagonal patterns"):
        cuda.score_fill(load_lcs(), BY_CODE["RUD"].index)


def load_lcs():
    import lcs

    return lcs.make_lcs(b"AGCGTAG", b"GTCAGA")


@pytest.mark.parametrize("code, unroll", [(c, 1 + k % 3) for k, c in enumerate(CANONICAL)])
def test_cooperative_fill_every_pattern(code, unroll):
    # 2 threads, up to 3 cells a thread before the stores: full rounds and remainders
    from runtime import cuda

    rng = np.random.default_rng(CANONICAL.index(code))
    rec = make_stencil(pattern_offsets(rng, code, reach=3, count=3), (7, 5), 4, np.float64)
    plan = make_plan(rec)
    p = BY_CODE[code]
    res = cuda.cooperative_fill(rec, p.index, "F" if p.storage == "columns" else "C", threads=2,
                                unroll=unroll)
    assert res.launches == 1 and res.kernel == "one cooperative launch"
    _same(res.table, plan.reference)


def test_cooperative_fill_of_one_family_at_two_sizes():
    # the sizes share the cell function and so its compiled kernels: the step count is
    # the launch's, not the kernel's (a kernel compiled for 7 steps ran off a 4-row table)
    import knapsack
    from runtime import cuda

    for items in (6, 3):
        rec = knapsack.make_knapsack(np.arange(1, items + 1), np.arange(2, items + 2), 9)
        res = cuda.cooperative_fill(rec, BY_CODE["RUD"].index, threads=4, unroll=2)
        _same(res.table, make_plan(rec).reference)


#: Row and column patterns with a diagonal pattern that also fits their reads.
LINE_FRAMES = [("RUD", "NOSE"), ("RUD", "NESO"), ("RDU", "SONE"), ("RDU", "SENO"),
               ("CLR", "NOSE"), ("CLR", "SONE"), ("CRL", "NESO"), ("CRL", "SENO")]


@pytest.mark.parametrize("code, frame", LINE_FRAMES)
def test_band_fill_rows_and_columns(code, frame):
    # bands over a 7 x 9 table (no side a multiple of the bands), 2 threads with 2 or 3
    # cells each a round (the last cells of a band past its end), reads reaching 3 cells,
    # several bands back; then the same bands without the frame, each read waiting on its
    # band, in several blocks where the walk's own bands put the bands read first (the
    # simulator runs blocks one after another), in the window and cell by cell
    from patterns import DIAGONAL_FLIPS
    from runtime import cuda
    from stencil import SIGNS

    rng = np.random.default_rng(LINE_FRAMES.index((code, frame)))
    regions = sorted(BY_CODE[code].allowed & BY_CODE[frame].allowed)
    offsets = {tuple(int(s * rng.integers(1, 4)) for s in SIGNS[regions[k % 2]]) for k in range(4)}
    rec = make_stencil(np.array(sorted(offsets)), (7, 9), 5, np.int64)
    plan = make_plan(rec)
    assert code in plan.patterns and frame in plan.patterns
    pi = BY_CODE[code].pi
    some = 3 if DIAGONAL_FLIPS[frame] == (pi[0] < 0, pi[1] < 0) else None
    for wait, blocks, unroll in ((frame, 3, 2), (frame, 2, 3), (None, some, 1), (None, some, 2)):
        res = cuda.band_fill(rec, BY_CODE[code].index, wait, threads=2, blocks=blocks,
                             unroll=unroll)
        assert res.launches == 1 and res.kernel.startswith("bands of ")
        _same(res.table, plan.reference)


def test_band_fill_computes_in_int32_when_proven_exact():
    # knapsacks of fresh items: one whose values stay in int32 is computed there (the
    # window and the kept registers in int32, the table int64), with the frame and
    # without, in the window and cell by cell; one whose table passes 2**31 is not, and
    # both tables are exact
    import knapsack
    from runtime import cuda

    rng = np.random.default_rng()
    small = knapsack.make_knapsack(rng.integers(1, 6, 6), rng.integers(1, 1000, 6), 13)
    big = knapsack.make_knapsack(rng.integers(1, 6, 6), rng.integers(2**30, 2**31, 6), 13)
    assert make_plan(big).reference.max() >= 2**31
    for rec in (small, big):
        plan = make_plan(rec)
        for frame, blocks, unroll in (("NOSE", 3, 2), ("NOSE", 2, 1), (None, 1, 2), (None, 1, 1)):
            res = cuda.band_fill(rec, BY_CODE["RUD"].index, frame, threads=2, blocks=blocks,
                                 unroll=unroll)
            narrowed = "int32 arithmetic, proven exact for values 0.." in res.kernel
            assert narrowed == (rec is small)
            _same(res.table, plan.reference)
    res = cuda.band_fill(small, BY_CODE["RUD"].index, "NOSE", threads=2, blocks=3, unroll=2,
                         narrow=False)
    assert "int32" not in res.kernel
    _same(res.table, make_plan(small).reference)


#: Reads of the step before on both sides, for each row and column pattern: no diagonal
#: pattern fits them.
BOTH_SIDES = {"RUD": [(-1, -2), (-1, 3), (-2, 1), (-1, 0)], "RDU": [(1, -3), (1, 2), (2, 0)],
              "CLR": [(-2, -1), (3, -1), (1, -2)], "CRL": [(-1, 1), (2, 1), (0, 2)]}


@pytest.mark.parametrize("code", sorted(BOTH_SIDES))
def test_band_fill_reads_on_both_sides_wait_on_their_bands(code):
    from runtime import cuda

    rec = make_stencil(np.array(BOTH_SIDES[code]), (6, 11), 2, np.int64)
    plan = make_plan(rec)
    assert plan.patterns == (code,)
    res = cuda.band_fill(rec, BY_CODE[code].index, None, threads=3, unroll=2)
    assert res.kernel.endswith("each read waiting on its band")
    _same(res.table, plan.reference)


def _far_down(M, i, j, w, X):  # RUD: the row above, near and at a loaded offset
    if i == 0 or j == 0:
        return X[j]
    wi = w[i - 1]
    if wi > j:
        return M[i - 1, j] + X[j]
    return max(M[i - 1, j], M[i - 1, j - wi] + X[j] + w[i - 1])


def _far_up(M, i, j, w, X):  # RDU: the row below
    if i == M.shape[0] - 1 or j == 0:
        return X[j]
    wi = w[i + 1]
    if wi > j:
        return M[i + 1, j] + X[j]
    return max(M[i + 1, j], M[i + 1, j - wi] + X[j] + w[i + 1])


def _far_right(M, i, j, w, X):  # CLR: the column to the left
    if j == 0 or i == 0:
        return X[i]
    wj = w[j - 1]
    if wj > i:
        return M[i, j - 1] + X[i]
    return max(M[i, j - 1], M[i - wj, j - 1] + X[i] + w[j - 1])


def _far_left(M, i, j, w, X):  # CRL: the column to the right
    if j == M.shape[1] - 1 or i == 0:
        return X[i]
    wj = w[j + 1]
    if wj > i:
        return M[i, j + 1] + X[i]
    return max(M[i, j + 1], M[i - wj, j + 1] + X[i] + w[j + 1])


@pytest.mark.parametrize("code, cell", [("RUD", _far_down), ("RDU", _far_up),
                                        ("CLR", _far_right), ("CRL", _far_left)])
def test_band_fill_loads_a_steps_arguments_ahead(code, cell):
    # the loads of w by the step's index are the kernel's, a step ahead (X's, by the
    # cell's place along the step, stay the cell's): fresh weights, some past the table.
    # Bands of 4, 5 and 10 cells: one round of 2 x 2 or 2 x 3 cells covers the first two
    # (the step kept in the window and registers, a cell of the round past the band's
    # end), 2 x 1 covers neither (a cell at a time, reads from global memory)
    from runtime import cuda

    rng = np.random.default_rng()
    steps, across = 7, 10
    shape = (steps, across) if code in ("RUD", "RDU") else (across, steps)
    rec = recurrence(shape=shape, dtype=np.int64, args=(rng.integers(1, across + 2, steps),
                                                        rng.integers(-5, 9, across)))(cell)
    plan = make_plan(rec)
    frames = [f for f in plan.patterns if f in DIAGONAL_FLIPS]
    assert code in plan.patterns and frames
    for frame, blocks, unroll in ((frames[0], 3, 2), (frames[0], 2, 3), (frames[0], 3, 1),
                                  (None, 2, 1)):
        res = cuda.band_fill(rec, BY_CODE[code].index, frame, threads=2, blocks=blocks,
                             unroll=unroll)
        _same(res.table, plan.reference)


def test_band_fill_is_for_rows_and_columns():
    from runtime import cuda

    with pytest.raises(ValueError, match="not NOSE"):
        cuda.band_fill(make_stencil(np.array([(-1, 0)]), (3, 3), 0), BY_CODE["NOSE"].index)


def test_light_rows_take_the_cost_models_kernel_on_cuda():
    import binomial

    r = fill(binomial.make_binomial(20), backend="cuda", verify=True)
    assert r.schedule == "pattern" and r.verified
    kernel = next(x for x in r.notes if x.startswith("kernel: "))
    assert kernel.startswith("kernel: register strips") and kernel.endswith(": strips")


def test_a_gpu_fill_larger_than_the_free_device_memory_says_so(write_rec, monkeypatch, capsys):
    # checked before any device allocation: an error naming the sizes, exit status 1, no
    # CUDA traceback; the same check covers a score's window on the device
    from depgraph.cli import main
    from depgraph.errors import TooLargeError
    from runtime import cuda
    from runtime.score import score

    monkeypatch.setattr(cuda, "free_memory", lambda: 1000.0)
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
    monkeypatch.setattr(cuda, "free_memory", lambda: 100.0)
    with pytest.raises(TooLargeError, match=r"the GPU score needs [0-9.]+ kB on the device \(the "
                       r"cells it keeps [0-9.]+ kB, args and schedule [0-9.]+ kB\), more than "
                       r"the 0.1 kB free; fill on the CPU \(--backend cpu\)$"):
        score(load(path), "cuda")


def _wrapped_weight(M, i, j, w):  # RUD: at i = 0, w[i - 2] is Python's last weight but one
    s = w[i - 2] + j
    if i == 0:
        return s
    return max(M[i - 1, j], M[i - 1, max(j - w[i - 1], 0)]) + s


def test_band_fill_loads_at_a_negative_index_as_python_does():
    # the kernel's loads a step ahead, at steps 0 and 1, are w[-2] and w[-1], which the
    # cell uses: the 32-bit index form reads the weight Python's wraparound does
    from runtime import cuda

    rng = np.random.default_rng()
    rec = recurrence(shape=(6, 11), dtype=np.int64, args=(rng.integers(1, 13, 6),))(
        _wrapped_weight)
    plan = make_plan(rec)
    assert "NOSE" in plan.patterns and plan.reference[0, 0] == rec.args[0][-2]
    for unroll in (2, 1):
        res = cuda.band_fill(rec, BY_CODE["RUD"].index, "NOSE", threads=2, blocks=3,
                             unroll=unroll)
        _same(res.table, plan.reference)


def test_band_fill_compiles_again_for_another_table_type():
    # one cell function, float32 cells then float64: the second fill's window holds
    # float64, not the first's float32 (a cached kernel of the first would round them)
    from runtime import cuda

    for dtype in (np.float32, np.float64):
        rec = make_stencil(np.array([(-1, -1), (-1, 0), (-2, -1)]), (6, 9), 4, dtype)
        res = cuda.band_fill(rec, BY_CODE["RUD"].index, "NOSE", threads=2, blocks=3, unroll=2)
        assert res.table.dtype == dtype
        _same(res.table, make_plan(rec).reference)
