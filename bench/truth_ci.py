#!/usr/bin/env python3
"""Does a value's reported CI hold what a second run of the same point gives? (issue 10, session 11)

For two runs of one sweep (run folders or results.csv files), per series: how far the values of the
same point differ (median, p95, max of |a/b - 1|) and how often that exceeds what the two CIs allow,
hypot(rel_ci_a, rel_ci_b) (about 5 % of the points when each rel_ci is an honest 95 % half-width
and nothing else differs between the runs), with the ratio diff / hypot at p95. Also the median SM
clock reading of each run: a clock-bound value moves by their ratio, which no CI inside a run sees.
Where a metric's samples are quiet (shared memory: rel_ci 0.01-0.1 %), what differs between
processes (the SM clock, about 0.25 %) dominates: that is the between-process b that the control
re-runs add to a point's uncertainty (sweep compare, bench/truth.py), not what rel_ci is for; the
series where sampling noise dominates (the global grid stores) show whether rel_ci is honest.
Usage: bench/truth_ci.py RUN_A RUN_B [x axis, default threads]"""
import csv, glob, math, os, statistics as st, sys


def table(path):
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(path, "**", "results.csv"), recursive=True))
        if len(found) != 1:
            sys.exit(f"{path}: {len(found)} results.csv below it (want one)")
        path = found[0]
    return list(csv.DictReader(open(path, newline="")))


def clock(rows):
    mhz = [float(v) for r in rows for k, v in r.items() if k.endswith("_sm_mhz") and v]
    return st.median(mhz) if mhz else float("nan")


a, b = table(sys.argv[1]), table(sys.argv[2])
x = sys.argv[3] if len(sys.argv) > 3 else "threads"
ka = {r[x]: r for r in a if r["status"] in ("ok", "noisy", "unstable")}
kb = {r[x]: r for r in b if r["status"] in ("ok", "noisy", "unstable")}
common = [k for k in ka if k in kb]
series = [c[: -len("_rel_ci")] for c in a[0] if c.endswith("_rel_ci")]
value = {s: next(c for c in a[0] if c.startswith(s + "_")) for s in series}  # the value comes first
print(f"{len(common)} points in both; SM clock (median reading): A {clock(a):.0f} MHz, B {clock(b):.0f} MHz")
print(f"{'series':<20} {'median':>7} {'p95':>7} {'max':>7}  beyond CIs  diff/CIs p95")
for s in series:
    col = value[s]
    d, ratio = [], []
    for k in common:
        va, vb = float(ka[k][col]), float(kb[k][col])
        ca, cb = float(ka[k][s + "_rel_ci"]), float(kb[k][s + "_rel_ci"])
        diff = abs(va / vb - 1)
        d.append(diff)
        ratio.append(diff / max(math.hypot(ca, cb), 1e-12))
    d.sort(), ratio.sort()
    at = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]  # noqa: E731
    beyond = sum(r > 1 for r in ratio) / len(ratio)
    print(f"{s:<20} {100 * at(d, 0.5):6.2f}% {100 * at(d, 0.95):6.2f}% {100 * d[-1]:6.2f}%  {100 * beyond:8.1f} %  {at(ratio, 0.95):10.2f}")
