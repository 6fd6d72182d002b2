/* Unit test of the new reductions of issue #37 on the CPU backend (src/lib/cpu_backend.c) against the host reference
 * (src/cli/reference.c) and against naive loops written here:
 *   - argmin/argmax, every row of DR_ARG_TABLE: sizes 0, 1, 2, 7, 8, 9, 1000, 100003 (and 600001, where 8 threads
 *     really split the array), 1, 2, 3 and 8 threads, random, iota, constant and spread data, a random `first`:
 *     the value (bit for bit) and the global index equal the naive loop's and the reference's, the same for every
 *     thread count and for any split of the array into chunks combined in any order (dr_partial_combine); ties:
 *     constant arrays (index 0), the extreme at the very end, NaNs (the first one wins), -0 and +0 (the first zero
 *     of either sign, with its sign), infinities; and the check fails for a wrong index or value;
 *   - stats, every row of DR_STATS_TABLE and DR_STATS_EXACT_TABLE, the same sizes, threads and data: count, min,
 *     max and integer sums (and the exact mode's sums) exactly, the same for every thread count, and the whole
 *     against the two-pass reference (dr_reference_check_stats), also with the reference made of shards merged
 *     over two rounds; Chan's merge symmetric to the bit; cancellation (mean 1e8, variance 1) within the bound
 *     while a one-pass sum of squares fails it; integer sums exactly near the int64 and uint64 extremes (sums past
 *     64 bits) and dr_int128_format; NaN and infinities; exact means (ties, a tiny negative mean rounding to -0);
 *     and the check fails for wrong fields.
 * Seeded inputs (DREDUCE_TEST_SEED), never all zeros. Prints one line per failure; exit 0 only if all passed. */
#include <float.h>
#include <math.h>

#include "check.h"
#include "cpu_backend.h"
#include "accum.h"
#include "datagen.h"
#include "table.h"
#include "options.h"
#include "reference.h"
#include "stats.h"

typedef struct {
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
    const char *name;
} row_t;

static const row_t arg_rows[] = {
#define X(DT, OP, op, ACC, acc) {DR_##DT, DR_##OP, DR_ACC_##ACC, #DT " " #OP},
    DR_ARG_TABLE
#undef X
};
static const row_t stats_rows[] = {
#define X(DT, OP, op, ACC, acc) {DR_##DT, DR_##OP, DR_ACC_##ACC, #DT " " #OP " " #ACC},
    DR_STATS_TABLE DR_STATS_EXACT_TABLE
#undef X
};
enum { NARG = sizeof arg_rows / sizeof arg_rows[0], NSTATS = sizeof stats_rows / sizeof stats_rows[0] };

static const size_t sizes[] = {0, 1, 2, 7, 8, 9, 1000, 100003};
static const int thread_counts[] = {1, 2, 3, 8};
enum { BIG = 600001 }; /* 600001 / 65536 + 1 = 10: eight threads really split it */

static int is_float(dr_dtype_t t) { return dr_dtype_is_float(t); }
static int is_signed(dr_dtype_t t) { return t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64; }

/* Element i widened: floats to double, integers to int64 / uint64 (in a scalar). */
static dr_scalar_t elem(dr_dtype_t t, const void *in, size_t i)
{
    dr_scalar_t s;
    switch (t) {
    case DR_INT8: s.i64 = ((const int8_t *)in)[i]; break;
    case DR_INT16: s.i64 = ((const int16_t *)in)[i]; break;
    case DR_INT32: s.i64 = ((const int32_t *)in)[i]; break;
    case DR_INT64: s.i64 = ((const int64_t *)in)[i]; break;
    case DR_UINT8: s.u64 = ((const uint8_t *)in)[i]; break;
    case DR_UINT16: s.u64 = ((const uint16_t *)in)[i]; break;
    case DR_UINT32: s.u64 = ((const uint32_t *)in)[i]; break;
    case DR_UINT64: s.u64 = ((const uint64_t *)in)[i]; break;
    case DR_FLOAT32: s.f64 = ((const float *)in)[i]; break;
    case DR_FLOAT64: s.f64 = ((const double *)in)[i]; break;
    case DR_FLOAT16: s.f64 = dr_f16_to_f32(((const uint16_t *)in)[i]); break;
    default: s.f64 = dr_bf16_to_f32(((const uint16_t *)in)[i]); break;
    }
    return s;
}

/* Store v (a double for floats, else the integer in a scalar) as element i. */
static void put(dr_dtype_t t, void *in, size_t i, dr_scalar_t v)
{
    switch (t) {
    case DR_INT8: ((int8_t *)in)[i] = (int8_t)v.i64; break;
    case DR_INT16: ((int16_t *)in)[i] = (int16_t)v.i64; break;
    case DR_INT32: ((int32_t *)in)[i] = (int32_t)v.i64; break;
    case DR_INT64: ((int64_t *)in)[i] = v.i64; break;
    case DR_UINT8: ((uint8_t *)in)[i] = (uint8_t)v.u64; break;
    case DR_UINT16: ((uint16_t *)in)[i] = (uint16_t)v.u64; break;
    case DR_UINT32: ((uint32_t *)in)[i] = (uint32_t)v.u64; break;
    case DR_UINT64: ((uint64_t *)in)[i] = v.u64; break;
    case DR_FLOAT32: ((float *)in)[i] = (float)v.f64; break;
    case DR_FLOAT64: ((double *)in)[i] = v.f64; break;
    case DR_FLOAT16: { /* values used here are exact in float16: via float32's bits */
        const uint32_t b = dr_f32_to_bits((float)v.f64);
        uint16_t h;
        if ((b & 0x7fffffffu) > 0x7f800000u) h = 0x7e00u;
        else if ((b & 0x7fffffffu) == 0x7f800000u) h = (uint16_t)(((b >> 16) & 0x8000u) | 0x7c00u);
        else h = dr_f32_to_f16_exact((float)v.f64);
        ((uint16_t *)in)[i] = h;
        break;
    }
    default: ((uint16_t *)in)[i] = (uint16_t)(dr_f32_to_bits((float)v.f64) >> 16); break;
    }
}

static dr_scalar_t sc_f(double x)
{
    dr_scalar_t s;
    s.f64 = x;
    return s;
}
static dr_scalar_t sc_i(int64_t x)
{
    dr_scalar_t s;
    s.i64 = x;
    return s;
}
static dr_scalar_t sc_u(uint64_t x)
{
    dr_scalar_t s;
    s.u64 = x;
    return s;
}

static void fmt_scalar(dr_dtype_t t, dr_scalar_t v, char *buf, size_t len)
{
    if (is_float(t)) snprintf(buf, len, "%a", v.f64);
    else if (is_signed(t)) snprintf(buf, len, "%" PRId64, v.i64);
    else snprintf(buf, len, "%" PRIu64, v.u64);
}

/* ---- argmin / argmax ---- */

