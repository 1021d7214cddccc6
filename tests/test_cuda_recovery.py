"""The solution read from a table left on the device (:mod:`runtime.backends.cuda.recovery`),
under the simulator: the same cells and edges as the walk over the host table, tiles
crossed by the solution only, on rows and columns layouts, odd shapes and a 3-D table."""

import numpy as np
import pytest
from lcs import make_lcs
from lcs3 import make_lcs3
from matrix_chain import make_matrix_chain

from depgraph import fill, recurrence
from depgraph.frontend.provenance import solution
from runtime.backends.cuda.recovery import DeviceCells


@pytest.mark.parametrize("n, m", [(1, 9), (9, 1), (13, 6), (17, 17)])
def test_a_path_read_on_the_device_is_the_hosts(n, m):
    rng = np.random.default_rng(n * 7 + m)
    x, y = rng.integers(0, 3, n), rng.integers(0, 3, m)  # ties
    rec = make_lcs(x, y)
    res = fill(rec, backend="cuda", copy_back=False)
    cells = DeviceCells(rec, res.device_table, tile=4, kept=2)
    host = solution(rec, fill(rec, backend="python").table)
    found = solution(rec, cells)
    assert found.to_json() == host.to_json() and found.value == host.value
    tiles = -(-(n + 1) // 4) * -(-(m + 1) // 4)
    assert 0 < cells.tiles <= tiles  # a path crosses each tile once
    assert cells.tiles < tiles or min(n, m) < 4  # and not every tile of a square table


def test_fill_recovers_a_kept_tables_solution_on_the_device():
    rec = make_matrix_chain(np.random.default_rng(3).integers(1, 9, 12))
    res = fill(rec, backend="cuda", copy_back=False, solution=True)
    assert res.table is None and res.device_table is not None
    assert any("solution read on the device" in n for n in res.notes)
    host = fill(rec, backend="python", solution=True).solution
    assert res.solution.to_json() == host.to_json() and res.solution_s > 0


def test_a_columns_layout_and_a_3d_table_are_read_by_their_memory():
    # a column pattern keeps its table in F order on the device; the 3-D LCS in C order
    W = np.arange(35).reshape(5, 7) % 4

    @recurrence(shape=(5, 7), dtype=np.int64, args=(W,))
    def cols(M, i, j, W):
        if j == 0:
            return W[i, 0]
        best = M[i, j - 1]
        if i > 0:
            best = max(best, M[i - 1, j - 1])
        if i + 1 < M.shape[0]:
            best = max(best, M[i + 1, j - 1])
        return best + W[i, j]

    rng = np.random.default_rng(5)
    lcs3 = make_lcs3(*(rng.integers(0, 2, k) for k in (4, 5, 3)))
    for rec in (cols, lcs3):
        res = fill(rec, backend="cuda", copy_back=False, solution=True)
        assert res.table is None
        host = fill(rec, backend="python", solution=True).solution
        assert res.solution.to_json() == host.to_json()
    assert not fill(cols, backend="cuda", copy_back=False).device_table.is_c_contiguous()
