#!/usr/bin/env python3
"""Every number in docs/results.md, computed from the committed H100 results.

Reads tests/fixtures/h100/<sweep>/results.csv (and manifest.json for metric units; analysis.json
only to print `sweep analyze`'s period beside this script's own check) and prints, per claim of
the source studies, the figures the table uses. Standard library only.

Usage: python3 bench/claims.py [FIXTURES_DIR] > bench/claims.txt   (default tests/fixtures/h100)

Conventions
- A value is what the timing core reports (`<metric>_<unit>` column): since the placements
  (issue 10) the median over buffer placements of each placement's mean, before them the mean of
  the samples; its within-placement 95 % confidence half-width over the mean is `<metric>_rel_ci`,
  and `<metric>_spread` (where present) the range of the placements' means over the median.
- Points with status `ok`, `noisy` or `unstable` are data (as in `sweep analyze`); `noisy` and
  `unstable` points are counted in the last section.
- "Step after t" in the thread sweep is y(t+1)/y(t) - 1: negative where one more thread makes
  the kernel slower, i.e. where a sawtooth tooth ends.
"""
import csv
import json
import math
import os
import statistics
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/h100"
DATA = ("ok", "noisy", "unstable")


def load(sweep):
    with open(os.path.join(ROOT, sweep, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


def manifest(sweep):
    with open(os.path.join(ROOT, sweep, "manifest.json")) as f:
        return json.load(f)


def analysis_period(sweep, series):
    """Period that `sweep analyze` wrote to analysis.json for one series (None: no period)."""
    path = os.path.join(ROOT, sweep, "analysis.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for s in json.load(f)["series"]:
            if s["name"] == series:
                return s["period"]["period"] if s.get("period") else None
    return None


def num(row, col):
    return float(row[col])


def pick(rows, **axes):
    """The one data row whose axes equal the given values (compared as strings)."""
    hits = [r for r in rows if all(r[k] == str(v) for k, v in axes.items()) and r["status"] in DATA]
    assert len(hits) == 1, (axes, len(hits))
    return hits[0]


def series(rows, x, col, **axes):
    """{x: value} of one metric column over the data rows matching the other axes."""
    out = {}
    for r in rows:
        if r["status"] in DATA and all(r[k] == str(v) for k, v in axes.items()):
            out[int(r[x])] = num(r, col)
    return out


def pct(v):
    return f"{100 * v:+.1f} %"


def head(title):
    print()
    print(f"== {title}")


def mean(v):
    return statistics.fmean(v)


# ---------------------------------------------------------------------------------------------
def threads():
    """Pogorilyy et al. 2010, Fig. 2 and 3: MFlops vs threads per block, 1..512."""
    head("threads_1_512 (Pogorilyy 2010, Fig. 2-3): MFlops vs threads per block")
    rows = load("threads_1_512")
    names = ["shared_nc", "shared_2way", "shared_3way", "global_all", "global_even", "global_half"]
    y = {}
    for n in names:
        for s in ("1blk", "grid"):
            y[f"{n}_{s}"] = series(rows, "threads", f"{n}_{s}_mflops")
    assert all(len(v) == 512 for v in y.values())

    def v2(t):  # largest power of two dividing t, capped at 128
        p = 1
        while t % (2 * p) == 0 and p < 128:
            p *= 2
        return p

    classes = [1, 2, 4, 8, 16, 32, 64, 128]
    print("[P1,P2] mean step after t, by the largest power of two dividing t (1 = odd t, ...,")
    print("        128 = t in {128, 256, 384}); period = smallest class from which every mean step")
    print("        is a drop (< -3 %) while every smaller class rises; sweep analyze's period beside")
    print(f"        {'series':20s} " + " ".join(f"{c:>7d}" for c in classes) + "   period  analyze")
    periods = {}
    for name, s in y.items():
        steps = {c: [] for c in classes}
        for t in range(1, 512):
            steps[v2(t)].append(s[t + 1] / s[t] - 1)
        m = {c: mean(v) for c, v in steps.items()}
        period = None
        for i, c in enumerate(classes):
            if all(m[d] < -0.03 for d in classes[i:]) and all(m[d] > -0.03 for d in classes[:i]):
                period = c
                break
        periods[name] = period
        ana = analysis_period("threads_1_512", f"{name}_mflops")
        print(f"        {name:20s} " + " ".join(f"{100 * m[c]:+6.1f}%" for c in classes)
              + f"   {str(period):>6s}  {ana if ana is None else int(ana)}")

    print("[P1] ramp and teeth, at the series' period P: y(P)/(P * y(1)) (1.00 = MFlops exactly")
    print("     proportional to the thread count up to the first tooth); peaks y(kP), k >= 2: min .. max")
    for name, s in y.items():
        P = periods[name]
        rest = [s[t] for t in range(2 * P, 513, P)]
        print(f"     {name:20s} P = {P:3d}: y(P)/(P*y(1)) = {s[P] / (P * s[1]):.2f}; y(P) = {s[P]:.0f}, "
              f"peaks after it {min(rest):.0f} .. {max(rest):.0f} MFlops")

    print("[P3] best thread count (argmax of the mean) per series")
    for name, s in y.items():
        best = max(s, key=s.get)
        print(f"     {name:20s} best t = {best:3d} ({s[best]:.0f} MFlops); multiple of 16: "
              f"{best % 16 == 0}, of 32: {best % 32 == 0}")

    print("[P4] largest cost of one extra thread: max over t of y(t) - y(t+1)")
    for name, s in y.items():
        t = max(range(1, 512), key=lambda t: s[t] - s[t + 1])
        print(f"     {name:20s} t = {t:3d} -> {t + 1:3d}: -{s[t] - s[t + 1]:.0f} MFlops "
              f"({pct(s[t + 1] / s[t] - 1)})")

    print("[P5] shared-memory stores with 2- and 3-way bank conflicts, as a fraction of conflict-free")
    for s in ("1blk", "grid"):
        nc, w2, w3 = (y[f"shared_{k}_{s}"] for k in ("nc", "2way", "3way"))
        big = range(128, 513)
        print(f"     {s:4s}: at t = 512: 2-way {w2[512] / nc[512]:.3f}, 3-way {w3[512] / nc[512]:.3f}; "
              f"mean over t = 128..512: 2-way {mean([w2[t] / nc[t] for t in big]):.3f}, "
              f"3-way {mean([w3[t] / nc[t] for t in big]):.3f}")

    print("[P6] global stores by every thread vs conflict-free shared stores")
    for s in ("1blk", "grid"):
        sh, gl = y[f"shared_nc_{s}"], y[f"global_all_{s}"]
        ts = range(1, 513)
        print(f"     {s:4s}: mean over t = 1..512 of shared - global = {mean([sh[t] - gl[t] for t in ts]):.0f} "
              f"MFlops; global/shared at t = 512: {gl[512] / sh[512]:.3f}, "
              f"mean over t = 128..512: {mean([gl[t] / sh[t] for t in range(128, 513)]):.3f}")

    print("[P7] partial global stores: first half vs even threads vs every thread, t = 224..512")
    for s in ("1blk", "grid"):
        al, ev, hf = (y[f"global_{k}_{s}"] for k in ("all", "even", "half"))
        ts = range(224, 513)
        r = [hf[t] / ev[t] for t in ts]
        print(f"     {s:4s}: half/even at t = 224: {hf[224] / ev[224]:.2f}; over t = 224..512: "
              f"mean {mean(r):.2f}, min {min(r):.2f}, max {max(r):.2f}")
        print(f"           even/all mean {mean([ev[t] / al[t] for t in ts]):.3f}; "
              f"half/all mean {mean([hf[t] / al[t] for t in ts]):.2f}; "
              f"even / best of half = {mean([ev[t] for t in ts]) / max(hf.values()):.2f} "
              f"(mean of even over t = 224..512 / max of half)")
        print(f"           at t = 512 (MFlops): all {al[512]:.0f}, even {ev[512]:.0f}, half {hf[512]:.0f}")
    return periods


# ---------------------------------------------------------------------------------------------
def copies():
    """Conrad 2010, section 4.2, Fig. 4.4: coalesced, misaligned and strided copies."""
    head("copy_all / copy_offset / copy_stride (Conrad 2010, Fig. 4.4): fraction of cudaMemcpy D2D")
    ca = load("copy_all")
    c0 = pick(ca, variant="coalesced", offset=0, stride=1)
    frac = num(c0, "copy_vs_memcpy_fraction")
    print(f"[Q1] copy_all, coalesced (offset 0, stride 1): copy {num(c0, 'copy_gb_per_s'):.1f} GB/s, "
          f"memcpy_d2d {num(c0, 'memcpy_d2d_gb_per_s'):.1f} GB/s in the same program; "
          f"copy_vs_memcpy_fraction = {frac:.4f} (target >= 0.90: {'met' if frac >= 0.90 else 'NOT met'})")
    co, cs = load("copy_offset"), load("copy_stride")
    print(f"     same in the dedicated sweeps: copy_offset offset 0: "
          f"{num(pick(co, offset=0), 'copy_vs_memcpy_fraction'):.4f}, copy_stride stride 1: "
          f"{num(pick(cs, stride=1), 'copy_vs_memcpy_fraction'):.4f}")

    for name, rows, extra in (("copy_offset", co, {}), ("copy_all", ca, {"variant": "offset"})):
        f = series(rows, "offset", "copy_vs_memcpy_fraction", **extra)
        gb = series(rows, "offset", "copy_gb_per_s", **extra)
        odd = [f[o] for o in f if o % 8]
        m4 = [f[o] for o in f if o % 4 == 0 and o % 8]
        m8 = [f[o] for o in f if o % 8 == 0 and o % 32]
        print(f"[C1,C2] {name}: copy_vs_memcpy_fraction by offset (elements of 4 bytes)")
        print(f"     offset 0: {f[0]:.3f}; offset 1: {f[1]:.3f} ({gb[1]:.0f} vs {gb[0]:.0f} GB/s, "
              f"{pct(gb[1] / gb[0] - 1)}); offset 31: {f[31]:.3f}; offset 32: {f[32]:.3f}")
        print(f"     offsets not multiple of 8 ({len(odd)}): mean {mean(odd):.3f}, min {min(odd):.3f}, "
              f"max {max(odd):.3f}; of those, multiples of 4: mean {mean(m4):.3f}")
        print(f"     offsets 8, 16, 24: {', '.join(f'{f[o]:.3f}' for o in (8, 16, 24))} (mean {mean(m8):.3f})")
        print(f"     sweep analyze period of copy_gb_per_s: "
              f"{analysis_period(name, 'copy_gb_per_s [variant=offset]') if name == 'copy_offset' else 'n/a (x = stride there)'}")

    for name, rows, extra in (("copy_stride", cs, {}), ("copy_all", ca, {"variant": "stride"})):
        f = series(rows, "stride", "copy_vs_memcpy_fraction", **extra)
        ss = sorted(f)
        low = min(f, key=f.get)
        rises = [s for a, s in zip(ss, ss[1:]) if s <= 32 and f[s] > f[a]]
        big = [f[s] for s in ss if s >= 32]
        print(f"[C3] {name}: copy_vs_memcpy_fraction by stride")
        print("     " + ", ".join(f"{s}: {f[s]:.3f}" for s in (1, 2, 3, 4, 8, 16, 31, 32, 64, 128, 256, 512, 1024)))
        print(f"     lowest: stride {low} = {f[low]:.3f} ({f[1] / f[low]:.1f}x below stride 1); "
              f"strides >= 32: {min(big):.3f} .. {max(big):.3f}")
        print(f"     strides 2..32 where the fraction rises over the previous stride: {rises}")


# ---------------------------------------------------------------------------------------------
def transpose():
    """Conrad 2010, sections 4.3-4.4, Fig. 4.7 and 4.11."""
    head("transpose_sizes (Conrad 2010, Fig. 4.7, 4.11): n x n floats, 16x16 blocks")
    rows = load("transpose_sizes")
    V = ["naive", "shared", "padded", "diagonal"]
    gb = {v: series(rows, "n", "transpose_gb_per_s", variant=v) for v in V}
    fr = {v: series(rows, "n", "transpose_vs_memcpy_fraction", variant=v) for v in V}
    large = [n for n in sorted(gb["naive"]) if n >= 3072]
    print(f"large n = {large[0]}..{large[-1]} ({len(large)} sizes; memcpy_d2d there: "
          f"{min(series(rows, 'n', 'memcpy_d2d_gb_per_s', variant='naive')[n] for n in large):.0f}.."
          f"{max(series(rows, 'n', 'memcpy_d2d_gb_per_s', variant='naive')[n] for n in large):.0f} GB/s)")
    print("[T1,T2,T3,T5] mean over large n: transpose_vs_memcpy_fraction, GB/s, max/min - 1 of GB/s")
    for v in V:
        g = [gb[v][n] for n in large]
        print(f"     {v:8s}: fraction {mean([fr[v][n] for n in large]):.3f} "
              f"(1/fraction = {1 / mean([fr[v][n] for n in large]):.1f}x below memcpy), "
              f"{mean(g):.0f} GB/s, spread {pct(max(g) / min(g) - 1)}")
    r = [gb["shared"][n] / gb["naive"][n] for n in large]
    nv = fr["naive"]
    print(f"[T1] naive: lowest transpose_vs_memcpy_fraction over all n: {min(nv.values()):.3f} at n = "
          f"{min(nv, key=nv.get)} ({1 / min(nv.values()):.1f}x below memcpy)")
    print(f"[T2] shared/naive over large n: mean {mean(r):.2f}, min {min(r):.2f}")
    gain = {n: gb["padded"][n] / gb["shared"][n] - 1 for n in gb["padded"]}
    top = max(gain, key=gain.get)
    print(f"[T3] padded/shared - 1: mean over large n {pct(mean([gain[n] for n in large]))}; "
          f"max over all n {pct(gain[top])} at n = {top}")
    d = [gb["diagonal"][n] / gb["padded"][n] - 1 for n in large]
    print(f"[T5] diagonal/padded - 1 over large n: mean {pct(mean(d))}, "
          f"range {pct(min(d))} .. {pct(max(d))}")
    print("[T4] GB/s at n, over the mean of its neighbours n-128 and n+128 (< 1: a drop at n)")
    mult = [n for n in range(1024, 4096, 512)]
    for v in V:
        ratio = {n: gb[v][n] / ((gb[v][n - 128] + gb[v][n + 128]) / 2)
                 for n in gb[v] if n - 128 in gb[v] and n + 128 in gb[v] and n >= 1024}
        at = [ratio[n] for n in mult]
        other = [ratio[n] for n in ratio if n % 512]
        print(f"     {v:8s}: at n = 1024..3584 step 512: " + " ".join(f"{x:.3f}" for x in at)
              + f"  (min {min(at):.3f}); other n >= 1024: {min(other):.3f} .. {max(other):.3f}")


# ---------------------------------------------------------------------------------------------
def matmul():
    head("matmul_tile (course notes, tiled matrix multiply): GFlops and occupancy vs TILE_WIDTH")
    rows = load("matmul_tile")
    for n in (1024, 2048):
        g = series(rows, "tile", "matmul_gflops", n=n)
        print(f"[K1,K2] n = {n}:")
        for t in sorted(g):
            r = pick(rows, n=n, tile=t)
            print(f"     tile {t:2d}: {g[t]:8.1f} GFlops, occupancy {num(r, 'occupancy_fraction'):.2f}, "
                  f"blocks/SM {num(r, 'blocks_per_sm_blocks'):.0f}, regs/thread "
                  f"{num(r, 'regs_per_thread_registers'):.0f}, smem/block {num(r, 'smem_per_block_bytes'):.0f} B")
        print(f"     tile 32 / tile 16 = {g[32] / g[16]:.2f}; tile 32 / tile 4 = {g[32] / g[4]:.2f}")


def reduction():
    head("reduction (course notes, 'Reducción paralela'): GB/s of input vs block size")
    rows = load("reduction")
    V = ["interleaved", "strided_index", "sequential"]
    gb = {v: series(rows, "block", "reduction_gb_per_s", variant=v) for v in V}
    mc = series(rows, "block", "memcpy_d2d_gb_per_s", variant="sequential")
    print("[K3] block: interleaved/sequential, strided_index/sequential, sequential/memcpy_d2d")
    for b in sorted(gb["sequential"]):
        print(f"     {b:4d}: {gb['interleaved'][b] / gb['sequential'][b]:.3f}  "
              f"{gb['strided_index'][b] / gb['sequential'][b]:.3f}  {gb['sequential'][b] / mc[b]:.3f}  "
              f"(sequential {gb['sequential'][b]:.0f} GB/s)")
    for v in V:
        b = max(gb[v], key=gb[v].get)
        print(f"     best {v:13s}: block {b}, {gb[v][b]:.0f} GB/s = {gb[v][b] / mc[b]:.2f} of memcpy_d2d")


def divergence():
    head("divergence (course notes, 'Instrucciones de control de flujo'): GFlops vs K")
    rows = load("divergence")
    g = {v: series(rows, "k", "divergence_gflops", variant=v) for v in ("thread", "warp", "lane")}
    dw = {v: series(rows, "k", "divergent_warps_fraction", variant=v) for v in ("thread", "lane")}
    ref = mean(g["warp"].values())
    print(f"[K4] warp variant (reference): mean {ref:.0f} GFlops, max/min - 1 = "
          f"{pct(max(g['warp'].values()) / min(g['warp'].values()) - 1)}")
    t_div = [g["thread"][k] / ref for k in g["thread"] if dw["thread"][k] > 0]
    t_uni = {k: g["thread"][k] / ref for k in g["thread"] if dw["thread"][k] == 0}
    print(f"     thread (divergent_warps = 0.125, K = {sorted(k for k in g['thread'] if dw['thread'][k] > 0)}): "
          f"{mean(t_div):.4f} of warp (8/9 = {8 / 9:.4f}); at K = {sorted(t_uni)}: "
          + ", ".join(f"{x:.3f}" for x in t_uni.values()))
    l_div = [g["lane"][k] / ref for k in g["lane"] if dw["lane"][k] > 0]
    l_uni = [g["lane"][k] / ref for k in g["lane"] if dw["lane"][k] == 0]
    print(f"     lane (every warp split, K < 31): {mean(l_div):.3f} of warp; K >= 31: "
          f"{min(l_uni):.3f} .. {max(l_uni):.3f}")


def bank_stride():
    head("bank_stride (dissertation Fig. 3.4; course notes 'Direccionamiento de bancos')")
    rows = load("bank_stride")
    gb = series(rows, "stride", "bank_stride_gb_per_s")
    ways = series(rows, "stride", "expected_ways_ways")
    peak = gb[1]
    model = {s: gb[s] / (peak / ways[s]) for s in gb}
    print(f"[K5] measured / (stride-1 bandwidth / gcd(stride, 32)) over strides 1..64: "
          f"min {min(model.values()):.3f} (stride {min(model, key=model.get)}), "
          f"max {max(model.values()):.3f} (stride {max(model, key=model.get)})")
    for w in sorted(set(ways.values())):
        v = [gb[s] / peak for s in gb if ways[s] == w]
        print(f"     {int(w):2d}-way ({len(v):2d} strides): {mean(v):.4f} of stride 1 (1/{int(w)} = {1 / w:.4f})")
    print(f"     stride 3: {gb[3] / peak:.3f}, stride 6: {gb[6] / peak:.3f}, stride 32: {gb[32] / peak:.4f}, "
          f"stride 64: {gb[64] / peak:.4f} of stride 1 ({peak:.0f} GB/s)")
    print(f"     sweep analyze period: {analysis_period('bank_stride', 'bank_stride_gb_per_s')}")


def l1_cache():
    head("l1_cache (Kolganov lecture 2, L1 on/off): useful GB/s of loads")
    rows = load("l1_cache")
    ca, cg = "-Xptxas -dlcm=ca", "-Xptxas -dlcm=cg"
    g = {(r["pattern"], r["caching"]): num(r, "l1_cache_gb_per_s") for r in rows if r["status"] in DATA}
    mc = mean([num(r, "memcpy_d2d_gb_per_s") for r in rows if r["status"] in DATA])
    print(f"[L1,L2] pattern: ca (L1 on) GB/s, cg (L1 off) GB/s, ca/cg; "
          f"(memcpy_d2d mean over the 8 points {mc:.0f} GB/s)")
    for p in ("coalesced", "misaligned", "strided", "scattered"):
        print(f"     {p:10s}: {g[p, ca]:7.1f} {g[p, cg]:7.1f}  {g[p, ca] / g[p, cg]:.3f}")
    print(f"     strided: cg/ca - 1 = {pct(g['strided', cg] / g['strided', ca] - 1)}")
    for c in (ca, cg):
        print(f"     {c[-7:]}: misaligned/coalesced {g['misaligned', c] / g['coalesced', c]:.3f}, "
              f"strided/coalesced {g['strided', c] / g['coalesced', c]:.3f}, "
              f"scattered/coalesced {g['scattered', c] / g['coalesced', c]:.3f}")


def aos_soa():
    head("aos_soa (Kolganov lecture 2, AoS vs SoA): useful GB/s, records of 8 ints")
    rows = load("aos_soa")
    print("[L3] touched: AoS GB/s, SoA GB/s, SoA/AoS, AoS/memcpy_d2d vs (touched+1)/9, SoA/memcpy_d2d")
    for t in (1, 2, 4, 8):
        a, s = pick(rows, layout="aos", touched=t), pick(rows, layout="soa", touched=t)
        ga, gs = num(a, "aos_soa_gb_per_s"), num(s, "aos_soa_gb_per_s")
        print(f"     {t}: {ga:7.1f} {gs:7.1f}  {gs / ga:.2f}  {ga / num(a, 'memcpy_d2d_gb_per_s'):.3f} vs "
              f"{(t + 1) / 9:.3f}  {gs / num(s, 'memcpy_d2d_gb_per_s'):.3f}")


def pitch():
    head("pitch (Kolganov lecture 2, rows of 120 floats): useful GB/s")
    rows = load("pitch")
    u = series(rows, "rows", "pitch_gb_per_s", layout="unpadded")
    p = series(rows, "rows", "pitch_gb_per_s", layout="padded")
    mu = series(rows, "rows", "memcpy_d2d_gb_per_s", layout="unpadded")
    mp = series(rows, "rows", "memcpy_d2d_gb_per_s", layout="padded")
    pb = {l: set(series(rows, "rows", "pitch_bytes_bytes", layout=l).values()) for l in ("unpadded", "padded")}
    print(f"[L4] pitch_bytes: unpadded {sorted(pb['unpadded'])}, padded {sorted(pb['padded'])}")
    print("     rows: unpadded GB/s, padded GB/s, padded/unpadded - 1, each / memcpy_d2d of its point")
    for n in sorted(u):
        print(f"     {n:6d}: {u[n]:7.1f} {p[n]:7.1f}  {pct(p[n] / u[n] - 1)}  {u[n] / mu[n]:.2f} {p[n] / mp[n]:.2f}")
    big = [n for n in u if n >= 32768]
    print(f"     mean of padded/unpadded - 1 over rows >= 32768: {pct(mean([p[n] / u[n] - 1 for n in big]))}; "
          f"over rows <= 16384: {pct(mean([p[n] / u[n] - 1 for n in u if n <= 16384]))}")


# ---------------------------------------------------------------------------------------------
def halfwarp():
    """Pogorilyy et al. 2010, Fig. 2 (period 16 on a GeForce 8600 GT): where half-warp steps appear on the H100."""
    head("halfwarp (Pogorilyy 2010, Fig. 2; issue 11): store-bound MFlops vs threads per block, one store layout per metric")
    rows = load("halfwarp")
    base = series(rows, "threads", "shared_stride1_mflops")
    print("[H1] per layout: sweep analyze's period, value at t = 256 over conflict-free (stride 1) at t = 256,")
    print("     and what one thread past the first peaks costs: y(P+1)/y(P) - 1 at P = period, 2*period")
    for m in ["shared_stride1", "shared_stride2", "shared_stride4", "shared_stride8", "shared_adjacent2",
              "shared_vec2", "shared_vec4", "global_vec1", "global_vec2", "global_vec4"]:
        y = series(rows, "threads", f"{m}_mflops")
        p = analysis_period("halfwarp", f"{m}_mflops")
        steps = ""
        if p:
            p = int(p)
            steps = ", ".join(f"t={k}->{k + 1}: {pct(y[k + 1] / y[k] - 1)}" for k in (p, 2 * p) if k + 1 in y)
        print(f"     {m:<17} period {str(p) if p else 'none':>4}; y(256)/stride1 = {y[256] / base[256]:.3f}; {steps}")


def quality():
    head("measurement quality: 95 % CI half-width of the mean (rel_ci), status per point")
    sweeps = sorted(d for d in os.listdir(ROOT) if os.path.exists(os.path.join(ROOT, d, "results.csv")))
    worst_all, viol = (0.0, None), []
    print("[Q2] per sweep: points, noisy; max rel_ci at ok/unstable points over GB/s metrics (metric,")
    print("     point); max rel_ci at ok/unstable points over every measured metric; placement spread")
    for sw in sweeps:
        rows, m = load(sw), manifest(sw)
        axes = m["axes"]
        target = None
        for line in m["spec"].splitlines():
            if line.strip().startswith("target_rel_ci"):
                target = float(line.split("=")[1].split("#")[0])
        bw = [x["name"] for x in m["metrics"] if x["unit"] == "GB/s"]
        measured = [x["name"] for x in m["metrics"]]
        noisy = [r for r in rows if r["status"] == "noisy"]
        unstable = [r for r in rows if r["status"] == "unstable"]
        spreads = [(float(r[f"{n}_spread"]), n) for r in rows for n in measured
                   if r.get(f"{n}_spread") not in (None, "")]
        best, best_any = (0.0, "-", "-"), (0.0, "-")
        for r in rows:
            if r["status"] not in ("ok", "unstable"):
                continue
            for name in measured:
                c = r[f"{name}_rel_ci"]
                if c == "":  # computed metrics (occupancy, expected_ways, ...) have no CI
                    continue
                c = float(c)
                if c > best_any[0]:
                    best_any = (c, name)
                if name in bw:
                    where = ", ".join(f"{a}={r[a]}" for a in axes)
                    if c > best[0]:
                        best = (c, name, where)
                    if c > 0.01:
                        viol.append((sw, name, where, c))
                    if c > worst_all[0]:
                        worst_all = (c, f"{sw}: {name} at {where}")
        bwtxt = f"{best[0]:.6f} ({best[1]} at {best[2]})" if bw else "- (no GB/s metric)"
        print(f"     {sw:16s} {len(rows):3d} points, {len(noisy)} noisy (target_rel_ci {target}); "
              f"GB/s: {bwtxt}; any: {best_any[0]:.6f} ({best_any[1]})")
        if spreads:
            top = max(spreads)
            print(f"         {len(unstable)} unstable (placements differ beyond the noise); largest placement "
                  f"spread {top[0]:.4f} ({top[1]}), median {statistics.median(s for s, _ in spreads):.4f}")
        else:
            print("         one buffer placement per point (measured before the placements)")
        for r in noisy:
            where = ", ".join(f"{a}={r[a]}" for a in axes)
            over = [f"{n} {float(r[f'{n}_rel_ci']):.4f}" for n in measured
                    if r[f"{n}_rel_ci"] and float(r[f"{n}_rel_ci"]) > target]
            print(f"         noisy: {where}: {', '.join(over)}")
    print(f"[Q2] max rel_ci over GB/s metrics at ok points, all sweeps: {worst_all[0]:.6f} ({worst_all[1]})")
    print(f"     ok points with a GB/s rel_ci > 0.01: {len(viol)}")
    for sw, name, where, c in sorted(viol, key=lambda v: -v[3]):
        print(f"         {sw}: {name} at {where}: {c:.6f}")


def main():
    print(f"command: python3 bench/claims.py {ROOT}")
    ms = [manifest(d) for d in sorted(os.listdir(ROOT)) if os.path.exists(os.path.join(ROOT, d, "manifest.json"))]
    clocks = {(x["sm_clock_mhz"], x["mem_clock_mhz"]) for m in ms for x in m["gpus_start"] + m["gpus_end"]}
    print(f"manifests: {len(ms)} sweeps, first started {min(m['started'] for m in ms)[:19]}, last finished "
          f"{max(m['finished'] for m in ms)[:19]} (UTC); (SM, memory) MHz at start and end: {sorted(clocks)}; "
          f"GPUs: {sorted({x['uuid'] for m in ms for x in m['gpus_start']})}")
    m = manifest("threads_1_512")
    g = m["gpus_start"][0]
    print(f"data: {ROOT}/*/results.csv; GPU {g['name']}, driver {g['driver']}, "
          f"{m['compiler_version'].split(',')[1].strip()}, {m['arch']}, SM {g['sm_clock_mhz']} MHz, "
          f"memory {g['mem_clock_mhz']} MHz at start; threads_1_512 started {m['started'][:10]}")
    threads()
    copies()
    transpose()
    matmul()
    reduction()
    divergence()
    bank_stride()
    l1_cache()
    aos_soa()
    pitch()
    halfwarp()
    quality()


if __name__ == "__main__":
    main()
