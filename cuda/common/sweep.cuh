// sweep.cuh - the timing core shared by every CUDA bench of `sweep` (header-only, C++17).
// Contract: docs/design.md, "The timing core".
//
// Conventions
// - Bandwidth counts bytes read + bytes written; 1 GB/s = 1e9 bytes/s. A copy of B bytes moves 2B.
// - Flop rates: 1 MFlops = 1e6 floating-point operations per second.
// - A sample is `batch` back-to-back calls of the timed function between two CUDA events on the
//   legacy default stream; its time divided by `batch` is one per-launch time. All statistics and
//   every number printed are per launch. `batch` is chosen automatically (see measure()). The
//   stream is held by a spinning kernel until the whole sample is enqueued, so host-side launch
//   latency and scheduling delays never fall between the events (nvbench's blocking kernel).
// - Stopping rule (nvbench's noise criterion; Conrad, UFRGS 2010): sample until there are at least
//   min_samples samples AND min_time_ms of summed GPU time AND the 95 % confidence half-width of the
//   value divided by the value (rel_ci, below) is <= target_rel_ci. If max_time_ms of wall time (flushes
//   included) passes first, stop and mark the metric noisy (unless the CI target is met by then).
// - L2 flush (SWEEP_FLUSH_L2=1): before every sample, untimed, a kernel reads a buffer of 2x the L2
//   size, so each sample starts with a cold L2 that holds no dirty lines to write back.
// - Start gate (SWEEP_GATE_FD=n, set by the harness): options_from_env() creates the CUDA context,
//   then blocks reading one byte from fd n before it returns. sweep starts the next point's program
//   while the current one measures; it opens the gate when the GPU is free, so start-up overlaps
//   but no two programs ever allocate, copy or measure on the GPU at once.
// - Placements (SWEEP_PLACEMENTS=k, default 8): buffers a bench allocates with sweep::malloc are
//   moved (contents copied) to k places inside a pool of their own, the same k offsets (multiples
//   of 4 KiB, spread over 2 MiB; sweep_stats.h, placement_offset) in every process, and the
//   samples are taken at each place in turn, in passes that go over every place and back. Where a
//   buffer lies moves store- and L2-bound kernels by up to 40 % on an H100 (bench/placement.txt),
//   and one cudaMalloc per process samples one place picked by the allocation history; the value is
//   the median over the places of each place's mean time, so it depends less on that history
//   (SWEEP_PLACEMENT_PAGES=p spreads the places over p pages of 2 MiB instead: bench/placement_ab.txt
//   measured that this moves the median, and does not steady it). rel_ci is the 95 % half-width of that
//   median over the places (a bootstrap of the places' means from the within-place noise, pooled;
//   sweep_stats.h, value_rel_ci), not of the mean of all samples, which would claim too little,
//   spread = (slowest - fastest place mean) / median, unstable=1 when that spread exceeds the target
//   and is larger than the noise can explain.
// - Measure lock (SWEEP_MEASURE_LOCK=path, set by the harness): the program holds an exclusive
//   flock on that file while it creates its CUDA context and during every measure(), so a program
//   started early never creates its context while another program measures on the GPU (that moved
//   single samples by up to 7 % and whole metrics by up to 9 % on an H100; bench/truth.txt).
// - Clock check: before and after the samples a one-thread kernel counts clock64() cycles over
//   ~200 us of %globaltimer; sm_mhz is the lower of the two readings, throttled=1 when it is > 10 %
//   below the rated clock.
// - Profile mode (SWEEP_PROFILE=1, set by the harness for a `[profile]` run under Nsight Compute,
//   after the point's timed run): measure() makes one untimed call, then exactly one call inside an
//   NVTX push/pop range `sweep:<n>` (n counts measure() calls from 0; the L2 flushed before it when
//   SWEEP_FLUSH_L2=1, as before a timed sample) and times nothing; report()
//   prints `@sweep profile metric=NAME range=sweep:<n>` instead of a metric line (report_value:
//   `range=none`, a derived value launches nothing), so the harness
//   can tie ncu's rows (`--nvtx --nvtx-include "regex:^sweep:[0-9]+$/"`) to the metric. No hold
//   kernel, no clock probe and no placements run in this mode: ncu sees only the bench's calls.
// - Power mode (SWEEP_POWER_MS=n, set by the harness for `[profile] metric_power_ms`, after the
//   point's timed run): measure() loops the timed function for n ms (detail::power_loop) and
//   report() prints `@sweep power metric=NAME t0=<unix s> t1=<unix s> calls=<n>` (report_value:
//   `window=none`); sweep averages the power samples it took in that window.
//
// Output per metric (stdout): "<unit>: <value>" and
//   @sweep metric=<name> unit=<unit> value=.. median=.. stddev=.. min=.. max=.. rel_ci=.. samples=.. noisy=.. throttled=..
//          spread=.. placements=.. unstable=.. sm_mhz=..
// Diagnostic lines start with "# ". Every call of the timed function is asynchronous; measure()
// makes at least one untimed call first (kernels load lazily), even with SWEEP_WARMUP=0.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

