#!/usr/bin/env python3
"""Where a band run's time goes (bench/band.sh with SWEEP_TRACE=1): per label, the medians over its points of
go->main, main->ctx-lock (cudaGetDeviceCount), ctx-lock->context (context creation), gate->exit, exit->reaped
(teardown), and the GPU's idle time between two measurements: from one program's `exit` mark (printed right
after its last metric) to the next program's first `m-begin`. The traces are read by bench/band.py's marks().
Usage: bench/band_phases.py DIR (the unpacked band.tgz)"""
import glob, os, statistics as st, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from band import marks  # noqa: E402


def main(root):
    for label in sorted(os.listdir(root)):
        pts = [m for m in map(marks, glob.glob(f"{root}/{label}/*/*/points/*")) if "go" in m and "gate" in m]
        pts.sort(key=lambda m: m["go"])

        def med(a, b):
            v = [m[b] - m[a] for m in pts if a in m and b in m]
            return 1000 * st.median(v) if v else float("nan")

        idle = [pts[i + 1]["m-begin"] - pts[i]["exit"] for i in range(len(pts) - 1)
                if "exit" in pts[i] and "m-begin" in pts[i + 1]]
        print(f"{label:6s} n={len(pts)} go->main {med('go', 'main'):.1f} main->ctx-lock {med('main', 'ctx-lock'):.1f} "
              f"ctx {med('ctx-lock', 'context'):.1f} gate->exit {med('gate', 'exit'):.1f} "
              f"exit->reaped {med('exit', 'reaped'):.1f} GPU idle between measurements {1000 * st.median(idle):.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
