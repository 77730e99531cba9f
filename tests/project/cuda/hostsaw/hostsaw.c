/* A host program that behaves like a thread-sweep bench, for the harness's tests.
 *
 * Its "MFlops" is a sawtooth in THREADS with period PERIOD: work / ceil(THREADS / PERIOD), so
 * the value is the same on every run. MODE picks a behaviour, so that the tests exercise real
 * faulty programs: ok, crash (SIGSEGV), hang, garbage (no metric), wrong (wrong result), fail
 * (exit 1), compile_error (does not build), noisy (timing core says it hit its cap), unstable
 * (its placements differ by 25 %, beyond the noise), varies (each run in the same point folder gives
 * 10 % more than the one before: the n-th run, counted in `runs.count` there, gives
 * value * (1 + 0.1 n), like a result that differs between processes), flaky (the second run in
 * the same point folder fails), slow (sleeps SLOW_MS first), jitter (each process gives a value
 * off by -1 %, -0.5 %, 0, +0.5 % or +1 %, picked by its pid: a program whose result differs
 * between processes at random, as a GPU's does),
 * twostate (at an even THREADS the first run in the point folder reports samples in two groups:
 * at THREADS = 2 mod 4 of 0.92 v and v, with a value of 0.95 v, as a GPU in two states does; at a
 * multiple of 4 of 0.96 v and 1.04 v with a value of v, groups that every process shows alike;
 * every later run gives v),
 * spawn (starts a grandchild, `sleep 4242`, and hangs), spawn2 (the same with `sleep 4343`),
 * latin1 (a line in Latin-1, not UTF-8, on stdout and stderr before its metrics),
 * mixed (two more timing-core metrics: `global_x`, whose placements differ by 25 % (unstable=1),
 * and `shared_x`, steady: one row, one metric unstable and one ok).
 * Build one point by hand: cc -I<dir with params.h> -o p hostsaw.c
 */
#include "params.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PERIOD
#define PERIOD 16
#endif
#ifndef SLOW_MS
#define SLOW_MS 0
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

#if defined(MODE_COMPILE_ERROR)
#error "this point does not build (MODE compile_error)"
#endif

int main(void) {
    const char *mode = STR(MODE);
    double v = 1000.0 * THREADS / (double)((THREADS + PERIOD - 1) / PERIOD);
    if (SLOW_MS > 0) usleep(SLOW_MS * 1000);
    printf("threads %d mode %s\n", THREADS, mode);
    fflush(stdout);
    if (!strcmp(mode, "crash")) { raise(SIGSEGV); }
    if (!strcmp(mode, "hang")) { for (;;) pause(); }
    if (!strcmp(mode, "spawn") || !strcmp(mode, "spawn2")) {
        const char *secs = !strcmp(mode, "spawn") ? "4242" : "4343";
        if (fork() == 0) { execlp("sleep", "sleep", secs, (char *)0); _exit(1); }
        for (;;) pause();
    }
    if (!strcmp(mode, "latin1")) {
        printf("temp\xe9rature \xe9lev\xe9e\n");
        fprintf(stderr, "temp\xe9rature \xe9lev\xe9e\n");
    }
    if (!strcmp(mode, "garbage")) { printf("MFlops: lots\n"); return 0; }
    if (!strcmp(mode, "fail")) { fprintf(stderr, "cudaMalloc failed: out of memory\n"); return 1; }
    if (!strcmp(mode, "wrong")) {
        printf("@sweep check=failed what=\"sum is 41, expected 42\"\n");
        return 3;
    }
    int two = 0;
    if (!strcmp(mode, "varies") || !strcmp(mode, "flaky") || !strcmp(mode, "twostate")) {
        int n = 0;
        FILE *f = fopen("runs.count", "r");
        if (f) { if (fscanf(f, "%d", &n) != 1) n = 0; fclose(f); }
        /* Written aside and renamed, so a run killed half-way never leaves a torn count. */
        f = fopen("runs.count.tmp", "w");
        if (!f) return 1;
        fprintf(f, "%d\n", n + 1);
        fclose(f);
        if (rename("runs.count.tmp", "runs.count") != 0) return 1;
        if (!strcmp(mode, "flaky") && n == 1) { fprintf(stderr, "second run died\n"); return 1; }
        if (!strcmp(mode, "varies")) v *= 1.0 + 0.1 * n;
        two = !strcmp(mode, "twostate") && THREADS % 2 == 0 && n == 0;
    }
    if (!strcmp(mode, "jitter")) v *= 1.0 + 0.005 * (double)((int)((getpid() * 2654435761u) >> 16) % 5 - 2);
    if (two) {
        int alike = THREADS % 4 == 0;
        printf("@sweep metric=saw unit=MFlops value=%.3f median=%.3f stddev=%.3f min=%.3f max=%.3f rel_ci=0.001 "
               "samples=10 noisy=0 throttled=0 spread=0.01 placements=8 unstable=0 sm_mhz=1980\n",
               alike ? v : 0.95 * v, alike ? v : 0.92 * v, 0.04 * v, alike ? 0.96 * v : 0.92 * v,
               alike ? 1.04 * v : v);
        return 0;
    }
    printf("MFlops: %.3f\n", v);
    int unstable = !strcmp(mode, "unstable");
    printf("@sweep metric=saw unit=MFlops value=%.3f median=%.3f stddev=0 min=%.3f max=%.3f rel_ci=0.001 samples=10 noisy=%d throttled=0 "
           "spread=%s placements=%d unstable=%d sm_mhz=1980\n",
           v, v, v, v, !strcmp(mode, "noisy"), unstable ? "0.25" : "0", unstable ? 8 : 1, unstable);
    if (!strcmp(mode, "mixed")) {
        printf("@sweep metric=global_x unit=MFlops value=%.3f median=%.3f stddev=0 min=%.3f max=%.3f rel_ci=0.001 "
               "samples=10 noisy=0 throttled=0 spread=0.25 placements=8 unstable=1 sm_mhz=1980\n", v, v, v, v);
        printf("@sweep metric=shared_x unit=MFlops value=%.3f median=%.3f stddev=0 min=%.3f max=%.3f rel_ci=0.001 "
               "samples=10 noisy=0 throttled=0 spread=0.002 placements=8 unstable=0 sm_mhz=1980\n", v, v, v, v);
    }
    return 0;
}
