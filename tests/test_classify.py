import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from stencil import acyclic_offsets, make_stencil

from depgraph import analyze, recurrence
from patterns import matching, region_of

PIS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (-1, 1), (1, -1), (2, 1), (1, -3)]


def _absolute_patterns(a):
    g = a.graph.to_networkx()
    regions = set()
    for x in g.nodes:
        for y in nx.descendants(g, x):
            regions.add(region_of(y[0] - x[0], y[1] - x[1]))
    return matching(regions)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PIS), st.integers(1, 8), st.integers(1, 8), st.integers(1, 5),
       st.integers(0, 2**31))
def test_direct_equals_absolute_classification(pi, n, m, count, seed):
    rng = np.random.default_rng(seed)
    offs = acyclic_offsets(rng, pi, reach=2, count=count)
    a = analyze(make_stencil(offs, (n, m), seed))
    assert a.patterns == _absolute_patterns(a)


def test_three_d_has_no_regions_or_patterns():
    @recurrence(shape=(2, 2, 2), dtype=np.int64)
    def cube(M, i, j, k):
        return 1 if k == 0 else M[i, j, k - 1]

    d = analyze(cube).to_json()
    assert d["regions"] is None and d["patterns"] is None and d["pattern"] is None
    assert d["pattern_stages"] is None and d["stages"] == 2


def test_one_by_n_and_n_by_one():
    @recurrence(shape=(1, 6), dtype=np.int64)
    def fib(M, i, j):
        return j if j < 2 else M[0, j - 1] + M[0, j - 2]

    a = analyze(fib)
    assert a.regions == ("Left",) and a.pattern == "CLR" and a.patterns == ("CLR", "NOSE", "SONE")
    assert int(a.table[0, 5]) == 5

    @recurrence(shape=(6, 1), dtype=np.int64)
    def down(M, i, j):
        return 1 if i == 5 else M[i + 1, 0] * 2

    b = analyze(down)
    assert b.regions == ("Down",) and b.pattern == "RDU" and b.to_json()["pattern_stages"] == 6
