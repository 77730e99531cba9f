#!/usr/bin/env bash
# Several GPUs of one host (issue 6): half of sweeps/threads_1_512.toml (every 2nd point, 256
# points), built once into a shared cache, then run warm on one GPU and on every GPU
# (--gpus all --split points), side by side. Usage: bench/gpus.sh SWEEP_BINARY OUT_DIR
set -euo pipefail
bin=$(realpath "$1"); out=$(realpath "$2")
spec=sweeps/threads_1_512.toml; sel=(--shard 0/2 --split points)
export PATH=$PATH:/usr/local/cuda/bin
now() { date +%s.%N; }
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; echo "cores: $(nproc)"; } > "$out/gpus.txt"
t0=$(now); "$bin" build "$spec" "${sel[@]}" --output o --cache c >> "$out/gpus.txt"; t1=$(now)
"$bin" run "$spec" "${sel[@]}" --output one --cache c --no-analyze -q >> "$out/gpus.txt"; t2=$(now)
"$bin" run "$spec" "${sel[@]}" --gpus all --output all --cache c --no-analyze -q >> "$out/gpus.txt"; t3=$(now)
cp one/threads_1_512/*/results.csv "$out/one_gpu.csv"; cp all/threads_1_512/*/results.csv "$out/all_gpus.csv"
python3 -c "import sys; a,b,c,d=map(float,sys.argv[1:]); print(f'build {b-a:.1f} s; one GPU {c-b:.1f} s; all GPUs {d-c:.1f} s; speed-up {(c-b)/(d-c):.2f}x')" $t0 $t1 $t2 $t3 >> "$out/gpus.txt"
cat "$out/gpus.txt"
