#!/usr/bin/env bash
# Harness overhead per point (issue 5): everything but nvcc and the program, measured on the CPU
# with a trivial program (tests/project's hostsaw, built with cc), warm cache, 512 points.
# Side by side: a shell loop that runs the same 512 cached binaries one after another.
# Usage: bench/overhead.sh [SWEEP_BINARY] > bench/overhead.txt
set -euo pipefail
bin=$(realpath "${1:-target/release/sweep}")
work=$(mktemp -d); cp -r tests/project/* "$work/"; cd "$work"
sed -e 's/range = \[1, 64\]/range = [1, 512]/' sweeps/saw.toml | grep -v '^\[analyze\]' | grep -v '^x = ' > sweeps/ovh.toml
"$bin" run sweeps/ovh.toml -q > /dev/null                      # fills the cache
t0=$(date +%s%N); "$bin" run sweeps/ovh.toml -q > /dev/null; t1=$(date +%s%N)
csv=$(ls -d output/ovh/*/results.csv | sort | tail -1)
bins=$(ls -d output/.cache/*/bench)
t2=$(date +%s%N); for b in $bins; do (cd "$(dirname "$b")" && ./bench > /dev/null); done; t3=$(date +%s%N)
python3 - "$csv" $t0 $t1 $t2 $t3 <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t0, t1, t2, t3 = map(int, sys.argv[2:6])
wall = (t1 - t0) / 1e9
runs = sum(float(r["run_s"]) for r in rows)
n = len(rows)
print(f"machine: {open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}, {len(open('/proc/cpuinfo').read().split('processor'))-1} cores")
print(f"points: {n}, all cached: {all(r['cached']=='1' for r in rows)}")
print(f"sweep run (warm) wall      : {wall:.3f} s")
print(f"sum of program run times   : {runs:.3f} s (as sweep measured them)")
print(f"harness overhead per point : {(wall - runs) / n * 1000:.2f} ms (start-up, spec, cache lookups, CSV, manifest included)")
print(f"shell loop over the same binaries: {(t3 - t2) / 1e9:.3f} s ({(t3 - t2) / 1e6 / n:.2f} ms per point)")
PY
