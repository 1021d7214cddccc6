"""Solution recovery (:mod:`depgraph.frontend.provenance`) against independent
backtracks: LCS and edit distance paths, knapsack items by brute force, matrix chain's
split tree; tables from every backend; odd shapes; ties to the first operand."""

import itertools

import numpy as np
import pytest
from edit_distance import make_edit_distance
from knapsack import make_knapsack
from lcs import make_lcs
from matrix_chain import make_matrix_chain

from depgraph import fill
from depgraph.errors import UsageError
from depgraph.frontend.provenance import solution


def _lcs_path(x, y, M):
    """The plain backtrack: a match goes diagonal, else up when up >= left (max's first
    operand is M[i - 1, j]), else left."""
    i, j, path = len(x), len(y), []
    while i > 0 and j > 0:
        path.append((i, j))
        if x[i - 1] == y[j - 1]:
            i, j = i - 1, j - 1
        elif M[i - 1, j] >= M[i, j - 1]:
            i -= 1
        else:
            j -= 1
    return path + [(i, j)]


@pytest.mark.parametrize("n, m", [(1, 9), (9, 1), (7, 7), (12, 5)])
def test_an_lcs_path_is_the_backtrack(n, m):
    rng = np.random.default_rng(n * 31 + m)
    for _ in range(5):
        x, y = rng.integers(0, 3, n), rng.integers(0, 3, m)  # three letters: many ties
        rec = make_lcs(x, y)
        table = fill(rec, backend="python").table
        s = solution(rec, table)
        assert list(s.cells) == _lcs_path(x.tolist(), y.tolist(), table)
        assert [b for _, b in s.edges] == list(s.cells[1:])
        assert s.undecided == 0


def test_every_backends_table_gives_the_same_solution():
    rng = np.random.default_rng(3)
    rec = make_lcs(rng.integers(0, 4, 11), rng.integers(0, 4, 8))
    found = {solution(rec, fill(rec, backend=b).table) for b in ("python", "cpu", "cuda")}
    assert len(found) == 1


def test_knapsack_items_are_a_best_choice():
    rng = np.random.default_rng(5)
    for _ in range(10):
        w, p = rng.integers(1, 6, 6), rng.integers(1, 10, 6)
        cap = 10
        rec = make_knapsack(w, p, cap)
        table = fill(rec, backend="python").table
        s = solution(rec, table)
        # a step down a row that changes the column takes item i - 1
        taken = [a[0] - 1 for a, b in s.edges if b[1] != a[1]]
        assert sum(w[taken]) <= cap
        best = max(sum(p[list(c)]) for k in range(7) for c in itertools.combinations(range(6), k)
                   if sum(w[list(c)]) <= cap)
        assert sum(p[taken]) == best == int(s.value)


def test_a_matrix_chain_solution_is_its_split_tree():
    dims = np.array([8, 3, 7, 4, 5, 2])
    rec = make_matrix_chain(dims)
    table = fill(rec, backend="python").table
    n = len(dims) - 1
    s = solution(rec, table, (0, n - 1))
    children = {}
    for a, b in s.edges:
        children.setdefault(a, []).append(b)
    for (i, j), kids in children.items():  # a split k: (i, k) and (k + 1, j)
        assert len(kids) == 2 and kids[0][0] == i and kids[1][1] == j and kids[0][1] + 1 == kids[1][0]
    leaves = [c for c in s.cells if c not in children]
    assert sorted(leaves) == [(k, k) for k in range(n)]


def test_edit_distance_path_ends_at_the_origin():
    rec = make_edit_distance(np.frombuffer(b"kitten", np.uint8), np.frombuffer(b"sitting", np.uint8))
    table = fill(rec, backend="python").table
    s = solution(rec, table)
    assert int(s.value) == 3 and s.cells[-1] == (0, 0)
    assert all(abs(a[0] - b[0]) <= 1 and abs(a[1] - b[1]) <= 1 for a, b in s.edges)


def test_a_sum_of_reads_takes_them_all():
    from depgraph import recurrence

    @recurrence(shape=(4, 4), dtype=np.int64)
    def binom(M, i, j):
        if j == 0 or j == i:
            return 1
        if j > i:
            return 0
        return M[i - 1, j - 1] + M[i - 1, j]

    s = solution(binom, fill(binom, backend="python").table, (3, 1))
    assert s.undecided > 0 and ((3, 1), (2, 0)) in s.edges and ((3, 1), (2, 1)) in s.edges


def test_a_target_outside_the_table_is_a_usage_error():
    rec = make_lcs("AB", "A")
    with pytest.raises(UsageError, match="outside"):
        solution(rec, fill(rec, backend="python").table, (5, 0))
