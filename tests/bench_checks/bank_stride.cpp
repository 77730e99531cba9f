// The host check of bank_stride (cuda/bank_stride/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output, block by block: every thread's sum of OUTER * INNER loads from shared memory.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "short", "misplaced"});
  const int blocks = 3;  // on a GPU: 16 waves of resident blocks
  std::vector<int> shared(WORDS + INNER);
  for (int i = 0; i < WORDS + INNER; ++i) shared[i] = word_value(i);
  // Thread tid's sum over `outer` steps of INNER loads.
  auto thread = [&](int tid, int outer, unsigned stride = STRIDE) {
    unsigned base = unsigned(tid % 32) * stride;
    int sum = 0;
    for (int t = 0; t < outer; ++t) {
      for (int u = 0; u < INNER; ++u) sum += shared[base + u];
      base = (base + 32) % WORDS;
    }
    return sum;
  };
  std::vector<int> right(size_t(blocks) * BLOCK), sums(right.size());
  for (size_t i = 0; i < right.size(); ++i) {
    right[i] = thread(int(i % BLOCK), OUTER);
    sums[i] = mode == "short" ? thread(int(i % BLOCK), OUTER - 1)  // one step too few
              : mode == "misplaced" ? thread(int(i % BLOCK), OUTER, STRIDE + 1)  // the wrong words
              : right[i];
  }
  if (mode == "one_off") sums[BLOCK + 37] -= 1;
  if (mode != "ok") driver::planted("thread " + std::to_string(driver::first_difference(right, sums)) + " (lane ");
  check_bank_stride(sums);
  return driver::passed(mode);
}
