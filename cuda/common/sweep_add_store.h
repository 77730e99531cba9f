// sweep_add_store.h - the host side shared by the add-and-store benches (pogorilyy, halfwarp), plain
// C++17 so their checks run on a CPU: the inputs, the exact float results a thread must produce, and
// the check of the per-thread sums. Each bench's check.h wraps these with its own constants.
#pragma once
#include "sweep_check.h"

#include <cstddef>
#include <string>
#include <vector>

namespace sweep {
namespace add_store {

// Input of thread g; few distinct values, so the host computes each expected result once.
constexpr int DISTINCT = 251;
inline float input(size_t g) { return (float)(g % DISTINCT) * 0.25f; }

// The exact float results of a thread whose input is input(x), x < DISTINCT, after `iterations`
// trips of `adds` additions of d: its a[0] after the last trip (what it stores) and its final sum.
struct Expected {
  std::vector<float> last, sum;
};
inline Expected expected(float d, int iterations, int adds) {
  Expected w{std::vector<float>(DISTINCT), std::vector<float>(DISTINCT)};
  std::vector<float> a(adds);
  for (int x = 0; x < DISTINCT; ++x) {
    for (int j = 0; j < adds; ++j) a[j] = input(x) + j;
    for (int i = 0; i < iterations; ++i)
      for (int j = 0; j < adds; ++j) a[j] += d;
    float s = a[0];
    for (int j = 1; j < adds; ++j) s += a[j];
    w.last[x] = a[0], w.sum[x] = s;
  }
  return w;
}

// The sums `out` of a launch of `m` = blocks * pitch threads, metric `name`: every thread's sum
// where t < threads; padding slots (t >= threads) must stay untouched (0).
inline void check_sums(const std::string& name, const std::vector<float>& out, size_t m, const Expected& want,
                       int pitch, int threads) {
  for (size_t g = 0; g < m; ++g) {
    const bool thread = (int)(g % pitch) < threads;
    const float sum = thread ? want.sum[g % DISTINCT] : 0;
    if (out[g] != sum)
      check(false, name + (thread ? ": sum of thread " : ": padding slot ") + std::to_string(g) + " is " +
                       std::to_string(out[g]) + ", expected " + std::to_string(sum));
  }
}

}  // namespace add_store
}  // namespace sweep
