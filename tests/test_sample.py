import signal
import threading

import numpy as np

from depgraph import recurrence
from depgraph.frontend.sample import MOST_READS, sample_offsets


def test_the_offsets_of_cells_spread_over_the_table():
    @recurrence(shape=(5, 9), dtype=np.int64)
    def stencil(M, i, j):
        if i == 0 or j == 0:
            return 1
        return M[i - 1, j] + M[i, j - 1] + M[i - 1, j - 1]

    assert sample_offsets(stencil) == {(-1, 0), (0, -1), (-1, -1)}


def test_cells_that_fail_on_zeros_or_read_nothing_add_nothing():
    @recurrence(shape=(4, 4), dtype=np.float64)
    def divides(M, i, j):
        return 1.0 if i == 0 else 1.0 / M[i - 1, j]  # ZeroDivisionError on zeros

    @recurrence(shape=(4, 4), dtype=np.int64)
    def constant(M, i, j):
        return i + j

    @recurrence(shape=(4, 4), dtype=np.int64)
    def outside(M, i, j):
        return M[i - 1, j + 5]  # out of the table at every cell

    @recurrence(shape=(4, 4), dtype=np.int64)
    def floats(M, i, j):
        return M[i - 1.0, j]  # the trace refuses a float index

    assert sample_offsets(divides) is None
    assert sample_offsets(floats) is None
    assert sample_offsets(constant) is None
    assert sample_offsets(outside) is None


def test_runs_that_do_not_end_on_zeros_are_stopped():
    @recurrence(shape=(3, 3), dtype=np.int64)
    def reads_forever(M, i, j):
        total = 0
        while True:  # reads the cell above until the read cap stops it
            total += M[max(i - 1, 0), j]

    @recurrence(shape=(3, 3), dtype=np.int64)
    def spins(M, i, j):
        v = M[max(i - 1, 0), j]
        while v < 1:  # never ends over zeros: the timer stops it
            v = v * 2
        return v

    assert sample_offsets(reads_forever) is None  # each run stopped: nothing it read counts
    assert sample_offsets(spins, seconds=0.02) is None
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # the timer is left free
    assert MOST_READS >= 1000


def test_no_guess_off_the_main_thread_or_with_the_timer_in_use():
    @recurrence(shape=(3, 3), dtype=np.int64)
    def up(M, i, j):
        return 1 if i == 0 else M[i - 1, j]

    found = []
    worker = threading.Thread(target=lambda: found.append(sample_offsets(up)))
    worker.start()
    worker.join()
    assert found == [None]
    previous = signal.signal(signal.SIGALRM, lambda *a: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        assert sample_offsets(up) is None
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0  # the user's timer untouched
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert sample_offsets(up) == {(-1, 0)}
