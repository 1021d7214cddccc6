import numpy as np
import pytest
from sources import THESIS, neighbour_reads

from depgraph import load, score, score_plan
from depgraph.errors import NoPatternError, OutOfBoundsError
from patterns import BY_CODE, DIAGONAL_FLIPS
from runtime.backends import cpu, cpu_score
from runtime.score_only import compare_score as verify_score
from runtime.schedule.plan import make_plan

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
    if backend == "python":
        assert res.kept == min(3, shape[0]) * shape[1]  # the read two rows up: three rows kept
    else:  # the read two rows up and one left is three diagonals back
        assert res.kept == 4 * shape[0]  # four anti-diagonals of a row each


def test_score_reports_progress_and_verifies(write_rec):
    rec = load(write_rec(neighbour_reads("NOSE", (300, 7), far=False)))
    done = []
    res = score(rec, "cpu", progress=lambda label, total: done.append)
    assert done[-1] == rec.cells and done == sorted(done) and len(done) > 2
    assert verify_score(res, make_plan(rec).reference) == (
        "M(299, 6) equals the sequential reference exactly")


def test_score_of_floats(write_rec):
    rec = load(write_rec(neighbour_reads("SONE", (20, 30), far=False, dtype="float32")))
    res = score(rec, "cpu")
    assert res.value.dtype == np.float32
    assert "matches the sequential reference" in verify_score(res, make_plan(rec).reference)


LINES = {  # reads one and two lines back along the walk, the first at a data-dependent place
    "RUD": ("M[i - 1, W[j] % {m}]", "M[i - 2, j]", "i >= 2", "i >= 1"),
    "RDU": ("M[i + 1, W[j] % {m}]", "M[i + 2, j]", "i < {n} - 2", "i < {n} - 1"),
    "CLR": ("M[W[i] % {n}, j - 1]", "M[i, j - 2]", "j >= 2", "j >= 1"),
    "CRL": ("M[W[i] % {n}, j + 1]", "M[i, j + 2]", "j < {m} - 2", "j < {m} - 1"),
}


def line_reads(code, shape):
    n, m = shape
    near, far, has_far, has_near = (x.format(n=n, m=m) for x in LINES[code])
    return f"""
W = (np.arange({max(shape)}) * 7 + 3).astype(np.int64)

@recurrence(shape={shape}, dtype=np.int64, args=(W,))
def line(M, i, j, W):
    total = W[i] + 2 * W[j]
    if {has_near}:
        total += 3 * {near}
    if {has_far}:
        total += 5 * {far}
    return total % 1000003
"""


@pytest.mark.parametrize("code", sorted(LINES))
@pytest.mark.parametrize("backend", ["cpu", "python"])
def test_score_walks_rows_or_columns_with_data_dependent_reads(code, backend, write_rec):
    rec = load(write_rec(line_reads(code, (9, 7))))
    plan = score_plan(rec)
    assert (plan.pattern, plan.keep, plan.gpu) == (code, 3, False)
    res = score(rec, backend)
    assert res.cell == plan.last((9, 7)) and res.kept == 3 * (7 if code[0] == "R" else 9)
    reference = make_plan(rec).reference
    assert res.value == reference[res.cell]
    last = reference[res.cell[0]] if code[0] == "R" else reference[:, res.cell[1]]
    np.testing.assert_array_equal(res.line, last)
    assert verify_score(res, reference).startswith(
        f"M[{res.cell[0]}, :] equals" if code[0] == "R" else f"M[:, {res.cell[1]}] equals")


def test_score_ring_must_fit_in_memory(write_rec, monkeypatch):
    from depgraph import memory
    from depgraph.errors import TooLargeError

    rec = load(write_rec(line_reads("CLR", (9, 7))))
    monkeypatch.setattr(memory, "available_memory", lambda: 100)
    with pytest.raises(TooLargeError, match=r"keeps 3 columns of 9 cells \(0.2 kB\)"):
        score(rec, "cpu")


