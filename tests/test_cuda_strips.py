"""The register strips (:mod:`runtime.backends.cuda.strips`, ``strip_source``,
``strip_layout``) under the simulator: every frame, block, cell type and store path."""


import numpy as np
import pytest
from sources import NEAR_INT32, guarded_reads, neighbour_reads, same, slow_after

from depgraph import cell_ir, load, recurrence
from patterns import BY_CODE, DIAGONAL_FLIPS
from runtime.backends.cache import KernelCache
from runtime.backends.cuda import cells, strip_layout, strip_source, strips
from runtime.backends.cuda import score as gpu_score
from runtime.schedule.plan import make_plan


@pytest.mark.parametrize("code, shape, R, C", slow_after(1, [
    ("NOSE", (5, 7), 1, 1), ("SENO", (5, 7), 1, 2), ("SONE", (5, 7), 2, 1), ("NESO", (5, 7), 2, 4),
    ("NOSE", (37, 35), 2, 4), ("SENO", (70, 9), 2, 2), ("NOSE", (1, 40), 2, 4),
    ("NOSE", (40, 1), 1, 2), ("SONE", (70, 70), 1, 4)]))
def test_strip_fill_keeps_cells_in_registers(code, shape, R, C, write_rec):
    # several strips of 32 R rows, blocks of R x C cells, batches of the row above,
    # columns not a multiple of C, thin tables
    rec = load(write_rec(neighbour_reads(code, shape, far=False)))
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, R, cols_per_step=C)
    same(res.table, make_plan(rec).reference)
    K = strip_layout.strip_store_warps(R, C, np.dtype(np.int32))
    assert K == 2
    i4 = np.dtype(np.int32)
    vec = strip_layout.ring_vectors(R, C, K, strip_layout.strip_batch(R, C, i4), DIAGONAL_FLIPS[code][1],
                             shape[1], i4, np.dtype(rec.dtype)) == 4  # on by default
    assert res.kernel == (f"register strips of {32 * R} rows ({R}x{C} cells a lane, {K} store "
                          f"warps{', 16-byte stores' if vec else ''}{NEAR_INT32})")


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


@pytest.mark.parametrize("code, shape, R, C", slow_after(2, [
    ("SENO", (40, 1), 2, 2), ("NOSE", (37, 35), 2, 4), ("SONE", (70, 9), 1, 2),
    ("NESO", (1, 40), 1, 4), ("NOSE", (65, 300), 2, 4)]))
def test_strips_load_the_cells_arguments_ahead(code, shape, R, C, write_rec):
    # the kernel makes the cell's loads at index expressions of its indices, each clamped
    # into its array: once a strip by row (through shared memory), a batch ahead by column
    # only (through a window in shared memory, which 300 columns wrap), a step ahead by both
    rec = load(write_rec(_loading_reads(code, shape)))
    arrays, loads = cells.argument_loads(rec, cell_ir(rec))
    assert arrays == ("X", "A", "V", "Y") and len(loads) == 4
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, R, cols_per_step=C)
    same(res.table, make_plan(rec).reference)
    score = gpu_score.strip_score_fill(rec, cell_ir(rec), BY_CODE[code].index, R)
    same(np.asarray(score.value), make_plan(rec).reference[score.cell])


@pytest.mark.parametrize("dtype, narrow, block", slow_after(2, [
    ("float32", True, "256 rows (8x4 cells a lane, 4 store warps)"),
    ("int32", True, f"256 rows (8x4 cells a lane, 4 store warps{NEAR_INT32})"),
    ("int64", True, f"256 rows (8x4 cells a lane, 4 store warps{NEAR_INT32})"),
    ("int32", False, "128 rows (4x2 cells a lane, 2 store warps)"),
    ("int64", False, "128 rows (4x2 cells a lane, 2 store warps)"),
    ("uint32", True, "128 rows (4x2 cells a lane, 2 store warps)")]))
def test_strips_take_their_block_by_cell_type(dtype, narrow, block, write_rec):
    # 4-byte floats and cells computed in int32 take 8x4 blocks, other cells 4x2, and as
    # many store warps as fit
    rec = load(write_rec(neighbour_reads("NOSE", (37, 11), far=False, dtype=dtype)))
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index, narrow=narrow)
    assert res.kernel == f"register strips of {block}"
    same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("dtype", slow_after(1, ["float64", "int32", "uint32", "float32"]))
