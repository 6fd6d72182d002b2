/* dreduce, the program: a client of libdreduce (include/dreduce.h). The pipeline of one run, in order: parse
 * options, pick the GPU early (CUDA-aware MPI wants it before MPI_Init), MPI_Init, check that every rank got the same
 * options, create the library context (node layout, GPU, binding), generate the shard, time the library's reduction
 * (local + combine) over the repetitions, verify against the host reference, gather and report. Each phase ends with
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

#include "check.h"
#include "context.h"
#include "cpu_backend.h"
#include "dreduce.h"
#include "fault.h"
#include "input_hdf5.h"
#include "options.h"
#include "reference.h"
#include "report.h"
#include "shard.h"
#include "timing.h"
#include "watchdog.h"

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

/* The shard: this rank's elements of the generated array, in GPU memory (generated there) or host memory. */
typedef struct {
    void *base; /* the allocation; the input starts opt->misalign elements in */
    void *in;
    int on_gpu;
} shard_t;

static dr_status_t make_shard(const dr_options_t *o, dreduce_context_t *ctx, uint64_t first, uint64_t count,
                              shard_t *sh, double *gen_ms)
{
    const size_t esize = dr_dtype_size(o->dtype);
    if (count > (SIZE_MAX - 64 - 16 * esize) / esize) {
        dr_error("%" PRIu64 " elements of %zu bytes do not fit in this process's address space", count, esize);
        return DR_ERR_USAGE;
    }
    const size_t bytes = (size_t)count * esize + (size_t)o->misalign * esize;
    if (ctx->is_gpu) {
        dr_gpu_t *g = &ctx->gpu;
        sh->on_gpu = 1;
        DR_CHECK(dr_gpu_alloc(&sh->base, bytes, "input shard"));
        sh->in = (char *)sh->base + (size_t)o->misalign * esize;
        DR_CUDA_CHECK(cudaEventRecord(g->events[0], g->stream));
        DR_CUDA_CHECK(dr_gpu_generate(&o->gen, first, sh->in, (size_t)count, g->stream));
        DR_CUDA_CHECK(cudaEventRecord(g->events[1], g->stream));
        DR_CUDA_CHECK(cudaEventSynchronize(g->events[1]));
        float ms = 0;
        DR_CUDA_CHECK(cudaEventElapsedTime(&ms, g->events[0], g->events[1]));
        *gen_ms = ms;
        return DR_OK;
    }
    sh->base = dr_fault("alloc", ctx->topo.rank) ? NULL : aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!sh->base) {
        dr_error("cannot allocate %zu bytes (%.2f GiB) of host memory for the input shard", bytes,
                 (double)bytes / (1u << 30));
        return DR_ERR_RUNTIME;
    }
    sh->in = (char *)sh->base + (size_t)o->misalign * esize;
    double t0 = MPI_Wtime();
    dr_cpu_generate(&o->gen, first, sh->in, (size_t)count, ctx->threads);
    *gen_ms = (MPI_Wtime() - t0) * 1e3;
    return DR_OK;
}

static void free_shard(shard_t *sh)
{
    if (sh->on_gpu && sh->base) cudaFree(sh->base);
    else free(sh->base);
    memset(sh, 0, sizeof *sh);
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
}

/* --input: open the file once before the repetitions (collective), so a bad file ends every rank with one line
 * and exit 2 before anything is timed; the file decides the count and (for .npy) the type, the library this rank's
 * share (the same one dreduce_reduce_file reads). */
static dr_status_t probe_input(dreduce_context_t *ctx, dr_options_t *o, dreduce_file_t *file,
                               dreduce_file_info_t *info)
{
    dreduce_file_init(file, o->input);
    if (o->type_given) file->dtype = o->dtype;
    file->has_offset = o->offset_given;
    file->offset = o->input_offset;
    file->dataset = o->dataset[0] ? o->dataset : NULL;
    DR_CHECK(dreduce_file_inspect(ctx, file, o->op, info));
    o->dtype = o->gen.dtype = info->dtype;
    o->n = info->count;
    return DR_OK;
}

/* --input with --verify: the host reference over this rank's share, read again (in chunks) from the file; start 1: a
 * fresh reference, 0: more of the same (a stats reference's pass 2). */
