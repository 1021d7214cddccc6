"""A cell's guards applied last, as selects: the same value at every cell, or no rewrite."""

import ast
import itertools
import textwrap

import numpy as np
import pytest

from runtime.backends.speculate import RESULT, speculate

#: Cells of the forms speculate takes (``x``, ``y``: loads of the arguments the caller made,
#: ``X``: an array): guards on the indices and on data, assignments
#: before, between and after the guards, an ``if`` in the rest that returns, one that
#: does not, an ``else``, bitwise and unary operators, ``min``/``max``/``abs``, extents.
TAKEN = [
    """
    def f(M, i, j, x, y, X):
        if i == 0 or j == 0:
            return 0
        if x == y:
            return M + 1
        return max(M, i)
    """,
    """
    def f(M, i, j, x, y, X):
        cost = abs(x - y)
        if i == 0 and j == 0:
            return cost
        if i == 0:
            return cost + M * j
        size = X.shape[0]
        if j == 0:
            return cost + size
        return cost + min(M, i, j)
    """,
    """
    def f(M, i, j, x, y, X):
        if i == 0:
            return j
        sub = M - 2
        if x != y:
            sub += 1
        if j == 0:
            return i
        if sub > 3:
            sub = sub - i
            if j > i:
                return -sub
        elif sub < -2:
            return ~sub & 7
        else:
            pass
        return min(M + 1, sub) | (not i) ^ (j >= 2)
    """,
]

#: Cells speculate leaves alone, each for one reason.
REFUSED = {
    "no guard": "def f(M, i, j, X, Y):\n    return M + i",
    "a division": "def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n    return M // j",
    "a modulo": "def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n    return M % j",
    "a shift": "def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n    return M << j",
    "a power": "def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n    return M ** j",
    "a load": "def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n    return X[j - 1]",
    "another call": "def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n    return g(j)",
    "a loop": ("def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n"
               "    for k in range(j):\n        M += k\n    return M"),
    "a guard's name assigned after it": ("def f(M, i, j, X, Y):\n    k = i\n    if k == 0:\n"
                                         "        return k\n    k = j\n    return k"),
    "a path with no value": ("def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n"
                             "    if i == 0:\n        M = 1\n    else:\n        return M"),
    "a bare return": "def f(M, i, j, X, Y):\n    if j == 0:\n        return\n    return M",
}


def _compiled(fn: ast.FunctionDef):
    ns: dict = {}
    exec(compile(ast.fix_missing_locations(ast.Module([fn], type_ignores=[])), "<cell>", "exec"),
         ns)
    return ns[fn.name]


@pytest.mark.parametrize("source", TAKEN)
def test_speculated_cells_equal_the_original_at_every_cell(source):
    source = textwrap.dedent(source)
    fn = ast.parse(source).body[0]
    assert speculate(fn)
    body = fn.body
    assert isinstance(body[-1], ast.Return) and ast.unparse(body[-1]) == f"return {RESULT}"
    assert not any(isinstance(n, ast.Return) for s in body[:-1] for n in ast.walk(s))
    original, rewritten = _compiled(ast.parse(source).body[0]), _compiled(fn)
    X = np.zeros(4)
    for M, i, j, x, y in itertools.product(range(-3, 6), range(4), range(4), range(2), range(2)):
        assert rewritten(M, i, j, x, y, X) == original(M, i, j, x, y, X), (M, i, j, x, y)


def test_the_guards_become_selects_applied_from_the_last_to_the_first():
    fn = ast.parse(textwrap.dedent(TAKEN[1])).body[0]
    assert speculate(fn)
    picks = [ast.unparse(s) for s in fn.body if isinstance(s, ast.Assign)
             and isinstance(s.value, ast.IfExp)]
    assert picks == [f"{RESULT} = cost + size if j == 0 else {RESULT}",
                     f"{RESULT} = cost + M * j if i == 0 else {RESULT}",
                     f"{RESULT} = cost if i == 0 and j == 0 else {RESULT}"]


@pytest.mark.parametrize("why", sorted(REFUSED))
def test_cells_not_harmless_at_every_cell_are_left_alone(why):
    fn = ast.parse(REFUSED[why]).body[0]
    before = ast.dump(fn)
    assert not speculate(fn)
    assert ast.dump(fn) == before


def test_the_callers_functions_may_be_called():
    source = "def f(M, i, j, X, Y):\n    if j == 0:\n        return 0\n    return RD(M, i - 1, j)"
    assert not speculate(ast.parse(source).body[0])
    assert speculate(ast.parse(source).body[0], ("RD",))