def test_strips_hand_every_cell_type_to_the_strip_below(dtype, write_rec):
    # boundary values of 1 word (4 bytes) and 2 words (8 bytes; int64 in the tests
    # above), floats bit for bit
    rec = load(write_rec(neighbour_reads("SONE", (70, 9), far=False, dtype=dtype)))
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE["SONE"].index, 1, cols_per_step=2)
    same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("code, dtype", slow_after(1, [("NOSE", "int32"), ("NESO", "int64"),
                                                      ("SENO", "float32")]))
def test_strips_hand_rows_down_through_a_ring_of_two_slots(code, dtype, write_rec):
    # seven strips of 32 rows share the two slots of the whole-table fill's boundary ring
    # (each slot rewritten three times), as the score's strips do
    rec = load(write_rec(neighbour_reads(code, (200, 13), far=False, dtype=dtype)))
    _, _, (ring, _), (count, slots) = strips.strip_kernel(rec, cell_ir(rec), BY_CODE[code].index, 1, 2, False)
    assert (count, slots) == (7, 2) and ring.size == 2 * (13 + 2) * strips.words_of(rec.dtype)
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, 1, cols_per_step=2)
    same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("code, shape, dtype, C", slow_after(1, [
    ("NOSE", (2, 41), "uint32", 4), ("NOSE", (70, 9), "int32", 2),
    ("SENO", (69, 11), "float32", 4), ("SONE", (69, 10), "int32", 4),
    ("NESO", (70, 11), "float32", 2)]))
def test_strips_store_four_byte_cells_in_pairs(code, shape, dtype, C, write_rec):
    # without store warps, blocks of even R and C store two 4-byte cells an 8-byte word:
    # every flip of rows and columns, odd and even table sizes (which shift the pairs),
    # full and partial blocks; the table matches the reference cell for cell
    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, 2, cols_per_step=C, store_warps=0)
    note = NEAR_INT32 if dtype == "int32" else ""
    assert res.kernel == f"register strips of 64 rows (2x{C} cells a lane{note})"
    same(res.table, make_plan(rec).reference)


@pytest.mark.parametrize("code, shape, R, C, K, dtype, narrow", slow_after(2, [
    ("NOSE", (1, 40), 2, 4, 4, "int32", False), ("NESO", (33, 20), 3, 2, 0, "int64", False),
    ("SENO", (70, 9), 2, 2, 1, "int32", True), ("SONE", (37, 35), 1, 4, 2, "int64", False),
    ("NESO", (70, 70), 4, 2, 1, "float32", True), ("NOSE", (40, 1), 1, 2, 1, "int64", True),
    ("SENO", (101, 3), 1, 1, 2, "float64", True), ("SONE", (300, 21), 8, 4, 4, "float32", True),
    ("NESO", (130, 19), 4, 8, 4, "int32", True), ("SENO", (260, 7), 8, 4, 2, "float64", True),
    ("SONE", (33, 66), 3, 2, 0, "int64", True)]))
def test_strips_store_through_store_warps(code, shape, R, C, K, dtype, narrow, write_rec):
    # K warps beside the compute warp store its cells from a ring in shared memory: every
    # flip, tables thinner than a block, several strips, runs cut by the table's edges,
    # batches of 4 steps and (8x4 blocks of 8-byte cells, whose ring of 4 would not fit) of
    # 2; K = 0 (3 rows a lane, where the default count's runs would not cover a strip
    # evenly) stores as before; integer cells computed in int32 (int64 ones widened as they
    # are stored) or as numba types them
    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, R, cols_per_step=C, store_warps=K,
                          narrow=narrow)
    same(res.table, make_plan(rec).reference)
    note = NEAR_INT32 if narrow and dtype.startswith("int") else ""
    assert res.kernel.replace(", 16-byte stores", "").endswith(  # vectors: on by default
        f", {K} store warps{note})" if K else f" cells a lane{note})")


