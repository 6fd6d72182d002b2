#define _POSIX_C_SOURCE 200809L
#include "host_path.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "accum.h"
#include "check.h"
#include "context.h"
#include "cpu_backend.h"
#include "dtype.h"
#include "timing.h"

uint64_t dr_host_split_gpu_elems(uint64_t count, double cpu_fraction)
{
    if (!(cpu_fraction > 0)) return count; /* NaN too: no CPU share */
    if (cpu_fraction >= 1) return 0;
    long steps = lround(cpu_fraction * DR_HOST_SPLIT_STEPS);
    if (steps < 1) steps = 1;
    if (steps > DR_HOST_SPLIT_STEPS - 1) steps = DR_HOST_SPLIT_STEPS - 1;
    const uint64_t g = (uint64_t)(DR_HOST_SPLIT_STEPS - steps);
    /* count * g / 64 without overflowing 64 bits */
    const uint64_t gpu = count / DR_HOST_SPLIT_STEPS * g + count % DR_HOST_SPLIT_STEPS * g / DR_HOST_SPLIT_STEPS;
    return gpu / DR_HOST_CUT_ALIGN * DR_HOST_CUT_ALIGN;
}

dr_host_path_t dr_host_choose(double cpu_gbs, double gpu_gbs, double split_gbs)
{
    dr_host_path_t best = DR_HOST_PATH_CPU;
    double rate = cpu_gbs;
    if (gpu_gbs > rate * 1.03) {
        best = DR_HOST_PATH_GPU;
        rate = gpu_gbs;
    }
    if (split_gbs > rate * 1.03) best = DR_HOST_PATH_SPLIT;
    return best;
}

/* A host array as a chunk source for the GPU path: it points at the next piece, nothing is copied on the host (the
 * copy engine reads pinned memory in place; the driver stages pageable memory itself). */
typedef struct {
    const char *at;
    uint64_t left;
    size_t esize;
} host_source_t;

static dr_status_t host_next(void *state, void *slot, size_t max_elems, const void **ptr, size_t *elems, int *done)
{
    (void)slot;
    host_source_t *h = state;
    *elems = h->left < max_elems ? (size_t)h->left : max_elems;
    *ptr = h->at;
    h->at += *elems * h->esize;
    h->left -= *elems;
    *done = h->left == 0;
    return DR_OK;
}

/* One call's row: what a path needs to reduce a part of the array. */
typedef struct {
    dreduce_context_t *ctx;
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
    size_t esize;
} row_t;

/* What one part reduced to. */
typedef struct {
    dr_partial_t v;
    uint64_t nans, depth, chunks;
    double ms, kernel_ms; /* wall time; the GPU part's kernel time */
    dr_status_t s;
} part_t;

static void gpu_part(const row_t *r, const void *buf, uint64_t n, uint64_t first, part_t *out)
{
    dreduce_context_t *ctx = r->ctx;
    const double t0 = dr_now_ms();
    host_source_t src = {buf, n, r->esize};
    dr_chunk_stats_t st;
    out->s = dr_chunks_reduce_gpu(&ctx->gpu, &ctx->chunks, ctx->cfg.kernel, ctx->cfg.block, r->dtype, r->op, r->acc,
                                  ctx->cfg.nan, ctx->cfg.chunk_bytes / r->esize, 0, first, host_next, &src, &out->v,
                                  &st);
    out->ms = dr_now_ms() - t0;
    out->nans = st.nan_count;
    out->depth = st.depth;
    out->chunks = st.chunks;
    out->kernel_ms = st.local_ms;
    if (out->s != DR_OK) { /* copies may still be reading the caller's buffer: none may outlive the call */
        (void)cudaStreamSynchronize(ctx->gpu.copy_stream);
        dr_gpu_drain(&ctx->gpu);
    }
}

static void cpu_part(const row_t *r, const void *buf, uint64_t n, uint64_t first, part_t *out)
{
    dreduce_context_t *ctx = r->ctx;
    const double t0 = dr_now_ms();
    out->nans = out->depth = 0;
    out->s = dr_cpu_reduce_checked(r->dtype, r->op, r->acc, ctx->cfg.nan, buf, (size_t)n, first, ctx->threads,
                                   &ctx->workers, &out->v, &out->depth, &out->nans);
    out->ms = dr_now_ms() - t0;
    out->chunks = 1;
    out->kernel_ms = NAN;
}

