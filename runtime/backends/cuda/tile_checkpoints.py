"""A 2-D table kept on the GPU as the edges of its tiles, for recovering a solution of a
table far too large to hold (``depgraph run --score --solution --backend cuda``; the
scheme, the kernel and the walk's view: :mod:`runtime.backends.tile_edges`).

The forward pass launches one kernel an anti-diagonal of tiles, a block of ``T`` threads
a tile (a thread a row of it, a block barrier between its anti-diagonals), each block
into a buffer of its own in device memory; the edges stay on the device.  Where the
register strips serve the recurrence and a proof covers every read (:func:`strip_pass`),
the pass is instead one launch of the score's strips of ``T`` rows, which store the
edges as they go (:func:`runtime.backends.cuda.strip_source.strip_source`'s ``edges``).
The walk's refill of a tile is the tile kernel on the blocks of its cone (the tiles the
path may cross next, :func:`runtime.backends.tile_edges.cone`), each kept by rows on the
device, and only the tiles the walk asks for come back to the host, one at a time.

Assumptions: those of :mod:`runtime.backends.tile_edges`; ``T <= 1024`` (a thread a
row).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from depgraph.analysis.certify import Certificate, arguments_proven, certificate
from depgraph.frontend.ir import CellIR
from depgraph.frontend.narrow import Narrowing
from depgraph.model import Recurrence
from patterns import BY_CODE
from runtime.backends.cuda.cells import rewritten_cell
from runtime.backends.cuda.device import (
    check_fits,
    compile_kernel,
    cuda_module,
    host_copy,
    launcher,
    multiprocessors,
    simulated,
)
from runtime.backends.cuda.score import zero_strided
from runtime.backends.cuda.strip_layout import score_block
from runtime.backends.cuda.strips import serves_strips, strip_grid, strip_kernel, strip_narrowing
from runtime.backends.rewrite import CHECK
from runtime.backends.tile_edges import TileCells, cone, tile_read, tile_source
from runtime.backends.walk import ARG, arg_reads, checked_read_source, checks, raise_found

__all__ = ["DeviceTiles", "cone_depth", "strip_pass"]

#: The most device memory a refill's cone holds (its tiles' buffers, both layouts).
CONE_BYTES = 256 << 20


def cone_depth(blocks: int, tile_bytes: int) -> int:
    """The depth of a refill's cone (:func:`runtime.backends.tile_edges.cone`): the
    deepest whose tiles number at most ``blocks`` (a block each: the device's
    multiprocessors, so they run side by side) and hold at most :data:`CONE_BYTES` at
    ``tile_bytes`` each; at least 1.

    Examples
    --------
    >>> cone_depth(132, 800_000), cone_depth(1, 800_000), cone_depth(132, 25_000_000)
    (14, 1, 3)
    """
    depth = 1
    while (depth + 2) * (depth + 3) // 2 <= min(blocks, CONE_BYTES // tile_bytes):
        depth += 1
    return depth


def strip_pass(rec: Recurrence, ir: CellIR, T: int, R: int, C: int,
               bounds: tuple[int, int] | None) -> tuple[int, int, Narrowing | None] | None:
    """The register strips' block (rows and columns a lane) and narrowing for a forward
    pass keeping the edges of ``T x T`` tiles, halo ``R`` rows and ``C`` columns; ``None``
    where the strips cannot take the tile kernel's place: they check no read and no value,
    so only for reads of the three nearest NOSE neighbours that a certificate proves in
    bounds, argument reads proven too, and values proven to fit (``bounds`` is ``None``);
    a strip is ``T`` rows (``T`` a multiple of 32)."""
    if bounds is not None or (R, C) != (1, 1) or T % 32 or not serves_strips(rec, ir, "NOSE") \
            or not arguments_proven(rec, ir) \
            or not isinstance(certificate(rec, ir), Certificate):
        return None
    nw = strip_narrowing(rec, ir, True)
    rows, cols = score_block(rec.dtype, rec.shape[0], nw is not None)
    return T // 32, cols if rows == T // 32 and T % (32 * cols) == 0 else 1, nw


#: The NOSE pattern's index, the frame of the strips' pass.
NOSE = BY_CODE["NOSE"].index


class DeviceTiles(TileCells):
    """The table as the edges of its tiles on the GPU (module docstring):
    :meth:`forward` fills it, then it serves a solution walk a tile at a time.

    Examples
    --------
    >>> from depgraph import cell_ir, recurrence
    >>> @recurrence(shape=(9, 7), dtype=np.int64)
    ... def paths(M, i, j):
    ...     return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
    >>> t = DeviceTiles(paths, cell_ir(paths), 4, 1, 1, None)  # the simulator, in the suite
    >>> _ = t.forward(None)
    >>> t.focus((8, 6)); int(t[8, 6]), int(t[7, 6]), t.refills
    (3003, 1716, 1)
    """

    def __init__(self, rec: Recurrence, ir: CellIR, T: int, R: int, C: int,
                 bounds: tuple[int, int] | None):
        widest = min(-(-rec.shape[0] // T), -(-rec.shape[1] // T))  # tiles of an anti-diagonal
        size = rec.dtype.itemsize
        #: how many anti-diagonals of tiles a refill's cone reaches past the tile asked for
        self.depth = cone_depth(multiprocessors(),
                                ((2 * T - 1 + R + C) * (T + R) + (T + R) * (T + C)) * size)
        held = len(cone(self.depth))
        super().__init__(rec, T, R, C, max(widest, held), True)
        self.held_shape = (held, T + R, T + C)
        self.block_bytes += math.prod(self.held_shape) * size
        #: the tiles the last cone refilled, and the buffer each is kept in
        self._cone: dict[tuple[int, int], int] = {}
        self.cones = 0
        #: seconds the forward pass's ``meanwhile`` took past the pass's end
        self.unhidden_s = 0.0
        #: the register strips' block and narrowing, where they make the forward pass
        self.strips = strip_pass(rec, ir, T, R, C, bounds)
        self.ir = ir
        check_fits(rec, [("the tiles' last rows", self.rows_shape),
                         ("their last columns", self.cols_shape),
                         (f"{self.out_shape[0]} tiles being filled", self.out_shape),
                         ("a refill's tiles by rows", self.held_shape)],
                   score=True)
        cuda = cuda_module()
        read = checked_read_source("cuda.atomic.cas(ck, 2, 0, 1) == 0", tile_read(T, R, C, True))
        first = f"cuda.atomic.cas(ck, {ARG}, 0, 1) == 0"
        cell = rewritten_cell(rec, ir, read, {"cuda": cuda},
                              stop=f"{CHECK}[2] != 0 or {CHECK}[{ARG}] != 0",
                              arg_reads=arg_reads(rec, ir, first))
        kernel = compile_kernel(rec, tile_source(T, R, C, len(rec.args), bounds, True), "tile",
                                cell)
        t0 = time.perf_counter()
        self.ROWS = cuda.device_array(self.rows_shape, dtype=rec.dtype)
        self.COLS = cuda.device_array(self.cols_shape, dtype=rec.dtype)
        self.OUT = cuda.device_array(self.out_shape, dtype=rec.dtype)
        self.HELD = cuda.device_array(self.held_shape, dtype=rec.dtype)
        self.ck = cuda.to_device(checks(1, self.shape)[0])
        self.args = tuple(cuda.to_device(np.ascontiguousarray(x)) if isinstance(x, np.ndarray)
                          else x for x in rec.args)
        self.h2d_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._launch = launcher(kernel, self._arguments(0, 0, -1))
        self.compile_s = time.perf_counter() - t0
        self._back = cuda.pinned_array(self.held_shape[1:], dtype=rec.dtype)
        #: each refilled tile's copy by rows into the pinned buffer
        self._copies = [host_copy(self._back, self.HELD[k]) for k in range(held)]

    def _arguments(self, diagonal: int, first: int, depth: int) -> tuple:
        return (self.ROWS, self.COLS, self.OUT, self.HELD, self.ck, diagonal, first, depth,
                *self.args)

    def forward(self, progress: Callable[[int], None] | None,
                meanwhile: Callable[[], None] | None = None) -> float:
        """Fill every anti-diagonal of tiles in order, keeping their edges; the seconds
        it took (``progress``, if given, told about the cells done about every 1% of the
        anti-diagonals).  ``RecurrenceError`` for what the checks found.  ``meanwhile``,
        if given, runs on the host while the strips' pass runs on the device (else
        before the pass), its seconds past the pass's end (:attr:`unhidden_s`) not
        among the pass's."""
        if self.strips is not None:
            return self._strip_forward(progress, meanwhile)
        if meanwhile:  # a launch an anti-diagonal of tiles: the host is busy launching
            t0 = time.perf_counter()
            meanwhile()
            self.unhidden_s = time.perf_counter() - t0
        (A, W), T = self.tiles, self.T
        cuda = cuda_module()
        every = max(1, (A + W - 1) // 100)
        t0 = time.perf_counter()
        for d in range(A + W - 1):
            first = max(0, d - W + 1)
            self._launch(min(A - 1, d) - first + 1, T, self._arguments(d, first, -1))
            if progress and (d + 1) % every == 0:
                cuda.synchronize()
                progress(self.cells_before(d + 1))
        cuda.synchronize()
        run_s = time.perf_counter() - t0
        raise_found(self.ck.copy_to_host()[None, :], self.rec)
        return run_s

    def _strip_forward(self, progress: Callable[[int], None] | None,
                       meanwhile: Callable[[], None] | None) -> float:
        """The forward pass by the register strips of ``T`` rows, in one launch (no read
        or value to check: :func:`strip_pass`), ``meanwhile`` run as it runs; the
        seconds the device took (its events; under the simulator, the wall's)."""
        assert self.strips is not None
        R, C, nw = self.strips
        cuda = cuda_module()
        t0 = time.perf_counter()
        kern, _, sched, (nstrips, nslots) = strip_kernel(self.rec, self.ir, NOSE, R, C, True,
                                                         nw=nw, edges=True)
        self.compile_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        ring, ticket = (cuda.to_device(a) for a in sched)
        out = cuda.device_array((1, 1), dtype=self.rec.dtype)
        self.h2d_s += time.perf_counter() - t0
        start, end = cuda.event(), cuda.event()
        t0 = time.perf_counter()
        start.record()
        kern[strip_grid(cuda, nstrips), 32](zero_strided(out, self.shape), ring, ticket,
                                            nstrips, nslots, out, self.ROWS, self.COLS,
                                            *self.args)
        end.record()
        if meanwhile:
            meanwhile()
        end.synchronize()
        wall = time.perf_counter() - t0
        if progress:
            progress(self.rec.cells)
        device_s = wall if simulated() else start.elapsed_time(end) / 1e3
        if meanwhile:
            self.unhidden_s = max(0.0, wall - device_s)
        return device_s

    def _refill(self, a: int, b: int) -> np.ndarray:
        slot = self._cone.get((a, b))
        if slot is None:  # the cone from this tile, its blocks side by side
            tiles = cone(self.depth)
            self._launch(len(tiles), self.T, self._arguments(a + b, a, self.depth))
            self._cone = {(a - p, b - q): k for k, (p, q) in enumerate(tiles)
                          if p <= a and q <= b}
            self.cones += 1
            slot = 0
        self._copies[slot]()
        return self._back
