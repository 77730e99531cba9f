// The host check of l1_cache (cuda/l1_cache/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output: per block of CHUNK reads, the sum of the elements its access pattern reads.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#define NAME_OF(x) #x
#define NAME(x) NAME_OF(x)

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "misplaced"});
  const size_t n = size_t(1) << LOG2_ELEMS, chunk = 2048, blocks = n / chunk;
  const char* pattern = NAME(PATTERN);
  auto value = [](size_t i) { return int((i * 40503u) >> 5 & 127); };  // of element i
  std::vector<int> in(n), partial(blocks);
  for (size_t i = 0; i < n; ++i) in[i] = value(i);
  // Element read by the e-th read: strided reorders the reads within a chunk, which leaves its sum.
  size_t (*element)(size_t) = nullptr;
  if (!strcmp(pattern, "coalesced") || !strcmp(pattern, "strided"))
    element = [](size_t e) -> size_t { return e; };
  else if (!strcmp(pattern, "misaligned"))
    element = [](size_t e) -> size_t { return (e + 1) % (size_t(1) << LOG2_ELEMS); };
  else if (!strcmp(pattern, "scattered"))
    element = [](size_t e) -> size_t { return e * 0x9E3779B1ull % (size_t(1) << LOG2_ELEMS); };
  else
    driver::fail(std::string("unknown PATTERN ") + pattern);
  for (size_t b = 0; b < blocks; ++b)
    for (size_t e = b * chunk; e < (b + 1) * chunk; ++e) partial[b] += value(element(e));
  const std::vector<int> right = partial;
  if (mode == "one_off") {
    partial[blocks / 2] += 1;
  } else if (mode == "misplaced") {  // every block wrote its neighbour's slot
    std::rotate(partial.begin(), partial.begin() + 1, partial.end());
  }
  if (mode != "ok") driver::planted("partial sum of block " + std::to_string(driver::first_difference(right, partial)) + " is ");
  check_l1_cache(in, partial);
  return driver::passed(mode);
}
