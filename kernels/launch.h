/* The C boundary to the CUDA kernels. Host code includes this header and the CUDA runtime's C API only; every
 * template lives inside the .cu files and is instantiated from src/common/table.h.
 *
 * All calls are asynchronous on the given stream unless they say otherwise, and return the first CUDA error. */
#ifndef DREDUCE_KERNELS_LAUNCH_H
#define DREDUCE_KERNELS_LAUNCH_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "datagen.h"
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* multipass's bulk-copy path (kernels/multipass.cu) takes inputs of DR_GPU_BULK_FROM_BYTES or more on Hopper (about
 * 2x the L2: below that the register loop starts reading sooner and is as fast), and moves them in chunks of
 * DR_GPU_BULK_CHUNK_BYTES; so does the exact sum's (kernels/exact.cu), for float64 with blocks of 256 or 512. */
#define DR_GPU_BULK_FROM_BYTES ((size_t)128 << 20)
#define DR_GPU_BULK_CHUNK_BYTES 32768

/* The workspace's NaN counter (nan_omit): a uint64 in the header every multipass, fused and exact workspace has
 * before its partials (zero before first use; the kernel that stores the count returns it to zero). */
#define DR_GPU_NAN_OFFSET 8

/* Most kernel passes one reduction can take (a teaching level with 32-thread blocks on 2^40 elements needs 7). */
#define DR_GPU_MAX_PASSES 12

/* One reduction of n elements at d_in to one accumulator value at d_result. */
typedef struct {
    dr_kernel_t kernel;
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;  /* dr_acc_select(dtype, op, mode); DR_ACC_EXACT with DR_KERNEL_MULTIPASS only
                           (kernels/exact.cu), its result one normalized dr_exact_t */
    int block;          /* threads per block: a power of two in [32, 1024] */
    int device;         /* CUDA device ordinal the buffers live on (sizes the multipass grid) */
    const void *d_in;   /* n elements, naturally aligned (any offset within that: heads are handled) */
    size_t n;
    uint64_t first_index; /* argmin/argmax: the global index of d_in[0] (the result's index is first_index + the
                             element's index in d_in); ignored by other ops and by planning */
    void *d_work;       /* plan.work_bytes bytes, 256-byte aligned, zero-filled before its first use with a plan
                           (the kernels leave it so after each complete reduction); reused across calls */
    void *d_result;     /* one accumulator value (dr_acc_kind_size(acc) bytes): device or mapped host memory */
    size_t bulk_from_bytes; /* multipass: inputs of at least this many bytes take the bulk-copy kernel on Hopper (an
                               exact sum: float64, blocks of 256 or 512); 0 = DR_GPU_BULK_FROM_BYTES. Tests set it
                               low to reach that path with small inputs. */
    uint32_t *d_done;   /* NULL, or a word of mapped host memory: once the result is written, the thread that wrote
                           it stores done_seq there with release semantics at system scope, so a host that reads
                           done_seq there (acquire) reads the whole result without synchronizing the stream.
                           DR_KERNEL_MULTIPASS only (dr_gpu_signals_done); the teaching levels ignore it. */
    uint32_t done_seq;
    int nan_omit;       /* NaN policy OMIT (src/common/accum.h, "NaN policy"), float types only: each NaN element is
                           read as dr_nan_fill(op) (stats: left out) and counted. DR_KERNEL_MULTIPASS only */
    uint64_t *d_nan_count; /* nan_omit: where the kernel stores the NaN count of this reduction (device or mapped host
                              memory), as it stores the result; the count accumulates at d_work + DR_GPU_NAN_OFFSET */
} dr_gpu_reduce_t;

/* Whether r's kernel stores r->done_seq at r->d_done when its result is complete. */
int dr_gpu_signals_done(const dr_gpu_reduce_t *r);

/* The passes a reduction will launch: pass i runs grid[i] blocks of r->block threads. */
typedef struct {
    int passes;
    size_t grid[DR_GPU_MAX_PASSES];
    size_t work_bytes;    /* workspace needed */
    uint64_t serial_depth; /* most roundings along any path from an input to the result (for float error bounds) */
    int cluster;           /* multipass: the cluster kernel (small inputs on Hopper; one block runs it without a cluster) */
    int bulk;              /* the grid streams the input with bulk copies (large inputs on Hopper: multipass, and
                              exact sums of float64) */
} dr_gpu_plan_t;

/* Whether multipass takes its Hopper paths on `device` (a thread-block cluster for small inputs, bulk copies for
 * large ones): compute capability 9.0 or later, and this binary's kernels compiled for sm_90 or later. Synchronous;
 * cached per device. */
cudaError_t dr_gpu_hopper_paths(int device, int *yes);

/* The block size dreduce uses when none is given: 256 for the teaching levels (the tutorial's), and for
 * multipass by input size, from the H200 block sweeps in docs/performance.md: 256 below 2^21 elements, 512 below
 * 2^24, 1024 from there while the register loop reads (it reads fastest with 1024-thread blocks), and 256 again
 * where `device` takes the bulk-copy path (DR_GPU_BULK_FROM_BYTES and up on a Hopper), whose threads only reduce
 * shared memory. */
int dr_gpu_default_block(dr_kernel_t kernel, size_t n, size_t element_bytes, int device);

/* The same for any op: dr_gpu_default_block, except for stats and argmin/argmax (kernels/fused.cu, a register walk
 * at every size): 1024-thread blocks from 2^21 elements where the H200 read them faster (stats of every type but
 * float64; argmin/argmax of the 2- and 4-byte types), else 256 (docs/performance.md). */
int dr_gpu_default_block_op(dr_kernel_t kernel, dr_op_t op, dr_dtype_t dtype, size_t n, int device);

/* Plan r (reads only shape fields: kernel, dtype, op, acc, block, device, n, bulk_from_bytes). Synchronous; cheap
 * after the first call per device. Returns cudaErrorInvalidValue for a shape no kernel supports. */
cudaError_t dr_gpu_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *plan);

/* Launch every pass of `plan` on stream s. If pass_events is not NULL it must hold plan->passes + 1 events:
 * pass_events[i] is recorded before pass i and pass_events[plan->passes] after the last. The input is never
 * modified. */
cudaError_t dr_gpu_reduce(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *plan, cudaStream_t s,
                          cudaEvent_t *pass_events);

#ifdef __cplusplus
}
#endif
#endif