/* The naive answer: one loop in index order, the rules written out (NaN: the first NaN; else strictly further;
 * -0 == +0). */
static void naive_arg(const row_t *r, const void *in, size_t n, uint64_t base, dr_arg_t *out)
{
    const int is_max = r->op == DR_ARGMAX;
    out->index = DR_ARG_NONE;
    memset(&out->value, 0, sizeof out->value);
    for (size_t i = 0; i < n; ++i) {
        const dr_scalar_t x = elem(r->dtype, in, i);
        int take;
        if (out->index == DR_ARG_NONE) take = 1;
        else if (is_float(r->dtype)) {
            if (isnan(out->value.f64)) take = 0;
            else if (isnan(x.f64)) take = 1;
            else take = is_max ? x.f64 > out->value.f64 : x.f64 < out->value.f64;
        } else if (is_signed(r->dtype)) {
            take = is_max ? x.i64 > out->value.i64 : x.i64 < out->value.i64;
        } else {
            take = is_max ? x.u64 > out->value.u64 : x.u64 < out->value.u64;
        }
        if (take) {
            out->value = x;
            out->index = base + i;
        }
    }
    if (out->index != DR_ARG_NONE && is_float(r->dtype) && isnan(out->value.f64))
        out->value.f64 = dr_bits_to_f64(0x7fffffffffffffffull);
    if (out->index == DR_ARG_NONE) dr_arg_identity(r->acc, r->op, out);
}

static int same_arg(const dr_arg_t *a, const dr_arg_t *b)
{
    return memcmp(&a->value, &b->value, sizeof a->value) == 0 && a->index == b->index;
}

static void arg_text(const row_t *r, const dr_arg_t *a, char *buf, size_t len)
{
    char v[48];
    fmt_scalar(r->dtype, a->value, v, sizeof v);
    snprintf(buf, len, "%s at %" PRIu64, v, a->index);
}

/* Reduce in[0..n) with `first` as its global start on `threads` threads. */
static dr_arg_t cpu_arg(const row_t *r, const void *in, size_t n, uint64_t first, int threads)
{
    dr_partial_t p;
    uint64_t depth = 99;
    memset(&p, 0xa5, sizeof p);
    const int rc = dr_cpu_reduce(r->dtype, r->op, r->acc, in, n, first, threads, &p, &depth);
    CHECK(rc == 0, "%s: dr_cpu_reduce returned %d", r->name, rc);
    return p.value.arg;
}

/* in[0..n) in k random pieces, each reduced with its own first, combined in a random order. */
static dr_arg_t split_arg(const row_t *r, const void *in, size_t n, uint64_t first, uint64_t *rng)
{
    enum { K = 5 };
    size_t cut[K + 1];
    cut[0] = 0, cut[K] = n;
    for (int i = 1; i < K; ++i) cut[i] = n ? (size_t)(check_rand(rng) % (n + 1)) : 0;
    for (int i = 1; i < K; ++i) /* sort the inner cuts */
        for (int j = i + 1; j < K; ++j)
            if (cut[j] < cut[i]) {
                const size_t t = cut[i];
                cut[i] = cut[j], cut[j] = t;
            }
    int order[K] = {0, 1, 2, 3, 4};
    for (int i = K - 1; i > 0; --i) {
        const int j = (int)(check_rand(rng) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    const size_t es = dr_dtype_size(r->dtype);
    dr_partial_t all, piece;
    dr_partial_identity(r->acc, r->op, &all);
    for (int i = 0; i < K; ++i) {
        const int k = order[i];
        uint64_t depth;
        dr_cpu_reduce(r->dtype, r->op, r->acc, (const char *)in + cut[k] * es, cut[k + 1] - cut[k], first + cut[k],
                      1 + (int)(check_rand(rng) % 3), &piece, &depth);
        dr_partial_combine(r->acc, r->op, &all, &piece);
    }
    return all.value.arg;
}

/* Every check of one array: naive loop, every thread count, splits, the reference (from the generator when g is
 * given, else from the buffer). */
static void arg_case(const row_t *r, const void *in, size_t n, uint64_t first, const dr_gen_t *g, const char *what,
                     uint64_t *rng)
{
    dr_arg_t want, got;
    naive_arg(r, in, n, first, &want);
    char w[96], gt[96];
    arg_text(r, &want, w, sizeof w);
    for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; ++k) {
        got = cpu_arg(r, in, n, first, thread_counts[k]);
        arg_text(r, &got, gt, sizeof gt);
        CHECK(same_arg(&got, &want), "%s %s n=%zu first=%" PRIu64 " threads=%d: got %s, naive loop %s", r->name, what,
              n, first, thread_counts[k], gt, w);
    }
    got = split_arg(r, in, n, first, rng);
    arg_text(r, &got, gt, sizeof gt);
    CHECK(same_arg(&got, &want), "%s %s n=%zu: split into chunks and combined: got %s, naive loop %s", r->name, what,
          n, gt, w);
    dr_reference_t ref;
    if (g) {
        dr_reference_compute(g, r->acc, first, n, 3, &ref);
    } else {
        dr_reference_init(&ref, r->acc, r->op);
        dr_reference_add(&ref, r->dtype, in, n, first, 2);
    }
    dr_value_t v;
    memset(&v, 0, sizeof v);
    v.arg = got;
    dr_check_t chk;
    dr_reference_check(&ref, &v, 0, &chk);
    CHECK(chk.pass && chk.exact, "%s %s n=%zu: reference check failed: %s", r->name, what, n, chk.detail);
    if (n > 0) { /* the check can fail: another index, or another value */
        v.arg.index = got.index + 1;
        dr_reference_check(&ref, &v, 0, &chk);
        CHECK(!chk.pass, "%s %s: a wrong index passed: %s", r->name, what, chk.detail);
        v.arg = got;
        v.arg.value.u64 ^= 1;
        dr_reference_check(&ref, &v, 0, &chk);
        CHECK(!chk.pass, "%s %s: a wrong value passed: %s", r->name, what, chk.detail);
    }
}

static void test_arg_generated(uint64_t *rng, void *buf)
{
    static const dr_pattern_t pats[] = {DR_DATA_RANDOM, DR_DATA_IOTA, DR_DATA_CONST, DR_DATA_SPREAD};
    for (int ri = 0; ri < NARG; ++ri) {
        const row_t *r = &arg_rows[ri];
        for (size_t pi = 0; pi < sizeof pats / sizeof pats[0]; ++pi) {
            if (pats[pi] == DR_DATA_SPREAD && !is_float(r->dtype)) continue;
            for (size_t si = 0; si <= sizeof sizes / sizeof sizes[0]; ++si) {
                const size_t n = si < sizeof sizes / sizeof sizes[0] ? sizes[si] : BIG;
                if (n == BIG && pats[pi] != DR_DATA_RANDOM) continue;
                dr_gen_t g = {pats[pi], r->dtype, r->op, check_rand(rng), check_rand(rng) | 1, 0};
                if (is_float(r->dtype)) /* a finite nonzero constant */
                    g.const_bits = r->dtype == DR_FLOAT64 ? 0xc00921fb54442d18ull
                                   : r->dtype == DR_FLOAT32 ? 0x40490fdbu : r->dtype == DR_FLOAT16 ? 0x4248u : 0x4049u;
                const uint64_t first = check_rand(rng) >> (1 + check_rand(rng) % 63);
                dr_cpu_generate(&g, first, buf, n, 2);
                char what[64];
                snprintf(what, sizeof what, "%s seed %" PRIu64, dr_pattern_name(pats[pi]), g.seed);
                arg_case(r, buf, n, first, &g, what, rng);
                if (pats[pi] == DR_DATA_CONST && n > 0) { /* all equal: the first element */
                    const dr_arg_t a = cpu_arg(r, buf, n, first, 8);
                    CHECK(a.index == first, "%s const n=%zu: index %" PRIu64 ", expected the first, %" PRIu64, r->name,
                          n, a.index, first);
                }
            }
        }
    }
}

/* A random value strictly between the type's extremes (floats: a moderate finite value, never -0). */
static dr_scalar_t inner_value(dr_dtype_t t, uint64_t *rng)
{
    const uint64_t x = check_rand(rng);
    const int bits = (int)dr_dtype_size(t) * 8;
    if (is_float(t)) return sc_f((double)((int)(x % 2001) - 1000) / 8.0 + 0.0);
    if (is_signed(t)) { /* in (min, max) */
        const int64_t lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
        const uint64_t span = bits == 64 ? UINT64_MAX - 1 : (UINT64_C(1) << bits) - 2;
        return sc_i((int64_t)((uint64_t)lo + 1 + x % span));
    }
    const uint64_t span = bits == 64 ? UINT64_MAX - 1 : (UINT64_C(1) << bits) - 2;
    return sc_u(1 + x % span);
}

static dr_scalar_t type_extreme(dr_dtype_t t, int is_max)
{
    const int bits = (int)dr_dtype_size(t) * 8;
    if (is_float(t)) return sc_f(is_max ? 60000.0 : -60000.0); /* beyond inner_value, exact in every float type */
    if (is_signed(t)) return sc_i(is_max ? (bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1)
                                         : (bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1))));
    return sc_u(is_max ? (bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1) : 0);
}

