#include "cpu_backend.h"

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "accum.h"
#include "cpu_lanes.h"
#include "table.h"
#include "parallel.h"

/* Input element types and their widening, by table token. */
typedef int32_t dr_in_INT32;
typedef int64_t dr_in_INT64;
typedef uint32_t dr_in_UINT32;
typedef uint64_t dr_in_UINT64;
typedef float dr_in_FLOAT32;
typedef double dr_in_FLOAT64;
typedef uint16_t dr_in_FLOAT16;
typedef uint16_t dr_in_BFLOAT16;
typedef int8_t dr_in_INT8;
typedef uint8_t dr_in_UINT8;
typedef int16_t dr_in_INT16;
typedef uint16_t dr_in_UINT16;
#define DR_WIDEN_INT32(x) (x)
#define DR_WIDEN_INT64(x) (x)
#define DR_WIDEN_UINT32(x) (x)
#define DR_WIDEN_UINT64(x) (x)
#define DR_WIDEN_FLOAT32(x) (x)
#define DR_WIDEN_FLOAT64(x) (x)
#define DR_WIDEN_FLOAT16(x) dr_f16_to_f32(x)
#define DR_WIDEN_BFLOAT16(x) dr_bf16_to_f32(x)
#define DR_WIDEN_INT8(x) (x)
#define DR_WIDEN_UINT8(x) (x)
#define DR_WIDEN_INT16(x) (x)
#define DR_WIDEN_UINT16(x) (x)
typedef int32_t dr_acc_I32;
typedef uint32_t dr_acc_U32;
typedef int64_t dr_acc_I64;
typedef uint64_t dr_acc_U64;
typedef float dr_acc_F32;
typedef double dr_acc_F64;

/* A slice: elements begin..end-1 of in into *out; base is the global index of in[0] (argmin/argmax report base + the
 * element's position in in; the other slices ignore it). */
typedef void (*slice_fn)(const void *in, size_t begin, size_t end, uint64_t base, dr_partial_t *out);

/* One slice loop per table row, at memory speed: DR_CPU_LANES independent accumulators (lane j takes the slice's
 * elements begin + j, begin + j + DR_CPU_LANES, ...), so the loop is not one chain of dependent adds, multiplies or
 * compares per thread but DR_CPU_LANES of them, and the fixed-width inner loop vectorizes (SLP). The lanes are then
 * folded as a tree (lane j with lane j + half, half = 4, 2, 1). Same slice, same order: deterministic for a given
 * thread count. Rounding depth of a slice of m elements: ceil(m / DR_CPU_LANES) + log2(DR_CPU_LANES). */
#define DR_CPU_LANES 8
#define DR_CPU_LANES_LOG2 3
_Static_assert(DR_CPU_LANES == 8, "cpu_lanes.c computes stats in 8 lanes: change both together");
#define X(DT, OP, op, ACC, acc)                                                                                \
    static void slice_##DT##_##OP##_##ACC(const void *in, size_t begin, size_t end, uint64_t base,            \
                                          dr_partial_t *out)                                                   \
    {                                                                                                          \
        (void)base;                                                                                            \
        const dr_in_##DT *p = in;                                                                              \
        dr_value_t id;                                                                                         \
        dr_acc_identity(DR_ACC_##ACC, DR_##OP, &id);                                                           \
        dr_acc_##ACC a[DR_CPU_LANES];                                                                          \
        for (int j = 0; j < DR_CPU_LANES; ++j) memcpy(&a[j], &id, sizeof a[j]);                                \
        size_t i = begin;                                                                                      \
        for (; end - i >= DR_CPU_LANES; i += DR_CPU_LANES)                                                     \
            for (int j = 0; j < DR_CPU_LANES; ++j)                                                             \
                a[j] = dr_##op##_##acc(a[j], (dr_acc_##ACC)DR_WIDEN_##DT(p[i + j]));                           \
        for (int j = 0; i < end; ++i, ++j) a[j] = dr_##op##_##acc(a[j], (dr_acc_##ACC)DR_WIDEN_##DT(p[i]));    \
        for (int half = DR_CPU_LANES / 2; half > 0; half /= 2)                                                 \
            for (int j = 0; j < half; ++j) a[j] = dr_##op##_##acc(a[j], a[j + half]);                          \
        memset(out, 0, sizeof out->value);                                                                     \
        memcpy(&out->value, &a[0], sizeof a[0]);                                                               \
    }
DR_REDUCTION_TABLE
#undef X

#if defined(__SSE2__)
/* float32 and float64 min and max on x86-64, four (two) elements to an SSE2 register. DR_MIN/DR_MAX's select chain
 * (accum.h: a NaN gives the canonical NaN, -0 is below +0) stays scalar in compilers and read float32 min at a fifth
 * of the sum's rate. The minimum of a set under those rules does not depend on the order it is taken in, so here the
 * lanes take the plain minimum (_mm_min_ps(x, a) is x < a ? x : a: a NaN never enters), and beside it whether a NaN
 * was seen (an unordered compare) and whether a -0 was (an element equal to 0 keeps its bits: a sign bit there is a
 * -0; for max, its bits with the sign flipped: a +0). At the end a NaN seen gives the canonical NaN, and a zero
 * result takes the sign the zeros seen call for: the same bits as the select chain. */
#define DR_SSE_MINMAX(NAME, T, V, W, SET1, ZERO, LOADU, MINMAX, CMPUNORD, CMPEQ, AND, OR, XOR, MOVEMASK, STOREU, \
                      CANON, PINF, IS_MAX, SIGN)                                                               \
    static void NAME(const void *in, size_t begin, size_t end, uint64_t base, dr_partial_t *out)              \
    {                                                                                                          \
        (void)base;                                                                                            \
        const T *p = (const T *)in;                                                                            \
        const T ident = IS_MAX ? -(PINF) : (PINF);                                                             \
        const V zero = ZERO(), sign = SET1((T)-0.0);                                                           \
        V m[4], nan[4], zs[4];                                                                                 \
        for (int r = 0; r < 4; ++r) m[r] = SET1(ident), nan[r] = zero, zs[r] = zero;                           \
        size_t i = begin;                                                                                      \
        for (; end - i >= 4 * (W); i += 4 * (W))                                                               \
            for (int r = 0; r < 4; ++r) {                                                                      \
                const V x = LOADU(p + i + (size_t)r * (W));                                                    \
                m[r] = MINMAX(x, m[r]);                                                                        \
                nan[r] = OR(nan[r], CMPUNORD(x, x));                                                           \
                zs[r] = OR(zs[r], AND(CMPEQ(x, zero), IS_MAX ? XOR(x, sign) : x));                             \
            }                                                                                                  \
        int any_nan = 0, zero_seen = 0; /* zero_seen: a -0 (min) or a +0 (max) */                              \
        T best = ident, lanes[W];                                                                              \
        for (int r = 0; r < 4; ++r) {                                                                          \
            any_nan |= MOVEMASK(nan[r]) != 0;                                                                  \
            zero_seen |= MOVEMASK(zs[r]) != 0;                                                                 \
            STOREU(lanes, m[r]);                                                                               \
            for (int j = 0; j < (W); ++j) best = IS_MAX ? (lanes[j] > best ? lanes[j] : best)                  \
                                                        : (lanes[j] < best ? lanes[j] : best);                 \
        }                                                                                                      \
        for (; i < end; ++i) {                                                                                 \
            const T x = p[i];                                                                                  \
            any_nan |= x != x;                                                                                 \
            if (x == 0) zero_seen |= IS_MAX ? !SIGN(x) : SIGN(x);                                              \
            best = IS_MAX ? (x > best ? x : best) : (x < best ? x : best);                                     \
        }                                                                                                      \
        if (any_nan) best = CANON;                                                                             \
        else if (best == 0) best = (IS_MAX ? zero_seen : !zero_seen) ? (T)0.0 : (T)-0.0;                       \
        memset(out, 0, sizeof out->value);                                                                     \
        memcpy(&out->value, &best, sizeof best);                                                               \
    }
DR_SSE_MINMAX(sse_min_f32, float, __m128, 4, _mm_set1_ps, _mm_setzero_ps, _mm_loadu_ps, _mm_min_ps, _mm_cmpunord_ps,
              _mm_cmpeq_ps, _mm_and_ps, _mm_or_ps, _mm_xor_ps, _mm_movemask_ps, _mm_storeu_ps,
              dr_bits_to_f32(0x7fffffffu), dr_bits_to_f32(0x7f800000u), 0, dr_signbit_f32)
