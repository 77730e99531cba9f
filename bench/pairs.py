#!/usr/bin/env python3
"""Every two runs of OUT_DIR/ab_data/<label>.csv (bench/cold_ab.sh, bench/placement_ab.sh) side by side:
for each pair, over the points both measured, |a - b| / mean(a, b) of every series; prints the worst
series' p95 and the largest difference (with its series and thread count).
Usage: bench/pairs.py OUT_DIR   (or a folder of <label>.csv files: bench/cold_ab_data/after)"""
import csv, glob, itertools, os, re, sys

runs = {}
for f in sorted(glob.glob(f"{sys.argv[1]}/ab_data/*.csv") or glob.glob(f"{sys.argv[1]}/*.csv")):
    runs[os.path.basename(f)[:-4]] = {r["point_id"]: r for r in csv.DictReader(open(f, newline=""))}


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


print(f"{'a':10s} {'b':10s} {'p95 (worst series)':>24s} {'max':>8s}  where")
for a, b in itertools.combinations(runs, 2):
    ra, rb = runs[a], runs[b]
    series = [c[:-7] for c in next(iter(ra.values())) if c.endswith("_mflops") and not re.search("_(median|stddev|min|max)_mflops$", c)]
    worst_p95, worst = (0, ""), (0, "")
    for s in series:
        d = []
        for pid, x in ra.items():
            y = rb.get(pid)
            if y and x[f"{s}_mflops"] and y[f"{s}_mflops"]:
                u, v = float(x[f"{s}_mflops"]), float(y[f"{s}_mflops"])
                d.append((abs(u - v) / ((u + v) / 2), f"{s} t={x['threads']}"))
        if not d:
            continue
        p = q([e[0] for e in d], 0.95)
        if p > worst_p95[0]:
            worst_p95 = (p, s)
        m = max(d)
        if m[0] > worst[0]:
            worst = m
    print(f"{a:10s} {b:10s} {100*worst_p95[0]:6.2f}% {worst_p95[1]:>16s} {100*worst[0]:7.2f}%  {worst[1]}")