/* Planted ties and special values. */
static void test_arg_planted(uint64_t *rng, void *buf)
{
    static const size_t ns[] = {1, 2, 7, 9, 1000, 100003, BIG};
    for (int ri = 0; ri < NARG; ++ri) {
        const row_t *r = &arg_rows[ri];
        const int is_max = r->op == DR_ARGMAX;
        for (size_t si = 0; si < sizeof ns / sizeof ns[0]; ++si) {
            const size_t n = ns[si];
            const uint64_t first = check_rand(rng) % 1000000;
            /* The extreme at the very end; then the same extreme also somewhere earlier (that one wins). */
            for (size_t i = 0; i < n; ++i) put(r->dtype, buf, i, inner_value(r->dtype, rng));
            put(r->dtype, buf, n - 1, type_extreme(r->dtype, is_max));
            arg_case(r, buf, n, first, NULL, "extreme at the end", rng);
            const dr_arg_t at_end = cpu_arg(r, buf, n, first, 8);
            CHECK(at_end.index == first + n - 1, "%s n=%zu: extreme at the end, index %" PRIu64 ", expected %" PRIu64,
                  r->name, n, at_end.index, first + n - 1);
            const size_t k = check_rand(rng) % n;
            put(r->dtype, buf, k, type_extreme(r->dtype, is_max));
            arg_case(r, buf, n, first, NULL, "extreme twice", rng);
            const dr_arg_t twice = cpu_arg(r, buf, n, first, 3);
            CHECK(twice.index == first + k,
                  "%s n=%zu: extreme at %zu and the end, index %" PRIu64 ", expected %" PRIu64, r->name, n, k,
                  twice.index, first + k);
            if (!is_float(r->dtype)) continue;
            /* NaNs: the first one wins, whatever the numbers (and an infinity) around it. */
            const double nan = NAN;
            put(r->dtype, buf, n - 1, sc_f(is_max ? INFINITY : -INFINITY));
            const size_t a = check_rand(rng) % n, b = check_rand(rng) % n, f = a < b ? a : b;
            put(r->dtype, buf, a, sc_f(nan));
            put(r->dtype, buf, b, sc_f(-nan));
            arg_case(r, buf, n, first, NULL, "NaNs", rng);
            const dr_arg_t with_nan = cpu_arg(r, buf, n, first, 8);
            CHECK(with_nan.index == first + f && dr_f64_to_bits(with_nan.value.f64) == 0x7fffffffffffffffull,
                  "%s n=%zu: NaNs at %zu and %zu: got %a at %" PRIu64 ", expected the canonical NaN at %" PRIu64,
                  r->name, n, a, b, with_nan.value.f64, with_nan.index, first + f);
            /* Infinities: the first one of the op's sign. */
            for (size_t i = 0; i < n; ++i) put(r->dtype, buf, i, inner_value(r->dtype, rng));
            const size_t c = check_rand(rng) % n;
            put(r->dtype, buf, c, sc_f(is_max ? INFINITY : -INFINITY));
            put(r->dtype, buf, n - 1, sc_f(is_max ? INFINITY : -INFINITY));
            arg_case(r, buf, n, first, NULL, "infinities", rng);
            /* Zeros of both signs as the extreme: positive numbers (argmin) or negative ones (argmax) around them;
             * the first zero wins, with its own sign. */
            for (size_t i = 0; i < n; ++i) {
                const double x = fabs(inner_value(r->dtype, rng).f64) + 1.0;
                put(r->dtype, buf, i, sc_f(is_max ? -x : x));
            }
            const size_t z1 = check_rand(rng) % n, z2 = check_rand(rng) % n;
            const int neg_first = (int)(check_rand(rng) & 1);
            put(r->dtype, buf, z1, sc_f(neg_first ? -0.0 : 0.0));
            if (z2 != z1) put(r->dtype, buf, z2, sc_f(neg_first ? 0.0 : -0.0));
            arg_case(r, buf, n, first, NULL, "signed zeros", rng);
            const size_t zf = z1 < z2 ? z1 : z2;
            const dr_arg_t zero = cpu_arg(r, buf, n, first, 8);
            const int want_neg = zf == z1 ? neg_first : !neg_first;
            CHECK(zero.index == first + zf && zero.value.f64 == 0 && signbit(zero.value.f64) == want_neg,
                  "%s n=%zu: zeros at %zu and %zu: got %a at %" PRIu64 ", expected %s0 at %" PRIu64, r->name, n, z1, z2,
                  zero.value.f64, zero.index, want_neg ? "-" : "+", first + zf);
            /* All NaN: index 0. */
            for (size_t i = 0; i < n; ++i) put(r->dtype, buf, i, sc_f(nan));
            arg_case(r, buf, n, first, NULL, "all NaN", rng);
            CHECK(cpu_arg(r, buf, n, first, 8).index == first, "%s n=%zu: all NaN: not the first index", r->name, n);
        }
    }
    /* dr_value_format of the arg kinds: the value. */
    dr_value_t v;
    memset(&v, 0, sizeof v);
    v.arg.value.f64 = -2.5;
    v.arg.index = 7;
    char text[64];
    dr_value_format(DR_ACC_ARG_F64, &v, text, sizeof text);
    CHECK(strcmp(text, "-2.5") == 0, "dr_value_format(ARG_F64, -2.5) = '%s'", text);
    v.arg.value.i64 = -9;
    dr_value_format(DR_ACC_ARG_I64, &v, text, sizeof text);
    CHECK(strcmp(text, "-9") == 0, "dr_value_format(ARG_I64, -9) = '%s'", text);
    v.arg.value.u64 = UINT64_MAX;
    dr_value_format(DR_ACC_ARG_U64, &v, text, sizeof text);
    CHECK(strcmp(text, "18446744073709551615") == 0, "dr_value_format(ARG_U64, 2^64-1) = '%s'", text);
}