@pytest.mark.parametrize("code, shape, R, C, dtype, vectors, diagonals, stored", slow_after(2, [
    ("NOSE", (65, 9), 8, 4, "int32", True, False, False),
    ("NOSE", (40, 12), 2, 4, "int64", True, True, False),
    ("NOSE", (300, 36), 8, 4, "int32", True, True, True),
    ("SONE", (100, 24), 8, 4, "float32", True, False, True),
    ("NOSE", (1, 40), 2, 4, "int32", True, False, True),
    ("SENO", (70, 40), 2, 4, "int32", True, True, False)]))
def test_strips_with_vectors_and_diagonals(code, shape, R, C, dtype, vectors, diagonals, stored,
                                           write_rec):
    # the store warps move 16-byte vectors only where every vector is one aligned word of
    # the ring and the table (4-byte cells, columns not flipped, a multiple of 4 columns:
    # not SENO's flipped columns, 9 columns, int64 cells); the order of a block's cells
    # changes the code, not the table
    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, R, cols_per_step=C, store_warps=4,
                          vectors=vectors, diagonals=diagonals)
    same(res.table, make_plan(rec).reference)
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
    rec = load(write_rec(neighbour_reads("NOSE", (40, 44), far=False)))
    assert strips.strip_order(rec, cell_ir(rec), BY_CODE["NOSE"].index, 8, 4, 4, None, True) is False
    assert strips.strip_order(rec, cell_ir(rec), BY_CODE["NOSE"].index, 8, 4, 0, None, True) is False
    res = strips.strip_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index)
    assert "chosen" not in res.kernel and "anti-diagonals" not in res.kernel
    same(res.table, make_plan(rec).reference)


def test_strip_orders_kept_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path / "cache"))
    assert strips._cached_orders() == {}
    strips._keep_order("a", True)
    strips._keep_order("b", False)
    assert strips._cached_orders() == {"a": True, "b": False}
    assert (tmp_path / "cache" / "strip-orders.json").exists()
    (tmp_path / "cache" / "strip-orders.json").write_text("{not json")
    assert strips._cached_orders() == {}  # a damaged file: chosen again
    strips._keep_order("c", True)
    assert strips._cached_orders() == {"c": True}


def test_strip_order_digest_names_the_cell_the_device_and_the_kernel(write_rec):
    from runtime.backends.emit import compile_source

    one = load(write_rec(neighbour_reads("NOSE", (40, 44), far=False)))
    two = load(write_rec(neighbour_reads("NOSE", (40, 44), far=False, dtype="float32")))
    digest = strips._order_digest(one, "GPU A", ["rows", "diagonals"], None)
    assert digest == strips._order_digest(one, "GPU A", ["rows", "diagonals"], None)
    # the same cell with a nested code object, compiled twice: one digest (no addresses)
    src = "def nested(M, i, j):\n    return sum(k for k in range(i)) + j\n"
    twice = [recurrence(shape=(4, 4), dtype=np.int32)(compile_source(src, "nested", {}))
             for _ in range(2)]
    assert repr(twice[0].func.__code__.co_consts) != repr(twice[1].func.__code__.co_consts)
    assert (strips._order_digest(twice[0], "GPU A", [], None)
            == strips._order_digest(twice[1], "GPU A", [], None))
    # the device, the cell's type and the kernels' generated source each change it
    assert len({digest, strips._order_digest(one, "GPU B", ["rows", "diagonals"], None),
                strips._order_digest(one, "GPU A", ["rows", "diagonals 2"], None),
                strips._order_digest(two, "GPU A", ["rows", "diagonals"], None)}) == 4


def test_strip_order_digest_follows_the_generated_source(write_rec, monkeypatch):
    # what strip_order keys its kept choice by: a change to either kernel's source, of any
    # parameter, is a change of key, with no version kept by hand
    rec = load(write_rec(neighbour_reads("NOSE", (70, 44), far=False)))
    seen = []
    monkeypatch.setattr(strips, "_orders_timed", lambda K: True)
    monkeypatch.setattr(strips, "_cached_orders", lambda: {})
    monkeypatch.setattr(strips, "_keep_order", lambda key, chosen: seen.append(key))
    monkeypatch.setattr(strips, "_strips", lambda *a, **k: type("F", (), {"compute_s": 1.0})())
    index = BY_CODE["NOSE"].index
    for C in (4, 2, 4):
        strips.strip_order(rec, cell_ir(rec), index, 8, C, 4, None, True)
    assert len(seen) == 2 and seen[0] != seen[1]  # the third call found the first's key
    build = strip_source.strip_source
    monkeypatch.setattr(strips, "strip_source", lambda *a: build(*a) + "# changed\n")
    strips.strip_order(rec, cell_ir(rec), index, 8, 4, 4, None, True)
    assert len(seen) == 3 and seen[2] not in seen[:2]


