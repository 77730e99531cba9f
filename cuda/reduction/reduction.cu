// reduction: the first pass of a parallel sum reduction in shared memory, each block of BLOCK threads
// summing BLOCK ints into one partial sum, three ways of halving the active threads:
//   interleaved   - s = 1, 2, 4, ...; the threads with tid % (2*s) == 0 add sdata[tid + s] (divergent
//                   warps: the active threads are spread over every warp);
//   strided_index - the same pairs, done by threads 0 .. BLOCK/(2s)-1 at index 2*s*tid (no divergence,
//                   but strided shared-memory accesses: bank conflicts);
//   sequential    - s = BLOCK/2, BLOCK/4, ...; threads tid < s add sdata[tid + s] (contiguous active
//                   threads, whole warps retire, no conflicts).
// Measures GB/s of input read (and Gelem/s) over 2^LOG2_ELEMS ints, far more than the L2, beside a
// cudaMemcpy device-to-device reference (counted as bytes read + bytes written). The host checks every
// partial sum (check.h).
// Source: course notes on massively parallel processors (G80; ../shared/seeds/001, Spanish), "Reducción
// paralela": log(n) steps, fewer than 1/4 of the threads active on average, divergence in every step
// until whole warps drop out.
// By hand: params.h with VARIANT (interleaved|strided_index|sequential), BLOCK (power of two, 64..1024),
// LOG2_ELEMS, then
//   nvcc -arch=sm_90 -O3 -I<dir with params.h> -I cuda/common -o reduction cuda/reduction/reduction.cu && ./reduction
#include "sweep.cuh"
#include "params.h"
#include "check.h"
#include <cstdio>
#include <vector>

enum Variant { interleaved, strided_index, sequential };
static_assert(BLOCK >= 64 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0, "BLOCK: a power of two in 64..1024");
static_assert((1 << LOG2_ELEMS) % BLOCK == 0, "the input must fill whole blocks");

__global__ void reduce(const int* in, int* partial) {
    __shared__ int sdata[BLOCK];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * BLOCK + tid];
    __syncthreads();
    if (VARIANT == interleaved) {
        for (unsigned s = 1; s < BLOCK; s *= 2) {
            if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }
    } else if (VARIANT == strided_index) {
        for (unsigned s = 1; s < BLOCK; s *= 2) {
            unsigned i = 2 * s * tid;
            if (i < BLOCK) sdata[i] += sdata[i + s];
            __syncthreads();
        }
    } else {
        for (unsigned s = BLOCK / 2; s > 0; s /= 2) {
            if (tid < s) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

int main() {
    sweep::Options opt = sweep::options_from_env();  // first: creates the context, then waits at the start gate
    const char* names[] = {"interleaved", "strided_index", "sequential"};
    const size_t n = size_t(1) << LOG2_ELEMS, bytes = n * sizeof(int);
    const unsigned blocks = unsigned(n / BLOCK);
    printf("reduction: variant=%s block=%d elements=%zu (%.0f MB)\n", names[VARIANT], BLOCK, n, bytes / 1e6);

    std::vector<int> h(n), hp(blocks);
    for (size_t i = 0; i < n; ++i) h[i] = int((i * 2654435761u) >> 7 & 255) - 128;
    int *din, *dpartial;
    SWEEP_CHECK(sweep::malloc(&din, bytes));
    SWEEP_CHECK(sweep::malloc(&dpartial, blocks * sizeof(int)));
    SWEEP_CHECK(cudaMemcpy(din, h.data(), bytes, cudaMemcpyHostToDevice));
    SWEEP_CHECK(cudaMemset(dpartial, 0, blocks * sizeof(int)));

    sweep::Stats s = sweep::measure(opt, [&] { reduce<<<blocks, BLOCK>>>(din, dpartial); });
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());

    SWEEP_CHECK(cudaMemcpy(hp.data(), dpartial, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    check_reduction(h, hp);

    sweep::report("reduction", "GB/s", bytes / 1e9, s);
    sweep::report("reduction_elems", "Gelem/s", n / 1e9, s);
    sweep::Stats ref = sweep::memcpy_d2d(opt, bytes);
    sweep::report("memcpy_d2d", "GB/s", 2.0 * bytes / 1e9, ref);
    SWEEP_CHECK(sweep::free(din));
    SWEEP_CHECK(sweep::free(dpartial));
    return 0;
}
