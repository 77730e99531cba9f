#!/usr/bin/env python3
"""Which of the analysis's readings hold across runs of one sweep (issue 10): for every series, each run's
period (h/m/l = high/medium/low confidence) with its nested period, the knee, the drop after a peak, and the
best x with the smallest x within 1 % of the best; then whether period, nested period, knee (within 2) and
best x agree in all runs. Each RUN_DIR must hold an analysis.json (`sweep analyze RUN_DIR` writes it).
Usage: bench/truth_readings.py LABEL=RUN_DIR [LABEL=RUN_DIR ...]"""
import json, sys


def reading(s):
    p, q = s["period"], s.get("secondary")
    period = f"{p['period']:.0f}/{p['level'][0]}" if p else "none"
    nested = f"{q['period']:.0f}/{q['level'][0]}" if q else "-"
    knee = f"{s['knee']:.0f}" if s.get("knee") is not None else "-"
    drop = f"{100 * s['drop']['relative']:.1f}%" if s.get("drop") else "-"
    b = s["best"]
    return {"period": period, "nested": nested, "knee": knee, "drop": drop,
            "best": f"{b['x']:.0f}", "from": f"{b['x_within_1pct']:.0f}"}


def main(args):
    runs = {}
    for a in args:
        label, d = a.split("=", 1)
        runs[label] = {s["metric"]: reading(s) for s in json.load(open(f"{d}/analysis.json"))["series"]}
    labels = list(runs)
    print(f"{'series':<18} {'run':<7} {'period':>7} {'nested':>7} {'knee':>5} {'drop':>6} {'best':>5} {'1% from':>7}")
    for m in runs[labels[0]]:
        rs = [runs[l][m] for l in labels]
        for l, r in zip(labels, rs):
            print(f"{m:<18} {l:<7} {r['period']:>7} {r['nested']:>7} {r['knee']:>5} {r['drop']:>6} {r['best']:>5} {r['from']:>7}")
        same = lambda k: len({r[k].split('/')[0] for r in rs}) == 1
        knees = [int(r["knee"]) for r in rs if r["knee"] != "-"]
        knee_ok = not knees or (len(knees) == len(rs) and max(knees) - min(knees) <= 2)
        levels = len({r["period"] for r in rs}) == 1 and len({r["nested"] for r in rs}) == 1
        print(f"{m:<18} agree:  period {'yes' if same('period') else 'NO'}, nested {'yes' if same('nested') else 'NO'}, "
              f"knee {'yes' if knee_ok else 'NO'}, best x {'yes' if same('best') else 'NO'}"
              f"{'' if levels else ' (confidence levels differ)'}")


if __name__ == "__main__":
    main(sys.argv[1:])
