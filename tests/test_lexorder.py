import itertools

import numpy as np

from patterns import LexOrder, Sweep, lex_order
from patterns.eight import SWEEPS
from patterns.regions import region_of


def _every_order(ndim):
    for axes in itertools.permutations(range(ndim)):
        for steps in itertools.product((1, -1), repeat=ndim):
            yield LexOrder(axes, steps)


def test_an_order_is_found_exactly_when_one_exists_for_known_offsets():
    rng = np.random.default_rng(3)
    for _ in range(400):
        ndim = int(rng.integers(1, 5))
        offsets = [tuple(int(x) for x in rng.integers(-2, 3, ndim))
                   for _ in range(int(rng.integers(0, 5)))]
        exists = any(all(o.before(d) for d in offsets) for o in _every_order(ndim))
        found = lex_order(offsets, ndim)
        assert (found is not None) == exists, offsets
        if found is not None:
            assert sorted(found.axes) == list(range(ndim))
            assert all(found.before(d) for d in offsets)


def test_axes_where_a_read_is_known_to_move_go_before_those_where_it_is_not():
    # each read has an axis where it is known not to stay: those axes go first, so
    # neither read's unknown component decides where it falls
    order = lex_order([(None, -1, 0), (0, None, 1)], 3)
    assert order == LexOrder((2, 1, 0), (-1, 1, 1))
    assert order.before((None, -1, 0)) is True and order.before((0, None, 1)) is True
    assert lex_order([(0, None, 0)], 3) == LexOrder((0, 1, 2), (1, 1, 1))


def test_a_sweep_is_the_same_order_as_its_lex_order():
    for sweep in SWEEPS:
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                assert sweep.order.before((di, dj)) is (region_of(di, dj) in sweep.covers)
    assert Sweep(0, 1, -1).order.text() == "axis 0 up, axis 1 down"
