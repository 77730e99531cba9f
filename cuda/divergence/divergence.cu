// divergence: cost of branch divergence. Every thread runs one of two equally long FMA loops (ACC
// independent chains of ITERS fused multiply-adds; the two loops mirror each other), chosen by
//   thread - threadIdx.x > K             (the course's divergent example: only the warp holding thread K
//                                         splits, and none when K % 32 == 31)
//   warp   - threadIdx.x / warpSize > K  (the course's fix: the branch granularity is a whole warp)
//   lane   - threadIdx.x % warpSize > K  (every warp splits for K < 31: the worst case)
// A split warp runs both loops one after the other. Measures GFlops of useful work (2 flops per FMA of
// the branch each thread takes); also reports divergent_warps, the fraction of warps whose threads
// disagree (counted on the host from the same condition, a prediction rather than a measurement). The host
// recomputes a sample of the threads' results (check.h).
// Source: course notes on massively parallel processors (G80; ../shared/seeds/001, Spanish), "Control de
// flujo": If (threadIdx.x > 2) diverges, If (threadIdx.x / WARP_SIZE > 2) does not; SIMT serialization of
// divergent paths, ../shared/seeds/003 (English).
// By hand: params.h with VARIANT (thread|warp|lane), K, BLOCK, ITERS, then
//   nvcc -arch=sm_90 -O3 -I<dir with params.h> -I cuda/common -o divergence cuda/divergence/divergence.cu && ./divergence
#include "sweep.cuh"
#include "params.h"
#include "check.h"
#include <cmath>
#include <cstdio>
#include <vector>

constexpr int THREADS = 1 << 22;    // ~15 waves of resident blocks on an H100: small tail effect

// k and iters are run-time arguments: every K runs the same machine code (no branch folded away), and
// the loops stay loops, so the two branches stay apart.
__global__ void diverge(const float* x, float* out, unsigned k, int iters) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = run(x[i], take_a(threadIdx.x, k), iters);
}

int main() {
    sweep::Options opt = sweep::options_from_env();  // first: creates the context, then waits at the start gate
    static_assert(THREADS % BLOCK == 0, "BLOCK must divide THREADS");
    const char* names[] = {"thread", "warp", "lane"};
    const int iters = ITERS;
    std::vector<float> hx(THREADS), hout(THREADS);
    for (int i = 0; i < THREADS; ++i) hx[i] = float((i * 37) % 1024) / 1024.0f - 0.5f;
    float *dx, *dout;
    SWEEP_CHECK(sweep::malloc(&dx, THREADS * sizeof(float)));
    SWEEP_CHECK(sweep::malloc(&dout, THREADS * sizeof(float)));
    SWEEP_CHECK(cudaMemcpy(dx, hx.data(), THREADS * sizeof(float), cudaMemcpyHostToDevice));

    int split = 0;   // warps of a block whose threads take different branches
    for (int w = 0; w < BLOCK / 32; ++w) {
        int taken = 0;
        for (int t = 0; t < 32; ++t) taken += take_a(w * 32 + t, K);
        split += taken != 0 && taken != 32;
    }
    printf("divergence: variant=%s K=%d block=%d iters=%d, %d of %d warps per block diverge\n", names[VARIANT], K,
           BLOCK, iters, split, BLOCK / 32);

    sweep::Stats s = sweep::measure(opt, [&] { diverge<<<THREADS / BLOCK, BLOCK>>>(dx, dout, K, iters); });
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());

    SWEEP_CHECK(cudaMemcpy(hout.data(), dout, THREADS * sizeof(float), cudaMemcpyDeviceToHost));
    check_divergence(hx, hout, iters);

    sweep::report("divergence", "GFlops", 2.0 * ACC * double(iters) * THREADS / 1e9, s);
    sweep::report_value("divergent_warps", "fraction", double(split) / (BLOCK / 32));
    SWEEP_CHECK(sweep::free(dx));
    SWEEP_CHECK(sweep::free(dout));
    return 0;
}
