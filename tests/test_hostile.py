"""Inputs a careful or hostile user gives, on the compiled backends (the CPU and, under
numba's simulator, CUDA): each ends in the right table or a clear error naming the cell,
the line or the setting, never a wrong table (issue 39's list, case by case)."""

import numpy as np
import pytest

from depgraph import fill, load, score
from depgraph.errors import (
    BadIndexError,
    CellFunctionError,
    CompileError,
    RecurrenceError,
    TooLargeError,
    WriteError,
)

BACKENDS = ["cpu", "cuda"]


def _reference(rec):
    return fill(rec, backend="python").table


ALIAS = """
@recurrence(shape=(4, 6), dtype=np.int64)
def alias(M, i, j):
    T = M  # reads through T: the source's subscripts of M are not all the reads
    if j == 5:
        return i
    return T[i, j + 1] + (T[i - 1, j] if i > 0 else 1)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_reads_through_an_alias_are_traced_not_missed(write_rec, backend):
    rec = load(write_rec(ALIAS))
    r = fill(rec, backend=backend, verify=True)
    np.testing.assert_array_equal(r.table, _reference(rec))
    assert "'M' is used other than by reads (line 3)" in " ".join(r.notes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_m_passed_to_a_compiled_helper_is_refused(write_rec, backend):
    rec = load(write_rec("""
import numba

@numba.njit
def get(M, i, j):
    return M[i, j]

@recurrence(shape=(3, 4), dtype=np.int64)
def helper(M, i, j):
    if i == 0 or j == 3:
        return 1
    return get(M, i - 1, j + 1) + 1
"""))
    with pytest.raises(CellFunctionError, match="M is passed to a numba-compiled function"):
        fill(rec, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_to_m_is_refused(write_rec, backend):
    rec = load(write_rec("""
@recurrence(shape=(3, 3), dtype=np.int64)
def writes(M, i, j):
    if i == 0 or j == 0:
        return 1
    M[i, j - 1] = 7
    return M[i - 1, j] + M[i, j - 1]
"""))
    with pytest.raises(WriteError, match=r"cell \(1, 1\) writes M\[\(1, 0\)\]"):
        fill(rec, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype, value, message", [
    ("np.int8", "M[i - 1, j] + M[i, j - 1]", r"cell \(3, 8\).*its value 165 does not fit "
                                              "the table's dtype int8"),
    ("np.uint16", "M[i - 1, j] - M[i, j - 1] - 1", r"cell \(1, 1\).*its value -1 does not fit "
                                                   "the table's dtype uint16"),
    ("np.int64", "np.nan if (i, j) == (2, 3) else M[i - 1, j] + M[i, j - 1]",
     r"cell \(2, 3\).*it returned nan, which is not a int64 value"),
])
def test_a_value_outside_the_dtype_names_the_cell(write_rec, backend, dtype, value, message):
    rec = load(write_rec(f"""
@recurrence(shape=(12, 12), dtype={dtype})
def small(M, i, j):
    if i == 0 or j == 0:
        return 1
    return {value}
"""))
    with pytest.raises(CellFunctionError, match=message):
        fill(rec, backend="python")
    with pytest.raises(CellFunctionError, match=message):
        fill(rec, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_a_family_sets_per_size_gets_its_own_kernel(write_rec, backend):
    path = write_rec("""
K = 0

@family
def grid(n):
    global K
    K = n
    @recurrence(shape=(n, n), dtype=np.int64)
    def g(M, i, j):
        if i == 0 or j == 0:
            return K
        return M[i - 1, j] + M[i, j - 1]
    return g
""")
    for size in (3, 4):
        rec = load(path, size=size)
        np.testing.assert_array_equal(fill(rec, backend=backend).table, _reference(rec))


@pytest.mark.parametrize("body, message", [
    ('@recurrence(shape=(3, 3), dtype=np.dtype("U1"))\ndef s(M, i, j):\n    return "aa"\n',
     r"line 3: dtype <U1 is not a number type"),
    ("@recurrence(shape=(3.5, 5), dtype=np.int64)\ndef s(M, i, j):\n    return i\n",
     r"line 3: shape must be a tuple of positive integers, got \(3.5, 5\): 3.5 is a float"),
    ("import sys\nsys.exit(0)\n", r"line 4: the file called sys.exit\(0\) while loading"),
])
def test_files_that_define_no_valid_recurrence_say_why(write_rec, body, message):
    path = write_rec(body)
    with pytest.raises(RecurrenceError, match=message):
        load(path)


def _one(write_rec, body):
    return load(write_rec(f"""
def bonus(i, j):  # a plain Python helper
    return i * j

def fib(k):  # a recursive one
    return k if k < 2 else fib(k - 1) + fib(k - 2)

IDX = np.array([0, 1])

