/* Combining the ranks' partial results. Every rank sends one fixed-size record (dr_record_t, the same size whatever
 * the type): its partial, a signature of the call (dtype, op, accumulator, the config's combine/allreduce/
 * ranks_per_node) and a "this rank failed" flag, combined by one user-defined MPI op over a byte-contiguous
 * datatype. The op combines the partials only where every signature agrees and no rank failed, and keeps per
 * signature field the smallest and largest value seen with the lowest rank holding each, so the one collective both
 * combines and checks: MPI never sees mismatched datatypes, and a rank that receives the combined record learns what
 * differs, or which rank failed, instead of a value mixed from different calls.
 *
 * Levels: `node` (to the node leader) then `global` (over the node leaders), or one flat collective. A level with
 * one participant costs nothing: at P=1 a call makes no MPI call at all; on one node there is no global level, and
 * --allreduce there is one MPI_Allreduce over the node. One collective per level with >= 2 ranks, no barrier.
 *
 * Buffer paths: device buffers (CUDA-aware MPI; the kernel writes the partial into the device record), mapped pinned
 * host memory (the kernel writes it into the record there), pinned host memory (copied there), plain host memory
 * (CPU backend). */
#ifndef DREDUCE_COMBINE_H
#define DREDUCE_COMBINE_H

#include <mpi.h>
#include <stdint.h>

#include "dtype.h"
#include "status.h"
#include "topology.h"
#include "watchdog.h"

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

/* The fields of a call's signature: what every rank of a collective call must pass alike. */
typedef enum {
    DR_SIG_DTYPE = 0,
    DR_SIG_OP,
    DR_SIG_ACC_MODE,
    DR_SIG_ACC_KIND,
    DR_SIG_COMBINE,
    DR_SIG_ALLREDUCE,
    DR_SIG_RANKS_PER_NODE,
    DR_SIG_NAN, /* the NaN policy (dr_nan_policy_t) */
    /* Not an argument that must agree: 1 where the rank's part has no element. Its range over the ranks says
     * whether the whole array has any (min 1: none), for the ops that have no value for an empty array. It rides in
     * the signature because the signature is written into the record only when it changes. */
    DR_SIG_EMPTY,
    DR_SIG_COUNT
} dr_sig_field_t;

/* The fields below this one must be alike on every rank. */
#define DR_SIG_AGREED DR_SIG_EMPTY

typedef struct {
    int32_t v[DR_SIG_COUNT];
} dr_signature_t;

/* One signature field as combined so far: the smallest and largest value, and the lowest rank holding each. */
typedef struct {
    int32_t min, max, min_rank, max_rank;
} dr_sig_range_t;

/* The record of one rank (or of several, combined). The value comes last, where the kernel writes the partial, so
 * that a context whose partials are one register wide sends only the record's head and a dr_value_t
 * (dr_record_bytes): a dr_stats_t (56 bytes, the largest one-register-family partial) in the wide and native modes;
 * an exact partial (dr_stats_exact_t, 608 bytes) only in contexts with the exact acc_mode. */
typedef struct {
    dr_sig_range_t sig[DR_SIG_COUNT];
    int32_t ranks;                  /* ranks combined into this record */
    int32_t failed;                 /* how many of them failed locally in this call */
    int32_t failed_rank;            /* the lowest of those (INT32_MAX: none) */
    int32_t failed_status;          /* the worst status among them (a dr_status_t) */
    uint64_t count;                 /* elements of the ranks' parts, summed (written with the signature) */
    uint64_t nan_count;             /* of them NaN left out (NaN policy OMIT), summed; written where the value is,
                                       by the kernel or the CPU backend, only by a call that omits NaN (OMIT, a
                                       float type: context.c reads it only then); it must come right before the
                                       value (a partial target is preceded by its NaN count: gpu_backend.h) */
    dr_partial_t value;             /* the partial (identity where the rank failed) */
} dr_record_t;

/* The bytes of a record MPI moves: the same on every rank of a context, since acc_mode is settled at create
 * (a record's size may not depend on the call's dtype or op, which the record itself checks). */
size_t dr_record_bytes(dr_acc_mode_t mode);

/* The record of rank `rank` for a call with signature sig; failed != DR_OK marks a rank that failed locally (its
 * value is then the identity of the signature's op, where that is known). */
void dr_record_init(dr_record_t *r, const dr_signature_t *sig, int rank, dr_status_t failed);

