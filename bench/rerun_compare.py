#!/usr/bin/env python3
"""Do the conclusions drawn from the committed H100 runs (tests/fixtures/h100, measured with one program started
ahead, the default then) hold in a re-run with the default since 2026-11-25 (no prestart)? For every sweep of
both, every series of analysis.json: period (and phase), knee, best x, and the relative drop after a peak, side
by side; and how far the values move point by point (median and largest |new/old - 1| of ok/unstable points).
Usage: bench/rerun_compare.py NEW_OUTPUT_DIR (scripts/device-all.sh's output-gpu, unpacked from runs.tgz)"""
import csv, glob, json, os, statistics as st, sys

new_root = sys.argv[1]
old_root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "h100")


def run_dir(sweep):
    dirs = sorted(glob.glob(os.path.join(new_root, sweep, "*", "analysis.json")))
    return os.path.dirname(dirs[-1]) if dirs else None


def key(s):
    return s["name"] + json.dumps(s.get("group", {}), sort_keys=True)


def facts(s):
    p = s.get("period") or {}
    d = s.get("drop") or {}
    best = s.get("best") or {}
    return (p.get("period"), p.get("phase"), s.get("knee"), best.get("x") if isinstance(best, dict) else best,
            round(d["relative"] * 100, 1) if d.get("relative") is not None else None)


changed = same = 0
for sweep in sorted(os.listdir(new_root)):
    new_dir, old_dir = run_dir(sweep), os.path.join(old_root, sweep)
    if not new_dir or not os.path.exists(os.path.join(old_dir, "analysis.json")):
        continue
    old = {key(s): s for s in json.load(open(os.path.join(old_dir, "analysis.json")))["series"]}
    new = {key(s): s for s in json.load(open(os.path.join(new_dir, "analysis.json")))["series"]}
    axes = json.load(open(os.path.join(new_dir, "manifest.json")))["axes"]
    point = lambda r: tuple(r[a] for a in axes)  # noqa: E731
    rows_old = {point(r): r for r in csv.DictReader(open(os.path.join(old_dir, "results.csv")))}
    rows_new = {point(r): r for r in csv.DictReader(open(os.path.join(new_dir, "results.csv")))}
    print(f"== {sweep}")
    for k, s in new.items():
        o = old.get(k)
        if not o:
            print(f"  {s['name']}: no such series in the fixture")
            continue
        col = s["column"]
        d = []
        for pid, r in rows_new.items():
            q = rows_old.get(pid)
            if q and r.get(col) and q.get(col) and r["status"] in ("ok", "unstable") and q["status"] in ("ok", "unstable"):
                a, b = float(q[col]), float(r[col])
                if a:
                    d.append(abs(b / a - 1))
        fo, fn = facts(o), facts(s)
        mark = "same" if fo[:4] == fn[:4] else "CHANGED"
        if mark == "CHANGED" and fo[:3] == fn[:3]:
            # only the best x: a tie when the new run's value at the old best x is within 1 % of its best
            xcol = json.load(open(os.path.join(new_dir, "analysis.json")))["x"]
            grp = s.get("group", {})
            vals = {float(r[xcol]): float(r[col]) for r in rows_new.values()
                    if r.get(col) and all(r.get(a) == str(v) for a, v in grp.items())}
            if fn[3] in vals and fo[3] in vals and vals[fn[3]]:
                lower = s.get("sense") == "lower_is_better"
                gap = (vals[fo[3]] / vals[fn[3]] - 1) * (-1 if lower else 1)
                mark = f"best x within {abs(gap) * 100:.1f} % (tie)" if abs(gap) <= 0.01 else f"best x moved ({gap * 100:+.1f} % at the old best)"
        changed += not (mark == "same" or mark.endswith("(tie)"))
        same += mark == "same" or mark.endswith("(tie)")
        grp = ",".join(f"{a}={b}" for a, b in s.get("group", {}).items())
        moved = f"values moved: median {100 * st.median(d):.2f} %, max {100 * max(d):.2f} %" if d else ""
        print(f"  {s['name']}[{grp}] {mark}: period/phase/knee/best/drop% old {fo} new {fn}; {moved}")
print(f"series with the same period, phase, knee and best x (or a best x within 1 %): {same}; changed: {changed}")
