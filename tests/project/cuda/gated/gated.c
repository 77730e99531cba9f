/* A host program that honours the start gate and the measure lock like the timing core does:
 * under the measure lock (flock on $SWEEP_MEASURE_LOCK) it "creates its context" (STARTUP_MS),
 * then waits until sweep writes to fd $SWEEP_GATE_FD, then "measures" (MEASURE_MS) under the lock
 * again. It prints the wall-clock times of those moments, so tests can check that start-up overlaps
 * the previous point while measurements never overlap, and that no context is created while
 * another program measures.
 * Build one point by hand: cc -I<dir with params.h> -o p gated.c */
#include "params.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    double start = now();
    int lock = -1;
    const char *path = getenv("SWEEP_MEASURE_LOCK");
    if (path) {
        lock = open(path, O_RDWR | O_CREAT, 0644);
        if (lock < 0) {
            fprintf(stderr, "cannot open the measure lock %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    if (lock >= 0) flock(lock, LOCK_EX);
    double ctx0 = now();
    usleep(STARTUP_MS * 1000);
    double ctx1 = now();
    if (lock >= 0) flock(lock, LOCK_UN);
    const char *fd = getenv("SWEEP_GATE_FD");
    if (fd) {
        char c;
        if (read(atoi(fd), &c, 1) != 1) return 2;
    }
    double go = now();
    if (lock >= 0) flock(lock, LOCK_EX);
    double m0 = now();
    usleep(MEASURE_MS * 1000);
    double end = now();
    if (lock >= 0) flock(lock, LOCK_UN);
    printf("times start=%.6f go=%.6f end=%.6f ctx0=%.6f ctx1=%.6f m0=%.6f\n", start, go, end, ctx0, ctx1, m0);
    const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    printf("connections %s\n", conn ? conn : "unset");
    printf("lock %s\n", path ? path : "unset");
    printf("@sweep metric=t unit=s value=%.6f median=0 stddev=0 min=0 max=0 rel_ci=0 samples=1 noisy=0 throttled=0\n", end - go);
    return 0;
}
