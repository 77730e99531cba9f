#!/usr/bin/env python3
"""Compares the runs of bench/truth.sh (issue 10): for every series (metric) of the thread sweep, how
far a point's value moves between contexts, and whether it stays within its reported uncertainty.

A point's reported uncertainty u is max(sqrt(rel_ci^2 + b^2), spread / 2, repeat_spread / 2), as
`sweep compare` has it: the within-placement 95 % confidence half-width combined with b, the run's
95 % spread between processes from its control re-runs (controls.csv; the same formula as
src/analyze/controls.rs: b = t95(n) * sqrt(mean(d^2) / 2) over the n pairs' d = ln(control /
first) within 6 robust sigmas or 1 %, raised to the median of that over the metrics; 0 when the
run has fewer than 3 pairs), or half the range of its
placements' means, or half the range of its processes' values (with `repeat`), whichever is widest
(older runs lack those columns). Two measurements a, b agree when |a - b| / mean(a, b) <= u_a + u_b.
Usage: bench/truth.py WORK_DIR [SUFFIX]"""
import csv, glob, math, os, statistics as st, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_spread import clock_range, own_b, with_floor  # noqa: E402

work = sys.argv[1]
sfx = sys.argv[2] if len(sys.argv) > 2 else ""


MEASURED = ("ok", "noisy", "unstable")
between = {}  # label -> metric -> (pairs, b)


def controls(label, rows, path):
    try:
        ctl = list(csv.DictReader(open(path, newline="")))
    except OSError:
        return {}
    by_id = {r["point_id"]: r for r in rows.values() if r["status"] in MEASURED}
    out = {}
    for m in metrics_of(rows):
        d = []
        for c in ctl:
            r = by_id.get(c["point_id"])
            if r is None or c["status"] not in MEASURED:
                continue
            a, b = float(r[f"{m}_mflops"]), float(c[f"{m}_mflops"])
            if a > 0 and b > 0:
                d.append(math.log(b / a))
        if len(d) >= 3:
            out[m] = own_b(d)
    floored = with_floor({m: b for m, (_, b) in out.items()})
    clock = clock_range(list(rows.values()) + ctl)
    return {m: (n, max(floored[m], clock)) for m, (n, _) in out.items()}


def metrics_of(rows):
    return [c[: -len("_mflops")] for c in next(iter(rows.values())) if c.endswith("_mflops") and "_median_" not in c
            and "_min_" not in c and "_max_" not in c and "_stddev_" not in c]


def load(label):
    files = glob.glob(f"{work}/{label}{sfx}/*/*/results.csv")
    if not files:
        return None
    rows = {}
    for r in csv.DictReader(open(files[0], newline="")):
        rows[int(r["threads"])] = r
        r["_label"] = label
    between[label] = controls(label, rows, files[0].replace("results.csv", "controls.csv"))
    return rows


runs = {k: load(k) for k in ["full", "again", "shuf", "s17", "s300"]}
full = runs["full"]
metrics = metrics_of(full)


def unc(r, m):
    ci = float(r[f"{m}_rel_ci"])
    spread = float(r.get(f"{m}_spread") or 0)
    processes = float(r.get(f"{m}_repeat_spread") or 0)
    b = between.get(r["_label"], {}).get(m, (0, 0.0))[1]
    return max(math.hypot(ci, b), spread / 2, processes / 2)


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
    b = "  ".join(f"{k} {v[m][1]:.2%} ({v[m][0]})" for k, v in between.items() if m in v)
    if b:
        print(f"{m:<20} between processes (95 %, pairs): {b}")
print()
print(f"three contexts (shuffled, 17..80, 300..363 vs full): worst series within its uncertainty {worst['inside']:.1%} (target >= 95 %), "
      f"largest difference {worst['three']:.2%} (target <= 3 %)")
if runs["again"] is None:
    print("two full sweeps: not run (no `again` run)")
else:
    print(f"two full sweeps: worst series p95 {worst['again_p95']:.2%} (target <= 1 %), max {worst['again_max']:.2%} (target <= 2 %)")


def median_clock(rows):
    mhz = [float(v) for r in rows.values() for k, v in r.items() if k.endswith("_sm_mhz") and v]
    return st.median(mhz) if mhz else None


# A clock-bound value moves by the ratio of two runs' SM clocks, which no CI inside a run sees (an H100 read
# 1980 MHz through three full sweeps and 1995 MHz in the next two, session 11): say when contexts differ.
ref = median_clock(full)
for label in ["full", "again", "shuf", "s17", "s300"]:
    rows = runs.get(label)
    c = median_clock(rows) if rows else None
    if c is not None:
        off = "" if ref is None or abs(c / ref - 1) <= 0.002 else f"  <- {100 * (c / ref - 1):+.2f} % from full: clock-bound values move by as much"
        print(f"{label}: SM clock, median reading {c:.0f} MHz{off}")
for label in ["full", "again"]:
    rows = runs[label]
    if rows:
        print(f"{label}: sum of the programs' run times {sum(float(r['run_s']) for r in rows.values()):.1f} s")

# What moves the compute-bound series between processes: the SM clock each metric ran at (sm_mhz, the
# lower of two readings before and after its samples; runs before 2026-11-23 evening lack it).
shared = [m for m in metrics if m.startswith("shared_")]
if shared and f"{shared[0]}_sm_mhz" in full[1]:
    print()
    for other in ["again", "shuf"]:
        if runs[other] is None:
            continue
        same, diff, agree = [], [], 0
        for t in sorted(set(full) & set(runs[other])):
            a, b = full[t], runs[other][t]
            for m in shared:
                d = math.log(float(b[f"{m}_mflops"]) / float(a[f"{m}_mflops"]))
                fa, fb = float(a[f"{m}_sm_mhz"]), float(b[f"{m}_sm_mhz"])
                if fa == fb:
                    same.append(abs(d))
                else:
                    diff.append(abs(d))
                    agree += d * math.log(fb / fa) > 0
        if same and diff:
            print(f"shared-memory series, full vs {other}: same SM clock reading in both processes: {len(same)} values, "
                  f"median difference {st.median(same):.3%}; different readings: {len(diff)} values, median difference "
                  f"{st.median(diff):.3%}, the faster process the one with the higher clock in {agree}/{len(diff)}")
