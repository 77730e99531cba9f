"""Where a point's wall time goes: reads the "# trace <phase> <unix time>" lines that a run with
SWEEP_TRACE=1 leaves in each point's stderr.txt (timing core) and harness.trace (sweep) and prints
the median (and 90th percentile) of each phase over the points of each run folder.
Usage: python3 scripts/phases.py RUN_DIR...   (a run folder, or any folder above run folders)"""
import glob, os, statistics as st, sys

PHASES = [  # label, start mark, end mark (the last metric's mark is "last")
    ("start-up: main -> context created", "main", "context"),
    ("driver loaded, measure lock taken", "main", "ctx-lock"),
    ("context creation (lock held)", "ctx-lock", "context"),
    ("ready before the gate opened", "context", "go"),
    ("gate opened -> program passed it", "go", "gate"),
    ("measuring: gate -> last metric", "gate", "last"),
    ("teardown: last metric -> exit seen", "last", "reaped"),
    ("run_s: gate opened -> exit seen", "go", "reaped"),
]
FIXED = {"main", "ctx-lock", "context", "gate", "session-lock", "teardown", "exit", "go", "reaped", "m-begin", "m-ready", "m-sampled"}


def marks(point_dir):
    t = {}
    for f in ("stderr.txt", "harness.trace"):
        path = os.path.join(point_dir, f)
        if not os.path.exists(path):
            continue
        for line in open(path):
            if line.startswith("# trace "):
                _, _, phase, v = line.split()
                t[phase] = float(v)
                if phase not in FIXED:
                    t["last"] = float(v)  # metrics come in order; keep the latest
    return t


def inside(point_dir):
    """Per point, the measuring time split by the timing core's m-* marks (summed over its metrics):
    set-up (m-begin -> m-ready: first placement, warm-up calls, clock probe), sampling (m-ready ->
    m-sampled), wrap-up (m-sampled -> the metric's report: clock probe, the bench's checks), between
    metrics (report -> next m-begin: the bench's own work), and the GPU time of the samples."""
    path = os.path.join(point_dir, "stderr.txt")
    if not os.path.exists(path):
        return None
    parts = {"set-up": 0.0, "sampling": 0.0, "wrap-up": 0.0, "between metrics": 0.0, "samples' GPU time": 0.0}
    prev, prev_phase, last_report = None, None, None
    for line in open(path):
        if line.startswith("# trace-gpu "):
            parts["samples' GPU time"] += float(line.split()[2]) / 1e3
        if not line.startswith("# trace "):
            continue
        _, _, phase, v = line.split()
        v = float(v)
        if phase == "m-begin" and last_report is not None:
            parts["between metrics"] += v - last_report
        elif phase == "m-ready":
            parts["set-up"] += v - prev
        elif phase == "m-sampled":
            parts["sampling"] += v - prev
        elif phase not in FIXED and prev is not None and prev_phase == "m-sampled":
            parts["wrap-up"] += v - prev
            last_report = v
        prev, prev_phase = v, phase
    return parts if prev is not None else None


def main(roots):
    for root in roots:
        points = [marks(os.path.dirname(p)) for p in glob.glob(f"{root}/**/harness.trace", recursive=True)]
        points = [t for t in points if all(k in t for k in ("main", "context", "go", "gate", "last", "reaped"))]
        print(f"{root}: {len(points)} traced points")
        for label, a, b in PHASES:
            v = sorted(t[b] - t[a] for t in points)
            if v:
                print(f"  {label:38s} median {st.median(v) * 1e3:7.1f} ms   90th pct {v[int(.9 * len(v))] * 1e3:7.1f} ms")
        split = [p for p in (inside(os.path.dirname(p)) for p in glob.glob(f"{root}/**/harness.trace", recursive=True)) if p]
        split = [p for p in split if p["sampling"] > 0]
        for k in (split[0] if split else {}):
            v = sorted(p[k] for p in split)
            print(f"  measuring, {k:31s} median {st.median(v) * 1e3:7.1f} ms   90th pct {v[int(.9 * len(v))] * 1e3:7.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
