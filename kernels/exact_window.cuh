/* The first level of the exact-sum kernel (kernels/exact.cu): what one thread does with the elements it reads, until
 * they are integers in its warp's 68 words (a dr_exact_t's words, src/common/accum.h "Exact sums"). Host and
 * device code alike, so tests/unit/test_exact_window.cu runs every branch of it on the CPU (CI has no GPU) against
 * accum.h's dr_exact_add_f64.
 *
 * The cost that matters is per element: the H200 issues about 16.7 T integer operations a second, so a float32 read
 * at 4.6 TB/s leaves about 14 integer operations per element and a float64 about 29. The first kernel split every
 * element into 32-bit digits in registers (about 40 integer operations each) and ran at 37% (float32) and 68-75%
 * (float64) of `wide`'s bandwidth. Here the common element costs a handful of integer operations and a few float64
 * additions, which run on their own pipe, and are exact by construction:
 *
 *   The window. A thread keeps a window of binades, biased exponents lo .. lo + span - 1 (span: kSpan of the
 *   family, below), and the elements there (and zeros, which add nothing) take the fast path; the others (misses)
 *   the slow one. A round (the elements of one loop trip, at most kMaxRound of them) adds the fast ones into float64
 *   accumulators, exactly:
 *   - float32 family (float32, float16, bfloat16, each widened to float64 exactly): acc += (double)x. With kFrac
 *     fraction bits and exponent bias kBias, each x is a multiple of u = 2^(lo - kBias - kFrac) below
 *     2^(span + kFrac) u, so the round's sum, and every partial sum in any order, stays below
 *     kMaxRound 2^(span + kFrac) u <= 2^53 u (DR_XW_ROUND_EXACT): a float64, no add rounds. bfloat16's 7 fraction
 *     bits allow a window of 40 binades; float16's window is all of its 30 binades (and its subnormals, multiples of
 *     binade 1's unit 2^-24), fixed, so only infinities and NaNs miss.
 *   - float64: each x (|x| < 2^T, T = lo + span - 1023) is split without error at sigma = 2^(T + kSplit) (Rump,
 *     Ogita and Oishi, "Accurate floating-point summation part I", SIAM J. Sci. Comput. 31(1), 2008, Lemma 3.2,
 *     ExtractScalar): q = (sigma + x) - sigma and r = x - q, both computed exactly, x = q + r, q a multiple of
 *     2^(T + kSplit - 53) and |r| <= 2^(T + kSplit - 53). acc_h += q: fewer than 2^kSplit / 2 terms of magnitude at
 *     most 2^T (1 + 2^-48) stay below 2^(T + kSplit) = 2^53 units of q. acc_l += r: r is a multiple of x's unit,
 *     at least u = 2^(lo - 1075), and kMaxRound terms below 2^(T + kSplit - 53) stay below
 *     2^(span + kSplit + 3 - 1) u <= 2^53 u (span + kSplit + log2 kMaxRound < 54). No add rounds.
 *   At the round's end (dr_xw_spill) each accumulator, scaled by a power of two to its unit, is an integer below 2^53
 *   and goes, as an int64, into V: a 128-bit two's-complement integer in registers with its unit at 2^(pos - 1074)
 *   (pos: the window's lowest unit in accum.h's units of 2^-1074; acc_h's unit is 2^(span + kSplit - 1) of those).
 *
 *   float16 and bfloat16 test a round, not each element (dr_xw_round_fast): all 32 are added into two chains, and
 *   the round's largest and smallest nonzero magnitudes, gathered two 16-bit halves an instruction, are checked
 *   against the window once; a round that fails is added again element by element. float32 and float64 test
 *   each element, its add predicated on the test.
 *
 *   A miss (an element outside the window, an infinity or a NaN, a float64, float32 or bfloat16 subnormal) is rare
 *   for most data, and nearly every element of data spread over more binades than a window holds. The round is
 *   spilled first; then float64 adds each missed element straight into the warp's words (accum.h's
 *   dr_exact_split_f64: three digits), float32 each into one of 11 float64 bins of 24 binades (dr_xw_fbin_add, in
 *   an unrolled pass over the round, dr_xw_round_fbinned), which go into the words at least every 64 misses, and
 *   bfloat16 puts its misses, unrolled and without a branch per element, into 8 integer bins of 32 binades each
 *   (dr_xw_round_binned), which go into the words at the thread's end; infinities and NaNs set flags. Then the
 *   window moves to the round's last finite miss (it becomes the window's top if it was above, its bottom if
 *   below), after V is flushed into the warp's words at the old position. So a round flushes at most once, and
 *   data whose exponents drift (sorted, or scaled by position) keep hitting.
 *
 *   A flush (dr_xw_flush) shifts V by pos mod 32 into five 32-bit limbs and adds them into words pos / 32 .. + 4:
 *   four digits below 2^32 and a signed top limb.
 *
 * Bounds (the kernel gives a thread at most 2^23 + 10 elements: exact.cu): what V holds is a sum of elements in
 * V's unit, each below 2^92 of it (float64: 2^(span + 52); float32 family: 2^(span + kFrac) <= 2^48), so
 * |V| < 2^116 (float32 family: 2^72) and shifted by 31 it is below 2^147: the top limb is below 2^19 in magnitude.
 * A word of the warp's takes, per lane, at most one flush per round plus one direct add per element or bin (a
 * float64 bin's flush, every 64 misses, adds to a word from at most 4 bins) plus the last flush: fewer than 2^25
 * adds of less than 2^32, so with 32 lanes fewer than DR_EXACT_ADDS (2^30): no word overflows. Words:
 * pos / 32 + 4 <= 66 (float64's window tops out at lo = 2001, float32's at 230, bfloat16's at 215; the bins' top
 * limbs reach word 38). */
#ifndef DREDUCE_KERNELS_EXACT_WINDOW_CUH
#define DREDUCE_KERNELS_EXACT_WINDOW_CUH

#include <stdint.h>
#include <string.h>
#include <vector_types.h>

#include "accum.h"

/* Float64 operations rounded to nearest and never fused (the proofs above count each rounding). On the host,
 * x86-64's SSE2 arithmetic is that already (there is no multiply-add here to contract). */
