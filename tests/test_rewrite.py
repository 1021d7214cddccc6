"""The cell function's source rewritten (:mod:`runtime.backends.rewrite`): reads of ``M``
redirected, argument loads taken out."""

import inspect

import numpy as np
import pytest

from depgraph.frontend.ir import read_cell
from depgraph.frontend.source import SourceUnavailable, function_namespace
from runtime.backends.emit import compile_source
from runtime.backends.rewrite import rewrite_reads
from sources import decorated_cell, hoisted_loads, mixed_cell


def test_a_moved_index_keeps_its_loads_in_the_cell():
    def moved(M, i, j, X):
        i = i - 1
        return X[i]

    assert "_dg_arg" not in rewrite_reads(read_cell(moved, 2), "RD", "g", hoist=("X",))


def test_kept_reads_are_at_offsets_from_the_cell_and_none_once_an_index_moves():
    def cell(M, i, j):
        return M[i - 1, j] + M[i - 1, j - 1] + M[i - 2 + 1, j]

    def moved(M, i, j):
        i = i + 1
        return M[i - 1, j]

    src = rewrite_reads(read_cell(cell, 2), "RD", "g", cell_args=False, kept=[(-1, 0)])
    assert src.count("RD_kept(M, _dg_check, _dg_kept0, i - 1, j)") == 1
    assert src.count("RD(M, _dg_check, ") == 2  # another offset; not written as i - 1
    src = rewrite_reads(read_cell(moved, 2), "RD", "g", cell_args=False, kept=[(-1, 0)])
    assert "_kept" not in src and "RD(M, _dg_check, i - 1, j)" in src


def test_rewritten_cell_given_its_loads_computes_what_the_cell_computes():
    # the caller makes the loads from argument_loads' expressions, clamped as the kernels
    # clamp them, and passes them after the check argument
    rng = np.random.default_rng(5)
    X, A = rng.integers(0, 9, 4), rng.integers(0, 9, (6, 12))
    M = rng.integers(0, 9, (6, 6))
    src = rewrite_reads(read_cell(mixed_cell, 2), "RD", "g", hoist=("X", "A"))
    ns = {**function_namespace(mixed_cell), "RD": lambda M, ck, x0, x1, a, b: M[a, b]}
    g = compile_source(src, "g", ns)
    arrays = {"X": X, "A": A}
    for i in range(6):
        for j in range(6):
            loads = []
            for name, index in hoisted_loads(mixed_cell, ("X", "A")):
                a = arrays[name]
                at = [min(max(eval(e.format(i, j)), -a.shape[d]), a.shape[d] - 1)
                      for d, e in enumerate(index)]
                loads.append(a[tuple(at)])
            assert g(M, i, j, X, A, 3, None, *loads) == mixed_cell(M, i, j, X, A, 3)
    assert list(inspect.signature(g).parameters)[-5:] == [
        "_dg_check", "_dg_arg0", "_dg_arg1", "_dg_arg2", "_dg_arg3"]


def test_argument_loads_are_the_loads_rewrite_reads_takes_out_in_its_order():
    loads = hoisted_loads(decorated_cell, ("X",))
    assert loads == [("X", ("{0}",))]
    src = rewrite_reads(read_cell(decorated_cell, 2), "RD", "g", hoist=("X",))
    assert src.splitlines()[0] == "def g(M, i, j, X, _dg_check, _dg_arg0):"


def test_a_guarded_read_passes_exactly_the_reads_in_the_table_and_the_regions():
    import itertools

    from patterns import REGIONS, region_of
    from runtime.backends.rewrite import guarded_read_source

    names = [r for r in REGIONS if r != "Self"]
    M = np.zeros((3, 4))
    for k in range(1, len(names) + 1):
        for allowed in itertools.combinations(names, k):
            ns = {"int64": np.int64}
            exec(guarded_read_source(allowed, "M[a, b]", 0), ns)
            for x0, x1, a, b in itertools.product(range(3), range(4), range(-1, 4), range(-1, 5)):
                ck = [0]
                ns["read"](M, ck, x0, x1, a, b)
                inside = 0 <= a < 3 and 0 <= b < 4 and (a, b) != (x0, x1)
                assert (ck[0] == 0) == (inside and region_of(a - x0, b - x1) in allowed)



