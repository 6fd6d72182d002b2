#include "reference.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accum.h"
#include "parallel.h"

/* Where the reference reads its elements: the data generator (elements first, first + 1, ... of g's array) or a
 * buffer of dtype elements (read with memcpy: a buffer may be misaligned). Index j counts from the start of the
 * job in both cases, so both paths share the per-element accumulation below; element j's global index (argmin,
 * argmax) is first + j in both. */
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

/* NaN policy OMIT (accum.h, "NaN policy"), written here apart from the library's load paths: a block's NaN
 * replaced by NumPy's value for the op (0 for sums, 1 for products, +inf for min and argmin, -inf for max and
 * argmax: np.nansum's, np.nanprod's, ... replacement) and counted into *left. */
static void omit_block(int omit, dr_op_t op, double *x, size_t m, uint64_t *left)
{
    if (!omit) return;
    const double fill = op == DR_PROD ? 1.0 : op == DR_MIN || op == DR_ARGMIN ? INFINITY
                       : op == DR_MAX || op == DR_ARGMAX ? -INFINITY : 0.0;
    for (size_t k = 0; k < m; ++k)
        if (isnan(x[k])) {
            x[k] = fill;
            ++*left;
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
static void fold_elements(const ref_source_t *s, dr_acc_kind_t acc, dr_op_t op, uint64_t b, uint64_t e, dr_value_t *v,
                          int omit, uint64_t *left)
{
    int64_t si[REF_BLOCK];
    uint64_t ui[REF_BLOCK];
    double d[REF_BLOCK];
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        if (dr_acc_kind_is_float(acc)) {
            read_double(s, j0, m, d);
            omit_block(omit, op, d, m, left);
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

/* ---- argmin / argmax: the first occurrence of the extreme value, written here apart from accum.h's rules ----
 * Elements widen to their class's 64-bit scalar (signed, unsigned, float64; every widening exact). */
enum { REF_SIGNED = 0, REF_UNSIGNED = 1, REF_FLOAT = 2 };

static int ref_class(dr_acc_kind_t acc)
{
    const dr_acc_kind_t s = dr_acc_scalar_kind(acc);
    return s == DR_ACC_I64 ? REF_SIGNED : s == DR_ACC_U64 ? REF_UNSIGNED : REF_FLOAT;
}

/* Elements j0 .. j0+m-1 of the class cls into the matching one of d, si, ui. */
static void read_block(const ref_source_t *s, int cls, uint64_t j0, size_t m, double *d, int64_t *si, uint64_t *ui)
{
    if (cls == REF_FLOAT) read_double(s, j0, m, d);
    else if (cls == REF_SIGNED) read_signed(s, j0, m, si);
    else read_unsigned(s, j0, m, ui);
}

/* Whether element (v, i) is a better answer than (bv, bi): none is worse than any element; a NaN is better than
 * every number (the first NaN wins); otherwise further in the op's direction, or equal (-0 == +0) and earlier. */
static int ref_arg_better(int cls, int is_max, dr_scalar_t v, uint64_t i, dr_scalar_t bv, uint64_t bi)
{
    if (i == DR_ARG_NONE || bi == DR_ARG_NONE) return bi == DR_ARG_NONE && i != DR_ARG_NONE;
    int cmp; /* -1: v below bv, 0 equal, 1 above */
    if (cls == REF_FLOAT) {
        const int vn = isnan(v.f64), bn = isnan(bv.f64);
        if (vn || bn) return vn && (!bn || i < bi);
        cmp = v.f64 < bv.f64 ? -1 : v.f64 > bv.f64 ? 1 : 0;
    } else if (cls == REF_SIGNED) {
        cmp = v.i64 < bv.i64 ? -1 : v.i64 > bv.i64 ? 1 : 0;
    } else {
        cmp = v.u64 < bv.u64 ? -1 : v.u64 > bv.u64 ? 1 : 0;
    }
    return cmp == 0 ? i < bi : is_max ? cmp > 0 : cmp < 0;
}

static void arg_elements(const ref_source_t *s, dr_acc_kind_t acc, dr_op_t op, uint64_t b, uint64_t e, dr_arg_t *a,
                         int omit, uint64_t *left)
{
    const int cls = ref_class(acc), is_max = op == DR_ARGMAX;
    int64_t si[REF_BLOCK];
    uint64_t ui[REF_BLOCK];
    double d[REF_BLOCK];
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        read_block(s, cls, j0, m, d, si, ui);
        if (cls == REF_FLOAT) omit_block(omit, op, d, m, left);
        for (size_t k = 0; k < m; ++k) {
            dr_scalar_t v;
            if (cls == REF_FLOAT) v.f64 = isnan(d[k]) ? dr_bits_to_f64(0x7fffffffffffffffull) : d[k];
            else if (cls == REF_SIGNED) v.i64 = si[k];
            else v.u64 = ui[k];
            const uint64_t index = s->first + j0 + k;
            if (ref_arg_better(cls, is_max, v, index, a->value, a->index)) {
                a->value = v;
                a->index = index;
            }
        }
    }
}

/* ---- stats ---- */

/* v as a dr_ref_exact_t (its 32-bit pieces, each a float64 exactly). */
static void ref_exact_of_int128(dr_int128_t v, int is_signed, dr_ref_exact_t *out)
{
    dr_ref_exact_init(out);
    const int neg = is_signed && (v.hi >> 63);
    if (neg) {
        v.lo = ~v.lo + 1;
        v.hi = ~v.hi + (v.lo == 0);
    }
    const uint64_t piece[4] = {v.lo & 0xffffffffu, v.lo >> 32, v.hi & 0xffffffffu, v.hi >> 32};
    for (int k = 0; k < 4; ++k)
        if (piece[k]) dr_ref_exact_add(out, (neg ? -1.0 : 1.0) * ldexp((double)piece[k], 32 * k));
    if (!out->terms) dr_ref_exact_add(out, 0.0); /* a zero sum: +0 */
}

/* The exact sum of a stats reference. */
static void stats_exact_sum(const dr_reference_t *r, dr_ref_exact_t *s)
{
    if (ref_class(r->acc) == REF_FLOAT) *s = r->exact_sum;
    else ref_exact_of_int128(r->int_sum, ref_class(r->acc) == REF_SIGNED, s);
}

/* Bits pos..pos+len-1 (len <= 64) of the little-endian limbs q[0..nl). */
static uint64_t limb_bits(const uint64_t *q, int nl, int pos, int len)
{
    uint64_t v = 0;
    for (int k = 0; k < len; ++k) {
        const int b = pos + k;
        if (b >= 0 && b / 64 < nl && ((q[b / 64] >> (b % 64)) & 1)) v |= 1ull << k;
    }
    return v;
}

/* The exact sum s divided by n > 0, rounded once to nearest float64 (ties to even), by long division of its
 * magnitude's limbs: quotient Q (in units of 2^-1074) and remainder; with IEEE's rules for NaN, infinities and
 * zeros (a quotient that rounds to zero keeps the sum's sign; a zero sum is -0 only when every term was -0). */
static double ref_exact_div(const dr_ref_exact_t *s, uint64_t n)
{
    if (s->nan || (s->pos_inf && s->neg_inf)) return dr_bits_to_f64(0x7fffffffffffffffull);
    if (s->pos_inf) return INFINITY;
    if (s->neg_inf) return -INFINITY;
    uint64_t q[DR_REF_EXACT_LIMBS];
    const int negative = (s->limb[DR_REF_EXACT_LIMBS - 1] >> 63) != 0;
    unsigned carry = 1;
    for (int i = 0; i < DR_REF_EXACT_LIMBS; ++i) {
        q[i] = negative ? ~s->limb[i] + carry : s->limb[i];
        if (negative) carry = carry && q[i] == 0;
    }
    unsigned __int128 rem = 0;
    for (int i = DR_REF_EXACT_LIMBS - 1; i >= 0; --i) {
        const unsigned __int128 cur = (rem << 64) | q[i];
        q[i] = (uint64_t)(cur / n);
        rem = cur % n;
    }
    int len = 0; /* Q's bit length */
    for (int i = DR_REF_EXACT_LIMBS - 1; i >= 0 && !len; --i)
        if (q[i]) len = 64 * i + 64 - __builtin_clzll(q[i]);
    if (len == 0 && rem == 0) return s->terms && s->neg_zeros == s->terms ? -0.0 : 0.0;
    double v;
    if (len <= 53) { /* a multiple of 2^-1074 below 2^53 units: the unit is the last place; round rem / n */
        uint64_t u = q[0];
        if (2 * rem > n || (2 * rem == n && (u & 1))) ++u;
        v = ldexp((double)u, -1074);
    } else {
        const int shift = len - 53;
        uint64_t mant = limb_bits(q, DR_REF_EXACT_LIMBS, shift, 53);
        const int round = (int)limb_bits(q, DR_REF_EXACT_LIMBS, shift - 1, 1);
        int sticky = rem != 0;
        for (int b = 0; b < shift - 1 && !sticky; b += 64) {
            const int w = shift - 1 - b < 64 ? shift - 1 - b : 64;
            sticky = limb_bits(q, DR_REF_EXACT_LIMBS, b, w) != 0;
        }
        if (round && (sticky || (mant & 1))) ++mant;
        v = ldexp((double)mant, shift - 1074); /* past the range: an infinity */
    }
    return negative ? -v : v;
}

double dr_reference_stats_sum(const dr_reference_t *r)
{
    dr_ref_exact_t s;
    stats_exact_sum(r, &s);
    return dr_ref_exact_value(&s);
}

double dr_reference_stats_mean(const dr_reference_t *r)
{
    if (r->count == 0) return dr_bits_to_f64(0x7fffffffffffffffull);
    dr_ref_exact_t s;
    stats_exact_sum(r, &s);
    return ref_exact_div(&s, r->count);
}

int dr_reference_needs_pass2(const dr_reference_t *r) { return r->op == DR_STATS && r->pass == 1; }

void dr_reference_stats_center(const dr_reference_t *r, double center[2])
{
    const double nan = dr_bits_to_f64(0x7fffffffffffffffull);
    center[0] = center[1] = nan;
    if (r->count == 0) return;
    dr_ref_exact_t s;
    stats_exact_sum(r, &s);
    if (s.nan || s.pos_inf || s.neg_inf) return;
    const double hi = ref_exact_div(&s, r->count), n = (double)r->count;
    center[0] = hi;
    center[1] = 0.0;
    /* The rest: (S - hi n) / n, S - hi n exactly (hi n = p + e, e = fma(hi, n, -p), n exact below 2^53). */
    const double p = hi * n;
    if (r->count < (1ull << 53) && isfinite(p)) {
        dr_ref_exact_add(&s, -p);
        dr_ref_exact_add(&s, -fma(hi, n, -p));
        center[1] = dr_ref_exact_value(&s) / n;
    }
}

/* The element as a double-double (integers beyond 2^53 are not float64s). */
#define REF_DD_OF_INT(x, xh, xl)                                                                           \
    do {                                                                                                     \
        xh = (double)(x);                                                                                    \
        xl = (double)((__int128)(x) - (__int128)xh);                                                        \
    } while (0)

/* (sh, sl) += ((xh + xl) - (ch + cl))^2, in double-double. */
static inline void dd_add_square(double xh, double xl, double ch, double cl, double *sh, double *sl)
{
    double s = xh - ch, bp = s - xh;
    double t = (xh - (s - bp)) + (-ch - bp) + (xl - cl);
    const double d = s + t, bd = d - s, dl = (s - (d - bd)) + (t - bd);
    const double p = d * d, pe = fma(d, d, -p) + 2.0 * d * dl;
    dd_add(sh, sl, p);
    if (isfinite(*sh)) *sl += pe;
}

/* Pass 1: count (by the caller), the exact sum, sum |x| and max |x| over finite elements, min, max. */
static void stats_pass1(const ref_source_t *s, dr_acc_kind_t acc, uint64_t b, uint64_t e, dr_reference_t *r)
{
    const int cls = ref_class(acc);
    int64_t si[REF_BLOCK];
    uint64_t ui[REF_BLOCK];
    double d[REF_BLOCK];
    double abs_sum = r->abs_sum, max_abs = r->max_abs;
    dr_scalar_t lo = r->min, hi = r->max;
    unsigned __int128 sum = ((unsigned __int128)r->int_sum.hi << 64) | r->int_sum.lo;
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        if (cls == REF_FLOAT) {
            read_double(s, j0, m, d);
            for (size_t k = 0; k < m; ++k) {
                const double x = d[k];
                if (r->omit && isnan(x)) { /* OMIT: not an element (np.nanmean, np.nanvar) */
                    ++r->nan_left;
                    --r->count;
                    continue;
                }
                dr_ref_exact_add(&r->exact_sum, x);
                lo.f64 = dr_min_f64(lo.f64, x);
                hi.f64 = dr_max_f64(hi.f64, x);
                if (isfinite(x)) {
                    abs_sum += fabs(x);
                    max_abs = fabs(x) > max_abs ? fabs(x) : max_abs;
                }
            }
        } else if (cls == REF_SIGNED) {
            read_signed(s, j0, m, si);
            for (size_t k = 0; k < m; ++k) {
                sum += (unsigned __int128)(__int128)si[k];
                lo.i64 = si[k] < lo.i64 ? si[k] : lo.i64;
                hi.i64 = si[k] > hi.i64 ? si[k] : hi.i64;
                const double a = fabs((double)si[k]);
                max_abs = a > max_abs ? a : max_abs;
            }
        } else {
            read_unsigned(s, j0, m, ui);
            for (size_t k = 0; k < m; ++k) {
                sum += ui[k];
                lo.u64 = ui[k] < lo.u64 ? ui[k] : lo.u64;
                hi.u64 = ui[k] > hi.u64 ? ui[k] : hi.u64;
                max_abs = (double)ui[k] > max_abs ? (double)ui[k] : max_abs;
            }
        }
    }
    r->abs_sum = abs_sum;
    r->max_abs = max_abs;
    r->min = lo;
    r->max = hi;
    r->int_sum.lo = (uint64_t)sum;
    r->int_sum.hi = (uint64_t)(sum >> 64);
}

/* Pass 2: sum (x - c)^2 over finite elements about the whole's center and r's own. */
static void stats_pass2(const ref_source_t *s, dr_acc_kind_t acc, uint64_t b, uint64_t e, dr_reference_t *r)
{
    const int cls = ref_class(acc);
    int64_t si[REF_BLOCK];
    uint64_t ui[REF_BLOCK];
    double d[REF_BLOCK];
    double mh = r->m2[0], ml = r->m2[1], oh = r->own_m2[0], ol = r->own_m2[1];
    const double ch = r->center[0], cl = r->center[1], och = r->own_center[0], ocl = r->own_center[1];
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        read_block(s, cls, j0, m, d, si, ui);
        for (size_t k = 0; k < m; ++k) {
            double xh, xl;
            if (cls == REF_FLOAT) {
                if (!isfinite(d[k])) continue;
                xh = d[k], xl = 0.0;
            } else if (cls == REF_SIGNED) {
                REF_DD_OF_INT(si[k], xh, xl);
            } else {
                REF_DD_OF_INT(ui[k], xh, xl);
            }
            dd_add_square(xh, xl, ch, cl, &mh, &ml);
            dd_add_square(xh, xl, och, ocl, &oh, &ol);
        }
        dd_renorm(&mh, &ml);
        dd_renorm(&oh, &ol);
    }
    r->m2[0] = mh, r->m2[1] = ml, r->own_m2[0] = oh, r->own_m2[1] = ol;
}

void dr_reference_begin_pass2(dr_reference_t *r, const double center[2])
{
    dr_reference_stats_center(r, r->own_center);
    r->center[0] = center ? center[0] : r->own_center[0];
    r->center[1] = center ? center[1] : r->own_center[1];
    r->m2[0] = r->m2[1] = r->own_m2[0] = r->own_m2[1] = 0.0;
    r->own_valid = 1;
    r->pass = 2;
}

static int same_bits(double a, double b) { return dr_f64_to_bits(a) == dr_f64_to_bits(b); }

static void stats_merge(dr_reference_t *into, const dr_reference_t *from)
{
    const int cls = ref_class(into->acc);
    if (cls == REF_FLOAT) {
        dr_ref_exact_merge(&into->exact_sum, &from->exact_sum);
        into->min.f64 = dr_min_f64(into->min.f64, from->min.f64);
        into->max.f64 = dr_max_f64(into->max.f64, from->max.f64);
    } else {
        const uint64_t lo = into->int_sum.lo + from->int_sum.lo;
        into->int_sum.hi += from->int_sum.hi + (lo < into->int_sum.lo);
        into->int_sum.lo = lo;
        if (cls == REF_SIGNED) {
            into->min.i64 = from->min.i64 < into->min.i64 ? from->min.i64 : into->min.i64;
            into->max.i64 = from->max.i64 > into->max.i64 ? from->max.i64 : into->max.i64;
        } else {
            into->min.u64 = from->min.u64 < into->min.u64 ? from->min.u64 : into->min.u64;
            into->max.u64 = from->max.u64 > into->max.u64 ? from->max.u64 : into->max.u64;
        }
    }
    into->abs_sum += from->abs_sum;
    into->max_abs = from->max_abs > into->max_abs ? from->max_abs : into->max_abs;
    if (into->pass == 2 && from->pass == 2) {
        dd_add(&into->m2[0], &into->m2[1], from->m2[0]);
        dd_add(&into->m2[0], &into->m2[1], from->m2[1]);
        dd_renorm(&into->m2[0], &into->m2[1]);
        if (into->own_valid && from->own_valid && same_bits(into->own_center[0], from->own_center[0]) &&
            same_bits(into->own_center[1], from->own_center[1])) {
            dd_add(&into->own_m2[0], &into->own_m2[1], from->own_m2[0]);
            dd_add(&into->own_m2[0], &into->own_m2[1], from->own_m2[1]);
            dd_renorm(&into->own_m2[0], &into->own_m2[1]);
        } else {
            into->own_valid = 0;
        }
    }
}

void dr_reference_init(dr_reference_t *r, dr_acc_kind_t acc, dr_op_t op)
{
    memset(r, 0, sizeof *r);
    r->acc = acc;
    r->op = op;
    dr_ref_exact_init(&r->exact_sum);
    r->pass = 1;
    if (dr_acc_kind_is_arg(acc)) { /* the identity's value, as accum.h gives it for an empty array */
        const int is_max = op == DR_ARGMAX, cls = ref_class(acc);
        r->exact.arg.index = DR_ARG_NONE;
        if (cls == REF_FLOAT) r->exact.arg.value.f64 = is_max ? -INFINITY : INFINITY;
        else if (cls == REF_SIGNED) r->exact.arg.value.i64 = is_max ? INT64_MIN : INT64_MAX;
        else r->exact.arg.value.u64 = is_max ? 0 : UINT64_MAX;
    } else if (dr_acc_kind_is_stats(acc)) {
        const int cls = ref_class(acc);
        if (cls == REF_FLOAT) r->min.f64 = INFINITY, r->max.f64 = -INFINITY;
        else if (cls == REF_SIGNED) r->min.i64 = INT64_MAX, r->max.i64 = INT64_MIN;
        else r->min.u64 = UINT64_MAX, r->max.u64 = 0;
    } else if (acc != DR_ACC_EXACT) {
        dr_acc_identity(acc, op, &r->exact);
    }
    r->hi = op == DR_PROD ? 1.0 : 0.0;
}

typedef struct {
    ref_source_t src;
    dr_acc_kind_t acc;
    dr_op_t op;
    uint64_t n;
    const dr_reference_t *target; /* the reference the parts merge into: its pass and centers */
    dr_reference_t parts[256];
} ref_job_t;

/* 256 references: too large for some thread stacks, so one job for the process: one reference at a time. */
static ref_job_t ref_job;

/* Elements b..e-1 of the job's source into r: the one accumulation of both paths. */
static void accumulate(const ref_source_t *src, dr_acc_kind_t acc, uint64_t b, uint64_t e, dr_reference_t *r)
{
    if (dr_acc_kind_is_stats(acc) && r->pass == 2) { /* the elements were counted in pass 1 */
        stats_pass2(src, acc, b, e, r);
        return;
    }
    r->count += e - b;
    if (dr_acc_kind_is_arg(acc)) {
        arg_elements(src, acc, r->op, b, e, &r->exact.arg, r->omit, &r->nan_left);
        return;
    }
    if (dr_acc_kind_is_stats(acc)) {
        stats_pass1(src, acc, b, e, r);
        return;
    }
    if (!dr_acc_kind_is_float(acc) || (acc != DR_ACC_EXACT && !is_float_sum_or_prod(r))) {
        fold_elements(src, acc, r->op, b, e, &r->exact, r->omit, &r->nan_left);
        return;
    }
    /* The double-double pair and the sum of magnitudes in locals, not through r: kept in registers across the
     * loop (through r every element's add waited on a store and a load of r->lo). */
    double block[REF_BLOCK];
    double hi = r->hi, lo = r->lo, abs_sum = r->abs_sum;
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        read_double(src, j0, m, block);
        omit_block(r->omit, r->op, block, m, &r->nan_left);
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
    r->omit = job->target->omit;
    if (job->target->pass == 2) { /* a part of pass 2: about the target's centers */
        r->pass = 2;
        r->own_valid = 1;
        memcpy(r->center, job->target->center, sizeof r->center);
        memcpy(r->own_center, job->target->own_center, sizeof r->own_center);
    }
    accumulate(&job->src, job->acc, b, e, r);
}

/* Run the job on up to nthreads threads (about one per 64 Ki elements) and merge the parts into *into. */
static void run_job(int nthreads, dr_reference_t *into)
{
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 256) nthreads = 256;
    if ((uint64_t)nthreads > ref_job.n / 65536 + 1) nthreads = (int)(ref_job.n / 65536 + 1);
    ref_job.target = into;
    dr_parallel_run(nthreads, ref_worker, &ref_job);
    for (int i = 0; i < nthreads; ++i) dr_reference_merge(into, &ref_job.parts[i]);
}