#if defined(__CUDA_ARCH__)
#define DR_XW_ADD(a, b) __dadd_rn(a, b)
#define DR_XW_SUB(a, b) __dsub_rn(a, b)
#define DR_XW_MUL(a, b) __dmul_rn(a, b)
#define DR_XW_TO_LL(a) __double2ll_rz(a)
#define DR_XW_FUNNEL(lo, hi, s) __funnelshift_l(lo, hi, s)
#define DR_XW_CTZ(x) (__ffs(x) - 1)
#define DR_XW_POPC(x) __popc(x)
#define DR_XW_UNROLL _Pragma("unroll")
#else
#define DR_XW_ADD(a, b) ((a) + (b))
#define DR_XW_SUB(a, b) ((a) - (b))
#define DR_XW_MUL(a, b) ((a) * (b))
#define DR_XW_TO_LL(a) ((long long)(a))
/* The high 32 bits of (hi:lo) << s, s in 0..31, as CUDA's __funnelshift_l. */
#define DR_XW_FUNNEL(lo, hi, s) ((s) ? ((hi) << (s)) | ((lo) >> (32u - (s))) : (hi))
#define DR_XW_CTZ(x) __builtin_ctz(x)
#define DR_XW_POPC(x) __builtin_popcount(x)
#define DR_XW_UNROLL
#endif

/* The element families: how an element reaches the window. The per-element path (dr_xw_try, the misses) reads a
 * float64's bits, a float32's, a bfloat16 as float32 bits (its 16 bits shifted up) and a float16 as its own 16 bits
 * (kExpShift: where the biased exponent sits in those bits). kBias and kFrac are the format's exponent bias and
 * fraction bits: binade e's elements are multiples of 2^(e - kBias - kFrac), subnormals of binade 1's unit. */
enum dr_xw_family { DR_XW_F64, DR_XW_F32, DR_XW_F16, DR_XW_BF16 };

template <int Family> struct dr_xw_traits;
template <> struct dr_xw_traits<DR_XW_F64> {
    static const int kSpan = 40;      /* binades in the window */
    static const int kSplit = 5;      /* sigma = 2^(T + kSplit) */
    static const int kMaxRound = 8;   /* elements a round adds before a spill: 4 vectors of 2 */
    static const int kExpShift = 20;  /* where the exponent sits in the high 32 bits */
    static const int kLoMax = 2001;   /* T + kSplit <= 1023: sigma is finite */
    static const int kLoInit = 1003;  /* the first window: [2^-20, 2^20) */
    static const int kBias = 1023, kFrac = 52, kExpInf = 0x7ff;
    static const int kElemBytes = 8;
    static const int kBins = 0;       /* no bins: a miss goes straight into the words */
    static const int kFBins = 0;
};
template <> struct dr_xw_traits<DR_XW_F32> {
    static const int kSpan = 25;
    static const int kSplit = 0;      /* no split */
    static const int kMaxRound = 16;  /* 4 vectors of 4 */
    static const int kExpShift = 23;
    static const int kLoMax = 230;    /* lo + span <= 255: infinities and NaNs never hit */
    static const int kLoInit = 115;   /* [2^-12, 2^13) */
    static const int kBias = 127, kFrac = 23, kExpInf = 0xff;
    static const int kElemBytes = 4;
    static const int kBins = 0;       /* no integer bins: float64 ones (below) */
    static const int kFBins = 11;     /* float64 bins of kFBinSpan binades, flushed before a round's misses would
                                         take them past kFBinFlush terms */
    static const int kFBinSpan = 24;
    static const int kFBinFlush = 64;
};
/* bfloat16: float32's exponents with 7 fraction bits, so a round of 32 fits in 53 bits with a window of 40 binades
 * (data whose magnitudes spread over 2^40 never miss). */
template <> struct dr_xw_traits<DR_XW_BF16> : dr_xw_traits<DR_XW_F32> {
    static const int kSpan = 40;
    static const int kMaxRound = 32;  /* 4 vectors of 8 */
    static const int kLoMax = 215;
    static const int kLoInit = 107;   /* [2^-20, 2^20) */
    static const int kFrac = 7;
    static const int kElemBytes = 2;
    static const int kBins = 8;       /* bins of 32 binades (below) */
    static const int kFBins = 0;
};
/* float16: the window is every binade, fixed (kLoMax = 1): every finite float16 is a multiple of 2^-24 below 2^16,
 * so a round of 32 stays below 2^45 units and only infinities and NaNs miss. */
template <> struct dr_xw_traits<DR_XW_F16> : dr_xw_traits<DR_XW_F32> {
    static const int kSpan = 30;      /* binades 1..30 (and the subnormals, in binade 1's unit) */
    static const int kMaxRound = 32;
    static const int kExpShift = 10;  /* the float16's own bits */
    static const int kLoMax = 1;
    static const int kLoInit = 1;
    static const int kBias = 15, kFrac = 10, kExpInf = 0x1f;
    static const int kElemBytes = 2;
    static const int kBins = 0;       /* only infinities and NaNs miss */
    static const int kFBins = 0;
};
static_assert(dr_xw_traits<DR_XW_F64>::kSpan + dr_xw_traits<DR_XW_F64>::kSplit + 3 < 54, "float64: acc_l exact");
static_assert(dr_xw_traits<DR_XW_F64>::kMaxRound < (1 << dr_xw_traits<DR_XW_F64>::kSplit) / 2 + 1,
              "float64: acc_h exact");
/* The float32 family: a round's elements are below 2^(span + kFrac) units each, their sum below 2^53 units. */
#define DR_XW_ROUND_EXACT(F) \
    (dr_xw_traits<F>::kMaxRound * (1ull << (dr_xw_traits<F>::kSpan + dr_xw_traits<F>::kFrac)) <= (1ull << 53))
static_assert(DR_XW_ROUND_EXACT(DR_XW_F32) && DR_XW_ROUND_EXACT(DR_XW_BF16) && DR_XW_ROUND_EXACT(DR_XW_F16),
              "float32 family: a round's sum is exact");
static_assert(dr_xw_traits<DR_XW_F32>::kLoMax + dr_xw_traits<DR_XW_F32>::kSpan <= 255 &&
                  dr_xw_traits<DR_XW_BF16>::kLoMax + dr_xw_traits<DR_XW_BF16>::kSpan <= 255 &&
                  dr_xw_traits<DR_XW_F16>::kLoMax + dr_xw_traits<DR_XW_F16>::kSpan <= 31,
              "no window reaches the infinities' exponent");

