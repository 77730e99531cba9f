// driver.h - what the host drivers of the bench checks (tests/bench_checks/<bench>.cpp) share.
//
// A driver builds the output that a bench's kernel must produce with a reference of its own (never
// the check's code), then hands the bench's host check (cuda/<bench>/check.h) that output, or a
// corrupted copy, as its one argument says: `ok` must pass (exit 0, "check passed" on stdout); any
// other mode must fail (exit 3, `@sweep check=failed what="..."` on stdout). Before a corrupt output
// is checked, the driver prints `planted: <text>` on stderr: text that the check's message must
// contain, e.g. the index of the wrong element. tests/bench_checks.rs asserts all of it.
//
// Build one point by hand (params.h rendered by `sweep render SPEC --point N --out DIR`):
//   c++ -std=c++17 -O1 -I cuda/common -I cuda/<bench> -I DIR -o /tmp/check tests/bench_checks/<bench>.cpp
//   /tmp/check ok; /tmp/check one_off
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace driver {

// A mistake of the driver, not a verdict of the check (a corruption that changes nothing, a mode
// that does not apply to this point): the reason on stderr, exit 2.
[[noreturn]] inline void fail(const std::string& why) {
  fflush(stdout);
  fprintf(stderr, "driver: %s\n", why.c_str());
  exit(2);
}

// argv[1] when it is `ok` or one of `wrong` (the corrupt modes); otherwise the usage, exit 2.
inline std::string mode(int argc, char** argv, std::initializer_list<const char*> wrong) {
  std::string usage = "usage: ";
  usage += argc > 0 ? argv[0] : "driver";
  usage += " ok";
  for (const char* m : wrong) {
    if (argc == 2 && !strcmp(argv[1], m)) return m;
    usage += std::string("|") + m;
  }
  if (argc == 2 && !strcmp(argv[1], "ok")) return "ok";
  fail(usage);
}

// What the check's message must contain; said before the check runs.
inline void planted(const std::string& text) {
  fprintf(stderr, "planted: %s\n", text.c_str());
  fflush(stderr);
}

// The first index where `got` differs from `right`, bit for bit (NaN included); a corruption that
// changed nothing is the driver's mistake.
template <class T>
size_t first_difference(const std::vector<T>& right, const std::vector<T>& got) {
  for (size_t i = 0; i < right.size() && i < got.size(); ++i)
    if (memcmp(&right[i], &got[i], sizeof(T)) != 0) return i;
  fail("the corruption changed nothing");
}

// After the check returned: a corrupt mode that gets here makes the test fail.
inline int passed(const std::string& mode) {
  printf("check passed (%s)\n", mode.c_str());
  return 0;
}

}  // namespace driver
