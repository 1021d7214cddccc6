"""``depgraph.analysis.symbolic``: the walk of a cell function's paths, each read of ``M``
with its index and its path's premises as forms in the walk's symbols."""

import ast
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from depgraph.analysis.symbolic import GiveUp, Walk
from depgraph.frontend.ir import read_cell


def _walk(cell: Callable[..., Any], args: tuple[Any, ...], shape: tuple[int, int]) -> Walk:
    """Every path through ``cell`` walked, for a table like ``shape``."""
    ir = read_cell(cell, 2)
    walk = Walk(ir, args, shape)
    walk.block(list(ir.definition().body), {}, ())
    return walk


def test_an_element_is_one_symbol_per_index_value_not_per_text():
    def cell(M, i, j, w):
        x = 0
        if w[x] <= j:
            x = 1
            return M[i - 1, j - w[x]]
        return M[i - 1, j - w[0]]

    walk = _walk(cell, (np.array([1, 5]),), (3, 4))
    after, other = walk.reads
    tested = (after.premises[0][1] - walk.index["j"]).free_symbols  # w[x] with x = 0
    assert tested.isdisjoint(after.index[1].free_symbols)  # w[x] with x = 1
    assert tested <= other.index[1].free_symbols  # w[0]


def test_a_while_loops_induction_variable_is_a_symbol_past_its_start_and_the_test_holds():
    def cell(M, i, j):
        k = 2
        while k <= j:
            x = M[i - 1, j - k]
            k += 1
        return x

    walk = _walk(cell, (), (3, 4))
    (read,) = walk.reads
    k = next(iter(read.index[1].free_symbols - {walk.index["j"]}))
    assert str(walk.display[k]) == "k"
    assert set(read.premises) == {("ge", k - 2), ("ge", walk.index["j"] - k)}


def test_a_decreasing_induction_variable_is_at_most_its_start():
    def cell(M, i, j):
        k = j
        while k > 0:
            k -= 1
            if k < i:
                return M[k, j]
        return 0

    walk = _walk(cell, (), (3, 4))
    (read,) = walk.reads
    k = read.index[0] + 1  # the read is after k -= 1
    assert ("ge", walk.index["j"] - k) in read.premises and ("ge", k - 1) in read.premises


@pytest.mark.parametrize("loop, known", [
    ("while k < j:\n    k += 1\n    if k > 2:\n        k = 0\n", {"k": 1}),  # set otherwise
    ("while k < j:\n    k += 1\n    k -= 1\n", {"k": 1}),  # both ways
    ("while k < j:\n    k += i\n", {"k": 1}),  # a step of unknown sign
    ("while k < j:\n    k += -1\n", {"k": 1}),  # a literal, but negative
    ("while k < j:\n    for k in range(3):\n        pass\n", {"k": 1}),  # a loop's target
    ("while k < j:\n    k += 1\n", {"k": None}),  # unknown before the loop
    ("while k < j:\n    k += 1\n", {}),  # not assigned before the loop
])
def test_a_name_assigned_in_a_loop_otherwise_is_no_induction_variable(loop, known):
    assert Walk._inductions(ast.parse(loop).body[0], known) == {}


def test_after_a_while_loop_what_it_assigns_is_unknown():
    def unchanged(M, i, j):
        k = 0
        x = 1
        while k < 3:
            k += 1
            if i > 5:
                break
        return M[i - 1, j - x]

    def assigned(M, i, j):
        k = 0
        while k < 3:
            k += 1
        return M[i - 1, j - k]

    walk = _walk(unchanged, (), (3, 4))
    (read,) = walk.reads
    assert read.index[1] == walk.index["j"] - 1
    with pytest.raises(GiveUp, match=r"M\[i - 1, j - k\] .* not at a polynomial index"):
        _walk(assigned, (), (3, 4))