def test_strip_orders_are_timed_only_for_a_fill_long_enough_to_repay_it(write_rec, monkeypatch):
    # a fill predicted short takes rows untimed and keeps nothing; a long one times both
    # orders and keeps the faster, which a short fill of the same kernel then takes
    rec = load(write_rec(neighbour_reads("NOSE", (70, 44), far=False)))
    kept, timed = {}, []
    monkeypatch.setattr(strips, "_orders_timed", lambda K: True)
    monkeypatch.setattr(strips, "_cached_orders", lambda: dict(kept))
    monkeypatch.setattr(strips, "_keep_order", kept.__setitem__)
    monkeypatch.setattr(strips, "CACHE", KernelCache())

    def fake(probe, ir, index, R, C, K, nw, vectors, order, copy_back, staged):
        timed.append(order)
        return type("F", (), {"compute_s": 1.0 if order else 2.0})()

    monkeypatch.setattr(strips, "_strips", fake)
    index, short = BY_CODE["NOSE"].index, strips.ORDER_TIMED_FROM_S / 2
    assert strips.strip_order(rec, cell_ir(rec), index, 8, 4, 4, None, True, short) is None
    assert timed == [] and kept == {}
    assert strips.strip_order(rec, cell_ir(rec), index, 8, 4, 4, None, True, 2.0) is True
    assert sorted(set(timed)) == [False, True] and list(kept.values()) == [True]
    monkeypatch.setattr(strips, "CACHE", KernelCache())  # a later process
    assert strips.strip_order(rec, cell_ir(rec), index, 8, 4, 4, None, True, short) is True


@pytest.mark.parametrize("code", slow_after(1, ["NOSE", "SENO", "SONE", "NESO"]))
def test_strips_compute_whole_blocks_past_the_edge_for_cells_that_run_anywhere(code, write_rec,
                                                                              monkeypatch):
    # 40 x 9: a last strip of 8 rows (32 a strip) and a last block of 1 column (4 a
    # block).  A cell that runs anywhere takes no guarded copy of its block, a cell that
    # loads its arguments itself does (run anywhere, it would load past X's end); both
    # fill the whole table and the score as the reference does
    sources: list[str] = []
    build = strip_source.strip_source
    monkeypatch.setattr(strips, "strip_source", lambda *a: sources.append(build(*a)) or sources[-1])
    shape = (40, 9)
    anywhere = load(write_rec(neighbour_reads(code, shape, far=False)))
    assert cell_ir(anywhere).runs_anywhere(("W",))
    recs = [anywhere]
    if code == "NOSE":
        guarded = load(write_rec(_clamped_reads(shape)))
        assert not cell_ir(guarded).runs_anywhere(("X", "Y"))
        recs.append(guarded)
    for rec in recs:
        ref = make_plan(rec).reference
        same(strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, 1, cols_per_step=4).table, ref)
        score = gpu_score.strip_score_fill(rec, cell_ir(rec), BY_CODE[code].index, 1, 4)
        same(np.asarray(score.value), ref[score.cell])
    checks = ["if ub + 0 < n and v0 + 3 < m:" in src for src in sources]
    assert checks == [False, False] + ([True, True] if code == "NOSE" else [])


