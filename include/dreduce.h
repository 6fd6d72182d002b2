/* libdreduce: a distributed reduction of one array spread over the ranks of an MPI communicator. Each rank hands in
 * its own part (in GPU memory or in host memory), reduces it on its GPU (the multi-pass warp-shuffle kernel) or on
 * its cores, and the partial results are combined across ranks with one MPI collective per level that has two
 * ranks or more (within each node, then over the node leaders; nothing at all on one rank). The dreduce program is
 * a client of this library, using this header alone.
 *
 *     dreduce_config_t cfg;
 *     dreduce_config_init(&cfg);
 *     dreduce_context_t *ctx;
 *     if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) ...;       collective
 *     dreduce_result_t r;
 *     dreduce_reduce(ctx, d_data, n, DR_FLOAT32, DR_SUM, &r);               collective; r valid on rank 0
 *     printf("%g\n", dreduce_result_double(&r));
 *     dreduce_destroy(ctx);                                                 collective
 *
 * Types and ops are the enums of dreduce/types.h (shared with the command line); results come in the accumulator
 * kind dreduce_acc_select(dtype, op, cfg.acc_mode) picks (int32 sums in int64, float sums in float64 by default,
 * ...), or for an exact sum (DR_ACC_MODE_EXACT) as its float64 rounding: dreduce_acc_result_kind of that kind.
 *
 * ABI. libdreduce exports exactly the dreduce_* functions declared here (a test checks nm -D); the enums and
 * structs of dreduce/types.h and dreduce/status.h are the rest of the interface. The library's version is
 * dreduce/version.h's (from the build's project version; dreduce_version() at run time).
 *
 * Collectives. dreduce_create, dreduce_prepare, dreduce_reduce, dreduce_reduce_file, dreduce_file_inspect and
 * dreduce_destroy are collective over the context's communicator: every rank calls them in the same order, with the
 * same dtype and op (counts may differ: each rank reduces its own part). The contract under misuse
 * (docs/reliability.md, "Library misuse", has the test of each case):
 *  - No rank waits forever for a rank that failed on its own. Each collective call meets the other ranks in its
 *    collectives whatever went wrong locally: a rank whose arguments, buffer, GPU or configuration are bad still
 *    takes part, saying so, and then returns its error.
 *  - dreduce_create settles the configuration: a local problem on any rank (a NULL cfg or out, a bad field such as
 *    block 33, chunk_bytes 0 or a NaN timeout, device GPU without a GPU, no memory) makes every rank return an
 *    error, in bounded time whatever cfg.timeout says; the rank with the problem prints why. The fields that decide
 *    what the ranks exchange (combine, allreduce, ranks_per_node, acc_mode) must be the same on every rank: if not,
 *    every rank returns DR_ERR_USAGE and rank 0 prints one line naming each field that differs, two of its values
 *    and ranks holding them. The other fields are each rank's own (device, gpu, kernel, block, staging, ...).
 *  - dreduce_prepare checks what dreduce_reduce checks (dtype, op, the count) and every rank returns the worst
 *    status of any rank.
 *  - A reduction never returns a value mixed from two calls or from unlike partials. Every rank sends, in the one
 *    collective of each combine level, a fixed-size record: its partial, a signature of (dtype, op, accumulator,
 *    configuration) and a "this rank failed" flag, combined by one user-defined MPI op that checks the signatures
 *    as it combines. A rank with an error of its own in a call (a NULL buffer with count > 0, its count, its GPU)
 *    still joins with the flag set, then returns its error. Where the result arrives (rank 0, or every rank with
 *    cfg.allreduce), a differing signature or a failed flag is an error naming what differs, and *out has valid = 0;
 *    with a plain reduce the other ranks cannot know and return their own status with valid = 0 (as always there).
 *    This costs no collective beyond the combine's own.
 *  - Errors MPI or CUDA report inside a collective may still leave ranks waiting: set cfg.timeout to end them.
 *  - NULL ctx: DR_ERR_USAGE on that rank, without communicating (there is nothing to communicate over).
 *  - dreduce_create(MPI_COMM_NULL, ...): DR_ERR_USAGE and one line, before any MPI call on it.
 *
 * Cost. After dreduce_create (and dreduce_prepare for a shape), a call on one rank makes no MPI call; on several,
 * one collective per level with two ranks or more and no barrier (one node: one collective; --allreduce on one node
 * is one MPI_Allreduce). Under a timeout with a plain reduce, every 256th call is an allreduce instead, so ranks
 * that need not wait for rank 0 cannot run ahead of it without bound.
 *
 * Errors. Every call returns a dr_status_t (DR_OK, DR_ERR_USAGE for bad arguments, DR_ERR_RUNTIME for CUDA, MPI,
 * I/O or allocation failures) and prints one line saying why on stderr ("dreduce: error: rank R (host): ..."),
 * naming the argument or the configuration field (cfg.timeout, "dtype 99 is not a dr_dtype_t (0..11)"). On any
 * error *out has valid = 0. The library's duplicate of the communicator returns MPI errors (MPI_ERRORS_RETURN)
 * rather than ending the job.
 *
 * Timeout. cfg.timeout belongs to the context: its watchdog is armed only while a call of that context waits in a
 * collective, disarmed on every return (errors included), so it never ends the process while the caller's own code
 * runs; two contexts keep their own timeouts.
 *
 * Threads. A context belongs to one thread at a time: calls on one context must not overlap. Distinct contexts may
 * be used from distinct threads only if MPI was initialised with MPI_THREAD_MULTIPLE; each context's timeout then
 * watches its own calls. Every call on a GPU context first makes the context's GPU current on the calling thread
 * (cudaSetDevice; a new thread starts on device 0), and leaves it set.
 *
 * Streams. A GPU context's work runs on its own blocking streams: it starts after the work the caller queued on the
 * legacy default stream (a cudaMemcpy of the input, a kernel launched on stream 0), and a call returns with its
 * work done. Input written on the caller's non-blocking streams, or under nvcc --default-stream per-thread, must be
 * synchronized by the caller first, as for any library on its own stream.
 *
 * Ownership. The caller's buffers are only read, never kept after a call returns. The context owns its duplicate
 * of the communicator, its GPU workspace, streams and pinned buffers, all released by dreduce_destroy. */
