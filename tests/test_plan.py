import re

import numpy as np
import pytest

from depgraph import analyze, cell_ir, load, recurrence, trace
from depgraph.errors import CycleError, DepgraphError, OutOfBoundsError
from patterns import LexOrder, Sweep
from runtime.schedule.plan import (
    Plan,
    certified_plan,
    checked_sweep,
    in_fill_plan,
    lex_reference,
    make_plan,
)


def test_checked_sweep_finds_regions_and_order(write_rec):
    rec = load(write_rec("""
@recurrence(shape=(6, 5), dtype=np.int64)
def chain(M, i, j):
    if j <= i:
        return 0 if j < i else 1
    best = 10**9
    for k in range(i, j):
        best = min(best, M[i, k] + M[k + 1, j] + 1)
    return best
"""))
    regions, sweep, table, seconds = checked_sweep(rec, cell_ir(rec))
    assert seconds > 0
    assert regions == ("Down", "Left") and sweep == Sweep(0, -1, 1)
    np.testing.assert_array_equal(table, analyze(rec).table)


def test_checked_sweep_catches_out_of_bounds_at_size(write_rec):
    rec = load(write_rec("""
@recurrence(shape=(300, 300), dtype=np.int64)
def late(M, i, j):
    if i == 0:
        return 1
    if i == 250 and j == 7:
        return M[i - 1, j + 400]
    return M[i - 1, j]
"""))
    with pytest.raises(OutOfBoundsError, match=r"cell \(250, 7\) reads \(249, 407\), outside shape \(300, 300\)"):
        make_plan(rec)


def test_data_dependent_reads_are_checked_at_run_size(write_rec):
    """At size 4 the reads are Up only (RUD); at size 40 some cells read Left too."""
    path = write_rec("""
@family
def dd(n):
    w = (np.arange(n * n).reshape(n, n) % 97 == 90).astype(np.int64)
    @recurrence(shape=(n, n), dtype=np.int64, args=(w,))
    def dd(M, i, j, w):
        if i == 0 or j == 0:
            return 1
        if w[i, j]:
            return M[i, j - 1] + 1
        return M[i - 1, j] + 1
    return dd
""")
    assert make_plan(load(path, size=4), certified=False).pattern == "RUD"
    big = make_plan(load(path, size=40), certified=False)
    assert big.regions == ("Left", "Up") and big.pattern == "NOSE"
    # the certificate covers every branch whatever the data: NOSE at every size
    for size in (4, 40):
        proven = make_plan(load(path, size=size))
        assert proven.method == "certificate" and proven.pattern == "NOSE"


def test_function_without_source_is_traced():
    ns = {"np": np, "recurrence": recurrence}
    exec("@recurrence(shape=(3, 3), dtype=np.int64)\ndef f(M, i, j):\n    return 1 if i == 0 else M[i - 1, j]\n", ns)
    p = make_plan(ns["f"])
    assert p.method == "trace" and p.pattern == "RUD" and "not confirmed" in p.notes[-1]


def test_a_checked_fill_plan_takes_a_hyperplane_where_no_pattern_fits(write_rec):
    skew = load(write_rec("""
@recurrence(shape=(5, 7), dtype=np.int64)
def skew(M, i, j):
    return 1 if i == 0 or j == 0 or j == 6 else M[i - 1, j + 1] + M[i, j - 1]
"""))
    p = in_fill_plan(skew, cell_ir(skew))
    assert (p.method, p.pattern, p.hyperplane.pi) == ("checked fill", None, (2, 1))
    assert p.linear == p.hyperplane and "hyperplane pi = (2, 1)" in p.notes[0]
    cube = load(write_rec("""
@recurrence(shape=(3, 4, 5), dtype=np.int64)
def cube(M, k, i, j):
    return 1 if k == 0 else M[k - 1, i, j] + M[k - 1, i, k - 1]
"""))
    p = in_fill_plan(cube, cell_ir(cube))
    assert (p.regions, p.pattern, p.hyperplane.pi) == (None, None, (1, 0, 0))
    cycle = load(write_rec("""
@recurrence(shape=(3, 4), dtype=np.int64)
def cycle(M, i, j):
    return 1 if j == 0 or j == 3 else M[i, j - 1] + M[i, j + 1]
"""))
    assert "no hyperplane fits" in in_fill_plan(cycle, cell_ir(cycle))


