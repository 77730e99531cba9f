#!/usr/bin/env bash
# How `sweep analyze` and `sweep compare` scale with the rows of a run (issue 38 item 12): a
# synthetic run of N rows (axes x = 1..1000 and g = 0..N/1000-1, one metric stepping every 32
# x, a CI and a spread column; a manifest as `sweep run` writes it) and a second run B 1 % slower,
# at N = 10^5 and 10^6; then runs whose x has 10 values (x = 1..10): with g a number, analyze
# takes g as x (the numeric axis with the most values): 10 series of N/10 points; with g a
# category (`s0`, `s1`, ...), N/10 series of 10 points. Prints seconds (wall clock, and
# CPU time over all cores: on a shared machine the wall clock moves with the others' load) and peak
# memory.
# Usage: bench/read_scale.sh [SWEEP_BINARY...] > bench/read_scale.txt
# (default target/release/sweep; with several, e.g. a build before a change and one after, each
# is measured on the same runs, one after the other, so that they see the same load).
set -euo pipefail
if [ $# -eq 0 ]; then set -- target/release/sweep; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() { # gen DIR ROWS FACTOR [POINTS PER SERIES, default 1000] [g as text: "text"]
  python3 - "$@" <<'PY'
import json, os, sys
d, n, f = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
per = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
text = len(sys.argv) > 5 and sys.argv[5] == "text"
os.makedirs(d, exist_ok=True)
cols = ["point_id", "index", "x", "g", "status", "copy_gb_per_s", "copy_rel_ci", "copy_spread",
        "build_s", "run_s", "cached", "gpu_index", "gpu_name", "gpu_uuid", "error"]
with open(os.path.join(d, "results.csv"), "w") as out:
    out.write(",".join(cols) + "\n")
    for i in range(n):
        x, g = i % per + 1, i // per
        g = f"s{g}" if text else g
        v = f * (1000.0 - 20.0 * ((x - 1) // 32) + (i * 7919 % 101) / 1000.0)
        out.write(f"p{i:012x},{i},{x},{g},ok,{v:.4f},0.001,0.002,0.1,0.2,1,0,H100,u,\n")
m = {"sweep": "scale", "spec_path": "", "spec_hash": "", "spec": "bench = \"b\"\n", "bench": "b",
     "axes": ["x", "g"], "metrics": [{"name": "copy", "unit": "GB/s", "column": "copy_gb_per_s"}],
     "columns": cols, "dialect": "comma", "points_total": n, "point_ids": [], "shard": None,
     "split": "", "order": "", "seed": 0, "jobs": 1, "host": "", "git_commit": "", "command": [],
     "compiler": "", "compiler_version": "", "arch": None, "gpus_start": [], "gpus_end": [],
     "started": "", "finished": None, "state": "finished", "counts": {}}
json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
PY
}
measure() { # measure ROWS LABEL ARGS...: each binary in turn
  local rows=$1 label=$2
  shift 2
  for sweep in "${binaries[@]}"; do
    rm -rf "$tmp/out"
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$sweep" "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
    read -r s user sys kb < "$tmp/time"
    cpu=$(python3 -c "print($user + $sys)")
    printf '%-9s %-24s %-7s %8.1f s %8.1f s %8d MB\n' "$rows" "$label" "$(basename "$sweep")" "$s" "$cpu" "$((kb / 1024))"
  done
}
binaries=("$@")
for sweep in "${binaries[@]}"; do
  echo "# $(basename "$sweep"): $("$sweep" --version 2>/dev/null | head -1)"
done
echo "# $(nproc) cores, $(date -u +%F), load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# rows    command                  binary      time   cpu time  peak memory"
for n in ${SIZES:-100000 1000000}; do
  gen "$tmp/a$n" $n 1.0
  gen "$tmp/b$n" $n 0.99
  measure $n "analyze" analyze "$tmp/a$n" --out "$tmp/out"
  measure $n "compare" compare "$tmp/a$n" "$tmp/b$n"
  rm -rf "$tmp/a$n" "$tmp/b$n"
done
# x = 1..10 and g numeric: 10 long series along g (the rounds before called these "series of
# 10"); g a category: many short series, what a scan of the groups per row made quadratic.
for n in ${SHORT:-100000}; do
  gen "$tmp/s$n" $n 1.0 10
  gen "$tmp/t$n" $n 0.99 10
  measure $n "analyze (10 series on g)" analyze "$tmp/s$n" --out "$tmp/out"
  measure $n "compare (10 series on g)" compare "$tmp/s$n" "$tmp/t$n"
  rm -rf "$tmp/s$n" "$tmp/t$n"
  gen "$tmp/s$n" $n 1.0 10 text
  gen "$tmp/t$n" $n 0.99 10 text
  measure $n "analyze (series of 10)" analyze "$tmp/s$n" --out "$tmp/out"
  measure $n "compare (series of 10)" compare "$tmp/s$n" "$tmp/t$n"
  rm -rf "$tmp/s$n" "$tmp/t$n"
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