typedef struct {
    dr_acc_kind_t acc;
    dr_op_t op;
    dr_acc_mode_t mode;   /* the context's: decides the records' size on the wire */
    dr_path_t path;
    char path_text[192];  /* for the report: "device buffers (CUDA-aware MPI)", ... */
    size_t size;          /* bytes of one accumulator value */
    dr_signature_t sig;   /* the signature in the partial record now */
    uint64_t count;       /* and the count */
    int have_sig;
    dr_record_t *partial;     /* the rank's record as MPI sees it: device (DEVICE), pinned host (STAGED), mapped
                                 pinned host (MAPPED), plain host (HOST) */
    dr_record_t *node_result; /* node leader: the node's record; same memory kind as partial */
    dr_record_t *result;      /* the final record; same memory kind */
    void *device_partial;     /* STAGED: the GPU's partial to copy from */
    void *mapped_partial;     /* MAPPED: the device-side address of partial->value, for the kernel to write */
    void *device_block;       /* DEVICE: our allocation of the three records */
    void *host_block;         /* pinned (STAGED), mapped pinned (MAPPED) or plain (HOST) host memory of the records */
    int rank;                 /* in the run's communicator */
} dr_combine_t;

/* Per-call times of the combine, in milliseconds; NaN where this rank has no part in a level. Each level's time runs
 * from this rank's entry into its collective to its return, so waiting for a slower rank shows in the level where
 * it is spent. */
typedef struct {
    double stage_ms;  /* device-to-host copy of the partial (STAGED only) */
    double node_ms;
    double global_ms;
    double bcast_ms;  /* --allreduce, hierarchical, several nodes: node leader to its ranks */
} dr_combine_times_t;

/* The process's MPI datatype of records of dr_record_bytes(mode) bytes and the op that combines them (made once
 * per size; MPI calls only the first time). */
dr_status_t dr_record_mpi(dr_acc_mode_t mode, MPI_Datatype *type, MPI_Op *op);

/* Choose the path and set up the record buffers for (acc, op). path_choice: the path to use (from
 * dr_combine_choose_path). device_partial is the GPU's partial (STAGED), NULL for the CPU backend. */
dr_status_t dr_combine_setup(dr_combine_t *c, dr_acc_mode_t mode, dr_acc_kind_t acc, dr_op_t op, dr_path_t path,
                             const char *path_text, void *device_partial, int rank);

/* The path for a GPU context: staging as asked; AUTO on a CUDA-aware MPI with several ranks measures both paths
 * (dr_combine_measure) and takes device buffers where they are at least as fast. *text says which and why. Returns
 * DR_ERR_USAGE (printed) for --staging device without a CUDA-aware MPI. */
dr_status_t dr_combine_choose_path(dr_staging_t staging, int nranks, const double measured_us[2], dr_path_t *path,
                                   char *text, size_t len);

/* Collective over the level the calls use: the median time of a record collective on device buffers
 * (us[0]) and on mapped pinned host memory (us[1]), the larger over the ranks (so every rank chooses alike). About
 * 10 collectives of each; a few hundred microseconds. */
dr_status_t dr_combine_measure(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                               double us[2]);

/* Write the signature and this rank's element count into the partial record when either changed (a device copy on
 * the DEVICE path). The NaN count and the value are the local level's to write. */
dr_status_t dr_combine_set_signature(dr_combine_t *c, const dr_signature_t *sig, uint64_t count);

/* Combine records over the levels: partial is this rank's record, node_result and result scratch records of the
 * same memory kind (the three of dr_combine_t, or host records for a rank that failed). *final gets the record that
 * holds this rank's final result (rank 0, every rank with allreduce; NULL elsewhere); it may be partial itself when
 * no level had two ranks. blocking: blocking collectives even under a timeout (the device-buffer path: MPI's
 * nonblocking collectives need not take device buffers); every rank of a call must pass the same (a blocking
 * collective never matches a nonblocking one). acc_mode: the context's (the records' size). */
dr_status_t dr_combine_levels(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                              int blocking, dr_acc_mode_t acc_mode, dr_record_t *partial, dr_record_t *node_result,
                              dr_record_t *result, dr_record_t **final, dr_combine_times_t *times);

/* The same levels for a vector of `words` counts summed (histograms, a radix select's digit histograms): partial,
 * node_result and result hold `words` uint64 each, in one memory kind (device buffers on a CUDA-aware MPI, else
 * host memory); *final as dr_combine_levels. */
dr_status_t dr_combine_counts(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                              int blocking, uint64_t *partial, uint64_t *node_result, uint64_t *result, size_t words,
                              uint64_t **final, dr_combine_times_t *times);

/* Combine the current partial (in c->partial, or c->device_partial for STAGED); *final as dr_combine_levels. */
dr_status_t dr_combine_run(dr_combine_t *c, const dr_topology_t *t, dr_combine_mode_t mode, int allreduce,
                           dr_watchdog_t *wd, int blocking, dr_record_t **final, dr_combine_times_t *times);

/* Read a final record to the host (a device copy on the DEVICE path). */
dr_status_t dr_combine_read_record(const dr_combine_t *c, const dr_record_t *final, dr_record_t *out);

/* Check a combined record: DR_OK when no rank failed and every signature field agrees; else print one line naming
 * the failed rank or each differing field (values and ranks) and return the failed rank's status, or DR_ERR_USAGE
 * for a disagreement. */
dr_status_t dr_record_check(const dr_record_t *r);

void dr_combine_free(dr_combine_t *c);

#endif
