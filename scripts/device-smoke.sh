#!/usr/bin/env bash
# On the GPU host: a 1/16 sample of every sweep (every 16th point), to check that every bench
# runs and what it prints. Usage: scripts/device-smoke.sh SWEEP_BINARY OUT_DIR
set -uo pipefail
bin=$1; out=$2
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$out"
{ nvidia-smi; nvcc --version; nproc; } > "$out/host.txt" 2>&1
for spec in sweeps/*.toml; do
  name=$(basename "$spec" .toml)
  echo "== $name"
  timeout 300 "$bin" run "$spec" --shard 0/16 --split points --output output-smoke --no-analyze -q 2>&1 | tail -4
done > "$out/smoke.txt" 2>&1
tar czf "$out/smoke.tgz" output-smoke --exclude='*/bench' --exclude='.cache'
