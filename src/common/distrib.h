/* The arithmetic of histograms and quantiles (include/dreduce.h, "Distributions"), shared by the CUDA kernels
 * (kernels/distrib.cu), the CPU backend (src/lib/cpu_distrib.c) and the library's driver (src/lib/distrib.c), so
 * that every backend puts every element in the same bin and reads the same key. Plain C, also included by CUDA.
 *
 * Histograms are NumPy's (numpy/lib/_histograms_impl.py, NumPy 2): NumPy picks a bin type (the data's float type;
 * float64 for integers), rounds the range to it, makes the edges with np.linspace, estimates each element's index
 * as ((x - first) / (last - first)) * bins in NumPy's arithmetic, and then corrects the estimate by one against the
 * edges (an element below its bin's left edge goes down one, one at or past the next edge up one, the last bin
 * closed). The estimate's arithmetic is reproduced here to the rounding, since the correction moves only by one:
 * where NumPy's estimate is off by more (float16 with thousands of bins), NumPy's answer is what that arithmetic
 * gives, and so is ours. Where NumPy's difference x - first overflows the bin type (np.histogram then raises
 * IndexError), the edges decide (dr_hist_search).
 *
 * Quantiles select by key: each element maps to an unsigned key whose order is NumPy's sort order (-inf < ... <
 * -0.0 == +0.0 < ... < +inf; NaN is counted apart), a radix select finds the keys at given ranks digit by digit,
 * and the key maps back to the element's value. */
#ifndef DREDUCE_DISTRIB_H
#define DREDUCE_DISTRIB_H

#include <stdint.h>

#include "accum.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- IEEE arithmetic, rounded once per operation (no contraction into an FMA, which NumPy never does) ---- */
#ifdef __CUDA_ARCH__
DR_HD float dr_fsub(float a, float b) { return __fsub_rn(a, b); }
DR_HD float dr_fmul(float a, float b) { return __fmul_rn(a, b); }
DR_HD float dr_fdiv(float a, float b) { return __fdiv_rn(a, b); }
DR_HD double dr_dsub(double a, double b) { return __dsub_rn(a, b); }
DR_HD double dr_dadd(double a, double b) { return __dadd_rn(a, b); }
DR_HD double dr_dmul(double a, double b) { return __dmul_rn(a, b); }
DR_HD double dr_ddiv(double a, double b) { return __ddiv_rn(a, b); }
#else
DR_HD float dr_fsub(float a, float b) { return a - b; }
DR_HD float dr_fmul(float a, float b) { return a * b; }
DR_HD float dr_fdiv(float a, float b) { return a / b; }
DR_HD double dr_dsub(double a, double b) { return a - b; }
DR_HD double dr_dadd(double a, double b) { return a + b; }
DR_HD double dr_dmul(double a, double b) { return a * b; }
DR_HD double dr_ddiv(double a, double b) { return a / b; }
#endif

/* A float rounded to the nearest binary16 value (ties to even; overflow to inf), returned as a float: NumPy's
 * float16 arithmetic computes in float32 and rounds so after every operation, and float32's 24 bits (>= 2 * 11 + 2)
 * make that double rounding exact for +, -, * and /. */
DR_HD float dr_round_f16(float x)
{
    const uint32_t b = dr_f32_to_bits(x), sign = b & 0x80000000u, mag = b & 0x7fffffffu;
    if (mag >= 0x7f800000u) return x;                              /* inf, NaN */
    if (mag >= 0x477ff000u) return dr_bits_to_f32(sign | 0x7f800000u); /* >= 65520: past the largest half */
    if (mag < 0x38800000u) {                                       /* below 2^-14: a subnormal half, step 2^-24 */
        const float a = dr_bits_to_f32(mag);
        const float scaled = a * 16777216.0f;                       /* exact: a power of two */
        float r = (float)(int32_t)scaled;                           /* truncated, then to nearest even */
        const float frac = scaled - r;
        if (frac > 0.5f || (frac == 0.5f && ((int32_t)r & 1))) r += 1.0f;
        return dr_bits_to_f32(sign | dr_f32_to_bits(r / 16777216.0f));
    }
    /* Normal: keep 11 significant bits of 24, round the 13 dropped to nearest even. */
    const uint32_t keep = mag >> 13, rest = mag & 0x1fffu;
    uint32_t r = keep + (rest > 0x1000u || (rest == 0x1000u && (keep & 1u)));
    return dr_bits_to_f32(sign | (r << 13));
}

/* ---- Histograms ---- */

