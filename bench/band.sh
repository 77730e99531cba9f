#!/usr/bin/env bash
# The two-valued band of shared_nc_grid (threads 258..284; bench/truth.txt) inside sweeps: is the low value
# tied to a neighbour creating its CUDA context just before the metric? The thread sweep at threads 240..300,
# built once, then one run per label of LABELS (default: RUNS runs with prestart, pre1.., and NP with
# --no-prestart, nop1..; a label new* runs with SWEEP_SESSION_LOCK=1: the program holds the measure lock
# from its gate to its exit; a label hold* runs without prestart beside bench/holder.cu (a process that keeps the
# driver open through cudaGetDeviceCount, no context), hini* beside it after only cuInit, hs* as hini* with SETTLE_MS (150) between a program's exit and the next start (SWEEP_SETTLE_MS), hctx* beside it with an idle context; others with the default, the lock around context creation and each measure()), SWEEP_TRACE=1; every point's trace (stderr.txt, harness.trace) and results.csv
# come back (band.tgz) for bench/band.py. pre* labels pass --prestart 1 (the default before 2026-11-25 was 1, now 0).
# The labels rty* (clock retries) and setN* (settle gaps) of 2026-11-25 ran with the tree of commit 66d0ef4; hs* (SWEEP_SETTLE_MS)
# needs the tree of commit 0f18f4b, where the runner still reads it.
# fill*/fnop* (beside bench/filler.cu, a GPU kept busy between measurements) ran in sessions 16-17 (commit cc56b2f);
# removed once the whole-sweep test showed the state with the filler on (bench/band.txt).
# Usage: bench/band.sh SWEEP_BINARY OUT_DIR
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
export PATH=$PATH:/usr/local/cuda/bin
work=${BAND_WORK:-/tmp/band}; mkdir -p "$work" "$out"
sed 's/^range = \[1, 512\]/range = [240, 300]/' sweeps/threads_1_512.toml > sweeps/band.toml
echo "machine: $(nvidia-smi --query-gpu=name,driver_version,persistence_mode,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
"$bin" build sweeps/band.toml --cache "$work/cache" > "$work/build.log" 2>&1; echo "build rc=$?"
labels=${LABELS:-}
if [ -z "$labels" ]; then
  for i in $(seq 1 "${RUNS:-3}"); do labels="$labels pre$i"; done
  for i in $(seq 1 "${NP:-2}"); do labels="$labels nop$i"; done
fi
if [[ " $labels" == *" h"* ]]; then
  nvcc -O2 -arch=sm_90 -o "$work/holder" bench/holder.cu -ldl || echo "holder build failed"
fi
for label in $labels; do
  holder=
  case $label in
    hold*) "$work/holder" 600 > "$work/$label.holder" 2>&1 & holder=$! ;;
    hctx*) "$work/holder" 600 ctx > "$work/$label.holder" 2>&1 & holder=$! ;;
    hini*|hs*) "$work/holder" 600 init > "$work/$label.holder" 2>&1 & holder=$! ;;
  esac
  [ -n "$holder" ] && for _ in $(seq 100); do grep -q ready "$work/$label.holder" 2>/dev/null && break; sleep 0.05; done
  opt=(); [[ $label == nop* ]] && opt=(--no-prestart); [[ $label == pre* || $label == new* || $label == old* ]] && opt=(--prestart 1)
  session=0; [[ $label == new* ]] && session=1
  settle=; [[ $label == hs* ]] && settle=${SETTLE_MS:-150}
  t0=$(date +%s.%N)
  SWEEP_SETTLE_MS=$settle SWEEP_SESSION_LOCK=$session SWEEP_TRACE=1 "$bin" run sweeps/band.toml --output "$work/$label" --cache "$work/cache" --no-analyze -q "${opt[@]}" > "$work/$label.log" 2>&1
  rc=$?
  [ -n "$holder" ] && { kill "$holder"; wait "$holder" 2>/dev/null; }
  echo "$label wall_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))") rc=$rc"
done
echo "end: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
(cd "$work" && find $labels -name results.csv -o -name stderr.txt -o -name harness.trace | tar czf "$out/band.tgz" -T -)
rm -f sweeps/band.toml
