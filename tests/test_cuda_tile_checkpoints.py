"""A score's solution recovered from the edges of its tiles on the GPU
(:mod:`runtime.backends.cuda.tile_checkpoints`, under the simulator) against the solution
over the whole table filled by the python backend: the same target, value, cells and edges
in the same order; LCS, edit distance and DTW with ties, Smith-Waterman from its best
cell, a read two rows up and one column left, a sum (a walk that goes back to tiles it
left); rows of one cell and tables of one row, tiles that do not divide the sides; the
checks' errors as the CPU's."""

import numpy as np
import pytest
from edit_distance import make_edit_distance
from knapsack import make_knapsack
from lcs import make_lcs
from smith_waterman import make_smith_waterman
from sources import make_dtw, make_far, paths

from depgraph import fill, recurrence, score
from depgraph.errors import CellFunctionError, OutOfBoundsError, UsageError
from depgraph.frontend.provenance import solution


def _same(rec, side, target=None):
    """The GPU tiles' solution equals the whole table's; the result returned."""
    table = fill(rec, backend="python").table
    want = solution(rec, table, target)
    got = score(rec, backend="cuda", solution=True if target is None else target,
                block_rows=side)
    s = got.recovery.solution
    assert (s.target, s.cells, s.edges, s.undecided) == (want.target, want.cells, want.edges,
                                                         want.undecided)
    assert s.value == pytest.approx(want.value, rel=1e-12)
    assert got.backend == "cuda" and got.recovery.plan.rows == side
    assert got.value == pytest.approx(table[got.cell], rel=1e-12)
    return got


@pytest.mark.parametrize("n, m, side", [(0, 9, 4), (9, 0, 3), (1, 9, 4), (9, 1, 4),
                                        (13, 6, 4), (6, 13, 5), (20, 17, 3), (11, 8, 1),
                                        (9, 7, 16)])
