// bank_stride: shared-memory bandwidth when lane l of every warp reads the 32-bit word l*STRIDE (plus an
// offset common to the warp, which moves every lane to the next bank together). Shared memory has 32
// banks of 4-byte words; the 32 lanes then hit gcd(STRIDE, 32) distinct words in one bank, and the
// request is split that many ways (stride 1 or any odd stride: no conflict; 2: 2-way; ...; 32, 64: 32-way).
// Measures GB/s of shared-memory data delivered to the threads (4 bytes per load); also reports
// expected_ways = gcd(STRIDE, 32), the prediction from the bank rule (computed, not measured). The host
// checks every thread's sum (check.h).
// Source: dissertation chapter introducing CUDA (../shared/seeds/003, English): "threadIdx*stride cause
// bank conflicts if stride has common divisors with the number of banks"; course notes on massively
// parallel processors (../shared/seeds/001, Spanish): "Si el número tiene factor común con el número de
// bancos va a haber conflicto" (16 banks per half-warp on the G80).
// By hand: params.h with STRIDE (1..64), BLOCK, OUTER, then
//   nvcc -arch=sm_90 -O3 -I<dir with params.h> -I cuda/common -o bank_stride cuda/bank_stride/bank_stride.cu && ./bank_stride
#include "sweep.cuh"
#include "params.h"
#include "check.h"
#include <cstdio>
#include <numeric>
#include <vector>

static_assert(STRIDE >= 1 && STRIDE <= 64, "STRIDE in 1..64");

// stride is a run-time argument so that the compiler cannot prove alignment and fuse loads into
// 64- or 128-bit ones, which follow other bank rules.
__global__ void bank_stride(int* out, unsigned stride, int outer) {
    __shared__ int s[WORDS + INNER];
    for (int i = threadIdx.x; i < WORDS + INNER; i += blockDim.x) s[i] = word_value(i);
    __syncthreads();
    unsigned base = (threadIdx.x % 32) * stride;
    int sum = 0;
    for (int t = 0; t < outer; ++t) {
#pragma unroll
        for (int u = 0; u < INNER; ++u) sum += s[base + u];
        base = (base + 32) & (WORDS - 1);   // +32 words: every lane stays in its bank
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

int main() {
    sweep::Options opt = sweep::options_from_env();  // first: creates the context, then waits at the start gate
    int dev, sms, per_sm;
    SWEEP_CHECK(cudaGetDevice(&dev));
    SWEEP_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    SWEEP_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bank_stride, BLOCK, 0));
    const int blocks = 16 * per_sm * sms;   // 16 full waves
    const size_t threads = size_t(blocks) * BLOCK;
    const int ways = std::gcd(STRIDE, 32);
    printf("bank_stride: stride=%d (expected %d-way conflicts), %d blocks of %d, %d loads per thread\n", STRIDE, ways,
           blocks, BLOCK, OUTER * INNER);

    int* dout;
    SWEEP_CHECK(sweep::malloc(&dout, threads * sizeof(int)));
    sweep::Stats s = sweep::measure(opt, [&] { bank_stride<<<blocks, BLOCK>>>(dout, STRIDE, OUTER); });
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());

    std::vector<int> h(threads);
    SWEEP_CHECK(cudaMemcpy(h.data(), dout, threads * sizeof(int), cudaMemcpyDeviceToHost));
    check_bank_stride(h);

    sweep::report("bank_stride", "GB/s", double(threads) * OUTER * INNER * sizeof(int) / 1e9, s);
    sweep::report_value("expected_ways", "ways", ways);
    SWEEP_CHECK(sweep::free(dout));
    return 0;
}
