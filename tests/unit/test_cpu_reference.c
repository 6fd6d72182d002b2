/* Unit test of the CPU backend (src/lib/cpu_backend.c) against the host reference (src/cli/reference.c) and against our
 * own naive single-threaded loops: every row of DR_REDUCTION_TABLE, several sizes, thread counts, patterns and
 * offsets; merged shard references; the float min/max NaN and signed-zero rules, also over whole arrays (the SSE2
 * slices), and argmin/argmax of whole float arrays; that the lanes leave the ymm registers clean; and that the check
 * can fail. */
#include <math.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "check.h"
#include "cpu_backend.h"
#include "cpu_lanes.h"
#include "options.h"
#include "accum.h"
#include "datagen.h"
#include "distrib.h"
#include "table.h"
#include "reference.h"

typedef struct {
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
    const char *name;
} row_t;

static const row_t rows[] = {
#define X(DT, OP, op, ACC, acc) {DR_##DT, DR_##OP, DR_ACC_##ACC, #DT " " #OP " " #ACC},
    DR_REDUCTION_TABLE
#undef X
};
enum { NROWS = sizeof rows / sizeof rows[0] };

/* dr_cpu_reduce for the one-register rows of DR_REDUCTION_TABLE: the partial's value (poisoned first). Exact sums
 * have their own test (test_exact.c). */
static int cpu_reduce(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, const void *in, size_t n, int nthreads,
                      dr_value_t *out, uint64_t *depth)
{
    dr_partial_t p;
    memset(&p, 0xa5, sizeof p);
    const int rc = dr_cpu_reduce(dtype, op, acc, in, n, 0, nthreads, &p, depth);
    *out = p.value;
    return rc;
}

/* ---- our own naive reductions (not accum.h's functions): one loop, in index order ---- */

/* Integer element widened to 64 bits: sign-extended for signed types. */
static uint64_t int_elem(dr_dtype_t t, const void *in, size_t i)
{
    switch (t) {
    case DR_INT32: return (uint64_t)(int64_t)((const int32_t *)in)[i];
    case DR_UINT32: return ((const uint32_t *)in)[i];
    case DR_INT64: return (uint64_t)((const int64_t *)in)[i];
    case DR_INT8: return (uint64_t)(int64_t)((const int8_t *)in)[i];
    case DR_UINT8: return ((const uint8_t *)in)[i];
    case DR_INT16: return (uint64_t)(int64_t)((const int16_t *)in)[i];
    case DR_UINT16: return ((const uint16_t *)in)[i];
    default: return ((const uint64_t *)in)[i];
    }
}

/* An integer reduction, carried in 64 bits and reduced to the accumulator's width at the end (wrapping sums and
 * products are congruent modulo 2^32; min/max compare as the accumulator's signedness). */
static void naive_int(const row_t *r, const void *in, size_t n, dr_value_t *out)
{
    const int acc_signed = r->acc == DR_ACC_I32 || r->acc == DR_ACC_I64;
    const int acc64 = r->acc == DR_ACC_I64 || r->acc == DR_ACC_U64;
    uint64_t a;
    switch (r->op) {
    case DR_SUM: case DR_BOR: case DR_BXOR: a = 0; break;
    case DR_PROD: a = 1; break;
    case DR_BAND: a = UINT64_MAX; break;
    case DR_MIN: a = acc_signed ? (acc64 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX) : (acc64 ? UINT64_MAX : UINT32_MAX); break;
    default: a = acc_signed ? (acc64 ? (uint64_t)INT64_MIN : (uint64_t)(int64_t)INT32_MIN) : 0; break;
    }
    for (size_t i = 0; i < n; ++i) {
        const uint64_t x = int_elem(r->dtype, in, i);
        switch (r->op) {
        case DR_SUM: a += x; break;
        case DR_PROD: a *= x; break;
        case DR_BAND: a &= x; break;
        case DR_BOR: a |= x; break;
        case DR_BXOR: a ^= x; break;
        case DR_MIN:
            if (acc_signed ? (int64_t)x < (int64_t)a : x < a) a = x;
            break;
        default:
            if (acc_signed ? (int64_t)x > (int64_t)a : x > a) a = x;
            break;
        }
    }
    memset(out, 0, sizeof *out);
    switch (r->acc) {
    case DR_ACC_I32: out->i32 = (int32_t)(uint32_t)a; break;
    case DR_ACC_U32: out->u32 = (uint32_t)a; break;
    case DR_ACC_I64: out->i64 = (int64_t)a; break;
    default: out->u64 = a; break;
    }
}

static double float_elem(dr_dtype_t t, const void *in, size_t i)
{
    switch (t) {
    case DR_FLOAT32: return ((const float *)in)[i];
    case DR_FLOAT64: return ((const double *)in)[i];
    case DR_FLOAT16: return dr_f16_to_f32(((const uint16_t *)in)[i]);
    default: return dr_bf16_to_f32(((const uint16_t *)in)[i]);
    }
}

/* Float min/max with the documented rules, written independently: NaN wins (accum.h makes it the canonical NaN,
 * checked with is_canon_*); -0 < +0. */
static double nmin(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
static double nmax(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

/* A float reduction in index order, rounding to the accumulator after every step. */
/* The CPU backend's order on one thread (src/lib/cpu_backend.c): 8 lanes, element i in lane i % 8, each lane in order,
 * then the lanes folded as a tree (lane j with lane j + h, h = 4, 2, 1). */
#define LANES 8
static double lane_op(const row_t *r, double a, double x, int f32)
{
    double v = r->op == DR_SUM ? a + x : r->op == DR_PROD ? a * x : r->op == DR_MIN ? nmin(a, x) : nmax(a, x);
    return f32 ? (double)(float)v : v;
}

static void naive_float(const row_t *r, const void *in, size_t n, dr_value_t *out)
{
    memset(out, 0, sizeof *out);
    const int f32 = r->acc == DR_ACC_F32;
    double a[LANES];
    for (int j = 0; j < LANES; ++j)
        a[j] = r->op == DR_SUM ? 0.0 : r->op == DR_PROD ? 1.0 : r->op == DR_MIN ? INFINITY : -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        const double x = f32 ? (double)(float)float_elem(r->dtype, in, i) : float_elem(r->dtype, in, i);
        a[i % LANES] = lane_op(r, a[i % LANES], x, f32);
    }
    for (int h = LANES / 2; h > 0; h /= 2)
        for (int j = 0; j < h; ++j) a[j] = lane_op(r, a[j], a[j + h], f32);
    if (f32) out->f32 = (float)a[0];
    else out->f64 = a[0];
}

static void fmt(const row_t *r, const dr_value_t *v, char *buf, size_t len)
{
    switch (r->acc) {
    case DR_ACC_I32: snprintf(buf, len, "%" PRId32, v->i32); break;
    case DR_ACC_U32: snprintf(buf, len, "%" PRIu32, v->u32); break;
    case DR_ACC_I64: snprintf(buf, len, "%" PRId64, v->i64); break;
    case DR_ACC_U64: snprintf(buf, len, "%" PRIu64, v->u64); break;
    case DR_ACC_F32: snprintf(buf, len, "%a", (double)v->f32); break;
    default: snprintf(buf, len, "%a", v->f64); break;
    }
}

/* Bitwise equality of two accumulator values (NaN == NaN whatever the payload). */
static int same_value(const row_t *r, const dr_value_t *a, const dr_value_t *b)
{
    if (r->acc == DR_ACC_F32 && isnan(a->f32) && isnan(b->f32)) return 1;
    if (r->acc == DR_ACC_F64 && isnan(a->f64) && isnan(b->f64)) return 1;
    return memcmp(a, b, dr_acc_kind_size(r->acc)) == 0;
}

static int exact_kind(const row_t *r) { return !dr_acc_kind_is_float(r->acc) || r->op == DR_MIN || r->op == DR_MAX; }


/* A constant for the row's type: integers any bits; floats a finite value that keeps sums and products sane. */
static uint64_t pick_const(const row_t *r, uint64_t *rng)
{
    const uint64_t x = check_rand(rng);
    switch (r->dtype) {
    case DR_INT32: case DR_UINT32: return (uint32_t)x;
    case DR_INT64: case DR_UINT64: return x;
    case DR_INT8: case DR_UINT8: return (uint8_t)x;
    case DR_INT16: case DR_UINT16: return (uint16_t)x;
    case DR_FLOAT32: {
        float f = r->op == DR_PROD ? 1.0f + (float)((int)(x % 16) - 8) * 0x1p-20f : (float)((int)(x % 2001) - 1000) / 256.0f;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    case DR_FLOAT64: {
        double d = r->op == DR_PROD ? 1.0 + (double)((int)(x % 16) - 8) * 0x1p-40 : (double)((int64_t)(x >> 11)) * 0x1p-50;
        uint64_t b;
        memcpy(&b, &d, 8);
        return b;
    }
    /* 16-bit products: +-1 (the next value above 1, 1 + 2^-10, would overflow float32 within 10^5 elements). */
    case DR_FLOAT16: return (r->op == DR_PROD ? 0x3c00u : 0x3555u) ^ (uint32_t)((x & 1) << 15);
    default: return (r->op == DR_PROD ? 0x3f80u : 0x3eabu) ^ (uint32_t)((x & 1) << 15);
    }
}

static size_t total_checks_rows;

/* One (row, pattern, size, first): generate, reduce with every thread count, check against the naive loop and the
 * reference (itself computed with several thread counts). */
static void run_case(const row_t *r, dr_pattern_t pattern, size_t n, uint64_t first, uint64_t *rng, void *buf,
                     void *buf2)
{
    static const int threads[] = {1, 2, 3, 7};
    dr_gen_t g = {pattern, r->dtype, r->op, check_rand(rng), 0, 0};
    if (pattern == DR_DATA_CONST) g.const_bits = pick_const(r, rng);
    const size_t es = dr_dtype_size(r->dtype);
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s %s n=%zu first=%" PRIu64 " seed=%" PRIu64 " const=0x%" PRIx64, r->name,
             dr_pattern_name(pattern), n, first, g.seed, g.const_bits);
    /* Generation does not depend on the thread count. */
    dr_cpu_generate(&g, first, buf, n, 1);
    dr_cpu_generate(&g, first, buf2, n, 3);
    CHECK(memcmp(buf, buf2, n * es) == 0, "%s: dr_cpu_generate with 1 and 3 threads differ", ctx);

    dr_value_t naive;
    if (dr_acc_kind_is_float(r->acc)) naive_float(r, buf, n, &naive);
    else naive_int(r, buf, n, &naive);
    char want[64], got[64];
    fmt(r, &naive, want, sizeof want);

    dr_value_t first_result;
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; ++k) {
        dr_value_t res;
        uint64_t depth = 0;
        memset(&res, 0xa5, sizeof res);
        int rc = cpu_reduce(r->dtype, r->op, r->acc, buf, n, threads[k], &res, &depth);
        CHECK(rc == 0, "%s threads=%d: dr_cpu_reduce returned %d for a table row", ctx, threads[k], rc);
        fmt(r, &res, got, sizeof got);
        /* Integers and min/max: bit for bit the naive loop, whatever the threads. Float sums and products: the naive
         * loop (the backend's 8 lanes) in the same accumulator only on one thread (same order). */
        if (exact_kind(r) || threads[k] == 1)
            CHECK(same_value(r, &res, &naive), "%s threads=%d: got %s, naive loop gives %s", ctx, threads[k], got, want);
        if (k == 0) first_result = res;
        else
            CHECK(same_value(r, &res, &first_result) || !exact_kind(r), "%s: threads=%d differs from threads=1", ctx,
                  threads[k]);
        /* Depth: at least the longest sequential chain, a lane of one thread's slice (ceil(n / threads / 8)) and the
         * lanes' tree (3). */
        const uint64_t slice = (n + (uint64_t)threads[k] - 1) / (uint64_t)threads[k];
        CHECK(depth >= (slice + LANES - 1) / LANES + 3 || depth >= n,
              "%s threads=%d: depth %" PRIu64 " is below ceil(n / threads / 8) + 3", ctx, threads[k], depth);

        dr_reference_t ref;
        dr_reference_compute(&g, r->acc, first, n, threads[(k + 1) % 4], &ref);
        CHECK(ref.count == n, "%s: reference count %" PRIu64 ", expected %zu", ctx, ref.count, n);
        CHECK(ref.acc == r->acc && ref.op == r->op, "%s: reference acc/op %d/%d", ctx, ref.acc, ref.op);
        dr_check_t chk;
        dr_reference_check(&ref, &res, depth, &chk);
        CHECK(chk.pass, "%s threads=%d: reference check failed: %s", ctx, threads[k], chk.detail);
        if (exact_kind(r)) {
            CHECK(chk.exact == 1, "%s: exact kinds must be compared exactly: %s", ctx, chk.detail);
            CHECK(same_value(r, &ref.exact, &naive), "%s: reference exact value differs from the naive loop (%s): %s",
                  ctx, want, chk.detail);
        }
    }
    ++total_checks_rows;
}

