"""The plain approach to analysis, the baseline of ``bench_analyze.py``.

Trace in Python with a recording stand-in (a dict of values, recursion-free demand order),
build a networkx DiGraph, take its topological generations.  Prints one JSON line with
the stage count and seconds.  Usage: ``python plain_analyze.py FILE SIZE``.
"""

from __future__ import annotations

import json
import sys
import time

import networkx as nx

from depgraph import load


class Recorder:
    def __init__(self, values: dict):
        self.values = values
        self.reads: list = []

    def __getitem__(self, key):
        if key not in self.values:
            raise LookupError(key)
        self.reads.append(key)
        return self.values[key]


def main() -> None:
    rec = load(sys.argv[1], size=int(sys.argv[2]))
    t0 = time.perf_counter()
    n, m = rec.shape
    values: dict = {}
    g = nx.DiGraph()
    for i in range(n):  # row-major order suits this baseline's LCS input
        for j in range(m):
            M = Recorder(values)
            values[(i, j)] = rec.func(M, i, j, *rec.args)
            g.add_node((i, j))
            g.add_edges_from(((i, j), y) for y in M.reads)
    t1 = time.perf_counter()
    gens = list(nx.topological_generations(g.reverse(copy=False)))
    t2 = time.perf_counter()
    print(json.dumps({"stages": len(gens), "trace_and_build_s": t1 - t0, "generations_s": t2 - t1,
                      "total_s": t2 - t0}))


if __name__ == "__main__":
    main()
