#!/usr/bin/env python3
"""The truth checks of issue 36 on runs of the thread sweep (folders holding results.csv and controls.csv):
  - per series, two full sweeps A and B: median, p95 and largest |A/B - 1| over the points both measured
    (targets: p95 <= 1 % everywhere; largest <= 2 %, <= 3 % for the global-store grid series);
  - per series, the median reported uncertainty u = max(sqrt(rel_ci^2 + b^2), spread/2, repeat_spread/2)
    of each run against a reference run (the committed fixture): no series wider than there.
b is the run's between-process term as `sweep compare` and bench/truth.py have it (bench/truth_spread.py).
Usage: bench/speed_check.py REFERENCE_RUN RUN_A RUN_B"""
import csv, math, os, statistics as st, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_spread import clock_range, own_b, with_floor  # noqa: E402

MEASURED = ("ok", "noisy", "unstable")


def load(d):
    rows = {int(r["threads"]): r for r in csv.DictReader(open(os.path.join(d, "results.csv"), newline=""))}
    metrics = [c[: -len("_rel_ci")] for c in next(iter(rows.values())) if c.endswith("_rel_ci")]
    try:
        ctl = list(csv.DictReader(open(os.path.join(d, "controls.csv"), newline="")))
    except OSError:
        ctl = []
    by_id = {r["point_id"]: r for r in rows.values() if r["status"] in MEASURED}
    own = {}
    for m in metrics:
        d_ = [math.log(float(c[f"{m}_mflops"]) / float(by_id[c["point_id"]][f"{m}_mflops"]))
              for c in ctl if c["point_id"] in by_id and c["status"] in MEASURED]
        if len(d_) >= 3:
            own[m] = own_b(d_)[1]
    floored = with_floor(own)
    clock = clock_range(list(rows.values()) + ctl)
    b = {m: max(floored.get(m, 0.0), clock) for m in metrics}
    return rows, metrics, b


def unc(r, m, b):
    return max(math.hypot(float(r[f"{m}_rel_ci"]), b[m]), float(r.get(f"{m}_spread") or 0) / 2,
               float(r.get(f"{m}_repeat_spread") or 0) / 2)


def main():
    ref, a, b = (load(d) for d in sys.argv[1:4])
    print(f"{'series':<18} {'p50':>6} {'p95':>6} {'max':>6}  {'median u: ref':>13} {'A':>6} {'B':>6}  b ref/A/B")
    worst = {"p95": 0.0, "max": 0.0, "max_grid": 0.0}
    wider = []
    for m in ref[1]:
        ra, rb = a[0], b[0]
        diffs = sorted(abs(float(ra[t][f"{m}_mflops"]) / float(rb[t][f"{m}_mflops"]) - 1)
                       for t in set(ra) & set(rb) if ra[t]["status"] in MEASURED and rb[t]["status"] in MEASURED)
        p95 = diffs[int(0.95 * (len(diffs) - 1))]
        us = [st.median(unc(r, m, run[2]) for r in run[0].values() if r["status"] in MEASURED) for run in (ref, a, b)]
        grid = m.startswith("global_") and m.endswith("_grid")
        worst["p95"] = max(worst["p95"], p95)
        key = "max_grid" if grid else "max"
        worst[key] = max(worst[key], diffs[-1])
        wider += [f"{m} ({label} {u:.3%} > {us[0]:.3%})" for label, u in zip("AB", us[1:]) if u > us[0]]
        print(f"{m:<18} {st.median(diffs):6.2%} {p95:6.2%} {diffs[-1]:6.2%}  {us[0]:13.3%} {us[1]:6.3%} {us[2]:6.3%}"
              f"  {ref[2][m]:.2%}/{a[2][m]:.2%}/{b[2][m]:.2%}")
    print(f"two sweeps: worst p95 {worst['p95']:.2%} (target <= 1 %), largest {worst['max']:.2%} (target <= 2 %), "
          f"global-store grid series largest {worst['max_grid']:.2%} (target <= 3 %)")
    print("median reported uncertainty no wider than the reference's: " + ("yes" if not wider else "no: " + "; ".join(wider)))


if __name__ == "__main__":
    main()
