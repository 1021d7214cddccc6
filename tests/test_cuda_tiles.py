"""The CUDA tile fills (:mod:`runtime.backends.cuda.tiles`) under the simulator."""


import numpy as np
import pytest
from sources import NEAR_INT32, neighbour_reads, same
from stencil import make_stencil, pattern_offsets

from depgraph import cell_ir, load
from patterns import BY_CODE
from runtime.backends.cuda import strips, tiles
from runtime.schedule.plan import make_plan


@pytest.mark.parametrize("code", ["NOSE", "SENO", "SONE", "NESO"])
@pytest.mark.parametrize("tile, dtype", [(2, np.int64), (3, np.int64), (3, np.float32)])
def test_tiled_fill_reads_past_the_tile_edge(code, tile, dtype):
    rng = np.random.default_rng(tile)
    offs = pattern_offsets(rng, code, reach=3, count=3)  # offsets up to 3 > tile
    rec = make_stencil(offs, (7, 5), tile, dtype)  # sizes not multiples of the tile
    plan = make_plan(rec)
    same(tiles.tiled_fill(rec, cell_ir(rec), BY_CODE[code].index, tile).table, plan.reference)


@pytest.mark.parametrize("code", ["NOSE", "SONE"])
def test_tiled_fill_without_source_uses_one_launch_per_tile_diagonal(code, monkeypatch):
    from depgraph.frontend.source import SourceUnavailable

    def unavailable(*_):
        raise SourceUnavailable("test")

    monkeypatch.setattr(tiles, "rewritten_cell", unavailable)
    rec = make_stencil(pattern_offsets(np.random.default_rng(3), code, reach=3, count=3),
                       (7, 5), 2, np.int64)
    res = tiles.tiled_fill(rec, cell_ir(rec), BY_CODE[code].index, 2)
    assert res.launches == 4 + 3 - 1  # one per diagonal of 2x2 tiles
    same(res.table, make_plan(rec).reference)


def test_tiled_fill_takes_strips_for_nearest_reads(write_rec):
    rec = load(write_rec(neighbour_reads("NESO", (6, 5), far=False)))
    res = tiles.tiled_fill(rec, cell_ir(rec), BY_CODE["NESO"].index, 4)
    assert res.kernel == f"register strips of 256 rows (8x4 cells a lane, 4 store warps{NEAR_INT32})"
    same(res.table, make_plan(rec).reference)


def test_farther_reads_leave_the_strips_for_tiles(write_rec):
    rec = load(write_rec(neighbour_reads("NOSE", (9, 7), far=True)))
    with pytest.raises(ValueError, match="nearest"):
        strips.strip_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index)
    res = tiles.tiled_fill(rec, cell_ir(rec), BY_CODE["NOSE"].index, 4)
    assert res.kernel.startswith("shared-memory tiles")
    same(res.table, make_plan(rec).reference)
