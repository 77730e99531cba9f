#!/usr/bin/env bash
# Several GPUs of one host (issues 6 and 20): the whole of sweeps/threads_1_512.toml (512 points) on
# one GPU and on every GPU (--gpus all --split points), side by side on one host:
#   cold - each with an empty build cache of its own (builds and runs overlap, as overnight);
#   warm - again from those caches (runs alone: what the GPUs add).
# Then `sweep compare` of the curves: every value of a two-GPU run against the one-GPU run of the same
# cache state, `same` when |B/A - 1| <= u_A + u_B (each side's reported uncertainty, between-process
# b from its control re-runs included); one GPU cold against one GPU warm gives the same count for two
# runs on one GPU.
# Usage: bench/gpus.sh SWEEP_BINARY OUT_DIR [WORK_DIR]
# GPUS_RUNS="one_cold all_cold" runs a subset (the four runs take longer than one device command may:
# run the rest in a second command inside the machine's warm window, with the same WORK_DIR); the
# speed-ups and comparisons are printed once all four are in WORK_DIR.
set -euo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); work=${3:-$out/work}
mkdir -p "$work"; work=$(realpath "$work")
spec=$(realpath sweeps/threads_1_512.toml)
export PATH=$PATH:/usr/local/cuda/bin
now() { date +%s.%N; }
log="$work/gpus.txt"
[[ -f $log ]] || { nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; echo "cores: $(nproc)"; } > "$log"
for run in ${GPUS_RUNS:-one_cold all_cold one_warm all_warm}; do
  args=(); [[ $run == all* ]] && args=(--gpus all --split points)
  cache=$work/cache_${run%_*}
  t0=$(now)
  (cd "$work" && "$bin" run "$spec" "${args[@]}" --output "$run" --cache "$cache" --no-analyze -q) >> "$log" 2>&1
  took=$(python3 -c "print(f'{$(now) - $t0:.1f}')")
  echo "$run: $took s" >> "$log"
  echo "$took" > "$work/$run.s"
done
if [[ -f $work/all_warm.s && -f $work/one_cold.s ]]; then
  oc=$(cat "$work/one_cold.s"); ac=$(cat "$work/all_cold.s"); ow=$(cat "$work/one_warm.s"); aw=$(cat "$work/all_warm.s")
  python3 - "$oc" "$ac" "$ow" "$aw" >> "$log" <<'EOF'
import sys
oc, ac, ow, aw = map(float, sys.argv[1:])
print(f"one GPU: cold {oc:.1f} s, warm {ow:.1f} s; all GPUs: cold {ac:.1f} s, warm {aw:.1f} s")
print(f"warm speed-up: {ow / aw:.2f}")
print(f"cold speed-up: {oc / ac:.2f}")
EOF
  run_dir() { ls -d "$work/$1"/threads_1_512/*/ | head -1; }
  for pair in "one_warm all_warm" "one_cold all_cold" "one_cold one_warm"; do
    set -- $pair
    "$bin" compare "$(run_dir "$1")" "$(run_dir "$2")" --out "$work/compare_${1}_$2" > "$work/compare_${1}_$2.log" 2>&1
    python3 - "$work/compare_${1}_$2/compare.csv" "$1" "$2" >> "$log" <<'EOF'
import csv, sys
from collections import defaultdict
n, same = defaultdict(int), defaultdict(int)
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["verdict"] in ("same", "faster", "slower"):
        n[r["metric"]] += 1
        same[r["metric"]] += r["verdict"] == "same"
worst = min(n, key=lambda m: same[m] / n[m])
print(f"{sys.argv[3]} vs {sys.argv[2]}: values within both sides' uncertainty: "
      + ", ".join(f"{m[:-len('_mflops')]} {same[m] / n[m]:.1%}" for m in n))
print(f"{sys.argv[3]} vs {sys.argv[2]}: worst series {worst} {same[worst] / n[worst]:.1%}, "
      f"all {sum(same.values()) / sum(n.values()):.1%}")
EOF
  done
fi
mkdir -p "$out"
for f in "$work"/*_*/threads_1_512/*/results.csv; do
  run=${f#"$work"/}; run=${run%%/*}; cp "$f" "$out/$run.csv"
  [[ -f ${f%results.csv}controls.csv ]] && cp "${f%results.csv}controls.csv" "$out/$run.controls.csv"
done
cp "$log" "$out/gpus.txt"
cat "$log"
