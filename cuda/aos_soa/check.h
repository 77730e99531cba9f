// aos_soa/check.h - the host side of aos_soa.cu (plain C++17, no CUDA): the record fields and the
// check of the sums the kernel wrote. tests/bench_checks/aos_soa.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_check.h"
#include <cstddef>
#include <cstdio>
#include <vector>

// Field j of record i: 0..1023, so that a sum of 8 fields fits an int with room to spare.
inline int field_value(size_t i, int j) { return int((i * 2654435761u + j * 40503u) >> 11 & 1023); }

// sums[i], what the kernel wrote for record i, must be the sum of the record's first TOUCHED fields.
inline void check_aos_soa(const std::vector<int>& sums) {
    for (size_t i = 0; i < sums.size(); ++i) {
        int want = 0;
        for (int j = 0; j < TOUCHED; ++j) want += field_value(i, j);
        if (sums[i] != want) {
            char what[128];
            snprintf(what, sizeof what, "record %zu sums to %d, host gives %d", i, sums[i], want);
            sweep::check(false, what);
        }
    }
    sweep::check(true, "every record's sum matches the host");
}
