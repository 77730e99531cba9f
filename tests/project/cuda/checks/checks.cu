// The timing core's host-side result checks, on the CPU (no CUDA call is made), built with real
// nvcc: MODE right compares equal buffers and reports a value; wrong_value and nan plant a wrong
// element, which must make the program print `@sweep check=failed` and exit 3 (a wrong result).
// Build one point by hand: nvcc -I<dir with params.h> -Icuda/common -o p checks.cu
#include "params.h"
#include "sweep.cuh"

#include <cmath>
#include <cstring>
#include <vector>

int main() {
  const size_t n = 64;
  std::vector<float> want(n), got(n);
  for (size_t i = 0; i < n; ++i) want[i] = got[i] = sweep::test_value(i);
  if (!strcmp(MODE, "wrong_value")) got[5] += 1.0f;
  if (!strcmp(MODE, "nan")) got[9] = NAN;
  sweep::check_equal(got.data(), want.data(), n, "copy of 64 floats");
  sweep::report_value("match", "count", (double)n);
  return 0;
}