/* The bins (bfloat16): 8 signed 64-bit integers of the sink's (the kernel: the thread's column of shared memory)
 * that take a failed round's misses (dr_xw_round_binned). An element of biased exponent e (a subnormal: e = 1)
 * and significand m (8 bits, the implicit one included) is m 2^(e - 134); it goes into bin e / 32 as
 * m << (e mod 32), so bin k is in units of 2^(32 k - 134) and each term is below 2^40: the fewer than 2^24
 * elements a thread reads stay below 2^63, in any order. The bins go into the words once, at the thread's end
 * (dr_xw_bins_flush: three limbs each).
 *
 * The float64 bins (float32): 11 float64s of the sink's (the same column) that take each missed finite element as
 * it is found (dr_xw_fbin_add). Bin k takes the binades 24 k .. 24 k + 23, whose elements are multiples of
 * u_k = 2^(max(24 k, 1) - 150) below 2^47 u_k (a subnormal: below 2^23 u_0), so up to 64 of them, and every partial
 * sum of those, are integers in units of u_k below 2^53: float64 adds that never round. So before a round whose
 * misses would take them past 64 terms (kFBinFlush), the bins written since the last flush go into the words
 * (dr_xw_fbins_flush: each as an integer, in three limbs); a bin is not read before it is written after a flush, so
 * none is zeroed. The misses are found by an unrolled pass over the round (dr_xw_round_fbinned), which the kernel
 * runs outside its hot loop. On the H200, float32 spread over every binade: 519 GB/s when each miss went straight
 * into the words (three digits, a few 32-bit shared atomics each, which lanes contend for), 696 GB/s through these
 * bins found by a bit scan, 946 GB/s by the unrolled pass outside the loop (inside it, random data fell
 * from 94.6% of int32 sum's bandwidth to 86.8%). Tried and not kept: the flush inside the misses' loop, at each
 * 64th (336 GB/s); integer bins (a term is 2^16 times bfloat16's, so they too would need a flush every 2^8
 * elements), whose unrolled pass beside the hot loop ran random data at 23-44% (slower at 2^30: perhaps the lane
 * split that exact.cu's walk describes).
 * float64 has no bins: its 53-bit significands fit no small bin. */
static_assert(dr_xw_traits<DR_XW_BF16>::kFrac + 32 + 24 <= 63, "a bin's sum fits in 63 bits");
static_assert(dr_xw_traits<DR_XW_BF16>::kBins * 32 > 254, "every finite binade has a bin");
static_assert((dr_xw_traits<DR_XW_F32>::kFrac + 1 + dr_xw_traits<DR_XW_F32>::kFBinSpan - 1) +
                      6 /* log2 kFBinFlush */ <= 53 && dr_xw_traits<DR_XW_F32>::kFBinFlush == 64,
              "64 float64-bin terms sum exactly");
static_assert(dr_xw_traits<DR_XW_F32>::kFBins * dr_xw_traits<DR_XW_F32>::kFBinSpan > 254,
              "every finite binade has a float64 bin");
enum { DR_XW_MAX_BINS = 11 }; /* of either kind */

/* A thread's state. */
struct dr_xw_t {
    uint32_t v0, v1, v2, v3; /* V, two's complement, v0 lowest; unit 2^(pos - 1074) */
    int lo;                  /* the window's lowest biased exponent */
    uint32_t lo_bits;        /* lo << kExpShift: a magnitude's bits minus this, below span << kExpShift, hit */
    uint32_t top, bot;       /* bfloat16's round test, in its own 16 bits: every magnitude below top, and every
                                nonzero one minus 1 at least bot */
    double sigma;            /* float64: the split point 2^(T + kSplit) */
    double acc_h, acc_l;     /* the round's sums (float16 and bfloat16: acc_l in a scaled unit, dr_xw_spill) */
    uint32_t nonneg0;        /* nonzero once an element other than -0.0 was seen */
    uint32_t flags;          /* DR_EXACT_NAN / POS_INF / NEG_INF */
    uint32_t nans;           /* NaN elements seen (the NaN policy OMIT reports them; they all take the miss path) */
    uint32_t fbins_written;  /* float32: bit k, float64 bin k holds a value written since the last flush */
    uint32_t fbin_terms;     /* float32: terms in the float64 bins since the last flush */
};

/* 2^k as a float64, k in -1022..1023. */
DR_HD double dr_xw_pow2(int k) { return dr_bits_to_f64((uint64_t)(k + 1023) << 52); }

/* V's unit, in accum.h's units of 2^-1074: the unit of the window's lowest binade. */
template <int Family> DR_HD int dr_xw_pos(int lo)
{
    typedef dr_xw_traits<Family> T;
    return lo - T::kBias - T::kFrac + 1074;
}

template <int Family> DR_HD void dr_xw_set_window(dr_xw_t &w, int lo)
{
    typedef dr_xw_traits<Family> T;
    const int own_shift = Family == DR_XW_BF16 ? 7 : T::kExpShift; /* bfloat16's round test: its own bits */
    w.lo = lo;
    w.lo_bits = (uint32_t)lo << T::kExpShift;
    w.top = (uint32_t)(lo + T::kSpan) << own_shift;
    w.bot = ((uint32_t)lo << own_shift) - 1u;
    w.sigma = Family == DR_XW_F64 ? dr_xw_pow2(lo + T::kSpan - 1023 + T::kSplit) : 0.0;
}

/* An empty state and bins, the window at the family's kLoInit: data near 1 hit. */
template <int Family, class Sink> DR_HD void dr_xw_init(dr_xw_t &w, const Sink &sink)
{
    w.v0 = w.v1 = w.v2 = w.v3 = 0;
    w.acc_h = w.acc_l = 0.0;
    w.nonneg0 = 0;
    w.flags = 0;
    w.nans = 0;
    w.fbins_written = w.fbin_terms = 0;
    for (int k = 0; k < dr_xw_traits<Family>::kBins; ++k) sink.bin(k) = 0;
    dr_xw_set_window<Family>(w, dr_xw_traits<Family>::kLoInit);
}

/* A word += v, the word kept as two 32-bit halves (half 0 the low one; read together, little-endian, as the
 * int64 hi 2^32 + lo), for |v| < 2^32 (every add a sink takes) and a word below 2^62 in magnitude: v's low 32
 * bits into the low half with an add that returns the half's old value (add32(0, x)), so its carry out is known,
 * then v's high 32 bits (0 or all ones) plus that carry into the high half (add32(1, x)), only if nonzero. Each
 * wrap of the low half carries once, by the add that caused it, so once every add is done the halves hold the
 * word's value whatever the order of the adds (the kernel: 32-bit shared atomics from 32 lanes). */
