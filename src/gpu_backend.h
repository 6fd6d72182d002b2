/* The GPU backend: one device per rank, its buffers and stream, kept across repetitions (nothing is allocated after
 * dr_gpu_prepare), data generated on the device, reductions through kernels/launch.h with per-pass event timing. */
#ifndef DREDUCE_GPU_BACKEND_H
#define DREDUCE_GPU_BACKEND_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "../kernels/launch.h"
#include "dreduce/types.h"
#include "status.h"

typedef struct {
    int device;
    char name[64];
    char pci_bus_id[32];
    cudaStream_t stream;
    void *d_in_base;     /* allocation; the input starts `misalign` elements in */
    void *d_work;
    void *d_result;      /* the rank's partial: one accumulator value in device memory */
    dr_gpu_reduce_t req;
    dr_gpu_plan_t plan;
    cudaEvent_t events[DR_GPU_MAX_PASSES + 1];
    int events_made;
} dr_gpu_t;

/* Number of visible CUDA devices; 0 when there is no driver or no device (not an error). */
int dr_gpu_count(void);

/* Select `device` (already chosen by the binding) and fill its name and PCI bus id. */
dr_status_t dr_gpu_open(dr_gpu_t *g, int device);

/* Allocate for n elements and the plan of (kernel, block, acc), generate elements first..first+n-1 of gen on the
 * device; *gen_ms gets the generation time. */
dr_status_t dr_gpu_prepare(dr_gpu_t *g, const dr_gen_t *gen, dr_kernel_t kernel, int block, dr_acc_kind_t acc,
                           int misalign, uint64_t first, uint64_t n, double *gen_ms);

/* Make the kernels write the partial to d_ptr (device-visible memory, e.g. mapped pinned host memory) instead. */
void dr_gpu_set_partial_target(dr_gpu_t *g, void *d_ptr);

/* One reduction into the partial; waits for it. pass_ms[i] gets pass i's time (plan.passes of them). */
dr_status_t dr_gpu_reduce_once(dr_gpu_t *g, double *pass_ms);

/* Copy the partial to the host. */
dr_status_t dr_gpu_read_partial(dr_gpu_t *g, dr_value_t *out);

/* Release everything; safe on a partly opened context. */
void dr_gpu_close(dr_gpu_t *g);

#endif
