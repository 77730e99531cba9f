"""Compares two runs of the same points metric by metric (e.g. the one-GPU and all-GPU runs of
bench/gpus.sh). Usage: compare_gpus.py [A.csv B.csv [LABEL_A LABEL_B]]
(default: tests/fixtures/h200x2/one_warm.csv and all_warm.csv)."""
import csv, statistics as st, sys
from collections import Counter
d = "tests/fixtures/h200x2"
a_path, b_path = sys.argv[1:3] if len(sys.argv) > 2 else (f"{d}/one_warm.csv", f"{d}/all_warm.csv")
la, lb = sys.argv[3:5] if len(sys.argv) > 4 else ("one GPU", "two GPUs")
a = {r["point_id"]: r for r in csv.DictReader(open(a_path))}
b = [r for r in csv.DictReader(open(b_path)) if r["point_id"] in a]
print(f"points in both: {len(b)}; rows per GPU, {lb}:", dict(Counter(r["gpu_index"] for r in b)))
print(f"median run_s per point: {la} {st.median(float(r['run_s']) for r in a.values()):.3f} s, "
      f"{lb} {st.median(float(r['run_s']) for r in b):.3f} s")
metrics = [c for c in b[0] if c.endswith("_mflops") and "_median_" not in c and "_stddev_" not in c
           and "_min_" not in c and "_max_" not in c]
for c in metrics:
    diff = sorted(abs(float(r[c]) / float(a[r["point_id"]][c]) - 1) for r in b)
    print(f"{c:28s} |{lb} / {la} - 1|: median {st.median(diff):.4f}, 95th pct {diff[int(.95 * len(diff))]:.4f}, max {diff[-1]:.4f}")
