// sweep_check.h - the host side of checking a bench's result (header-only, C++17, no CUDA).
// sweep.cuh includes it; a bench's check.h includes it alone, so that the bench's host check builds
// with a plain host compiler and runs on a CPU (tests/bench_checks).
//
// A wrong result prints `@sweep check=failed what="..."` to stdout, the reason to stderr, and exits
// with status 3; sweep records the point as wrong_result.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

// A function that a kernel and its host check share (in a bench's check.h): __host__ __device__
// under nvcc, a plain function under a host compiler.
#ifdef __CUDACC__
#define SWEEP_HOST_DEVICE __host__ __device__
#else
#define SWEEP_HOST_DEVICE
#endif

namespace sweep {

namespace detail {

inline std::string quote_safe(std::string s) {
  for (char& c : s)
    if (c == '"' || c == '\n' || c == '\r') c = c == '"' ? '\'' : ' ';
  return s;
}

}  // namespace detail

// A wrong result: prints `@sweep check=failed what="..."` to stdout, the reason to stderr, exit(3).
inline void check(bool ok, const std::string& what) {
  if (ok) return;
  printf("@sweep check=failed what=\"%s\"\n", detail::quote_safe(what).c_str());
  fflush(stdout);
  fprintf(stderr, "check failed: %s\n", what.c_str());
  exit(3);
}

// Host helpers (additions) -------------------------------------------------------------------------

// Deterministic, exactly representable test value for element i (distinct for i < 16777213).
inline float test_value(size_t i) { return (float)(i % 16777213u); }

// Checks got[i] == want[i] for i < n; on the first difference fails with
// "<what> differs at <i>: got <g>, expected <w>".
inline void check_equal(const float* got, const float* want, size_t n, const std::string& what) {
  for (size_t i = 0; i < n; ++i)
    if (!(got[i] == want[i])) {
      char buf[160];
      snprintf(buf, sizeof buf, " differs at %zu: got %.9g, expected %.9g", i, got[i], want[i]);
      check(false, what + buf);
    }
}

}  // namespace sweep
