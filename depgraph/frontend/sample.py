"""A guess at where a cell function's reads go: the reads a few cells make, each run alone.

Where neither the source's constant offsets nor a certificate leave one pattern, a fill
that checks every read where it runs may still take the pattern a guess allows: a read
the guess did not foresee fails the fill's own check, and the planner goes back to the
checked sweep, which trusts no guess.  So a guess must be cheap, not right: it needs no
table.  Each sampled cell runs in plain Python with every read of ``M`` returning zero
(the table's own zero); a cell whose run fails on those zeros (a read outside the table,
its own error, too many reads, too long) adds nothing.

Assumptions: the reads a cell makes over zeros are like those it makes over the filled
table (only a guess: the fill checks).  The runs are stopped by a real-time timer
(``SIGALRM``), so a guess is made only in a process's main thread while its timer is
free; elsewhere there is none.
"""

from __future__ import annotations

import math
import signal
import threading
from itertools import product
from typing import Any

import numpy as np

from depgraph.errors import DepgraphError
from depgraph.frontend.trace import flat_index
from depgraph.model import Recurrence

__all__ = ["sample_offsets"]

#: Reads one sampled cell may make before its run is stopped.
MOST_READS = 10_000


class _Stop(BaseException):
    """Ends a sampled cell's run (not an ``Exception``: a cell's ``except`` cannot keep it)."""


def _cells(shape: tuple[int, ...], count: int) -> list[tuple[int, ...]]:
    """About ``count`` cells spread evenly over a table of ``shape``, its corners included.

    Examples
    --------
    >>> _cells((3, 100), 9)
    [(0, 0), (0, 49), (0, 99), (1, 0), (1, 49), (1, 99), (2, 0), (2, 49), (2, 99)]
    """
    per_axis = max(2, round(count ** (1 / len(shape))))
    axes = [sorted({int(v) for v in np.linspace(0, n - 1, min(n, per_axis))}) for n in shape]
    return list(product(*axes))


class _Zeros:
    """``M`` for a sampled cell: each read is recorded and returns the table's zero."""

    def __init__(self, rec: Recurrence) -> None:
        self.shape, self.ndim, self.size = rec.shape, len(rec.shape), math.prod(rec.shape)
        self.zero = rec.dtype.type(0).item()
        self.reads: list[tuple[int, ...]] = []
        self.cell: tuple[int, ...] = ()  # the cell being run

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> Any:
        try:  # an index the trace refuses, or outside the table
            flat_index(key, self.shape, self.cell)
        except DepgraphError:
            raise _Stop from None
        if len(self.reads) >= MOST_READS:
            raise _Stop
        self.reads.append(tuple(int(k) for k in (key if isinstance(key, tuple) else (key,))))
        return self.zero


def _alarm(signum: int, frame: Any) -> None:
    raise _Stop


def sample_offsets(rec: Recurrence, count: int = 64, seconds: float = 0.05
                   ) -> frozenset[tuple[int, ...]] | None:
    """The offsets from its cell of every read that about ``count`` cells of ``rec``
    spread over its table make, each run over a table of zeros (module docstring), in at
    most about ``seconds``; ``None`` where no guess can be made (not the main thread, the
    timer in use) or no sampled cell read anything.

    Examples
    --------
    >>> from depgraph import recurrence
    >>> @recurrence(shape=(4, 16), dtype=np.int64)
    ... def grow(M, r, S):  # reads a superset of S's bits: columns to the right
    ...     return 0 if S == 15 else min(M[r, S | 1 << b] for b in range(4) if not S >> b & 1)
    >>> sorted({(di, dj > 0) for di, dj in sample_offsets(grow)})
    [(0, True)]
    """
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "setitimer") or signal.getitimer(signal.ITIMER_REAL)[0]:
        return None
    zeros, offsets = _Zeros(rec), set()
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            for cell in _cells(rec.shape, count):
                zeros.reads.clear()
                zeros.cell = cell
                try:
                    rec.func(zeros, *cell, *rec.args)
                except Exception:  # the cell's own error on zeros: it tells nothing
                    continue
                except _Stop:
                    if signal.getitimer(signal.ITIMER_REAL)[0] == 0:
                        break  # out of time
                    continue
                offsets.update(tuple(y - x for y, x in zip(read, cell)) for read in zeros.reads)
        except _Stop:  # the timer rang between two cells
            pass
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return frozenset(offsets) or None
