/* A host program that behaves like a timing-core bench for `[profile]` tests: it honours the
 * measure lock and the start gate, "measures" two metrics (150 ms in all) and prints their lines; with
 * SWEEP_PROFILE=1 (the harness runs it so under ncu) it times nothing and prints, per metric, the
 * NVTX range the timing core would have opened: `@sweep profile metric=NAME range=sweep:<n>`; with
 * SWEEP_POWER_MS=n (the power pass) it "loops" each metric for n ms and prints the window,
 * `@sweep power metric=NAME t0=.. t1=.. calls=..`.
 * It prints the wall-clock times of its measuring, so tests can check that no profile run overlaps
 * a measurement. Build one point by hand: cc -I<dir with params.h> -o p profiled.c */
#include "params.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    const char *prof = getenv("SWEEP_PROFILE");
    int profile = prof && atoi(prof) != 0;
    const char *pw = getenv("SWEEP_POWER_MS");
    double power_ms = pw ? atof(pw) : 0;
    const char *path = getenv("SWEEP_MEASURE_LOCK");
    int lock = path ? open(path, O_RDWR | O_CREAT, 0644) : -1;
    const char *fd = getenv("SWEEP_GATE_FD");
    if (fd) {
        char c;
        if (read(atoi(fd), &c, 1) != 1) return 2;
    }
    if (lock >= 0) flock(lock, LOCK_EX);
    double m0 = now();
    if (power_ms > 0) {
        const char *names[2] = {"fast", "slow"};
        for (int i = 0; i < 2; ++i) {
            double t0 = now();
            usleep((useconds_t)(power_ms * 1000));
            printf("@sweep power metric=%s t0=%.6f t1=%.6f calls=%d\n", names[i], t0, now(), 100 * (i + 1));
        }
    } else if (profile) {
        printf("@sweep profile metric=fast range=sweep:0\n");
        printf("@sweep profile metric=slow range=sweep:1\n");
    } else {
        usleep(150 * 1000);
        printf("@sweep metric=fast unit=s value=%d median=0 stddev=0 min=0 max=0 rel_ci=0.001 samples=10 noisy=0 throttled=0\n", K);
        printf("@sweep metric=slow unit=s value=%d median=0 stddev=0 min=0 max=0 rel_ci=0.001 samples=10 noisy=0 throttled=0\n", 2 * K);
    }
    double m1 = now();
    if (lock >= 0) flock(lock, LOCK_UN);
    printf("%s %.6f %.6f\n", power_ms > 0 ? "powered" : profile ? "profiled" : "measured", m0, m1);
    return 0;
}
