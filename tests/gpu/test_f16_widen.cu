/* The kernels widen float16 with the GPU's conversion instruction (accum.h's device dr_f16_to_f32, cvt.f32.f16);
 * the host (CPU backend, reference, report) with accum.h's bit code. Both must give the same float32 bits for every
 * one of the 65,536 float16 values: finite values and infinities exactly, every NaN as the canonical NaN. This
 * test converts them all on the GPU, through the kernels' own widening (dr_widen, to float32 and to float64), and
 * compares to the bit with the host. It also counts how many NaN inputs came out as the canonical NaN, for the record.
 *
 * Exit: 0 all equal, 1 a difference or a CUDA error, 77 no GPU. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common.cuh"

#define CK(call)                                                                                               \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "CUDA error: %s: %s at %s:%d\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            return 1;                                                                                          \
        }                                                                                                      \
    } while (0)

/* For every half h: the kernels' widening to float32 (out32[h]) and to float64 (out64[h]), as bits. */
__global__ void widen_all(uint32_t *out32, uint64_t *out64)
{
    const unsigned h = blockIdx.x * blockDim.x + threadIdx.x;
    if (h >= 65536u) return;
    dr_f16_t x;
    x.bits = (uint16_t)h;
    const float f = dr_widen<float>(x);
    const double d = dr_widen<double>(x);
    memcpy(&out32[h], &f, 4);
    memcpy(&out64[h], &d, 8);
}

static uint64_t f64_bits_of_f32(float f)
{
    double d = (double)f;
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("no GPU visible: skipped\n");
        return 77;
    }
    uint32_t *d32 = nullptr;
    uint64_t *d64 = nullptr;
    CK(cudaMalloc(&d32, 65536 * sizeof(uint32_t)));
    CK(cudaMalloc(&d64, 65536 * sizeof(uint64_t)));
    CK(cudaMemset(d32, 0xA5, 65536 * sizeof(uint32_t)));
    CK(cudaMemset(d64, 0xA5, 65536 * sizeof(uint64_t)));
    widen_all<<<256, 256>>>(d32, d64);
    CK(cudaGetLastError());
    static uint32_t h32[65536];
    static uint64_t h64[65536];
    CK(cudaMemcpy(h32, d32, sizeof h32, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h64, d64, sizeof h64, cudaMemcpyDeviceToHost));
    CK(cudaFree(d32));
    CK(cudaFree(d64));

    int bad = 0, nans = 0, canon = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const float host = dr_f16_to_f32((uint16_t)h); /* the host's code: this file is compiled for the host too */
        const uint32_t want32 = dr_f32_to_bits(host);
        const uint64_t want64 = f64_bits_of_f32(host);
        const int is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
        nans += is_nan;
        canon += is_nan && h32[h] == 0x7fffffffu;
        if (h32[h] != want32 || h64[h] != want64) {
            if (bad < 16)
                fprintf(stderr, "float16 0x%04x: host 0x%08x / 0x%016llx, GPU 0x%08x / 0x%016llx\n", h, want32,
                        (unsigned long long)want64, h32[h], (unsigned long long)h64[h]);
            ++bad;
        }
    }
    printf("float16 widening on the GPU vs the host: %d of 65536 values differ (float32 and float64); the GPU's "
           "conversion gave the canonical NaN for %d of %d NaN inputs\n",
           bad, canon, nans);
    return bad ? 1 : 0;
}
