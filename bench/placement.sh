#!/usr/bin/env bash
# On a GPU host: bench/placement.cu in three processes (two alike, one after a 300 MiB allocation),
# then a summary per thread count and placement set: min, median, max, spread, and how far the same
# placement moves between processes. Usage: bench/placement.sh OUT_DIR
set -uo pipefail
out=$(realpath "$1"); export PATH=$PATH:/usr/local/cuda/bin
nvcc -arch=sm_90 -O3 -o /tmp/placement bench/placement.cu || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
/tmp/placement 0 > "$out/pl_a.txt"; /tmp/placement 0 > "$out/pl_b.txt"; /tmp/placement 300 > "$out/pl_c.txt"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader
python3 - "$out" <<'PY'
import sys, statistics as st, collections
d = sys.argv[1]
runs = {}
for r in "abc":
    runs[r] = {}
    for l in open(f"{d}/pl_{r}.txt"):
        t, s, k, v = l.split(); runs[r][(int(t), s, int(k))] = float(v)
keys = sorted(runs["a"])
groups = collections.defaultdict(list)
for key in keys: groups[key[:2]].append(key)
print(f"{'T':>4} {'set':6} {'min':>8} {'median':>8} {'max':>8} {'spread':>7} {'a~b max':>8} {'a~c max':>8}  (run a; MFlops)")
for (t, s), ks in sorted(groups.items()):
    v = [runs["a"][k] for k in ks]; m = st.median(v)
    ab = max(abs(runs["a"][k] / runs["b"][k] - 1) for k in ks)
    ac = max(abs(runs["a"][k] / runs["c"][k] - 1) for k in ks)
    print(f"{t:4d} {s:6} {min(v):8.0f} {m:8.0f} {max(v):8.0f} {(max(v)-min(v))/m:7.1%} {ab:8.1%} {ac:8.1%}")
PY