/* The CPU part of a split, on a thread of its own while the caller's thread drives the GPU's copies and kernels
 * (the CPU part's own workers run on the rank's share, as on the CPU path). */
typedef struct {
    const row_t *r;
    const void *buf;
    uint64_t n, first;
    part_t out;
} cpu_job_t;

static void *cpu_job(void *arg)
{
    cpu_job_t *j = arg;
    cpu_part(j->r, j->buf, j->n, j->first, &j->out);
    return NULL;
}

/* Both at once: the front gpu_n elements on the GPU, the rest on the CPU threads; *gpu and *cpu get each part. */
static void split_parts(const row_t *r, const void *buf, uint64_t n, uint64_t first, uint64_t gpu_n, part_t *gpu,
                        part_t *cpu)
{
    cpu_job_t job = {r, (const char *)buf + gpu_n * r->esize, n - gpu_n, first + gpu_n, {.s = DR_OK}};
    pthread_t th;
    const int threaded = pthread_create(&th, NULL, cpu_job, &job) == 0;
    gpu_part(r, buf, gpu_n, first, gpu);
    if (threaded) pthread_join(th, NULL);
    else cpu_job(&job); /* no thread to be had: one part after the other, still the same result */
    *cpu = job.out;
}

/* The partial of the whole array from its two parts, in index order (the GPU's is the front). */
static void join_parts(const row_t *r, const part_t *gpu, const part_t *cpu, part_t *out)
{
    *out = *gpu;
    if (gpu->s == DR_OK && cpu->s == DR_OK) dr_partial_combine(r->acc, r->op, &out->v, &cpu->v);
    out->nans = gpu->nans + cpu->nans;
    out->depth = (gpu->depth > cpu->depth ? gpu->depth : cpu->depth) + 1;
    out->s = gpu->s != DR_OK ? gpu->s : cpu->s;
}

/* GB/s; a time below the clock's resolution counts as 1 ns, so that a rate is always finite. */
static double gbs(uint64_t bytes, double ms) { return (double)bytes / ((ms > 1e-6 ? ms : 1e-6) * 1e6); }

/* The slot of the measured row (pinned, dtype, op, mode, nan), or -1. */
static int find_row(const dr_host_rows_t *t, int pinned, dr_dtype_t dtype, dr_op_t op, dr_acc_mode_t mode,
                    dr_nan_policy_t nan)
{
    for (int i = 0; i < DR_HOST_ROWS; ++i) {
        const dr_host_row_t *w = &t->rows[i];
        if (w->used && w->pinned == pinned && w->dtype == dtype && w->op == op && w->mode == mode && w->nan == nan)
            return i;
    }
    return -1;
}

/* Measure the three paths on the first DREDUCE_HOST_PROBE_BYTES of the caller's array (its own memory, of its own
 * kind, already in place: no allocation, no registration) into *q: after a warm-up of one chunk each (the GPU
 * path's buffers and plan, the threads' first run), the GPU path over the probe, then the CPU path (the data just
 * went through the copy engine, not through the CPU's caches; twice on a probe past twice the last-level caches,
 * which then serve the second pass none of it, the faster pass counting), then both at once, cut at the two rates.
 * Run together the two sides slow each other (memory bandwidth; the caller's thread drives the copies, and stages
 * pageable memory itself), so the cut is corrected once from the rates each side had during the split, and the split
 * measured again there; the faster cut is kept. A cut that leaves a side nothing is no split: split_gbs stays 0. The
 * results are thrown away. */
