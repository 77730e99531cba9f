#!/usr/bin/env python3
"""Per metric at a few thread counts: the timed value, the power pass's watts and the value per watt, from a
`[profile] metric_power_ms` run (issue 16). usage: python3 bench/metric_power_table.py RESULTS.csv THREADS..."""
import csv, sys

rows = {int(r["threads"]): r for r in csv.DictReader(open(sys.argv[1]))}
ts = [int(t) for t in sys.argv[2:]]
metrics = [c[: -len("__power_w")] for c in next(iter(rows.values())) if c.endswith("__power_w")]
print("| metric | " + " | ".join(f"{t} threads: GFlops, W, GFlops/W" for t in ts) + " |")
print("|---|" + "---|" * len(ts))
for m in metrics:
    cells = []
    for t in ts:
        r = rows[t]
        v, w, e = float(r[m + "_mflops"]), float(r[m + "__power_w"]), float(r[m + "__mflops_per_w"])
        cells.append(f"{v / 1e3:,.0f}, {w:.0f}, {e / 1e3:.1f}")
    print(f"| {m} | " + " | ".join(cells) + " |")
