#!/usr/bin/env python3
"""The double-period rule of the analysis (docs/analysis.md, "Steps of two sizes"; issue 10, session 12) against the
analysis without it, on synthetic staircases and the two real H100 columns that motivated it. Each family's curves are
analysed by both binaries; a reading is period/level (+nested/level); "wrong" counts changed readings whose period is
not the true one at high or medium confidence.
  A  one drop size, each drop absent at random (q): the rule must not read 2P
  R  drop sizes drawn at random, U(lo, 1) x P (one family): the rule must not read 2P
  C  sizes alternating L / r x L (fixed r): unchanged expected (the search reads these directly)
  D  two sizes whose small drops vary, U(lo, hi) x L: where the old analysis read none, the rule may read 2P + P
Usage: bench/double_period.py NEW_SWEEP OLD_SWEEP WORK_DIR
(OLD_SWEEP: a release build of commit 3b9efb1, the tree without the rule: git worktree add --detach /tmp/old 3b9efb1
&& cd /tmp/old && cargo build --release)"""
import json, os, random, subprocess, sys
from collections import Counter

NEW, OLD, WORK = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))


def curve(n, P, size, noise, rng, lower=False):
    """time(x) = P x (size(0) + the sizes of the edges k P < x); MFlops-like x / time, or the time itself."""
    out, t = [], P * size(0)
    for x in range(1, n + 1):
        if x > 1 and (x - 1) % P == 0:
            t += P * size((x - 1) // P)
        v = t if lower else 1e6 * x / t
        out.append(v * (1 + rng.gauss(0, noise)))
    return out


def write(d, cols):
    os.makedirs(d, exist_ok=True)
    names, n = list(cols), len(next(iter(cols.values())))
    with open(os.path.join(d, "results.csv"), "w") as f:
        f.write("point_id,index,threads,status," + ",".join(names) + ",error\n")
        for i in range(n):
            f.write("p%06d,%d,%d,ok,%s,\n" % (i, i, i + 1, ",".join("%.4f" % cols[c][i] for c in names)))


def analyse(binary, d):
    subprocess.run([binary, "analyze", d], capture_output=True, check=True)
    return {s["name"]: s for s in json.load(open(os.path.join(d, "analysis.json")))["series"]}


def fmt(s):
    p, q = s["period"], s["secondary"]
    r = "none" if p is None else "%g/%s" % (p["period"], p["level"][0])
    return r + ("+%g/%s" % (q["period"], q["level"][0]) if q else "")


def family(tag, P, cols):
    d = os.path.join(WORK, tag)
    write(d + "_new", cols)
    write(d + "_old", cols)
    a, b = analyse(NEW, d + "_new"), analyse(OLD, d + "_old")
    changed = [k for k in cols if fmt(a[k]) != fmt(b[k])]
    wrong = [k for k in changed if a[k]["period"] and a[k]["period"]["period"] != P
             and a[k]["period"]["level"] in ("high", "medium")]
    print(f"{tag:<34} {len(cols):4d} curves  changed {len(changed):3d}  wrong {len(wrong):3d}  "
          f"old {dict(Counter(fmt(b[k]) for k in changed))} -> new {dict(Counter(fmt(a[k]) for k in changed))}")
    return len(cols), len(changed), len(wrong)


totals = Counter()
for n, P, q, noise in [(1024, 32, .15, .01), (1024, 32, .2, .005), (1024, 32, .25, .01), (512, 32, .2, .01),
                       (1024, 32, .15, .03), (512, 16, .2, .02), (1024, 32, .1, .02)]:
    cols = {}
    for seed in range(1, 41):
        rng = random.Random(seed * 1000 + n + P + int(q * 100))
        present = [True] + [rng.random() >= q for _ in range(n // P + 1)]
        cols["s%03d_mflops" % seed] = curve(n, P, lambda k: 1.0 if present[k] else 0.0, noise, rng)
    c, ch, w = family(f"A n={n} P={P} q={q} noise={noise}", P, cols)
    totals.update({"A curves": c, "A changed": ch, "A wrong": w})
for n, P, lo, lower in [(1024, 64, .05, True), (1024, 64, .1, False), (512, 32, .05, False), (512, 32, .1, True),
                        (1024, 32, .05, False), (1024, 32, .1, True)]:
    cols = {}
    for seed in range(1, 101):
        rng = random.Random(seed * 7919 + n + P + int(lo * 100))
        s = [rng.uniform(lo, 1) for _ in range(n // P + 2)]
        cols["s%03d_%s" % (seed, "ms" if lower else "mflops")] = curve(n, P, lambda k: s[k], .01, rng, lower)
    c, ch, w = family(f"R n={n} P={P} lo={lo} {'ms' if lower else 'mflops'}", P, cols)
    totals.update({"R curves": c, "R changed": ch, "R wrong": w})
for n, P, noise in [(512, 32, .01), (512, 32, .03), (1024, 32, .02), (256, 16, .02)]:
    cols = {}
    for r in [0.0, 0.1, 0.2, 0.3, 0.45, 0.5, 0.7, 0.9, 1.0]:
        for seed in (1, 2, 3):
            rng = random.Random(seed * 7 + int(r * 100) + n)
            cols["r%03d_s%d_mflops" % (int(r * 100), seed)] = curve(n, P, lambda k: 1.0 if k % 2 == 0 else r, noise, rng)
    c, ch, w = family(f"C n={n} P={P} noise={noise}", 2 * P, cols)
    totals.update({"C curves": c, "C changed": ch})
for n, P, noise, lo, hi in [(512, 32, .01, .15, .9), (512, 32, .02, .1, .6), (1024, 32, .01, .2, .8), (256, 16, .01, .15, .9)]:
    cols = {}
    for seed in range(1, 31):
        rng = random.Random(seed * 31 + n + P)
        s = [1.0 if k % 2 == 0 else rng.uniform(lo, hi) for k in range(n // P + 2)]
        cols["d%02d_mflops" % seed] = curve(n, P, lambda k: s[k], noise, rng)
    c, ch, w = family(f"D n={n} P={P} noise={noise} small {lo}-{hi}", 2 * P, cols)
    totals.update({"D curves": c, "D changed": ch, "D wrong": w})
for name in ["grid_stores_shuffled.csv"]:
    d = os.path.join(WORK, "real")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "results.csv"), "w").write(open(os.path.join(HERE, "..", "tests/fixtures/analysis", name)).read())
    print("real", name, "new", {k: fmt(v) for k, v in analyse(NEW, d).items()}, "old", {k: fmt(v) for k, v in analyse(OLD, d).items()})
d = os.path.join(WORK, "real_hv")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "results.csv"), "w").write(open(os.path.join(HERE, "misread_data/halfwarp_vec1_rerun.csv")).read())
print("real halfwarp_vec1_rerun.csv new", {k: fmt(v) for k, v in analyse(NEW, d).items()}, "old", {k: fmt(v) for k, v in analyse(OLD, d).items()})
print(dict(totals))
