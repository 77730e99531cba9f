// pitch: a ROWS x 120 float matrix (480-byte rows) read and written row by row, dst = 2 * src + 1, with
// blocks of 32 x 8 threads: each warp handles 32 consecutive floats of one row (the fourth warp of a row
// only 24). Two layouts of both matrices:
//   unpadded - rows packed at 480 bytes: every row but the first starts off a 128-byte boundary, so most
//              warps' 128 bytes span two 128-byte lines (five 32-byte sectors instead of four);
//   padded   - the pitch cudaMallocPitch picks for a row (the lecture's 480 + 32 = 512-byte pitch, or whatever the driver picks;
//              reported as pitch_bytes): every row starts on a 128-byte boundary.
// Data goes up and down with cudaMemcpy2D, as in the lecture. Measures GB/s of useful bytes (480 read +
// 480 written per row), beside a cudaMemcpy device-to-device reference of the unpadded size (counted as
// bytes read + bytes written). The host checks every element (check.h).
// Source: Kolganov (MSU), lecture 2 on CUDA, global memory (../shared/seeds/004, Russian), "Матрицы и
// глобальная память": rows of 120 floats, unaligned rows cost 2 transactions per warp, pad the pitch to a
// multiple of 128 bytes (cudaMallocPitch / cudaMemcpy2D).
// By hand: params.h with LAYOUT (unpadded|padded) and ROWS (a multiple of 8), then
//   nvcc -arch=sm_90 -O3 -I<dir with params.h> -I cuda/common -o pitch cuda/pitch/pitch.cu && ./pitch
#include "sweep.cuh"
#include "params.h"
#include "check.h"
#include <cstdio>
#include <vector>

enum Layout { unpadded, padded };
constexpr int BX = 32, BY = 8;
static_assert(ROWS % BY == 0 && ROWS / BY <= 65535, "ROWS: a multiple of 8, at most 8 * 65535 (grid.y limit)");

// pitch in floats: 120 (unpadded) or the pitched allocation's row stride.
__global__ void scale(const float* src, float* dst, int pitch) {
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    if (x < WIDTH) dst[size_t(y) * pitch + x] = 2.0f * src[size_t(y) * pitch + x] + 1.0f;
}

int main() {
    sweep::Options opt = sweep::options_from_env();  // first: creates the context, then waits at the start gate
    const size_t row_bytes = WIDTH * sizeof(float), useful = 2 * size_t(ROWS) * row_bytes;
    float *dsrc, *ddst;
    size_t pitch_bytes = row_bytes;
    if (LAYOUT == padded) {
        // The driver's pitch for this row (a one-row cudaMallocPitch), then buffers of that pitch
        // from sweep::malloc, so the timing core can place them (offsets keep the pitch alignment).
        void* one_row;
        SWEEP_CHECK(cudaMallocPitch(&one_row, &pitch_bytes, row_bytes, 1));
        SWEEP_CHECK(cudaFree(one_row));
        sweep::check(pitch_bytes % sizeof(float) == 0, "the pitch is a whole number of floats");
        SWEEP_CHECK(sweep::malloc(&dsrc, ROWS * pitch_bytes));
        SWEEP_CHECK(sweep::malloc(&ddst, ROWS * pitch_bytes));
    } else {
        SWEEP_CHECK(sweep::malloc(&dsrc, ROWS * row_bytes));
        SWEEP_CHECK(sweep::malloc(&ddst, ROWS * row_bytes));
    }
    printf("pitch: layout=%s rows=%d x %d floats, pitch %zu bytes (%s128-byte aligned rows), %.1f MB per matrix\n",
           LAYOUT == padded ? "padded" : "unpadded", ROWS, WIDTH, pitch_bytes, pitch_bytes % 128 ? "not " : "",
           ROWS * pitch_bytes / 1e6);

    std::vector<float> h(size_t(ROWS) * WIDTH), hout(size_t(ROWS) * WIDTH);
    for (size_t i = 0; i < h.size(); ++i) h[i] = float(int(i * 2654435761u >> 8 & 4095) - 2048);
    SWEEP_CHECK(cudaMemcpy2D(dsrc, pitch_bytes, h.data(), row_bytes, row_bytes, ROWS, cudaMemcpyHostToDevice));
    SWEEP_CHECK(cudaMemset2D(ddst, pitch_bytes, 0, row_bytes, ROWS));

    dim3 block(BX, BY), grid((WIDTH + BX - 1) / BX, ROWS / BY);
    const int pitch = int(pitch_bytes / sizeof(float));
    sweep::Stats s = sweep::measure(opt, [&] { scale<<<grid, block>>>(dsrc, ddst, pitch); });
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());

    SWEEP_CHECK(cudaMemcpy2D(hout.data(), row_bytes, ddst, pitch_bytes, row_bytes, ROWS, cudaMemcpyDeviceToHost));
    check_pitch(h, hout);

    sweep::report("pitch", "GB/s", useful / 1e9, s);
    sweep::report_value("pitch_bytes", "bytes", double(pitch_bytes));
    sweep::Stats ref = sweep::memcpy_d2d(opt, ROWS * row_bytes);
    sweep::report("memcpy_d2d", "GB/s", 2.0 * ROWS * row_bytes / 1e9, ref);
    SWEEP_CHECK(sweep::free(dsrc));
    SWEEP_CHECK(sweep::free(ddst));
    return 0;
}
