// bank_stride/check.h - the host side of bank_stride.cu (plain C++17, no CUDA): the shared array's
// contents, which the kernel uses too, and the check of every thread's sum.
// tests/bench_checks/bank_stride.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_check.h"
#include <cstddef>
#include <cstdio>
#include <vector>

constexpr int WORDS = 2048;   // > 31 * 64: the 32 lanes' words never coincide, whatever the stride
constexpr int INNER = 32;     // loads per outer step, at immediate offsets 0..31 from the lane's base

// 10-bit multiplicative hash of the index: no short period, so a lane's sum depends on which words it
// read (a wrong stride or base changes it), not only on how many.
SWEEP_HOST_DEVICE inline int word_value(int i) { return int((unsigned(i) * 2654435761u) >> 22); }

// sums[i] is what thread i (blocks of BLOCK threads) wrote.
// It catches wrong values, a wrong number of loads, and loads from the wrong words.
inline void check_bank_stride(const std::vector<int>& sums) {
    // The sum depends on the lane alone: check every thread against the host's 32 sums.
    int want[32];
    for (int l = 0; l < 32; ++l) {
        unsigned base = l * STRIDE;
        want[l] = 0;
        for (int t = 0; t < OUTER; ++t) {
            for (int u = 0; u < INNER; ++u) want[l] += word_value(base + u);
            base = (base + 32) & (WORDS - 1);
        }
    }
    for (size_t i = 0; i < sums.size(); ++i) {
        int l = int(i % BLOCK % 32);
        if (sums[i] != want[l]) {
            char what[128];
            snprintf(what, sizeof what, "thread %zu (lane %d) sums %d, host gives %d", i, l, sums[i], want[l]);
            sweep::check(false, what);
        }
    }
    sweep::check(true, "every thread's sum matches the host");
}
