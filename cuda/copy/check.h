// copy/check.h - the host side of copy.cu (plain C++17, no CUDA): the check of the copied matrix.
// tests/bench_checks/copy.cpp runs it on a CPU.
#pragma once
#include "params.h"
#include "sweep_check.h"
#include <cstddef>
#include <string>
#include <vector>

// `in` and `out` hold `shift` elements (OFFSET for the offset variant, else 0) and then the N x N
// elements copied; `out` was filled with NaN ("not written") before the copy. The elements before the
// offset must be unwritten, every element copied equal to `in`'s.
inline void check_copy(const std::vector<float>& in, const std::vector<float>& out, size_t shift) {
  const size_t m = (size_t)N * N;
  for (size_t e = 0; e != shift; ++e)
    sweep::check(out[e] != out[e], "copy wrote element " + std::to_string(e) + " before the offset");
  sweep::check_equal(out.data() + shift, in.data() + shift, m,
                     "copy (" VARIANT ") of " + std::to_string(N) + "x" + std::to_string(N) + ": element offset+");
}
