"""The CPU kernels' LLVM intrinsics: ``assume`` keeps results, ``arrive`` is a barrier."""

import numba
import numpy as np

from runtime import intrinsics
from runtime.cpu import barrier_threads


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
