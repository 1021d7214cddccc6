"""``depgraph.analysis.certify``: what a certificate proves for every shape, what it leaves
to the checked sweep, and that a fill it lets skip the sweep still never returns a table
computed from a bad read."""

import glob
import os

import numpy as np
import pytest
from sources import LCS

from depgraph import Family, analyze, cell_ir, fill, load
from depgraph.analysis.certify import Certificate, certificate, certify, unproven_hyperplane
from depgraph.analysis.prover import Prover, prove
from depgraph.analysis.symbolic import Walk
from depgraph.analysis.schedule import traced_offsets
from depgraph.errors import OutOfBoundsError, RecurrenceError
from depgraph.frontend.loader import definitions, load_module
from runtime.schedule.plan import certified_plan, make_plan

EXAMPLES = sorted(glob.glob("examples/*.py") + glob.glob("examples/catalog/*.py"))


def _within(offset: np.ndarray, cert: Certificate) -> bool:
    """Whether some read the certificate proves may be at ``offset`` (its spans)."""
    return any(all((lo is None or lo <= d) and (hi is None or d <= hi)
                   for d, (lo, hi) in zip(offset.tolist(), r.spans)) for r in cert.reads)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: os.path.basename(p)[:-3])
def test_a_certificate_covers_every_read_the_trace_sees(path):
    for obj in definitions(load_module(path)).values():
        for size in (3, 7):
            rec = obj(size) if isinstance(obj, Family) else obj
            cert = certify(cell_ir(rec), rec.args, rec.shape)
            ir = cell_ir(rec)
            if not isinstance(cert, Certificate) or cert.violated(rec, ir.params, ir.table):
                continue
            a = analyze(rec)
            assert all(_within(d, cert) for d in traced_offsets(a.graph)), cert.summary()
            if rec.ndim == 2:
                traced = a.classification.regions
                assert set(traced) <= set(cert.regions), (cert.summary(), traced)
                assert a.classification.pattern in cert.patterns or \
                    set(cert.patterns) <= set(a.classification.patterns)


def test_the_thesis_cases_are_proven(write_rec):
    cert = certificate(load(write_rec(LCS)))
    assert isinstance(cert, Certificate) and cert.patterns == ("NOSE",)
    # X[i - 1] and Y[j - 1] proven inside the sequences, whose lengths the table's are
    assert [str(r) for r in cert.requires] == ["X.shape[0] == M.shape[0] - 1",
                                              "Y.shape[0] == M.shape[1] - 1"]
    assert cert.summary().startswith("NOSE holds for every shape when X.shape[0] == M.shape[0] "
                                     "- 1, Y.shape[0] == M.shape[1] - 1: reads (i - 1, j - 1) "
                                     "in UpLeft")
    a = analyze(load(write_rec(LCS))).to_json()
    assert a["certificate"]["patterns"] == ["NOSE"] and a["certificate_why"] is None


@pytest.mark.parametrize("body, why", [
    ("    return M[i - 1, j] if i > 0 else 1\n", None),
    ("    return M[i + 1, j] if i > 0 else 1\n", "may leave the table"),
    ("    return M[i - 1, j] // j if i > 0 else 1\n", "may divide by zero"),
    ("    k = 0\n    while k < j:\n        k += 1\n    return M[i - 1, k] if i > 0 else 1\n",
     "M[i - 1, k] (line 6) is not at a polynomial index"),  # k after the loop: unknown
    ("    k = 0\n    while k < j:\n        k += 1\n    else:\n        k = 1\n    return 1\n",
     "a while loop with an else"),
    ("    return M[i - 1, j] + UNKNOWN if i > 0 else 1\n", "'UNKNOWN', which is not defined"),
    ("    return M[i, j] + 1 if i > 0 else 1\n", "may be of the cell itself"),
    ("    return M[i - 1, j * j] if i > 0 else 1\n", "may leave the table"),
    ("    return M[i - 1, j ^ 1] if i > 0 else 1\n", "may leave the table"),  # 4 ^ 1 is 5
    ("    return M[i - 1, j << i] if i > 0 else 1\n", "not at a polynomial index"),
    ("    return M[i - 1, j >> i] if i > 0 else 1\n", "may leave the table"),  # i past 63
    ("    return M[i - 1, (j + 9) // 2] if i > 0 else 1\n", "may leave the table"),
])
def test_what_is_proven_and_why_not(write_rec, body, why):
    rec = load(write_rec(f"""
@recurrence(shape=(4, 5), dtype=np.int64)
def cell(M, i, j):
{body}"""))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    if why is None:
        assert isinstance(found, Certificate) and found.regions == ("Up",)
    else:
        assert isinstance(found, str) and why in found


@pytest.mark.parametrize("column, requires", [
    ("(j + d[i - 1]) % M.shape[1]", []),  # a modulus by an extent, at least 1
    ("(j + d[i - 1]) & (M.shape[1] - 1)", []),  # a mask at least 0
    ("(j + d[i - 1]) & 7", ["M.shape[1] >= 8"]),  # a constant mask: the columns it needs
    ("(j + d[i - 1]) % 8", ["M.shape[1] >= 8"]),
])
def test_a_column_wrapped_round_the_table_is_proven_inside_it(write_rec, column, requires):
    rec = load(write_rec(f"""
d = np.array([-3, 5, -9, 2], dtype=np.int64)  # negative too: Python's % and & wrap them

@recurrence(shape=(5, 8), dtype=np.int64, args=(d,))
def wrap(M, i, j, d):
    if i == 0:
        return j
    return M[i - 1, j] + 2 * M[i - 1, {column}]
"""))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, Certificate) and found.patterns == ("RUD",)
    assert sorted(str(r) for r in found.requires) == sorted(
        ["d.shape[0] == M.shape[0] - 1", *requires])
    reference = fill(rec, backend="python").table
    for backend in ("cpu", "cuda"):  # cuda: numba's simulator here, the GPU with DEPGRAPH_GPU
        res = fill(rec, backend=backend)
        assert "reads proven for every shape" in res.notes[1]
        np.testing.assert_array_equal(res.table, reference)


