// stats.cpp - runs the timing core's statistics (cuda/common/sweep_stats.h) on generated samples,
// for tests/timing_stats.rs. One argument names a scenario; it prints the summary as one line:
//   mean=<s> rel_ci=<x> spread=<x> placements=<n> unstable=<0|1> samples=<n>
// Samples are visited as measure() visits them: passes over placements 0..k-1 (back and forth),
// `per` samples per visit. Noise is a fixed LCG, so every run prints the same.
// By hand: c++ -std=c++17 -I cuda/common -o /tmp/stats tests/timing_stats/stats.cpp && /tmp/stats one_slow
#include "sweep_stats.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

static unsigned long long rng = 12345;
// Uniform in [-1, 1).
static double noise() {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng >> 11) / (double)(1ull << 52) - 1.0;
}

// Standard normal (Box-Muller on the LCG above).
static double gauss() {
  const double u = 0.5 * (1.0 - noise()), v = 0.5 * (1.0 + noise());  // u in (0, 1], v in [0, 1)
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

// k placements, `passes` passes of `per` samples per visit; time of placement j = base(j) * (1 + amp * noise).
static sweep::detail::Placements run(int k, int passes, int per, double amp, const std::function<double(int)>& base) {
  sweep::detail::Placements acc(k);
  for (int p = 0; p < passes; ++p)
    for (int v = 0; v < k; ++v) {
      int j = p % 2 ? k - 1 - v : v;
      for (int i = 0; i < per; ++i) acc.add(j, base(j) * (1 + amp * noise()));
    }
  return acc;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: stats equal|one_slow|noise_hides|half_slow|single|cut_short|plan|fill|coverage|coverage_central\n");
    return 2;
  }
  const char* s = argv[1];
  const double target = 0.01;
  if (!strcmp(s, "fill")) {  // samples per visit of the fill pass: k base min_time_ms gpu_ms samples -> n
    const double cases[][5] = {{8, 2, 5, 0.64, 16},  {8, 2, 5, 5.2, 16},  {8, 2, 5, 4.9, 16}, {1, 1, 5, 0.04, 1},
                               {8, 2, 5, 0, 16},     {8, 2, 20, 0.16, 16}, {4, 3, 5, 2.4, 12}, {8, 2, 1e9, 1, 16}};
    for (const auto& c : cases)
      printf("fill %g %g %g %g %g %d\n", c[0], c[1], c[2], c[3], c[4],
             sweep::detail::samples_in_fill_pass((int)c[0], (int)c[1], c[2], c[3], (int)c[4]));
    return 0;
  }
  // coverage: how often the CI holds the true value, 4000 measurements per case: 8 places, 3 % normal
  // noise, 4 passes of 2 samples per visit (64 samples). coverage_central: 6 passes, the last four at
  // the central places only (Placements::central), as measure() takes them. Each line ends with the
  // mean number of samples taken.
  const bool central = !strcmp(s, "coverage_central");
  if (!strcmp(s, "coverage") || central) {
    const int passes = central ? 6 : 4;
    // the places' true times:
    const std::pair<const char*, std::function<double(int)>> cases[] = {
        {"alike", [](int) { return 1e-3; }},
        {"one_slow", [](int j) { return j == 3 ? 1.2e-3 : 1e-3; }},
        {"apart", [](int j) { return 1e-3 * (1 + 0.02 * j); }},  // 2 % steps: the middle two carry the median
        {"three_slow", [](int j) { return j < 3 ? 1.2e-3 : 1e-3; }},  // two groups split unevenly: the weak case
    };
    for (const auto& [name, base] : cases) {
      std::vector<double> truth;
      for (int j = 0; j < 8; ++j) truth.push_back(base(j));
      const double value = sweep::detail::median_of(truth);
      int in_value = 0, in_pooled = 0;
      const int runs = 4000;
      double taken = 0;
      for (int r = 0; r < runs; ++r) {
        sweep::detail::Placements a(8);
        for (int p = 0; p < passes; ++p) {
          // as measure() does with SWEEP_CENTRAL on: from the third pass on, only the central places
          const std::vector<bool> visit = central && p >= 2 ? a.central() : std::vector<bool>(8, true);
          for (int v = 0; v < 8; ++v) {
            int j = p % 2 ? 7 - v : v;
            if (!visit[j]) continue;
            for (int i = 0; i < 2; ++i) a.add(j, base(j) * (1 + 0.03 * gauss()));
          }
        }
        taken += a.samples();
        const double err = std::fabs(a.summarize(target).mean / value - 1);
        in_value += err <= a.value_rel_ci();
        in_pooled += err <= a.pooled_rel_ci();
      }
      printf("coverage %s %.4f %.4f %.1f\n", name, (double)in_value / runs, (double)in_pooled / runs, taken / runs);
    }
    return 0;
  }
  if (!strcmp(s, "plan")) {  // placement offsets of buffers 0..2 in one page and in 16 pages
    for (int pages : {1, 16})
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 20; ++j)
          printf("offset %d %d %d %zu %zu\n", pages, i, j, sweep::detail::placement_offset(i, j, pages),
                 sweep::detail::placement_span(pages));
    return 0;
  }
  sweep::detail::Placements acc(1);
  if (!strcmp(s, "equal"))  // 8 placements alike, 0.2 % noise
    acc = run(8, 2, 2, 0.002, [](int) { return 1e-3; });
  else if (!strcmp(s, "one_slow"))  // placement 3 is 40 % slower
    acc = run(8, 2, 2, 0.002, [](int j) { return j == 3 ? 1.4e-3 : 1e-3; });
  else if (!strcmp(s, "noise_hides"))  // placements 1.5 % apart, but 10 % noise and 2 samples each
    acc = run(8, 1, 2, 0.10, [](int j) { return j % 2 ? 1.015e-3 : 1e-3; });
  else if (!strcmp(s, "half_slow"))  // 5 of 8 placements 30 % slower: the median follows them
    acc = run(8, 2, 2, 0.002, [](int j) { return j < 5 ? 1.3e-3 : 1e-3; });
  else if (!strcmp(s, "single")) {  // one placement: the plain mean and Student-t CI of 1, 2, 3, 4 ms
    for (double t : {1e-3, 2e-3, 3e-3, 4e-3}) acc.add(0, t);
  } else if (!strcmp(s, "cut_short")) {  // the time cap hit after 3 of 8 placements
    sweep::detail::Placements a(8);
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) a.add(j, 1e-3 * (1 + 0.002 * noise()));
    acc = a;
  } else {
    fprintf(stderr, "unknown scenario %s\n", s);
    return 2;
  }
  auto sum = acc.summarize(target);
  printf("mean=%.9g rel_ci=%.9g spread=%.9g placements=%d unstable=%d samples=%d\n", sum.mean, sum.rel_ci,
         sum.spread, sum.placements, (int)sum.unstable, acc.samples());
  return 0;
}