template <class Add32> DR_HD void dr_xw_add_halves(long long v, const Add32 &add32)
{
    const uint32_t lo = (uint32_t)v;
    uint32_t hi = (uint32_t)((unsigned long long)v >> 32);
    if (lo) {
        const uint32_t old = add32(0, lo);
        hi += (uint32_t)(old + lo < old);
    }
    if (hi) add32(1, hi);
}

/* V += (int64) a, sign-extended. */
DR_HD void dr_xw_add64(dr_xw_t &w, long long a)
{
    const uint64_t u = (uint64_t)a, ext = (uint64_t)(a >> 63);
    const uint64_t lo = ((uint64_t)w.v1 << 32 | w.v0) + u;
    const uint64_t carry = lo < u;
    const uint64_t hi = ((uint64_t)w.v3 << 32 | w.v2) + ext + carry;
    w.v0 = (uint32_t)lo, w.v1 = (uint32_t)(lo >> 32), w.v2 = (uint32_t)hi, w.v3 = (uint32_t)(hi >> 32);
}

/* V += a 2^s for |a| < 2^53, s in 1..63: a's two's-complement 128-bit shift, two 64-bit halves. */
DR_HD void dr_xw_add_shifted(dr_xw_t &w, long long a, int s)
{
    const uint64_t lo_add = (uint64_t)a << s;
    const uint64_t hi_add = (uint64_t)(a >> (64 - s)); /* arithmetic: the sign comes along */
    const uint64_t lo = ((uint64_t)w.v1 << 32 | w.v0) + lo_add;
    const uint64_t carry = lo < lo_add;
    const uint64_t hi = ((uint64_t)w.v3 << 32 | w.v2) + hi_add + carry;
    w.v0 = (uint32_t)lo, w.v1 = (uint32_t)(lo >> 32), w.v2 = (uint32_t)hi, w.v3 = (uint32_t)(hi >> 32);
}

/* a 2^k as an int64, for an accumulator a that becomes an integer below 2^53 so: the scale may pass float64's range,
 * so it is applied in two halves (each product lies between a and the integer, so neither overflows nor loses a
 * bit). */
DR_HD long long dr_xw_unscale(double a, int k)
{
    return DR_XW_TO_LL(DR_XW_MUL(DR_XW_MUL(a, dr_xw_pow2(k / 2)), dr_xw_pow2(k - k / 2)));
}

/* The round's accumulators into V; they restart at zero. */
template <int Family> DR_HD void dr_xw_spill(dr_xw_t &w)
{
    typedef dr_xw_traits<Family> T;
    if (Family == DR_XW_F64) {
        /* acc_h's unit is 2^(T + kSplit - 53), acc_l's 2^(lo - 1075): scaled by the inverse, each is an integer
         * below 2^53 */
        const int kh = 1076 - T::kSplit - T::kSpan - w.lo, kl = 1075 - w.lo;
        const long long ih = dr_xw_unscale(w.acc_h, kh), il = dr_xw_unscale(w.acc_l, kl);
        dr_xw_add64(w, il);
        dr_xw_add_shifted(w, ih, T::kSpan + T::kSplit - 1);
    } else if (Family == DR_XW_F16 || Family == DR_XW_BF16) {
        /* acc_h's unit is 2^(lo - kBias - kFrac), acc_l's that scaled by 2^(kBias - 1023) (dr_xw_round_fast's high
         * halves, dr_xw_high_scaled): each an integer below 2^53 once scaled (kh is in float64's range, kl may
         * not be), their sum below 2^54 */
        const int kh = T::kBias + T::kFrac - w.lo, kl = kh + 1023 - T::kBias;
        const long long ih = DR_XW_TO_LL(DR_XW_MUL(w.acc_h, dr_xw_pow2(kh))), il = dr_xw_unscale(w.acc_l, kl);
        dr_xw_add64(w, ih + il);
    } else {
        /* the two chains' sum is exact (a round's bound covers all its elements); unit 2^(lo - kBias - kFrac) */
        const double sum = DR_XW_ADD(w.acc_h, w.acc_l);
        dr_xw_add64(w, DR_XW_TO_LL(DR_XW_MUL(sum, dr_xw_pow2(T::kBias + T::kFrac - w.lo))));
    }
    w.acc_h = w.acc_l = 0.0;
}

/* V into the words (sink.add(word, value) for each nonzero limb); V becomes zero. */
template <int Family, class Sink> DR_HD void dr_xw_flush(dr_xw_t &w, const Sink &sink)
{
    const int pos = dr_xw_pos<Family>(w.lo);
    const int k = pos >> 5;
    const uint32_t s = (uint32_t)pos & 31u;
    const uint32_t sign = (uint32_t)((int32_t)w.v3 >> 31);
    const uint32_t r0 = w.v0 << s, r1 = DR_XW_FUNNEL(w.v0, w.v1, s), r2 = DR_XW_FUNNEL(w.v1, w.v2, s),
                   r3 = DR_XW_FUNNEL(w.v2, w.v3, s), r4 = DR_XW_FUNNEL(w.v3, sign, s);
    if (r0) sink.add(k, (long long)r0);
    if (r1) sink.add(k + 1, (long long)r1);
    if (r2) sink.add(k + 2, (long long)r2);
    if (r3) sink.add(k + 3, (long long)r3);
    if (r4) sink.add(k + 4, (long long)(int32_t)r4); /* the signed top limb */
    w.v0 = w.v1 = w.v2 = w.v3 = 0;
}

/* v 2^(p - 1074) into the words, as accum.h's dr_exact_add_scaled: three limbs, two digits below 2^32 and a signed
 * top (v's bits from 64 - (p mod 32) up, the sign along: below 2^31 in magnitude), each nonzero one a sink.add. */
template <class Sink> DR_HD void dr_xw_add_scaled(long long v, int p, const Sink &sink)
{
    const int i = p >> 5;
    const uint32_t s = (uint32_t)p & 31u;
    const uint64_t lo = (uint64_t)v << s;
    const long long hi = s ? v >> (64 - s) : v >> 63; /* arithmetic: floor(v 2^s / 2^64) */
    if ((uint32_t)lo) sink.add(i, (long long)(uint32_t)lo);
    if ((uint32_t)(lo >> 32)) sink.add(i + 1, (long long)(uint32_t)(lo >> 32));
    if (hi) sink.add(i + 2, hi);
}