@pytest.mark.parametrize("shape, body, regions", [
    # j // 2 >= (j - 1) / 2 >= -1/2 over the rationals, so at least 0 on integers
    ((4, 5), "    return M[i - 1, j // 2] + j if i > 0 else 1\n", ("Up", "UpLeft")),
    ((4, 5), "    return M[i - 1, j >> 1] + j if i > 0 else 1\n", ("Up", "UpLeft")),
    # a shift left by a constant is a product: 2 * j, under 2 * j < M.shape[1]
    ((4, 9), "    if i == 0:\n        return j\n    if (j << 1) < M.shape[1]:\n"
             "        return M[i - 1, j << 1] + 1\n    return M[i - 1, j] + 2\n",
     ("Up", "UpRight")),
])
def test_halved_and_doubled_columns_are_proven(write_rec, shape, body, regions):
    rec = load(write_rec(f"""
@recurrence(shape={shape}, dtype=np.int64)
def cell(M, i, j):
{body}"""))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, Certificate) and found.regions == regions and not found.requires
    np.testing.assert_array_equal(fill(rec, backend="cpu").table,
                                  fill(rec, backend="python").table)


FLIP = """
s = np.array({flips}, dtype=np.int64)

@recurrence(shape=(5, {width}), dtype=np.int64, args=(s,))
def cell(M, i, j, s):
    if i == 0:
        return j
    return max(M[i - 1, j], M[i - 1, j ^ s[i - 1]] + 1)
"""


def test_an_exclusive_or_inside_a_power_of_two_columns_is_proven(write_rec):
    rec = load(write_rec(FLIP.format(flips=[3, 0, 7, 5], width=8)))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, Certificate) and found.regions == ("Up", "UpLeft", "UpRight")
    assert [str(r) for r in found.requires] == [
        "min(s) >= 0", "M.shape[1] is a power of two", "s.shape[0] == M.shape[0] - 1",
        "max(s) <= M.shape[1] - 1"]
    np.testing.assert_array_equal(fill(rec, backend="cpu").table,
                                  fill(rec, backend="python").table)


@pytest.mark.parametrize("flips, width, read", [
    ([3, 0, 7, 5], 6, r"\(\d, [67]\)"),  # 6 columns: 4 ^ 3 is 7
    ([3, 0, 8, 5], 8, r"\(2, (8|9|1[0-5])\)"),  # an 8 in 8 columns: j ^ 8 is past them
])
def test_an_exclusive_or_that_may_leave_the_table_is_caught(write_rec, flips, width, read):
    rec = load(write_rec(FLIP.format(flips=flips, width=width)))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, str) and "may leave the table" in found
    with pytest.raises(RecurrenceError, match=rf"cell \(\d, \d\) reads {read}, outside shape"):
        fill(rec, backend="cpu")


HALVE = """
s = np.array({shifts}, dtype=np.int64)

@recurrence(shape=(5, 9), dtype=np.int64, args=(s,))
def cell(M, i, j, s):
    if i == 0:
        return j
    return max(M[i - 1, j], M[i - 1, j {shift}] + 1)
"""


def test_a_column_shifted_right_by_its_data_is_proven(write_rec):
    rec = load(write_rec(HALVE.format(shifts=[0, 3, 63, 1], shift=">> s[i - 1]")))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, Certificate) and found.regions == ("Up", "UpLeft")
    assert [str(r) for r in found.requires] == [
        "min(s) >= 0", "s.shape[0] == M.shape[0] - 1", "max(s) <= 63"]
    np.testing.assert_array_equal(fill(rec, backend="cpu").table,
                                  fill(rec, backend="python").table)
    # a negative shift breaks the requirement: the fill checks its reads
    bad = load(write_rec(HALVE.format(shifts=[0, -1, 2, 1], shift=">> s[i - 1]")))
    assert "min(s) >= 0 does not hold (min(s) is -1)" in certified_plan(bad, cell_ir(bad))


@pytest.mark.parametrize("shifts, shift, why", [
    ([0, 3, 64, 1], ">> s[i - 1]", "may leave the table"),  # past 63: undefined in int64
    ([0, 3, 2, 1], ">> i", "may leave the table"),  # more than 64 rows: i past 63
    ([0, 3, 2, 1], "<< s[i - 1]", "is not at a polynomial index"),  # left: past the table
])
def test_a_shift_by_a_variable_that_may_leave_the_table_is_not_proven(write_rec, shifts, shift,
                                                                       why):
    rec = load(write_rec(HALVE.format(shifts=shifts, shift=shift)))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, str) and why in found


