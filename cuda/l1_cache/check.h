// l1_cache/check.h - the host side of l1_cache.cu (plain C++17, no CUDA): the access pattern, which
// the kernel uses too, and the check of the partial sums. tests/bench_checks/l1_cache.cpp runs it on
// a CPU.
#pragma once
#include "params.h"
#include "sweep_check.h"
#include <cstddef>
#include <cstdio>
#include <vector>

enum Pattern { coalesced, misaligned, strided, scattered };
constexpr int BLOCK = 256, PER_THREAD = 8, CHUNK = BLOCK * PER_THREAD;   // 2048 ints = 8 KB per block
constexpr int ROW = 32;                                                    // strided: 128-byte rows
constexpr size_t N = size_t(1) << LOG2_ELEMS;

// Where the e-th read (e = block * CHUNK + k * BLOCK + threadIdx.x) goes: a permutation of 0..N-1.
SWEEP_HOST_DEVICE inline size_t position(size_t e) {
    switch (PATTERN) {
    case coalesced: return e;
    case misaligned: return (e + 1) & (N - 1);
    case strided: {
        size_t local = e % CHUNK, rows = CHUNK / ROW;
        return e - local + (local % rows) * ROW + local / rows;
    }
    default: return (e * 0x9E3779B1u) & (N - 1);   // odd multiplier: a bijection modulo 2^k
    }
}

// in: the N ints the kernel read; partial[b]: block b's sum of its CHUNK reads.
inline void check_l1_cache(const std::vector<int>& in, const std::vector<int>& partial) {
    for (size_t b = 0; b < partial.size(); ++b) {
        int want = 0;
        for (size_t j = 0; j < CHUNK; ++j) want += in[position(b * CHUNK + j)];
        if (partial[b] != want) {
            char what[128];
            snprintf(what, sizeof what, "partial sum of block %zu is %d, host gives %d", b, partial[b], want);
            sweep::check(false, what);
        }
    }
    sweep::check(true, "all partial sums match the host");
}
