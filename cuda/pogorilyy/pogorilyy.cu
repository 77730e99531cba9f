// pogorilyy: MFlops of repeated float additions whose result is stored every loop trip, as a
// function of the threads per block (Pogorilyy, Boyko, Tribrat, Gryaznov, Lystopad, Kyiv 2010,
// Fig. 2 and 3: sawtooth of period 16 in the thread count, 8 for stores by even threads, 32 for
// stores by the first half of the threads; best thread counts are multiples of 16).
//
// Each thread runs ITERATIONS trips of ADDS independent additions `a[j] += d` (d is a kernel
// argument, so nothing folds) and stores a[0] every trip (volatile, so every store is issued):
//   shared_nc / shared_2way / shared_3way: to shared memory, with k = 1, 2, 3 lanes of a warp per bank:
//       word = warp * 32k + (lane % k) * 32 + lane / k  (32 banks of 4 bytes; the study's G80 had 16)
//   global_all / global_even / global_half: to global memory by every thread, by even threads, by
//       the first ceil(THREADS/2) threads of the block. Each thread stores to its own word; every
//       block's words start on a 128-byte line of their own (no line shared between blocks).
// All threads compute all additions and write their sums at the end; the host recomputes every
// value in float (additions only, so the rounding is identical) and checks them.
// Each variant runs as one block (`_1blk`) and as BLOCKS_PER_SM x SM-count blocks (`_grid`).
// MFlops = blocks * THREADS * ITERATIONS * ADDS / time / 1e6 (the final sums are not counted).
//
// By hand (params.h in /tmp/p):
//   mkdir -p /tmp/p && printf '#define THREADS 100\n#define ITERATIONS 8192\n#define ADDS 4\n#define BLOCKS_PER_SM 8\n' > /tmp/p/params.h
//   nvcc -arch=sm_90 -O3 -I/tmp/p -Icuda/common -o /tmp/p/pogorilyy cuda/pogorilyy/pogorilyy.cu && /tmp/p/pogorilyy
#include "params.h"
#include "sweep.cuh"

#if !defined(THREADS) || !defined(ITERATIONS) || !defined(ADDS) || !defined(BLOCKS_PER_SM)
#error "params.h must define THREADS, ITERATIONS, ADDS and BLOCKS_PER_SM"
#endif
static_assert(THREADS >= 1 && THREADS <= 1024, "THREADS must be in 1..1024");

constexpr int WARPS = (THREADS + 31) / 32;
// Block b uses elements [b * PITCH, b * PITCH + THREADS) of every array: each block's stores start on
// a 128-byte line of its own, so a partial warp never shares a line with the next block's threads.
constexpr int PITCH = WARPS * 32;
constexpr int HALF = (THREADS + 1) / 2;  // "the first half of the threads"

// Shared-memory variants: K lanes of a warp share a bank (K = 1: no conflict).
template <int K>
__global__ void __launch_bounds__(THREADS) add_store_shared(const float* __restrict__ in, float d, float* __restrict__ out) {
  __shared__ float sh[WARPS * 32 * K];
  const int t = threadIdx.x, lane = t % 32, g = blockIdx.x * PITCH + t;
  volatile float* slot = sh + (t / 32) * 32 * K + (lane % K) * 32 + lane / K;
  float a[ADDS];
#pragma unroll
  for (int j = 0; j < ADDS; ++j) a[j] = in[g] + j;
#pragma unroll 4
  for (int i = 0; i < ITERATIONS; ++i) {
#pragma unroll
    for (int j = 0; j < ADDS; ++j) a[j] += d;
    *slot = a[0];
  }
  float s = *slot;
#pragma unroll
  for (int j = 1; j < ADDS; ++j) s += a[j];
  out[g] = s;
}

// Global-memory variants: MODE 0 every thread stores, 1 even threads, 2 the first half.
template <int MODE>
__global__ void __launch_bounds__(THREADS) add_store_global(const float* __restrict__ in, float d, float* __restrict__ out, float* store) {
  const int t = threadIdx.x, g = blockIdx.x * PITCH + t;
  const bool stores = MODE == 0 || (MODE == 1 ? t % 2 == 0 : t < HALF);
  volatile float* slot = store + g;
  float a[ADDS];
#pragma unroll
  for (int j = 0; j < ADDS; ++j) a[j] = in[g] + j;
#pragma unroll 4
  for (int i = 0; i < ITERATIONS; ++i) {
#pragma unroll
    for (int j = 0; j < ADDS; ++j) a[j] += d;
    if (stores) *slot = a[0];
  }
  float s = a[0];
#pragma unroll
  for (int j = 1; j < ADDS; ++j) s += a[j];
  out[g] = s;
}

