/* A host program that honours the start gate like the timing core does: it "starts up"
 * (STARTUP_MS), then waits until sweep writes to fd $SWEEP_GATE_FD, then "measures" (MEASURE_MS).
 * It prints the wall-clock times of the three moments, so tests can check that start-up overlaps
 * the previous point while measurements never overlap.
 * Build one point by hand: cc -I<dir with params.h> -o p gated.c */
#include "params.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    double start = now();
    usleep(STARTUP_MS * 1000);
    const char *fd = getenv("SWEEP_GATE_FD");
    if (fd) {
        char c;
        if (read(atoi(fd), &c, 1) != 1) return 2;
    }
    double go = now();
    usleep(MEASURE_MS * 1000);
    double end = now();
    printf("times start=%.6f go=%.6f end=%.6f\n", start, go, end);
    const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    printf("connections %s\n", conn ? conn : "unset");
    printf("@sweep metric=t unit=s value=%.6f median=0 stddev=0 min=0 max=0 rel_ci=0 samples=1 noisy=0 throttled=0\n", end - go);
    return 0;
}