void dr_reference_merge(dr_reference_t *into, const dr_reference_t *from)
{
    into->count += from->count;
    into->nan_left += from->nan_left;
    if (dr_acc_kind_is_arg(into->acc)) {
        const dr_arg_t *a = &from->exact.arg;
        if (ref_arg_better(ref_class(into->acc), into->op == DR_ARGMAX, a->value, a->index, into->exact.arg.value,
                           into->exact.arg.index))
            into->exact.arg = *a;
        return;
    }
    if (dr_acc_kind_is_stats(into->acc)) {
        stats_merge(into, from);
        return;
    }
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
    dr_reference_compute_nan(g, acc, DR_NAN_PROPAGATE, first, n, nthreads, out);
}

void dr_reference_compute_nan(const dr_gen_t *g, dr_acc_kind_t acc, dr_nan_policy_t nan, uint64_t first, uint64_t n,
                              int nthreads, dr_reference_t *out)
{
    ref_job.src = (ref_source_t){g, NULL, g->dtype, first};
    ref_job.acc = acc;
    ref_job.op = g->op;
    ref_job.n = n;
    dr_reference_init(out, acc, g->op);
    dr_reference_set_nan(out, nan);
    run_job(nthreads, out);
}

void dr_reference_set_nan(dr_reference_t *r, dr_nan_policy_t nan) { r->omit = nan == DR_NAN_OMIT; }

