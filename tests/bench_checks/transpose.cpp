// The host check of transpose (cuda/transpose/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output: the N x N input transposed, tile by 16x16 tile.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <cmath>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "nan", "misplaced"});
  const size_t m = size_t(N) * N;
  std::vector<float> in(m), out(m);
  for (size_t i = 0; i < m; ++i) in[i] = sweep::test_value(i);
  for (size_t by = 0; by < N; by += 16)
    for (size_t bx = 0; bx < N; bx += 16)
      for (size_t y = by; y < by + 16; ++y)
        for (size_t x = bx; x < bx + 16; ++x) out[x * N + y] = in[y * N + x];
  const std::vector<float> right = out;
  if (mode == "one_off") {
    out[m - N + 5] += 1;
  } else if (mode == "nan") {
    out[N + 2] = NAN;
  } else if (mode == "misplaced") {  // a copy, not a transpose
    out = in;
  }
  if (mode != "ok") driver::planted("differs at " + std::to_string(driver::first_difference(right, out)) + ": got ");
  check_transpose(in, out);
  return driver::passed(mode);
}
