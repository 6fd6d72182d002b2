#include "cpu_lanes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "accum.h"
#include "distrib.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DR_LANES_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* One version: lanes in R registers of W doubles (R * W = 8), the loads, the arithmetic and the compares of its
 * width. MIN(x, a) and MAX(x, a) are exactly x < a ? x : a and x > a ? x : a at every width (the (v)minpd/(v)maxpd
 * family returns its second operand where either is NaN or both are zeros), so the lanes hold the portable loops'
 * bits. The k % 8 tail and the tree are scalar; a block is 256 elements, so they are a small part of it. */
#define DR_LANES_VERSION(NAME, TARGET, V, W, LD64, LD32, ST, SET1, ADD, SUB, MUL, MIN, MAX, WIDEN, HIST)       \
    DR_LANES_FUNCS(NAME, f64, double, TARGET, V, W, LD64, ST, SET1, ADD, SUB, MUL, MIN, MAX)                   \
    DR_LANES_FUNCS(NAME, f32, float, TARGET, V, W, LD32, ST, SET1, ADD, SUB, MUL, MIN, MAX)                    \
    static const dr_cpu_lanes_t lanes_##NAME = {#NAME, smm_f64_##NAME, smm_f32_##NAME, m2_f64_##NAME,           \
                                                m2_f32_##NAME, m2_smm_f64_##NAME, m2_smm_f32_##NAME,            \
                                                widen_f16_f32_##WIDEN, widen_f16_f64_##WIDEN, round_f16_##WIDEN, \
                                                hist_fast_f32_##HIST, hist_fast_f64_##HIST};

#define DR_LANES_FUNCS(NAME, TN, T, TARGET, V, W, LD, ST, SET1, ADD, SUB, MUL, MIN, MAX)                        \
    TARGET static void smm_##TN##_##NAME(const T *v, size_t k, double *sum, double *lo, double *hi)            \
    {                                                                                                          \
        enum { R = 8 / (W) };                                                                                  \
        DR_SMM_INIT(V, SET1);                                                                                  \
        size_t i = 0;                                                                                          \
        for (; k - i >= 8; i += 8) DR_SMM_STEP(V, W, LD, v + i, ADD, MIN, MAX);                                \
        DR_SMM_FINISH(W, ST, v, i, k, sum, lo, hi);                                                            \
    }                                                                                                          \
    TARGET static double m2_##TN##_##NAME(const T *v, size_t k, double mean)                                   \
    {                                                                                                          \
        enum { R = 8 / (W) };                                                                                  \
        DR_M2_INIT(V, SET1, mean);                                                                             \
        size_t i = 0;                                                                                          \
        for (; k - i >= 8; i += 8) DR_M2_STEP(V, W, LD, v + i, ADD, SUB, MUL);                                 \
        DR_M2_FINISH(W, ST, v, i, k, mean);                                                                    \
    }                                                                                                          \
    TARGET static double m2_smm_##TN##_##NAME(const T *u, size_t ku, double mean, const T *v, size_t k,         \
                                              double *sum, double *lo, double *hi)                             \
    {                                                                                                          \
        enum { R = 8 / (W) };                                                                                  \
        DR_M2_INIT(V, SET1, mean);                                                                             \
        DR_SMM_INIT(V, SET1);                                                                                  \
        size_t i = 0, iu = 0;                                                                                  \
        for (; k - i >= 8 && ku - iu >= 8; i += 8, iu += 8) {                                                  \
            DR_M2_STEP(V, W, LD, u + iu, ADD, SUB, MUL);                                                       \
            DR_SMM_STEP(V, W, LD, v + i, ADD, MIN, MAX);                                                       \
        }                                                                                                      \
        for (; k - i >= 8; i += 8) DR_SMM_STEP(V, W, LD, v + i, ADD, MIN, MAX);                                \
        for (; ku - iu >= 8; iu += 8) DR_M2_STEP(V, W, LD, u + iu, ADD, SUB, MUL);                             \
        DR_SMM_FINISH(W, ST, v, i, k, sum, lo, hi);                                                            \
        i = iu, k = ku, v = u;                                                                                 \
        DR_M2_FINISH(W, ST, v, i, k, mean);                                                                    \
    }

#define DR_SMM_INIT(V, SET1)                                                                                   \
    const double pinf_ = __builtin_inf();                                                                      \
    V s_[R], l_[R], h_[R];                                                                                     \
    for (int r = 0; r < R; ++r) s_[r] = SET1(0.0), l_[r] = SET1(pinf_), h_[r] = SET1(-pinf_)
