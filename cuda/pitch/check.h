// pitch/check.h - the host side of pitch.cu (plain C++17, no CUDA): the row width, which the kernel
// uses too, and the check of the scaled matrix. tests/bench_checks/pitch.cpp runs it on a CPU.
#pragma once
#include "sweep_check.h"
#include <cstddef>
#include <cstdio>
#include <vector>

constexpr int WIDTH = 120;                   // floats per row: 480 bytes

// in and out: the source and result matrices, rows of WIDTH floats packed (as copied back to the
// host); out must be 2 * in + 1 everywhere.
inline void check_pitch(const std::vector<float>& in, const std::vector<float>& out) {
    for (size_t i = 0; i < in.size(); ++i) {
        float want = 2.0f * in[i] + 1.0f;   // small integers: exact
        if (out[i] != want) {
            char what[128];
            snprintf(what, sizeof what, "element (%zu,%zu) is %g, host gives %g", i / WIDTH, i % WIDTH, out[i], want);
            sweep::check(false, what);
        }
    }
    sweep::check(true, "every element matches the host");
}
