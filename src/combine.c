#include "combine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "check.h"
#include "watchdog.h"
#include "dreduce/accum.h"

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

/* Float min/max need the NaN and signed-zero rules of accum.h, which MPI_MIN/MPI_MAX do not promise. Unsigned
 * min/max are ours too: MPICH 4.0.2 (Debian's) compares MPI_UINT32_T/MPI_UINT64_T as signed under MPI_MIN/MPI_MAX
 * (pmodels/mpich#6083, MIN(0, UINT64_MAX) = UINT64_MAX), and some Open MPI 4.1 releases had the same bug
 * (open-mpi/ompi#10525). */
#define DR_USER_LOOP(T, K, how)                                                                                 \
    for (int i = 0; i < *len; ++i) ((T *)inout)[i] = dr_##how##_##K(((T *)in)[i], ((T *)inout)[i])
#define DR_USER_MINMAX(name, how)                                                                               \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                                        \
    {                                                                                                          \
        if (*dt == MPI_FLOAT) DR_USER_LOOP(float, f32, how);                                                   \
        else if (*dt == MPI_UINT32_T) DR_USER_LOOP(uint32_t, u32, how);                                        \
        else if (*dt == MPI_UINT64_T) DR_USER_LOOP(uint64_t, u64, how);                                        \
        else DR_USER_LOOP(double, f64, how);                                                                   \
    }
DR_USER_MINMAX(user_min, min)
DR_USER_MINMAX(user_max, max)
#undef DR_USER_MINMAX
#undef DR_USER_LOOP

/* The MPI datatype and op that combine exactly like accum.h. Signed 64-bit sums and products travel as uint64 so
 * MPI wraps them the way we do (a signed overflow in MPI's own code would be undefined). */
static dr_status_t map_mpi(dr_combine_t *c)
{
    const int wraps = c->op == DR_SUM || c->op == DR_PROD;
    switch (c->acc) {
    case DR_ACC_I32: c->type = MPI_INT32_T; break;
    case DR_ACC_U32: c->type = MPI_UINT32_T; break;
    case DR_ACC_I64: c->type = wraps ? MPI_UINT64_T : MPI_INT64_T; break;
    case DR_ACC_U64: c->type = MPI_UINT64_T; break;
    case DR_ACC_F32: c->type = MPI_FLOAT; break;
    default: c->type = MPI_DOUBLE; break;
    }
    c->user_op = 0;
    switch (c->op) {
    case DR_SUM: c->mpi_op = MPI_SUM; break;
    case DR_PROD: c->mpi_op = MPI_PROD; break;
    case DR_BAND: c->mpi_op = MPI_BAND; break;
    case DR_BOR: c->mpi_op = MPI_BOR; break;
    case DR_BXOR: c->mpi_op = MPI_BXOR; break;
    case DR_MIN:
    case DR_MAX:
        if (c->acc == DR_ACC_I32 || c->acc == DR_ACC_I64) {
            c->mpi_op = c->op == DR_MIN ? MPI_MIN : MPI_MAX;
        } else {
            DR_MPI_CHECK(MPI_Op_create(c->op == DR_MIN ? user_min : user_max, 1, &c->mpi_op));
            c->user_op = 1;
        }
        break;
    default: return DR_ERR_USAGE;
    }
    return DR_OK;
}

dr_status_t dr_combine_setup(dr_combine_t *c, dr_acc_kind_t acc, dr_op_t op, dr_staging_t staging,
                             void *device_partial)
{
    memset(c, 0, sizeof *c);
    c->acc = acc;
    c->op = op;
    c->size = dr_acc_kind_size(acc);
    c->device_partial = device_partial;
    DR_CHECK(map_mpi(c));

    dr_cuda_awareness_t aware;
    dr_combine_cuda_awareness(&aware);
    if (!device_partial) {
        c->path = DR_PATH_HOST;
        snprintf(c->path_text, sizeof c->path_text, "host buffers (CPU backend)");
    } else if (staging == DR_STAGING_MAPPED ||
               (staging == DR_STAGING_AUTO && !(aware.compile_time && aware.run_time))) {
        /* Without a CUDA-aware MPI the partial has to reach host memory: the kernel writing it there costs nothing,
         * where a copy costs 8-10 us per reduction (docs/performance.md), so that is the automatic choice. */
        c->path = DR_PATH_MAPPED;
        snprintf(c->path_text, sizeof c->path_text, "%s",
                 staging == DR_STAGING_MAPPED ? "mapped pinned host memory (--staging mapped)"
                                              : "mapped pinned host memory (MPI not CUDA-aware)");
    } else if (staging == DR_STAGING_DEVICE || staging == DR_STAGING_AUTO) {
        if (!aware.compile_time || !aware.run_time) {
            dr_error("--staging device needs a CUDA-aware MPI, and this one is not (MPIX_CUDA_AWARE_SUPPORT %s, "
                     "MPIX_Query_cuda_support() = %d): use --staging host or auto",
                     aware.compile_time ? "1" : "absent or 0", aware.run_time);
            return DR_ERR_USAGE;
        }
        c->path = DR_PATH_DEVICE;
        snprintf(c->path_text, sizeof c->path_text, "device buffers (CUDA-aware MPI)");
    } else {
        c->path = DR_PATH_STAGED;
        snprintf(c->path_text, sizeof c->path_text, "host-staged (--staging host)");
    }

    if (c->path == DR_PATH_DEVICE) {
        void *d = NULL;
        DR_CUDA_CHECK(cudaMalloc(&d, 2 * sizeof(dr_value_t)));
        c->own_device = 1;
        c->partial = device_partial;
        c->node_result = d;
        c->result = (char *)d + sizeof(dr_value_t);
    } else {
        void *h = NULL;
        if (c->path == DR_PATH_MAPPED) {
            DR_CUDA_CHECK(cudaHostAlloc(&h, 3 * sizeof(dr_value_t), cudaHostAllocMapped));
            DR_CUDA_CHECK(cudaHostGetDevicePointer(&c->mapped_partial, h, 0));
        } else if (c->path == DR_PATH_STAGED)
            DR_CUDA_CHECK(cudaMallocHost(&h, 3 * sizeof(dr_value_t)));
        else if (!(h = calloc(3, sizeof(dr_value_t)))) {
            dr_error("cannot allocate %zu bytes of host memory for the combine", 3 * sizeof(dr_value_t));
            return DR_ERR_RUNTIME;
        }
        c->host_block = h;
        c->partial = h;
        c->node_result = (char *)h + sizeof(dr_value_t);
        c->result = (char *)h + 2 * sizeof(dr_value_t);
    }
    return DR_OK;
}

