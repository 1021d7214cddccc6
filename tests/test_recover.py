"""A score's solution from checkpoints (:mod:`runtime.recover`) against the solution over
the whole table (:func:`depgraph.frontend.provenance.solution`): the same target, value,
cells and edges in the same order, on LCS, edit distance, DTW, Smith-Waterman with a
target inside the table, a knapsack (reads at a data-dependent column: whole rows), a
read two rows up, and a sum (a walk that goes back down to blocks it left); random
inputs with ties, rows of one cell or one row, blocks that do not divide the rows."""

import numpy as np
import pytest
from edit_distance import make_edit_distance
from knapsack import make_knapsack
from lcs import make_lcs
from smith_waterman import make_smith_waterman
from sources import make_dtw, make_far, paths, slow_after

from depgraph import fill, recurrence, score
from depgraph.errors import RecurrenceError, UsageError
from depgraph.frontend.provenance import solution


def _same(rec, target=None, block_rows=None):
    """The checkpointed solution equals the whole table's; the recovery returned."""
    table = fill(rec, backend="python").table
    want = solution(rec, table, target)
    got = score(rec, solution=True if target is None else target, block_rows=block_rows)
    s = got.recovery.solution
    assert (s.target, s.cells, s.edges, s.undecided) == (want.target, want.cells, want.edges,
                                                         want.undecided)
    assert s.value == pytest.approx(want.value, rel=1e-12)
    # the score: the solution's target where it is the recurrence's answer, else the last cell
    assert got.cell == (s.target if got.answer else (rec.shape[0] - 1, rec.shape[1] - 1))
    assert got.value == pytest.approx(table[got.cell], rel=1e-12)
    return got.recovery


@pytest.mark.parametrize("n, m, rows", slow_after(7, [
    (0, 9, None), (9, 0, None), (1, 9, None), (9, 1, None), (13, 6, 4), (6, 13, 5), (20, 17, 3),
    (20, 17, 1), (20, 17, 30)]))