#define DR_SMM_STEP(V, W, LD, p, ADD, MIN, MAX)                                                                \
    for (int r = 0; r < R; ++r) {                                                                              \
        const V x = LD((p) + (W) * r);                                                                         \
        s_[r] = ADD(s_[r], x);                                                                                 \
        l_[r] = MIN(x, l_[r]);                                                                                 \
        h_[r] = MAX(x, h_[r]);                                                                                 \
    }
#define DR_SMM_FINISH(W, ST, v, i, k, sum, lo, hi)                                                             \
    do {                                                                                                       \
        double a[8], lo8[8], hi8[8];                                                                           \
        for (int r = 0; r < R; ++r) ST(a + (W) * r, s_[r]), ST(lo8 + (W) * r, l_[r]), ST(hi8 + (W) * r, h_[r]);  \
        for (int j = 0; i < k; ++i, ++j) {                                                                     \
            const double x = v[i];                                                                             \
            a[j] += x;                                                                                         \
            lo8[j] = x < lo8[j] ? x : lo8[j];                                                                  \
            hi8[j] = x > hi8[j] ? x : hi8[j];                                                                  \
        }                                                                                                      \
        for (int g = 4; g > 0; g /= 2)                                                                         \
            for (int j = 0; j < g; ++j) {                                                                      \
                a[j] += a[j + g];                                                                              \
                lo8[j] = lo8[j + g] < lo8[j] ? lo8[j + g] : lo8[j];                                            \
                hi8[j] = hi8[j + g] > hi8[j] ? hi8[j + g] : hi8[j];                                            \
            }                                                                                                  \
        *(sum) = a[0], *(lo) = lo8[0], *(hi) = hi8[0];                                                         \
    } while (0)

#define DR_M2_INIT(V, SET1, mean)                                                                              \
    const V m_ = SET1(mean);                                                                                   \
    V q_[R];                                                                                                   \
    for (int r = 0; r < R; ++r) q_[r] = SET1(0.0)
#define DR_M2_STEP(V, W, LD, p, ADD, SUB, MUL)                                                                 \
    for (int r = 0; r < R; ++r) {                                                                              \
        const V d = SUB(LD((p) + (W) * r), m_);                                                                \
        q_[r] = ADD(q_[r], MUL(d, d));                                                                         \
    }
#define DR_M2_FINISH(W, ST, v, i, k, mean)                                                                     \
    double q8[8];                                                                                              \
    for (int r = 0; r < R; ++r) ST(q8 + (W) * r, q_[r]);                                                       \
    for (int j = 0; i < k; ++i, ++j) {                                                                         \
        const double d = (double)v[i] - (mean);                                                                \
        q8[j] += d * d;                                                                                        \
    }                                                                                                          \
    for (int g = 4; g > 0; g /= 2)                                                                             \
        for (int j = 0; j < g; ++j) q8[j] += q8[j + g];                                                        \
    return q8[0]

/* float16 widened one element at a time (dr_f16_to_f32: exact, NaN canonical). */
static void widen_f16_f32_scalar(const uint16_t *p, size_t m, float *out)
{
    for (size_t i = 0; i < m; ++i) out[i] = dr_f16_to_f32(p[i]);
}
static void widen_f16_f64_scalar(const uint16_t *p, size_t m, double *out)
{
    for (size_t i = 0; i < m; ++i) out[i] = (double)dr_f16_to_f32(p[i]);
}
static void round_f16_scalar(float *v, size_t m)
{
    for (size_t i = 0; i < m; ++i) v[i] = dr_round_f16(v[i]);
}

/* The histogram estimate in C for the bin type FT, branch-free so that compilers vectorize it (this file is built
 * with -fno-trapping-math, without which GCC keeps each select a branch; GCC 12 vectorizes it for float, not for
 * double, whose int masks of double compares it will not mix: that loop branches, which is slow where elements below
 * and above the range alternate at random). An element outside [first, last] (or NaN: every compare false) has its
 * estimate replaced by 0 before the conversion, so that the conversion never sees a value an int cannot hold. */