// Input of thread g; few distinct values, so the host computes each expected result once.
constexpr int DISTINCT = 251;
static float input(size_t g) { return (float)(g % DISTINCT) * 0.25f; }

int main() {
  sweep::Options opt = sweep::options_from_env();
  const int max_blocks = BLOCKS_PER_SM * sweep::sm_count();
  const size_t n = (size_t)max_blocks * PITCH;
  const float d = 0.75f;
  std::vector<float> h_in(n), h_out(n), h_store(n), want_last(n), want_sum(n), last(DISTINCT), sum(DISTINCT);
  for (int x = 0; x < DISTINCT; ++x) {  // the exact float results the threads must produce
    float a[ADDS];
    for (int j = 0; j < ADDS; ++j) a[j] = input(x) + j;
    for (int i = 0; i < ITERATIONS; ++i)
      for (int j = 0; j < ADDS; ++j) a[j] += d;
    float s = a[0];
    for (int j = 1; j < ADDS; ++j) s += a[j];
    last[x] = a[0], sum[x] = s;
  }
  for (size_t g = 0; g < n; ++g) h_in[g] = input(g), want_last[g] = last[g % DISTINCT], want_sum[g] = sum[g % DISTINCT];
  float *in, *out, *store;
  SWEEP_CHECK(cudaMalloc(&in, n * sizeof(float)));
  SWEEP_CHECK(cudaMalloc(&out, n * sizeof(float)));
  SWEEP_CHECK(cudaMalloc(&store, n * sizeof(float)));
  SWEEP_CHECK(cudaMemcpy(in, h_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const char* names[6] = {"shared_nc", "shared_2way", "shared_3way", "global_all", "global_even", "global_half"};
  for (int v = 0; v < 6; ++v)
    for (int blocks : {1, max_blocks}) {
      char name[64];
      snprintf(name, sizeof name, "%s_%s", names[v], blocks == 1 ? "1blk" : "grid");
      SWEEP_CHECK(cudaMemset(out, 0, n * sizeof(float)));
      SWEEP_CHECK(cudaMemset(store, 0xff, n * sizeof(float)));  // NaN: "never stored"
      sweep::Stats s = sweep::measure(opt, [&] {
        switch (v) {
          case 0: add_store_shared<1><<<blocks, THREADS>>>(in, d, out); break;
          case 1: add_store_shared<2><<<blocks, THREADS>>>(in, d, out); break;
          case 2: add_store_shared<3><<<blocks, THREADS>>>(in, d, out); break;
          case 3: add_store_global<0><<<blocks, THREADS>>>(in, d, out, store); break;
          case 4: add_store_global<1><<<blocks, THREADS>>>(in, d, out, store); break;
          case 5: add_store_global<2><<<blocks, THREADS>>>(in, d, out, store); break;
        }
      });
      const size_t m = (size_t)blocks * PITCH;
      SWEEP_CHECK(cudaMemcpy(h_out.data(), out, m * sizeof(float), cudaMemcpyDeviceToHost));
      for (size_t g = 0; g < m; ++g)  // padding slots (t >= THREADS) must stay untouched
        if (g % PITCH < THREADS ? h_out[g] != want_sum[g] : h_out[g] != 0)
          sweep::check(false, std::string(name) + ": sum of thread " + std::to_string(g) + " is " +
                                  std::to_string(h_out[g]) + ", expected " + std::to_string(want_sum[g]));
      if (v >= 3) {  // the stored values: the last a[0] where the thread stores, untouched elsewhere
        SWEEP_CHECK(cudaMemcpy(h_store.data(), store, m * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t g = 0; g < m; ++g) {
          int t = (int)(g % PITCH);
          bool stores = t < THREADS && (v == 3 || (v == 4 ? t % 2 == 0 : t < HALF));
          bool ok = stores ? h_store[g] == want_last[g] : h_store[g] != h_store[g];
          if (!ok)
            sweep::check(false, std::string(name) + ": global store of thread " + std::to_string(g) +
                                    (stores ? " has a wrong value" : " was written but should not be"));
        }
      }
      sweep::report(name, "MFlops", (double)blocks * THREADS * ITERATIONS * ADDS / 1e6, s);
    }
  return 0;
}