static dr_status_t reference_of_file(dreduce_context_t *ctx, const dr_options_t *o, const dreduce_file_t *file,
                                     dr_acc_kind_t acc, uint64_t first, uint64_t count, dr_reference_t *ref, int start)
{
    dr_input_spec_t spec;
    dr_file_spec(file, o->op, o->acc_mode, &spec);
    dr_input_t in;
    DR_CHECK(dr_input_open(ctx->topo.comm, o->input, &spec, &in));
    const uint64_t chunk = ((uint64_t)16 << 20) / in.elem_size;
    void *buf = malloc((size_t)chunk * in.elem_size);
    dr_input_stream_t st;
    dr_status_t s = buf ? dr_input_stream_begin(&in, first, count, chunk, &st) : DR_ERR_RUNTIME;
    if (start) dr_reference_init(ref, acc, o->op);
    uint64_t at = first; /* the global index of the chunk's first element (argmin/argmax) */
    for (int done = 0; s == DR_OK && !done;) {
        uint64_t got = 0;
        s = dr_input_stream_next(&st, buf, &got, &done);
        if (s == DR_OK && got) dr_reference_add(ref, o->dtype, buf, (size_t)got, at, ctx->threads);
        at += got;
    }
    free(buf);
    dr_input_close(&in);
    return s;
}

/* This rank's elements into its reference (start 1: a fresh one; 0: a stats reference's pass 2), generated again
 * or read again from the file. */