/* ---- stats ---- */

/* The CPU backend's statistics, as a caller reads them. */
static dr_stats_result_t cpu_stats(const row_t *r, const void *in, size_t n, int threads, uint64_t *depth,
                                   dr_partial_t *raw)
{
    dr_partial_t p;
    memset(&p, 0xa5, sizeof p);
    const int rc = dr_cpu_reduce(r->dtype, r->op, r->acc, in, n, 0, threads, &p, depth);
    CHECK(rc == 0, "%s: dr_cpu_reduce returned %d", r->name, rc);
    dr_stats_result_t s;
    dr_stats_result(r->acc, &p, &s);
    if (raw) *raw = p;
    return s;
}

/* What must not depend on the thread count: count, min, max, the integer sum and, in the exact mode, the sum and
 * mean; bit for bit. */
static int same_exact_fields(const row_t *r, const dr_stats_result_t *a, const dr_stats_result_t *b)
{
    int same = a->count == b->count && a->min.u64 == b->min.u64 && a->max.u64 == b->max.u64;
    if (!is_float(r->dtype)) same = same && a->sum_int.lo == b->sum_int.lo && a->sum_int.hi == b->sum_int.hi &&
                                    dr_f64_to_bits(a->mean) == dr_f64_to_bits(b->mean);
    if (r->acc == DR_ACC_STATS_EXACT)
        same = same && dr_f64_to_bits(a->sum) == dr_f64_to_bits(b->sum) &&
               dr_f64_to_bits(a->mean) == dr_f64_to_bits(b->mean);
    return same;
}

/* The reference of in[0..n) (or of g's elements from first), both passes, as one shard. */
static void stats_reference(const row_t *r, const void *in, size_t n, const dr_gen_t *g, uint64_t first,
                            dr_reference_t *ref)
{
    if (g) dr_reference_compute(g, r->acc, first, n, 3, ref);
    else {
        dr_reference_init(ref, r->acc, r->op);
        dr_reference_add(ref, r->dtype, in, n, first, 2);
    }
    CHECK(dr_reference_needs_pass2(ref), "%s: a fresh stats reference must need its pass 2", r->name);
    dr_reference_begin_pass2(ref, NULL);
    if (g) dr_reference_generate(g, first, n, 2, ref);
    else dr_reference_add(ref, r->dtype, in, n, first, 3);
    CHECK(!dr_reference_needs_pass2(ref), "%s: after pass 2 it must not need another", r->name);
}

/* Naive count, min, max and integer sum, in index order. */
static void naive_stats(const row_t *r, const void *in, size_t n, dr_stats_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->count = n;
    unsigned __int128 sum = 0;
    if (is_float(r->dtype)) out->min.f64 = INFINITY, out->max.f64 = -INFINITY;
    else if (is_signed(r->dtype)) out->min.i64 = INT64_MAX, out->max.i64 = INT64_MIN;
    else out->min.u64 = UINT64_MAX, out->max.u64 = 0;
    int nan = 0;
    for (size_t i = 0; i < n; ++i) {
        const dr_scalar_t x = elem(r->dtype, in, i);
        if (is_float(r->dtype)) {
            if (isnan(x.f64)) nan = 1;
            else if (x.f64 < out->min.f64 || (x.f64 == out->min.f64 && signbit(x.f64))) out->min.f64 = x.f64;
            if (!isnan(x.f64) && (x.f64 > out->max.f64 || (x.f64 == out->max.f64 && !signbit(x.f64))))
                out->max.f64 = x.f64;
        } else if (is_signed(r->dtype)) {
            sum += (unsigned __int128)(__int128)x.i64;
            if (x.i64 < out->min.i64) out->min.i64 = x.i64;
            if (x.i64 > out->max.i64) out->max.i64 = x.i64;
        } else {
            sum += x.u64;
            if (x.u64 < out->min.u64) out->min.u64 = x.u64;
            if (x.u64 > out->max.u64) out->max.u64 = x.u64;
        }
    }
    if (nan) out->min.u64 = out->max.u64 = 0x7fffffffffffffffull;
    out->sum_int.lo = (uint64_t)sum;
    out->sum_int.hi = (uint64_t)(sum >> 64);
}

static void stats_case(const row_t *r, const void *in, size_t n, const dr_gen_t *g, uint64_t first, const char *what)
{
    dr_reference_t ref;
    stats_reference(r, in, n, g, first, &ref);
    dr_stats_result_t naive, first_res;
    naive_stats(r, in, n, &naive);
    for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; ++k) {
        uint64_t depth = 0;
        const dr_stats_result_t s = cpu_stats(r, in, n, thread_counts[k], &depth, NULL);
        dr_check_t chk;
        dr_reference_check_stats(&ref, &s, depth, &chk);
        CHECK(chk.pass, "%s %s n=%zu threads=%d: %s", r->name, what, n, thread_counts[k], chk.detail);
        CHECK(s.count == naive.count && s.min.u64 == naive.min.u64 && s.max.u64 == naive.max.u64 &&
                  (is_float(r->dtype) ||
                   (s.sum_is_int && s.sum_int.lo == naive.sum_int.lo && s.sum_int.hi == naive.sum_int.hi)),
              "%s %s n=%zu threads=%d: count/min/max/sum differ from the naive loop's", r->name, what, n,
              thread_counts[k]);
        const uint64_t slice = (n + (uint64_t)thread_counts[k] - 1) / (uint64_t)thread_counts[k];
        CHECK(depth >= (slice + 255) / 256 + 3, "%s n=%zu threads=%d: depth %" PRIu64 " below a slice's batches",
              r->name, n, thread_counts[k], depth);
        if (k == 0) first_res = s;
        else
            CHECK(same_exact_fields(r, &s, &first_res), "%s %s n=%zu: threads=%d differs from threads=1 in an exact "
                  "field", r->name, what, n, thread_counts[k]);
    }
}

