"""The compiled solution walk (:mod:`runtime.backends.compiled_walk`, its step from
:mod:`runtime.backends.provenance_step`) against the Python walk
(:func:`depgraph.frontend.provenance.solution`) on the same filled table: the same
cells, edges, value, undecided count and note, from every cell as the target, on the
examples and the catalog, random inputs with ties, 1 x n, n x 1 and non-square tables;
each fallback taken (a construct not translated, a union past CAP, a read outside the
table, an operation on a read the rules do not cover) and its result checked.  The
windowed walks over a score's checkpoints are checked in tests/test_recover.py (CPU)
and tests/test_cuda_tile_checkpoints.py, tests/test_cuda_recovery.py (the simulator)."""

import itertools
from pathlib import Path

import numpy as np
import pytest
from lcs import make_lcs
from sources import THESIS, slow_after

from depgraph import fill, recurrence
from depgraph.errors import RecurrenceError
from depgraph.frontend.loader import load
from depgraph.frontend.provenance import solution
from runtime.backends.compiled_walk import compiled_walk
from runtime.backends.provenance_step import CAP

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# the thesis's examples by default; the others (a walker compiled for each) with -m slow
FILES = [EXAMPLES / f"{name}.py" for name in THESIS] + sorted(
    p for p in [*EXAMPLES.glob("*.py"), *(EXAMPLES / "catalog").glob("*.py")]
    if p.stem not in THESIS or p.parent.name == "catalog")


def _result(rec, table, target, walker):
    """The solution's fields (or the error's text) from ``target``."""
    try:
        s = solution(rec, table, target, walker=walker)
    except RecurrenceError as exc:
        return str(exc)
    return s.target, s.cells, s.edges, s.undecided, s.note, s.value


def _same_everywhere(rec, table=None):
    """The compiled walk finds what the Python one does from every cell; the walk."""
    table = fill(rec, backend="cpu").table if table is None else table
    walker = compiled_walk(rec)
    assert walker is not None
    for cell in itertools.product(*map(range, table.shape)):
        assert _result(rec, table, cell, walker) == _result(rec, table, cell, None), cell
    return walker


@pytest.mark.parametrize("path", slow_after(len(THESIS), FILES),
                         ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_every_example_from_every_cell(path):
    size = 4 if path.stem in ("min_spanning_tree", "optimal_assignment") else 7
    walker = _same_everywhere(load(path, size=size))
    assert walker.python_steps == 0  # every cell of the examples compiled


@pytest.mark.parametrize("n, m", [(1, 9), (9, 1), (8, 8), (12, 5)])
def test_lcs_with_ties_on_odd_shapes(n, m):
    rng = np.random.default_rng(n * 17 + m)
    x, y = rng.integers(0, 2, n), rng.integers(0, 2, m)  # two letters: ties everywhere
    _same_everywhere(make_lcs(x, y))


def test_values_from_reads_and_control_flow():
    """Ternaries, and/or on read values, early returns in a loop, a reassigned index,
    abs, unary minus, int() and float() dropping the reads, min of three with ties,
    comparisons on both sides, a while loop."""
    A = np.random.default_rng(2).integers(-2, 3, (6, 7))

    @recurrence(shape=A.shape, dtype=np.float64, args=(A,))
    def mixed(M, i, j, A):
        if i == 0:
            return float(j % 2)
        up = M[i - 1, j]
        left = M[i, j - 1] if j > 0 else -up
        pick = (up > 1 and left) or (up < 0 or -up)
        k = j
        while k > 0 and M[i - 1, k - 1] > 3:
            k -= 1
        for c in range(j):
            if A[i, c] > 1 and M[i - 1, c] == 2:
                return M[i - 1, c] + int(left)
        best = min(abs(up - 1), abs(left) + A[i, j], pick * 0.5)
        return best + (M[i - 1, k] if k < j else 0.0)

    _same_everywhere(mixed)


def test_each_fallback_gives_the_python_walks_result():
    """A sum of more than CAP reads (the union overflows), ``**`` and a user function on
    a read, a read outside the table: each such cell's step runs in Python; a
    comprehension is not translated at all."""
    w = np.arange(1, 6)

    def double(x):
        return 2 * x

    @recurrence(shape=(4, CAP + 3), dtype=np.int64, args=(w,))
    def wide(M, i, j, w):
        if i == 0:
            return j
        if j == CAP + 2:  # the whole row above: more reads than CAP
            return M[i - 1, 0] + M[i - 1, 1] + M[i - 1, 2] + M[i - 1, 3] + M[i - 1, 4]
        if j == 0:
            return M[i - 1, j] ** 2 % 7
        return max(M[i - 1, j], M[i - 1, j - 1]) + w[j % 5]

    wide_walker = _same_everywhere(wide)
    assert wide_walker.python_steps > 0
    table = fill(wide, backend="cpu").table
    assert solution(wide, table, walker=wide_walker).undecided == 1

    @recurrence(shape=(3, 4), dtype=np.int64)
    def comprehension(M, i, j):
        return 0 if i == 0 else max([M[i - 1, j], 1])

    assert compiled_walk(comprehension) is None

    # a table not filled by this recurrence: a read outside it, the same error
    @recurrence(shape=(3, 4), dtype=np.int64)
    def off_by_one(M, i, j):
        return 0 if i < 0 else M[i - 1, j] + 1

    ones = np.ones((3, 4), dtype=np.int64)
    walker = compiled_walk(off_by_one)
    text = _result(off_by_one, ones, None, walker)
    assert text == _result(off_by_one, ones, None, None) and "outside shape" in text
    assert walker.python_steps == 1  # (0, 3), whose read leaves the table


def test_a_loop_is_found_where_an_edge_reaches_a_cell_seen():
    """A table whose values make a cell decided by one it decided: the same loop error."""

    @recurrence(shape=(1, 3), dtype=np.int64)
    def swing(M, i, j):
        return max(M[0, (j + 1) % 3], M[0, (j + 2) % 3])

    table = np.array([[1, 2, 3]])
    text = _result(swing, table, None, compiled_walk(swing))
    assert text == _result(swing, table, None, None) and "loops at cell" in text


def test_the_walks_kernel_is_named_by_what_it_is_made_of(monkeypatch):
    """Every name the walk's kernel sees (its step among them, named by its source, cell
    and jit options) is described by what it is, so the kernel's digest is the same in
    every process and a later one loads what an earlier one compiled."""
    from runtime.backends import cpu
    from runtime.backends.emit import digest, stable

    seen = {}

    def spy(rec, source, name, cell, extra=None, **options):
        seen.update({"cell": cell, **(extra or {})})
        return lambda nrt: None

    monkeypatch.setattr(cpu, "kernel", spy)
    compiled_walk(make_lcs(np.arange(3), np.arange(4)))._kernel(np.int64)
    assert seen and stable(seen)
    assert digest("", {"jit": {"inline": "always", "x": 1}}) == \
        digest("", {"jit": {"x": 1, "inline": "always"}})
