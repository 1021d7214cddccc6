"""Hyperplane geometry (patterns/hyperplane.py) against brute force."""

import itertools
import types

import numpy as np
import pytest

from patterns import BY_CODE, PATTERNS
from patterns.hyperplane import Hyperplane, breaking_read, find, legal, step_source

VECTORS_2D = [v for v in itertools.product(range(-3, 4), repeat=2) if any(v)]
VECTORS_3D = [v for v in itertools.product(range(-2, 3), repeat=3) if any(v)]
SHAPES = [(1, 1), (1, 5), (5, 1), (3, 4), (4, 3), (2, 7)]
SHAPES_3D = [(1, 1, 1), (1, 3, 2), (3, 1, 4), (2, 3, 4), (4, 2, 1)]


def _brute_steps(pi, shape):
    """Each cell's pi . x, by enumeration."""
    return {cell: sum(p * x for p, x in zip(pi, cell)) for cell in np.ndindex(*shape)}


@pytest.mark.parametrize("pi", VECTORS_2D + VECTORS_3D)
def test_widths_steps_and_order_count_every_cell_once(pi):
    for shape in (SHAPES if len(pi) == 2 else SHAPES_3D):
        h = Hyperplane(pi)
        values = _brute_steps(pi, shape)
        lo = min(values.values())
        assert h.first(shape) == lo
        widths = np.zeros(h.span(shape), dtype=np.int64)
        for v in values.values():
            widths[v - lo] += 1
        assert h.widths(shape).tolist() == widths.tolist()
        assert h.steps(shape) == np.count_nonzero(widths)
        cells, ptr = h.order(shape)
        flat = [np.ravel_multi_index(c, shape) for c in values]
        assert sorted(cells.tolist()) == sorted(flat)
        step = {np.ravel_multi_index(c, shape): v for c, v in values.items()}
        for s in range(len(ptr) - 1):
            assert len({step[c] for c in cells[ptr[s]:ptr[s + 1]].tolist()}) == 1
        assert [step[c] for c in cells.tolist()] == sorted(step[c] for c in cells.tolist())


def _source_cells(pi, shape):
    """The cells the generated step source gives, step by step, run in Python."""
    src = step_source(pi)
    names = {f"n{k}": n for k, n in enumerate(shape)}
    out = []
    for t in range(eval(src.span, {}, names)):
        scope = dict(names, t=t)
        step = []
        for o in range(eval(src.outer_count, {}, scope)):
            scope["o"] = o
            for line in src.outer_cell + src.inner_range:
                exec(line, {}, scope)
            for q in range(scope["lo"], scope["hi"]):
                scope["q"] = q
                for line in src.inner_cell:
                    exec(line, {}, scope)
                if eval(src.valid, {}, scope):
                    step.append(tuple(scope[f"x{k}"] for k in range(len(shape))))
        out.append(step)
    return out


@pytest.mark.parametrize("pi", VECTORS_2D + VECTORS_3D + [(1,), (-1,), (2,)])
def test_step_source_gives_each_step_its_cells(pi):
    for shape in {1: [(1,), (5,)], 2: SHAPES, 3: SHAPES_3D}[len(pi)]:
        h = Hyperplane(pi)
        values = _brute_steps(pi, shape)
        steps = _source_cells(pi, shape)
        assert len(steps) == h.span(shape)
        for t, cells in enumerate(steps):
            expected = sorted(c for c, v in values.items() if v - h.first(shape) == t)
            assert sorted(cells) == expected, (shape, t)


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.code)
def test_the_eight_patterns_are_hyperplanes_with_their_steps(pattern):
    for shape in SHAPES:
        assert Hyperplane(pattern.pi).steps(shape) == pattern.steps(shape)


def _brute_find(offsets, shape, limit):
    """The fewest-step legal pi with entries up to ``limit``, by enumeration."""
    best = None
    for pi in itertools.product(range(-limit, limit + 1), repeat=len(shape)):
        if any(pi) and legal(pi, offsets):
            cost = Hyperplane(pi).span(shape)
            best = cost if best is None else min(best, cost)
    return best


