// The host check of reduction (cuda/reduction/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output: one partial sum per block of BLOCK ints.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "misplaced"});
  const size_t n = size_t(1) << LOG2_ELEMS, blocks = n / BLOCK;
  std::vector<int> in(n), partial(blocks);
  for (size_t i = 0; i < n; ++i) in[i] = int(i * 7919 % 251) - 125;
  for (size_t b = 0; b < blocks; ++b) partial[b] = std::accumulate(&in[b * BLOCK], &in[b * BLOCK] + BLOCK, 0);
  const std::vector<int> right = partial;
  if (mode == "one_off") {
    partial[blocks - 1] -= 1;
  } else if (mode == "misplaced") {  // every block wrote its neighbour's slot
    std::rotate(partial.begin(), partial.begin() + 1, partial.end());
  }
  if (mode != "ok") driver::planted("partial sum of block " + std::to_string(driver::first_difference(right, partial)) + " is ");
  check_reduction(in, partial);
  return driver::passed(mode);
}