def test_a_certificate_plans_a_3d_table_by_the_hyperplane_it_proves():
    from floyd_warshall import data, make_floyd_warshall
    from lcs3 import make_lcs3

    for rec, pi in ((make_floyd_warshall(*data(5)), (1, 0, 0)),
                    (make_lcs3("AC", "GTA", "CCGTA"), (1, 1, 1))):
        p = make_plan(rec, cell_ir(rec))
        assert (p.method, p.regions, p.patterns, p.pattern, p.sweep) == \
            ("certificate", None, None, None, None)
        assert p.hyperplane.pi == pi and p.made_reference is None
        assert f"hyperplane pi = {pi}, proven to put every read on an earlier step" in p.notes[0]
        np.testing.assert_array_equal(p.reference, analyze(rec).table)


def test_a_2d_hyperplane_is_proven_too(write_rec):
    skew = load(write_rec("""
@recurrence(shape=(5, 7), dtype=np.int64)
def skew(M, i, j):
    return 1 if i == 0 or j == 0 or j == M.shape[1] - 1 else M[i - 1, j + 1] + M[i, j - 1]
"""))
    p = certified_plan(skew, cell_ir(skew))
    assert (p.method, p.pattern, p.hyperplane.pi) == ("certificate", None, (2, 1))
    assert "proven to put every read on an earlier step" in p.notes[0]


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_checked_fill_takes_the_certificates_regions_where_the_offsets_leave_too_much(
        write_rec, backend):
    from depgraph import fill
    from depgraph.errors import CellFunctionError

    # M[k, m - t]: no constant column offset, so Left, Right or the cell itself by the
    # offsets; the certificate proves Left (t >= 1), but not that the values fit int8: a
    # cell may grow by 3 a column (177 by column 59), and the cap of the first is not seen
    source = """
@recurrence(shape=(3, 60), dtype=np.int8)
def take(M, k, m):
    if m == 0:
        return 0
    best = 0
    for t in range(1, min(k + 1, m) + 1):
        best = max(best, M[k, m - t] + 3)
    return {value}
"""
    rec = load(write_rec(source.format(value="best if best < 100 else 99")))
    assert certified_plan(rec, cell_ir(rec)) == "no proof that every value fits int8"
    plan = in_fill_plan(rec, cell_ir(rec))
    assert plan.method == "checked fill" and plan.pattern == "CLR" and plan.regions == ("Left",)
    np.testing.assert_array_equal(fill(rec, backend=backend).table, analyze(rec).table)
    # without the cap: the fill's own value check names the cell
    big = load(write_rec(source.format(value="best")))
    with pytest.raises(CellFunctionError, match=r"cell \(\d, \d+\).*does not fit the table's "
                                                r"dtype int8"):
        fill(big, backend=backend)


def _traced_or_error(rec):
    """The trace's table, or the text of the error it raises."""
    try:
        return trace(rec).table
    except DepgraphError as exc:
        return f"{type(exc).__name__}: {exc}"


def _unmade(rec):
    """A plan that made no reference table (as a certificate's or a checked fill's)."""
    return Plan(rec, cell_ir(rec), None, None, None, None, None, None, "checked fill", 0.0)


