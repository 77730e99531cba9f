#!/usr/bin/env bash
# On a host with several GPUs: where does a point's wall time go when every GPU runs a sweep?
# Runs a quarter of sweeps/threads_1_512.toml (128 points, built once into a shared cache) with
# SWEEP_TRACE=1 in each MODE: one|all (one GPU / --gpus all --split points), then optionally
# _d<N> (--prestart N; default: sweep's default), _nohold (SWEEP_HOLD=0: sweep does not hold the
# driver, each program loads it, no rest added), _hold (a process that holds an idle CUDA context on
# every GPU beside the sweep: bench/holder.cu ctx), _conn8 (CUDA_DEVICE_MAX_CONNECTIONS=8).
# Writes OUT_DIR/probe.txt and OUT_DIR/traces.tgz (per point: program phases, gate and reap times;
# results.csv) and the phases of every mode (scripts/phases.py) at the end of probe.txt.
# Usage: scripts/device-gpus-probe.sh SWEEP_BINARY OUT_DIR MODE...
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); shift 2
export PATH=$PATH:/usr/local/cuda/bin
spec=sweeps/threads_1_512.toml; sel=(--shard 0/4 --split points)
now() { date +%s.%N; }
log="$out/probe.txt"
{
  nvidia-smi --query-gpu=index,name,driver_version,persistence_mode,clocks.sm --format=csv,noheader
  echo "cores: $(nproc)"
} > "$log" 2>&1
nvcc -O2 -o /tmp/holder bench/holder.cu >> "$log" 2>&1
"$bin" build "$spec" "${sel[@]}" --output o --cache c >> "$log" 2>&1
ngpu=$(nvidia-smi -L | wc -l)
for mode in "$@"; do
  args=()
  [[ $mode =~ _d([0-9]+) ]] && args+=(--prestart "${BASH_REMATCH[1]}")
  [[ $mode == all* ]] && args+=(--gpus all)
  envs=(); [[ $mode == *_conn8* ]] && envs+=(CUDA_DEVICE_MAX_CONNECTIONS=8)
  [[ $mode == *_nohold* ]] && envs+=(SWEEP_HOLD=0)
  holders=()
  if [[ $mode == *_hold* && $mode != *_nohold* ]]; then
    for ((g = 0; g < ngpu; g++)); do CUDA_VISIBLE_DEVICES=$g /tmp/holder 900 ctx > /dev/null & holders+=($!); done
    sleep 2
  fi
  t0=$(now)
  env "${envs[@]}" SWEEP_TRACE=1 "$bin" run "$spec" "${sel[@]}" "${args[@]}" --output "r_$mode" --cache c --no-analyze -q >> "$log" 2>&1
  t1=$(now)
  [[ ${#holders[@]} -gt 0 ]] && kill "${holders[@]}" 2>/dev/null; wait 2>/dev/null
  echo "mode $mode (${args[*]} ${envs[*]}): $(python3 -c "print(f'{$t1-$t0:.1f}')") s" >> "$log"
done
for mode in "$@"; do echo "== $mode" >> "$log"; python3 scripts/phases.py "r_$mode" >> "$log" 2>&1; done
tar czf "$out/traces.tgz" --exclude='*/bench' --exclude='*.log' --exclude='*/build' r_* 2>/dev/null
cat "$log"
