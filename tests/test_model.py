import numpy as np
import pytest

from depgraph import Family, Recurrence, family, recurrence
from depgraph.errors import RecurrenceError, UsageError


def test_recurrence_keeps_shape_dtype_args_and_name():
    X = np.arange(3)

    @recurrence(shape=(2, 3, 4), dtype=np.int16, args=(X, 5))
    def cube(M, i, j, k, X, c):
        return c

    assert isinstance(cube, Recurrence)
    assert (cube.name, cube.shape, cube.dtype, cube.ndim, cube.cells) == ("cube", (2, 3, 4), np.int16, 3, 24)
    assert cube.args[0] is X and cube.args[1] == 5


def test_recurrence_rejects_bad_shapes():
    for bad in [(), (0, 3), (-1,), "ab"]:
        with pytest.raises(UsageError):
            recurrence(shape=bad)


def test_family_instantiates_and_checks_result():
    @family
    def sq(n):
        @recurrence(shape=(n, n))
        def sq(M, i, j):
            return 0.0

        return sq

    assert isinstance(sq, Family) and sq.name == "sq"
    assert sq(4).shape == (4, 4)

    @family
    def broken(n):
        return n

    with pytest.raises(UsageError, match="not a recurrence"):
        broken(3)


def test_recurrence_checks_its_target_and_recovery():
    with pytest.raises(UsageError, match=r"target \(3, 0\): outside the table's shape \(3, 3\)"):
        recurrence(shape=(3, 3), target=(3, 0))
    with pytest.raises(UsageError, match=r"target \(1,\): 1 indices for a 2-D table"):
        recurrence(shape=(3, 3), target=(1,))
    with pytest.raises(UsageError, match=r"target \(-1, 0\): outside"):
        recurrence(shape=(3, 3), target=(-1, 0))
    with pytest.raises(UsageError, match="recover must be a function"):
        recurrence(shape=(3, 3), recover=(0, 0))
    assert recurrence(shape=(3, 3), target=np.array([2, 1]))(lambda M, i, j: 0).target == (2, 1)


@pytest.mark.parametrize("shape", [(1, 5), (5, 1), (3, 4)])
def test_answer_is_the_target_or_what_its_function_returns(shape):
    table = np.random.default_rng(sum(shape)).integers(0, 3, shape)  # ties: argmax's first

    def best(M):
        return np.unravel_index(np.argmax(M), M.shape)

    assert recurrence(shape=shape, target=best)(lambda M, i, j: 0).answer(table) == best(table)
    last = (shape[0] - 1, shape[1] - 1)
    assert recurrence(shape=shape, target=last)(lambda M, i, j: 0).answer(table) == last
    assert recurrence(shape=shape)(lambda M, i, j: 0).answer(table) is None


def test_a_misbehaving_target_function_is_named():
    for bad, text in [(lambda M: (9, 9), r"returned \(9, 9\): outside"),
                      (lambda M: "x", "returned 'x': not a cell"),
                      (lambda M: (0, 1.5), r"returned \(0, 1.5\): not a cell"),
                      (lambda M: 1 / 0, "failed on the filled table: ZeroDivisionError")]:
        @recurrence(shape=(2, 2), dtype=np.int64, target=bad)
        def zeros(M, i, j):
            return 0

        with pytest.raises(RecurrenceError, match=r"the target function <lambda> of 'zeros' " + text):
            zeros.answer(np.zeros((2, 2), np.int64))


def test_the_answer_is_read_only():
    def writes(M):
        M[0, 0] = 5
        return (0, 0)

    @recurrence(shape=(2, 2), dtype=np.int64, target=writes)
    def zeros(M, i, j):
        return 0

    table = np.zeros((2, 2), np.int64)
    with pytest.raises(RecurrenceError, match="read-only"):
        zeros.answer(table)
    assert not table.any()