def test_the_compiled_kd_reference_equals_the_trace_on_floyd_warshall_and_lcs3():
    from floyd_warshall import data, make_floyd_warshall
    from lcs3 import make_lcs3

    rng = np.random.default_rng(42)
    word = lambda n: "".join(rng.choice(list("ACGT"), n))  # noqa: E731
    recs = [make_floyd_warshall(*data(n)) for n in (1, 2, 7, 16)]
    recs += [make_lcs3(word(a), word(b), word(c))
             for a, b, c in ((0, 6, 9), (5, 0, 3), (4, 7, 0), (1, 1, 12), (13, 1, 2),
                             (9, 11, 8), (2, 30, 1))]  # 1 x n x m, n x 1 x m, thin ones
    for rec in recs:
        table, order, seconds = lex_reference(rec, cell_ir(rec))
        assert order == LexOrder((0, 1, 2), (1, 1, 1)) and seconds >= 0
        assert table.dtype == rec.dtype
        np.testing.assert_array_equal(table, trace(rec).table)
        p = make_plan(rec, cell_ir(rec))
        assert p.method == "certificate" and p.made_reference is None
        np.testing.assert_array_equal(p.reference, table)


STENCIL3 = """
def cell(M, i, j, k, w, use):
    s = w[i, j, k]
{reads}
    return {result}


@family
def stencil(n):
    shape = {shapes}[n - 1]
    rng = np.random.default_rng(n)
    w = rng.{draw}
    use = rng.random(shape + ({count},)) < 0.8
    return recurrence(shape=shape, dtype=np.{dtype}, args=(w, use), name="stencil")(cell)
"""


def _stencil3(rng, floats):
    """A random 3-D stencil's source: reads at random offsets, each before the cell in a
    random lexicographic order, guarded by the table's edges and random data."""
    axes = tuple(int(a) for a in rng.permutation(3))
    walk = LexOrder(axes, tuple(int(s) for s in rng.choice((-1, 1), 3)))
    offsets = set()
    while len(offsets) < 5:
        d = tuple(int(x) for x in rng.integers(-2, 3, 3))
        if walk.before(d):
            offsets.add(d)
    at = lambda x, d: x if d == 0 else f"{x} + {d}" if d > 0 else f"{x} - {-d}"  # noqa: E731
    lines = []
    for n, d in enumerate(sorted(offsets)):
        a, b, c = (at(x, dx) for x, dx in zip("ijk", d))
        inside = " and ".join(f"0 <= {y} < M.shape[{q}]" for q, y in enumerate((a, b, c)))
        value = (f"max(s, 0.5 * M[{a}, {b}, {c}] + w[i, j, k] / {n + 1})" if floats
                 else f"s + M[{a}, {b}, {c}] * {n + 1}")
        lines += [f"    if use[i, j, k, {n}] and {inside}:", f"        s = {value}"]
    shapes = [(1, 6, 7), (5, 1, 6), (4, 6, 1), (1, 1, 17), (2, 19, 3), (7, 6, 5)]
    return sorted(offsets), STENCIL3.format(
        reads="\n".join(lines), result="s" if floats else "s % 1000003", shapes=shapes,
        count=len(offsets), dtype="float64" if floats else "int64",
        draw="random(shape)" if floats else "integers(1, 9, shape)")


def test_the_compiled_kd_reference_equals_the_trace_on_random_3d_stencils(write_rec):
    rng = np.random.default_rng(7)
    for floats in (False, False, True):
        offsets, source = _stencil3(rng, floats)
        path = write_rec(source)
        for size in range(1, 7):
            rec = load(path, size=size)
            table, order, _ = lex_reference(rec, cell_ir(rec))
            assert all(order.before(d) for d in offsets)
            if floats:
                np.testing.assert_allclose(table, trace(rec).table, rtol=1e-12, atol=0)
            else:
                np.testing.assert_array_equal(table, trace(rec).table)


