/* The accumulator: how each op combines two values of each accumulator kind, its identity, and how 16-bit floats
 * widen. This one header is compiled by the C host code (CPU backend, MPI combine, reference) and by the CUDA
 * kernels, so every level of the pipeline combines with exactly the same rules.
 *
 * Rules:
 *   - integer sum and prod wrap modulo 2^width (done in unsigned arithmetic, so no signed-overflow UB);
 *   - float min/max propagate NaN (if either side is NaN the result is the canonical NaN, 0x7fffffff or
 *     0x7fffffffffffffff, whatever the inputs' payloads) and order -0 below +0, so the result does not depend on the
 *     order of combination, to the bit;
 *   - band/bor/bxor are defined for the integer kinds only;
 *   - float sums in the exact mode accumulate without rounding (a dr_exact_t, "Exact sums" below), rounded once to
 *     float64 where the result is read. */
#ifndef DREDUCE_ACCUM_H
#define DREDUCE_ACCUM_H

#include <stdint.h>
#include <string.h>

#include "dtype.h"

#ifdef __CUDACC__
#define DR_HD __host__ __device__ __forceinline__
#else
#define DR_HD static inline
#endif

/* ---- 16-bit float widening (exact). Our own bit code so host and device agree to the bit. ---- */
DR_HD float dr_bits_to_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

DR_HD uint32_t dr_f32_to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* float16 -> float32 is exact for every finite value and infinity. A NaN widens to the canonical NaN (0x7fffffff),
 * whatever its sign and payload: the accumulator rules make every NaN result canonical anyway, and it is what the
 * GPU's one-instruction conversion gives (tests/gpu/test_f16_widen.cu checks all 65,536 inputs against this host
 * code, to the bit). On the device the conversion is that instruction (cvt.f32.f16): the portable bit code below
 * costs a dozen instructions per element, which left the float16 kernels issue-bound at half the memory bandwidth
 * (docs/performance.md). */
#if defined(__CUDA_ARCH__)
DR_HD float dr_f16_to_f32(uint16_t h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
#else
DR_HD float dr_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return dr_bits_to_f32(man ? 0x7fffffffu : sign | 0x7f800000u); /* NaN (canonical), inf */
    if (exp != 0) return dr_bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0) return dr_bits_to_f32(sign);
    /* Subnormal: value = man * 2^-24, exact in float32. */
    float v = (float)man * 5.9604644775390625e-8f;
    return sign ? -v : v;
}
#endif

DR_HD float dr_bf16_to_f32(uint16_t h) { return dr_bits_to_f32((uint32_t)h << 16); }

/* ---- Combine rules, one function per (op, accumulator kind). ---- */
#define DR_ACC_INT_RULES(T, UT, K)                                                   \
    DR_HD T dr_sum_##K(T a, T b) { return (T)((UT)a + (UT)b); }                      \
    DR_HD T dr_prod_##K(T a, T b) { return (T)((UT)a * (UT)b); }                     \
    DR_HD T dr_min_##K(T a, T b) { return b < a ? b : a; }                           \
    DR_HD T dr_max_##K(T a, T b) { return b > a ? b : a; }                           \
    DR_HD T dr_band_##K(T a, T b) { return (T)((UT)a & (UT)b); }                     \
    DR_HD T dr_bor_##K(T a, T b) { return (T)((UT)a | (UT)b); }                      \
    DR_HD T dr_bxor_##K(T a, T b) { return (T)((UT)a ^ (UT)b); }

DR_ACC_INT_RULES(int32_t, uint32_t, i32)
DR_ACC_INT_RULES(uint32_t, uint32_t, u32)
DR_ACC_INT_RULES(int64_t, uint64_t, i64)
DR_ACC_INT_RULES(uint64_t, uint64_t, u64)

DR_HD double dr_bits_to_f64(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

DR_HD uint64_t dr_f64_to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}
DR_HD int dr_signbit_f32(float a) { return (int)(dr_f32_to_bits(a) >> 31); }
DR_HD int dr_signbit_f64(double a) { return (int)(dr_f64_to_bits(a) >> 63); }

