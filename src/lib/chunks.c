#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "chunks.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cpu_backend.h"
#include "accum.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Slots of at least `bytes` (pinned host ones only if asked), and (once) room for `chunks` partials. */
static dr_status_t ensure(dr_chunks_t *c, size_t bytes, int host_slots, int device_slots, uint64_t chunks)
{
    if (c->events_made == 0 && device_slots) {
        for (int k = 0; k < DR_CHUNK_SLOTS; ++k) {
            DR_CUDA_CHECK(cudaEventCreateWithFlags(&c->copied[k], cudaEventDisableTiming));
            DR_CUDA_CHECK(cudaEventCreate(&c->reduced[k]));
            DR_CUDA_CHECK(cudaEventCreate(&c->kstart[k]));
            c->events_made = k + 1;
        }
    }
    if (bytes > c->slot_bytes) {
        for (int k = 0; k < DR_CHUNK_SLOTS; ++k) {
            if (c->h_slot[k]) cudaFreeHost(c->h_slot[k]);
            if (c->d_slot[k]) cudaFree(c->d_slot[k]);
            c->h_slot[k] = c->d_slot[k] = NULL;
        }
        c->slot_bytes = bytes;
    }
    for (int k = 0; k < DR_CHUNK_SLOTS; ++k) {
        if (host_slots && !c->h_slot[k] && cudaMallocHost(&c->h_slot[k], c->slot_bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            c->h_slot[k] = NULL;
            dr_error("cannot allocate %zu bytes of pinned host memory for reading chunks", c->slot_bytes);
            return DR_ERR_RUNTIME;
        }
        if (device_slots && !c->d_slot[k]) DR_CHECK(dr_gpu_alloc(&c->d_slot[k], c->slot_bytes, "chunk buffers"));
    }
    if (device_slots && !c->d_partials) {
        DR_CHECK(dr_gpu_alloc((void **)&c->d_partials, chunks * sizeof(dr_partial_t), "chunk partials"));
        DR_CUDA_CHECK(cudaMallocHost((void **)&c->h_partials, chunks * sizeof(dr_partial_t)));
        DR_CHECK(dr_gpu_alloc((void **)&c->d_nans, chunks * sizeof(uint64_t), "chunk NaN counts"));
        DR_CUDA_CHECK(cudaMallocHost((void **)&c->h_nans, chunks * sizeof(uint64_t)));
    }
    return DR_OK;
}

static dr_status_t kernel_ms(dr_chunks_t *c, int k, double *sum)
{
    float ms = 0;
    DR_CUDA_CHECK(cudaEventSynchronize(c->reduced[k]));
    DR_CUDA_CHECK(cudaEventElapsedTime(&ms, c->kstart[k], c->reduced[k]));
    *sum += ms;
    return DR_OK;
}

/* Fold the n partials waiting in d_partials into *v (in chunk order; *v holds the fold of the earlier ones). */
static dr_status_t fold_partials(dr_gpu_t *g, dr_chunks_t *c, dr_acc_kind_t acc, dr_op_t op, uint64_t n,
                                 int *have, dr_partial_t *v, uint64_t *nans)
{
    if (n == 0) return DR_OK;
    DR_CUDA_CHECK(cudaMemcpyAsync(c->h_partials, c->d_partials, n * sizeof(dr_partial_t), cudaMemcpyDeviceToHost,
                                  g->stream));
    if (g->nan_omit)
        DR_CUDA_CHECK(cudaMemcpyAsync(c->h_nans, c->d_nans, n * sizeof(uint64_t), cudaMemcpyDeviceToHost, g->stream));
    DR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    for (uint64_t i = 0; i < n; ++i) {
        if (g->nan_omit) *nans += c->h_nans[i];
        if (*have) dr_partial_combine(acc, op, v, &c->h_partials[i]);
        else *v = c->h_partials[i];
        *have = 1;
    }
    return DR_OK;
}

dr_status_t dr_chunks_reduce_gpu(dr_gpu_t *g, dr_chunks_t *c, dr_kernel_t kernel, int block, dr_dtype_t dtype,
                                 dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, size_t slot_elems,
                                 int use_slots, uint64_t first, dr_chunk_source_fn src, void *state,
                                 dr_partial_t *out, dr_chunk_stats_t *st)
{
    const size_t esize = dr_dtype_size(dtype);
    memset(st, 0, sizeof *st);
    const double t0 = now_ms();
    DR_CHECK(ensure(c, slot_elems * esize, use_slots, 1, DR_CHUNK_PARTIALS));
    /* v: the fold of the partials already brought back; `waiting` more sit in d_partials. The fold runs in chunk
     * order whenever d_partials is full and at the end: the same bits for the same chunking, whatever the timing. */
    dr_partial_t v;
    memset(&v, 0, sizeof v);
    int have = 0, done = 0, pending[DR_CHUNK_SLOTS] = {0}; /* pending: slot k's kernel time not yet counted */
    uint64_t waiting = 0;
    for (uint64_t i = 0; !done; ++i) {
        const int k = (int)(i % DR_CHUNK_SLOTS);
        if (pending[k]) { /* the chunk three back: its copy and kernel must be done before the slot is reused */
            DR_CHECK(kernel_ms(c, k, &st->local_ms));
            pending[k] = 0;
        }
        const void *ptr = NULL;
        size_t elems = 0;
        const double r0 = now_ms();
        DR_CHECK(src(state, use_slots ? c->h_slot[k] : NULL, slot_elems, &ptr, &elems, &done));
        st->read_ms += now_ms() - r0;
        if (elems == 0) continue;
        if (waiting == DR_CHUNK_PARTIALS) {
            DR_CHECK(fold_partials(g, c, acc, op, waiting, &have, &v, &st->nan_count));
            waiting = 0;
        }
        DR_CUDA_CHECK(cudaStreamWaitEvent(g->copy_stream, c->reduced[k], 0));
        DR_CUDA_CHECK(cudaMemcpyAsync(c->d_slot[k], ptr, elems * esize, cudaMemcpyHostToDevice, g->copy_stream));
        DR_CUDA_CHECK(cudaEventRecord(c->copied[k], g->copy_stream));
        DR_CUDA_CHECK(cudaStreamWaitEvent(g->stream, c->copied[k], 0));
        DR_CHECK(dr_gpu_set_shape(g, kernel, block, dtype, op, acc, nan, c->d_slot[k], elems, first + st->elems, 0));
        g->req.d_result = c->d_partials + waiting;
        if (g->nan_omit) g->req.d_nan_count = c->d_nans + waiting;
        waiting++;
        DR_CUDA_CHECK(cudaEventRecord(c->kstart[k], g->stream));
        DR_CUDA_CHECK(dr_gpu_reduce(&g->req, &g->plan, g->stream, NULL));
        DR_CUDA_CHECK(cudaEventRecord(c->reduced[k], g->stream));
        pending[k] = 1;
        if (g->plan.serial_depth > st->depth) st->depth = g->plan.serial_depth;
        st->passes = g->plan.passes;
        st->chunks++;
        st->elems += elems;
    }
    for (int k = 0; k < DR_CHUNK_SLOTS; ++k)
        if (pending[k]) DR_CHECK(kernel_ms(c, k, &st->local_ms));
    g->req.d_result = g->partial_target;
    if (g->nan_omit) g->req.d_nan_count = (uint64_t *)g->partial_target - 1;
    DR_CHECK(fold_partials(g, c, acc, op, waiting, &have, &v, &st->nan_count));
    if (!have) dr_partial_identity(acc, op, &v); /* no elements on this rank */
    st->depth += st->chunks > 1 ? st->chunks - 1 : 0;
    st->pass_ms[0] = st->local_ms;
    if (st->passes == 0) st->passes = 1;
    *out = v;
    st->load_ms = now_ms() - t0;
    return DR_OK;
}

dr_status_t dr_chunks_reduce_cpu(dr_chunks_t *c, int nthreads, const dr_parallel_cpus_t *cpus, dr_dtype_t dtype,
                                 dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, size_t slot_elems,
                                 uint64_t first, dr_chunk_source_fn src, void *state, dr_partial_t *out,
                                 dr_chunk_stats_t *st)
{
    const size_t esize = dr_dtype_size(dtype);
    memset(st, 0, sizeof *st);
    const double t0 = now_ms();
    if (slot_elems * esize > c->slot_bytes || !c->h_slot[0]) {
        free(c->h_slot[0]);
        c->h_slot[0] = malloc(slot_elems * esize + 1);
        c->slot_bytes = c->h_slot[0] ? slot_elems * esize : 0;
        if (!c->h_slot[0]) {
            dr_error("cannot allocate %zu bytes of host memory for reading chunks", slot_elems * esize);
            return DR_ERR_RUNTIME;
        }
        c->host_malloced = 1;
    }
    dr_partial_identity(acc, op, out);
    uint64_t depth = 0;
    for (int done = 0; !done;) {
        const void *ptr = NULL;
        size_t elems = 0;
        const double r0 = now_ms();
        DR_CHECK(src(state, c->h_slot[0], slot_elems, &ptr, &elems, &done));
        const double r1 = now_ms();
        st->read_ms += r1 - r0;
        if (elems == 0) continue;
        uint64_t d = 0, nans = 0;
        DR_CHECK(dr_cpu_reduce_checked(dtype, op, acc, nan, ptr, elems, first + st->elems, nthreads, cpus,
                                       &c->cpu_chunk, &d, &nans));
        st->nan_count += nans;
        st->local_ms += now_ms() - r1;
        if (st->chunks == 0) *out = c->cpu_chunk;
        else dr_partial_combine(acc, op, out, &c->cpu_chunk);
        if (d > depth) depth = d;
        st->chunks++;
        st->elems += elems;
    }
    st->depth = depth + (st->chunks > 1 ? st->chunks - 1 : 0);
    st->passes = 1;
    st->pass_ms[0] = st->local_ms;
    st->load_ms = now_ms() - t0;
    return DR_OK;
}

void dr_chunks_free(dr_chunks_t *c)
{
    if (c->host_malloced) {
        free(c->h_slot[0]);
    } else {
        for (int k = 0; k < DR_CHUNK_SLOTS; ++k) {
            if (c->h_slot[k]) cudaFreeHost(c->h_slot[k]);
            if (c->d_slot[k]) cudaFree(c->d_slot[k]);
        }
        for (int k = 0; k < c->events_made; ++k) {
            cudaEventDestroy(c->copied[k]);
            cudaEventDestroy(c->reduced[k]);
            cudaEventDestroy(c->kstart[k]);
        }
    }
    if (c->d_partials) cudaFree(c->d_partials);
    if (c->h_partials) cudaFreeHost(c->h_partials);
    if (c->d_nans) cudaFree(c->d_nans);
    if (c->h_nans) cudaFreeHost(c->h_nans);
    memset(c, 0, sizeof *c);
}