def test_a_guarded_read_at_known_offsets_passes_exactly_what_the_generic_one_does():
    # each axis's offset from the cell a constant (-2..2) or unknown: the same verdict as
    # the generic read for every read those offsets allow, every region set, every cell
    import itertools

    from patterns import REGIONS, region_of
    from runtime.backends.rewrite import guarded_read_source

    names = [r for r in REGIONS if r != "Self"]
    M = np.zeros((3, 4))
    choices = [None, -2, -1, 0, 1, 2]
    for k in range(1, len(names) + 1):
        for allowed in itertools.combinations(names, k):
            for offsets in itertools.product(choices, choices):
                ns = {"int64": np.int64}
                exec(guarded_read_source(allowed, "M[a, b]", 0, offsets), ns)
                for x0, x1 in itertools.product(range(3), range(4)):
                    rows = range(-1, 4) if offsets[0] is None else [x0 + offsets[0]]
                    cols = range(-1, 5) if offsets[1] is None else [x1 + offsets[1]]
                    for a, b in itertools.product(rows, cols):
                        ck = [0]
                        ns["read"](M, ck, x0, x1, a, b)
                        inside = 0 <= a < 3 and 0 <= b < 4 and (a, b) != (x0, x1)
                        assert (ck[0] == 0) == (inside and region_of(a - x0, b - x1) in allowed)

def test_a_guarded_read_leaves_untested_only_the_edges_a_proof_holds():
    # every pattern's regions (and a set its ranges cannot test), known and unknown
    # offsets, each of the 16 sets of proven edges: for every read those edges hold
    # (the proof's premise), the same verdict as the read that tests everything
    import itertools

    from patterns import PATTERNS, region_of
    from runtime.backends.rewrite import guarded_read_source

    M = np.zeros((3, 4))
    sets = [tuple(sorted(p.allowed)) for p in PATTERNS] + [("Left", "Up")]
    for allowed, offsets in itertools.product(sets, itertools.product([None, -1, 1],
                                                                      [None, 0, 1])):
        for held in itertools.product([False, True], repeat=4):
            edges = (held[:2], held[2:])
            ns = {"int64": np.int64}
            exec(guarded_read_source(allowed, "M[a, b]", 0, offsets, edges), ns)
            for x0, x1 in itertools.product(range(3), range(4)):
                rows = range(-1, 4) if offsets[0] is None else [x0 + offsets[0]]
                cols = range(-1, 5) if offsets[1] is None else [x1 + offsets[1]]
                for a, b in itertools.product(rows, cols):
                    if (held[0] and a < 0 or held[1] and a > 2 or held[2] and b < 0
                            or held[3] and b > 3):
                        continue  # a read the proof says is never made
                    ck = [0]
                    ns["read"](M, ck, x0, x1, a, b)
                    inside = 0 <= a < 3 and 0 <= b < 4 and (a, b) != (x0, x1)
                    assert (ck[0] == 0) == (inside and region_of(a - x0, b - x1) in allowed)


def test_guarded_reads_call_the_plain_load_only_for_reads_proven_in_the_regions():
    from depgraph.analysis.proof import Trusted
    from runtime.backends.rewrite import TRUSTED, guarded_reads

    proof = Trusted(((("M[i - 1, j]", 3), ("Up",)), (("M[i + 1, j]", 4), ("Down",))), (),
                    edges=((("M[i - 1, k]", 5), ((True, True), (True, False))),))
    reads = guarded_reads(("Up", "UpLeft", "UpRight"), "M[a, b]", 0, proof)
    assert reads.for_read((-1, 0), ("M[i - 1, j]", 3)) == TRUSTED
    # proven in bounds, but in a region the fill's order does not allow: checked
    assert reads.for_read((1, 0), ("M[i + 1, j]", 4)) == "_dg_read_p1_p0"
    name = reads.for_read((-1, None), ("M[i - 1, k]", 5))
    assert name == "_dg_read_m1_x_e1110"
    assert reads.reads[name].splitlines()[1] == "    if not (b < M.shape[1]):"
    assert reads.reads[TRUSTED].splitlines()[1] == "    return M[a, b]"


