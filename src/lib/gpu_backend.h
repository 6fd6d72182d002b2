/* The GPU backend: one device per rank, its streams, workspace and partial, kept across reductions (a shape seen
 * before allocates nothing), reductions of device arrays through kernels/launch.h with per-pass event timing. Host
 * arrays come in through src/lib/chunks.c. */
#ifndef DREDUCE_GPU_BACKEND_H
#define DREDUCE_GPU_BACKEND_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "launch.h"
#include "dtype.h"
#include "status.h"

typedef struct {
    int device;
    char name[64];
    char pci_bus_id[32];
    cudaStream_t stream;      /* kernels */
    cudaStream_t copy_stream; /* host-to-device copies (gpu_chunks.c), overlapping the kernels */
    void *d_work;             /* kernel workspace, work_cap bytes, zero-filled (launch.h's contract) */
    size_t work_cap;
    void *d_result;           /* the rank's partial: one accumulator value (a dr_partial_t) in device memory,
                                 preceded by its NaN count (a uint64), as every partial target is: a record's value
                                 follows its nan_count (combine.h) */
    void *partial_target;     /* where the kernels write the partial: d_result, or mapped host memory */
    void *partial_host;       /* the host address of a mapped partial_target (NULL for d_result) */
    int nan_omit;             /* the current shape's NaN policy is OMIT (a float type) */
    dr_gpu_reduce_t req;      /* the current shape and input */
    dr_gpu_plan_t plan;       /* its plan */
    int planned;              /* req/plan hold a valid shape */
    int poisoned;             /* the device partial was poisoned for this plan and target (dr_gpu_reduce_once) */
    uint32_t *done_host;      /* a mapped word the kernel stores its launch's done_seq to (launch.h, d_done) */
    uint32_t *done_dev;       /* its device address */
    uint32_t done_seq;        /* the last launch's */
    int managed_in;           /* the current input is managed memory (dr_gpu_set_shape) */
    cudaEvent_t events[DR_GPU_MAX_PASSES + 1];
    int events_made;
} dr_gpu_t;

/* Number of visible CUDA devices; 0 when there is no driver or no device (not an error). */
int dr_gpu_count(void);

/* Select `device` (already chosen by the binding), fill its name and PCI bus id, create streams and events. */
dr_status_t dr_gpu_open(dr_gpu_t *g, int device);

/* Make g's device current on the calling thread (each thread has its own current device; a thread that did not
 * open the context starts on device 0). Every entry point of a GPU context calls it first. */
dr_status_t dr_gpu_use(const dr_gpu_t *g);

/* Plan a reduction of n elements of dtype at d_in (device memory; `managed`: managed memory) with (op, acc) by
 * `kernel` with `block` threads (0: dr_gpu_default_block), and make sure the workspace is large enough. Replanning
 * is skipped when the shape is the last one; only d_in changes then. Managed memory keeps multipass to its register
 * loop: its bulk copies were not tested on pages that may have to migrate. first: the global index of d_in[0]
 * (argmin/argmax), set like d_in on every call. */
dr_status_t dr_gpu_set_shape(dr_gpu_t *g, dr_kernel_t kernel, int block, dr_dtype_t dtype, dr_op_t op,
                             dr_acc_kind_t acc, dr_nan_policy_t nan, const void *d_in, uint64_t n, uint64_t first,
                             int managed);

/* Make the kernels write the partial to d_ptr, the device address of mapped pinned host memory whose host address is
 * h_ptr (NULL, NULL: back to d_result). */
void dr_gpu_set_partial_target(dr_gpu_t *g, void *d_ptr, void *h_ptr);

/* One reduction of the current shape into the partial target; returns when the partial is complete. pass_ms[i] gets
 * pass i's time (plan.passes of them), measured with events. pass_ms NULL: no events; a mapped partial written by a
 * kernel that signals its end (dr_gpu_signals_done), from an input that is not managed memory, is waited for by
 * polling the done word: the kernel may then still be exiting (later work on g->stream is ordered after it, and
 * dr_gpu_drain waits for it), and an asynchronous error of earlier work on the stream shows at the next
 * synchronization. Any other partial: one cudaStreamSynchronize. */
dr_status_t dr_gpu_reduce_once(dr_gpu_t *g, double *pass_ms);

/* Wait until g's stream is idle, for teardown: before freeing memory a kernel may still be exiting on (errors are
 * cleared; there is nothing left to report them to). */
void dr_gpu_drain(dr_gpu_t *g);

/* Copy the partial of accumulator kind acc (from the partial target) to the host, and its NaN count (nan may be
 * NULL). The kind is the caller's: the last planned shape's (g->req) is not the partial's when the partial came
 * from the host (a host array the CPU threads reduced). */
dr_status_t dr_gpu_read_partial(dr_gpu_t *g, dr_acc_kind_t acc, dr_partial_t *out, uint64_t *nan);

/* Store v (of kind acc) as the partial (at the partial target) and nan as its NaN count, for partials made or folded
 * on the host (chunked inputs, host arrays). */
dr_status_t dr_gpu_write_partial(dr_gpu_t *g, dr_acc_kind_t acc, const dr_partial_t *v, uint64_t nan);

/* cudaMalloc with a one-line error naming the bytes and what they were for. */
dr_status_t dr_gpu_alloc(void **p, size_t bytes, const char *what);

/* Release everything; safe on a partly opened context. */
void dr_gpu_close(dr_gpu_t *g);

#endif
