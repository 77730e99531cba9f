#!/usr/bin/env python3
"""Reads bench/placement_ab.sh's runs (OUT_DIR/ab_data/p<P>g<G>_<n>.csv) and prints, per design and
series, how far the two processes' values of a point differ: |a - b| / mean(a, b) over the points
measured in both (median, p95, max), the placements' spread (median), and the programs' run time.
Usage: bench/placement_ab.py OUT_DIR"""
import csv, glob, os, re, statistics as st, sys

out = sys.argv[1]
runs = {}
for f in sorted(glob.glob(f"{out}/ab_data/*.csv")):
    m = re.match(r"(p\d+g\d+)_(\d+)\.csv", os.path.basename(f))
    if m:
        runs.setdefault(m.group(1), {})[m.group(2)] = {r["point_id"]: r for r in csv.DictReader(open(f, newline=""))}


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


print(f"{'design':10s} {'series':18s} {'n':>4s} {'median':>8s} {'p95':>8s} {'max':>8s} {'spread':>8s}")
worst = {}
for design, pair in sorted(runs.items(), key=lambda kv: (int(kv[0][1:].split("g")[0]), int(kv[0].split("g")[1]))):
    if len(pair) < 2:
        continue
    a, b = pair["1"], pair["2"]
    series = [c[: -len("_mflops")] for c in next(iter(a.values())) if c.endswith("_mflops") and not re.search("_(median|stddev|min|max)_mflops$", c)]
    for s in series:
        d, spread = [], []
        for pid, ra in a.items():
            rb = b.get(pid)
            if not rb or not ra[f"{s}_mflops"] or not rb[f"{s}_mflops"]:
                continue
            x, y = float(ra[f"{s}_mflops"]), float(rb[f"{s}_mflops"])
            d.append(abs(x - y) / ((x + y) / 2))
            spread.append(float(ra[f"{s}_spread"]))
        print(f"{design:10s} {s:18s} {len(d):4d} {100*st.median(d):7.2f}% {100*q(d, .95):7.2f}% {100*max(d):7.2f}% {100*st.median(spread):7.2f}%")
        w = worst.setdefault(design, [0, 0])
        w[0], w[1] = max(w[0], q(d, 0.95)), max(w[1], max(d))
    t = [sum(float(r["run_s"]) for r in run.values()) for run in (a, b)]
    print(f"{design:10s} programs' run time: {t[0]:.1f} s, {t[1]:.1f} s")
print()
for design, (p95, mx) in worst.items():
    print(f"{design}: worst series p95 {100*p95:.2f}%, max {100*mx:.2f}%")
