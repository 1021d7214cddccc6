"""The example recurrences: the thesis's four case studies (``examples/``), the catalog
of problems from the thesis's table of Lew & Mauch's problems (``examples/catalog/``),
three recurrences only a hyperplane schedules (``examples/skew.py``,
``floyd_warshall.py``, ``lcs3.py``), and Smith-Waterman (a recurrence whose answer is its
best cell).

For every file of the thesis's table, at a few sizes: the pattern depgraph selects is the
thesis's (or a documented deviation), every read falls in that pattern's regions, and the
traced table equals the module's ``reference`` (a different implementation of the same
DP: memoised, vectorised, a closed form or another algorithm).  For the hyperplane files:
no pattern, the expected hyperplane, every traced read on an earlier hyperplane, the
reference table, and fills by that hyperplane.  Then the thesis's own answers, tables of
odd shapes, answers checked by brute force or another algorithm, what the examples'
solutions mean (against plain backtracks and brute force), the examples run as programs,
and numba compilation.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import depgraph
from depgraph import Family, analyze, fill, load
from depgraph.analysis.schedule import traced_offsets
from depgraph.frontend.loader import definitions, load_module

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# The thesis's table (section 4.2.3, "Patrones en algunos algoritmos de programación
# dinámica") by example file.  The table lists 32 names, though its text says 31.
THESIS = {
    # the four case studies (chapter 2; SPEC section 5)
    "binomial": "RUD",
    "knapsack": "RUD",
    "lcs": "NOSE",
    "matrix_chain": "SONE",
    # the catalog
    "edit_distance": "NOSE",
    "optimal_allotment": "RDU",
    "alphabetic_radix_code_tree": "SONE",
    "assembly_line_balancing": "RDU",
    "optimal_assignment": "RDU",
    "optimal_bst": "SONE",
    "optimal_covering": "RUD",
    "deadline_scheduling": "RDU",
    "discounted_profits": "RDU",
    "fibonacci": "CLR",
    "integer_linear_programming": "RDU",
    "inventory": "RDU",
    "optimal_investment": "RDU",
    "winning_in_las_vegas": "RDU",
    "cov_as_ksint": "RDU",
    "integer_knapsack": "RUD",
    "minimum_maximum": "RDU",
    "min_spanning_tree": "CRL",
    "nim": "CLR",
    "optimal_distribution": "RDU",
    "production": "RDU",
    "reliability_design": "RUD",
    "replacement": "CRL",
    "stagecoach": "RDU",
    "segmented_curve_fitting": "RUD",
    "process_scheduling": "RDU",
    "transportation": "RDU",
    "shortest_path_acyclic": "CLR",
}

# Examples outside the thesis's table: no 2-D pattern fits (skew reads Left and UpRight)
# or the table is 3-D; the hyperplane pi (cell x in step pi . x) does (file -> pi).
HYPERPLANES = {"skew": (2, 1), "floyd_warshall": (1, 0, 0), "lcs3": (1, 1, 1)}

# Examples outside the thesis's table that a pattern fits (file -> pattern).
OTHERS = {"smith_waterman": "NOSE"}

# Files whose honest 2-D formulation selects another pattern than the thesis lists
# (file -> selected pattern).  None: every formulation gives the thesis's pattern.
DEVIATIONS: dict[str, str] = {}

# Allowed regions of each pattern (SPEC section 4), written out independently here.
ALLOWED = {
    "RUD": {"UpLeft", "Up", "UpRight"},
    "RDU": {"DownLeft", "Down", "DownRight"},
    "CLR": {"UpLeft", "Left", "DownLeft"},
    "CRL": {"UpRight", "Right", "DownRight"},
    "NOSE": {"UpLeft", "Up", "Left"},
    "SENO": {"Right", "DownRight", "Down"},
    "SONE": {"Left", "DownLeft", "Down"},
    "NESO": {"Up", "UpRight", "Right"},
}

# Families whose size-1 table reads nothing (one cell, or only base cases): every pattern
# matches it and the canonical order picks RUD; those start at size 2.
NO_READS_AT_1 = {
    "binomial", "matrix_chain", "optimal_bst", "alphabetic_radix_code_tree", "min_spanning_tree",
    "shortest_path_acyclic", "fibonacci", "stagecoach", "minimum_maximum",
    "assembly_line_balancing",
}
# Tables of exponential size (V x 2^V, (n+1) x 2^n).
SIZES_EXPONENTIAL = {"min_spanning_tree": (2, 4, 7), "optimal_assignment": (1, 3, 6)}


def _files() -> dict[str, Path]:
    paths = sorted(EXAMPLES.glob("*.py")) + sorted((EXAMPLES / "catalog").glob("*.py"))
    return {p.stem: p for p in paths}


FILES = _files()


def _sizes(stem: str) -> tuple[int, ...]:
    if stem in SIZES_EXPONENTIAL:
        return SIZES_EXPONENTIAL[stem]
    return (2, 7, 16) if stem in NO_READS_AT_1 else (1, 7, 16)


CASES = [(stem, n) for stem in FILES if stem in THESIS or stem in OTHERS for n in _sizes(stem)]

_modules: dict[str, object] = {}


def module(stem: str):
    """The example file as a module (for its builder, ``data`` and ``reference``)."""
    if stem not in _modules:
        path = FILES[stem]
        spec = importlib.util.spec_from_file_location(f"_example_{stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _modules[stem] = mod
    return _modules[stem]


def expected(stem: str) -> str | None:
    return DEVIATIONS.get(stem, THESIS.get(stem, OTHERS.get(stem)))


def assert_same_table(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    if np.issubdtype(got.dtype, np.floating):
        assert np.allclose(got, want, rtol=1e-12), np.argwhere(~np.isclose(got, want, rtol=1e-12))
    else:
        assert np.array_equal(got, want), np.argwhere(got != want)


# --- every file --------------------------------------------------------------------------


def test_every_problem_has_a_file():
    assert set(FILES) == set(THESIS) | set(HYPERPLANES) | set(OTHERS)
    assert not set(THESIS) & set(HYPERPLANES) and not (set(THESIS) | set(HYPERPLANES)) & set(OTHERS)
    catalog = list((EXAMPLES / "catalog").glob("*.py"))
    assert len(catalog) >= 14


@pytest.mark.parametrize("stem", sorted(FILES))
def test_file_defines_one_family(stem):
    found = definitions(load_module(FILES[stem]))
    assert list(found) == [stem]
    assert isinstance(found[stem], Family)


@pytest.mark.parametrize("stem", sorted(FILES))
def test_module_states_the_thesis_pattern(stem):
    mod = module(stem)
    assert mod.THESIS_PATTERN == THESIS.get(stem)
    assert mod.EXPECTED_PATTERN == expected(stem)
    assert mod.PROBLEM and mod.FORMULATION and mod.__doc__


@pytest.mark.parametrize(("stem", "n"), CASES)
def test_pattern_and_table(stem, n):
    mod = module(stem)
    rec = load(FILES[stem], size=n)
    assert rec.ndim == 2
    a = analyze(rec)
    assert a.graph.n_edges > 0
    assert set(a.regions) <= ALLOWED[expected(stem)]
    assert a.pattern == expected(stem)
    assert expected(stem) in a.patterns
    assert_same_table(a.table, mod.reference(*mod.data(n)))


@pytest.mark.parametrize("stem", sorted(NO_READS_AT_1))
def test_size_one_reads_nothing_and_every_pattern_matches(stem):
    a = analyze(load(FILES[stem], size=1))
    assert a.graph.n_edges == 0
    assert a.regions == ()
    assert a.patterns == tuple(ALLOWED)
    assert a.pattern == "RUD"  # every pattern takes one step; canonical order decides


# --- the thesis's own answers (SPEC section 5) ---------------------------------------------


def test_thesis_lcs_is_4():
    a = analyze(module("lcs").make_lcs(b"AGCGTAG", b"GTCAGA"))
    assert a.table.shape == (8, 7)
    assert a.table[-1, -1] == 4
    assert a.pattern == "NOSE"


def test_thesis_matrix_chain_is_180():
    a = analyze(module("matrix_chain").make_matrix_chain([8, 3, 7, 4]))
    assert a.table[0, 2] == 180
    assert a.table[0, 1] == 8 * 3 * 7 and a.table[1, 2] == 3 * 7 * 4
    assert a.pattern == "SONE"


def test_thesis_binomial_10_4_is_210():
    a = analyze(module("binomial").make_binomial(10))
    assert a.table[10, 4] == 210
    assert a.pattern == "RUD"


def test_thesis_case_patterns():
    got = {stem: analyze(load(FILES[stem], size=9)).pattern
           for stem in ("binomial", "knapsack", "lcs", "matrix_chain")}
    assert got == {"binomial": "RUD", "knapsack": "RUD", "lcs": "NOSE", "matrix_chain": "SONE"}


def test_thesis_case_regions():
    regions = {stem: analyze(load(FILES[stem], size=9)).regions
               for stem in ("binomial", "knapsack", "lcs", "matrix_chain")}
    assert regions == {
        "binomial": ("Up", "UpLeft"),
        "knapsack": ("Up", "UpLeft"),
        "lcs": ("Left", "Up", "UpLeft"),
        "matrix_chain": ("Down", "Left"),
    }


# --- tables of other shapes ----------------------------------------------------------------


def test_knapsack_one_item():
    mod = module("knapsack")
    a = analyze(mod.make_knapsack([3], [5], 10))
    assert a.table.shape == (2, 11)
    assert a.table[1].tolist() == [0, 0, 0] + [5] * 8
    assert a.pattern == "RUD"
    a = analyze(load(FILES["knapsack"], size=1))
    assert a.table.shape == (2, 11)
    assert_same_table(a.table, mod.reference(*mod.data(1)))


def test_binomial_rectangular():
    mod = module("binomial")
    a = analyze(mod.make_binomial(12, 4))
    assert a.table.shape == (13, 5)
    assert a.pattern == "RUD"
    assert_same_table(a.table, mod.reference(12, 4))


@pytest.mark.parametrize(("x", "y"), [(b"AGCGTAG", b""), (b"A", b"GTCAGAGG"), (b"ACGTTGCA", b"TGC")])
def test_lcs_rectangular(x, y):
    mod = module("lcs")
    a = analyze(mod.make_lcs(x, y))
    assert a.table.shape == (len(x) + 1, len(y) + 1)
    assert_same_table(a.table, mod.reference(x, y))
    if len(y) == 0:
        # an (n+1) x 1 column of base cases reads nothing: every pattern matches and CLR
        # fills the one column in one step
        assert a.graph.n_edges == 0 and a.pattern == "CLR"
    elif len(x) == 1:
        assert a.pattern == "NOSE"


@pytest.mark.parametrize("n", [2, 3, 40])
def test_fibonacci_one_row(n):
    mod = module("fibonacci")
    a = analyze(load(FILES["fibonacci"], size=n))
    assert a.table.shape == (1, n + 1)
    assert a.regions == ("Left",)
    assert a.patterns == ("CLR", "NOSE", "SONE")
    assert a.pattern == "CLR" and a.classification.pattern_stages == n + 1
    assert a.table[0, -1] == float(mod.reference(n)[0, -1])


def test_edit_distance_narrow_tables():
    mod = module("edit_distance")
    # Y empty: an (n+1) x 1 column of base cases; nothing is read, every pattern matches
    # and CLR fills the single column in one step.
    a = analyze(mod.make_edit_distance(np.array([1, 2, 3, 0]), np.array([], dtype=np.int64)))
    assert a.table.shape == (5, 1)
    assert a.table[:, 0].tolist() == [0, 1, 2, 3, 4]
    assert a.regions == () and a.pattern == "CLR"
    # |Y| = 1: an (n+1) x 2 table, the full NOSE reads
    x, y = np.array([1, 2, 3, 0]), np.array([2])
    a = analyze(mod.make_edit_distance(x, y))
    assert a.table.shape == (5, 2) and a.pattern == "NOSE"
    assert_same_table(a.table, mod.reference(x, y))


def test_stagecoach_single_node_stages():
    # one node per stage: an n x 1 table reading Down only; RDU, SENO and SONE all take
    # n steps and the canonical order picks RDU.
    mod = module("stagecoach")
    C = np.arange(1, 6, dtype=np.int64).reshape(5, 1, 1)
    a = analyze(mod.make_stagecoach(C, np.array([7])))
    assert a.table.shape == (5, 1)
    assert a.table[:, 0].tolist() == [7 + 1 + 2 + 3 + 4, 7 + 2 + 3 + 4, 7 + 3 + 4, 7 + 4, 7]
    assert a.patterns == ("RDU", "SENO", "SONE")
    assert a.pattern == "RDU"


def test_nim_single_rule_is_one_row():
    mod = module("nim")
    a = analyze(mod.make_nim(12, 1))
    assert a.table.shape == (1, 13)
    assert a.table[0].tolist() == [int(m % 2 != 0) for m in range(13)]
    assert a.pattern == "CLR"


def test_assembly_line_is_n_by_2():
    a = analyze(load(FILES["assembly_line_balancing"], size=16))
    assert a.table.shape == (16, 2)
    assert a.regions == ("Down", "DownLeft", "DownRight")
    assert a.pattern == "RDU"


# --- answers checked by another algorithm or by brute force --------------------------------


def test_integer_knapsack_both_forms_agree_but_read_differently():
    # The stage-and-decision form (RUD) and the one-line form (reads Left: NOSE) give the
    # same table; the reference is the one-line form.
    mod = module("integer_knapsack")
    from depgraph import recurrence

    w, p, cap = mod.data(9)

    @recurrence(shape=(len(w) + 1, cap + 1), dtype=np.int64, args=(w, p))
    def one_line(M, i, c, w, p):
        if i == 0:
            return 0
        if w[i - 1] > c:
            return M[i - 1, c]
        return max(M[i - 1, c], p[i - 1] + M[i, c - w[i - 1]])

    staged, plain = analyze(mod.make_integer_knapsack(w, p, cap)), analyze(one_line)
    assert_same_table(staged.table, plain.table)
    assert staged.pattern == "RUD" and plain.pattern == "NOSE"


def test_min_spanning_tree_matches_kruskal():
    mod = module("min_spanning_tree")
    for n in (2, 5, 7):
        (w,) = mod.data(n)
        a = analyze(mod.make_min_spanning_tree(w))
        parent = list(range(n))

        def find(x):
            while parent[x] != x:
                x = parent[x]
            return x

        total = 0
        for cost, u, v in sorted((int(w[u, v]), u, v) for u in range(n) for v in range(u + 1, n)):
            ru, rv = find(u), find(v)
            if ru != rv:
                parent[ru] = rv
                total += cost
        assert [int(a.table[r, 1 << r]) for r in range(n)] == [total] * n


def test_optimal_assignment_matches_permutations():
    mod = module("optimal_assignment")
    for n in (1, 3, 6):
        (C,) = mod.data(n)
        best = min(sum(int(C[k, perm[k]]) for k in range(n)) for perm in itertools.permutations(range(n)))
        assert analyze(mod.make_optimal_assignment(C)).table[0, 0] == best


def test_deadline_scheduling_matches_greedy():
    # Unit jobs with deadlines form a matroid: the profit-greedy schedule is optimal.
    mod = module("deadline_scheduling")
    for n in (1, 7, 16):
        d, p = mod.data(n)
        slots = [False] * (n + 1)
        total = 0
        for k in sorted(range(n), key=lambda k: -int(p[k])):
            for t in range(int(d[k]), 0, -1):
                if not slots[t]:
                    slots[t] = True
                    total += int(p[k])
                    break
        assert analyze(mod.make_deadline_scheduling(d, p)).table[0, 0] == total


def test_transportation_matches_greedy():
    mod = module("transportation")
    for n in (1, 7, 16):
        args = mod.data(n)
        a = analyze(mod.make_transportation(*args))
        assert a.table[0, -1] == mod.greedy_cost(*args)


def test_assembly_line_matches_forward_fastest_way():
    mod = module("assembly_line_balancing")
    for n in (2, 7, 16):
        a_, t, e, x = mod.data(n)
        table = analyze(mod.make_assembly_line_balancing(a_, t, e, x)).table
        assert min(int(e[0]) + table[0, 0], int(e[1]) + table[0, 1]) == mod.fastest_way(a_, t, e, x)


def test_integer_linear_programming_matches_enumeration():
    mod = module("integer_linear_programming")
    for n in (1, 4, 6):
        a_, c, u, b = mod.data(n)
        best = 0
        for xs in itertools.product(*(range(int(k) + 1) for k in u)):
            if sum(int(ai) * xi for ai, xi in zip(a_, xs)) <= b:
                best = max(best, sum(int(ci) * xi for ci, xi in zip(c, xs)))
        assert analyze(mod.make_integer_linear_programming(a_, c, u, b)).table[0, b] == best


def test_process_scheduling_matches_subsets():
    mod = module("process_scheduling")
    for n in (1, 6, 11):
        (times,) = mod.data(n)
        total = int(times.sum())
        best = min(
            max(s, total - s)
            for s in (sum(int(t) for t, bit in zip(times, bits) if bit)
                      for bits in itertools.product((0, 1), repeat=n))
        )
        assert analyze(mod.make_process_scheduling(times)).table[0, 0] == best


def test_optimal_covering_matches_enumeration():
    # choose at most K cut points among the objects; each group pays its largest price
    mod = module("optimal_covering")
    for n in (1, 6, 9):
        prices, K = mod.data(n)
        c = [int(v) for v in prices]
        best = None
        for k in range(1, K + 1):
            for cuts in itertools.combinations(range(1, n), k - 1):
                bounds = [0, *cuts, n]
                cost = sum((hi - lo) * c[hi - 1] for lo, hi in zip(bounds, bounds[1:]))
                best = cost if best is None else min(best, cost)
        assert analyze(mod.make_optimal_covering(prices, K)).table[K, n] == best


def test_winning_in_las_vegas_known_value():
    # Hillier & Lieberman's example: 3 chips, target 5, 3 bets, p = 2/3 -> 20/27.
    mod = module("winning_in_las_vegas")
    a = analyze(mod.make_winning_in_las_vegas(3, 5, 2.0 / 3.0))
    assert math.isclose(a.table[0, 3], 20.0 / 27.0, rel_tol=1e-12)
    assert a.pattern == "RDU"


def test_shortest_path_rows_are_single_source_dags():
    mod = module("shortest_path_acyclic")
    (W,) = mod.data(12)
    table = analyze(mod.make_shortest_path_acyclic(W)).table

    @lru_cache(maxsize=None)
    def dist(s, v):  # single-source recursion over predecessors
        if v == s:
            return 0.0
        return min([dist(s, u) + W[u, v] for u in range(s, v) if np.isfinite(W[u, v])], default=np.inf)

    for s in range(12):
        assert [dist(s, v) for v in range(s, 12)] == table[s, s:].tolist()
        assert np.all(np.isinf(table[s, :s]))


def test_alphabetic_tree_two_and_three_symbols():
    mod = module("alphabetic_radix_code_tree")
    a = analyze(mod.make_alphabetic_radix_code_tree([5, 1, 1]))
    # best tree: 5 at depth 1, the others at depth 2 -> 5 + 2 + 2
    assert a.table[0, 2] == 9 and a.table[0, 1] == 6 and a.table[1, 2] == 2


def test_optimal_bst_small():
    mod = module("optimal_bst")
    a = analyze(mod.make_optimal_bst([1, 10, 1]))
    # root the heavy key: 10 * 1 + 1 * 2 + 1 * 2
    assert a.table[0, 2] == 14


# --- what the solutions mean ----------------------------------------------------------------


def _lcs_backtrack(x: str, y: str, M: np.ndarray) -> str:
    """The common subsequence by the plain backtrack (up before left on a tie, as
    ``max(M[i - 1, j], M[i, j - 1])`` keeps its first operand)."""
    i, j, out = len(x), len(y), []
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            out.append(x[i - 1])
            i, j = i - 1, j - 1
        elif M[i - 1, j] >= M[i, j - 1]:
            i -= 1
        else:
            j -= 1
    return "".join(reversed(out))


def _lcs_brute(x: str, y: str) -> int:
    def within(sub, s):
        it = iter(s)
        return all(c in it for c in sub)

    return max(r for r in range(len(x) + 1)
               if any(within(sub, y) for sub in itertools.combinations(x, r)))


@pytest.mark.parametrize(("n", "m"), [(0, 5), (5, 0), (1, 6), (6, 1), (4, 7), (7, 7)])
def test_lcs_solution_is_a_common_subsequence_aligned(n, m):
    mod = module("lcs")
    rng = np.random.default_rng(10 * n + m)
    for _ in range(4):
        x, y = ("".join(rng.choice(list("ACG"), k)) for k in (n, m))  # three letters: ties
        found = fill(mod.make_lcs(x, y), backend="python", solution=True).solution
        common, top, bottom = mod.meaning(found, x, y)
        assert len(top) == len(bottom)
        assert top.replace("-", "") == x and bottom.replace("-", "") == y
        assert all(a == b or "-" in (a, b) for a, b in zip(top, bottom))
        assert common == _lcs_backtrack(x, y, mod.reference(x, y))
        assert len(common) == found.value == _lcs_brute(x, y)


def test_lcs_solution_from_another_target_still_aligns_the_whole_strings():
    mod = module("lcs")
    rec = mod.make_lcs("AGCGTAG", "GTCAGA")
    found = fill(rec, backend="python", solution=(4, 3)).solution
    common, top, bottom = mod.meaning(found, "AGCGTAG", "GTCAGA")
    assert top.replace("-", "") == "AGCGTAG" and bottom.replace("-", "") == "GTCAGA"
    assert common == _lcs_backtrack("AGCG", "GTC", mod.reference("AGCG", "GTC"))


@pytest.mark.parametrize(("items", "capacity"), [(0, 6), (5, 0), (1, 4), (6, 10), (7, 3)])
def test_knapsack_chosen_items_are_a_best_subset(items, capacity):
    mod = module("knapsack")
    rng = np.random.default_rng(items * 11 + capacity)
    for _ in range(4):
        w, p = rng.integers(1, 5, items), rng.integers(1, 4, items)  # small ranges: ties
        found = fill(mod.make_knapsack(w, p, capacity), backend="python", solution=True).solution
        chosen, weight, value = mod.chosen(found, w, p)
        assert chosen == sorted(set(chosen)) and all(0 <= k < items for k in chosen)
        assert weight == sum(int(w[k]) for k in chosen) <= capacity
        best = max(sum(int(p[k]) for k in c) for r in range(items + 1)
                   for c in itertools.combinations(range(items), r)
                   if sum(int(w[k]) for k in c) <= capacity)
        assert value == sum(int(p[k]) for k in chosen) == best == found.value


def _chain_cost(text: str, d: list[int]) -> int:
    """The multiplications of a parenthesized product ``((A1 A2) A3)`` of matrices
    ``d[k] x d[k+1]``, read back from the text alone."""
    stack: list[tuple[int, int, int]] = []  # (rows, columns, cost so far)
    for token in re.findall(r"A\d+|\)", text):
        if token == ")":
            (r, k, c1), (_, col, c2) = stack[-2:]
            stack[-2:] = [(r, col, c1 + c2 + r * k * col)]
        else:
            i = int(token[1:]) - 1
            stack.append((d[i], d[i + 1], 0))
    (_, _, cost), = stack
    return cost


def _all_costs(i: int, j: int, d: list[int]) -> list[int]:
    """The cost of every parenthesization of ``A_{i+1} ... A_{j+1}``."""
    if i == j:
        return [0]
    return [a + b + d[i] * d[k + 1] * d[j + 1] for k in range(i, j)
            for a in _all_costs(i, k, d) for b in _all_costs(k + 1, j, d)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_matrix_chain_parenthesization_is_a_cheapest_order(n):
    mod = module("matrix_chain")
    rng = np.random.default_rng(n)
    for _ in range(4):
        d = rng.integers(1, 6, n + 1).tolist()  # small dimensions: ties
        found = fill(mod.make_matrix_chain(d), backend="python", solution=True).solution
        text = mod.parenthesization(found)
        assert found.target == (0, n - 1)
        assert re.findall(r"A(\d+)", text) == [str(k) for k in range(1, n + 1)]
        assert text.count("(") == n - 1
        assert _chain_cost(text, d) == found.value == min(_all_costs(0, n - 1, d))
    assert mod.parenthesization(fill(mod.make_matrix_chain([8, 3, 7, 4]), backend="python",
                                     solution=True).solution) == "(A1 (A2 A3))"


def _smith_waterman_backtrack(x: str, y: str, H: np.ndarray) -> tuple[str, str]:
    """The plain traceback from the first best cell, in ``max``'s order: stop on 0,
    else diagonal, else up, else left."""
    i, j = np.unravel_index(np.argmax(H), H.shape)
    top, bottom = [], []
    while i > 0 and j > 0 and H[i, j] > 0:
        s = 2 if x[i - 1] == y[j - 1] else -1
        if H[i, j] == H[i - 1, j - 1] + s:
            top.append(x[i - 1]), bottom.append(y[j - 1])
            i, j = i - 1, j - 1
        elif H[i, j] == H[i - 1, j] - 1:
            top.append(x[i - 1]), bottom.append("-")
            i -= 1
        else:
            top.append("-"), bottom.append(y[j - 1])
            j -= 1
    return "".join(reversed(top)), "".join(reversed(bottom))


@pytest.mark.parametrize(("n", "m"), [(0, 4), (4, 0), (1, 6), (6, 1), (5, 9), (8, 8)])
def test_smith_waterman_local_alignment(n, m):
    mod = module("smith_waterman")
    rng = np.random.default_rng(n * 13 + m)
    for _ in range(4):
        x, y = ("".join(rng.choice(list("ACG"), k)) for k in (n, m))
        rec = mod.make_smith_waterman(x, y)
        res = fill(rec, backend="python", solution=True)
        H = mod.reference(x, y)
        assert_same_table(res.table, H)
        assert res.target == res.solution.target == tuple(np.unravel_index(np.argmax(H), H.shape))
        top, bottom = mod.local_alignment(res.solution, x, y)
        score = sum(-1 if "-" in (a, b) else 2 if a == b else -1 for a, b in zip(top, bottom))
        assert score == res.value == H.max()
        assert (top, bottom) == _smith_waterman_backtrack(x, y, H)
        i, j = res.target
        assert x[:i].endswith(top.replace("-", "")) and y[:j].endswith(bottom.replace("-", ""))


@pytest.mark.parametrize(("stem", "printed"), [
    ("lcs", "LCS(AGCGTAG, GTCAGA) = 4: GCGA\n  AG-C-GTAG\n  -GTCAG-A-\n"),
    ("knapsack", "capacity 8: best 10, items [1, 3] (weight 8, profit 10)\n"),
    ("matrix_chain", "matrices 8x3, 3x7, 7x4: 180 multiplications as (A1 (A2 A3))\n"),
    ("smith_waterman", "score 9 at H(6, 7)\n  GTT-AC\n  GTTGAC\n"),
])
def test_examples_print_what_their_solution_means(stem, printed):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, str(FILES[stem])], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.endswith(printed)


# --- hyperplane schedules: examples no pattern fits ----------------------------------------


def _steps(pi: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """Distinct values of ``pi . x`` over the table, by enumeration."""
    return len({sum(p * x for p, x in zip(pi, cell)) for cell in np.ndindex(*shape)})


def assert_hyperplane(a, pi: tuple[int, ...]) -> None:
    """No pattern, the hyperplane ``pi`` with its step count, and every traced read on an
    earlier hyperplane."""
    shape = a.recurrence.shape
    assert a.pattern is None
    assert a.patterns == (() if len(shape) == 2 else None)
    steps = _steps(pi, shape)
    assert (a.schedule.kind, a.schedule.pi, a.schedule.steps) == ("hyperplane", pi, steps)
    assert a.to_json()["schedule"] == {"kind": "hyperplane", "pi": list(pi), "steps": steps}
    assert np.all(traced_offsets(a.graph) @ np.array(pi) <= -1)


HYPERPLANE_CASES = [(stem, n) for stem in sorted(HYPERPLANES) for n in (2, 7, 12)]


@pytest.mark.parametrize(("stem", "n"), HYPERPLANE_CASES)
def test_hyperplane_schedule_and_table(stem, n):
    mod = module(stem)
    rec = load(FILES[stem], size=n)
    assert rec.ndim == len(HYPERPLANES[stem])
    a = analyze(rec)
    assert a.graph.n_edges > 0
    assert_hyperplane(a, HYPERPLANES[stem])
    if stem == "skew":
        assert a.regions == ("Left", "UpRight")
    assert_same_table(a.table, mod.reference(*mod.data(n)))


def test_hyperplane_examples_at_size_one():
    # Floyd-Warshall on one vertex is a 2 x 1 x 1 stack and the LCS of three 1-letter
    # strings a 2 x 2 x 2 cube: still their hyperplanes.  Skew's 1 x 2 grid has no row
    # above, so it reads Left only and CLR (one column a step) fits it.
    for stem in ("floyd_warshall", "lcs3"):
        mod = module(stem)
        a = analyze(load(FILES[stem], size=1))
        assert_hyperplane(a, HYPERPLANES[stem])
        assert_same_table(a.table, mod.reference(*mod.data(1)))
    mod = module("skew")
    a = analyze(load(FILES["skew"], size=1))
    assert a.table.shape == (1, 2) and a.regions == ("Left",)
    assert (a.pattern, a.schedule.kind, a.schedule.steps) == ("CLR", "pattern", 2)
    assert_same_table(a.table, mod.reference(*mod.data(1)))


@pytest.mark.parametrize("shape", [(1, 5), (5, 1), (4, 2), (2, 6)])
def test_skew_rectangular(shape):
    mod = module("skew")
    A = np.random.default_rng(sum(shape)).integers(-9, 10, shape)
    a = analyze(mod.make_skew(A))
    assert_same_table(a.table, mod.reference(A))
    if shape == (1, 5):  # one row: Left reads only
        assert a.regions == ("Left",) and a.pattern == "CLR"
    elif shape == (5, 1):  # one column: no left neighbour, no up-right one
        assert a.graph.n_edges == 0 and a.pattern == "CLR"
    else:
        assert_hyperplane(a, (2, 1))


@pytest.mark.parametrize("stem", sorted(HYPERPLANES))
def test_hyperplane_fills(stem):
    """The CPU and Python fills give the reference table; ``auto`` on the CPU may judge a
    small table faster filled sequentially."""
    mod = module(stem)
    pi = HYPERPLANES[stem]
    rec = load(FILES[stem], size=5)
    want = mod.reference(*mod.data(5))
    res = depgraph.fill(rec, backend="cpu", schedule="auto", verify=True)
    assert res.schedule in ("hyperplane", "sequential")
    assert res.verified and np.array_equal(res.table, want)
    res = depgraph.fill(rec, backend="cpu", schedule="hyperplane", verify=True)
    assert (res.schedule, res.pi, res.steps) == ("hyperplane", pi, _steps(pi, rec.shape))
    assert res.verified and np.array_equal(res.table, want)
    res = depgraph.fill(rec, backend="python", schedule="auto", verify=True)
    assert (res.schedule, res.pi) == ("hyperplane", pi)
    assert res.verified and np.array_equal(res.table, want)


def _best_walks(A: np.ndarray) -> np.ndarray:
    """The best sum of a walk (steps right or down-left, from any cell) ending at each
    cell, over every walk: a step adds 1 to ``2i + j``, so walks are finite."""
    n, m = A.shape
    best = np.full(A.shape, np.iinfo(np.int64).min, dtype=np.int64)
    todo = [(i, j, 0) for i, j in np.ndindex(n, m)]  # (cell, sum before it)
    while todo:
        i, j, total = todo.pop()
        total += int(A[i, j])
        best[i, j] = max(best[i, j], total)
        if j + 1 < m:
            todo.append((i, j + 1, total))
        if i + 1 < n and j > 0:
            todo.append((i + 1, j - 1, total))
    return best


def test_skew_matches_every_walk():
    mod = module("skew")
    for shape in ((3, 4), (4, 3), (2, 5)):
        A = np.random.default_rng(7 * shape[0] + shape[1]).integers(-9, 10, shape)
        assert_same_table(analyze(mod.make_skew(A)).table, _best_walks(A))


def test_floyd_warshall_layers_match_bellman_ford():
    # Layer k by Bellman-Ford from each source, relaxing only out of the source and the
    # vertices below k (the path's interior vertices).
    mod = module("floyd_warshall")
    for n in (1, 4, 8):
        (W,) = mod.data(n)
        table = analyze(mod.make_floyd_warshall(W)).table
        for k in range(n + 1):
            for s in range(n):
                dist = [mod.NO_EDGE] * n
                dist[s] = 0
                for _ in range(n):
                    for u in [s, *range(k)]:
                        for v in range(n):
                            if dist[u] < mod.NO_EDGE and W[u, v] < mod.NO_EDGE:
                                dist[v] = min(dist[v], dist[u] + int(W[u, v]))
                assert table[k, s].tolist() == dist, (n, k, s)
        assert np.all(np.diff(table, axis=0) <= 0)  # more intermediates never cost more


def _lcs3_brute(x: str, y: str, z: str) -> int:
    """Longest subsequence of ``x`` that is also one of ``y`` and of ``z``."""
    def within(sub, s):
        it = iter(s)
        return all(c in it for c in sub)

    for r in range(len(x), -1, -1):
        if any(within(sub, y) and within(sub, z) for sub in itertools.combinations(x, r)):
            return r
    return 0


def test_lcs3_known_answers():
    mod = module("lcs3")
    assert analyze(mod.make_lcs3("AGGT12", "12TXAYB", "12XBA")).table[-1, -1, -1] == 2
    assert analyze(mod.make_lcs3("geeks", "geeksfor", "geeksforgeeks")).table[-1, -1, -1] == 5
    # with the third string a copy of the second: the thesis's two-string answer
    assert analyze(mod.make_lcs3(b"AGCGTAG", b"GTCAGA", b"GTCAGA")).table[-1, -1, -1] == 4


def test_lcs3_matches_brute_force():
    # every prefix triple of small random strings (empty ones included)
    mod = module("lcs3")
    rng = np.random.default_rng(3)
    for _ in range(6):
        x, y, z = ("".join(rng.choice(list("ACGT"), rng.integers(0, 5))) for _ in range(3))
        table = analyze(mod.make_lcs3(x, y, z)).table
        assert table.shape == (len(x) + 1, len(y) + 1, len(z) + 1)
        for i, j, k in np.ndindex(*table.shape):
            assert table[i, j, k] == _lcs3_brute(x[:i], y[:j], z[:k]), (x, y, z, i, j, k)


# --- numba can compile every cell function -------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(FILES))
def test_cell_function_compiles_with_numba(stem):
    """``numba.njit`` of the cell function recomputes every cell from the reference table."""
    numba = pytest.importorskip("numba")
    mod = module(stem)
    n = 5
    rec = load(FILES[stem], size=n)
    table = np.ascontiguousarray(mod.reference(*mod.data(n)), dtype=rec.dtype)
    f = numba.njit(rec.func)
    got = np.empty_like(table)
    for idx in np.ndindex(*rec.shape):
        got[idx] = f(table, *idx, *rec.args)
    assert_same_table(got, table)
