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
 * histogram's bins + 1 edges in device memory (float for the float16/float32 bin types, double for float64).
 * d_keep (a digit pass; NULL: none): the elements in play (in one of the pass's groups, not NaN) are appended there,
 * in no particular order, with p->keep_pad elements (in play in no later pass) among them; *d_keep_pos (a device
 * uint64, zeroed by the caller) counts all; d_keep must hold the elements in play plus dr_gpu_count_keep_slack. */
cudaError_t dr_gpu_count_pass(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n,
                              uint64_t *d_counts, int block, int device, cudaStream_t stream, void *d_keep,
                              uint64_t *d_keep_pos);

/* The most pad elements a keeping pass of n elements adds (kernels/distrib.cu, "keeps the elements in play"). */
cudaError_t dr_gpu_count_keep_slack(const dr_count_pass_t *p, uint64_t n, int block, int device, uint64_t *slack);

#ifdef __cplusplus
}
#endif
#endif