@pytest.mark.parametrize("name, regions, requires", [
    # M[k + 1, S | (1 << j)] under bit j of S clear, j < len(C): 2**len(C) columns
    ("optimal_assignment", ("DownRight",),
     ["M.shape[1] == 2 ** C.shape[1]", "C.shape[0] == M.shape[0] - 1",
      "C.shape[1] == M.shape[0] - 1"]),
    ("min_spanning_tree", ("Right",),
     ["M.shape[1] == 2 ** w.shape[1]", "w.shape[0] == M.shape[0]", "w.shape[1] == M.shape[0]"]),
])
def test_bitmask_subsets_are_proven(name, regions, requires):
    rec = load(f"examples/catalog/{name}.py", size=4)
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, Certificate) and found.regions == regions
    assert [str(r) for r in found.requires] == requires
    assert found.violated(rec, cell_ir(rec).params) is None
    np.testing.assert_array_equal(fill(rec, backend="cpu").table,
                                  fill(rec, backend="python").table)


@pytest.mark.parametrize("name, regions, requires", [
    # a square argument: B[x, g] for g <= x < B.shape[0]
    ("production", ("Down", "DownLeft"), ["R == M.shape[0] - 1", "B.shape[0] == B.shape[1]"]),
    # m * c[i - 1] <= b with c >= 1: m <= b (a product at least each factor's share)
    ("reliability_design", ("UpLeft",),
     ["min(c) >= 1", "c.shape[0] == M.shape[0] - 1", "R.shape[0] == M.shape[0] - 1",
      "R.shape[1] == M.shape[1]"]),
    # M[1, t + 1]: a second row
    ("replacement", ("DownRight", "Right", "UpRight"),
     ["M.shape[0] >= 2", "T == M.shape[1] - 1", "s.shape[0] == M.shape[0]",
      "c.shape[0] == M.shape[0]"]),
])
def test_catalog_reads_proven_by_size_facts_and_products(name, regions, requires):
    rec = load(f"examples/catalog/{name}.py", size=12)
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, Certificate) and found.regions == regions
    assert [str(r) for r in found.requires] == requires
    np.testing.assert_allclose(fill(rec, backend="cpu").table, fill(rec, backend="python").table)


def test_a_constant_row_needs_the_rows_to_reach_it(write_rec):
    source = """
@recurrence(shape=({rows}, 5), dtype=np.int64)
def cell(M, i, j):
    if j == 0:
        return i
    return M[1, j - 1] + M[i, j - 1]
"""
    rec = load(write_rec(source.format(rows=3)))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, Certificate) and [str(r) for r in found.requires] == ["M.shape[0] >= 2"]
    rec = load(write_rec(source.format(rows=1)))
    assert "may leave the table" in certify(cell_ir(rec), rec.args, rec.shape)
    with pytest.raises(RecurrenceError, match=r"cell \(0, \d\) reads \(1, \d\), outside shape \(1, 5\)"):
        fill(rec, backend="cpu")


@pytest.mark.parametrize("body, why", [
    # inside the columns, but j | (j >> 1) is j itself where no bit moves in (j = 3)
    ("    return M[i, j | (j >> 1)] + 1 if j > 1 else 0\n",
     "M[i, j | j >> 1] (line 3) may be of the cell itself"),
    # 1 << 3 on a table of 8 columns: past them
    ("    t = 0\n    for b in range(4):\n        if (j >> b) & 1 == 0:\n"
     "            t += M[i - 1, j | (1 << b)]\n    return t if i > 0 else 1\n",
     "M[i - 1, j | 1 << b] (line 6) may leave the table"),
])
def test_bitmasks_that_are_not_proven(write_rec, body, why):
    rec = load(write_rec(f"""
@recurrence(shape=(4, 8), dtype=np.int64)
def cell(M, i, j):
{body}"""))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, str) and why in found


def test_a_mask_wider_than_the_table_is_not_proven_and_its_read_is_caught(write_rec):
    rec = load(write_rec("""
@recurrence(shape=(4, 5), dtype=np.int64)
def cell(M, i, j):
    return M[i - 1, (j + 3) & 7] + 1 if i > 0 else 1
"""))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, str) and "may leave the table" in found
    with pytest.raises(RecurrenceError, match=r"cell \(\d, \d\) reads \(\d, [5-7]\), outside shape \(4, 5\)"):
        fill(rec, backend="cpu")


KNAPSACK = """
@family
def knap(n):
    w = np.full(n, 2, dtype=np.int64)
    w[-1] = {last}  # one late row
    p = np.arange(1, n + 1, dtype=np.int64)

    @recurrence(shape=(n + 1, 3 * n + 1), dtype=np.int64, args=(w, p))
    def knapsack(M, i, j, w, p):
        if i == 0 or j == 0:
            return 0
        wi = w[i - 1]
        if wi > j:
            return M[i - 1, j]
        return max(M[i - 1, j], p[i - 1] + M[i - 1, j - wi])
    return knapsack
"""


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_data_that_breaks_a_requirement_is_checked_where_the_fill_runs(write_rec, backend):
    good = load(write_rec(KNAPSACK.format(last=3)), size=30)
    plan = make_plan(good, cell_ir(good))
    assert plan.method == "certificate" and plan.made_reference is None
    np.testing.assert_array_equal(fill(good, backend=backend).table, analyze(good).table)
    # a negative weight in the last row: j - w reads past the right edge in that row only
    bad = load(write_rec(KNAPSACK.format(last=-2)), size=30)
    assert "min(w) >= 0 does not hold (min(w) is -2)" in certified_plan(bad, cell_ir(bad))
    # the first cell that reads past it, as the python backend names it
    with pytest.raises(OutOfBoundsError, match=r"cell \(30, 89\) reads \(29, 91\), outside shape \(31, 91\)"):
        fill(bad, backend=backend)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_read_only_one_cell_makes_is_not_proven_away(write_rec, backend):
    # reads Up everywhere but in one cell of a large table, which reads Right: no
    # certificate (the branch is in the source), and the checked sweep finds the cell
    rec = load(write_rec("""
@recurrence(shape=(40, 50), dtype=np.int64)
def odd(M, i, j):
    if i == 0:
        return j
    if i == 31 and j == 17 and j + 1 < M.shape[1]:
        return M[i, j + 1] + 1
    return M[i - 1, j] + 1
"""))
    cert = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(cert, Certificate) and cert.regions == ("Right", "Up")
    r = fill(rec, backend=backend, schedule="pattern", verify=True)
    assert r.pattern in cert.patterns and "equals the sequential reference" in r.verified


