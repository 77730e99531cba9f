#!/usr/bin/env bash
# Several GPUs of one host (issue 6): the whole of sweeps/threads_1_512.toml (512 points) on one
# GPU and on every GPU (--gpus all --split points), side by side in one session:
#   cold - each with an empty build cache of its own (builds and runs overlap, as overnight);
#   warm - again from those caches (runs alone: what the GPUs add).
# The two one-GPU runs also give the run-to-run spread that the all-GPU curves are compared with
# (bench/compare_gpus.py). Usage: bench/gpus.sh SWEEP_BINARY OUT_DIR
set -euo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
spec=sweeps/threads_1_512.toml
export PATH=$PATH:/usr/local/cuda/bin
now() { date +%s.%N; }
log="$out/gpus.txt"
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; echo "cores: $(nproc)"; } > "$log"
declare -A took
for run in one_cold all_cold one_warm all_warm; do
  args=(); [[ $run == all* ]] && args=(--gpus all --split points)
  cache=cache_${run%_*}
  t0=$(now)
  "$bin" run "$spec" "${args[@]}" --output "$run" --cache "$cache" --no-analyze -q >> "$log" 2>&1
  took[$run]=$(python3 -c "print(f'{$(now) - $t0:.1f}')")
  echo "$run: ${took[$run]} s" >> "$log"
  cp "$run"/threads_1_512/*/results.csv "$out/$run.csv"
done
python3 -c "
oc, ac, ow, aw = $(echo "${took[one_cold]} ${took[all_cold]} ${took[one_warm]} ${took[all_warm]}" | tr ' ' ',')
print(f'cold: one GPU {oc:.1f} s, all GPUs {ac:.1f} s ({oc / ac:.2f}x); warm: one GPU {ow:.1f} s, all GPUs {aw:.1f} s ({ow / aw:.2f}x)')" >> "$log"
cat "$log"
