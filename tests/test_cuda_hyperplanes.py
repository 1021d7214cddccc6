"""The CUDA hyperplane fills (:mod:`runtime.backends.cuda.hyperplanes`) under the
simulator: a launch per step and one cooperative launch, 2-D and 3-D, checked and not,
against the sequential reference."""

import numpy as np
import pytest
from sources import same

from depgraph import analyze, cell_ir, recurrence
from patterns.hyperplane import Hyperplane
from runtime.backends.cuda.cells import Checks
from runtime.backends.cuda.hyperplanes import hyperplane_fill, step_threads


@recurrence(shape=(5, 7), dtype=np.int64)
def skew(M, i, j):
    if i == 0 or j == 0 or j == 6:
        return i + 3 * j
    return (M[i - 1, j + 1] * 2 + M[i, j - 1]) % 1009


@recurrence(shape=(3, 4, 5), dtype=np.float64)
def box(M, i, j, k):
    if i == 0 or j == 0 or k == 0:
        return 1.0 + 0.1 * (i + j + k)
    return 0.3 * M[i - 1, j, k] + 0.3 * M[i, j - 1, k] + 0.4 * M[i, j, k - 1]


@pytest.mark.parametrize("rec, pi", [(skew, (2, 1)), (skew, (3, 1)), (box, (1, 1, 1)),
                                     (box, (1, 2, 1))])
@pytest.mark.parametrize("cooperative", [False, True])
@pytest.mark.parametrize("checked", [False, True])
def test_hyperplane_fill_equals_the_reference(rec, pi, cooperative, checked):
    reference = analyze(rec).table
    ir = cell_ir(rec)
    checks = Checks(ir, (), None, pi) if checked else None
    res = hyperplane_fill(rec, ir, Hyperplane(pi), checks=checks, cooperative=cooperative)
    same(res.table, reference)
    assert res.launches == (1 if cooperative else Hyperplane(pi).steps(rec.shape))
    assert f"pi = {pi}" in res.kernel
    if checked or cooperative:
        assert res.checks is not None and res.checks[0] == 0


@pytest.mark.parametrize("cooperative", [False, True])
def test_a_read_the_hyperplane_does_not_order_is_flagged(cooperative):
    ir = cell_ir(box)
    bad = Hyperplane((1, 1, 0))  # M[i, j, k - 1] is on the same hyperplane
    res = hyperplane_fill(box, ir, bad, checks=Checks(ir, (), None, bad.pi),
                          cooperative=cooperative)
    assert res.checks[0] == 1


def test_step_threads_cover_each_steps_cells():
    assert step_threads(Hyperplane((2, 1)), (5, 7)).tolist() == \
        Hyperplane((2, 1)).widths((5, 7)).tolist()
    # 3-D: every combination of the axes not solved for, on the steps that hold cells
    assert set(step_threads(Hyperplane((1, 1, 1)), (3, 4, 5)).tolist()) == {20}


@pytest.mark.parametrize("pi, shape", [((1, 1, 1), (3, 4, 5)), ((1, -1, 2), (2, 3, 4)),
                                       ((1, 0, 1), (3, 1, 4))])
def test_a_slab_sheared_table_is_gathered_back_by_tiles(pi, shape):
    from patterns.hyperplane import slab
    from runtime.backends.cuda import device
    from runtime.backends.cuda.hyperplanes import unshear_fill
    from runtime.backends.shear import unshear

    rec = recurrence(shape=shape, dtype=np.int64)(lambda M, i, j, k: 0)
    sh = slab(Hyperplane(pi), shape)
    S = np.arange(np.prod(sh.box), dtype=np.int64).reshape(sh.box)
    table, *_ = unshear_fill(rec, device.require().to_device(S), sh, copy_back=True)
    np.testing.assert_array_equal(table, unshear(S, sh, shape))


@pytest.mark.parametrize("pi, shape", [((2, 1), (5, 7)), ((2, 1), (1, 6)), ((2, 1), (6, 1)),
                                       ((2, 3, 1), (3, 4, 5)), ((2, 3, 2, 1), (2, 3, 1, 4))])
def test_a_sheared_table_is_gathered_back_cell_by_cell(pi, shape):
    # a NOSE shear's table, or a slab solved for the last axis (no tiles)
    from patterns.hyperplane import shear, slab
    from runtime.backends.cuda import device
    from runtime.backends.cuda.hyperplanes import unshear_fill
    from runtime.backends.shear import unshear

    rec = recurrence(shape=shape, dtype=np.int32)(lambda M, *x: 0)
    sh = shear([(-1, 1), (0, -1)], shape) if len(pi) == 2 else slab(Hyperplane(pi), shape)
    S = np.arange(np.prod(sh.box), dtype=np.int32).reshape(sh.box)
    table, *_ = unshear_fill(rec, device.require().to_device(S), sh, copy_back=True)
    np.testing.assert_array_equal(table, unshear(S, sh, shape))