/* NumPy's bin type: the data's float type (bfloat16 as float32: dreduce histograms bfloat16 as its float32
 * values), float64 for integers. */
typedef enum { DR_HT_F16 = 0, DR_HT_F32, DR_HT_F64 } dr_hist_type_t;

#define DR_HIST_BELOW (-1)
#define DR_HIST_ABOVE (-2)
#define DR_HIST_NAN (-3)

/* Everything an element's bin depends on besides the edges (made by dr_hist_plan, src/lib/distrib.c). */
typedef struct {
    int32_t type;    /* dr_hist_type_t */
    int32_t in_type; /* 1: the estimate in the bin type throughout (NumPy with the automatic range of float data,
                        where first and last are NumPy scalars of the data's type); 0: the difference in the bin
                        type, then divided and scaled in float64 (an explicit range, whose ends are Python floats) */
    uint32_t bins;
    uint32_t pad;
    double first, last; /* the outer edges as the bin type holds them: elements outside are below / above */
    double denom;       /* last - first as NumPy computes it: in the bin type (in_type), else in float64 */
    double bins_t;      /* bins in the bin type (in_type: float16 rounds above 2048) */
    double scale;       /* bins / denom in float64: the fast estimate's factor */
    int32_t exact_estimate; /* 1: estimate with NumPy's own arithmetic (below); 0: (x - first) * scale */
    int32_t place_shift;    /* >= 0: integer data in bins 2^place_shift wide whose estimate is exact, so the bin
                               is the integer (x - first) >> place_shift (the kernels); -1: not so. Read only where
                               margin is -1, so that a zeroed plan never takes it */
    double margin;      /* fast estimate: a fraction of a bin farther than this from a whole number is that bin
                           without looking at the edges (1: always look; -1: never, the estimate being the
                           element's exact place: integer data in bins a power of two wide, hist_place_exact) */
} dr_hist_plan_t;

/* Why two estimates. NumPy's answer is its estimate corrected by one step against the edges, which is the bin the
 * edges define (edges[i] <= x < edges[i + 1]) whenever its estimate is within one bin of that; so is ours, from
 * any estimate within one bin. Where NumPy's arithmetic is fine enough for that (its relative error, a few units of
 * the bin type's last place, times bins, well under a bin: every float64 and integer histogram, float32 up to 2^20
 * bins, float16 below 256 bins) the kernels take (x - first) * scale, a subtraction and a multiplication; where it
 * is not (float16 with many bins, a range whose width overflows, a range narrow beside its magnitude), they
 * reproduce NumPy's estimate to the rounding, divisions included, so that the correction lands where NumPy's does.
 * hist_plan decides (src/lib/distrib.c).
 *
 * Most elements need not look at the edges at all: the edges differ from first + i / scale by their rounding (a few
 * units of the bin type's last place of the range's ends), and the fast estimate from the element's true place by
 * its own rounding; both, in bins, make `margin`. An estimate whose fraction is farther than that from a whole
 * number lies strictly between the same two edges as the element, so its bin is the estimate's; the others (near
 * an edge: a fraction of a percent) are corrected against the edges as NumPy corrects. */

/* The estimate truncated as NumPy's astype(intp), kept inside 0..bins-1 (where NumPy's estimate cannot leave it but
 * by an overflow of its own, we still never index outside the edges), then NumPy's step down at `bins`. */
DR_HD int64_t dr_hist_trunc(double f, uint32_t bins)
{
    int64_t i = f >= 0 && f < 4294967296.0 ? (int64_t)f : 0;
    if (i >= (int64_t)bins) i = (int64_t)bins - 1;
    return i;
}

/* NumPy's correction against the edges, in the bin type (edges of float16 and float32 held as float). */
#define DR_HIST_CORRECT(i, x, edges, bins)                                                                      \
    do {                                                                                                       \
        if ((x) < (edges)[i]) --(i);                                                                           \
        if ((i) != (int64_t)(bins) - 1 && (x) >= (edges)[(i) + 1]) ++(i);                                      \
    } while (0)

/* The bin the edges define for x inside the range: the last i < bins with edges[i] <= x (the last bin closed). An
 * element whose x - first overflows the bin type (a float16 range wider than 65504, a float32 or bfloat16 one wider
 * than FLT_MAX) takes it: NumPy's estimate is then infinite, and np.histogram raises IndexError indexing its edges
 * with the integer conversion of inf; dreduce answers by the edges, whose bins are well defined there. */