#ifndef DREDUCE_H
#define DREDUCE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "dreduce/status.h"
#include "dreduce/types.h"
#include "dreduce/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DREDUCE_MAX_PASSES 12 /* most kernel passes one reduction reports */

typedef struct dreduce_context dreduce_context_t;

typedef struct {
    dr_device_choice_t device; /* AUTO (default): a GPU when one is visible, else the CPU backend */
    int gpu;                   /* CUDA ordinal to use; -1 (default): the node-local rank's GPU (or the only GPU a
                                  launcher gave this task) */
    int share_gpus;            /* 1: allow more ranks than GPUs on a node (default 0: an error) */
    dr_bind_choice_t bind;     /* DR_BINDOPT_WORKERS (default): leave the caller's threads and binding alone, and
                                  run the CPU backend's threads on the rank's share of the node (dr_bind_choice_t);
                                  AUTO: bind the whole process's CPUs to its share (the CPU backend's threads run
                                  there too, whatever the calling thread's binding later) and its memory next to its
                                  GPU;
                                  NONE: leave every binding alone */
    dr_kernel_t kernel;        /* DR_KERNEL_MULTIPASS (default) or a teaching level */
    int block;                 /* threads per block, a power of two in 32..1024; 0 (default): by kernel and size */
    dr_acc_mode_t acc_mode;    /* float sums/products in float64 (WIDE, default) or the input type (NATIVE); float
                                  sums exactly, rounded once to float64 (MODE_EXACT; a float product is then
                                  DR_ERR_USAGE, and kernel must be MULTIPASS) */
    dr_combine_mode_t combine; /* HIER (default) or FLAT */
    dr_staging_t staging;      /* AUTO (default): the faster of DEVICE and MAPPED, measured once at create on a
                                  CUDA-aware MPI with several ranks; MAPPED on one rank or without CUDA-awareness.
                                  DEVICE (device buffers, or fail), HOST or MAPPED force a path */
    int allreduce;             /* 1: every rank gets the result (default 0: rank 0 of the communicator) */
    int ranks_per_node;        /* > 0: treat groups of this many ranks of a host as nodes (testing); default 0 */
    int cpu_threads;           /* CPU backend threads; 0 (default): one per CPU of the rank's share (bind AUTO,
                                  WORKERS), else one per CPU this process may run on, divided among the node's
                                  ranks when each may run on all of them */
    double timeout;            /* > 0: a rank waiting longer than this many seconds in one collective of this
                                  context prints which level and ends the process (exit 3); default 0: never.
                                  Per context, armed only inside its calls */
    size_t chunk_bytes;        /* host arrays reach the GPU in chunks of this many bytes, copy and reduction
                                  overlapped (default 64 MiB) */
    int time_passes;           /* 1: time each GPU kernel pass with CUDA events (dreduce_timings_t.pass_ms; the
                                  dreduce program's report); 0 (default): no events, which saves driver calls */
    dr_nan_policy_t nan;       /* what a NaN element of a float array means (dr_nan_policy_t): PROPAGATE (default,
                                  NumPy's plain functions) or OMIT (NumPy's nan* functions). The context's policy
                                  for every call until dreduce_set_nan changes it. Each rank's own: ranks calling
                                  with different policies get an error, as for different ops */
    dr_host_path_t host_path;  /* how a host array is reduced on a GPU context (dr_host_path_t): AUTO (default), the
                                  fastest path measured for the buffer's kind and row; CPU, GPU or SPLIT force one.
                                  GPU and SPLIT need a GPU: on a rank that runs the CPU backend dreduce_create fails
                                  (DR_ERR_USAGE). Each rank's own */
} dreduce_config_t;

/* Statistics (DR_STATS): count, sum, min, max, mean, variance. See dr_stats_result_t (dreduce/types.h) for each
 * field and accum.h ("Statistics") for the rules. */
typedef dr_stats_result_t dreduce_stats_t;