// The host-side checks (check, check_equal, test_value) live in sweep_check.h: no CUDA there, so a
// bench's check.h builds and runs on a CPU.
#include "sweep_check.h"
// The statistics (placements, pooled CI, spread, unstable) live in sweep_stats.h: no CUDA there
// either, so tests/timing_stats.rs runs them on a CPU.
#include "sweep_stats.h"
// NVTX ranges for profile mode (header-only; in the CUDA toolkit, and in PyPI's nvidia-nvtx).
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define SWEEP_HAS_NVTX 1
#else
#define SWEEP_HAS_NVTX 0
#endif

// Every CUDA runtime call goes through this: on failure it prints the call, file, line and the
// CUDA error string to stderr and exits with status 1.
#define SWEEP_CHECK(call) ::sweep::detail::check_cuda((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors (and earlier asynchronous errors).
#define SWEEP_CHECK_LAST() ::sweep::detail::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

namespace sweep {

struct Options {
  int warmup = 3;                // untimed calls before the samples
  int min_samples = 10;
  double min_time_ms = 20;       // minimum summed GPU time of the samples
  double max_time_ms = 2000;     // hard cap (wall time) per metric
  double target_rel_ci = 0.01;   // relative 95 % CI half-width of the value (= DEFAULT_TARGET_REL_CI, src/spec/timing.rs)
  bool flush_l2 = false;         // read a 2x-L2 buffer before every sample (outside the timing)
  double rated_sm_mhz = 0;       // 0 = read from the device by options_from_env()
  int batch = 0;                 // calls per sample; 0 = automatic (addition: SWEEP_BATCH)
  int device = 0;                // CUDA device used (addition: SWEEP_DEVICE)
  int placements = 8;            // places of the sweep::malloc buffers (addition: SWEEP_PLACEMENTS)
  bool profile = false;          // profile mode: one call per metric in an NVTX range (SWEEP_PROFILE)
  double power_ms = 0;           // power mode: each metric's call looped for this long (SWEEP_POWER_MS)
};

struct Stats {                   // times are seconds per launch
  std::vector<double> times;     // one per sample
  // mean: the median over placements of each placement's mean time: the time behind `value`
  // (with one placement, the plain mean). median, stddev, min, max: of all samples.
  double mean = 0, median = 0, stddev = 0, min = 0, max = 0;
  double rel_ci = INFINITY;      // 95 % CI half-width of `mean` / mean (sweep_stats.h, value_rel_ci)
  double spread = 0;             // (slowest - fastest placement mean) / mean
  int placements = 1;            // placements sampled
  bool unstable = false;         // spread > target and beyond what the within-placement noise explains
  int samples = 0;
  int batch = 1;                 // launches per sample
  bool noisy = false, throttled = false;
  double sm_mhz = 0;             // SM clock: the lower of two readings, before and after the samples
  int profile_range = -1;        // profile mode: n of the NVTX range `sweep:<n>` of this measure()
  double power_t0 = 0, power_t1 = 0;  // power mode: the loop's window, seconds since the Unix epoch
  long long power_calls = 0;          // power mode: calls in that window (0: not power mode)
};

namespace detail {

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  fflush(stdout);
  fprintf(stderr, "CUDA error: %s (%s)\n  in %s\n  at %s:%d\n", cudaGetErrorString(e),
          cudaGetErrorName(e), call, file, line);
  exit(1);
}

inline double env_num(const char* name, double dflt) {
  const char* s = getenv(name);
  if (!s || !*s) return dflt;
  if (!strcmp(s, "true")) return 1;
  if (!strcmp(s, "false")) return 0;
  char* end = nullptr;
  double v = strtod(s, &end);
  if (end == s || *end) {
    fprintf(stderr, "bad value %s=\"%s\": expected a number\n", name, s);
    exit(2);
  }
  return v;
}

// Waits for a %globaltimer tick, then spins for `ns` nanoseconds of it, counting SM cycles.
static __global__ void clock_probe(unsigned long long ns, unsigned long long* out) {
  unsigned long long g_prev, g0, g;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g_prev));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0)); } while (g0 == g_prev);
  long long c0 = clock64();
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); } while (g - g0 < ns);
  long long c1 = clock64();
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = g - g0;
}

