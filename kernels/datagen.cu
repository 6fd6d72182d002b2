/* The data generator on the GPU: dreduce's test and benchmark inputs, element i of the global array made from its
 * index alone (src/common/datagen.h), so every rank makes its own shard and the host reference makes the same
 * elements. Not part of libdreduce: the dreduce program, the tests and the benchmarks link it. */
#include <cuda_runtime.h>

#include "generate.h"

namespace {

#define DR_GEN_KERNEL(name, T, gen)                                                                            \
    __global__ void name(dr_gen_t g, uint64_t first, T *__restrict__ out, size_t n)                            \
    {                                                                                                          \
        const size_t stride = (size_t)gridDim.x * blockDim.x;                                                  \
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)                     \
            out[i] = gen(&g, first + i);                                                                       \
    }
DR_GEN_KERNEL(gen_int32, int32_t, dr_gen_int32)
DR_GEN_KERNEL(gen_int64, int64_t, dr_gen_int64)
DR_GEN_KERNEL(gen_uint32, uint32_t, dr_gen_uint32)
DR_GEN_KERNEL(gen_uint64, uint64_t, dr_gen_uint64)
DR_GEN_KERNEL(gen_float32, float, dr_gen_float32)
DR_GEN_KERNEL(gen_float64, double, dr_gen_float64)
DR_GEN_KERNEL(gen_float16, uint16_t, dr_gen_float16)
DR_GEN_KERNEL(gen_bfloat16, uint16_t, dr_gen_bfloat16)
DR_GEN_KERNEL(gen_int8, int8_t, dr_gen_int8)
DR_GEN_KERNEL(gen_uint8, uint8_t, dr_gen_uint8)
DR_GEN_KERNEL(gen_int16, int16_t, dr_gen_int16)
DR_GEN_KERNEL(gen_uint16, uint16_t, dr_gen_uint16)

} // namespace

extern "C" cudaError_t dr_gpu_generate(const dr_gen_t *g, uint64_t first_index, void *d_out, size_t n,
                                       cudaStream_t s)
{
    if (n == 0) return cudaSuccess;
    const int block = 256;
    size_t grid = (n + block - 1) / block;
    if (grid > 65536) grid = 65536; /* grid-stride beyond that */
    switch (g->dtype) {
    case DR_INT32: gen_int32<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (int32_t *)d_out, n); break;
    case DR_INT64: gen_int64<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (int64_t *)d_out, n); break;
    case DR_UINT32: gen_uint32<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (uint32_t *)d_out, n); break;
    case DR_UINT64: gen_uint64<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (uint64_t *)d_out, n); break;
    case DR_FLOAT32: gen_float32<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (float *)d_out, n); break;
    case DR_FLOAT64: gen_float64<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (double *)d_out, n); break;
    case DR_FLOAT16: gen_float16<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (uint16_t *)d_out, n); break;
    case DR_BFLOAT16: gen_bfloat16<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (uint16_t *)d_out, n); break;
    case DR_INT8: gen_int8<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (int8_t *)d_out, n); break;
    case DR_UINT8: gen_uint8<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (uint8_t *)d_out, n); break;
    case DR_INT16: gen_int16<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (int16_t *)d_out, n); break;
    case DR_UINT16: gen_uint16<<<(unsigned)grid, block, 0, s>>>(*g, first_index, (uint16_t *)d_out, n); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
