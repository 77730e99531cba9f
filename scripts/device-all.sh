#!/usr/bin/env bash
# On the GPU host: every sweep in sweeps/, complete, with the given sweep binary; then the
# analysis of each. Packs the run folders (CSV, manifest, analysis, charts; not the binaries or
# per-point logs) into OUT_DIR/runs.tgz and the summaries into OUT_DIR/all.txt.
# Usage: scripts/device-all.sh SWEEP_BINARY OUT_DIR [SPEC...]
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); shift 2
specs=("$@"); [ ${#specs[@]} -gt 0 ] || specs=(sweeps/*.toml)
export PATH=$PATH:/usr/local/cuda/bin
rm -rf output-gpu
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv
  nvcc --version | grep release; echo "cores: $(nproc)"
} > "$out/all.txt" 2>&1
for spec in "${specs[@]}"; do
  echo "== $spec"
  "$bin" run "$spec" --output output-gpu -q 2>&1 | grep -v '^wrote '
done >> "$out/all.txt" 2>&1
tar czf "$out/runs.tgz" --exclude='*/points' --exclude='.cache' output-gpu