static void test_stats_generated(uint64_t *rng, void *buf)
{
    static const dr_pattern_t pats[] = {DR_DATA_RANDOM, DR_DATA_IOTA, DR_DATA_CONST, DR_DATA_SPREAD};
    for (int ri = 0; ri < NSTATS; ++ri) {
        const row_t *r = &stats_rows[ri];
        for (size_t pi = 0; pi < sizeof pats / sizeof pats[0]; ++pi) {
            if (pats[pi] == DR_DATA_SPREAD && !is_float(r->dtype)) continue;
            for (size_t si = 0; si <= sizeof sizes / sizeof sizes[0]; ++si) {
                const size_t n = si < sizeof sizes / sizeof sizes[0] ? sizes[si] : BIG;
                if (n == BIG && pats[pi] != DR_DATA_RANDOM && pats[pi] != DR_DATA_SPREAD) continue;
                dr_gen_t g = {pats[pi], r->dtype, r->op, check_rand(rng), check_rand(rng) | 1, 0};
                if (is_float(r->dtype))
                    g.const_bits = r->dtype == DR_FLOAT64 ? 0xc00921fb54442d18ull
                                   : r->dtype == DR_FLOAT32 ? 0x40490fdbu : r->dtype == DR_FLOAT16 ? 0x4248u : 0x4049u;
                const uint64_t first = check_rand(rng) >> (1 + check_rand(rng) % 63);
                dr_cpu_generate(&g, first, buf, n, 2);
                char what[64];
                snprintf(what, sizeof what, "%s seed %" PRIu64, dr_pattern_name(pats[pi]), g.seed);
                stats_case(r, buf, n, &g, first, what);
            }
        }
    }
}

/* The reference of three uneven shards over the program's two rounds (pass 1 merged, the center, pass 2 per shard,
 * merged again) equals the whole's, and checks the CPU backend's result. */
static void test_stats_shards(uint64_t *rng, void *buf)
{
    const size_t n = 200003;
    for (int ri = 0; ri < NSTATS; ++ri) {
        const row_t *r = &stats_rows[ri];
        dr_gen_t g = {DR_DATA_RANDOM, r->dtype, r->op, check_rand(rng), 0, 0};
        const uint64_t first = check_rand(rng) >> 20;
        const uint64_t a = 1 + check_rand(rng) % 7, b = a + check_rand(rng) % 100000;
        const uint64_t cuts[4] = {0, a, b, n}; /* a tiny shard, a middling one, a big one */
        dr_reference_t shard[3], whole, merged;
        for (int i = 0; i < 3; ++i)
            dr_reference_compute(&g, r->acc, first + cuts[i], cuts[i + 1] - cuts[i], 1 + i, &shard[i]);
        merged = shard[0];
        dr_reference_merge(&merged, &shard[1]);
        dr_reference_merge(&merged, &shard[2]);
        double center[2], whole_center[2];
        dr_reference_stats_center(&merged, center);
        dr_reference_compute(&g, r->acc, first, n, 2, &whole);
        dr_reference_stats_center(&whole, whole_center);
        CHECK(dr_f64_to_bits(center[0]) == dr_f64_to_bits(whole_center[0]) &&
                  dr_f64_to_bits(center[1]) == dr_f64_to_bits(whole_center[1]),
              "%s: the merged shards' center (%a, %a) is not the whole's (%a, %a)", r->name, center[0], center[1],
              whole_center[0], whole_center[1]);
        for (int i = 0; i < 3; ++i) {
            dr_reference_begin_pass2(&shard[i], center);
            dr_reference_generate(&g, first + cuts[i], cuts[i + 1] - cuts[i], 2, &shard[i]);
        }
        /* Each shard checks its own partial (pass 2 also about its own mean). */
        for (int i = 0; i < 3; ++i) {
            const size_t m = (size_t)(cuts[i + 1] - cuts[i]);
            dr_cpu_generate(&g, first + cuts[i], buf, m, 2);
            uint64_t depth;
            const dr_stats_result_t s = cpu_stats(r, buf, m, 2, &depth, NULL);
            dr_check_t chk;
            dr_reference_check_stats(&shard[i], &s, depth, &chk);
            CHECK(chk.pass, "%s shard %d of [%" PRIu64 ", %" PRIu64 "): its own check failed: %s", r->name, i, cuts[i],
                  cuts[i + 1], chk.detail);
        }
        merged = shard[0];
        dr_reference_merge(&merged, &shard[1]);
        dr_reference_merge(&merged, &shard[2]);
        dr_reference_begin_pass2(&whole, NULL);
        dr_reference_generate(&g, first, n, 3, &whole);
        const double mm = merged.m2[0] + merged.m2[1], wm = whole.m2[0] + whole.m2[1];
        CHECK(fabs(mm - wm) <= 1e-20 * wm || (isinf(mm) && isinf(wm)), "%s: merged m2 %.17g, whole %.17g", r->name,
              mm, wm);
        dr_cpu_generate(&g, first, buf, n, 2);
        uint64_t depth;
        dr_partial_t parts[3], all;
        dr_partial_identity(r->acc, r->op, &all);
        for (int i = 2; i >= 0; --i) { /* the partials of the three shards, combined as ranks would be */
            dr_cpu_reduce(r->dtype, r->op, r->acc, (const char *)buf + cuts[i] * dr_dtype_size(r->dtype),
                          (size_t)(cuts[i + 1] - cuts[i]), first + cuts[i], 2, &parts[i], &depth);
            dr_partial_combine(r->acc, r->op, &all, &parts[i]);
        }
        dr_stats_result_t s;
        dr_stats_result(r->acc, &all, &s);
        uint64_t d1;
        cpu_stats(r, buf, n, 2, &d1, NULL);
        dr_check_t chk;
        dr_reference_check_stats(&merged, &s, d1 + 3, &chk);
        CHECK(chk.pass, "%s: three shards' partials combined, against the merged reference: %s", r->name, chk.detail);
        const dr_stats_result_t whole_res = cpu_stats(r, buf, n, 3, &d1, NULL);
        CHECK(same_exact_fields(r, &s, &whole_res), "%s: shards combined differ from the whole in an exact field",
              r->name);
    }
}

