/* The CPU backend's counting passes (cpu_count.h): each thread counts a contiguous slice into counts of its own,
 * summed in thread order at the end (counts are integers: the order changes nothing).
 *
 * A slice goes DR_COUNT_BLOCK elements at a time, in two loops over the block in L1: the first computes each
 * element's slot (a histogram's bin by the fast estimate, or -1 where the element needs the edges; a digit pass's
 * key) branch-free, so that compilers vectorize it; the second adds the counts, taking the exact rules
 * (distrib.h's dr_hist_bin_*) for the few elements the first left undecided. An element's slot is the one the
 * shared functions give it: the fast estimate is theirs, computed the same way, and used only where they would use
 * it. Where the counts are small (DR_COUNT_COPIES_MAX_WORDS), a thread keeps DR_COUNT_COPIES copies and element i
 * adds to copy i % DR_COUNT_COPIES: data in one bin (skewed histograms; the leading digit of data in one binade)
 * would otherwise be one chain of increments of one counter, each waiting for the last. */
#include "cpu_count.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu_lanes.h"
#include "dtype.h"
#include "parallel.h"

/* Bytes of per-thread counts we allow before counting on fewer threads (a histogram of 2^24 bins is 128 MiB of
 * counts per thread). */
#define DR_COUNT_PRIVATE_BYTES ((size_t)256 << 20)
#define DR_COUNT_BLOCK 512
#define DR_COUNT_COPIES 4 /* a power of two */
#define DR_COUNT_COPIES_MAX_WORDS 8192 /* 4 copies of 64 KiB: in L2 */
#define DR_COUNT_SPILL 16                /* a power of two */
#define DR_KEEP_STAGE 2048               /* kept elements a thread gathers before it copies them (keep_block) */

typedef struct {
    void *buf;
    size_t cap;          /* elements */
    _Atomic size_t pos;  /* the next free element */
    int sparse;           /* at most 1 in 32 in play: gathered with a branch (mostly predicted: not in play) */
} keep_t;

typedef struct {
    const dr_count_pass_t *p;
    const void *edges;
    const void *in;
    size_t n, stride, copies;
    uint64_t *priv; /* nthreads x stride: each thread's words x copies counts (a count's copies side by side), then
                       DR_COUNT_SPILL for a digit pass's elements out of play */
    keep_t *keep; /* a digit pass that keeps its elements in play (cpu_count.h); NULL: none */
} count_job_t;

/* ---- Histograms ---- */

/* One bin index to its count slot: the bins, then below, above and NaN. */
static inline uint64_t hist_slot(int64_t bin, uint32_t bins)
{
    return bin >= 0 ? (uint64_t)bin : (uint64_t)bins + (uint64_t)(-bin - 1);
}

/* Add the block's counts: slot[i], or the rules' bin of element i (RULES(i)) where slot[i] is -1. */
#define DR_HIST_ADD(c, copies, slot, m, RULES, bins)                                                           \
    do {                                                                                                       \
        for (size_t i_ = 0; i_ < (m); ++i_) {                                                                  \
            const int64_t b_ = (slot)[i_] >= 0 ? (slot)[i_] : (RULES(i_));                                     \
            ++(c)[hist_slot(b_, bins) * (copies) + (i_ & ((copies) - 1))];                                     \
        }                                                                                                      \
    } while (0)

/* float16 with NumPy's own estimate (exact_estimate: many bins, where (x - first) * scale is too coarse): the slot
 * of each element of x[0..m), as dr_hist_bin_f16 gives it, the estimate taken a step at a time over the block so
 * that its arithmetic and its roundings to float16 (cpu_lanes.c: F16C where the CPU has it) go a vector at a time.
 * Element by element, a 256-bin float16 histogram of 2^26 elements counted at 0.17 GB/s on 2 EPYC cores (1.0 now). */