void dr_reference_generate(const dr_gen_t *g, uint64_t first, uint64_t n, int nthreads, dr_reference_t *r)
{
    ref_job.src = (ref_source_t){g, NULL, g->dtype, first};
    ref_job.acc = r->acc;
    ref_job.op = r->op;
    ref_job.n = n;
    run_job(nthreads, r);
}

void dr_reference_add(dr_reference_t *r, dr_dtype_t dtype, const void *buf, size_t n, uint64_t first, int nthreads)
{
    /* first: the global index of buf[0] (the generator's index is not used for a buffer). */
    ref_job.src = (ref_source_t){NULL, buf, dtype, first};
    ref_job.acc = r->acc;
    ref_job.op = r->op;
    ref_job.n = n;
    run_job(nthreads, r);
}

static void check_arg(const dr_reference_t *ref, const dr_value_t *result, dr_check_t *out);

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
    if (dr_acc_kind_is_arg(ref->acc)) {
        check_arg(ref, result, out);
        return;
    }
    if (dr_acc_kind_is_stats(ref->acc)) {
        snprintf(out->detail, sizeof out->detail, "internal: stats are checked by dr_reference_check_stats");
        return;
    }
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

/* ---- checking argmin/argmax and stats ---- */

static void check_arg(const dr_reference_t *ref, const dr_value_t *result, dr_check_t *out)
{
    const dr_arg_t *got = &result->arg, *want = &ref->exact.arg;
    const int cls = ref_class(ref->acc);
    char g[64], w[64];
    dr_value_format(ref->acc, result, g, sizeof g);
    dr_value_format(ref->acc, &ref->exact, w, sizeof w);
    out->exact = 1;
    out->expected = cls == REF_FLOAT ? want->value.f64 : cls == REF_SIGNED ? (double)want->value.i64
                                                                            : (double)want->value.u64;
    out->pass = memcmp(&got->value, &want->value, sizeof got->value) == 0 && got->index == want->index;
    if (want->index == DR_ARG_NONE)
        snprintf(out->detail, sizeof out->detail, "%s of no elements: got %s at %" PRIu64 ", expected none%s",
                 dr_op_name(ref->op), g, got->index, got->index == DR_ARG_NONE ? "" : " FAILED");
    else
        snprintf(out->detail, sizeof out->detail, "%s: got %s at %" PRIu64 ", expected %s at %" PRIu64
                 " (value bit for bit, index exactly)%s", dr_op_name(ref->op), g, got->index, w, want->index,
                 out->pass ? "" : " FAILED");
}

