/* dreduce-cpu-bench: the CPU backend (src/lib/cpu_backend.c, dr_cpu_reduce) against the CPU ceiling measured in the
 * same run: a plain OpenMP loop, each thread its contiguous slice with 8 independent 64-bit accumulators (what a
 * user would write). Builds and runs without a GPU.
 *
 *   dreduce-cpu-bench [-n ELEMENTS] [--threads T] [--reps R]     (defaults: 64 Mi, every CPU of this process, 15)
 *
 * Cases: float32 -> float64 sum and int32 -> int64 sum. The input is written by the same threads first (first-touch
 * pages local to the thread that reads them) and read once per repetition; each line gives the median and the best
 * of R repetitions in GB/s (input bytes / seconds), and the backend's median as a percentage of the ceiling's. Then
 * the float rows whose rules a plain loop does not have (min, max, argmin, argmax, stats of float32, float64 and
 * float16; the data have no NaN), each against the read loop of its type (float16: float32's); stats also with each
 * narrower vector width of its lanes that the CPU runs (the backend takes the widest), and the report's header names
 * the widest. Last the NaN policy (nan_rows): sum, min, argmin and stats of each float type with NaN propagated and
 * omitted, on data without NaN and with 1%. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "cpu_backend.h"
#include "cpu_lanes.h"
#include "datagen.h"
#include "parallel.h"
#include "read_loop.h"

/* A positive whole number in decimal digits, at most max, into *out; else 0 (a suffix such as 64Mi is not taken:
 * strtoull would read 64 and drop it). */
static int parse_positive(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!s || *s < '0' || *s > '9') return 0;
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < 1 || v > max) return 0;
    *out = v;
    return 1;
}

/* Stats again with each narrower version of the lanes this CPU runs (cpu_lanes.c; the backend uses the widest):
 * what the vector width buys, and a check that every version gives the backend's bits. Returns 1 on a mismatch. */
static int stats_lanes_rows(dr_dtype_t dtype, const void *in, size_t n, int threads, int reps, double *sec,
                            size_t bytes, double loop_median, const dr_stats_t *want)
{
    const dr_cpu_lanes_t *widest = dr_cpu_lanes();
    int bad = 0;
    for (int v = 0; dr_cpu_lanes_at(v); ++v) {
        const dr_cpu_lanes_t *lanes = dr_cpu_lanes_at(v);
        if (lanes == widest || dr_cpu_lanes_use(lanes) != 0) continue;
        dr_partial_t out;
        uint64_t depth = 0;
        for (int r = -1; r < reps; ++r) {
            const double t0 = now_s();
            dr_cpu_reduce(dtype, DR_STATS, DR_ACC_STATS_F64, in, n, 0, threads, &out, &depth);
            if (r >= 0) sec[r] = now_s() - t0;
        }
        const rate_t back = rate_of(sec, reps, bytes);
        char label[48];
        snprintf(label, sizeof label, "  the same, %s lanes", lanes->name);
        printf("%-22s %-34s %10.2f %10.2f %8.0f%%\n", "", label, back.median, back.best, 100 * back.median / loop_median);
        const dr_stats_t *got = &out.stats;
        if (got->count != want->count || memcmp(&got->sum, &want->sum, sizeof got->sum) ||
            memcmp(&got->mean, &want->mean, 8) || memcmp(&got->m2, &want->m2, 8) ||
            memcmp(&got->min, &want->min, sizeof got->min) || memcmp(&got->max, &want->max, sizeof got->max)) {
            printf("FAIL %s stats with %s lanes: not the bits of the %s lanes\n", dr_dtype_name(dtype), lanes->name,
                   widest->name);
            bad = 1;
        }
    }
    dr_cpu_lanes_use(widest);
    return bad;
}

/* The NaN policy: each (float type, op) with NaN propagated and with NaN omitted (dr_cpu_reduce_on, DR_NAN_OMIT), on
 * the same NaN-free data, and omitted again on a copy with 1% of its elements NaN (every 100th, from a seeded
 * start). The three are timed in turn within each repetition, so that the machine's drift falls on all of them.
 * Returns 1 where the omitting reduction of the NaN-free data does not count 0 NaN, or of the copy not its NaN. */