/* A missed element, widened to float64 (exactly), straight into the words; infinities and NaNs set flags. */
template <class Sink> DR_HD void dr_xw_add_direct(dr_xw_t &w, double x, const Sink &sink)
{
    int i;
    int64_t d0, d1, d2;
    const uint32_t f = dr_exact_split_f64(x, &i, &d0, &d1, &d2);
    w.flags |= f & (DR_EXACT_NAN | DR_EXACT_POS_INF | DR_EXACT_NEG_INF);
    w.nans += (f & DR_EXACT_NAN) != 0;
    if (d0) sink.add(i, (long long)d0);
    if (d1) sink.add(i + 1, (long long)d1);
    if (d2) sink.add(i + 2, (long long)d2);
}

/* Move the window to a missed finite element of biased exponent e (the family's own format): above the window it
 * becomes the top, below it the bottom. V is flushed at the old position first. */
template <int Family, class Sink> DR_HD void dr_xw_rebase(dr_xw_t &w, int e, const Sink &sink)
{
    typedef dr_xw_traits<Family> T;
    int lo = e >= w.lo + T::kSpan ? e - T::kSpan + 1 : e;
    lo = lo < 1 ? 1 : lo > T::kLoMax ? T::kLoMax : lo;
    if (lo == w.lo) return;
    dr_xw_flush<Family>(w, sink);
    dr_xw_set_window<Family>(w, lo);
}

/* Whether an element takes the fast path: its binade is in the window, or it is a zero (which adds nothing
 * wherever it goes). Infinities and NaNs never do (their exponent is above every window). b: the family's lane bits
 * (dr_xw_lane). float16's window is every binade, so only they miss. */
template <int Family> DR_HD bool dr_xw_fits(const dr_xw_t &w, uint64_t b)
{
    typedef dr_xw_traits<Family> T;
    if constexpr (Family == DR_XW_F64) {
        const uint32_t mag = (uint32_t)(b >> 32) & 0x7fffffffu;
        return mag - w.lo_bits < (uint32_t)T::kSpan << T::kExpShift || (mag | (uint32_t)b) == 0;
    } else if constexpr (Family == DR_XW_F16) {
        return ((uint32_t)b & 0x7c00u) != 0x7c00u;
    } else {
        const uint32_t mag = (uint32_t)b & 0x7fffffffu;
        return mag - w.lo_bits < (uint32_t)T::kSpan << T::kExpShift || mag == 0;
    }
}

/* A float16 or a bfloat16 (its bits in the low 16 of h) as a float64: one conversion each on the GPU
 * (F2F.F64.F16, F2F.F64.BF16), where a widening through float32 takes two instructions. */
DR_HD double dr_xw_f16_to_f64(uint32_t h)
{
#if defined(__CUDA_ARCH__)
    double d;
    asm("{.reg .b16 t; cvt.u16.u32 t, %1; cvt.f64.f16 %0, t;}" : "=d"(d) : "r"(h));
    return d;
#else
    return (double)dr_f16_to_f32((uint16_t)h);
#endif
}
DR_HD double dr_xw_bf16_to_f64(uint32_t h)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    double d;
    asm("{.reg .b16 t; cvt.u16.u32 t, %1; cvt.f64.bf16 %0, t;}" : "=d"(d) : "r"(h));
    return d;
#else
    return (double)dr_bits_to_f32(h << 16);
#endif
}

/* The float16 or bfloat16 in the high 16 bits of x as a float64 scaled by 2^(kBias - 1023), built from its bits in
 * two integer operations (an arithmetic shift puts the sign at bit 31 and the exponent and fraction bits at the
 * bottom of a float64's; the mask clears the rest): a float64 of exponent field e is 2^(e - 1023) where the format's
 * is 2^(e - kBias), and a subnormal stays one (its unit, 2^-24 (float16) or 2^-133 (bfloat16), becomes 2^-1032 or
 * 2^-1029, still a multiple of float64's 2^-1074). Exact, as the conversion instruction is; but that instruction runs
 * on the multiprocessor's conversion pipe at 16 results a clock (ncu: 58% busy at float16's bandwidth), so
 * dr_xw_round_fast widens one half of each word each way. */
template <int Family> DR_HD double dr_xw_high_scaled(uint32_t x)
{
    static_assert(Family == DR_XW_F16 || Family == DR_XW_BF16, "the 16-bit families");
    constexpr int kShift = Family == DR_XW_F16 ? 6 : 3; /* the fraction's top bit to bit 19 */
    constexpr uint32_t kMask = 0x80000000u | (0x7fffu << (16 - kShift));
    const uint32_t hi = (uint32_t)((int32_t)x >> kShift) & kMask; /* arithmetic: the sign comes along */
    return dr_bits_to_f64((uint64_t)hi << 32);
}

/* The fast path for one element (lane bits b): add it to the round's accumulators if it fits; return whether it
 * did. No branch but the predicated adds. */
template <int Family> DR_HD bool dr_xw_try(dr_xw_t &w, uint64_t b)
{
    const bool fits = dr_xw_fits<Family>(w, b);
    if constexpr (Family == DR_XW_F64) {
        w.nonneg0 |= ((uint32_t)(b >> 32) ^ 0x80000000u) | (uint32_t)b;
        if (fits) {
            const double x = dr_bits_to_f64(b);
            const double q = DR_XW_SUB(DR_XW_ADD(w.sigma, x), w.sigma);
            w.acc_h = DR_XW_ADD(w.acc_h, q);
            w.acc_l = DR_XW_ADD(w.acc_l, DR_XW_SUB(x, q));
        }
    } else if constexpr (Family == DR_XW_F16) {
        w.nonneg0 |= (uint32_t)b ^ 0x8000u;
        if (fits) w.acc_h = DR_XW_ADD(w.acc_h, dr_xw_f16_to_f64((uint32_t)b));
    } else {
        w.nonneg0 |= (uint32_t)b ^ 0x80000000u;
        if (fits) w.acc_h = DR_XW_ADD(w.acc_h, (double)dr_bits_to_f32((uint32_t)b));
    }
    return fits;
}

