#!/usr/bin/env python3
"""Where a traced sweep's time goes (issue 10, the cold-time target): a run made with SWEEP_TRACE=1 (each point's
stderr.txt and harness.trace), split per point into the phases of its program and summed over the run:

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

GPU = re.compile(r"^# trace-gpu ([0-9.]+) ms in (\d+) samples x (\d+), (\d+) passes")


def point(d):
    """The trace marks of one point, in order, and its trace-gpu lines."""
    marks, gpu = [], []
    for name in ("harness.trace", "stderr.txt"):
        p = os.path.join(d, name)
        if not os.path.exists(p):
            continue
        for line in open(p):
            if line.startswith("# trace "):
                _, _, ph, v = line.split()
                marks.append((ph, float(v)))
            elif (g := GPU.match(line)):
                gpu.append((float(g[1]) / 1e3, int(g[2]), int(g[4])))
    marks.sort(key=lambda m: m[1])
    return marks, gpu


def phases(marks, gpu):
    first = {}
    for ph, t in marks:
        first.setdefault(ph, t)
    out = {k: 0.0 for k in ("exec", "driver", "context", "queries", "bench set-up", "to first place + warm-up",
                            "samples (GPU)", "between samples", "after sampling", "between metrics",
                            "to exit mark", "teardown")}
    need = ("go", "main", "ctx-lock", "context", "gate", "exit", "reaped")
    if any(k not in first for k in need):
        return None
    if not first["go"] <= first["main"] <= first["exit"] <= first["reaped"] <= first["go"] + 30:
        return None  # a held point re-run in more processes: its stderr.txt is the last process's
    out["exec"] = first["main"] - first["go"]
    out["driver"] = first["ctx-lock"] - first["main"]
    out["context"] = first["context"] - first["ctx-lock"]
    out["queries"] = first["gate"] - first["context"]
    out["teardown"] = first["reaped"] - first["exit"]
    seq = [(ph, t) for ph, t in marks if t >= first["gate"]]
    begins = [i for i, (ph, _) in enumerate(seq) if ph == "m-begin"]
    if not begins:
        return None
    out["bench set-up"] = seq[begins[0]][1] - first["gate"]
    for n, i in enumerate(begins):
        t = {ph: v for ph, v in seq[i:i + 4]}
        report = seq[i + 3][1]
        out["to first place + warm-up"] += t["m-ready"] - t["m-begin"]
        sampled = t["m-sampled"] - t["m-ready"]
        g = gpu[n][0] if n < len(gpu) else 0.0
        out["samples (GPU)"] += g
        out["between samples"] += sampled - g
        out["after sampling"] += report - t["m-sampled"]
        nxt = seq[begins[n + 1]][1] if n + 1 < len(begins) else None
        if nxt is not None:
            out["between metrics"] += nxt - report
        else:
            out["to exit mark"] = first["exit"] - report
    return out


def main(run):
    pts = []
    for d in glob.glob(os.path.join(run, "points", "*")):
        m, g = point(d)
        p = phases(m, g)
        if p is not None:
            p["_go"] = dict(m).get("go")
            p["_m0"] = next(t for ph, t in m if ph == "m-begin")
            p["_exit"] = dict(m).get("exit")
            p["_passes"] = sum(x[2] for x in g)
            p["_samples"] = sum(x[1] for x in g)
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