static void f16_exact_slots(const dr_hist_plan_t *h, const float *edges, const float *x, size_t m, int32_t *slot)
{
    float t[DR_COUNT_BLOCK];
    double f[DR_COUNT_BLOCK];
    const dr_cpu_lanes_t *lanes = dr_cpu_lanes();
    const float first = (float)h->first, last = (float)h->last;
    float d[DR_COUNT_BLOCK];
    for (size_t i = 0; i < m; ++i) t[i] = d[i] = x[i] - first; /* outside the range or NaN: computed, not used */
    lanes->round_f16(t, m);
    if (h->in_type) {
        const float denom = (float)h->denom, bins_t = (float)h->bins_t;
        for (size_t i = 0; i < m; ++i) t[i] = t[i] / denom;
        lanes->round_f16(t, m);
        for (size_t i = 0; i < m; ++i) t[i] = t[i] * bins_t;
        lanes->round_f16(t, m);
        for (size_t i = 0; i < m; ++i) f[i] = (double)t[i];
    } else {
        for (size_t i = 0; i < m; ++i) f[i] = (double)t[i] / h->denom * (double)h->bins;
    }
    for (size_t i = 0; i < m; ++i) {
        const float v = x[i];
        int64_t bin;
        if (v != v) {
            bin = DR_HIST_NAN;
        } else if (v < first) {
            bin = DR_HIST_BELOW;
        } else if (v > last) {
            bin = DR_HIST_ABOVE;
        } else if (DR_F16_DIFF_OVERFLOWS(d[i])) {
            bin = dr_hist_search(edges, h->bins, v); /* as dr_hist_bin_f16 */
        } else {
            bin = dr_hist_trunc(f[i], h->bins);
            DR_HIST_CORRECT(bin, v, edges, h->bins);
        }
        slot[i] = (int32_t)hist_slot(bin, h->bins);
    }
}

static void count_hist(const dr_count_pass_t *p, const void *edges, const void *in, size_t b, size_t e, uint64_t *c,
                       size_t copies)
{
    const dr_hist_plan_t *h = &p->hist;
    const float *ef = (const float *)edges;
    const double *ed = (const double *)edges;
    /* Bytes, and the 16-bit types over a slice of at least 65536 elements: the slot of each of the type's values by
     * the rules once, then one lookup an element. The widening and the estimate cost several times the read: unit
     * bins over uint8 counted at 0.6 GB/s that way on 2 cores, and float16 with many bins, whose estimate reproduces
     * NumPy's float16 roundings, at 1.0 GB/s. A 16-bit table is 65536 evaluations of the rules, as many as the
     * smallest slice that takes it has elements. Where the table cannot be allocated, the estimate below gives
     * the same slots. */
    const size_t size = dr_dtype_size((dr_dtype_t)p->dtype), values = size == 1 ? 256 : size == 2 ? 65536 : 0;
    uint32_t *table = values == 256 || (values && e - b >= values) ? malloc(values * sizeof *table) : NULL;
    if (table) {
        for (size_t v = 0; v < values; ++v) {
            int64_t bin;
            switch ((dr_dtype_t)p->dtype) {
            case DR_INT8: bin = dr_hist_bin_f64(h, ed, (double)(int8_t)v); break;
            case DR_INT16: bin = dr_hist_bin_f64(h, ed, (double)(int16_t)v); break;
            case DR_FLOAT16: bin = dr_hist_bin_f16(h, ef, dr_f16_to_f32((uint16_t)v)); break;
            case DR_BFLOAT16: bin = dr_hist_bin_f32(h, ef, dr_bf16_to_f32((uint16_t)v)); break;
            default: bin = dr_hist_bin_f64(h, ed, (double)v); break; /* uint8, uint16 */
            }
            table[v] = (uint32_t)hist_slot(bin, h->bins);
        }
        if (values == 256) {
            const uint8_t *x = (const uint8_t *)in;
            for (size_t i = b; i < e; ++i) ++c[table[x[i]] * copies + (i & (copies - 1))];
        } else {
            const uint16_t *x = (const uint16_t *)in;
            for (size_t i = b; i < e; ++i) ++c[table[x[i]] * copies + (i & (copies - 1))];
        }
        free(table);
        return;
    }
    const int fast = !h->exact_estimate && h->margin < 1.0;
    int32_t slot[DR_COUNT_BLOCK];
    float vf[DR_COUNT_BLOCK];
    double vd[DR_COUNT_BLOCK];
    for (size_t b0 = b; b0 < e; b0 += DR_COUNT_BLOCK) {
        const size_t m = e - b0 < DR_COUNT_BLOCK ? e - b0 : DR_COUNT_BLOCK;
        /* the block as the bin type holds it (float for float16, bfloat16, float32; double for the others) */
#define WIDEN(T, DST, CONV)                                                                                    \
    do {                                                                                                       \
        const T *x_ = (const T *)in + b0;                                                                      \
        for (size_t i_ = 0; i_ < m; ++i_) DST[i_] = CONV(x_[i_]);                                              \
    } while (0)
#define AS_F(x) ((float)(x))
#define AS_D(x) ((double)(x))
        const float *xf = NULL;
        const double *xd = NULL;
        switch ((dr_dtype_t)p->dtype) {
        case DR_INT8: WIDEN(int8_t, vd, AS_D); xd = vd; break;
        case DR_UINT8: WIDEN(uint8_t, vd, AS_D); xd = vd; break;
        case DR_INT16: WIDEN(int16_t, vd, AS_D); xd = vd; break;
        case DR_UINT16: WIDEN(uint16_t, vd, AS_D); xd = vd; break;
        case DR_INT32: WIDEN(int32_t, vd, AS_D); xd = vd; break;
        case DR_UINT32: WIDEN(uint32_t, vd, AS_D); xd = vd; break;
        case DR_INT64: WIDEN(int64_t, vd, AS_D); xd = vd; break;
        case DR_UINT64: WIDEN(uint64_t, vd, AS_D); xd = vd; break;
        case DR_FLOAT16: /* F16C where the CPU has it (cpu_lanes.c): dr_f16_to_f32's bits */
            dr_cpu_lanes()->widen_f16_f32((const uint16_t *)in + b0, m, vf);
            xf = vf;
            break;
        case DR_BFLOAT16: WIDEN(uint16_t, vf, dr_bf16_to_f32); xf = vf; break;
        case DR_FLOAT32: xf = (const float *)in + b0; break;
        case DR_FLOAT64: xd = (const double *)in + b0; break;
        default: return;
        }
#undef WIDEN
#undef AS_F
#undef AS_D
        if (fast && xf) dr_cpu_lanes()->hist_fast_f32(h, xf, m, slot);
        else if (fast) dr_cpu_lanes()->hist_fast_f64(h, xd, m, slot);
        else if (p->dtype == DR_FLOAT16 && h->exact_estimate) f16_exact_slots(h, ef, xf, m, slot);
        else
            for (size_t i = 0; i < m; ++i) slot[i] = -1;
#define RULES_F16(i) dr_hist_bin_f16(h, ef, xf[i])
#define RULES_F32(i) dr_hist_bin_f32(h, ef, xf[i])
#define RULES_F64(i) dr_hist_bin_f64(h, ed, xd[i])
        if (p->dtype == DR_FLOAT16) DR_HIST_ADD(c, copies, slot, m, RULES_F16, h->bins);
        else if (xf) DR_HIST_ADD(c, copies, slot, m, RULES_F32, h->bins);
        else DR_HIST_ADD(c, copies, slot, m, RULES_F64, h->bins);
#undef RULES_F16
#undef RULES_F32
#undef RULES_F64
    }
}

