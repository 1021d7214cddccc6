"""What a cell's bit operations on its indices say, for the prover: ``a | b``, ``a ^ b`` and
``1 << c`` as symbols of the walk (:class:`BitOps`, a part of
:class:`~depgraph.analysis.symbolic.Walk`), the tests that say a bit is clear, the size
facts that make a table side a power of two, and what bounds those symbols under a path's
premises (:func:`bit_facts`), as the subsets of a bitmask DP index its table (a table of
``2 ** n`` columns, ``M[k + 1, S | (1 << j)]`` under ``(S >> j) & 1 == 0``).

Assumptions: integer index arithmetic as numba's int64 (a shift by 0 to 62 a power of two);
a table's side is below ``2 ** 63``.  A bound holds only where its operands' bounds are
proven under the same premises: nothing here holds for every value of the operands.
"""

from __future__ import annotations

import ast
from typing import Any

from depgraph.analysis.proof import Requirement

__all__ = ["BitOps", "bit_facts"]


class BitOps:
    """The walk's bit operations (:class:`~depgraph.analysis.symbolic.Walk` is one): its
    symbols for them, recorded in ``bitwise`` and ``powers``, and the facts of table
    sides that are powers of two (``logs``: each side's log2 symbol).  The walk gives the
    rest: its sympy, cell IR, sizes, extents' symbols, ``polynomial``, ``operation`` and
    ``side_values``."""

    bitwise: list[tuple[type, Any, Any, Any]]
    powers: list[tuple[Any, Any]]
    shifts: list[tuple[Any, Any, Any]]
    logs: list[Any]
    sympy: Any
    ir: Any
    shape: tuple[int, ...]
    extent: list[Any]
    polynomial: Any
    operation: Any
    side_values: Any

    def _bitwise(self, node: ast.BinOp, env: dict[str, Any]) -> Any | None:
        """``a | b`` or ``a ^ b`` of integer polynomials as a symbol of its own (one per
        operator and operands' forms), recorded in :attr:`bitwise`: what bounds it
        (both operands at least 0, or below a power of two) holds only where the
        operands' bounds do, so the prover finds it under each path's premises; ``None``
        for operands that are not integer polynomials.

        Examples
        --------
        >>> from depgraph.analysis.symbolic import Walk
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i, j ^ (1 << i)]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> x = w.polynomial(ast.parse("j ^ (1 << i)", mode="eval").body, {})
        >>> w.display[x], [(c, w.display[y]) for c, y in w.powers]
        ((j ^ (1 << i)), [(i, (1 << i))])
        """
        a, b = self.polynomial(node.left, env), self.polynomial(node.right, env)
        if a is None or b is None or not (a.is_integer and b.is_integer):
            return None
        op = type(node.op)
        x, known = self.operation(node, "|" if op is ast.BitOr else "^", a, b)
        if not known:
            self.bitwise.append((op, a, b, x))
        return x

    def _bit_clear(self, left: ast.expr, right: ast.expr, env: dict[str, Any]) -> Any | None:
        """``(a, c)`` (a sympy tuple) where ``left == right`` says that bit ``c`` of ``a`` is
        clear: ``(a >> c) & 1 == 0`` or ``a & (1 << c) == 0`` (either side, either
        order of ``&``), ``a`` and ``c`` integer polynomials; ``None`` otherwise.  The
        prover takes ``a | (1 << c)`` as ``a + (1 << c)`` under it.

        Examples
        --------
        >>> from depgraph.analysis.symbolic import Walk
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i, j]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> test = ast.parse("(j >> i) & 1 == 0", mode="eval").body
        >>> w._bit_clear(test.left, test.comparators[0], {})
        (j, i)
        """
        if isinstance(left, ast.Constant):
            left, right = right, left
        if not (isinstance(right, ast.Constant) and right.value == 0
                and isinstance(left, ast.BinOp) and isinstance(left.op, ast.BitAnd)):
            return None
        for word, mask in ((left.left, left.right), (left.right, left.left)):
            if isinstance(mask, ast.Constant) and mask.value == 1 and isinstance(word, ast.BinOp) \
                    and isinstance(word.op, ast.RShift):  # (a >> c) & 1
                a, c = word.left, word.right
            elif isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.LShift) \
                    and isinstance(mask.left, ast.Constant) and mask.left.value == 1:  # a & (1 << c)
                a, c = word, mask.right
            else:
                continue
            forms = self.polynomial(a, env), self.polynomial(c, env)
            if all(f is not None and f.is_integer for f in forms):
                return self.sympy.Tuple(*forms)
        return None

    def _power_facts(self) -> list[tuple[tuple[tuple[str, Any], ...], Requirement]]:
        """Where the cell takes ``|``, ``^`` or ``1 << c`` (a bitmask over a table of
        ``2**n`` columns), each table extent that is a power of two at this instance, as
        such (``M.shape[1] is a power of two``), and its exponent against a table extent
        or an argument's extent or scalar, up to 2 apart (``M.shape[1] == 2 ** len(C)``,
        as premises on :attr:`logs`).

        Examples
        --------
        >>> from depgraph.analysis.symbolic import Walk
        >>> from depgraph.frontend.ir import read_cell
        >>> def f(M, i, j):
        ...     return M[i - 1, j | (1 << i)]
        >>> w = Walk(read_cell(f, 2), (), (3, 4))
        >>> _ = w.polynomial(ast.parse("j | (1 << i)", mode="eval").body, {})
        >>> [str(req) for _, req in w._power_facts()]
        ['M.shape[1] == 2 ** (M.shape[0] - 1)', 'M.shape[1] is a power of two']
        """
        if not (self.bitwise or self.powers):
            return []
        table = self.ir.table
        sides = [(f"{table}.shape[{k}]", n, size)
                 for k, (n, size) in enumerate(zip(self.extent, self.shape))] + self.side_values()
        links, powers = [], []
        for k, size in enumerate(self.shape):
            if size < 1 or size & (size - 1):
                continue
            subject, log = f"{table}.shape[{k}]", self.logs[k]
            powers.append(((), Requirement(subject, "is", "a power of two")))
            for text, sym, value in sides:
                d = size.bit_length() - 1 - value
                if abs(d) > 2 or text == subject:
                    continue
                power = text if d == 0 else f"({text} {'+' if d > 0 else '-'} {abs(d)})"
                links.append(((("ge", log - sym - d), ("ge", sym + d - log)),
                              Requirement(subject, "==", f"2 ** {power}")))
        # the links first: a proof that needs no link drops them before the weaker fact
        return links + powers

    def _held(self, forms: list[Any]) -> set[Any]:
        """The symbols ``forms`` hold, with those of the operands of each ``|``, ``^`` or
        ``1 << c`` they hold (whose bounds come from their operands')."""
        held = set().union(*(e.free_symbols for e in forms))
        operands = {x: (a, b) for _, a, b, x in self.bitwise} | {y: (c,) for c, y in self.powers} \
            | {y: (a, c) for a, c, y in self.shifts}
        todo = [x for x in held if x in operands]
        while todo:
            for e in operands[todo.pop()]:
                new = e.free_symbols - held
                held |= new
                todo += [x for x in new if x in operands]
        return held