struct State {                   // per-process resources, created on first use, freed at exit
  void* flush_buf = nullptr;
  size_t flush_bytes = 0;
  unsigned long long* probe = nullptr;
  volatile int* release = nullptr;  // pinned, mapped host flag for hold()
  int* held_too_long = nullptr;     // device flag: hold() gave up waiting
};
inline State& state() {
  static State s;
  if (!s.probe) {  // the samples' events: sample_events()
    SWEEP_CHECK(cudaMalloc(&s.probe, 2 * sizeof(unsigned long long)));
    SWEEP_CHECK(cudaHostAlloc((void**)&s.release, sizeof(int), cudaHostAllocMapped));
    SWEEP_CHECK(cudaMalloc(&s.held_too_long, sizeof(int)));
    SWEEP_CHECK(cudaMemset(s.held_too_long, 0, sizeof(int)));
  }
  return s;
}

// Keeps the stream busy until the host has enqueued a whole sample (start event, calls, stop
// event) and sets *release (as nvbench does): the events then time GPU work alone, not the host's
// launch latency or a host thread descheduled between two launches (e.g. while builds run beside).
static __global__ void hold(volatile int* release, unsigned long long timeout_ns, int* held_too_long) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (!*release) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > timeout_ns) {
      *held_too_long = 1;
      return;
    }
  }
}

// Reads (never writes) a buffer of 2x the L2 size: evicts earlier data, including dirty lines (their
// write-back happens here, untimed), and leaves only clean lines behind.
static __global__ void flush_read(const int4* p, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    int4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x5eed5eed) *sink = acc;  // the buffer is all zeros: never taken, but not provably so
}

inline void flush_l2(int device) {
  State& s = state();
  if (!s.flush_buf) {
    int l2 = 0;
    SWEEP_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    s.flush_bytes = std::max<size_t>(2 * (size_t)l2, 1 << 20) / 16 * 16;
    SWEEP_CHECK(cudaMalloc(&s.flush_buf, s.flush_bytes + 16));
    SWEEP_CHECK(cudaMemset(s.flush_buf, 0, s.flush_bytes + 16));
  }
  flush_read<<<1024, 256>>>((const int4*)s.flush_buf, s.flush_bytes / 16, (int*)((char*)s.flush_buf + s.flush_bytes));
  SWEEP_CHECK_LAST();
}

// Effective SM clock in MHz, measured over ~200 us.
inline double measure_sm_mhz() {
  State& s = state();
  clock_probe<<<1, 1>>>(200000ull, s.probe);
  SWEEP_CHECK_LAST();
  unsigned long long h[2];
  SWEEP_CHECK(cudaMemcpy(h, s.probe, sizeof h, cudaMemcpyDeviceToHost));
  return h[1] ? 1e3 * (double)h[0] / (double)h[1] : 0;
}

// Buffers registered by sweep::malloc: the caller's pointer variable, its size, its pool.
struct Placed {
  void** user;        // the bench's pointer variable: measure() rewrites it at every move
  size_t bytes;
  char* pool;         // bytes + placement_span(), allocated once
  size_t offset;      // where the buffer lies in the pool now
};
inline std::vector<Placed>& placed() {
  static std::vector<Placed> v;
  return v;
}
// SWEEP_PLACEMENT_PAGES=p (1..16, default 1): the placements spread over p pages of 2 MiB (read once).
inline int placement_pages() {
  static const int p = std::clamp((int)env_num("SWEEP_PLACEMENT_PAGES", 1), 1, (int)kPlacementPages);
  return p;
}
// The staging buffer of place_buffers, as large as the largest registered buffer: allocated here,
// before a hold() is launched (a cudaMalloc while hold() spins could wait for it).
inline void ensure_stage(void*& stage, size_t& stage_bytes) {
  size_t need = 0;
  for (const Placed& b : placed()) need = std::max(need, b.bytes);
  if (need <= stage_bytes) return;
  if (stage) SWEEP_CHECK(cudaFree(stage));
  SWEEP_CHECK(cudaMalloc(&stage, need));
  stage_bytes = need;
}
// Enqueues the moves of every registered buffer to placement j on the legacy default stream
// (contents copied through a staging buffer, since the old and the new range may overlap) and
// rewrites the bench's pointer variables; stream-ordered, so the calls enqueued after it see the
// buffers at their new place. No synchronisation: measure() enqueues a visit's moves, its untimed
// call and its samples behind one hold().
inline void enqueue_moves(int j) {
  static void* stage = nullptr;
  static size_t stage_bytes = 0;
  ensure_stage(stage, stage_bytes);
  auto& v = placed();
  for (size_t i = 0; i < v.size(); ++i) {
    Placed& b = v[i];
    size_t to = placement_offset((int)i, j, placement_pages());
    if (to == b.offset) continue;
    SWEEP_CHECK(cudaMemcpyAsync(stage, b.pool + b.offset, b.bytes, cudaMemcpyDeviceToDevice));
    SWEEP_CHECK(cudaMemcpyAsync(b.pool + to, stage, b.bytes, cudaMemcpyDeviceToDevice));
    b.offset = to;
    *b.user = b.pool + to;
  }
}
// Moves every registered buffer to placement j and waits for the moves.
inline void place_buffers(int j) {
  enqueue_moves(j);
  SWEEP_CHECK(cudaDeviceSynchronize());
}

