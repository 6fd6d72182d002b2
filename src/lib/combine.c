#define _POSIX_C_SOURCE 200809L
#include "combine.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "check.h"
#include "timing.h"
#include "accum.h"

/* Open MPI: MPIX_CUDA_AWARE_SUPPORT (mpi-ext.h) at compile time, MPIX_Query_cuda_support() at run time. The MPICH
 * family (4.0 and later) has no compile-time macro, the library decides at run time: MPIX_GPU_query_support() (4.0.1
 * on; MPIX_Query_cuda_support() in 4.0.0), which reports whether it was built with CUDA and GPU support is on
 * (MPIR_CVAR_ENABLE_GPU). Other MPIs: not CUDA-aware. */
void dr_combine_cuda_awareness(dr_cuda_awareness_t *a)
{
    a->compile_time = 0;
    a->run_time = 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    a->compile_time = 1;
    a->run_time = MPIX_Query_cuda_support();
#elif defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40001000 && defined(MPIX_GPU_SUPPORT_CUDA)
    int yes = 0;
    a->compile_time = 1;
    a->run_time = MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes;
#elif defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
    a->compile_time = 1;
    a->run_time = MPIX_Query_cuda_support();
#endif
}

/* ---- Records ------------------------------------------------------------------------------------------------ */

void dr_record_init(dr_record_t *r, const dr_signature_t *sig, int rank, dr_status_t failed)
{
    memset(r, 0, sizeof *r);
    for (int k = 0; k < DR_SIG_COUNT; ++k) {
        r->sig[k].min = r->sig[k].max = sig->v[k];
        r->sig[k].min_rank = r->sig[k].max_rank = rank;
    }
    const int32_t acc = sig->v[DR_SIG_ACC_KIND], op = sig->v[DR_SIG_OP];
    if (acc >= 0 && acc < DR_ACC_KIND_COUNT && op >= 0 && op < DR_OP_COUNT)
        dr_partial_identity((dr_acc_kind_t)acc, (dr_op_t)op, &r->value);
    r->ranks = 1;
    r->failed = failed != DR_OK;
    r->failed_rank = failed != DR_OK ? rank : INT32_MAX;
    r->failed_status = (int32_t)failed;
}

static int record_agrees(const dr_record_t *r)
{
    if (r->failed) return 0;
    for (int k = 0; k < DR_SIG_AGREED; ++k)
        if (r->sig[k].min != r->sig[k].max) return 0;
    return 1;
}

/* inout = in (+) inout, for one record: partials only where both sides agree with each other and within. */
static void record_merge(const dr_record_t *in, dr_record_t *io)
{
    int same = record_agrees(in) && record_agrees(io);
    for (int k = 0; k < DR_SIG_AGREED && same; ++k) same = in->sig[k].min == io->sig[k].min;
    if (same) {
        const int32_t acc = io->sig[DR_SIG_ACC_KIND].min, op = io->sig[DR_SIG_OP].min;
        if (acc >= 0 && acc < DR_ACC_KIND_COUNT && op >= 0 && op < DR_OP_COUNT)
            dr_partial_combine((dr_acc_kind_t)acc, (dr_op_t)op, &io->value, &in->value);
    }
    for (int k = 0; k < DR_SIG_COUNT; ++k) {
        const dr_sig_range_t *a = &in->sig[k];
        dr_sig_range_t *b = &io->sig[k];
        if (a->min < b->min || (a->min == b->min && a->min_rank < b->min_rank)) b->min = a->min, b->min_rank = a->min_rank;
        if (a->max > b->max || (a->max == b->max && a->max_rank < b->max_rank)) b->max = a->max, b->max_rank = a->max_rank;
    }
    io->ranks += in->ranks;
    io->count += in->count;
    io->nan_count += in->nan_count;
    io->failed += in->failed;
    if (in->failed_rank < io->failed_rank) io->failed_rank = in->failed_rank;
    if (in->failed_status > io->failed_status) io->failed_status = in->failed_status;
}

size_t dr_record_bytes(dr_acc_mode_t mode)
{
    /* The largest partial of the mode: stats (count, moments, sum, min, max) outgrow a dr_value_t, and in the exact
     * mode the stats' exact sum outgrows a dr_exact_t. */
    return offsetof(dr_record_t, value) + (mode == DR_ACC_MODE_EXACT ? sizeof(dr_stats_exact_t) : sizeof(dr_stats_t));
}

