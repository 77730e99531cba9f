// halfwarp: where do half-warp (16) and quarter-warp (8) periods appear on a GPU with warps of 32
// and 32 banks? MFlops of a store-bound add-and-store loop against the threads per block, one
// metric per store layout (issue 11; Pogorilyy et al., Kyiv 2010, Fig. 2: period 16 on a GeForce
// 8600 GT, which issued shared-memory accesses by half-warps and had 16 banks).
//
// Each thread runs ITERATIONS trips of ADDS float additions `a[j] += d` (d is a kernel argument) and
// stores a[0] every trip with one store instruction (inline PTX `st.volatile`, so that ptxas keeps
// every store: it dropped 3 of 4 plain `st`s to one address in the unrolled loop, which hid the
// bank conflicts; tests/nvcc.rs counts them in the SASS; and a vector store stays one instruction):
//   shared_stride1/2/4/8: 32-bit shared store to word k*t (k = 1, 2, 4, 8): lanes l and l + 32/k
//       share a bank, so a warp needs k wavefronts, each of 32/k lanes (one half-warp for k = 2)
//   shared_adjacent2: 32-bit shared store to word warp*64 + (lane%2)*32 + lane/2 (pogorilyy's
//       2-way layout: adjacent lanes share a bank; any warp of 2 or more lanes needs 2 wavefronts)
//   shared_vec2 / shared_vec4: 64- and 128-bit shared stores (float2 / float4 at element t)
//   global_vec1/2/4: 32-, 64- and 128-bit global stores, each thread to its own element
// A full grid: BLOCKS_PER_SM x SM-count blocks; every block's elements start on a line of their
// own. All threads write their sums at the end; the host recomputes every value in float
// (additions only, so the rounding is identical) and checks them and the global stores (check.h).
// MFlops = blocks * THREADS * ITERATIONS * ADDS / time / 1e6.
//
// By hand (params.h in /tmp/h):
//   mkdir -p /tmp/h && printf '#define THREADS 48\n#define ITERATIONS 8192\n#define ADDS 1\n#define BLOCKS_PER_SM 8\n' > /tmp/h/params.h
//   nvcc -arch=sm_90 -O3 -I/tmp/h -Icuda/common -o /tmp/h/halfwarp cuda/halfwarp/halfwarp.cu && /tmp/h/halfwarp
#include "params.h"
#include "sweep.cuh"

#if !defined(THREADS) || !defined(ITERATIONS) || !defined(ADDS) || !defined(BLOCKS_PER_SM)
#error "params.h must define THREADS, ITERATIONS, ADDS and BLOCKS_PER_SM"
#endif
static_assert(THREADS >= 1 && THREADS <= 1024, "THREADS must be in 1..1024");
static_assert(ADDS >= 1, "ADDS must be at least 1");
#include "check.h"

// One store instruction of variant V: to shared word/element `i`, or to global element `i`.
template <int V>
__device__ __forceinline__ void store(float* sh, float* gl, int i, float x) {
  if constexpr (V <= 4) {
    unsigned a = (unsigned)__cvta_generic_to_shared(sh + i);
    asm volatile("st.volatile.shared.f32 [%0], %1;" ::"r"(a), "f"(x) : "memory");
  } else if constexpr (V == 5) {
    unsigned a = (unsigned)__cvta_generic_to_shared(sh + 2 * i);
    asm volatile("st.volatile.shared.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(x), "f"(x) : "memory");
  } else if constexpr (V == 6) {
    unsigned a = (unsigned)__cvta_generic_to_shared(sh + 4 * i);
    asm volatile("st.volatile.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(a), "f"(x), "f"(x), "f"(x), "f"(x) : "memory");
  } else if constexpr (V == 7) {
    asm volatile("st.volatile.global.f32 [%0], %1;" ::"l"(gl + i), "f"(x) : "memory");
  } else if constexpr (V == 8) {
    asm volatile("st.volatile.global.v2.f32 [%0], {%1, %2};" ::"l"(gl + 2 * i), "f"(x), "f"(x) : "memory");
  } else {
    asm volatile("st.volatile.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(gl + 4 * i), "f"(x), "f"(x), "f"(x), "f"(x)
                 : "memory");
  }
}

template <int V>
__global__ void __launch_bounds__(THREADS) add_store(const float* __restrict__ in, float d, float* __restrict__ out, float* gl) {
  __shared__ __align__(16) float sh[PITCH * 8];
  const int t = threadIdx.x, lane = t % 32, g = blockIdx.x * PITCH + t;
  int i;  // where this thread stores
  if constexpr (V <= 3) i = (1 << V) * t;
  else if constexpr (V == 4) i = (t / 32) * 64 + (lane % 2) * 32 + lane / 2;
  else if constexpr (V <= 6) i = t;
  else i = g;
  float a[ADDS];
#pragma unroll
  for (int j = 0; j < ADDS; ++j) a[j] = in[g] + j;
#pragma unroll 4
  for (int k = 0; k < ITERATIONS; ++k) {
#pragma unroll
    for (int j = 0; j < ADDS; ++j) a[j] += d;
    store<V>(sh, gl, i, a[0]);
  }
  float s = a[0];
#pragma unroll
  for (int j = 1; j < ADDS; ++j) s += a[j];
  out[g] = s;
}

int main() {
  sweep::Options opt = sweep::options_from_env();
  const int blocks = BLOCKS_PER_SM * sweep::sm_count();
  const size_t n = (size_t)blocks * PITCH;
  const float d = 0.75f;
  std::vector<float> h_in(n), h_out(n), h_store(4 * n);
  const Expected want = expected(d);  // the exact float results the threads must produce
  for (size_t g = 0; g < n; ++g) h_in[g] = input(g);
  float *in, *out, *gl;
  SWEEP_CHECK(sweep::malloc(&in, n * sizeof(float)));
  SWEEP_CHECK(sweep::malloc(&out, n * sizeof(float)));
  SWEEP_CHECK(sweep::malloc(&gl, 4 * n * sizeof(float)));
  SWEEP_CHECK(cudaMemcpy(in, h_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  for (int v = 0; v < VARIANTS; ++v) {
    SWEEP_CHECK(cudaMemset(out, 0, n * sizeof(float)));
    SWEEP_CHECK(cudaMemset(gl, 0xff, 4 * n * sizeof(float)));  // NaN: "never stored"
    sweep::Stats s = sweep::measure(opt, [&] {
      switch (v) {
        case 0: add_store<0><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 1: add_store<1><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 2: add_store<2><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 3: add_store<3><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 4: add_store<4><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 5: add_store<5><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 6: add_store<6><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 7: add_store<7><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 8: add_store<8><<<blocks, THREADS>>>(in, d, out, gl); break;
        case 9: add_store<9><<<blocks, THREADS>>>(in, d, out, gl); break;
      }
    });
    const std::string name = variant_name(v);
    SWEEP_CHECK(cudaMemcpy(h_out.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
    check_sums(name, h_out, n, want);
    if (global(v)) {
      SWEEP_CHECK(cudaMemcpy(h_store.data(), gl, width(v) * n * sizeof(float), cudaMemcpyDeviceToHost));
      check_stores(name, v, h_store, n, want);
    }
    sweep::report(name.c_str(), "MFlops", (double)blocks * THREADS * ITERATIONS * ADDS / 1e6, s);
  }
  return 0;
}