/* Closed forms for constant data, independent of any loop. */
static void test_const_closed_forms(uint64_t *rng)
{
    static const size_t sizes[] = {0, 1, 2, 7, 1000, 65537};
    for (int ri = 0; ri < NROWS; ++ri) {
        const row_t *r = &rows[ri];
        if (dr_acc_kind_is_float(r->acc)) continue;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const size_t n = sizes[si];
            dr_gen_t g = {DR_DATA_CONST, r->dtype, r->op, 1, pick_const(r, rng), 0};
            const int is_signed = r->dtype == DR_INT32 || r->dtype == DR_INT64 || r->dtype == DR_INT8 ||
                                  r->dtype == DR_INT16;
            const size_t sz = dr_dtype_size(r->dtype);
            const uint64_t c = !is_signed || sz == 8 ? g.const_bits
                               : sz == 4 ? (uint64_t)(int64_t)(int32_t)(uint32_t)g.const_bits
                               : sz == 2 ? (uint64_t)(int64_t)(int16_t)(uint16_t)g.const_bits
                                         : (uint64_t)(int64_t)(int8_t)(uint8_t)g.const_bits;
            uint64_t want64;
            if (r->op == DR_SUM) want64 = c * (uint64_t)n;
            else if (r->op == DR_PROD) {
                want64 = 1;
                for (uint64_t e = n, b = c; e; e >>= 1, b *= b)
                    if (e & 1) want64 *= b;
            } else if (r->op == DR_BXOR) want64 = n & 1 ? c : 0;
            else if (n > 0) want64 = c;
            else continue; /* identity: covered by run_case */
            dr_value_t want;
            memset(&want, 0, sizeof want);
            if (r->acc == DR_ACC_I32 || r->acc == DR_ACC_U32) want.u32 = (uint32_t)want64;
            else want.u64 = want64;
            void *buf = malloc(n * 8 + 8);
            dr_cpu_generate(&g, 0, buf, n, 2);
            dr_value_t res;
            uint64_t depth;
            cpu_reduce(r->dtype, r->op, r->acc, buf, n, 3, &res, &depth);
            char a[64], b[64];
            fmt(r, &res, a, sizeof a);
            fmt(r, &want, b, sizeof b);
            CHECK(same_value(r, &res, &want), "%s const 0x%" PRIx64 " n=%zu: got %s, closed form %s", r->name,
                  g.const_bits, n, a, b);
            dr_reference_t ref;
            dr_reference_compute(&g, r->acc, 12345, n, 2, &ref);
            CHECK(same_value(r, &ref.exact, &want), "%s const n=%zu: reference exact value differs from %s", r->name, n,
                  b);
            free(buf);
        }
    }
    /* The brief's CLI example, here at the library level: int32 const:7 sum over 1000 is 7000. */
    dr_gen_t g = {DR_DATA_CONST, DR_INT32, DR_SUM, 1, 7, 0};
    int32_t buf[1000];
    dr_cpu_generate(&g, 0, buf, 1000, 1);
    dr_value_t res;
    uint64_t depth;
    cpu_reduce(DR_INT32, DR_SUM, DR_ACC_I64, buf, 1000, 2, &res, &depth);
    CHECK(res.i64 == 7000, "int32 const 7 sum over 1000: got %" PRId64 ", expected 7000", res.i64);
}

/* References of three uneven shards, merged, equal (integers, min/max) or check like (floats) the whole range. */
static void test_merge(uint64_t *rng)
{
    static const dr_pattern_t pats[] = {DR_DATA_RANDOM, DR_DATA_IOTA};
    const uint64_t n = 200003, first = check_rand(rng) >> 20;
    void *buf = malloc(n * 8);
    for (int ri = 0; ri < NROWS; ++ri) {
        const row_t *r = &rows[ri];
        for (int pi = 0; pi < 2; ++pi) {
            if (dr_acc_kind_is_float(r->acc) && r->op == DR_PROD && pats[pi] == DR_DATA_IOTA)
                continue; /* overflow: see test_prod_range */
            dr_gen_t g = {pats[pi], r->dtype, r->op, check_rand(rng), 0, 0};
            /* Uneven cuts: one tiny shard, one empty-or-small, one big. */
            const uint64_t a = 1 + check_rand(rng) % 7, b = a + check_rand(rng) % 100000;
            dr_reference_t whole, s0, s1, s2;
            dr_reference_compute(&g, r->acc, first, n, 3, &whole);
            dr_reference_compute(&g, r->acc, first, a, 1, &s0);
            dr_reference_compute(&g, r->acc, first + a, b - a, 2, &s1);
            dr_reference_compute(&g, r->acc, first + b, n - b, 3, &s2);
            dr_reference_t merged = s0;
            dr_reference_merge(&merged, &s1);
            dr_reference_merge(&merged, &s2);
            char ctx[192];
            snprintf(ctx, sizeof ctx, "%s %s merge of [0,%" PRIu64 ") [%" PRIu64 ",%" PRIu64 ") [%" PRIu64 ",%" PRIu64
                     ") first=%" PRIu64 " seed=%" PRIu64, r->name, dr_pattern_name(pats[pi]), a, a, b, b, n, first, g.seed);
            CHECK(merged.count == n, "%s: merged count %" PRIu64 ", expected %" PRIu64, ctx, merged.count, n);
            dr_cpu_generate(&g, first, buf, n, 2);
            dr_value_t res;
            uint64_t depth;
            cpu_reduce(r->dtype, r->op, r->acc, buf, n, 2, &res, &depth);
            dr_check_t chk;
            dr_reference_check(&merged, &res, depth + 3, &chk);
            CHECK(chk.pass, "%s: check against the merged reference failed: %s", ctx, chk.detail);
            if (exact_kind(r)) {
                char a1[64], a2[64];
                fmt(r, &merged.exact, a1, sizeof a1);
                fmt(r, &whole.exact, a2, sizeof a2);
                CHECK(same_value(r, &merged.exact, &whole.exact), "%s: merged %s, whole %s", ctx, a1, a2);
            } else {
                /* The double-double values agree to far better than the check's bound. */
                const double m = merged.hi + merged.lo, w = whole.hi + whole.lo;
                CHECK((isnan(m) && isnan(w)) || m == w || fabs(m - w) <= 1e-12 * fabs(w) + 1e-300,
                      "%s: merged %.17g, whole %.17g", ctx, m, w);
                if (r->op == DR_SUM)
                    CHECK(fabs(merged.abs_sum - whole.abs_sum) <= 1e-9 * whole.abs_sum, "%s: abs_sum %.17g vs %.17g",
                          ctx, merged.abs_sum, whole.abs_sum);
            }
        }
    }
    free(buf);
}

