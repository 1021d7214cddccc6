import ast

import pytest

from depgraph.analysis.bitwise import bit_facts
from depgraph.analysis.prover import Prover
from depgraph.analysis.symbolic import Walk
from depgraph.frontend.ir import read_cell


def cell(M, i, j):
    return M[i, j]


def walk(shape=(3, 8)):
    return Walk(read_cell(cell, 2), (), shape)


def test_a_clear_bit_is_read_in_either_spelling():
    w = walk()
    for test in ("(j >> i) & 1 == 0", "1 & (j >> i) == 0", "j & (1 << i) == 0",
                 "0 == (1 << i) & j"):
        node = ast.parse(test, mode="eval").body
        assert w.conditions(node, {}, True) == [[("clear", w.sympy.Tuple(w.index["j"],
                                                                          w.index["i"]))]]
    # a bit set, a mask of two bits, a negated test: no such premise
    for test, holds in (("(j >> i) & 1 == 1", True), ("(j >> i) & 2 == 0", True),
                        ("(j >> i) & 1 == 0", False)):
        node = ast.parse(test, mode="eval").body
        assert all(kind != "clear" for atoms in w.conditions(node, {}, holds)
                   for kind, _ in atoms)


@pytest.mark.parametrize("shape, facts", [
    ((3, 8), ["M.shape[1] == 2 ** M.shape[0]", "M.shape[1] is a power of two"]),
    ((4, 16), ["M.shape[1] == 2 ** M.shape[0]", "M.shape[0] is a power of two",
               "M.shape[1] is a power of two"]),
    ((3, 6), []),
])
def test_power_of_two_sides_are_offered_only_where_bits_are_taken(shape, facts):
    w = walk(shape)
    assert w._power_facts() == []  # no bit operation met yet
    w.polynomial(ast.parse("j | (1 << i)", mode="eval").body, {})
    assert [str(req) for _, req in w._power_facts()] == facts


def test_an_or_with_a_clear_bit_is_a_sum():
    w = walk()
    x = w.polynomial(ast.parse("j | (1 << i)", mode="eval").body, {})
    (c, y), = w.powers
    powered = Prover(w, None, tuple(w._power_facts()))
    clear = (("clear", w.sympy.Tuple(w.index["j"], c)),)
    assert powered.least(x - w.index["j"], ()) == 0  # the bit may be set already
    assert powered.least(x - w.index["j"], clear) == 1
    # j <= 7 and 1 << i <= 4 in 8 columns (i <= 2 = log2(8) - 1), so the or is inside them
    assert powered.least(w.extent[1] - 1 - x, ()) == 0
    assert Prover(w, None).least(w.extent[1] - 1 - x, ()) is None  # no power of two known


def test_bit_facts_need_their_operands_proven():
    w = walk()
    minus = w.polynomial(ast.parse("(j - 9) ^ i", mode="eval").body, {})
    prover = Prover(w, None, tuple(w._power_facts()))
    ge: list = []
    bit_facts(prover, (), ge)
    assert ge == []  # j - 9 may be negative: nothing said of the exclusive or
    assert prover.least(minus, ()) is None


def test_a_shift_right_by_a_variable_is_at_least_0_and_at_most_what_it_shifts():
    w = walk()
    x = w.polynomial(ast.parse("j >> i", mode="eval").body, {})
    assert w.shifts == [(w.index["j"], w.index["i"], x)]
    prover = Prover(w, None)
    # the rows may number more than 64: a shift by i past 63 is undefined, nothing holds
    assert prover.least(x, ()) is None and prover.least(w.index["j"] - x, ()) is None
    at_most_63 = (("ge", 63 - w.index["i"]),)
    assert prover.least(x, at_most_63) == 0 and prover.least(w.index["j"] - x, at_most_63) == 0
    # j - 9 may be negative: its shift may be too
    minus = w.polynomial(ast.parse("(j - 9) >> i", mode="eval").body, {})
    assert prover.least(minus, at_most_63) is None
