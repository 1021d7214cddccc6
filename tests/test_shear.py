"""Sheared fills (:mod:`runtime.backends.shear`): a 2-D recurrence only a hyperplane fits,
filled as NOSE on its sheared table, against the sequential reference, on random reads
at constant offsets, tables of odd shapes, and the CPU and the CUDA simulator."""

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from sources import UNPROVEN_SKEW, same

from depgraph import analyze, cell_ir, fill, load, recurrence
from depgraph.errors import OutOfBoundsError, TooLargeError
from depgraph.analysis.certify import Certificate, certificate
from patterns import select
from patterns.hyperplane import find, shear
from runtime.backends.cache import cell_digest
from runtime.backends.shear import sheared_recurrence, unshear

ROOT = Path(__file__).resolve().parent.parent

TEMPLATE = """
W = np.arange({n} * {m}, dtype={dtype}).reshape({n}, {m}) % 11
@recurrence(shape=({n}, {m}), dtype={dtype}, args=(W,))
def rnd(M, i, j, W):
    s = W[i, j] + i
{reads}
    return s {tail}
"""
READ = """    if 0 <= i + {a} < M.shape[0] and 0 <= j + {b} < M.shape[1]:
        s = s + M[i + {a}, j + {b}] * {k}"""


def _source(reads, n, m, dtype="np.int64"):
    body = "\n".join(READ.format(a=a, b=b, k=k + 2) for k, (a, b) in enumerate(reads))
    tail = "% 1000003" if "int" in dtype else "* 0.25"
    return TEMPLATE.format(n=n, m=m, dtype=dtype, reads=body.replace("+ -", "- "), tail=tail)


def _offset_sets(count):
    """Random sets of 2-3 read offsets no pattern allows but a shear fits."""
    rng = np.random.default_rng(11)
    regions = {(-1, -1): "UpLeft", (-1, 0): "Up", (-1, 1): "UpRight", (0, -1): "Left",
               (0, 1): "Right", (1, -1): "DownLeft", (1, 0): "Down", (1, 1): "DownRight"}
    out = []
    while len(out) < count:
        reads = list({tuple(int(x) for x in rng.integers(-2, 3, size=2)) for _ in range(3)})
        if (0, 0) in reads:
            continue
        names = {regions[(int(np.sign(a)), int(np.sign(b)))] for a, b in reads}
        if select(names, (6, 6)) is None and shear(reads, (6, 6)) is not None:
            out.append(reads)
    return out


@pytest.mark.parametrize("reads", [r if k < 2 else pytest.param(r, marks=pytest.mark.slow)
                                   for k, r in enumerate(_offset_sets(5))])
@pytest.mark.parametrize("shape", [(1, 6), (6, 1), (5, 9),
                                   pytest.param((9, 4), marks=pytest.mark.slow)])
def test_a_sheared_fill_equals_the_reference(write_rec, reads, shape):
    rec = load(write_rec(_source(reads, *shape)))
    ir = cell_ir(rec)
    sh = shear(reads, rec.shape)
    if sh is None or find(reads, rec.shape) is None:
        pytest.skip("no shear at this shape")
    assert isinstance(certificate(rec, ir), Certificate)
    reference = analyze(rec).table
    sheared = sheared_recurrence(rec, ir, sh)
    same(unshear(analyze(sheared).table, sh, rec.shape), reference)
    r = fill(rec, backend="cpu", schedule="hyperplane", verify=True)
    assert r.schedule == "hyperplane"
    same(r.table, reference)


@pytest.mark.parametrize("reads", [[(-1, 1), (0, -1)],
                                   [(-1, -1), (0, 1)]])  # U has a negative entry: a shift
def test_the_sheared_fill_on_the_simulator_and_in_floats(write_rec, reads):
    rec = load(write_rec(_source(reads, 7, 9, "np.float64")))
    reference = analyze(rec).table
    for backend in ("cuda", "cpu"):
        r = fill(rec, backend=backend, schedule="hyperplane", verify=True)
        assert any("sheared" in n for n in r.notes), r.notes
        same(r.table, reference)


def test_every_size_of_a_shear_shares_its_sheared_source_and_kernels():
    # the original sides are arguments of the sheared cell, not literals in it, so the
    # kernels (kept under the digest of what the cell function is) serve every size
    import skew

    made = []
    for n in (4, 7):
        rec = skew.skew(n)
        ir = cell_ir(rec)
        sheared = sheared_recurrence(rec, ir, shear(ir.read_offsets(), rec.shape))
        assert sheared.args[:2] == rec.shape and sheared.args[2] is rec.args[0]
        made.append((cell_ir(sheared).source, cell_digest(sheared.func)))
    assert made[0] == made[1]
    assert "_dg_n1" in made[0][0] and "M.shape" not in made[0][0]