def test_lcs_and_edit_distance(n, m, rows):
    """Sequences of lengths ``n`` and ``m``: tables of ``n + 1`` by ``m + 1``."""
    rng = np.random.default_rng(n * 100 + m)
    for make in (make_lcs, make_edit_distance):
        x, y = rng.integers(0, 3, n), rng.integers(0, 3, m)  # three letters: many ties
        rec = make(x, y)
        _same(rec, block_rows=rows)
        _same(rec, target=(n // 2, m), block_rows=rows)


@pytest.mark.parametrize("n, m, rows", [(1, 7, None), (7, 1, None), (11, 8, 3), (16, 9, None)])
def test_dtw_with_ties(n, m, rows):
    rng = np.random.default_rng(n + m)
    X, Y = rng.integers(0, 3, n) / 2, rng.integers(0, 3, m) / 2
    _same(make_dtw(X, Y), block_rows=rows)


def test_smith_waterman_from_its_best_cell():
    rng = np.random.default_rng(4)
    for n, m, rows in [(15, 22, 4), (22, 15, 7), (9, 9, 1)]:
        rec = make_smith_waterman(rng.integers(0, 2, n), rng.integers(0, 2, m))
        table = fill(rec, backend="python").table
        best = tuple(int(k) for k in np.unravel_index(np.argmax(table), table.shape))
        rv = _same(rec, target=best, block_rows=rows)
        assert rv.solution.value == table.max()


def test_a_knapsack_refills_whole_rows():
    rng = np.random.default_rng(7)
    rec = make_knapsack(rng.integers(1, 6, 9), rng.integers(1, 10, 9), 17)
    rv = _same(rec, block_rows=2)
    assert not rv.plan.trim and rv.refilled_cells % rec.shape[1] == 0


def make_far_right(A):
    @recurrence(shape=A.shape, dtype=np.int64, args=(A,))
    def far_right(M, i, j, A):  # a read up and right: row blocks, not tiles
        best = A[i, j]
        if i >= 2 and j + 1 < M.shape[1]:
            best = max(best, M[i - 2, j + 1] + A[i, j])
        if j >= 1:
            best = max(best, M[i, j - 1])
        return best

    return far_right


def test_a_read_two_rows_up_keeps_two_rows_a_checkpoint():
    A = np.random.default_rng(2).integers(0, 3, (17, 12))
    rv = _same(make_far_right(A), block_rows=3)  # blocks of 3 rows, 5 checkpoints
    assert rv.plan.halo == 2 and not rv.plan.trim and rv.checkpoint_bytes == 5 * 2 * 12 * 8
    rv = _same(make_far(A), block_rows=3)  # tiles of 3: 5 tile rows kept, 3 tile columns
    assert rv.plan.halo == 2 and rv.checkpoint_bytes == (5 * 2 * 12 + 17 * 3 * 1) * 8


def test_a_sum_walks_back_down_to_blocks_it_left():
    rv = _same(paths, target=(6, 4), block_rows=2)
    assert rv.solution.undecided and rv.refills > 3
    assert rv.solution.note in score(paths, solution=(6, 4), block_rows=2).notes


def test_memory_is_the_checkpoints_and_one_block():
    rec = make_knapsack(np.arange(1, 100) % 5 + 1, np.arange(99) % 7, 40)  # whole rows
    r = score(rec, solution=True)
    rv = r.recovery
    assert rv.plan.rows == 10 and rv.checkpoint_bytes == 9 * 41 * 8
    assert rv.memory_bytes == rv.checkpoint_bytes + 11 * 41 * 8 == r.kept * 8
    assert r.to_json()["solution_memory_bytes"] == rv.memory_bytes


def test_memory_is_the_tiles_edges_and_a_tile_a_thread(monkeypatch):
    from runtime.backends import cpu

    monkeypatch.setattr(cpu, "barrier_threads", lambda: 2)
    rec = make_lcs(np.arange(99) % 4, np.arange(40) % 3)  # a 100 x 41 table
    r = score(rec, solution=True, block_rows=16)
    rv = r.recovery
    # 7 rows of tiles keep their last row (6 of them), 3 columns their last column (2)
    assert rv.plan.rows == 16 and rv.checkpoint_bytes == (6 * 41 + 100 * 2) * 4
    assert rv.block_bytes == 2 * (16 + 1) * (16 + 1) * 4  # a tile and its halo a thread
    assert rv.memory_bytes == rv.checkpoint_bytes + rv.block_bytes == r.kept * 4
    assert "tiles of 16 x 16 cells on 2 cores" in " ".join(r.notes)


@pytest.mark.parametrize("kwargs, text", [
    ({"backend": "python"}, "compiled fills"),
    ({"block_rows": 0}, "at least 1"),
    ({"solution": (9, 9)}, "outside"),
])
def test_usage_errors(kwargs, text):
    rec = make_lcs("ACGT", "AGT")
    with pytest.raises(UsageError, match=text):
        score(rec, **{"solution": True, **kwargs})


def test_reads_not_at_constant_rows_up_are_refused():
    @recurrence(shape=(4, 4), dtype=np.int64)
    def chain(M, i, j):
        return 0 if j <= i else min(M[i, k] + M[k + 1, j] for k in range(i, j))

    @recurrence(shape=(4, 4), dtype=np.int64)
    def down(M, i, j):
        return 1 if i == 3 or j == 0 else M[i + 1, j] + M[i, j - 1]

    @recurrence(shape=(4, 4), dtype=np.int64)
    def alias(M, i, j):
        A = M
        return 0 if i == 0 else A[i - 1, j]

    with pytest.raises(UsageError, match="to a varying column"):
        score(chain, solution=True)
    with pytest.raises(UsageError, match="constant offsets in the source"):
        score(alias, solution=True)
    with pytest.raises(UsageError, match=r"M\[i \+ 1, j\] goes down; leave out score=True"):
        score(down, solution=True)


def _with(rec, **kwargs):
    """``rec`` with ``target=`` or ``recover=`` added."""
    return recurrence(shape=rec.shape, dtype=rec.dtype, args=rec.args, name=rec.name,
                      **kwargs)(rec.func)


def test_a_target_cell_is_the_default_and_its_value_the_score():
    rec = _with(make_lcs("ACGTTAGC", "AGTCA"), target=(5, 3))
    assert _same(rec, block_rows=2).solution.target == (5, 3)
    res = score(rec, solution=True, block_rows=2)
    assert (res.cell, res.answer, res.to_json()["answer"]) == ((5, 3), True, True)
    other = score(rec, solution=(2, 2))  # a solution from elsewhere: the last cell's score
    assert (other.cell, other.answer) == ((8, 5), False)


def test_a_target_function_needs_the_whole_table():
    rec = _with(make_lcs("ACGT", "AGT"), target=lambda M: (2, 2))
    with pytest.raises(UsageError, match=r"the target function <lambda> of 'lcs' needs the "
                       r"whole filled table, which the score does not keep; give the cell "
                       r"\(target=\.\.\.\) or leave out score=True"):
        score(rec, solution=True)
    res = score(rec, solution=(2, 2))
    assert res.recovery.solution.target == (2, 2) and (res.cell, res.answer) == ((4, 3), False)
    assert res.notes[-1].startswith("the answer of 'lcs' is the cell <lambda> finds in the whole "
                                    "filled table, which a score does not keep: M(4, 3) is")


def test_a_recovery_function_is_followed_through_the_checkpoints():
    def larger(M, i, j):  # the larger of a sum's two reads: a path, not all the reads
        if i == 0 or j == 0:
            return []
        return [(i - 1, j)] if M[i - 1, j] >= M[i, j - 1] else [(i, j - 1)]

    rv = _same(_with(paths, recover=larger), block_rows=2)
    s = rv.solution
    assert len(s.edges) == len(s.cells) - 1 and 0 in s.cells[-1] and not s.undecided

    def corner(M, i, j):  # reads a cell the block does not hold
        return [] if M[0, 0] and (i == 0 or j == 0) else larger(M, i, j)

    with pytest.raises(RecurrenceError, match=r"the recovery function corner of 'paths' "
                       r"failed: RecurrenceError: the solution walk read \(0, 0\), outside "
                       r"the tile it holds"):
        score(_with(paths, recover=corner), solution=True, block_rows=2)
