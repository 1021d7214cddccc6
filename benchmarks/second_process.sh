#!/bin/bash
# A second process (its kernels already compiled and cached) of
#   depgraph run examples/lcs.py --size N --backend cpu
# against a script running a hand-written cached njit LCS (benchmarks/lcs_njit.py), the two
# interleaved, ROUNDS rounds after one warm-up each; prints each wall time the shell saw
# and the medians.  Run from the repository root:  benchmarks/second_process.sh [N] [ROUNDS]
n=${1:-1000}
rounds=${2:-7}
py=${PYTHON:-python3}
$py benchmarks/lcs_njit.py "$n" > /dev/null
$py -m depgraph run examples/lcs.py --size "$n" --backend cpu > /dev/null
ms() { s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
njit=(); ours=()
for r in $(seq "$rounds"); do
  njit+=("$(ms $py benchmarks/lcs_njit.py "$n")")
  ours+=("$(ms $py -m depgraph run examples/lcs.py --size "$n" --backend cpu)")
  echo "round $r: njit script ${njit[-1]} ms, depgraph run ${ours[-1]} ms"
done
$py - "${njit[*]}" "${ours[*]}" <<'PY'
import statistics, sys
a, b = (statistics.median(map(int, s.split())) for s in sys.argv[1:])
print(f"medians: njit script {a:.0f} ms, depgraph run {b:.0f} ms, ratio {b / a:.2f}")
PY
