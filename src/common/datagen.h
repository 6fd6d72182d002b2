/* Input data as a pure function of (pattern, seed, global index): any shard can be made anywhere, on the device or
 * the host, and both make the same bits. Compiled by C and CUDA alike.
 *
 * Patterns (see dr_gen_t):
 *   random  integers: every bit pattern of the type (so 32-bit sums need their 64-bit accumulator);
 *           floats: x = 4u - 1 in [-1, 3) with u uniform on the type's significand grid, so every value is exact;
 *           for prod, values stay near 1 so long products neither vanish nor overflow: integers in {1, -1, 3, -3}
 *           (3 and -3 one time in 16; unsigned: {1, 3}), floats 1 + k * 2^-(p-1), k in {-2, -1, 1, 2}, p
 *           significand bits (still, products of ~10^6 bfloat16 values leave float32's range: see reference.h).
 *   iota    the global index, modulo 2^p for floats (p significand bits, so every value is exact) and modulo 2^width
 *           for integers.
 *   ones    1.
 *   const   a fixed bit pattern of the type, made once on the host (dr_gen_t.const_bits).
 *   spread  floats: a random sign, binade and significand, the binade uniform over the type's own from the
 *           subnormals up to a cap (float16: all finite ones, to 2^15; bfloat16 and float32: to 2^90; float64: to
 *           2^900): sums of up to 2^36 elements stay finite even in float32, and a run of neighbours spans far more
 *           binades than an exact sum's fast path takes at once (kernels/exact_window.cuh; float16's takes all of
 *           its binades). Integers, and products of any type (which would overflow at once): as random.
 * NaN (dr_gen_t.nan_threshold, the program's --nans F): with any pattern but const, a float element is NaN where a
 * hash of its index falls below F of the range, with a random sign and fraction (quiet and signalling NaN alike),
 * so the NaN are the same elements at any rank count and on host and device. */
#ifndef DREDUCE_DATAGEN_H
#define DREDUCE_DATAGEN_H

#include <stdint.h>

#include "accum.h"
#include "dtype.h"

typedef enum { DR_DATA_RANDOM = 0, DR_DATA_IOTA, DR_DATA_ONES, DR_DATA_CONST, DR_DATA_SPREAD, DR_DATA_COUNT } dr_pattern_t;

typedef struct {
    dr_pattern_t pattern;
    dr_dtype_t dtype;
    dr_op_t op;          /* random data for prod differs (see above) */
    uint64_t seed;
    uint64_t const_bits; /* DR_DATA_CONST: the value's bits in the low dr_dtype_size(dtype) bytes */
    uint64_t nan_threshold; /* floats: element i is NaN where a hash of i, 32 bits, is below this (0: none; 2^32:
                               every element) */
} dr_gen_t;

/* SplitMix64 finaliser: a bijection on 64 bits with good avalanche. */
DR_HD uint64_t dr_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* 64 random bits for element `index` of the stream `seed`. */
DR_HD uint64_t dr_gen_bits(uint64_t seed, uint64_t index)
{
    return dr_mix64(index * 0x9e3779b97f4a7c15ull + dr_mix64(seed ^ 0x6a09e667f3bcc909ull));
}

/* Exact float32 -> float16 / bfloat16 for values the generator makes (normal, within range, on the grid). */
DR_HD uint16_t dr_f32_to_f16_exact(float f)
{
    uint32_t b = dr_f32_to_bits(f);
    uint32_t sign = (b >> 16) & 0x8000u;
    if ((b & 0x7fffffffu) == 0) return (uint16_t)sign;
    uint32_t exp = (b >> 23) & 0xffu;
    return (uint16_t)(sign | ((exp - 112u) << 10) | ((b >> 13) & 0x3ffu));
}

DR_HD uint16_t dr_f32_to_bf16_exact(float f) { return (uint16_t)(dr_f32_to_bits(f) >> 16); }

