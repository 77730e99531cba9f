#!/usr/bin/env bash
# Truth bench (issue 10), on the GPU host, side by side in one command: does a point's number depend
# on the run around it? The thread sweep (sweeps/threads_1_512.toml, default options) measured as
#   full   : the whole sweep, cold build cache (also the cold wall time)
#   again  : the whole sweep again, warm cache (also the warm wall time and the programs' run time)
#   shuf   : the whole sweep in shuffled order (--order shuffled --seed 7)
#   s17    : threads 17..80 only          s300 : threads 300..363 only
# With PLACEMENTS=1 in the environment every program measures its buffers at one place, as before
# the placements (the old behaviour, for contrast); with REPEAT=k every point runs in k processes
# (the spec's `repeat`); the label gets a suffix.
# TRUTH_RUNS="full shuf" runs only those, and is required (a device command has 10 minutes: the five took about 11 with
# --prestart 1; with the default since 2026-11-25, no prestart, expect about 15 (an estimate, not measured:
# the band's sweeps took 1.38x as long without prestart): split them as TRUTH_RUNS="full s17 s300" then "again shuf"; the cache and the run
# folders stay in TRUTH_WORK for a later call on the same machine). PRESTART=n passes --prestart n.
# Each run's results.csv, controls.csv and manifest.json are copied to OUT_DIR/truth_data/LABEL/ as soon
# as it ends. Then bench/truth.py compares them. Usage: bench/truth.sh SWEEP_BINARY OUT_DIR [LABEL_SUFFIX]
set -uo pipefail
# All five take 20-25 minutes and a device command has 10: name the runs (session 11 lost one command to this).
if [ -z "${TRUTH_RUNS:-}" ]; then
  echo 'bench/truth.sh: set TRUTH_RUNS (the five runs take 20-25 min, a device command 10): e.g. TRUTH_RUNS="full s17 s300", then "again", then "shuf"' >&2
  exit 2
fi
bin=$(realpath "$1"); out=$(realpath "$2"); sfx=${3:-}
export PATH=$PATH:/usr/local/cuda/bin
work=${TRUTH_WORK:-/tmp/truth}; mkdir -p "$work"
[ -n "${PLACEMENTS:-}" ] && export SWEEP_PLACEMENTS=$PLACEMENTS
spec=sweeps/threads_1_512.toml
if [ -n "${REPEAT:-}" ]; then
  sed "s/^run_timeout_s = \(.*\)/run_timeout_s = \1\nrepeat = $REPEAT/" sweeps/threads_1_512.toml > sweeps/truth_full.toml
  spec=sweeps/truth_full.toml
fi
sed 's/^range = \[1, 512\]/range = [17, 80]/' $spec > sweeps/truth_17_80.toml
sed 's/^range = \[1, 512\]/range = [300, 363]/' $spec > sweeps/truth_300_363.toml
now() { date +%s.%N; }
run() {  # label spec [options...]
  local label=$1$sfx s=$2; shift 2
  local t0; t0=$(now)
  "$bin" run "$s" --output "$work/$label" --cache "$work/cache$sfx" -q ${PRESTART:+--prestart "$PRESTART"} "$@" > "$work/$label.log" 2>&1
  local rc=$?
  echo "$label wall_s=$(python3 -c "print(round($(now) - $t0, 1))") rc=$rc"
  (cd "$work" && find "$label" -name results.csv -o -name controls.csv -o -name manifest.json -o -name recheck.csv |
    tar -c -f - -T - | tar -x -f - -C "$out/truth_data")
}
mkdir -p "$out/truth_data"
runs=$TRUTH_RUNS
want() { [[ " $runs " == *" $1 "* ]]; }
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,persistence_mode,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
  echo "nvcc: $(nvcc --version | grep release); SWEEP_PLACEMENTS=${SWEEP_PLACEMENTS:-default}; REPEAT=${REPEAT:-1}"
  want full && run full $spec
  want again && run again $spec
  want shuf && run shuf $spec --order shuffled --seed 7
  want s17 && run s17 sweeps/truth_17_80.toml --no-analyze
  want s300 && run s300 sweeps/truth_300_363.toml --no-analyze
  echo "end: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
} | tee -a "$out/truth_runs$sfx.txt"
rm -f sweeps/truth_17_80.toml sweeps/truth_300_363.toml sweeps/truth_full.toml
