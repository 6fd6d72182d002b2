/* The C boundary to the GPU data generator (kernels/datagen.cu), for the dreduce program, the tests and the
 * benchmarks; libdreduce never makes data. */
#ifndef DREDUCE_GENERATE_H
#define DREDUCE_GENERATE_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "datagen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill d_out[0..n) with elements first_index .. first_index+n-1 of the generator's global array. */
cudaError_t dr_gpu_generate(const dr_gen_t *g, uint64_t first_index, void *d_out, size_t n, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
