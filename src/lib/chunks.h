/* Chunked reductions: an array that is not in the reducing device's memory (a host array on a GPU context, a file)
 * arrives in chunks from a source; each chunk is reduced to its own partial, and the partials fold on the host in
 * chunk order (deterministic). On a GPU, reading the next chunk (into a pinned slot), copying one and reducing
 * another overlap: three slots, copies on their own stream, the kernels on theirs, events in between. */
#ifndef DREDUCE_CHUNKS_H
#define DREDUCE_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "gpu_backend.h"
#include "parallel.h"
#include "status.h"

#define DR_CHUNK_SLOTS 3
#define DR_CHUNK_PARTIALS 64 /* chunk partials kept on the device before they are brought back and folded */

/* Gives the next chunk: at most max_elems elements, either read into `slot` (pinned host memory of the slot size,
 * free to overwrite) or found elsewhere in host memory: *ptr says where, *elems how many (0 is allowed: a rank
 * with nothing left may still have to take part in a collective read). *done = 1 after the last call. */
typedef dr_status_t (*dr_chunk_source_fn)(void *state, void *slot, size_t max_elems, const void **ptr,
                                          size_t *elems, int *done);

/* Buffers kept across chunked reductions (allocated on first use, grown when a larger chunk asks). */
typedef struct {
    size_t slot_bytes;                  /* bytes of each slot (host and device) */
    void *h_slot[DR_CHUNK_SLOTS];       /* pinned host slots the source may read into (NULL until asked for) */
    void *d_slot[DR_CHUNK_SLOTS];       /* device copies of the chunks */
    cudaEvent_t copied[DR_CHUNK_SLOTS], reduced[DR_CHUNK_SLOTS], kstart[DR_CHUNK_SLOTS];
    int events_made;
    dr_partial_t *d_partials, *h_partials; /* DR_CHUNK_PARTIALS chunk partials (device, pinned host) */
    uint64_t *d_nans, *h_nans;          /* their NaN counts (NaN policy OMIT) */
    int host_malloced;                  /* CPU backend: h_slot[0] is plain malloc'ed memory */
    dr_partial_t cpu_chunk;             /* CPU backend: the partial of the chunk just reduced */
} dr_chunks_t;

typedef struct {
    uint64_t chunks;  /* chunks with elements */
    uint64_t elems;
    double load_ms;   /* wall time of the whole pipeline */
    double read_ms;   /* time inside the source (reading) */
    double local_ms;  /* kernel time, every chunk (GPU), or the CPU backend's time */
    uint64_t depth;   /* most roundings along any path: deepest chunk plus the fold */
    uint64_t nan_count; /* NaN policy OMIT: NaN elements left out */
    int passes;       /* kernel passes of the last chunk */
    double pass_ms[DR_GPU_MAX_PASSES];
} dr_chunk_stats_t;

/* Reduce every chunk of src on GPU g (kernel, block as dr_gpu_set_shape) into one partial, *out (host memory; its
 * NaN count in st->nan_count): the caller stores it where it goes (dr_gpu_write_partial). slot_elems: elements per chunk; use_slots: the source reads into pinned slots (else it only points).
 * first: the global index of the source's first element (argmin/argmax: each chunk's indices follow on). */
dr_status_t dr_chunks_reduce_gpu(dr_gpu_t *g, dr_chunks_t *c, dr_kernel_t kernel, int block, dr_dtype_t dtype,
                                 dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, size_t slot_elems,
                                 int use_slots, uint64_t first, dr_chunk_source_fn src, void *state,
                                 dr_partial_t *out, dr_chunk_stats_t *st);

/* The same on the CPU backend (nthreads threads, placed on cpus: NULL for not placed); the partial goes to *out. The
 * source reads into one host slot. */
dr_status_t dr_chunks_reduce_cpu(dr_chunks_t *c, int nthreads, const dr_parallel_cpus_t *cpus, dr_dtype_t dtype,
                                 dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, size_t slot_elems,
                                 uint64_t first, dr_chunk_source_fn src, void *state, dr_partial_t *out,
                                 dr_chunk_stats_t *st);

void dr_chunks_free(dr_chunks_t *c);

#endif