@pytest.mark.parametrize("code", sorted(LINES))
@pytest.mark.parametrize("shape", [(9, 7), (4, 11), (3, 1), (1, 5)])
def test_gpu_score_keeps_a_ring_of_rows_or_columns(code, shape, write_rec):
    rec = load(write_rec(line_reads(code, shape)))
    res = score(rec, "cuda")
    axis = 0 if code[0] == "R" else 1
    assert res.backend == "cuda" and res.pattern == code
    assert res.kept == min(3, shape[axis]) * shape[1 - axis]
    slices = ("rows", "columns")[axis]
    assert f"one cooperative launch, a grid barrier between {slices}" in res.notes
    assert verify_score(res, make_plan(rec).reference).endswith(
        "equals the sequential reference exactly")


@pytest.mark.parametrize("code", sorted(LINES))
def test_gpu_score_names_an_out_of_bounds_read_of_rows(code, write_rec):
    near = LINES[code][0].format(n=6, m=5).replace("% ", "% 2 * 9 - ")  # reaches past the edge
    rec = load(write_rec(f"""
W = np.arange(6, dtype=np.int64)

@recurrence(shape=(6, 5), dtype=np.int64, args=(W,))
def far(M, i, j, W):
    return 1 + {near} if {LINES[code][3].format(n=6, m=5)} else 0
"""))
    assert score_plan(rec).pattern == code
    with pytest.raises(OutOfBoundsError, match=r"cell \(\d+, \d+\) reads \(-?\d+, -?\d+\), "
                                               r"outside shape \(6, 5\)"):
        score(rec, "cuda")


@pytest.mark.parametrize("body, text", [
    ("""
@recurrence(shape=(4, 6), dtype=np.int64, args=(np.array([1, 2, 3, 1, 0, 2]),))
def mixed(M, i, j, w):
    return 0 if i == 0 or j == 0 else M[i - 1, j] + M[i, w[j]]
""", "rows: reads rows [-1, 0] away, not all on one side; "
     "columns: the read M[i, w[j]] (line 3) is not at a constant offset"),
    ("""
@recurrence(shape=(3, 3, 3), dtype=np.int64)
def cube(M, i, j, k):
    return 1 if i == 0 else M[i - 1, j, k]
""", "2-D tables, not 3-D"),
])
def test_score_needs_reads_at_constant_offsets(body, text, write_rec):
    with pytest.raises(NoPatternError) as err:
        score_plan(load(write_rec(body)))
    assert text in str(err.value)


@pytest.mark.parametrize("backend", ["cpu", "python", "cuda"])
def test_score_names_an_out_of_bounds_read(backend, write_rec):
    rec = load(write_rec("""
@recurrence(shape=(5, 5), dtype=np.int64)
def oob(M, i, j):
    return M[i - 1, j] + 1 if j == 1 else 0
"""))
    with pytest.raises(OutOfBoundsError, match=r"cell \(0, 1\) reads \(-1, 1\), outside shape \(5, 5\)"):
        score(rec, backend)


def test_python_score_names_a_failing_cell(write_rec):
    from depgraph.errors import CellFunctionError

    rec = load(write_rec("""
@recurrence(shape=(3, 3), dtype=np.int64)
def boom(M, i, j):
    return 1 if i == 0 or j == 0 else int(M[i - 1, j - 1]) // (i - j)
"""))
    with pytest.raises(CellFunctionError, match=r"cell \(1, 1\): the cell function failed: "
                                                r"ZeroDivisionError"):
        score(rec, "python")


@pytest.mark.parametrize("code, shape", [("NOSE", (37, 29)), ("SENO", (5, 61)),
                                         ("SONE", (40, 3)), ("NESO", (1, 9)), ("NOSE", (8, 1))])
def test_cpu_score_splits_anti_diagonals_among_threads(code, shape, write_rec, monkeypatch):
    # a window of anti-diagonals, threads splitting each (forced at these tiny sizes):
    # every flip, reads two rows up, one-row and one-column tables

    if cpu.barrier_threads() < 2:
        pytest.skip("one thread here: no barrier to split a slice among threads")
    monkeypatch.setattr(cpu_score, "PARALLEL_CELLS", 0)
    rec = load(write_rec(neighbour_reads(code, shape, far=True)))
    done = []
    res = score(rec, "cpu", progress=lambda label, total: done.append)
    assert res.value == make_plan(rec).reference[res.cell]
    assert res.kept == 4 * shape[0]  # two rows up and one left: three diagonals back
    assert "threads: each anti-diagonal split among them" in " ".join(res.notes)
    assert done[-1] == rec.cells and done == sorted(done)