/* ---- Radix-select digits ---- */

/* Keys branch-free (distrib.h's DR_FLOAT_KEY and the integers' sign flips, the same values): a float's key is its
 * bits with every bit flipped where the sign is set, else the sign bit set; -0 takes +0's key; NaN the largest. */
#define KEY_FLOAT(U, bits, s, abs_mask, inf_bits)                                                              \
    do {                                                                                                       \
        for (size_t i_ = 0; i_ < m; ++i_) {                                                                    \
            const U b_ = x[i_], a_ = b_ & (abs_mask);                                                          \
            const U all_ = (U)~(U)0 >> (8 * sizeof(U) - (bits));                                               \
            const U k_ = (b_ ^ ((U)(0 - (b_ >> ((bits) - 1))) | (s))) & all_;                                  \
            key[i_] = a_ > (inf_bits) ? all_ : a_ == 0 ? (s) : k_;                                             \
        }                                                                                                      \
    } while (0)
#define KEY_INT(UT, SIGN)                                                                                      \
    do {                                                                                                       \
        for (size_t i_ = 0; i_ < m; ++i_) key[i_] = (KT)(UT)((UT)x[i_] ^ (UT)(SIGN));                          \
    } while (0)

/* A thread's *kn kept elements kb (of `size` bytes each) copied to the next free place of keep->buf, taken with one
 * atomic add, and *kn reset; 0 when they do not fit (keep->pos, past keep->cap, says so: more in play than the
 * caller made room for; the thread then stops). A thread gathers DR_KEEP_STAGE or more before it copies: an atomic
 * add a block, on a counter all threads share, cost a median's second pass a tenth of its time on 2 cores (2^26
 * float32). */
