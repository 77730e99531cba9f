#!/usr/bin/env python3
"""MFlops and shared-memory wavefronts per request against threads, one chart (two panels sharing the
x axis), from a `[profile]` run of the half-warp sweep (issue 16).
usage: python3 bench/profile_chart.py tests/fixtures/h100/halfwarp_counters OUT.svg"""
import csv, json, sys

run, out = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(f"{run}/results.csv")))
man = json.load(open(f"{run}/manifest.json"))
series = [("shared_stride1", "#1f77b4"), ("shared_stride2", "#d62728"),
          ("shared_stride4", "#2ca02c"), ("shared_stride8", "#9467bd")]
xs = [int(r["threads"]) for r in rows]
W, H, L, R, T = 900, 590, 80, 170, 40
panels = [(T, 250, "TFLOP/s", lambda r, m: float(r[m + "_mflops"]) / 1e6),
          (T + 280, 200, "wavefronts per request", lambda r, m: float(r[m + "__shared_wavefronts_per_request"]))]
xmin, xmax = 0, max(xs)
sx = lambda x: L + (x - xmin) / (xmax - xmin) * (W - L - R)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="DejaVu Sans, sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="15">half-warp sweep on the H100: MFlops and what ncu counts, per store layout</text>']
for top, h, label, get in panels:
    vals = [get(r, m) for r in rows for m, _ in series]
    ymax = max(vals) * 1.08
    sy = lambda y, top=top, h=h, ymax=ymax: top + h - y / ymax * h
    svg.append(f'<rect x="{L}" y="{top}" width="{W-L-R}" height="{h}" fill="none" stroke="#444"/>')
    step = 1 if ymax < 10 else 2
    y = 0
    while y <= ymax:
        svg.append(f'<line x1="{L}" x2="{W-R}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{L-6}" y="{sy(y)+4:.1f}" text-anchor="end">{y}</text>')
        y += step
    for x in range(16, xmax + 1, 16):
        svg.append(f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{top}" y2="{top+h}" stroke="#ddd"/>')
    svg.append(f'<text transform="translate({L-50},{top+h/2}) rotate(-90)" text-anchor="middle">{label}</text>')
    for m, color in series:
        pts = " ".join(f"{sx(int(r['threads'])):.1f},{sy(get(r, m)):.1f}" for r in rows)
        svg.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.5"/>')
for x in range(16, xmax + 1, 16):
    svg.append(f'<text x="{sx(x):.1f}" y="{panels[1][0]+panels[1][1]+16}" text-anchor="middle">{x}</text>')
svg.append(f'<text x="{(L+W-R)/2}" y="{panels[1][0]+panels[1][1]+36}" text-anchor="middle">threads per block (ticks every 16: a half-warp)</text>')
for i, (m, color) in enumerate(series):
    y = T + 20 + 22 * i
    svg.append(f'<line x1="{W-R+12}" x2="{W-R+36}" y1="{y}" y2="{y}" stroke="{color}" stroke-width="2"/>')
    svg.append(f'<text x="{W-R+42}" y="{y+4}">{m.replace("shared_", "")}</text>')
gpu = man.get("gpu", {})
foot = f"{rows[0]['gpu_name']}; counters: Nsight Compute, one launch per metric after the timed run; {run}"
svg.append(f'<text x="{L}" y="{H-8}" font-size="10" fill="#555">{foot}</text>')
svg.append("</svg>")
open(out, "w").write("\n".join(svg) + "\n")
print(f"wrote {out}")