@pytest.mark.parametrize("code", sorted(LINES))
def test_cpu_score_splits_rows_or_columns_among_threads(code, write_rec, monkeypatch):

    if cpu.barrier_threads() < 2:
        pytest.skip("one thread here: no barrier to split a slice among threads")
    monkeypatch.setattr(cpu_score, "PARALLEL_CELLS", 0)
    rec = load(write_rec(line_reads(code, (23, 17))))
    res = score(rec, "cpu")
    reference = make_plan(rec).reference
    assert res.value == reference[res.cell]
    last = reference[res.cell[0]] if code[0] == "R" else reference[:, res.cell[1]]
    np.testing.assert_array_equal(res.line, last)
    kind = "row" if code[0] == "R" else "column"
    assert f"threads: each {kind} split among them" in " ".join(res.notes)


@pytest.mark.parametrize("body, text", [
    ("""
@recurrence(shape=(6, 7), dtype=np.int64)
def oob(M, i, j):
    return M[i - 1, j] + 1 if j == 3 else (0 if i == 0 or j == 0 else M[i - 1, j - 1])
""", r"cell \(0, 3\) reads \(-1, 3\), outside shape \(6, 7\)"),
    ("""
@recurrence(shape=(6, 7), dtype=np.int64)
def oob(M, i, j):
    return 0 if i == 0 else M[i - 1, j + 2]
""", r"cell \(\d, [56]\) reads \(\d, [78]\), outside shape \(6, 7\)"),
])
def test_cpu_score_threads_name_an_out_of_bounds_read(body, text, write_rec, monkeypatch):
    # each thread records its own bad read, so the cell and the read reported belong together

    if cpu.barrier_threads() < 2:
        pytest.skip("one thread here: no barrier to split a slice among threads")
    monkeypatch.setattr(cpu_score, "PARALLEL_CELLS", 0)
    with pytest.raises(OutOfBoundsError, match=text):
        score(load(write_rec(body)), "cpu")


def _example_files():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "examples"
    return sorted(root.glob("*.py")) + sorted((root / "catalog").glob("*.py"))


#: Examples whose reads of M are not at constant offsets (matrix chain's inner loop,
#: bitmask states, reads from the whole row) or that no diagonal, row or column walk
#: fits (skew's hyperplane): no score-only fill, and told why.
NO_SCORE = {"matrix_chain", "alphabetic_radix_code_tree", "min_spanning_tree", "nim",
            "optimal_bst", "shortest_path_acyclic", "skew"}
#: Examples of more than two dimensions: a score-only fill is 2-D.
NOT_2D = {"floyd_warshall", "lcs3"}


@pytest.mark.parametrize("path", [p if p.stem in THESIS else pytest.param(p, marks=pytest.mark.slow)
                                  for p in _example_files()], ids=lambda p: p.stem)
@pytest.mark.parametrize("split", [False, True], ids=["one-core", "threads"])
def test_score_of_every_example(path, split, monkeypatch):
    # the "score-only fills equal the sequential reference on every example": the
    # last cell (and the last row or column of a line walk) of each example at size 16,
    # on one core and with every slice split among threads
    from depgraph.frontend.loader import definitions, load_module

    family = next(iter(definitions(load_module(path)).values()))
    rec = family(4 if path.stem in ("min_spanning_tree", "optimal_assignment") else 16)
    if path.stem in NO_SCORE | NOT_2D:
        with pytest.raises(NoPatternError, match="2-D tables" if path.stem in NOT_2D
                           else "constant offsets"):
            score_plan(rec)
        return
    if split and cpu.barrier_threads() < 2:
        pytest.skip("one thread here: no barrier to split a slice among threads")
    monkeypatch.setattr(cpu_score, "PARALLEL_CELLS", 0 if split else 1 << 62)
    res = score(rec, "cpu")
    assert "threads: each" in " ".join(res.notes) if split else "one core" in res.notes
    # verify_score raises RecurrenceError where the cell or the line differs
    assert "the sequential reference" in verify_score(res, make_plan(rec).reference)


@pytest.mark.parametrize("code", sorted(DIAGONAL_FLIPS))
def test_gpu_score_of_the_nearest_reads_takes_strips_that_store_no_cell(code, write_rec):
    rec = load(write_rec(neighbour_reads(code, (9, 7), far=False)))
    res = score(rec, "cuda")
    # one strip's last row, and a block's 4 columns past it (the ring's padding)
    assert res.value == make_plan(rec).reference[res.cell] and res.kept == 7 + 4
    assert ("register strips of 256 rows (8x4 cells a lane, int32 arithmetic, proven exact for "
            "values 0..1000002) in one launch, no cell stored: "
            "1 strip's last row kept") in res.notes