/* A reduced value, in its accumulator kind (float64 for an exact sum: dr_acc_result_kind). DR_ARGMIN/DR_ARGMAX: kind
 * DR_ACC_ARG_*, value.arg holds the extreme value and the global index of its first occurrence (DR_ARG_NONE for an
 * empty array). DR_STATS: kind DR_ACC_STATS_*, the result is `stats`. A float result that is NaN is the canonical NaN
 * (0x7fffffff, 0x7fff...ff), whichever NaN the data held and whatever the grouping, backend or rank count.
 *
 * An array with no element at all (every rank's part empty): min, max, band, bor, bxor, argmin and argmax have no
 * value (NumPy raises for min and max: "zero-size array to reduction operation minimum which has no identity"; for
 * the bitwise ops NumPy returns their identities, all ones and 0, which dreduce does not pass off as data), and
 * the result says so with no_value 1 (value then holds the op's identity, which is not data; argmin/argmax also
 * index DR_ARG_NONE); dreduce_result_double gives NaN and dreduce_result_format "none". sum and prod are 0 and 1, as
 * NumPy's, and stats has count 0 (its min and max no value): those have no_value 0. */
typedef struct {
    dr_acc_kind_t kind;
    dr_value_t value;
    int valid;    /* 1 where the value is the combined result (rank 0, or every rank with allreduce) */
    int no_value; /* 1: the array had no element and the op has no value for it (see above); valid stays 1. NaN
                     policy OMIT: also argmin/argmax of an array whose every element is NaN (np.nanargmin raises
                     "All-NaN slice encountered") */
    dreduce_stats_t stats; /* DR_STATS only (OMIT: of the elements that are not NaN; count excludes the NaN) */
    uint64_t count;      /* elements of the whole array (every rank's part) */
    uint64_t nan_count;  /* NaN policy OMIT: of them NaN, left out (0 under PROPAGATE). Where nan_count == count
                            (and count > 0), min and max are NaN, as np.nanmin/np.nanmax give (with a warning) */
} dreduce_result_t;

/* Times of the last reduction, histogram or quantile on this rank, in milliseconds; NaN where this rank had no part in
 * a level (a histogram or quantile has passes, local, node, global, bcast and total). */
typedef struct {
    int passes;                           /* GPU kernel passes of one reduction (1 on the CPU backend); a histogram's
                                             or quantile's counting passes (dreduce_dist_info_t has them all) */
    double pass_ms[DREDUCE_MAX_PASSES];   /* GPU: each pass (of the last chunk for host arrays); a GPU array's passes
                                             are timed only with cfg.time_passes. A histogram or quantile: each
                                             counting pass's local time, on either backend */
    double local_ms;   /* this rank's reduction: every kernel pass of every chunk (a host array on the GPU path), the
                          CPU threads' time (the CPU backend; a host array on the CPU path), the wall time of both
                          sides (SPLIT); a GPU array without per-pass events: the host's time from launch to the
                          kernels' end */
    double load_ms;    /* host arrays on a GPU context and files: the whole local level, wall time (copies, kernels,
                          CPU threads, overlapped) */
    double read_ms;    /* files: reading them (MPI-IO), overlapped with copying and reducing */
    double stage_ms;   /* the partial copied to pinned host memory (--staging host) */
    double node_ms, global_ms, bcast_ms; /* the combine levels, each from this rank's entry into its collective to
                                            its return: time spent waiting for a slower rank shows here */
    double total_ms;   /* the whole call */
    double launch_ms;  /* a GPU array with per-pass events: host time of the local level beyond the kernels' own
                          (launching, and seeing the kernels end); NAN otherwise */
    double wait_ms;    /* NAN: a call has no barrier (kept for compatibility; waiting shows in node/global) */
    uint64_t chunks;   /* pieces the data came in (1 for a GPU array) */
    uint64_t bytes;    /* bytes this rank reduced */
    uint64_t depth;    /* most roundings along any path from an element to this rank's partial */
    uint64_t nan_count; /* NaN policy OMIT: NaN elements of this rank's part left out (0 under PROPAGATE); a
                           histogram or quantile: its NaN elements, as dreduce_dist_info_t.local_nan_count */
    int host_path;      /* a host array on a GPU context: the path it took (DR_HOST_PATH_CPU, _GPU or _SPLIT; never
                           AUTO); -1 for a GPU array, a file and on the CPU backend */
    int host_pinned;    /* that host array was pinned (page-locked or registered) memory: 1, pageable: 0; -1 else */
    uint64_t host_cpu_elems; /* of this rank's elements, those its CPU threads reduced (all on the CPU path, none on
                                the GPU path; SPLIT: the back part, the GPU the front) */
    double host_cpu_ms, host_gpu_ms; /* each side's wall time within load_ms; NaN where it had no part */
    double measure_ms;  /* host_path AUTO or SPLIT: time this call spent measuring the paths (once per context for
                           each kind and row: dreduce_host_rates); 0 where it measured nothing */
} dreduce_timings_t;

/* "MAJOR.MINOR.PATCH" of the library linked (compare with DREDUCE_VERSION_STRING of dreduce/version.h). */
const char *dreduce_version(void);

/* Defaults for every field (see dreduce_config_t). */
void dreduce_config_init(dreduce_config_t *cfg);