static int nan_rows(dr_dtype_t dt, const void *in, size_t n, int threads, int reps)
{
    static const struct {
        dr_op_t op;
        const char *name;
    } ops[] = {{DR_SUM, "sum"}, {DR_MIN, "min"}, {DR_ARGMIN, "argmin"}, {DR_STATS, "stats"}};
    const size_t es = dr_dtype_size(dt), bytes = n * es;
    char *holed = malloc(bytes);
    double *s3 = malloc(3 * (size_t)reps * sizeof *s3);
    if (!holed || !s3) {
        fprintf(stderr, "dreduce-cpu-bench: cannot allocate %zu bytes for the NaN rows\n", bytes);
        free(holed);
        free(s3);
        return 1;
    }
    memcpy(holed, in, bytes);
    const uint64_t nan_bits = dt == DR_FLOAT64 ? 0x7ff8000000000000ull : dt == DR_FLOAT32 ? 0x7fc00000u : 0x7e00u;
    size_t holes = 0;
    for (size_t i = 17; i < n; i += 100, ++holes) /* little-endian: the low es bytes are the NaN */
        memcpy(holed + i * es, &nan_bits, es);
    int bad = 0;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; ++k) {
        const dr_acc_kind_t acc = dr_acc_select(dt, ops[k].op, DR_ACC_WIDE);
        dr_partial_t out;
        uint64_t depth = 0, nans[3] = {0, 0, 0};
        for (int r = -1; r < reps; ++r)
            for (int w = 0; w < 3; ++w) {
                const double t0 = now_s();
                dr_cpu_reduce_on(dt, ops[k].op, acc, w ? DR_NAN_OMIT : DR_NAN_PROPAGATE, w == 2 ? holed : in, n, 0,
                                 threads, NULL, &out, &depth, &nans[w]);
                if (r >= 0) s3[w * reps + r] = now_s() - t0;
            }
        rate_t rate[3];
        for (int w = 0; w < 3; ++w) rate[w] = rate_of(s3 + w * reps, reps, bytes);
        char name[48];
        snprintf(name, sizeof name, "%s %s", dr_dtype_name(dt), ops[k].name);
        printf("%-22s %10.2f %10.2f %6.2fx %10.2f %6.2fx\n", name, rate[0].median, rate[1].median,
               rate[0].median / rate[1].median, rate[2].median, rate[0].median / rate[2].median);
        if (nans[1] != 0 || nans[2] != holes) {
            printf("FAIL %s with NaN omitted: counted %" PRIu64 " and %" PRIu64 " NaN, expected 0 and %zu\n", name,
                   nans[1], nans[2], holes);
            bad = 1;
        }
    }
    free(holed);
    free(s3);
    return bad;
}

