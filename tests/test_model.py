import numpy as np
import pytest

from depgraph import Family, Recurrence, family, recurrence
from depgraph.errors import UsageError


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