static dr_status_t measure(const row_t *r, const void *buf, uint64_t count, dreduce_host_rates_t *q)
{
    const double t0 = dr_now_ms();
    uint64_t m = DREDUCE_HOST_PROBE_BYTES / r->esize;
    if (m > count) m = count;
    const uint64_t bytes = m * r->esize;
    uint64_t warm = r->ctx->cfg.chunk_bytes / r->esize;
    if (warm > m) warm = m;
    part_t g, c, sg, sc;
    gpu_part(r, buf, warm, 0, &g);
    DR_CHECK(g.s);
    cpu_part(r, buf, warm, 0, &c);
    DR_CHECK(c.s);
    gpu_part(r, buf, m, 0, &g);
    DR_CHECK(g.s);
    cpu_part(r, buf, m, 0, &c);
    DR_CHECK(c.s);
    /* The CPU side's first pass over the probe can read far below its rate (pageable float32 stats on a 16-core H100
     * host: 25 GB/s measured, 35-42 the calls' own), and then a split, no faster than the CPU alone, won: the faster
     * of two passes is its rate, where the probe is too long for the last-level cache to serve the second. */
    if (bytes > 2 * r->ctx->cache_bytes) {
        part_t c2;
        cpu_part(r, buf, m, 0, &c2);
        DR_CHECK(c2.s);
        if (c2.ms < c.ms) c = c2;
    }
    memset(q, 0, sizeof *q);
    q->gpu_gbs = gbs(bytes, g.ms);
    q->cpu_gbs = gbs(bytes, c.ms);
    double fraction = round(q->cpu_gbs / (q->cpu_gbs + q->gpu_gbs) * DR_HOST_SPLIT_STEPS) / DR_HOST_SPLIT_STEPS;
    q->split_cpu_fraction = fraction; /* a forced SPLIT's cut where no split could be measured */
    for (int attempt = 0; attempt < 2; ++attempt) {
        const uint64_t gpu_n = dr_host_split_gpu_elems(m, fraction);
        if (gpu_n == 0 || gpu_n == m) break; /* one side would take it all */
        const double s0 = dr_now_ms();
        split_parts(r, buf, m, 0, gpu_n, &sg, &sc);
        const double rate = gbs(bytes, dr_now_ms() - s0);
        DR_CHECK(sg.s);
        DR_CHECK(sc.s);
        if (rate > q->split_gbs) {
            q->split_gbs = rate;
            q->split_cpu_fraction = fraction;
        }
        /* each side's rate while the other ran */
        const double cg = gbs((m - gpu_n) * r->esize, sc.ms), gg = gbs(gpu_n * r->esize, sg.ms);
        const double next = round(cg / (cg + gg) * DR_HOST_SPLIT_STEPS) / DR_HOST_SPLIT_STEPS;
        if (next == fraction) break;
        fraction = next;
    }
    q->choice = dr_host_choose(q->cpu_gbs, q->gpu_gbs, q->split_gbs);
    q->probe_bytes = bytes;
    q->measure_ms = dr_now_ms() - t0;
    q->measured = 1;
    return DR_OK;
}

