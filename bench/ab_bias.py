#!/usr/bin/env python3
"""Does design B move the numbers of design A? For OUT_DIR/ab_data/<A>_<n>.csv and <B>_<n>.csv (bench/fill_ab.sh):
per series, the median and p95 of |x - y| / mean(x, y) within a design (A_1 vs A_2, B_1 vs B_2) and across
(every A run against every B run), and the median signed difference (B - A) / A across: a design that moves a
number shows as a cross-design difference larger than the within-design ones, or a signed median away from 0.
Usage: bench/ab_bias.py OUT_DIR A B   (or a folder of <label>.csv files: bench/fill_ab_data)"""
import csv, glob, os, re, statistics as st, sys

out, A, B = sys.argv[1:4]
runs = {os.path.basename(f)[:-4]: {r["point_id"]: r for r in csv.DictReader(open(f, newline=""))}
        for f in sorted(glob.glob(f"{out}/ab_data/*.csv") or glob.glob(f"{out}/*.csv"))}
a_runs = [k for k in runs if k.startswith(A + "_")]
b_runs = [k for k in runs if k.startswith(B + "_")]
first = next(iter(next(iter(runs.values())).values()))
series = [c[:-7] for c in first if c.endswith("_mflops") and not re.search("_(median|stddev|min|max)_mflops$", c)]


def diffs(x, y, s, signed=False):
    d = []
    for pid, r in runs[x].items():
        q = runs[y].get(pid)
        if q and r[f"{s}_mflops"] and q[f"{s}_mflops"]:
            u, v = float(r[f"{s}_mflops"]), float(q[f"{s}_mflops"])
            d.append((v - u) / u if signed else abs(u - v) / ((u + v) / 2))
    return d


def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


print(f"{'series':18s} {'within ' + A:>16s} {'within ' + B:>16s} {'across':>16s} {'signed ' + B + '-' + A:>12s}")
print(f"{'':18s} {'median/p95':>16s} {'median/p95':>16s} {'median/p95':>16s} {'median':>12s}")
worst = (0, "")
for s in series:
    wa = diffs(a_runs[0], a_runs[1], s) if len(a_runs) > 1 else []
    wb = diffs(b_runs[0], b_runs[1], s) if len(b_runs) > 1 else []
    ac = [d for x in a_runs for y in b_runs for d in diffs(x, y, s)]
    sg = [d for x in a_runs for y in b_runs for d in diffs(x, y, s, signed=True)]
    f = lambda v: f"{100 * st.median(v):.2f}/{100 * p95(v):.2f}%" if v else "-"
    print(f"{s:18s} {f(wa):>16s} {f(wb):>16s} {f(ac):>16s} {100 * st.median(sg):+11.2f}%")
samples = {k: sum(int(r[f"{s}_samples"]) for r in runs[k].values() for s in series if r[f"{s}_samples"]) for k in runs}
print("samples per run: " + ", ".join(f"{k} {v}" for k, v in samples.items()))
print("sum of run_s:    " + ", ".join(f"{k} {sum(float(r['run_s']) for r in runs[k].values()):.1f} s" for k in runs))