/* One field's verdict into the stats check's detail: a failure names the field, the value and the expected one. */
typedef struct {
    int pass;
    char failed[200];
} verdicts_t;

static void verdict(verdicts_t *v, int ok, const char *field, const char *got, const char *want)
{
    if (ok) return;
    size_t used = strlen(v->failed);
    if (used < sizeof v->failed - 1)
        snprintf(v->failed + used, sizeof v->failed - used, "%s%s %s, expected %s", v->pass ? "" : "; ", field, got,
                 want);
    v->pass = 0;
}

static void fmt_f64(double x, char *buf, size_t len)
{
    dr_value_t v;
    memset(&v, 0, sizeof v);
    v.f64 = x;
    dr_value_format(DR_ACC_F64, &v, buf, len);
}

static int same_f64(double a, double b) { return (isnan(a) && isnan(b)) || same_bits(a, b); }

/* a scalar of the stats kind as text */
static void fmt_scalar(int cls, dr_scalar_t s, char *buf, size_t len)
{
    if (cls == REF_FLOAT) fmt_f64(s.f64, buf, len);
    else if (cls == REF_SIGNED) snprintf(buf, len, "%" PRId64, s.i64);
    else snprintf(buf, len, "%" PRIu64, s.u64);
}

void dr_reference_check_stats(const dr_reference_t *ref, const dr_stats_result_t *got, uint64_t depth,
                              dr_check_t *out)
{
    memset(out, 0, sizeof *out);
    if (!dr_acc_kind_is_stats(ref->acc) || ref->pass != 2) {
        snprintf(out->detail, sizeof out->detail, "internal: not a stats reference after its pass 2 (acc %s, pass %d)",
                 dr_acc_kind_name(ref->acc), ref->pass);
        return;
    }
    const int cls = ref_class(ref->acc), exact_mean = cls != REF_FLOAT || ref->acc == DR_ACC_STATS_EXACT;
    const uint64_t n = ref->count;
    const double dn = (double)n, u = 0x1p-53, max_finite = 0x1.fffffffffffffp1023;
    const double nan = dr_bits_to_f64(0x7fffffffffffffffull);
    verdicts_t v = {1, ""};
    char a[64], b[64];

    /* count, min, max: exactly */
    snprintf(a, sizeof a, "%" PRIu64, got->count);
    snprintf(b, sizeof b, "%" PRIu64, n);
    verdict(&v, got->count == n, "count", a, b);
    const dr_acc_kind_t sk = dr_acc_scalar_kind(ref->acc);
    verdict(&v, got->kind == sk, "kind", dr_acc_kind_name(got->kind), dr_acc_kind_name(sk));
    fmt_scalar(cls, got->min, a, sizeof a);
    fmt_scalar(cls, ref->min, b, sizeof b);
    verdict(&v, cls == REF_FLOAT ? same_f64(got->min.f64, ref->min.f64) : got->min.u64 == ref->min.u64, "min", a, b);
    fmt_scalar(cls, got->max, a, sizeof a);
    fmt_scalar(cls, ref->max, b, sizeof b);
    verdict(&v, cls == REF_FLOAT ? same_f64(got->max.f64, ref->max.f64) : got->max.u64 == ref->max.u64, "max", a, b);

    /* What the special elements make of the sum, the mean and m2 (IEEE: a NaN, or inf - inf, is NaN). */
    const uint64_t nans = ref->exact_sum.nan, pinf = ref->exact_sum.pos_inf, ninf = ref->exact_sum.neg_inf;
    const int special = cls == REF_FLOAT && (nans || pinf || ninf);
    const double special_sum = nans || (pinf && ninf) ? nan : pinf ? INFINITY : -INFINITY;
    /* Past float64's range on the way (sum |x| overflows): the wide float sum, mean and m2 may overflow. */
    const int overflow = cls == REF_FLOAT && !(ref->abs_sum <= max_finite);

    /* sum */
    const double want_sum = dr_reference_stats_sum(ref);
    const double sum_bound = gamma_bound(depth, u) * ref->abs_sum * (1 + 1e-12) + u * fabs(want_sum);
    fmt_f64(got->sum, a, sizeof a);
    fmt_f64(want_sum, b, sizeof b);
    if (cls != REF_FLOAT) {
        char gi[48], wi[48];
        dr_int128_t gs = got->sum_int;
        const dr_int128_t ws = ref->int_sum;
        snprintf(gi, sizeof gi, "%s", "?");
        snprintf(wi, sizeof wi, "%s", "?");
        /* decimal text of both, for the message (the comparison is of the bits) */
        for (int k = 0; k < 2; ++k) {
            dr_int128_t x = k ? ws : gs;
            char *dst = k ? wi : gi;
            const int neg = cls == REF_SIGNED && (x.hi >> 63);
            unsigned __int128 m = ((unsigned __int128)x.hi << 64) | x.lo;
            if (neg) m = -m;
            char tmp[48];
            int t = 0;
            do {
                tmp[t++] = (char)('0' + (int)(m % 10));
                m /= 10;
            } while (m);
            int o = 0;
            if (neg) dst[o++] = '-';
            while (t) dst[o++] = tmp[--t];
            dst[o] = '\0';
        }
        verdict(&v, got->sum_is_int && gs.lo == ws.lo && gs.hi == ws.hi, "sum", gi, wi);
        verdict(&v, same_bits(got->sum, want_sum), "sum (float64)", a, b);
    } else if (ref->acc == DR_ACC_STATS_EXACT || special) {
        verdict(&v, same_f64(got->sum, ref->acc == DR_ACC_STATS_EXACT ? want_sum : special_sum), "sum", a, b);
    } else {
        const int expect_inf = fabs(want_sum) > max_finite * (1 + 2 * u);
        const int ok = expect_inf ? (got->sum == copysign(INFINITY, want_sum) || (overflow && isnan(got->sum)))
                       : overflow && !isfinite(got->sum) ? 1
                                                          : fabs(got->sum - want_sum) <= sum_bound;
        verdict(&v, ok, "sum", a, b);
    }

    /* mean */
    const double want_mean = dr_reference_stats_mean(ref);
    out->expected = want_mean;
    fmt_f64(got->mean, a, sizeof a);
    fmt_f64(want_mean, b, sizeof b);
    if (n == 0 || special || exact_mean) {
        verdict(&v, n == 0 ? isnan(got->mean) : same_f64(got->mean, special ? special_sum : want_mean), "mean", a, b);
    } else {
        const double bound = sum_bound / dn * (1 + 2 * u) + u * fabs(want_mean);
        verdict(&v, fabs(got->mean - want_mean) <= bound || (overflow && !isfinite(got->mean)), "mean", a, b);
    }

    /* m2, against the pass-2 sum about this reference's own mean */
    double center[2];
    dr_reference_stats_center(ref, center);
    double M2 = nan;
    int have_m2 = 0;
    if (ref->own_valid && same_bits(ref->own_center[0], center[0]) && same_bits(ref->own_center[1], center[1]))
        M2 = ref->own_m2[0] + ref->own_m2[1], have_m2 = 1;
    else if (same_bits(ref->center[0], center[0]) && same_bits(ref->center[1], center[1]))
        M2 = ref->m2[0] + ref->m2[1], have_m2 = 1;
    fmt_f64(got->m2, a, sizeof a);
    double bound = 0, err = 0;
    if (n == 0) {
        verdict(&v, got->m2 == 0, "m2", a, "0");
    } else if (special) {
        verdict(&v, isnan(got->m2), "m2", a, "nan");
    } else if (!have_m2) {
        verdict(&v, 0, "m2", a, "a pass 2 about this reference's own mean");
    } else {
        fmt_f64(M2, b, sizeof b);
        const double lg = n > 2 ? log2(dn) : 1.0, C = dn * lg;
        const double g = gamma_bound(4 * depth + 8, u);
        /* E: the mean errors (and integers' own conversions), and the reference's center (2^-100 relative) */
        const double E = g * ref->max_abs * (1 + 4 * u) + 0x1p-100 * fabs(center[0]);
        bound = (g + 0x1p-90) * M2 + (1 + g) * (6 * E * sqrt(C * M2) + 6 * C * E * E);
        err = fabs(got->m2 - M2);
        const int ok = isinf(M2) ? (isinf(got->m2) || isnan(got->m2))
                       : overflow ? (err <= bound || !isfinite(got->m2))
                                  : err <= bound;
        verdict(&v, ok, "m2", a, b);
    }
    /* the variances from the result's own m2 */
    const double vp = n ? got->m2 / dn : nan, vs = n > 1 ? got->m2 / (dn - 1.0) : nan;
    fmt_f64(got->var_pop, a, sizeof a);
    fmt_f64(vp, b, sizeof b);
    verdict(&v, same_f64(got->var_pop, vp), "var_pop", a, b);
    fmt_f64(got->var_sample, a, sizeof a);
    fmt_f64(vs, b, sizeof b);
    verdict(&v, same_f64(got->var_sample, vs), "var_sample", a, b);

    out->pass = v.pass;
    out->exact = 0;
    out->error = err;
    out->bound = bound;
    char mean_text[32], m2_text[32], ref_m2[32];
    fmt_f64(got->mean, mean_text, sizeof mean_text);
    fmt_f64(got->m2, m2_text, sizeof m2_text);
    fmt_f64(M2, ref_m2, sizeof ref_m2);
    if (v.pass)
        snprintf(out->detail, sizeof out->detail,
                 "stats of %" PRIu64 ": count, min, max exact, sum %s; mean %s %s; m2 %s, reference %s, |error| %.3g "
                 "<= bound %.3g", n, cls == REF_FLOAT && !exact_mean ? "in bound" : "exact", mean_text,
                 exact_mean ? "exact" : "in bound", m2_text, ref_m2, err, bound);
    else
        snprintf(out->detail, sizeof out->detail, "stats of %" PRIu64 ": %s FAILED", n, v.failed);
}