// Event pairs for the samples enqueued behind one hold(), created before the hold is launched.
inline std::vector<cudaEvent_t>& sample_events(size_t pairs) {
  static std::vector<cudaEvent_t> ev;
  while (ev.size() < 2 * pairs) {
    cudaEvent_t e;
    SWEEP_CHECK(cudaEventCreate(&e));
    ev.push_back(e);
  }
  return ev;
}

// SWEEP_SAMPLE_GROUPS=1 (an experiment, off by default) enqueues a visit's samples back to back
// behind one hold(), one host round trip per visit instead of per sample. Measured on an H100
// (bench/peers_run.txt, docs/measurements.md "Speed"): the values stay the same, but back-to-back
// samples of the global grid stores scatter more (57 -> 90 samples for the same CI) and the
// programs took 9 % longer; the host's turn-around between samples is an idle gap that pays.
inline bool sample_groups() {
  static const bool on = env_num("SWEEP_SAMPLE_GROUPS", 0) != 0;
  return on;
}
// SWEEP_CENTRAL=1 (an experiment, off by default): from the third pass on, samples only at the
// placements that may carry the median (sweep_stats.h, Placements::central). On an H100, with
// sample groups, it saved no samples (bench/peers_run.txt); not tried alone on the GPU.
inline bool central_only() {
  static const bool on = env_num("SWEEP_CENTRAL", 0) != 0;
  return on;
}

inline double unix_now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Power mode (SWEEP_POWER_MS=n, set by the harness for `[profile] metric_power_ms`, after the
// point's timed run): the warm-up calls, then `f` back to back in chunks of ~10 ms (a sync after
// each, so the loop ends within a chunk of n ms) for n ms of wall time, while sweep samples the
// GPU's power; the window's ends go to report(). No placements, no L2 flush, no hold kernel: the
// kernel's steady-state power, not the timed run's (a spec with flush_l2 times cold calls).
template <class F>
Stats power_loop(const Options& opt, F& f) {
  Stats s;
  for (int i = 0; i < std::max(1, opt.warmup); ++i) f();
  SWEEP_CHECK_LAST();
  SWEEP_CHECK(cudaDeviceSynchronize());
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  auto c0 = std::chrono::steady_clock::now();
  f();
  SWEEP_CHECK_LAST();
  SWEEP_CHECK(cudaDeviceSynchronize());
  const int chunk = (int)std::clamp(std::ceil(10.0 / std::max(ms_since(c0), 1e-3)), 1.0, 256.0);
  s.power_t0 = unix_now();
  auto start = std::chrono::steady_clock::now();
  do {
    for (int i = 0; i < chunk; ++i) f();
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());
    s.power_calls += chunk;
  } while (ms_since(start) < opt.power_ms);
  s.power_t1 = unix_now();
  return s;
}

// SWEEP_FILL_PASS=0 turns the fill pass off (samples_in_fill_pass, sweep_stats.h), for the A/B bench.
inline bool fill_pass() {
  static const bool on = env_num("SWEEP_FILL_PASS", 1) != 0;
  return on;
}

// Profile mode: how many NVTX ranges measure() opened. One counter for the program (a static in
// measure<F> itself would be one per timed function's type, and two metrics would share a range).
inline int& profile_ranges() {
  static int n = 0;
  return n;
}

// The measure lock (SWEEP_MEASURE_LOCK): -1 when the harness gave none.
inline int measure_lock_fd() {
  static const int fd = [] {
    const char* path = getenv("SWEEP_MEASURE_LOCK");
    if (!path || !*path) return -1;
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0) {
      fprintf(stderr, "cannot open the measure lock %s: %s\n", path, strerror(errno));
      exit(1);
    }
    return f;
  }();
  return fd;
}
// The program holds the measure lock from its start gate to its exit (hold_measure_lock_to_exit).
inline bool& session_locked() {
  static bool held = false;
  return held;
}
// Holds the measure lock for its lifetime (no-op without one, or while the program holds it to exit).
struct MeasureLock {
  bool mine = false;
  MeasureLock() {
    if (measure_lock_fd() < 0 || session_locked()) return;
    while (flock(measure_lock_fd(), LOCK_EX) < 0 && errno == EINTR) {
    }
    mine = true;
  }
  ~MeasureLock() {
    if (mine) flock(measure_lock_fd(), LOCK_UN);
  }
  MeasureLock(const MeasureLock&) = delete;
  MeasureLock& operator=(const MeasureLock&) = delete;
};

