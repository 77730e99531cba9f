#!/usr/bin/env bash
# Pipeline benchmark (issue 5), side by side in one run on the GPU host:
#   naive  : the serial loop of the 2010 method: header -> nvcc -> run, one point after another
#   cold   : sweep run with an empty build cache (parallel builds, runs one at a time)
#   cold without prestart: the same, each program started only after the previous ended
#   warm   : sweep run again with the full cache
# on the same point set of sweeps/threads_1_512.toml: every SHARDS-th point (default 4: 128 points),
# since the naive loop over all 512 points takes longer than one device command may run.
# Usage: bench/pipeline.sh SWEEP_BINARY OUT_DIR [SHARDS]
set -euo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); shards=${3:-4}
spec=sweeps/threads_1_512.toml
export PATH=$PATH:/usr/local/cuda/bin
work=$(mktemp -d)
now() { date +%s.%N; }
calc() { python3 -c "print($1)"; }
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(nproc) cores"
  echo "nvcc: $(nvcc --version | grep release)"
  echo "spec: $spec, points: every ${shards}th (--shard 0/$shards --split points)"
} > "$out/pipeline.txt"

# The point indices of the shard, in sweep order.
mapfile -t idx < <("$bin" plan "$spec" --shard "0/$shards" --split points | awk 'NR>1 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9a-f]+$/ {print $1}')
n=${#idx[@]}
export SWEEP_WARMUP=2 SWEEP_MIN_SAMPLES=10 SWEEP_MIN_TIME_MS=5 SWEEP_MAX_TIME_MS=200 SWEEP_TARGET_REL_CI=0.01 SWEEP_FLUSH_L2=0

# naive: one point after another
t0=$(now); : > "$work/naive_times"
for i in "${idx[@]}"; do
  d=$work/naive/$i; mkdir -p "$d"
  "$bin" render "$spec" --point "$i" | grep -v '^// ----' > "$d/params.h"
  a=$(now); nvcc -arch=sm_90 -O3 -I"$d" -Icuda/common -o "$d/bench" cuda/pogorilyy/pogorilyy.cu; b=$(now)
  (cd "$d" && ./bench > stdout.txt); c=$(now)
  echo "$a $b $c" >> "$work/naive_times"
done
naive=$(calc "$(now) - $t0")
read -r nvcc_s run_s < <(python3 -c "import sys; t=[list(map(float,l.split())) for l in open(sys.argv[1])]; print(round(sum(b-a for a,b,c in t),3), round(sum(c-b for a,b,c in t),3))" "$work/naive_times")

# cold and warm: the same points through sweep
t0=$(now); "$bin" run "$spec" --shard "0/$shards" --split points --output "$work/cold" --cache "$work/cache" --no-analyze -q > "$out/cold.txt"; cold=$(calc "$(now) - $t0")
t0=$(now); "$bin" run "$spec" --shard "0/$shards" --split points --output "$work/cold-np" --cache "$work/cache-np" --no-analyze --no-prestart -q > "$out/cold_noprestart.txt"; cold_np=$(calc "$(now) - $t0")
t0=$(now); "$bin" run "$spec" --shard "0/$shards" --split points --output "$work/warm" --cache "$work/cache" --no-analyze -q > "$out/warm.txt"; warm=$(calc "$(now) - $t0")
sum_col() { python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(round(sum(float(x[sys.argv[2]]) for x in r),3), len(r), sum(x['status'] in ('ok','noisy') for x in r))" "$1" "$2"; }
read -r warm_runs warm_rows warm_ok < <(sum_col "$(ls -d $work/warm/threads_1_512/*/results.csv)" run_s)
read -r cold_runs cold_rows cold_ok < <(sum_col "$(ls -d $work/cold/threads_1_512/*/results.csv)" run_s)
cp "$(ls -d $work/cold/threads_1_512/*/results.csv)" "$out/cold_results.csv"
{
  echo "points: $n (cold rows $cold_rows, $cold_ok ok/noisy; warm rows $warm_rows, $warm_ok ok/noisy)"
  printf "naive serial loop : %8.1f s  (nvcc %.1f s, program %.1f s)\n" "$naive" "$nvcc_s" "$run_s"
  printf "sweep run, cold   : %8.1f s  (sum of program runs %.1f s)\n" "$cold" "$cold_runs"
  printf "cold, --no-prestart: %7.1f s\n" "$cold_np"
  printf "sweep run, warm   : %8.1f s  (sum of program runs %.1f s)\n" "$warm" "$warm_runs"
  printf "naive / cold      : %8.2fx   (target >= 4)\n" "$(calc "$naive / $cold")"
  printf "naive / cold, no prestart: %.2fx\n" "$(calc "$naive / $cold_np")"
  printf "warm / sum of runs: %8.2fx   (target <= 1.2)\n" "$(calc "$warm / $warm_runs")"
  # issue 19's lines, exactly in its format (targets: cold/warm <= 1.15, naive/cold >= 20)
  printf "cold/warm: %.2f\n" "$(calc "$cold / $warm")"
  printf "naive/cold: %.2f\n" "$(calc "$naive / $cold")"
} >> "$out/pipeline.txt"
cat "$out/pipeline.txt"