/* ---- NaN and signed-zero rules ---- */
static int is_negzero_f(float x) { return x == 0 && signbit(x); }
static int is_poszero_f(float x) { return x == 0 && !signbit(x); }
static int is_negzero_d(double x) { return x == 0 && signbit(x); }
static int is_poszero_d(double x) { return x == 0 && !signbit(x); }
/* The canonical NaN, the only NaN float min/max return (what the GPU's min.NaN.f32 gives). */
static int is_canon_f(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    return b == 0x7fffffffu;
}
static int is_canon_d(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b == 0x7fffffffffffffffull;
}

static void test_min_max_rules(uint64_t *rng)
{
    const float fn = NAN, fi = INFINITY;
    const double dn = NAN, di = INFINITY;
    const float fv[] = {1.0f, -1.0f, 0.0f, -0.0f, fi, -fi, 3.4e38f, 1e-45f};
    for (size_t i = 0; i < sizeof fv / sizeof fv[0]; ++i) {
        CHECK(is_canon_f(dr_min_f32(fn, fv[i])), "dr_min_f32(NaN, %g) is not the canonical NaN", (double)fv[i]);
        CHECK(is_canon_f(dr_min_f32(fv[i], fn)), "dr_min_f32(%g, NaN) is not the canonical NaN", (double)fv[i]);
        CHECK(is_canon_f(dr_max_f32(fn, fv[i])), "dr_max_f32(NaN, %g) is not the canonical NaN", (double)fv[i]);
        CHECK(is_canon_f(dr_max_f32(fv[i], fn)), "dr_max_f32(%g, NaN) is not the canonical NaN", (double)fv[i]);
        CHECK(is_canon_d(dr_min_f64(dn, fv[i])), "dr_min_f64(NaN, %g) is not the canonical NaN", (double)fv[i]);
        CHECK(is_canon_d(dr_min_f64(fv[i], dn)), "dr_min_f64(%g, NaN) is not the canonical NaN", (double)fv[i]);
        CHECK(is_canon_d(dr_max_f64(dn, fv[i])), "dr_max_f64(NaN, %g) is not the canonical NaN", (double)fv[i]);
        CHECK(is_canon_d(dr_max_f64(fv[i], dn)), "dr_max_f64(%g, NaN) is not the canonical NaN", (double)fv[i]);
    }
    CHECK(is_canon_f(dr_min_f32(fn, fn)) && is_canon_d(dr_max_f64(dn, dn)), "min/max(NaN, NaN) is not the canonical NaN");
    CHECK(is_negzero_f(dr_min_f32(-0.0f, 0.0f)), "dr_min_f32(-0, +0) = %g, expected -0", (double)dr_min_f32(-0.0f, 0.0f));
    CHECK(is_negzero_f(dr_min_f32(0.0f, -0.0f)), "dr_min_f32(+0, -0) = %g, expected -0", (double)dr_min_f32(0.0f, -0.0f));
    CHECK(is_poszero_f(dr_max_f32(-0.0f, 0.0f)), "dr_max_f32(-0, +0) = %g, expected +0", (double)dr_max_f32(-0.0f, 0.0f));
    CHECK(is_poszero_f(dr_max_f32(0.0f, -0.0f)), "dr_max_f32(+0, -0) = %g, expected +0", (double)dr_max_f32(0.0f, -0.0f));
    CHECK(is_negzero_f(dr_min_f32(-0.0f, -0.0f)) && is_poszero_f(dr_max_f32(0.0f, 0.0f)), "min(-0,-0) / max(+0,+0)");
    CHECK(is_negzero_d(dr_min_f64(-0.0, 0.0)), "dr_min_f64(-0, +0) = %g, expected -0", dr_min_f64(-0.0, 0.0));
    CHECK(is_negzero_d(dr_min_f64(0.0, -0.0)), "dr_min_f64(+0, -0) = %g, expected -0", dr_min_f64(0.0, -0.0));
    CHECK(is_poszero_d(dr_max_f64(-0.0, 0.0)), "dr_max_f64(-0, +0) = %g, expected +0", dr_max_f64(-0.0, 0.0));
    CHECK(is_poszero_d(dr_max_f64(0.0, -0.0)), "dr_max_f64(+0, -0) = %g, expected +0", dr_max_f64(0.0, -0.0));
    CHECK(dr_min_f64(-di, 1.0) == -di && dr_max_f64(di, 1.0) == di && dr_min_f64(di, 1.0) == 1.0,
          "min/max with infinities");
    CHECK(dr_min_f32(2.0f, 1.0f) == 1.0f && dr_max_f32(1.0f, 2.0f) == 2.0f && dr_min_f32(-2.0f, 1.0f) == -2.0f,
          "plain min/max");
    /* Random pairs against our own rules (order independence included). */
    for (int rep = 0; rep < 100000; ++rep) {
        uint64_t x = check_rand(rng), y = (rep & 3) ? check_rand(rng) : x ^ ((uint64_t)1 << 63);
        double a, b;
        memcpy(&a, &x, 8);
        memcpy(&b, &y, 8);
        if ((rep & 7) == 1) a = 0.0 * (double)(x & 1 ? -1 : 1), b = -a;
        const double m1 = dr_min_f64(a, b), m2 = dr_min_f64(b, a), M1 = dr_max_f64(a, b), M2 = dr_max_f64(b, a);
        const double wm = nmin(a, b), wM = nmax(a, b);
        CHECK((isnan(wm) ? is_canon_d(m1) && is_canon_d(m2) : memcmp(&m1, &wm, 8) == 0 && memcmp(&m2, &wm, 8) == 0),
              "dr_min_f64(%a, %a) = %a / %a, expected %a", a, b, m1, m2, wm);
        CHECK((isnan(wM) ? is_canon_d(M1) && is_canon_d(M2) : memcmp(&M1, &wM, 8) == 0 && memcmp(&M2, &wM, 8) == 0),
              "dr_max_f64(%a, %a) = %a / %a, expected %a", a, b, M1, M2, wM);
        const float fa = (float)a, fb = (float)b;
        const float f1 = dr_min_f32(fa, fb), f2 = dr_min_f32(fb, fa), F1 = dr_max_f32(fa, fb), F2 = dr_max_f32(fb, fa);
        const float fwm = (float)nmin(fa, fb), fwM = (float)nmax(fa, fb);
        CHECK((isnan(fwm) ? is_canon_f(f1) && is_canon_f(f2) : memcmp(&f1, &fwm, 4) == 0 && memcmp(&f2, &fwm, 4) == 0),
              "dr_min_f32(%a, %a) = %a / %a, expected %a", (double)fa, (double)fb, (double)f1, (double)f2, (double)fwm);
        CHECK((isnan(fwM) ? is_canon_f(F1) && is_canon_f(F2) : memcmp(&F1, &fwM, 4) == 0 && memcmp(&F2, &fwM, 4) == 0),
              "dr_max_f32(%a, %a) = %a / %a, expected %a", (double)fa, (double)fb, (double)F1, (double)F2, (double)fwM);
    }
    /* The generic combine follows the same rules. */
    dr_value_t v, w;
    memset(&v, 0, sizeof v);
    memset(&w, 0, sizeof w);
    v.f32 = 1.0f;
    w.f32 = NAN;
    dr_acc_combine(DR_ACC_F32, DR_MIN, &v, &w);
    CHECK(is_canon_f(v.f32), "dr_acc_combine(F32, min, 1, NaN) = %g", (double)v.f32);
    v.f64 = -0.0;
    w.f64 = 0.0;
    dr_acc_combine(DR_ACC_F64, DR_MAX, &v, &w);
    CHECK(is_poszero_d(v.f64), "dr_acc_combine(F64, max, -0, +0) = %g", v.f64);
    v.f64 = 0.0;
    w.f64 = -0.0;
    dr_acc_combine(DR_ACC_F64, DR_MIN, &v, &w);
    CHECK(is_negzero_d(v.f64), "dr_acc_combine(F64, min, +0, -0) = %g", v.f64);
}

/* Whole arrays through the CPU backend's float min and max (the SSE2 slices on x86-64) and stats' min and max,
 * against the select chain over the elements in order: arrays mixing -0 and +0, NaN of any payload, infinities,
 * small integers and random bit patterns, of lengths around the register and lane widths and larger, at 1 and 3
 * threads; the same bits. float16 and bfloat16 too (widened a block at a time, then the float32 slices). */
