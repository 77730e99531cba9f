#!/usr/bin/env python3
"""Compares the runs of bench/truth.sh (issue 10): for every series (metric) of the thread sweep, how
far a point's value moves between contexts, and whether it stays within its reported uncertainty.

A point's reported uncertainty u is max(rel_ci, spread / 2, repeat_spread / 2): the within-placement
95 % confidence half-width, or half the range of its placements' means, or half the range of its
processes' values (with `repeat`), whichever is widest (older runs lack those columns). Two measurements a, b agree when |a - b| / mean(a, b) <= u_a + u_b.
Usage: bench/truth.py WORK_DIR [SUFFIX]"""
import csv, glob, statistics as st, sys

work = sys.argv[1]
sfx = sys.argv[2] if len(sys.argv) > 2 else ""


def load(label):
    files = glob.glob(f"{work}/{label}{sfx}/*/*/results.csv")
    if not files:
        return None
    rows = {}
    for r in csv.DictReader(open(files[0], newline="")):
        rows[int(r["threads"])] = r
    return rows


runs = {k: load(k) for k in ["full", "again", "shuf", "s17", "s300"]}
full = runs["full"]
metrics = [c[: -len("_mflops")] for c in next(iter(full.values())) if c.endswith("_mflops") and "_median_" not in c
           and "_min_" not in c and "_max_" not in c and "_stddev_" not in c]


def unc(r, m):
    ci = float(r[f"{m}_rel_ci"])
    spread = float(r.get(f"{m}_spread") or 0)
    between = float(r.get(f"{m}_repeat_spread") or 0)
    return max(ci, spread / 2, between / 2)


def compare(a, b, m):
    diffs, inside = [], 0
    for t in sorted(set(a) & set(b)):
        ra, rb = a[t], b[t]
        if ra["status"] not in ("ok", "noisy", "unstable") or rb["status"] not in ("ok", "noisy", "unstable"):
            continue
        va, vb = float(ra[f"{m}_mflops"]), float(rb[f"{m}_mflops"])
        d = abs(va - vb) / ((va + vb) / 2)
        diffs.append(d)
        inside += d <= unc(ra, m) + unc(rb, m)
    diffs.sort()
    p95 = diffs[int(0.95 * (len(diffs) - 1))] if diffs else float("nan")
    return len(diffs), inside, st.median(diffs) if diffs else float("nan"), p95, max(diffs) if diffs else float("nan")


statuses = {}
for r in full.values():
    statuses[r["status"]] = statuses.get(r["status"], 0) + 1
print(f"full sweep{sfx}: {len(full)} points, statuses {statuses}")
print(f"{'series':<20} {'context':<14} {'n':>4} {'in unc':>7} {'median':>7} {'p95':>7} {'max':>7}")
worst = {"three": 0.0, "inside": 1.0, "again_p95": 0.0, "again_max": 0.0}
for m in metrics:
    three_n = three_in = 0
    for ctx in ["shuf", "s17", "s300", "again"]:
        if runs[ctx] is None:
            continue
        n, inside, med, p95, mx = compare(full, runs[ctx], m)
        print(f"{m:<20} {ctx:<14} {n:4d} {inside / max(n, 1):7.1%} {med:7.2%} {p95:7.2%} {mx:7.2%}")
        if ctx == "again":
            worst["again_p95"] = max(worst["again_p95"], p95)
            worst["again_max"] = max(worst["again_max"], mx)
        else:
            three_n += n
            three_in += inside
            worst["three"] = max(worst["three"], mx)
    if three_n:
        worst["inside"] = min(worst["inside"], three_in / three_n)
    sp = [float(r.get(f"{m}_spread") or 0) for r in full.values() if r.get(f"{m}_spread")]
    un = sum(r["status"] == "unstable" for r in full.values())
    if sp:
        print(f"{m:<20} placements: spread median {st.median(sp):.2%}, max {max(sp):.2%}")
print()
print(f"three contexts (shuffled, 17..80, 300..363 vs full): worst series within its uncertainty {worst['inside']:.1%} (target >= 95 %), "
      f"largest difference {worst['three']:.2%} (target <= 3 %)")
print(f"two full sweeps: worst series p95 {worst['again_p95']:.2%} (target <= 1 %), max {worst['again_max']:.2%} (target <= 2 %)")
for label in ["full", "again"]:
    rows = runs[label]
    if rows:
        print(f"{label}: sum of the programs' run times {sum(float(r['run_s']) for r in rows.values()):.1f} s")
