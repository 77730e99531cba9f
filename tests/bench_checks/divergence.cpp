// The host check of divergence (cuda/divergence/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output: every thread runs one of two mirror-image FMA loops, chosen by its index.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#define NAME_OF(x) #x
#define NAME(x) NAME_OF(x)

// Whether thread `tid` of a block takes the first loop (the course's three conditions).
static bool first_loop(int tid) {
  const char* variant = NAME(VARIANT);
  if (!strcmp(variant, "thread")) return tid > K;
  if (!strcmp(variant, "warp")) return tid / 32 > K;
  if (!strcmp(variant, "lane")) return tid % 32 > K;
  driver::fail(std::string("unknown VARIANT ") + variant);
}

// 8 chains of ITERS fused multiply-adds from x, then their sum.
static float chains(float x, bool first) {
  float v[8];
  for (int j = 0; j < 8; ++j) v[j] = x - 0.0625f * j;
  for (int it = 0; it < ITERS; ++it)
    for (float& e : v) e = first ? std::fma(e, e, -0.5f) : std::fma(-e, e, 0.5f);
  float sum = 0;
  for (float e : v) sum += e;
  return sum;
}

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "nan", "swapped"});
  const int threads = 16 * BLOCK;  // on a GPU: 2^22
  std::map<std::pair<float, bool>, float> known;  // few distinct inputs: each result computed once
  auto result = [&](float x, bool first) {
    auto it = known.find({x, first});
    return it != known.end() ? it->second : known[{x, first}] = chains(x, first);
  };
  std::vector<float> x(threads), right(threads), out(threads);
  for (int i = 0; i < threads; ++i) {
    x[i] = float((i * 61) % 512) / 512.0f - 0.5f;
    right[i] = result(x[i], first_loop(i % BLOCK));
    out[i] = mode == "swapped" ? result(x[i], !first_loop(i % BLOCK)) : right[i];  // every thread in the other loop
  }
  if (mode == "one_off") {
    out[BLOCK + 5] = std::nextafter(out[BLOCK + 5], 1.0f);  // one ulp
  } else if (mode == "nan") {
    out[2 * BLOCK - 1] = NAN;
  }
  if (mode != "ok") driver::planted("thread " + std::to_string(driver::first_difference(right, out)) + " gives ");
  check_divergence(x, out, ITERS);
  return driver::passed(mode);
}
