/* Combining the ranks' partial results: MPI types and ops for each accumulator, the buffer path (device buffers
 * on a CUDA-aware MPI, else written by the kernel into mapped pinned host memory), and the levels: `node`
 * (MPI_Reduce over the node to its leader) then `global` (over the node leaders to rank 0), or one flat MPI_Reduce
 * over all ranks. */
#ifndef DREDUCE_COMBINE_H
#define DREDUCE_COMBINE_H

#include <mpi.h>

#include "dreduce/types.h"
#include "options.h"
#include "status.h"
#include "topology.h"

typedef enum {
    DR_PATH_DEVICE = 0, /* MPI reads and writes device buffers (CUDA-aware MPI) */
    DR_PATH_STAGED,     /* the GPU partial is copied to pinned host memory, MPI works on host buffers */
    DR_PATH_HOST,       /* CPU backend: the partial is on the host already */
    DR_PATH_MAPPED      /* the last kernel writes the partial into mapped pinned host memory; MPI on host buffers */
} dr_path_t;

/* What this MPI library can do with device buffers. */
typedef struct {
    int compile_time; /* MPIX_CUDA_AWARE_SUPPORT from mpi-ext.h */
    int run_time;     /* MPIX_Query_cuda_support() */
} dr_cuda_awareness_t;

void dr_combine_cuda_awareness(dr_cuda_awareness_t *a);

typedef struct {
    dr_acc_kind_t acc;
    dr_op_t op;
    MPI_Datatype type;
    MPI_Op mpi_op;
    int user_op;        /* mpi_op was created here (float min/max: NaN-propagating) */
    dr_path_t path;
    char path_text[96]; /* for the report: "device buffers (CUDA-aware MPI)", ... */
    size_t size;        /* bytes of one accumulator value */
    void *partial;      /* the rank's partial as MPI sees it: device (DEVICE), pinned host (STAGED), mapped pinned
                           host (MAPPED), plain host (HOST) */
    void *node_result;  /* node leader: the node's result; same memory kind as partial */
    void *result;       /* rank 0 (and every rank with --allreduce): the final result */
    void *device_partial; /* STAGED: the GPU's partial to copy from */
    void *mapped_partial; /* MAPPED: the device-side address of `partial`, for the kernel to write */
    int own_device;     /* node_result/result are device allocations of ours */
    void *host_block;   /* pinned (STAGED), mapped pinned (MAPPED) or plain (HOST) host memory behind the buffers */
} dr_combine_t;

/* Per-iteration times of the combine, in milliseconds; NaN where this rank does not take part. */
typedef struct {
    double stage_ms;  /* device-to-host copy of the partial (STAGED only) */
    double node_ms;
    double global_ms;
    double bcast_ms;  /* --allreduce, hierarchical: node leader to its ranks */
    double wait_ms;   /* the barriers before the levels (waiting for slower ranks), summed */
} dr_combine_times_t;

/* Choose the path and set up buffers. device_partial is the GPU's partial (NULL for the CPU backend); a
 * host_partial is used instead for the CPU backend (the CPU backend writes its partial there). */
dr_status_t dr_combine_setup(dr_combine_t *c, dr_acc_kind_t acc, dr_op_t op, dr_staging_t staging,
                             void *device_partial);

/* Combine the current partial (in c->partial, or c->device_partial for STAGED) with `mode` and `allreduce`:
 * afterwards c->result holds the result on rank 0 (on every rank with allreduce). Times each level after a barrier
 * of that level's communicator. */
dr_status_t dr_combine_run(dr_combine_t *c, const dr_topology_t *t, dr_combine_mode_t mode, int allreduce,
                           dr_combine_times_t *times);

/* Copy the final result to the host (rank 0, or any rank with allreduce). */
dr_status_t dr_combine_read_result(const dr_combine_t *c, dr_value_t *out);

void dr_combine_free(dr_combine_t *c);

#endif
