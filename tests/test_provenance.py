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

from depgraph import fill, recurrence
from depgraph.errors import RecurrenceError, UsageError
from depgraph.frontend.provenance import Solution, aligned, solution


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
    @recurrence(shape=(4, 4), dtype=np.int64)
    def binom(M, i, j):
        if j == 0 or j == i:
            return 1
        if j > i:
            return 0
        return M[i - 1, j - 1] + M[i - 1, j]

    s = solution(binom, fill(binom, backend="python").table, (3, 1))
    assert s.note.startswith(f"solution: {s.undecided} cell(s) read several cells")
    assert s.undecided > 0 and ((3, 1), (2, 0)) in s.edges and ((3, 1), (2, 1)) in s.edges


def test_a_target_outside_the_table_is_a_usage_error():
    rec = make_lcs("AB", "A")
    with pytest.raises(UsageError, match=r"target \(5, 0\): outside"):
        solution(rec, fill(rec, backend="python").table, (5, 0))


def _lcs_left_first(x, y, M):
    """The backtrack that prefers left on a tie (the other choice of ``max``'s)."""
    i, j, path = len(x), len(y), []
    while i > 0 and j > 0:
        path.append((i, j))
        if x[i - 1] == y[j - 1]:
            i, j = i - 1, j - 1
        elif M[i, j - 1] >= M[i - 1, j]:
            j -= 1
        else:
            i -= 1
    return path + [(i, j)]


def _lcs_with_recovery(x, y):
    def left_first(M, i, j, X, Y):
        if i == 0 or j == 0:
            return []
        if X[i - 1] == Y[j - 1]:
            return [(i - 1, j - 1)]
        return [(i, j - 1)] if M[i, j - 1] >= M[i - 1, j] else [(i - 1, j)]

    lcs = make_lcs(x, y)
    return recurrence(shape=lcs.shape, dtype=lcs.dtype, args=lcs.args, recover=left_first)(lcs.func)


@pytest.mark.parametrize("n, m", [(1, 8), (8, 1), (6, 6), (10, 4)])
def test_a_recovery_function_is_followed(n, m):
    rng = np.random.default_rng(7 * n + m)
    for _ in range(5):
        x, y = rng.integers(0, 3, n), rng.integers(0, 3, m)
        rec = _lcs_with_recovery(x, y)
        table = fill(rec, backend="python").table
        s = solution(rec, table)
        assert list(s.cells) == _lcs_left_first(x.tolist(), y.tolist(), table)
        assert s.undecided == 0 and s.note is None


def test_a_recovery_function_may_return_only_reads():
    def anywhere(M, i, j, X, Y):
        return [(0, 0)] if (i, j) != (0, 0) else []

    lcs = make_lcs("ACGT", "AGT")
    rec = recurrence(shape=lcs.shape, dtype=lcs.dtype, args=lcs.args, recover=anywhere)(lcs.func)
    with pytest.raises(RecurrenceError, match=r"cell \(4, 3\): the recovery function anywhere "
                       r"of 'lcs' returned \(0, 0\), which the cell does not read"):
        solution(rec, fill(rec, backend="python").table)

    def not_a_cell(M, i, j, X, Y):
        return [(i, j, 0)]

    rec = recurrence(shape=lcs.shape, dtype=lcs.dtype, args=lcs.args, recover=not_a_cell)(lcs.func)
    with pytest.raises(RecurrenceError, match=r"cell \(4, 3\).*3 indices for a 2-D table"):
        solution(rec, fill(rec, backend="python").table)

    def fails(M, i, j, X, Y):
        raise KeyError(i)

    rec = recurrence(shape=lcs.shape, dtype=lcs.dtype, args=lcs.args, recover=fails)(lcs.func)
    with pytest.raises(RecurrenceError, match=r"cell \(4, 3\): the recovery function fails .*KeyError"):
        solution(rec, fill(rec, backend="python").table)