static dr_status_t feed_reference(dreduce_context_t *ctx, const dr_options_t *o, int from_file,
                                  const dreduce_file_t *file, dr_acc_kind_t acc, uint64_t first, uint64_t count,
                                  dr_reference_t *ref, int start)
{
    if (from_file) return reference_of_file(ctx, o, file, acc, first, count, ref, start);
    if (start) dr_reference_compute(&o->gen, acc, first, count, ctx->threads, ref);
    else dr_reference_generate(&o->gen, first, count, ctx->threads, ref);
    return DR_OK;
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

static void first_line(char *s)
{
    char *nl = strchr(s, '\n');
    if (nl) *nl = '\0';
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

static dr_status_t run(dr_options_t *o, dr_parse_result_t parsed, const char *parse_err, int env_local,
                       const char *env_source)
{
    int rank = 0, nranks = 1;
    DR_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    DR_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));

    /* Phase 1: options. The lowest failing rank reports its parse error; everyone exits 2. */
    int bad = parsed == DR_PARSE_ERROR ? rank : 1 << 30, first_bad = 0;
    DR_MPI_CHECK(MPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first_bad != 1 << 30) {
        if (rank == first_bad) dr_error("%s", parse_err);
        return DR_ERR_USAGE;
    }
    DR_CHECK(check_options_agree(o, rank));

    /* Phase 2: the library context (node layout, GPU, binding; every rank agrees on its status), the report file
     * (rank 0), the shard, the plan. */
    dreduce_config_t cfg;
    config_from_options(o, &cfg);
    dreduce_context_t *ctx = NULL;
    DR_CHECK(dreduce_create(MPI_COMM_WORLD, &cfg, &ctx));
    ctx->pass_events = 1; /* the report shows each kernel pass's time */
    const dr_topology_t *topo = &ctx->topo;
    if (env_local >= 0 && env_local != topo->host_local_rank)
        dr_warn("%s=%d but MPI places this rank %d on its host: using %d to choose the GPU", env_source, env_local,
                topo->host_local_rank, topo->host_local_rank);
    dreduce_file_t file;
    dreduce_file_info_t file_info;
    const int from_file = o->input[0] != '\0';
    if (from_file) {
        dr_status_t ps = probe_input(ctx, o, &file, &file_info);
        if (ps != DR_OK) {
            dreduce_destroy(ctx);
            return ps;
        }
    }
    dr_status_t s = DR_OK;
    FILE *out = stdout;
    if (rank == 0 && o->output[0]) {
        out = fopen(o->output, o->format == DR_FORMAT_CSV ? "a" : "w");
        if (!out) {
            dr_error("cannot write --output '%s': %s", o->output, strerror(errno));
            s = DR_ERR_USAGE;
        }
    }
    const dr_acc_kind_t acc = dr_acc_select(o->dtype, o->op, o->acc_mode);
    uint64_t first = from_file ? file_info.first : 0, count = from_file ? file_info.mine : 0;
    if (s == DR_OK && !from_file && dr_shard(o->n, o->scaling, rank, nranks, &first, &count) != 0) {
        if (rank == 0) /* every rank sees the same overflow: say it once */
            dr_error("--scaling weak with -n %" PRIu64 " on %d ranks makes more than 2^64 - 1 elements", o->n,
                     nranks);
        s = DR_ERR_USAGE;
    }
    double gen_ms = NAN;
    shard_t shard;
    memset(&shard, 0, sizeof shard);
    if (s == DR_OK && !from_file) s = make_shard(o, ctx, first, count, &shard, &gen_ms);
    s = dr_context_agree(ctx, s, "setup (every rank reporting its setup)");
    if (s == DR_OK && !from_file) s = dreduce_prepare(ctx, o->dtype, o->op, count);
    if (s != DR_OK) {
        /* Some rank failed to set up (it said why): release what this rank holds, and every rank exits. */
        free_shard(&shard);
        if (out != stdout && out) fclose(out);
        dreduce_destroy(ctx);
        return s;
    }

    /* Phase 3: the timed repetitions. */
    const int reps = o->warmup + o->iters;
    double *samples = calloc((size_t)o->iters * (DR_LEVEL_COUNT + DR_GPU_MAX_PASSES), sizeof *samples);
    if (!samples) abort_job(DR_ERR_RUNTIME);
    double *level_samples[DR_LEVEL_COUNT], *pass_samples[DR_GPU_MAX_PASSES];
    for (int l = 0; l < DR_LEVEL_COUNT; ++l) level_samples[l] = samples + (size_t)l * o->iters;
    for (int p = 0; p < DR_GPU_MAX_PASSES; ++p)
        pass_samples[p] = samples + (size_t)(DR_LEVEL_COUNT + p) * o->iters;
    dreduce_result_t result, first_result;
    memset(&result, 0, sizeof result);
    memset(&first_result, 0, sizeof first_result);
    const size_t acc_size = dr_acc_kind_size(dr_acc_result_kind(acc)); /* what a caller reads */
    int deterministic = 1, passes = 1;
    dreduce_timings_t tm;
    memset(&tm, 0, sizeof tm);
    for (int it = 0; it < reps; ++it) {
        dr_watchdog_enter(ctx->wd, "start (the barrier that begins a repetition)");
        if (dr_watchdog_barrier(ctx->wd, topo->comm) != DR_OK) abort_job(DR_ERR_RUNTIME);
        dr_watchdog_leave(ctx->wd);
        s = from_file ? dreduce_reduce_file(ctx, &file, o->op, &result, NULL)
                      : dreduce_reduce_at(ctx, shard.in, count, first, o->dtype, o->op, &result);
        if (s != DR_OK) abort_job(s);
        dreduce_timings(ctx, &tm);
        if (result.valid) {
            if (it == 0) first_result = result;
            else if (!same_result(&result, &first_result, acc_size)) deterministic = 0;
        }
        if (it < o->warmup) continue;
        const int k = it - o->warmup;
        passes = tm.passes;
        for (int p = 0; p < passes; ++p) pass_samples[p][k] = tm.pass_ms[p];
        level_samples[DR_LEVEL_LOCAL][k] = tm.local_ms;
        level_samples[DR_LEVEL_STAGE][k] = tm.stage_ms;
        level_samples[DR_LEVEL_NODE][k] = tm.node_ms;
        level_samples[DR_LEVEL_GLOBAL][k] = tm.global_ms;
        level_samples[DR_LEVEL_BCAST][k] = tm.bcast_ms;
        level_samples[DR_LEVEL_TOTAL][k] = tm.total_ms;
        level_samples[DR_LEVEL_READ][k] = tm.read_ms;
        level_samples[DR_LEVEL_LOAD][k] = tm.load_ms;
        level_samples[DR_LEVEL_LAUNCH][k] = tm.launch_ms;
        level_samples[DR_LEVEL_WAIT][k] = tm.wait_ms;
    }
    const uint64_t depth = tm.depth;

    /* Phase 4: verification against the host reference, merged on rank 0. */
    dr_check_t check;
    memset(&check, 0, sizeof check);
    uint64_t max_depth = depth;
    DR_MPI_CHECK(MPI_Allreduce(&depth, &max_depth, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD));
    int local_bad = 0, any_local_bad = 0;
    if (o->verify) {
        dr_reference_t ref, *refs = NULL;
        if (feed_reference(ctx, o, from_file, &file, acc, first, count, &ref, 1) != DR_OK) abort_job(DR_ERR_RUNTIME);
        if (rank == 0 && !(refs = malloc((size_t)nranks * sizeof *refs))) abort_job(DR_ERR_RUNTIME);
        if (dr_reference_needs_pass2(&ref)) {
            /* stats: m2 is checked against sum (x - mean)^2 about the whole array's exact mean, so the ranks' pass-1
             * references meet on rank 0 first, and every rank then sums about that mean (its pass 2). */
            double center[2] = {0.0, 0.0};
            dr_watchdog_enter(ctx->wd, "verify (gathering the references' first pass)");
            DR_MPI_CHECK(MPI_Gather(&ref, (int)sizeof ref, MPI_BYTE, refs, (int)sizeof ref, MPI_BYTE, 0,
                                    MPI_COMM_WORLD));
            if (rank == 0) {
                dr_reference_t whole = refs[0];
                for (int i = 1; i < nranks; ++i) dr_reference_merge(&whole, &refs[i]);
                dr_reference_stats_center(&whole, center);
            }
            DR_MPI_CHECK(MPI_Bcast(center, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD));
            dr_watchdog_leave(ctx->wd);
            dr_reference_begin_pass2(&ref, center);
            if (feed_reference(ctx, o, from_file, &file, acc, first, count, &ref, 0) != DR_OK)
                abort_job(DR_ERR_RUNTIME);
        }
        /* Each rank checks its own partial first, so a wrong result names the rank and level that made it. */
        dreduce_result_t partial;
        dr_check_t local_check;
        if (dreduce_local_partial(ctx, &partial) != DR_OK) abort_job(DR_ERR_RUNTIME);
        if (dr_acc_kind_is_stats(acc)) dr_reference_check_stats(&ref, &partial.stats, depth, &local_check);
        else dr_reference_check(&ref, &partial.value, depth, &local_check);
        if (!local_check.pass) {
            local_bad = 1;
            dr_error("verification failed at level local (this rank's shard, elements %" PRIu64 "..%" PRIu64
                     "): %s", first, first + count, local_check.detail);
        }
        dr_watchdog_enter(ctx->wd, "verify (gathering the ranks' checks)");
        DR_MPI_CHECK(MPI_Allreduce(&local_bad, &any_local_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        dr_watchdog_leave(ctx->wd);
        dr_watchdog_enter(ctx->wd, "verify (gathering the references)");
        DR_MPI_CHECK(MPI_Gather(&ref, (int)sizeof ref, MPI_BYTE, refs, (int)sizeof ref, MPI_BYTE, 0, MPI_COMM_WORLD));
        dr_watchdog_leave(ctx->wd);
        if (rank == 0) {
            dr_reference_t total = refs[0];
            for (int i = 1; i < nranks; ++i) dr_reference_merge(&total, &refs[i]);
            /* The combine adds at most one rounding (or merge) per rank (a linear chain, whatever algorithm MPI
             * picks). */
            const uint64_t total_depth = max_depth + (uint64_t)nranks;
            if (dr_acc_kind_is_stats(acc)) dr_reference_check_stats(&total, &result.stats, total_depth, &check);
            else dr_reference_check(&total, &result.value, total_depth, &check);
            free(refs);
        }
    }

    /* Phase 5: gather the per-rank records and report. */
    dr_rank_record_t rec, *recs = NULL;
    memset(&rec, 0, sizeof rec);
    rec.rank = rank;
    rec.node = topo->node;
    rec.local_rank = topo->local_rank;
    rec.is_gpu = ctx->is_gpu;
    rec.block = ctx->is_gpu ? ctx->gpu.req.block : 0;
    rec.passes = passes;
    snprintf(rec.host, sizeof rec.host, "%s", topo->host);
    snprintf(rec.node_name, sizeof rec.node_name, "%s", topo->node_name);
    snprintf(rec.device_name, sizeof rec.device_name, "%s", ctx->is_gpu ? ctx->gpu.name : "cpu");
    rec.first = first;
    rec.count = count;
    rec.depth = depth;
    rec.generate_ms = gen_ms;
    for (int p = 0; p < DR_GPU_MAX_PASSES; ++p) rec.pass_ms[p] = p < passes ? dr_median(pass_samples[p], o->iters) : NAN;
    for (int l = 0; l < DR_LEVEL_COUNT; ++l) rec.level_ms[l] = dr_median(level_samples[l], o->iters);
    rec.binding = ctx->binding;
    free(samples);
    if (rank == 0 && !(recs = calloc((size_t)nranks, sizeof *recs))) abort_job(DR_ERR_RUNTIME);
    dr_watchdog_enter(ctx->wd, "report (gathering the ranks' records)");
    DR_MPI_CHECK(MPI_Gather(&rec, (int)sizeof rec, MPI_BYTE, recs, (int)sizeof rec, MPI_BYTE, 0, MPI_COMM_WORLD));
    dr_watchdog_leave(ctx->wd);
    int verdict = DR_OK;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        first_line(lib);
        dr_binding_t *bs = malloc((size_t)nranks * sizeof *bs);
        char(*hosts)[64] = malloc((size_t)nranks * sizeof *hosts);
        int *shared = malloc((size_t)nranks * sizeof *shared);
        if (!bs || !hosts || !shared) abort_job(DR_ERR_RUNTIME);
        for (int i = 0; i < nranks; ++i) {
            bs[i] = recs[i].binding;
            memcpy(hosts[i], recs[i].host, 64);
        }
        dr_binding_mark_shared(bs, (const char(*)[64])hosts, nranks, shared);
        for (int i = 0; i < nranks; ++i) recs[i].shared_gpu = shared[i];
        free(bs);
        free(hosts);
        free(shared);
        dr_report_t rep = {
            .opt = o, .nranks = nranks, .nnodes = topo->nnodes, .emulated = topo->emulated,
            .n_total = o->scaling == DR_SCALING_WEAK ? o->n * (uint64_t)nranks : o->n, .acc = acc,
            .path_text = dreduce_combine_path(ctx), .path_us = {NAN, NAN}, .mpi_library = lib, .result = result.value,
            .stats = result.stats, .deterministic = deterministic, .check = check, .ranks = recs,
        };
        dreduce_combine_costs(ctx, &rep.path_us[0], &rep.path_us[1]);
        if (dr_report_write(&rep, out) != 0 || (out != stdout && fclose(out) != 0)) {
            dr_error("writing the report to '%s' failed: %s", o->output[0] ? o->output : "stdout", strerror(errno));
            verdict = DR_ERR_RUNTIME;
        }
        fflush(stdout);
        if (any_local_bad) {
            dr_error("verification failed at level local on at least one rank (named above); the combined result "
                     "is %s", o->verify && check.pass ? "right all the same" : "wrong too");
            verdict = DR_ERR_VERIFY;
        } else if (o->verify && !check.pass) {
            dr_error("verification failed at level %s: every rank's partial was right, the combined result is not: "
                     "%s", o->combine == DR_COMBINE_FLAT ? "global" : "node or global", check.detail);
            verdict = DR_ERR_VERIFY;
        } else if (!deterministic) {
            dr_error("repetitions of the same reduction gave different results (a race?)");
            verdict = DR_ERR_VERIFY;
        }
        free(recs);
    }
    dr_watchdog_enter(ctx->wd, "report (the verdict from rank 0)");
    DR_MPI_CHECK(MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD));
    dr_watchdog_leave(ctx->wd);
    free_shard(&shard);
    dreduce_destroy(ctx);
    return (dr_status_t)verdict;
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
    dr_log_use_option_names(1); /* the library's messages name our options (--timeout), not cfg fields */
    dr_options_default(&opt);
    dr_parse_result_t parsed = dr_options_parse(argc, argv, &opt, parse_err, sizeof parse_err);
    if (parsed == DR_PARSE_HELP || parsed == DR_PARSE_VERSION) {
        if (env_world_rank() == 0) {
            if (parsed == DR_PARSE_HELP) {
                fputs(dr_options_usage(), stdout);
                printf("\nHDF5 input: %s\n", dr_h5_description());
            } else {
                printf("dreduce %s\n", DR_VERSION);
            }
        }
        return 0;
    }
    /* CUDA-aware Open MPI wants the device chosen before MPI_Init: use the launcher's local rank if it gave one
     * (the same choice is made again, and checked, once MPI's own node split is known). */
    int ngpus = parsed == DR_PARSE_OK && opt.device != DR_DEVICE_CPU ? dr_gpu_count() : 0;
    const char *source = NULL;
    int env_local = dr_binding_env_local_rank(&source);
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