/* Element j (0 .. 16 / element bytes - 1) of a vector's words as the per-element path reads it (dr_xw_fits). */
template <int Family> DR_HD uint64_t dr_xw_lane(const uint32_t (&words)[4], int j)
{
    if constexpr (Family == DR_XW_F64) return (uint64_t)words[2 * j + 1] << 32 | words[2 * j];
    else if constexpr (Family == DR_XW_F32) return words[j];
    else if constexpr (Family == DR_XW_F16) return (words[j / 2] >> (16 * (j & 1))) & 0xffffu;
    else return (j & 1) ? words[j / 2] & 0xffff0000u : words[j / 2] << 16;
}

/* 32-bit word i of vectors v[0..N) (compare-and-select: an index known only at run time would put v in local
 * memory). */
template <int N> DR_HD uint32_t dr_xw_word(const uint4 (&v)[N], int i)
{
    uint32_t r = 0;
    DR_XW_UNROLL
    for (int q = 0; q < N; ++q) {
        r = i == 4 * q ? v[q].x : r;
        r = i == 4 * q + 1 ? v[q].y : r;
        r = i == 4 * q + 2 ? v[q].z : r;
        r = i == 4 * q + 3 ? v[q].w : r;
    }
    return r;
}

/* Element b of vectors v[0..N) as dr_xw_lane gives it, b known only at run time (the words by compare-and-select). */
template <int Family, int N> DR_HD uint64_t dr_xw_lane_at(const uint4 (&v)[N], int b)
{
    if constexpr (Family == DR_XW_F64) return (uint64_t)dr_xw_word(v, 2 * b + 1) << 32 | dr_xw_word(v, 2 * b);
    else if constexpr (Family == DR_XW_F32) return dr_xw_word(v, b);
    const uint32_t word = dr_xw_word(v, b / 2);
    if constexpr (Family == DR_XW_F16) return (word >> (16 * (b & 1))) & 0xffffu;
    else return (b & 1) ? word & 0xffff0000u : word << 16;
}

/* An element (lane bits u, dr_xw_lane's) widened to float64, exactly. */
template <int Family> DR_HD double dr_xw_widen(uint64_t u)
{
    if constexpr (Family == DR_XW_F64) return dr_bits_to_f64(u);
    else if constexpr (Family == DR_XW_F16) return dr_xw_f16_to_f64((uint32_t)u);
    else return (double)dr_bits_to_f32((uint32_t)u);
}

/* The float64 bins written since the last flush into the words (bin k, in units of its u_k, an integer below
 * 2^53), and none written. */
template <int Family, class Sink> DR_HD void dr_xw_fbins_flush(dr_xw_t &w, const Sink &sink)
{
    typedef dr_xw_traits<Family> T;
    for (uint32_t left = w.fbins_written; left; left &= left - 1) {
        const int k = DR_XW_CTZ(left);
        const int e = k ? T::kFBinSpan * k : 1;                 /* u_k is binade e's unit */
        const int unit = e - T::kBias - T::kFrac;               /* log2 u_k */
        const long long c = DR_XW_TO_LL(DR_XW_MUL(sink.fbin(k), dr_xw_pow2(-unit))); /* exact: a power of two */
        dr_xw_add_scaled(c, unit + 1074, sink);
    }
    w.fbins_written = 0;
    w.fbin_terms = 0;
}

/* A missed finite float32 (its bits b) into its float64 bin (the bins above). The caller flushes the bins before
 * they would hold more than kFBinFlush terms (dr_xw_round_fbinned: before a round's misses, outside their loop). */
template <int Family, class Sink> DR_HD void dr_xw_fbin_add(dr_xw_t &w, uint32_t b, const Sink &sink)
{
    typedef dr_xw_traits<Family> T;
    const int k = (int)((b >> 23) & 0xffu) / T::kFBinSpan;
    const uint32_t bit = 1u << k;
    const double x = (double)dr_bits_to_f32(b);
    double &bin = sink.fbin(k);
    bin = (w.fbins_written & bit) ? DR_XW_ADD(bin, x) : x;
    w.fbins_written |= bit;
    ++w.fbin_terms;
}

/* A missed float64 element (lane bits u), once the round's hits are in and the window has not moved since they
 * were tried: an infinity or a NaN sets its flag; a finite element goes straight into the words (three digits), and
 * *last becomes its biased exponent (the window moves there at the round's end, dr_xw_rebase). */
template <int Family, class Sink> DR_HD void dr_xw_miss(dr_xw_t &w, uint64_t u, int *last, const Sink &sink)
{
    static_assert(Family == DR_XW_F64, "float32's misses go into its bins (dr_xw_round_fbinned)");
    typedef dr_xw_traits<Family> T;
    const int e = (int)((u >> 32) >> T::kExpShift) & T::kExpInf;
    if (e != T::kExpInf) *last = e;
    dr_xw_add_direct(w, dr_xw_widen<Family>(u), sink);
}

/* The round's fast path for float16 and bfloat16 (32 elements): every element is added, with no test of its own,
 * into two chains (so the float64 adds overlap), and the test comes once, at the end, from what was gathered on the
 * way, two 16-bit halves at a time: the largest magnitude (one add-and-max) and, for bfloat16, the smallest nonzero
 * one (as magnitude - 1, where a zero wraps to the largest: one add-and-min), against the window; float16's window
 * is every finite value, so its largest magnitude is tested against the infinities' alone. A word's low half widens
 * in one conversion (cvt.f64.f16 / .bf16) into h, its high half in two integer operations into l, scaled
 * (dr_xw_high_scaled; the spill unscales it): the conversions alone had the conversion pipe 58% busy at float16's
 * bandwidth, and split so, it is 32% busy and the integer pipe 50% (35% before), which read 0.2-0.7% faster on random
 * data and 0.8-0.9% on spread data (H200, 2^28-2^31). About 6 instructions an element, where the element-by-element path
 * (a predicated add each, its test, a widening through float32) took 13 and issue limited bfloat16 to 2.5 TB/s. If
 * every element fits, this is the round's exact sum (the caller spills it); else nothing is added and the caller
 * goes element by element (dr_xw_round_rest). */