#define DR_HIST_FAST(FT, h, v, m, slot)                                                                        \
    do {                                                                                                       \
        const FT first = (FT)(h)->first, last = (FT)(h)->last, scale = (FT)(h)->scale;                         \
        const FT lo = (FT)(h)->margin, hi = (FT)1 - (FT)(h)->margin;                                           \
        const int32_t bins = (int32_t)(h)->bins;                                                               \
        for (size_t i = 0; i < (m); ++i) {                                                                     \
            const FT x = (v)[i];                                                                               \
            const int below = x < first, above = x > last, in = (x >= first) & (x <= last);                    \
            const FT ff = in ? (x - first) * scale : (FT)0;                                                    \
            const int32_t b = (int32_t)ff;                                                                     \
            const FT fr = ff - (FT)b;                                                                          \
            const int32_t out = in ? -1 : bins + 2 - 2 * below - above; /* below, above, NaN */                \
            (slot)[i] = in & (fr > lo) & (fr < hi) & (b < bins) ? b : out;                                     \
        }                                                                                                      \
    } while (0)
static void hist_fast_f32_scalar(const dr_hist_plan_t *h, const float *v, size_t m, int32_t *slot)
{
    DR_HIST_FAST(float, h, v, m, slot);
}
static void hist_fast_f64_scalar(const dr_hist_plan_t *h, const double *v, size_t m, int32_t *slot)
{
    DR_HIST_FAST(double, h, v, m, slot);
}

/* Portable C: one double per lane (compilers vectorize the sums but not the compares, which IEEE's NaN and signed
 * zeros keep from being plain min/max). */
#define P_LD(p) ((double)*(p))
#define P_ST(p, x) (*(p) = (x))
#define P_SET1(x) (x)
#define P_ADD(a, b) ((a) + (b))
#define P_SUB(a, b) ((a) - (b))
#define P_MUL(a, b) ((a) * (b))
#define P_MIN(x, a) ((x) < (a) ? (x) : (a))
#define P_MAX(x, a) ((x) > (a) ? (x) : (a))
DR_LANES_VERSION(portable, , double, 1, P_LD, P_LD, P_ST, P_SET1, P_ADD, P_SUB, P_MUL, P_MIN, P_MAX, scalar,
                 scalar)

#if DR_LANES_X86
/* SSE2 (every x86-64): two doubles a register; two floats widened from a 64-bit load. */
#define S_LD32(p) _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)(p))))
DR_LANES_VERSION(sse2, , __m128d, 2, _mm_loadu_pd, S_LD32, _mm_storeu_pd, _mm_set1_pd, _mm_add_pd, _mm_sub_pd,
                 _mm_mul_pd, _mm_min_pd, _mm_max_pd, scalar, scalar)

/* AVX: four doubles a register. (target("avx") leaves out FMA, and the build's -std=c11 keeps multiplies and adds
 * apart, so (x - mean)^2 + q rounds twice as in the other versions.) An AVX-512 version, the eight lanes in one
 * register, measured slower on 2 cores of an AVX-512 EPYC (float64 stats 45-49 GB/s against AVX's 50-57, float32 the
 * same), so there is none. */
#define A_LD32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))

/* float16 by F16C (every AVX CPU but the first generation: the version runs only where both are), eight a step;
 * the conversion is exact, and a NaN is made dr_f16_to_f32's canonical one (F16C keeps the payload), so the widened
 * block has the scalar loop's bits; float64 from that float as the scalar cast converts it (cvtps2pd). */
__attribute__((target("avx,f16c"))) static __m256 f16c_widen8(const uint16_t *p)
{
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q), canon = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    /* and/andnot/or, not _mm256_blendv_ps: GCC 12 turned that select into a test and a branch per element, which
     * left float16 min at 2.2 GB/s on one EPYC core */
    return _mm256_or_ps(_mm256_andnot_ps(nan, v), _mm256_and_ps(nan, canon));
}
/* The F16C functions end in a tail call of their scalar loop, before which GCC 12 may emit no vzeroupper (at -O3 it
 * left it out of both widenings, at -O2 out of the rounding too): the upper halves of the ymm registers stayed dirty,
 * and every legacy SSE instruction after them in that thread ran slowly (on 2 EPYC cores: the SSE2 min loop over
 * each widened block at 0.76 ns an element against 0.14, float16 min 6.3 GB/s). So each clears them itself first. */
