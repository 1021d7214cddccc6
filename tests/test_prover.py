"""``depgraph.analysis.prover``: least values of polynomials under premises, each product of
symbols a variable of its own that knows only what its factors' lower bounds give."""

import ast

import pytest

from depgraph.analysis.prover import Prover, later_read, prove, trusted
from depgraph.analysis.symbolic import Walk
from depgraph.frontend.ir import read_cell


def _scalars() -> tuple[Prover, dict[str, object]]:
    """A prover of a cell with scalar arguments ``a, b``, and their symbols by name."""
    def cell(M, i, j, a, b):
        return M[i - 1, j] + a + b

    walk = Walk(read_cell(cell, 2), (3, 4), (5, 6))
    names = {x: walk.polynomial(ast.parse(x, mode="eval").body, {}) for x in ("a", "b")}
    return Prover(walk, None), names


@pytest.mark.parametrize("lows, least", [
    ({"a": 2, "b": 3}, 6),  # both factors at least a non-negative low: their product's
    ({"a": 0, "b": 5}, 0),
    ({"a": 2}, None),  # b's sign unknown: a * b may be anything
    ({"a": -1, "b": 0}, None),  # a may be negative
])
def test_a_product_knows_only_what_non_negative_factors_give(lows, least):
    prover, s = _scalars()
    premises = tuple(("ge", s[x] - low) for x, low in lows.items())
    assert prover.least(s["a"] * s["b"], premises) == least


def test_a_square_of_a_factor_of_unknown_sign_is_not_known_non_negative():
    # sound but incomplete: the relaxation knows a**2 only through a's own lower bound
    prover, s = _scalars()
    assert prover.least(s["a"] ** 2, ()) is None
    assert prover.least(s["a"] ** 2, (("ge", s["a"] - 3),)) == 9


def test_premises_on_products_bound_the_forms_they_appear_in():
    # a * b <= 10 with a, b >= 1: 10 - a * b >= 0 and at most 9
    prover, s = _scalars()
    ab = s["a"] * s["b"]
    premises = (("ge", 10 - ab), ("ge", s["a"] - 1), ("ge", s["b"] - 1))
    assert prover.interval(10 - ab, premises) == (0, 9)


def _proven(cell, shape: tuple[int, ...]) -> Prover:
    """A prover of every read of ``cell`` (a table like ``shape``), nothing assumed."""
    walk = Walk(read_cell(cell, len(shape)), (), shape)
    walk.block(list(walk.ir.definition().body), {}, ())
    return Prover(walk, None)


def test_a_hyperplane_is_proven_from_a_reads_offsets_together():
    # M[i - d, j + d - 1] for d >= 1: along i at most -1, along j at least 0 and unbounded,
    # so no bound per axis orders it by pi = (1, 1); their sum is always -1, which does
    def diagonal(M, i, j):
        best = 0
        for d in range(1, i + 1):
            if j + d - 1 < M.shape[1]:
                best = max(best, M[i - d, j + d - 1])
        return best

    prover = _proven(diagonal, (5, 6))
    cert = prove(prover)
    assert [r.spans for r in cert.reads] == [((None, -1), (0, None))]
    assert later_read(prover, (1, 1)) is None
    assert later_read(prover, (1, 0)) is None
    assert "M[i - d, j + d - 1] (line 5) may not be on an earlier hyperplane of pi = (1, 2)" \
        in later_read(prover, (1, 2))


def test_a_read_on_a_path_never_taken_breaks_no_hyperplane():
    def never(M, k, i, j):
        if k > 0 and k < 0:
            return M[k + 1, i, j]
        return 0 if k == 0 else M[k - 1, i, j]

    assert later_read(_proven(never, (3, 4, 5)), (1, 0, 0)) is None


def _trusted(cell, args, shape):
    """:func:`trusted` of ``cell`` with the size facts and no floor, walked leniently."""
    walk = Walk(read_cell(cell, 2), args, shape, lenient=True)
    walk.block(list(walk.ir.definition().body), {}, ())
    return trusted(Prover(walk, None, tuple(walk.facts())))


def test_a_read_is_trusted_only_where_every_path_that_makes_it_is_proven():
    def cell(M, i, j, d):
        if i == 0:
            return 0
        a = M[i - 1, j] if j > 0 else M[i - 1, j - d]
        if d > 0:
            a += M[i - 1, j - d]  # proven here (j - d <= j - 1), not on the line above
        return a + M[i - 1, j << i]  # an index the walk cannot follow: never trusted

    t = _trusted(cell, (2,), (6, 9))
    assert t.reads == ((("M[i - 1, j]", 4), ("Up",)),)
    # j - d on the path j == 0, d unknown: neither edge of the column; on the path d > 0
    # only the last column's: each edge kept is one every path holds
    assert dict(t.edges) == {("M[i - 1, j - d]", 4): ((True, True), (False, False)),
                             ("M[i - 1, j - d]", 6): ((True, True), (False, True))}
    assert "M[i - 1, j << i]" not in {text for (text, _), _ in t.reads + t.edges}


def test_an_elements_read_is_trusted_only_inside_its_array_on_every_path():
    import numpy as np

    def cell(M, i, j, w):
        if i == 0:
            return w[j]  # w has as many elements as M has columns
        return M[i - 1, j] + w[i + j]

    t = _trusted(cell, (np.zeros(9, np.int64),), (6, 9))
    assert t.elements == (("w[j]", 3),)
    assert [str(r) for r in t.requires] == ["w.shape[0] == M.shape[1]"]


@pytest.mark.parametrize("index, bounds", [
    ("min(max(j - 2, 0), M.shape[1] - 1)", (0, None)),  # each argument at least 0
    ("min(j, d)", (None, None)),  # d has no least value: nor has the min
    ("max(min(j, 3), 1)", (1, 3)),  # the inner min at most 3, the outer max at least 1
    ("max(i, j - 9)", (0, None)),
])
def test_a_min_is_at_least_the_least_of_its_arguments_and_a_max_at_most_the_greatest(
        index, bounds):
    def cell(M, i, j, d):
        return M[i, j]

    walk = Walk(read_cell(cell, 2), (5,), (4, 6))
    x = walk.polynomial(ast.parse(index, mode="eval").body, {})
    assert Prover(walk, None).interval(x, ()) == bounds
