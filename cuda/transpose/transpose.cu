// transpose: bandwidth of transposing an N x N float matrix with 16x16 thread blocks, one element
// per thread (Conrad, UFRGS 2010, sections 4.3-4.4, Fig. 4.7 and 4.11; after Ruetsch & Micikevicius
// 2009). Variants:
//   naive:    out[x][y] = in[y][x] straight from global memory (the writes are not coalesced);
//   shared:   through a 16x16 shared tile: coalesced reads and writes, but the column reads of the
//             tile conflict in the banks (16-way on the study's 16 banks, 8-way on today's 32);
//   padded:   the tile padded by one column (16x17): no bank conflicts;
//   diagonal: padded, with diagonal block ordering against partition camping (the study's drops
//             at N multiple of 512 on a GTX 280 with 8 partitions of 256 bytes).
// Bandwidth = N*N*2*4 bytes / t (read + written, 1 GB = 1e9 bytes; the study divided by 1024^3).
// Metrics: transpose (GB/s), memcpy_d2d of N*N*4 bytes (GB/s), transpose_vs_memcpy (fraction).
// The host checks every element of the result (check.h).
//
// By hand (params.h in /tmp/p):
//   mkdir -p /tmp/p && printf '#define N 2048\n#define VARIANT "diagonal"\n' > /tmp/p/params.h
//   nvcc -arch=sm_90 -O3 -I/tmp/p -Icuda/common -o /tmp/p/transpose cuda/transpose/transpose.cu && SWEEP_FLUSH_L2=1 /tmp/p/transpose
#include "params.h"
#include "sweep.cuh"
#include "check.h"

constexpr bool same(const char* a, const char* b) { return *a == *b && (!*a || same(a + 1, b + 1)); }
constexpr bool NAIVE = same(VARIANT, "naive"), SHARED = same(VARIANT, "shared"),
               PADDED = same(VARIANT, "padded"), DIAGONAL = same(VARIANT, "diagonal");
static_assert(NAIVE || SHARED || PADDED || DIAGONAL, "VARIANT must be naive, shared, padded or diagonal");
static_assert(N >= 16 && N % 16 == 0 && (long long)N * N < (1ll << 31), "N must be a multiple of 16");
constexpr int T = 16;

__global__ void __launch_bounds__(T * T) transpose_naive(const float* __restrict__ in, float* __restrict__ out) {
  const int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  out[x * N + y] = in[y * N + x];
}

template <int PAD, bool DIAG>
__global__ void __launch_bounds__(T * T) transpose_tiled(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[T][T + PAD];
  int bx = blockIdx.x, by = blockIdx.y;
  if (DIAG) {  // square matrix: block (x, y) of the diagonal order is tile ((x + y) % n, x)
    by = blockIdx.x;
    bx = (blockIdx.x + blockIdx.y) % gridDim.x;
  }
  tile[threadIdx.y][threadIdx.x] = in[(by * T + threadIdx.y) * N + bx * T + threadIdx.x];
  __syncthreads();
  out[(bx * T + threadIdx.y) * N + by * T + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

int main() {
  sweep::Options opt = sweep::options_from_env();
  const size_t m = (size_t)N * N, bytes = m * sizeof(float);
  std::vector<float> h_in(m), h_out(m);
  for (size_t i = 0; i < m; ++i) h_in[i] = sweep::test_value(i);
  float *in, *out;
  SWEEP_CHECK(sweep::malloc(&in, bytes));
  SWEEP_CHECK(sweep::malloc(&out, bytes));
  SWEEP_CHECK(cudaMemcpy(in, h_in.data(), bytes, cudaMemcpyHostToDevice));
  SWEEP_CHECK(cudaMemset(out, 0xff, bytes));

  const dim3 block(T, T), grid(N / T, N / T);
  sweep::Stats s = sweep::measure(opt, [&] {
    if (NAIVE) transpose_naive<<<grid, block>>>(in, out);
    else if (SHARED) transpose_tiled<0, false><<<grid, block>>>(in, out);
    else if (PADDED) transpose_tiled<1, false><<<grid, block>>>(in, out);
    else transpose_tiled<1, true><<<grid, block>>>(in, out);
  });

  SWEEP_CHECK(cudaMemcpy(h_out.data(), out, bytes, cudaMemcpyDeviceToHost));
  check_transpose(h_in, h_out);

  const double gb = 2.0 * bytes / 1e9;
  sweep::report("transpose", "GB/s", gb, s);
  sweep::Stats ref = sweep::memcpy_d2d(opt, bytes);
  sweep::report("memcpy_d2d", "GB/s", gb, ref);
  sweep::report_value("transpose_vs_memcpy", "fraction", ref.mean / s.mean);
  return 0;
}