// SWEEP_TRACE=1: "# trace <phase> <unix time in s>" lines on stderr, for finding where a program's
// wall time goes (main, context, gate, one per reported metric, exit). Off by default.
inline bool tracing() {
  static const bool on = env_num("SWEEP_TRACE", 0) != 0;
  return on;
}
inline void trace(const char* phase) {
  if (!tracing()) return;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  fprintf(stderr, "# trace %s %lld.%09ld\n", phase, (long long)ts.tv_sec, ts.tv_nsec);
}

// SWEEP_SESSION_LOCK=1 (an experiment, off by default): past the start gate the program takes the
// measure lock and keeps it until it exits (the kernel releases a flock with its last descriptor), so
// no program started early creates its context anywhere inside this program's measuring, not even
// between two metrics (by default one does, between the first two metrics of almost every point).
// bench/band.txt: on one H100 host shared_nc_grid at 258-290 threads lost 1-8 % in 2-5 points per
// sweep with prestart and never without; on the next host neither design showed it, and the SM-clock
// dips that came with it followed how busy the GPU was kept, not where contexts were created. Not
// shown to help, so not the default; on 2026-11-25 it had the 8 % values in 2 of 2 sweeps on a host
// where plain prestart had them in 4 of 4 and no prestart in 0 of 2 (sweep's default is now no
// prestart).
inline void hold_measure_lock_to_exit() {
  if (measure_lock_fd() < 0 || env_num("SWEEP_SESSION_LOCK", 0) == 0) return;
  while (flock(measure_lock_fd(), LOCK_EX) < 0 && errno == EINTR) {
  }
  session_locked() = true;
  trace("session-lock");
}

// Waits at the start gate (SWEEP_GATE_FD) until the harness writes a byte; no-op without one.
inline void wait_for_gate() {
  const char* gate = getenv("SWEEP_GATE_FD");
  if (!gate) return;
  int fd = atoi(gate);
  char c;
  ssize_t n;
  do n = read(fd, &c, 1); while (n < 0 && errno == EINTR);
  close(fd);
  trace("gate");
  printf("# start gate opened\n");
}

}  // namespace detail

// Reads SWEEP_* (see docs/design.md), selects the device and fills in the rated SM clock.
// Fails (stderr, exit 1) when no usable GPU is present, e.g. with the driver's error string.
inline Options options_from_env() {
  using detail::env_num;
  Options o;
  o.warmup = (int)env_num("SWEEP_WARMUP", o.warmup);
  o.min_samples = std::max(1, (int)env_num("SWEEP_MIN_SAMPLES", o.min_samples));
  o.min_time_ms = env_num("SWEEP_MIN_TIME_MS", o.min_time_ms);
  o.max_time_ms = env_num("SWEEP_MAX_TIME_MS", o.max_time_ms);
  o.target_rel_ci = env_num("SWEEP_TARGET_REL_CI", o.target_rel_ci);
  o.flush_l2 = env_num("SWEEP_FLUSH_L2", 0) != 0;
  o.rated_sm_mhz = env_num("SWEEP_RATED_SM_MHZ", 0);
  o.batch = (int)env_num("SWEEP_BATCH", 0);
  o.device = (int)env_num("SWEEP_DEVICE", 0);
  o.placements = std::max(1, (int)env_num("SWEEP_PLACEMENTS", o.placements));
  o.profile = env_num("SWEEP_PROFILE", 0) != 0;
  o.power_ms = std::max(0.0, env_num("SWEEP_POWER_MS", 0));
  if (o.profile && !SWEEP_HAS_NVTX) {
    fprintf(stderr, "error: SWEEP_PROFILE=1 needs NVTX, and this program was built without "
                    "<nvtx3/nvToolsExt.h> (hint: use a CUDA toolkit that has it, or pip's nvidia-nvtx)\n");
    exit(1);
  }
  detail::trace("main");
  int count = 0;
  SWEEP_CHECK(cudaGetDeviceCount(&count));  // loads the driver (host work): outside the lock
  {
    detail::MeasureLock lock;  // never while another program measures
    detail::trace("ctx-lock");
    SWEEP_CHECK(cudaSetDevice(o.device));
    SWEEP_CHECK(cudaFree(nullptr));  // create the context now, outside any timing
  }
  detail::trace("context");
  // Registered after the runtime initialised (and registered its own exit handler), so it runs
  // before the context is torn down; the teardown shows as exit -> reaped in harness.trace.
  if (detail::tracing()) atexit([] { detail::trace("exit"); });
  if (o.rated_sm_mhz <= 0) {
    int khz = 0;  // cudaDeviceProp::clockRate is gone in CUDA 13; the attribute remains
    SWEEP_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, o.device));
    o.rated_sm_mhz = khz / 1e3;
  }
  cudaDeviceProp p;
  SWEEP_CHECK(cudaGetDeviceProperties(&p, o.device));
  printf("# device %d: %s, sm_%d%d, %d SMs, L2 %d KiB, rated SM clock %.0f MHz\n", o.device, p.name,
         p.major, p.minor, p.multiProcessorCount, p.l2CacheSize >> 10, o.rated_sm_mhz);
  detail::wait_for_gate();  // wait until the harness says the GPU is ours
  detail::hold_measure_lock_to_exit();
  return o;
}