/* Chan's merge gives the same bits either way round (the MPI op is declared commutative). */
static void test_merge_symmetry(uint64_t *rng)
{
    for (int t = 0; t < 20000; ++t) {
        uint64_t na = 1 + check_rand(rng) % 1000, nb = t % 3 == 0 ? na : 1 + check_rand(rng) % 1000;
        const double m_any = (double)(int64_t)(check_rand(rng) >> 11) * 0x1p-40,
                     q_any = (double)(check_rand(rng) >> 11) * 0x1p-30;
        double ma = (double)(int64_t)(check_rand(rng) >> 11) * 0x1p-40, mb = t % 7 == 0 ? ma : m_any;
        double qa = (double)(check_rand(rng) >> 11) * 0x1p-30, qb = t % 11 == 0 ? qa : q_any;
        if (t % 13 == 0) ma = NAN;
        if (t % 17 == 0) na = 0;
        uint64_t n1 = na, n2 = nb;
        double m1 = ma, m2 = mb, q1 = qa, q2 = qb;
        dr_stats_merge_moments(&n1, &m1, &q1, nb, mb, qb);
        dr_stats_merge_moments(&n2, &m2, &q2, na, ma, qa);
        CHECK(n1 == n2 && dr_f64_to_bits(m1) == dr_f64_to_bits(m2) && dr_f64_to_bits(q1) == dr_f64_to_bits(q2),
              "merge(%" PRIu64 ", %a, %a | %" PRIu64 ", %a, %a) = (%a, %a) but the other way (%a, %a)", na, ma, qa, nb,
              mb, qb, m1, q1, m2, q2);
    }
    /* And whole partials: dr_partial_combine of stats either way round. */
    double x[40];
    for (int i = 0; i < 40; ++i) x[i] = 1e8 + (double)(int64_t)(check_rand(rng) >> 40) * 0x1p-20;
    const row_t r = {DR_FLOAT64, DR_STATS, DR_ACC_STATS_F64, "float64 stats"};
    dr_partial_t a, b, ab, ba;
    uint64_t d;
    dr_cpu_reduce(r.dtype, r.op, r.acc, x, 13, 0, 1, &a, &d);
    dr_cpu_reduce(r.dtype, r.op, r.acc, x + 13, 27, 13, 1, &b, &d);
    ab = a;
    dr_partial_combine(r.acc, r.op, &ab, &b);
    ba = b;
    dr_partial_combine(r.acc, r.op, &ba, &a);
    CHECK(memcmp(&ab.stats, &ba.stats, sizeof ab.stats) == 0, "dr_partial_combine of stats is not symmetric");
}

/* Mean 1e8, variance 1: the two-pass reference in double-double, the bound holds, and a one-pass sum of squares
 * (what the merges avoid) fails it. float32 at mean 1e4 too. */
static void test_cancellation(uint64_t *rng, void *buf)
{
    static const size_t ns[] = {1000, 100003, BIG};
    for (size_t si = 0; si < sizeof ns / sizeof ns[0]; ++si) {
        const size_t n = ns[si];
        double *x = buf;
        /* uniform on [-sqrt(3), sqrt(3)]: variance 1, on a 2^-26 grid so every element is exact at 1e8 */
        for (size_t i = 0; i < n; ++i)
            x[i] = 1e8 + ldexp((double)(int64_t)(check_rand(rng) % 58117684ull) - 29058842.0, -24);
        const row_t r = {DR_FLOAT64, DR_STATS, DR_ACC_STATS_F64, "float64 stats (mean 1e8)"};
        dr_reference_t ref;
        stats_reference(&r, x, n, NULL, 0, &ref);
        const double M2 = ref.own_m2[0] + ref.own_m2[1];
        /* the sample variance of n uniform elements is 1 within sqrt(0.8 / n) (one standard deviation): six of them */
        CHECK(fabs(M2 / (double)n - 1.0) < 6 * sqrt(0.8 / (double)n), "mean 1e8 n=%zu: reference variance %.17g, "
              "expected about 1", n, M2 / (double)n);
        for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; ++k) {
            uint64_t depth;
            const dr_stats_result_t s = cpu_stats(&r, x, n, thread_counts[k], &depth, NULL);
            dr_check_t chk;
            dr_reference_check_stats(&ref, &s, depth, &chk);
            CHECK(chk.pass, "mean 1e8 n=%zu threads=%d: %s", n, thread_counts[k], chk.detail);
            CHECK(fabs(s.m2 - M2) <= 1e-6 * M2, "mean 1e8 n=%zu threads=%d: m2 %.17g vs the double-double two-pass "
                  "%.17g: more than 1e-6 apart", n, thread_counts[k], s.m2, M2);
            if (k == 0) { /* one pass of sum x^2 - n mean^2 in float64: far outside the bound */
                double sx = 0, sxx = 0;
                for (size_t i = 0; i < n; ++i) sx += x[i], sxx += x[i] * x[i];
                dr_stats_result_t naive = s;
                naive.m2 = sxx - sx * sx / (double)n;
                naive.var_pop = naive.m2 / (double)n;
                naive.var_sample = naive.m2 / ((double)n - 1);
                dr_reference_check_stats(&ref, &naive, depth, &chk);
                CHECK(!chk.pass, "mean 1e8 n=%zu: the one-pass m2 %.17g passed against %.17g: %s", n, naive.m2, M2,
                      chk.detail);
            }
        }
        /* float32 around 1e4, variance about 1 (on a 2^-10 grid: exact in float32). */
        float *f = buf;
        for (size_t i = 0; i < n; ++i)
            f[i] = (float)(1e4 + ldexp((double)(int64_t)(check_rand(rng) % 3547ull) - 1773.0, -10));
        const row_t rf = {DR_FLOAT32, DR_STATS, DR_ACC_STATS_F64, "float32 stats (mean 1e4)"};
        stats_reference(&rf, f, n, NULL, 0, &ref);
        for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; ++k) {
            uint64_t depth;
            const dr_stats_result_t s = cpu_stats(&rf, f, n, thread_counts[k], &depth, NULL);
            dr_check_t chk;
            dr_reference_check_stats(&ref, &s, depth, &chk);
            CHECK(chk.pass, "float32 mean 1e4 n=%zu threads=%d: %s", n, thread_counts[k], chk.detail);
        }
    }
}