def test_a_cell_that_may_raise_keeps_the_sweep(write_rec):
    rec = load(write_rec("""
@recurrence(shape=(6, 6), dtype=np.int64)
def div(M, i, j):
    if i == 0:
        return 1
    return M[i - 1, j] // (j - 3)
"""))
    assert "may divide by zero" in certify(cell_ir(rec), rec.args, rec.shape)
    with pytest.raises(RecurrenceError, match="ZeroDivisionError"):
        fill(rec, backend="cpu")


def test_a_damaged_certificate_is_proven_again(write_rec, monkeypatch, tmp_path):
    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path))
    rec = load(write_rec(LCS))
    first = certificate(rec)
    (path,) = (tmp_path / "certificates").iterdir()
    path.write_text('{"reads": [')
    assert certificate(rec) == first


def test_a_size_fact_names_the_table_as_the_cell_does(write_rec):
    # the table is T, not M: the square-table requirement is worded and checked as T's
    rec = load(write_rec("""
@family
def chain(n):
    @recurrence(shape=(n, n), dtype=np.int64)
    def chain(T, i, j):
        if j <= i:
            return 0
        return T[i + 1, j] + 1
    return chain
"""), size=6)
    cert = certify(cell_ir(rec), rec.args, rec.shape)
    assert [str(r) for r in cert.requires] == ["T.shape[0] == T.shape[1]"]
    assert cert.violated(rec, cell_ir(rec).params, "T") is None
    r = fill(rec, backend="cpu", verify=True)
    assert r.value == 5 and "equals the sequential reference" in r.verified


def test_a_premise_on_one_element_proves_nothing_of_another_written_the_same(write_rec):
    # w[x] is tested with x = 0 and read with x = 1: the test says nothing of w[1] = 5
    rec = load(write_rec("""
w = np.array([1, 5], dtype=np.int64)

@recurrence(shape=(3, 4), dtype=np.int64, args=(w,))
def cell(M, i, j, w):
    if i == 0:
        return 0
    x = 0
    if w[x] <= j:
        x = 1
        return M[i - 1, j - w[x]]
    return M[i - 1, j]
"""))
    assert "M[i - 1, j - w[x]] (line 8) may leave the table" in certify(
        cell_ir(rec), rec.args, rec.shape)


def test_the_integer_knapsacks_while_loop_is_proven():
    from integer_knapsack import data, make_integer_knapsack

    rec = make_integer_knapsack(*data(6))
    cert = certificate(rec)
    assert isinstance(cert, Certificate), cert
    assert [str(r) for r in cert.requires] == ["min(w) >= 0", "w.shape[0] == M.shape[0] - 1",
                                               "p.shape[0] == M.shape[0] - 1"]
    assert cert.regions == ("Up", "UpLeft") and "RUD" in cert.patterns
    assert [r.offsets for r in cert.reads] == [("-1", "0"), ("-1", "-k*w[i - 1]")]
    assert make_plan(rec, cell_ir(rec)).method == "certificate"


def test_a_negative_weight_in_the_integer_knapsack_breaks_its_requirement():
    from integer_knapsack import make_integer_knapsack

    # the last type weighs -2: k * w <= c always holds, and c - k * w leaves the table
    rec = make_integer_knapsack(np.array([3, 2, -2]), np.array([4, 3, 1]), 20)
    assert "min(w) >= 0 does not hold (min(w) is -2)" in certified_plan(rec, cell_ir(rec))
    with pytest.raises(OutOfBoundsError, match=r"cell \(3, 0\) reads \(2, 22\), outside shape"):
        fill(rec, backend="python")


def test_a_while_loop_counting_down_is_proven(write_rec):
    rec = load(write_rec("""
@recurrence(shape=(5, 7), dtype=np.int64)
def down(M, i, j):
    if i == 0:
        return j
    best = 0
    k = j
    while k > 0:
        best = max(best, M[i - 1, j - k] + M[i - 1, k - 1])
        k -= 1
    return best
"""))
    cert = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(cert, Certificate) and not cert.requires, cert
    assert cert.regions == ("UpLeft",) and cert.patterns == ("RUD", "CLR", "NOSE")
    r = fill(rec, backend="cpu", verify=True)
    assert "equals the sequential reference" in r.verified


INTEGER_KNAPSACK = """
w = np.array({weights}, dtype=np.int64)
p = np.array([4, 3, 5], dtype=np.int64)

@recurrence(shape=(4, 20), dtype=np.int64, args=(w, p, 9))
def cell(M, i, c, w, p, q):
    if i == 0:
        return 0
    wi = w[i - 1]
    best = M[i - 1, c]
    k = 1
    while {test}:
        t = k * p[i - 1] + M[i - 1, {read}]
        if t > best:
            best = t
{tail}
    return best
"""


