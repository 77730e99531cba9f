// The host check of matmul (cuda/matmul/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output: P = M * N, n x n floats, with small integers in M and N (exact in float).
#include "params.h"
#include "check.h"
#include "driver.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "nan", "misplaced"});
  const int n = MATRIX_N;
  const size_t count = size_t(n) * n;
  std::vector<float> m(count), nm(count), p(count);
  // Row r of M depends on r % 7 alone, so row r of P is row r % 7 of P: 7 rows to compute, not n.
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < n; ++k) m[size_t(r) * n + k] = float(((r % 7) * 3 + k * 5) % 9 - 4);
  for (size_t i = 0; i < count; ++i) nm[i] = float(int((i * 11 + 3) % 7) - 3);
  std::vector<double> row(n);  // exact: |P(r,c)| <= 12 n
  for (int r = 0; r < std::min(n, 7); ++r) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int k = 0; k < n; ++k)
      for (int c = 0; c < n; ++c) row[c] += double(m[size_t(r) * n + k]) * nm[size_t(k) * n + c];
    std::copy(row.begin(), row.end(), &p[size_t(r) * n]);
  }
  for (int r = 7; r < n; ++r) std::copy_n(&p[size_t(r % 7) * n], n, &p[size_t(r) * n]);
  const std::vector<float> right = p;
  if (mode == "one_off") {
    p[size_t(n - 1) * n + n / 2] += 1;  // the last row, which the check always takes
  } else if (mode == "nan") {
    p[3] = NAN;
  } else if (mode == "misplaced") {  // every row one row up: row r holds the product's row r + 1
    std::copy(right.begin() + n, right.end(), p.begin());
  }
  if (mode != "ok") {
    const size_t at = driver::first_difference(right, p);
    driver::planted("P(" + std::to_string(at / n) + "," + std::to_string(at % n) + ") = ");
  }
  check_matmul(m, nm, p, n);
  return driver::passed(mode);
}