/* Create a context on comm (collective): choose and open this rank's GPU (or the CPU backend), bind if asked, learn
 * the node layout. Every rank returns the same status: if one rank fails (NULL cfg or out, a bad field, no GPU for
 * device GPU), all fail; differing combine, allreduce, ranks_per_node or acc_mode are DR_ERR_USAGE on every rank
 * (see Collectives). MPI_COMM_NULL is DR_ERR_USAGE. *out is NULL on failure. */
dr_status_t dreduce_create(MPI_Comm comm, const dreduce_config_t *cfg, dreduce_context_t **out);

/* Optional (collective): plan and allocate for reductions of count elements of (dtype, op) so that the first
 * dreduce_reduce of that shape allocates nothing and problems (a bad dtype, op or count, no memory, staging DEVICE
 * without a CUDA-aware MPI) show up here: every rank returns the worst status of any rank. For argmin/argmax it
 * also finds where this rank's part starts in the whole array (the counts of the lower ranks summed: one
 * MPI_Exscan), which dreduce_reduce then uses while it is called with that count. */
dr_status_t dreduce_prepare(dreduce_context_t *ctx, dr_dtype_t dtype, dr_op_t op, uint64_t count);

/* Reduce this rank's count elements at buf, then combine with the other ranks (collective). buf may be device
 * memory of the context's GPU, managed memory, pinned or pageable host memory (found with cudaPointerGetAttributes;
 * host memory on a GPU context is copied in chunks); NULL when count is 0. *out gets the combined result where it
 * is valid (see dreduce_result_t) and valid = 0 elsewhere. Allocates nothing when the shape was seen before.
 *
 * argmin/argmax report a global index: the position of the element in the whole array, the ranks' parts taken in
 * rank order. On one rank that is the index in buf. On several, each rank must know where its part starts: either
 * dreduce_prepare(ctx, dtype, op, count) learned it (one MPI_Exscan of the counts, kept while this rank's count
 * stays that count), or the caller gives it (dreduce_reduce_at). Without either, the call is DR_ERR_USAGE on that
 * rank (it still joins the combine, so no rank waits). */
dr_status_t dreduce_reduce(dreduce_context_t *ctx, const void *buf, uint64_t count, dr_dtype_t dtype, dr_op_t op,
                           dreduce_result_t *out);

/* dreduce_reduce with buf[0] at global index `first` of the whole array (argmin/argmax report first + the index in
 * buf; other ops ignore it). first + count must stay below DR_ARG_NONE. The parts need not be in rank order, and
 * ranks may leave gaps: the indices are the caller's. */
dr_status_t dreduce_reduce_at(dreduce_context_t *ctx, const void *buf, uint64_t count, uint64_t first,
                              dr_dtype_t dtype, dr_op_t op, dreduce_result_t *out);

/* For bindings that find a rank's own arguments bad before they call dreduce_reduce (a non-contiguous array, a
 * buffer they cannot read): take part in the call's combine as a rank that failed with `why` (DR_ERR_USAGE or
 * DR_ERR_RUNTIME), so the other ranks return an error naming this rank instead of waiting for it (collective, like
 * dreduce_reduce with the same dtype and op, which may themselves be the bad arguments). Returns `why`; prints
 * nothing of its own (the caller says why). */
dr_status_t dreduce_reduce_fail(dreduce_context_t *ctx, dr_dtype_t dtype, dr_op_t op, dr_status_t why,
                                dreduce_result_t *out);

/* dreduce_create with the communicator given by its Fortran handle (MPI_Comm_c2f; mpi4py: comm.py2f()), for
 * bindings that cannot name an MPI_Comm, whose C type differs between MPIs. */
dr_status_t dreduce_create_f(MPI_Fint comm, const dreduce_config_t *cfg, dreduce_context_t **out);

/* sizeof of the API's structs, for bindings that lay them out themselves: "dreduce_config_t", "dreduce_result_t",
 * "dreduce_timings_t", "dreduce_stats_t", "dreduce_file_t", "dreduce_file_info_t", "dreduce_context_info_t",
 * "dreduce_dist_info_t", "dreduce_order_stat_t", "dreduce_host_rates_t"; 0 for another name. */
size_t dreduce_struct_size(const char *name);

/* A file to reduce (dreduce_reduce_file). */
typedef struct {
    const char *path;
    dr_dtype_t dtype;   /* the element type: required for raw files; for .npy files DR_DTYPE_COUNT (whatever the
                           header says) or the type the caller expects (a different header is an error) */
    int raw;            /* 1: raw binary whatever the name; 0: .npy when the name ends in .npy or the file starts
                           with the .npy magic, else raw */
    int has_offset;     /* raw files: skip `offset` bytes before the first element */
    uint64_t offset;
    const char *dataset; /* HDF5 files (found by their signature or a .h5/.hdf5/.he5 name): the dataset's path in
                            the file; NULL for the file's only dataset. Needs a build with parallel HDF5 */
} dreduce_file_t;

/* What dreduce_reduce_file found in the file, and this rank's share of it. */
typedef struct {
    dr_dtype_t dtype;
    uint64_t count;        /* elements in the file */
    uint64_t first, mine;  /* this rank's share: elements first .. first + mine - 1 */
} dreduce_file_info_t;

