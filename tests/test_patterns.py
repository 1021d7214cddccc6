import itertools

import numpy as np
import pytest

from patterns import (
    BY_CODE,
    CANONICAL,
    PATTERNS,
    REGIONS,
    STEP_SOURCE,
    breaking_regions,
    matching,
    region_of,
    select,
    step_line,
)

SHAPES = [(1, 1), (1, 7), (7, 1), (4, 9), (9, 4), (6, 6)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("code", CANONICAL)
def test_step_line_covers_each_cell_once_in_its_step(code, shape):
    p = BY_CODE[code]
    n, m = shape
    seen = np.zeros(shape, dtype=int)
    for t in range(p.steps(shape)):
        i0, j0, di, dj, count = step_line(p.index, t, n, m)
        assert count >= 1
        for k in range(count):
            i, j = i0 + k * di, j0 + k * dj
            seen[i, j] += 1
            assert p.step_of(i, j, shape) == t
    assert (seen == 1).all()


@pytest.mark.parametrize("code", CANONICAL)
def test_allowed_regions_are_exactly_the_earlier_step_offsets(code):
    p = BY_CODE[code]
    shape = (9, 9)
    for di, dj in itertools.product(range(-3, 4), repeat=2):
        if (di, dj) == (0, 0):
            continue
        earlier = p.step_of(4 + di, 4 + dj, shape) < p.step_of(4, 4, shape)
        if region_of(di, dj) in p.allowed:
            assert earlier  # an allowed read is always done by an earlier step


def test_allowed_sets_are_closed_under_addition():
    sign = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1),
            "UpLeft": (-1, -1), "UpRight": (-1, 1), "DownLeft": (1, -1), "DownRight": (1, 1)}
    for p in PATTERNS:
        for a, b in itertools.product(p.allowed, repeat=2):
            for ka, kb in itertools.product([1, 3], repeat=2):
                d = (sign[a][0] * ka + sign[b][0] * kb, sign[a][1] * ka + sign[b][1] * kb)
                assert region_of(*d) in p.allowed


def test_thesis_cases_and_selection_rule():
    assert select({"UpLeft", "Up"}, (11, 11)) == "RUD"  # binomial
    assert select({"Up", "UpLeft"}, (5, 100)) == "RUD"  # knapsack
    assert select({"UpLeft", "Up", "Left"}, (8, 7)) == "NOSE"  # LCS
    assert select({"Left", "Down"}, (4, 4)) == "SONE"  # matrix chain
    assert matching(set()) == CANONICAL  # no reads: everything fits
    assert select(set(), (3, 8)) == "RUD" and select(set(), (8, 3)) == "CLR"
    assert select({"Up", "Down"}, (3, 3)) is None
    assert breaking_regions({"Up", "Down"})["RUD"] == ("Down",)


def test_region_names_cover_all_sign_pairs():
    assert {region_of(a, b) for a in (-2, 0, 3) for b in (-1, 0, 5)} == set(REGIONS)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("code", CANONICAL)
def test_step_source_agrees_with_step_line(code, shape):
    src = STEP_SOURCE[code]
    n, m = shape
    env = {"n": n, "m": m}
    assert eval(src.steps, env) == BY_CODE[code].steps(shape)
    for t in range(BY_CODE[code].steps(shape)):
        env["t"] = t
        exec(src.fix, env)
        cells = []
        for q in range(eval(src.lo, env), eval(src.hi, env)):
            env["q"] = q
            cells.append((eval(src.i, env), eval(src.j, env)))
        i0, j0, di, dj, cnt = step_line(BY_CODE[code].index, t, n, m)
        assert cells == [(i0 + k * di, j0 + k * dj) for k in range(cnt)]


def test_diagonal_patterns_are_flipped_nose():
    from patterns import DIAGONAL_FLIPS

    sign = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1),
            "UpLeft": (-1, -1), "UpRight": (-1, 1), "DownLeft": (1, -1), "DownRight": (1, 1)}
    for code, (rows, cols) in DIAGONAL_FLIPS.items():
        flipped = {region_of(-a if rows else a, -b if cols else b)
                   for a, b in (sign[r] for r in BY_CODE[code].allowed)}
        assert flipped == BY_CODE["NOSE"].allowed, code