@pytest.mark.parametrize("shape", [(1, 6), (6, 1), (4, 5), (7, 8), (8, 3)])
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_the_skew_example_sheared_equals_its_reference(shape, backend):
    import skew

    rewards = np.random.default_rng(sum(shape)).integers(-9, 10, shape).astype(np.int32)
    r = fill(skew.make_skew(rewards), backend=backend, schedule="hyperplane", verify=True)
    same(r.table, skew.reference(rewards))
    assert r.verified == "equals the sequential reference exactly"
    assert any(n.startswith("kernel: sheared") for n in r.notes), r.notes


def test_a_fill_whose_reads_are_not_proven_takes_the_checked_steps(write_rec):
    # the guard's bound is data: no certificate, so no shear (its extra cells would hide
    # a read out of the table), the checked hyperplane steps instead
    rec = load(write_rec(UNPROVEN_SKEW.format(n=6, m=8)))
    r = fill(rec, backend="cpu", schedule="hyperplane", verify=True)
    assert not any("sheared" in n for n in r.notes)
    assert any("the fill checks each read" in n for n in r.notes)


def test_each_constant_offset_read_keeps_its_offset_in_the_frame():
    for reads in itertools.islice(_offset_sets(20), 20):
        sh = shear(reads, (6, 6))
        for d in reads:
            dp, dq = sh.offset(d)
            assert dp <= 0 and dq <= 0


def test_a_k_dimensional_table_on_the_gpu_is_filled_by_its_slabs():
    @recurrence(shape=(4, 5, 6), dtype=np.int64)
    def ok(M, i, j, k):
        if i == 0 or j == 0 or k == 5:
            return 1 + k
        return (M[i - 1, j, k + 1] + M[i, j - 1, k] * 2) % 1009

    @recurrence(shape=(4, 5, 6), dtype=np.int64)
    def leak(M, i, j, k):
        if i == 0 or j == 0:
            return 1
        return M[i - 1, j, k + 1] + M[i, j - 1, k]  # k + 1 leaves the table at k = 5

    @recurrence(shape=(4, 5, 3), dtype=np.int64)
    def back(M, i, j, k):  # pi = (-1, 1, 0): the slabs shifted by the table's first side
        if i == M.shape[0] - 1 or j == 0:
            return 1 + k
        return (M[i + 1, j, k] + 2 * M[i, j - 1, k] + k) % 1009

    for rec, pi in ((ok, (1, 1, 0)), (back, (-1, 1, 0))):
        r = fill(rec, backend="cuda", verify=True)
        assert (r.schedule, r.pi) == ("hyperplane", pi) and r.verified
        assert any("filled by its slabs" in n for n in r.notes), r.notes
    # the read past the table lands on a cell of the sheared table no cell of the table
    # is: the slab fill's own check catches it, and the sweep names it
    with pytest.raises(OutOfBoundsError, match=r"cell \(1, 1, 5\) reads \(0, 1, 6\)"):
        fill(leak, backend="cuda")


def test_a_sheared_gpu_fill_larger_than_the_free_device_memory_says_so(monkeypatch, capsys):
    # skew at n = 8: the table and its args (288 B each) fit in 800 B, the sheared table
    # (8 x 16, 512 B) and the table gathered from it with them do not; refused before
    # any work, and the fill that takes no shear still runs in the same memory
    import skew

    from depgraph.cli import main
    from runtime import run
    from runtime.backends.cuda import device
    from runtime.schedule.plan import in_fill_plan

    monkeypatch.setattr(device, "free_memory", lambda: 800.0)
    rec = skew.skew(8)

    def started(*args):
        raise AssertionError("the sheared fill started")

    monkeypatch.setattr(run, "sheared_recurrence", started)
    with pytest.raises(TooLargeError, match=re.escape(
            "the GPU fill needs 1.1 kB on the device (the sheared (8, 16) int32 table 0.5 kB, "
            "the (8, 9) int32 table gathered from it 0.3 kB, args and schedule 0.3 kB), more "
            "than the 0.8 kB free; fill on the CPU (backend='cpu')")):
        fill(rec, backend="cuda", schedule="hyperplane")
    plain = fill(rec, backend="cuda", schedule="hyperplane", plan=in_fill_plan(rec, cell_ir(rec)),
                 verify=True)
    assert plain.verified and not any("sheared" in n for n in plain.notes)
    assert main(["run", str(ROOT / "examples" / "skew.py"), "--size", "8", "--backend",
                 "cuda"]) == 1
    err = capsys.readouterr().err
    assert "the sheared (8, 16) int32 table 0.5 kB" in err and "Traceback" not in err
