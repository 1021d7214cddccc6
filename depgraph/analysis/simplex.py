"""The least value of a linear program, exactly, in rationals: the prover's small programs.

:func:`least_value` minimises ``c . x`` under ``A x <= b`` and ``x >= 0`` by the
two-phase simplex method with Bland's rule (the entering column the first with a
negative reduced cost, the leaving row the first basic variable among the least ratios),
which never cycles: phase 1 minimises the sum of an artificial variable per row whose
bound is negative, phase 2 the objective from the basis phase 1 leaves.  Each row of the
tableau is Python integers over a positive denominator of its own, reduced by their
greatest common divisor after each pivot: exact, and integer arithmetic where
fractions would build an object per entry.  (sympy's ``linprog`` builds a ``Matrix`` and
converts each entry at each pivot, which made the prover's few-row programs cost
milliseconds each, and its phase 1 can cycle.)

Assumptions: every entry is a rational (an ``int``, a ``Fraction``, or a sympy
``Rational``; anything else is a ``TypeError``); the programs are small and dense.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

__all__ = ["Infeasible", "Unbounded", "least_value"]


class Infeasible(Exception):
    """The constraints cannot hold together."""


class Unbounded(Exception):
    """The objective has no least value under the constraints."""


def _ratio(v: Any) -> tuple[int, int]:
    """``v`` (an ``int``, a ``Fraction`` or a sympy ``Rational``) as numerator and
    denominator."""
    if isinstance(v, int):
        return v, 1
    if isinstance(v, Fraction):
        return v.numerator, v.denominator
    if getattr(v, "is_Rational", False):
        return int(v.p), int(v.q)
    raise TypeError(f"only rationals are allowed, not {v!r}")


Row = list[int]  # numerators, the last the denominator (positive)


def _row(values: Sequence[Any], sign: int = 1) -> Row:
    """The integer row of rationals ``values`` times ``sign``: their numerators over a
    common denominator, that denominator last."""
    pairs = [_ratio(v) for v in values]
    scale = math.lcm(*(q for _, q in pairs)) if pairs else 1
    return _reduced([sign * p * (scale // q) for p, q in pairs] + [scale])


def _reduced(row: Row) -> Row:
    """``row`` divided by the greatest common divisor of its entries."""
    g = math.gcd(*row)
    return row if g == 1 else [v // g for v in row]


def _pivot(T: list[Row], r: int, col: int) -> None:
    """Pivot the tableau ``T`` in place on entry ``col`` of row ``r``: that row divided
    by it, each other row less its multiple that zeroes its entry ``col``."""
    pivot = T[r]
    p = pivot[col]
    # T[r] / p: the same numerators over p (for the denominator the sign goes up)
    share = pivot[:-1] + [p] if p > 0 else [-v for v in pivot[:-1]] + [-p]
    T[r] = share = _reduced(share)
    assert share[col] == share[-1]  # the entry is now 1
    for i, row in enumerate(T):
        if i != r and row[col]:
            T[i] = _eliminate(row, row[col], share)


def _eliminate(row: Row, f: int, unit: Row) -> Row:
    """``row`` less ``f / d`` times ``unit`` (``d`` the row's denominator), ``unit`` a row
    whose entry where ``row`` has ``f`` is 1: that entry of the result is 0.  Over the
    denominators, ``row / d - (f / d) * unit / e == (row * e - f * unit) / (d * e)``."""
    e = unit[-1]
    return _reduced([v * e - f * w for v, w in zip(row[:-1], unit[:-1])] + [row[-1] * e])


def _simplex(T: list[Row], basis: list[int], entering: range) -> None:
    """Minimise over the tableau ``T`` from the feasible ``basis``: its last row the
    reduced costs and the negated value, each row's second last entry its basic value
    (numerators; the last the row's denominator); the columns of ``entering`` free to
    enter, by Bland's rule; ``Unbounded`` where the cost decreases without end."""
    while True:
        costs = T[-1]
        col = next((j for j in entering if costs[j] < 0), None)
        if col is None:
            return
        rows = [i for i in range(len(basis)) if T[i][col] > 0]
        if not rows:
            raise Unbounded("the objective decreases without end")
        r = min(rows, key=lambda i: (Fraction(T[i][-2], T[i][col]), basis[i]))
        _pivot(T, r, col)
        basis[r] = col


def _costs(T: list[Row], basis: list[int], cost: Row) -> Row:
    """The reduced costs of the integer ``cost`` row for ``basis`` over the constraint
    rows ``T``, and the negated value of the basic solution: the tableau's last row."""
    row = cost
    for b_, line in zip(basis, T):
        if row[b_]:  # zero the basic column (the basic row's entry there is 1)
            row = _eliminate(row, row[b_], line)
    return row


def least_value(c: Sequence[Any], A: Sequence[Sequence[Any]], b: Sequence[Any]) -> Fraction:
    """The least value of ``c . x`` under ``A x <= b`` and ``x >= 0`` (``A`` may have no
    rows); ``Infeasible`` or ``Unbounded`` where there is none.

    Examples
    --------
    >>> least_value([1, 1], [[-2, -1]], [-4])  # x + y under 2x + y >= 4
    Fraction(2, 1)
    >>> least_value([-1, -1], [[1, 1], [-1, 1], [0, 1], [-1, 0]], [5, 1, 2, -1])
    Fraction(-5, 1)
    >>> least_value([1], [[1]], [-1])
    Traceback (most recent call last):
    ...
    depgraph.analysis.simplex.Infeasible: the constraints cannot hold together
    >>> least_value([-1], [], [])
    Traceback (most recent call last):
    ...
    depgraph.analysis.simplex.Unbounded: the objective decreases without end
    """
    n, m = len(c), len(A)
    # columns: x (n), a slack per row (m), an artificial per row whose bound is negative
    negative = [i for i in range(m) if _ratio(b[i])[0] < 0]
    width = n + m + len(negative)
    T: list[Row] = []
    basis: list[int] = []
    for i, (row, bound) in enumerate(zip(A, b)):
        line = list(row) + [int(k == i) for k in range(m)] + [0] * len(negative) + [bound]
        if i in negative:  # -row x - slack = -bound >= 0, with its artificial basic
            line = _row(line, -1)
            line[n + m + negative.index(i)] = line[-1]
            basis.append(n + m + negative.index(i))
        else:
            line = _row(line)
            basis.append(n + i)
        T.append(line)
    if negative:  # phase 1: the least sum of the artificials
        T.append(_costs(T, basis, [int(j >= n + m) for j in range(width)] + [0, 1]))
        _simplex(T, basis, range(width))
        T.pop()
        if any(row[-2] > 0 for b_, row in zip(basis, T) if b_ >= n + m):
            raise Infeasible("the constraints cannot hold together")
        for r in range(len(T) - 1, -1, -1):  # artificials left at 0: out, or the row
            if basis[r] >= n + m:
                col = next((j for j in range(n + m) if T[r][j] != 0), None)
                if col is None:  # a row the others imply
                    del T[r], basis[r]
                else:
                    _pivot(T, r, col)
                    basis[r] = col
    T.append(_costs(T, basis, _row(list(c) + [0] * (width - n) + [0])))
    _simplex(T, basis, range(n + m))
    return Fraction(-T[-1][-2], T[-1][-1])