int main(int argc, char **argv)
{
    unsigned long long n_arg = 64ull << 20, threads_arg = (unsigned long long)dr_parallel_default_threads(),
                       reps_arg = 15;
    for (int i = 1; i < argc; ++i) {
        unsigned long long *dst = !strcmp(argv[i], "-n")        ? &n_arg
                                  : !strcmp(argv[i], "--threads") ? &threads_arg
                                  : !strcmp(argv[i], "--reps")    ? &reps_arg
                                                                  : NULL;
        const unsigned long long max = dst == &n_arg ? (unsigned long long)SIZE_MAX / 8 : 100000;
        if (dst && i + 1 < argc) {
            if (!parse_positive(argv[++i], max, dst)) {
                fprintf(stderr, "dreduce-cpu-bench: invalid %s '%s': expected a whole number 1..%llu in decimal "
                                "digits\n", argv[i - 1], argv[i], max);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: dreduce-cpu-bench [-n ELEMENTS] [--threads T] [--reps R]\n");
            return strcmp(argv[i], "-h") && strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    const size_t n = (size_t)n_arg;
    const int threads = (int)threads_arg, reps = (int)reps_arg;
    float *f = malloc(n * sizeof *f);
    int32_t *q = malloc(n * sizeof *q);
    double *sec = malloc((size_t)reps * sizeof *sec);
    if (!f || !q || !sec) {
        fprintf(stderr, "dreduce-cpu-bench: cannot allocate 2 x %zu elements\n", n);
        return 3;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; ++i) {
        f[i] = (float)(i % 1000) * 0.5f;
        q[i] = (int32_t)(i % 2000) - 1000;
    }
    printf("dreduce-cpu-bench: %zu elements, %d threads, median and best of %d repetitions (GB/s of input); stats "
           "lanes: %s\n", n, threads, reps, dr_cpu_lanes()->name);
    printf("%-22s %-34s %10s %10s %9s\n", "case", "loop", "median", "best", "of ceil");
    int bad = 0;
    for (int c = 0; c < 2; ++c) {
        const int is_f = c == 0;
        const size_t bytes = n * 4;
        const char *name = is_f ? "float32 -> float64 sum" : "int32 -> int64 sum";
        /* Ceiling, then backend, each warmed once. */
        double want_f = 0;
        int64_t want_i = 0;
        for (int r = -1; r < reps; ++r) {
            const double t0 = now_s();
            if (is_f) want_f = ceiling_f32(f, n, threads);
            else want_i = ceiling_i32(q, n, threads);
            if (r >= 0) sec[r] = now_s() - t0;
        }
        const rate_t ceil_s = rate_of(sec, reps, bytes);
        dr_partial_t out;
        uint64_t depth = 0;
        for (int r = -1; r < reps; ++r) {
            const double t0 = now_s();
            dr_cpu_reduce(is_f ? DR_FLOAT32 : DR_INT32, DR_SUM, is_f ? DR_ACC_F64 : DR_ACC_I64, is_f ? (void *)f : q,
                          n, 0, threads, &out, &depth);
            if (r >= 0) sec[r] = now_s() - t0;
        }
        const rate_t back_s = rate_of(sec, reps, bytes);
        double got_f;
        int64_t got_i;
        memcpy(&got_f, &out.value, sizeof got_f);
        memcpy(&got_i, &out.value, sizeof got_i);
        /* The data are exact in float64 (multiples of 0.5 well below 2^53): both sums must agree exactly. */
        if (is_f ? got_f != want_f : got_i != want_i) {
            printf("FAIL %s: backend %.17g / %" PRId64 ", ceiling %.17g / %" PRId64 "\n", name, got_f, got_i,
                   want_f, want_i);
            bad = 1;
        }
        printf("%-22s %-34s %10.2f %10.2f\n", name, "ceiling: OpenMP, 8 accumulators", ceil_s.median, ceil_s.best);
        printf("%-22s %-34s %10.2f %10.2f %8.0f%%\n", name, "dreduce CPU backend (dr_cpu_reduce)", back_s.median,
               back_s.best, 100 * back_s.median / ceil_s.median);
    }
    /* The float rows with rules of their own, each against its type's read loop (measured again here). */
    double *g = malloc(n * sizeof *g);
    if (!g) {
        fprintf(stderr, "dreduce-cpu-bench: cannot allocate %zu float64 elements\n", n);
        return 3;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; ++i) {
        g[i] = (double)((i * 2654435761u) % 100000) * 0.5 - 1000.0;
        f[i] = (float)g[i];
    }
    static const struct {
        dr_op_t op;
        dr_acc_kind_t f32_acc, f64_acc;
        const char *name;
    } rows[] = {{DR_MIN, DR_ACC_F32, DR_ACC_F64, "min"},
                {DR_MAX, DR_ACC_F32, DR_ACC_F64, "max"},
                {DR_ARGMIN, DR_ACC_ARG_F64, DR_ACC_ARG_F64, "argmin"},
                {DR_ARGMAX, DR_ACC_ARG_F64, DR_ACC_ARG_F64, "argmax"},
                {DR_STATS, DR_ACC_STATS_F64, DR_ACC_STATS_F64, "stats"}};
    /* float16 (t = 2): the float32 values truncated to its grid, widened block by block (by F16C in the AVX lanes,
     * element by element in the narrower ones), against the float32 read loop's bytes per second. */
    uint16_t *h = malloc(n * sizeof *h);
    if (!h) {
        fprintf(stderr, "dreduce-cpu-bench: cannot allocate %zu float16 elements\n", n);
        return 3;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; ++i) h[i] = dr_f32_to_f16_exact(f[i] * 0.001f);
    double loop32 = 0;
    for (int t = 0; t < 3; ++t) {
        const dr_dtype_t dt = t == 2 ? DR_FLOAT16 : t ? DR_FLOAT64 : DR_FLOAT32;
        const void *in = t == 2 ? (const void *)h : t ? (const void *)g : (const void *)f;
        const size_t bytes = n * dr_dtype_size(dt);
        rate_t loop = {loop32, loop32};
        char name[48];
        if (t < 2) {
            for (int r = -1; r < reps; ++r) {
                const double t0 = now_s();
                volatile double sink = t ? ceiling_f64(g, n, threads) : ceiling_f32(f, n, threads);
                (void)sink;
                if (r >= 0) sec[r] = now_s() - t0;
            }
            loop = rate_of(sec, reps, bytes);
            if (t == 0) loop32 = loop.median;
            snprintf(name, sizeof name, "%s read loop", t ? "float64" : "float32");
            printf("%-22s %-34s %10.2f %10.2f\n", name, "ceiling: OpenMP, 8 accumulators", loop.median, loop.best);
        }
        for (size_t k = 0; k < sizeof rows / sizeof rows[0]; ++k) {
            dr_partial_t out;
            uint64_t depth = 0;
            for (int r = -1; r < reps; ++r) {
                const double t0 = now_s();
                dr_cpu_reduce(dt, rows[k].op, t == 1 ? rows[k].f64_acc : rows[k].f32_acc, in, n, 0, threads, &out,
                              &depth);
                if (r >= 0) sec[r] = now_s() - t0;
            }
            const rate_t back = rate_of(sec, reps, bytes);
            snprintf(name, sizeof name, "%s %s", dr_dtype_name(dt), rows[k].name);
            printf("%-22s %-34s %10.2f %10.2f %8.0f%%\n", name, "dreduce CPU backend (dr_cpu_reduce)", back.median,
                   back.best, 100 * back.median / loop.median);
            if (rows[k].op == DR_STATS)
                bad |= stats_lanes_rows(dt, in, n, threads, reps, sec, bytes, loop.median, &out.stats);
        }
    }
    printf("\nNaN policy: GB/s (median); omitted against propagated, time ratio (1.00x: free)\n");
    printf("%-22s %10s %10s %7s %10s %7s\n", "case", "propagate", "omit", "", "omit, 1%", "");
    for (int t = 0; t < 3; ++t)
        bad |= nan_rows(t == 2 ? DR_FLOAT16 : t ? DR_FLOAT64 : DR_FLOAT32,
                        t == 2 ? (const void *)h : t ? (const void *)g : (const void *)f, n, threads, reps);
    free(h);
    free(g);
    free(f);
    free(q);
    free(sec);
    return bad;
}
