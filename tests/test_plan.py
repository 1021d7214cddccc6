import numpy as np
import pytest

from depgraph import analyze, cell_ir, load, recurrence
from depgraph.errors import OutOfBoundsError
from patterns import Sweep
from runtime.schedule.plan import certified_plan, checked_sweep, in_fill_plan, make_plan


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
    # offsets; the certificate proves Left (t >= 1), but not that the values fit int8
    source = """
@recurrence(shape=(3, 60), dtype=np.int8)
def take(M, k, m):
    if m == 0:
        return 0
    best = 0
    for t in range(1, min(k + 1, m) + 1):
        best = max(best, M[k, m - t] + {step})
    return best
"""
    rec = load(write_rec(source.format(step=1)))
    assert certified_plan(rec, cell_ir(rec)) == "no proof that every value fits int8"
    plan = in_fill_plan(rec, cell_ir(rec))
    assert plan.method == "checked fill" and plan.pattern == "CLR" and plan.regions == ("Left",)
    np.testing.assert_array_equal(fill(rec, backend=backend).table, analyze(rec).table)
    # steps of 3 reach 177 by column 59: the fill's own value check names the cell
    big = load(write_rec(source.format(step=3)))
    with pytest.raises(CellFunctionError, match=r"cell \(\d, \d+\).*does not fit the table's "
                                                r"dtype int8"):
        fill(big, backend=backend)
