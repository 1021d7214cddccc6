"""The CUDA step fills (:mod:`runtime.backends.cuda.steps`) under the simulator: the
ready-check fill and the cooperative launch."""


import numpy as np
import pytest
from sources import same
from stencil import make_stencil, pattern_offsets

from depgraph import analyze, cell_ir, fill
from patterns import BY_CODE, CANONICAL
from runtime.backends.cuda import steps
from runtime.schedule.plan import make_plan


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_ready_check_fill_on_the_simulator(dtype):
    rng = np.random.default_rng(4)
    rec = make_stencil(pattern_offsets(rng, "SONE", reach=2, count=3), (5, 4), 9, dtype)
    reference = analyze(rec).table
    r = fill(rec, backend="cuda", schedule="ready", verify=True)
    assert r.schedule == "ready" and r.steps == 1
    same(r.table, reference)


@pytest.mark.parametrize("code, unroll", [(c, 1 + k % 3) for k, c in enumerate(CANONICAL)])
def test_cooperative_fill_every_pattern(code, unroll):
    # 2 threads, up to 3 cells a thread before the stores: full rounds and remainders
    rng = np.random.default_rng(CANONICAL.index(code))
    rec = make_stencil(pattern_offsets(rng, code, reach=3, count=3), (7, 5), 4, np.float64)
    plan = make_plan(rec)
    p = BY_CODE[code]
    res = steps.cooperative_fill(rec, cell_ir(rec), p.index, "F" if p.storage == "columns" else "C", threads=2,
                                unroll=unroll)
    assert res.launches == 1 and res.kernel == "one cooperative launch"
    same(res.table, plan.reference)


def test_cooperative_fill_of_one_family_at_two_sizes():
    # the sizes share the cell function and so its compiled kernels: the step count is
    # the launch's, not the kernel's (a kernel compiled for 7 steps ran off a 4-row table)
    import knapsack
    for items in (6, 3):
        rec = knapsack.make_knapsack(np.arange(1, items + 1), np.arange(2, items + 2), 9)
        res = steps.cooperative_fill(rec, cell_ir(rec), BY_CODE["RUD"].index, threads=4, unroll=2)
        same(res.table, make_plan(rec).reference)


def test_a_checked_cell_flags_an_argument_read_outside_its_array_and_reads_on():
    from depgraph import recurrence
    from runtime.backends.cuda.cells import Checks

    def sack(w):
        @recurrence(shape=(6, 5), dtype=np.int64, args=(w,))
        def cell(M, i, j, w):
            return 0 if i == 0 else M[i - 1, j] + w[i - 1] + w[-1]
        return cell

    for w, flagged in ((np.arange(5), 0), (np.arange(3), 1)):
        rec = sack(w)
        checks = Checks(cell_ir(rec), ("Up",), None)
        res = steps.pattern_fill(rec, BY_CODE["RUD"].index, 6, checks=checks)
        assert res.checks[0] == flagged  # flagged, not raised: a GPU raises nothing
        if not flagged:
            same(res.table, analyze(rec).table)