@pytest.mark.parametrize("code", slow_after(1, ["NESO", "NOSE", "SENO", "SONE"]))
def test_strips_apply_a_cells_guards_last(code, write_rec, monkeypatch):
    # 40 x 9 (a last strip of 8 rows, a last block of 1 column): a cell written with
    # guards on the frame's first row and column and on its data is computed whole at
    # every cell, its guards applied last (runtime.backends.speculate), and fills the
    # table and the score as the reference does
    from runtime.backends import speculate

    done: list[bool] = []
    build = speculate.speculate
    monkeypatch.setattr(speculate, "speculate",
                        lambda fn, calls=(): done.append(build(fn, calls)) or done[-1])
    built: list[str] = []
    remember = cells.remember
    monkeypatch.setattr(cells, "remember", lambda f, key: built.append(key) or remember(f, key))
    rec = load(write_rec(guarded_reads(code, (40, 9))))
    ref = make_plan(rec).reference
    same(strips.strip_fill(rec, cell_ir(rec), BY_CODE[code].index, 1, cols_per_step=4).table, ref)
    score = gpu_score.strip_score_fill(rec, cell_ir(rec), BY_CODE[code].index, 1, 4)
    same(np.asarray(score.value), ref[score.cell])
    assert done and all(done)  # its guards applied last, wherever it is rewritten
    assert len(built) == 1  # one cell function for both


def test_store_warps_cover_the_strip_and_fit_in_shared_memory(write_rec):
    # by default as many store warps as keep a lane at 32 cells a batch (2 to 4), none
    # when their runs would not cover a strip or their ring would not fit; a count asked
    # for that does either is an error
    i4, i8 = np.dtype(np.int32), np.dtype(np.int64)
    assert [strip_layout.strip_store_warps(R, C, i4) for R, C in ((4, 2), (8, 4), (1, 1), (3, 2))] == [
        2, 4, 2, 0]
    assert strip_layout.strip_store_warps(8, 8, i4) == 4 and strip_layout.strip_store_warps(8, 8, i8) == 0
    rec = load(write_rec(neighbour_reads("NOSE", (40, 9), far=False)))
    with pytest.raises(ValueError, match="3 store warps do not cover strips of 4x2 blocks"):
        strips.strip_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index, 4, cols_per_step=2, store_warps=3)
    with pytest.raises(ValueError, match="would take 66592 bytes of shared memory"):
        strips.strip_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index, 8, cols_per_step=8, store_warps=4,
                        narrow=False)  # int64 cells; in int32 (by default here) they fit


@pytest.mark.parametrize("code, shape, R, C, K", slow_after(2, [
    ("NOSE", (70, 40), 2, 4, None), ("SENO", (65, 9), 1, 4, 2), ("SONE", (40, 33), 2, 2, 4),
    ("NESO", (70, 12), 1, 2, None), ("NOSE", (1, 40), 2, 4, 0)]))
def test_strips_store_warps_load_the_cells_grid(code, shape, R, C, K, write_rec):
    # a load by row and column (A[r, c], 8 bytes a cell) made by the store warps a batch
    # ahead, side by side along a row, into a ring the compute warp reads: every flip,
    # several strips, runs cut by the table's edges, batches of 2 where both rings of 4
    # would not fit; the same table as the compute warp's own loads, and as the reference;
    # none staged without store warps
    rec = load(write_rec(_loading_reads(code, shape)))
    ir = cell_ir(rec)
    assert strips.staged_bytes(rec, ir) == 8
    staged = strips.strip_fill(rec, ir, BY_CODE[code].index, R, cols_per_step=C, store_warps=K)
    own = strips.strip_fill(rec, ir, BY_CODE[code].index, R, cols_per_step=C, store_warps=K,
                            staged=False)
    same(staged.table, make_plan(rec).reference)
    same(own.table, staged.table)
    assert ("store warps loading the cells' arguments" in staged.kernel) == (K != 0)
    assert "loading" not in own.kernel


def test_strips_keep_their_store_warps_where_the_loads_ring_does_not_fit(write_rec):
    # 8x4 blocks and a grid of 8-byte loads: both rings would take more than the shared
    # memory the store warps may have even in batches of 2, so the store warps take the
    # cells alone and the compute warp makes its own loads, as before staged loads
    rec = load(write_rec(_loading_reads("NOSE", (40, 33))))
    ir = cell_ir(rec)
    rt = cells.register_type(rec, strips.strip_narrowing(rec, ir))
    assert strip_layout.strip_store_warps(8, 4, rt, strips.staged_bytes(rec, ir)) == 0
    K = strip_layout.strip_store_warps(8, 4, rt)
    assert K > 0
    res = strips.strip_fill(rec, ir, BY_CODE["NOSE"].index, 8, cols_per_step=4)
    same(res.table, make_plan(rec).reference)
    assert f"{K} store warps" in res.kernel and "loading" not in res.kernel