/* float16 bits of v: NaN, an infinity, or a value exact in float16 (the small integers and zeros below). */
static uint16_t f16_of(double v)
{
    if (v != v) return 0x7e00u;
    if (isinf(v)) return v > 0 ? 0x7c00u : 0xfc00u;
    return dr_f32_to_f16_exact((float)v);
}

static void test_min_max_arrays(uint64_t *rng)
{
    enum { MAXN = 5000 };
    static float f[MAXN];
    static double d[MAXN];
    static uint16_t h[MAXN], bh[MAXN]; /* float16 and bfloat16 bits: widened a block at a time by the backend */
    for (int trial = 0; trial < 3000; ++trial) {
        const size_t n = trial % 50 == 0 ? MAXN - check_rand(rng) % 64 : check_rand(rng) % 70;
        const int mode = (int)(check_rand(rng) % 6);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t r = check_rand(rng), pick = r % 100;
            double v;
            switch (mode) {
            case 0: v = pick < 50 ? -0.0 : 0.0; break;                                  /* zeros of both signs */
            case 1: v = pick < 3 ? NAN : (pick < 50 ? -0.0 : 0.0) + (pick > 90); break; /* and a NaN or a one */
            case 2: v = pick < 2 ? INFINITY : pick < 4 ? -INFINITY : (double)(r >> 40 & 1023) - 512; break;
            case 3: v = pick < 1 ? -0.0 : (double)(r >> 40 & 7); break; /* a rare -0 among positives */
            case 4: v = pick < 1 ? 0.0 : -(double)(r >> 40 & 7); break; /* a rare +0 among negatives */
            default: memcpy(&v, &r, 8); break;                           /* any bits, NaN payloads included */
            }
            d[i] = v;
            f[i] = (float)v;
            if (mode == 5) {
                const uint32_t b = (uint32_t)(r >> 32);
                memcpy(&f[i], &b, 4);
            }
            h[i] = mode == 5 ? (uint16_t)(r >> 16) : f16_of(v);
            bh[i] = mode == 5 ? (uint16_t)(r >> 48) : (uint16_t)(dr_f32_to_bits((float)v) >> 16);
        }
        for (int is_max = 0; is_max < 2; ++is_max) {
            float wf = is_max ? -INFINITY : INFINITY, wh = wf, wb = wf;
            double wd = is_max ? -INFINITY : INFINITY;
            for (size_t i = 0; i < n; ++i) {
                wf = is_max ? dr_max_select_f32(wf, f[i]) : dr_min_select_f32(wf, f[i]);
                wd = is_max ? dr_max_select_f64(wd, d[i]) : dr_min_select_f64(wd, d[i]);
                const float hv = dr_f16_to_f32(h[i]), bv = dr_bf16_to_f32(bh[i]);
                wh = is_max ? dr_max_select_f32(wh, hv) : dr_min_select_f32(wh, hv);
                wb = is_max ? dr_max_select_f32(wb, bv) : dr_min_select_f32(wb, bv);
            }
            const dr_op_t op = is_max ? DR_MAX : DR_MIN;
            for (int t = 1; t <= 3; t += 2) {
                const struct {
                    dr_dtype_t dtype;
                    const void *in;
                    double want; /* float32 results widened exactly */
                } cases[] = {{DR_FLOAT32, f, wf}, {DR_FLOAT64, d, wd}, {DR_FLOAT16, h, wh}, {DR_BFLOAT16, bh, wb}};
                for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
                    const int f64 = cases[c].dtype == DR_FLOAT64;
                    dr_partial_t o;
                    uint64_t depth;
                    memset(&o, 0xa5, sizeof o);
                    const int rc = dr_cpu_reduce(cases[c].dtype, op, f64 ? DR_ACC_F64 : DR_ACC_F32, cases[c].in, n, 0,
                                                 t, &o, &depth);
                    const float want32 = (float)cases[c].want;
                    const int same = f64 ? !memcmp(&o.value.f64, &cases[c].want, 8) : !memcmp(&o.value.f32, &want32, 4);
                    CHECK(rc == 0 && same, "%s %s of %zu elements (mode %d, %d threads) = %a, expected %a",
                          dr_dtype_name(cases[c].dtype), is_max ? "max" : "min", n, mode, t,
                          f64 ? o.value.f64 : (double)o.value.f32, cases[c].want);
                }
                dr_partial_t o;
                uint64_t depth;
                if (n == 0) continue;
                memset(&o, 0xa5, sizeof o);
                const double want = wd != wd ? dr_bits_to_f64(0x7fffffffffffffffull) : wd;
                CHECK(dr_cpu_reduce(DR_FLOAT64, DR_STATS, DR_ACC_STATS_F64, d, n, 0, t, &o, &depth) == 0 &&
                          memcmp(is_max ? &o.stats.max.f64 : &o.stats.min.f64, &want, 8) == 0,
                      "float64 stats' %s of %zu elements (mode %d, %d threads) = %a, expected %a",
                      is_max ? "max" : "min", n, mode, t, is_max ? o.stats.max.f64 : o.stats.min.f64, want);
            }
        }
    }
}

/* Whole float arrays through argmin/argmax (the SSE2 block extremes on x86-64) against a first-occurrence scan: the
 * first NaN if there is one, else the first element at the extreme (-0 and +0 equal); 1 and 3 threads. */
static void test_arg_arrays(uint64_t *rng)
{
    enum { MAXN = 9000 };
    static float f[MAXN];
    static double d[MAXN];
    for (int trial = 0; trial < 2000; ++trial) {
        const size_t n = 1 + (trial % 25 == 0 ? MAXN - 1 - check_rand(rng) % 100 : check_rand(rng) % 300);
        const int mode = (int)(check_rand(rng) % 5);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t r = check_rand(rng), pick = r % 1000;
            double v;
            switch (mode) {
            case 0: v = pick < 500 ? -0.0 : 0.0; break;
            case 1: v = pick < 2 ? NAN : (double)(r >> 40 & 63); break;
            case 2: v = pick < 5 ? INFINITY : pick < 10 ? -INFINITY : (double)(r >> 40 & 1023) - 512; break;
            case 3: v = (double)(r >> 40 & 3); break; /* ties everywhere */
            default: memcpy(&v, &r, 8); break;
            }
            d[i] = v;
            f[i] = (float)v;
        }
        for (int is_max = 0; is_max < 2; ++is_max) {
            size_t wf = 0, wd = 0;
            for (size_t i = 1; i < n && f[wf] == f[wf]; ++i)
                if (f[i] != f[i] || (is_max ? f[i] > f[wf] : f[i] < f[wf])) wf = i;
            for (size_t i = 1; i < n && d[wd] == d[wd]; ++i)
                if (d[i] != d[i] || (is_max ? d[i] > d[wd] : d[i] < d[wd])) wd = i;
            const dr_op_t op = is_max ? DR_ARGMAX : DR_ARGMIN;
            for (int t = 1; t <= 3; t += 2) {
                dr_partial_t o;
                uint64_t depth;
                memset(&o, 0xa5, sizeof o);
                double want = dr_arg_canon_f64((double)f[wf]);
                CHECK(dr_cpu_reduce(DR_FLOAT32, op, DR_ACC_ARG_F64, f, n, 0, t, &o, &depth) == 0 &&
                          o.value.arg.index == wf && memcmp(&o.value.arg.value.f64, &want, 8) == 0,
                      "float32 %s of %zu elements (mode %d, %d threads) = %a at %" PRIu64 ", expected %a at %zu",
                      is_max ? "argmax" : "argmin", n, mode, t, o.value.arg.value.f64, o.value.arg.index, want, wf);
                memset(&o, 0xa5, sizeof o);
                want = dr_arg_canon_f64(d[wd]);
                CHECK(dr_cpu_reduce(DR_FLOAT64, op, DR_ACC_ARG_F64, d, n, 0, t, &o, &depth) == 0 &&
                          o.value.arg.index == wd && memcmp(&o.value.arg.value.f64, &want, 8) == 0,
                      "float64 %s of %zu elements (mode %d, %d threads) = %a at %" PRIu64 ", expected %a at %zu",
                      is_max ? "argmax" : "argmin", n, mode, t, o.value.arg.value.f64, o.value.arg.index, want, wd);
            }
        }
    }
}

/* Float stats on one thread against a scalar model of the slice (cpu_backend.c, "Statistics"): blocks of 256 from the
 * start; in each, lane j sums elements j, j + 8, ... and the lanes fold as a tree (4, 2, 1), the mean is that sum over
 * the block's count, m2 the same lanes and tree over (x - mean)^2, min and max by the rules; the blocks merge in turn
 * (dr_stats_merge_moments) and their sums add. Every field the same bits, so a change of the lanes' or the tree's
 * order (which changes float sums) fails here; through every version of the lanes this CPU runs (cpu_lanes.c). Data of random magnitudes and signs, lengths around the block and
 * lane sizes, float32, float64 and float16, from an aligned and an unaligned start. */