/* ---- Distributions: a histogram's bins by a binary search over the edges, order statistics by counting ---- */

dr_acc_kind_t dr_reference_order_kind(dr_dtype_t dtype)
{
    if (dr_dtype_is_float(dtype)) return DR_ACC_F64;
    return dtype_is_signed(dtype) ? DR_ACC_I64 : DR_ACC_U64;
}

static int order_class(dr_dtype_t dtype)
{
    return dr_dtype_is_float(dtype) ? REF_FLOAT : dtype_is_signed(dtype) ? REF_SIGNED : REF_UNSIGNED;
}

void dr_reference_minmax_init(dr_dtype_t dtype, dr_scalar_t minmax[2])
{
    const int cls = order_class(dtype);
    if (cls == REF_FLOAT) minmax[0].f64 = INFINITY, minmax[1].f64 = -INFINITY;
    else if (cls == REF_SIGNED) minmax[0].i64 = INT64_MAX, minmax[1].i64 = INT64_MIN;
    else minmax[0].u64 = UINT64_MAX, minmax[1].u64 = 0;
}

/* -1, 0, 1 as a is below, equal to or above b, in the class's order (floats: neither is NaN; -0 == +0). */
static int scalar_cmp(int cls, dr_scalar_t a, dr_scalar_t b)
{
    if (cls == REF_FLOAT) return a.f64 < b.f64 ? -1 : a.f64 > b.f64;
    if (cls == REF_SIGNED) return a.i64 < b.i64 ? -1 : a.i64 > b.i64;
    return a.u64 < b.u64 ? -1 : a.u64 > b.u64;
}