/* Integer sums past 64 bits, exactly; dr_int128_format. */
static void test_int_extremes(uint64_t *rng, void *buf)
{
    static const struct {
        dr_int128_t v;
        int is_signed;
        const char *text;
    } fmt_cases[] = {
        {{0, 0}, 1, "0"},
        {{UINT64_MAX, UINT64_MAX}, 1, "-1"},
        {{UINT64_MAX, UINT64_MAX}, 0, "340282366920938463463374607431768211455"},
        {{UINT64_MAX, 0x7fffffffffffffffull}, 1, "170141183460469231731687303715884105727"},
        {{0, 0x8000000000000000ull}, 1, "-170141183460469231731687303715884105728"},
        {{0, 1}, 0, "18446744073709551616"},
        {{0x8000000000000000ull, UINT64_MAX}, 1, "-9223372036854775808"},
        {{1000, 0}, 1, "1000"},
    };
    for (size_t i = 0; i < sizeof fmt_cases / sizeof fmt_cases[0]; ++i) {
        char text[64];
        const int len = dr_int128_format(fmt_cases[i].v, fmt_cases[i].is_signed, text, sizeof text);
        CHECK(strcmp(text, fmt_cases[i].text) == 0 && len == (int)strlen(fmt_cases[i].text),
              "dr_int128_format(%016" PRIx64 "%016" PRIx64 ", signed %d) = '%s' (%d), expected '%s'",
              fmt_cases[i].v.hi, fmt_cases[i].v.lo, fmt_cases[i].is_signed, text, len, fmt_cases[i].text);
    }
    /* Constant extremes: n copies, the sum's decimal text known. */
    static const struct {
        dr_dtype_t t;
        uint64_t bits;
        size_t n;
        const char *sum;
        double mean;
    } cases[] = {
        {DR_INT64, 0x7fffffffffffffffull, 1000, "9223372036854775807000", 9223372036854775807.0},
        {DR_INT64, 0x8000000000000000ull, 1000, "-9223372036854775808000", -9223372036854775808.0},
        {DR_UINT64, UINT64_MAX, 1000, "18446744073709551615000", 18446744073709551616.0},
        {DR_UINT64, UINT64_MAX, 100003, "1844729747603176290154845", 18446744073709551616.0},
        {DR_INT32, 0x80000000u, 100003, "-214754807250944", -2147483648.0},
        {DR_UINT32, 0xffffffffu, 7, "30064771065", 4294967295.0},
        {DR_INT8, 0x80u, 9, "-1152", -128.0},
        {DR_UINT16, 0xffffu, 8, "524280", 65535.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const dr_dtype_t t = cases[c].t;
        const row_t r = {t, DR_STATS, is_signed(t) ? DR_ACC_STATS_I64 : DR_ACC_STATS_U64, dr_dtype_name(t)};
        dr_gen_t g = {DR_DATA_CONST, t, DR_STATS, 1, cases[c].bits, 0};
        dr_cpu_generate(&g, 0, buf, cases[c].n, 2);
        for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; ++k) {
            uint64_t depth;
            const dr_stats_result_t s = cpu_stats(&r, buf, cases[c].n, thread_counts[k], &depth, NULL);
            char text[64];
            dr_int128_format(s.sum_int, is_signed(t), text, sizeof text);
            CHECK(strcmp(text, cases[c].sum) == 0, "%s const 0x%" PRIx64 " x %zu: sum %s, expected %s", r.name,
                  cases[c].bits, cases[c].n, text, cases[c].sum);
            CHECK(s.mean == cases[c].mean && s.m2 == 0, "%s const x %zu: mean %.17g m2 %g, expected %.17g and 0",
                  r.name, cases[c].n, s.mean, s.m2, cases[c].mean);
            dr_reference_t ref;
            stats_reference(&r, buf, cases[c].n, NULL, 0, &ref);
            dr_check_t chk;
            dr_reference_check_stats(&ref, &s, depth, &chk);
            CHECK(chk.pass, "%s const x %zu: %s", r.name, cases[c].n, chk.detail);
            if (k == 0) { /* the check can fail: the 128-bit sum off by one, the mean off by one ulp */
                dr_stats_result_t bad = s;
                bad.sum_int.lo ^= 1;
                dr_reference_check_stats(&ref, &bad, depth, &chk);
                CHECK(!chk.pass, "%s: a sum off by one passed: %s", r.name, chk.detail);
                bad = s;
                bad.mean = nextafter(bad.mean, INFINITY);
                dr_reference_check_stats(&ref, &bad, depth, &chk);
                CHECK(!chk.pass, "%s: a mean one ulp off passed: %s", r.name, chk.detail);
            }
        }
    }
    /* Mixed extremes: INT64_MAX, INT64_MIN, near them, random; uint64 near 2^64: sums past 64 bits, exact. */
    const size_t n = 100003;
    for (int rep = 0; rep < 4; ++rep) {
        const int sig = rep % 2 == 0;
        const dr_dtype_t t = sig ? DR_INT64 : DR_UINT64;
        const row_t r = {t, DR_STATS, sig ? DR_ACC_STATS_I64 : DR_ACC_STATS_U64,
                         sig ? "int64 extremes" : "uint64 extremes"};
        for (size_t i = 0; i < n; ++i) {
            const uint64_t x = check_rand(rng), k = x % 4;
            if (sig)
                ((int64_t *)buf)[i] = k == 0 ? INT64_MAX - (int64_t)(x >> 54)
                                      : k == 1 ? INT64_MIN + (int64_t)(x >> 54) : (int64_t)x;
            else ((uint64_t *)buf)[i] = k < 3 ? UINT64_MAX - (x >> 50) : x;
        }
        stats_case(&r, buf, n, NULL, 0, "extremes");
    }
}