static void test_stats_model(uint64_t *rng)
{
    enum { MAXN = 4200, B = 256, L = 8 };
    static double x[MAXN + 1], buf64[MAXN + 1];
    static float buf32[MAXN + 1];
    static uint16_t buf16[MAXN + 1];
    static const size_t lens[] = {1, 2, 7, 8, 9, 15, 16, 17, 40, 255, 256, 257, 263, 511, 512, 513, 1000, 4099};
    static const dr_dtype_t types[] = {DR_FLOAT32, DR_FLOAT64, DR_FLOAT16};
    const dr_cpu_lanes_t *widest = dr_cpu_lanes();
    for (int rep = 0; rep < 6; ++rep)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li)
            for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ++ti) {
                const size_t n = lens[li], off = (size_t)(rep & 1);
                const dr_dtype_t t = types[ti];
                for (size_t i = 0; i < n; ++i) {
                    const uint64_t r = check_rand(rng);
                    /* float16: binades -10..10, normal numbers of its range */
                    const int e = t == DR_FLOAT16 ? (int)(r % 21) - 10 : (int)(r % 41) - 20;
                    double v = ldexp((double)(r >> 11) / 9007199254740992.0 + 0.5, e);
                    if (r & 1) v = -v;
                    buf64[off + i] = v;
                    buf32[off + i] = (float)v;
                    buf16[off + i] = dr_f32_to_f16_exact((float)v); /* truncated to float16's grid */
                    x[i] = t == DR_FLOAT64 ? v : t == DR_FLOAT32 ? (double)buf32[off + i]
                                                                 : (double)dr_f16_to_f32(buf16[off + i]);
                }
                dr_stats_t w;
                dr_stats_identity(DR_ACC_STATS_F64, &w);
                for (size_t b0 = 0; b0 < n; b0 += B) {
                    const size_t k = n - b0 < B ? n - b0 : B;
                    double a[L] = {0}, q[L] = {0}, lo = INFINITY, hi = -INFINITY;
                    for (size_t i = 0; i < k; ++i) {
                        a[i % L] += x[b0 + i];
                        lo = dr_min_select_f64(lo, x[b0 + i]);
                        hi = dr_max_select_f64(hi, x[b0 + i]);
                    }
                    for (int h = L / 2; h > 0; h /= 2)
                        for (int j = 0; j < h; ++j) a[j] += a[j + h];
                    const double mean = a[0] / (double)k;
                    for (size_t i = 0; i < k; ++i) q[i % L] += (x[b0 + i] - mean) * (x[b0 + i] - mean);
                    for (int h = L / 2; h > 0; h /= 2)
                        for (int j = 0; j < h; ++j) q[j] += q[j + h];
                    w.sum.f64 += a[0];
                    w.min.f64 = dr_min_select_f64(w.min.f64, lo);
                    w.max.f64 = dr_max_select_f64(w.max.f64, hi);
                    dr_stats_merge_moments(&w.count, &w.mean, &w.m2, (uint64_t)k, mean, q[0]);
                }
                const void *in = t == DR_FLOAT64 ? (const void *)(buf64 + off)
                                 : t == DR_FLOAT32 ? (const void *)(buf32 + off)
                                                   : (const void *)(buf16 + off);
                for (int v = 0; dr_cpu_lanes_at(v); ++v) {
                    const dr_cpu_lanes_t *lanes = dr_cpu_lanes_at(v);
                    if (dr_cpu_lanes_use(lanes) != 0) continue; /* not on this CPU */
                    dr_partial_t o;
                    uint64_t depth;
                    memset(&o, 0xa5, sizeof o);
                    const int rc = dr_cpu_reduce(t, DR_STATS, DR_ACC_STATS_F64, in, n, 0, 1, &o, &depth);
                    const dr_stats_t *g = &o.stats;
                    CHECK(rc == 0 && g->count == w.count && memcmp(&g->sum.f64, &w.sum.f64, 8) == 0 &&
                              memcmp(&g->mean, &w.mean, 8) == 0 && memcmp(&g->m2, &w.m2, 8) == 0 &&
                              memcmp(&g->min.f64, &w.min.f64, 8) == 0 && memcmp(&g->max.f64, &w.max.f64, 8) == 0,
                          "%s stats of %zu elements (start +%zu, %s lanes): sum %a mean %a m2 %a min %a max %a, the "
                          "model's %a %a %a %a %a", dr_dtype_name(t), n, off, lanes->name, g->sum.f64, g->mean, g->m2,
                          g->min.f64, g->max.f64, w.sum.f64, w.mean, w.m2, w.min.f64, w.max.f64);
                }
                dr_cpu_lanes_use(widest);
            }
}

/* Two float64 fields alike: the same bits, or both NaN (a NaN's payload in a running sum, mean or m2 depends on
 * which operand an add took it from; results make every NaN canonical: dr_stats_result). */
static int same_or_nan(double a, double b) { return (a != a && b != b) || !memcmp(&a, &b, 8); }

/* Stats of data with the values the rules are about (NaN, +-inf, -0 and +0, subnormals) and of integers, through
 * every version of the lanes this CPU runs (cpu_lanes.c) on 1 and 3 threads (arrays long enough for 3 slices):
 * every field the portable version's (sum, mean and m2 by same_or_nan), and the float types' min and max also those
 * of a chain of DR_MIN/DR_MAX's rules over the whole array (dr_min_select_f64 / dr_max_select_f64 of the widened
 * elements), which is what the blocks' zero-sign and NaN fixes must give. Modes: random magnitudes of both signs
 * (0), with zeros of both signs (1), non-negative with zeros of both signs (2: minima that are zeros), non-positive
 * with zeros of both signs (3: maxima that are zeros), with the specials (4). */
static void test_stats_lanes_specials(uint64_t *rng)
{
    enum { MAXN = 200000 };
    static double d[MAXN];
    static float f[MAXN];
    static int64_t q[MAXN];
    static uint16_t h[MAXN];
    const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 4.9e-324, -2.5e-310, 1e-40, 3.0};
    const dr_cpu_lanes_t *portable = dr_cpu_lanes_at(0), *widest = dr_cpu_lanes();
    static const struct {
        dr_dtype_t t;
        dr_acc_kind_t acc;
    } rows[] = {{DR_FLOAT64, DR_ACC_STATS_F64},  {DR_FLOAT32, DR_ACC_STATS_F64}, {DR_FLOAT16, DR_ACC_STATS_F64},
                {DR_BFLOAT16, DR_ACC_STATS_F64}, {DR_INT64, DR_ACC_STATS_I64},   {DR_FLOAT32, DR_ACC_STATS_EXACT}};
    for (int rep = 0; rep < 50; ++rep) {
        const size_t n = rep % 10 == 9 ? 140000 + (size_t)(check_rand(rng) % 60000) : 1 + (size_t)(check_rand(rng) % 3000);
        const int mode = rep % 5;
        for (size_t i = 0; i < n; ++i) {
            const uint64_t r = check_rand(rng);
            double v = ldexp((double)(r >> 11) / 9007199254740992.0, (int)(r % 9) - 4);
            if (mode == 3 || (mode != 2 && (r & 1))) v = -v;
            if (mode >= 1 && mode <= 3 && r % 5 == 0) v = (r & 2) ? -0.0 : 0.0;
            if (mode == 4 && r % 97 == 0) v = specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
            d[i] = v;
            f[i] = (float)v;
            h[i] = (uint16_t)(dr_f32_to_bits((float)v) >> 16);
            q[i] = (int64_t)(r >> 1) - (int64_t)(UINT64_C(1) << 62);
        }
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
            const dr_dtype_t t = rows[ri].t;
            const void *in = t == DR_FLOAT64 ? (const void *)d : t == DR_FLOAT32 ? (const void *)f
                             : t == DR_INT64 ? (const void *)q : (const void *)h;
            const int is_float = t != DR_INT64;
            double lo = INFINITY, hi = -INFINITY; /* the rules' chain */
            for (size_t i = 0; i < n && is_float; ++i) {
                const double x = t == DR_FLOAT64 ? d[i] : t == DR_FLOAT32 ? (double)f[i]
                                 : t == DR_FLOAT16 ? (double)dr_f16_to_f32(h[i]) : (double)dr_bf16_to_f32(h[i]);
                lo = dr_min_select_f64(lo, x);
                hi = dr_max_select_f64(hi, x);
            }
            for (int threads = 1; threads <= 3; threads += 2) {
                dr_partial_t want, got;
                uint64_t depth;
                memset(&want, 0xa5, sizeof want);
                dr_cpu_lanes_use(portable);
                CHECK(dr_cpu_reduce(t, DR_STATS, rows[ri].acc, in, n, 0, threads, &want, &depth) == 0,
                      "%s stats (acc %d) of %zu elements failed", dr_dtype_name(t), (int)rows[ri].acc, n);
                const dr_stats_t *w = rows[ri].acc == DR_ACC_STATS_EXACT ? &want.stats_exact.stats : &want.stats;
                if (is_float)
                    CHECK(!memcmp(&w->min.f64, &lo, 8) && !memcmp(&w->max.f64, &hi, 8),
                          "%s stats (mode %d) of %zu elements on %d threads: min %a max %a, the rules' %a %a",
                          dr_dtype_name(t), mode, n, threads, w->min.f64, w->max.f64, lo, hi);
                for (int v = 1; dr_cpu_lanes_at(v); ++v) {
                    const dr_cpu_lanes_t *lanes = dr_cpu_lanes_at(v);
                    if (dr_cpu_lanes_use(lanes) != 0) continue;
                    memset(&got, 0x5a, sizeof got);
                    const int rc = dr_cpu_reduce(t, DR_STATS, rows[ri].acc, in, n, 0, threads, &got, &depth);
                    const dr_stats_t *g = rows[ri].acc == DR_ACC_STATS_EXACT ? &got.stats_exact.stats : &got.stats;
                    const int sum_same = is_float ? same_or_nan(g->sum.f64, w->sum.f64)
                                                  : !memcmp(&g->sum, &w->sum, sizeof g->sum);
                    CHECK(rc == 0 && g->count == w->count && sum_same && same_or_nan(g->mean, w->mean) &&
                              same_or_nan(g->m2, w->m2) && !memcmp(&g->min, &w->min, sizeof g->min) &&
                              !memcmp(&g->max, &w->max, sizeof g->max),
                          "%s stats (acc %d, mode %d) of %zu elements on %d threads with %s lanes: mean %a m2 %a min "
                          "%a max %a; portable: %a %a %a %a", dr_dtype_name(t), (int)rows[ri].acc, mode, n, threads,
                          lanes->name, g->mean, g->m2, g->min.f64, g->max.f64, w->mean, w->m2, w->min.f64, w->max.f64);
                }
            }
        }
    }
    dr_cpu_lanes_use(widest);
}

