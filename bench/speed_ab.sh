#!/usr/bin/env bash
# Speed A/B (issue 36), on the GPU host: every 16th point of sweeps/threads_1_512.toml (32 points, 12 metrics), traced
# (SWEEP_TRACE=1), once per variant of the timing core's settings, one after another on one machine:
#   base    : the defaults (empty build cache: the builds of all variants)
#   central : SWEEP_CENTRAL=1 (samples from the third pass on only at the placements that may carry the median)
#   floor2  : --timing min_time_ms=2 (the spec's floor of summed GPU time per metric, 5 ms, lowered)
# For each: wall, the programs' time, `sweep compare` against the committed fixtures, where a point's time goes
# (bench/truth_phases.py) and the samples per metric. Usage: bench/speed_ab.sh SWEEP_BINARY OUT_DIR
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
export PATH=$PATH:/usr/local/cuda/bin
work=${AB_WORK:-/tmp/speed_ab}; rm -rf "$work"; mkdir -p "$work"
spec=sweeps/threads_1_512.toml
now() { date +%s.%N; }
echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(nproc) cores"
variant() {  # label, env assignments..., -- sweep run options...
  local label=$1; shift
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  local t0; t0=$(now)
  env SWEEP_TRACE=1 "${envs[@]}" "$bin" run "$spec" --shard 0/16 --split points --output "$work/$label" --cache "$work/cache" --no-analyze -q "$@" > /dev/null 2> "$work/$label.err"
  local wall; wall=$(python3 -c "print(round($(now) - $t0, 2))")
  local run; run=$(ls -d "$work/$label"/threads_1_512/*/)
  cp "$run/results.csv" "$out/ab_$label.csv"
  echo "== $label (${envs[*]} $*): wall $wall s, programs $(python3 -c "import csv,sys; print(round(sum(float(r['run_s']) for r in csv.DictReader(open(sys.argv[1]))),2))" "$run/results.csv") s"
  for fx in threads_1_512 threads_shuffled; do
    "$bin" compare tests/fixtures/h100/$fx "$run" 2>&1 | grep -E "SM clock|values compared" | sed "s/^/  vs $fx: /"
  done
  python3 bench/truth_phases.py "$run" | sed 's/^/  /'
}
variant base --
variant central SWEEP_CENTRAL=1 --
variant floor2 -- --timing min_time_ms=2