static int keep_block(keep_t *keep, const void *kb, size_t *kn, size_t size)
{
    const size_t k = *kn;
    *kn = 0;
    if (k == 0) return 1;
    const size_t at0 = atomic_fetch_add(&keep->pos, k);
    if (k > keep->cap || at0 > keep->cap - k) return 0;
    memcpy((char *)keep->buf + at0 * size, kb, k * size);
    return 1;
}

/* Bit i of bits[i / 64]: slot[i] != skip, for slot[0..m); returns how many are set. SSE2: 16 slots a step (compare,
 * pack to bytes, movemask); else a plain loop. */
static size_t slot_mask(const int32_t *slot, size_t m, int32_t skip, uint64_t *bits)
{
    size_t i = 0, set = 0;
    memset(bits, 0, (m + 63) / 64 * sizeof *bits);
#if defined(__SSE2__)
    const __m128i sk = _mm_set1_epi32(skip);
    for (; i + 16 <= m; i += 16) {
        const __m128i e0 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(slot + i)), sk);
        const __m128i e1 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(slot + i + 4)), sk);
        const __m128i e2 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(slot + i + 8)), sk);
        const __m128i e3 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(slot + i + 12)), sk);
        const __m128i eq = _mm_packs_epi16(_mm_packs_epi32(e0, e1), _mm_packs_epi32(e2, e3));
        bits[i / 64] |= (uint64_t)(~_mm_movemask_epi8(eq) & 0xffff) << (i % 64);
    }
#endif
    for (; i < m; ++i) bits[i / 64] |= (uint64_t)(slot[i] != skip) << (i % 64);
    for (size_t w = 0; w < (m + 63) / 64; ++w) set += (size_t)__builtin_popcountll(bits[w]);
    return set;
}

/* A pilot pass's block of m keys against its first G (1..4) intervals, inside DIGIT_PASS: interval g holds k where
 * k - lo_g wraps to at most its span; in_g counts those, ab_g the keys past its end, nn NaN; kf[i] flags the keys
 * to keep. G a constant, so that the compares of intervals not there are not made. */
#define RANGE_COUNT(G, IS_FLOAT)                                                                               \
    for (size_t i = 0; i < m; ++i) {                                                                           \
        const KT k_ = key[i];                                                                                  \
        const uint32_t i0 = (KT)(k_ - lo0) <= sp0, i1 = (G) > 1 && (KT)(k_ - lo1) <= sp1,                      \
                       i2 = (G) > 2 && (KT)(k_ - lo2) <= sp2, i3 = (G) > 3 && (KT)(k_ - lo3) <= sp3;           \
        const uint32_t isnan_ = IS_FLOAT && k_ == nan_key;                                                     \
        in0 += i0, in1 += i1, in2 += i2, in3 += i3;                                                            \
        ab0 += k_ > hi0, ab1 += (G) > 1 && k_ > hi1, ab2 += (G) > 2 && k_ > hi2, ab3 += (G) > 3 && k_ > hi3;   \
        nn += isnan_;                                                                                          \
        kf[i] = (uint8_t)((i0 | i1 | i2 | i3) & !isnan_);                                                      \
    }

/* One digit pass over in[b..e) of element type T, keys of type KT (uint32_t for elements of up to 32 bits). Per
 * block: the keys (MAKE_KEYS), then each key's count slot ((group << width) | digit; NaN, a float's largest key,
 * the last word; an element in no group the word past it, counted and thrown away), branch-free for up to 4 groups,
 * then the counts, also branch-free: elements in and out of play mix at random in a quantile's later passes, and a
 * branch on it costs a misprediction every few elements. The elements out of play add to DR_COUNT_SPILL words in
 * turn, so that they are not one chain of increments either. In a later pass, a block where at most a quarter of the
 * elements count (in play or NaN: a median's second pass over data without ties has about 1 in 16 in play) visits
 * those alone, by the set bits of a mask of them (slot_mask), counting and keeping them there; a block with none
 * skips the counting. When keeping, a block's elements in play are gathered (branch-free, unless they are sparse)
 * and, DR_KEEP_STAGE or more at a time, copied to the next free place of keep->buf (keep_block). */
