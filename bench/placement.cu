// placement.cu - does where a buffer lies move a store-bound kernel? (issue 10, bench/placement.sh)
// The kernel is pogorilyy's global_all (every thread stores its running sum to its own word, ITER
// times; each block's words start on a 128-byte line of their own), THREADS given at run time,
// 8 x SM-count blocks. It is timed with its buffer at many offsets inside one large cudaMalloc pool:
//   page: k x 2 MiB (other physical pages, same place inside a page)
//   sub:  k x 128 KiB (inside one 2 MiB page)
//   line: k x 4 KiB
//   fresh: a new cudaMalloc each time, behind a growing pad (what a new process gets)
// Prints "T set k mflops" lines. Argument: MiB to allocate (and hold) before the pool.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
constexpr int ITER = 8192, ADDS = 4;
__global__ void add_store(int pitch, float d, float* store) {
  const int t = threadIdx.x, g = blockIdx.x * pitch + t;
  volatile float* slot = store + g;
  float a[ADDS];
  for (int j = 0; j < ADDS; ++j) a[j] = g + j;
#pragma unroll 4
  for (int i = 0; i < ITER; ++i) {
    for (int j = 0; j < ADDS; ++j) a[j] += d;
    *slot = a[0];
  }
  float s = a[0];
  for (int j = 1; j < ADDS; ++j) s += a[j];
  if (s == 1.2345f) store[0] = s;
}
static double time_ms(int threads, int blocks, float* p) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  int pitch = (threads + 31) / 32 * 32;
  for (int i = 0; i < 2; ++i) add_store<<<blocks, threads>>>(pitch, 0.75f, p);
  std::vector<float> v;
  for (int i = 0; i < 11; ++i) {
    CK(cudaEventRecord(a));
    add_store<<<blocks, threads>>>(pitch, 0.75f, p);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); v.push_back(ms);
  }
  std::sort(v.begin(), v.end());
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  return v[v.size() / 2];
}
int main(int argc, char** argv) {
  size_t pad_mib = argc > 1 ? atol(argv[1]) : 0;
  void* pad = nullptr;
  if (pad_mib) CK(cudaMalloc(&pad, pad_mib << 20));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = 8 * sms;
  char* pool; const size_t pool_bytes = 512ull << 20;
  CK(cudaMalloc(&pool, pool_bytes));
  CK(cudaMemset(pool, 0, pool_bytes));
  for (int t : {33, 48, 65, 80, 128, 200, 300, 363}) {
    auto rate = [&](double ms) { return (double)blocks * t * ITER * ADDS / (ms * 1e-3) / 1e6; };
    for (int k = 0; k < 16; ++k) printf("%d page %d %.1f\n", t, k, rate(time_ms(t, blocks, (float*)(pool + (size_t)k * (2 << 20)))));
    for (int k = 0; k < 16; ++k) printf("%d sub %d %.1f\n", t, k, rate(time_ms(t, blocks, (float*)(pool + (size_t)k * (128 << 10)))));
    for (int k = 0; k < 16; ++k) printf("%d line %d %.1f\n", t, k, rate(time_ms(t, blocks, (float*)(pool + (size_t)k * (4 << 10)))));
    size_t bytes = (size_t)blocks * ((t + 31) / 32 * 32) * 4;
    std::vector<void*> held;
    for (int k = 0; k < 8; ++k) {
      void* gap; CK(cudaMalloc(&gap, (size_t)(k + 1) * (3 << 20) + k * 4096)); held.push_back(gap);
      float* f; CK(cudaMalloc(&f, bytes)); CK(cudaMemset(f, 0, bytes)); held.push_back(f);
      printf("%d fresh %d %.1f\n", t, k, rate(time_ms(t, blocks, f)));
    }
    for (void* h : held) CK(cudaFree(h));
  }
  return 0;
}
