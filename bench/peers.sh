#!/usr/bin/env bash
# Kernel Tuner beside sweep (issue 36), on the GPU host, in one command:
#   kt     : bench/peers_kt.py tunes each of KERNELS over block sizes 1..512 (Kernel Tuner, cupy backend,
#            brute force, defaults) twice: cold (an empty CuPy kernel cache, CUPY_CACHE_DIR) and warm (the
#            same cache again); the process's wall time each, and each block size's time (kt_<kernel>_<cold|warm>.csv)
#   ab     : sweep on every 8th point of sweeps/threads_1_512.toml (64 points, the same 12 kernels), the timing
#            core's defaults (old: SWEEP_SAMPLE_GROUPS=0 SWEEP_CENTRAL=0) with an empty build cache, then with both
#            experiments on (new) and with sample groups alone (groups), warm: wall time, the programs' time, and
#            `sweep compare` against the committed fixtures (tests/fixtures/h100/threads_1_512, threads_shuffled).
#            AB=0 skips it. (Run 2026-11-26 when both experiments were on by default: bench/peers_data/peers_run.txt.)
# The sweep side of bench/peers.txt (the whole thread sweep, cold and warm) comes from bench/pipeline.sh; bench/peers.py
# puts the two together. Wheels: kernel_tuner and what the GPU host lacks (jsonschema, its three, xmltodict,
# python-constraint2), installed with pip --no-index. Usage: bench/peers.sh SWEEP_BINARY OUT_DIR WHEEL_DIR
set -uo pipefail
bin=$(realpath "$1"); out=$(realpath "$2"); whl=$(realpath "$3")
export PATH=$PATH:/usr/local/cuda/bin
work=${PEERS_WORK:-/tmp/peers}; mkdir -p "$work"
now() { date +%s.%N; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$work/site" "$whl"/*.whl || exit 1
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader), $(nproc) cores"
  echo "nvcc: $(nvcc --version | grep release)"
  echo "python: $(python3 --version), cupy $(python3 -c 'import cupy; print(cupy.__version__)'), kernel_tuner $(PYTHONPATH=$work/site python3 -c 'import importlib.metadata as m; print(m.version("kernel_tuner"))')"
} > "$out/peers_run.txt"
for k in ${KERNELS:-shared_nc_grid global_all_grid}; do
  cache=$work/cupy_$k; rm -rf "$cache"
  for pass in cold warm; do
    t0=$(now)
    CUPY_CACHE_DIR=$cache PYTHONPATH=$work/site python3 bench/peers_kt.py "$k" "$out/kt_${k}_$pass.csv" > "$work/kt_${k}_$pass.log" 2>&1 || { tail -20 "$work/kt_${k}_$pass.log"; cp "$work/kt_${k}_$pass.log" "$out/"; }
    echo "kt $k $pass process_s $(python3 -c "print(round($(now) - $t0, 3))") $(grep ^tune_kernel "$work/kt_${k}_$pass.log")" >> "$out/peers_run.txt"
  done
done
cat "$out/peers_run.txt"
[ "${AB:-1}" = 0 ] && exit 0
spec=sweeps/threads_1_512.toml
ab() {  # label, env..., then sweep run's extra options
  local label=$1; shift
  local t0; t0=$(now)
  env "$@" "$bin" run "$spec" --shard 0/8 --split points --output "$work/$label" --cache "$work/cache" --no-analyze -q > /dev/null 2> "$work/$label.err"
  local wall; wall=$(python3 -c "print(round($(now) - $t0, 2))")
  local csv; csv=$(ls "$work/$label"/threads_1_512/*/results.csv)
  cp "$csv" "$out/ab_$label.csv"
  echo "ab $label wall_s $wall programs_s $(python3 -c "import csv,sys; print(round(sum(float(r['run_s']) for r in csv.DictReader(open(sys.argv[1]))),2))" "$csv")" >> "$out/peers_run.txt"
  for fx in threads_1_512 threads_shuffled; do
    "$bin" compare tests/fixtures/h100/$fx "$csv" 2>&1 | grep -E "SM clock|values compared" | sed "s/^/ab $label vs $fx: /" >> "$out/peers_run.txt"
  done
}
rm -rf "$work/cache"
ab old SWEEP_SAMPLE_GROUPS=0 SWEEP_CENTRAL=0
ab new SWEEP_SAMPLE_GROUPS=1 SWEEP_CENTRAL=1
ab groups SWEEP_SAMPLE_GROUPS=1 SWEEP_CENTRAL=0
grep "^ab" "$out/peers_run.txt"