def test_a_read_the_order_has_not_filled_falls_back_to_the_trace(write_rec):
    # M[i, j, p[k]]: an offset along k no source gives; p points at a later cell (the
    # trace computes it first) or, at the table's end, back at the first (a cycle)
    path = write_rec("""
@family
def later(n):
    p = np.arange(1, 6) % (6 if n == 1 else 5)
    @recurrence(shape=(2, 3, 5), dtype=np.int64, args=(p,))
    def later(M, i, j, k, p):
        if i == 0 or p[k] == 5:
            return i + j + k
        return M[i - 1, j, k] + 2 * M[i, j, p[k]]
    return later
""")
    acyclic, cyclic = load(path, size=1), load(path, size=2)
    why = lex_reference(acyclic, cell_ir(acyclic))
    assert why == ("a read left the table or was of a cell not filled yet in the order "
                   "axis 0 up, axis 1 up, axis 2 up")
    np.testing.assert_array_equal(_unmade(acyclic).reference, trace(acyclic).table)
    with pytest.raises(CycleError) as got:
        _unmade(cyclic).reference
    assert f"CycleError: {got.value}" == _traced_or_error(cyclic)
    # reads no lexicographic order fills first, though a hyperplane does: traced
    skew = load(write_rec("""
@recurrence(shape=(5, 6, 2), dtype=np.int64)
def skew(M, i, j, k):
    if i < 2 or j < 2 or i > 2 or j > 3:
        return i * j + k
    return M[i - 2, j + 1, k] + M[i + 1, j - 2, k]
"""))
    assert lex_reference(skew, cell_ir(skew)) == \
        "no lexicographic order fills every read before its cell"
    np.testing.assert_array_equal(_unmade(skew).reference, trace(skew).table)


def test_a_kd_read_out_of_the_table_is_named_as_the_trace_names_it(write_rec, capsys):
    from depgraph.cli import main

    path = write_rec("""
idx = np.arange(4)
idx[2] = 9
@recurrence(shape=(3, 4, 4), dtype=np.int64, args=(idx,))
def cube(M, k, i, j, idx):
    return i if k == 0 else M[k - 1, i, idx[j]] + M[k - 1, i, j]
""")
    rec = load(path)
    assert lex_reference(rec, cell_ir(rec)).startswith("a read left the table")
    message = "cell (1, 0, 2) reads (0, 0, 9), outside shape (3, 4, 4)"
    with pytest.raises(OutOfBoundsError, match=re.escape(message)) as got:
        _unmade(rec).reference
    assert f"OutOfBoundsError: {got.value}" == _traced_or_error(rec)
    assert main(["run", path, "--backend", "cpu", "--verify"]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


BITSETS = """
@recurrence(shape=(2, 16), dtype=np.int64)
def grow(M, r, S):
    if S == 15:
        return 0
    best = -1
    for b in range(4):
        if not S >> b & 1:
            t = M[r, S | 1 << b] + 1
            if r == 1 and t > {up_after}:  # a read up, only over real values
                t += M[0, S]
            best = t if best < 0 else min(best, t)
    return best
"""


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_sample_of_the_reads_guesses_the_pattern_and_the_fill_checks_the_guess(
        write_rec, backend):
    from depgraph import fill

    # S | 1 << b: no constant column offset and no certificate; zeros read only Right
    rec = load(write_rec(BITSETS.format(up_after=99)))
    plan = in_fill_plan(rec, cell_ir(rec))
    assert plan.method == "checked fill" and plan.pattern == "CRL" and plan.regions == ("Right",)
    assert "a sample of cells" in plan.notes[0]
    result = fill(rec, backend=backend)
    np.testing.assert_array_equal(result.table, analyze(rec).table)
    assert not any("checks failed" in n for n in result.notes)
    # over real values some cells read up too, which CRL's columns do not allow: the
    # pattern fill's own check fails and the checked sweep plans and fills instead
    wrong = load(write_rec(BITSETS.format(up_after=1)))
    assert in_fill_plan(wrong, cell_ir(wrong)).pattern == "CRL"
    result = fill(wrong, backend=backend, schedule="pattern")
    np.testing.assert_array_equal(result.table, analyze(wrong).table)
    assert any("checks failed" in n for n in result.notes)