def test_lcs_and_edit_distance(n, m, side):
    rng = np.random.default_rng(n * 100 + m)
    for make in (make_lcs, make_edit_distance):
        x, y = rng.integers(0, 3, n), rng.integers(0, 3, m)  # three letters: many ties
        rec = make(x, y)
        _same(rec, side)
        _same(rec, side, target=(n // 2, m))


@pytest.mark.parametrize("n, m, side", [(1, 7, 2), (7, 1, 3), (11, 8, 3)])
def test_dtw_with_ties(n, m, side):
    rng = np.random.default_rng(n + m)
    X, Y = rng.integers(0, 3, n) / 2, rng.integers(0, 3, m) / 2
    _same(make_dtw(X, Y), side)


def test_smith_waterman_from_its_best_cell():
    rng = np.random.default_rng(4)
    rec = make_smith_waterman(rng.integers(0, 2, 15), rng.integers(0, 2, 12))
    table = fill(rec, backend="python").table
    best = tuple(int(k) for k in np.unravel_index(np.argmax(table), table.shape))
    assert _same(rec, 4, target=best).recovery.solution.value == table.max()


def test_a_read_two_rows_up_keeps_two_rows_and_a_column_of_each_tile():
    A = np.random.default_rng(2).integers(0, 3, (17, 12))
    got = _same(make_far(A), 4)
    rv = got.recovery
    # tiles of 4: 4 rows of tiles keep 2 rows each, 2 columns of tiles keep 1 column each
    assert rv.plan.halo == 2 and rv.checkpoint_bytes == (4 * 2 * 12 + 17 * 2 * 1) * 8
    assert any("tiles of 4 x 4 cells on the GPU" in note for note in got.notes)


def test_a_sum_walks_back_to_tiles_it_left():
    got = _same(paths, 2, target=(6, 4))
    assert got.recovery.solution.undecided and got.recovery.refills > 6


def test_a_refill_launch_computes_the_tiles_the_path_crosses_next():
    """A refill computes the tile asked for and those up and left of it (its cone) in
    one launch; the walk takes the next tiles from them without launching again."""
    from depgraph import cell_ir
    from runtime.backends.compiled_walk import compiled_walk
    from runtime.backends.cuda.tile_checkpoints import DeviceTiles

    rng = np.random.default_rng(5)
    rec = make_lcs(rng.integers(0, 2, 20), rng.integers(0, 2, 17))
    tiles = DeviceTiles(rec, cell_ir(rec), 3, 1, 1, None)
    tiles.forward(None)
    got = solution(rec, tiles, walker=compiled_walk(rec))
    want = solution(rec, fill(rec, backend="python").table)
    assert (got.cells, got.edges) == (want.cells, want.edges)
    assert tiles.depth >= 1 and 0 < tiles.cones < tiles.refills
    note = _same(rec, 3).notes[2]
    assert (f"in {tiles.cones} launch{'es' * (tiles.cones > 1)} of the tiles within "
            f"{tiles.depth} anti-diagonal") in note


def test_a_read_outside_the_table_at_one_cell_is_named():
    @recurrence(shape=(9, 8), dtype=np.int64)
    def slip(M, i, j):
        if i == 0 or j == 0 and i != 6:
            return 1
        return M[i - 1, j - 1] + 1

    with pytest.raises(OutOfBoundsError, match=r"cell \(6, 0\) reads \(5, -1\), outside "
                                               r"shape \(9, 8\)"):
        score(slip, backend="cuda", solution=True, block_rows=4)


def test_a_value_that_does_not_fit_is_named():
    @recurrence(shape=(40, 30), dtype=np.int8)
    def grow(M, i, j):  # (numba adds int8 cells in 64 bits; the simulator, in 8 unless told)
        return 1 if i == 0 or j == 0 else np.int64(M[i - 1, j]) + M[i, j - 1]

    with pytest.raises(CellFunctionError, match=r"cell \(\d+, \d+\): the cell function failed: "
                                                r"its value \d+ does not fit the table's dtype "
                                                r"int8"):
        score(grow, backend="cuda", solution=True, block_rows=8)


def test_reads_at_a_data_dependent_column_are_refused_on_the_gpu():
    rng = np.random.default_rng(7)
    rec = make_knapsack(rng.integers(1, 6, 9), rng.integers(1, 10, 9), 17)
    with pytest.raises(UsageError, match="backend='cpu'"):
        score(rec, backend="cuda", solution=True)
    with pytest.raises(UsageError, match="at least the reads' reach"):
        score(make_far(np.zeros((5, 5), np.int64)), backend="cuda", solution=True, block_rows=1)


@pytest.mark.parametrize("n, m, make", [
    (33, 40, make_lcs),  # two tiles each way, the second of each one cell
    pytest.param(70, 33, make_edit_distance, marks=pytest.mark.slow),
    pytest.param(1, 40, make_lcs, marks=pytest.mark.slow)])
def test_the_strips_pass_keeps_the_tile_passs_edges(n, m, make):
    """Proven reads of the three nearest neighbours: the register strips make the pass in
    one launch (tiles of 32, a strip's height, here) and keep the same edges as the tile
    kernel; the solution from them is the whole table's."""
    from depgraph import cell_ir
    from runtime.backends.cuda.tile_checkpoints import DeviceTiles

    rng = np.random.default_rng(n * 7 + m)
    rec = make(rng.integers(0, 3, n), rng.integers(0, 3, m))
    ir = cell_ir(rec)
    strips = DeviceTiles(rec, ir, 32, 1, 1, None)
    assert strips.strips is not None
    strips.forward(None)
    tiles = DeviceTiles(rec, ir, 32, 1, 1, None)
    tiles.strips = None  # the tile kernel's pass
    tiles.forward(None)
    np.testing.assert_array_equal(strips.ROWS.copy_to_host(), tiles.ROWS.copy_to_host())
    np.testing.assert_array_equal(strips.COLS.copy_to_host(), tiles.COLS.copy_to_host())
    got = _same(rec, 32)
    assert "register strips of 32 rows in one launch" in got.notes[1]
