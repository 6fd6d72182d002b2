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
 * d_keep (a digit or pilot pass; NULL: none): the elements in play (in one of a digit pass's groups, not NaN; in
 * one of a pilot pass's intervals) are appended there, in no particular order, with p->keep_pad elements among them;
 * *d_keep_pos (a device uint64, zeroed by the caller) counts all. d_keep holds keep_cap elements: what would land
 * past them is not written, and *d_keep_pos > keep_cap then says so (a digit pass's caller sizes it for the elements
 * in play plus dr_gpu_count_keep_slack, which always fits). */
cudaError_t dr_gpu_count_pass(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n,
                              uint64_t *d_counts, int block, int device, cudaStream_t stream, void *d_keep,
                              uint64_t *d_keep_pos, uint64_t keep_cap);

/* A quantile's pilot sample (src/lib/distrib.c, "The pilot"): d_out[i] = d_in[dr_pilot_pos(i, stride)] for i < m,
 * elements of esize bytes (1, 2, 4 or 8), asynchronously on stream. */
cudaError_t dr_gpu_sample(const void *d_in, size_t esize, uint64_t stride, void *d_out, uint64_t m,
                          cudaStream_t stream);

/* The most pad elements a keeping pass of n elements adds (kernels/distrib.cu, "keeps the elements in play"). */
cudaError_t dr_gpu_count_keep_slack(const dr_count_pass_t *p, uint64_t n, int block, int device, uint64_t *slack);

#ifdef __cplusplus
}
#endif
#endif
