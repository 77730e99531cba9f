// transpose/check.h - the host side of transpose.cu (plain C++17, no CUDA): the check of the
// transposed matrix. tests/bench_checks/transpose.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_check.h"
#include <cstddef>
#include <string>
#include <vector>

// in and out: N x N, row-major; every element of out must be in's transposed, out[c][r] == in[r][c].
inline void check_transpose(const std::vector<float>& in, const std::vector<float>& out) {
  const size_t m = (size_t)N * N;
  std::vector<float> want(m);
  for (size_t r = 0; r < N; ++r)
    for (size_t c = 0; c < N; ++c) want[c * N + r] = in[r * N + c];
  sweep::check_equal(out.data(), want.data(), m,
                     "transpose (" VARIANT ") of " + std::to_string(N) + "x" + std::to_string(N) + ": element");
}