def test_find_takes_the_fewest_steps_on_random_reads():
    rng = np.random.default_rng(7)
    for _ in range(200):
        ndim = int(rng.integers(2, 4))
        shape = tuple(int(n) for n in rng.integers(1, 9, size=ndim))
        reads = [tuple(int(x) if rng.random() > 0.15 else None
                       for x in rng.integers(-2, 3, size=ndim)) for _ in range(rng.integers(1, 4))]
        found = find(reads, shape)
        limit = 4 if ndim == 2 else 2
        best = _brute_find(reads, shape, limit)
        if found is None:
            assert best is None, (reads, shape)
        else:
            assert legal(found.pi, reads)
            assert best is None or found.span(shape) <= best, (reads, shape, found)


def test_find_of_the_issue_examples():
    assert find([(-1, 1), (0, -1)], (10, 12)).pi == (2, 1)
    assert find([(-1, 3), (0, -1)], (10, 12)).pi == (4, 1)
    assert find([(-1, 0, 0), (-1, 0, None), (-1, None, 0)], (9, 8, 8)).pi == (1, 0, 0)
    assert find([(0, -1), (0, 1)], (5, 5)) is None  # a cycle along a row
    assert find([], (5, 3)).pi == (0, 1)


def test_a_pattern_recurrence_gets_the_pattern_pi():
    assert find([(-1, 0), (-1, -1)], (10, 10)).pi == BY_CODE["RUD"].pi
    assert find([(0, -1), (1, 0)], (6, 9)).pi == BY_CODE["SONE"].pi


def test_breaking_read_names_an_unknown_axis():
    assert breaking_read((1, 1), [(-1, None)]) == (-1, None)
    assert breaking_read((1, 0), [(-1, None)]) is None


def _sides_and_shift(sh):
    """The original table's sides and the shift as generated code computes them from the
    shape of the sheared table alone (:meth:`Shear.sides_source`, :meth:`Shear.shift_source`)."""
    ns = {"S": types.SimpleNamespace(shape=sh.box)}
    sides = sh.sides_source("S")
    shift = sh.shift_source(sides) or ("0",) * len(sides)
    return tuple(eval(t, ns) for t in sides), tuple(eval(t, ns) for t in shift)


def test_shear_puts_every_read_up_or_left_and_inverts():
    from patterns.hyperplane import shear

    rng = np.random.default_rng(3)
    found = 0
    for _ in range(300):
        reads = [tuple(int(x) for x in rng.integers(-2, 3, size=2)) for _ in range(3)]
        if (0, 0) in reads:
            continue
        shape = tuple(int(n) for n in rng.integers(1, 7, size=2))
        sh = shear(reads, shape)
        if find(reads, shape) is None:
            assert sh is None
            continue
        if sh is None:  # legal, but only with entries past the shear's limit
            continue
        found += 1
        for d in reads:
            dp, dq = sh.offset(d)
            assert dp <= 0 and dq <= 0 and (dp, dq) != (0, 0)
        frame = [sh.to_frame(x) for x in np.ndindex(*shape)]
        assert min(p for p, _ in frame) == 0 and min(q for _, q in frame) == 0
        assert max(p for p, _ in frame) == sh.box[0] - 1 and max(q for _, q in frame) == sh.box[1] - 1
        assert all(sh.from_frame(sh.to_frame(x)) == x for x in np.ndindex(*shape))
        assert _sides_and_shift(sh) == (shape, sh.shift)
    assert found > 100


@pytest.mark.parametrize("pi", [(1, 1, 1), (1, -1, 2), (0, 1, 0), (2, 1), (-1, 3)])
def test_a_slab_shear_makes_each_step_a_slab_and_inverts(pi):
    from patterns.hyperplane import slab

    shape = (3, 4, 5)[:len(pi)]
    h = Hyperplane(pi)
    sh = slab(h, shape)
    for x in np.ndindex(*shape):
        y = sh.to_frame(x)
        assert y[0] == h.step_of(np.array([x]), shape)[0]
        assert all(0 <= v < n for v, n in zip(y, sh.box))
        assert sh.from_frame(y) == x
    assert _sides_and_shift(sh) == (shape, sh.shift)
    assert slab(Hyperplane((2, 3)), (4, 4)) is None