/* float16 widening (the 16-bit floats' blocks): every version this CPU runs gives dr_f16_to_f32's bits for every one
 * of the 65536 values, to float and to double (double of that float), at every start and length around its step of
 * eight (F16C in the AVX version: NaN payloads made canonical, subnormals exact). */
static void test_widen_f16(void)
{
    enum { N = 65536 + 16 };
    uint16_t *h = malloc(N * sizeof *h);
    float *f = malloc(N * sizeof *f);
    double *d = malloc(N * sizeof *d);
    CHECK(h && f && d, "out of memory");
    if (!h || !f || !d) return;
    for (size_t i = 0; i < N; ++i) h[i] = (uint16_t)i; /* every value, then 0..15 again */
    for (int v = 0; dr_cpu_lanes_at(v); ++v) {
        const dr_cpu_lanes_t *lanes = dr_cpu_lanes_at(v);
        if (!dr_cpu_lanes_runs(lanes)) continue;
        for (size_t start = 0; start < 9; ++start)
            for (size_t len = N - 16 - start; len <= N - start; len += 7) {
                memset(f, 0xa5, N * sizeof *f);
                memset(d, 0xa5, N * sizeof *d);
                lanes->widen_f16_f32(h + start, len, f + start);
                lanes->widen_f16_f64(h + start, len, d + start);
                size_t bad = N;
                for (size_t i = start; i < start + len && bad == N; ++i) {
                    const float w = dr_f16_to_f32(h[i]);
                    const double wd = (double)w;
                    if (memcmp(&f[i], &w, 4) || memcmp(&d[i], &wd, 8)) bad = i;
                }
                CHECK(bad == N, "%s lanes widen float16 0x%04x (start %zu, length %zu): %a / %a, dr_f16_to_f32 %a",
                      lanes->name, bad < N ? h[bad] : 0, start, len, bad < N ? (double)f[bad] : 0.0,
                      bad < N ? d[bad] : 0.0, bad < N ? (double)dr_f16_to_f32(h[bad]) : 0.0);
                const uint32_t poison = 0xa5a5a5a5u;
                CHECK(start == 0 || !memcmp(&f[start - 1], &poison, 4), "%s lanes widen wrote before its start",
                      lanes->name);
                CHECK(start + len == N || !memcmp(&f[start + len], &poison, 4), "%s lanes widen wrote past its end",
                      lanes->name);
            }
    }
    free(h);
    free(f);
    free(d);
}

#if defined(__x86_64__) || defined(__i386__)
/* 1 where the upper halves of the ymm registers are in use (XINUSE bit 2, by XGETBV with ECX = 1), 0 where clean;
 * -1 where this CPU cannot say. */
static int ymm_upper_dirty(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1u) || __get_cpuid_max(0, NULL) < 0xd) return -1; /* OSXSAVE */
    __cpuid_count(0xd, 1, a, b, c, d);
    if (!(a >> 2 & 1u)) return -1;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1u));
    (void)hi;
    return (int)(lo >> 2 & 1u);
}
/* The upper halves cleaned before each function is checked, so that a dirty state is the function's own. */
__attribute__((target("avx"))) static void clean_ymm_upper(void) { _mm256_zeroupper(); }
#endif

/* Every function of every lanes version leaves the upper halves of the ymm registers clean (vzeroupper), at lengths
 * that end in each one's scalar tail: left dirty, every legacy SSE instruction after it in the thread runs slowly
 * (the F16C widenings, which tail-call their scalar loop, once left them so: float16 min 3x slower). */
static void test_lanes_leave_ymm_clean(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (ymm_upper_dirty() < 0) {
        printf("skip: this CPU does not report the ymm registers' state (XGETBV 1)\n");
        return;
    }
    const int avx = __builtin_cpu_supports("avx"); /* without AVX the halves cannot be dirty */
    const dr_cpu_lanes_t *widest = dr_cpu_lanes();
    uint16_t h[19];
    float f[19];
    double g[19], sum, lo, hi;
    int32_t slot[19];
    for (int i = 0; i < 19; ++i) h[i] = (uint16_t)(0x3c00 + i), f[i] = 1.0f + (float)i, g[i] = 2.0 + i;
    dr_hist_plan_t plan;
    memset(&plan, 0, sizeof plan);
    plan.bins = 10, plan.first = 0.0, plan.last = 20.0, plan.scale = 0.5, plan.margin = 1e-3;
    for (int v = 0; dr_cpu_lanes_at(v); ++v) {
        const dr_cpu_lanes_t *lanes = dr_cpu_lanes_at(v);
        if (dr_cpu_lanes_use(lanes) != 0) continue;
        for (size_t m = 1; m <= 19; m += 9) {
#define DR_YMM_CLEAN_AFTER(call)                                                                               \
    do {                                                                                                       \
        if (avx) clean_ymm_upper();                                                                            \
        call;                                                                                                  \
        CHECK(ymm_upper_dirty() == 0, "%s lanes: %s (m = %zu) leaves the ymm upper halves dirty", lanes->name,  \
              #call, m);                                                                                       \
    } while (0)
            DR_YMM_CLEAN_AFTER(lanes->widen_f16_f32(h, m, f));
            DR_YMM_CLEAN_AFTER(lanes->widen_f16_f64(h, m, g));
            DR_YMM_CLEAN_AFTER(lanes->round_f16(f, m));
            DR_YMM_CLEAN_AFTER(lanes->sum_min_max_f64(g, m, &sum, &lo, &hi));
            DR_YMM_CLEAN_AFTER(lanes->sum_min_max_f32(f, m, &sum, &lo, &hi));
            DR_YMM_CLEAN_AFTER((void)lanes->m2_f64(g, m, 1.0));
            DR_YMM_CLEAN_AFTER((void)lanes->m2_f32(f, m, 1.0));
            DR_YMM_CLEAN_AFTER((void)lanes->m2_smm_f64(g, m, 1.0, g, m, &sum, &lo, &hi));
            DR_YMM_CLEAN_AFTER((void)lanes->m2_smm_f32(f, m, 1.0, f, m, &sum, &lo, &hi));
            DR_YMM_CLEAN_AFTER(lanes->hist_fast_f32(&plan, f, m, slot));
            DR_YMM_CLEAN_AFTER(lanes->hist_fast_f64(&plan, g, m, slot));
#undef DR_YMM_CLEAN_AFTER
        }
    }
    dr_cpu_lanes_use(widest);
#endif
}

/* Rounding to float16's grid (a float16 histogram's estimate, cpu_count.c): every version this CPU runs gives
 * dr_round_f16's bits for every float32 near each float16 value (the value, the halfway points to its neighbours and
 * a step either side of them: ties to even, subnormal halves, 65504 to 65520 and past it), infinities, zeros of both
 * signs and random bits, at every start and length around its step of eight. NaN stay NaN. */
static void test_round_f16(uint64_t *rng)
{
    enum { N = 65536 * 7 + 4096 };
    float *src = malloc(N * sizeof *src), *v = malloc(N * sizeof *v);
    CHECK(src && v, "out of memory");
    if (!src || !v) return;
    size_t n = 0;
    for (uint32_t h = 0; h < 0x7c00u; ++h) { /* each finite positive half, and its negative below */
        const float x = dr_f16_to_f32((uint16_t)h);
        const float next = h + 1 < 0x7c00u ? dr_f16_to_f32((uint16_t)(h + 1)) : 65536.0f;
        const float mid = x + (next - x) * 0.5f; /* exact in float32 */
        const float near[] = {x, mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY), nextafterf(x, INFINITY)};
        for (size_t k = 0; k < sizeof near / sizeof near[0]; ++k) src[n++] = near[k], src[n++] = -near[k];
    }
    src[n++] = INFINITY, src[n++] = -INFINITY, src[n++] = 0.0f, src[n++] = -0.0f, src[n++] = 65520.0f, src[n++] = 1e30f;
    while (n < N) {
        const uint32_t b = (uint32_t)check_rand(rng);
        float x;
        memcpy(&x, &b, 4);
        src[n++] = x;
    }
    for (int ver = 0; dr_cpu_lanes_at(ver); ++ver) {
        const dr_cpu_lanes_t *lanes = dr_cpu_lanes_at(ver);
        if (!dr_cpu_lanes_runs(lanes)) continue;
        for (size_t start = 0; start < 9; ++start)
            for (size_t len = N - 16 - start; len <= N - start; len += 7) {
                memcpy(v, src, N * sizeof *v);
                lanes->round_f16(v + start, len);
                size_t bad = N;
                for (size_t i = 0; i < N && bad == N; ++i) {
                    const int inside = i >= start && i < start + len;
                    const float w = inside ? dr_round_f16(src[i]) : src[i];
                    if (w != w ? v[i] == v[i] : memcmp(&v[i], &w, 4) != 0) bad = i;
                }
                CHECK(bad == N, "%s lanes round %a to float16 (start %zu, length %zu): %a, dr_round_f16 %a",
                      lanes->name, bad < N ? (double)src[bad] : 0.0, start, len, bad < N ? (double)v[bad] : 0.0,
                      bad < N ? (double)dr_round_f16(src[bad]) : 0.0);
            }
    }
    free(src);
    free(v);
}

