#!/usr/bin/env python3
"""Reads a run of sweeps/threads_pitch.toml (issue 34's pitch experiment): for each global-store grid kernel, the
MFlops of align256 and dense over line128 (today's layout) at the same thread count, by the parity of the warp count.
At even warp counts line128 and align256 have the same pitch and the same binary, so their ratio there is the run's
noise; at odd ones line128's pitch is an odd number of 128-byte lines. Also the placements' spread (`_spread`: how far
apart the buffer places put a point) by layout and parity, and the ratios per warp count. With BASELINE (a thread
sweep's results.csv, e.g. tests/fixtures/h100/threads_1_512/results.csv), line128 against it at the same thread counts:
the same kernels, so a ratio near 1 says this run reproduces it.
Usage: bench/pitch.py RUN_DIR/results.csv [BASELINE]"""
import csv, statistics, sys

METRICS = ["global_all_grid", "global_even_grid", "global_half_grid"]
LAYOUTS = ["dense", "line128", "align256"]


def number(row, column):
    try:
        return float(row[column])
    except (KeyError, TypeError, ValueError):
        return None


def summary(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{statistics.median(xs):.3f} [{min(xs):.3f}, {max(xs):.3f}] n={len(xs)}"


def main(path, baseline=None):
    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8-sig")))
    base = {}
    if baseline:
        base = {int(r["threads"]): r for r in csv.DictReader(open(baseline, newline="", encoding="utf-8-sig"))}
    at = {(int(r["threads"]), r["layout"]): r for r in rows if r.get("layout") in LAYOUTS}
    threads = sorted({t for t, _ in at})
    print(f"{path}: {len(rows)} rows, threads {threads[0]}..{threads[-1]}" if threads else f"{path}: no rows")
    for m in METRICS:
        col = m + "_mflops"
        print(f"\n== {m}: median [min, max] of the ratio to line128 at the same thread count")
        for parity, name in ((1, "odd warp counts (line128: odd lines)"), (0, "even warp counts (same pitch)")):
            ts = [t for t in threads if (t + 31) // 32 % 2 == parity]

            def ratio(layout):
                out = []
                for t in ts:
                    a, b = (number(at.get((t, x), {}), col) for x in (layout, "line128"))
                    out.append(a / b if a and b else None)
                return out

            print(f"  {name:40} align256/line128 {summary(ratio('align256'))}   dense/line128 {summary(ratio('dense'))}")
        print("  placements' spread (median over points), by layout: odd / even warp counts")
        for layout in LAYOUTS:
            spread = {p: [number(at.get((t, layout), {}), m + "_spread") for t in threads if (t + 31) // 32 % 2 == p]
                      for p in (1, 0)}
            med = lambda xs: statistics.median([x for x in xs if x is not None] or [float("nan")])
            print(f"    {layout:9} {med(spread[1]):.3f} / {med(spread[0]):.3f}")
        print("  per warp count: align256/line128 (mean over its thread counts)")
        line = []
        for w in sorted({(t + 31) // 32 for t in threads}):
            rs = [number(at.get((t, "align256"), {}), col) / number(at.get((t, "line128"), {}), col)
                  for t in threads if (t + 31) // 32 == w
                  and number(at.get((t, "align256"), {}), col) and number(at.get((t, "line128"), {}), col)]
            if rs:
                line.append(f"{w}:{sum(rs) / len(rs):.3f}")
        print("    " + "  ".join(line))
        if base:
            rs = [number(at.get((t, "line128"), {}), col) / number(base[t], col) for t in threads
                  if t in base and number(at.get((t, "line128"), {}), col) and number(base[t], col)]
            print(f"  line128 / baseline at the same thread count: {summary(rs)}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
