#!/usr/bin/env bash
# On a host with several GPUs: where does a point's wall time go when every GPU runs a sweep?
# Runs a quarter of sweeps/threads_1_512.toml (128 points, built once into a shared cache) with
# SWEEP_TRACE=1 in each MODE: one|all, then _d<N> (--prestart N), then optionally _conn8
# (CUDA_DEVICE_MAX_CONNECTIONS=8, the driver's default, instead of sweep's 1).
# Writes OUT_DIR/probe.txt and OUT_DIR/traces.tgz (per point: program phases, gate and reap times;
# results.csv). Read the traces with scripts/phases.py.
# Usage: scripts/device-gpus-probe.sh SWEEP_BINARY OUT_DIR MODE...
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); shift 2
export PATH=$PATH:/usr/local/cuda/bin
spec=sweeps/threads_1_512.toml; sel=(--shard 0/4 --split points)
now() { date +%s.%N; }
log="$out/probe.txt"
{
  nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv,noheader
  echo "cores: $(nproc)"
} > "$log" 2>&1
"$bin" build "$spec" "${sel[@]}" --output o --cache c >> "$log" 2>&1
for mode in "$@"; do
  args=(--prestart "${mode#*_d}"); args[1]=${args[1]%%_*}
  [[ $mode == all* ]] && args+=(--gpus all)
  envs=(); [[ $mode == *_conn8 ]] && envs=(CUDA_DEVICE_MAX_CONNECTIONS=8)
  t0=$(now)
  env "${envs[@]}" SWEEP_TRACE=1 "$bin" run "$spec" "${sel[@]}" "${args[@]}" --output "r_$mode" --cache c --no-analyze -q >> "$log" 2>&1
  t1=$(now)
  echo "mode $mode (${args[*]} ${envs[*]}): $(python3 -c "print(f'{$t1-$t0:.1f}')") s" >> "$log"
done
tar czf "$out/traces.tgz" --exclude='*/bench' --exclude='*.log' r_* 2>/dev/null
cat "$log"
