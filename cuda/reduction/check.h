// reduction/check.h - the host side of reduction.cu (plain C++17, no CUDA): the check of the partial
// sums. tests/bench_checks/reduction.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_check.h"
#include <cstddef>
#include <cstdio>
#include <vector>

// in: the ints reduced; partial[b]: block b's sum of its BLOCK elements. Prints the total.
inline void check_reduction(const std::vector<int>& in, const std::vector<int>& partial) {
    // Integers: every partial sum must match exactly.
    long long total = 0;
    for (unsigned b = 0; b < partial.size(); ++b) {
        int want = 0;
        for (int t = 0; t < BLOCK; ++t) want += in[size_t(b) * BLOCK + t];
        total += want;
        if (partial[b] != want) {
            char what[128];
            snprintf(what, sizeof what, "partial sum of block %u is %d, host gives %d", b, partial[b], want);
            sweep::check(false, what);
        }
    }
    printf("sum: %lld\n", total);
    sweep::check(true, "all partial sums match the host");
}