__attribute__((target("avx,f16c"))) static void widen_f16_f32_f16c(const uint16_t *p, size_t m, float *out)
{
    size_t i = 0;
    for (; m - i >= 8; i += 8) _mm256_storeu_ps(out + i, f16c_widen8(p + i));
    _mm256_zeroupper();
    widen_f16_f32_scalar(p + i, m - i, out + i);
}
__attribute__((target("avx,f16c"))) static void widen_f16_f64_f16c(const uint16_t *p, size_t m, double *out)
{
    size_t i = 0;
    for (; m - i >= 8; i += 8) {
        const __m256 v = f16c_widen8(p + i);
        _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    _mm256_zeroupper();
    widen_f16_f64_scalar(p + i, m - i, out + i);
}
/* To float16 and back, rounding to nearest even (vcvtps2ph's immediate 0): dr_round_f16's values, infinity past
 * 65504 and subnormal halves included. */
__attribute__((target("avx,f16c"))) static void round_f16_f16c(float *v, size_t m)
{
    size_t i = 0;
    for (; m - i >= 8; i += 8)
        _mm256_storeu_ps(v + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT)));
    _mm256_zeroupper();
    round_f16_scalar(v + i, m - i);
}
/* The histogram estimate eight floats a step: the scalar loop's operations, each select an and/andnot/or of
 * compare masks (as f16c_widen8 says why), the bin's compare with bins made in float (both whole numbers of at most
 * 2^24, exact). */
__attribute__((target("avx"))) static __m256 hist_select(__m256 mask, __m256 yes, __m256 no)
{
    return _mm256_or_ps(_mm256_and_ps(mask, yes), _mm256_andnot_ps(mask, no));
}
__attribute__((target("avx"))) static void hist_fast_f32_avx(const dr_hist_plan_t *h, const float *v, size_t m,
                                                              int32_t *slot)
{
    const __m256 first = _mm256_set1_ps((float)h->first), last = _mm256_set1_ps((float)h->last);
    const __m256 scale = _mm256_set1_ps((float)h->scale), lo = _mm256_set1_ps((float)h->margin);
    const __m256 hi = _mm256_set1_ps(1.0f - (float)h->margin), bins_f = _mm256_set1_ps((float)h->bins);
    const int32_t bins = (int32_t)h->bins;
    const __m256 below_s = _mm256_castsi256_ps(_mm256_set1_epi32(bins));
    const __m256 above_s = _mm256_castsi256_ps(_mm256_set1_epi32(bins + 1));
    const __m256 nan_s = _mm256_castsi256_ps(_mm256_set1_epi32(bins + 2));
    const __m256 near_s = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    size_t i = 0;
    for (; m - i >= 8; i += 8) {
        const __m256 x = _mm256_loadu_ps(v + i);
        const __m256 below = _mm256_cmp_ps(x, first, _CMP_LT_OQ), above = _mm256_cmp_ps(x, last, _CMP_GT_OQ);
        const __m256 in = _mm256_and_ps(_mm256_cmp_ps(x, first, _CMP_GE_OQ), _mm256_cmp_ps(x, last, _CMP_LE_OQ));
        const __m256 ff = _mm256_and_ps(in, _mm256_mul_ps(_mm256_sub_ps(x, first), scale)); /* 0.0 outside */
        const __m256i b = _mm256_cvttps_epi32(ff);
        const __m256 bf = _mm256_cvtepi32_ps(b), fr = _mm256_sub_ps(ff, bf);
        const __m256 inner = _mm256_and_ps(_mm256_cmp_ps(fr, lo, _CMP_GT_OQ), _mm256_cmp_ps(fr, hi, _CMP_LT_OQ));
        const __m256 ok = _mm256_and_ps(_mm256_and_ps(in, _mm256_cmp_ps(bf, bins_f, _CMP_LT_OQ)), inner);
        __m256 s = hist_select(above, above_s, nan_s);
        s = hist_select(below, below_s, s);
        s = hist_select(in, near_s, s);
        s = hist_select(ok, _mm256_castsi256_ps(b), s);
        _mm256_storeu_si256((__m256i *)(void *)(slot + i), _mm256_castps_si256(s));
    }
    _mm256_zeroupper();
    hist_fast_f32_scalar(h, v + i, m - i, slot + i);
}
/* Four doubles a step: the compares' 64-bit masks narrowed to the slots' 32 bits (the low half of each). */
__attribute__((target("avx"))) static __m128 hist_narrow(__m256d mask)
{
    const __m256 f = _mm256_castpd_ps(mask);
    return _mm_shuffle_ps(_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1), _MM_SHUFFLE(2, 0, 2, 0));
}
__attribute__((target("avx"))) static __m128 hist_select4(__m128 mask, __m128 yes, __m128 no)
{
    return _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no));
}
__attribute__((target("avx"))) static void hist_fast_f64_avx(const dr_hist_plan_t *h, const double *v, size_t m,
                                                              int32_t *slot)
{
    const __m256d first = _mm256_set1_pd(h->first), last = _mm256_set1_pd(h->last), scale = _mm256_set1_pd(h->scale);
    const __m256d lo = _mm256_set1_pd(h->margin), hi = _mm256_set1_pd(1.0 - h->margin);
    const __m256d bins_d = _mm256_set1_pd((double)h->bins);
    const int32_t bins = (int32_t)h->bins;
    const __m128 below_s = _mm_castsi128_ps(_mm_set1_epi32(bins)), above_s = _mm_castsi128_ps(_mm_set1_epi32(bins + 1));
    const __m128 nan_s = _mm_castsi128_ps(_mm_set1_epi32(bins + 2)), near_s = _mm_castsi128_ps(_mm_set1_epi32(-1));
    size_t i = 0;
    for (; m - i >= 4; i += 4) {
        const __m256d x = _mm256_loadu_pd(v + i);
        const __m256d below = _mm256_cmp_pd(x, first, _CMP_LT_OQ), above = _mm256_cmp_pd(x, last, _CMP_GT_OQ);
        const __m256d in = _mm256_and_pd(_mm256_cmp_pd(x, first, _CMP_GE_OQ), _mm256_cmp_pd(x, last, _CMP_LE_OQ));
        const __m256d ff = _mm256_and_pd(in, _mm256_mul_pd(_mm256_sub_pd(x, first), scale)); /* 0.0 outside */
        const __m128i b = _mm256_cvttpd_epi32(ff);
        const __m256d bd = _mm256_cvtepi32_pd(b), fr = _mm256_sub_pd(ff, bd);
        const __m256d inner = _mm256_and_pd(_mm256_cmp_pd(fr, lo, _CMP_GT_OQ), _mm256_cmp_pd(fr, hi, _CMP_LT_OQ));
        const __m256d ok = _mm256_and_pd(_mm256_and_pd(in, _mm256_cmp_pd(bd, bins_d, _CMP_LT_OQ)), inner);
        __m128 s = hist_select4(hist_narrow(above), above_s, nan_s);
        s = hist_select4(hist_narrow(below), below_s, s);
        s = hist_select4(hist_narrow(in), near_s, s);
        s = hist_select4(hist_narrow(ok), _mm_castsi128_ps(b), s);
        _mm_storeu_si128((__m128i *)(void *)(slot + i), _mm_castps_si128(s));
    }
    _mm256_zeroupper();
    hist_fast_f64_scalar(h, v + i, m - i, slot + i);
}
DR_LANES_VERSION(avx, __attribute__((target("avx"))), __m256d, 4, _mm256_loadu_pd, A_LD32, _mm256_storeu_pd,
                 _mm256_set1_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, _mm256_min_pd, _mm256_max_pd, f16c,
                 avx)

