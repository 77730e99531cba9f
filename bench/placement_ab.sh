#!/usr/bin/env bash
# Placement designs side by side (issue 10), on the GPU host: how far a point's value moves between two
# processes (two sweeps of the same points) when each value is the median over
#   P placements spread over G different 2 MiB pages (SWEEP_PLACEMENTS=P SWEEP_PLACEMENT_PAGES=G).
# Points: the thread sweep at threads 17..144 (where the global-store series spread most), built once
# (`sweep build`), then every design measured twice, in the order A B C ... C B A so that a slow drift of
# the GPU falls on every design alike. Usage: bench/placement_ab.sh SWEEP_BINARY OUT_DIR "P:G P:G ..."
# Then: python3 bench/placement_ab.py OUT_DIR
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); designs=${3:-"8:1 8:8 16:16"}
export PATH=$PATH:/usr/local/cuda/bin
work=${AB_WORK:-/tmp/ab}; mkdir -p "$work" "$out/ab_data"
sed 's/^range = \[1, 512\]/range = [17, 144]/' sweeps/threads_1_512.toml > sweeps/ab_17_144.toml
now() { date +%s.%N; }
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader), $(nproc) cores"
  "$bin" build sweeps/ab_17_144.toml --output "$work/build" --cache "$work/cache" > "$work/build.log" 2>&1
  echo "build rc=$?"
  order="$designs $(echo $designs | tr ' ' '\n' | tac | tr '\n' ' ')"
  declare -A seen
  for d in $order; do
    n=$(( ${seen[$d]:-0} + 1 )); seen[$d]=$n
    label="p${d%%:*}g${d##*:}_$n"
    t0=$(now)
    SWEEP_PLACEMENTS=${d%%:*} SWEEP_PLACEMENT_PAGES=${d##*:} "$bin" run sweeps/ab_17_144.toml \
      --output "$work/$label" --cache "$work/cache" --no-analyze -q > "$work/$label.log" 2>&1
    rc=$?
    echo "$label wall_s=$(python3 -c "print(round($(now) - $t0, 1))") rc=$rc"
    cp "$(find "$work/$label" -name results.csv | head -n 1)" "$out/ab_data/$label.csv"
  done
  echo "end: $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
} | tee "$out/ab_runs.txt"
rm -f sweeps/ab_17_144.toml