@pytest.mark.parametrize("test, read, tail, why", [
    ("k * wi <= c", "c - k * wi", "        k += 1", None),
    # counts down from 1: k * wi may be negative, and c - k * wi past the right edge
    ("k * wi <= c", "c - k * wi", "        k -= 1", "may leave the table"),
    # k set otherwise in the loop too: no induction variable, unknown in the loop
    ("k * wi <= c", "c - k * wi", "        k += 1\n        if t > best:\n            k = c",
     "M[i - 1, c - k * wi] (line 9) is not at a polynomial index"),
    # the scalar q (9, near no extent) has no requirement on its sign: k * q may be negative
    ("k * q <= c", "c - k * q", "        k += 1", "may leave the table"),
    ("k * wi <= c", "c + k * wi", "        k += 1", "may leave the table"),
])
def test_an_unsound_while_loop_is_not_proven(write_rec, test, read, tail, why):
    rec = load(write_rec(INTEGER_KNAPSACK.format(weights=[3, 2, 4], test=test, read=read,
                                                 tail=tail)))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    if why is None:
        assert isinstance(found, Certificate) and [str(r) for r in found.requires] == \
            ["min(w) >= 0", "w.shape[0] == M.shape[0] - 1", "p.shape[0] == M.shape[0] - 1"]
    else:
        assert isinstance(found, str) and why in found, found


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_negative_weight_is_checked_where_the_fill_runs(write_rec, backend):
    # with a negative weight k * w <= c holds for every k: the loop ends only because the
    # checked fill ends a cell's while loops once one of its reads has failed
    source = INTEGER_KNAPSACK.format(test="k * wi <= c", read="c - k * wi",
                                     tail="        k += 1", weights="{weights}")
    good = load(write_rec(source.format(weights=[3, 2, 4])))
    assert make_plan(good, cell_ir(good)).method == "certificate"
    np.testing.assert_array_equal(fill(good, backend=backend).table, analyze(good).table)
    bad = load(write_rec(source.format(weights=[3, 2, -2])))
    assert "min(w) >= 0 does not hold (min(w) is -2)" in certified_plan(bad, cell_ir(bad))
    with pytest.raises(OutOfBoundsError, match=r"cell \(3, \d+\) reads \(2, \d+\), outside shape"):
        fill(bad, backend=backend)


@pytest.mark.parametrize("name", ["proof", "symbolic", "prover", "simplex", "certify"])
def test_a_change_to_any_module_of_the_prover_is_a_new_certificate(tmp_path, monkeypatch, name):
    import importlib

    from depgraph.analysis import certify as module

    source = importlib.import_module(f"depgraph.analysis.{name}").__file__
    changed = tmp_path / f"{name}.py"
    changed.write_text(open(source).read() + "\n# changed\n")
    before = module._prover_digest()
    monkeypatch.setattr(module, "_PROVER_SOURCES", tuple(
        str(changed) if s == source else s for s in module._PROVER_SOURCES))
    module._prover_digest.cache_clear()
    try:
        assert module._prover_digest() != before
    finally:
        module._prover_digest.cache_clear()


def test_floyd_warshall_and_lcs3_are_certified():
    from floyd_warshall import make_floyd_warshall
    from lcs3 import make_lcs3

    fw = make_floyd_warshall(np.zeros((4, 4), dtype=np.int64))
    cert = certificate(fw)
    assert isinstance(cert, Certificate), cert
    assert (cert.ndim, cert.regions, cert.patterns) == (3, (), ())
    # the reads along the table's sides need (n + 1) x n x n, and the weights' reads an
    # n x n matrix
    assert [str(r) for r in cert.requires] == ["M.shape[0] == M.shape[2] + 1",
                                               "M.shape[1] == M.shape[2]",
                                               "W.shape[0] == M.shape[1]",
                                               "W.shape[1] == M.shape[2]"]
    assert [r.spans for r in cert.reads] == [((-1, -1), (0, 0), (0, 0)),
                                             ((-1, -1), (0, 0), (None, None)),
                                             ((-1, -1), (None, None), (0, 0))]
    assert "reads (k - 1, i, j) at (-1, 0, 0), (k - 1, i, k - 1) at (-1, 0, ?)" in cert.summary()
    assert unproven_hyperplane(fw, (1, 0, 0)) is None
    assert "may not be on an earlier hyperplane" in unproven_hyperplane(fw, (1, 1, 0))
    three = make_lcs3("ACGT", "AGT", "CG")
    cert = certificate(three)
    assert isinstance(cert, Certificate) and [str(r) for r in cert.requires] == [
        "X.shape[0] == M.shape[0] - 1", "Y.shape[0] == M.shape[1] - 1",
        "Z.shape[0] == M.shape[2] - 1"]
    assert "- 1: reads (i - 1, j - 1, k - 1) at (-1, -1, -1), " in cert.summary()
    assert cert.to_json()["regions"] is None and cert.to_json()["patterns"] is None
    assert Certificate.from_json(cert.to_json()) == cert
    assert unproven_hyperplane(three, (1, 1, 1)) is None


