// divergence/check.h - the host side of divergence.cu (plain C++17, no CUDA): the branch condition
// and the arithmetic of both branches, which the kernel uses too, and the check of the results.
// tests/bench_checks/divergence.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_check.h"
#include <cmath>
#include <cstdio>
#include <vector>

enum Variant { thread, warp, lane };
constexpr int ACC = 8;              // independent FMA chains per thread

constexpr unsigned WARP_SIZE = 32;  // warpSize on every NVIDIA GPU so far; a constant for the host check too

SWEEP_HOST_DEVICE inline bool take_a(unsigned tid, unsigned k) {   // tid: threadIdx.x
    return VARIANT == thread ? tid > k : VARIANT == warp ? tid / WARP_SIZE > k : tid % WARP_SIZE > k;
}

SWEEP_HOST_DEVICE inline float run(float x, bool a, int iters) {
    float v[ACC];
    for (int j = 0; j < ACC; ++j) v[j] = x - 0.0625f * j;
    // Mirror-image loops (same instructions but for a sign): equally fast when taken alone. Both map
    // [-1, 1] into [-0.5, 0.5] and settle near -0.366 / +0.366: no overflow, no denormals.
    if (a) {
        for (int it = 0; it < iters; ++it)
            for (int j = 0; j < ACC; ++j) v[j] = fmaf(v[j], v[j], -0.5f);
    } else {
        for (int it = 0; it < iters; ++it)
            for (int j = 0; j < ACC; ++j) v[j] = fmaf(-v[j], v[j], 0.5f);
    }
    float sum = 0.0f;
    for (int j = 0; j < ACC; ++j) sum += v[j];
    return sum;
}

// out[i] is what thread i (blocks of BLOCK threads) computed from x[i] in `iters` iterations.
inline void check_divergence(const std::vector<float>& x, const std::vector<float>& out, int iters) {
    // Same arithmetic on the host (fmaf is exact IEEE on both): every thread of the first two blocks and
    // every 1009th thread must match bit for bit.
    const int threads = int(out.size());
    for (int i = 0; i < threads; i += i < 2 * BLOCK ? 1 : 1009) {
        float want = run(x[i], take_a(i % BLOCK, K), iters);
        if (!(out[i] == want)) {
            char what[128];
            snprintf(what, sizeof what, "thread %d gives %.9g, host gives %.9g", i, out[i], want);
            sweep::check(false, what);
        }
    }
    sweep::check(true, "sampled threads match the host");
}
