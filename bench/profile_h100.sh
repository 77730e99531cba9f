#!/usr/bin/env bash
# Issue 16 on the GPU host: the counters sweeps (sweeps/halfwarp_counters.toml, sweeps/copy_stride_counters.toml)
# with `[profile]`, and the same points without it, to see whether profiling between the points moves
# any timed number (`sweep compare`: every value against the other run's, within both uncertainties).
# usage: bench/profile_h100.sh SWEEP_BINARY OUT_DIR      (OUT_DIR gets the logs and a tar of the runs)
set -u
bin=$1; out=$2; work=${PROFILE_WORK:-/tmp/profile}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$out" "$work"
log=$out/profile_h100.log
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
  echo "nvcc: $(nvcc --version | tail -2 | head -1)"
  echo "ncu: $(ncu --version | tail -1)"
} > "$log"
run() {  # name spec [args...]
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$bin" run "$@" --output "$work/$name" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name wall_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))") rc=$rc ($*)" >> "$log"
}
run_dir() { ls -d "$work/$1"/*/*/ | head -1; }
run hw_profiled sweeps/halfwarp_counters.toml
run hw_plain sweeps/halfwarp.toml -a threads=1:96
run cs_profiled sweeps/copy_stride_counters.toml
run cs_plain sweeps/copy_stride.toml
for pair in "hw_profiled hw_plain" "cs_profiled cs_plain"; do
  set -- $pair
  "$bin" compare "$(run_dir "$1")" "$(run_dir "$2")" --out "$work/compare_$1" > "$out/compare_$1.log" 2>&1
  echo "compare $1 vs $2: rc=$? (compare_$1.log)" >> "$log"
done
echo "end: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)" >> "$log"
# What came back: the runs without their points/ folders (binaries), plus one point's profile files.
(cd "$work" && tar czf "$out/runs.tgz" --exclude=points --exclude=.cache hw_profiled hw_plain cs_profiled cs_plain compare_hw_profiled compare_cs_profiled)
p=$(ls -d "$(run_dir hw_profiled)"points/*/ | head -1)
tar czf "$out/one_point.tgz" -C "$p" .
cat "$log"
