"""Compares the one-GPU and all-GPU runs of bench/gpus.sh point by point (tests/fixtures/h200x2)."""
import csv, statistics as st, sys
from collections import Counter
d = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/h200x2"
one = {r["point_id"]: r for r in csv.DictReader(open(f"{d}/one_gpu.csv"))}
both = list(csv.DictReader(open(f"{d}/all_gpus.csv")))
print("rows per GPU, all-GPU run:", dict(Counter(r["gpu_index"] for r in both)))
print(f"median run_s per point: one GPU {st.median(float(r['run_s']) for r in one.values()):.3f} s, "
      f"two GPUs {st.median(float(r['run_s']) for r in both):.3f} s")
metrics = [c for c in both[0] if c.endswith("_mflops") and "_median_" not in c and "_stddev_" not in c
           and "_min_" not in c and "_max_" not in c]
for c in metrics:
    diff = sorted(abs(float(r[c]) / float(one[r["point_id"]][c]) - 1) for r in both)
    print(f"{c:28s} |two GPUs / one GPU - 1|: median {st.median(diff):.4f}, 95th pct {diff[int(.95 * len(diff))]:.4f}, max {diff[-1]:.4f}")
