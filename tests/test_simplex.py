import itertools
from fractions import Fraction

import numpy as np
import pytest
from sympy import Matrix, Rational
from sympy.solvers.simplex import InfeasibleLPError, UnboundedLPError, linprog

from depgraph.analysis.simplex import Infeasible, Unbounded, least_value


def _sympys(c, A, b):
    """sympy's own answer: the least value, or the error's counterpart (with no rows,
    which sympy's linprog refuses, the answer over x >= 0 alone)."""
    if not A:
        return Fraction(0) if min(c) >= 0 else Unbounded
    try:
        value, _ = linprog(Matrix([c]), Matrix(A), Matrix(b))
        return Fraction(int(value.p), int(value.q))
    except UnboundedLPError:
        return Unbounded
    except InfeasibleLPError:
        return Infeasible


def _ours(c, A, b):
    try:
        return least_value(c, A, b)
    except (Unbounded, Infeasible) as exc:
        return type(exc)


def _program(seed):
    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(0, 9)), int(rng.integers(1, 8))
    A = rng.integers(-4, 5, (rows, cols)).tolist()
    b = rng.integers(-6, 7, rows).tolist()
    c = rng.integers(-3, 4, cols).tolist()
    return c, A, b


def _vertices(A, b, cols):
    """Every vertex of ``A x <= b, x >= 0``: each choice of ``cols`` constraints held as
    equalities whose system has one solution that meets the others."""
    rows = [(list(map(Fraction, r)), Fraction(v)) for r, v in zip(A, b)]
    rows += [([Fraction(-int(k == j)) for k in range(cols)], Fraction(0)) for j in range(cols)]
    for chosen in itertools.combinations(rows, cols):
        M = [r[:] + [v] for r, v in chosen]
        for col in range(cols):  # Gauss-Jordan in fractions
            pivot = next((i for i in range(col, cols) if M[i][col] != 0), None)
            if pivot is None:
                break
            M[col], M[pivot] = M[pivot], M[col]
            M[col] = [v / M[col][col] for v in M[col]]
            for i in range(cols):
                if i != col and M[i][col]:
                    M[i] = [v - M[i][col] * w for v, w in zip(M[i], M[col])]
        else:
            x = [M[i][-1] for i in range(cols)]
            if all(sum(a * v for a, v in zip(r, x)) <= bound for r, bound in rows):
                yield x


# seeds whose programs sympy's own phase 1 cycles on (found by running them with a timer)
CYCLES = (39, 380)


@pytest.mark.parametrize("seed", [s for s in range(120) if s not in CYCLES])
def test_the_least_value_is_sympys_on_random_programs(seed):
    c, A, b = _program(seed)
    assert _ours(c, A, b) == _sympys(c, A, b)


@pytest.mark.parametrize("seed", CYCLES)
def test_programs_sympy_cycles_on_end_with_the_vertices_answer(seed):
    c, A, b = _program(seed)
    vertices = list(_vertices(A, b, len(c)))
    ours = _ours(c, A, b)
    if not vertices:  # x >= 0 makes a nonempty region have a vertex
        assert ours is Infeasible
    else:
        assert ours == min(sum(Fraction(a) * v for a, v in zip(c, x)) for x in vertices)


def test_rationals_of_sympy_and_fractions_are_taken_and_nothing_else():
    assert least_value([Rational(1, 2)], [[Fraction(-1, 3)]], [-1]) == Fraction(3, 2)
    with pytest.raises(TypeError, match="only rationals"):
        least_value([0.5], [[1]], [1])
