// matmul/check.h - the host side of matmul.cu (plain C++17, no CUDA): the check of the product
// against the host's. tests/bench_checks/matmul.cpp runs it on a CPU.
#pragma once
#include "sweep_check.h"
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

// p must be m * nm, all three n x n, row-major. With small integers in m and nm every product and
// partial sum is exact in float, so the check is exact. A full host product costs n^3: the check
// takes 64 whole rows spread over the matrix plus the last row (every row when n < 64).
inline void check_matmul(const std::vector<float>& m, const std::vector<float>& nm, const std::vector<float>& p,
                         int n) {
    const int step = std::max(1, n / 64);
    std::vector<float> ref(n);
    for (int r = 0; r < n + step; r += step) {  // r >= n: the last row
        int row = r < n ? r : n - 1;
        std::fill(ref.begin(), ref.end(), 0.0f);
        for (int k = 0; k < n; ++k) {
            float a = m[size_t(row) * n + k];
            const float* b = &nm[size_t(k) * n];
            for (int c = 0; c < n; ++c) ref[c] += a * b[c];
        }
        for (int c = 0; c < n; ++c) {
            if (p[size_t(row) * n + c] != ref[c]) {
                char what[160];
                snprintf(what, sizeof what, "P(%d,%d) = %g, host product gives %g", row, c, p[size_t(row) * n + c], ref[c]);
                sweep::check(false, what);
            }
        }
    }
    sweep::check(true, "matmul matches the host product on 65 rows");
}
