"""The CUDA score-only fills (:mod:`runtime.backends.cuda.score`) under the simulator."""


import numpy as np
import pytest
from sources import NEAR_INT32, load_lcs, neighbour_reads, same, slow_after
from stencil import make_stencil, pattern_offsets

from depgraph import cell_ir, load
from patterns import BY_CODE, DIAGONAL_FLIPS
from runtime.backends.cuda import score as gpu_score
from runtime.backends.cuda import strip_layout
from runtime.schedule.plan import make_plan


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
@pytest.mark.parametrize("shape", slow_after(1, [((1, 6),), ((7, 9),), ((9, 4),)]))
def test_score_fill_keeps_only_the_live_diagonals(code, shape, write_rec):
    rec = load(write_rec(neighbour_reads(code, shape, far=True)))
    res = gpu_score.score_fill(rec, cell_ir(rec), BY_CODE[code].index, threads=4)
    assert res.kept == 4 * shape[0]  # the read two rows, one column back: 3 diagonals back
    rows, cols = DIAGONAL_FLIPS[code]
    assert res.cell == ((0 if rows else shape[0] - 1), (0 if cols else shape[1] - 1))
    assert res.value == make_plan(rec).reference[res.cell]


@pytest.mark.parametrize("code, shape, R, C, dtype", slow_after(2, [
    ("NOSE", (1, 9), 1, 4, "float32"), ("SONE", (9, 1), 1, 1, "int64"),
    ("NOSE", (101, 6), 1, 1, "int64"), ("SENO", (101, 5), 1, 2, "int32"),
    ("SONE", (70, 4), 1, 1, "float64"), ("NESO", (130, 3), 2, 1, "int64"),
    ("NESO", (101, 11), 1, 4, "int32")]))
def test_strip_score_fill_stores_no_cell_and_reuses_two_slots(code, shape, R, C, dtype, write_rec):
    # the strips' last rows in a ring of two slots: four strips and more rewrite a slot, the
    # tags in their words keep an old row from being read as new; only the last cell leaves,
    # from whichever cell of a lane's block it is
    rec = load(write_rec(neighbour_reads(code, shape, far=False, dtype=dtype)))
    res = gpu_score.strip_score_fill(rec, cell_ir(rec), BY_CODE[code].index, R, C)
    rows, cols = DIAGONAL_FLIPS[code]
    assert res.cell == ((0 if rows else shape[0] - 1), (0 if cols else shape[1] - 1))
    same(np.asarray(res.value), make_plan(rec).reference[res.cell])
    strips = -(-shape[0] // (32 * R))
    assert res.kept == min(2, max(1, strips - 1)) * (shape[1] + C)  # a slot: m + C values
    note = NEAR_INT32 if dtype in ("int32", "int64") else ""
    assert res.note.startswith(f"register strips of {32 * R} rows ({R}x{C} cells a lane{note}) "
                               "in one launch, no cell stored")


@pytest.mark.slow
def test_tall_scores_take_wider_blocks(write_rec, monkeypatch):
    # from SCORE_TALL rows on (lowered here), the score's strips take SCORE_BLOCK blocks;
    # 4-byte floats and cells computed in int32 at any height
    monkeypatch.setattr(strip_layout, "SCORE_TALL", 300)
    for rows, dtype, narrow, note in (
            (299, "int32", False, "128 rows (4x1 cells a lane)"),
            (300, "int32", False, "256 rows (8x4 cells a lane)"),
            (40, "int64", True, f"256 rows (8x4 cells a lane{NEAR_INT32})"),
            (40, "float32", True, "256 rows (8x4 cells a lane)")):
        rec = load(write_rec(neighbour_reads("NOSE", (rows, 6), far=False, dtype=dtype)))
        res = gpu_score.strip_score_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index, narrow=narrow)
        assert res.note.startswith(f"register strips of {note} in one launch")
        same(np.asarray(res.value), make_plan(rec).reference[-1, -1])


def test_score_fill_needs_reads_at_constant_offsets():
    from depgraph.frontend.source import SourceUnavailable

    rec = make_stencil(pattern_offsets(np.random.default_rng(1), "NOSE", reach=2, count=2),
                       (5, 5), 1, np.int64)
    with pytest.raises(SourceUnavailable, match="not at a constant offset"):
        gpu_score.score_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index)
    lcs = load_lcs()
    with pytest.raises(ValueError, match="outside SENO"):
        gpu_score.score_fill(lcs, cell_ir(lcs), BY_CODE["SENO"].index)
    with pytest.raises(ValueError, match="diagonal patterns"):
        gpu_score.score_fill(lcs, cell_ir(lcs), BY_CODE["RUD"].index)