def test_a_hyperplanes_proof_is_kept_beside_the_certificate(monkeypatch, tmp_path):
    from lcs3 import make_lcs3

    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path))
    rec = make_lcs3("AC", "GTA", "CCGTA")
    assert unproven_hyperplane(rec, (1, 1, 1)) is None
    kept = {p.name.split("-", 1)[-1] for p in (tmp_path / "certificates").iterdir()}
    assert kept == {"pi1_1_1.json"}  # the proof alone: the certificate is its own call
    (path,) = (tmp_path / "certificates").iterdir()
    path.write_text('{"why": 3}')  # damaged: proven again
    assert unproven_hyperplane(rec, (1, 1, 1)) is None
    assert "may not be on an earlier hyperplane" in unproven_hyperplane(rec, (1, 1, -1))


@pytest.mark.parametrize("body, why", [
    ("    return M[i - 1, j, k] if i > 0 else 1\n", None),
    # no guard on the third axis: k + 1 leaves the table at its last layer
    ("    return M[i - 1, j, k + 1] if i > 0 else 1\n", "M[i - 1, j, k + 1] (line 3) may leave"),
    ("    return M[i, j, k + 1] if k + 1 < M.shape[2] else 1\n", None),
    ("    return M[i, j, k] + 1 if i > 0 else 1\n", "may be of the cell itself"),
    # the cell itself where j == k: every offset may be 0 at once
    ("    return M[i, j, j] + 1 if j < M.shape[2] else 1\n", "may be of the cell itself"),
    ("    return M[i - 1, j, 2 * k] if i > 0 else 1\n", "may leave the table"),
])
def test_what_is_proven_of_a_3d_table_and_why_not(write_rec, body, why):
    rec = load(write_rec(f"""
@recurrence(shape=(4, 5, 3), dtype=np.int64)
def cell(M, i, j, k):
{body}"""))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    if why is None:
        assert isinstance(found, Certificate) and found.ndim == 3 and found.regions == ()
    else:
        assert isinstance(found, str) and why in found, found


UP_AND_DOWN = """
@recurrence(shape=(4, 5, 3), dtype=np.int64)
def split(M, i, j, k):
    if j < 2:
        return k if i == 0 else M[i - 1, j, k] + 1
    return k if i == M.shape[0] - 1 else M[i + 1, j, k] + 1
"""


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_reads_in_bounds_that_no_hyperplane_orders_have_no_certificate_plan(write_rec, backend):
    # layers j < 2 read the row above, the others the row below: every read is proven in
    # bounds, but no pi puts both on an earlier step: the trace's order fills it
    rec = load(write_rec(UP_AND_DOWN))
    assert isinstance(certificate(rec), Certificate)
    assert "no hyperplane fits" in certified_plan(rec, cell_ir(rec))
    r = fill(rec, backend=backend, verify=True)
    assert r.schedule in ("stages", "sequential") and r.pi is None
    assert "equals the sequential reference" in r.verified


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_hyperplane_the_certificate_does_not_prove_is_refused(monkeypatch, backend):
    # the source's pi, forced wrong: pi = (1, 1, 0) puts M[i, j, k - 1] on the cell's own
    # step; no certificate plan, and the fill that checks its reads finds it out
    from lcs3 import data, make_lcs3, reference

    from patterns.hyperplane import Hyperplane
    from runtime.schedule import plan

    monkeypatch.setattr(plan, "source_hyperplane",
                        lambda ir, shape: (Hyperplane((1, 1, 0)), "forced"))
    rec = make_lcs3(*data(5))
    assert "pi = (1, 1, 0) is not proven: the read M[i, j, k - 1] (line " in \
        certified_plan(rec, cell_ir(rec))
    r = fill(rec, backend=backend, schedule="hyperplane", verify=True)
    assert "the fill's own checks failed" in " ".join(r.notes)
    np.testing.assert_array_equal(r.table, reference(*data(5)))


KNAPSACKS = """
@family
def knap3(n):
    w = np.full(n, 2, dtype=np.int64)
    w[-1] = {last}  # one late row
    @recurrence(shape=(2, n + 1, 3 * n + 1), dtype=np.int64, args=(w,))
    def knap3(M, t, i, j, w):
        if i == 0 or j == 0:
            return t
        wi = w[i - 1]
        if wi > j:
            return M[t, i - 1, j]
        return max(M[t, i - 1, j], M[t, i - 1, j - wi] + 1)
    return knap3
"""


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_3d_data_requirement_is_checked_where_the_fill_runs(write_rec, backend):
    good = load(write_rec(KNAPSACKS.format(last=3)), size=12)
    plan = make_plan(good, cell_ir(good))
    assert plan.method == "certificate" and plan.hyperplane.pi == (0, 1, 0)
    assert [str(r) for r in certificate(good).requires] == ["min(w) >= 0",
                                                             "w.shape[0] == M.shape[1] - 1"]
    np.testing.assert_array_equal(fill(good, backend=backend).table, analyze(good).table)
    # a negative weight in the last row: j - w reads past the last layer's right edge
    bad = load(write_rec(KNAPSACKS.format(last=-2)), size=12)
    assert "min(w) >= 0 does not hold (min(w) is -2)" in certified_plan(bad, cell_ir(bad))
    with pytest.raises(OutOfBoundsError, match=r"cell \(\d, 12, 3\d\) reads \(\d, 11, 3\d\), "
                                               r"outside shape \(2, 13, 37\)"):
        fill(bad, backend=backend)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_while_loop_from_a_max_is_proven_and_filled_unchecked(backend):
    # the inventory problem's x = max(0, D[t] - s): x >= 0 and x >= D[t] - s, so the
    # read's column s + x - D[t] is at least 0, and the loop's test keeps it <= Smax
    import inventory

    rec = inventory.inventory(12)
    assert make_plan(rec, cell_ir(rec)).method == "certificate"
    r = fill(rec, backend=backend, verify=True)
    assert r.verified == "equals the sequential reference exactly"
    assert not any("checks each read" in n for n in r.notes), r.notes


