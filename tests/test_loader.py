import pytest

from depgraph import load
from depgraph.errors import RecurrenceError, UsageError

ONE = """
@recurrence(shape=(2, 2), dtype=np.int64)
def a(M, i, j):
    return 1
"""
TWO = ONE + """
@recurrence(shape=(3, 3), dtype=np.int64)
def b(M, i, j):
    return 2
"""
FAM = """
@family
def sq(n):
    @recurrence(shape=(n, n), dtype=np.int64)
    def sq(M, i, j):
        return 0
    return sq
"""


def test_single_recurrence_and_name(write_rec):
    assert load(write_rec(ONE)).name == "a"
    assert load(write_rec(TWO), name="b").shape == (3, 3)


def test_several_without_name(write_rec):
    with pytest.raises(UsageError, match="several recurrences \\(a, b\\).*name="):
        load(write_rec(TWO))


def test_no_such_name(write_rec):
    with pytest.raises(UsageError, match="no recurrence named 'c'.*a, b"):
        load(write_rec(TWO), name="c")


def test_no_recurrence(write_rec):
    with pytest.raises(UsageError, match="defines no recurrence"):
        load(write_rec("x = 1\n"))


def test_missing_file(tmp_path):
    with pytest.raises(UsageError, match="no such recurrence file"):
        load(str(tmp_path / "nope.py"))


def test_family_needs_size(write_rec):
    path = write_rec(FAM)
    with pytest.raises(UsageError, match="is a family.*size=N"):
        load(path)
    assert load(path, size=5).shape == (5, 5)
    with pytest.raises(UsageError, match="drop size=..."):
        load(write_rec(ONE), size=4)


def test_file_that_fails_to_run(write_rec):
    with pytest.raises(RecurrenceError, match=r"line 5: running the file failed: ZeroDivisionError"):
        load(write_rec("\n\n1 / 0\n"))
    with pytest.raises(RecurrenceError, match="syntax error"):
        load(write_rec("def (:\n"))