/* Initialise a file description: path, no type (from the .npy header), auto format, no offset. */
void dreduce_file_init(dreduce_file_t *f, const char *path);

/* Open and check a file without reducing it (collective; the same rules, errors and shares as
 * dreduce_reduce_file): *info gets its type, its count and this rank's share. */
dr_status_t dreduce_file_inspect(dreduce_context_t *ctx, const dreduce_file_t *file, dr_op_t op,
                                 dreduce_file_info_t *info);

/* Reduce the array in a file (collective; every rank passes the same description): each rank reads only its own
 * share (MPI-IO, contiguous, sizes differing by at most one element) and streams it through pinned buffers to its
 * GPU, read, copy and reduction overlapped (or to the CPU backend). A bad file (missing, unreadable, truncated,
 * corrupt header, unsupported dtype, offset past the end) returns DR_ERR_USAGE on every rank and rank 0 says why
 * in one line naming the file. *info (may be NULL) gets the layout. Timings include read_ms and load_ms. */
dr_status_t dreduce_reduce_file(dreduce_context_t *ctx, const dreduce_file_t *file, dr_op_t op,
                                dreduce_result_t *out, dreduce_file_info_t *info);

/* This rank's own partial of the last dreduce_reduce (before the combine): for checking one rank's share
 * (no_value where this rank's part was empty and the op has no value for that). */
dr_status_t dreduce_local_partial(dreduce_context_t *ctx, dreduce_result_t *out);

/* Times of the last dreduce_reduce on this rank (and its NaN count). */
void dreduce_timings(const dreduce_context_t *ctx, dreduce_timings_t *out);

/* Host arrays on a GPU context (cfg.host_path): AUTO measures the three paths once per context for each kind of host
 * memory (pageable, pinned) and row (dtype, op, accumulator mode, NaN policy), on the first host array of that kind
 * and row of at least DREDUCE_HOST_MEASURE_MIN bytes: its first DREDUCE_HOST_PROBE_BYTES (or all of it) reduced
 * by each path in turn, the result thrown away (SPLIT measures the same way, for its cut, whatever the size, and
 * measures again on the first longer array until the probe reaches DREDUCE_HOST_MEASURE_MIN). Below
 * DREDUCE_HOST_MEASURE_MIN, AUTO takes the CPU path: the data are then mostly in cache and a copy's fixed costs
 * (its launch, the kernels', one synchronization: tens of microseconds) outweigh the link. */
#define DREDUCE_HOST_MEASURE_MIN ((size_t)32 << 20)
#define DREDUCE_HOST_PROBE_BYTES ((size_t)256 << 20)

/* What a GPU context measured for one kind and row (dreduce_host_rates). */
typedef struct {
    int measured;               /* 1 where this kind and row was measured; the fields below are valid only then */
    double cpu_gbs;             /* GB/s (input bytes / wall time) of the CPU path over the probe */
    double gpu_gbs;             /* of the GPU path (chunked copies and kernels, overlapped) */
    double split_gbs;           /* of both at once, cut at split_cpu_fraction; 0 where a cut would leave one side
                                   nothing (one path is more than 127 times the other's rate) */
    double split_cpu_fraction;  /* the CPU's share of a split array's elements, in 64ths: cpu / (cpu + gpu) of the
                                   rates alone, corrected once by the rates each side had while both ran (the faster
                                   of the two cuts) */
    dr_host_path_t choice;      /* AUTO's: the fastest (CPU unless another is more than 3% faster; then GPU unless
                                   SPLIT is more than 3% faster than it) */
    uint64_t probe_bytes;       /* bytes each path reduced */
    double measure_ms;          /* the whole measurement's wall time */
} dreduce_host_rates_t;

/* The measurement of host memory of kind `pinned` (1: page-locked or registered, 0: pageable) for the row (dtype, op)
 * under the context's accumulator mode and NaN policy (local, no communication). *out has measured 0 where nothing
 * was measured yet (or on the CPU backend). DR_ERR_USAGE for NULL arguments or a bad dtype or op. */
dr_status_t dreduce_host_rates(const dreduce_context_t *ctx, int pinned, dr_dtype_t dtype, dr_op_t op,
                               dreduce_host_rates_t *out);

/* The NaN policy of the context's later calls (cfg.nan; dr_nan_policy_t): local, no communication, so bindings
 * can take it per call. DR_ERR_USAGE (one line naming the value) for a value that is not a policy. The ranks of a
 * call must have the same policy: one that differs is an error on every rank where the result arrives, as a
 * different op is. */
dr_status_t dreduce_set_nan(dreduce_context_t *ctx, dr_nan_policy_t nan);

/* The CUDA ordinal the context uses, or -1 on the CPU backend. */
int dreduce_gpu(const dreduce_context_t *ctx);

/* How partials travel between ranks, for reports: "device buffers (CUDA-aware MPI)", "mapped pinned host memory
 * (...)", "host-staged (...)", ... Chosen once per context at dreduce_create; with staging AUTO on a CUDA-aware MPI
 * and several ranks both paths are measured there (a few hundred microseconds) and the text gives both costs. */
const char *dreduce_combine_path(const dreduce_context_t *ctx);

