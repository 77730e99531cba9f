// matmul: tiled matrix multiply P = M * N (square, float), one thread per element of P, the block
// computing one TILE_WIDTH x TILE_WIDTH tile of P through shared-memory tiles of M and N (Kirk & Hwu's
// "multiplicación teselada"). Measures GFlops (2*N^3 flops per launch) for TILE_WIDTH 4, 8, 16, 32 and
// reports what bounds it: the occupancy that the block size, registers and shared memory allow
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor: active warps / max warps per SM), registers per thread,
// static shared memory per block. The host checks 65 rows of P against its own product (check.h).
// Source: course notes on programming massively parallel processors (G80; ../shared/seeds/001, Spanish):
// tile = block size, "8x8, 16x16 or 32x32?" granularity, occupancy from registers and shared memory;
// occupancy definition from ../shared/seeds/003 (English).
// By hand: params.h with TILE_WIDTH and MATRIX_N (N multiple of TILE_WIDTH), then
//   nvcc -arch=sm_90 -O3 -I<dir with params.h> -I cuda/common -o matmul cuda/matmul/matmul.cu && ./matmul
#include "sweep.cuh"
#include "params.h"
#include "check.h"
#include <cstdio>
#include <vector>

static_assert(MATRIX_N % TILE_WIDTH == 0, "MATRIX_N must be a multiple of TILE_WIDTH");
static_assert(TILE_WIDTH * TILE_WIDTH <= 1024, "a block holds at most 1024 threads");

__global__ void matmul(const float* Md, const float* Nd, float* Pd, int width) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;
    for (int m = 0; m < width / TILE_WIDTH; ++m) {
        Mds[ty][tx] = Md[row * width + m * TILE_WIDTH + tx];
        Nds[ty][tx] = Nd[(m * TILE_WIDTH + ty) * width + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE_WIDTH; ++k) sum += Mds[ty][k] * Nds[k][tx];
        __syncthreads();
    }
    Pd[row * width + col] = sum;
}

int main() {
    sweep::Options opt = sweep::options_from_env();  // first: creates the context, then waits at the start gate
    const int n = MATRIX_N;
    const size_t count = size_t(n) * n, bytes = count * sizeof(float);
    // Small integers: every product and partial sum is exact in float, so the check is exact.
    std::vector<float> hm(count), hn(count), hp(count);
    for (size_t i = 0; i < count; ++i) {
        hm[i] = float(int((i * 7919u) % 9u) - 4);
        hn[i] = float(int((i * 104729u + 3u) % 7u) - 3);
    }
    float *dm, *dn, *dp;
    SWEEP_CHECK(sweep::malloc(&dm, bytes));
    SWEEP_CHECK(sweep::malloc(&dn, bytes));
    SWEEP_CHECK(sweep::malloc(&dp, bytes));
    SWEEP_CHECK(cudaMemcpy(dm, hm.data(), bytes, cudaMemcpyHostToDevice));
    SWEEP_CHECK(cudaMemcpy(dn, hn.data(), bytes, cudaMemcpyHostToDevice));
    SWEEP_CHECK(cudaMemset(dp, 0, bytes));

    dim3 block(TILE_WIDTH, TILE_WIDTH), grid(n / TILE_WIDTH, n / TILE_WIDTH);
    printf("matmul: N=%d TILE_WIDTH=%d (%d threads per block)\n", n, TILE_WIDTH, TILE_WIDTH * TILE_WIDTH);

    // What the resources allow on this GPU.
    int dev;
    cudaDeviceProp prop;
    cudaFuncAttributes attr;
    int blocks_per_sm = 0;
    SWEEP_CHECK(cudaGetDevice(&dev));
    SWEEP_CHECK(cudaGetDeviceProperties(&prop, dev));
    SWEEP_CHECK(cudaFuncGetAttributes(&attr, matmul));
    SWEEP_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, matmul, TILE_WIDTH * TILE_WIDTH, 0));
    int warps_per_block = (TILE_WIDTH * TILE_WIDTH + prop.warpSize - 1) / prop.warpSize;
    int max_warps = prop.maxThreadsPerMultiProcessor / prop.warpSize;
    double occupancy = double(blocks_per_sm * warps_per_block) / max_warps;
    printf("registers/thread: %d, shared memory/block: %zu B, blocks/SM: %d, occupancy: %.3f\n", attr.numRegs,
           attr.sharedSizeBytes, blocks_per_sm, occupancy);

    sweep::Stats s = sweep::measure(opt, [&] { matmul<<<grid, block>>>(dm, dn, dp, n); });
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());

    // Check against the host product: 64 whole rows spread over the matrix plus the last row.
    SWEEP_CHECK(cudaMemcpy(hp.data(), dp, bytes, cudaMemcpyDeviceToHost));
    check_matmul(hm, hn, hp, n);

    sweep::report("matmul", "GFlops", 2.0 * n * n * double(n) / 1e9, s);
    sweep::report_value("occupancy", "fraction", occupancy);
    sweep::report_value("blocks_per_sm", "blocks", blocks_per_sm);
    sweep::report_value("regs_per_thread", "registers", attr.numRegs);
    sweep::report_value("smem_per_block", "bytes", double(attr.sharedSizeBytes));
    SWEEP_CHECK(sweep::free(dm));
    SWEEP_CHECK(sweep::free(dn));
    SWEEP_CHECK(sweep::free(dp));
    return 0;
}
