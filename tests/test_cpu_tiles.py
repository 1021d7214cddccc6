"""The CPU tiles' choices (runtime.backends.cpu_tiles): which cells take a tile's rows two
at a time, and those fills against the sequential reference."""

import numpy as np
import pytest
from sources import same

from depgraph import analyze, cell_ir, recurrence
from patterns import BY_CODE
from runtime.backends import cpu
from runtime.backends.cpu_tiles import paired, tiled_source


#: Each diagonal pattern's step from a cell to the cells it reads, (rows, columns).
STEPS = {"NOSE": (-1, -1), "SENO": (1, 1), "SONE": (1, -1), "NESO": (-1, 1)}


def _edits(n: int, m: int, seed: int, code: str = "NOSE"):
    """Edit distance read in the direction of ``code`` (NOSE: the usual one); its one data
    test is an update, not a branch between returns."""
    rng = np.random.default_rng(seed)
    X, Y = rng.integers(0, 4, n), rng.integers(0, 4, m)
    di, dj = STEPS[code]

    @recurrence(shape=(n, m), dtype=np.int64, args=(X, Y))
    def edits(M, i, j, X, Y):
        first_i = 0 if di < 0 else M.shape[0] - 1  # the same source at every size
        first_j = 0 if dj < 0 else M.shape[1] - 1
        if i == first_i or j == first_j:
            return abs(i - first_i) + abs(j - first_j)
        sub = M[i + di, j + dj]
        if X[i] != Y[j]:
            sub += 1
        return min(M[i + di, j] + 1, M[i, j + dj] + 1, sub)

    return edits


def test_cells_whose_branches_test_their_data_or_that_loop_keep_one_row_at_a_time():
    X = np.zeros(3, dtype=np.int64)

    @recurrence(shape=(4, 4), dtype=np.int64, args=(X,))
    def common(M, i, j, X):
        if i == 0 or j == 0:
            return 0
        if X[i - 1] == X[j - 1]:
            return M[i - 1, j - 1] + 1
        return max(M[i - 1, j], M[i, j - 1])

    @recurrence(shape=(4, 4), dtype=np.int64)
    def loop(M, i, j):
        if i == 0 or j == 0:
            return 1
        total = 0
        for k in range(i):
            total += M[k, j - 1]
        return total

    assert paired(cell_ir(_edits(4, 4, 0)))
    assert not paired(cell_ir(common)) and not paired(cell_ir(loop))
    two = tiled_source("NOSE", 2, (4, 8), False, False, True)
    assert "i2 = u + 1" in two and "j2 = q - 1" in two
    assert "i2" not in tiled_source("NOSE", 2, (4, 8), False, False, False)


@pytest.mark.parametrize("shape", [(1, 9), (9, 1), (2, 1), (7, 11), (12, 5)])
@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
def test_paired_tiles_fill_as_the_reference(shape, code):
    rec = _edits(*shape, seed=sum(shape), code=code)
    reference = analyze(rec).table
    # one row; odd and even rows, one column
    for tile in ((1, 1), (3, 2), (5, 4)) if code == "NOSE" else ((3, 2),):
        M = np.zeros(rec.shape, dtype=rec.dtype)
        ck, _ = cpu.tiled_fill(rec, cell_ir(rec), M, BY_CODE[code].index, tile=tile)
        same(M, reference)
        assert not ck[cpu.OOB] and not ck[cpu.MISFIT]


def test_a_checked_tiled_fill_keeps_one_row_and_pairs_none_unless_asked(monkeypatch):
    rec = _edits(6, 7, seed=1)
    made = []
    monkeypatch.setattr(cpu, "tiled_source", lambda *a: made.append(a[-1]) or tiled_source(*a))
    for checked in (False, True):
        M = np.zeros(rec.shape, dtype=rec.dtype)
        cpu.tiled_fill(rec, cell_ir(rec), M, BY_CODE["NOSE"].index, tile=(3, 2),
                       checked=checked)
        same(M, analyze(rec).table)
    assert made == [True, False]