/* One job of either kind over the elements, on threads each with a count vector of its own. */
typedef struct {
    ref_source_t src;
    uint64_t n;
    int cls;
    const double *edges; /* histogram: edges[0..bins] */
    uint32_t bins;
    const dr_scalar_t *w; /* ranks: the values, ascending */
    size_t k;
    size_t words;        /* per thread */
    uint64_t *parts;     /* nthreads x words */
    dr_scalar_t minmax[256][2];
} dist_job_t;

static dist_job_t dist_job; /* one at a time per process, as ref_job */

/* The bin of x (not NaN) among edges[0..bins]: bins + 0 below, bins + 1 above, else the largest i < bins with
 * edges[i] <= x (so edges[i] <= x < edges[i + 1], and x == edges[bins] is in the last bin). */
static size_t edge_search(const double *edges, uint32_t bins, double x)
{
    if (x < edges[0]) return bins;
    if (x > edges[bins]) return (size_t)bins + 1;
    size_t lo = 0, hi = bins; /* edges[lo] <= x; the answer is below hi */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (edges[mid] <= x) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The number of w[0..k) below v (v not NaN). */
static size_t rank_search(int cls, const dr_scalar_t *w, size_t k, dr_scalar_t v)
{
    size_t lo = 0, hi = k;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (scalar_cmp(cls, w[mid], v) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void dist_worker(void *ctx, int i, int nthreads)
{
    dist_job_t *job = ctx;
    uint64_t *c = job->parts + (size_t)i * job->words;
    memset(c, 0, job->words * sizeof *c);
    unsigned long long b, e;
    dr_parallel_slice(job->n, i, nthreads, &b, &e);
    const int cls = job->cls;
    dr_scalar_t mn = job->minmax[i][0], mx = job->minmax[i][1];
    double d[REF_BLOCK];
    int64_t si[REF_BLOCK];
    uint64_t ui[REF_BLOCK];
    for (uint64_t j0 = b; j0 < e; j0 += REF_BLOCK) {
        const size_t m = e - j0 < REF_BLOCK ? (size_t)(e - j0) : REF_BLOCK;
        read_block(&job->src, cls, j0, m, d, si, ui);
        for (size_t q = 0; q < m; ++q) {
            dr_scalar_t v;
            if (cls == REF_FLOAT) v.f64 = d[q];
            else if (cls == REF_SIGNED) v.i64 = si[q];
            else v.u64 = ui[q];
            const int is_nan = cls == REF_FLOAT && isnan(v.f64);
            if (job->edges) { /* a histogram: the bins, below, above, NaN */
                if (is_nan) {
                    ++c[job->bins + 2];
                    continue;
                }
                if (scalar_cmp(cls, v, mn) < 0) mn = v;
                if (scalar_cmp(cls, v, mx) > 0) mx = v;
                const double x = cls == REF_FLOAT ? v.f64 : cls == REF_SIGNED ? (double)v.i64 : (double)v.u64;
                ++c[edge_search(job->edges, job->bins, x)];
            } else { /* ranks: c[0..k] the elements with p of w below them, c[k+1..2k+1] with u at or below */
                ++c[2 * job->k + 3];
                if (is_nan) {
                    ++c[2 * job->k + 2];
                    continue;
                }
                const size_t p = rank_search(cls, job->w, job->k, v);
                const size_t u = p + (p < job->k && scalar_cmp(cls, job->w[p], v) == 0);
                ++c[p];
                ++c[job->k + 1 + u];
            }
        }
    }
    job->minmax[i][0] = mn;
    job->minmax[i][1] = mx;
}

/* Run dist_job on up to nthreads threads (about one per 64 Ki elements, and at most 256 MiB of count vectors) and
 * return its count vectors summed into parts[0..words); 0, or -1 without memory for them. */
static int run_dist_job(int nthreads)
{
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 256) nthreads = 256;
    if ((uint64_t)nthreads > dist_job.n / 65536 + 1) nthreads = (int)(dist_job.n / 65536 + 1);
    const size_t cap = ((size_t)32 << 20) / dist_job.words;
    if ((size_t)nthreads > cap) nthreads = cap ? (int)cap : 1;
    dist_job.parts = malloc((size_t)nthreads * dist_job.words * sizeof *dist_job.parts);
    if (!dist_job.parts) return -1;
    const dr_scalar_t mn = dist_job.minmax[0][0], mx = dist_job.minmax[0][1];
    for (int i = 0; i < nthreads; ++i) dist_job.minmax[i][0] = mn, dist_job.minmax[i][1] = mx;
    dr_parallel_run(nthreads, dist_worker, &dist_job);
    for (int i = 1; i < nthreads; ++i) {
        const uint64_t *p = dist_job.parts + (size_t)i * dist_job.words;
        for (size_t w = 0; w < dist_job.words; ++w) dist_job.parts[w] += p[w];
        if (scalar_cmp(dist_job.cls, dist_job.minmax[i][0], dist_job.minmax[0][0]) < 0)
            dist_job.minmax[0][0] = dist_job.minmax[i][0];
        if (scalar_cmp(dist_job.cls, dist_job.minmax[i][1], dist_job.minmax[0][1]) > 0)
            dist_job.minmax[0][1] = dist_job.minmax[i][1];
    }
    return 0;
}

static void dist_job_begin(const dr_ref_elements_t *e)
{
    memset(&dist_job, 0, sizeof dist_job);
    dist_job.src = (ref_source_t){e->g, e->g ? NULL : e->buf, e->dtype, e->first};
    dist_job.n = e->n;
    dist_job.cls = order_class(e->dtype);
}

void dr_reference_hist_add(const dr_ref_elements_t *e, const double *edges, uint32_t bins, int nthreads,
                           uint64_t *counts, dr_scalar_t minmax[2])
{
    dist_job_begin(e);
    dist_job.edges = edges;
    dist_job.bins = bins;
    dist_job.words = DR_REF_HIST_WORDS(bins);
    dist_job.minmax[0][0] = minmax[0];
    dist_job.minmax[0][1] = minmax[1];
    if (run_dist_job(nthreads) != 0) { /* no memory for a vector per thread: counted in place, on one */
        dist_job.parts = NULL;
        uint64_t *own = calloc(dist_job.words, sizeof *own);
        if (!own) {
            counts[bins + 2] = UINT64_MAX; /* cannot count: fails the check, saying NaN counts differ */
            return;
        }
        dist_job.parts = own;
        dist_worker(&dist_job, 0, 1);
    }
    for (size_t w = 0; w < dist_job.words; ++w) counts[w] += dist_job.parts[w];
    minmax[0] = dist_job.minmax[0][0];
    minmax[1] = dist_job.minmax[0][1];
    free(dist_job.parts);
}

void dr_reference_rank_add(const dr_ref_elements_t *e, const dr_scalar_t *w, size_t k, int nthreads,
                           uint64_t *counts)
{
    dist_job_begin(e);
    dist_job.w = w;
    dist_job.k = k;
    dist_job.words = 2 * k + 4; /* P[0..k], U[0..k], NaN, all */
    dr_reference_minmax_init(e->dtype, dist_job.minmax[0]);
    if (run_dist_job(nthreads) != 0) {
        counts[2 * k + 1] = UINT64_MAX; /* cannot count: fails the check */
        return;
    }
    /* x < w[j] exactly when fewer than j + 1 of w are at or below x (u <= j); x <= w[j] when p <= j. */
    const uint64_t *P = dist_job.parts, *U = dist_job.parts + k + 1;
    uint64_t lt = 0, le = 0;
    for (size_t j = 0; j < k; ++j) {
        lt += U[j];
        le += P[j];
        counts[j] += lt;
        counts[k + j] += le;
    }
    counts[2 * k] += dist_job.parts[2 * k + 2];
    counts[2 * k + 1] += dist_job.parts[2 * k + 3];
    free(dist_job.parts);
}

size_t dr_reference_distinct(dr_dtype_t dtype, const dr_scalar_t *in, size_t n, dr_scalar_t *out)
{
    const int cls = order_class(dtype);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) { /* insertion: n is at most two per quantile */
        if (cls == REF_FLOAT && isnan(in[i].f64)) continue;
        size_t j = 0;
        while (j < m && scalar_cmp(cls, out[j], in[i]) < 0) ++j;
        if (j < m && scalar_cmp(cls, out[j], in[i]) == 0) continue;
        memmove(out + j + 1, out + j, (m - j) * sizeof *out);
        out[j] = in[i];
        ++m;
    }
    return m;
}

/* ---- Distributions: the checks ---- */

/* v rounded once to binary16 (to nearest, ties to even; past 65520 infinity), as a double. */
static double round_to_half(double v)
{
    if (!isfinite(v) || v == 0) return v;
    const double a = fabs(v);
    if (a >= 65520.0) return copysign(INFINITY, v);
    int e;
    frexp(a, &e); /* a = m 2^e, m in [0.5, 1): the binade's unit is 2^(e - 11), subnormals' 2^-24 */
    const double unit = ldexp(1.0, e - 11 < -24 ? -24 : e - 11);
    return copysign(nearbyint(a / unit) * unit, v); /* a / unit exact (a power of two); nearbyint ties to even */
}

/* NumPy's bin type for dtype: 16 (float16), 32 (float32, bfloat16), 64 (float64, integers). */
static int bin_bits(dr_dtype_t dtype)
{
    return dtype == DR_FLOAT16 ? 16 : dtype == DR_FLOAT32 || dtype == DR_BFLOAT16 ? 32 : 64;
}

static double round_to_bin(int bits, double v)
{
    return bits == 16 ? round_to_half(v) : bits == 32 ? (double)(float)v : v;
}

static double scalar_double(int cls, dr_scalar_t s)
{
    return cls == REF_FLOAT ? s.f64 : cls == REF_SIGNED ? (double)s.i64 : (double)s.u64;
}

void dr_reference_check_hist(dr_dtype_t dtype, uint32_t bins, const double *range, const uint64_t *counts,
                             const double *edges, const dreduce_dist_info_t *info, const uint64_t *ref,
                             const dr_scalar_t minmax[2], dr_check_t *out)
{
    memset(out, 0, sizeof *out);
    out->exact = 1;
    out->expected = out->error = out->bound = NAN;
    const int bits = bin_bits(dtype), cls = order_class(dtype);
    uint64_t n = 0;
    for (size_t i = 0; i < DR_REF_HIST_WORDS(bins); ++i) n += ref[i];
    char *d = out->detail;
    const size_t dl = sizeof out->detail;
    if (!info->valid) {
        snprintf(d, dl, "histogram: the result is not valid on rank 0 FAILED");
        return;
    }
    /* The outer edges NumPy makes: the range given, or the data's min and max (0..1 without elements), widened
     * by 0.5 each side when equal (a given range in float64; the data's in its own type, integers' in float64). */
    double lo, hi;
    if (range) {
        lo = range[0], hi = range[1];
        if (lo == hi) lo -= 0.5, hi += 0.5;
    } else if (n == ref[bins + 2]) { /* no element that is a number: an empty array */
        lo = 0.0, hi = 1.0;
    } else {
        lo = scalar_double(cls, minmax[0]), hi = scalar_double(cls, minmax[1]);
        if (lo == hi) lo = round_to_bin(bits, lo - 0.5), hi = round_to_bin(bits, hi + 0.5);
    }
    lo = round_to_bin(bits, lo);
    hi = round_to_bin(bits, hi);
    /* The edges. */
    const double eps = bits == 16 ? 0x1p-10 : bits == 32 ? 0x1p-23 : 0x1p-52;
    const double tiny = bits == 16 ? 0x1p-24 : bits == 32 ? 0x1p-149 : 0x1p-1074;
    const double mag = fmax(fmax(fabs(lo), fabs(hi)), hi - lo), tol = 8 * eps * mag + tiny;
    if (edges[0] != lo || edges[bins] != hi || info->lo != edges[0] || info->hi != edges[bins]) {
        snprintf(d, dl, "histogram edges: first %.17g and last %.17g (info lo %.17g, hi %.17g), expected %.17g and "
                 "%.17g FAILED", edges[0], edges[bins], info->lo, info->hi, lo, hi);
        return;
    }
    for (uint32_t i = 0; i <= bins; ++i) {
        const double want = lo + (hi - lo) * ((double)i / (double)bins);
        const char *why = !isfinite(edges[i])                    ? "is not finite"
                          : round_to_bin(bits, edges[i]) != edges[i] ? "is not a value of NumPy's bin type"
                          : i > 0 && edges[i] < edges[i - 1]      ? "is below the edge before it"
                          : fabs(edges[i] - want) > tol           ? "is far from lo + (hi - lo) i / bins"
                                                                  : NULL;
        if (why) {
            snprintf(d, dl, "histogram edge %u of %u, %.17g, %s (%.17g, float%d) FAILED", i, bins, edges[i], why,
                     want, bits);
            return;
        }
    }
    /* The counts. */
    const uint64_t got_extra[3] = {info->below, info->above, info->nan_count};
    uint64_t wrong = 0, first = UINT64_MAX;
    for (size_t i = 0; i < DR_REF_HIST_WORDS(bins); ++i) {
        const uint64_t got = i < bins ? counts[i] : got_extra[i - bins];
        if (got != ref[i]) {
            if (!wrong) first = i;
            ++wrong;
        }
    }
    out->expected = (double)n;
    if (wrong) {
        static const char *const extra[3] = {"below", "above", "NaN"};
        const uint64_t got = first < bins ? counts[first] : got_extra[first - bins];
        if (first < bins)
            snprintf(d, dl, "histogram of %" PRIu64 ": %" PRIu64 " count(s) differ from a binary search over the "
                     "edges, the first bin %" PRIu64 " [%.17g, %.17g%c: got %" PRIu64 ", expected %" PRIu64 " FAILED",
                     n, wrong, first, edges[first], edges[first + 1], first + 1 == bins ? ']' : ')', got, ref[first]);
        else
            snprintf(d, dl, "histogram of %" PRIu64 ": %" PRIu64 " count(s) differ from a binary search over the "
                     "edges, the first %s: got %" PRIu64 ", expected %" PRIu64 " FAILED", n, wrong,
                     extra[first - bins], got, ref[first]);
        return;
    }
    if (info->count != n) {
        snprintf(d, dl, "histogram: info count %" PRIu64 ", the ranks' elements %" PRIu64 " FAILED", info->count, n);
        return;
    }
    out->pass = 1;
    snprintf(d, dl, "histogram of %" PRIu64 ": all %u bins, below %" PRIu64 ", above %" PRIu64 " and NaN %" PRIu64
             " as a binary search over the edges counts them; edges %.9g to %.9g (%s range) as NumPy makes them",
             n, bins, ref[bins], ref[bins + 1], ref[bins + 2], lo, hi, range ? "the given" : "the automatic");
}

/* NumPy's _lerp(a, b, t): a + (b - a) t, or b - (b - a)(1 - t) where t >= 0.5 (each operation rounded once: the
 * products go through a volatile, so that no compiler contracts them into an FMA, which NumPy does not). */
static double numpy_lerp(double a, double b, double t)
{
    const double diff = b - a;
    volatile double prod = t >= 0.5 ? diff * (1.0 - t) : diff * t;
    return t >= 0.5 ? b - prod : a + prod;
}

static void scalar_text(int cls, dr_scalar_t s, char *buf, size_t len)
{
    if (cls == REF_FLOAT) fmt_f64(s.f64, buf, len);
    else if (cls == REF_SIGNED) snprintf(buf, len, "%" PRId64, s.i64);
    else snprintf(buf, len, "%" PRIu64, s.u64);
}

void dr_reference_check_quantile(dr_dtype_t dtype, size_t nq, const double *q, const double *values,
                                 const dreduce_order_stat_t *order, const dreduce_dist_info_t *info,
                                 const dr_scalar_t *w, size_t k, const uint64_t *ref, int omit, dr_check_t *out)
{
    memset(out, 0, sizeof *out);
    out->exact = 1;
    out->error = out->bound = NAN;
    out->expected = nq ? values[0] : NAN;
    char *d = out->detail;
    const size_t dl = sizeof out->detail;
    const uint64_t nan = ref[2 * k], all = ref[2 * k + 1];
    const int cls = order_class(dtype);
    if (!info->valid || info->count != all || info->nan_count != nan) {
        snprintf(d, dl, "quantile: info valid %d, count %" PRIu64 ", NaN %" PRIu64 "; the ranks hold %" PRIu64
                 " elements, %" PRIu64 " NaN FAILED", info->valid, info->count, info->nan_count, all, nan);
        return;
    }
    /* NaN policy OMIT: np.nanquantile, the quantiles of the elements that are not NaN (NaN only: NaN). */
    const uint64_t n = omit ? all - nan : all;
    const int want_nan = omit ? n == 0 : nan > 0;
    for (size_t i = 0; i < nq; ++i) {
        const dreduce_order_stat_t *o = &order[i];
        if (want_nan) { /* NumPy: NaN anywhere makes every quantile NaN (np.nanquantile: NaN only does) */
            if (!isnan(values[i])) {
                snprintf(d, dl, "quantile %.17g of %" PRIu64 " elements with %" PRIu64 " NaN: got %.17g, expected "
                         "nan FAILED", q[i], n, nan, values[i]);
                return;
            }
            continue;
        }
        /* The ranks and the weight, as NumPy's method "linear" makes them. */
        const double v = (double)(n - 1) * q[i];
        uint64_t lo, up;
        double gamma;
        if (v >= (double)(n - 1)) {
            lo = up = n - 1;
            gamma = v + 1.0; /* NumPy: the index -1 (the last element) for both, and v - (-1) */
        } else {
            const double f = floor(v);
            lo = (uint64_t)f;
            up = lo + 1;
            gamma = v - f;
        }
        if (o->kind != dr_reference_order_kind(dtype) || o->lower_rank != lo || o->upper_rank != up ||
            !same_bits(o->gamma, gamma)) {
            snprintf(d, dl, "quantile %.17g of %" PRIu64 ": order statistics of kind %s at ranks %" PRIu64 ", %" PRIu64
                     ", gamma %.17g; expected %s at %" PRIu64 ", %" PRIu64 ", gamma %.17g FAILED", q[i], n,
                     dr_acc_kind_name(o->kind), o->lower_rank, o->upper_rank, o->gamma,
                     dr_acc_kind_name(dr_reference_order_kind(dtype)), lo, up, gamma);
            return;
        }
        /* Each order statistic an element of the data at its rank: count(x < s) <= rank < count(x <= s). */
        const dr_scalar_t stat[2] = {o->lower, o->upper};
        const uint64_t rank[2] = {lo, up};
        for (int s = 0; s < 2; ++s) {
            char text[64];
            scalar_text(cls, stat[s], text, sizeof text);
            const size_t j = (cls == REF_FLOAT && isnan(stat[s].f64)) ? k : rank_search(cls, w, k, stat[s]);
            if (j == k || scalar_cmp(cls, w[j], stat[s]) != 0) {
                snprintf(d, dl, "quantile %.17g: the %s order statistic %s was not counted (internal) FAILED", q[i],
                         s ? "upper" : "lower", text);
                return;
            }
            const uint64_t lt = ref[j], le = ref[k + j];
            if (!(lt <= rank[s] && rank[s] < le)) {
                snprintf(d, dl, "quantile %.17g of %" PRIu64 ": the %s order statistic %s is not the element at rank "
                         "%" PRIu64 ": %" PRIu64 " elements are below it, %" PRIu64 " at or below it FAILED", q[i], n,
                         s ? "upper" : "lower", text, rank[s], lt, le);
                return;
            }
        }
        const double want = numpy_lerp(scalar_double(cls, o->lower), scalar_double(cls, o->upper), gamma);
        if (!same_f64(values[i], want)) {
            snprintf(d, dl, "quantile %.17g of %" PRIu64 ": got %.17g, expected %.17g (NumPy's lerp of the order "
                     "statistics at ranks %" PRIu64 " and %" PRIu64 ", gamma %.17g), bit for bit FAILED", q[i], n,
                     values[i], want, lo, up, gamma);
            return;
        }
    }
    out->pass = 1;
    if (want_nan)
        snprintf(d, dl, "%zu quantile(s) of %" PRIu64 " elements holding %" PRIu64 " NaN: nan, as NumPy gives", nq,
                 all, nan);
    else if (omit && nan)
        snprintf(d, dl, "%zu quantile(s) of the %" PRIu64 " elements that are not NaN (%" PRIu64 " left out, as "
                 "np.nanquantile): each order statistic an element at its rank, the ranks and weights NumPy's, each "
                 "value NumPy's lerp bit for bit", nq, n, nan);
    else
        snprintf(d, dl, "%zu quantile(s) of %" PRIu64 ": each order statistic an element at its rank (count(x < v) <= "
                 "rank < count(x <= v)), the ranks and weights NumPy's, each value NumPy's lerp bit for bit", nq, n);
}