/* The MPI op: MPI hands byte buffers of *len records of the datatype's size (dr_record_bytes), not necessarily
 * aligned; each is merged in a whole dr_record_t (the bytes past the datatype's are never sent, nor read). */
static void record_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int bytes = 0;
    if (MPI_Type_size(*dt, &bytes) != MPI_SUCCESS || bytes <= 0 || (size_t)bytes > sizeof(dr_record_t)) return;
    for (int i = 0; i < *len; ++i) {
        dr_record_t a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        memcpy(&a, (char *)in + (size_t)i * (size_t)bytes, (size_t)bytes);
        memcpy(&b, (char *)inout + (size_t)i * (size_t)bytes, (size_t)bytes);
        record_merge(&a, &b);
        memcpy((char *)inout + (size_t)i * (size_t)bytes, &b, (size_t)bytes);
    }
}

static pthread_once_t mpi_once = PTHREAD_ONCE_INIT;
static MPI_Datatype record_type[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL}; /* one-register partials, exact */
static MPI_Op record_mpi_op = MPI_OP_NULL;
static int record_mpi_ok;

static void make_record_mpi(void)
{
    /* Commutative: every op of accum.h is, to the bit (float min/max by their NaN and signed-zero rules, exact sums
     * because they are exact). */
    record_mpi_ok = MPI_Op_create(record_op, 1, &record_mpi_op) == MPI_SUCCESS;
    for (int k = 0; k < 2 && record_mpi_ok; ++k)
        record_mpi_ok = MPI_Type_contiguous((int)dr_record_bytes(k ? DR_ACC_MODE_EXACT : DR_ACC_WIDE), MPI_BYTE,
                                            &record_type[k]) == MPI_SUCCESS &&
                        MPI_Type_commit(&record_type[k]) == MPI_SUCCESS;
}

dr_status_t dr_record_mpi(dr_acc_mode_t mode, MPI_Datatype *type, MPI_Op *op)
{
    pthread_once(&mpi_once, make_record_mpi);
    if (!record_mpi_ok) {
        dr_error("creating the MPI datatype and op of the combine's records failed");
        return DR_ERR_RUNTIME;
    }
    *type = record_type[mode == DR_ACC_MODE_EXACT];
    *op = record_mpi_op;
    return DR_OK;
}

static const char *const sig_names[DR_SIG_COUNT] = {
    [DR_SIG_DTYPE] = "dtype", [DR_SIG_OP] = "op", [DR_SIG_ACC_MODE] = "acc_mode", [DR_SIG_ACC_KIND] = "accumulator",
    [DR_SIG_COMBINE] = "cfg.combine", [DR_SIG_ALLREDUCE] = "cfg.allreduce", [DR_SIG_RANKS_PER_NODE] = "cfg.ranks_per_node",
    [DR_SIG_NAN] = "nan policy", [DR_SIG_EMPTY] = "empty part",
};

static void sig_value_text(int field, int32_t v, char *buf, size_t len)
{
    const char *name = NULL;
    switch (field) {
    case DR_SIG_DTYPE: name = v >= 0 && v < DR_DTYPE_COUNT ? dr_dtype_name((dr_dtype_t)v) : NULL; break;
    case DR_SIG_OP: name = v >= 0 && v < DR_OP_COUNT ? dr_op_name((dr_op_t)v) : NULL; break;
    case DR_SIG_ACC_MODE: name = v >= 0 && v < DR_ACC_MODE_COUNT ? dr_acc_mode_name((dr_acc_mode_t)v) : NULL; break;
    case DR_SIG_ACC_KIND: name = v >= 0 && v < DR_ACC_KIND_COUNT ? dr_acc_kind_name((dr_acc_kind_t)v) : NULL; break;
    case DR_SIG_COMBINE: name = v == DR_COMBINE_HIER ? "hier" : v == DR_COMBINE_FLAT ? "flat" : NULL; break;
    case DR_SIG_NAN: name = v >= 0 && v < DR_NAN_POLICY_COUNT ? dr_nan_policy_name((dr_nan_policy_t)v) : NULL; break;
    default: break;
    }
    if (name) snprintf(buf, len, "%s", name);
    else snprintf(buf, len, "%d", (int)v);
}

