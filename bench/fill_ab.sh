#!/usr/bin/env bash
# The fill pass side by side (issue 10), on the GPU host: does taking a placement's remaining samples in
# one second visit (SWEEP_FILL_PASS=1, the default) instead of two samples per visit until min_time_ms
# (SWEEP_FILL_PASS=0, as before) move any number, and what does it save?
# Points: the thread sweep at threads 17..144, built once (`sweep build`), then measured in the order
# old new new old (a slow drift of the GPU falls on both alike), SWEEP_TRACE=1 for the phases.
# Usage: bench/fill_ab.sh SWEEP_BINARY OUT_DIR; then python3 bench/pairs.py OUT_DIR and
# python3 bench/ab_bias.py OUT_DIR old new
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
export PATH=$PATH:/usr/local/cuda/bin
work=${AB_WORK:-/tmp/fill}; mkdir -p "$work" "$out/ab_data"
sed 's/^range = \[1, 512\]/range = [17, 144]/' sweeps/threads_1_512.toml > sweeps/ab_17_144.toml
now() { date +%s.%N; }
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
  "$bin" build sweeps/ab_17_144.toml --output "$work/build" --cache "$work/cache" > "$work/build.log" 2>&1
  echo "build rc=$?"
  for label in old_1 new_1 new_2 old_2; do
    fill=1; [[ $label == old* ]] && fill=0
    t0=$(now)
    SWEEP_TRACE=1 SWEEP_FILL_PASS=$fill "$bin" run sweeps/ab_17_144.toml \
      --output "$work/$label" --cache "$work/cache" --no-analyze -q > "$work/$label.log" 2>&1
    rc=$?
    echo "$label wall_s=$(python3 -c "print(round($(now) - $t0, 1))") rc=$rc"
    cp "$(find "$work/$label" -name results.csv | head -n 1)" "$out/ab_data/$label.csv"
    python3 scripts/phases.py "$work/$label" | grep -E "traced|measuring|run_s"
  done
  echo "end: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
} | tee "$out/ab_runs.txt"
rm -f sweeps/ab_17_144.toml
