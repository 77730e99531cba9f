// The host check of aos_soa (cuda/aos_soa/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output: for every record, the sum of its first TOUCHED fields.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <algorithm>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "misplaced"});
  const size_t n = size_t(1) << LOG2_RECORDS;
  std::vector<int> sums(n);
  for (size_t i = 0; i < n; ++i) {  // what a thread does with its record, as in the AoS layout
    int record[8];
    for (int j = 0; j < 8; ++j) record[j] = field_value(i, j);
    for (int j = 0; j < TOUCHED; ++j) sums[i] += record[j];
  }
  const std::vector<int> right = sums;
  if (mode == "one_off") {
    sums[n / 2 + 1] += 1;
  } else if (mode == "misplaced") {  // every thread summed the next record
    std::rotate(sums.begin(), sums.begin() + 1, sums.end());
  }
  if (mode != "ok") driver::planted("record " + std::to_string(driver::first_difference(right, sums)) + " sums to ");
  check_aos_soa(sums);
  return driver::passed(mode);
}