def test_a_table_extent_near_another_is_a_size_fact_in_any_dimension():
    def layers(M, k, i, j):
        return M[k - 1, i, k - 1]

    walk = Walk(read_cell(layers, 3), (), (5, 4, 4))
    facts = walk.facts()
    assert [str(req) for _, req in facts] == ["M.shape[0] == M.shape[1] + 1",
                                              "M.shape[0] == M.shape[2] + 1",
                                              "M.shape[1] == M.shape[2]"]
    n0, _, n2 = walk.extent
    assert facts[1][0] == (("ge", n0 - n2 - 1), ("ge", n2 + 1 - n0))
    # sides 3 apart or more: no fact
    assert [str(req) for _, req in Walk(read_cell(layers, 3), (), (9, 4, 5)).facts()] == \
        ["M.shape[1] == M.shape[2] - 1"]


def test_a_max_or_min_of_polynomials_is_a_symbol_bounded_by_each():
    def cell(M, i, j):
        x = max(0, j - 2)
        y = min(i, 3)
        return M[y, x]

    walk = _walk(cell, (), (5, 6))
    (read,) = walk.reads
    x, y = read.index[1], read.index[0]
    j, i = walk.index["j"], walk.index["i"]
    assert set(walk.bounds) == {("ge", x), ("ge", x - j + 2), ("ge", i - y), ("ge", 3 - y)}
    assert x in walk.integral and y in walk.integral


def test_a_max_or_min_anywhere_is_one_symbol_per_call_and_each_range_end_bounds_the_loop():
    def cell(M, i, j):
        for t in range(1, min(i + 1, j) + 1):
            if M[i, j - t] == 0:
                return M[i, min(j, i + 1) - 1]
        return 0

    walk = _walk(cell, (), (5, 6))
    loop, other = walk.reads
    i, j = walk.index["i"], walk.index["j"]
    t = j - loop.index[1]
    (low,) = (other.index[1] + 1).free_symbols  # min(j, i + 1): another call, another symbol
    (top,) = (loop.premises[1][1] + t).free_symbols  # range's end: min(i + 1, j) + 1
    assert loop.premises == (("ge", t - 1), ("ge", top - t))
    assert low != top and {("ge", i + 1 - top), ("ge", j - top)} <= set(walk.bounds)
    assert {("ge", j - low), ("ge", i + 1 - low)} <= set(walk.bounds)


def test_an_arrays_elements_are_read_with_their_premises_and_len_is_its_extent():
    def cell(M, i, j, d):
        if i >= len(d):
            return 0
        return M[i + 1, j] if j <= d[i] else 0

    walk = _walk(cell, (np.array([1, 2]),), (3, 4))
    ((array, read),) = walk.elements
    n = walk.extent_of("d", 0)
    assert array == "d" and read.index == (walk.index["i"],)
    assert read.premises == (("ge", n - 1 - walk.index["i"]),)
    assert [str(req) for _, req in walk.facts()] == ["M.shape[0] == M.shape[1] - 1",
                                                     "d.shape[0] == M.shape[0] - 1",
                                                     "d.shape[0] == M.shape[1] - 2"]
    assert [str(req) for _, req in walk.ceilings()] == ["max(d) <= M.shape[0] - 1",
                                                        "max(d) <= M.shape[1] - 1"]


def test_a_max_of_what_is_no_polynomial_is_unknown():
    def cell(M, i, j, v):
        x = max(0, v[i] / 2)  # a float: no polynomial
        return M[i, x]

    with pytest.raises(GiveUp, match="M\\[i, x\\] .* is not at a polynomial index"):
        _walk(cell, (np.ones(3),), (3, 4))


def test_a_max_of_the_cells_own_is_unknown():
    def max(*values):  # the cell's own max, which the walk must not take for Python's
        return values[0]

    def shadowed(M, i, j):
        x = max(0, j - 2)
        return M[i, x]

    with pytest.raises(GiveUp, match="is not at a polynomial index"):
        _walk(shadowed, (), (3, 4))
