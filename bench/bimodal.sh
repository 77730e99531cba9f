#!/usr/bin/env bash
# The two-valued shared_nc_grid at 258-284 threads (issue 10; bench/truth.txt, 2026-11-24 evening run): the same
# program, run again and again, alone, with nvidia-smi sampling power, SM clock and the clock-event reasons
# every 20 ms. Prints one line per run: threads, run, value (MFlops), the program's own SM clock reading,
# and the nvidia-smi samples inside that run (mean power, min SM clock, event reasons seen).
# Usage: bench/bimodal.sh OUT_DIR [THREADS...] (default 258 264 272 300; REPS=8)
set -uo pipefail
out=$(realpath "$1"); shift; ts=${*:-258 264 272 300}
export PATH=$PATH:/usr/local/cuda/bin
w=$(mktemp -d)
for t in $ts; do
  mkdir -p "$w/$t"
  printf '#define THREADS %d\n#define ITERATIONS 8192\n#define ADDS 4\n#define BLOCKS_PER_SM 8\n' "$t" > "$w/$t/params.h"
  nvcc -O3 -arch=sm_90 -I"$w/$t" -Icuda/common -o "$w/$t/pg" cuda/pogorilyy/pogorilyy.cu &
done
wait
nvidia-smi --query-gpu=timestamp,power.draw.instant,clocks.sm,clocks_event_reasons.active,temperature.gpu \
  --format=csv,noheader,nounits -lms 20 > "$w/smi.csv" 2> "$w/smi.err" &
smi=$!
sleep 1
for r in $(seq 1 "${REPS:-8}"); do
  for t in $ts; do
    t0=$(date +%s.%N); "$w/$t/pg" > "$w/$t/out$r.txt" 2>&1; t1=$(date +%s.%N)
    echo "$t $r $t0 $t1 $(grep -o 'metric=shared_nc_grid .*' "$w/$t/out$r.txt" | grep -o 'value=[0-9.]*\|sm_mhz=[0-9]*' | tr '\n' ' ')"
  done
done > "$w/runs.txt"
kill $smi
cp "$w/runs.txt" "$w/smi.csv" "$out/"
python3 - "$w/runs.txt" "$w/smi.csv" <<'PY'
import sys, datetime
smi = []
for l in open(sys.argv[2]):
    f = [x.strip() for x in l.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        smi.append((t, float(f[1]), float(f[2]), f[3], f[4]))
    except (ValueError, IndexError):
        pass
print("threads run value_mflops sm_mhz(program) | smi: samples mean_W max_W min_sm_mhz reasons")
for l in open(sys.argv[1]):
    v = l.split()
    t, r, t0, t1 = v[0], v[1], float(v[2]), float(v[3])
    kv = dict(x.split("=") for x in v[4:])
    s = [x for x in smi if t0 <= x[0] <= t1]
    reasons = sorted({x[3] for x in s})
    if s:
        print(f"{t} {r} {float(kv.get('value', 'nan')):.0f} {kv.get('sm_mhz')} | {len(s)} {sum(x[1] for x in s) / len(s):.0f} "
              f"{max(x[1] for x in s):.0f} {min(x[2] for x in s):.0f} {' '.join(reasons)}")
    else:
        print(f"{t} {r} {float(kv.get('value', 'nan')):.0f} {kv.get('sm_mhz')} | no samples")
PY
