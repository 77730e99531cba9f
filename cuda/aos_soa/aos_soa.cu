// aos_soa: array of structures vs structure of arrays. 2^LOG2_RECORDS records of FIELDS = 8 ints; one
// thread per record reads the first TOUCHED fields and writes their sum to out[i] (a plain int array in
// both layouts, so only the reads differ):
//   aos - struct Record { int f[8]; } rec[n];  a warp reading field j touches 32 records * 32 bytes =
//         1 KB (8 lines of 128 B) for 128 useful bytes, unless the other fields are read too;
//   soa - struct { int* f[8]; };  a warp reading field j reads one 128-byte line of f[j].
// Measures GB/s of useful bytes (TOUCHED + 1 ints per record: the fields read and the sum written),
// beside a cudaMemcpy device-to-device reference (counted as bytes read + bytes written). The host checks
// every record's sum (check.h).
// Source: Kolganov (MSU), lecture 2 on CUDA, global memory (../shared/seeds/004, Russian), "Массивы
// структур?" / "Структура с массивами!": the AoS access of struct {int a, b, c} needs three transactions
// per warp (256 bytes wasted), the SoA access one.
// By hand: params.h with LAYOUT (aos|soa), TOUCHED (1..8), LOG2_RECORDS, then
//   nvcc -arch=sm_90 -O3 -I<dir with params.h> -I cuda/common -o aos_soa cuda/aos_soa/aos_soa.cu && ./aos_soa
#include "sweep.cuh"
#include "params.h"
#include "check.h"
#include <cstdio>
#include <vector>

enum Layout { aos, soa };
constexpr int FIELDS = 8, BLOCK = 256;
constexpr size_t N = size_t(1) << LOG2_RECORDS;
static_assert(TOUCHED >= 1 && TOUCHED <= FIELDS, "TOUCHED in 1..8");
static_assert(N % BLOCK == 0, "whole blocks");

struct Record { int f[FIELDS]; };           // 4-byte aligned: field loads stay 32-bit, as in the lecture
struct Fields { int* f[FIELDS]; };          // passed by value, like the lecture's struct of pointers

__global__ void sum_aos(const Record* rec, int* out) {
    size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x;
    int sum = 0;
#pragma unroll
    for (int j = 0; j < TOUCHED; ++j) sum += rec[i].f[j];
    out[i] = sum;
}

__global__ void sum_soa(Fields s, int* out) {
    size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x;
    int sum = 0;
#pragma unroll
    for (int j = 0; j < TOUCHED; ++j) sum += s.f[j][i];
    out[i] = sum;
}

int main() {
    sweep::Options opt = sweep::options_from_env();  // first: creates the context, then waits at the start gate
    const size_t data_bytes = N * sizeof(Record), useful = N * (TOUCHED + 1) * sizeof(int);
    printf("aos_soa: layout=%s touched=%d of %d fields, %zu records (%.0f MB)\n", LAYOUT == aos ? "aos" : "soa",
           TOUCHED, FIELDS, N, data_bytes / 1e6);

    int* dout;
    SWEEP_CHECK(sweep::malloc(&dout, N * sizeof(int)));
    SWEEP_CHECK(cudaMemset(dout, 0, N * sizeof(int)));
    Record* drec = nullptr;
    Fields dsoa = {};
    if (LAYOUT == aos) {
        std::vector<Record> h(N);
        for (size_t i = 0; i < N; ++i)
            for (int j = 0; j < FIELDS; ++j) h[i].f[j] = field_value(i, j);
        SWEEP_CHECK(sweep::malloc(&drec, data_bytes));
        SWEEP_CHECK(cudaMemcpy(drec, h.data(), data_bytes, cudaMemcpyHostToDevice));
    } else {
        std::vector<int> h(N);
        for (int j = 0; j < FIELDS; ++j) {
            for (size_t i = 0; i < N; ++i) h[i] = field_value(i, j);
            SWEEP_CHECK(sweep::malloc(&dsoa.f[j], N * sizeof(int)));
            SWEEP_CHECK(cudaMemcpy(dsoa.f[j], h.data(), N * sizeof(int), cudaMemcpyHostToDevice));
        }
    }

    const unsigned blocks = unsigned(N / BLOCK);
    sweep::Stats s = sweep::measure(opt, [&] {
        if (LAYOUT == aos) sum_aos<<<blocks, BLOCK>>>(drec, dout);
        else sum_soa<<<blocks, BLOCK>>>(dsoa, dout);
    });
    SWEEP_CHECK_LAST();
    SWEEP_CHECK(cudaDeviceSynchronize());

    std::vector<int> hout(N);
    SWEEP_CHECK(cudaMemcpy(hout.data(), dout, N * sizeof(int), cudaMemcpyDeviceToHost));
    check_aos_soa(hout);

    sweep::report("aos_soa", "GB/s", useful / 1e9, s);
    sweep::Stats ref = sweep::memcpy_d2d(opt, data_bytes);
    sweep::report("memcpy_d2d", "GB/s", 2.0 * data_bytes / 1e9, ref);
    SWEEP_CHECK(sweep::free(dout));
    if (drec) SWEEP_CHECK(sweep::free(drec));
    for (int* p : dsoa.f)
        if (p) SWEEP_CHECK(sweep::free(p));
    return 0;
}