/* Written as selects, not branches, so the compiler emits compare-and-select chains in the kernels' inner loops.
 * b < a picks the smaller; equal values differ only as -0 and +0, and the sign bit picks -0 for min (+0 for max);
 * a NaN on either side gives the canonical NaN. a != a is the NaN test that works in C, C++ and device code alike.
 * On the GPU (sm_80 and later) float32 min/max are one instruction each, min.NaN.f32 / max.NaN.f32 (FMNMX.NAN),
 * which follow exactly these rules (PTX: NaN in gives the canonical NaN; +0 > -0); the select chain is five
 * dependent instructions per element, which the float32 min/max kernels felt (docs/performance.md). */
#define DR_ACC_FLOAT_RULES(T, K, CANON)                                              \
    DR_HD T dr_sum_##K(T a, T b) { return a + b; }                                   \
    DR_HD T dr_prod_##K(T a, T b) { return a * b; }                                  \
    DR_HD T dr_min_select_##K(T a, T b)                                              \
    {                                                                                \
        T m = b < a ? b : a;                                                         \
        m = (a == b && dr_signbit_##K(b)) ? b : m;                                   \
        return (a != a || b != b) ? CANON : m;                                       \
    }                                                                                \
    DR_HD T dr_max_select_##K(T a, T b)                                              \
    {                                                                                \
        T m = b > a ? b : a;                                                         \
        m = (a == b && !dr_signbit_##K(b)) ? b : m;                                  \
        return (a != a || b != b) ? CANON : m;                                       \
    }

DR_ACC_FLOAT_RULES(float, f32, dr_bits_to_f32(0x7fffffffu))
DR_ACC_FLOAT_RULES(double, f64, dr_bits_to_f64(0x7fffffffffffffffull))

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
DR_HD float dr_min_f32(float a, float b)
{
    float m;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
    return m;
}
DR_HD float dr_max_f32(float a, float b)
{
    float m;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
    return m;
}
#else
DR_HD float dr_min_f32(float a, float b) { return dr_min_select_f32(a, b); }
DR_HD float dr_max_f32(float a, float b) { return dr_max_select_f32(a, b); }
#endif
DR_HD double dr_min_f64(double a, double b) { return dr_min_select_f64(a, b); }
DR_HD double dr_max_f64(double a, double b) { return dr_max_select_f64(a, b); }

/* ---- Identities ---- */
DR_HD void dr_acc_identity(dr_acc_kind_t k, dr_op_t op, dr_value_t *v)
{
    memset(v, 0, sizeof *v);
    switch (k) {
    case DR_ACC_I32:
        v->i32 = op == DR_PROD ? 1 : op == DR_MIN ? INT32_MAX : op == DR_MAX ? INT32_MIN : op == DR_BAND ? -1 : 0;
        break;
    case DR_ACC_U32:
        v->u32 = op == DR_PROD ? 1u : op == DR_MIN || op == DR_BAND ? UINT32_MAX : 0u;
        break;
    case DR_ACC_I64:
        v->i64 = op == DR_PROD ? 1 : op == DR_MIN ? INT64_MAX : op == DR_MAX ? INT64_MIN : op == DR_BAND ? -1 : 0;
        break;
    case DR_ACC_U64:
        v->u64 = op == DR_PROD ? 1u : op == DR_MIN || op == DR_BAND ? UINT64_MAX : 0u;
        break;
    case DR_ACC_F32:
        v->f32 = op == DR_PROD ? 1.0f : op == DR_MIN ? dr_bits_to_f32(0x7f800000u)
                                      : op == DR_MAX ? dr_bits_to_f32(0xff800000u) : 0.0f;
        break;
    case DR_ACC_F64: {
        uint64_t inf = 0x7ff0000000000000ull, ninf = 0xfff0000000000000ull;
        if (op == DR_MIN) memcpy(&v->f64, &inf, 8);
        else if (op == DR_MAX) memcpy(&v->f64, &ninf, 8);
        else v->f64 = op == DR_PROD ? 1.0 : 0.0;
        break;
    }
    default:
        break;
    }
}

/* ---- Exact sums (acc_mode DR_ACC_MODE_EXACT, accumulator kind DR_ACC_EXACT, a dr_exact_t) ----
 *
 * Every float16, bfloat16, float32 and float64 is an integer multiple of 2^-1074 (float64's smallest subnormal), and
 * every finite float64 is below 2^1024: so a fixed-point integer with its unit at 2^-1074 holds any of them exactly,
 * and 2098 bits hold the largest. 2^64 terms need 64 bits more, and a sign: 2163 bits. A dr_exact_t has 68 digits of
 * 32 bits (2176), digit i weighing 2^(32 i - 1074), each kept in a signed 64-bit word: an add puts less than 2^32
 * (in magnitude) into each of three words, so a word can take DR_EXACT_ADDS adds before it must be normalized
 * (carries moved up: digits 0..66 back in [0, 2^32), the sign and what is left in word 67). The value is
 * sum_i w[i] 2^(32 i - 1074) whether normalized or not, and normalizing is deterministic, so any order of adds and
 * combines gives the same bits: the partial is exact, and so associative and commutative to the bit, at every level
 * (threads, warps, blocks, chunks, ranks). It is rounded once, to nearest with ties to even, where the result is
 * read (dr_exact_to_f64).
 *
 * What is not a finite number goes to flags, with IEEE's rules at the rounding: a NaN term, or +inf and -inf both,
 * give the canonical NaN; otherwise an infinite term gives that infinity; an exact sum of 2^1024 or more (after
 * rounding) gives an infinity. A zero sum is -0.0 only when there was a term and every term was -0.0, as IEEE's
 * round-to-nearest addition gives; with no term at all it is +0.0 (the identity, as for the other modes). */
#define DR_EXACT_NAN 1u           /* a NaN term */
#define DR_EXACT_POS_INF 2u       /* a +inf term */
#define DR_EXACT_NEG_INF 4u       /* a -inf term */
#define DR_EXACT_TERM 8u          /* a term of any value */
#define DR_EXACT_NOT_NEG_ZERO 16u /* a term other than -0.0 */
#define DR_EXACT_ADDS (1u << 30)  /* adds a word takes between normalizations: 2^30 * 2^32 stays below 2^63 */

DR_HD void dr_exact_zero(dr_exact_t *a) { memset(a, 0, sizeof *a); }

/* The three digits x adds and the word of the lowest: x = +-(d2 2^64 + d1 2^32 + d0) 2^(32 i - 1074). In a separate
 * function so the GPU kernels can keep words in registers and still decompose terms the same way. Returns the flags
 * the term sets; for a NaN or an infinity the digits are zero. */
DR_HD uint32_t dr_exact_split_f64(double x, int *word, int64_t *d0, int64_t *d1, int64_t *d2)
{
    const uint64_t b = dr_f64_to_bits(x);
    uint32_t e = (uint32_t)(b >> 52) & 0x7ffu;
    uint64_t m = b & 0xfffffffffffffull;
    const uint32_t flags = DR_EXACT_TERM | (b != 0x8000000000000000ull ? DR_EXACT_NOT_NEG_ZERO : 0u);
    if (e == 0x7ffu) {
        *word = 0, *d0 = *d1 = *d2 = 0;
        return flags | (m ? DR_EXACT_NAN : (b >> 63) ? DR_EXACT_NEG_INF : DR_EXACT_POS_INF);
    }
    if (e) m |= 1ull << 52; /* normal: the implicit bit; a subnormal has the exponent of e = 1 */
    else e = 1;
    const uint32_t p = e - 1;   /* the position of m's lowest bit, in units of 2^-1074: 0..2045 */
    const uint32_t s = p & 31u; /* m << s is below 2^84: three digits */
    const uint64_t lo = m << s, hi = (m >> 1) >> (63 - s); /* (m >> 1) >> 63 is 0 when s is 0 */
    /* The sign without a branch (random signs would mispredict one in two): neg is 0 or all ones, and
     * (v ^ neg) - neg is v or -v. */
    const int64_t neg = -(int64_t)(b >> 63);
    *word = (int)(p >> 5); /* 0..63, so the third digit's word is at most 65 */
    *d0 = ((int64_t)(lo & 0xffffffffu) ^ neg) - neg;
    *d1 = ((int64_t)(lo >> 32) ^ neg) - neg;
    *d2 = ((int64_t)hi ^ neg) - neg;
    return flags;
}

/* a += v 2^(p - 1074) for p in 0..2111 and any int64 v (a sum of integer terms of one binade, or bin): v shifted
 * by p mod 32 is below 2^95 in magnitude, two digits below 2^32 and a signed top below 2^31, at words p / 32 ..
 * + 2 (at most 67; a value whose top digits reach there must fit the dr_exact_t, as every sum of floats does).
 * Three adds towards DR_EXACT_ADDS. */
DR_HD void dr_exact_add_scaled(dr_exact_t *a, int64_t v, int p)
{
    const int i = p >> 5, s = p & 31;
    const uint64_t lo = (uint64_t)v << s;
    const int64_t hi = s ? v >> (64 - s) : v >> 63; /* arithmetic shifts: floor(v 2^s / 2^64) */
    a->w[i] += (int64_t)(lo & 0xffffffffu);
    a->w[i + 1] += (int64_t)(lo >> 32);
    a->w[i + 2] += hi;
}

/* a += x. At most DR_EXACT_ADDS adds (and combines) between normalizations. */
DR_HD void dr_exact_add_f64(dr_exact_t *a, double x)
{
    int i;
    int64_t d0, d1, d2;
    a->flags |= dr_exact_split_f64(x, &i, &d0, &d1, &d2);
    a->w[i] += d0;
    a->w[i + 1] += d1;
    a->w[i + 2] += d2;
}

/* Move the carries up: words 0..66 in [0, 2^32), word 67 signed. The value does not change. */
DR_HD void dr_exact_normalize(dr_exact_t *a)
{
    int64_t carry = 0;
    for (int i = 0; i < DR_EXACT_WORDS - 1; ++i) {
        const int64_t v = a->w[i] + carry;
        const int64_t digit = v & 0xffffffffll;
        a->w[i] = digit;
        carry = (v - digit) / 4294967296ll; /* exact: floor(v / 2^32), without shifting a negative number */
    }
    a->w[DR_EXACT_WORDS - 1] += carry;
}

/* a += b, both normalized (as every partial is between levels); a stays normalized. */
DR_HD void dr_exact_combine(dr_exact_t *a, const dr_exact_t *b)
{
    for (int i = 0; i < DR_EXACT_WORDS; ++i) a->w[i] += b->w[i];
    a->flags |= b->flags;
    dr_exact_normalize(a);
}

/* The exact sum rounded once to float64 (to nearest, ties to even), with the rules above for flags and zeros. */
DR_HD double dr_exact_to_f64(const dr_exact_t *in)
{
    const uint32_t f = in->flags;
    if ((f & DR_EXACT_NAN) || ((f & DR_EXACT_POS_INF) && (f & DR_EXACT_NEG_INF)))
        return dr_bits_to_f64(0x7fffffffffffffffull);
    if (f & DR_EXACT_POS_INF) return dr_bits_to_f64(0x7ff0000000000000ull);
    if (f & DR_EXACT_NEG_INF) return dr_bits_to_f64(0xfff0000000000000ull);
    dr_exact_t a = *in;
    dr_exact_normalize(&a);
    uint64_t sign = 0;
    if (a.w[DR_EXACT_WORDS - 1] < 0) { /* the magnitude: negate every word, normalize again */
        for (int i = 0; i < DR_EXACT_WORDS; ++i) a.w[i] = -a.w[i];
        dr_exact_normalize(&a);
        sign = 1ull << 63;
    }
    int top = DR_EXACT_WORDS - 1; /* every word is now a digit below 2^32 (the sum is below 2^2162) */
    while (top >= 0 && a.w[top] == 0) --top;
    if (top < 0) /* zero */
        return dr_bits_to_f64((f & DR_EXACT_TERM) && !(f & DR_EXACT_NOT_NEG_ZERO) ? 1ull << 63 : 0);
    int len = 32 * top; /* the magnitude's bit length */
    for (uint64_t d = (uint64_t)a.w[top]; d; d >>= 1) ++len;
    if (len <= 53) /* below 2^53 units of 2^-1074: exactly a float64, whose bits are the units themselves */
        return dr_bits_to_f64(sign | (uint64_t)a.w[0] | (len > 32 ? (uint64_t)a.w[1] << 32 : 0));
    /* The top 53 bits, from bit `shift` up; the round bit below them; sticky: any bit below that. */
    const int shift = len - 53, q = shift >> 5, r = shift & 31;
    const uint64_t t0 = (uint64_t)a.w[q], t1 = q + 1 < DR_EXACT_WORDS ? (uint64_t)a.w[q + 1] : 0,
                   t2 = q + 2 < DR_EXACT_WORDS ? (uint64_t)a.w[q + 2] : 0;
    uint64_t mant = (t0 >> r) | (t1 << (32 - r));
    if (r) mant |= t2 << (64 - r);
    mant &= (1ull << 53) - 1;
    const int rb = shift - 1; /* the round bit's position */
    const int round = (int)(((uint64_t)a.w[rb >> 5] >> (rb & 31)) & 1u);
    int sticky = ((uint64_t)a.w[rb >> 5] & ((1ull << (rb & 31)) - 1)) != 0;
    for (int i = 0; i < (rb >> 5) && !sticky; ++i) sticky = a.w[i] != 0;
    if (round && (sticky || (mant & 1u))) ++mant;
    /* mant in [2^52, 2^53] is the value / 2^(shift - 1074); the biased exponent is shift + 1, so the bits are
     * (shift << 52) + mant, which also carries a mant of 2^53 into the exponent. */
    if (shift + (mant >> 53) + 1 >= 2047) return dr_bits_to_f64(sign | 0x7ff0000000000000ull);
    return dr_bits_to_f64(sign | (((uint64_t)shift << 52) + mant));
}

/* Generic combine by run-time kind and op: *inout = *inout (op) *in. For the host's combine of partials (MPI user
 * ops, reference, report); the inner loops call the typed functions above directly. */
#define DR_ACC_CASE(K, F)                                                            \
    switch (op) {                                                                    \
    case DR_SUM: inout->F = dr_sum_##K(inout->F, in->F); break;                      \
    case DR_PROD: inout->F = dr_prod_##K(inout->F, in->F); break;                    \
    case DR_MIN: inout->F = dr_min_##K(inout->F, in->F); break;                      \
    case DR_MAX: inout->F = dr_max_##K(inout->F, in->F); break;                      \
    default: DR_ACC_BITWISE_##F(K, F) break;                                         \
    }
#define DR_ACC_BITWISE_INT(K, F)                                                     \
    if (op == DR_BAND) inout->F = dr_band_##K(inout->F, in->F);                      \
    else if (op == DR_BOR) inout->F = dr_bor_##K(inout->F, in->F);                   \
    else if (op == DR_BXOR) inout->F = dr_bxor_##K(inout->F, in->F);
#define DR_ACC_BITWISE_i32 DR_ACC_BITWISE_INT
#define DR_ACC_BITWISE_u32 DR_ACC_BITWISE_INT
#define DR_ACC_BITWISE_i64 DR_ACC_BITWISE_INT
#define DR_ACC_BITWISE_u64 DR_ACC_BITWISE_INT
#define DR_ACC_BITWISE_f32(K, F)
#define DR_ACC_BITWISE_f64(K, F)

DR_HD void dr_acc_combine(dr_acc_kind_t k, dr_op_t op, dr_value_t *inout, const dr_value_t *in)
{
    switch (k) {
    case DR_ACC_I32: DR_ACC_CASE(i32, i32) break;
    case DR_ACC_U32: DR_ACC_CASE(u32, u32) break;
    case DR_ACC_I64: DR_ACC_CASE(i64, i64) break;
    case DR_ACC_U64: DR_ACC_CASE(u64, u64) break;
    case DR_ACC_F32: DR_ACC_CASE(f32, f32) break;
    case DR_ACC_F64: DR_ACC_CASE(f64, f64) break;
    default: break;
    }
}

/* ---- argmin / argmax (op DR_ARGMIN / DR_ARGMAX, accumulator kinds DR_ACC_ARG_*, a dr_arg_t) ----
 *
 * A partial is one element: its value (widened exactly to the kind's 64-bit scalar; a NaN is the canonical one) and
 * its global index. b beats a when its value lies further in the op's direction, or compares equal (==, so -0 and +0
 * are equal, as NumPy and CUB compare them) at a lower index; a NaN beats every number (the first NaN wins, as in
 * NumPy's argmin/argmax) and, among NaNs, the lower index wins. That is a total order on (value, index), the index
 * being unique: the combine picks one of its operands, so it is commutative and associative to the bit, and every
 * grid, chunking, rank count and backend gives the same element. The identity (the value every element ties or
 * beats, at index DR_ARG_NONE) is what an empty share reports. */
DR_HD int dr_arg_beats_f64(int is_max, double bv, uint64_t bi, double av, uint64_t ai)
{
    const int bn = bv != bv, an = av != av;
    if (bn | an) return bn && (!an || bi < ai);
    if (bv == av) return bi < ai;
    return is_max ? bv > av : bv < av;
}
DR_HD int dr_arg_beats_i64(int is_max, int64_t bv, uint64_t bi, int64_t av, uint64_t ai)
{
    return bv == av ? bi < ai : is_max ? bv > av : bv < av;
}
DR_HD int dr_arg_beats_u64(int is_max, uint64_t bv, uint64_t bi, uint64_t av, uint64_t ai)
{
    return bv == av ? bi < ai : is_max ? bv > av : bv < av;
}

/* Whether b beats a, for a kind DR_ACC_ARG_* and op DR_ARGMIN or DR_ARGMAX. */
DR_HD int dr_arg_beats(dr_acc_kind_t k, dr_op_t op, const dr_arg_t *b, const dr_arg_t *a)
{
    const int is_max = op == DR_ARGMAX;
    if (k == DR_ACC_ARG_F64) return dr_arg_beats_f64(is_max, b->value.f64, b->index, a->value.f64, a->index);
    if (k == DR_ACC_ARG_U64) return dr_arg_beats_u64(is_max, b->value.u64, b->index, a->value.u64, a->index);
    return dr_arg_beats_i64(is_max, b->value.i64, b->index, a->value.i64, a->index);
}

/* A float element as an arg value: widened (exactly), a NaN made canonical. */
DR_HD double dr_arg_canon_f64(double x) { return x != x ? dr_bits_to_f64(0x7fffffffffffffffull) : x; }

DR_HD void dr_arg_identity(dr_acc_kind_t k, dr_op_t op, dr_arg_t *a)
{
    const int is_max = op == DR_ARGMAX;
    a->index = DR_ARG_NONE;
    if (k == DR_ACC_ARG_F64) a->value.f64 = dr_bits_to_f64(is_max ? 0xfff0000000000000ull : 0x7ff0000000000000ull);
    else if (k == DR_ACC_ARG_U64) a->value.u64 = is_max ? 0 : UINT64_MAX;
    else a->value.i64 = is_max ? INT64_MIN : INT64_MAX;
}

DR_HD void dr_arg_combine(dr_acc_kind_t k, dr_op_t op, dr_arg_t *inout, const dr_arg_t *in)
{
    if (dr_arg_beats(k, op, in, inout)) *inout = *in;
}

/* ---- Statistics (op DR_STATS, accumulator kinds DR_ACC_STATS_*, a dr_stats_t) ----
 *
 * count, sum, min, max, and the second moment about the running mean (m2 = sum of (x - mean)^2) in float64: mean and
 * variance come from them where the result is read (src/common/stats.c). A thread adds its elements a batch at a time (the
 * batch's mean and m2 taken in two passes over registers), and batches, threads, warps, blocks, chunks and ranks
 * merge with Chan's update (dr_stats_merge_moments), which keeps m2 a sum of non-negative terms: no cancellation
 * between large moments. The sum of integers is exact (128 bits), so their mean is exact before its one rounding;
 * float sums are float64 (or exact, DR_ACC_STATS_EXACT). min/max follow DR_MIN/DR_MAX's rules (NaN wins, -0 < +0).
 * A NaN makes sum, mean and m2 NaN (IEEE arithmetic carries it); an infinity makes the sum and mean that infinity and
 * m2 NaN (inf - inf). Float results depend on the grouping (as float sums do); count, min, max and integer sums do
 * not. */
DR_HD void dr_i128_add(dr_int128_t *a, dr_int128_t b)
{
    const uint64_t lo = a->lo + b.lo;
    a->hi += b.hi + (lo < a->lo);
    a->lo = lo;
}
DR_HD dr_int128_t dr_i128_of_i64(int64_t v)
{
    dr_int128_t r;
    r.lo = (uint64_t)v;
    r.hi = v < 0 ? UINT64_MAX : 0;
    return r;
}
DR_HD dr_int128_t dr_i128_of_u64(uint64_t v)
{
    dr_int128_t r;
    r.lo = v;
    r.hi = 0;
    return r;
}

/* Chan's merge of the moments (nb, mb, m2b) into (*na, *ma, *m2a). The operand with the larger count (on a tie: the
 * smaller mean's bits, then m2's) is taken as the first, so merging a into b and b into a give the same bits (the
 * MPI op is declared commutative). */
DR_HD void dr_stats_merge_moments(uint64_t *na, double *ma, double *m2a, uint64_t nb, double mb, double m2b)
{
    if (nb == 0) return;
    if (*na == 0) {
        *na = nb, *ma = mb, *m2a = m2b;
        return;
    }
    uint64_t n1 = *na, n2 = nb;
    double mean1 = *ma, mean2 = mb, q1 = *m2a, q2 = m2b;
    const uint64_t b1 = dr_f64_to_bits(mean1), b2 = dr_f64_to_bits(mean2);
    if (n2 > n1 || (n2 == n1 && (b2 < b1 || (b2 == b1 && dr_f64_to_bits(q2) < dr_f64_to_bits(q1))))) {
        const uint64_t tn = n1;
        const double tm = mean1, tq = q1;
        n1 = n2, mean1 = mean2, q1 = q2;
        n2 = tn, mean2 = tm, q2 = tq;
    }
    const uint64_t n = n1 + n2;
    const double delta = mean2 - mean1, w2 = (double)n2 / (double)n;
    *ma = mean1 + delta * w2;
    *m2a = (q1 + q2) + delta * delta * ((double)n1 * w2);
    *na = n;
}

DR_HD void dr_stats_identity(dr_acc_kind_t k, dr_stats_t *s)
{
    memset(s, 0, sizeof *s);
    if (k == DR_ACC_STATS_I64) {
        s->min.i64 = INT64_MAX;
        s->max.i64 = INT64_MIN;
    } else if (k == DR_ACC_STATS_U64) {
        s->min.u64 = UINT64_MAX;
        s->max.u64 = 0;
    } else {
        s->min.f64 = dr_bits_to_f64(0x7ff0000000000000ull);
        s->max.f64 = dr_bits_to_f64(0xfff0000000000000ull);
    }
}

/* *a = *a merged with *b (the exact sum of DR_ACC_STATS_EXACT is the caller's: dr_partial_combine). */
DR_HD void dr_stats_combine(dr_acc_kind_t k, dr_stats_t *a, const dr_stats_t *b)
{
    dr_stats_merge_moments(&a->count, &a->mean, &a->m2, b->count, b->mean, b->m2);
    if (k == DR_ACC_STATS_I64) {
        dr_i128_add(&a->sum.i128, b->sum.i128);
        a->min.i64 = dr_min_i64(a->min.i64, b->min.i64);
        a->max.i64 = dr_max_i64(a->max.i64, b->max.i64);
    } else if (k == DR_ACC_STATS_U64) {
        dr_i128_add(&a->sum.i128, b->sum.i128);
        a->min.u64 = dr_min_u64(a->min.u64, b->min.u64);
        a->max.u64 = dr_max_u64(a->max.u64, b->max.u64);
    } else {
        a->sum.f64 = a->sum.f64 + b->sum.f64;
        a->min.f64 = dr_min_select_f64(a->min.f64, b->min.f64);
        a->max.f64 = dr_max_select_f64(a->max.f64, b->max.f64);
    }
}

/* ---- NaN policy (dr_nan_policy_t) ----
 *
 * With DR_NAN_OMIT a NaN element of a float array is a missing value, as in NumPy's nan* functions. Those are
 * defined by replacement (numpy/lib/_nanfunctions_impl.py, _replace_nan): each NaN becomes a value and the plain
 * function reduces the result, np.nansum with 0, np.nanprod with 1, np.nanargmin with +inf and np.nanargmax with
 * -inf (so np.nanargmin([nan, inf]) is 0: the replaced element comes first). dreduce replaces in the element's load
 * path, the same value (dr_nan_fill), for sum (in every accumulator: +0.0 is an exact sum's term like any, and
 * nansum([-0.0, nan]) is +0.0 as NumPy's), prod, argmin and argmax, and for min and max their identities +inf and
 * -inf (np.nanmin/np.nanmax skip NaN). stats and the order statistics leave the element out altogether:
 * np.nanmean and np.nanvar divide by the count of the others, np.nanquantile takes the others. Every level counts
 * the NaN it left out, and the result says how many. An array of NaN only (every element left out) has no minimum,
 * maximum or extreme: np.nanmin gives NaN and warns, and so does dreduce; np.nanargmin raises, and dreduce's result
 * has no value. */
DR_HD double dr_nan_fill(dr_op_t op)
{
    const double inf = dr_bits_to_f64(0x7ff0000000000000ull);
    return op == DR_PROD ? 1.0 : op == DR_MIN || op == DR_ARGMIN ? inf : op == DR_MAX || op == DR_ARGMAX ? -inf : 0.0;
}

/* ---- Partials of any kind (dr_partial_t): what the CPU backend's threads, chunk folding and the MPI combine hold
 * and combine. An exact partial is always normalized between levels. ---- */
DR_HD void dr_partial_identity(dr_acc_kind_t k, dr_op_t op, dr_partial_t *p)
{
    memset(p, 0, sizeof *p);
    if (k >= DR_ACC_STATS_I64 && k <= DR_ACC_STATS_EXACT) dr_stats_identity(k == DR_ACC_STATS_EXACT ? DR_ACC_STATS_F64 : k, &p->stats);
    else if (k >= DR_ACC_ARG_I64 && k <= DR_ACC_ARG_F64) dr_arg_identity(k, op, &p->value.arg);
    else if (k != DR_ACC_EXACT) dr_acc_identity(k, op, &p->value);
}

DR_HD void dr_partial_combine(dr_acc_kind_t k, dr_op_t op, dr_partial_t *inout, const dr_partial_t *in)
{
    if (k == DR_ACC_EXACT) {
        dr_exact_combine(&inout->exact, &in->exact);
    } else if (k == DR_ACC_STATS_EXACT) {
        dr_stats_combine(DR_ACC_STATS_F64, &inout->stats_exact.stats, &in->stats_exact.stats);
        dr_exact_combine(&inout->stats_exact.sum, &in->stats_exact.sum);
    } else if (k >= DR_ACC_STATS_I64 && k <= DR_ACC_STATS_F64) {
        dr_stats_combine(k, &inout->stats, &in->stats);
    } else if (k >= DR_ACC_ARG_I64 && k <= DR_ACC_ARG_F64) {
        dr_arg_combine(k, op, &inout->value.arg, &in->value.arg);
    } else {
        dr_acc_combine(k, op, &inout->value, &in->value);
    }
}

/* The value a caller reads, of kind dr_acc_result_kind(k): an exact partial rounded once to float64; an arg partial
 * as it is; a float sum or product that is NaN as the canonical NaN, as every other float result's NaN already is
 * (min and max by their rules, argmin/argmax, stats, exact sums): which NaN an add or multiply keeps where it meets
 * two (an element's, or inf - inf's) depends on the order of its operands, so on the grouping, the backend and the
 * compiler. (Stats are read whole: dr_stats_result, src/common/stats.h.) */
DR_HD void dr_partial_result(dr_acc_kind_t k, const dr_partial_t *p, dr_value_t *out)
{
    /* The kind's own bytes, the rest of the union zero: beyond them a partial holds whatever the path that made it
     * left there (a host array's CPU, GPU and split paths differ), and a result is the same bits whichever ran. */
    memset(out, 0, sizeof *out);
    if (k == DR_ACC_EXACT) out->f64 = dr_exact_to_f64(&p->exact);
    else if (k == DR_ACC_ARG_I64 || k == DR_ACC_ARG_U64 || k == DR_ACC_ARG_F64) out->arg = p->value.arg;
    else if (k == DR_ACC_F32) out->f32 = p->value.f32 != p->value.f32 ? dr_bits_to_f32(0x7fffffffu) : p->value.f32;
    else if (k == DR_ACC_F64)
        out->f64 = p->value.f64 != p->value.f64 ? dr_bits_to_f64(0x7fffffffffffffffull) : p->value.f64;
    else if (k == DR_ACC_I32 || k == DR_ACC_U32) memcpy(out, &p->value, 4);
    else if (k == DR_ACC_I64 || k == DR_ACC_U64) memcpy(out, &p->value, 8);
    else *out = p->value; /* stats: dreduce_result_t.stats holds them (dr_stats_result) */
}

#endif