def test_a_loop_is_named_as_a_cycle():
    # a ring that reads its next cell: no fill exists, but a table given by hand has
    # values, and following the reads comes back to the start
    def next_cell(M, i, j):
        return [(i, (j + 1) % 3)]

    @recurrence(shape=(1, 3), dtype=np.int64, recover=next_cell)
    def ring(M, i, j):
        return M[i, (j + 1) % 3] + 1

    with pytest.raises(RecurrenceError, match=r"next_cell of 'ring' loops at cell \(0, 1\): "
                       r"\(0, 1\) -> \(0, 2\) -> \(0, 0\) -> \(0, 1\)"):
        solution(ring, np.zeros((1, 3), np.int64), (0, 1))

    @recurrence(shape=(1, 3), dtype=np.int64)
    def ring_reads(M, i, j):
        return M[i, (j + 1) % 3] + 1

    with pytest.raises(RecurrenceError, match=r"the solution walk of 'ring_reads' loops"):
        solution(ring_reads, np.zeros((1, 3), np.int64))


def _best_cell(M):
    return np.unravel_index(np.argmax(M), M.shape)


@pytest.mark.parametrize("shape", [(1, 7), (7, 1), (5, 5), (4, 9)])
def test_the_recurrence_names_its_answer(shape):
    A = np.random.default_rng(sum(shape)).integers(-3, 4, shape)  # small range: ties

    @recurrence(shape=shape, dtype=np.int64, args=(A,), target=_best_cell)
    def kadane(M, i, j, A):  # the best sum of a run along a row ending at (i, j)
        return A[i, j] + (max(0, M[i, j - 1]) if j > 0 else 0)

    table = fill(kadane, backend="python").table
    best = _best_cell(table)
    s = solution(kadane, table)
    assert s.target == best and s.value == table.max()
    i, j = best
    run = [(i, k) for k in range(j, -1, -1)]
    assert list(s.cells) == run[:len(s.cells)]  # back along the row to where the run starts
    start = s.cells[-1][1]
    assert sum(A[i, start:j + 1]) == table.max()
    assert solution(kadane, table, (0, 0)).target == (0, 0)  # the target asked for wins


def test_a_cell_target_is_the_default():
    rec = make_matrix_chain(np.array([8, 3, 7, 4]))
    table = fill(rec, backend="python").table
    assert solution(rec, table).target == (0, 2) and int(solution(rec, table).value) == 180


def test_a_bad_target_is_named():
    rec = make_lcs("AB", "A")
    with pytest.raises(UsageError, match=r"target \(1, 2, 3\): 3 indices"):
        solution(rec, fill(rec, backend="python").table, (1, 2, 3))

    @recurrence(shape=(2, 2), dtype=np.int64, target=lambda M: (9, 9))
    def zeros(M, i, j):
        return 0

    with pytest.raises(RecurrenceError, match=r"the target function <lambda> of 'zeros' returned"):
        solution(zeros, np.zeros((2, 2), np.int64))


@pytest.mark.parametrize("n, m", [(0, 5), (5, 0), (3, 8), (6, 6)])
def test_aligned_follows_the_path(n, m):
    rng = np.random.default_rng(n + 17 * m)
    x, y = ("".join(rng.choice(list("AC"), k)) for k in (n, m))
    rec = make_lcs(x, y)
    s = solution(rec, fill(rec, backend="python").table)
    top, bottom = aligned(s, x, y)
    i, j = s.cells[-1]  # the path's end: the prefixes before it are not aligned
    assert top.replace("-", "") == x[i:] and bottom.replace("-", "") == y[j:]
    assert all(a == b for a, b in zip(top, bottom) if "-" not in (a, b))


def test_aligned_needs_a_path_of_alignment_steps():
    rec = make_matrix_chain(np.array([2, 3, 4, 5]))
    tree = solution(rec, fill(rec, backend="python").table)
    with pytest.raises(UsageError, match="not a path"):
        aligned(tree, "abc", "abc")
    jump = Solution((2, 2), 0, (((2, 2), (0, 2)),), ((2, 2), (0, 2)), 0)
    with pytest.raises(UsageError, match=r"steps from \(2, 2\) to \(0, 2\)"):
        aligned(jump, "ab", "ab")
