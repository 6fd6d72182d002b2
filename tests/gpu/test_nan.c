/* The NaN policy OMIT on the GPU against the CPU backend (label gpu). Every rank makes the same whole array; the
 * answer of a CPU context on MPI_COMM_SELF over the whole array is the reference (the CPU backend itself is checked
 * against NumPy's nan* functions by tests/python/test_nan.py), and GPU contexts with cfg.nan OMIT on MPI_COMM_WORLD
 * reduce each rank's part: device buffers (aligned and one element off), blocks of 128, 512 and 1024 threads (and
 * the default, which takes multipass's bulk copies on a Hopper for inputs of 128 MiB and more), and pageable host
 * buffers in small chunks (each chunk's NaN count folded on the host).
 *
 * Rows: every float type x sum (wide and exact), prod, min, max, argmin, argmax, stats (wide and exact), quantile
 * (seven q) and histogram (automatic range). Data: no NaN, 1 in 97 NaN (quiet and signalling, both signs), NaN only
 * in the first half (so at np 2 one rank's part is all NaN), NaN only, NaN among infinities.
 * Checks: the NaN count and the element count exactly; min, max, argmin/argmax (value and index), exact sums, the
 * stats' count, min, max and exact sum, histogram counts and quantiles bit for bit; float64 sums and means within
 * 1e-9 of sum |x| (either side's rounding, orders of magnitude inside that for these sizes), m2 within 1e-8
 * relatively; products (of values near 1) within 1e-9 relatively. Then calls that leave no NaN out (PROPAGATE, an
 * integer type) after ones that did: no NaN count left over from the call before. Run at np 1 and at np 2 sharing a
 * GPU.
 * Exits 77 (skipped) when no GPU is visible. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dreduce.h"
#include "library_test.h"

enum { P_NONE = 0, P_SOME, P_HALF, P_ALL, P_INF, P_COUNT };
static const char *const pattern_name[P_COUNT] = {"no NaN", "1/97 NaN", "NaN first half", "NaN only",
                                                  "NaN and inf"};

static const dr_dtype_t types[] = {DR_FLOAT32, DR_FLOAT64, DR_FLOAT16, DR_BFLOAT16};

/* A NaN's bits of the type: random sign and payload, quiet or signalling. */
static uint64_t nan_bits(dr_dtype_t t)
{
    const uint64_t r = next_u64();
    const int eb = t == DR_FLOAT64 ? 11 : t == DR_FLOAT16 ? 5 : 8;
    const int fb = t == DR_FLOAT64 ? 52 : t == DR_FLOAT32 ? 23 : t == DR_FLOAT16 ? 10 : 7;
    uint64_t frac = (r >> 8) & ((1ull << fb) - 1);
    if (!frac) frac = 1;
    return ((r & 1) << (eb + fb)) | (((1ull << eb) - 1) << fb) | frac;
}

/* Element values: random over a few orders of magnitude (products: near 1, so they neither vanish nor overflow). */
static void *make_array(dr_dtype_t t, int pattern, int for_prod, uint64_t n, uint64_t seed)
{
    rng_state = seed;
    const size_t es = dreduce_dtype_size(t);
    unsigned char *a = malloc(n * es + 16);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t r = next_u64();
        const double u = (double)(r >> 11) / 9007199254740992.0;
        double v = for_prod ? 1.0 + (u - 0.5) / 64.0 : (u - 0.3) * ((r & 3) == 0 ? 1000.0 : 3.0);
        if (!for_prod && (r & 255) == 7) v = -0.0;
        int is_nan = pattern == P_ALL || (pattern == P_HALF && i < n / 2) ||
                     ((pattern == P_SOME || pattern == P_INF) && (r >> 40) % 97 == 0);
        if (pattern == P_INF && !is_nan && (r >> 40) % 89 == 0) v = (r & 8) ? INFINITY : -INFINITY;
        unsigned char *p = a + i * es;
        const uint64_t nb = is_nan ? nan_bits(t) : 0;
        switch (t) {
        case DR_FLOAT32: {
            float f = (float)v;
            uint32_t b;
            memcpy(&b, &f, 4);
            if (is_nan) b = (uint32_t)nb;
            memcpy(p, &b, 4);
            break;
        }
        case DR_FLOAT64: {
            uint64_t b;
            memcpy(&b, &v, 8);
            if (is_nan) b = nb;
            memcpy(p, &b, 8);
            break;
        }
        case DR_FLOAT16: { /* values of half range, truncated to its grid */
            float f = (float)v;
            uint32_t b;
            memcpy(&b, &f, 4);
            const uint32_t sign = (b >> 16) & 0x8000u;
            const int e = (int)((b >> 23) & 0xff) - 127 + 15;
            uint16_t h = isinf(v) ? (uint16_t)(sign | 0x7c00u)
                       : e <= 0   ? (uint16_t)sign
                                  : (uint16_t)(sign | (uint32_t)e << 10 | ((b >> 13) & 0x3ffu));
            if (is_nan) h = (uint16_t)nb;
            memcpy(p, &h, 2);
            break;
        }
        default: {
            float f = (float)v;
            uint32_t b;
            memcpy(&b, &f, 4);
            uint16_t h = (uint16_t)(b >> 16);
            if (is_nan) h = (uint16_t)nb;
            memcpy(p, &h, 2);
            break;
        }
        }
    }
    return a;
}

