// pogorilyy/check.h - the host side of pogorilyy.cu (plain C++17, no CUDA): the block layout and the
// inputs, which the kernels use too, the exact results the threads must produce, and the checks of
// the sums and of the global stores. tests/bench_checks/pogorilyy.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_add_store.h"
#include "sweep_check.h"
#include <cstddef>
#include <string>
#include <vector>

constexpr int WARPS = (THREADS + 31) / 32;
// Block b uses elements [b * PITCH, b * PITCH + THREADS) of every array. The layout (params.h, default
// LAYOUT_LINE128) sets PITCH:
//   LAYOUT_DENSE     THREADS: the blocks' words back to back, as in the 2010 study (a block's first
//                    and last lines may hold the neighbouring blocks' words);
//   LAYOUT_LINE128   WARPS * 32, whole 128-byte lines: each block's stores start on a line of their
//                    own, so a partial warp never shares a line with the next block's threads; an odd
//                    warp count gives an odd number of lines (a block then starts on every other
//                    256-byte boundary only);
//   LAYOUT_ALIGN256  THREADS rounded up to 64 floats: every block starts on a 256-byte boundary.
#if defined(LAYOUT_DENSE) + defined(LAYOUT_LINE128) + defined(LAYOUT_ALIGN256) > 1
#error "params.h may define one of LAYOUT_DENSE, LAYOUT_LINE128 and LAYOUT_ALIGN256"
#endif
#if defined(LAYOUT_DENSE)
constexpr int PITCH = THREADS;
#elif defined(LAYOUT_ALIGN256)
constexpr int PITCH = (THREADS + 63) / 64 * 64;
#else
constexpr int PITCH = WARPS * 32;
#endif
constexpr int HALF = (THREADS + 1) / 2;  // "the first half of the threads"

// The variants measured (params.h, default all): KERNELS_GLOBAL_GRID keeps only the global-memory
// stores on a grid (variants 3, 4, 5), for experiments on their layout.
#if defined(KERNELS_ALL) && defined(KERNELS_GLOBAL_GRID)
#error "params.h may define one of KERNELS_ALL and KERNELS_GLOBAL_GRID"
#endif
#if defined(KERNELS_GLOBAL_GRID)
constexpr bool GLOBAL_GRID_ONLY = true;
#else
constexpr bool GLOBAL_GRID_ONLY = false;
#endif
// Whether variant v (0-2 shared, 3-5 global) is measured on one block (grid false) or on a grid.
inline bool measured(int v, bool grid) { return !GLOBAL_GRID_ONLY || (v >= 3 && grid); }

// Inputs, exact results and the check of the sums: shared with halfwarp (sweep_add_store.h).
using sweep::add_store::DISTINCT;
using sweep::add_store::Expected;
using sweep::add_store::input;
inline Expected expected(float d) { return sweep::add_store::expected(d, ITERATIONS, ADDS); }
// The sums `out` of a launch of `m` = blocks * PITCH threads, metric `name`: every thread's sum where
// t < THREADS; padding slots (t >= THREADS, none in the dense layout) must stay untouched (0).
inline void check_sums(const std::string& name, const std::vector<float>& out, size_t m, const Expected& want) {
  sweep::add_store::check_sums(name, out, m, want, PITCH, THREADS);
}

// The global stores of variant v (3 every thread, 4 even threads, 5 the first half) over `m` threads,
// `store` filled with NaN ("never stored") before: the last a[0] where the thread stores, untouched
// elsewhere.
inline void check_stores(const std::string& name, int v, const std::vector<float>& store, size_t m,
                         const Expected& want) {
  for (size_t g = 0; g < m; ++g) {
    int t = (int)(g % PITCH);
    bool stores = t < THREADS && (v == 3 || (v == 4 ? t % 2 == 0 : t < HALF));
    bool ok = stores ? store[g] == want.last[g % DISTINCT] : store[g] != store[g];
    if (!ok)
      sweep::check(false, name + ": global store of thread " + std::to_string(g) +
                              (stores ? " has a wrong value" : " was written but should not be"));
  }
}
