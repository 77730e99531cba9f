#!/usr/bin/env python3
"""Kernel Tuner on the thread sweep's kernels (issue 36, bench/peers.sh): one kernel of
cuda/pogorilyy/pogorilyy.cu tuned over block sizes 1..512 as a user of Kernel Tuner would (PyPI
kernel_tuner, lang="cupy", the default strategy brute_force, every other option at its default),
on the sweep's full grid (BLOCKS_PER_SM x SM-count blocks, ITERATIONS 8192, ADDS 4: the spec's vars).

The kernels are pogorilyy.cu's own text: its two kernel templates become __device__ functions,
called by one extern "C" __global__ wrapper per variant (Kernel Tuner names kernels by symbol),
with THREADS = Kernel Tuner's block_size_x and the line128 layout of check.h (PITCH = whole warps).
Prints one line per block size, `kt <kernel> <threads> <ms> <MFlops>`, and the wall time of
tune_kernel; the process's own wall time is taken by the caller (bench/peers.sh).
Usage: bench/peers_kt.py KERNEL (shared_nc_grid | shared_3way_grid | global_all_grid | ...) OUT_CSV"""
import os, sys, time

import numpy as np
from kernel_tuner import tune_kernel

VARIANTS = {  # metric -> (wrapper body, arguments beyond in, d, out)
    "shared_nc_grid": ("add_store_shared<1>(in, d, out);", ""),
    "shared_2way_grid": ("add_store_shared<2>(in, d, out);", ""),
    "shared_3way_grid": ("add_store_shared<3>(in, d, out);", ""),
    "global_all_grid": ("add_store_global<0>(in, d, out, store);", ", float* store"),
    "global_even_grid": ("add_store_global<1>(in, d, out, store);", ", float* store"),
    "global_half_grid": ("add_store_global<2>(in, d, out, store);", ", float* store"),
}
ITERATIONS, ADDS, BLOCKS_PER_SM = 8192, 4, 8


def source(metric):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    text = open(os.path.join(root, "cuda/pogorilyy/pogorilyy.cu")).read()
    kernels = text[text.index("// Shared-memory variants"): text.index("int main()")]
    kernels = kernels.replace("__global__ void __launch_bounds__(THREADS)", "__device__ __forceinline__ void")
    assert kernels.count("__device__ __forceinline__ void") == 2, "pogorilyy.cu's kernels changed"
    body, extra = VARIANTS[metric]
    return f"""#define THREADS block_size_x
#define ITERATIONS {ITERATIONS}
#define ADDS {ADDS}
constexpr int WARPS = (THREADS + 31) / 32;
constexpr int PITCH = WARPS * 32;          // check.h, LAYOUT_LINE128 (the default)
constexpr int HALF = (THREADS + 1) / 2;
{kernels}
extern "C" __global__ void __launch_bounds__(THREADS) {metric}(const float* __restrict__ in, float d, float* __restrict__ out{extra}) {{
  {body}
}}
"""


def main():
    metric, out_csv = sys.argv[1], sys.argv[2]
    import cupy as cp

    blocks = BLOCKS_PER_SM * cp.cuda.Device().attributes["MultiProcessorCount"]
    n = blocks * 512
    rng = np.random.default_rng(1)
    args = [rng.random(n, dtype=np.float32), np.float32(0.75), np.zeros(n, np.float32)]
    if VARIANTS[metric][1]:
        args.append(np.zeros(n, np.float32))
    t0 = time.time()
    results, _env = tune_kernel(metric, source(metric), (blocks,), args, {"block_size_x": list(range(1, 513))},
                                grid_div_x=[], lang="cupy")
    wall = time.time() - t0
    with open(out_csv, "w") as f:
        f.write("threads,time_ms,mflops\n")
        for r in results:
            t = int(r["block_size_x"])
            ms = float(r["time"])
            mflops = blocks * t * ITERATIONS * ADDS / 1e6 / (ms / 1e3)
            f.write(f"{t},{ms:.6f},{mflops:.4f}\n")
    print(f"tune_kernel {metric}: {len(results)} configurations in {wall:.2f} s")


if __name__ == "__main__":
    main()
