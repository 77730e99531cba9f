#!/usr/bin/env python3
"""Does raising each metric's between-process spread to the median over the metrics help? (issue 10)

Resamples the control pairs of bench/truth_data: for each of 20 seeds, every run (full, shuf, s17, s300) gets
pseudo-controls at random points (512 / 32 = 16 for a full sweep, 4 for a 64-point one), each a pair of two of the
three full-sweep runs (full, again, shuf) at that point, and the spread b of each metric from them as in
src/analyze/controls.rs; then the share of points of the three contexts (shuffled, 17..80, 300..363 vs full)
within u_a + u_b, u = max(sqrt(rel_ci^2 + b^2), spread / 2), for the worst series. With and without the floor.
Usage: python3 bench/truth_floor.py bench/truth_data"""
import csv, glob, math, os, random, statistics as st, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_spread import own_b, with_floor  # noqa: E402

work = sys.argv[1] if len(sys.argv) > 1 else "bench/truth_data"


def load(label):
    f = glob.glob(f"{work}/{label}/**/results.csv", recursive=True)
    return {int(r["threads"]): r for r in csv.DictReader(open(f[0], newline=""))}


R = {k: load(k) for k in ["full", "again", "shuf", "s17", "s300"]}
full = R["full"]
ms = [c[:-7] for c in full[1] if c.endswith("_mflops") and not any(p in c for p in ("_median_", "_min_", "_max_", "_stddev_"))]


def spreads(rnd, points, floor):
    out = {}
    for m in ms:
        d = []
        for t in points:
            a, b = rnd.sample(["full", "again", "shuf"], 2)
            d.append(math.log(float(R[a][t][f"{m}_mflops"]) / float(R[b][t][f"{m}_mflops"])))
        out[m] = own_b(d)[1]
    return with_floor(out) if floor else out


def worst(seed, floor):
    rnd = random.Random(seed)
    b_full = spreads(rnd, rnd.sample(range(1, 513), 16), floor)
    b = {c: spreads(rnd, rnd.sample(sorted(R[c]), 16 if c == "shuf" else 4), floor) for c in ["shuf", "s17", "s300"]}
    w = 1.0
    for m in ms:
        n = inside = 0
        for c in ["shuf", "s17", "s300"]:
            for t in R[c]:
                ra, rb = full[t], R[c][t]
                va, vb = float(ra[f"{m}_mflops"]), float(rb[f"{m}_mflops"])
                d = abs(va - vb) / ((va + vb) / 2)
                ua = max(math.hypot(float(ra[f"{m}_rel_ci"]), b_full[m]), float(ra[f"{m}_spread"]) / 2)
                ub = max(math.hypot(float(rb[f"{m}_rel_ci"]), b[c][m]), float(rb[f"{m}_spread"]) / 2)
                n += 1
                inside += d <= ua + ub
        w = min(w, inside / n)
    return w


for floor in (False, True):
    ws = [worst(s, floor) for s in range(20)]
    print(f"floor={'median over metrics' if floor else 'none':<20} worst series within uncertainty over 20 resamplings: "
          f"median {st.median(ws):.1%}, lowest {min(ws):.1%}, highest {max(ws):.1%}")
