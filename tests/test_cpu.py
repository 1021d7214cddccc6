"""``runtime.backends.cpu``: a generated kernel compiled once for arguments of the same
kinds, then called at once; fills whose arrays are compiled as not aliasing each other;
pattern fills that take each chunk's first cell apart."""

import lcs
import numpy as np
import pytest
from sources import same, slow_after, twice_with_one_cache
from stencil import SIGNS

from depgraph import analyze, cell_ir, fill, recurrence
from depgraph.errors import OutOfBoundsError
from patterns import BY_CODE, Sweep
from runtime.backends import cpu


def test_a_kernel_is_compiled_once_for_arguments_of_the_same_kinds(monkeypatch):
    rec = recurrence(shape=(2, 2), dtype=np.int64)(lambda M, i, j: 0)
    make = cpu.kernel(rec, "def add(A, x):\n    A[0] += x\n", "add", None)
    compiled = []
    real = cpu._compile
    monkeypatch.setattr(cpu, "_compile", lambda m, args: compiled.append(args) or real(m, args))
    A, B = np.zeros(3, np.int64), np.zeros(3, np.float64)
    for _ in range(3):
        cpu.call(make, A, 2)
    cpu.call(make, B, 2)  # another dtype: compiled for it
    cpu.call(make, A[::2], 2)  # another layout: likewise
    assert len(compiled) == 3 and A[0] == 8 and B[0] == 2


@pytest.mark.parametrize("schedule", ["sequential", "pattern", "tiled"])
def test_arguments_sharing_memory_are_read_as_they_are(schedule):
    # a pure cell's fill compiles its arrays as not aliasing: arguments it only reads may
    # share memory all the same
    X = np.random.default_rng(5).integers(0, 3, 37).astype(np.int64)
    rec = lcs.make_lcs(X, X)  # the LCS of X with itself, X given twice
    assert rec.args[0] is rec.args[1] and cell_ir(rec).pure
    reference = fill(rec, backend="python").table
    np.testing.assert_array_equal(fill(rec, backend="cpu", schedule=schedule).table, reference)
    assert reference[-1, -1] == 37


def test_a_cell_that_writes_an_array_is_compiled_as_it_is(monkeypatch):
    scratch = np.zeros(1, dtype=np.int64)

    @recurrence(shape=(4, 5), dtype=np.int64, args=(scratch,))
    def counting(M, i, j, S):
        S[0] += 1
        return S[0] + (M[i - 1, j] if i > 0 else 0)

    asked = []
    real = cpu.kernel
    monkeypatch.setattr(cpu, "kernel", lambda *a, **k: asked.append(a[5]) or real(*a, **k))
    M = np.zeros(counting.shape, dtype=np.int64)
    cpu.sweep_fill(counting, cell_ir(counting), M, Sweep(0, 1, 1), False)
    assert asked == [False] and M[3].tolist() == [16 + 11 + 6 + 1, 17 + 12 + 7 + 2,
                                                   18 + 13 + 8 + 3, 19 + 14 + 9 + 4,
                                                   20 + 15 + 10 + 5]


_SECOND_PROCESS = """
import numpy as np
import depgraph
from numba.core.registry import cpu_target
from runtime.backends.cache import CACHE

refreshed = []
context = cpu_target.target_context
refresh = context.refresh
context.refresh = lambda: refreshed.append(1) or refresh()

@depgraph.recurrence(shape=(40, 50), dtype=np.int64)
def allocating(M, i, j):
    row = np.zeros(2, dtype=np.int64)  # an array made in the cell: reference counting
    row[0] = M[i - 1, j] if i > 0 else j
    return row[0] + 1

values = [depgraph.fill(depgraph.load("examples/lcs.py", size=300), backend="cpu",
                        schedule=s, threads=2).value for s in ("sequential", "tiled")]
pure = len(refreshed)
values.append(depgraph.fill(allocating, backend="cpu", schedule="sequential").value)
kernels = [k for ks in CACHE._store.values() for k in ks.values() if hasattr(k, "stats")]
print(sum(sum(k.stats.cache_hits.values()) for k in kernels),
      sum(sum(k.stats.cache_misses.values()) for k in kernels), pure, len(refreshed), *values)
"""


