"""``depgraph.analysis.symbolic``: the walk of a cell function's paths, each read of ``M``
with its index and its path's premises as forms in the walk's symbols."""

from collections.abc import Callable
from typing import Any

import numpy as np

from depgraph.analysis.symbolic import Walk
from depgraph.frontend.ir import read_cell


def _walk(cell: Callable[..., Any], args: tuple[Any, ...], shape: tuple[int, int]) -> Walk:
    """Every path through ``cell`` walked, for a table like ``shape``."""
    ir = read_cell(cell, 2)
    walk = Walk(ir, args, shape)
    walk.block(list(ir.definition().body), {}, ())
    return walk


def test_an_element_is_one_symbol_per_index_value_not_per_text():
    def cell(M, i, j, w):
        x = 0
        if w[x] <= j:
            x = 1
            return M[i - 1, j - w[x]]
        return M[i - 1, j - w[0]]

    walk = _walk(cell, (np.array([1, 5]),), (3, 4))
    after, other = walk.reads
    tested = (after.premises[0][1] - walk.index["j"]).free_symbols  # w[x] with x = 0
    assert tested.isdisjoint(after.index[1].free_symbols)  # w[x] with x = 1
    assert tested <= other.index[1].free_symbols  # w[0]