static const dr_cpu_lanes_t *const versions[] = {&lanes_portable, &lanes_sse2, &lanes_avx, NULL};
#else
static const dr_cpu_lanes_t *const versions[] = {&lanes_portable, NULL};
#endif

#if DR_LANES_X86
/* F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c". */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
}
#endif

int dr_cpu_lanes_runs(const dr_cpu_lanes_t *lanes)
{
#if DR_LANES_X86
    if (lanes == &lanes_avx) return __builtin_cpu_supports("avx") && has_f16c();
#endif
    for (int i = 0; versions[i]; ++i)
        if (lanes == versions[i]) return 1;
    return 0;
}

const dr_cpu_lanes_t *dr_cpu_lanes_at(int i)
{
    return i >= 0 && i < (int)(sizeof versions / sizeof versions[0]) ? versions[i] : NULL;
}

/* The version in use: chosen once (pthread_once), replaced only by dr_cpu_lanes_use; atomic, so that a reader on a
 * worker thread never races the replacement. */
static _Atomic(const dr_cpu_lanes_t *) active;
static pthread_once_t active_once = PTHREAD_ONCE_INIT;

static void choose_widest(void)
{
#if DR_LANES_X86
    __builtin_cpu_init();
#endif
    const dr_cpu_lanes_t *widest = versions[0];
    for (int i = 0; versions[i]; ++i)
        if (dr_cpu_lanes_runs(versions[i])) widest = versions[i];
    atomic_store(&active, widest);
}

const dr_cpu_lanes_t *dr_cpu_lanes(void)
{
    pthread_once(&active_once, choose_widest);
    return atomic_load_explicit(&active, memory_order_relaxed);
}

int dr_cpu_lanes_use(const dr_cpu_lanes_t *lanes)
{
    pthread_once(&active_once, choose_widest);
    if (!lanes || !dr_cpu_lanes_runs(lanes)) return -1;
    atomic_store(&active, lanes);
    return 0;
}