DR_SSE_MINMAX(sse_max_f32, float, __m128, 4, _mm_set1_ps, _mm_setzero_ps, _mm_loadu_ps, _mm_max_ps, _mm_cmpunord_ps,
              _mm_cmpeq_ps, _mm_and_ps, _mm_or_ps, _mm_xor_ps, _mm_movemask_ps, _mm_storeu_ps,
              dr_bits_to_f32(0x7fffffffu), dr_bits_to_f32(0x7f800000u), 1, dr_signbit_f32)
DR_SSE_MINMAX(sse_min_f64, double, __m128d, 2, _mm_set1_pd, _mm_setzero_pd, _mm_loadu_pd, _mm_min_pd, _mm_cmpunord_pd,
              _mm_cmpeq_pd, _mm_and_pd, _mm_or_pd, _mm_xor_pd, _mm_movemask_pd, _mm_storeu_pd,
              dr_bits_to_f64(0x7fffffffffffffffull), dr_bits_to_f64(0x7ff0000000000000ull), 0, dr_signbit_f64)
DR_SSE_MINMAX(sse_max_f64, double, __m128d, 2, _mm_set1_pd, _mm_setzero_pd, _mm_loadu_pd, _mm_max_pd, _mm_cmpunord_pd,
              _mm_cmpeq_pd, _mm_and_pd, _mm_or_pd, _mm_xor_pd, _mm_movemask_pd, _mm_storeu_pd,
              dr_bits_to_f64(0x7fffffffffffffffull), dr_bits_to_f64(0x7ff0000000000000ull), 1, dr_signbit_f64)
#undef DR_SSE_MINMAX
#endif

/* ---- 16-bit floats: widened a block at a time ----
 *
 * float16 and bfloat16 are widened to float32 a block of DR_WIDEN_BLOCK elements at a time into a buffer in L1 (float16
 * by F16C where the CPU has it, cpu_lanes.c; bfloat16 by a shift, which compilers vectorize), and the block goes
 * through float32's loops: the same values as widening each element in the loop (dr_f16_to_f32, exact, a NaN the
 * canonical one), which left float16 sum at 3.6 GB/s and min at 2.0 on 2 EPYC cores. A sum or product keeps its lanes
 * across the blocks (DR_WIDEN_BLOCK is a multiple of DR_CPU_LANES): the bits of the element-wise loop, but for a NaN
 * result's sign and payload (where a lane meets two NaN, which one an add keeps follows the operand order the
 * compiler chose for either loop; the result a caller reads is the canonical NaN, dr_partial_result). Min and max
 * take each block's extreme by the SSE2 loop above and combine the blocks by the rules, which give the extreme of a
 * set whatever its grouping. */
