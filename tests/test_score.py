import numpy as np
import pytest
from sources import neighbour_reads

from depgraph import load
from depgraph.errors import NoPatternError, OutOfBoundsError
from patterns import DIAGONAL_FLIPS
from runtime.plan import make_plan
from runtime.score import score, score_pattern, verify_score

CASES = [(code, shape, "cpu") for code in DIAGONAL_FLIPS for shape in [(7, 9), (9, 4), (1, 6), (6, 1)]]
CASES += [(code, shape, backend) for code in DIAGONAL_FLIPS for shape in [(7, 9), (6, 1)]
          for backend in ("python", "cuda")]


@pytest.mark.parametrize("code, shape, backend", CASES)
def test_score_is_the_reference_last_cell(code, shape, backend, write_rec):
    # reads up, left, up-left and two rows up in code's frame: only code allows them
    rec = load(write_rec(neighbour_reads(code, shape, far=True)))
    res = score(rec, backend)
    rows, cols = DIAGONAL_FLIPS[code]
    assert res.pattern == code and res.backend == backend
    assert res.cell == (0 if rows else shape[0] - 1, 0 if cols else shape[1] - 1)
    assert res.value == make_plan(rec).reference[res.cell]
    if backend != "cuda":
        assert res.kept == 3 * shape[1]  # the read two rows up: three rows kept
    else:
        assert res.kept == 4 * shape[0]  # four anti-diagonals of a row each


def test_score_reports_progress_and_verifies(write_rec):
    rec = load(write_rec(neighbour_reads("NOSE", (300, 7), far=False)))
    done = []
    res = score(rec, "cpu", progress=done.append)
    assert done[-1] == rec.cells and done == sorted(done) and len(done) > 2
    assert verify_score(res, make_plan(rec).reference) == (
        "M(299, 6) equals the sequential reference exactly")


def test_score_of_floats(write_rec):
    rec = load(write_rec(neighbour_reads("SONE", (20, 30), far=False, dtype="float32")))
    res = score(rec, "cpu")
    assert res.value.dtype == np.float32
    assert "matches the sequential reference" in verify_score(res, make_plan(rec).reference)


@pytest.mark.parametrize("body, text", [
    ("""
@recurrence(shape=(4, 6), dtype=np.int64, args=(np.array([1, 2, 3, 1]),))
def knap(M, i, j, w):
    return 0 if i == 0 else max(M[i - 1, j], M[i - 1, j - w[i]] if j >= w[i] else 0)
""", "constant offset"),
    ("""
@recurrence(shape=(4, 6), dtype=np.int64)
def rows(M, i, j):
    if i == 0 or j == 0 or j == 5:
        return 1
    return M[i - 1, j - 1] + M[i - 1, j + 1]
""", "no diagonal pattern allows the reads (UpLeft, UpRight)"),
    ("""
@recurrence(shape=(3, 3, 3), dtype=np.int64)
def cube(M, i, j, k):
    return 1 if i == 0 else M[i - 1, j, k]
""", "2-D tables, not 3-D"),
])
def test_score_needs_constant_offsets_in_a_diagonal_pattern(body, text, write_rec):
    with pytest.raises(NoPatternError, match=text.replace("(", r"\(").replace(")", r"\)")):
        score_pattern(load(write_rec(body)))


@pytest.mark.parametrize("backend", ["cpu", "python", "cuda"])
def test_score_names_an_out_of_bounds_read(backend, write_rec):
    rec = load(write_rec("""
@recurrence(shape=(5, 5), dtype=np.int64)
def oob(M, i, j):
    return M[i - 1, j] + 1 if j == 1 else 0
"""))
    with pytest.raises(OutOfBoundsError, match=r"cell \(0, 1\) reads \(-1, 1\), outside shape \(5, 5\)"):
        score(rec, backend)