def bit_facts(prover: Any, premises: tuple, ge: list[Any]) -> None:
    """Add to ``ge`` (the forms ``e >= 0`` of ``premises`` that ``prover``, a
    :class:`~depgraph.analysis.prover.Prover`, knows, and that its :meth:`least` reads as
    they grow) those that bound its walk's
    ``1 << c``, ``a | b`` and ``a ^ b`` under them (inner ones first, each found with
    those before it), as Python's integers bound them where their operands' bounds
    are proven:

    - ``1 << c`` is at least 1 where ``0 <= c <= 62`` (a power of two in int64), and
      at most ``n - 1`` where ``0 <= c <= log2(n) - 1``, ``n`` a table extent that is
      a power of two (one of the prover's facts; so ``c <= 61``, as the extent is
      below ``2**63``);
    - ``a >> c`` of ``a >= 0`` and ``0 <= c <= 63`` is at least 0 and at most ``a``;
    - ``a | b`` and ``a ^ b`` of ``a, b >= 0`` are at least 0 and at most ``a + b``
      (``a | b`` at least ``a`` and ``b`` too, and ``a + b`` where ``b`` is ``1 << c``
      and a premise says bit ``c`` of ``a`` is clear), and at most ``n - 1`` where
      ``a`` and ``b`` are, ``n`` a table extent that is a power of two: no bit at or
      above ``log2(n)`` is set in either.

    Examples
    --------
    >>> from depgraph.analysis.prover import Prover
    >>> from depgraph.analysis.symbolic import Walk
    >>> from depgraph.frontend.ir import read_cell
    >>> def f(M, i, j):
    ...     return M[i, j ^ (j // 2)]
    >>> w = Walk(read_cell(f, 2), (), (3, 4))
    >>> x = w.polynomial(ast.parse("j ^ (j // 2)", mode="eval").body, {})
    >>> bare, powered = Prover(w, None), Prover(w, None, tuple(w._power_facts()[-1:]))
    >>> str(w._power_facts()[-1][1]), bare.interval(x, ())
    ('M.shape[1] is a power of two', (0, None))
    >>> bare.least(w.extent[1] - 1 - x, ()), powered.least(w.extent[1] - 1 - x, ())
    (None, 0)
    """
    walk = prover.walk
    powered = [k for k in range(walk.ir.ndim)
               if any(req.subject == f"{walk.ir.table}.shape[{k}]" and req.power_of_two
                      for _, req in prover.facts)]

    def at_least_0(form: Any) -> bool:  # proven, on a path that may be taken
        least = prover.least(form, premises)
        return least is not None and least != "never" and bool(least >= 0)

    exponents = {}  # each 1 << c proven a power of two in int64, by its c
    for c, y in walk.powers:
        if not at_least_0(c):
            continue
        # c <= log2(n) - 1 <= 61 too: a table's extent is below 2**63
        inside = [k for k in powered if at_least_0(walk.logs[k] - 1 - c)]
        if inside or at_least_0(62 - c):
            ge.extend([y - 1, *[walk.extent[k] - 1 - y for k in inside]])
            exponents[y] = c
    for a, c, y in walk.shifts:  # a >> c of int64, 0 <= c <= 63: from 0 to a
        if at_least_0(a) and at_least_0(c) and at_least_0(63 - c):
            ge.extend([y, a - y])
    clear = {e for kind, e in premises if kind == "clear"}
    for op, a, b, x in walk.bitwise:
        if at_least_0(a) and at_least_0(b):
            ge.extend([x, a + b - x, *([x - a, x - b] if op is ast.BitOr else [])])
            # a | (1 << c) where bit c of a is clear: a + (1 << c)
            ge.extend(x - (a + b) for word, y in ((a, b), (b, a)) if op is ast.BitOr
                      and y in exponents and prover.sp.Tuple(word, exponents[y]) in clear)
            ge.extend(walk.extent[k] - 1 - x for k in powered
                      if at_least_0(walk.extent[k] - 1 - a) and at_least_0(walk.extent[k] - 1 - b))
