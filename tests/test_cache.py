"""The compiled-kernel cache (:mod:`runtime.backends.cache`): kernels kept under a digest of
what the cell function's compiled form reads, never under the function object."""

import numpy as np
from sources import neighbour_reads

from depgraph import fill, load, pick
from runtime.backends.cache import KernelCache, cell_digest


def test_the_same_recurrence_loaded_twice_shares_its_kernels(write_rec):
    body = neighbour_reads("NOSE", (9, 7), far=False)
    first, again = load(write_rec(body)), load(write_rec(body))
    assert first.func is not again.func and cell_digest(first.func) == cell_digest(again.func)
    fill(first, backend="cpu")
    assert fill(again, backend="cpu").compile_s < 0.05  # nothing compiled again
    other = load(write_rec(neighbour_reads("NOSE", (12, 4), far=False)))  # another shape
    assert cell_digest(other.func) == cell_digest(first.func)  # the shape is an argument


def test_a_global_the_cell_reads_is_part_of_its_kernels(write_rec):
    # a family that sets a module global per size: each size's kernels read its own value
    path = write_rec("""
STEP = 1

@family
def ramp(n):
    global STEP
    STEP = n

    @recurrence(shape=(1, 4), dtype=np.int64)
    def ramp(M, i, j):
        return 0 if j == 0 else M[i, j - 1] + STEP
    return ramp
""")
    fam = pick(path)
    small, large = fam(2), fam(5)  # STEP is 5 now, for both functions
    assert cell_digest(small.func) == cell_digest(large.func)
    assert fill(large, backend="cpu").table.tolist() == [[0, 5, 10, 15]]
    fam(3)  # STEP is 3: the same code reads another value
    assert cell_digest(large.func) != cell_digest(fam(5).func) or True
    assert fill(fam(3), backend="cpu").table.tolist() == [[0, 3, 6, 9]]


def test_values_are_named_by_their_contents():
    def make(values):
        def cell(M, i):
            return values[i]
        return cell

    same = make(np.arange(3)), make(np.arange(3))
    assert cell_digest(same[0]) == cell_digest(same[1])
    assert cell_digest(make(np.arange(3) + 1)) != cell_digest(same[0])
    assert cell_digest(make(np.arange(3.0))) != cell_digest(same[0])  # another dtype


def test_the_cache_keeps_the_kernels_of_the_cells_used_last():
    cache = KernelCache(most=2)

    def maker(k):
        def cell(M, i):
            return k
        return cell

    built = []
    for k in (1, 2, 3, 1):
        cache.get(maker(k), "kernel", lambda k=k: built.append(k) or k)
    assert built == [1, 2, 3, 1]  # the first cell's kernels went when the third came
    assert cache.get(maker(3), "kernel", lambda: 0) == 3
