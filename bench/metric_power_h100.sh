#!/usr/bin/env bash
# Issue 16 on the GPU host: energy per unit of work per metric (`[profile] metric_power_ms`). The power
# sweeps (sweeps/halfwarp_power.toml, sweeps/threads_power.toml) and the same points without `[profile]`,
# to see whether the power pass between the points (each metric's kernel looped for 500 ms) moves any
# timed number (`sweep compare`). One build cache for all four runs.
# usage: bench/metric_power_h100.sh SWEEP_BINARY OUT_DIR     (OUT_DIR gets the logs and a tar of the runs)
set -u
bin=$1; out=$2; work=${POWER_WORK:-/tmp/mpower}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$out" "$work"
log=$out/metric_power_h100.log
echo "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader), $(nproc) cores" > "$log"
run() {  # name spec [args...]
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$bin" run "$@" --output "$work/$name" --cache "$work/cache" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name wall_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))") rc=$rc ($*)" >> "$log"
}
run_dir() { ls -d "$work/$1"/*/*/ | head -1; }
run hw_plain sweeps/halfwarp.toml -a threads=4:96:4
run hw_power sweeps/halfwarp_power.toml
run th_power sweeps/threads_power.toml
run th_plain sweeps/threads_1_512.toml -a threads=32:512:32
for pair in "hw_power hw_plain" "th_power th_plain"; do
  set -- $pair
  "$bin" compare "$(run_dir "$2")" "$(run_dir "$1")" --out "$work/compare_$1" > "$out/compare_$1.log" 2>&1
  echo "compare $2 (A) vs $1 (B): rc=$? (compare_$1.log)" >> "$log"
done
echo "end: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)" >> "$log"
(cd "$work" && tar czf "$out/runs.tgz" --exclude=points --exclude=cache hw_plain hw_power th_power th_plain compare_hw_power compare_th_power)
p=$(ls -d "$(run_dir th_power)"points/*/ | tail -1)
tar czf "$out/one_point.tgz" -C "$p" --exclude=bench .
cat "$log"
