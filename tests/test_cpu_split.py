"""runtime.backends.cpu_split: a checked row or column fill's steps split where a read at
the step's index plus a step's amount lies in the table."""

import numpy as np
import pytest
from sources import same, slow_after

from depgraph import analyze, cell_ir, fill, load, recurrence
from depgraph.analysis.proof import Trusted
from depgraph.errors import OutOfBoundsError
from patterns import BY_CODE
from runtime.backends import cpu
from runtime.backends.cpu_split import split
from runtime.schedule.plan import in_fill_plan

# Cells of each row and column pattern reading the step before at an amount from their
# data along the step (``d``, an amount a step, where ``d`` has one) and at their own place
# along it; their weight instead on the table's edge, on a step with no amount, and, with
# ``guarded``, where the shifted read would leave the table.


def rud(M, i, j, d, W, guarded):
    if i == 0 or i - 1 >= d.shape[0]:
        return W[i, j]
    if guarded and not (0 <= j + d[i - 1] < M.shape[1]):
        return W[i, j]
    return (3 * M[i - 1, j + d[i - 1]] + M[i - 1, j] + W[i, j]) % 1000003


def rdu(M, i, j, d, W, guarded):
    if i == M.shape[0] - 1 or i >= d.shape[0]:
        return W[i, j]
    if guarded and not (0 <= j - d[i] < M.shape[1]):
        return W[i, j]
    return (3 * M[i + 1, j - d[i]] + M[i + 1, j] + W[i, j]) % 1000003


def clr(M, i, j, d, W, guarded):
    if j == 0 or j - 1 >= d.shape[0]:
        return W[i, j]
    if guarded and not (0 <= i + d[j - 1] < M.shape[0]):
        return W[i, j]
    return (3 * M[i + d[j - 1], j - 1] + M[i, j - 1] + W[i, j]) % 1000003


def crl(M, i, j, d, W, guarded):
    if j == M.shape[1] - 1 or j >= d.shape[0]:
        return W[i, j]
    if guarded and not (0 <= i - d[j] < M.shape[0]):
        return W[i, j]
    return (3 * M[i - d[j], j + 1] + M[i, j + 1] + W[i, j]) % 1000003


#: Each pattern's cell, and its shifted and plain reads' text.
SHIFTS = {"RUD": (rud, "M[i - 1, j + d[i - 1]]", "M[i - 1, j]"),
          "RDU": (rdu, "M[i + 1, j - d[i]]", "M[i + 1, j]"),
          "CLR": (clr, "M[i + d[j - 1], j - 1]", "M[i, j - 1]"),
          "CRL": (crl, "M[i - d[j], j + 1]", "M[i, j + 1]")}


def _shifted(code: str, shape: tuple[int, int], seed: int, guarded: bool = True,
             amounts: int | None = None, low: int = -3, high: int = 3):
    """Pattern ``code``'s cell at ``shape``, its amounts ``low`` to ``high`` (``amounts``
    of them; by default one a step) and weights drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    steps = shape[0] if code in ("RUD", "RDU") else shape[1]
    d = rng.integers(low, high + 1, steps if amounts is None else amounts)
    W = rng.integers(1, 9, shape)
    return recurrence(shape=shape, dtype=np.int64, args=(d, W, guarded))(SHIFTS[code][0])


@pytest.mark.parametrize("code", list(SHIFTS))
def test_a_read_at_the_steps_index_plus_a_steps_amount_is_split(code):
    rec = _shifted(code, (6, 7), 0)
    ir = cell_ir(rec)
    _, shifted, plain = SHIFTS[code]
    found = split(ir, code, None, rec.args)
    assert found is not None and {text for text, _ in found.reads} == {shifted, plain}
    # a read a proof covers is left to the cell that trusts it already
    line = dict(found.reads)[plain]
    proof = Trusted((((plain, line), tuple(sorted(BY_CODE[code].allowed))),), ())
    assert [text for text, _ in split(ir, code, proof, rec.args).reads] == [shifted]


def test_no_split_where_no_read_is_at_the_step_index_plus_a_steps_amount(write_rec):
    def made(body: str):
        rec = load(write_rec(f"""
