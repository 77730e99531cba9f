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
//       the first ceil(THREADS/2) threads of the block. Each thread stores to its own word; by
//       default every block's words start on a 128-byte line of their own (no line shared between
//       blocks); `#define LAYOUT_DENSE 1` packs them back to back as in the study, `LAYOUT_ALIGN256`
//       starts every block on a 256-byte boundary (check.h: PITCH).
// All threads compute all additions and write their sums at the end; the host recomputes every
// value in float (additions only, so the rounding is identical) and checks them (check.h).
// Each variant runs as one block (`_1blk`) and as BLOCKS_PER_SM x SM-count blocks (`_grid`);
// `#define KERNELS_GLOBAL_GRID 1` measures only global_{all,even,half}_grid.
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
#include "check.h"

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

int main() {
  sweep::Options opt = sweep::options_from_env();
  const int max_blocks = BLOCKS_PER_SM * sweep::sm_count();
  const size_t n = (size_t)max_blocks * PITCH;
  const float d = 0.75f;
  std::vector<float> h_in(n), h_out(n), h_store(n);
  const Expected want = expected(d);  // the exact float results the threads must produce
  for (size_t g = 0; g < n; ++g) h_in[g] = input(g);
  float *in, *out, *store;
  SWEEP_CHECK(sweep::malloc(&in, n * sizeof(float)));
  SWEEP_CHECK(sweep::malloc(&out, n * sizeof(float)));
  SWEEP_CHECK(sweep::malloc(&store, n * sizeof(float)));
  SWEEP_CHECK(cudaMemcpy(in, h_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const char* names[6] = {"shared_nc", "shared_2way", "shared_3way", "global_all", "global_even", "global_half"};
  for (int v = 0; v < 6; ++v)
    for (int blocks : {1, max_blocks}) {
      if (!measured(v, blocks != 1)) continue;
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
      check_sums(name, h_out, m, want);
      if (v >= 3) {  // the stored values: the last a[0] where the thread stores, untouched elsewhere
        SWEEP_CHECK(cudaMemcpy(h_store.data(), store, m * sizeof(float), cudaMemcpyDeviceToHost));
        check_stores(name, v, h_store, m, want);
      }
      sweep::report(name, "MFlops", (double)blocks * THREADS * ITERATIONS * ADDS / 1e6, s);
    }
  return 0;
}