dr_status_t dr_record_check(const dr_record_t *r)
{
    if (r->failed) {
        dr_error("rank %d%s failed in this call (its own error is on its line): no result on any rank",
                 (int)r->failed_rank, r->failed > 1 ? " and others" : "");
        return r->failed_status > DR_OK ? (dr_status_t)r->failed_status : DR_ERR_RUNTIME;
    }
    char msg[768] = "";
    for (int k = 0; k < DR_SIG_AGREED; ++k) {
        if (r->sig[k].min == r->sig[k].max) continue;
        char lo[32], hi[32];
        sig_value_text(k, r->sig[k].min, lo, sizeof lo);
        sig_value_text(k, r->sig[k].max, hi, sizeof hi);
        const size_t used = strlen(msg);
        snprintf(msg + used, sizeof msg - used, "%s%s %s on rank %d but %s on rank %d", used ? "; " : "",
                 sig_names[k], lo, (int)r->sig[k].min_rank, hi, (int)r->sig[k].max_rank);
    }
    if (!msg[0]) return DR_OK;
    dr_error("the ranks called with different arguments (every rank must pass the same dtype, op and config): %s; "
             "no result", msg);
    return DR_ERR_USAGE;
}

/* ---- Paths and buffers ------------------------------------------------------------------------------------- */

dr_status_t dr_combine_choose_path(dr_staging_t staging, int nranks, const double us[2], dr_path_t *path, char *text,
                                   size_t len)
{
    dr_cuda_awareness_t aware;
    dr_combine_cuda_awareness(&aware);
    const int cuda_aware = aware.compile_time && aware.run_time;
    switch (staging) {
    case DR_STAGING_MAPPED:
        *path = DR_PATH_MAPPED;
        snprintf(text, len, "mapped pinned host memory (--staging mapped)");
        return DR_OK;
    case DR_STAGING_HOST:
        *path = DR_PATH_STAGED;
        snprintf(text, len, "host-staged (--staging host)");
        return DR_OK;
    case DR_STAGING_DEVICE:
        if (!cuda_aware) {
            const char *staging_name = DR_NAME("cfg.staging", "--staging");
            dr_error("%s device needs a CUDA-aware MPI, and this one is not (MPIX_CUDA_AWARE_SUPPORT %s, "
                     "MPIX_Query_cuda_support() = %d): use %s host or auto", staging_name,
                     aware.compile_time ? "1" : "absent or 0", aware.run_time, staging_name);
            return DR_ERR_USAGE;
        }
        *path = DR_PATH_DEVICE;
        snprintf(text, len, "device buffers (--staging device, CUDA-aware MPI)");
        return DR_OK;
    default: break;
    }
    *path = DR_PATH_MAPPED;
    if (nranks == 1)
        snprintf(text, len, "mapped pinned host memory (auto: one rank, no MPI in a call; MPI %s)",
                 cuda_aware ? "is CUDA-aware" : "not CUDA-aware");
    else if (!cuda_aware) snprintf(text, len, "mapped pinned host memory (auto: MPI not CUDA-aware)");
    else if (!isfinite(us[0]) || !isfinite(us[1]))
        snprintf(text, len, "mapped pinned host memory (auto: not measured, since not every rank is a GPU with "
                            "staging auto)");
    else {
        if (us[0] <= us[1]) *path = DR_PATH_DEVICE; /* ties: device buffers */
        snprintf(text, len, "%s (auto: measured device buffers %.1f us, mapped %.1f us per collective)",
                 *path == DR_PATH_DEVICE ? "device buffers (CUDA-aware MPI)" : "mapped pinned host memory", us[0],
                 us[1]);
    }
    return DR_OK;
}

dr_status_t dr_combine_setup(dr_combine_t *c, dr_acc_mode_t mode, dr_acc_kind_t acc, dr_op_t op, dr_path_t path,
                             const char *path_text, void *device_partial, int rank)
{
    memset(c, 0, sizeof *c);
    c->acc = acc;
    c->op = op;
    c->mode = mode;
    c->size = dr_acc_kind_size(acc);
    c->device_partial = device_partial;
    c->rank = rank;
    c->path = device_partial ? path : DR_PATH_HOST;
    snprintf(c->path_text, sizeof c->path_text, "%s", device_partial ? path_text : "host buffers (CPU backend)");
    const size_t bytes = 3 * sizeof(dr_record_t);
    char *blk = NULL;
    if (c->path == DR_PATH_DEVICE) {
        DR_CUDA_CHECK(cudaMalloc((void **)&blk, bytes));
        c->device_block = blk;
    } else {
        if (c->path == DR_PATH_MAPPED) {
            DR_CUDA_CHECK(cudaHostAlloc((void **)&blk, bytes, cudaHostAllocMapped));
            c->host_block = blk;
            char *device_blk = NULL;
            DR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&device_blk, blk, 0));
            c->mapped_partial = device_blk + offsetof(dr_record_t, value);
        } else if (c->path == DR_PATH_STAGED) {
            DR_CUDA_CHECK(cudaMallocHost((void **)&blk, bytes));
            c->host_block = blk;
        } else if (!(blk = calloc(1, bytes))) {
            dr_error("cannot allocate %zu bytes of host memory for the combine", bytes);
            return DR_ERR_RUNTIME;
        } else {
            c->host_block = blk;
        }
        memset(blk, 0, bytes);
    }
    c->partial = (dr_record_t *)blk;
    c->node_result = (dr_record_t *)(blk + sizeof(dr_record_t));
    c->result = (dr_record_t *)(blk + 2 * sizeof(dr_record_t));
    return DR_OK;
}

