// halfwarp/check.h - the host side of halfwarp.cu (plain C++17, no CUDA): the block layout, the
// inputs, the exact results the threads must produce, and the checks of the sums and of the global
// stores. tests/bench_checks/halfwarp.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_add_store.h"
#include "sweep_check.h"
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

constexpr int WARPS = (THREADS + 31) / 32;
// Block b uses elements [b * PITCH, b * PITCH + THREADS): every block starts on a line of its own.
constexpr int PITCH = WARPS * 32;
constexpr int VARIANTS = 10;
// The metrics, in the order the program measures them.
inline const char* variant_name(int v) {
  static const char* names[VARIANTS] = {"shared_stride1", "shared_stride2", "shared_stride4", "shared_stride8",
                                        "shared_adjacent2", "shared_vec2", "shared_vec4",
                                        "global_vec1", "global_vec2", "global_vec4"};
  return names[v];
}
// Floats per store of variant v (its vector width), and whether it stores to global memory.
inline int width(int v) { return v == 5 || v == 8 ? 2 : v == 6 || v == 9 ? 4 : 1; }
inline bool global(int v) { return v >= 7; }

// Inputs, exact results and the check of the sums: shared with pogorilyy (sweep_add_store.h).
using sweep::add_store::DISTINCT;
using sweep::add_store::Expected;
using sweep::add_store::input;
inline Expected expected(float d) { return sweep::add_store::expected(d, ITERATIONS, ADDS); }
// The sums `out` of `m` = blocks * PITCH threads: every thread's sum where t < THREADS; padding
// slots stay untouched (0).
inline void check_sums(const std::string& name, const std::vector<float>& out, size_t m, const Expected& want) {
  sweep::add_store::check_sums(name, out, m, want, PITCH, THREADS);
}

// The global stores of variant v over `m` threads, `store` (floats, width(v) per thread) filled
// with NaN before: every component of a thread's element holds its last a[0]; padding slots none.
inline void check_stores(const std::string& name, int v, const std::vector<float>& store, size_t m,
                         const Expected& want) {
  const int w = width(v);
  for (size_t g = 0; g < m; ++g) {
    const bool thread = g % PITCH < THREADS;
    for (int c = 0; c < w; ++c) {
      const float s = store[g * w + c];
      const bool ok = thread ? s == want.last[g % DISTINCT] : std::isnan(s);
      if (!ok)
        sweep::check(false, name + ": global store of thread " + std::to_string(g) + " component " +
                                std::to_string(c) + (thread ? " has a wrong value" : " was written but should not be"));
    }
  }
}