/* NaN, infinities; the exact mode's means (a tiny negative one rounds to -0); the check fails where it must. */
static void test_specials(uint64_t *rng, void *buf)
{
    const size_t n = 70001;
    for (int ri = 0; ri < NSTATS; ++ri) {
        const row_t *r = &stats_rows[ri];
        if (!is_float(r->dtype)) continue;
        dr_gen_t g = {DR_DATA_RANDOM, r->dtype, DR_STATS, check_rand(rng), 0, 0};
        static const double specials[][2] = {{NAN, 1.0}, {INFINITY, 1.0}, {-INFINITY, 1.0}, {INFINITY, -INFINITY}};
        for (int c = 0; c < 4; ++c) {
            dr_cpu_generate(&g, 0, buf, n, 2);
            put(r->dtype, buf, check_rand(rng) % n, sc_f(specials[c][0]));
            if (specials[c][1] != 1.0) put(r->dtype, buf, check_rand(rng) % n, sc_f(specials[c][1]));
            uint64_t depth;
            const dr_stats_result_t s = cpu_stats(r, buf, n, 3, &depth, NULL);
            const int want_nan = c == 0 || c == 3;
            CHECK(want_nan ? isnan(s.sum) && isnan(s.mean) : s.sum == specials[c][0] && s.mean == specials[c][0],
                  "%s with %g: sum %g mean %g", r->name, specials[c][0], s.sum, s.mean);
            CHECK(isnan(s.m2) && isnan(s.var_pop) && isnan(s.var_sample), "%s with %g: m2 %g, expected NaN", r->name,
                  specials[c][0], s.m2);
            dr_reference_t ref;
            stats_reference(r, buf, n, NULL, 0, &ref);
            dr_check_t chk;
            dr_reference_check_stats(&ref, &s, depth, &chk);
            CHECK(chk.pass, "%s with special %d: %s", r->name, c, chk.detail);
            dr_stats_result_t bad = s;
            bad.m2 = 1.0;
            bad.var_pop = 1.0 / (double)n;
            bad.var_sample = 1.0 / (double)(n - 1);
            dr_reference_check_stats(&ref, &bad, depth, &chk);
            CHECK(!chk.pass, "%s with special %d: a finite m2 passed: %s", r->name, c, chk.detail);
        }
        /* The check fails for an m2 far outside its bound, a wrong min, and a variance not from the m2. */
        dr_cpu_generate(&g, 0, buf, n, 2);
        uint64_t depth;
        const dr_stats_result_t s = cpu_stats(r, buf, n, 2, &depth, NULL);
        dr_reference_t ref;
        stats_reference(r, buf, n, NULL, 0, &ref);
        dr_check_t chk;
        dr_reference_check_stats(&ref, &s, depth, &chk);
        CHECK(chk.pass && chk.bound > 0, "%s random: %s", r->name, chk.detail);
        dr_stats_result_t bad = s;
        bad.m2 += 10 * chk.bound;
        bad.var_pop = bad.m2 / (double)n;
        bad.var_sample = bad.m2 / (double)(n - 1);
        dr_check_t chk2;
        dr_reference_check_stats(&ref, &bad, depth, &chk2);
        CHECK(!chk2.pass, "%s: m2 + 10 x bound passed: %s", r->name, chk2.detail);
        bad = s;
        bad.min.f64 = nextafter(bad.min.f64, -INFINITY);
        dr_reference_check_stats(&ref, &bad, depth, &chk2);
        CHECK(!chk2.pass, "%s: a wrong min passed: %s", r->name, chk2.detail);
        bad = s;
        bad.var_sample = nextafter(bad.var_sample, INFINITY);
        dr_reference_check_stats(&ref, &bad, depth, &chk2);
        CHECK(!chk2.pass, "%s: a var_sample not m2 / (n - 1) passed: %s", r->name, chk2.detail);
        if (r->acc == DR_ACC_STATS_EXACT) {
            bad = s;
            bad.sum = nextafter(bad.sum, INFINITY);
            dr_reference_check_stats(&ref, &bad, depth, &chk2);
            CHECK(!chk2.pass, "%s: an exact sum one ulp off passed: %s", r->name, chk2.detail);
        }
    }
    /* Exact means: -2^-1074 over 3 rounds to -0; all -0 gives -0; 2^53 + 1 over 1 (a tie) is 2^53; a sum of
     * float64s that is no float64, divided by 3. */
    static const struct {
        double x[4];
        int n;
        double mean; /* NaN: not known here (the reference and dr_stats_result must agree) */
    } means[] = {
        {{-0x1p-1074, 0.0, 0.0}, 3, -0.0},
        {{-0.0, -0.0}, 2, -0.0},
        {{0x1p53, 1.0}, 2, 0x1p52},                  /* 2^52 + 1/2: a tie, to even */
        {{0x1p53, 1.0, 0.0}, 3, NAN},
        {{0x1p60, 1.0, 1.0}, 3, 0x1.5555555555555p58}, /* (2^60 + 2) / 3, rounded down */
        {{0x1p-1074, 0x1p-1074, 0x1p-1074}, 3, 0x1p-1074},
        {{0x1.fffffffffffffp1023, 0x1.fffffffffffffp1023}, 2, 0x1.fffffffffffffp1023}, /* the sum overflows */
        {{3.0, -1.0, 0x1p-1074, 5.5}, 4, NAN},
    };
    for (size_t c = 0; c < sizeof means / sizeof means[0]; ++c) {
        const row_t r = {DR_FLOAT64, DR_STATS, DR_ACC_STATS_EXACT, "float64 stats exact"};
        uint64_t depth;
        const size_t m = (size_t)means[c].n;
        const dr_stats_result_t s = cpu_stats(&r, means[c].x, m, 1, &depth, NULL);
        dr_reference_t ref;
        stats_reference(&r, means[c].x, m, NULL, 0, &ref);
        const double want = dr_reference_stats_mean(&ref);
        if (!isnan(means[c].mean))
            CHECK(dr_f64_to_bits(want) == dr_f64_to_bits(means[c].mean), "exact mean case %zu: reference %a, expected "
                  "%a", c, want, means[c].mean);
        CHECK(dr_f64_to_bits(s.mean) == dr_f64_to_bits(want), "exact mean case %zu: dr_stats_result %a, reference %a",
              c, s.mean, want);
        dr_check_t chk;
        dr_reference_check_stats(&ref, &s, depth, &chk);
        CHECK(chk.pass, "exact mean case %zu: %s", c, chk.detail);
    }
}

int main(void)
{
    uint64_t rng = check_seed("test_stats");
    void *buf = malloc((size_t)BIG * 8 + 64);
    if (!buf) return 1;
    CHECK(NARG == 24 && NSTATS == 16, "DR_ARG_TABLE has %d rows (expected 24), the stats tables %d (expected 16)",
          (int)NARG, (int)NSTATS);
    /* dr_acc_select picks a row of these tables for every valid (type, op, mode) of the new ops */
    for (int t = 0; t < DR_DTYPE_COUNT; ++t)
        for (int op = DR_STATS; op <= DR_ARGMAX; ++op)
            for (int m = 0; m < DR_ACC_MODE_COUNT; ++m) {
                const int valid = dr_acc_mode_valid((dr_dtype_t)t, (dr_op_t)op, (dr_acc_mode_t)m);
                CHECK(valid == (m != DR_ACC_NATIVE), "dr_acc_mode_valid(%s, %s, %s) = %d", dr_dtype_name((dr_dtype_t)t),
                      dr_op_name((dr_op_t)op), dr_acc_mode_name((dr_acc_mode_t)m), valid);
                if (!valid) continue;
                const dr_acc_kind_t k = dr_acc_select((dr_dtype_t)t, (dr_op_t)op, (dr_acc_mode_t)m);
                int found = 0;
                for (int i = 0; i < NARG; ++i)
                    found |= (int)arg_rows[i].dtype == t && (int)arg_rows[i].op == op && arg_rows[i].acc == k;
                for (int i = 0; i < NSTATS; ++i)
                    found |= (int)stats_rows[i].dtype == t && (int)stats_rows[i].op == op && stats_rows[i].acc == k;
                CHECK(found, "dr_acc_select(%s, %s, %s) = %s is not a row", dr_dtype_name((dr_dtype_t)t),
                      dr_op_name((dr_op_t)op), dr_acc_mode_name((dr_acc_mode_t)m), dr_acc_kind_name(k));
            }
    test_arg_generated(&rng, buf);
    test_arg_planted(&rng, buf);
    test_stats_generated(&rng, buf);
    test_stats_shards(&rng, buf);
    test_merge_symmetry(&rng);
    test_cancellation(&rng, buf);
    test_int_extremes(&rng, buf);
    test_specials(&rng, buf);
    free(buf);
    return check_summary("test_stats");
}