_Static_assert(offsetof(dr_record_t, value) == offsetof(dr_record_t, nan_count) + sizeof(uint64_t),
               "a partial target is preceded by its NaN count");

dr_status_t dr_combine_set_signature(dr_combine_t *c, const dr_signature_t *sig, uint64_t count)
{
    if (c->have_sig && memcmp(&c->sig, sig, sizeof *sig) == 0 && c->count == count) return DR_OK;
    dr_record_t r;
    dr_record_init(&r, sig, c->rank, DR_OK);
    r.count = count;
    /* Everything before the NaN count and the value: the kernel (or the CPU backend) writes those in every call. */
    const size_t head = offsetof(dr_record_t, nan_count);
    if (c->path == DR_PATH_DEVICE) DR_CUDA_CHECK(cudaMemcpy(c->partial, &r, head, cudaMemcpyHostToDevice));
    else memcpy(c->partial, &r, head);
    c->sig = *sig;
    c->count = count;
    c->have_sig = 1;
    return DR_OK;
}

/* ---- Levels ----------------------------------------------------------------------------------------------------- */

/* One collective of one level: blocking (watched by the watchdog's thread) when asked (device buffers, or no rank
 * under a timeout); else nonblocking and waited for by dr_watchdog_wait, which names the ranks that do not answer
 * (a rank without a timeout of its own just waits). `blocking` is alike on every rank (context.c, choose_path). kind 'r':
 * reduce to 0, 'a': allreduce, 'b': a broadcast from 0. */
/* What one combine moves: count elements of an MPI datatype, combined by an MPI op (a record and its user op, or
 * a vector of counts summed). */
typedef struct {
    int count;
    MPI_Datatype type;
    MPI_Op op;
} payload_t;

static dr_status_t level(dr_watchdog_t *wd, int blocking, const payload_t *p, const char *what, char kind,
                         const void *in, void *out, MPI_Comm comm, double *ms)
{
    const double t0 = dr_now_ms();
    dr_watchdog_enter(wd, what);
    int rc;
    if (!blocking) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (kind == 'r') rc = MPI_Ireduce(in, out, p->count, p->type, p->op, 0, comm, &req);
        else if (kind == 'a') rc = MPI_Iallreduce(in, out, p->count, p->type, p->op, comm, &req);
        else rc = MPI_Ibcast(out, p->count, p->type, 0, comm, &req);
        if (rc == MPI_SUCCESS) {
            const dr_status_t s = dr_watchdog_wait(wd, &req);
            dr_watchdog_leave(wd);
            if (s != DR_OK) return s;
            *ms = dr_now_ms() - t0;
            return DR_OK;
        }
    } else {
        if (kind == 'r') rc = MPI_Reduce(in, out, p->count, p->type, p->op, 0, comm);
        else if (kind == 'a') rc = MPI_Allreduce(in, out, p->count, p->type, p->op, comm);
        else rc = MPI_Bcast(out, p->count, p->type, 0, comm);
    }
    dr_watchdog_leave(wd);
    *ms = dr_now_ms() - t0;
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        dr_error("the combine's %s level failed: %s", what, msg);
        return DR_ERR_RUNTIME;
    }
    return DR_OK;
}

/* The levels, for any payload: partial is this rank's, node_result and result scratch of the same size and memory
 * kind; *final as dr_combine_levels. */
