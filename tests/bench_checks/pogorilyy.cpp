// The host check of pogorilyy (cuda/pogorilyy/check.h) on a CPU; modes and protocol: driver.h.
// The kernels' output, for each of the 6 variants on one block and on a grid: every thread's sum
// (0 in the padding slots of a block), and for the global variants the last value each storing
// thread stored (NaN where none stores), in the block layout and for the variants that params.h
// selects. The corrupt modes spoil global_half_grid, the last metric (measured in every set).
#include "params.h"
#include "check.h"
#include "driver.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "padding", "store_wrong", "stray_store"});
  const int max_blocks = 3;  // on a GPU: BLOCKS_PER_SM x SM count
  const size_t n = size_t(max_blocks) * PITCH;
  const float d = 0.75f;
  // A thread's last a[0] and its sum, by input value (few distinct ones).
  std::map<float, std::pair<float, float>> known;
  auto thread = [&](float x) {
    auto it = known.find(x);
    if (it != known.end()) return it->second;
    float a[ADDS];
    for (int j = 0; j < ADDS; ++j) a[j] = x + j;
    for (int i = 0; i < ITERATIONS; ++i)
      for (float& e : a) e += d;
    float sum = a[0];
    for (int j = 1; j < ADDS; ++j) sum += a[j];
    return known[x] = {a[0], sum};
  };
  const Expected want = expected(d);
  const char* names[6] = {"shared_nc", "shared_2way", "shared_3way", "global_all", "global_even", "global_half"};
  for (int v = 0; v < 6; ++v)
    for (int blocks : {1, max_blocks}) {
      if (!measured(v, blocks != 1)) continue;  // as the bench skips them
      const std::string name = std::string(names[v]) + (blocks == 1 ? "_1blk" : "_grid");
      std::vector<float> out(n, 0), store(n, NAN);  // as the bench clears them before every variant
      for (size_t g = 0; g < size_t(blocks) * PITCH; ++g) {
        const int t = int(g % PITCH);
        if (t >= THREADS) continue;  // padding: no thread
        const bool stores = v == 3 || (v == 4 && t % 2 == 0) || (v == 5 && 2 * t < THREADS);
        out[g] = thread(input(g)).second;
        if (stores) store[g] = thread(input(g)).first;
      }
      if (name == "global_half_grid" && mode != "ok") {
        const size_t last_block = size_t(blocks - 1) * PITCH;
        const std::vector<float> right_out = out, right_store = store;
        if (mode == "one_off") {
          out[last_block + THREADS - 1] += 1;
        } else if (mode == "padding") {  // a thread beyond THREADS wrote a sum
          if (PITCH == THREADS) driver::fail("padding needs padding slots: THREADS not a multiple of 32 (64 in align256), not dense");
          out[last_block + THREADS] = out[last_block];
        } else if (mode == "store_wrong") {
          store[last_block] -= d;  // thread 0 stored one trip early
        } else if (mode == "stray_store") {  // the first thread of the second half stored too
          store[last_block + (THREADS + 1) / 2] = out[last_block];
        }
        if (mode == "one_off" || mode == "padding")
          driver::planted(name + (mode == "padding" ? ": padding slot " : ": sum of thread ") +
                          std::to_string(driver::first_difference(right_out, out)) + " is ");
        else
          driver::planted(name + ": global store of thread " +
                          std::to_string(driver::first_difference(right_store, store)) +
                          (mode == "store_wrong" ? " has a wrong value" : " was written but should not be"));
      }
      check_sums(name, out, size_t(blocks) * PITCH, want);
      if (v >= 3) check_stores(name, v, store, size_t(blocks) * PITCH, want);
    }
  return driver::passed(mode);
}
