/* Entry points of each kernel level, called by kernels/launch.cu's switch on dr_kernel_t. C++ linkage: internal to
 * the kernels library. Each plan/run pair has the contract of dr_gpu_plan/dr_gpu_reduce in launch.h. */
#ifndef DREDUCE_KERNELS_INTERNAL_H
#define DREDUCE_KERNELS_INTERNAL_H

#include "launch.h"

#define DR_DECLARE_LEVEL(name)                                                                                 \
    cudaError_t dr_gpu_##name##_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p);                              \
    cudaError_t dr_gpu_##name##_run(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s,          \
                                    cudaEvent_t *ev);
DR_DECLARE_LEVEL(neighbored)
DR_DECLARE_LEVEL(interleaved)
DR_DECLARE_LEVEL(smem)
DR_DECLARE_LEVEL(smem2)
DR_DECLARE_LEVEL(unroll)
DR_DECLARE_LEVEL(shuffle)
DR_DECLARE_LEVEL(multipass)
/* Not a level: multipass's exact-sum path (acc DR_ACC_EXACT, rows of DR_EXACT_TABLE), kernels/exact.cu. */
DR_DECLARE_LEVEL(exact)
/* Not a level: argmin/argmax and stats (rows of DR_ARG_TABLE and DR_STATS_TABLE), kernels/fused.cu. */
DR_DECLARE_LEVEL(fused)
#undef DR_DECLARE_LEVEL

/* Blocks of `block` threads of `kernel` (with `smem` bytes of dynamic shared memory, at most `max_per_sm` per SM)
 * that fill `device` once, for multipass's kernels and the exact path's (kernels/launch.cu). `cache` is the kernel's
 * own table, [device][log2(block)]. */
cudaError_t dr_gpu_fill_grid(const void *kernel, size_t smem, int max_per_sm, int device, int block, int (*cache)[11],
                             size_t *out);

#endif
