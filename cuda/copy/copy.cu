// copy: global-memory bandwidth of copying an N x N float matrix with 16x16 thread blocks,
// coalesced, misaligned by OFFSET elements, or with a STRIDE between the elements that consecutive
// threads touch (Conrad, UFRGS 2010, section 4.2, Fig. 4.4: misalignment by one element halves the
// bandwidth, large strides cost up to an order of magnitude). Compared with cudaMemcpy device to
// device of the same N*N*4 bytes.
//
// Logical element i = row * N + col of a 16x16 block's tile (16 rows x 16*ELEMS columns; a thread
// copies ELEMS elements 16 columns apart, all loads issued before the stores so enough bytes are in
// flight to saturate DRAM; ELEMS = 1 is the study's one element per thread). Element accessed:
//   coalesced: i            offset: i + OFFSET (read and write misaligned by OFFSET floats)
//   stride:    (i % K) * STRIDE + i / K with K = ceil(N*N / STRIDE): consecutive threads are STRIDE
//              floats apart, yet every element is copied exactly once (a K x STRIDE transpose of
//              the index space; indices >= N*N are skipped).
// Bandwidth = N*N*2*4 bytes / t (read + written, 1 GB = 1e9 bytes; the study divided by 1024^3).
// Run the spec with flush_l2 so that every sample starts from DRAM (the matrices fit in an H100 L2).
// Metrics: copy (GB/s), memcpy_d2d (GB/s), copy_vs_memcpy (fraction). The host checks the copy
// (check.h).
//
// By hand (params.h in /tmp/p):
//   mkdir -p /tmp/p && printf '#define N 2048\n#define VARIANT "stride"\n#define OFFSET 0\n#define STRIDE 4\n#define ELEMS 4\n' > /tmp/p/params.h
//   nvcc -arch=sm_90 -O3 -I/tmp/p -Icuda/common -o /tmp/p/copy cuda/copy/copy.cu && SWEEP_FLUSH_L2=1 /tmp/p/copy
#include "params.h"
#include "sweep.cuh"
#include "check.h"

constexpr bool same(const char* a, const char* b) { return *a == *b && (!*a || same(a + 1, b + 1)); }
constexpr bool COALESCED = same(VARIANT, "coalesced"), OFFSET_V = same(VARIANT, "offset"), STRIDE_V = same(VARIANT, "stride");
static_assert(COALESCED || OFFSET_V || STRIDE_V, "VARIANT must be \"coalesced\", \"offset\" or \"stride\"");
static_assert(N >= 16 && OFFSET >= 0 && STRIDE >= 1 && ELEMS >= 1, "bad parameters");
static_assert((unsigned long long)N * N + OFFSET + STRIDE < (1ull << 31), "N too large for 32-bit indices");

constexpr unsigned M = (unsigned)N * N;                       // elements copied
constexpr unsigned K = (M + STRIDE - 1) / STRIDE;             // stride view: K rows of STRIDE
constexpr unsigned SPAN = STRIDE_V ? K * STRIDE : M;          // logical indices to cover
constexpr unsigned SHIFT = OFFSET_V ? OFFSET : 0;
constexpr unsigned ALLOC = M + SHIFT;                         // elements per buffer

__device__ __host__ inline unsigned element(unsigned i) {
  if (STRIDE_V) return (i % K) * STRIDE + i / K;
  return i + SHIFT;
}

__global__ void __launch_bounds__(256) copy(const float* __restrict__ in, float* __restrict__ out) {
  const unsigned row = blockIdx.y * 16 + threadIdx.y, col0 = blockIdx.x * 16 * ELEMS + threadIdx.x;
  unsigned e[ELEMS];
  float v[ELEMS];
#pragma unroll
  for (int k = 0; k < ELEMS; ++k) {
    unsigned col = col0 + 16 * k, i = row * N + col;
    e[k] = col < N && i < SPAN ? element(i) : ~0u;
    if (STRIDE_V && e[k] >= M) e[k] = ~0u;  // the few padding indices of the stride view
  }
#pragma unroll
  for (int k = 0; k < ELEMS; ++k)
    if (e[k] != ~0u) v[k] = in[e[k]];
#pragma unroll
  for (int k = 0; k < ELEMS; ++k)
    if (e[k] != ~0u) out[e[k]] = v[k];
}

int main() {
  sweep::Options opt = sweep::options_from_env();
  std::vector<float> h_in(ALLOC), h_out(ALLOC);
  for (unsigned e = 0; e < ALLOC; ++e) h_in[e] = sweep::test_value(e);
  float *in, *out;
  SWEEP_CHECK(sweep::malloc(&in, ALLOC * sizeof(float)));
  SWEEP_CHECK(sweep::malloc(&out, ALLOC * sizeof(float)));
  SWEEP_CHECK(cudaMemcpy(in, h_in.data(), ALLOC * sizeof(float), cudaMemcpyHostToDevice));
  SWEEP_CHECK(cudaMemset(out, 0xff, ALLOC * sizeof(float)));  // NaN: "not written"

  const unsigned rows = (SPAN + N - 1) / N;
  const dim3 block(16, 16), grid((N + 16 * ELEMS - 1) / (16 * ELEMS), (rows + 15) / 16);
  sweep::Stats s = sweep::measure(opt, [&] { copy<<<grid, block>>>(in, out); });

  SWEEP_CHECK(cudaMemcpy(h_out.data(), out, ALLOC * sizeof(float), cudaMemcpyDeviceToHost));
  check_copy(h_in, h_out, SHIFT);

  const double gb = 2.0 * M * sizeof(float) / 1e9;
  sweep::report("copy", "GB/s", gb, s);
  sweep::Stats ref = sweep::memcpy_d2d(opt, (size_t)M * sizeof(float));
  sweep::report("memcpy_d2d", "GB/s", gb, ref);
  sweep::report_value("copy_vs_memcpy", "fraction", ref.mean / s.mean);
  return 0;
}
