#include "reference.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dreduce/accum.h"
#include "parallel.h"

/* Where the reference reads its elements: the data generator (elements first, first + 1, ... of g's array) or a
 * buffer of dtype elements (read with memcpy: a buffer may be misaligned). Index j counts from the start of the
 * job in both cases, so both paths share the per-element accumulation below. */
typedef struct {
    const dr_gen_t *g;
    const void *buf;
    dr_dtype_t dtype;
    uint64_t first;
} ref_source_t;

static inline uint16_t load_u16(const void *buf, uint64_t j)
{
    uint16_t x;
    memcpy(&x, (const unsigned char *)buf + j * 2, 2);
    return x;
}
static inline uint32_t load_u32(const void *buf, uint64_t j)
{
    uint32_t x;
    memcpy(&x, (const unsigned char *)buf + j * 4, 4);
    return x;
}
static inline uint64_t load_u64(const void *buf, uint64_t j)
{
    uint64_t x;
    memcpy(&x, (const unsigned char *)buf + j * 8, 8);
    return x;
}

/* ---- Reading the source a block at a time: the dtype's switch (and generator or buffer) once per block, not per
 * element. Signed integers widen to int64, unsigned ones to uint64, floats to double (exactly, all of them). ---- */
enum { REF_BLOCK = 256 };

/* OUT[k] for k < m: LOAD from the buffer (element j = j0 + k) or GEN from the generator (element i = i0 + k). */
#define REF_READ(OUT, LOAD, GEN)                                                     \
    do {                                                                             \
        if (s->buf)                                                                  \
            for (size_t k = 0; k < m; ++k) {                                         \
                const uint64_t j = j0 + k;                                           \
                OUT[k] = (LOAD);                                                     \
            }                                                                        \
        else                                                                         \
            for (size_t k = 0; k < m; ++k) {                                         \
                const uint64_t i = i0 + k;                                           \
                OUT[k] = (GEN);                                                      \
            }                                                                        \
    } while (0)

static void read_signed(const ref_source_t *s, uint64_t j0, size_t m, int64_t *x)
{
    const dr_gen_t *g = s->g;
    const uint64_t i0 = s->first + j0;
    const unsigned char *b = s->buf;
    switch (s->dtype) {
    case DR_INT8: REF_READ(x, (int8_t)b[j], dr_gen_int8(g, i)); break;
    case DR_INT16: REF_READ(x, (int16_t)load_u16(b, j), dr_gen_int16(g, i)); break;
    case DR_INT32: REF_READ(x, (int32_t)load_u32(b, j), dr_gen_int32(g, i)); break;
    default: REF_READ(x, (int64_t)load_u64(b, j), dr_gen_int64(g, i)); break;
    }
}

static void read_unsigned(const ref_source_t *s, uint64_t j0, size_t m, uint64_t *x)
{
    const dr_gen_t *g = s->g;
    const uint64_t i0 = s->first + j0;
    const unsigned char *b = s->buf;
    switch (s->dtype) {
    case DR_UINT8: REF_READ(x, b[j], dr_gen_uint8(g, i)); break;
    case DR_UINT16: REF_READ(x, load_u16(b, j), dr_gen_uint16(g, i)); break;
    case DR_UINT32: REF_READ(x, load_u32(b, j), dr_gen_uint32(g, i)); break;
    default: REF_READ(x, load_u64(b, j), dr_gen_uint64(g, i)); break;
    }
}

static void read_double(const ref_source_t *s, uint64_t j0, size_t m, double *x)
{
    const dr_gen_t *g = s->g;
    const uint64_t i0 = s->first + j0;
    const unsigned char *b = s->buf;
    switch (s->dtype) {
    case DR_FLOAT32: REF_READ(x, dr_bits_to_f32(load_u32(b, j)), dr_gen_float32(g, i)); break;
    case DR_FLOAT64: REF_READ(x, dr_bits_to_f64(load_u64(b, j)), dr_gen_float64(g, i)); break;
    case DR_FLOAT16: REF_READ(x, dr_f16_to_f32(load_u16(b, j)), dr_f16_to_f32(dr_gen_float16(g, i))); break;
    default: REF_READ(x, dr_bf16_to_f32(load_u16(b, j)), dr_bf16_to_f32(dr_gen_bfloat16(g, i))); break;
    }
}