template <int Family, int N> DR_HD bool dr_xw_round_fast(dr_xw_t &w, const uint4 (&v)[N])
{
    static_assert(Family == DR_XW_F16 || Family == DR_XW_BF16, "the 16-bit families");
    double h = 0.0, l = 0.0;
    uint32_t mx = 0, mn = 0xffffffffu, nz = 0;
    DR_XW_UNROLL
    for (int u = 0; u < N; ++u) {
        const uint32_t words[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
        DR_XW_UNROLL
        for (int q = 0; q < 4; ++q) {
            const uint32_t x = words[q];
            nz |= x ^ 0x80008000u;
            const uint32_t m = x & 0x7fff7fffu;
            mx = __viaddmax_u16x2(m, 0u, mx);
            if constexpr (Family == DR_XW_BF16) mn = __viaddmin_u16x2(m, 0xffffffffu, mn); /* per half, wrapping */
            /* the low half converted (h, unit 1), the high half from its bits (l, scaled: dr_xw_spill) */
            h = DR_XW_ADD(h, Family == DR_XW_F16 ? dr_xw_f16_to_f64(x & 0xffffu) : dr_xw_bf16_to_f64(x & 0xffffu));
            l = DR_XW_ADD(l, dr_xw_high_scaled<Family>(x));
        }
    }
    w.nonneg0 |= nz;
    mx = mx >> 16 > (mx & 0xffffu) ? mx >> 16 : mx & 0xffffu;
    if constexpr (Family == DR_XW_BF16) mn = mn >> 16 < (mn & 0xffffu) ? mn >> 16 : mn & 0xffffu;
    const bool fits = Family == DR_XW_F16 ? mx < 0x7c00u : mx < w.top && mn >= w.bot;
    if (fits) w.acc_h = h, w.acc_l = l;
    return fits;
}

/* The bins into the words (each nonzero one, at 2^(32 k - kBias - kFrac)), and back to zero. */
template <int Family, class Sink> DR_HD void dr_xw_bins_flush(dr_xw_t &w, const Sink &sink)
{
    typedef dr_xw_traits<Family> T;
    constexpr int kPos = 1074 - T::kBias - T::kFrac; /* bin 0's unit, in units of 2^-1074 */
    for (int k = 0; k < T::kBins; ++k) {
        long long &bin = sink.bin(k);
        if (bin) dr_xw_add_scaled(bin, kPos + 32 * k, sink);
        bin = 0;
    }
}

/* A bfloat16 element (its float32 bits b) as a bin's term: the bin (*k) and the signed integer m << (e mod 32)
 * (the bins above). An infinity's or a NaN's term is meaningless: the caller adds none. */
template <int Family> DR_HD long long dr_xw_bin_term(uint32_t b, int *k)
{
    typedef dr_xw_traits<Family> T;
    const uint32_t mag = b & 0x7fffffffu;
    const uint32_t e = mag >> 23;
    const uint32_t e1 = e ? e : 1u; /* a subnormal: binade 1's unit */
    const uint32_t m = ((mag & 0x7fffffu) | (e ? 0x800000u : 0u)) >> (23 - T::kFrac);
    *k = (int)(e1 >> 5);
    const long long t = (long long)((uint64_t)m << (e1 & 31u));
    const long long neg = -(long long)(b >> 31);
    return (t ^ neg) - neg;
}

/* The flags of a round's infinities and NaNs (rare: outside the unrolled path). */
template <int Family, int N, class Sink>
DR_HD void dr_xw_round_specials(dr_xw_t &w, const uint4 (&v)[N], const Sink &sink)
{
    constexpr int kVec = 16 / dr_xw_traits<Family>::kElemBytes;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int b = 0; b < N * kVec; ++b) {
        const uint64_t u = dr_xw_lane_at<Family>(v, b);
        if ((u & 0x7f800000u) == 0x7f800000u) dr_xw_add_direct(w, dr_xw_widen<Family>(u), sink);
    }
}

/* A round of bfloat16 that failed dr_xw_round_fast's test, element by element and unrolled, with no branch per
 * element: each that fits the window is added to the round's accumulators, each finite one that does not goes
 * into its bin (an add predicated on the miss), then the spill, and the window moves to the last finite miss. So
 * data spread over more binades than the window holds, whose every round fails, cost some 20 instructions an
 * element (809-870 GB/s on the H200 at 2^28, against 163 when each miss went into the
 * words: its digits' shared-memory atomics, which lanes contend for, and a compare-and-select over the round's
 * words to find it). */