def test_a_while_loop_from_a_min_that_may_be_negative_is_not_proven(write_rec):
    rec = load(write_rec("""
@recurrence(shape=(4, 9), dtype=np.int64)
def cell(M, i, j):
    if i == 0:
        return j
    x = min(j - 2, 0)  # at most 0: below the table's first column for j < 2
    best = 0
    while x <= j - 1:
        best = max(best, M[i - 1, x])
        x += 1
    return best
"""))
    found = certify(cell_ir(rec), rec.args, rec.shape)
    assert isinstance(found, str) and "may leave the table" in found, found


@pytest.mark.parametrize("name, requires", [
    ("nim", []),  # range(1, min(k + 1, m) + 1): t <= m
    ("transportation", ["d.shape[0] == M.shape[0] - 1", "cb.shape[0] == M.shape[0] - 1",
                        "ca.shape[0] == M.shape[0] - 1"]),
    ("winning_in_las_vegas", ["T == M.shape[0] - 1", "C == M.shape[1] - 1"]),
    ("assembly_line_balancing", ["M.shape[1] == 2", "a.shape[1] == M.shape[0]",
                                 "a.shape[0] == M.shape[1]", "x.shape[0] == M.shape[1]",
                                 "t.shape[0] == M.shape[1]", "t.shape[1] == M.shape[0]"]),
    ("deadline_scheduling", ["M.shape[0] == M.shape[1]", "d.shape[0] == M.shape[0] - 1",
                             "p.shape[0] == M.shape[0] - 1", "max(d) <= M.shape[0] - 1"]),
    ("discounted_profits", ["min(G) >= 0", "M.shape[0] == M.shape[1]", "T == M.shape[0] - 1",
                            "P.shape[0] == M.shape[0]", "G.shape[0] == M.shape[1]",
                            "max(G) <= M.shape[0] - 1"]),
])
def test_catalog_cells_with_bounds_from_min_the_sizes_or_the_data_are_proven(name, requires):
    rec = load(f"examples/catalog/{name}.py", size=9)
    cert = certificate(rec)
    assert isinstance(cert, Certificate) and [str(r) for r in cert.requires] == requires, cert
    # nim's int8 values are proven too (its loop returns 0 or 1): nothing is checked
    assert make_plan(rec, cell_ir(rec)).method == "certificate"
    assert "the sequential reference" in fill(rec, backend="cpu", verify=True).verified


LOOKALIKE = """
deadlines = np.array({d}, dtype=np.int64)

@recurrence(shape=(4, 9), dtype=np.int64, args=(deadlines,))
def cell(M, k, m, d):
    if k == d.shape[0]:
        return m
    best = M[k + 1, m]
    for t in range(1, {end} + 1):
        best = max(best, M[k + 1, {read}])
    return best
"""


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
@pytest.mark.parametrize("d, end, read, why, bad", [
    # min(m, d[k]) bounds t by m: proven, as the catalog's transportation
    ([2, 5, 8], "min(m, d[k])", "m - t", None, None),
    # max(m, d[k]) bounds t by neither: m - t may be below the table
    ([2, 5, 8], "max(m, d[k])", "m - t", "may leave the table", r"reads \(\d, -\d\)"),
    # t <= d[k] <= 8 = M.shape[1] - 1 proves t in the table, not m + t
    ([2, 5, 8], "d[k]", "m + t", "may leave the table", r"reads \(\d, \d+\)"),
    # t <= d[k] and max(d) <= M.shape[1] - 1: t is a column
    ([2, 5, 8], "d[k]", "t", None, None),
])
def test_a_bound_from_min_or_the_data_proves_only_what_it_bounds(write_rec, backend, d, end,
                                                                 read, why, bad):
    rec = load(write_rec(LOOKALIKE.format(d=d, end=end, read=read)))
    if why is None:
        assert make_plan(rec, cell_ir(rec)).method == "certificate"
        np.testing.assert_array_equal(fill(rec, backend=backend).table, analyze(rec).table)
        return
    assert why in certified_plan(rec, cell_ir(rec))
    with pytest.raises(OutOfBoundsError, match=bad + r", outside shape \(4, 9\)"):
        fill(rec, backend=backend)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_deadline_past_the_last_column_breaks_the_ceiling_and_is_checked_where_the_fill_runs(
        write_rec, backend):
    source = LOOKALIKE.format(end="d[k]", read="t", d="{d}")
    good = load(write_rec(source.format(d=[2, 5, 8])))
    assert "max(d) <= M.shape[1] - 1" in map(str, certificate(good).requires)
    # the last deadline, 9, reads past column 8: the ceiling does not hold, so nothing
    # is proven (a certificate kept for other data is refused: the requirement fails)
    bad = load(write_rec(source.format(d=[2, 5, 9])))
    assert certified_plan(bad, cell_ir(bad)).startswith("no certificate (")
    assert "max(d) <= M.shape[1] - 1 does not hold (max(d) is 9)" == \
        certificate(good).violated(bad, cell_ir(bad).params)
    with pytest.raises(OutOfBoundsError, match=r"cell \(2, \d\) reads \(3, 9\), outside shape"):
        fill(bad, backend=backend)