/* staging AUTO's measurement (dreduce_create): *device_us and *mapped_us get the median cost of one combine
 * collective on device buffers and on mapped pinned host memory (the slowest rank's), and it returns 1; 0 (both
 * NaN) where nothing was measured (one rank, no CUDA-aware MPI, a forced staging, the CPU backend). */
int dreduce_combine_costs(const dreduce_context_t *ctx, double *device_us, double *mapped_us);

/* The result as a double (integers converted, rounding above 2^53; argmin/argmax: the value); NaN when r is NULL, not
 * valid, has no value (no_value) or a kind that is not a dr_acc_kind_t, and for stats (read r->stats). */
double dreduce_result_double(const dreduce_result_t *r);

/* Format a result for humans ("12345", "-0.5", "nan"; argmin/argmax "VALUE at INDEX"; "none" where it has no value
 * (no_value); stats "count=N sum=S mean=M var=V min=A max=B", var the population variance, min and max "none" at
 * count 0; "invalid" when r is NULL or not valid) into buf, NUL-terminated
 * within len bytes (buf may be NULL when len is 0). Returns the length of the whole text like snprintf: the text was
 * cut short if that is >= len, so a caller can check, or call again with a buffer of the returned length + 1. */
int dreduce_result_format(const dreduce_result_t *r, char *buf, size_t len);

/* Where a context's rank sits and what it drives (dreduce_context_info), for reports. */
#define DREDUCE_INFO_STR 256
typedef struct {
    int rank, nranks;           /* in the context's communicator */
    int node, nnodes;           /* this rank's node (in order of the nodes' first ranks) and how many there are */
    int local_rank, local_size; /* within the node */
    int host_local_rank;        /* within the host (the same as local_rank unless nodes are emulated) */
    int emulated;               /* nodes are groups of cfg.ranks_per_node ranks of one host */
    char host[64];              /* MPI_Get_processor_name */
    char node_name[80];         /* host, or "host/node<i>" when emulated */
    int gpu;                    /* CUDA ordinal, -1 on the CPU backend */
    char device_name[64];       /* the GPU's name, or "cpu" */
    int block;                  /* cfg.block as the context took it (0: by kernel and size) */
    int threads;                /* CPU backend threads (and the threads host-side work of the context uses) */
    /* The binding (cfg.bind; include/dreduce.h's dreduce_config_t.bind): */
    char pci_bus_id[32];        /* the GPU's, "dddd:bb:dd.f"; "" without a GPU */
    int numa_node;              /* OS index of the GPU's NUMA node (the CPU backend under bind AUTO: its share's);
                                   -1 if unknown or the machine has one */
    char gpu_cpuset[DREDUCE_INFO_STR]; /* the CPUs near the GPU, as a list ("0-15,32-47"); "" if unknown */
    char affinity[DREDUCE_INFO_STR];   /* the calling thread's CPU affinity after binding */
    int bound_cpu, bound_mem;   /* 1 where the context changed the CPU binding / the memory policy */
    int dry_run;                /* 1 where a foreign topology (DREDUCE_HWLOC_XML) was read: nothing was applied */
    int affinity_outside_gpu;   /* 1 if the affinity is not within the GPU's CPUs */
    char note[DREDUCE_INFO_STR]; /* why something degraded, "; "-separated; "" if all fine */
    char share[DREDUCE_INFO_STR]; /* the rank's share of the node's CPUs (bind AUTO, WORKERS), as a list; "" if none
                                     was computed */
    int widened;                /* 1 where bind AUTO widened the launcher's narrower binding to the share */
} dreduce_context_info_t;

/* Fill *out with the context's layout, device and binding (local: no communication). DR_ERR_USAGE for NULL. */
dr_status_t dreduce_context_info(const dreduce_context_t *ctx, dreduce_context_info_t *out);

/* Every rank of the context learns the worst status of any rank: returns the largest of the ranks' `mine`
 * (DR_OK < DR_ERR_USAGE < DR_ERR_RUNTIME < ...), under the context's timeout, which names `what` if it fires
 * (collective). For a program's own setup steps, so one rank's failure ends every rank. */
dr_status_t dreduce_agree(dreduce_context_t *ctx, dr_status_t mine, const char *what);

/* A barrier over the context's communicator under its timeout (collective; `what` names it if the timeout fires). */
dr_status_t dreduce_barrier(dreduce_context_t *ctx, const char *what);

/* Arm the context's timeout (cfg.timeout) around collectives of the caller's own, on any communicator: a rank that
 * is still between dreduce_watch_begin and dreduce_watch_end after cfg.timeout seconds prints `what` and ends the
 * process (exit 3), as in the library's own collectives. Without a timeout, nothing. Not nested; `what` must stay
 * valid until dreduce_watch_end. */
void dreduce_watch_begin(dreduce_context_t *ctx, const char *what);
void dreduce_watch_end(dreduce_context_t *ctx);

/* The node-local rank the launcher gave this process (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID,
 * PMI_LOCAL_RANK; the first set to a decimal integer >= 0), or -1; *source (may be NULL) gets the variable's name
 * or NULL. Callable before MPI_Init: a CUDA-aware MPI wants the GPU chosen (cudaSetDevice) before it starts. */
