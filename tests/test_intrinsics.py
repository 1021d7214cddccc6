"""The LLVM intrinsics: ``assume`` keeps results, ``arrive`` is a barrier, ``load4`` and
``store4`` move four elements as one vector (compiled here for the CPU; the GPU's strips
use them through ``runtime.cuda``, tested in ``test_gpu.py``)."""

import numba
import numpy as np

from runtime.backends import intrinsics
from runtime.backends.cpu import barrier_threads


def test_arrive_is_a_barrier_between_threads():
    arrive = intrinsics.arrive

    @numba.njit(parallel=True)
    def ping(out, bar, threads, rounds):
        # each round, thread t writes its slot, then reads the other slots after the
        # barrier: without a barrier some read would see the previous round's value
        for t in numba.prange(threads):
            for k in range(rounds):
                out[k, t] = k + 1
                arrive(bar, threads * (2 * k + 1))
                ok = 1
                for s in range(threads):
                    if out[k, s] != k + 1:
                        ok = 0
                out[k, threads + t] = ok
                arrive(bar, threads * (2 * k + 2))

    threads = barrier_threads()
    out = np.zeros((200, 2 * threads), dtype=np.int64)
    bar = np.zeros(1, dtype=np.int64)
    ping(out, bar, threads, 200)
    assert out[:, threads:].all()
    assert bar[0] == threads * 400


def test_assume_keeps_the_results():
    assume = intrinsics.assume

    @numba.njit
    def total(a, lo, hi):
        s = 0
        for j in range(lo, hi):
            assume(j >= 0)
            s += a[j]
        return s

    a = np.arange(10)
    assert total(a, 3, 7) == 3 + 4 + 5 + 6


def test_barrier_threads_follows_the_layer():
    assert barrier_threads() == (numba.get_num_threads()
                                 if numba.threading_layer() in ("omp", "workqueue") else 1)


def test_vector_moves_keep_the_elements_and_their_order():
    load4, store4 = intrinsics.load4, intrinsics.store4

    @numba.njit
    def swap(a, i, j):
        x = load4(a, i)
        store4(a, j, x[3], x[2], x[1], x[0])

    rng = np.random.default_rng()
    for dtype in (np.int32, np.float32, np.uint32):
        a = rng.integers(-1000, 1000, 16).astype(dtype)
        b = a.copy()
        swap(b, np.uint64(4), np.uint64(8))
        np.testing.assert_array_equal(b[8:12], a[4:8][::-1])
        np.testing.assert_array_equal(np.delete(b, range(8, 12)), np.delete(a, range(8, 12)))