static dr_status_t combine_levels(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                                  int blocking, const payload_t *p, void *partial, void *node_result, void *result,
                                  void **final, dr_combine_times_t *times)
{
    times->node_ms = times->global_ms = times->bcast_ms = NAN;
    *final = NULL;
    if (mode == DR_COMBINE_FLAT || t->nranks == 1) {
        if (t->nranks == 1) *final = partial;
        else if (allreduce) {
            DR_CHECK(level(wd, blocking, p, "global (flat MPI_Allreduce over all ranks)", 'a', partial, result,
                           t->comm, &times->global_ms));
            *final = result;
        } else {
            DR_CHECK(level(wd, blocking, p, "global (flat MPI_Reduce over all ranks)", 'r', partial, result,
                           t->comm, &times->global_ms));
            if (t->rank == 0) *final = result;
        }
        return DR_OK;
    }
    const int one_node = t->nnodes == 1;
    void *node_rec = partial; /* the node's record, on its leader */
    if (t->local_size > 1) {
        if (allreduce && one_node) {
            DR_CHECK(level(wd, blocking, p, "node (MPI_Allreduce over the node)", 'a', partial, result,
                           t->node_comm, &times->node_ms));
            *final = result;
            return DR_OK;
        }
        DR_CHECK(level(wd, blocking, p, "node (MPI_Reduce to the node leader)", 'r', partial, node_result,
                       t->node_comm, &times->node_ms));
        node_rec = node_result;
    }
    if (t->local_rank == 0) {
        if (one_node) *final = node_rec;
        else {
            DR_CHECK(level(wd, blocking, p,
                           allreduce ? "global (MPI_Allreduce over the node leaders)"
                                     : "global (MPI_Reduce over the node leaders)",
                           allreduce ? 'a' : 'r', node_rec, result, t->leaders_comm, &times->global_ms));
            if (allreduce || t->rank == 0) *final = result;
        }
    }
    if (allreduce && !one_node && t->local_size > 1) {
        DR_CHECK(level(wd, blocking, p, "bcast (the result to the node's ranks)", 'b', NULL, result,
                       t->node_comm, &times->bcast_ms));
        *final = result;
    }
    return DR_OK;
}

dr_status_t dr_combine_levels(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                              int blocking, dr_acc_mode_t acc_mode, dr_record_t *partial, dr_record_t *node_result,
                              dr_record_t *result, dr_record_t **final, dr_combine_times_t *times)
{
    payload_t p = {1, MPI_DATATYPE_NULL, MPI_OP_NULL};
    /* One rank moves nothing: its record's MPI type and op (built on first use) are not asked for, so a call at
     * P=1 makes no MPI call at all (tests/mpi/count_calls.c). */
    if (t->nranks > 1) DR_CHECK(dr_record_mpi(acc_mode, &p.type, &p.op));
    void *f = NULL;
    const dr_status_t s = combine_levels(t, mode, allreduce, wd, blocking, &p, partial, node_result, result, &f,
                                         times);
    *final = f;
    return s;
}

dr_status_t dr_combine_counts(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                              int blocking, uint64_t *partial, uint64_t *node_result, uint64_t *result, size_t words,
                              uint64_t **final, dr_combine_times_t *times)
{
    if (words > (size_t)INT32_MAX) {
        dr_error("a combine of %zu counts is more than one MPI call takes (2^31 - 1)", words);
        return DR_ERR_RUNTIME;
    }
    const payload_t p = {(int)words, MPI_UINT64_T, MPI_SUM};
    void *f = NULL;
    const dr_status_t s = combine_levels(t, mode, allreduce, wd, blocking, &p, partial, node_result, result, &f,
                                         times);
    *final = f;
    return s;
}

dr_status_t dr_combine_run(dr_combine_t *c, const dr_topology_t *t, dr_combine_mode_t mode, int allreduce,
                           dr_watchdog_t *wd, int blocking, dr_record_t **final, dr_combine_times_t *times)
{
    times->stage_ms = NAN;
    if (c->path == DR_PATH_STAGED) {
        const double t0 = dr_now_ms();
        /* the value and the NaN count before it (gpu_backend.h: d_result is preceded by its count) */
        DR_CUDA_CHECK(cudaMemcpy(&c->partial->nan_count, (const char *)c->device_partial - sizeof(uint64_t),
                                 c->size + sizeof(uint64_t), cudaMemcpyDeviceToHost));
        times->stage_ms = dr_now_ms() - t0;
    }
    return dr_combine_levels(t, mode, allreduce, wd, blocking, c->mode, c->partial, c->node_result, c->result,
                             final, times);
}