/* The element as a float on its type's grid: p significand bits. */
DR_HD double dr_gen_float(const dr_gen_t *g, uint64_t index, int p)
{
    switch (g->pattern) {
    case DR_DATA_IOTA:
        return (double)(index & ((1ull << p) - 1));
    case DR_DATA_ONES:
        return 1.0;
    default: {
        uint64_t r = dr_gen_bits(g->seed, index);
        if (g->op == DR_PROD) {
            int k = (int)(r >> 62) - 2; /* {-2, -1, 0, 1} -> {-2, -1, 1, 2}: no first-order drift of the product */
            if (k >= 0) ++k;
            return 1.0 + (double)k * (1.0 / (double)(1ull << (p - 1)));
        }
        double u = (double)(r >> (64 - p)) * (1.0 / (double)(1ull << p)); /* [0, 1) on the p-bit grid */
        return 4.0 * u - 1.0;
    }
    }
}

/* The element's integer bits (before truncation to the type's width). */
DR_HD uint64_t dr_gen_int(const dr_gen_t *g, uint64_t index, int is_signed)
{
    switch (g->pattern) {
    case DR_DATA_IOTA:
        return index;
    case DR_DATA_ONES:
        return 1;
    default: {
        uint64_t r = dr_gen_bits(g->seed, index);
        if (g->op == DR_PROD) {
            uint64_t v = ((r >> 60) == 0) ? 3 : 1;
            return (is_signed && (r & 1)) ? (uint64_t)0 - v : v;
        }
        return r;
    }
    }
}

/* DR_DATA_SPREAD's element `index` as the bits of a float of exp_bits exponent and frac_bits fraction bits: a
 * random sign, biased exponent in 0..max_biased (0: a subnormal, or a zero when the fraction is 0) and fraction.
 * The sign and exponent come from a second hash, independent of the fraction's bits. */
DR_HD uint64_t dr_gen_spread_bits(const dr_gen_t *g, uint64_t index, int exp_bits, int frac_bits, uint32_t max_biased)
{
    const uint64_t r = dr_gen_bits(g->seed, index), r2 = dr_mix64(r ^ 0x510e527fade682d1ull);
    const uint64_t biased = ((r2 >> 32) * (uint64_t)(max_biased + 1)) >> 32; /* uniform on 0..max_biased */
    return ((r2 & 1u) << (exp_bits + frac_bits)) | (biased << frac_bits) | (r & ((1ull << frac_bits) - 1));
}
DR_HD int dr_gen_is_spread(const dr_gen_t *g) { return g->pattern == DR_DATA_SPREAD && g->op != DR_PROD; }

/* Whether float element i is NaN (nan_threshold), and its bits: a random sign and nonzero fraction. */
DR_HD int dr_gen_is_nan(const dr_gen_t *g, uint64_t i)
{
    return g->nan_threshold && g->pattern != DR_DATA_CONST &&
           (dr_mix64(dr_gen_bits(g->seed, i) ^ 0x3c6ef372fe94f82bull) >> 32) < g->nan_threshold;
}
DR_HD uint64_t dr_gen_nan_bits(const dr_gen_t *g, uint64_t i, int exp_bits, int frac_bits)
{
    const uint64_t r = dr_mix64(dr_gen_bits(g->seed, i) ^ 0xa54ff53a5f1d36f1ull);
    uint64_t frac = r & ((1ull << frac_bits) - 1);
    if (!frac) frac = 1;
    return ((r >> 63) << (exp_bits + frac_bits)) | (((1ull << exp_bits) - 1) << frac_bits) | frac;
}