// Number of SMs of the current device (addition).
inline int sm_count() {
  int dev = 0, n = 0;
  SWEEP_CHECK(cudaGetDevice(&dev));
  SWEEP_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}

// cudaMalloc for a buffer the timed function reads or writes: measure() moves it between its
// placements (contents kept) and rewrites `*ptr`, so the timed function must read the pointer
// variable itself (capture by reference, `[&]`), not a copy made before measure(). After measure()
// the buffer stays at its last placement; sweep::free releases it. Offsets are multiples of 4 KiB,
// so the alignment cudaMalloc gives is kept.
template <class T>
cudaError_t malloc(T** ptr, size_t bytes) {
  char* pool = nullptr;
  cudaError_t e = cudaMalloc((void**)&pool, bytes + detail::placement_span(detail::placement_pages()));
  if (e != cudaSuccess) return e;
  detail::placed().push_back({(void**)ptr, bytes, pool, 0});
  *ptr = (T*)pool;
  return cudaSuccess;
}
template <class T>
cudaError_t free(T* ptr) {
  auto& v = detail::placed();
  for (size_t i = 0; i < v.size(); ++i)
    if (*v[i].user == (void*)ptr) {
      cudaError_t e = cudaFree(v[i].pool);
      v.erase(v.begin() + i);
      return e;
    }
  return cudaFree(ptr);
}

