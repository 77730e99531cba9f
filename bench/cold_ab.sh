#!/usr/bin/env bash
# Does a cold run (builds beside the measurements) move numbers? (issue 10) On the GPU host, the thread
# sweep at threads 17..144, measured as
#   cold1, cold2 : a fresh build cache each (16 parallel builds at nice +10 beside the programs)
#   warm1, warm2 : the same again on the filled caches (no builds)
#   coldj4       : a fresh cache, 4 parallel builds (the builds lag behind the programs)
#   coldnp       : a fresh cache, --no-prestart (only with COLD_NP=1)
# in the order cold1 warm1 cold2 warm2 coldj4 [coldnp]. Then bench/pairs.py OUT_DIR compares every two.
# Usage: bench/cold_ab.sh SWEEP_BINARY OUT_DIR
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
export PATH=$PATH:/usr/local/cuda/bin
work=${AB_WORK:-/tmp/coldab}; mkdir -p "$work" "$out/ab_data"
now() { date +%s.%N; }
run() {  # label cache [options...]
  local label=$1 cache=$2; shift 2
  local t0; t0=$(now)
  "$bin" run sweeps/threads_1_512.toml -a threads=17:144 --output "$work/$label" --cache "$work/$cache" \
    --no-analyze -q "$@" > "$work/$label.log" 2>&1
  local rc=$?
  echo "$label wall_s=$(python3 -c "print(round($(now) - $t0, 1))") rc=$rc"
  cp "$(find "$work/$label" -name results.csv | head -n 1)" "$out/ab_data/$label.csv"
}
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
  run cold1 cache1
  run warm1 cache1
  run cold2 cache2
  run warm2 cache2
  run coldj4 cache3 -j 4
  [ -n "${COLD_NP:-}" ] && run coldnp cache4 --no-prestart
  echo "end: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
} | tee "$out/cold_runs.txt"
