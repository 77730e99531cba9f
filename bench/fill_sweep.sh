#!/usr/bin/env bash
# One-off (issue 36): the whole thread sweep cold with --prestart 1 beside bench/filler.cu (no rest between
# programs; the filler keeps the GPU busy in every gap), timed, compared with the committed fixture.
# Usage: bench/fill_sweep.sh SWEEP_BINARY OUT_DIR [LABEL]
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); label=${3:-fill}
export PATH=$PATH:/usr/local/cuda/bin
work=/tmp/fs; mkdir -p "$work" "$out"
echo "machine: $(nvidia-smi --query-gpu=name,driver_version,persistence_mode,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
nvcc -O2 -arch=sm_90 -o "$work/filler" bench/filler.cu || echo "filler build failed"
rm -rf "$work/$label"
"$work/filler" "$work/$label" 580 "${FILL_BLOCKS:-132}" "${FILL_US:-1000}" > "$work/$label.filler" 2>&1 & filler=$!
t0=$(date +%s.%N)
timeout 560 "$bin" run sweeps/threads_1_512.toml --output "$work/$label" --cache "$work/cache" --prestart 1 -q > "$work/$label.log" 2>&1
rc=$?
echo "$label: rc=$rc wall_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")"
kill $filler; wait $filler 2>/dev/null; tail -2 "$work/$label.filler"
tail -5 "$work/$label.log"
"$bin" compare tests/fixtures/h100/threads_1_512 "$work/$label" 2>&1 | tail -25
(cd "$work" && tar czf "$out/$label.tgz" "$label/results.csv" "$label/controls.csv" "$label/manifest.json")