// Times `f`, which must only enqueue asynchronous work on the legacy default stream (kernel
// launches, cudaMemcpyAsync, ...): a synchronizing call inside it would wait for hold().
// Each sample is enqueued behind hold(), so the events time GPU work only (see hold()).
// Batching: unless opt.batch > 0 or opt.flush_l2, one call is timed after the warm-up and, when it
// takes less than 10 us, each sample becomes ceil(50 us / t) calls (at most 256) so that the event
// resolution (~0.5 us) does not dominate. With flush_l2 every sample is a single cold call.
// Placements: with buffers from sweep::malloc and opt.placements = k > 1, the samples are taken in
// passes; a pass visits placement 0, 1, ..., k-1 (the next pass goes back), and a visit moves the
// buffers there, makes one untimed call, then takes ceil(min_samples / k) samples, except in the
// second pass (the fill pass), which takes at each place as many as bring the GPU time to
// min_time_ms (detail::samples_in_fill_pass). The stopping rule is checked at the end of a pass, on the value's CI (the wall-time cap is
// checked after every sample).
template <class F>
Stats measure(const Options& opt, F&& f) {
  detail::MeasureLock lock;  // no other program creates a context while this one measures
  if (opt.profile) {
    Stats s;
    s.profile_range = detail::profile_ranges()++;
    f();  // untimed and unranged: kernels load lazily
    SWEEP_CHECK_LAST();
    if (opt.flush_l2) detail::flush_l2(opt.device);  // as before a timed sample; outside the range
    SWEEP_CHECK(cudaDeviceSynchronize());
    char name[32];
    snprintf(name, sizeof name, "sweep:%d", s.profile_range);
#if SWEEP_HAS_NVTX
    nvtxRangePushA(name);
#endif
    f();
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());
#if SWEEP_HAS_NVTX
    nvtxRangePop();
#endif
    return s;
  }
  if (opt.power_ms > 0) return detail::power_loop(opt, f);
  detail::State& st = detail::state();
  const int k = detail::placed().empty() ? 1 : opt.placements;
  detail::trace("m-begin");
  if (k > 1) detail::place_buffers(0);
  // At least one untimed call even with warmup = 0, and one flush: kernels are loaded lazily
  // (CUDA_MODULE_LOADING=LAZY), and loading one while hold() spins could stall until its timeout.
  for (int i = 0; i < std::max(1, opt.warmup); ++i) {
    f();
    SWEEP_CHECK_LAST();
  }
  if (opt.flush_l2) detail::flush_l2(opt.device);
  SWEEP_CHECK(cudaDeviceSynchronize());
  const double mhz_before = detail::measure_sm_mhz();
  detail::trace("m-ready");

  // A group of samples behind one hold(): the stream is held while the host enqueues [the moves to
  // placement `move_to` and one untimed call there], then `n` samples of `calls` calls, each
  // [flush,] start event, calls, stop event; then the hold is released and the host waits once for
  // the last stop event and reads every pair (no synchronisation between samples, which run back to
  // back on the GPU). Milliseconds per sample are appended to `ms`.
  auto group = [&](int move_to, int n, int calls, std::vector<double>& ms) {
    std::vector<cudaEvent_t>& ev = detail::sample_events((size_t)n);
    *st.release = 0;
    detail::hold<<<1, 1>>>(st.release, 200000000ull, st.held_too_long);
    SWEEP_CHECK_LAST();
    if (move_to >= 0) {
      detail::enqueue_moves(move_to);
      f();  // untimed: the first call at a new place
      SWEEP_CHECK_LAST();
    }
    for (int i = 0; i < n; ++i) {
      if (opt.flush_l2) detail::flush_l2(opt.device);
      SWEEP_CHECK(cudaEventRecord(ev[2 * i]));
      for (int c = 0; c < calls; ++c) f();
      SWEEP_CHECK_LAST();
      SWEEP_CHECK(cudaEventRecord(ev[2 * i + 1]));
    }
    *st.release = 1;
    SWEEP_CHECK(cudaEventSynchronize(ev[2 * n - 1]));
    for (int i = 0; i < n; ++i) {
      float t = 0;
      SWEEP_CHECK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
      ms.push_back((double)t);
    }
  };
  // Samples per group: all of a visit's, but at most ~256 launches behind one hold (well inside
  // the launch queue: a full queue would block the host while hold() spins) and 64 samples;
  // one with SWEEP_SAMPLE_GROUPS=0.
  auto per_group = [&](int calls) {
    if (!detail::sample_groups()) return 1;
    return std::clamp(256 / (calls + 2 + (opt.flush_l2 ? 1 : 0)), 1, 64);
  };

  Stats s;
  s.batch = opt.batch > 0 ? opt.batch : 1;
  std::vector<double> ms;
  if (opt.batch <= 0 && !opt.flush_l2) {
    group(-1, 1, 1, ms);
    if (ms[0] < 0.010) s.batch = (int)std::min(256.0, std::ceil(0.050 / std::max(ms[0], 1e-4)));
  }

  detail::Placements acc(k);
  const int base_visit = k == 1 ? 1 : std::max(1, (opt.min_samples + k - 1) / k);
  auto wall0 = std::chrono::steady_clock::now();
  double gpu_ms = 0;
  bool capped = false;
  int passes = 0;
  std::vector<bool> visit(k, true);
  for (int pass = 0; !capped; ++pass) {
    passes = pass + 1;
    const int per_visit = pass == 1 && detail::fill_pass()
                              ? detail::samples_in_fill_pass(k, base_visit, opt.min_time_ms, gpu_ms, acc.samples())
                              : base_visit;
    // From the third pass on (both earlier passes visit every place), only the places whose mean
    // could still be the median, or cross it, get more samples (Placements::central).
    if (pass >= 2 && k > 1 && detail::central_only()) visit = acc.central();
    for (int v = 0; v < k && !capped; ++v) {
      const int j = pass % 2 ? k - 1 - v : v;
      if (!visit[j]) continue;
      for (int taken = 0; taken < per_visit && !capped;) {
        const int n = std::min(per_visit - taken, per_group(s.batch));
        ms.clear();
        if (detail::sample_groups()) {
          group(k > 1 && taken == 0 ? j : -1, n, s.batch, ms);
        } else {  // the old core: the moves and the untimed call with a synchronisation of their own
          if (k > 1 && taken == 0) {
            detail::place_buffers(j);
            f();
            SWEEP_CHECK_LAST();
          }
          group(-1, 1, s.batch, ms);
        }
        taken += n;
        for (double m : ms) {
          gpu_ms += m;
          acc.add(j, std::max(m, 1e-6) * 1e-3 / s.batch);  // floor 1 ns: a 0 ms reading has no rate
        }
        double wall_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count();
        if (wall_ms >= opt.max_time_ms) capped = true;
      }
    }
    // The value's CI (a bootstrap) is about as wide as the pooled one at best (a median of means
    // is no better than their mean), so it is worked out only once the pooled one meets the target.
    s.rel_ci = acc.pooled_rel_ci();
    if (s.rel_ci <= opt.target_rel_ci) s.rel_ci = acc.value_rel_ci();
    if (acc.samples() >= opt.min_samples && gpu_ms >= opt.min_time_ms && s.rel_ci <= opt.target_rel_ci)
      break;
  }
  detail::trace("m-sampled");
  if (detail::tracing())
    fprintf(stderr, "# trace-gpu %.3f ms in %d samples x %d, %d passes\n", gpu_ms, acc.samples(), s.batch, passes);
  int held_too_long = 0;
  SWEEP_CHECK(cudaMemcpy(&held_too_long, st.held_too_long, sizeof(int), cudaMemcpyDeviceToHost));
  if (held_too_long) {
    fprintf(stderr, "warning: a sample was not enqueued within 200 ms (does the timed function "
                    "synchronize?); its time includes host delays\n");
    SWEEP_CHECK(cudaMemset(st.held_too_long, 0, sizeof(int)));
  }

  const detail::Placements::Summary sum = acc.summarize(opt.target_rel_ci);
  s.times = acc.times();
  s.samples = acc.samples();
  s.mean = sum.mean;
  s.median = sum.median;
  s.stddev = sum.stddev;
  s.min = sum.min;
  s.max = sum.max;
  s.rel_ci = sum.rel_ci;
  if (capped) s.noisy = !(s.rel_ci <= opt.target_rel_ci);  // the cap came before the reported CI met the target
  s.spread = sum.spread;
  s.placements = sum.placements;
  s.unstable = sum.unstable;
  s.sm_mhz = std::min(mhz_before, detail::measure_sm_mhz());
  s.throttled = opt.rated_sm_mhz > 0 && s.sm_mhz < 0.9 * opt.rated_sm_mhz;
  return s;
}