DR_HD int64_t dr_hist_search(const float *edges, uint32_t bins, float x)
{
    uint32_t lo = 0, hi = bins - 1; /* edges[lo] <= x throughout: edges[0] is first */
    while (lo < hi) {
        const uint32_t mid = hi - (hi - lo) / 2;
        if (edges[mid] <= x) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Where float16's difference x - first (exact in float32) rounds to inf as a float16. */
#define DR_F16_DIFF_OVERFLOWS(d) ((d) >= 65520.0f)

/* The bin of x, a value of a float16 (held as float), float32 or float64 array; DR_HIST_* outside the bins. */
DR_HD int64_t dr_hist_bin_f16(const dr_hist_plan_t *p, const float *edges, float x)
{
    if (x != x) return DR_HIST_NAN;
    const float first = (float)p->first;
    if (x < first) return DR_HIST_BELOW;
    if (x > (float)p->last) return DR_HIST_ABOVE;
    const float d32 = dr_fsub(x, first); /* exact in float32 for halves but far apart (a rounding NumPy's float16
                                             loop, in float32, makes too); overflows as a half exactly where NumPy's
                                             difference does */
    double f;
    if (!p->exact_estimate) {
        const float ff = dr_fmul(d32, (float)p->scale);
        const int32_t i = (int32_t)ff;
        const float fr = ff - (float)i;
        if (fr > (float)p->margin && fr < 1.0f - (float)p->margin && i < (int32_t)p->bins) return i;
        f = (double)ff; /* within one bin of the edges' bin, also where NumPy's float16 difference overflows */
    } else {
        if (DR_F16_DIFF_OVERFLOWS(d32)) return dr_hist_search(edges, p->bins, x);
        const float d = dr_round_f16(d32);
        f = p->in_type ? (double)dr_round_f16(dr_fmul(dr_round_f16(dr_fdiv(d, (float)p->denom)), (float)p->bins_t))
                       : dr_dmul(dr_ddiv((double)d, p->denom), (double)p->bins);
    }
    int64_t i = dr_hist_trunc(f, p->bins);
    DR_HIST_CORRECT(i, x, edges, p->bins);
    return i;
}

DR_HD int64_t dr_hist_bin_f32(const dr_hist_plan_t *p, const float *edges, float x)
{
    if (x != x) return DR_HIST_NAN;
    const float first = (float)p->first;
    if (x < first) return DR_HIST_BELOW;
    if (x > (float)p->last) return DR_HIST_ABOVE;
    const float d = dr_fsub(x, first);
    if (d > 3.40282347e38f) return dr_hist_search(edges, p->bins, x); /* inf (hist_plan: the exact estimate then) */
    double f;
    if (!p->exact_estimate) {
        const float ff = dr_fmul(d, (float)p->scale);
        const int32_t i = (int32_t)ff;
        const float fr = ff - (float)i;
        if (fr > (float)p->margin && fr < 1.0f - (float)p->margin && i < (int32_t)p->bins) return i;
        f = (double)ff;
    } else
        f = p->in_type ? (double)dr_fmul(dr_fdiv(d, (float)p->denom), (float)p->bins_t)
                        : dr_dmul(dr_ddiv((double)d, p->denom), (double)p->bins);
    int64_t i = dr_hist_trunc(f, p->bins);
    DR_HIST_CORRECT(i, x, edges, p->bins);
    return i;
}

/* float64 data, and integers (x their float64 conversion, as NumPy's astype: rounded above 2^53). */
DR_HD int64_t dr_hist_bin_f64(const dr_hist_plan_t *p, const double *edges, double x)
{
    if (x != x) return DR_HIST_NAN;
    if (x < p->first) return DR_HIST_BELOW;
    if (x > p->last) return DR_HIST_ABOVE;
    double f;
    if (!p->exact_estimate) {
        f = dr_dmul(dr_dsub(x, p->first), p->scale);
        const int32_t i = (int32_t)f;
        const double fr = f - (double)i;
        if (fr > p->margin && fr < 1.0 - p->margin && i < (int32_t)p->bins) return i;
    } else {
        f = dr_dmul(dr_ddiv(dr_dsub(x, p->first), p->denom), (double)p->bins);
    }
    int64_t i = dr_hist_trunc(f, p->bins);
    DR_HIST_CORRECT(i, x, edges, p->bins);
    return i;
}

/* ---- Order keys ---- */

/* Key bits per dtype: the element's width. */
DR_HD int dr_key_bits(dr_dtype_t t)
{
    switch (t) {
    case DR_INT8: case DR_UINT8: return 8;
    case DR_INT16: case DR_UINT16: case DR_FLOAT16: case DR_BFLOAT16: return 16;
    case DR_INT32: case DR_UINT32: case DR_FLOAT32: return 32;
    default: return 64;
    }
}

/* Float bits (w = 16, 32, 64 wide, sign bit s) to a key: NaN to the largest key (the caller counts NaN apart
 * first), -0 to +0's key, negatives reversed below the positives. */
#define DR_FLOAT_KEY(bits, s, abs_mask, inf_bits, all)                                                          \
    (((bits) & (abs_mask)) > (inf_bits) ? (all)                                                                \
     : ((bits) & (abs_mask)) == 0       ? (s)                                                                  \
     : ((bits) & (s))                   ? (~(bits) & (all))                                                    \
                                        : ((bits) | (s)))

DR_HD uint64_t dr_key_f64(uint64_t b)
{
    return DR_FLOAT_KEY(b, 0x8000000000000000ull, 0x7fffffffffffffffull, 0x7ff0000000000000ull, ~0ull);
}
DR_HD uint32_t dr_key_f32(uint32_t b) { return DR_FLOAT_KEY(b, 0x80000000u, 0x7fffffffu, 0x7f800000u, 0xffffffffu); }
DR_HD uint32_t dr_key_f16(uint32_t b) { return DR_FLOAT_KEY(b, 0x8000u, 0x7fffu, 0x7c00u, 0xffffu); }
DR_HD uint32_t dr_key_bf16(uint32_t b) { return DR_FLOAT_KEY(b, 0x8000u, 0x7fffu, 0x7f80u, 0xffffu); }

/* A key back to its float bits (the key of +0 gives +0). */
DR_HD uint64_t dr_key_float_bits(uint64_t key, int bits)
{
    const uint64_t s = 1ull << (bits - 1), all = bits == 64 ? ~0ull : (1ull << bits) - 1;
    return (key & s) ? (key & ~s) : (~key & all);
}

/* ---- Quantiles: NumPy's method "linear" ---- */

/* The 0-based ranks of the order statistics np.quantile interpolates between for q of n elements, and its
 * weight: virtual index v = (n - 1) q; at or past the last index both ranks are n - 1 and NumPy's weight is
 * v - (-1) (its index -1), else floor(v) and floor(v) + 1 with weight v - floor(v). n >= 1, q in [0, 1]. */
DR_HD void dr_quantile_ranks(uint64_t n, double q, uint64_t *lower, uint64_t *upper, double *gamma)
{
    const double v = dr_dmul((double)(n - 1), q), last = (double)(n - 1);
    if (v >= last) {
        *lower = *upper = n - 1;
        *gamma = dr_dsub(v, -1.0);
        return;
    }
    const double f = (double)(uint64_t)v; /* v >= 0: floor */
    *lower = (uint64_t)f;
    *upper = *lower + 1;
    *gamma = dr_dsub(v, f);
}

/* NumPy's _lerp: a + (b - a) t, computed from b as b - (b - a)(1 - t) where t >= 0.5. */
DR_HD double dr_quantile_lerp(double a, double b, double t)
{
    const double d = dr_dsub(b, a);
    if (t >= 0.5) return dr_dsub(b, dr_dmul(d, dr_dsub(1.0, t)));
    return dr_dadd(a, dr_dmul(d, t));
}

/* The digits of a radix select over keys of `bits` bits: passes of at most DR_SELECT_DIGIT_MAX bits, the widths
 * as even as they can be (32 bits: 11, 11, 10), so that a pass's histogram stays small enough for shared memory. */
#define DR_SELECT_DIGIT_MAX 11
#define DR_SELECT_MAX_PASSES 6
DR_HD int dr_select_passes(int bits) { return (bits + DR_SELECT_DIGIT_MAX - 1) / DR_SELECT_DIGIT_MAX; }
DR_HD int dr_select_width(int bits, int pass)
{
    const int p = dr_select_passes(bits);
    return bits / p + (pass < bits % p);
}

/* The place of a quantile pilot's sample element i, in the stride elements from i * stride (src/lib/distrib.c, "The
 * pilot"): a mix of i's bits picks it, so that data with a period in step with the stride is not sampled at one
 * phase of it. */
DR_HD uint64_t dr_pilot_pos(uint64_t i, uint64_t stride)
{
    uint64_t z = i + 0x9e3779b97f4a7c15ull; /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return i * stride + z % stride;
}

/* ---- One counting pass (a backend's part of a histogram or of one radix-select digit) ---- */

/* Prefixes one digit pass counts at once: two per quantile asked for (DREDUCE_MAX_Q), in ascending order. */
#define DR_SELECT_MAX_GROUPS 128

typedef enum { DR_COUNT_HIST = 0, DR_COUNT_DIGIT, DR_COUNT_RANGE } dr_count_kind_t;

/* What a pass counts. The counts a pass adds to (uint64 each), for `dr_count_words` of them:
 *   HIST:  counts[0..bins) per bin, then below, above, NaN;
 *   DIGIT: counts[g << width | digit] for each prefix group g and digit value, then NaN (every pass counts them; the
 *          select needs only the first pass's). An element is in group g when its key's bits above
 *          shift + width equal prefix[g] (every element when resolved is 0);
 *   RANGE: a quantile's pilot pass (src/lib/distrib.c, "The pilot"): `groups` key intervals [prefix[i],
 *          prefix[groups + i]], ascending and disjoint; counts[i] the elements in interval i (in play: a keeping
 *          pass keeps them), counts[groups + j] those in the gap below interval j (j = groups: above the last),
 *          then NaN. */
typedef struct {
    int32_t kind;     /* dr_count_kind_t */
    int32_t dtype;    /* dr_dtype_t */
    dr_hist_plan_t hist;
    int32_t shift, width, resolved, groups;
    uint64_t keep_pad; /* a digit pass that keeps its elements in play (kernels/count.h): the raw bits of an element
                          in play in no later pass, to pad with */
    uint64_t prefix[DR_SELECT_MAX_GROUPS];
} dr_count_pass_t;

DR_HD uint64_t dr_count_words(const dr_count_pass_t *p)
{
    if (p->kind == DR_COUNT_RANGE) return 2 * (uint64_t)p->groups + 2;
    return p->kind == DR_COUNT_HIST ? (uint64_t)p->hist.bins + 3 : ((uint64_t)p->groups << p->width) + 1;
}

/* Up to this many intervals of a RANGE pass, a key's is found by sums over all their ends, which read every end in
 * the same order for every key: a GPU warp's lanes read the same one at once (a constant-cache broadcast, where a
 * binary search's lanes read different ones, one at a time), and a CPU block's compares vectorize
 * (src/lib/cpu_count.c, which finds a digit pass's group among up to this many prefixes the same way). Past it, a
 * binary search. A GPU digit pass keeps dr_count_group's search: the sums took its kernel from 52-56 registers to
 * 67-74 (one block a multiprocessor, where it had two). */
#define DR_COUNT_SCAN_MAX 32

/* A key's slot in a RANGE pass (the caller counts NaN apart): its interval's, or its gap's. With j intervals
 * starting at or below the key and e ending below it, the key is in interval j - 1 where e < j, else in gap j. */
DR_HD uint32_t dr_count_range_slot(const dr_count_pass_t *p, uint64_t key)
{
    const int k = p->groups;
    uint32_t j = 0;
    if (k <= DR_COUNT_SCAN_MAX) {
        uint32_t e = 0;
        for (int g = 0; g < k; ++g) {
            j += p->prefix[g] <= key;
            e += p->prefix[k + g] < key;
        }
        return e < j ? j - 1 : (uint32_t)k + j;
    }
    uint32_t hi = (uint32_t)k; /* a binary search over the ascending starts */
    while (j < hi) {
        const uint32_t mid = (j + hi) >> 1;
        if (p->prefix[mid] <= key) j = mid + 1;
        else hi = mid;
    }
    return j > 0 && key <= p->prefix[k + j - 1] ? j - 1 : (uint32_t)k + j;
}

/* The group of a key in a digit pass (-1: not in play), and its digit. */
DR_HD int dr_count_group(const dr_count_pass_t *p, uint64_t key)
{
    if (p->resolved == 0) return 0;
    const uint64_t top = key >> (p->shift + p->width); /* shift + width < 64 once a digit is resolved */
    if (p->groups <= 4) {
        for (int g = 0; g < p->groups; ++g)
            if (top == p->prefix[g]) return g;
        return -1;
    }
    int lo = 0, hi = p->groups - 1; /* prefixes ascending: a binary search */
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (p->prefix[mid] < top) lo = mid + 1;
        else hi = mid;
    }
    return p->prefix[lo] == top ? lo : -1;
}

DR_HD uint32_t dr_count_digit(const dr_count_pass_t *p, uint64_t key)
{
    return (uint32_t)(key >> p->shift) & ((1u << p->width) - 1u);
}

#ifdef __cplusplus
}
#endif
#endif
