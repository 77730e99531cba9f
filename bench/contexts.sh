#!/usr/bin/env bash
# On a GPU host: how many CUDA processes per second can the host start and end? L loops run at
# once (loop i on GPU i % GPUs), each starting bench/contexts.cu M times in a row; prints
# processes per second and the median phases, for a few environment variants.
# Usage: bench/contexts.sh OUT_DIR
set -uo pipefail
out=$(realpath "$1"); export PATH=$PATH:/usr/local/cuda/bin
nvcc -arch=sm_90 -O2 -o ctxp bench/contexts.cu || exit 1
ngpu=$(nvidia-smi -L | wc -l)
mapfile -t uuid < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
now() { date +%s.%N; }
probe() {  # label L M use_uuid arg [env...]
  local label=$1 l=$2 m=$3 byuuid=$4 arg=$5; shift 5
  local t0; t0=$(now)
  for i in $(seq 0 $((l - 1))); do
    g=$((i % ngpu)); [ "$byuuid" = 1 ] && g=${uuid[$g]}
    ( for j in $(seq "$m"); do env CUDA_VISIBLE_DEVICES="$g" "$@" ./ctxp $arg; done > "tmp.$i" ) &
  done; wait
  local t1; t1=$(now)
  cat tmp.* | python3 -c "
import sys,statistics as s
rows=[dict(kv.split('=') for kv in l.split()) for l in sys.stdin if 'total_ms' in l]
n=$l*$m; wall=$t1-$t0
print('$label'.ljust(40), f'{n/wall:5.2f} processes/s ({n} in {wall:.1f} s);', ' '.join(f'{k}={s.median(float(r[k]) for r in rows):6.1f}' for k in rows[0]))"
  rm -f tmp.*
}
{
  for l in 1 2 4; do
    probe "$l loop(s), baseline" $l 12 0 ""
    probe "$l loop(s), by UUID" $l 12 1 ""
    probe "$l loop(s), _exit" $l 12 0 fastexit
    probe "$l loop(s), MAX_CONNECTIONS=1" $l 12 0 "" CUDA_DEVICE_MAX_CONNECTIONS=1
    probe "$l loop(s), MAX_CONNECTIONS=1 + _exit" $l 12 0 fastexit CUDA_DEVICE_MAX_CONNECTIONS=1
  done
} | tee "$out/ctx.txt"
