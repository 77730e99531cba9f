#!/usr/bin/env python3
"""Checks the control re-runs' between-process spread against `repeat` (issue 10).

Reads a run of threads 17..80 with `repeat = 3` (every point in three processes; passes/pass-*.csv) and the
committed full thread sweep's control re-runs (bench/truth_data/full), and prints per series: the relative
standard deviation of one process's value pooled over the points (from the three processes of each point), its
95 % half-width (x 1.96), the median `repeat_spread`, and the controls' b of the full run (as bench/truth.py
computes it). Usage: python3 bench/truth_repeat.py bench/truth_data"""
import csv, glob, math, os, statistics as st, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_spread import own_b, with_floor  # noqa: E402

work = sys.argv[1] if len(sys.argv) > 1 else "bench/truth_data"
rep = f"{work}/repeat3_17_80"
rows = list(csv.DictReader(open(f"{rep}/results.csv", newline="")))
passes = [{r["threads"]: r for r in csv.DictReader(open(p, newline=""))} for p in sorted(glob.glob(f"{rep}/passes/pass-*.csv"))]
ms = [c[:-7] for c in rows[0] if c.endswith("_mflops") and not any(p in c for p in ("_median_", "_min_", "_max_", "_stddev_"))]

# The controls' b of the committed full run, computed as bench/truth.py does.
full_dir = glob.glob(f"{work}/full/*/*/")[0]
first = {r["point_id"]: r for r in csv.DictReader(open(full_dir + "results.csv", newline=""))}
ctl = list(csv.DictReader(open(full_dir + "controls.csv", newline="")))
b = with_floor({
    m: own_b([math.log(float(c[f"{m}_mflops"]) / float(first[c["point_id"]][f"{m}_mflops"])) for c in ctl])[1]
    for m in ms
})

print(f"repeat = 3 over threads 17..80: {len(passes)} passes of {[len(p) for p in passes]} points")
print(f"{'series':<18} {'sd of one process':>18} {'95 % (1.96 sd)':>15} {'median repeat_spread':>21} {'controls b (full)':>18}")
for m in ms:
    var = []
    for t in passes[0]:
        v = [float(p[t][f"{m}_mflops"]) for p in passes if t in p and p[t]["status"] in ("ok", "noisy", "unstable")]
        if len(v) == 3:
            lv = [math.log(x) for x in v]
            mu = sum(lv) / 3
            var.append(sum((x - mu) ** 2 for x in lv) / 2)
    sd = math.sqrt(sum(var) / len(var))
    spread = st.median(float(r[f"{m}_repeat_spread"]) for r in rows)
    print(f"{m:<18} {sd:18.3%} {1.96 * sd:15.3%} {spread:21.3%} {b[m]:18.3%}")