/* The watched barrier that opens a level; its time (waiting for slower ranks) goes to times->wait_ms. */
static dr_status_t timed_barrier(MPI_Comm comm, const dr_topology_t *t, dr_combine_times_t *times)
{
    const double t0 = MPI_Wtime();
    DR_CHECK(dr_watchdog_barrier(comm, t->comm));
    times->wait_ms += (MPI_Wtime() - t0) * 1e3;
    return DR_OK;
}

dr_status_t dr_combine_run(dr_combine_t *c, const dr_topology_t *t, dr_combine_mode_t mode, int allreduce,
                           dr_combine_times_t *times)
{
    times->stage_ms = times->node_ms = times->global_ms = times->bcast_ms = NAN;
    times->wait_ms = 0;
    double t0;
    if (c->path == DR_PATH_STAGED) {
        t0 = MPI_Wtime();
        DR_CUDA_CHECK(cudaMemcpy(c->partial, c->device_partial, c->size, cudaMemcpyDeviceToHost));
        times->stage_ms = (MPI_Wtime() - t0) * 1e3;
    }
    /* Each level begins with a barrier watched by this thread, so that a rank that waits there past --timeout names
     * the nodes that do not answer (watchdog.h). The collectives themselves stay blocking: their time is the level's
     * time, and they follow a barrier everyone passed (a fault inside one is left to the watchdog thread). The first
     * call gathers the node names (dr_watchdog_prepare: collective over every rank, watched by the thread). */
    if (mode == DR_COMBINE_FLAT) {
        dr_watchdog_enter("global (flat MPI_Reduce over all ranks)");
        DR_CHECK(dr_watchdog_prepare(t->comm, t->node_name));
        DR_CHECK(timed_barrier(t->comm, t, times));
        t0 = MPI_Wtime();
        if (allreduce) DR_MPI_CHECK(MPI_Allreduce(c->partial, c->result, 1, c->type, c->mpi_op, t->comm));
        else DR_MPI_CHECK(MPI_Reduce(c->partial, c->result, 1, c->type, c->mpi_op, 0, t->comm));
        times->global_ms = (MPI_Wtime() - t0) * 1e3;
        dr_watchdog_leave();
        return DR_OK;
    }
    dr_watchdog_enter("node (MPI_Reduce to the node leader)");
    DR_CHECK(dr_watchdog_prepare(t->comm, t->node_name));
    DR_CHECK(timed_barrier(t->node_comm, t, times));
    t0 = MPI_Wtime();
    DR_MPI_CHECK(MPI_Reduce(c->partial, c->node_result, 1, c->type, c->mpi_op, 0, t->node_comm));
    times->node_ms = (MPI_Wtime() - t0) * 1e3;
    if (t->leaders_comm != MPI_COMM_NULL) {
        dr_watchdog_enter("global (MPI_Reduce over the node leaders)");
        DR_CHECK(timed_barrier(t->leaders_comm, t, times));
        t0 = MPI_Wtime();
        if (allreduce)
            DR_MPI_CHECK(MPI_Allreduce(c->node_result, c->result, 1, c->type, c->mpi_op, t->leaders_comm));
        else
            DR_MPI_CHECK(MPI_Reduce(c->node_result, c->result, 1, c->type, c->mpi_op, 0, t->leaders_comm));
        times->global_ms = (MPI_Wtime() - t0) * 1e3;
    }
    if (allreduce) {
        dr_watchdog_enter("bcast (the result to the node's ranks)");
        t0 = MPI_Wtime();
        DR_MPI_CHECK(MPI_Bcast(c->result, (int)c->size, MPI_BYTE, 0, t->node_comm));
        times->bcast_ms = (MPI_Wtime() - t0) * 1e3;
    }
    dr_watchdog_leave();
    return DR_OK;
}

dr_status_t dr_combine_read_result(const dr_combine_t *c, dr_value_t *out)
{
    memset(out, 0, sizeof *out);
    if (c->path == DR_PATH_DEVICE) DR_CUDA_CHECK(cudaMemcpy(out, c->result, c->size, cudaMemcpyDeviceToHost));
    else memcpy(out, c->result, c->size);
    return DR_OK;
}

void dr_combine_free(dr_combine_t *c)
{
    if (c->user_op) MPI_Op_free(&c->mpi_op);
    if (c->own_device) cudaFree(c->node_result);
    if (c->host_block) {
        if (c->path == DR_PATH_STAGED || c->path == DR_PATH_MAPPED) cudaFreeHost(c->host_block);
        else free(c->host_block);
    }
    memset(c, 0, sizeof *c);
}
