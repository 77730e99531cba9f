#!/usr/bin/env bash
# Pipeline benchmark (issue 36), on the GPU host: the default thread sweep (sweeps/threads_1_512.toml, 512 points,
# 12 metrics, default options) as a user runs it, twice:
#   cold : `sweep run` with an empty build cache (builds beside the runs): its wall time
#   warm : `sweep run` again with the cache full: its wall time over its programs' own time (sum of run_s, the
#          control re-runs' and held points' processes included)
# Prints the machine, the command, `cold thread sweep: S s` and `warm/programs: R` (on stderr: each run's exit status,
# wall time and its programs' time). Each run's results.csv,
# controls.csv and manifest.json go to OUT_DIR/pipeline_data.tgz (the truth checks: bench/speed_check.py).
# PARTS="cold" or "warm" runs one of them (the run folders and the cache stay in PIPELINE_WORK, default
# /tmp/pipeline, for a later command on the same machine: the two take longer than one device command may run).
# Usage: bench/pipeline.sh SWEEP_BINARY OUT_DIR
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
export PATH=$PATH:/usr/local/cuda/bin
work=${PIPELINE_WORK:-/tmp/pipeline}; mkdir -p "$work"
spec=sweeps/threads_1_512.toml
now() { date +%s.%N; }
echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(nproc) cores; $(nvcc --version | grep release)"
for part in ${PARTS:-cold warm}; do
  [ "$part" = cold ] && rm -rf "$work/cache" "$work/cold"
  rm -rf "${work:?}/$part"
  echo "command ($part): sweep run $spec --output $work/$part --cache $work/cache"
  t0=$(now)
  "$bin" run "$spec" --output "$work/$part" --cache "$work/cache" -q > "$work/$part.out" 2> "$work/$part.err"
  rc=$?
  wall=$(python3 -c "print(round($(now) - $t0, 1))")
  echo "$wall" > "$work/$part.wall"
  run=$(ls -d "$work/$part"/threads_1_512/*/)
  programs=$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(round(sum(float(x['run_s']) for x in r), 1), len(r), sum(x['status'] in ('ok','noisy','unstable') for x in r))" "$run/results.csv")
  echo "$part: exit $rc, wall $wall s, programs (sum of run_s, rows, measured): $programs" >&2
  [ "$part" = cold ] && echo "cold thread sweep: $wall s"
  [ "$part" = warm ] && echo "warm/programs: $(python3 -c "print(round($wall / ${programs%% *}, 3))")"
done
(cd "$work" && tar czf "$out/pipeline_data.tgz" --exclude=points --exclude='*.html' --exclude=charts cold warm *.wall 2>/dev/null)