def named(body, target):
    """``body``'s recurrence, naming ``target`` (source: a cell, or a function's name) as
    its answer."""
    return body.replace("@recurrence(", f"@recurrence(target={target}, ")


def walk_body(code, shape):
    """A recurrence ``code``'s walk takes: reads in its frame, or along its lines."""
    return neighbour_reads(code, shape, far=True) if code in DIAGONAL_FLIPS else \
        line_reads(code, shape)


@pytest.mark.parametrize("code", sorted(DIAGONAL_FLIPS) + sorted(LINES))
@pytest.mark.parametrize("backend, split", [("cpu", False), ("cpu", True), ("python", False)])
def test_a_score_stops_after_the_answer_the_recurrence_names(code, backend, split, write_rec,
                                                             monkeypatch):
    # each cell of the walk's frame order, first, inside and next to last, against a full fill
    shape = (7, 9)
    reference = make_plan(load(write_rec(walk_body(code, shape)))).reference
    monkeypatch.setattr(cpu_score, "PARALLEL_CELLS", 0 if split else 1 << 62)
    last = score_plan(load(write_rec(walk_body(code, shape)))).last(shape)
    for target in [(6 - last[0], 8 - last[1]), (3, 2), (last[0], 8 - last[1])]:
        res = score(load(write_rec(named(walk_body(code, shape), target))), backend)
        assert (res.cell, res.value, res.answer) == (target, reference[target], True)
        assert f"the walk stopped after the recurrence's answer M{target}, before its last " \
               f"cell M{last}" in res.notes
        # it counts the cells it computed: those of the steps up to the answer's (the
        # python walk goes by lines even for a diagonal pattern)
        if backend == "cpu" or code in LINES:
            steps = BY_CODE[code].step_of(*np.indices(shape), shape)
            assert res.filled == int(np.sum(steps <= steps[target]))
        else:
            plan = score_plan(load(write_rec(walk_body(code, shape))))
            along = plan.position(target, shape)[plan.axis] + 1
            assert res.filled == along * shape[1 - plan.axis]
        # the last line filled is the answer's: the cell and the line match the reference
        assert "the sequential reference" in verify_score(res, reference)


def test_a_score_whose_last_cell_is_the_answer_says_so(write_rec):
    rec = load(write_rec(named(walk_body("SONE", (5, 6)), (0, 5))))
    res = score(rec, "cpu")
    assert (res.cell, res.answer) == ((0, 5), True) and res.to_json()["answer"] is True
    assert not any("the walk stopped" in n for n in res.notes)
    plain = score(load(write_rec(walk_body("SONE", (5, 6)))), "cpu")
    assert (plain.cell, plain.answer) == ((0, 5), False)


def test_a_gpu_score_says_its_value_is_not_the_answer_it_cannot_keep(write_rec):
    rec = load(write_rec(named(walk_body("NOSE", (7, 9)), (3, 2))))
    res = score(rec, "cuda")
    assert (res.cell, res.answer) == ((6, 8), False)
    assert res.value == make_plan(rec).reference[6, 8]
    assert ("the recurrence's answer M(3, 2) is not the walk's last cell M(6, 8), the only one "
            "the GPU score keeps, so the value is not the answer; the cpu backend's score, or "
            "a fill of the whole table, finds it") in res.notes


@pytest.mark.parametrize("backend", ["cpu", "python"])
def test_a_score_of_an_answer_found_in_the_whole_table_is_the_last_cell_said_not_to_be_it(
        backend, write_rec):
    best = """
def best(M):
    return np.unravel_index(np.argmax(M), M.shape)
"""
    rec = load(write_rec(best + named(walk_body("NOSE", (7, 9)), "best")))
    res = score(rec, backend)
    assert (res.cell, res.answer) == ((6, 8), False)
    assert res.notes[-1] == (
        "the answer of 'rec' is the cell best finds in the whole filled table, which a score "
        "does not keep: M(6, 8) is the walk's last cell, not the answer; a fill of the whole "
        "table (not a score) finds it")