/* Typed generators: element `index` of the global array. */
DR_HD int32_t dr_gen_int32(const dr_gen_t *g, uint64_t i)
{
    return g->pattern == DR_DATA_CONST ? (int32_t)(uint32_t)g->const_bits : (int32_t)(uint32_t)dr_gen_int(g, i, 1);
}
DR_HD int64_t dr_gen_int64(const dr_gen_t *g, uint64_t i)
{
    return g->pattern == DR_DATA_CONST ? (int64_t)g->const_bits : (int64_t)dr_gen_int(g, i, 1);
}
DR_HD uint32_t dr_gen_uint32(const dr_gen_t *g, uint64_t i)
{
    return g->pattern == DR_DATA_CONST ? (uint32_t)g->const_bits : (uint32_t)dr_gen_int(g, i, 0);
}
DR_HD uint64_t dr_gen_uint64(const dr_gen_t *g, uint64_t i)
{
    return g->pattern == DR_DATA_CONST ? g->const_bits : dr_gen_int(g, i, 0);
}
DR_HD int8_t dr_gen_int8(const dr_gen_t *g, uint64_t i)
{
    return (int8_t)(uint8_t)(g->pattern == DR_DATA_CONST ? g->const_bits : dr_gen_int(g, i, 1));
}
DR_HD uint8_t dr_gen_uint8(const dr_gen_t *g, uint64_t i)
{
    return (uint8_t)(g->pattern == DR_DATA_CONST ? g->const_bits : dr_gen_int(g, i, 0));
}
DR_HD int16_t dr_gen_int16(const dr_gen_t *g, uint64_t i)
{
    return (int16_t)(uint16_t)(g->pattern == DR_DATA_CONST ? g->const_bits : dr_gen_int(g, i, 1));
}
DR_HD uint16_t dr_gen_uint16(const dr_gen_t *g, uint64_t i)
{
    return (uint16_t)(g->pattern == DR_DATA_CONST ? g->const_bits : dr_gen_int(g, i, 0));
}
DR_HD float dr_gen_float32(const dr_gen_t *g, uint64_t i)
{
    if (dr_gen_is_nan(g, i)) return dr_bits_to_f32((uint32_t)dr_gen_nan_bits(g, i, 8, 23));
    if (dr_gen_is_spread(g)) return dr_bits_to_f32((uint32_t)dr_gen_spread_bits(g, i, 8, 23, 127 + 90));
    return g->pattern == DR_DATA_CONST ? dr_bits_to_f32((uint32_t)g->const_bits) : (float)dr_gen_float(g, i, 24);
}
DR_HD double dr_gen_float64(const dr_gen_t *g, uint64_t i)
{
    if (dr_gen_is_nan(g, i)) return dr_bits_to_f64(dr_gen_nan_bits(g, i, 11, 52));
    if (dr_gen_is_spread(g)) return dr_bits_to_f64(dr_gen_spread_bits(g, i, 11, 52, 1023 + 900));
    if (g->pattern == DR_DATA_CONST) {
        double d;
        memcpy(&d, &g->const_bits, sizeof d);
        return d;
    }
    return dr_gen_float(g, i, 53);
}
DR_HD uint16_t dr_gen_float16(const dr_gen_t *g, uint64_t i)
{
    if (dr_gen_is_nan(g, i)) return (uint16_t)dr_gen_nan_bits(g, i, 5, 10);
    if (dr_gen_is_spread(g)) return (uint16_t)dr_gen_spread_bits(g, i, 5, 10, 30);
    return g->pattern == DR_DATA_CONST ? (uint16_t)g->const_bits : dr_f32_to_f16_exact((float)dr_gen_float(g, i, 11));
}
DR_HD uint16_t dr_gen_bfloat16(const dr_gen_t *g, uint64_t i)
{
    if (dr_gen_is_nan(g, i)) return (uint16_t)dr_gen_nan_bits(g, i, 8, 7);
    if (dr_gen_is_spread(g)) return (uint16_t)dr_gen_spread_bits(g, i, 8, 7, 127 + 90);
    return g->pattern == DR_DATA_CONST ? (uint16_t)g->const_bits : dr_f32_to_bf16_exact((float)dr_gen_float(g, i, 8));
}

/* Fill in[0..n) with elements first..first+n-1 of g's global array on the host, on nthreads threads
 * (src/common/datagen.c). */
void dr_cpu_generate(const dr_gen_t *g, uint64_t first, void *in, size_t n, int nthreads);

#endif
