"""The bands (:mod:`runtime.backends.cuda.bands`) under the simulator."""


import numpy as np
import pytest
from sources import same
from stencil import make_stencil

from depgraph import cell_ir, recurrence
from patterns import BY_CODE, DIAGONAL_FLIPS
from runtime.backends.cuda import bands
from runtime.schedule.plan import make_plan

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
    from stencil import SIGNS

    from patterns import DIAGONAL_FLIPS

    rng = np.random.default_rng(LINE_FRAMES.index((code, frame)))
    regions = sorted(BY_CODE[code].allowed & BY_CODE[frame].allowed)
    offsets = {tuple(int(s * rng.integers(1, 4)) for s in SIGNS[regions[k % 2]]) for k in range(4)}
    rec = make_stencil(np.array(sorted(offsets)), (7, 9), 5, np.int64)
    plan = make_plan(rec)
    assert code in plan.patterns and frame in plan.patterns
    pi = BY_CODE[code].pi
    some = 3 if DIAGONAL_FLIPS[frame] == (pi[0] < 0, pi[1] < 0) else None
    for wait, blocks, unroll in ((frame, 3, 2), (frame, 2, 3), (None, some, 1), (None, some, 2)):
        res = bands.band_fill(rec, cell_ir(rec), BY_CODE[code].index, wait, threads=2, blocks=blocks,
                             unroll=unroll)
        assert res.launches == 1 and res.kernel.startswith("bands of ")
        same(res.table, plan.reference)


def test_band_fill_computes_in_int32_when_proven_exact():
    # knapsacks of fresh items: one whose values stay in int32 is computed there (the
    # window and the kept registers in int32, the table int64), with the frame and
    # without, in the window and cell by cell; one whose table passes 2**31 is not, and
    # both tables are exact
    import knapsack
    rng = np.random.default_rng()
    small = knapsack.make_knapsack(rng.integers(1, 6, 6), rng.integers(1, 1000, 6), 13)
    big = knapsack.make_knapsack(rng.integers(1, 6, 6), rng.integers(2**30, 2**31, 6), 13)
    assert make_plan(big).reference.max() >= 2**31
    for rec in (small, big):
        plan = make_plan(rec)
        for frame, blocks, unroll in (("NOSE", 3, 2), ("NOSE", 2, 1), (None, 1, 2), (None, 1, 1)):
            res = bands.band_fill(rec, cell_ir(rec), BY_CODE["RUD"].index, frame, threads=2, blocks=blocks,
                                 unroll=unroll)
            narrowed = "int32 arithmetic, proven exact for values 0.." in res.kernel
            assert narrowed == (rec is small)
            same(res.table, plan.reference)
    res = bands.band_fill(small, cell_ir(small), BY_CODE["RUD"].index, "NOSE", threads=2, blocks=3, unroll=2,
                         narrow=False)
    assert "int32" not in res.kernel
    same(res.table, make_plan(small).reference)


#: Reads of the step before on both sides, for each row and column pattern: no diagonal
#: pattern fits them.
BOTH_SIDES = {"RUD": [(-1, -2), (-1, 3), (-2, 1), (-1, 0)], "RDU": [(1, -3), (1, 2), (2, 0)],
              "CLR": [(-2, -1), (3, -1), (1, -2)], "CRL": [(-1, 1), (2, 1), (0, 2)]}


@pytest.mark.parametrize("code", sorted(BOTH_SIDES))
def test_band_fill_reads_on_both_sides_wait_on_their_bands(code):
    rec = make_stencil(np.array(BOTH_SIDES[code]), (6, 11), 2, np.int64)
    plan = make_plan(rec)
    assert plan.patterns == (code,)
    res = bands.band_fill(rec, cell_ir(rec), BY_CODE[code].index, None, threads=3, unroll=2)
    assert res.kernel.endswith("each read waiting on its band")
    same(res.table, plan.reference)


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
        res = bands.band_fill(rec, cell_ir(rec), BY_CODE[code].index, frame, threads=2, blocks=blocks,
                             unroll=unroll)
        same(res.table, plan.reference)


def test_band_fill_is_for_rows_and_columns():
    with pytest.raises(ValueError, match="not NOSE"):
        rec = make_stencil(np.array([(-1, 0)]), (3, 3), 0)
        bands.band_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index)


def _wrapped_weight(M, i, j, w):  # RUD: at i = 0, w[i - 2] is Python's last weight but one
    s = w[i - 2] + j
    if i == 0:
        return s
    return max(M[i - 1, j], M[i - 1, max(j - w[i - 1], 0)]) + s


def test_band_fill_loads_at_a_negative_index_as_python_does():
    # the kernel's loads a step ahead, at steps 0 and 1, are w[-2] and w[-1], which the
    # cell uses: the 32-bit index form reads the weight Python's wraparound does
    rng = np.random.default_rng()
    rec = recurrence(shape=(6, 11), dtype=np.int64, args=(rng.integers(1, 13, 6),))(
        _wrapped_weight)
    plan = make_plan(rec)
    assert "NOSE" in plan.patterns and plan.reference[0, 0] == rec.args[0][-2]
    for unroll in (2, 1):
        res = bands.band_fill(rec, cell_ir(rec), BY_CODE["RUD"].index, "NOSE", threads=2, blocks=3,
                             unroll=unroll)
        same(res.table, plan.reference)


def test_band_fill_compiles_again_for_another_table_type():
    # one cell function, float32 cells then float64: the second fill's window holds
    # float64, not the first's float32 (a cached kernel of the first would round them)
    for dtype in (np.float32, np.float64):
        rec = make_stencil(np.array([(-1, -1), (-1, 0), (-2, -1)]), (6, 9), 4, dtype)
        res = bands.band_fill(rec, cell_ir(rec), BY_CODE["RUD"].index, "NOSE", threads=2, blocks=3, unroll=2)
        assert res.table.dtype == dtype
        same(res.table, make_plan(rec).reference)
