/* The accumulator: how each op combines two values of each accumulator kind, its identity, and how 16-bit floats
 * widen. This one header is compiled by the C host code (CPU backend, MPI combine, reference) and by the CUDA
 * kernels, so every level of the pipeline combines with exactly the same rules.
 *
 * Rules:
 *   - integer sum and prod wrap modulo 2^width (done in unsigned arithmetic, so no signed-overflow UB);
 *   - float min/max propagate NaN (if either side is NaN the result is the canonical NaN, 0x7fffffff or
 *     0x7fffffffffffffff, whatever the inputs' payloads) and order -0 below +0, so the result does not depend on the
 *     order of combination, to the bit;
 *   - band/bor/bxor are defined for the integer kinds only. */
#ifndef DREDUCE_ACCUM_H
#define DREDUCE_ACCUM_H

#include <stdint.h>
#include <string.h>

#include "dreduce/types.h"

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

#endif
