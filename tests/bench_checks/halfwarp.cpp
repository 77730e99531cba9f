// The host check of halfwarp (cuda/halfwarp/check.h) on a CPU; modes and protocol: driver.h.
// The kernels' output for each of the 10 variants on a grid: every thread's sum (0 in the padding
// slots of a block), and for the global variants the last value each thread stored, in every
// component of its element (NaN where no thread is). The corrupt modes spoil global_vec4, the last
// metric.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "padding", "component", "stray_store"});
  const int blocks = 3;  // on a GPU: BLOCKS_PER_SM x SM count
  const size_t n = size_t(blocks) * PITCH;
  const float d = 0.75f;
  std::map<float, std::pair<float, float>> known;  // input -> (last a[0], sum), by a reference of its own
  auto thread = [&](float x) {
    auto it = known.find(x);
    if (it != known.end()) return it->second;
    std::vector<float> a(ADDS);
    for (int j = 0; j < ADDS; ++j) a[j] = x + j;
    for (int i = 0; i < ITERATIONS; ++i)
      for (float& e : a) e += d;
    float sum = a[0];
    for (int j = 1; j < ADDS; ++j) sum += a[j];
    return known[x] = {a[0], sum};
  };
  const Expected want = expected(d);
  for (int v = 0; v < VARIANTS; ++v) {
    const std::string name = variant_name(v);
    const int w = width(v);
    std::vector<float> out(n, 0), store(4 * n, NAN);  // as the bench clears them before every variant
    for (size_t g = 0; g < n; ++g) {
      if (int(g % PITCH) >= THREADS) continue;  // padding: no thread
      out[g] = thread(input(g)).second;
      if (global(v))
        for (int c = 0; c < w; ++c) store[g * w + c] = thread(input(g)).first;
    }
    if (name == "global_vec4" && mode != "ok") {
      const size_t last_block = size_t(blocks - 1) * PITCH;
      const std::vector<float> right_out = out, right_store = store;
      if (mode == "one_off") {
        out[last_block + THREADS - 1] += 1;
      } else if (mode == "padding") {  // a thread beyond THREADS wrote a sum
        if (PITCH == THREADS) driver::fail("padding needs THREADS that is not a multiple of 32");
        out[last_block + THREADS] = out[last_block];
      } else if (mode == "component") {  // the last component of thread 0's element one trip early
        store[last_block * 4 + 3] -= d;
      } else if (mode == "stray_store") {  // something wrote into a padding slot's element
        if (PITCH == THREADS) driver::fail("stray_store needs THREADS that is not a multiple of 32");
        store[(last_block + THREADS) * 4] = out[last_block];
      }
      if (mode == "one_off" || mode == "padding")
        driver::planted(name + (mode == "padding" ? ": padding slot " : ": sum of thread ") +
                        std::to_string(driver::first_difference(right_out, out)) + " is ");
      else
        driver::planted(name + ": global store of thread " +
                        std::to_string(driver::first_difference(right_store, store) / 4) + " component " +
                        std::to_string(driver::first_difference(right_store, store) % 4) +
                        (mode == "component" ? " has a wrong value" : " was written but should not be"));
    }
    check_sums(name, out, n, want);
    if (global(v)) check_stores(name, v, store, n, want);
  }
  return driver::passed(mode);
}