/* sum |x| over the elements that are not NaN (finite ones), for the float bounds. */
static double abs_sum(dr_dtype_t t, const unsigned char *a, uint64_t n)
{
    double s = 0;
    for (uint64_t i = 0; i < n; ++i) {
        double x;
        if (t == DR_FLOAT32) {
            float f;
            memcpy(&f, a + 4 * i, 4);
            x = f;
        } else if (t == DR_FLOAT64) {
            memcpy(&x, a + 8 * i, 8);
        } else {
            uint16_t h;
            memcpy(&h, a + 2 * i, 2);
            if (t == DR_FLOAT16) {
                const int e = (h >> 10) & 31, m = h & 1023;
                x = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
            } else {
                uint32_t b = (uint32_t)h << 16;
                float f;
                memcpy(&f, &b, 4);
                x = f;
            }
        }
        if (isfinite(x)) s += fabs(x);
    }
    return s;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }
static int same_f64(double a, double b) { return (isnan(a) && isnan(b)) || same_bits(a, b); }
static int close_to(double got, double want, double tol)
{
    if (isnan(want) || isinf(want)) return same_f64(got, want);
    return fabs(got - want) <= tol;
}

typedef struct {
    dr_op_t op;
    dr_acc_mode_t mode;
    const char *name;
} row_t;
static const row_t rows[] = {
    {DR_SUM, DR_ACC_WIDE, "sum"},       {DR_SUM, DR_ACC_MODE_EXACT, "sum exact"}, {DR_PROD, DR_ACC_WIDE, "prod"},
    {DR_MIN, DR_ACC_WIDE, "min"},       {DR_MAX, DR_ACC_WIDE, "max"},             {DR_ARGMIN, DR_ACC_WIDE, "argmin"},
    {DR_ARGMAX, DR_ACC_WIDE, "argmax"}, {DR_STATS, DR_ACC_WIDE, "stats"},         {DR_STATS, DR_ACC_MODE_EXACT, "stats exact"},
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

static void check_reduce(const char *label, const char *what, const row_t *row, dr_status_t rs,
                         const dreduce_result_t *ref, dr_status_t gs, const dreduce_result_t *got, double asum,
                         int rank)
{
    ++cases;
    if (rs != gs) {
        FAIL("%s %s: status %d, reference %d", label, what, gs, rs);
        return;
    }
    if (rs != DR_OK || rank != 0) return; /* the result is rank 0's */
    if (!got->valid || got->count != ref->count || got->nan_count != ref->nan_count ||
        got->no_value != ref->no_value) {
        FAIL("%s %s: valid %d count %llu nan %llu no_value %d, reference count %llu nan %llu no_value %d", label, what,
             got->valid, (unsigned long long)got->count, (unsigned long long)got->nan_count, got->no_value,
             (unsigned long long)ref->count, (unsigned long long)ref->nan_count, ref->no_value);
        return;
    }
    const double g = dreduce_result_double(got), w = dreduce_result_double(ref);
    int ok = 1;
    if (row->op == DR_STATS) {
        const dreduce_stats_t *a = &got->stats, *b = &ref->stats;
        const double tol = 1e-9 * asum;
        ok = a->count == b->count && a->min.u64 == b->min.u64 && a->max.u64 == b->max.u64 &&
             (row->mode == DR_ACC_MODE_EXACT ? same_f64(a->sum, b->sum) : close_to(a->sum, b->sum, tol)) &&
             close_to(a->mean, b->mean, b->count ? tol / (double)b->count : 0) &&
             (isnan(b->m2) ? isnan(a->m2) : fabs(a->m2 - b->m2) <= 1e-8 * fabs(b->m2) + 1e-300);
        if (!ok)
            FAIL("%s %s: count %llu sum %.17g mean %.17g m2 %.17g min %.17g max %.17g; reference %llu %.17g %.17g "
                 "%.17g %.17g %.17g", label, what, (unsigned long long)a->count, a->sum, a->mean, a->m2, a->min.f64,
                 a->max.f64, (unsigned long long)b->count, b->sum, b->mean, b->m2, b->min.f64, b->max.f64);
        return;
    }
    if (row->op == DR_ARGMIN || row->op == DR_ARGMAX)
        ok = got->value.arg.index == ref->value.arg.index && same_f64(g, w);
    else if (row->op == DR_SUM && row->mode == DR_ACC_WIDE)
        ok = close_to(g, w, 1e-9 * asum);
    else if (row->op == DR_PROD)
        ok = close_to(g, w, 1e-9 * fabs(w));
    else
        ok = same_f64(g, w);
    if (!ok)
        FAIL("%s %s: %.17g (index %llu), reference %.17g (index %llu)", label, what, g,
             (unsigned long long)got->value.arg.index, w, (unsigned long long)ref->value.arg.index);
}

#define NQ 7
static const double qs[NQ] = {0.0, 0.01, 0.25, 0.5, 1.0 / 3.0, 0.99, 1.0};

int main(int argc, char **argv)
{
    int rank, nranks;
    if (!library_test_start(&argc, &argv, &rank, &nranks)) return 77;
    /* contexts: [mode][0] CPU on the whole array; [mode][1..4] GPU (blocks 128, 512, 1024, default); [mode][5] GPU
     * with pageable host buffers in 64 KiB chunks. mode 0 wide, 1 exact. */
    enum { NCTX = 6 };
    static const int blocks[NCTX] = {0, 128, 512, 1024, 0, 0};
    static const char *const ctx_name[NCTX] = {"cpu", "device block 128", "device block 512", "device block 1024",
                                               "device default block", "pageable host, 64 KiB chunks"};
    dreduce_context_t *ctx[2][NCTX];
    for (int m = 0; m < 2; ++m)
        for (int c = 0; c < NCTX; ++c) {
            dreduce_config_t cfg;
            dreduce_config_init(&cfg);
            cfg.nan = DR_NAN_OMIT;
            cfg.acc_mode = m ? DR_ACC_MODE_EXACT : DR_ACC_WIDE;
            cfg.device = c == 0 ? DR_DEVICE_CPU : DR_DEVICE_GPU;
            cfg.share_gpus = 1;
            cfg.block = blocks[c];
            if (c == 5) cfg.chunk_bytes = 65536;
            if (dreduce_create(c == 0 ? MPI_COMM_SELF : MPI_COMM_WORLD, &cfg, &ctx[m][c]) != DR_OK) return 1;
        }
    static const uint64_t sizes[] = {1, 1000, 65537, 1048583, (1u << 25) + 9};
    const int nsizes = sizeof sizes / sizeof sizes[0];
    int k = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ++ti) {
        const dr_dtype_t t = types[ti];
        const size_t es = dreduce_dtype_size(t);
        for (int p = 0; p < P_COUNT; ++p) {
            for (int si = 0; si < nsizes; ++si) {
                const uint64_t n = sizes[si];
                /* the largest size (multipass's bulk copies, float32 past 128 MiB): one data set of each type */
                if (si == nsizes - 1 && p != P_SOME) continue;
                for (int prod = 0; prod < 2; ++prod, ++k) {
                    unsigned char *whole = make_array(t, p, prod, n, 7919u * ti + 101u * (unsigned)p + 13u * si + prod);
                    const double asum = abs_sum(t, whole, n);
                    uint64_t first, mine;
                    dreduce_shard(n, DR_SCALING_STRONG, rank, nranks, &first, &mine);
                    const unsigned char *part = whole + first * es;
                    void *d_buf;
                    CUDA_OK(cudaMalloc(&d_buf, mine * es + 16));
                    const size_t off = (k & 1) ? es : 0;
                    CUDA_OK(cudaMemcpy((char *)d_buf + off, part, mine * es, cudaMemcpyHostToDevice));
                    const void *d_part = (const char *)d_buf + off;
                    char label[160];
                    snprintf(label, sizeof label, "%s %s%s n=%llu np=%d", dreduce_dtype_name(t), pattern_name[p],
                             prod ? " (near 1)" : "", (unsigned long long)n, nranks);
                    for (int ri = 0; ri < NROWS; ++ri) {
                        const row_t *row = &rows[ri];
                        if ((row->op == DR_PROD) != (prod == 1)) continue;
                        const int m = row->mode == DR_ACC_MODE_EXACT;
                        dreduce_result_t ref, got;
                        const dr_status_t rs = dreduce_reduce_at(ctx[m][0], whole, n, 0, t, row->op, &ref);
                        for (int c = 1; c < NCTX; ++c) {
                            if (c == 5 && n > (1u << 24)) continue; /* thousands of chunks: the smaller sizes do */
                            memset(&got, 0xa5, sizeof got);
                            const dr_status_t gs = dreduce_reduce_at(ctx[m][c], c == 5 ? (const void *)part : d_part,
                                                                     mine, first, t, row->op, &got);
                            char what[96];
                            snprintf(what, sizeof what, "%s %s", row->name, ctx_name[c]);
                            check_reduce(label, what, row, rs, &ref, gs, &got, asum, rank);
                        }
                    }
                    if (!prod && n < (1u << 24)) { /* quantiles and the histogram's automatic range, omitting NaN */
                        double rv[NQ], gv[NQ];
                        dreduce_dist_info_t ri, gi;
                        const dr_status_t rqs = dreduce_quantile(ctx[0][0], whole, n, t, NQ, qs, rv, NULL, &ri);
                        enum { B = 64 };
                        uint64_t rc[B], gc[B];
                        double re[B + 1], ge[B + 1];
                        dreduce_dist_info_t rhi, ghi;
                        const dr_status_t rhs = dreduce_histogram(ctx[0][0], whole, n, t, B, NULL, rc, re, &rhi);
                        for (int c = 1; c < NCTX; ++c) {
                            const void *buf = c == 5 ? (const void *)part : d_part;
                            memset(gv, 0xa5, sizeof gv);
                            const dr_status_t gqs = dreduce_quantile(ctx[0][c], buf, mine, t, NQ, qs, gv, NULL, &gi);
                            ++cases;
                            int ok = gqs == rqs;
                            for (int i = 0; ok && rqs == DR_OK && i < NQ; ++i)
                                ok = same_f64(gv[i], rv[i]) || (gv[i] == 0 && rv[i] == 0);
                            if (ok && rqs == DR_OK) ok = gi.nan_count == ri.nan_count && gi.count == ri.count;
                            if (!ok)
                                FAIL("%s quantile %s: status %d q0.5 %.17g nan %llu, reference %d %.17g %llu", label,
                                     ctx_name[c], gqs, gv[3], (unsigned long long)gi.nan_count, rqs, rv[3],
                                     (unsigned long long)ri.nan_count);
                            memset(gc, 0xa5, sizeof gc);
                            const dr_status_t ghs = dreduce_histogram(ctx[0][c], buf, mine, t, B, NULL, gc, ge, &ghi);
                            ++cases;
                            ok = ghs == rhs;
                            if (ok && rhs == DR_OK && rank == 0)
                                ok = memcmp(gc, rc, sizeof rc) == 0 && memcmp(ge, re, sizeof re) == 0 &&
                                     ghi.nan_count == rhi.nan_count;
                            if (!ok)
                                FAIL("%s histogram (automatic range) %s: status %d nan %llu, reference %d %llu", label,
                                     ctx_name[c], ghs, (unsigned long long)ghi.nan_count, rhs,
                                     (unsigned long long)rhi.nan_count);
                        }
                    }
                    CUDA_OK(cudaFree(d_buf));
                    free(whole);
                }
            }
        }
    }
    /* A call that leaves no NaN out (PROPAGATE, or an integer type) after one that did: its kernels write no NaN
     * count, and the record's count of the call before must not show through (in nan_count, or as "every element
     * NaN", which would turn min into NaN). Device buffers on the context of blocks of 128, then back to OMIT. */
    {
        enum { N = 1000 };
        float *h = malloc(N * sizeof *h);
        int32_t *hi = malloc(N * sizeof *hi);
        void *d;
        CUDA_OK(cudaMalloc(&d, N * sizeof(float)));
        dreduce_context_t *g = ctx[0][1];
        dreduce_result_t res;
        for (int i = 0; i < N; ++i) h[i] = NAN, hi[i] = i - 500;
        CUDA_OK(cudaMemcpy(d, h, N * sizeof *h, cudaMemcpyHostToDevice));
        dr_status_t st = dreduce_reduce_at(g, d, N, (uint64_t)rank * N, DR_FLOAT32, DR_MIN, &res);
        ++cases;
        if (st != DR_OK || (rank == 0 && (!isnan(dreduce_result_double(&res)) || res.nan_count != (uint64_t)N * nranks)))
            FAIL("stale NaN count: NaN only under OMIT: status %d, min %g, nan %llu", st, dreduce_result_double(&res),
                 (unsigned long long)res.nan_count);
        for (int i = 0; i < N; ++i) h[i] = (float)i;
        CUDA_OK(cudaMemcpy(d, h, N * sizeof *h, cudaMemcpyHostToDevice));
        dreduce_set_nan(g, DR_NAN_PROPAGATE);
        st = dreduce_reduce_at(g, d, N, (uint64_t)rank * N, DR_FLOAT32, DR_MIN, &res);
        ++cases;
        if (st != DR_OK || (rank == 0 && (dreduce_result_double(&res) != 0.0 || res.nan_count != 0)))
            FAIL("stale NaN count: PROPAGATE after OMIT: status %d, min %g (expected 0), nan %llu (expected 0)", st,
                 dreduce_result_double(&res), (unsigned long long)res.nan_count);
        dreduce_set_nan(g, DR_NAN_OMIT);
        for (int i = 0; i < N; ++i) h[i] = NAN;
        CUDA_OK(cudaMemcpy(d, h, N * sizeof *h, cudaMemcpyHostToDevice));
        st = dreduce_reduce_at(g, d, N, (uint64_t)rank * N, DR_FLOAT32, DR_MAX, &res); /* the count at N again */
        CUDA_OK(cudaMemcpy(d, hi, N * sizeof *hi, cudaMemcpyHostToDevice));
        st = st != DR_OK ? st : dreduce_reduce_at(g, d, N, (uint64_t)rank * N, DR_INT32, DR_MIN, &res);
        ++cases;
        if (st != DR_OK || (rank == 0 && (dreduce_result_double(&res) != -500.0 || res.nan_count != 0)))
            FAIL("stale NaN count: int32 under OMIT after NaN only: status %d, min %g (expected -500), nan %llu "
                 "(expected 0)", st, dreduce_result_double(&res), (unsigned long long)res.nan_count);
        CUDA_OK(cudaFree(d));
        free(h);
        free(hi);
    }
    int all_fail = 0, all_cases = 0;
    MPI_Allreduce(&failures, &all_fail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&cases, &all_cases, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d cases, %d failures (np %d)\n", all_cases, all_fail, nranks);
    for (int m = 0; m < 2; ++m)
        for (int c = 0; c < NCTX; ++c) dreduce_destroy(ctx[m][c]);
    MPI_Finalize();
    return all_fail ? 1 : 0;
}