// Prints a timed metric. `work` is the work of ONE call of the timed function in the unit's
// numerator (GB for GB/s, millions of flops for MFlops). value = work / s.mean (the median over
// placements of their mean times); median, min and max are work / the median, max and min sample
// time; stddev is that of the per-sample rates; spread is that of the placements' mean times.
inline void report(const char* name, const char* unit, double work, const Stats& s) {
  if (s.profile_range >= 0) {  // profile mode: nothing was timed
    printf("@sweep profile metric=%s range=sweep:%d\n", name, s.profile_range);
    fflush(stdout);
    return;
  }
  if (s.power_calls > 0) {  // power mode: the loop's window, for the harness's power samples
    printf("@sweep power metric=%s t0=%.6f t1=%.6f calls=%lld\n", name, s.power_t0, s.power_t1, s.power_calls);
    fflush(stdout);
    return;
  }
  double sum = 0, sq = 0;
  for (double t : s.times) sum += work / t;
  double mean_rate = sum / s.samples;  // of the per-sample rates, for their stddev only
  for (double t : s.times) sq += (work / t - mean_rate) * (work / t - mean_rate);
  double sd = s.samples > 1 ? std::sqrt(sq / (s.samples - 1)) : 0;
  double value = work / s.mean;
  printf("%s: %.4f\n", unit, value);
  printf("@sweep metric=%s unit=%s value=%.4f median=%.4f stddev=%.4f min=%.4f max=%.4f rel_ci=%.6f "
         "samples=%d noisy=%d throttled=%d spread=%.6f placements=%d unstable=%d sm_mhz=%.0f\n",
         name, unit, value, work / s.median, sd, work / s.max, work / s.min,
         std::isfinite(s.rel_ci) ? s.rel_ci : 1.0, s.samples, (int)s.noisy, (int)s.throttled,
         s.spread, s.placements, (int)s.unstable, s.sm_mhz);
  printf("# %s: %.3f us per launch, %d samples x %d launches at %d placement(s) (spread %.1f %%), "
         "SM clock %.0f MHz\n", name, s.mean * 1e6, s.samples, s.batch, s.placements, 100 * s.spread,
         s.sm_mhz);
  fflush(stdout);
  detail::trace(name);
}

// Prints a plain derived value (no timing statistics).
inline void report_value(const char* name, const char* unit, double value) {
  if (detail::env_num("SWEEP_PROFILE", 0) != 0) {  // profile mode: a derived value has no range
    printf("@sweep profile metric=%s range=none\n", name);
    fflush(stdout);
    return;
  }
  if (detail::env_num("SWEEP_POWER_MS", 0) > 0) {  // power mode: a derived value draws no power
    printf("@sweep power metric=%s window=none\n", name);
    fflush(stdout);
    return;
  }
  printf("%s: %.6f\n", unit, value);
  printf("@sweep metric=%s unit=%s value=%.6f\n", name, unit, value);
  fflush(stdout);
}

// Times cudaMemcpy device-to-device of `bytes` bytes (cudaMemcpyAsync on the default stream) with
// the same statistics. Report it with work = 2 * bytes / 1e9 for GB/s (read + written).
inline Stats memcpy_d2d(const Options& opt, size_t bytes) {
  char *src = nullptr, *dst = nullptr;
  SWEEP_CHECK(sweep::malloc(&src, bytes));
  SWEEP_CHECK(sweep::malloc(&dst, bytes));
  SWEEP_CHECK(cudaMemset(src, 1, bytes));
  Stats s = measure(opt, [&] { SWEEP_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); });
  SWEEP_CHECK(sweep::free(src));
  SWEEP_CHECK(sweep::free(dst));
  return s;
}

}  // namespace sweep
