#!/usr/bin/env python3
"""Where a band run's time goes (bench/band.sh with SWEEP_TRACE=1): per label, the medians over its points of
go->main, main->ctx-lock (cudaGetDeviceCount), ctx-lock->context (context creation), gate->exit, exit->reaped
(teardown), and the GPU's idle time between one program's last sample and the next one's first.
Usage: bench/band_phases.py DIR (the unpacked band.tgz)"""
import glob, os, statistics as st, sys
root=sys.argv[1]
for label in sorted(os.listdir(root)):
    pts=[]
    for d in glob.glob(f"{root}/{label}/*/*/points/*"):
        m={}
        for n in ("stderr.txt","harness.trace"):
            p=os.path.join(d,n)
            if os.path.exists(p):
                for line in open(p):
                    if line.startswith("# trace "):
                        parts=line.split()
                        if len(parts)==4: m.setdefault(parts[2],float(parts[3]))
        if "go" in m and "gate" in m: pts.append(m)
    pts.sort(key=lambda m:m["go"])
    def med(f):
        v=[f(m) for m in pts if f(m) is not None]; return 1000*st.median(v) if v else float('nan')
    g=lambda a,b:(lambda m: m[b]-m[a] if a in m and b in m else None)
    idle=[ (pts[i+1].get("m-begin",0)-pts[i]["exit"]) for i in range(len(pts)-1) if "exit" in pts[i]]
    print(f"{label:6s} n={len(pts)} go->main {med(g('go','main')):.1f} main->ctx-lock {med(g('main','ctx-lock')):.1f} ctx {med(g('ctx-lock','context')):.1f} gate->exit {med(g('gate','exit')):.1f} exit->reaped {med(g('exit','reaped')):.1f} GPU idle between measurements {1000*st.median(idle):.1f}")