#define DIGIT_PASS(T, KT, MAKE_KEYS, IS_FLOAT)                                                                 \
    do {                                                                                                       \
        const T *x0 = (const T *)in;                                                                           \
        const KT nan_key = (KT)~(KT)0 >> (8 * sizeof(KT) - bits);                                              \
        const int32_t nan_slot = (int32_t)nan_at, out_slot = (int32_t)nan_at + 1;                              \
        const int32_t play_end = range ? (int32_t)groups : nan_slot; /* kept: slots below */                   \
        const KT q0 = (KT)pfx0, q1 = (KT)pfx1, q2 = (KT)pfx2, q3 = (KT)pfx3;                                   \
        const uint32_t spill = (uint32_t)(out_slot * copies); /* the out-of-play words */                      \
        KT key[DR_COUNT_BLOCK];                                                                                \
        int32_t slot[DR_COUNT_BLOCK];                                                                          \
        uint32_t at[DR_COUNT_BLOCK];                                                                           \
        T kb[DR_KEEP_STAGE + DR_COUNT_BLOCK]; /* kept elements not yet copied to keep->buf */                  \
        size_t kn = 0;                                                                                         \
        for (size_t b0 = b; b0 < e; b0 += DR_COUNT_BLOCK) {                                                    \
            const size_t m = e - b0 < DR_COUNT_BLOCK ? e - b0 : DR_COUNT_BLOCK;                                \
            const T *x = x0 + b0;                                                                              \
            MAKE_KEYS;                                                                                         \
            if (range && groups <= 4) {                                                                        \
                /* A pilot pass of up to 4 intervals, counted by sums over the block (which vectorize; a few   \
                   slots' increments were chains on the same counters): interval g holds k where k - lo wraps  \
                   to at most its span; above_g counts the keys past its end, NaN (the largest key) among them \
                   or in the last interval, taken out after. */                                                \
                const KT lo0 = (KT)rlo[0], lo1 = (KT)rlo[1], lo2 = (KT)rlo[2], lo3 = (KT)rlo[3];               \
                const KT sp0 = (KT)(rhi[0] - rlo[0]), sp1 = (KT)(rhi[1] - rlo[1]), sp2 = (KT)(rhi[2] - rlo[2]), \
                         sp3 = (KT)(rhi[3] - rlo[3]);                                                          \
                const KT hi0 = (KT)rhi[0], hi1 = (KT)rhi[1], hi2 = (KT)rhi[2], hi3 = (KT)rhi[3];               \
                uint32_t in0 = 0, in1 = 0, in2 = 0, in3 = 0, ab0 = 0, ab1 = 0, ab2 = 0, ab3 = 0, nn = 0;       \
                uint8_t kf[DR_COUNT_BLOCK];                                                                    \
                switch (groups) { /* the intervals there are, a loop each: a median's 1 takes a quarter */     \
                case 1: RANGE_COUNT(1, IS_FLOAT); break;                                                       \
                case 2: RANGE_COUNT(2, IS_FLOAT); break;                                                       \
                case 3: RANGE_COUNT(3, IS_FLOAT); break;                                                       \
                default: RANGE_COUNT(4, IS_FLOAT); break;                                                      \
                }                                                                                              \
                uint32_t in_[4] = {in0, in1, in2, in3}, ab_[4] = {ab0, ab1, ab2, ab3};                         \
                for (int g_ = 0; g_ < groups; ++g_) {                                                          \
                    if (nn && (KT)rhi[g_] == nan_key) in_[g_] -= nn;                                           \
                    else if (nn) ab_[g_] -= nn;                                                                \
                }                                                                                              \
                uint32_t below_ = (uint32_t)m - nn; /* elements not NaN before interval g */                   \
                for (int g_ = 0; g_ < groups; ++g_) {                                                          \
                    const uint32_t past_ = ab_[g_] + in_[g_]; /* not NaN, from interval g on */                \
                    c[(size_t)(groups + g_) * copies] += below_ - past_;                                       \
                    c[(size_t)g_ * copies] += in_[g_];                                                         \
                    below_ = ab_[g_];                                                                          \
                }                                                                                              \
                c[(size_t)(2 * groups) * copies] += below_;                                                    \
                c[(size_t)nan_slot * copies] += nn;                                                            \
                if (keep) { /* few kept (2% for a median): eight flags a word, the set ones by their bits */   \
                    size_t i = 0;                                                                              \
                    for (; i + 8 <= m; i += 8) {                                                               \
                        uint64_t w_;                                                                           \
                        memcpy(&w_, kf + i, 8);                                                                \
                        for (; w_; w_ &= w_ - 1) kb[kn++] = x[i + (size_t)__builtin_ctzll(w_) / 8];            \
                    }                                                                                          \
                    for (; i < m; ++i)                                                                         \
                        if (kf[i]) kb[kn++] = x[i];                                                            \
                    if (kn >= DR_KEEP_STAGE && !keep_block(keep, kb, &kn, sizeof(T))) return;                  \
                }                                                                                              \
                continue;                                                                                      \
            } else if (range && groups <= DR_COUNT_SCAN_MAX) {                                                 \
                /* More intervals: sums over their ends (dr_count_range_slot's rule), which vectorize          \
                   across the block, where a binary search a key branched at random. */                        \
                uint32_t *nstart = (uint32_t *)slot, *nend = at;                                               \
                for (size_t i = 0; i < m; ++i) nstart[i] = nend[i] = 0;                                        \
                for (int g_ = 0; g_ < groups; ++g_) {                                                          \
                    const KT lo_ = (KT)p->prefix[g_], hi_ = (KT)p->prefix[groups + g_];                        \
                    for (size_t i = 0; i < m; ++i) {                                                           \
                        nstart[i] += key[i] >= lo_;                                                            \
                        nend[i] += key[i] > hi_;                                                               \
                    }                                                                                          \
                }                                                                                              \
                for (size_t i = 0; i < m; ++i) {                                                               \
                    const uint32_t j_ = nstart[i];                                                             \
                    const int32_t s_ = j_ > nend[i] ? (int32_t)j_ - 1 : (int32_t)(groups + j_);                \
                    slot[i] = IS_FLOAT && key[i] == nan_key ? nan_slot : s_;                                   \
                }                                                                                              \
            } else if (range) {                                                                                \
                for (size_t i = 0; i < m; ++i)                                                                 \
                    slot[i] = IS_FLOAT && key[i] == nan_key ? nan_slot                                         \
                                                            : (int32_t)dr_count_range_slot(p, (uint64_t)key[i]); \
            } else if (!resolved) {                                                                            \
                for (size_t i = 0; i < m; ++i) {                                                               \
                    const int32_t d = (int32_t)((key[i] >> shift) & mask);                                     \
                    slot[i] = IS_FLOAT && key[i] == nan_key ? nan_slot : d;                                    \
                }                                                                                              \
            } else if (groups <= 4) {                                                                          \
                for (size_t i = 0; i < m; ++i) {                                                               \
                    const KT top = key[i] >> (shift + width);                                                  \
                    const int32_t d = (int32_t)((key[i] >> shift) & mask);                                     \
                    int32_t s = out_slot;                                                                      \
                    s = top == q3 ? (3 << width) | d : s;                                                      \
                    s = top == q2 ? (2 << width) | d : s;                                                      \
                    s = top == q1 ? (1 << width) | d : s;                                                      \
                    s = top == q0 ? d : s;                                                                     \
                    slot[i] = IS_FLOAT && key[i] == nan_key ? nan_slot : s;                                    \
                }                                                                                              \
            } else if (groups <= DR_COUNT_SCAN_MAX) {                                                          \
                /* More groups: sums over their prefixes (dr_count_group's rule), vectorized as above. */      \
                uint32_t *nbelow = (uint32_t *)slot, *nequal = at;                                             \
                for (size_t i = 0; i < m; ++i) nbelow[i] = nequal[i] = 0;                                      \
                for (int g_ = 0; g_ < groups; ++g_) {                                                          \
                    const KT pf_ = (KT)p->prefix[g_];                                                          \
                    for (size_t i = 0; i < m; ++i) {                                                           \
                        const KT top = key[i] >> (shift + width);                                              \
                        nbelow[i] += top > pf_;                                                                \
                        nequal[i] += top == pf_;                                                               \
                    }                                                                                          \
                }                                                                                              \
                for (size_t i = 0; i < m; ++i) {                                                               \
                    const int32_t d = (int32_t)((key[i] >> shift) & mask);                                     \
                    const int32_t s = nequal[i] ? (int32_t)(nbelow[i] << width) | d : out_slot;                \
                    slot[i] = IS_FLOAT && key[i] == nan_key ? nan_slot : s;                                    \
                }                                                                                              \
            } else {                                                                                           \
                for (size_t i = 0; i < m; ++i) {                                                               \
                    const int g = dr_count_group(p, (uint64_t)key[i]);                                         \
                    const int32_t d = (int32_t)((key[i] >> shift) & mask);                                     \
                    slot[i] = IS_FLOAT && key[i] == nan_key ? nan_slot : g < 0 ? out_slot : (g << width) | d;  \
                }                                                                                              \
            }                                                                                                  \
            if (resolved) { /* in play or NaN: none, or a few, in most blocks of a quantile's later passes */  \
                uint64_t bits[DR_COUNT_BLOCK / 64];                                                            \
                const size_t n_counted = slot_mask(slot, m, out_slot, bits);                                   \
                if (n_counted == 0) continue;                                                                  \
                if (n_counted <= m / 4) {                                                                      \
                    for (size_t w = 0; w < (m + 63) / 64; ++w)                                                 \
                        for (uint64_t bw = bits[w]; bw; bw &= bw - 1) {                                        \
                            const size_t i = w * 64 + (size_t)__builtin_ctzll(bw);                             \
                            ++c[(uint32_t)slot[i] * (uint32_t)copies + (uint32_t)(i & (copies - 1))];          \
                            if (keep) {                                                                        \
                                kb[kn] = x[i];                                                                 \
                                kn += slot[i] < play_end;                                                      \
                            }                                                                                  \
                        }                                                                                      \
                    if (keep && kn >= DR_KEEP_STAGE && !keep_block(keep, kb, &kn, sizeof(T))) return;          \
                    continue;                                                                                  \
                }                                                                                              \
            }                                                                                                  \
            for (size_t i = 0; i < m; ++i) {                                                                   \
                const uint32_t s = (uint32_t)slot[i];                                                          \
                at[i] = s == (uint32_t)out_slot ? spill + (uint32_t)(i & (DR_COUNT_SPILL - 1))                 \
                                                : s * (uint32_t)copies + (uint32_t)(i & (copies - 1));         \
            }                                                                                                  \
            for (size_t i = 0; i < m; ++i) ++c[at[i]];                                                         \
            if (keep) {                                                                                        \
                if (keep->sparse) {                                                                            \
                    for (size_t i = 0; i < m; ++i)                                                             \
                        if (slot[i] < play_end) kb[kn++] = x[i];                                               \
                } else {                                                                                       \
                    for (size_t i = 0; i < m; ++i) {                                                           \
                        kb[kn] = x[i];                                                                         \
                        kn += slot[i] < play_end;                                                              \
                    }                                                                                          \
                }                                                                                              \
                if (kn >= DR_KEEP_STAGE && !keep_block(keep, kb, &kn, sizeof(T))) return;                      \
            }                                                                                                  \
        }                                                                                                      \
        if (keep) (void)keep_block(keep, kb, &kn, sizeof(T));                                                  \
    } while (0)

