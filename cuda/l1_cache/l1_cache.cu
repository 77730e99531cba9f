// l1_cache: global-memory loads with and without L1 caching. Every element of an array of 2^LOG2_ELEMS
// ints is read exactly once; each block of 256 threads sums 8 loads per thread into one partial sum. The
// pattern decides which element the k-th load of a thread reads:
//   coalesced  - consecutive threads, consecutive words: a warp reads one aligned 128-byte line;
//   misaligned - the same shifted by one word: a warp spans two 128-byte lines (five 32-byte sectors);
//   strided    - the block's 8 KB chunk seen as 64 rows of 32 words, a warp reads a column: 32 lines, 4
//                useful bytes in each, but the other warps of the block read the rest of those lines soon
//                after (reuse that L1 can catch);
//   scattered  - element e*0x9E3779B1 mod 2^LOG2_ELEMS: every lane in another line, no reuse.
// The L1 policy is a compiler flag (the sweep's `caching` axis): -Xptxas -dlcm=ca caches global loads in
// L1 (128-byte lines), -Xptxas -dlcm=cg caches them in L2 only (32-byte sectors).
// Measures GB/s of useful bytes (4 per element), beside a cudaMemcpy device-to-device reference (counted
// as bytes read + bytes written). The host checks every partial sum (check.h).
// Source: Kolganov (MSU), lecture 2 on CUDA, global memory (../shared/seeds/004, Russian): transactions
// of 128 bytes through L1 and 32 bytes with L1 off, "Если разреженный доступ – кеширование в L1
// отключаем"; L1 128-byte vs L2 32-byte transactions also in ../shared/seeds/003 (English), Figure 3.3.
// By hand: params.h with PATTERN (coalesced|misaligned|strided|scattered), CACHING (a string, printed
// only), LOG2_ELEMS, then
//   nvcc -arch=sm_90 -O3 -Xptxas -dlcm=cg -I<dir with params.h> -I cuda/common -o l1_cache cuda/l1_cache/l1_cache.cu && ./l1_cache
#include "sweep.cuh"
#include "params.h"
#include "check.h"
#include <cstdio>
#include <vector>

static_assert(N % CHUNK == 0, "whole chunks");

// No __restrict__/const on `in`: plain ld.global, whose caching -dlcm decides (not the read-only path).
__global__ void gather_sum(int* in, int* partial) {
    __shared__ int warp_sums[BLOCK / 32];
    size_t e0 = size_t(blockIdx.x) * CHUNK + threadIdx.x;
    int v[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) v[k] = in[position(e0 + k * BLOCK)];
    int sum = 0;
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) sum += v[k];
    for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < BLOCK / 32; ++w) sum += warp_sums[w];
        partial[blockIdx.x] = sum;
    }
}

int main() {
    sweep::Options opt = sweep::options_from_env();  // first: creates the context, then waits at the start gate
    const char* names[] = {"coalesced", "misaligned", "strided", "scattered"};
    const size_t bytes = N * sizeof(int), blocks = N / CHUNK;
    printf("l1_cache: pattern=%s caching=\"%s\" elements=%zu (%.0f MB)\n", names[PATTERN], CACHING, N, bytes / 1e6);

    std::vector<int> h(N), hp(blocks);
    for (size_t i = 0; i < N; ++i) h[i] = int((i * 2654435761u) >> 9 & 255);
    int *din, *dpartial;
    SWEEP_CHECK(sweep::malloc(&din, bytes));
    SWEEP_CHECK(sweep::malloc(&dpartial, blocks * sizeof(int)));
    SWEEP_CHECK(cudaMemcpy(din, h.data(), bytes, cudaMemcpyHostToDevice));
    SWEEP_CHECK(cudaMemset(dpartial, 0, blocks * sizeof(int)));

    sweep::Stats s = sweep::measure(opt, [&] { gather_sum<<<unsigned(blocks), BLOCK>>>(din, dpartial); });
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());

    SWEEP_CHECK(cudaMemcpy(hp.data(), dpartial, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    check_l1_cache(h, hp);

    sweep::report("l1_cache", "GB/s", bytes / 1e9, s);
    sweep::Stats ref = sweep::memcpy_d2d(opt, bytes);
    sweep::report("memcpy_d2d", "GB/s", 2.0 * bytes / 1e9, ref);
    SWEEP_CHECK(sweep::free(din));
    SWEEP_CHECK(sweep::free(dpartial));
    return 0;
}
