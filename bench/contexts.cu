// bench/contexts.cu: how long a process takes to get a CUDA context, phase by phase.
// Prints "init_ms=.. device_ms=.. ctx_ms=.. total_ms=.." (runtime API, as the benches do);
// bench/contexts.sh times it alone and with other processes.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <unistd.h>
static double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
int main(int argc, char** argv) {  // argv[1] == "fastexit": _exit(0), skipping the runtime's teardown
  auto t0 = std::chrono::steady_clock::now();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 1;  // cuInit
  double a = ms_since(t0);
  if (cudaSetDevice(0) != cudaSuccess) return 1;
  double b = ms_since(t0);
  if (cudaFree(nullptr) != cudaSuccess) return 1;  // the primary context
  double c = ms_since(t0);
  printf("init_ms=%.1f device_ms=%.1f ctx_ms=%.1f total_ms=%.1f\n", a, b - a, c - b, c);
  if (argc > 1 && !strcmp(argv[1], "fastexit")) {
    fflush(stdout);
    _exit(0);
  }
  return 0;
}