def test_a_hyperplane_read_passes_exactly_the_reads_in_the_table_on_earlier_hyperplanes():
    import itertools

    from runtime.backends.rewrite import hyperplane_read_source

    M = np.zeros((3, 2, 3))
    for pi in [(1, 0, 0), (1, 1, 1), (2, -1, 0), (0, 0, -1)]:
        ns: dict = {}
        exec(hyperplane_read_source(pi, "M[a0, a1, a2]", 0), ns)
        for x in itertools.product(range(3), range(2), range(3)):
            for a in itertools.product(range(-1, 4), range(-1, 3), range(-1, 4)):
                ck = [0]
                ns["read"](M, ck, *x, *a)
                inside = all(0 <= k < n for k, n in zip(a, M.shape))
                earlier = sum(p * (k - y) for p, k, y in zip(pi, a, x)) <= -1
                assert (ck[0] == 0) == (inside and earlier)


@pytest.mark.parametrize("pi, shape", [((1, 1, 1), (3, 2, 3)), ((1, -2, 1), (2, 3, 2)),
                                       ((-1, 1, 0), (1, 3, 4))])
def test_a_read_of_a_sheared_table_passes_only_cells_of_the_original_one(pi, shape):
    import itertools

    from patterns.hyperplane import Hyperplane, slab
    from runtime.backends.rewrite import hyperplane_read_source

    sh = slab(Hyperplane(pi), shape)
    M = np.zeros(sh.box)
    ns: dict = {}
    source = hyperplane_read_source((1, 0, 0), "M[a0, a1, a2]", 0, sh)
    exec(source, ns)
    for x in itertools.product(*(range(n) for n in sh.box)):
        for a in itertools.product(*(range(-1, n + 1) for n in sh.box)):
            ck = [0]
            ns["read"](M, ck, *x, *a)
            in_box = all(0 <= k < n for k, n in zip(a, sh.box))
            original = all(0 <= k < n for k, n in zip(sh.from_frame(a), shape))
            assert (ck[0] == 0) == (in_box and original and a[0] < x[0])
    # the original table's sides and the shift come from M's shape: one read for every size
    larger = slab(Hyperplane(pi), tuple(n + 2 for n in shape))
    assert hyperplane_read_source((1, 0, 0), "M[a0, a1, a2]", 0, larger) == source


def test_a_checked_argument_read_records_the_first_index_python_refuses():
    from runtime.backends.cpu import jit
    from runtime.backends.rewrite import arg_read_source

    read = jit(compile_source(arg_read_source(1, 2, 2, 0, "ck[0] == 0"), "read", {}))
    X, ck = np.arange(12).reshape(3, 4), np.zeros(7, dtype=np.int64)
    # negative indices inside Python's range wrap, as Python's do
    assert read(X, ck, 5, 6, -3, -1) == X[-3, -1] and read(X, ck, 5, 6, 2, 3) == 11
    assert not ck.any()
    assert read(X, ck, 5, 6, 1, 4) == X[0, 0]  # the stand-in; the fill is not used
    read(X, ck, 7, 8, -4, 0)
    assert ck.tolist() == [1, 5, 6, 1, 1, 4, 0]  # the first: cell, argument, axis, index


def test_an_argument_load_calls_its_checked_read_with_the_cell_and_keeps_slices():
    from runtime.backends.rewrite import ArgReads, arg_read_source

    def cell(M, i, j, X, k):
        i = i - 1
        return M[i, j] + X[i, j - 1] + X[i] + X[i, :].sum() + k[0] + M.shape[0]

    def view(M, i, j, X, k):
        return X[i][j]

    reads = ArgReads.of(read_cell(cell, 2), (np.zeros((2, 2)), (3,)),
                        lambda p, count: arg_read_source(p, count, 2, 0))
    src = rewrite_reads(read_cell(cell, 2), "RD", "g", arg_reads=reads)
    assert "_dg_argread0_2(X, _dg_check, _dg_cell0, _dg_cell1, i, j - 1)" in src
    assert "_dg_argread0_1(X, _dg_check, _dg_cell0, _dg_cell1, i)" in src
    assert "X[i, :]" in src and "k[0]" in src and "M.shape[0]" in src
    assert sorted(reads.reads) == ["_dg_argread0_1", "_dg_argread0_2"]
    # a view's element: of no argument's extent, so no checked rewrite
    with pytest.raises(SourceUnavailable, match=r"the read X\[i\]\[j\] \(line 2\) is of an "
                       "array that is not an argument"):
        rewrite_reads(read_cell(view, 2), "RD", "g", arg_reads=reads)