#define DR_WIDEN_BLOCK 1024
_Static_assert(DR_WIDEN_BLOCK % DR_CPU_LANES == 0, "a block must end on a lane boundary");
static const float *widen_f16_block(const uint16_t *p, size_t m, float *buf)
{
    dr_cpu_lanes()->widen_f16_f32(p, m, buf); /* F16C where the CPU has it: the same bits */
    return buf;
}
static const float *widen_bf16_block(const uint16_t *p, size_t m, float *buf)
{
    for (size_t i = 0; i < m; ++i) buf[i] = dr_bf16_to_f32(p[i]);
    return buf;
}
#define DR_WIDEN_BLOCK_FLOAT16 widen_f16_block
#define DR_WIDEN_BLOCK_BFLOAT16 widen_bf16_block
#define DR_WIDENED_SLICE(DT, OP, op, ACC, acc)                                                                 \
    static void widened_##DT##_##OP##_##ACC(const void *in, size_t begin, size_t end, uint64_t base,          \
                                            dr_partial_t *out)                                                 \
    {                                                                                                          \
        (void)base;                                                                                            \
        const uint16_t *p = in;                                                                                \
        float buf[DR_WIDEN_BLOCK];                                                                             \
        dr_value_t id;                                                                                         \
        dr_acc_identity(DR_ACC_##ACC, DR_##OP, &id);                                                           \
        dr_acc_##ACC a[DR_CPU_LANES];                                                                          \
        for (int j = 0; j < DR_CPU_LANES; ++j) memcpy(&a[j], &id, sizeof a[j]);                                \
        for (size_t b0 = begin; b0 < end; b0 += DR_WIDEN_BLOCK) {                                              \
            const size_t m = end - b0 < DR_WIDEN_BLOCK ? end - b0 : DR_WIDEN_BLOCK;                            \
            const float *x = DR_WIDEN_BLOCK_##DT(p + b0, m, buf);                                              \
            size_t i = 0;                                                                                      \
            for (; m - i >= DR_CPU_LANES; i += DR_CPU_LANES)                                                   \
                for (int j = 0; j < DR_CPU_LANES; ++j) a[j] = dr_##op##_##acc(a[j], (dr_acc_##ACC)x[i + j]);   \
            for (int j = 0; i < m; ++i, ++j) a[j] = dr_##op##_##acc(a[j], (dr_acc_##ACC)x[i]); /* the last */  \
        }                                                                                                      \
        for (int half = DR_CPU_LANES / 2; half > 0; half /= 2)                                                 \
            for (int j = 0; j < half; ++j) a[j] = dr_##op##_##acc(a[j], a[j + half]);                          \
        memset(out, 0, sizeof out->value);                                                                     \
        memcpy(&out->value, &a[0], sizeof a[0]);                                                               \
    }
DR_WIDENED_SLICE(FLOAT16, SUM, sum, F64, f64)
DR_WIDENED_SLICE(FLOAT16, SUM, sum, F32, f32)
DR_WIDENED_SLICE(FLOAT16, PROD, prod, F64, f64)
DR_WIDENED_SLICE(FLOAT16, PROD, prod, F32, f32)
DR_WIDENED_SLICE(BFLOAT16, SUM, sum, F64, f64)
DR_WIDENED_SLICE(BFLOAT16, SUM, sum, F32, f32)
DR_WIDENED_SLICE(BFLOAT16, PROD, prod, F64, f64)
DR_WIDENED_SLICE(BFLOAT16, PROD, prod, F32, f32)
#undef DR_WIDENED_SLICE
#if defined(__SSE2__)
#define DR_WIDENED_EXTREME(DT, OP, SSE)                                                                        \
    static void widened_##DT##_##OP(const void *in, size_t begin, size_t end, uint64_t base, dr_partial_t *out) \
    {                                                                                                          \
        (void)base;                                                                                            \
        const uint16_t *p = in;                                                                                \
        float buf[DR_WIDEN_BLOCK];                                                                             \
        dr_partial_identity(DR_ACC_F32, DR_##OP, out);                                                         \
        for (size_t b0 = begin; b0 < end; b0 += DR_WIDEN_BLOCK) {                                              \
            const size_t m = end - b0 < DR_WIDEN_BLOCK ? end - b0 : DR_WIDEN_BLOCK;                            \
            dr_partial_t block;                                                                                \
            SSE(DR_WIDEN_BLOCK_##DT(p + b0, m, buf), 0, m, 0, &block);                                         \
            dr_partial_combine(DR_ACC_F32, DR_##OP, out, &block);                                              \
        }                                                                                                      \
    }
DR_WIDENED_EXTREME(FLOAT16, MIN, sse_min_f32)
DR_WIDENED_EXTREME(FLOAT16, MAX, sse_max_f32)
DR_WIDENED_EXTREME(BFLOAT16, MIN, sse_min_f32)
DR_WIDENED_EXTREME(BFLOAT16, MAX, sse_max_f32)
#undef DR_WIDENED_EXTREME
#endif

/* Exact sums, by binade. An element of sign s, biased exponent e and significand m (the implicit one included; a
 * subnormal has e = 0, and its unit is binade 1's) is (-1)^s m 2^(max(e, 1) - bias - frac): so the slice adds m into
 * an int64 bin indexed by its sign and exponent bits together (the bits shifted right by the fraction's width), and
 * the bins go into the dr_exact_t (dr_exact_add_scaled), each binade's positive bin less its negative one, once per
 * DR_EXACT_ADDS elements. An element costs a few integer operations and an add to a bin in the L1 cache, where
 * splitting each into the dr_exact_t's digits waited, every element, on the store of the one before to the same
 * word. Element i goes into bin set i mod lanes, so that neighbours of one binade are not one
 * chain of stores. float64's 53-bit significand is split into a high part of 27 bits and a low one of 26, each with
 * its bins, so a bin stays below 2^(27 + 30) over 2^30 elements (the float32 family's below 2^(24 + 30)). Infinities
 * and NaNs (every exponent bit set) take the implicit one too, so their bins are nonzero exactly when a chunk had
 * any, and the chunk is then scanned again for their flags. Any order gives the same integer, so the same bits as
 * adding each element to the dr_exact_t. */
#define DR_BITS_FLOAT32(p, i) dr_f32_to_bits(((const float *)(p))[i])
#define DR_BITS_FLOAT64(p, i) dr_f64_to_bits(((const double *)(p))[i])
#define DR_BITS_FLOAT16(p, i) ((uint32_t)((const uint16_t *)(p))[i])
#define DR_BITS_BFLOAT16(p, i) ((uint32_t)((const uint16_t *)(p))[i])
/* One element, its bits b, into bin set l. */
#define DR_EXACT_BIN_ADD(b, l)                                                                                 \
    do {                                                                                                       \
        const unsigned idx = (unsigned)((b) >> kFB);                                                           \
        const bits_t m = ((b) & kFrac) | (bits_t)((idx & kInf) != 0) << kFB;                                   \
        nonneg0 |= (b) ^ kSign;                                                                                \
        if (kSplit) {                                                                                          \
            lo_bins[l][idx] += (int64_t)(m & kLowMask);                                                        \
            hi_bins[l][kSplit ? idx : 0] += (int64_t)(m >> kSplit);                                            \
        } else {                                                                                               \
            lo_bins[l][idx] += (int64_t)m;                                                                     \
        }                                                                                                      \
    } while (0)
/* DT: the table token; UT: its bits' type; EB, FB: exponent and fraction bits; P0: 1074 - bias - FB, binade 1's
 * unit in units of 2^-1074; SPLIT: where float64's significand is split (0: not split); LANES: bin sets. */
#define DR_EXACT_BIN_SLICE(DT, UT, EB, FB, P0, SPLIT, LANES)                                                  \
    static void slice_##DT##_SUM_EXACT(const void *in, size_t begin, size_t end, uint64_t base,               \
                                       dr_partial_t *out)                                                      \
    {                                                                                                          \
        (void)base;                                                                                            \
        typedef UT bits_t;                                                                                     \
        enum { kFB = FB, kBinades = 1 << EB, kInf = kBinades - 1, kSplit = SPLIT, kLanes = LANES };            \
        enum { kHi = SPLIT ? 2 * kBinades : 1 };                                                               \
        const UT kFrac = ((UT)1 << FB) - 1, kSign = (UT)1 << (EB + FB), kLowMask = ((UT)1 << SPLIT) - 1;       \
        int64_t lo_bins[kLanes][2 * kBinades], hi_bins[kLanes][kHi]; /* [sign and exponent] */                \
        dr_exact_t *a = &out->exact;                                                                           \
        dr_exact_zero(a);                                                                                      \
        for (size_t i = begin; i < end;) {                                                                     \
            const size_t first = i, stop = end - i > DR_EXACT_ADDS ? i + DR_EXACT_ADDS : end;                  \
            memset(lo_bins, 0, sizeof lo_bins);                                                                \
            memset(hi_bins, 0, sizeof hi_bins);                                                                \
            UT nonneg0 = 0;                                                                                    \
            for (; stop - i >= kLanes; i += kLanes)                                                            \
                for (int l = 0; l < kLanes; ++l) {                                                             \
                    const UT b = DR_BITS_##DT(in, i + (size_t)l);                                              \
                    DR_EXACT_BIN_ADD(b, l);                                                                    \
                }                                                                                              \
            for (int l = 0; i < stop; ++i, ++l) {                                                              \
                const UT b = DR_BITS_##DT(in, i);                                                              \
                DR_EXACT_BIN_ADD(b, l);                                                                        \
            }                                                                                                  \
            int64_t special = 0;                                                                               \
            for (unsigned e = 0; e <= kInf; ++e) {                                                             \
                int64_t lo = 0, hi = 0;                                                                        \
                for (int l = 0; l < kLanes; ++l) {                                                             \
                    lo += lo_bins[l][e] - lo_bins[l][e + kBinades];                                            \
                    if (kSplit) hi += hi_bins[l][kSplit ? e : 0] - hi_bins[l][kSplit ? e + kBinades : 0];      \
                    if (e == kInf) /* float64's implicit one is in its high part */                            \
                        special |= lo_bins[l][e] | lo_bins[l][e + kBinades] |                                  \
                                   (kSplit ? hi_bins[l][kSplit ? e : 0] | hi_bins[l][kSplit ? e + kBinades : 0] : 0); \
                }                                                                                              \
                if (e == kInf) break;                                                                          \
                const int p = (int)(e ? e : 1) + P0;                                                           \
                if (lo) dr_exact_add_scaled(a, lo, p);                                                         \
                if (hi) dr_exact_add_scaled(a, hi, p + kSplit);                                                \
            }                                                                                                  \
            a->flags |= DR_EXACT_TERM | (nonneg0 ? DR_EXACT_NOT_NEG_ZERO : 0u);                                \
            if (special)                                                                                       \
                for (size_t j = first; j < stop; ++j) {                                                        \
                    const UT b = DR_BITS_##DT(in, j);                                                          \
                    if (((b >> FB) & kInf) == kInf)                                                            \
                        a->flags |= (b & kFrac)   ? DR_EXACT_NAN                                               \
                                    : (b & kSign) ? DR_EXACT_NEG_INF                                           \
                                                  : DR_EXACT_POS_INF;                                          \
                }                                                                                              \
            dr_exact_normalize(a);                                                                             \
        }                                                                                                      \
    }
DR_EXACT_BIN_SLICE(FLOAT32, uint32_t, 8, 23, 924, 0, 4)
DR_EXACT_BIN_SLICE(FLOAT16, uint32_t, 5, 10, 1049, 0, 4)
DR_EXACT_BIN_SLICE(BFLOAT16, uint32_t, 8, 7, 940, 0, 4)
DR_EXACT_BIN_SLICE(FLOAT64, uint64_t, 11, 52, -1, 26, 2)
#undef DR_EXACT_BIN_SLICE
#undef DR_EXACT_BIN_ADD

/* ---- argmin / argmax (DR_ARG_TABLE; accum.h, "argmin / argmax") ----
 *
 * A slice goes through its elements DR_ARG_BLOCK at a time (in L1): first the block's extreme value alone, in
 * DR_CPU_LANES lanes of compare-and-select (no index to carry, so the loop vectorizes like min/max) and whether it
 * holds a NaN; only when that beats the slice's best so far (strictly further in the op's direction, or a NaN where
 * the best is a number) is the block scanned again, from its start, for the first element equal to it (or the first
 * NaN). A value equal to the best is no improvement: the best stays at its lower index; -0 and +0 compare equal, so
 * the first zero of either sign wins, with its own sign. Elements compare in their own type (16-bit floats widened
 * exactly to float32); the result is the element's value widened to the kind's 64-bit scalar (a NaN the canonical
 * one) at base + its position. Each slice's best is the first occurrence in its range, and dr_partial_combine picks
 * the lower index among equals: the same element for any thread count. */
#define DR_ARG_BLOCK 1024
typedef int32_t dr_cmp_INT32;
typedef int64_t dr_cmp_INT64;
typedef uint32_t dr_cmp_UINT32;
typedef uint64_t dr_cmp_UINT64;
typedef float dr_cmp_FLOAT32;
typedef double dr_cmp_FLOAT64;
typedef float dr_cmp_FLOAT16;
typedef float dr_cmp_BFLOAT16;
typedef int8_t dr_cmp_INT8;
typedef uint8_t dr_cmp_UINT8;
typedef int16_t dr_cmp_INT16;
typedef uint16_t dr_cmp_UINT16;
#define DR_IS_FLOAT_INT32 0
#define DR_IS_FLOAT_INT64 0
#define DR_IS_FLOAT_UINT32 0
#define DR_IS_FLOAT_UINT64 0
#define DR_IS_FLOAT_FLOAT32 1
#define DR_IS_FLOAT_FLOAT64 1
#define DR_IS_FLOAT_FLOAT16 1
#define DR_IS_FLOAT_BFLOAT16 1
#define DR_IS_FLOAT_INT8 0
#define DR_IS_FLOAT_UINT8 0
#define DR_IS_FLOAT_INT16 0
#define DR_IS_FLOAT_UINT16 0

/* The block p[0..m) as its compare type: the elements themselves, or the 16-bit floats widened into buf. */
#define DR_VIEW_INT32(p, m, buf) (p)
#define DR_VIEW_INT64(p, m, buf) (p)
#define DR_VIEW_UINT32(p, m, buf) (p)
#define DR_VIEW_UINT64(p, m, buf) (p)
#define DR_VIEW_FLOAT32(p, m, buf) (p)
#define DR_VIEW_FLOAT64(p, m, buf) (p)
#define DR_VIEW_FLOAT16(p, m, buf) widen_f16_block(p, m, buf)
#define DR_VIEW_BFLOAT16(p, m, buf) widen_bf16_block(p, m, buf)
#define DR_VIEW_INT8(p, m, buf) (p)
#define DR_VIEW_UINT8(p, m, buf) (p)
#define DR_VIEW_INT16(p, m, buf) (p)
#define DR_VIEW_UINT16(p, m, buf) (p)
/* A float block's extreme value by plain compares (*e; which zero, where the extreme is one, does not matter: the
 * slice then looks for the first element equal to it) and whether it holds a NaN, four (two) elements to an SSE2
 * register on x86-64: compilers keep the lanes' `v < l ? v : l` scalar, and _mm_min_ps(v, l) is exactly it. */
#if defined(__SSE2__)
#define DR_ARG_EXTREME(NAME, T, V, W, SET1, LOADU, MIN, MAX, CMPUNORD, OR, SETZERO, MOVEMASK, STOREU)             \
    static void NAME(const T *x, size_t m, int is_max, T *e, int *any_nan)                                     \
    {                                                                                                          \
        V l[4], nan[4];                                                                                        \
        for (int r = 0; r < 4; ++r) l[r] = SET1(x[0]), nan[r] = SETZERO();                                     \
        size_t i = 0;                                                                                          \
        if (is_max)                                                                                            \
            for (; m - i >= 4 * (W); i += 4 * (W))                                                             \
                for (int r = 0; r < 4; ++r) {                                                                  \
                    const V v = LOADU(x + i + (size_t)r * (W));                                                \
                    l[r] = MAX(v, l[r]);                                                                       \
                    nan[r] = OR(nan[r], CMPUNORD(v, v));                                                       \
                }                                                                                              \
        else                                                                                                   \
            for (; m - i >= 4 * (W); i += 4 * (W))                                                             \
                for (int r = 0; r < 4; ++r) {                                                                  \
                    const V v = LOADU(x + i + (size_t)r * (W));                                                \
                    l[r] = MIN(v, l[r]);                                                                       \
                    nan[r] = OR(nan[r], CMPUNORD(v, v));                                                       \
                }                                                                                              \
        T best = x[0], lanes[W];                                                                               \
        int seen = 0;                                                                                          \
        for (int r = 0; r < 4; ++r) {                                                                          \
            seen |= MOVEMASK(nan[r]) != 0;                                                                     \
            STOREU(lanes, l[r]);                                                                               \
            for (int j = 0; j < (W); ++j) best = (is_max ? lanes[j] > best : lanes[j] < best) ? lanes[j] : best; \
        }                                                                                                      \
        for (; i < m; ++i) {                                                                                   \
            best = (is_max ? x[i] > best : x[i] < best) ? x[i] : best;                                         \
            seen |= x[i] != x[i];                                                                              \
        }                                                                                                      \
        *e = best;                                                                                             \
        *any_nan = seen;                                                                                       \
    }
DR_ARG_EXTREME(arg_extreme_f32, float, __m128, 4, _mm_set1_ps, _mm_loadu_ps, _mm_min_ps, _mm_max_ps, _mm_cmpunord_ps,
               _mm_or_ps, _mm_setzero_ps, _mm_movemask_ps, _mm_storeu_ps)
DR_ARG_EXTREME(arg_extreme_f64, double, __m128d, 2, _mm_set1_pd, _mm_loadu_pd, _mm_min_pd, _mm_max_pd,
               _mm_cmpunord_pd, _mm_or_pd, _mm_setzero_pd, _mm_movemask_pd, _mm_storeu_pd)
#undef DR_ARG_EXTREME
#define DR_ARG_SSE_FLOAT32(x, m, is_max, e, nan) (arg_extreme_f32(x, m, is_max, e, nan), 1)
#define DR_ARG_SSE_FLOAT16(x, m, is_max, e, nan) (arg_extreme_f32(x, m, is_max, e, nan), 1)
#define DR_ARG_SSE_BFLOAT16(x, m, is_max, e, nan) (arg_extreme_f32(x, m, is_max, e, nan), 1)
#define DR_ARG_SSE_FLOAT64(x, m, is_max, e, nan) (arg_extreme_f64(x, m, is_max, e, nan), 1)
#else
#define DR_ARG_SSE_FLOAT32(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_FLOAT16(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_BFLOAT16(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_FLOAT64(x, m, is_max, e, nan) 0
#endif
/* The integer types take the portable lanes (DR_ARG_SLICE). */
#define DR_ARG_SSE_INT32(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_INT64(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_UINT32(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_UINT64(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_INT8(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_UINT8(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_INT16(x, m, is_max, e, nan) 0
#define DR_ARG_SSE_UINT16(x, m, is_max, e, nan) 0

/* The best element's value as the arg kind's scalar. */
#define DR_ARG_STORE_ARG_I64(a, v) ((a)->value.i64 = (int64_t)(v))
#define DR_ARG_STORE_ARG_U64(a, v) ((a)->value.u64 = (uint64_t)(v))
#define DR_ARG_STORE_ARG_F64(a, v) ((a)->value.f64 = dr_arg_canon_f64((double)(v)))

#define DR_ARG_SLICE(DT, OP, ACC)                                                                              \
    static void slice_##DT##_##OP##_##ACC(const void *in, size_t begin, size_t end, uint64_t base,            \
                                          dr_partial_t *out)                                                   \
    {                                                                                                          \
        typedef dr_cmp_##DT T;                                                                                 \
        enum { kMax = DR_##OP == DR_ARGMAX, kFloat = DR_IS_FLOAT_##DT };                                       \
        const dr_in_##DT *p = in;                                                                              \
        T buf[DR_ARG_BLOCK];                                                                                   \
        (void)buf;                                                                                             \
        memset(out, 0, sizeof out->value);                                                                     \
        dr_arg_identity(DR_ACC_##ACC, DR_##OP, &out->value.arg);                                               \
        if (begin >= end) return;                                                                              \
        T best = (T)DR_WIDEN_##DT(p[begin]);                                                                   \
        size_t at = begin;                                                                                     \
        int best_nan = kFloat && best != best;                                                                 \
        for (size_t b0 = begin; b0 < end && !best_nan; b0 += DR_ARG_BLOCK) {                                   \
            const size_t m = end - b0 < DR_ARG_BLOCK ? end - b0 : DR_ARG_BLOCK;                                \
            const T *x = DR_VIEW_##DT(p + b0, m, buf);                                                         \
            int any_nan = 0;                                                                                   \
            T e = x[0];                                                                                        \
            if (!DR_ARG_SSE_##DT(x, m, kMax, &e, &any_nan)) {                                                  \
                T l[DR_CPU_LANES];                                                                             \
                int nan[DR_CPU_LANES];                                                                         \
                for (int j = 0; j < DR_CPU_LANES; ++j) l[j] = x[0], nan[j] = 0;                                \
                size_t i = 0;                                                                                  \
                for (; m - i >= DR_CPU_LANES; i += DR_CPU_LANES)                                               \
                    for (int j = 0; j < DR_CPU_LANES; ++j) {                                                   \
                        const T v = x[i + j];                                                                  \
                        l[j] = (kMax ? v > l[j] : v < l[j]) ? v : l[j];                                        \
                        if (kFloat) nan[j] |= v != v;                                                          \
                    }                                                                                          \
                for (int j = 0; i < m; ++i, ++j) {                                                             \
                    const T v = x[i];                                                                          \
                    l[j] = (kMax ? v > l[j] : v < l[j]) ? v : l[j];                                            \
                    if (kFloat) nan[j] |= v != v;                                                              \
                }                                                                                              \
                e = l[0];                                                                                      \
                for (int j = 0; j < DR_CPU_LANES; ++j) {                                                       \
                    e = (kMax ? l[j] > e : l[j] < e) ? l[j] : e;                                               \
                    any_nan |= nan[j];                                                                         \
                }                                                                                              \
            }                                                                                                  \
            if (kFloat && any_nan) { /* the block's first NaN beats every number */                            \
                size_t k = 0;                                                                                  \
                while (x[k] == x[k]) ++k;                                                                      \
                best = x[k], at = b0 + k, best_nan = 1;                                                        \
            } else if (kMax ? e > best : e < best) {                                                           \
                size_t k = 0;                                                                                  \
                while (!(x[k] == e)) ++k;                                                                      \
                best = x[k], at = b0 + k;                                                                      \
            }                                                                                                  \
        }                                                                                                      \
        DR_ARG_STORE_##ACC(&out->value.arg, best);                                                             \
        out->value.arg.index = base + at;                                                                      \
    }
#define X(DT, OP, op, ACC, acc) DR_ARG_SLICE(DT, OP, ACC)
DR_ARG_TABLE
#undef X
#undef DR_ARG_SLICE

/* ---- Statistics (DR_STATS_TABLE, DR_STATS_EXACT_TABLE; accum.h, "Statistics") ----
 *
 * A slice takes its elements DR_STATS_BLOCK at a time, in two passes over the block (in L1): first its sum, min
 * and max in DR_CPU_LANES lanes folded as a tree (the sum exactly for integers: in 64-bit lanes, a 64-bit type's
 * elements split into their high and low 32 bits, then 128 bits; floats in float64), then its m2 about its mean
 * (sum / k, in float64) in lanes and a tree (cpu_lanes.c: the same bits at every vector width); the block (k, mean, m2) then merges into the slice's
 * running moments with Chan's update (dr_stats_merge_moments), its sum into the slice's (a float64 add, or exact),
 * its min and max with DR_MIN/DR_MAX's rules in the kind's scalar (floats: dr_min_select_f64 / dr_max_select_f64 of
 * the widened values; NaN canonical, -0 below +0). Rounding depth of a slice of m elements, for the sum and for the
 * chain of merges alike: ceil(m / DR_STATS_BLOCK) (one merge and one add per block) + DR_STATS_BLOCK / DR_CPU_LANES +
 * log2(DR_CPU_LANES) (a block's lanes and tree). */
#define DR_STATS_BLOCK 256
#define DR_IS64_INT32 0
#define DR_IS64_INT64 1
#define DR_IS64_UINT32 0
#define DR_IS64_UINT64 1
#define DR_IS64_INT8 0
#define DR_IS64_UINT8 0
#define DR_IS64_INT16 0
#define DR_IS64_UINT16 0

/* DR_CPU_LANES lanes of OP over v[0..k) into acc[0] (acc[] starts at the identity), then the lanes' tree. */
#define DR_LANES_FOLD(acc, v, k, OP)                                                                           \
    do {                                                                                                       \
        size_t i_ = 0;                                                                                         \
        for (; (k) - i_ >= DR_CPU_LANES; i_ += DR_CPU_LANES)                                                   \
            for (int j_ = 0; j_ < DR_CPU_LANES; ++j_) acc[j_] = OP(acc[j_], (v)[i_ + j_]);                     \
        for (int j_ = 0; i_ < (k); ++i_, ++j_) acc[j_] = OP(acc[j_], (v)[i_]);                                 \
        for (int h_ = DR_CPU_LANES / 2; h_ > 0; h_ /= 2)                                                       \
            for (int j_ = 0; j_ < h_; ++j_) acc[j_] = OP(acc[j_], acc[j_ + h_]);                               \
    } while (0)
#define DR_OP_ADD(a, x) ((a) + (x))
#define DR_OP_LT(a, x) ((x) < (a) ? (x) : (a))
#define DR_OP_GT(a, x) ((x) > (a) ? (x) : (a))

/* Floats: two loops over the block in L1 (cpu_lanes.c, the widest version the CPU runs; float32 widened in the
 * registers, float16 and bfloat16 widened into a buffer first): the sum, min and max by plain compares (right
 * whenever the block holds no NaN and its extremes are not zeros), then m2. A block whose sum is NaN (a NaN, or infinities of both
 * signs) takes min and max again by the rules (dr_min_select_f64 / dr_max_select_f64: the canonical NaN, -0 below
 * +0). A zero extreme (common: data that start at 0) needs only the sign bits, read in place: a block whose minimum
 * is a zero has no element below it, so its elements with the sign bit are exactly its -0s (the minimum is -0 where
 * any element has it); a block whose maximum is a zero, likewise, has a +0 where any element lacks it. */
#define DR_SIGN_BITS(T, BITS, x, k, any, all)                                                                  \
    do {                                                                                                       \
        BITS or_ = 0, and_ = (BITS)~(BITS)0;                                                                   \
        for (size_t i_ = 0; i_ < (k); ++i_) {                                                                  \
            BITS b_;                                                                                           \
            memcpy(&b_, &(x)[i_], sizeof b_);                                                                  \
            or_ |= b_, and_ &= b_;                                                                             \
        }                                                                                                      \
        (any) = (int)(or_ >> (8 * sizeof(BITS) - 1)), (all) = (int)(and_ >> (8 * sizeof(BITS) - 1));            \
    } while (0)
#define DR_FIX_ZERO_EXTREMES(T, BITS, x, k, lo, hi)                                                            \
    do {                                                                                                       \
        int any_, all_;                                                                                        \
        DR_SIGN_BITS(T, BITS, x, k, any_, all_);                                                               \
        if (*(lo) == 0) *(lo) = any_ ? -0.0 : 0.0;                                                             \
        if (*(hi) == 0) *(hi) = all_ ? -0.0 : 0.0;                                                             \
    } while (0)

/* A NaN sum: a NaN in the block, and then its min and max are the rules' canonical NaN; or infinities of both
 * signs and no NaN, and then the plain compares were right (their extremes are -inf and +inf, not zeros). Data with
 * NaN spread through them (missing values kept) take this in most blocks, so the test is a loop compilers vectorize,
 * not the rules' chain. */
#define DR_NAN_SUM_EXTREMES(x, k, lo, hi)                                                                      \
    do {                                                                                                       \
        int nan_ = 0;                                                                                          \
        for (size_t i_ = 0; i_ < (k); ++i_) nan_ |= (x)[i_] != (x)[i_];                                        \
        if (nan_) *(lo) = *(hi) = dr_bits_to_f64(0x7fffffffffffffffull);                                       \
    } while (0)

static void stats_merge_block(dr_stats_t *s, size_t k, double sum, double lo, double hi, double mean, double m2)
{
    s->sum.f64 += sum;
    s->min.f64 = dr_min_select_f64(s->min.f64, lo);
    s->max.f64 = dr_max_select_f64(s->max.f64, hi);
    dr_stats_merge_moments(&s->count, &s->mean, &s->m2, (uint64_t)k, mean, m2);
}

static void stats_fix_f64(const double *x, size_t k, double sum, double *lo, double *hi)
{
    if (sum != sum) DR_NAN_SUM_EXTREMES(x, k, lo, hi);
    else if (*lo == 0 || *hi == 0) DR_FIX_ZERO_EXTREMES(double, uint64_t, x, k, lo, hi);
}

/* float32 is read in place, widened in the registers (widening each block into a buffer first, as the 16-bit floats
 * are: 21.4 against 26.0 GB/s on 2 cores with AVX). */
static void stats_fix_f32(const float *x, size_t k, double sum, double *lo, double *hi)
{
    if (sum != sum) {
        DR_NAN_SUM_EXTREMES(x, k, lo, hi);
    } else if (*lo == 0 || *hi == 0) {
        DR_FIX_ZERO_EXTREMES(float, uint32_t, x, k, lo, hi);
    }
}

/* A block of the input as the lanes read it: float64 and float32 in place, the 16-bit floats widened into buf. */
static const double *stats_view_f64(const double *p, size_t k, double *buf)
{
    (void)k, (void)buf;
    return p;
}
static const float *stats_view_f32(const float *p, size_t k, double *buf)
{
    (void)k, (void)buf;
    return p;
}
static const double *stats_view_f16(const uint16_t *p, size_t k, double *buf)
{
    dr_cpu_lanes()->widen_f16_f64(p, k, buf);
    return buf;
}
static const double *stats_view_bf16(const uint16_t *p, size_t k, double *buf)
{
    for (size_t i = 0; i < k; ++i) buf[i] = (double)dr_bf16_to_f32(p[i]);
    return buf;
}

/* The slice's blocks in a pipeline: each call to the lanes takes one block's m2 and the next block's sum, min and
 * max together (m2_smm), so the core is never waiting on one block's chain of adds alone. IN the input's element,
 * LT the lanes' (float or double), SUF the lanes' functions, VIEW and FIX above. A 16-bit block is widened into one
 * of two buffers, the other holding the block whose m2 is still to come. */
#define DR_STATS_PIPELINE(DT, IN, LT, SUF, VIEW, FIX)                                                          \
    static void slice_##DT##_STATS_STATS_F64(const void *in, size_t begin, size_t end, uint64_t base,         \
                                             dr_partial_t *out)                                                \
    {                                                                                                          \
        (void)base;                                                                                            \
        const IN *p = in;                                                                                      \
        const dr_cpu_lanes_t *lanes = dr_cpu_lanes();                                                          \
        dr_stats_t *s = &out->stats;                                                                           \
        dr_stats_identity(DR_ACC_STATS_F64, s);                                                                \
        if (begin >= end) return;                                                                              \
        double buf[2][DR_STATS_BLOCK];                                                                         \
        int w = 0;                                                                                             \
        size_t b0 = begin, k = end - b0 < DR_STATS_BLOCK ? end - b0 : DR_STATS_BLOCK;                          \
        const LT *x = VIEW(p + b0, k, buf[w]);                                                                 \
        double sum, lo, hi;                                                                                    \
        lanes->sum_min_max_##SUF(x, k, &sum, &lo, &hi);                                                        \
        for (;;) {                                                                                             \
            FIX(x, k, sum, &lo, &hi);                                                                          \
            const double mean = sum / (double)k;                                                               \
            const size_t b1 = b0 + k;                                                                          \
            if (b1 == end) {                                                                                   \
                stats_merge_block(s, k, sum, lo, hi, mean, lanes->m2_##SUF(x, k, mean));                       \
                return;                                                                                        \
            }                                                                                                  \
            const size_t k1 = end - b1 < DR_STATS_BLOCK ? end - b1 : DR_STATS_BLOCK;                           \
            const LT *x1 = VIEW(p + b1, k1, buf[!w]);                                                          \
            double sum1, lo1, hi1;                                                                             \
            const double m2 = lanes->m2_smm_##SUF(x, k, mean, x1, k1, &sum1, &lo1, &hi1);                      \
            stats_merge_block(s, k, sum, lo, hi, mean, m2);                                                    \
            b0 = b1, k = k1, x = x1, w = !w, sum = sum1, lo = lo1, hi = hi1;                                   \
        }                                                                                                      \
    }
#define DR_STATS_SLICE_STATS_F64(DT) DR_STATS_SLICE_F64_##DT
#define DR_STATS_SLICE_F64_FLOAT64 DR_STATS_PIPELINE(FLOAT64, double, double, f64, stats_view_f64, stats_fix_f64)
#define DR_STATS_SLICE_F64_FLOAT32 DR_STATS_PIPELINE(FLOAT32, float, float, f32, stats_view_f32, stats_fix_f32)
#define DR_STATS_SLICE_F64_FLOAT16 DR_STATS_PIPELINE(FLOAT16, uint16_t, double, f64, stats_view_f16, stats_fix_f64)
#define DR_STATS_SLICE_F64_BFLOAT16 DR_STATS_PIPELINE(BFLOAT16, uint16_t, double, f64, stats_view_bf16, stats_fix_f64)

/* Integers: SUM_T the lanes' exact sums (int64_t or uint64_t), F the kind's scalar field. A 64-bit type's block sum
 * is its high halves' sum times 2^32 plus its low halves' (each below 2^38 over 64 elements). */
#define DR_HI32(x) ((x) >> 32) /* arithmetic for int64 */
#define DR_LO32(x) ((uint64_t)(x) & 0xffffffffu)
#define DR_STATS_SLICE_INT(DT, ACC, SUM_T, F, OF)                                                              \
    static void slice_##DT##_STATS_##ACC(const void *in, size_t begin, size_t end, uint64_t base,             \
                                         dr_partial_t *out)                                                    \
    {                                                                                                          \
        (void)base;                                                                                            \
        typedef dr_in_##DT T;                                                                                  \
        const T *p = in;                                                                                       \
        dr_stats_t *s = &out->stats;                                                                           \
        dr_stats_identity(DR_ACC_##ACC, s);                                                                    \
        const dr_cpu_lanes_t *lanes = dr_cpu_lanes();                                                          \
        double xb[DR_STATS_BLOCK];                                                                             \
        SUM_T wb[DR_STATS_BLOCK];                                                                              \
        for (size_t b0 = begin; b0 < end; b0 += DR_STATS_BLOCK) {                                              \
            const size_t k = end - b0 < DR_STATS_BLOCK ? end - b0 : DR_STATS_BLOCK;                            \
            const T *x = p + b0;                                                                               \
            SUM_T a[DR_CPU_LANES];                                                                             \
            uint64_t a_lo[DR_CPU_LANES];                                                                       \
            T lo[DR_CPU_LANES], hi[DR_CPU_LANES];                                                              \
            for (int j = 0; j < DR_CPU_LANES; ++j) a[j] = 0, a_lo[j] = 0, lo[j] = hi[j] = x[0];                \
            DR_LANES_FOLD(lo, x, k, DR_OP_LT);                                                                 \
            DR_LANES_FOLD(hi, x, k, DR_OP_GT);                                                                 \
            __int128 bsum;                                                                                     \
            if (DR_IS64_##DT) {                                                                                \
                for (size_t i = 0; i < k; ++i) wb[i] = (SUM_T)DR_HI32((SUM_T)x[i]);                            \
                DR_LANES_FOLD(a, wb, k, DR_OP_ADD);                                                            \
                for (size_t i = 0; i < k; ++i) wb[i] = (SUM_T)DR_LO32(x[i]);                                   \
                DR_LANES_FOLD(a_lo, wb, k, DR_OP_ADD);                                                         \
                bsum = (__int128)a[0] * 4294967296 + (__int128)a_lo[0];                                        \
            } else {                                                                                           \
                for (size_t i = 0; i < k; ++i) wb[i] = (SUM_T)x[i];                                            \
                DR_LANES_FOLD(a, wb, k, DR_OP_ADD);                                                            \
                bsum = (__int128)a[0];                                                                         \
            }                                                                                                  \
            for (size_t i = 0; i < k; ++i) xb[i] = (double)x[i];                                               \
            const double mean = (double)bsum / (double)k;                                                      \
            const double m2 = lanes->m2_f64(xb, k, mean);                                                      \
            dr_int128_t b128;                                                                                  \
            b128.lo = (uint64_t)bsum;                                                                          \
            b128.hi = (uint64_t)(bsum >> 64);                                                                  \
            dr_i128_add(&s->sum.i128, b128);                                                                   \
            s->min.F = dr_min_##OF(s->min.F, (SUM_T)lo[0]);                                                    \
            s->max.F = dr_max_##OF(s->max.F, (SUM_T)hi[0]);                                                    \
            dr_stats_merge_moments(&s->count, &s->mean, &s->m2, (uint64_t)k, mean, m2);                        \
        }                                                                                                      \
    }
#define DR_STATS_SLICE_STATS_I64(DT) DR_STATS_SLICE_INT(DT, STATS_I64, int64_t, i64, i64)
#define DR_STATS_SLICE_STATS_U64(DT) DR_STATS_SLICE_INT(DT, STATS_U64, uint64_t, u64, u64)
#define X(DT, OP, op, ACC, acc) DR_STATS_SLICE_##ACC(DT)
DR_STATS_TABLE
#undef X

/* The exact mode: the float64 statistics and the exact sum (the binade slices above), both over each piece of
 * DR_STATS_EXACT_PIECE elements in turn while it is in the cache (one trip through memory), the pieces' statistics
 * merged (dr_stats_combine) and their exact sums added (dr_exact_combine) in order. A piece's merges and adds are
 * within the slice's depth: its own blocks, then one per piece (fewer than its blocks). */
#define DR_STATS_EXACT_PIECE 32768
#define DR_STATS_EXACT_SLICE(DT)                                                                               \
    static void slice_##DT##_STATS_STATS_EXACT(const void *in, size_t begin, size_t end, uint64_t base,       \
                                               dr_partial_t *out)                                              \
    {                                                                                                          \
        dr_partial_t piece;                                                                                    \
        dr_partial_identity(DR_ACC_STATS_EXACT, DR_STATS, out);                                                \
        for (size_t b0 = begin; b0 < end; b0 += DR_STATS_EXACT_PIECE) {                                        \
            const size_t b1 = end - b0 < DR_STATS_EXACT_PIECE ? end : b0 + DR_STATS_EXACT_PIECE;               \
            slice_##DT##_STATS_STATS_F64(in, b0, b1, base, &piece);                                            \
            dr_stats_combine(DR_ACC_STATS_F64, &out->stats_exact.stats, &piece.stats);                         \
            slice_##DT##_SUM_EXACT(in, b0, b1, base, &piece);                                                  \
            dr_exact_combine(&out->stats_exact.sum, &piece.exact);                                             \
        }                                                                                                      \
    }
#define X(DT, OP, op, ACC, acc) DR_STATS_EXACT_SLICE(DT)
DR_STATS_EXACT_TABLE
#undef X

static slice_fn find_slice(dr_dtype_t want_dtype, dr_op_t want_op, dr_acc_kind_t want_acc)
{
#if defined(__SSE2__)
    if (want_dtype == DR_FLOAT32 && want_acc == DR_ACC_F32 && want_op == DR_MIN) return sse_min_f32;
    if (want_dtype == DR_FLOAT32 && want_acc == DR_ACC_F32 && want_op == DR_MAX) return sse_max_f32;
    if (want_dtype == DR_FLOAT64 && want_acc == DR_ACC_F64 && want_op == DR_MIN) return sse_min_f64;
    if (want_dtype == DR_FLOAT64 && want_acc == DR_ACC_F64 && want_op == DR_MAX) return sse_max_f64;
    if (want_acc == DR_ACC_F32 && (want_op == DR_MIN || want_op == DR_MAX)) {
        if (want_dtype == DR_FLOAT16) return want_op == DR_MIN ? widened_FLOAT16_MIN : widened_FLOAT16_MAX;
        if (want_dtype == DR_BFLOAT16) return want_op == DR_MIN ? widened_BFLOAT16_MIN : widened_BFLOAT16_MAX;
    }
#endif
    if ((want_dtype == DR_FLOAT16 || want_dtype == DR_BFLOAT16) && (want_op == DR_SUM || want_op == DR_PROD) &&
        (want_acc == DR_ACC_F64 || want_acc == DR_ACC_F32)) {
        const int b = want_dtype == DR_BFLOAT16, prod = want_op == DR_PROD, f32 = want_acc == DR_ACC_F32;
        static const slice_fn widened[2][2][2] = {
            {{widened_FLOAT16_SUM_F64, widened_FLOAT16_SUM_F32}, {widened_FLOAT16_PROD_F64, widened_FLOAT16_PROD_F32}},
            {{widened_BFLOAT16_SUM_F64, widened_BFLOAT16_SUM_F32},
             {widened_BFLOAT16_PROD_F64, widened_BFLOAT16_PROD_F32}}};
        return widened[b][prod][f32];
    }
    /* The rest, and the 16-bit floats' min and max without SSE2: the table's element-wise loops. */
#define X(DT, OP, op, ACC, acc)                                                                                \
    if (want_dtype == DR_##DT && want_op == DR_##OP && want_acc == DR_ACC_##ACC) return slice_##DT##_##OP##_##ACC;
    DR_REDUCTION_TABLE
    DR_EXACT_TABLE
    DR_ARG_TABLE
    DR_STATS_TABLE
    DR_STATS_EXACT_TABLE
#undef X
    return NULL;
}

/* ---- NaN policy OMIT (accum.h, "NaN policy") ----
 *
 * A float slice is taken a piece at a time, and every row keeps its one slice function. A piece is first reduced in
 * place by the row's own slice, which is all a piece without NaN costs (most pieces of most data). Where its partial
 * shows that it may have met a NaN (partial_may_hold_nan), the piece, now in the cache, is copied into the thread's
 * buffer with each NaN replaced by dr_nan_fill(op) (stats: left out, the others moved up) and counted, and the slice
 * reduces the copy instead. A piece without NaN is its own copy, so both ways give the same bits. After a piece with
 * NaN the next goes to its copy first (data with NaN spread through them: one read of each piece, not two). The
 * pieces' partials combine in order. An argmin/argmax piece keeps its elements' places, so its indices are the
 * global ones.
 *
 * Measured by dreduce-cpu-bench's NaN rows (2^26 elements, 2 cores of an AMD EPYC VM whose memory a core reads at 17
 * to 30 GB/s, varying by the minute): the time with NaN omitted is 1.00-1.26x the propagating time on data without NaN
 * (the per-piece calls; the less a core's memory keeps up with it, the less they show) and 1.3-3.2x with 1% NaN (the
 * copy is compute, two passes in L1, done by SSE2 on these cores). */
#define DR_NAN_PIECE 2048 /* in L1; 8192 or 32768: float32 sum with 1% NaN 1.3x -> 2.0-2.6x the propagating time */
/* argmin/argmax look again for where a piece's extreme is, once per piece: 2048-element pieces cost 1.4-1.6x on
 * data without NaN, 32768 1.00-1.06x, and about the same with 1% NaN. */
#define DR_NAN_PIECE_ARG 32768

/* float16's bits of dr_nan_fill(op): 0, 1.0 (0x3c00), +inf (0x7c00), -inf (0xfc00). */
static uint16_t f16_fill(dr_op_t op)
{
    const double f = dr_nan_fill(op);
    return f == 0.0 ? 0 : f == 1.0 ? 0x3c00u : f > 0 ? 0x7c00u : 0xfc00u;
}

/* The NaN tests a register at a time, through GCC's vector extensions (SSE2 on every x86-64; other targets lower
 * them as they can), since compilers leave a count of float compares, and the select of a fill, scalar: float64
 * sum with NaN omitted went 35.9 -> 31.0 ms at 2^26 on 2 cores by the count alone. A compare gives -1 in a lane
 * where it holds. A 16-bit float is a NaN where its bits without the sign are above the infinity's. */
typedef float dr_v4f32 __attribute__((vector_size(16)));
typedef int32_t dr_v4i32 __attribute__((vector_size(16)));
typedef double dr_v2f64 __attribute__((vector_size(16)));
typedef int64_t dr_v2i64 __attribute__((vector_size(16)));
typedef uint16_t dr_v8u16 __attribute__((vector_size(16)));
typedef int16_t dr_v8i16 __attribute__((vector_size(16)));
enum { kF16Inf = 0x7c00, kBF16Inf = 0x7f80 };

static inline dr_v4i32 nan_mask_f32(const float *x)
{
    dr_v4f32 v;
    memcpy(&v, x, sizeof v);
    return v != v;
}
static inline dr_v2i64 nan_mask_f64(const double *x)
{
    dr_v2f64 v;
    memcpy(&v, x, sizeof v);
    return v != v;
}
static inline dr_v8i16 nan_mask_16(const uint16_t *x, uint16_t inf)
{
    dr_v8u16 v;
    memcpy(&v, x, sizeof v);
    return (v & 0x7fff) > inf;
}

/* Whether a piece's partial, reduced by the rules that propagate NaN, may have met one: a NaN always makes the
 * partial NaN (a sum or product NaN, a minimum, maximum, argmin/argmax value or statistics' minimum the canonical NaN,
 * an exact sum's NaN flag), and a partial without one had none. A sum or product can also be NaN without a NaN
 * (inf - inf, 0 inf): such a piece is taken again from its copy, which finds no NaN in it and gives the same bits. */
static int partial_may_hold_nan(dr_acc_kind_t acc, const dr_partial_t *p)
{
    switch (acc) {
    case DR_ACC_F32: return p->value.f32 != p->value.f32;
    case DR_ACC_F64: return p->value.f64 != p->value.f64;
    case DR_ACC_EXACT: return (p->exact.flags & DR_EXACT_NAN) != 0;
    case DR_ACC_ARG_F64: return p->value.arg.value.f64 != p->value.arg.value.f64;
    case DR_ACC_STATS_F64: return p->stats.min.f64 != p->stats.min.f64;
    case DR_ACC_STATS_EXACT: return p->stats_exact.stats.min.f64 != p->stats_exact.stats.min.f64;
    default: return 1; /* no float kind: the copy decides */
    }
}

/* x[0..m) into buf with each NaN replaced by the fill (op != DR_STATS; returns m) or left out (DR_STATS; returns the
 * numbers kept), and the NaN counted into *nan. The fill is a select a register at a time; the leaving out copies a
 * run of numbers a register pair long whole. */
static size_t nan_fill_piece(dr_dtype_t dtype, dr_op_t op, const void *in, size_t m, void *buf, size_t *nan)
{
    size_t k = 0, i = 0;
#define DR_FILL_PIECE(T, W, VI, MASK, IS_NAN, FILL_BITS)                                                       \
    do {                                                                                                       \
        const T *x = in;                                                                                       \
        T *y = buf;                                                                                            \
        if (op == DR_STATS) {                                                                                  \
            for (; m - i >= 2 * (W); i += 2 * (W)) {                                                           \
                const VI t = MASK(x + i) | MASK(x + i + (W));                                                  \
                uint64_t any[2];                                                                               \
                memcpy(any, &t, sizeof any);                                                                   \
                if (!(any[0] | any[1])) {                                                                      \
                    memcpy(y + k, x + i, 2 * (W) * sizeof(T));                                                 \
                    k += 2 * (W);                                                                              \
                } else {                                                                                       \
                    for (size_t j = i; j < i + 2 * (W); ++j) y[k] = x[j], k += !IS_NAN(x[j]);                 \
                }                                                                                              \
            }                                                                                                  \
            for (; i < m; ++i) y[k] = x[i], k += !IS_NAN(x[i]);                                                \
            *nan = m - k;                                                                                      \
            return k;                                                                                          \
        }                                                                                                      \
        VI fill, count = {0};                                                                                  \
        T fill1;                                                                                               \
        FILL_BITS(fill1);                                                                                      \
        for (int j = 0; j < (W); ++j) memcpy((char *)&fill + j * sizeof(T), &fill1, sizeof(T));                \
        for (; m - i >= (W); i += (W)) {                                                                       \
            const VI is_nan = MASK(x + i);                                                                     \
            VI v;                                                                                              \
            memcpy(&v, x + i, sizeof v);                                                                       \
            v = (v & ~is_nan) | (fill & is_nan);                                                               \
            count -= is_nan;                                                                                   \
            memcpy(y + i, &v, sizeof v);                                                                       \
        }                                                                                                      \
        size_t c = 0;                                                                                          \
        for (int j = 0; j < (W); ++j) c += (size_t)count[j];                                                   \
        for (; i < m; ++i) {                                                                                   \
            c += IS_NAN(x[i]);                                                                                 \
            y[i] = IS_NAN(x[i]) ? fill1 : x[i];                                                                \
        }                                                                                                      \
        *nan = c;                                                                                              \
        return m;                                                                                              \
    } while (0)
#define DR_F_NAN(v) ((v) != (v))
#define DR_F16_NAN(v) (((v) & 0x7fffu) > kF16Inf)
#define DR_BF16_NAN(v) (((v) & 0x7fffu) > kBF16Inf)
#define DR_F16_MASK(p) nan_mask_16(p, kF16Inf)
#define DR_BF16_MASK(p) nan_mask_16(p, kBF16Inf)
#define DR_FILL_F32(f) ((f) = (float)dr_nan_fill(op))
#define DR_FILL_F64(f) ((f) = dr_nan_fill(op))
#define DR_FILL_F16(f) ((f) = f16_fill(op))
/* bfloat16: the float32 fill's high half (0, 1, +-inf are exact in both) */
#define DR_FILL_BF16(f) ((f) = (uint16_t)(dr_f32_to_bits((float)dr_nan_fill(op)) >> 16))
    switch (dtype) {
    case DR_FLOAT32: DR_FILL_PIECE(float, 4, dr_v4i32, nan_mask_f32, DR_F_NAN, DR_FILL_F32);
    case DR_FLOAT64: DR_FILL_PIECE(double, 2, dr_v2i64, nan_mask_f64, DR_F_NAN, DR_FILL_F64);
    case DR_FLOAT16: DR_FILL_PIECE(uint16_t, 8, dr_v8i16, DR_F16_MASK, DR_F16_NAN, DR_FILL_F16);
    case DR_BFLOAT16: DR_FILL_PIECE(uint16_t, 8, dr_v8i16, DR_BF16_MASK, DR_BF16_NAN, DR_FILL_BF16);
    default: break;
    }
#undef DR_FILL_PIECE
#undef DR_F_NAN
#undef DR_F16_NAN
#undef DR_BF16_NAN
#undef DR_F16_MASK
#undef DR_BF16_MASK
#undef DR_FILL_F32
#undef DR_FILL_F64
#undef DR_FILL_F16
#undef DR_FILL_BF16
    return m;
}

typedef struct {
    slice_fn fn;
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
    int omit; /* NaN policy OMIT on a float type */
    const void *in;
    size_t n;
    uint64_t first;
    dr_partial_t *partials;
    uint64_t *nans;  /* per thread */
    int *failed;     /* per thread: no memory for its piece buffer */
} reduce_job_t;

static void reduce_worker(void *ctx, int i, int k)
{
    reduce_job_t *job = ctx;
    unsigned long long b, e;
    dr_parallel_slice(job->n, i, k, &b, &e);
    job->nans[i] = 0;
    job->failed[i] = 0;
    if (!job->omit) {
        job->fn(job->in, (size_t)b, (size_t)e, job->first, &job->partials[i]);
        return;
    }
    const size_t es = dr_dtype_size(job->dtype);
    const size_t piece_len = job->op == DR_ARGMIN || job->op == DR_ARGMAX ? DR_NAN_PIECE_ARG : DR_NAN_PIECE;
    void *buf = malloc(piece_len * es);
    dr_partial_identity(job->acc, job->op, &job->partials[i]);
    if (!buf) {
        job->failed[i] = 1;
        return;
    }
    dr_partial_t piece;
    int expect_nan = 0; /* the last piece had NaN */
    for (size_t p0 = (size_t)b; p0 < (size_t)e; p0 += piece_len) {
        const size_t m = (size_t)e - p0 < piece_len ? (size_t)e - p0 : piece_len;
        const void *x = (const char *)job->in + p0 * es;
        size_t nan = 0;
        if (expect_nan) {
            job->fn(buf, 0, nan_fill_piece(job->dtype, job->op, x, m, buf, &nan), job->first + p0, &piece);
        } else {
            job->fn(job->in, p0, p0 + m, job->first, &piece); /* in place: a piece without NaN is its own copy */
            if (partial_may_hold_nan(job->acc, &piece)) /* again, from the copy (in the cache now) */
                job->fn(buf, 0, nan_fill_piece(job->dtype, job->op, x, m, buf, &nan), job->first + p0, &piece);
        }
        job->nans[i] += nan;
        expect_nan = nan != 0;
        dr_partial_combine(job->acc, job->op, &job->partials[i], &piece);
    }
    free(buf);
}

int dr_cpu_reduce(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, const void *in, size_t n, uint64_t first,
                  int nthreads, dr_partial_t *out, uint64_t *depth)
{
    return dr_cpu_reduce_on(dtype, op, acc, DR_NAN_PROPAGATE, in, n, first, nthreads, NULL, out, depth, NULL);
}

int dr_cpu_reduce_on(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, const void *in, size_t n,
                     uint64_t first, int nthreads, const dr_parallel_cpus_t *cpus, dr_partial_t *out,
                     uint64_t *depth, uint64_t *nan_count)
{
    enum { kMaxThreads = 1024 };
    slice_fn fn = find_slice(dtype, op, acc);
    if (!fn) return -1;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > kMaxThreads) nthreads = kMaxThreads;
    /* Below ~64K elements per thread, thread start-up costs more than the work. */
    if ((size_t)nthreads > n / 65536 + 1) nthreads = (int)(n / 65536 + 1);
    /* The threads' partials: on the heap, since an exact one is 552 bytes (one thread: on the stack). */
    dr_partial_t one, *partials = nthreads == 1 ? &one : malloc((size_t)nthreads * sizeof *partials);
    uint64_t one_nan, *nans = nthreads == 1 ? &one_nan : malloc((size_t)nthreads * sizeof *nans);
    int one_failed, *failed = nthreads == 1 ? &one_failed : malloc((size_t)nthreads * sizeof *failed);
    int rc = 0;
    if (!partials || !nans || !failed) {
        rc = -2;
    } else {
        const int omit = nan == DR_NAN_OMIT && dr_dtype_is_float(dtype);
        reduce_job_t job = {fn, dtype, op, acc, omit, in, n, first, partials, nans, failed};
        dr_parallel_run_on(nthreads, cpus, reduce_worker, &job);
        dr_partial_identity(acc, op, out);
        uint64_t left_out = 0;
        for (int i = 0; i < nthreads; ++i) {
            dr_partial_combine(acc, op, out, &partials[i]);
            left_out += nans[i];
            if (failed[i]) rc = -2;
        }
        if (nan_count) *nan_count = left_out;
    }
    if (partials != &one) free(partials);
    if (nans != &one_nan) free(nans);
    if (failed != &one_failed) free(failed);
    if (rc != 0) return rc;
    /* Longest rounding path: a lane of the longest slice, the lanes' tree, the slices in thread order. Stats: the
     * blocks of the longest slice (a merge and an add each), a block's lanes and tree, the slices in thread order.
     * argmin/argmax round nothing. OMIT adds a combine per piece: fewer than a piece's lanes already counted. */
    const uint64_t slice = (n + (size_t)nthreads - 1) / (size_t)nthreads;
    const uint64_t pieces = nan == DR_NAN_OMIT ? (slice + DR_NAN_PIECE - 1) / DR_NAN_PIECE : 0;
    if (dr_acc_kind_is_arg(acc))
        *depth = 0;
    else if (dr_acc_kind_is_stats(acc))
        *depth = (slice + DR_STATS_BLOCK - 1) / DR_STATS_BLOCK + DR_STATS_BLOCK / DR_CPU_LANES + DR_CPU_LANES_LOG2 +
                 (uint64_t)nthreads + pieces;
    else
        *depth = acc == DR_ACC_EXACT
                     ? 1
                     : (slice + DR_CPU_LANES - 1) / DR_CPU_LANES + DR_CPU_LANES_LOG2 + (uint64_t)nthreads + pieces;
    return 0;
}

dr_status_t dr_cpu_reduce_checked(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, const void *in,
                                  size_t n, uint64_t first, int nthreads, const dr_parallel_cpus_t *cpus,
                                  dr_partial_t *out, uint64_t *depth, uint64_t *nan_count)
{
    const int rc = dr_cpu_reduce_on(dtype, op, acc, nan, in, n, first, nthreads, cpus, out, depth, nan_count);
    if (rc == -1)
        dr_error("the CPU backend has no reduction for %s %s accumulating in %s", dr_dtype_name(dtype), dr_op_name(op),
                 dr_acc_kind_name(acc));
    else if (rc != 0)
        dr_error("cannot allocate the CPU backend's %d thread partials (or their NaN-omitting buffers)", nthreads);
    return rc == 0 ? DR_OK : DR_ERR_RUNTIME;
}
