"""``runtime.backends.cpu_cell``: the cell function compiled for the CPU, its reads checked
but for what a proof covers."""

import numpy as np

from depgraph import cell_ir, recurrence
from depgraph.analysis.proof import Trusted
from runtime.backends.cpu_cell import ARG, CHECK_SLOTS, OOB, compiled_cell

UP = ("Up", "UpLeft", "UpRight")


def _drift(d):
    @recurrence(shape=(4, 5), dtype=np.int64, args=(d,))
    def drift(M, i, j, d):
        return 1 if i == 0 else M[i - 1, j] + M[i - 1, j + d[i - 1]]

    return drift


def _flags(rec, trusted, i, j):
    """The checked cell of ``rec`` (RUD's regions guarded, ``trusted`` left unchecked) run
    at cell ``(i, j)`` of a table of ones: its value and its two flags."""
    cell = compiled_cell(rec, cell_ir(rec), True, UP, trusted=trusted)
    ck = np.zeros(CHECK_SLOTS, np.int64)
    value = cell(np.ones(rec.shape, np.int64), i, j, *rec.args, ck)
    return int(value), int(ck[OOB]), int(ck[ARG])


def test_what_a_proof_covers_goes_unchecked_and_the_rest_is_checked():
    rec = _drift(np.array([1, 1, 1]))
    # no proof: the read at j + 1 past the last column is flagged
    assert _flags(rec, None, 2, 4)[1:] == (1, 0)
    # a proof of that read's first column only: its last is still checked
    edges = Trusted((), (), edges=((("M[i - 1, j + d[i - 1]]", 3), ((True, True), (True, False))),))
    assert _flags(rec, edges, 2, 4)[1:] == (1, 0)
    # a proof of the whole read (false here, to show what it skips): no check is made, and
    # M[1, 5] is read unchecked (the next row's first cell in memory)
    whole = Trusted(((("M[i - 1, j + d[i - 1]]", 3), ("Up", "UpRight")),), ())
    assert _flags(rec, whole, 2, 4) == (2, 0, 0)
    # an element read past d's end is flagged, unless a proof covers it
    short = _drift(np.array([1]))
    assert _flags(short, None, 2, 0)[2] == 1
    assert _flags(short, Trusted((), (("d[i - 1]", 3),)), 1, 0) == (2, 0, 0)
