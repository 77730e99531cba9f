#!/usr/bin/env bash
# Where a program's measuring time goes (issue 10): the thread sweep at 16 thread counts (16..496 by
# 32), warm cache, SWEEP_TRACE=1; scripts/phases.py splits each point's time between the timing core's
# marks (set-up, sampling, wrap-up, between metrics) and the GPU time of its samples. Each variant runs
# the same 16 built programs; VARIANTS="label:ENV=V,ENV=V ..." (default: the defaults only).
# Usage: bench/measuring.sh SWEEP_BINARY OUT_DIR
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
export PATH=$PATH:/usr/local/cuda/bin
work=${MEASURING_WORK:-/tmp/measuring}; mkdir -p "$work" "$out"
"$bin" build sweeps/threads_1_512.toml -a threads=16:496:32 --cache "$work/cache" > "$work/build.log" 2>&1 ||
  { tail -5 "$work/build.log"; exit 1; }
echo "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
for v in ${VARIANTS:-default:}; do
  label=${v%%:*}; envs=${v#*:}
  t0=$(date +%s.%N)
  env SWEEP_TRACE=1 ${envs//,/ } "$bin" run sweeps/threads_1_512.toml -a threads=16:496:32 \
    --output "$work/$label" --cache "$work/cache" -q --no-analyze > "$work/$label.log" 2>&1
  rc=$?
  echo "== $label ($envs) wall_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))") rc=$rc"
  python3 scripts/phases.py "$work/$label"
  cp "$(ls "$work/$label"/*/*/results.csv | head -1)" "$out/$label.csv"
done