dr_status_t dr_host_reduce(dreduce_context_t *ctx, const void *buf, uint64_t count, uint64_t first, dr_dtype_t dtype,
                           dr_op_t op, dr_acc_kind_t acc, int pinned, dreduce_timings_t *tm)
{
    const double t0 = dr_now_ms();
    const row_t r = {ctx, dtype, op, acc, dr_dtype_size(dtype)};
    const uint64_t bytes = count * r.esize;
    const dr_host_path_t asked = ctx->cfg.host_path;
    dr_host_path_t path = asked;
    tm->measure_ms = 0;
    /* A teaching kernel was asked for by name: AUTO does not route around it. */
    if (asked == DR_HOST_PATH_AUTO && ctx->cfg.kernel != DR_KERNEL_MULTIPASS) path = DR_HOST_PATH_GPU;
    else if (asked == DR_HOST_PATH_AUTO && bytes < DREDUCE_HOST_MEASURE_MIN) path = DR_HOST_PATH_CPU;
    double cpu_fraction = NAN;
    if (path == DR_HOST_PATH_AUTO || path == DR_HOST_PATH_SPLIT) {
        dr_host_rows_t *t = &ctx->host;
        const int at = find_row(t, pinned, dtype, op, ctx->cfg.acc_mode, ctx->cfg.nan);
        dr_host_row_t *row = at >= 0 ? &t->rows[at] : NULL;
        const uint64_t probe = bytes < DREDUCE_HOST_PROBE_BYTES ? bytes : DREDUCE_HOST_PROBE_BYTES / r.esize * r.esize;
        /* A row measured on a short array (a forced SPLIT of one: its data were in cache) is measured again on an
         * array at least twice as long, until the probe reaches DREDUCE_HOST_MEASURE_MIN. */
        const int again =
            row && row->rates.probe_bytes < DREDUCE_HOST_MEASURE_MIN && probe >= 2 * row->rates.probe_bytes;
        if (!row || again) {
            dreduce_host_rates_t q;
            const double m0 = dr_now_ms();
            DR_CHECK(measure(&r, buf, count, &q)); /* a failed measurement keeps the rows as they were */
            tm->measure_ms = dr_now_ms() - m0;
            if (!row) {
                row = &t->rows[t->next];
                t->next = (t->next + 1) % DR_HOST_ROWS;
            }
            row->used = 1;
            row->pinned = pinned;
            row->dtype = dtype;
            row->op = op;
            row->mode = ctx->cfg.acc_mode;
            row->nan = ctx->cfg.nan;
            row->rates = q;
        }
        if (path == DR_HOST_PATH_AUTO) path = row->rates.choice;
        cpu_fraction = row->rates.split_cpu_fraction;
    }
    const double l0 = dr_now_ms();
    part_t whole, gpu, cpu;
    memset(&gpu, 0, sizeof gpu);
    memset(&cpu, 0, sizeof cpu);
    const uint64_t gpu_n = path == DR_HOST_PATH_GPU   ? count
                           : path == DR_HOST_PATH_CPU ? 0
                                                      : dr_host_split_gpu_elems(count, cpu_fraction);
    if (gpu_n == count) {
        path = DR_HOST_PATH_GPU; /* also a split of an array too short to cut: all of it on the one side */
        gpu_part(&r, buf, count, first, &whole);
        gpu = whole;
    } else if (gpu_n == 0) {
        path = DR_HOST_PATH_CPU;
        cpu_part(&r, buf, count, first, &whole);
        cpu = whole;
    } else {
        split_parts(&r, buf, count, first, gpu_n, &gpu, &cpu);
        join_parts(&r, &gpu, &cpu, &whole);
    }
    const double wall = dr_now_ms() - l0;
    DR_CHECK(whole.s);
    DR_CHECK(dr_gpu_write_partial(&ctx->gpu, acc, &whole.v, whole.nans));
    tm->host_path = (int)path;
    tm->host_pinned = pinned;
    tm->host_cpu_elems = count - gpu_n;
    tm->host_gpu_ms = gpu_n > 0 ? gpu.ms : NAN;
    tm->host_cpu_ms = gpu_n < count ? cpu.ms : NAN;
    /* local: the GPU path's kernels, every chunk's (as for a file), the CPU threads, or a split's wall time; one
     * "pass" as for every chunked input */
    tm->local_ms = path == DR_HOST_PATH_GPU ? gpu.kernel_ms : path == DR_HOST_PATH_CPU ? cpu.ms : wall;
    tm->passes = 1;
    tm->pass_ms[0] = tm->local_ms;
    tm->load_ms = dr_now_ms() - t0 - tm->measure_ms;
    tm->chunks = whole.chunks + (path == DR_HOST_PATH_SPLIT ? cpu.chunks : 0);
    tm->bytes = bytes;
    tm->depth = whole.depth;
    return DR_OK;
}

dr_status_t dreduce_host_rates(const dreduce_context_t *ctx, int pinned, dr_dtype_t dtype, dr_op_t op,
                               dreduce_host_rates_t *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!ctx || !out) {
        dr_error("dreduce_host_rates: %s is NULL", ctx ? "out" : "ctx");
        return DR_ERR_USAGE;
    }
    if ((unsigned)dtype >= DR_DTYPE_COUNT || (unsigned)op >= DR_OP_COUNT) {
        dr_error("dreduce_host_rates: %s %d is not a %s", (unsigned)dtype >= DR_DTYPE_COUNT ? "dtype" : "op",
                 (unsigned)dtype >= DR_DTYPE_COUNT ? (int)dtype : (int)op,
                 (unsigned)dtype >= DR_DTYPE_COUNT ? "dr_dtype_t" : "dr_op_t");
        return DR_ERR_USAGE;
    }
    const int at = find_row(&ctx->host, pinned != 0, dtype, op, ctx->cfg.acc_mode, ctx->cfg.nan);
    if (at >= 0) *out = ctx->host.rows[at].rates;
    return DR_OK;
}
