#!/usr/bin/env python3
"""bench/peers.txt (issue 36): Kernel Tuner beside sweep on the thread sweep's kernels, one H100.
Kernel Tuner (bench/peers.sh, bench/peers_kt.py): one kernel over block sizes 1..512 per process, cold (empty CuPy
kernel cache) then warm; its per value time is the process's wall time / 512 values, and its two runs are those two.
sweep (bench/pipeline.sh): the whole thread sweep (512 points x 12 kernels, default options), cold (empty build
cache) then warm; its per value time is the sweep's wall time / 6,144 values, and its two runs are those two.
Both tools' values are MFlops = blocks x threads x ITERATIONS x ADDS / time. Two runs differ by |A/B - 1| per block size.
Usage: bench/peers.py PEERS_DATA_DIR PIPELINE_DATA_TGZ"""
import csv, glob, io, os, re, statistics as st, sys, tarfile


def kt(d, kernel, part):
    return {int(r["threads"]): float(r["mflops"]) for r in csv.DictReader(open(os.path.join(d, f"kt_{kernel}_{part}.csv")))}


def diffs(a, b):
    d = sorted(abs(a[t] / b[t] - 1) for t in set(a) & set(b))
    return st.median(d), d[int(0.95 * (len(d) - 1))], d[-1]


def main():
    d, tgz = sys.argv[1], sys.argv[2]
    run = open(os.path.join(d, "peers_run.txt")).read()
    tar = tarfile.open(tgz)
    sweep, wall = {}, {}
    for m in tar.getmembers():
        part = m.name.split("/")[0].split(".")[0]
        if m.name.endswith("results.csv"):
            rows = list(csv.DictReader(io.TextIOWrapper(tar.extractfile(m))))
            sweep[part] = rows
        elif m.name.endswith(".wall"):
            wall[part] = float(tar.extractfile(m).read())
    values = sum(1 for r in sweep["cold"] for k in r if k.endswith("_rel_ci") and r[k])
    print(run.splitlines()[0])
    print(run.splitlines()[1])
    print(run.splitlines()[2] + "; sweep: release build of 0c09da1 (this branch changes nothing in src/), timing core of this branch with its defaults")
    print(f"sweep, the whole thread sweep, default options: cold {wall['cold']:.1f} s, warm {wall['warm']:.1f} s for {values} values "
          f"(512 points x 12 kernels)")
    print("commands: bench/peers.sh .bin/sweep OUT .bin/speed/whl (Kernel Tuner); PARTS=cold, then PARTS=warm "
          "bench/pipeline.sh .bin/sweep OUT (sweep); bench/peers.py bench/peers_data bench/pipeline_data.tgz > bench/peers.txt")
    print()
    for kernel in sorted({m[1] for m in re.finditer(r"^kt (\S+) cold", run, re.M)}, reverse=True):
        proc = {p: float(re.search(rf"^kt {kernel} {p} process_s (\S+)", run, re.M)[1]) for p in ("cold", "warm")}
        tune = {p: float(re.search(rf"^kt {kernel} {p} process_s \S+ tune_kernel \S+ \d+ configurations in (\S+) s", run, re.M)[1])
                for p in ("cold", "warm")}
        k_cold, k_warm = kt(d, kernel, "cold"), kt(d, kernel, "warm")
        s_cold = {int(r["threads"]): float(r[f"{kernel}_mflops"]) for r in sweep["cold"] if r[f"{kernel}_mflops"]}
        s_warm = {int(r["threads"]): float(r[f"{kernel}_mflops"]) for r in sweep["warm"] if r[f"{kernel}_mflops"]}
        sd, kd = diffs(s_cold, s_warm), diffs(k_cold, k_warm)
        print(f"{kernel}, threads 1..512:")
        print(f"  per value cold: {1e3 * wall['cold'] / values:.1f} ms (kernel tuner {1e3 * proc['cold'] / len(k_cold):.1f} ms)"
              f"   [kernel tuner's tune_kernel alone: {1e3 * tune['cold'] / len(k_cold):.1f} ms]")
        print(f"  per value warm: {1e3 * wall['warm'] / values:.1f} ms (kernel tuner {1e3 * proc['warm'] / len(k_warm):.1f} ms)"
              f"   [tune_kernel alone: {1e3 * tune['warm'] / len(k_warm):.1f} ms]")
        print(f"  two runs p95: {100 * sd[1]:.2f} % (kernel tuner {100 * kd[1]:.2f} %)"
              f"   [median {100 * sd[0]:.2f} % / {100 * kd[0]:.2f} %, max {100 * sd[2]:.2f} % / {100 * kd[2]:.2f} %]")
        ratio = [k_cold[t] / s_cold[t] for t in s_cold if t in k_cold]
        print(f"  kernel tuner / sweep values (cold runs): median {st.median(ratio):.3f}, range {min(ratio):.3f}..{max(ratio):.3f}")
        print("  threads   sweep MFlops   kernel tuner MFlops (cold, warm)")
        for t in (1, 32, 33, 64, 65, 128, 129, 256, 257, 384, 385, 512):
            print(f"  {t:7d} {s_cold[t]:14.0f} {k_cold[t]:14.0f} {k_warm[t]:12.0f}")
        bs, bk = max(s_cold, key=s_cold.get), max(k_cold, key=k_cold.get)
        bk2 = max(k_warm, key=k_warm.get)
        print(f"  best threads: sweep {bs} (cold), {max(s_warm, key=s_warm.get)} (warm); kernel tuner {bk} (cold), {bk2} (warm)")
        print()


if __name__ == "__main__":
    main()