/* NaN through the whole pipeline: const:nan data, and a NaN planted anywhere in a generated buffer. */
static void test_nan_data(uint64_t *rng, void *buf)
{
    for (int ri = 0; ri < NROWS; ++ri) {
        const row_t *r = &rows[ri];
        if (!dr_acc_kind_is_float(r->acc)) continue;
        uint64_t nan_bits = r->dtype == DR_FLOAT64 ? 0x7ff8000000000000ull : r->dtype == DR_FLOAT32 ? 0x7fc00000u
                          : r->dtype == DR_FLOAT16 ? 0x7e00u : 0x7fc0u;
        const size_t n = 70001;
        dr_gen_t g = {DR_DATA_CONST, r->dtype, r->op, 1, nan_bits, 0};
        dr_cpu_generate(&g, 0, buf, n, 2);
        dr_value_t res;
        uint64_t depth;
        cpu_reduce(r->dtype, r->op, r->acc, buf, n, 3, &res, &depth);
        const double got = r->acc == DR_ACC_F32 ? res.f32 : res.f64;
        CHECK(isnan(got), "%s const:nan n=%zu: got %g, expected NaN", r->name, n, got);
        dr_reference_t ref;
        dr_reference_compute(&g, r->acc, 0, n, 2, &ref);
        dr_check_t chk;
        dr_reference_check(&ref, &res, depth, &chk);
        CHECK(chk.pass, "%s const:nan: check failed: %s", r->name, chk.detail);
        /* A finite result must fail against a NaN reference. */
        dr_value_t finite;
        memset(&finite, 0, sizeof finite);
        if (r->acc == DR_ACC_F32) finite.f32 = 1.0f;
        else finite.f64 = 1.0;
        dr_reference_check(&ref, &finite, depth, &chk);
        CHECK(!chk.pass, "%s const:nan: a result of 1 passed the check: %s", r->name, chk.detail);

        /* Plant one NaN into random data at a random place (first, last or anywhere), several thread counts. */
        dr_gen_t gr = {DR_DATA_RANDOM, r->dtype, r->op, check_rand(rng), 0, 0};
        for (int rep = 0; rep < 6; ++rep) {
            dr_cpu_generate(&gr, 0, buf, n, 2);
            const size_t at = rep == 0 ? 0 : rep == 1 ? n - 1 : check_rand(rng) % n;
            const size_t es = dr_dtype_size(r->dtype);
            memcpy((char *)buf + at * es, &nan_bits, es); /* little-endian: the low bytes hold the pattern */
            const int t = 1 + rep % 4;
            cpu_reduce(r->dtype, r->op, r->acc, buf, n, t, &res, &depth);
            const double x = r->acc == DR_ACC_F32 ? res.f32 : res.f64;
            CHECK(isnan(x), "%s random with a NaN planted at %zu of %zu, %d threads: got %g, expected NaN", r->name, at,
                  n, t, x);
        }
    }
    /* Infinities: sum of +inf and -inf is NaN; inf * 0 is NaN; const inf sums to inf. */
    {
        dr_gen_t g = {DR_DATA_CONST, DR_FLOAT32, DR_SUM, 1, 0x7f800000u, 0};
        dr_cpu_generate(&g, 0, buf, 1000, 1);
        dr_value_t res;
        uint64_t depth;
        cpu_reduce(DR_FLOAT32, DR_SUM, DR_ACC_F64, buf, 1000, 2, &res, &depth);
        dr_reference_t ref;
        dr_reference_compute(&g, DR_ACC_F64, 0, 1000, 2, &ref);
        dr_check_t chk;
        dr_reference_check(&ref, &res, depth, &chk);
        CHECK(isinf(res.f64) && res.f64 > 0 && chk.pass, "float32 const:inf sum: got %g, check %s", res.f64, chk.detail);
        res.f64 = 1e300;
        dr_reference_check(&ref, &res, depth, &chk);
        CHECK(!chk.pass, "float32 const:inf sum: a finite result passed: %s", chk.detail);
    }
}

/* The check fails for wrong results: an integer off by one, a float sum off by 1000 x its bound, NaN. */
static void test_check_can_fail(uint64_t *rng, void *buf)
{
    for (int ri = 0; ri < NROWS; ++ri) {
        const row_t *r = &rows[ri];
        const size_t n = 1000;
        dr_gen_t g = {DR_DATA_RANDOM, r->dtype, r->op, check_rand(rng), 0, 0};
        dr_cpu_generate(&g, 0, buf, n, 1);
        dr_value_t res;
        uint64_t depth;
        cpu_reduce(r->dtype, r->op, r->acc, buf, n, 2, &res, &depth);
        dr_reference_t ref;
        dr_reference_compute(&g, r->acc, 0, n, 1, &ref);
        dr_check_t chk;
        dr_reference_check(&ref, &res, depth, &chk);
        CHECK(chk.pass, "%s: the unperturbed result failed: %s", r->name, chk.detail);
        dr_value_t bad = res;
        switch (r->acc) {
        case DR_ACC_I32: bad.i32 = (int32_t)((uint32_t)bad.i32 + 1u); break;
        case DR_ACC_U32: bad.u32 += 1u; break;
        case DR_ACC_I64: bad.i64 = (int64_t)((uint64_t)bad.i64 + 1u); break;
        case DR_ACC_U64: bad.u64 += 1u; break;
        case DR_ACC_F32:
            if (r->op == DR_MIN || r->op == DR_MAX) bad.f32 = nextafterf(bad.f32, INFINITY);
            else bad.f32 += (float)(1000 * chk.bound + fabs((double)bad.f32) * 1e-3);
            break;
        default:
            if (r->op == DR_MIN || r->op == DR_MAX) bad.f64 = nextafter(bad.f64, INFINITY);
            else bad.f64 += 1000 * chk.bound + fabs(bad.f64) * 1e-12;
            break;
        }
        dr_check_t chk2;
        dr_reference_check(&ref, &bad, depth, &chk2);
        CHECK(!chk2.pass, "%s: a perturbed result passed the check: %s", r->name, chk2.detail);
        /* NaN where a finite value is expected. */
        if (dr_acc_kind_is_float(r->acc)) {
            if (r->acc == DR_ACC_F32) bad.f32 = NAN;
            else bad.f64 = NAN;
            dr_reference_check(&ref, &bad, depth, &chk2);
            CHECK(!chk2.pass, "%s: a NaN result passed the check: %s", r->name, chk2.detail);
        }
    }
    /* The brief's case, explicitly: a float64 sum off by exactly 1000 x the bound. */
    {
        dr_gen_t g = {DR_DATA_RANDOM, DR_FLOAT64, DR_SUM, check_rand(rng), 0, 0};
        dr_cpu_generate(&g, 0, buf, 100000, 2);
        dr_value_t res;
        uint64_t depth;
        cpu_reduce(DR_FLOAT64, DR_SUM, DR_ACC_F64, buf, 100000, 2, &res, &depth);
        dr_reference_t ref;
        dr_reference_compute(&g, DR_ACC_F64, 0, 100000, 2, &ref);
        dr_check_t chk;
        dr_reference_check(&ref, &res, depth, &chk);
        CHECK(chk.pass && chk.bound > 0, "float64 sum: pass %d bound %g: %s", chk.pass, chk.bound, chk.detail);
        res.f64 += 1000 * chk.bound;
        dr_check_t chk2;
        dr_reference_check(&ref, &res, depth, &chk2);
        CHECK(!chk2.pass, "float64 sum + 1000 x bound passed: %s", chk2.detail);
        res.f64 -= 2000 * chk.bound;
        dr_reference_check(&ref, &res, depth, &chk2);
        CHECK(!chk2.pass, "float64 sum - 1000 x bound passed: %s", chk2.detail);
    }
    /* A table miss is refused. */
    dr_value_t v;
    uint64_t d;
    CHECK(cpu_reduce(DR_FLOAT32, DR_BAND, DR_ACC_F32, buf, 10, 1, &v, &d) == -1,
          "cpu_reduce(float32, band) should return -1");
    CHECK(cpu_reduce(DR_INT32, DR_SUM, DR_ACC_I32, buf, 10, 1, &v, &d) == -1,
          "cpu_reduce(int32, sum, I32) is not a table row and should return -1");
    CHECK(!dr_acc_mode_valid(DR_FLOAT32, DR_PROD, DR_ACC_MODE_EXACT) &&
              dr_acc_mode_valid(DR_FLOAT32, DR_MAX, DR_ACC_MODE_EXACT) &&
              dr_acc_mode_valid(DR_INT32, DR_PROD, DR_ACC_MODE_EXACT),
          "dr_acc_mode_valid: an exact float product must be refused, float max and int32 prod accepted");
    /* dr_acc_select picks only table rows (DR_REDUCTION_TABLE, or DR_EXACT_TABLE for exact sums, or the stats and
     * argmin/argmax tables: test_stats.c), and a combination dr_acc_mode_valid refuses (an exact product, stats or
     * argmax in the native mode) never reaches it. */
    for (int t = 0; t < DR_DTYPE_COUNT; ++t)
        for (int op = 0; op < DR_OP_COUNT; ++op)
            for (int m = 0; m < DR_ACC_MODE_COUNT; ++m) {
                if (!dr_acc_mode_valid((dr_dtype_t)t, (dr_op_t)op, (dr_acc_mode_t)m)) continue;
                const dr_acc_kind_t k = dr_acc_select((dr_dtype_t)t, (dr_op_t)op, (dr_acc_mode_t)m);
                int found = 0;
#define X(DT, OP, op_, ACC, acc_) found |= DR_##DT == (dr_dtype_t)t && DR_##OP == (dr_op_t)op && DR_ACC_##ACC == k;
                DR_EXACT_TABLE DR_ARG_TABLE DR_STATS_TABLE DR_STATS_EXACT_TABLE
#undef X
                for (int ri = 0; ri < NROWS; ++ri)
                    found |= rows[ri].dtype == (dr_dtype_t)t && rows[ri].op == (dr_op_t)op && rows[ri].acc == k;
                CHECK(found, "dr_acc_select(%s, %s, %s) = %s is not a table row", dr_dtype_name((dr_dtype_t)t),
                      dr_op_name((dr_op_t)op), dr_acc_mode_name((dr_acc_mode_t)m), dr_acc_kind_name(k));
            }
}

