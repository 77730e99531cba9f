// bench/filler.cu: keeps the GPU busy whenever no program measures, for bench/band.sh's fill* labels (issue 36).
// The 8 % state of shared_nc_grid comes with short idle gaps between two measurements (38-117 ms: with
// prestart or a process holding the driver; bench/band.txt); 250 ms of idle keeps it away, and that rest is
// a third of the thread sweep's time. Does a GPU that never idles stay out of it? The filler takes the run's
// measure lock (the flock every program holds while it creates its context and during each measure())
// whenever it is free, runs a short spinning kernel on every SM, and lets go: so it fills every gap between
// measurements and never runs during one. Usage: filler RUN_PARENT_DIR SECONDS [BLOCKS] [SPIN_US]
#include <cuda_runtime.h>
#include <sys/file.h>
#include <fcntl.h>
#include <glob.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <chrono>

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

static std::string find_lock(const std::string& dir) {
  for (const char* pat : {"/*/*/measure-*.lock", "/*/measure-*.lock", "/measure-*.lock"}) {
    glob_t g;
    if (glob((dir + pat).c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0) {
      std::string p = g.gl_pathv[0];
      globfree(&g);
      return p;
    }
    globfree(&g);
  }
  return "";
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::string dir = argv[1];
  double seconds = atof(argv[2]);
  int blocks = argc > 3 ? atoi(argv[3]) : 132;
  int spin_us = argc > 4 ? atoi(argv[4]) : 1000;
  if (cudaFree(0) != cudaSuccess) return 1;
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  long long cycles = (long long)khz * spin_us / 1000;
  printf("ready\n");
  fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::string lock;
  while (lock.empty() && elapsed() < seconds) {
    lock = find_lock(dir);
    if (lock.empty()) usleep(2000);
  }
  int fd = lock.empty() ? -1 : open(lock.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return 1;
  long kernels = 0;
  while (elapsed() < seconds) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      spin<<<blocks, 32>>>(cycles);
      cudaDeviceSynchronize();
      flock(fd, LOCK_UN);
      kernels++;
      // let a waiting program take the lock first
      usleep(50);
    } else {
      usleep(200);
    }
  }
  fprintf(stderr, "filler: %ld kernels of %d us on %d blocks, lock %s\n", kernels, spin_us, blocks,
          lock.c_str());
  return 0;
}