def test_a_second_process_loads_its_kernels_without_numbas_refresh(tmp_path):
    # the first process compiles and keeps its kernels; the second loads each from the
    # cache root and compiles none; a kernel without reference counting loads without
    # numba's refresh of the CPU target, one with it (a cell making an array) refreshes
    first, second = twice_with_one_cache(_SECOND_PROCESS, tmp_path)
    assert first[1] >= 3 and second[0] >= 3 and second[1] == 0  # compiled, then loaded
    assert second[2] == 0 < second[3]  # LCS's kernels loaded alone, the allocating one not
    assert first[4:] == second[4:] == [first[4], first[4], 40 + 49]


def test_a_checked_sweep_ends_at_the_first_cell_with_a_bad_read():
    @recurrence(shape=(2, 6), dtype=np.int64)
    def far(M, i, j):  # every cell past the first column reads past the last row
        return i if j == 0 else M[2, j - 1] + M[i, j - 1]

    ck, _ = cpu.sweep_fill(far, cell_ir(far), np.zeros(far.shape, np.int64), Sweep(0, 1, 1), True)
    assert ck[cpu.OOB] == 1 and ck[cpu.OOB + 1 : cpu.OOB + 5].tolist() == [0, 1, 2, 0]
    with pytest.raises(OutOfBoundsError, match=r"cell \(0, 1\) reads \(2, 0\)"):
        fill(far, backend="cpu")


def _edged(code: str, shape: tuple[int, int], seed: int):
    """A cell without loops reading one step into each region pattern ``code`` allows,
    its branch testing both indices against the table's edges (so a row or column
    pattern's fill takes each chunk's first cell apart)."""
    (a0, b0), (a1, b1), (a2, b2) = (SIGNS[r] for r in sorted(BY_CODE[code].allowed))
    W = np.random.default_rng(seed).integers(1, 9, shape)

    @recurrence(shape=shape, dtype=np.int64, args=(W,))
    def edged(M, i, j, W):
        n, m = M.shape
        if (i == 0 or j == 0 or i == n - 1 or j == m - 1) and (
                min(i + a0, i + a1, i + a2) < 0 or max(i + a0, i + a1, i + a2) >= n
                or min(j + b0, j + b1, j + b2) < 0 or max(j + b0, j + b1, j + b2) >= m):
            return W[i, j]
        return (3 * M[i + a0, j + b0] + M[i + a1, j + b1] + min(M[i + a2, j + b2], W[i, j])
                ) % 1000003

    return edged


@pytest.mark.parametrize("code", slow_after(2, ["RUD", "CLR", "RDU", "CRL"]))
def test_a_pattern_fill_with_each_chunks_first_cell_apart_fills_as_the_reference(code):
    p = BY_CODE[code]
    for shape in ((1, 9), (9, 1), (2, 1), (7, 11), (12, 5)):
        rec = _edged(code, shape, sum(shape))
        ir = cell_ir(rec)
        assert cpu.peels(ir, code)
        reference = analyze(rec).table
        # one thread; two, one of them with no cell of a one-cell step
        for threads in (1, 2):
            for checked in (False, True):
                M = np.zeros(shape, np.int64, order="F" if p.storage == "columns" else "C")
                with cpu.thread_count(threads):
                    ck, _ = cpu.pattern_fill(rec, ir, M, p.index, checked=checked)
                same(M, reference)
                assert not ck[cpu.OOB]


def test_a_diagonal_pattern_or_a_cell_with_loops_keeps_every_chunk_in_one_loop():
    assert not cpu.peels(cell_ir(_edged("NOSE", (3, 3), 0)), "NOSE")

    @recurrence(shape=(4, 4), dtype=np.int64)
    def loop(M, i, j):
        if i == 0 or j == 0:
            return 1
        total = 0
        for k in range(j):
            total += M[i - 1, k]
        return total

    assert not cpu.peels(cell_ir(loop), "RUD")
    assert "range(a + 1, b)" not in cpu._pattern_source("RUD", 0, True)
