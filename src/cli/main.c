/* dreduce, the program: a client of libdreduce (include/dreduce.h). The pipeline of one run, in order: parse
 * options, pick the GPU early (CUDA-aware MPI wants it before MPI_Init), MPI_Init, check that every rank got the same
 * options, create the library context (node layout, GPU, binding), generate the shard, time the library's reduction
 * (local + combine) over the repetitions, verify against the host reference, gather and report. A distribution
 * (--op histogram, quantile, median) runs the same pipeline with its own repetitions (dreduce_histogram,
 * dreduce_quantile and their _file forms) and its own verification (reference.h, "Distributions"). Each phase ends with
 * a collective agreement on its status, so a failure on one rank ends every rank with a non-zero exit instead of a
 * hang; a failure inside the timed loop aborts the job after naming the rank. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "datagen.h"
#include "dreduce.h"
#include "fault.h"
#include "generate.h"
#include "options.h"
#include "reference.h"
#include "report.h"
#include "timing.h"

/* Abort the job from inside the timed loop, where the other ranks may be waiting in a collective. */
static void abort_job(dr_status_t s)
{
    dr_error("aborting the job");
    MPI_Abort(MPI_COMM_WORLD, (int)s);
    exit((int)s);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The key=value words where two canonical option lines differ: "a=1 b=2" then, after the NUL, "a=3 b=4". */
static void options_diff(const char *a, const char *b, char *out, size_t len)
{
    char left[512] = "", right[512] = "", wa[128], wb[128];
    const char *pa = a, *pb = b;
    int na, nb;
    while (sscanf(pa, "%127s%n", wa, &na) == 1 && sscanf(pb, "%127s%n", wb, &nb) == 1) {
        if (strcmp(wa, wb) != 0) {
            snprintf(left + strlen(left), sizeof left - strlen(left), "%s%s", left[0] ? " " : "", wa);
            snprintf(right + strlen(right), sizeof right - strlen(right), "%s%s", right[0] ? " " : "", wb);
        }
        pa += na;
        pb += nb;
    }
    snprintf(out, len / 2, "'%s'", left);
    snprintf(out + strlen(out) + 1, len - strlen(out) - 1, "'%s'", right);
}

/* All ranks must run the same reduction: compare a hash of the canonical options; on a mismatch rank 0 names the
 * first differing rank and both option lines. */
#define DR_CANONICAL_MAX 2048 /* the canonical line: every option, and an --input path of up to 1023 bytes */
static dr_status_t check_options_agree(const dr_options_t *o, int rank)
{
    char mine[DR_CANONICAL_MAX];
    dr_options_canonical(o, mine, sizeof mine);
    uint64_t h = fnv1a(mine), h0 = h;
    DR_MPI_CHECK(MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    int differ = h != h0 ? rank : 1 << 30, first = 0;
    DR_MPI_CHECK(MPI_Allreduce(&differ, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == 1 << 30) return DR_OK;
    if (rank == first) DR_MPI_CHECK(MPI_Send(mine, (int)sizeof mine, MPI_CHAR, 0, 7, MPI_COMM_WORLD));
    if (rank == 0) {
        char theirs[DR_CANONICAL_MAX];
        DR_MPI_CHECK(MPI_Recv(theirs, (int)sizeof theirs, MPI_CHAR, first, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        char diff[DR_CANONICAL_MAX];
        options_diff(mine, theirs, diff, sizeof diff);
        dr_error("options differ across ranks: rank 0 has %s but rank %d has %s (every rank must run the same "
                 "reduction)", diff, first, diff + strlen(diff) + 1);
    }
    return DR_ERR_USAGE;
}

/* The library's configuration from the command line. */
static void config_from_options(const dr_options_t *o, dreduce_config_t *cfg)
{
    dreduce_config_init(cfg);
    cfg->device = o->device;
    cfg->share_gpus = o->share_gpus;
    cfg->bind = o->bind;
    cfg->kernel = o->kernel;
    cfg->block = o->block;
    cfg->acc_mode = o->acc_mode;
    cfg->combine = o->combine;
    cfg->staging = o->staging;
    cfg->allreduce = o->allreduce;
    cfg->ranks_per_node = o->ranks_per_node;
    cfg->cpu_threads = o->threads;
    cfg->timeout = o->timeout;
    cfg->time_passes = 1; /* the report shows each kernel pass's time */
    cfg->nan = o->nan;
    cfg->host_path = o->host_path;
}

/* The shard: this rank's elements of the generated array, in GPU memory (generated there) or host memory. */
typedef struct {
    void *base; /* the allocation; the input starts opt->misalign elements in */
    void *in;
    int on_gpu;
    int pinned; /* host memory from cudaMallocHost (--memory pinned) */
} shard_t;

/* One run's state, shared by its steps (setup, repeat, verify, report). */
typedef struct {
    dr_options_t *o;
    int rank, nranks;
    dreduce_context_t *ctx;
    dreduce_context_info_t info;
    int from_file;
    dreduce_file_t file;
    dreduce_file_info_t file_info;
    FILE *out;             /* the report's destination (rank 0) */
    dr_acc_kind_t acc;
    uint64_t first, count; /* this rank's shard: global index of its first element, and its length */
    shard_t shard;
    double gen_ms;
    /* the repetitions */
    double *samples;       /* o->iters per level, then per pass */
    int passes, deterministic;
    dreduce_result_t result;
    uint64_t depth;        /* this rank's longest rounding path */
    uint64_t nan_omitted;  /* --nan omit: this rank's NaN left out (a distribution's: dist_info.local_nan_count) */
    int host_path, host_pinned; /* a host shard on a GPU: the path the last repetition took (dreduce_timings_t) */
    uint64_t host_cpu_elems;
    double measure_ms;     /* the host paths' measurement (in whichever call made it: the first) */
    /* the verification */
    dr_check_t check;      /* rank 0: the combined result against the merged reference */
    int any_local_bad;     /* some rank's own partial was wrong; a distribution: some rank's copy of the result */
    /* a distribution's result (o->dist.on): the last repetition's */
    uint64_t *counts;      /* histogram: bins counts, valid where dist_info.valid */
    double *edges;         /* histogram: bins + 1 edges */
    double values[DREDUCE_MAX_Q];
    dreduce_order_stat_t order[DREDUCE_MAX_Q];
    dreduce_dist_info_t dist_info;
} run_t;

/* The shard: this rank's elements of the generated array, made on its GPU (by the generator's kernel on the legacy
 * default stream, which the library's streams wait for) or in host memory by the CPU generator (the CPU backend,
 * and --memory pinned or pageable on a GPU rank). */
static dr_status_t make_shard(run_t *r)
{
    const dr_options_t *o = r->o;
    const size_t esize = dr_dtype_size(o->dtype);
    if (r->count > (SIZE_MAX - 64 - 16 * esize) / esize) {
        dr_error("%" PRIu64 " elements of %zu bytes do not fit in this process's address space", r->count, esize);
        return DR_ERR_USAGE;
    }
    const size_t bytes = (size_t)r->count * esize + (size_t)o->misalign * esize;
    shard_t *sh = &r->shard;
    if (r->info.gpu < 0 && (o->memory == DR_MEMORY_GPU || o->memory == DR_MEMORY_PINNED)) {
        dr_error("--memory %s needs a GPU, and this rank runs on the CPU backend (no GPU visible): use --memory "
                 "pageable or auto", dr_memory_name(o->memory));
        return DR_ERR_USAGE;
    }
    if (r->info.gpu >= 0 && (o->memory == DR_MEMORY_AUTO || o->memory == DR_MEMORY_GPU)) {
        sh->on_gpu = 1;
        DR_CUDA_CHECK(cudaSetDevice(r->info.gpu));
        const cudaError_t err = cudaMalloc(&sh->base, bytes ? bytes : 1);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            sh->base = NULL;
            dr_error("cannot allocate %zu bytes (%.2f GiB) of device memory for the input shard: %s", bytes,
                     (double)bytes / (1u << 30), cudaGetErrorString(err));
            return DR_ERR_RUNTIME;
        }
        sh->in = (char *)sh->base + (size_t)o->misalign * esize;
        cudaEvent_t ev[2];
        DR_CUDA_CHECK(cudaEventCreate(&ev[0]));
        DR_CUDA_CHECK(cudaEventCreate(&ev[1]));
        DR_CUDA_CHECK(cudaEventRecord(ev[0], 0));
        DR_CUDA_CHECK(dr_gpu_generate(&o->gen, r->first, sh->in, (size_t)r->count, 0));
        DR_CUDA_CHECK(cudaEventRecord(ev[1], 0));
        DR_CUDA_CHECK(cudaEventSynchronize(ev[1]));
        float ms = 0;
        DR_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
        cudaEventDestroy(ev[0]);
        cudaEventDestroy(ev[1]);
        r->gen_ms = ms;
        return DR_OK;
    }
    if (o->memory == DR_MEMORY_PINNED) {
        if (!dr_fault("alloc", r->rank) && cudaMallocHost(&sh->base, bytes ? bytes : 1) != cudaSuccess) {
            (void)cudaGetLastError();
            sh->base = NULL;
        }
        sh->pinned = sh->base != NULL;
    } else {
        sh->base = dr_fault("alloc", r->rank) ? NULL : aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    }
    if (!sh->base) {
        dr_error("cannot allocate %zu bytes (%.2f GiB) of %shost memory for the input shard", bytes,
                 (double)bytes / (1u << 30), o->memory == DR_MEMORY_PINNED ? "pinned " : "");
        return DR_ERR_RUNTIME;
    }
    sh->in = (char *)sh->base + (size_t)o->misalign * esize;
    double t0 = MPI_Wtime();
    dr_cpu_generate(&o->gen, r->first, sh->in, (size_t)r->count, r->info.threads);
    r->gen_ms = (MPI_Wtime() - t0) * 1e3;
    return DR_OK;
}

static void free_shard(shard_t *sh)
{
    if (sh->on_gpu && sh->base) cudaFree(sh->base);
    else if (sh->pinned) cudaFreeHost(sh->base);
    else free(sh->base);
    memset(sh, 0, sizeof *sh);
}

/* --input: open the file once before the repetitions (collective), so a bad file ends every rank with one line
 * and exit 2 before anything is timed; the file decides the count and (for .npy) the type, the library this rank's
 * share (the same one dreduce_reduce_file reads). */
static dr_status_t probe_input(run_t *r)
{
    dr_options_t *o = r->o;
    dreduce_file_init(&r->file, o->input);
    if (o->type_given) r->file.dtype = o->dtype;
    r->file.has_offset = o->offset_given;
    r->file.offset = o->input_offset;
    r->file.dataset = o->dataset[0] ? o->dataset : NULL;
    /* A distribution takes every type: DR_MIN is defined for each, so the file's type decides alone. */
    DR_CHECK(dreduce_file_inspect(r->ctx, &r->file, o->dist.on ? DR_MIN : o->op, &r->file_info));
    o->dtype = o->gen.dtype = r->file_info.dtype;
    o->n = r->file_info.count;
    return DR_OK;
}

/* Step 1, setup: the library context (node layout, GPU, binding; every rank agrees on its status), the input file's
 * layout, the report file (rank 0), the shard, the plan. On failure every rank returns the worst status, holding
 * nothing. */
static dr_status_t setup(run_t *r, int env_local, const char *env_source)
{
    dr_options_t *o = r->o;
    dreduce_config_t cfg;
    config_from_options(o, &cfg);
    DR_CHECK(dreduce_create(MPI_COMM_WORLD, &cfg, &r->ctx));
    dreduce_context_info(r->ctx, &r->info);
    dr_log_set_rank(r->info.rank, r->info.nranks, r->info.host); /* our own messages say where they come from */
    if (env_local >= 0 && env_local != r->info.host_local_rank)
        dr_warn("%s=%d but MPI places this rank %d on its host: using %d to choose the GPU", env_source, env_local,
                r->info.host_local_rank, r->info.host_local_rank);
    r->from_file = o->input[0] != '\0';
    dr_status_t s = r->from_file ? probe_input(r) : DR_OK;
    if (s != DR_OK) { /* dreduce_file_inspect: the same status on every rank */
        dreduce_destroy(r->ctx);
        return s;
    }
    r->out = stdout;
    if (r->rank == 0 && o->output[0]) {
        r->out = fopen(o->output, o->format == DR_FORMAT_CSV ? "a" : "w");
        if (!r->out) {
            dr_error("cannot write --output '%s': %s", o->output, strerror(errno));
            s = DR_ERR_USAGE;
        }
    }
    /* A distribution's result: uint64 counts, or float64 quantiles. */
    r->acc = !o->dist.on ? dr_acc_select(o->dtype, o->op, o->acc_mode)
             : o->dist.op == DR_DIST_HISTOGRAM ? DR_ACC_U64 : DR_ACC_F64;
    r->first = r->from_file ? r->file_info.first : 0;
    r->count = r->from_file ? r->file_info.mine : 0;
    if (s == DR_OK && !r->from_file && dreduce_shard(o->n, o->scaling, r->rank, r->nranks, &r->first, &r->count) != DR_OK) {
        if (r->rank == 0) /* every rank sees the same overflow: say it once */
            dr_error("--scaling weak with -n %" PRIu64 " on %d ranks makes more than 2^64 - 1 elements", o->n,
                     r->nranks);
        s = DR_ERR_USAGE;
    }
    r->gen_ms = NAN;
    if (s == DR_OK && !r->from_file) s = make_shard(r);
    if (s == DR_OK && o->dist.on && o->dist.op == DR_DIST_HISTOGRAM) {
        r->counts = malloc((size_t)o->dist.bins * sizeof *r->counts);
        r->edges = malloc(((size_t)o->dist.bins + 1) * sizeof *r->edges);
        if (!r->counts || !r->edges) {
            dr_error("cannot allocate the counts and edges of %u bins", o->dist.bins);
            s = DR_ERR_RUNTIME;
        }
    }
    s = dreduce_agree(r->ctx, s, "setup (every rank reporting its setup)");
    if (s == DR_OK && !r->from_file && !o->dist.on) s = dreduce_prepare(r->ctx, o->dtype, o->op, r->count);
    if (s != DR_OK) {
        /* Some rank failed to set up (it said why): release what this rank holds, and every rank exits. */
        free(r->counts);
        free(r->edges);
        free_shard(&r->shard);
        if (r->out && r->out != stdout) fclose(r->out);
        dreduce_destroy(r->ctx);
    }
    return s;
}

/* The same result, to the bit: the value (argmin/argmax: value and index), or every field of statistics. */
static int same_result(const dreduce_result_t *a, const dreduce_result_t *b, size_t acc_size)
{
    if (!dr_acc_kind_is_stats(a->kind)) return memcmp(&a->value, &b->value, acc_size) == 0;
    const dreduce_stats_t *x = &a->stats, *y = &b->stats;
    const double fx[] = {x->sum, x->mean, x->m2, x->var_pop, x->var_sample},
                 fy[] = {y->sum, y->mean, y->m2, y->var_pop, y->var_sample};
    return x->count == y->count && x->kind == y->kind && x->min.u64 == y->min.u64 && x->max.u64 == y->max.u64 &&
           memcmp(fx, fy, sizeof fx) == 0 && x->sum_is_int == y->sum_is_int && x->sum_int.lo == y->sum_int.lo &&
           x->sum_int.hi == y->sum_int.hi;
}

/* The repetitions' samples: o->iters per level, per kernel pass, then per distribution pass its local and its
 * combine time. */
#define DR_SAMPLE_ROWS (DR_LEVEL_COUNT + DREDUCE_MAX_PASSES + 2 * DREDUCE_DIST_MAX_PASSES)
static double *level_samples(const run_t *r, dr_level_t l) { return r->samples + (size_t)l * r->o->iters; }
static double *pass_samples(const run_t *r, int p) { return r->samples + (size_t)(DR_LEVEL_COUNT + p) * r->o->iters; }
static double *dist_samples(const run_t *r, int p, int combine)
{
    return r->samples + (size_t)(DR_LEVEL_COUNT + DREDUCE_MAX_PASSES + 2 * p + combine) * r->o->iters;
}

/* Step 2, the repetitions: each starts at a barrier, reduces through the library and keeps its timings; every
 * repetition's result must be the same bits. A failure here aborts the job, naming this rank. */
static void repeat(run_t *r)
{
    const dr_options_t *o = r->o;
    r->samples = calloc((size_t)o->iters * DR_SAMPLE_ROWS, sizeof *r->samples);
    if (!r->samples) abort_job(DR_ERR_RUNTIME);
    dreduce_result_t first_result;
    memset(&r->result, 0, sizeof r->result);
    memset(&first_result, 0, sizeof first_result);
    const size_t acc_size = dr_acc_kind_size(dr_acc_result_kind(r->acc)); /* what a caller reads */
    r->deterministic = 1;
    r->passes = 1;
    dreduce_timings_t tm;
    memset(&tm, 0, sizeof tm);
    for (int it = 0; it < o->warmup + o->iters; ++it) {
        if (dreduce_barrier(r->ctx, "start (the barrier that begins a repetition)") != DR_OK)
            abort_job(DR_ERR_RUNTIME);
        const dr_status_t s =
            r->from_file ? dreduce_reduce_file(r->ctx, &r->file, o->op, &r->result, NULL)
                         : dreduce_reduce_at(r->ctx, r->shard.in, r->count, r->first, o->dtype, o->op, &r->result);
        if (s != DR_OK) abort_job(s);
        dreduce_timings(r->ctx, &tm);
        if (tm.measure_ms > r->measure_ms) r->measure_ms = tm.measure_ms;
        if (r->result.valid) {
            if (it == 0) first_result = r->result;
            else if (!same_result(&r->result, &first_result, acc_size)) r->deterministic = 0;
        }
        if (it < o->warmup) continue;
        const int k = it - o->warmup;
        r->passes = tm.passes;
        for (int p = 0; p < r->passes; ++p) pass_samples(r, p)[k] = tm.pass_ms[p];
        const struct {
            dr_level_t level;
            double ms;
        } got[] = {{DR_LEVEL_LOCAL, tm.local_ms},   {DR_LEVEL_STAGE, tm.stage_ms}, {DR_LEVEL_NODE, tm.node_ms},
                   {DR_LEVEL_GLOBAL, tm.global_ms}, {DR_LEVEL_BCAST, tm.bcast_ms}, {DR_LEVEL_TOTAL, tm.total_ms},
                   {DR_LEVEL_READ, tm.read_ms},     {DR_LEVEL_LOAD, tm.load_ms},   {DR_LEVEL_LAUNCH, tm.launch_ms},
                   {DR_LEVEL_WAIT, tm.wait_ms},     {DR_LEVEL_LOAD_CPU, tm.host_cpu_ms},
                   {DR_LEVEL_LOAD_GPU, tm.host_gpu_ms}};
        for (size_t i = 0; i < sizeof got / sizeof got[0]; ++i) level_samples(r, got[i].level)[k] = got[i].ms;
    }
    r->depth = tm.depth;
    r->nan_omitted = tm.nan_count;
    r->host_path = tm.host_path;
    r->host_pinned = tm.host_pinned;
    r->host_cpu_elems = tm.host_cpu_elems;
}

/* ---- Distributions (--op histogram, quantile, median) ---- */

/* One call of the library: this rank's shard or its share of the file. */
static dr_status_t dist_call(run_t *r, dreduce_dist_info_t *info)
{
    const dr_options_t *o = r->o;
    const dr_dist_options_t *d = &o->dist;
    const double *range = d->has_range ? d->range : NULL;
    if (d->op == DR_DIST_HISTOGRAM)
        return r->from_file ? dreduce_histogram_file(r->ctx, &r->file, d->bins, range, r->counts, r->edges, info, NULL)
                            : dreduce_histogram(r->ctx, r->shard.in, r->count, o->dtype, d->bins, range, r->counts,
                                                r->edges, info);
    return r->from_file ? dreduce_quantile_file(r->ctx, &r->file, d->nq, d->q, r->values, r->order, info, NULL)
                        : dreduce_quantile(r->ctx, r->shard.in, r->count, o->dtype, d->nq, d->q, r->values, r->order,
                                           info);
}

static uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* A digest of a result where it is valid, field by field (no padding): repetitions must give the same. */
static uint64_t dist_digest(const run_t *r, const dreduce_dist_info_t *info)
{
    const dr_dist_options_t *d = &r->o->dist;
    uint64_t h = 0xcbf29ce484222325ull;
    const uint64_t head[4] = {info->count, info->nan_count, info->below, info->above};
    h = fnv_bytes(h, head, sizeof head);
    if (d->op == DR_DIST_HISTOGRAM) {
        h = fnv_bytes(h, r->counts, (size_t)d->bins * sizeof *r->counts);
        return fnv_bytes(h, r->edges, ((size_t)d->bins + 1) * sizeof *r->edges);
    }
    h = fnv_bytes(h, r->values, d->nq * sizeof *r->values);
    for (size_t i = 0; i < d->nq; ++i) {
        const dreduce_order_stat_t *s = &r->order[i];
        const uint64_t f[5] = {(uint64_t)s->kind, s->lower.u64, s->upper.u64, s->lower_rank, s->upper_rank};
        h = fnv_bytes(fnv_bytes(h, f, sizeof f), &s->gamma, sizeof s->gamma);
    }
    return h;
}

/* Step 2 for a distribution: the repetitions, each from a barrier, their per-pass times kept; every repetition's
 * result must be the same. The first call's failure is the data's or the arguments' (the library refuses an
 * automatic range over NaN or inf, a quantile of no element, ... with one line), so every rank returns it, with the
 * worst status of any rank; a failure later aborts the job as a reduction's does. */
static dr_status_t repeat_dist(run_t *r)
{
    const dr_options_t *o = r->o;
    r->samples = calloc((size_t)o->iters * DR_SAMPLE_ROWS, sizeof *r->samples);
    if (!r->samples) abort_job(DR_ERR_RUNTIME);
    for (int l = 0; l < DR_LEVEL_COUNT; ++l)
        for (int k = 0; k < o->iters; ++k) level_samples(r, (dr_level_t)l)[k] = NAN;
    r->deterministic = 1;
    r->passes = 0; /* no kernel passes of a reduction: the distribution's passes are its own rows */
    uint64_t first_digest = 0;
    int have_first = 0;
    for (int it = 0; it < o->warmup + o->iters; ++it) {
        if (dreduce_barrier(r->ctx, "start (the barrier that begins a repetition)") != DR_OK)
            abort_job(DR_ERR_RUNTIME);
        dreduce_dist_info_t info;
        dr_status_t s = dist_call(r, &info);
        if (it == 0) {
            s = dreduce_agree(r->ctx, s, "the first call (every rank's status)");
            if (s != DR_OK) return s;
        } else if (s != DR_OK) {
            abort_job(s);
        }
        r->dist_info = info;
        if (info.valid) {
            const uint64_t h = dist_digest(r, &info);
            if (!have_first) first_digest = h, have_first = 1;
            else if (h != first_digest) r->deterministic = 0;
        }
        if (it < o->warmup) continue;
        const int k = it - o->warmup;
        const int passes = info.passes < DREDUCE_DIST_MAX_PASSES ? info.passes : DREDUCE_DIST_MAX_PASSES;
        double local = 0, combine = 0;
        for (int p = 0; p < passes; ++p) {
            dist_samples(r, p, 0)[k] = info.pass_local_ms[p];
            dist_samples(r, p, 1)[k] = info.pass_combine_ms[p];
            local += info.pass_local_ms[p];
            combine += info.pass_combine_ms[p];
        }
        level_samples(r, DR_LEVEL_LOCAL)[k] = local;
        level_samples(r, DR_LEVEL_COMBINE)[k] = combine;
        level_samples(r, DR_LEVEL_TOTAL)[k] = info.total_ms;
    }
    return DR_OK;
}

/* This rank's elements to fn: generated again, or its share of the file read back (dreduce_file_scan). */
typedef void (*dist_feed_fn)(const dr_ref_elements_t *e, void *user);
typedef struct {
    dist_feed_fn fn;
    void *user;
    dr_dtype_t dtype;
} dist_chunks_t;

static void dist_chunk(const void *chunk, uint64_t count, uint64_t first, void *user)
{
    const dist_chunks_t *c = user;
    const dr_ref_elements_t e = {NULL, chunk, c->dtype, first, count};
    c->fn(&e, c->user);
}

static dr_status_t feed_dist(const run_t *r, dist_feed_fn fn, void *user)
{
    const dr_options_t *o = r->o;
    if (!r->from_file) {
        const dr_ref_elements_t e = {&o->gen, NULL, o->dtype, r->first, r->count};
        fn(&e, user);
        return DR_OK;
    }
    dist_chunks_t c = {fn, user, o->dtype};
    return dreduce_file_scan(r->ctx, &r->file, DR_MIN, (size_t)16 << 20, dist_chunk, &c);
}

typedef struct {
    const double *edges;
    uint32_t bins;
    int threads;
    uint64_t *counts;
    dr_scalar_t minmax[2];
} hist_feed_t;

static void hist_feed(const dr_ref_elements_t *e, void *user)
{
    hist_feed_t *h = user;
    dr_reference_hist_add(e, h->edges, h->bins, h->threads, h->counts, h->minmax);
}

typedef struct {
    const dr_scalar_t *w;
    size_t k;
    int threads;
    uint64_t *counts;
} rank_feed_t;

static void rank_feed(const dr_ref_elements_t *e, void *user)
{
    rank_feed_t *f = user;
    dr_reference_rank_add(e, f->w, f->k, f->threads, f->counts);
}

static MPI_Datatype order_mpi_type(dr_dtype_t t)
{
    const dr_acc_kind_t k = dr_reference_order_kind(t);
    return k == DR_ACC_I64 ? MPI_INT64_T : k == DR_ACC_U64 ? MPI_UINT64_T : MPI_DOUBLE;
}

/* A histogram: rank 0's edges to every rank, each rank's own counts over them (reference.h, "Distributions") summed
 * onto rank 0, which checks. With --allreduce every rank holds the result: each checks its own against the sums
 * (an MPI_Allreduce), and a rank whose copy differs says so. */
static void verify_hist(run_t *r)
{
    const dr_options_t *o = r->o;
    const uint32_t bins = o->dist.bins;
    const size_t words = DR_REF_HIST_WORDS(bins);
    const int everyone = o->allreduce, checks = everyone || r->rank == 0;
    double *edges = malloc(((size_t)bins + 1) * sizeof *edges);
    uint64_t *mine = calloc(words, sizeof *mine), *sum = checks ? calloc(words, sizeof *sum) : NULL;
    if (!edges || !mine || (checks && !sum)) abort_job(DR_ERR_RUNTIME);
    int valid = r->dist_info.valid;
    dreduce_watch_begin(r->ctx, "verify (rank 0's histogram edges to every rank)");
    if (r->rank == 0) memcpy(edges, r->edges, ((size_t)bins + 1) * sizeof *edges);
    if (MPI_Bcast(&valid, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Bcast(edges, (int)bins + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    hist_feed_t feed = {edges, bins, r->info.threads, mine, {{0}, {0}}};
    dr_reference_minmax_init(o->dtype, feed.minmax);
    if (valid && feed_dist(r, hist_feed, &feed) != DR_OK) abort_job(DR_ERR_RUNTIME);
    dr_scalar_t minmax[2] = {feed.minmax[0], feed.minmax[1]};
    const MPI_Datatype mt = order_mpi_type(o->dtype);
    dreduce_watch_begin(r->ctx, "verify (summing the ranks' histogram counts)");
    const MPI_Op ops[3] = {MPI_SUM, MPI_MIN, MPI_MAX};
    void *const in[3] = {mine, &feed.minmax[0], &feed.minmax[1]}, *const out[3] = {sum, &minmax[0], &minmax[1]};
    for (int i = 0; i < 3; ++i) {
        const int n = i == 0 ? (int)words : 1;
        const MPI_Datatype t = i == 0 ? MPI_UINT64_T : mt;
        if ((everyone ? MPI_Allreduce(in[i], out[i], n, t, ops[i], MPI_COMM_WORLD)
                      : MPI_Reduce(in[i], out[i], n, t, ops[i], 0, MPI_COMM_WORLD)) != MPI_SUCCESS)
            abort_job(DR_ERR_RUNTIME);
    }
    dreduce_watch_end(r->ctx);
    int bad = 0;
    if (checks) {
        dr_check_t c;
        dr_reference_check_hist(o->dtype, bins, o->dist.has_range ? o->dist.range : NULL, r->counts, r->edges,
                                &r->dist_info, sum, minmax, &c);
        if (r->rank == 0) r->check = c;
        else if (!c.pass || memcmp(edges, r->edges, ((size_t)bins + 1) * sizeof *edges) != 0) {
            dr_error("verification failed for this rank's copy of the --allreduce histogram: %s",
                     c.pass ? "its edges differ from rank 0's" : c.detail);
            bad = 1;
        }
    }
    dreduce_watch_begin(r->ctx, "verify (gathering the ranks' checks)");
    if (MPI_Allreduce(&bad, &r->any_local_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    free(edges);
    free(mine);
    free(sum);
}

/* Quantiles (every rank's result): rank 0's to every rank, each rank's own bit for bit the same (else it says so);
 * each rank counts its elements below and at or below each of rank 0's order statistics, summed onto rank 0,
 * which checks (reference.h, "Distributions"). */
static void verify_quantile(run_t *r)
{
    const dr_options_t *o = r->o;
    const size_t nq = o->dist.nq;
    struct {
        dreduce_dist_info_t info;
        double values[DREDUCE_MAX_Q];
        dreduce_order_stat_t order[DREDUCE_MAX_Q];
    } root;
    memset(&root, 0, sizeof root);
    root.info = r->dist_info;
    memcpy(root.values, r->values, nq * sizeof *r->values);
    memcpy(root.order, r->order, nq * sizeof *r->order);
    dreduce_watch_begin(r->ctx, "verify (rank 0's quantiles to every rank)");
    if (MPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    int bad = 0;
    for (size_t i = 0; i < nq && r->rank != 0; ++i) {
        const dreduce_order_stat_t *a = &r->order[i], *b = &root.order[i];
        if (memcmp(&r->values[i], &root.values[i], sizeof root.values[i]) != 0 || a->kind != b->kind ||
            a->lower.u64 != b->lower.u64 || a->upper.u64 != b->upper.u64 || a->lower_rank != b->lower_rank ||
            a->upper_rank != b->upper_rank || memcmp(&a->gamma, &b->gamma, sizeof a->gamma) != 0) {
            dr_error("verification failed for this rank's quantile %.17g: %.17g, rank 0 has %.17g (every rank gets "
                     "the same result)", o->dist.q[i], r->values[i], root.values[i]);
            bad = 1;
            break;
        }
    }
    dr_scalar_t stats[2 * DREDUCE_MAX_Q], w[2 * DREDUCE_MAX_Q];
    for (size_t i = 0; i < nq; ++i) stats[2 * i] = root.order[i].lower, stats[2 * i + 1] = root.order[i].upper;
    /* With NaN in the array every result is NaN: only the elements and the NaN are counted. */
    const int omit = o->nan == DR_NAN_OMIT;
    const size_t k = root.info.nan_count && !omit ? 0 : dr_reference_distinct(o->dtype, stats, 2 * nq, w);
    const size_t words = DR_REF_RANK_WORDS(k);
    uint64_t mine[DR_REF_RANK_WORDS(2 * DREDUCE_MAX_Q)], sum[DR_REF_RANK_WORDS(2 * DREDUCE_MAX_Q)];
    memset(mine, 0, sizeof mine);
    memset(sum, 0, sizeof sum);
    rank_feed_t feed = {w, k, r->info.threads, mine};
    if (feed_dist(r, rank_feed, &feed) != DR_OK) abort_job(DR_ERR_RUNTIME);
    dreduce_watch_begin(r->ctx, "verify (summing the ranks' counts below the order statistics)");
    if (MPI_Reduce(mine, sum, (int)words, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&bad, &r->any_local_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    if (r->rank == 0)
        dr_reference_check_quantile(o->dtype, nq, o->dist.q, r->values, r->order, &r->dist_info, w, k, sum, omit,
                                    &r->check);
}

/* Step 3 for a distribution. */
static void verify_dist(run_t *r)
{
    memset(&r->check, 0, sizeof r->check);
    r->any_local_bad = 0;
    if (!r->o->verify) return;
    if (r->o->dist.op == DR_DIST_HISTOGRAM) verify_hist(r);
    else verify_quantile(r);
}

/* A file's chunks into the reference (dreduce_file_scan's callback). */
typedef struct {
    dr_reference_t *ref;
    dr_dtype_t dtype;
    int threads;
} ref_feed_t;

static void feed_chunk(const void *chunk, uint64_t count, uint64_t first, void *user)
{
    const ref_feed_t *f = user;
    dr_reference_add(f->ref, f->dtype, chunk, (size_t)count, first, f->threads);
}

/* This rank's elements into its reference (start 1: a fresh one; 0: a stats reference's pass 2), generated again
 * or read again from the file. */
static dr_status_t feed_reference(const run_t *r, dr_reference_t *ref, int start)
{
    const dr_options_t *o = r->o;
    if (r->from_file) {
        if (start) {
            dr_reference_init(ref, r->acc, o->op);
            dr_reference_set_nan(ref, o->nan);
        }
        ref_feed_t feed = {ref, o->dtype, r->info.threads};
        return dreduce_file_scan(r->ctx, &r->file, o->op, (size_t)16 << 20, feed_chunk, &feed);
    }
    if (start) dr_reference_compute_nan(&o->gen, r->acc, o->nan, r->first, r->count, r->info.threads, ref);
    else dr_reference_generate(&o->gen, r->first, r->count, r->info.threads, ref);
    return DR_OK;
}

/* A result against its reference. Whether it has a value is checked too, by the rule the header states for
 * dreduce_result_t.no_value, independently of the library's: min, max, the bitwise ops, argmin and argmax of an
 * array with no element have none, every other result has one. */
static void check_result(const dr_reference_t *ref, const dreduce_result_t *res, uint64_t depth, int whole,
                         dr_check_t *out)
{
    const dr_op_t op = ref->op;
    /* NaN policy OMIT, an array of NaN only (the whole array's result; a rank's own partial holds the identity):
     * min and max are NaN, argmin and argmax have no value (accum.h, "NaN policy"). The stats reference's count
     * excludes the NaN already. */
    const int all_nan = whole && ref->omit && ref->count > 0 && ref->nan_left == ref->count &&
                        !dr_acc_kind_is_stats(ref->acc);
    const int want_none = (ref->count == 0 && (op == DR_MIN || op == DR_MAX || op == DR_BAND || op == DR_BOR ||
                                               op == DR_BXOR || op == DR_ARGMIN || op == DR_ARGMAX)) ||
                          (all_nan && dr_op_is_arg(op));
    if (whole && ref->omit && res->nan_count != ref->nan_left) {
        memset(out, 0, sizeof *out);
        out->expected = out->error = out->bound = NAN;
        snprintf(out->detail, sizeof out->detail, "%s: %" PRIu64 " NaN left out, expected %" PRIu64,
                 dreduce_op_name(op), res->nan_count, ref->nan_left);
        return;
    }
    if (all_nan && dr_op_is_arg(op)) {
        memset(out, 0, sizeof *out);
        out->expected = out->error = out->bound = NAN;
        out->exact = 1;
        out->pass = res->no_value != 0;
        snprintf(out->detail, sizeof out->detail, "%s of %" PRIu64 " NaN (omitted): %s, as np.nan%s raises%s",
                 dreduce_op_name(op), ref->count, res->no_value ? "no value" : "a value", dreduce_op_name(op),
                 out->pass ? "" : " FAILED");
        return;
    }
    if (all_nan && (op == DR_MIN || op == DR_MAX)) {
        memset(out, 0, sizeof *out);
        const double got = dreduce_result_double(res);
        out->expected = NAN;
        out->error = out->bound = 0;
        out->exact = 1;
        out->pass = isnan(got) && !res->no_value;
        snprintf(out->detail, sizeof out->detail, "%s of %" PRIu64 " NaN (omitted): %g, expected nan (np.nan%s)%s",
                 dreduce_op_name(op), ref->count, got, dreduce_op_name(op), out->pass ? "" : " FAILED");
        return;
    }
    if (want_none != (res->no_value != 0)) {
        memset(out, 0, sizeof *out);
        out->expected = out->error = out->bound = NAN;
        snprintf(out->detail, sizeof out->detail, "%s of %" PRIu64 " elements: no_value is %d, expected %d",
                 dreduce_op_name(op), ref->count, res->no_value, want_none);
        return;
    }
    if (dr_acc_kind_is_stats(ref->acc)) dr_reference_check_stats(ref, &res->stats, depth, out);
    else dr_reference_check(ref, &res->value, depth, out);
    if (want_none && out->pass && !dr_op_is_arg(op))
        snprintf(out->detail, sizeof out->detail, "%s of no elements: none, as expected", dreduce_op_name(op));
}

/* Step 3, verification: each rank checks its own partial against the reference of its shard (so a wrong result
 * names the rank and level that made it), then rank 0 checks the combined result against the merged references. */
static void verify(run_t *r)
{
    const dr_options_t *o = r->o;
    memset(&r->check, 0, sizeof r->check);
    r->any_local_bad = 0;
    uint64_t max_depth = r->depth;
    if (MPI_Allreduce(&r->depth, &max_depth, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        abort_job(DR_ERR_RUNTIME);
    if (!o->verify) return;
    dr_reference_t ref, *refs = NULL;
    if (feed_reference(r, &ref, 1) != DR_OK) abort_job(DR_ERR_RUNTIME);
    if (r->rank == 0 && !(refs = malloc((size_t)r->nranks * sizeof *refs))) abort_job(DR_ERR_RUNTIME);
    if (dr_reference_needs_pass2(&ref)) {
        /* stats: m2 is checked against sum (x - mean)^2 about the whole array's exact mean, so the ranks' pass-1
         * references meet on rank 0 first, and every rank then sums about that mean (its pass 2). */
        double center[2] = {0.0, 0.0};
        dreduce_watch_begin(r->ctx, "verify (gathering the references' first pass)");
        if (MPI_Gather(&ref, (int)sizeof ref, MPI_BYTE, refs, (int)sizeof ref, MPI_BYTE, 0, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            abort_job(DR_ERR_RUNTIME);
        if (r->rank == 0) {
            dr_reference_t whole = refs[0];
            for (int i = 1; i < r->nranks; ++i) dr_reference_merge(&whole, &refs[i]);
            dr_reference_stats_center(&whole, center);
        }
        if (MPI_Bcast(center, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) abort_job(DR_ERR_RUNTIME);
        dreduce_watch_end(r->ctx);
        dr_reference_begin_pass2(&ref, center);
        if (feed_reference(r, &ref, 0) != DR_OK) abort_job(DR_ERR_RUNTIME);
    }
    dreduce_result_t partial;
    dr_check_t local_check;
    if (dreduce_local_partial(r->ctx, &partial) != DR_OK) abort_job(DR_ERR_RUNTIME);
    check_result(&ref, &partial, r->depth, 0, &local_check);
    int local_bad = 0;
    if (!local_check.pass) {
        local_bad = 1;
        dr_error("verification failed at level local (this rank's shard, elements %" PRIu64 "..%" PRIu64 "): %s",
                 r->first, r->first + r->count, local_check.detail);
    }
    dreduce_watch_begin(r->ctx, "verify (gathering the ranks' checks)");
    if (MPI_Allreduce(&local_bad, &r->any_local_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    dreduce_watch_begin(r->ctx, "verify (gathering the references)");
    if (MPI_Gather(&ref, (int)sizeof ref, MPI_BYTE, refs, (int)sizeof ref, MPI_BYTE, 0, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
        abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    if (r->rank == 0) {
        dr_reference_t total = refs[0];
        for (int i = 1; i < r->nranks; ++i) dr_reference_merge(&total, &refs[i]);
        /* The combine adds at most one rounding (or merge) per rank (a linear chain, whatever algorithm MPI picks). */
        const uint64_t total_depth = max_depth + (uint64_t)r->nranks;
        check_result(&total, &r->result, total_depth, 1, &r->check);
        free(refs);
    }
}

static void first_line(char *s)
{
    char *nl = strchr(s, '\n');
    if (nl) *nl = '\0';
}

/* This rank's record for the report: where it ran, its shard, the medians of its levels and passes. */
static void make_record(const run_t *r, dr_rank_record_t *rec)
{
    const dr_options_t *o = r->o;
    memset(rec, 0, sizeof *rec);
    rec->rank = r->rank;
    rec->node = r->info.node;
    rec->local_rank = r->info.local_rank;
    rec->is_gpu = r->info.gpu >= 0;
    rec->block = r->info.block;
    rec->passes = r->passes;
    snprintf(rec->host, sizeof rec->host, "%s", r->info.host);
    snprintf(rec->node_name, sizeof rec->node_name, "%s", r->info.node_name);
    snprintf(rec->device_name, sizeof rec->device_name, "%s", r->info.device_name);
    rec->first = r->first;
    rec->count = r->count;
    rec->depth = r->depth;
    rec->nan_omitted = o->nan != DR_NAN_OMIT ? 0 : o->dist.on ? r->dist_info.local_nan_count : r->nan_omitted;
    rec->generate_ms = r->gen_ms;
    for (int p = 0; p < DREDUCE_MAX_PASSES; ++p)
        rec->pass_ms[p] = p < r->passes ? dr_median(pass_samples(r, p), o->iters) : NAN;
    for (int l = 0; l < DR_LEVEL_COUNT; ++l) rec->level_ms[l] = dr_median(level_samples(r, (dr_level_t)l), o->iters);
    if (!o->dist.on) rec->level_ms[DR_LEVEL_COMBINE] = NAN; /* a distribution's level */
    if (o->dist.on) {
        const int passes = r->dist_info.passes;
        rec->dist_passes = passes < DREDUCE_DIST_MAX_PASSES ? passes : DREDUCE_DIST_MAX_PASSES;
        for (int p = 0; p < rec->dist_passes; ++p) {
            rec->dist_local_ms[p] = dr_median(dist_samples(r, p, 0), o->iters);
            rec->dist_combine_ms[p] = dr_median(dist_samples(r, p, 1), o->iters);
        }
    }
    rec->binding = r->info;
    rec->host_path = r->host_path;
    rec->host_pinned = r->host_pinned;
    rec->host_cpu_elems = r->host_cpu_elems;
    rec->measure_ms = r->measure_ms;
    if (r->host_path >= 0 &&
        dreduce_host_rates(r->ctx, r->host_pinned, o->dtype, o->op, &rec->rates) != DR_OK)
        memset(&rec->rates, 0, sizeof rec->rates);
}

/* Step 4, the report: the ranks' records gathered on rank 0, written in the chosen format, and the verdict (the
 * checks, then determinism) sent to every rank as the run's status. */
static dr_status_t report(run_t *r)
{
    const dr_options_t *o = r->o;
    dr_rank_record_t rec, *recs = NULL;
    make_record(r, &rec);
    if (r->rank == 0 && !(recs = calloc((size_t)r->nranks, sizeof *recs))) abort_job(DR_ERR_RUNTIME);
    dreduce_watch_begin(r->ctx, "report (gathering the ranks' records)");
    if (MPI_Gather(&rec, (int)sizeof rec, MPI_BYTE, recs, (int)sizeof rec, MPI_BYTE, 0, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
        abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    int verdict = DR_OK;
    if (r->rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        first_line(lib);
        dreduce_context_info_t *where = malloc((size_t)r->nranks * sizeof *where);
        int *shared = malloc((size_t)r->nranks * sizeof *shared);
        if (!where || !shared) abort_job(DR_ERR_RUNTIME);
        for (int i = 0; i < r->nranks; ++i) where[i] = recs[i].binding;
        dr_report_mark_shared(where, r->nranks, shared);
        for (int i = 0; i < r->nranks; ++i) recs[i].shared_gpu = shared[i];
        free(where);
        free(shared);
        dr_report_t rep = {
            .opt = o, .nranks = r->nranks, .nnodes = r->info.nnodes, .emulated = r->info.emulated,
            .n_total = o->scaling == DR_SCALING_WEAK ? o->n * (uint64_t)r->nranks : o->n, .acc = r->acc,
            .path_text = dreduce_combine_path(r->ctx), .path_us = {NAN, NAN}, .mpi_library = lib,
            .result = r->result.value, .no_value = r->result.no_value, .stats = r->result.stats,
            .counts = r->counts, .edges = r->edges, .values = r->values, .order = r->order,
            .dist_info = r->dist_info,
            .nan_omitted = o->nan != DR_NAN_OMIT ? 0 : o->dist.on ? r->dist_info.nan_count : r->result.nan_count,
            .deterministic = r->deterministic,
            .check = r->check, .ranks = recs,
        };
        dreduce_combine_costs(r->ctx, &rep.path_us[0], &rep.path_us[1]);
        if (dr_report_write(&rep, r->out) != 0 || (r->out != stdout && fclose(r->out) != 0)) {
            dr_error("writing the report to '%s' failed: %s", o->output[0] ? o->output : "stdout", strerror(errno));
            verdict = DR_ERR_RUNTIME;
        }
        fflush(stdout);
        if (r->any_local_bad && o->dist.on) {
            dr_error("verification failed on at least one rank's copy of the result (named above); rank 0's is %s",
                     o->verify && r->check.pass ? "right" : "wrong too");
            verdict = DR_ERR_VERIFY;
        } else if (o->verify && !r->check.pass && o->dist.on) {
            dr_error("verification failed: %s", r->check.detail);
            verdict = DR_ERR_VERIFY;
        } else if (r->any_local_bad) {
            dr_error("verification failed at level local on at least one rank (named above); the combined result "
                     "is %s", o->verify && r->check.pass ? "right all the same" : "wrong too");
            verdict = DR_ERR_VERIFY;
        } else if (o->verify && !r->check.pass) {
            dr_error("verification failed at level %s: every rank's partial was right, the combined result is not: "
                     "%s", o->combine == DR_COMBINE_FLAT ? "global" : "node or global", r->check.detail);
            verdict = DR_ERR_VERIFY;
        } else if (!r->deterministic) {
            dr_error("repetitions of the same reduction gave different results (a race?)");
            verdict = DR_ERR_VERIFY;
        }
        free(recs);
    }
    dreduce_watch_begin(r->ctx, "report (the verdict from rank 0)");
    if (MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) abort_job(DR_ERR_RUNTIME);
    dreduce_watch_end(r->ctx);
    return (dr_status_t)verdict;
}

static int gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver / no device: clear the sticky error */
        return 0;
    }
    return n;
}

static int env_world_rank(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return 0;
}

/* One run: the options agreed, then setup, repetitions, verification and report. */
static dr_status_t run(dr_options_t *o, dr_parse_result_t parsed, const char *parse_err, int env_local,
                       const char *env_source)
{
    run_t r;
    memset(&r, 0, sizeof r);
    r.host_path = r.host_pinned = -1; /* set by a reduction of a host shard on a GPU */
    r.o = o;
    DR_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r.rank));
    DR_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &r.nranks));

    /* The options: the lowest failing rank reports its parse error; everyone exits 2. */
    int bad = parsed == DR_PARSE_ERROR ? r.rank : 1 << 30, first_bad = 0;
    DR_MPI_CHECK(MPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first_bad != 1 << 30) {
        if (r.rank == first_bad) dr_error("%s", parse_err);
        return DR_ERR_USAGE;
    }
    DR_CHECK(check_options_agree(o, r.rank));

    DR_CHECK(setup(&r, env_local, env_source));
    dr_status_t verdict = DR_OK;
    if (o->dist.on) {
        verdict = repeat_dist(&r);
        if (verdict == DR_OK) verify_dist(&r);
    } else {
        repeat(&r);
        verify(&r);
    }
    if (verdict == DR_OK) verdict = report(&r);
    else if (r.out && r.out != stdout) fclose(r.out);
    free(r.samples);
    free(r.counts);
    free(r.edges);
    free_shard(&r.shard);
    dreduce_destroy(r.ctx);
    return verdict;
}

/* MPI_Finalize under the --timeout. When the program finalizes, the run is over and its status known, but
 * MPI_Finalize can still block (once in CI, an Open MPI 4.1 singleton under ASan printed its usage error and then
 * did not exit within the test's 60 s; the cause is unknown), and nothing may hang. So an alarm armed around it
 * writes one warning and exits with the run's status; the message is formatted beforehand, as a signal handler may
 * only write and _exit. SIGALRM is unblocked for it, in case the launcher started the process with it blocked. */
static char finalize_msg[192];
static size_t finalize_msg_len;
static volatile sig_atomic_t finalize_status;

static void finalize_overdue(int sig)
{
    (void)sig;
    const ssize_t w = write(STDERR_FILENO, finalize_msg, finalize_msg_len);
    (void)w;
    _exit(finalize_status);
}

static void finalize_within(double timeout_s, dr_status_t s)
{
    unsigned seconds = 0; /* alarm()'s whole seconds, rounded up; 0: no alarm */
    if (timeout_s > 0) {
        seconds = (unsigned)timeout_s;
        if (seconds < timeout_s) ++seconds;
        int rank = 0, nranks = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        char who[32] = "";
        if (nranks > 1) snprintf(who, sizeof who, "rank %d: ", rank);
        const int n = snprintf(finalize_msg, sizeof finalize_msg,
                               "dreduce: warning: %sMPI_Finalize did not return within %u s (--timeout); exiting "
                               "with the run's status, %d\n", who, seconds, (int)s);
        finalize_msg_len = n > 0 && (size_t)n < sizeof finalize_msg ? (size_t)n : strlen(finalize_msg);
        finalize_status = (int)s;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = finalize_overdue;
        sigemptyset(&sa.sa_mask);
        sigset_t alrm;
        sigemptyset(&alrm);
        sigaddset(&alrm, SIGALRM);
        if (sigaction(SIGALRM, &sa, NULL) == 0 && sigprocmask(SIG_UNBLOCK, &alrm, NULL) == 0) alarm(seconds);
    }
    MPI_Finalize();
    if (seconds) alarm(0);
}

int main(int argc, char **argv)
{
    dr_options_t opt;
    char parse_err[512];
    /* Messages, the library's and ours, name our options (--timeout), not cfg fields. */
    dreduce_messages_name_options(1);
    dr_log_use_option_names(1);
    dr_options_default(&opt);
    dr_parse_result_t parsed = dr_options_parse(argc, argv, &opt, parse_err, sizeof parse_err);
    if (parsed == DR_PARSE_HELP || parsed == DR_PARSE_VERSION) {
        if (env_world_rank() == 0) {
            if (parsed == DR_PARSE_HELP) {
                fputs(dr_options_usage(), stdout);
                printf("\nHDF5 input: %s\n", dreduce_hdf5_description());
            } else {
                printf("dreduce %s\n", DR_VERSION);
            }
        }
        return 0;
    }
    /* CUDA-aware Open MPI wants the device chosen before MPI_Init: use the launcher's local rank if it gave one
     * (the same choice is made again, and checked, once MPI's own node split is known). */
    int ngpus = parsed == DR_PARSE_OK && opt.device != DR_DEVICE_CPU ? gpu_count() : 0;
    const char *source = NULL;
    int env_local = dreduce_launcher_local_rank(&source);
    if (ngpus > 0 && env_local >= 0 && cudaSetDevice(env_local % ngpus) != cudaSuccess) (void)cudaGetLastError();

    /* Open MPI 4.1 built with CUDA registers its shared-memory segments with cuMemHostRegister (smcuda), prints a
     * one-time notice on stderr where that fails, and makes a device-buffer MPI_Reduce ~20 us slower on H200s
     * (docs/performance.md). Skip the registration unless the user set the parameter: device buffers still work.
     * Read by Open MPI's MPI_Init from this process's environment; ignored by other MPIs. */
    setenv("OMPI_MCA_mpi_common_cuda_register_memory", "0", 0);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "dreduce: error: MPI_Init failed\n");
        return DR_ERR_RUNTIME;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    dr_status_t s = run(&opt, parsed, parse_err, env_local, source);
    finalize_within(opt.timeout, s);
    return (int)s;
}