static void count_digits(const dr_count_pass_t *p, const void *in, size_t b, size_t e, uint64_t *c, size_t copies,
                         keep_t *keep)
{
    const int bits = dr_key_bits((dr_dtype_t)p->dtype);
    const uint64_t nan_at = dr_count_words(p) - 1;
    const int shift = p->shift, width = p->width, resolved = p->resolved, groups = p->groups;
    const uint32_t mask = (1u << width) - 1u;
    /* up to 4 groups' prefixes; a missing one never equal to a key's top bits (fewer than 64 of them) */
    const uint64_t none = ~0ull;
    const uint64_t pfx0 = groups > 0 ? p->prefix[0] : none, pfx1 = groups > 1 ? p->prefix[1] : none,
                   pfx2 = groups > 2 ? p->prefix[2] : none, pfx3 = groups > 3 ? p->prefix[3] : none;
    /* A pilot pass (RANGE) of up to 4 intervals, branch-free (RANGE_COUNT): each interval's ends. */
    const int range = p->kind == DR_COUNT_RANGE;
    uint64_t rlo[4] = {0, 0, 0, 0}, rhi[4] = {0, 0, 0, 0};
    for (int g = 0; range && g < groups && g < 4; ++g) {
        rlo[g] = p->prefix[g];
        rhi[g] = p->prefix[groups + g];
    }
    switch ((dr_dtype_t)p->dtype) {
    case DR_INT8: { typedef uint32_t KT; DIGIT_PASS(int8_t, KT, KEY_INT(uint8_t, 0x80u), 0); } break;
    case DR_UINT8: { typedef uint32_t KT; DIGIT_PASS(uint8_t, KT, KEY_INT(uint8_t, 0), 0); } break;
    case DR_INT16: { typedef uint32_t KT; DIGIT_PASS(int16_t, KT, KEY_INT(uint16_t, 0x8000u), 0); } break;
    case DR_UINT16: { typedef uint32_t KT; DIGIT_PASS(uint16_t, KT, KEY_INT(uint16_t, 0), 0); } break;
    case DR_INT32: { typedef uint32_t KT; DIGIT_PASS(int32_t, KT, KEY_INT(uint32_t, 0x80000000u), 0); } break;
    case DR_UINT32: { typedef uint32_t KT; DIGIT_PASS(uint32_t, KT, KEY_INT(uint32_t, 0), 0); } break;
    case DR_INT64: { typedef uint64_t KT; DIGIT_PASS(int64_t, KT, KEY_INT(uint64_t, 0x8000000000000000ull), 0); } break;
    case DR_UINT64: { typedef uint64_t KT; DIGIT_PASS(uint64_t, KT, KEY_INT(uint64_t, 0), 0); } break;
    case DR_FLOAT16:
    case DR_BFLOAT16: {
        typedef uint32_t KT;
        const uint32_t inf = p->dtype == DR_FLOAT16 ? 0x7c00u : 0x7f80u;
        DIGIT_PASS(uint16_t, KT, KEY_FLOAT(uint32_t, 16, 0x8000u, 0x7fffu, inf), 1);
    } break;
    case DR_FLOAT32: {
        typedef uint32_t KT;
        DIGIT_PASS(uint32_t, KT, KEY_FLOAT(uint32_t, 32, 0x80000000u, 0x7fffffffu, 0x7f800000u), 1);
    } break;
    case DR_FLOAT64: {
        typedef uint64_t KT;
        DIGIT_PASS(uint64_t, KT, KEY_FLOAT(uint64_t, 64, 0x8000000000000000ull, 0x7fffffffffffffffull,
                                           0x7ff0000000000000ull), 1);
    } break;
    default: break;
    }
}

