// The host check of copy (cuda/copy/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output: the N x N elements after the offset copied, the elements before it unwritten.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "nan", "misplaced", "before_offset"});
  const size_t shift = strcmp(VARIANT, "offset") == 0 ? OFFSET : 0, m = size_t(N) * N;
  std::vector<float> in(shift + m), out(shift + m, NAN);  // NaN: "not written"
  for (size_t e = 0; e < in.size(); ++e) in[e] = sweep::test_value(e);
  for (size_t e = shift; e < in.size(); ++e) out[e] = in[e];
  const std::vector<float> right = out;
  if (mode == "one_off") {
    out[shift + m / 2 + 3] += 1;
  } else if (mode == "nan") {  // the last element never written
    out[shift + m - 1] = NAN;
  } else if (mode == "misplaced") {  // every element read one place too far
    for (size_t e = shift; e + 1 < out.size(); ++e) out[e] = in[e + 1];
  } else if (mode == "before_offset") {
    if (shift == 0) driver::fail("before_offset needs the offset variant with OFFSET > 0");
    out[shift - 1] = in[shift - 1];
  }
  if (mode == "before_offset")
    driver::planted("copy wrote element " + std::to_string(shift - 1) + " before the offset");
  else if (mode != "ok")
    driver::planted("differs at " + std::to_string(driver::first_difference(right, out) - shift) + ": got ");
  check_copy(in, out, shift);
  return driver::passed(mode);
}
