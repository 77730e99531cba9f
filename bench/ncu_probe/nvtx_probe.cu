// Probe (issue 16): how ncu filters and reports kernels inside NVTX push/pop ranges.
#include <cstdio>
#include <nvtx3/nvToolsExt.h>
__global__ void kA(float* p) { p[threadIdx.x] += 1; }
__global__ void kB(float* p) { p[threadIdx.x] *= 2; }
__global__ void kC(float* p) { p[threadIdx.x] -= 1; }
int main() {
  float* p;
  cudaMalloc(&p, 4096);
  kC<<<1, 32>>>(p);              // outside any range
  nvtxRangePushA("sweep:0");
  kA<<<1, 64>>>(p);
  nvtxRangePop();
  kC<<<1, 32>>>(p);
  nvtxRangePushA("sweep:1");
  kA<<<1, 128>>>(p);
  kB<<<1, 128>>>(p);
  nvtxRangePop();
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