static void count_worker(void *arg, int i, int k)
{
    count_job_t *j = arg;
    unsigned long long b, e;
    dr_parallel_slice(j->n, i, k, &b, &e);
    uint64_t *c = j->priv + (size_t)i * j->stride;
    if (j->p->kind == DR_COUNT_HIST) {
        count_hist(j->p, j->edges, j->in, (size_t)b, (size_t)e, c, j->copies);
    } else {
        count_digits(j->p, j->in, (size_t)b, (size_t)e, c, j->copies, j->keep);
    }
}

dr_status_t dr_cpu_count_on(const dr_count_pass_t *p, const void *edges, const void *in, size_t n, int nthreads,
                            const dr_parallel_cpus_t *cpus, uint64_t *counts)
{
    return dr_cpu_count_keep(p, edges, in, n, nthreads, cpus, counts, NULL, 0, NULL);
}

dr_status_t dr_cpu_count_keep(const dr_count_pass_t *p, const void *edges, const void *in, size_t n, int nthreads,
                              const dr_parallel_cpus_t *cpus, uint64_t *counts, void *keep, size_t keep_cap,
                              size_t *kept)
{
    const size_t words = (size_t)dr_count_words(p);
    if (kept) *kept = 0;
    if (n == 0) return DR_OK;
    if (nthreads < 1) nthreads = 1;
    const size_t copies = words <= DR_COUNT_COPIES_MAX_WORDS ? DR_COUNT_COPIES : 1;
    /* Threads past one per 64 Ki elements only add the cost of their counts; past the memory cap, fewer threads. */
    const size_t stride = words * copies + DR_COUNT_SPILL;
    const size_t by_n = n / 65536 + 1, by_mem = DR_COUNT_PRIVATE_BYTES / (stride * sizeof(uint64_t)) + 1;
    if ((size_t)nthreads > by_n) nthreads = (int)by_n;
    if ((size_t)nthreads > by_mem) nthreads = (int)by_mem;
    uint64_t *priv = calloc((size_t)nthreads * stride, sizeof *priv);
    if (!priv) {
        dr_error("cannot allocate %zu bytes of counts for %d threads", (size_t)nthreads * stride * sizeof *priv,
                 nthreads);
        return DR_ERR_RUNTIME;
    }
    keep_t k = {keep, keep_cap, 0, keep_cap < n / 32};
    count_job_t j = {p, edges, in, n, stride, copies, priv, keep ? &k : NULL};
    dr_parallel_run_on(nthreads, cpus, count_worker, &j);
    for (int t = 0; t < nthreads; ++t) {
        const uint64_t *pt = priv + (size_t)t * stride;
        for (size_t w = 0; w < words; ++w)
            for (size_t r = 0; r < copies; ++r) counts[w] += pt[w * copies + r];
    }
    free(priv);
    if (kept) *kept = keep ? atomic_load(&k.pos) : 0; /* past keep_cap where they did not fit */
    return DR_OK;
}