def test_a_bound_on_an_arrays_data_holds_only_of_elements_read_inside_it(write_rec):
    # with a row fewer in w than the table needs, w[i - 1] in the last row reads past its
    # end, whatever min(w) says: nothing of that element is proven
    source = """
w = np.array({w}, dtype=np.int64)

@recurrence(shape=(5, 9), dtype=np.int64, args=(w,))
def cell(M, i, j, w):
    if i == 0 or j == 0:
        return 0
    wi = w[i - 1]
    if wi > j:
        return M[i - 1, j]
    return max(M[i - 1, j], 1 + M[i - 1, j - wi])
"""
    fits = load(write_rec(source.format(w=[1, 2, 1, 3])))
    assert [str(r) for r in certificate(fits).requires] == ["min(w) >= 0",
                                                           "w.shape[0] == M.shape[0] - 1"]
    short = load(write_rec(source.format(w=[1, 2, 1])))
    assert isinstance(certify(cell_ir(short), short.args, short.shape), str)
    walk = Walk(cell_ir(short), short.args, short.shape)
    walk.block(list(cell_ir(short).definition().body), {}, ())
    assert prove(Prover(walk, 0, tuple(walk.facts()))) == "the read w[i - 1] (line 5) may leave w"


@pytest.mark.parametrize("length, why", [
    (6, None),
    (5, "the read w[i] (line 3) may leave w"),  # w[5] at row 5: past w's end
])
def test_every_read_of_an_argument_is_proven_inside_it_or_there_is_no_certificate(
        length, why):
    from depgraph import recurrence

    @recurrence(shape=(6, 4), dtype=np.int64, args=(np.zeros(length),))
    def rows(M, i, j, w):
        return w[i] + (M[i - 1, j] if i > 0 else 0.0)

    cert = certify(cell_ir(rows), rows.args, rows.shape)
    if why is None:
        assert [str(r) for r in cert.requires] == ["w.shape[0] == M.shape[0]"]
    else:
        assert cert == why


def test_a_read_of_an_array_that_is_not_an_argument_leaves_no_certificate():
    from depgraph import recurrence

    @recurrence(shape=(4, 4), dtype=np.int64, args=(np.zeros((4, 4), np.int64),))
    def view(M, i, j, A):
        return A[i][j] + (M[i - 1, j] if i > 0 else 0)

    assert certify(cell_ir(view), view.args, view.shape) == \
        "the read A[i][j] (line 3) is of an array that is not an argument"


@pytest.mark.parametrize("path", ["examples/lcs.py", "examples/knapsack.py"])
def test_the_certified_examples_prove_their_argument_reads_and_check_none(path):
    from depgraph.analysis.certify import arguments_proven

    rec = load(path, size=40)
    ir = cell_ir(rec)
    plan = certified_plan(rec, ir)
    assert plan.method == "certificate" and arguments_proven(rec, ir)
    required = [str(r) for r in certificate(rec, ir).requires]
    assert all(any(r.startswith(f"{p}.shape[0] == M.shape[") for r in required)
               for p in ir.params)
    r = fill(rec, backend="cpu", plan=plan)
    notes = " ".join(r.notes)
    assert "reads proven for every shape" in notes and "checks each read" not in notes
    np.testing.assert_array_equal(r.table, analyze(rec).table)


SHIFT = """
d = np.array({d}, dtype=np.int64)
@recurrence(shape=(len(d) + 1, 12), dtype=np.int64, args=(d,))
def shift(M, i, j, d):
    if i == 0:
        return j
    if j + d[i - 1] >= 12:
        return 0
    return M[i - 1, j] + M[i - 1, j + d[i - 1]]
"""


def test_the_reads_proven_where_no_certificate_is_are_those_of_premises_the_data_meets(
        write_rec, tmp_path, monkeypatch):
    from depgraph.analysis.certify import trusted_reads

    monkeypatch.setenv("DEPGRAPH_CACHE", str(tmp_path))
    # with min(d) >= 0, M[i - 1, j + d[i - 1]] is proven but for the last column (the
    # branch above it guards it by a literal, not by the table's extent); a negative
    # shift takes the proof that assumes nothing of d, which leaves the first to the fill
    key = ("M[i - 1, j + d[i - 1]]", 7)
    for d, low in (([1, 0, 2], True), ([1, -2, 2], False)):
        rec = load(write_rec(SHIFT.format(d=d)))
        assert isinstance(certificate(rec), str)
        t = trusted_reads(rec)
        assert t.reads_in(("Up", "UpLeft", "UpRight")) == {("M[i - 1, j]", 7)}
        assert t.elements == (("d[i - 1]", 5), ("d[i - 1]", 7))
        assert dict(t.edges)[key] == ((True, True), (low, False))
        assert ("min(d) >= 0" in map(str, t.requires)) == low


def test_a_column_clamped_by_min_and_max_is_proven(write_rec):
    # min(max(j + d, 0), m - 1): at least 0 (both of the min's arguments are), at most
    # m - 1; any shift d, so no requirement on d's data
    rec = load(write_rec("""
d = np.array([3, -5, 1, 0, -2])
@recurrence(shape=(6, 7), dtype=np.int64, args=(d,))
def drift(M, i, j, d):
    if i == 0:
        return j
    k = min(max(j + d[i - 1], 0), M.shape[1] - 1)
    return max(M[i - 1, j], M[i - 1, k] + 1)
"""))
    cert = certificate(rec)
    assert isinstance(cert, Certificate) and cert.patterns == ("RUD",)
    assert [str(r) for r in cert.requires] == ["d.shape[0] == M.shape[0] - 1"]
    assert fill(rec, backend="cpu", verify=True).verified
