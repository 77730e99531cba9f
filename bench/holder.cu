// bench/holder.cu: a process that keeps the CUDA driver open beside a sweep and does nothing on the GPU,
// for bench/band.sh's hold*, hini* and hctx* labels (issue 10). Without prestart, a program spends 97 ms of its
// start in cudaGetDeviceCount when no other process has the GPU open, 26 ms when one has (bench/band.txt):
// does a process that merely holds the driver (hold*: cudaGetDeviceCount; hini*: only the driver API's cuInit,
// what the sweep process could call itself through dlopen) or an idle context (hctx*) bring the 8 % state of
// shared_nc_grid back, or only give those 70 ms back? Usage: holder SECONDS [ctx|init]
#include <dlfcn.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <unistd.h>
int main(int argc, char** argv) {
  const char* mode = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "init") == 0) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW);
    auto init = lib ? (int (*)(unsigned))dlsym(lib, "cuInit") : nullptr;
    if (!init || init(0) != 0) return 1;
  } else {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) return 1;
    void* p = nullptr;
    if (strcmp(mode, "ctx") == 0 && cudaMalloc(&p, 1 << 20) != cudaSuccess) return 1;
  }
  printf("ready\n");
  fflush(stdout);
  sleep(argc > 1 ? atoi(argv[1]) : 60);
  return 0;
}
