// The host check of pitch (cuda/pitch/check.h) on a CPU; modes and protocol: driver.h.
// The kernel's output, as copied back to the host: ROWS x WIDTH floats, dst = 2 * src + 1.
#include "params.h"
#include "check.h"
#include "driver.h"

#include <cmath>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = driver::mode(argc, argv, {"one_off", "nan", "misplaced"});
  const size_t count = size_t(ROWS) * WIDTH;
  std::vector<float> in(count), out(count);
  for (size_t i = 0; i < count; ++i) in[i] = float(int(i * 7 % 4093) - 2046);
  for (size_t r = 0; r < ROWS; ++r)
    for (size_t c = 0; c < WIDTH; ++c) out[r * WIDTH + c] = in[r * WIDTH + c] * 2 + 1;
  const std::vector<float> right = out;
  if (mode == "one_off") {
    out[(ROWS - 1) * WIDTH + 17] += 1;
  } else if (mode == "nan") {
    out[WIDTH + WIDTH - 1] = NAN;
  } else if (mode == "misplaced") {  // rows read at a pitch one float too long
    for (size_t r = 0; r < ROWS; ++r)
      for (size_t c = 0; c < WIDTH && r * (WIDTH + 1) + c < count; ++c)
        out[r * WIDTH + c] = in[r * (WIDTH + 1) + c] * 2 + 1;
  }
  if (mode != "ok") {
    const size_t at = driver::first_difference(right, out);
    driver::planted("element (" + std::to_string(at / WIDTH) + "," + std::to_string(at % WIDTH) + ") is ");
  }
  check_pitch(in, out);
  return driver::passed(mode);
}