@recurrence(shape=(5, 5), dtype=np.int64, args=(np.ones(5, np.int64),))
def cell(M, i, j, d):
    if i == 0:
        return 1
    {body}
"""))
        return split(cell_ir(rec), "RUD", None, rec.args)

    assert made("return M[i - 1, j]") is not None
    assert made("return M[i - 1, j + d[j]] if j + d[j] < 5 else 0") is None  # along the step
    assert made("return M[i - d[j], j]") is None  # across, changing along the step
    assert made("return M[i - 1, 2 * j]") is None
    assert made("j = j - 1\n    return M[i - 1, j]") is None  # an index reassigned
    rec = _shifted("RUD", (4, 4), 0)
    assert split(cell_ir(rec), "NOSE", None, rec.args) is None


@pytest.mark.parametrize("code", slow_after(1, list(SHIFTS)))
def test_a_split_fill_fills_as_the_reference(code):
    p = BY_CODE[code]
    for shape in ((1, 9), (9, 1), (2, 3), (7, 11), (12, 5)):
        # an amount for every step, and for the first few only (the span must not read
        # an amount the array does not have)
        for amounts in (None, 2):
            rec = _shifted(code, shape, sum(shape), amounts=amounts)
            ir = cell_ir(rec)
            reference = analyze(rec).table
            for threads in (1, 2):
                M = np.zeros(shape, np.int64, order="F" if p.storage == "columns" else "C")
                with cpu.thread_count(threads):
                    ck, _ = cpu.pattern_fill(rec, ir, M, p.index, checked=True)
                same(M, reference)
                assert not ck[cpu.OOB] and not ck[cpu.ARG]


@pytest.mark.parametrize("code, low, high", slow_after(2, [
    ("RUD", 1, 3), ("CRL", -3, -1), ("RDU", 1, 3), ("RDU", -3, -1), ("RUD", -3, -1),
    ("CLR", 1, 3), ("CLR", -3, -1), ("CRL", 1, 3)]))
def test_a_read_past_either_end_of_the_span_is_caught(code, low, high):
    # every step's amount on one side: its reads pass one edge of the table only
    p = BY_CODE[code]
    rec = _shifted(code, (9, 10), 3, guarded=False, low=low, high=high)
    for threads in (1, 2):
        M = np.zeros(rec.shape, np.int64, order="F" if p.storage == "columns" else "C")
        with cpu.thread_count(threads):
            ck, _ = cpu.pattern_fill(rec, cell_ir(rec), M, p.index, checked=True)
        assert ck[cpu.OOB]
    with pytest.raises(OutOfBoundsError, match=r"cell \(\d, \d\) reads \(-?\d+, -?\d+\), "
                       r"outside shape \(9, 10\)"):
        fill(rec, backend="cpu", schedule="pattern")


def scheduled(M, k, a, p, P):
    n = p.shape[0]
    if k == n:
        return max(a, P[n] - a)
    t = p[k]  # past p's end in the last row, which returns before it
    if a > P[k]:
        return 0
    return min(M[k + 1, a + t], M[k + 1, a])


def test_a_local_assigned_once_is_read_as_its_value():
    # the catalog's process scheduling with its time in a local: the step's span reads
    # p[k] only where k is inside p
    from process_scheduling import reference

    times = np.random.default_rng(4).integers(1, 7, 9)
    prefix = np.concatenate(([0], np.cumsum(times)))
    rec = recurrence(shape=(10, int(prefix[-1]) + 1), dtype=np.int64,
                     args=(times, prefix))(scheduled)
    ir = cell_ir(rec)
    plan = in_fill_plan(rec, ir)
    assert plan.pattern == "RDU" and plan.method == "checked fill"
    found = split(ir, "RDU", plan.trusted, rec.args)
    assert found is not None and [text for text, _ in found.reads] == ["M[k + 1, a + t]"]
    assert "_dg_v0 = p[k]" in found.source
    for threads in (1, 2):
        M = np.zeros(rec.shape, np.int64)
        with cpu.thread_count(threads):
            ck, _ = cpu.pattern_fill(rec, ir, M, BY_CODE["RDU"].index, checked=True,
                                     trusted=plan.trusted)
        same(M, reference(times))
        assert not ck[cpu.OOB] and not ck[cpu.ARG]