@recurrence(shape=(4, 4), dtype=np.int64)
def cell(M, i, j):
    if i == 0:
        return 1
{body}"""))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("body, error, message", [
    ("    return None if i == 2 else M[i - 1, j]\n", CellFunctionError,
     r"cell \(2, 0\).*it returned None"),
    ("    return M[i - 1, :].max() + 1\n", BadIndexError, r"cell \(1, 0\).*is a slice"),
    ("    return M[i - 1, IDX].sum() + 1\n", BadIndexError,
     r"cell \(1, 0\) reads M\[\(0, array\(\[0, 1\]\)\)\]: .* is a ndarray, not an integer"),
])
def test_cells_the_compiled_sweep_cannot_run_are_traced_for_the_cell(write_rec, backend, body,
                                                                       error, message):
    rec = _one(write_rec, body)
    with pytest.raises(error, match=message):
        fill(rec, backend=backend)


REFUSED = [
    ("    return M[i - 1.0, j] + 1\n",
     r"line \d+: return M\[i - 1.0, j\] \+ 1\): No implementation of function .*getitem"),
    ("    return M[i - 1, j] + UNDEFINED\n", r"it uses 'UNDEFINED', which is not defined"),
    ("    return M[i - 1, j] + bonus(i, j)\n",
     r"line \d+: return M\[i - 1, j\] \+ bonus\(i, j\)\): it calls bonus, a plain Python "
     r"function numba cannot compile: decorate bonus with @numba.njit"),
    ('    return "x" if j == 1 else M[i - 1, j]\n', r"unify Literal\[str\]\(x\) and int64"),
    ("    return (1, 2) if j == 1 else M[i - 1, j]\n", r"line \d+: return \(1, 2\).*Cannot unify Tuple"),
    ("    return M[i - 1, j] + fib(j)\n", r"it calls fib, a plain Python function numba "
                                         r"cannot compile: decorate fib with @numba.njit"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("body, message", REFUSED)
def test_what_numba_refuses_is_said_in_the_cells_terms(write_rec, backend, body, message):
    rec = _one(write_rec, body)
    with pytest.raises(CompileError, match=message) as caught:
        fill(rec, backend=backend)
    assert "backend='python'" in str(caught.value)


@pytest.mark.parametrize("body", [body for body, _ in REFUSED])
def test_auto_fills_what_numba_refuses_as_the_python_backend_does(write_rec, body):
    rec = _one(write_rec, body)
    try:
        expected = fill(rec, backend="python").table
    except RecurrenceError as exc:
        with pytest.raises(type(exc)):
            fill(rec, backend="auto")
    else:
        r = fill(rec, backend="auto")
        assert r.backend == "python"
        assert "auto: falling back to the python backend" in " ".join(r.notes)
        np.testing.assert_array_equal(r.table, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_table_larger_than_memory_is_refused_before_any_work(write_rec, backend):
    rec = load(write_rec("""
@recurrence(shape=(1_000_000, 1_000_000), dtype=np.int64)
def huge(M, i, j):
    return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
"""))
    with pytest.raises(TooLargeError, match=r"\(the table filled\): 8000.0 GB.*score=True"):
        fill(rec, backend=backend)


@pytest.mark.parametrize("backend", ["python", *BACKENDS])
@pytest.mark.parametrize("shape, value, message", [
    ((12, 12), "int(M[i - 1, j]) + int(M[i, j - 1])", r"its value \d+ does not fit the "
                                                      "table's dtype int8"),  # diagonals
    ((12, 3), "int(M[i - 1, j]) * 3", r"cell \(5, 1\).*its value 243 does not fit"),  # rows
])
def test_a_score_checks_each_value_it_keeps(write_rec, backend, shape, value, message):
    # int(...): the cell computes beyond int8 on every backend, the simulator's included
    rec = load(write_rec(f"""
@recurrence(shape={shape}, dtype=np.int8)
def small(M, i, j):
    if i == 0 or j == 0:
        return 1
    return {value}
"""))
    with pytest.raises(CellFunctionError, match=message):
        score(rec, backend=backend)


def test_a_score_whose_values_are_proven_checks_none(write_rec):
    from sources import LCS

    r = score(load(write_rec(LCS)), backend="cpu")
    assert not any("each value checked" in note for note in r.notes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_kernel_kept_on_disk_is_keyed_by_what_the_cell_reads(write_rec, backend):
    # n, a closure value, decides which cells read what: each size its own kernel, in
    # memory and in the kernels kept on disk
    path = write_rec("""
@family
def skew(n):
    @recurrence(shape=(n, n), dtype=np.int64)
    def skew(M, i, j):
        if i == 0 or j == 0 or j == n - 1:
            return n
        return M[i, j - 1] + M[i - 1, j + 1]
    return skew
""")
    for size in (5, 7, 5):
        rec = load(path, size=size)
        np.testing.assert_array_equal(fill(rec, backend=backend).table, _reference(rec))
