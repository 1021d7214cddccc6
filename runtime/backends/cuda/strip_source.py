"""The register strips' kernel source (:func:`strip_source`), generated through the emitter.

One compute warp per strip of ``32 R`` rows walks the strip's blocks of ``R x C`` cells
(a lane's block a step, lane ``k`` ``k`` steps behind lane 0); the kernel is unrolled over
the block, so its source depends on the block's shape, the cells' loads of their
arguments, the store warps and the frame.  :mod:`runtime.backends.cuda.strips` compiles
and runs it; :mod:`runtime.backends.cuda.strip_layout` gives the numbers.

Assumptions: 2-D tables; a diagonal pattern's NOSE frame (rows and columns ``flipped``)
whose reads are the three nearest neighbours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from runtime.backends.cuda.cells import flip
from runtime.backends.cuda.device import nap
from runtime.backends.cuda.strip_layout import STRIP_BATCH, ring_strides
from runtime.backends.emit import Emitter, arg_tail

__all__ = ["strip_source"]


def strip_source(rows: bool, cols: bool, R: int, C: int, W: int, nargs: int, sim: bool,
                 pairs: list[list[tuple[int, ...]]] | None = None, score: bool = False,
                 loads: Sequence[str] = (), K: int = 0, B: int = STRIP_BATCH,
                 anywhere: bool = False, V: int = 1, diagonals: bool = False,
                 edges: bool = False, staged: bool = False) -> str:
    """Source of the strip kernel (see :func:`runtime.backends.cuda.strips.strip_fill`): a
    lane's ``R x C`` block of cells unrolled, computed into registers before any is
    stored; ``W`` words a boundary value, strip ``k``'s last row in slot ``k % nslots`` of
    ``BND`` (``m + C`` values, so lane 31 stores its block's last row whole, with no test
    per column); a full block's cells stored two to an 8-byte word where ``pairs``
    (:func:`runtime.backends.cuda.strip_layout.pair_stores`) says, through ``MP``, the
    table as 8-byte words.  A full block's stores, the boundary ring's stores, lane 0's
    reads of the fetched row and both sides of the store warps' ring (below) index by
    unsigned integers (``U``), so numba leaves out its wraparound of negative indices.
    With ``score``, no cell is stored but the last one, into ``OUT[0, 0]``
    (:func:`runtime.backends.cuda.score.strip_score_fill`); with ``edges`` too, the
    edges of the table's tiles of ``32 R x 32 R`` cells (a strip's height), as
    :mod:`runtime.backends.tile_edges` keeps them: each strip's last row but the last
    strip's into ``ROWS[k, 0, :]`` (lane 31's block's last row), and each row's last
    column of each tile column but the last into ``COLS[:, b, 0]`` (``C`` divides ``32 R``,
    so that column is a block's last), the NOSE frame unflipped.

    ``loads`` (:func:`runtime.backends.cuda.cells.argument_loads`) are the cell's loads of
    its arguments, which the kernel makes and passes in, so the cells wait on no load and
    their branches can become selects: those that do not depend on the column once a
    strip, into shared memory (``XS``) for the lanes to read; those by column only a batch
    ahead, into a window of the last ``WN`` columns in shared memory (``YW``) that the
    lanes read each step; the others (by row and column) a step ahead.  So no load from
    global memory is pending when the step loop starts, and within it only the batch's
    loads, which the batch's first step waits on anyway: ptxas puts its wait for a load
    at the load's first use and shares its scoreboards between loads, so a load made
    before the loop and first used in it, or a load a step ahead, made every step wait on
    the loads of the step before.  With ``staged`` (and store warps), the loads by row
    and column are the store warps' instead, a batch ahead: their lanes load a row's
    cells side by side (as they store them) into a ring in shared memory laid out as the
    cells' own (``LR``), which the compute warp reads each step; a compute lane's own
    loads of its block take an instruction for each of its ``R C`` cells, each of the
    warp's touching 32 rows.

    With ``K`` store warps (:func:`runtime.backends.cuda.strip_layout.strip_store_warps`)
    the compute warp (the block's first) writes its cells into a ring of ``2 B`` steps in
    shared memory instead of the table, and a block barrier every batch of ``B`` steps
    lets the store warps store the batch before from the ring into ``MF`` (the table as
    one row of cells), ``P`` runs of ``C B`` cells of a row at a time, ``V`` cells (1, or 4
    as one 16-byte vector: ``LD4``, ``ST4``, :func:`runtime.backends.intrinsics.load4`) a
    load or store, the compute warp's ring writes too.  ``B`` is also the blocks of the
    row above fetched at a time.  A block's cells come row by row, or with ``diagonals``
    anti-diagonal by anti-diagonal: the same cells, in another order, which ptxas
    schedules differently.  Under the simulator (``sim``: threads not in lockstep) the
    warp exchanges go through shared memory with block barriers instead of shuffles,
    which the store warps meet too.  With ``anywhere`` (only with ``K`` or ``score``: the
    compute warp stores no cell itself) a lane computes its whole block even where it
    passes the table's last row or column, instead of a guarded copy of the block that
    tests each cell: the cell runs anywhere
    (:meth:`depgraph.frontend.ir.CellIR.runs_anywhere`) and the cells outside are never
    stored, so a partial block costs no branch that splits the warp."""

    def I(e: str) -> str:  # noqa: E743
        return flip(e, "n", rows)

    def J(e: str) -> str:
        return flip(e, "m", cols)

    args = arg_tail(nargs)
    words = B * C * W  # words of one batch of the row above
    nb = math.ceil(words / 32)
    sync = "cuda.syncthreads()" if sim else "cuda.syncwarp(FULL)"
    LS, SS = ring_strides(R, C, V)
    uses = [("{0}" in t, "{1}" in t) for t in loads]  # (by row, by column) of each load
    win = [k for k, (by_r, by_c) in enumerate(uses) if by_c and not by_r]  # by column only
    rowed = [k for k, (by_r, by_c) in enumerate(uses) if not by_c]  # by row, or neither
    both = [k for k, (by_r, by_c) in enumerate(uses) if by_r and by_c]
    staged = staged and bool(K) and bool(both)
    ahead = [] if staged else [(k, r, c) for k in both for r in range(R) for c in range(C)]
    WN = 1 << ((32 + 2 * B) * C - 1).bit_length()  # a window's columns, a power of 2
    WL = math.ceil(B * C / 32)  # a window's columns a lane loads a batch
    # the batch's first step: the hand-down words, and the windows' columns in every strip
    batch = f"{'' if win else 'k > 0 and '}(s & {B - 1}) == 0"
    CB = C * B  # a run: a lane's cells of one row in a batch
    P = 32 * K * V // CB  # runs the store warps store at once
    Q = P // R  # lanes of the compute warp those runs step over
    cells = [(r, c) for r in range(R) for c in range(C)]
    if diagonals:  # the block's anti-diagonals in turn, each cell after its neighbours
        cells.sort(key=lambda rc: (rc[0] + rc[1], rc[0]))
    e = Emitter()

    def value(k: int, r: int, c: int) -> str:  # load k's value for the block's cell (r, c)
        by_r, by_c = uses[k]
        return f"w{k}_{r * by_r}_{c}" if by_c else f"h{k}_{r * by_r}"

    def at(k: int, row: str, col: str) -> str:  # load k at a row and column of the frame
        return loads[k].format(I(row), J(col))

    def load(k: int, r: int, c: int, q: str) -> str:  # load k for cell (r, c) of block q
        return at(k, f"ub + {r}", f"{q} * {C} + {c}")

    def rows_of(k: int) -> int:  # the values of load k a lane takes once a strip
        return R if uses[k][0] else 1

    def guarded(test: str | None, line: str) -> None:  # ``line``, under ``test`` if any
        if test is None:
            e(line)
            return
        with e.block(f"if {test}"):
            e(line)

    def fetch(first: str) -> None:  # issue the loads of a batch's words
        for t in range(nb):
            e(f"f = lane + {32 * t}", f"col = {first} + (f >> {W - 1})")
            guarded(f"f < {words} and col < m",
                    f"p{t} = LOAD(BND, (above + col) * {W} + (f & {W - 1}))")

    def stash() -> None:  # the batch fetched last time: wait for unwritten words, stash
        for t in range(nb):
            e(f"f = lane + {32 * t}", f"col = s * {C} + (f >> {W - 1})")
            with e.block(f"if f < {words} and col < m"):
                with e.block(f"while (p{t} >> 32) != k"):
                    e(nap(), f"p{t} = cuda.atomic.add(BND, (above + col) * {W} + (f & {W - 1}), 0)")
                e(f"BD[(s & {2 * B - 1}) * {C * W} + f] = p{t}")

    def place(first: str) -> None:  # a store lane's step of the batch from ``first`` on,
        # its column in the frame and its place in the ring
        e(f"sst = {first} + sb", f"col = sst * {C} + sc - gr * {C}",
          f"sidx = (sst & {2 * B - 1}) * {SS} + sc + gr * {LS} + rr * {C}")

    def stores() -> None:  # the batch before, P runs at a time, loads before stores
        place(f"s - {B}")
        e(f"ix = {I('u0 + pr')} * m + {J('col')}")
        di = -P if rows else P  # the flat index's step from one of a lane's runs to the next
        dj = Q * C if cols else -Q * C
        n_it = 32 * R // P
        for lo in range(0, n_it, 8):
            its = range(lo, min(n_it, lo + 8))
            e(*[f"y{it} = {'LD4(RG, ' if V > 1 else 'RG['}U(sidx + {it * Q * LS})"
                f"{')' if V > 1 else ']'}" for it in its])
            for it in its:
                to = f"U(ix + {it * di} * m + {it * dj})"
                guarded(f"col >= {it * Q * C} and col - {it * Q * C} < m and "
                        f"u0 + pr + {it * P} < n",
                        f"ST4(MF, {to}, {', '.join(f'y{it}[{v}]' for v in range(V))})"
                        if V > 1 else f"MF[{to}] = y{it}")

    def stage(first: str) -> None:  # the loads by row and column of steps first.. first+B-1
        place(first)
        for it in range(32 * R // P):
            e(*[f"LR{k}[U(sidx + {it * Q * LS + v})] = "
                + at(k, f"u0 + pr + {it * P}", f"col - {it * Q * C - v}")
                for k in both for v in range(V)])

    def block(guard: bool) -> None:  # the lane's block of cells, then its stores
        inside = (lambda r, c: f"ub + {r} < n and v0 + {c} < m") if guard else \
            (lambda r, c: None)
        for r, c in cells:
            left = f"x{r}_{c - 1}" if c else f"l{r}"
            up = f"x{r - 1}_{c}" if r else f"t{c}"
            if r:
                diag = f"x{r - 1}_{c - 1}" if c else f"l{r - 1}"
            else:
                diag = f"t{c - 1}" if c else "cn"
            vals = "".join(f", {value(k, r, c)}" for k in range(len(loads)))
            guarded(inside(r, c), f"x{r}_{c} = DT(cell(M, {I(f'ub + {r}')}, {J(f'v0 + {c}')}"
                    f"{args}, ({left}, {up}, {diag}){vals}))")
        if score:  # no cell stored
            return
        if K:  # into the ring, every cell: the store warps skip those outside the table
            e(*[f"ST4(RG, U(rs + lane * {LS} + {r * C + c}), "
                + ", ".join(f"x{r}_{c + v}" for v in range(V)) + ")" if V > 1 else
                f"RG[U(rs + lane * {LS} + {r * C + c})] = x{r}_{c}"
                for r in range(R) for c in range(0, C, V)])
            return
        for r in range(R):  # stores after every cell, so the cells' loads overlap
            for group in pairs[r] if pairs and not guard else [(c,) for c in range(C)]:
                c = group[0]
                if len(group) == 2:
                    e(f"MP[U(({I(f'ub + {r}')} * m + {J(f'v0 + {c}')}) >> 1)] = "
                      f"(ENC(x{r}_{c}, 0)[0] & LO) | (ENC(x{r}_{group[1]}, 0)[0] << 32)")
                    continue
                guarded(inside(r, c),
                        f"M[{I(f'ub + {r}')}, {J(f'v0 + {c}')}] = x{r}_{c}" if guard else
                        f"M[U({I(f'ub + {r}')}), U({J(f'v0 + {c}')})] = x{r}_{c}")

    def step() -> None:  # the compute warp's step s
        with e.block(f"if {batch}"):
            with (e.block("if k > 0") if win else e.deeper(0)):
                stash()
            for k in win:  # the windows' columns of this batch, loaded a batch ago
                for t in range(WL):
                    guarded(f"lane + {32 * t} < {B * C}",
                            f"YW{k}[U((s * {C} + lane + {32 * t}) & {WN - 1})] = y{k}_{t}")
            e(sync)
            with (e.block("if k > 0") if win else e.deeper(0)):
                fetch(f"(s + {B}) * {C}")
            e(*[f"y{k}_{t} = {at(k, 'ub', f'(s + {B}) * {C} + lane + {32 * t}')}"
                for k in win for t in range(WL)])
        if staged:
            e(f"ls = (s & {2 * B - 1}) * {SS} + lane * {LS}",
              *[f"w{k}_{r}_{c} = LR{k}[U(ls + {r * C + c})]"
                for k in both for r in range(R) for c in range(C)])
        e("q = s - lane", f"cn = t{C - 1}", *[f"w{k}_{r}_{c} = g{k}_{r}_{c}" for k, r, c in ahead],
          *[f"g{k}_{r}_{c} = {load(k, r, c, '(q + 1)')}" for k, r, c in ahead],
          *[f"w{k}_0_{c} = YW{k}[U((q * {C} + {c}) & {WN - 1})]" for k in win for c in range(C)])
        if sim:  # as shfl_up, through shared memory
            e(*[f"XV[lane * {C} + {c}] = b{c}" for c in range(C)], sync,
              *[f"t{c} = XV[(lane - 1) * {C} + {c}] if lane > 0 else b{c}" for c in range(C)], sync)
        else:  # numba shuffles 4- and 8-byte ints and floats: others travel as int64
            e(*[f"t{c} = DT(cuda.shfl_up_sync(FULL, SHUF(b{c}), 1))" for c in range(C)])
        slot = f"(s & {2 * B - 1}) * {C * W}"
        with e.block("if lane == 0 and k > 0"):
            e(*[f"t{c} = DEC({', '.join(f'BD[U({slot} + {c * W + w})]' for w in range(W))})"
                for c in range(C)])
        if K:
            e(f"rs = (s & {2 * B - 1}) * {SS}")
        with e.block("if q >= 0 and q < nq"):
            e(f"v0 = q * {C}")
            if anywhere:  # every block whole, the cells past the table's edge never stored
                block(False)
            else:
                with e.block(f"if full and v0 + {C} <= m"):
                    block(False)
                with e.block("else"):
                    block(True)
            e(*[f"l{r} = x{r}_{C - 1}" for r in range(R)],
              *[f"b{c} = x{R - 1}_{c}" for c in range(C)])
            with e.block("if lane == 31 and not last"):  # the strip's last row, for below
                for c in range(C):  # a slot holds m + C values: columns past m land there
                    e(f"e = ENC(b{c}, k + 1)",
                      *[f"BND[U((below + v0 + {c}) * {W} + {w})] = e[{w}]" for w in range(W)])
                    if edges:
                        guarded(f"v0 + {c} < m", f"ROWS[k, 0, v0 + {c}] = b{c}")
            if edges:  # a tile column's last column: this block's last
                with e.block(f"if ((v0 + {C}) & {32 * R - 1}) == 0 and "
                             f"(v0 + {C}) // {32 * R} - 1 < COLS.shape[1]"):
                    e(f"tc = (v0 + {C}) // {32 * R} - 1")
                    for r in range(R):
                        guarded(f"ub + {r} < n", f"COLS[ub + {r}, tc, 0] = x{r}_{C - 1}")

    with e.block(f"def strips(M, {'MP, ' if pairs else ''}{'MF, ' if K else ''}BND, ticket, "
                 f"nstrips, nslots{', OUT' if score else ''}{', ROWS, COLS' if edges else ''}"
                 f"{args})"):
        e("n = M.shape[0]", "m = M.shape[1]", "lane = cuda.threadIdx.x",
          f"nq = (m + {C - 1}) // {C}", f"BD = cuda.shared.array({2 * words}, int64)")
        if sim:
            e(f"XV = cuda.shared.array({32 * C}, DT)")
        if sim or K:
            e("XK = cuda.shared.array(1, int64)")
        if K:  # a store lane's place in a batch: its step, column, first run
            e(f"RG = cuda.shared.array({2 * B * SS}, DT)", "el = lane - 32",
              f"sb = (el % {CB // V}) // {C // V}",
              f"sc = el % {C}" if V == 1 else f"sc = {V} * (el % {C // V})",
              f"pr = el // {CB // V}", f"gr = pr // {R}", f"rr = pr % {R}")
        e(*[f"LR{k} = cuda.shared.array({2 * B * SS}, T{k})" for k in both if staged],
          *[f"YW{k} = cuda.shared.array({WN}, T{k})" for k in win],  # by column, a batch on
          *[f"XS{k} = cuda.shared.array({32 * R}, T{k})" for k in rowed])  # by row, a strip
        with e.block("while True"):
            e("k = 0")
            with e.block("if lane == 0"):
                e("k = cuda.atomic.add(ticket, 0, 1)", *(["XK[0] = k"] if sim or K else []))
            if sim or K:
                e("cuda.syncthreads()", "k = XK[0]", "cuda.syncthreads()")
            else:
                e("k = cuda.shfl_sync(FULL, k, 0)")
            with e.block("if k >= nstrips"):
                e("return")
            e(f"u0 = k * {32 * R}", f"ub = u0 + lane * {R}",
              *([] if anywhere else [f"full = ub + {R} <= n"]), "cn = ZERO",
              "last = k == nstrips - 1",
              f"above = ((k - 1) % nslots) * (m + {C})", f"below = (k % nslots) * (m + {C})")
            e(*[f"x{r}_{c} = ZERO" for r in range(R) for c in range(C)])
            e(*[f"l{r} = ZERO" for r in range(R)], *[f"t{c} = ZERO" for c in range(C)],
              *[f"b{c} = ZERO" for c in range(C)], *[f"p{t} = int64(0)" for t in range(nb)])
            if rowed:  # once a strip, through shared memory: no load pending at the loop
                with e.block("if lane < 32"):
                    e(*[f"XS{k}[lane + {32 * t}] = " + at(k, f"u0 + lane + {32 * t}", "0")
                        for k in rowed for t in range(rows_of(k))])
                e(sync)
            e(*[f"h{k}_{r} = XS{k}[{f'(lane & 31) * {R} + {r}' if uses[k][0] else '0'}]"
                for k in rowed for r in range(rows_of(k))],
              *[f"g{k}_{r}_{c} = {load(k, r, c, '(0 - lane)')}" for k, r, c in ahead],
              *[f"y{k}_{t} = {at(k, 'ub', f'lane + {32 * t}')}" for k in win for t in range(WL)])
            with e.block("if k > 0 and lane < 32" if K else "if k > 0"):
                fetch("0")
            if staged:  # the first batch's loads, before the loop's first barrier
                with e.block("if lane >= 32"):
                    stage("0")
            if K:  # a barrier every batch; after it the store warps store the batch before
                with e.block(f"for s in range(((nq + {30 + B}) // {B} + 1) * {B})"):
                    with e.block(f"if (s & {B - 1}) == 0"):
                        e("cuda.syncthreads()")
                        with e.block("if lane >= 32 and s > 0"):
                            stores()
                        if staged:  # the batch after this one's
                            with e.block("if lane >= 32"):
                                stage(f"s + {B}")
                    with e.block("if lane < 32 and s < nq + 31"):
                        step()
                    if sim:  # the store warps meet the compute warp's barriers
                        with e.block("elif s < nq + 31"):
                            with e.block(f"if {batch}"):
                                e(sync)
                            e(sync, sync)
            else:
                with e.block("for s in range(nq + 31)"):
                    step()
            if score:  # the last cell, held by a lane of the last strip after its last block
                with e.block("if last"):
                    for r in range(R):
                        for c in range(C):
                            guarded(f"ub + {r} == n - 1 and (nq - 1) * {C} + {c} == m - 1",
                                    f"OUT[0, 0] = x{r}_{c}")
    return e.source
