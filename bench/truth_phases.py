#!/usr/bin/env python3
"""Where a traced sweep's time goes (issue 10, the cold-time target): a run made with SWEEP_TRACE=1 (each point's
stderr.txt and harness.trace), split per point into the phases of its program and summed over the run, with the
trace readers of scripts/phases.py (`marks`, and `inside` for the measuring split):

  start-up     go -> main (exec), main -> ctx-lock (cudaGetDeviceCount: loads the driver), ctx-lock -> context
               (context creation), context -> gate (device queries), gate -> first m-begin (the bench's set-up:
               host data, allocations, copies)
  per metric   m-begin -> m-ready (buffers to the first place, warm-up calls, clock probe), m-ready -> m-sampled
               split into the samples' GPU time (trace-gpu) and the rest (the host's turn-around between samples,
               moving the buffers, one untimed call at each visit), m-sampled -> report (clock probe, statistics,
               the bench's result check), report -> next m-begin (the bench's work between two metrics)
  teardown     last report -> exit mark, exit -> reaped (context teardown, process exit)

and the GPU's idle time between two programs' measurements (one program's exit mark to the next one's first
m-begin; bench/band.txt: below ~250 ms the 8 % low state of shared_nc_grid came back on two hosts).
Usage: bench/truth_phases.py RUN_DIR (the folder holding results.csv and points/)"""
import glob, os, re, statistics as st, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from phases import inside, marks  # noqa: E402

PASSES = re.compile(r"^# trace-gpu [0-9.]+ ms in (\d+) samples x \d+, (\d+) passes")


def first_m_begin(d):
    for line in open(os.path.join(d, "stderr.txt")):
        if line.startswith("# trace m-begin "):
            return float(line.split()[3])
    return None


def phases(d):
    """One point's phases (seconds), or None for a point whose trace is not one process's."""
    # A held point re-run in more processes: harness.trace has each one's start, stderr.txt only the last's.
    if sum(l.startswith("# trace go ") for l in open(os.path.join(d, "harness.trace"))) != 1:
        return None
    t = marks(d)
    if any(k not in t for k in ("go", "main", "ctx-lock", "context", "gate", "exit", "reaped", "last")):
        return None
    split, m0 = inside(d), first_m_begin(d)
    if split is None or m0 is None:
        return None
    return {
        "exec": t["main"] - t["go"],
        "driver": t["ctx-lock"] - t["main"],
        "context": t["context"] - t["ctx-lock"],
        "queries": t["gate"] - t["context"],
        "bench set-up": m0 - t["gate"],
        "to first place + warm-up": split["set-up"],
        "samples (GPU)": split["samples' GPU time"],
        "between samples": split["sampling"] - split["samples' GPU time"],
        "after sampling": split["wrap-up"],
        "between metrics": split["between metrics"],
        "to exit mark": t["exit"] - t["last"],
        "teardown": t["reaped"] - t["exit"],
        "_go": t["go"], "_m0": m0, "_exit": t["exit"],
    }


def counts(d):
    g = [PASSES.match(l) for l in open(os.path.join(d, "stderr.txt"))]
    return sum(int(m[1]) for m in g if m), sum(int(m[2]) for m in g if m)


def main(run):
    pts = []
    for d in glob.glob(os.path.join(run, "points", "*")):
        p = phases(d)
        if p is not None:
            p["_samples"], p["_passes"] = counts(d)
            pts.append(p)
    pts.sort(key=lambda p: p["_go"])
    keys = [k for k in pts[0] if not k.startswith("_")]
    total = sum(sum(p[k] for k in keys) for p in pts)
    print(f"{len(pts)} points with one consistent trace; programs' time (go -> reaped) {total:.1f} s; per point median, and the run's sum:")
    for k in keys:
        v = [p[k] for p in pts]
        print(f"  {k:<26s} {1e3 * st.median(v):8.1f} ms  {sum(v):7.1f} s  {sum(v) / total:6.1%}")
    idle = [b["_m0"] - a["_exit"] for a, b in zip(pts, pts[1:])]
    print(f"  GPU idle between two programs' measurements: median {1e3 * st.median(idle):.1f} ms")
    print(f"  passes per point median {st.median(p['_passes'] for p in pts)}, samples {st.median(p['_samples'] for p in pts)}")


if __name__ == "__main__":
    main(sys.argv[1])