/* Float products that leave the accumulator's range. The check's documentation: "Infinities and NaN must match the
 * IEEE outcome"; a product whose exact value is past the largest finite value of its accumulator is +-inf in IEEE
 * arithmetic, one below the smallest subnormal is 0. Each case: generate, reduce on the CPU backend (the IEEE
 * outcome), and the reference check must accept it. */
static void prod_case(const char *what, dr_dtype_t t, dr_acc_kind_t acc, dr_pattern_t pat, uint64_t const_bits,
                      uint64_t first, size_t n, int threads, uint64_t seed, void *buf)
{
    dr_gen_t g = {pat, t, DR_PROD, seed, const_bits, 0};
    dr_cpu_generate(&g, first, buf, n, 2);
    dr_value_t res;
    uint64_t depth;
    cpu_reduce(t, DR_PROD, acc, buf, n, threads, &res, &depth);
    dr_reference_t ref;
    dr_reference_compute(&g, acc, first, n, threads, &ref);
    dr_check_t chk;
    dr_reference_check(&ref, &res, depth, &chk);
    char got[64];
    dr_value_format(acc, &res, got, sizeof got);
    CHECK(chk.pass, "%s (%s prod into %s, first=%" PRIu64 " n=%zu threads=%d seed=%" PRIu64 "): the CPU backend's IEEE "
          "result %s fails the reference check: %s", what, dr_dtype_name(t), dr_acc_kind_name(acc), first, n, threads,
          seed, got, chk.detail);
}

static void test_prod_range(uint64_t *rng, void *buf)
{
    /* Overflow in float64: 2^2000 and 1000! are +inf. */
    prod_case("const:2 overflowing float64", DR_FLOAT64, DR_ACC_F64, DR_DATA_CONST, 0x4000000000000000ull, 0, 2000, 1,
              1, buf);
    prod_case("iota 1..1000 overflowing float64", DR_FLOAT64, DR_ACC_F64, DR_DATA_IOTA, 0, 1, 1000, 1, 1, buf);
    prod_case("const:-2 overflowing float64 (odd count: -inf)", DR_FLOAT64, DR_ACC_F64, DR_DATA_CONST,
              0xc000000000000000ull, 0, 2001, 1, 1, buf);
    /* Overflow and underflow of a float32 accumulator (--acc native): 2^1000 is inf, 2^-1000 is 0 in float32. */
    prod_case("const:2 overflowing float32", DR_FLOAT32, DR_ACC_F32, DR_DATA_CONST, 0x40000000u, 0, 1000, 1, 1, buf);
    prod_case("const:0.5 underflowing float32", DR_FLOAT32, DR_ACC_F32, DR_DATA_CONST, 0x3f000000u, 0, 1000, 1, 1,
              buf);
    /* Random data for prod is documented to stay near 1 so that long products neither vanish nor overflow. */
    prod_case("random float16 product, float32 accumulator", DR_FLOAT16, DR_ACC_F32, DR_DATA_RANDOM, 0, 0, 300001, 1,
              check_rand(rng), buf);
    prod_case("random bfloat16 product, float32 accumulator", DR_BFLOAT16, DR_ACC_F32, DR_DATA_RANDOM, 0, 0, 65537, 1,
              check_rand(rng), buf);
    /* ...but products of ~10^6 bfloat16 values leave float32's range (documented): gradual underflow is accepted. */
    prod_case("random bfloat16 product of 2^21, float32 accumulator", DR_BFLOAT16, DR_ACC_F32, DR_DATA_RANDOM, 0, 0,
              1u << 21, 2, check_rand(rng), buf);
    for (int t = 1; t <= 7; t += 6)
        prod_case("random bfloat16 product, float64 accumulator", DR_BFLOAT16, DR_ACC_F64, DR_DATA_RANDOM, 0, 0,
                  300001, t, check_rand(rng), buf);
    /* iota from 0 on two threads: the second thread's product overflows before it meets the first's 0. */
    prod_case("iota from 0 on 2 threads", DR_FLOAT32, DR_ACC_F64, DR_DATA_IOTA, 0, 0, 1000000, 2, 1, buf);
}

int main(void)
{
    uint64_t rng = check_seed("test_cpu_reference");
    static const size_t sizes[] = {0, 1, 2, 7, 1000, 65537, 300001};
    static const dr_pattern_t patterns[] = {DR_DATA_RANDOM, DR_DATA_IOTA, DR_DATA_CONST, DR_DATA_SPREAD};
    const size_t maxn = 1u << 21;
    void *buf = malloc(maxn * 8), *buf2 = malloc(maxn * 8);
    if (!buf || !buf2) return 1;
    CHECK(NROWS == 78, "DR_REDUCTION_TABLE has %d rows, expected 78 (8 x 7 integer, 3 x 6 narrow float, 4 float64)",
          (int)NROWS);
    for (int ri = 0; ri < NROWS; ++ri)
        for (size_t pi = 0; pi < sizeof patterns / sizeof patterns[0]; ++pi)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const size_t n = sizes[si];
                const row_t *r = &rows[ri];
                const int float_prod = dr_acc_kind_is_float(r->acc) && r->op == DR_PROD;
                /* spread is random's data for integers and products (test_datagen): float sums, min and max only. */
                if (patterns[pi] == DR_DATA_SPREAD && (!dr_dtype_is_float(r->dtype) || r->op == DR_PROD)) continue;
                /* Float products of iota overflow within a few dozen elements (and 0 * inf is order dependent):
                 * only tiny ones here; overflow has its own test (test_prod_range). */
                if (float_prod && patterns[pi] == DR_DATA_IOTA) {
                    if (n > 7) continue;
                    run_case(r, patterns[pi], n, 0, &rng, buf, buf2);
                    run_case(r, patterns[pi], n, 1, &rng, buf, buf2);
                    continue;
                }
                run_case(r, patterns[pi], n, 0, &rng, buf, buf2);
                /* A non-zero first: anywhere in 64 bits, or where iota wraps (2^32, 2^p). */
                uint64_t first;
                switch (check_rand(&rng) % 3) {
                case 0: first = check_rand(&rng) >> (check_rand(&rng) % 64); break;
                case 1: first = (1ull << 32) - n / 2; break;
                default: first = (1ull << dr_dtype_significand_bits(rows[ri].dtype)) - n / 2 - 1; break;
                }
                if (first + n < first) first = 12345; /* keep first + n within 2^64 */
                run_case(r, patterns[pi], n, first, &rng, buf, buf2);
            }
    test_const_closed_forms(&rng);
    test_merge(&rng);
    test_min_max_rules(&rng);
    test_min_max_arrays(&rng);
    test_arg_arrays(&rng);
    test_stats_model(&rng);
    test_stats_lanes_specials(&rng);
    test_widen_f16();
    test_round_f16(&rng);
    test_lanes_leave_ymm_clean();
    test_nan_data(&rng, buf);
    test_check_can_fail(&rng, buf);
    test_prod_range(&rng, buf);
    free(buf);
    free(buf2);
    printf("test_cpu_reference: %zu (row, pattern, size, first) cases\n", total_checks_rows);
    return check_summary("test_cpu_reference");
}