static int dtype_is_signed(dr_dtype_t t) { return t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64; }

/* ---- Folding a block into an accumulator of kind K (field F, C type T) with the accumulator's own combine rules
 * (dreduce/accum.h), in element order: the (kind, op) switch once per block. Integers: every op; floats: min and
 * max, the only float ops folded this way (float sums and products take the double-double path below). ---- */
#define REF_FOLD_LOOP(T, F, FN, X)                                                   \
    {                                                                                \
        T a = v->F;                                                                  \
        for (size_t k = 0; k < m; ++k) a = FN(a, (T)X[k]);                           \
        v->F = a;                                                                    \
    }                                                                                \
    break;
#define REF_FOLD_INT(T, K, F, X)                                                     \
    switch (op) {                                                                    \
    case DR_SUM: REF_FOLD_LOOP(T, F, dr_sum_##K, X)                                  \
    case DR_PROD: REF_FOLD_LOOP(T, F, dr_prod_##K, X)                                \
    case DR_MIN: REF_FOLD_LOOP(T, F, dr_min_##K, X)                                  \
    case DR_MAX: REF_FOLD_LOOP(T, F, dr_max_##K, X)                                  \
    case DR_BAND: REF_FOLD_LOOP(T, F, dr_band_##K, X)                                \
    case DR_BOR: REF_FOLD_LOOP(T, F, dr_bor_##K, X)                                  \
    case DR_BXOR: REF_FOLD_LOOP(T, F, dr_bxor_##K, X)                                \
    default: break;                                                                  \
    }
#define REF_FOLD_FLOAT(T, K, F, X)                                                   \
    switch (op) {                                                                    \
    case DR_MIN: REF_FOLD_LOOP(T, F, dr_min_##K, X)                                  \
    case DR_MAX: REF_FOLD_LOOP(T, F, dr_max_##K, X)                                  \
    default: break;                                                                  \
    }

/* Elements b..e-1 into *v (kind acc, op), a block at a time; not for float sums and products, nor exact sums. */
static void fold_elements(const ref_source_t *s, dr_acc_kind_t acc, dr_op_t op, uint64_t b, uint64_t e, dr_value_t *v)
{
    int64_t si[REF_BLOCK];
    uint64_t ui[REF_BLOCK];
    double d[REF_BLOCK];
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        if (dr_acc_kind_is_float(acc)) {
            read_double(s, j0, m, d);
            if (acc == DR_ACC_F32) REF_FOLD_FLOAT(float, f32, f32, d)
            else REF_FOLD_FLOAT(double, f64, f64, d)
        } else if (dtype_is_signed(s->dtype)) {
            read_signed(s, j0, m, si);
            if (acc == DR_ACC_I32) REF_FOLD_INT(int32_t, i32, i32, si)
            else REF_FOLD_INT(int64_t, i64, i64, si)
        } else {
            read_unsigned(s, j0, m, ui);
            if (acc == DR_ACC_U32) REF_FOLD_INT(uint32_t, u32, u32, ui)
            else REF_FOLD_INT(uint64_t, u64, u64, ui)
        }
    }
}

/* Double-double arithmetic (Knuth's TwoSum, and TwoProd through fma). Past the double range the value becomes
 * +-inf with a zero low part (the error terms would be inf - inf = NaN). */
static void dd_add(double *hi, double *lo, double x)
{
    double s = *hi + x, bp = s - *hi;
    if (!isfinite(s)) {
        *hi = s;
        *lo = 0;
        return;
    }
    *lo += (*hi - (s - bp)) + (x - bp);
    *hi = s;
}

static void dd_renorm(double *hi, double *lo)
{
    double s = *hi + *lo;
    if (!isfinite(s)) {
        *hi = s;
        *lo = 0;
        return;
    }
    *lo = *lo - (s - *hi);
    *hi = s;
}

static void dd_mul(double *hi, double *lo, double xh, double xl)
{
    double p = *hi * xh, e = fma(*hi, xh, -p);
    if (!isfinite(p)) {
        *hi = p;
        *lo = 0;
        return;
    }
    e += *hi * xl + *lo * xh;
    *hi = p + e;
    *lo = e - (*hi - p);
}

static int is_float_sum_or_prod(const dr_reference_t *r)
{
    return dr_acc_kind_is_float(r->acc) && r->acc != DR_ACC_EXACT && (r->op == DR_SUM || r->op == DR_PROD);
}

/* ---- The independent exact sum ---- */

void dr_ref_exact_init(dr_ref_exact_t *r) { memset(r, 0, sizeof *r); }

/* r->limb += v << bit (v < 2^64), or -= when negative, every carry or borrow propagated to the top limb. */
static void limbs_add_shifted(uint64_t *limb, uint64_t v, unsigned bit, int negative)
{
    unsigned k = bit / 64, s = bit % 64;
    uint64_t part[2] = {v << s, s ? v >> (64 - s) : 0};
    unsigned carry = 0;
    for (unsigned i = k; i < DR_REF_EXACT_LIMBS; ++i) {
        const uint64_t add = i - k < 2 ? part[i - k] : 0;
        if (i - k >= 2 && carry == 0) break;
        const uint64_t old = limb[i];
        if (!negative) {
            const uint64_t t = old + add;
            const unsigned c1 = t < old;
            limb[i] = t + carry;
            carry = c1 | (limb[i] < t);
        } else {
            const uint64_t t = old - add;
            const unsigned b1 = old < add;
            limb[i] = t - carry;
            carry = b1 | (t < (uint64_t)carry);
        }
    }
}

void dr_ref_exact_add(dr_ref_exact_t *r, double x)
{
    ++r->terms;
    if (isnan(x)) { ++r->nan; return; }
    if (isinf(x)) { if (x > 0) ++r->pos_inf; else ++r->neg_inf; return; }
    if (x == 0) { if (signbit(x)) ++r->neg_zeros; return; }
    int e = 0;
    const double m = frexp(fabs(x), &e); /* |x| = m 2^e, m in [0.5, 1) */
    /* |x| = M 2^(e - 53) with M = m 2^53 an integer (below 2^53); in units of 2^-1074 that is M << (e - 53 + 1074),
     * and for a subnormal x, whose lowest bit is 2^-1074, the shift is never negative. */
    const int shift = e - 53 + 1074;
    uint64_t big = (uint64_t)ldexp(m, 53);
    unsigned bit = 0;
    if (shift >= 0) bit = (unsigned)shift;
    else big >>= -shift; /* exact: a subnormal's bits below 2^-1074 are zero */
    limbs_add_shifted(r->limb, big, bit, x < 0);
}

void dr_ref_exact_merge(dr_ref_exact_t *into, const dr_ref_exact_t *from)
{
    unsigned carry = 0;
    for (int i = 0; i < DR_REF_EXACT_LIMBS; ++i) {
        const uint64_t t = into->limb[i] + from->limb[i];
        const unsigned c1 = t < into->limb[i];
        into->limb[i] = t + carry;
        carry = c1 | (into->limb[i] < t);
    }
    into->nan += from->nan;
    into->pos_inf += from->pos_inf;
    into->neg_inf += from->neg_inf;
    into->terms += from->terms;
    into->neg_zeros += from->neg_zeros;
}

double dr_ref_exact_value(const dr_ref_exact_t *r)
{
    const uint64_t canonical_nan = 0x7fffffffffffffffull;
    double nan_value;
    memcpy(&nan_value, &canonical_nan, sizeof nan_value);
    if (r->nan || (r->pos_inf && r->neg_inf)) return nan_value;
    if (r->pos_inf) return INFINITY;
    if (r->neg_inf) return -INFINITY;
    uint64_t mag[DR_REF_EXACT_LIMBS];
    const int negative = (r->limb[DR_REF_EXACT_LIMBS - 1] >> 63) != 0;
    unsigned borrow = 1; /* the magnitude: two's complement negation, ~x + 1 */
    for (int i = 0; i < DR_REF_EXACT_LIMBS; ++i) {
        mag[i] = negative ? ~r->limb[i] + borrow : r->limb[i];
        if (negative) borrow = borrow && mag[i] == 0;
    }
    int top = DR_REF_EXACT_LIMBS - 1;
    while (top >= 0 && mag[top] == 0) --top;
    if (top < 0) return r->terms && r->neg_zeros == r->terms ? -0.0 : 0.0;
    /* The highest 64 bits, with every bit below them ORed into the lowest (sticky: 64 bits leave 11 below the
     * rounding point, so it decides ties and nothing else); the conversion to double rounds to nearest even, and
     * ldexp scales exactly (the result is normal here, or the value was below 2^64 units and exact), or
     * overflows to infinity. */
    int lz = 0;
    while (!((mag[top] << lz) >> 63)) ++lz;
    const int len = 64 * top + 64 - lz; /* bit length */
    uint64_t window;
    int low; /* the window's lowest bit position */
    if (len <= 64) {
        window = mag[0];
        low = 0;
    } else {
        low = len - 64;
        const int k = low / 64, s = low % 64;
        window = mag[k] >> s;
        if (s) window |= mag[k + 1] << (64 - s);
        int sticky = s && (mag[k] << (64 - s)) != 0;
        for (int i = 0; i < k && !sticky; ++i) sticky = mag[i] != 0;
        window |= (uint64_t)sticky;
    }
    const double v = ldexp((double)window, low - 1074);
    return negative ? -v : v;
}

void dr_reference_init(dr_reference_t *r, dr_acc_kind_t acc, dr_op_t op)
{
    memset(r, 0, sizeof *r);
    r->acc = acc;
    r->op = op;
    dr_ref_exact_init(&r->exact_sum);
    if (acc != DR_ACC_EXACT) dr_acc_identity(acc, op, &r->exact);
    r->hi = op == DR_PROD ? 1.0 : 0.0;
}

typedef struct {
    ref_source_t src;
    dr_acc_kind_t acc;
    dr_op_t op;
    uint64_t n;
    dr_reference_t parts[256];
} ref_job_t;

/* 256 references: too large for some thread stacks, so one job for the process: one reference at a time. */
static ref_job_t ref_job;

/* Elements b..e-1 of the job's source into r: the one accumulation of both paths. */
static void accumulate(const ref_source_t *src, dr_acc_kind_t acc, uint64_t b, uint64_t e, dr_reference_t *r)
{
    r->count += e - b;
    if (!dr_acc_kind_is_float(acc) || (acc != DR_ACC_EXACT && !is_float_sum_or_prod(r))) {
        fold_elements(src, acc, r->op, b, e, &r->exact);
        return;
    }
    /* The double-double pair and the sum of magnitudes in locals, not through r: kept in registers across the
     * loop (through r every element's add waited on a store and a load of r->lo). */
    double block[REF_BLOCK];
    double hi = r->hi, lo = r->lo, abs_sum = r->abs_sum;
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        read_double(src, j0, m, block);
        for (size_t k = 0; k < m; ++k) {
            double x = block[k];
            if (acc == DR_ACC_EXACT) {
                dr_ref_exact_add(&r->exact_sum, x);
                continue;
            }
            if (isnan(x)) { ++r->nan; continue; }
            if (isinf(x)) { if (x > 0) ++r->pos_inf; else ++r->neg_inf; continue; }
            if (r->op == DR_SUM) {
                dd_add(&hi, &lo, x);
                abs_sum += fabs(x);
            } else {
                const uint64_t j = j0 + k;
                if (x == 0) { ++r->zero; if (signbit(x)) ++r->negative; continue; }
                if (x < 0) { ++r->negative; x = -x; }
                dd_mul(&hi, &lo, x, 0.0);
                if ((j & 1023) == 1023) dd_renorm(&hi, &lo);
            }
        }
    }
    if (acc != DR_ACC_EXACT) dd_renorm(&hi, &lo);
    r->hi = hi;
    r->lo = lo;
    r->abs_sum = abs_sum;
}

static void ref_worker(void *ctx, int i, int k)
{
    ref_job_t *job = ctx;
    dr_reference_t *r = &job->parts[i];
    unsigned long long b, e;
    dr_parallel_slice(job->n, i, k, &b, &e);
    dr_reference_init(r, job->acc, job->op);
    accumulate(&job->src, job->acc, b, e, r);
}

/* Run the job on up to nthreads threads (about one per 64 Ki elements) and merge the parts into *into. */
static void run_job(int nthreads, dr_reference_t *into)
{
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 256) nthreads = 256;
    if ((uint64_t)nthreads > ref_job.n / 65536 + 1) nthreads = (int)(ref_job.n / 65536 + 1);
    dr_parallel_run(nthreads, ref_worker, &ref_job);
    for (int i = 0; i < nthreads; ++i) dr_reference_merge(into, &ref_job.parts[i]);
}

void dr_reference_merge(dr_reference_t *into, const dr_reference_t *from)
{
    into->count += from->count;
    if (into->acc == DR_ACC_EXACT) {
        dr_ref_exact_merge(&into->exact_sum, &from->exact_sum);
        return;
    }
    if (!is_float_sum_or_prod(into)) {
        dr_acc_combine(into->acc, into->op, &into->exact, &from->exact);
        return;
    }
    into->nan += from->nan;
    into->pos_inf += from->pos_inf;
    into->neg_inf += from->neg_inf;
    into->zero += from->zero;
    into->negative += from->negative;
    if (into->op == DR_SUM) {
        dd_add(&into->hi, &into->lo, from->hi);
        dd_add(&into->hi, &into->lo, from->lo);
        into->abs_sum += from->abs_sum;
    } else {
        dd_mul(&into->hi, &into->lo, from->hi, from->lo);
    }
    dd_renorm(&into->hi, &into->lo);
}

void dr_reference_compute(const dr_gen_t *g, dr_acc_kind_t acc, uint64_t first, uint64_t n, int nthreads,
                          dr_reference_t *out)
{
    ref_job.src = (ref_source_t){g, NULL, g->dtype, first};
    ref_job.acc = acc;
    ref_job.op = g->op;
    ref_job.n = n;
    dr_reference_init(out, acc, g->op);
    run_job(nthreads, out);
}

void dr_reference_add(dr_reference_t *r, dr_dtype_t dtype, const void *buf, size_t n, int nthreads)
{
    ref_job.src = (ref_source_t){NULL, buf, dtype, 0};
    ref_job.acc = r->acc;
    ref_job.op = r->op;
    ref_job.n = n;
    run_job(nthreads, r);
}

int dr_value_format(dr_acc_kind_t acc, const dr_value_t *v, char *buf, size_t len)
{
    switch (acc) {
    case DR_ACC_I32: return snprintf(buf, len, "%" PRId32, v->i32);
    case DR_ACC_U32: return snprintf(buf, len, "%" PRIu32, v->u32);
    case DR_ACC_I64: return snprintf(buf, len, "%" PRId64, v->i64);
    case DR_ACC_U64: return snprintf(buf, len, "%" PRIu64, v->u64);
    case DR_ACC_F32:
    case DR_ACC_F64:
    case DR_ACC_EXACT: { /* an exact sum's result is its float64 rounding */
        double d = acc == DR_ACC_F32 ? (double)v->f32 : v->f64;
        if (isnan(d)) return snprintf(buf, len, "nan");
        if (isinf(d)) return snprintf(buf, len, d > 0 ? "inf" : "-inf");
        return snprintf(buf, len, acc == DR_ACC_F32 ? "%.9g" : "%.17g", d);
    }
    default: return snprintf(buf, len, "?");
    }
}

static double value_as_double(dr_acc_kind_t acc, const dr_value_t *v)
{
    switch (acc) {
    case DR_ACC_I32: return v->i32;
    case DR_ACC_U32: return v->u32;
    case DR_ACC_I64: return (double)v->i64;
    case DR_ACC_U64: return (double)v->u64;
    case DR_ACC_F32: return v->f32;
    default: return v->f64;
    }
}

static double gamma_bound(uint64_t k, double u)
{
    double ku = (double)k * u;
    return ku < 1 ? ku / (1 - ku) : INFINITY;
}

void dr_reference_check(const dr_reference_t *ref, const dr_value_t *result, uint64_t depth, dr_check_t *out)
{
    char got[64], want[64];
    memset(out, 0, sizeof *out);
    dr_value_format(ref->acc, result, got, sizeof got);
    if (ref->acc == DR_ACC_EXACT) {
        const double want_d = dr_ref_exact_value(&ref->exact_sum);
        out->exact = 1;
        out->expected = want_d;
        out->pass = memcmp(&result->f64, &want_d, sizeof want_d) == 0;
        dr_value_t w;
        memset(&w, 0, sizeof w);
        w.f64 = want_d;
        dr_value_format(DR_ACC_F64, &w, want, sizeof want);
        snprintf(out->detail, sizeof out->detail, "exact sum, rounded once: got %s, expected %s, bit for bit%s", got,
                 want, out->pass ? "" : " FAILED");
        return;
    }
    if (!is_float_sum_or_prod(ref)) {
        const size_t size = dr_acc_kind_size(ref->acc);
        const double rd = value_as_double(ref->acc, result), ed = value_as_double(ref->acc, &ref->exact);
        out->exact = 1;
        out->expected = ed;
        out->pass = memcmp(result, &ref->exact, size) == 0 || (isnan(rd) && isnan(ed));
        dr_value_format(ref->acc, &ref->exact, want, sizeof want);
        snprintf(out->detail, sizeof out->detail, "exact: got %s, expected %s", got, want);
        return;
    }
    const double u = ref->acc == DR_ACC_F32 ? 0x1p-24 : 0x1p-53;
    const double r = value_as_double(ref->acc, result);
    /* The IEEE outcome when special values took part. */
    double special = 0;
    int has_special = 1;
    if (ref->nan || (ref->op == DR_SUM && ref->pos_inf && ref->neg_inf) ||
        (ref->op == DR_PROD && ref->zero && (ref->pos_inf || ref->neg_inf)))
        special = NAN;
    else if (ref->op == DR_SUM && (ref->pos_inf || ref->neg_inf))
        special = ref->pos_inf ? INFINITY : -INFINITY;
    else if (ref->op == DR_PROD && (ref->pos_inf || ref->neg_inf || ref->zero)) {
        int negative = (int)((ref->negative + ref->neg_inf) & 1);
        special = ref->zero ? 0.0 : INFINITY;
        if (negative) special = -special;
        /* A zero times partial products that overflowed is 0 * inf = NaN in whichever order reaches it: with a
         * zero among the elements and the rest of the product past the accumulator's range, both 0 and NaN are
         * the IEEE outcome of some order. */
        const double max_finite = ref->acc == DR_ACC_F32 ? 0x1.fffffep127 : 0x1.fffffffffffffp1023;
        if (ref->zero && (isinf(ref->hi) || fabs(ref->hi) > max_finite) && isnan(r)) special = NAN;
    } else
        has_special = 0;
    const double sign = ref->op == DR_PROD && (ref->negative & 1) ? -1.0 : 1.0;
    double expected = has_special ? special : isinf(ref->hi) ? sign * ref->hi : sign * (ref->hi + ref->lo);
    /* Past the accumulator's range the IEEE outcome is overflow to infinity ... */
    const double max_finite = ref->acc == DR_ACC_F32 ? 0x1.fffffep127 : 0x1.fffffffffffffp1023;
    if (!has_special && fabs(expected) > max_finite * (1 + 2 * u)) expected = copysign(INFINITY, expected);
    out->expected = expected;
    /* ... and below it, gradual underflow: a product whose exact value is under the smallest normal number may
     * come out as any value of at most that size (the roundings are no longer relative). */
    const double min_normal = ref->acc == DR_ACC_F32 ? 0x1p-126 : 0x1p-1022;
    if (!has_special && ref->op == DR_PROD && fabs(expected) < min_normal) {
        out->bound = min_normal;
        out->error = fabs(r - expected);
        out->pass = !isnan(r) && fabs(r) <= min_normal * (1 + 4 * u) && (r == 0 || signbit(r) == signbit(expected));
        snprintf(out->detail, sizeof out->detail, "underflow: got %s, reference %.17g below the smallest normal %g%s",
                 got, expected, min_normal, out->pass ? "" : " FAILED");
        return;
    }
    if (has_special || isinf(expected)) {
        out->exact = 1;
        out->pass = (isnan(expected) && isnan(r)) || (!isnan(expected) && r == expected);
        snprintf(out->detail, sizeof out->detail, "IEEE special: got %s, expected %g", got, expected);
        return;
    }
    const double diff = fabs((sign * r - ref->hi) - ref->lo);
    double bound;
    if (ref->op == DR_SUM)
        bound = gamma_bound(depth, u) * ref->abs_sum * (1 + 1e-12) + u * fabs(expected);
    else
        bound = (gamma_bound(ref->count, u) + u) * fabs(expected);
    out->error = diff;
    out->bound = bound;
    out->pass = !isnan(r) && diff <= bound;
    snprintf(out->detail, sizeof out->detail, "got %s, reference %.17g, |error| %.3g <= bound %.3g%s", got,
             expected, diff, bound, out->pass ? "" : " FAILED");
}