dr_status_t dr_combine_read_record(const dr_combine_t *c, const dr_record_t *final, dr_record_t *out)
{
    if (c->path == DR_PATH_DEVICE) DR_CUDA_CHECK(cudaMemcpy(out, final, sizeof *out, cudaMemcpyDeviceToHost));
    else memcpy(out, final, sizeof *out);
    return DR_OK;
}

/* ---- Measuring the paths (staging auto) ---------------------------------------------------------------------- */

enum { MEASURE_WARMUP = 3, MEASURE_REPS = 9 };

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median time of MEASURE_REPS record collectives from `in` to `out` over the level the calls use. */
static dr_status_t time_path(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                             int device, dr_record_t *recs, double *us)
{
    double v[MEASURE_REPS];
    for (int i = 0; i < MEASURE_WARMUP + MEASURE_REPS; ++i) {
        dr_record_t *final;
        dr_combine_times_t tm;
        const double t0 = dr_now_ms();
        DR_CHECK(dr_combine_levels(t, mode, allreduce, wd, device, DR_ACC_WIDE, &recs[0], &recs[1], &recs[2], &final,
                                   &tm));
        if (i >= MEASURE_WARMUP) v[i - MEASURE_WARMUP] = (dr_now_ms() - t0) * 1e3;
    }
    qsort(v, MEASURE_REPS, sizeof *v, cmp_double);
    *us = v[MEASURE_REPS / 2];
    return DR_OK;
}

dr_status_t dr_combine_measure(const dr_topology_t *t, dr_combine_mode_t mode, int allreduce, dr_watchdog_t *wd,
                               double us[2])
{
    dr_signature_t sig;
    memset(&sig, 0, sizeof sig);
    sig.v[DR_SIG_DTYPE] = DR_FLOAT32;
    sig.v[DR_SIG_OP] = DR_SUM;
    sig.v[DR_SIG_ACC_KIND] = DR_ACC_F64;
    sig.v[DR_SIG_COMBINE] = (int32_t)mode;
    sig.v[DR_SIG_ALLREDUCE] = allreduce;
    dr_record_t h[3];
    for (int i = 0; i < 3; ++i) dr_record_init(&h[i], &sig, t->rank, DR_OK);
    dr_record_t *d = NULL, *m = NULL;
    dr_status_t s = DR_OK;
    if (cudaMalloc((void **)&d, sizeof h) != cudaSuccess || cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) !=
        cudaSuccess || cudaHostAlloc((void **)&m, sizeof h, cudaHostAllocMapped) != cudaSuccess) {
        (void)cudaGetLastError();
        dr_error("cannot allocate the buffers to measure the combine's paths (staging auto)");
        s = DR_ERR_RUNTIME;
    }
    /* Time only if every rank has its buffers: the timed collectives must be matched on every rank. */
    int ok = s == DR_OK, all_ok = 0;
    dr_watchdog_enter(wd, "setup (every rank ready to measure the combine's paths)");
    const int arc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, t->comm);
    dr_watchdog_leave(wd);
    if (arc != MPI_SUCCESS) all_ok = 0;
    double mine[2] = {INFINITY, INFINITY};
    if (all_ok) {
        memcpy(m, h, sizeof h);
        s = time_path(t, mode, allreduce, wd, 1, d, &mine[0]);
        if (s == DR_OK) s = time_path(t, mode, allreduce, wd, 0, m, &mine[1]);
    }
    if (d) cudaFree(d);
    if (m) cudaFreeHost(m);
    /* Every rank chooses alike: by the slowest rank's times. (Reached by every rank whatever happened above.) */
    if (s != DR_OK) mine[0] = mine[1] = INFINITY;
    dr_watchdog_enter(wd, "setup (comparing the combine's measured paths)");
    const int rc = MPI_Allreduce(mine, us, 2, MPI_DOUBLE, MPI_MAX, t->comm);
    dr_watchdog_leave(wd);
    if (rc != MPI_SUCCESS) return DR_ERR_RUNTIME;
    return all_ok ? s : DR_ERR_RUNTIME;
}

void dr_combine_free(dr_combine_t *c)
{
    if (c->device_block) cudaFree(c->device_block);
    if (c->host_block) {
        if (c->path == DR_PATH_STAGED || c->path == DR_PATH_MAPPED) cudaFreeHost(c->host_block);
        else free(c->host_block);
    }
    memset(c, 0, sizeof *c);
}