int dreduce_launcher_local_rank(const char **source);

/* Messages name settings as configuration fields ("cfg.timeout", the default) or, after
 * dreduce_messages_name_options(1), as the dreduce program's options ("--timeout"), for programs whose options map
 * onto the fields one to one. Process-wide. */
void dreduce_messages_name_options(int yes);

/* One line on this build's HDF5 input: whether dreduce_reduce_file reads HDF5 datasets, and with which HDF5. */
const char *dreduce_hdf5_description(void);

/* A file's share read back without reducing it (collective; every rank passes the same description): this rank's
 * elements of dreduce_file_inspect's share, in order, in host chunks of at most chunk_bytes (at least one element),
 * each handed to fn with its element count and the global index of its first element; the chunk is valid during
 * the call only. For checking a reduction of a file against a reference of one's own. The same rules and errors as
 * dreduce_reduce_file (op must be valid for the file's type); a read that fails on any rank is an error on every
 * rank. */
typedef void (*dreduce_chunk_fn)(const void *chunk, uint64_t count, uint64_t first, void *user);
dr_status_t dreduce_file_scan(dreduce_context_t *ctx, const dreduce_file_t *file, dr_op_t op, size_t chunk_bytes,
                              dreduce_chunk_fn fn, void *user);

/* Which elements of a global array of n rank `rank` of `nranks` holds: *first, its first global index, and *count.
 * STRONG: near-equal contiguous shares, the first n % nranks ranks one more (dreduce_reduce_file's split); WEAK:
 * n on every rank, rank r's from r * n. DR_ERR_USAGE (nothing printed) for a bad rank or NULL outputs, or when
 * the weak array would pass 2^64 - 1 elements. */
dr_status_t dreduce_shard(uint64_t n, dr_scaling_t scaling, int rank, int nranks, uint64_t *first, uint64_t *count);

/* The vocabulary of dreduce/types.h, for callers that read a result: the accumulator kind a (dtype, op, acc_mode)
 * reduces in (DR_ACC_KIND_COUNT if that combination does not exist), the kind its result is read in (float64 for an
 * exact sum), a type's size in bytes (0 if not a type), and names ("float32", "sum", "int64"; "?" if not valid). */
dr_acc_kind_t dreduce_acc_select(dr_dtype_t dtype, dr_op_t op, dr_acc_mode_t acc_mode);
dr_acc_kind_t dreduce_acc_result_kind(dr_acc_kind_t kind);
size_t dreduce_dtype_size(dr_dtype_t dtype);
const char *dreduce_dtype_name(dr_dtype_t dtype);
const char *dreduce_op_name(dr_op_t op);
const char *dreduce_acc_kind_name(dr_acc_kind_t kind);

/* ---- Distributions: histograms and quantiles (README.md, "Results you can trust": Distributions) ----
 *
 * Not reductions to one value: a histogram is a vector of counts, and a quantile is found by a distributed radix
 * select, which reads this rank's part once per digit of the element's key and combines the digit's histogram
 * across ranks (one MPI collective per pass: 2^width uint64 counts per prefix still in play, 16 KiB for one q; on
 * device buffers on a CUDA-aware MPI), so every rank picks the same bucket; with the pilot (a part in memory of
 * 2^20 elements or more: dreduce_dist_info_t.pilot, DREDUCE_PILOT) a sample's select brackets each order statistic
 * and one read keeps the bracketed elements, over which the select then runs. Both are collective like
 * dreduce_reduce (the same dtype, bins, range and q on every rank: a difference is DR_ERR_USAGE on every rank,
 * named by rank 0; a rank's bad argument joins the call, so no rank waits), and both answer as NumPy does on the whole array (the ranks' parts in rank order):
 *
 *  - dreduce_histogram is np.histogram(a, bins, range): NumPy's edges (np.linspace in NumPy's type for them: the
 *    data's float type, float64 for integers), each element in the bin NumPy puts it in (its index computed as NumPy
 *    2 computes it, then corrected against the edges as NumPy does), the last bin closed. Elements outside the
 *    range and NaN are in no bin (info->below, above, nan_count say how many). range NULL: the automatic range, the
 *    array's min and max (one more read: the stats op's pass); an array holding NaN or inf is then refused, as
 *    np.histogram refuses it (NaN policy OMIT: the min and max of the elements that are not NaN, as
 *    np.histogram(a[~np.isnan(a)]) takes them). bfloat16 arrays are histogrammed as their float32 values.
 *  - dreduce_quantile is np.quantile(a.astype(np.float64), q) (method "linear"): the two order statistics around
 *    (n - 1) q, exact elements of the data (so the result is bitwise the same at any rank count, grid or backend),
 *    interpolated with NumPy's own formula. An array holding NaN gives NaN (as NumPy); under the NaN policy OMIT
 *    it is np.nanquantile: the order statistics of the elements that are not NaN (NaN only: NaN). -0.0 and +0.0 are equal, as
 *    NumPy compares them: where both are in the data, which of the two an order statistic reports is unspecified.
 *
 * Results are valid on every rank for quantiles (the select needs them there anyway), and on rank 0 (every rank
 * with cfg.allreduce) for histograms. */

