#!/bin/bash
# End to end: `depgraph run` wall time and its phases, a base tree and this one side by side.
#
#   benchmarks/bench_e2e.sh BASE_TREE [ROUNDS]   (a checkout of main, say; run from this tree's root)
#
# Each command runs ROUNDS times (default 3) per tree, interleaved, base first: the first
# on an empty cache (one per tree under $DEPGRAPH_CACHE, emptied here), the others warm.
# Both trees' sources, and the packages they import (sympy, numba, ...), are compiled to
# bytecode first, as `pip install` does (an image that ships a package without bytecode
# and sets PYTHONDONTWRITEBYTECODE would otherwise recompile it in every process: sympy's
# import took 1.5-3 s so on the GPU machine).  Prints
# the wall time the shell saw and the phases `--json` gives (the base tree's fill phases
# when it has no "phases").
base=$(realpath "${1:?give the base tree}")
rounds=${2:-3}
root=$PWD
cache=${DEPGRAPH_CACHE:-/tmp/depgraph-bench-cache}
rm -rf "$cache"
for tree in "$base" "$root"; do
  python3 -m compileall -q -j 0 "$tree/depgraph" "$tree/runtime" "$tree/patterns" > /dev/null
done
packages=$(python3 -c "
import importlib, os
for name in ('sympy', 'mpmath', 'numpy', 'numba', 'numba_cuda', 'llvmlite', 'cuda.core'):
    try:
        print(os.path.dirname(importlib.import_module(name).__file__))
    except ImportError:
        pass")
python3 -m compileall -q -j 0 $packages > /dev/null 2>&1 || echo "(some packages' bytecode not written)"
one() {  # tree label args...
  tree=$1; label=$2; shift 2
  cd "$tree" || exit 1
  name=$([ "$tree" = "$root" ] && echo new || echo base)
  s=$(date +%s%N)
  DEPGRAPH_CACHE=$cache/$name PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} python3 -m depgraph run "$@" --json > /tmp/bench_e2e.json 2> /tmp/bench_e2e.err; rc=$?
  e=$(date +%s%N)
  python3 - "$name" "$label" "$rc" "$(( (e - s) / 1000000 ))" <<'PY' || tail -3 /tmp/bench_e2e.err
import json, sys
tree, label, rc, wall = sys.argv[1:]
d = json.load(open('/tmp/bench_e2e.json'))
phases = d.get('phases') or {k: d[k] for k in ('plan_s', 'compile_s', 'h2d_s', 'compute_s', 'd2h_s')}
print(f"{tree:4s} {label:26s} rc={rc} wall {int(wall) / 1000:6.2f} s  "
      + " ".join(f"{k[:-2]}={v:.3f}" for k, v in phases.items() if v is not None), flush=True)
PY
  cd "$root"
}
for args in "examples/lcs.py --size 32768" "examples/knapsack.py --size 1000" "examples/lcs.py --size 4096" "examples/matrix_chain.py --size 1024"; do
  for r in $(seq "$rounds"); do
    one "$base" "${args#examples/} r$r" $args --backend cuda
    one "$root" "${args#examples/} r$r" $args --backend cuda
  done
done
for r in 1 2; do
  one "$base" "lcs 32768 -o" examples/lcs.py --size 32768 --backend cuda -o /tmp/bench_e2e_base.npy
  one "$root" "lcs 32768 -o" examples/lcs.py --size 32768 --backend cuda -o /tmp/bench_e2e_new.npy
done
cmp /tmp/bench_e2e_base.npy /tmp/bench_e2e_new.npy && echo "tables equal"
rm -f /tmp/bench_e2e_base.npy /tmp/bench_e2e_new.npy
for r in $(seq "$rounds"); do
  one "$base" "lcs 12000 cpu r$r" examples/lcs.py --size 12000 --backend cpu
  one "$root" "lcs 12000 cpu r$r" examples/lcs.py --size 12000 --backend cpu
done
