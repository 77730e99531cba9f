#!/usr/bin/env bash
# On the GPU host, started in the background (setsid) because it outlasts one device command: the
# truth bench (bench/truth.sh: five runs of the thread sweep), then every other sweep
# (scripts/device-all.sh), one after another on the one GPU. Progress: WORK_DIR/*.log; WORK_DIR/done
# when finished. Usage: setsid scripts/device-session.sh SWEEP_BINARY WORK_DIR < /dev/null &
set -uo pipefail
bin=$(realpath "$1"); work=$(realpath -m "$2"); mkdir -p "$work"
export SWEEP_TRACE=1 TRUTH_WORK=$work/truth
bench/truth.sh "$bin" "$work" > "$work/truth.log" 2>&1
SWEEP_TRACE= scripts/device-all.sh "$bin" "$work" $(ls sweeps/*.toml | grep -v threads_1_512) > "$work/all.log" 2>&1
touch "$work/done"