template <int Family, int N, class Sink>
DR_HD void dr_xw_round_binned(dr_xw_t &w, const uint4 (&v)[N], const Sink &sink)
{
    static_assert(Family == DR_XW_BF16, "the binned family");
    constexpr int kVec = 16 / dr_xw_traits<Family>::kElemBytes;
    int last = -1;
    bool special = false;
    DR_XW_UNROLL
    for (int u = 0; u < N; ++u) {
        const uint32_t words[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
        DR_XW_UNROLL
        for (int j = 0; j < kVec; ++j) {
            const uint32_t b = (uint32_t)dr_xw_lane<Family>(words, j);
            const bool fits = dr_xw_try<Family>(w, b);
            const uint32_t e = (b >> 23) & 0xffu;
            special |= e == 0xffu;
            const bool miss = !fits && e != 0xffu;
            last = miss ? (int)e : last;
            int k;
            const long long t = dr_xw_bin_term<Family>(b, &k);
            if (miss) sink.bin(k) += t;
        }
    }
    dr_xw_spill<Family>(w);
    if (special) dr_xw_round_specials<Family>(w, v, sink);
    if (last >= 0) dr_xw_rebase<Family>(w, last, sink);
}

/* float64's misses (bit b of `left`: element b missed), once the round's hits are in and spilled (the window
 * unchanged since): each into the words, then the window moves to the last finite one. */
template <int Family, int N, class Sink>
DR_HD void dr_xw_round_misses(dr_xw_t &w, const uint4 (&v)[N], uint32_t left, const Sink &sink)
{
    int last = -1; /* the last finite missed element's exponent */
    while (left) {
        const int b = DR_XW_CTZ(left);
        left &= left - 1;
        dr_xw_miss<Family>(w, dr_xw_lane_at<Family>(v, b), &last, sink);
    }
    if (last >= 0) dr_xw_rebase<Family>(w, last, sink);
}

/* float32's misses (bit b of `left`), once the round's hits are in and spilled: unrolled, each finite one into its
 * float64 bin with no compare-and-select to find it and no branch of its own, infinities and NaNs flagged after;
 * then the window moves to the last finite one. */
template <int Family, int N, class Sink>
DR_HD void dr_xw_round_fbinned(dr_xw_t &w, const uint4 (&v)[N], uint32_t left, const Sink &sink)
{
    static_assert(Family == DR_XW_F32, "float32's bins");
    constexpr int kVec = 16 / dr_xw_traits<Family>::kElemBytes;
    if (w.fbin_terms + (uint32_t)DR_XW_POPC(left) > (uint32_t)dr_xw_traits<Family>::kFBinFlush)
        dr_xw_fbins_flush<Family>(w, sink);
    int last = -1;
    bool special = false;
    DR_XW_UNROLL
    for (int u = 0; u < N; ++u) {
        const uint32_t words[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
        DR_XW_UNROLL
        for (int j = 0; j < kVec; ++j) {
            const uint32_t b = (uint32_t)dr_xw_lane<Family>(words, j);
            const uint32_t e = (b >> 23) & 0xffu;
            const bool miss = (left >> (u * kVec + j)) & 1u;
            special |= miss && e == 0xffu;
            if (miss && e != 0xffu) {
                last = (int)e;
                dr_xw_fbin_add<Family>(w, b, sink);
            }
        }
    }
    if (special) dr_xw_round_specials<Family>(w, v, sink);
    if (last >= 0) dr_xw_rebase<Family>(w, last, sink);
}

/* A round of float64 or float32, first pass: the elements that fit are added without a branch, then the spill.
 * Returns whether every element fit (else dr_xw_round_missed takes the rest, the window not moved since). */
template <int Family, int N> DR_HD bool dr_xw_round_hits(dr_xw_t &w, const uint4 (&v)[N])
{
    constexpr int kVec = 16 / dr_xw_traits<Family>::kElemBytes;
    bool all_fit = true;
    DR_XW_UNROLL
    for (int u = 0; u < N; ++u) {
        const uint32_t words[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
        DR_XW_UNROLL
        for (int j = 0; j < kVec; ++j) all_fit &= dr_xw_try<Family>(w, dr_xw_lane<Family>(words, j));
    }
    dr_xw_spill<Family>(w);
    return all_fit;
}

/* The second pass of a round that dr_xw_round_hits says missed: the misses, one bit each (float64: one by one into
 * the words; float32: dr_xw_round_fbinned), and the window moves to the last finite one. */
template <int Family, int N, class Sink>
DR_HD void dr_xw_round_missed(dr_xw_t &w, const uint4 (&v)[N], const Sink &sink)
{
    constexpr int kVec = 16 / dr_xw_traits<Family>::kElemBytes;
    uint32_t left = 0;
    DR_XW_UNROLL
    for (int u = 0; u < N; ++u) {
        const uint32_t words[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
        DR_XW_UNROLL
        for (int j = 0; j < kVec; ++j)
            left |= (dr_xw_fits<Family>(w, dr_xw_lane<Family>(words, j)) ? 0u : 1u) << (u * kVec + j);
    }
    if constexpr (Family == DR_XW_F32) dr_xw_round_fbinned<Family>(w, v, left, sink);
    else dr_xw_round_misses<Family>(w, v, left, sink);
}

/* A round of float64 or float32, element by element: both passes. */
template <int Family, int N, class Sink>
DR_HD void dr_xw_round_elements(dr_xw_t &w, const uint4 (&v)[N], const Sink &sink)
{
    if (!dr_xw_round_hits<Family>(w, v)) dr_xw_round_missed<Family>(w, v, sink);
}

/* A round of float16 or bfloat16 that failed dr_xw_round_fast's test (outside the kernel's hot loop). bfloat16:
 * dr_xw_round_binned. float16, whose window holds every finite value, fails only on infinities and NaNs: element
 * by element in one pass, each added if it fits and its flag set if not, then the spill; a loop, an element a
 * trip, as that is rare. */
template <int Family, int N, class Sink> DR_HD void dr_xw_round_rest(dr_xw_t &w, const uint4 (&v)[N], const Sink &sink)
{
    if constexpr (Family == DR_XW_BF16) {
        dr_xw_round_binned<Family>(w, v, sink);
    } else {
        constexpr int kVec = 16 / dr_xw_traits<Family>::kElemBytes;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
        for (int b = 0; b < N * kVec; ++b) {
            const uint64_t u = dr_xw_lane_at<Family>(v, b);
            if (!dr_xw_try<Family>(w, u)) dr_xw_add_direct(w, dr_xw_widen<Family>(u), sink); /* its flag */
        }
        dr_xw_spill<Family>(w);
    }
}

/* One round: every element of vectors v[0..N) (N * 16 / element bytes <= kMaxRound). float64 and float32 go
 * element by element; float16 and bfloat16 try the round's test first. */
template <int Family, int N, class Sink> DR_HD void dr_xw_add_vectors(dr_xw_t &w, const uint4 (&v)[N], const Sink &sink)
{
    typedef dr_xw_traits<Family> T;
    static_assert(N * (16 / T::kElemBytes) <= T::kMaxRound && N * (16 / T::kElemBytes) <= 32,
                  "a round's size: the bounds above, one bit each");
    if constexpr (Family == DR_XW_F64 || Family == DR_XW_F32) dr_xw_round_elements<Family>(w, v, sink);
    else if (dr_xw_round_fast<Family>(w, v)) dr_xw_spill<Family>(w);
    else dr_xw_round_rest<Family>(w, v, sink);
}

/* The thread's end: its bins, then V, into the words (the round sums are in V already). */
template <int Family, class Sink> DR_HD void dr_xw_finish(dr_xw_t &w, const Sink &sink)
{
    if constexpr (dr_xw_traits<Family>::kBins != 0) dr_xw_bins_flush<Family>(w, sink);
    if constexpr (dr_xw_traits<Family>::kFBins != 0) dr_xw_fbins_flush<Family>(w, sink);
    dr_xw_flush<Family>(w, sink);
}

/* A single element (the walk's head and tail), widened to float64: straight into the words. */
template <class Sink> DR_HD void dr_xw_add_one(dr_xw_t &w, double x, const Sink &sink)
{
    const uint64_t b = dr_f64_to_bits(x);
    w.nonneg0 |= ((uint32_t)(b >> 32) ^ 0x80000000u) | (uint32_t)b;
    dr_xw_add_direct(w, x, sink);
}

#endif