#define DREDUCE_MAX_BINS (1u << 24) /* most bins one histogram may have */
#define DREDUCE_MAX_Q 64            /* most quantiles one call may ask for (they share every pass) */
#define DREDUCE_DIST_MAX_PASSES 8   /* most passes a histogram or quantile call makes (and reports) */

/* What a histogram or quantile call found, on every rank where its result is valid. */
typedef struct {
    int valid;              /* 1 where the counts or values are the combined result */
    uint64_t count;         /* elements in the whole array */
    uint64_t nan_count;     /* of them NaN (NaN policy OMIT: left out) */
    uint64_t below, above;  /* histogram: elements below the first edge / above the last (not NaN) */
    double lo, hi;          /* histogram: the first and last edge, as NumPy computes them (the data's float type) */
    int passes;             /* the automatic range's, then one per histogram or digit, each a read of each rank's
                               part; a quantile with the pilot: its sample's select and its read first (pilot) */
    double pass_local_ms[DREDUCE_DIST_MAX_PASSES];   /* per pass: this rank's reading and counting */
    double pass_combine_ms[DREDUCE_DIST_MAX_PASSES]; /* per pass: its combine, entry to return (waiting included) */
    double local_ms;        /* this rank's reading and counting, every pass */
    double combine_ms;      /* the combines of every pass (node, global and broadcast levels) */
    double range_ms;        /* histogram, automatic range: the min/max pass, its combine included; NaN otherwise */
    double total_ms;        /* the whole call */
    uint64_t local_nan_count; /* of this rank's part, NaN */
    int pilot;              /* quantile: 0 no pilot; 1 the pilot's brackets held every order statistic (passes: the
                               sample's select, one read of the part, then passes over the elements it kept); 2 one
                               missed, and the select read the part again (docs/performance.md, "The pilot") */
} dreduce_dist_info_t;

/* One quantile's order statistics: elements of the data at 0-based ranks lower_rank <= upper_rank of the sorted
 * whole array, in the kind dreduce_acc_select gives stats of that dtype (integers exactly: DR_ACC_I64 or
 * DR_ACC_U64; floats as float64: DR_ACC_F64), and the weight between them. */
typedef struct {
    dr_acc_kind_t kind;
    dr_scalar_t lower, upper;
    uint64_t lower_rank, upper_rank;
    double gamma;
} dreduce_order_stat_t;

/* A histogram of this rank's count elements at buf (device, managed or host memory, as dreduce_reduce), combined
 * over the ranks (collective). bins in 1..DREDUCE_MAX_BINS; range NULL for the automatic range, else {lo, hi}
 * finite with lo < hi (NumPy also takes lo == hi, and widens it by 0.5 each side: so does dreduce). counts gets
 * bins uint64 counts and edges (may be NULL) bins + 1 edges, both where the result is valid. An empty array with
 * the automatic range has the range 0..1 (NumPy's). */
dr_status_t dreduce_histogram(dreduce_context_t *ctx, const void *buf, uint64_t count, dr_dtype_t dtype,
                              uint32_t bins, const double *range, uint64_t *counts, double *edges,
                              dreduce_dist_info_t *info);

/* The quantiles q[0..nq-1] (each in [0, 1], 1 <= nq <= DREDUCE_MAX_Q) of the whole array (collective): values gets
 * nq float64 values, order (may be NULL) nq order statistics, on every rank. The median is q = 0.5. All q share
 * the passes. An array with no element has no quantile: DR_ERR_USAGE on every rank (NumPy raises IndexError). */
dr_status_t dreduce_quantile(dreduce_context_t *ctx, const void *buf, uint64_t count, dr_dtype_t dtype,
                             size_t nq, const double *q, double *values, dreduce_order_stat_t *order,
                             dreduce_dist_info_t *info);

/* The same of the array in a file (collective; every rank passes the same description, as dreduce_reduce_file):
 * each rank reads its own share once per pass through the file pipeline. file_info (may be NULL) gets the layout. */
dr_status_t dreduce_histogram_file(dreduce_context_t *ctx, const dreduce_file_t *file, uint32_t bins,
                                   const double *range, uint64_t *counts, double *edges, dreduce_dist_info_t *info,
                                   dreduce_file_info_t *file_info);
dr_status_t dreduce_quantile_file(dreduce_context_t *ctx, const dreduce_file_t *file, size_t nq, const double *q,
                                  double *values, dreduce_order_stat_t *order, dreduce_dist_info_t *info,
                                  dreduce_file_info_t *file_info);

/* For bindings that find a rank's own arguments bad before they call the two above (dreduce_reduce_fail's
 * counterpart): take part in the call as a rank that failed with `why`. op: DR_DIST_HISTOGRAM or DR_DIST_QUANTILE;
 * the other arguments as this rank would have passed them (they are checked against the other ranks' like any). */
dr_status_t dreduce_dist_fail(dreduce_context_t *ctx, dr_dist_op_t op, dr_dtype_t dtype, uint32_t bins,
                              const double *range, size_t nq, const double *q, dr_status_t why,
                              dreduce_dist_info_t *info);

/* Release the context (collective: it frees its communicators). NULL is ignored. */
void dreduce_destroy(dreduce_context_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
