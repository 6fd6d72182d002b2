/* The C boundary to the counting kernels (kernels/distrib.cu): histograms and radix-select digit counts. */
#ifndef DREDUCE_KERNELS_COUNT_H
#define DREDUCE_KERNELS_COUNT_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "distrib.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Add the counts of n elements at d_in (device memory, naturally aligned) to d_counts (dr_count_words(p) uint64 in
 * device memory), asynchronously on stream, with blocks of `block` threads (0: 512) on GPU `device`. d_edges: the
 * histogram's bins + 1 edges in device memory (float for the float16/float32 bin types, double for float64). */
cudaError_t dr_gpu_count_pass(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n,
                         uint64_t *d_counts, int block, int device, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
