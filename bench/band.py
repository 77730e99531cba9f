#!/usr/bin/env python3
"""The band runs of bench/band.sh side by side: for every run (label), the shared_nc_grid values at each thread
count against the best of all runs at that count; counts the values more than 0.5 % and more than 5 % below it,
the SM clock readings below 1980 MHz, and (from the traces) how many points had another program create its
CUDA context while the point measured (from its gate, or its session lock). Usage: bench/band.py DIR (the unpacked band.tgz)"""
import csv, glob, os, sys


def retries(d):
    p = os.path.join(d, "stderr.txt")
    return sum(1 for line in open(p) if line.startswith("# trace m-retry")) if os.path.exists(p) else 0


def marks(d):
    out = {}
    for name in ("stderr.txt", "harness.trace"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            for line in open(p):
                if line.startswith("# trace "):
                    _, _, ph, v = line.split()
                    out.setdefault(ph, float(v))
    return out


def main(root):
    runs = {}
    for f in sorted(glob.glob(f"{root}/*/*/*/results.csv")):
        label = os.path.relpath(f, root).split(os.sep)[0]
        runs[label] = {int(r["threads"]): r for r in csv.DictReader(open(f))}

    best = {t: max(float(runs[l][t]["shared_nc_grid_mflops"]) for l in runs) for t in next(iter(runs.values()))}
    print(f"{'run':6s} {'points':>6s} {'>0.5% low':>10s} {'>5% low':>8s} {'clock<1980':>10s} {'ctx inside':>10s} {'retries':>7s}  worst")
    for label, rows in runs.items():
        run_dir = os.path.dirname(glob.glob(f"{root}/{label}/*/*/results.csv")[0])
        m = {r["point_id"]: marks(os.path.join(run_dir, "points", r["point_id"])) for r in rows.values()}
        ctx = [v["context"] for v in m.values() if "context" in v]
        low = [(float(r["shared_nc_grid_mflops"]) / best[t] - 1, t) for t, r in rows.items()]
        inside = 0
        for r in rows.values():
            v = m[r["point_id"]]
            start = v.get("session-lock", v.get("gate"))  # measuring starts here
            if start and "exit" in v and any(start < c < v["exit"] for c in ctx):
                inside += 1
        slow_clock = sum(1 for r in rows.values() for k in r if k.endswith("_sm_mhz") and r[k] and float(r[k]) < 1980)
        worst = min(low)
        n_retries = sum(retries(os.path.join(run_dir, "points", r["point_id"])) for r in rows.values())
        print(f"{label:6s} {len(rows):6d} {sum(1 for d, _ in low if d < -0.005):10d} {sum(1 for d, _ in low if d < -0.05):8d} "
              f"{slow_clock:10d} {inside:10d} {n_retries:7d}  {100 * worst[0]:+.2f} % at {worst[1]}")


if __name__ == "__main__":
    main(sys.argv[1])
