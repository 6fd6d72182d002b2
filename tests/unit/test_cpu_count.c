/* The CPU backend's counting passes (src/lib/cpu_count.c) against a scalar model built from the shared arithmetic
 * alone (src/common/distrib.h: dr_hist_bin_*, the dr_key_* functions, dr_count_group and dr_count_digit), element
 * by element: every count of every histogram and radix-select digit pass, and the elements a keeping pass keeps.
 * cpu_count.c takes its own branch-free paths (the estimate in vector loops, keys by bit arithmetic, copies of the
 * counts, blocks with nothing in play skipped), so this is what says they give the shared functions' answers.
 *
 * Data of every element type: values in and around the range, the edges themselves and their neighbours, NaN,
 * infinities, zeros of both signs, subnormals and random bit patterns; random lengths up to 5000 (a thread's slice is
 * at least 65536 elements: one thread) and, every eighth case, 140000 to 200000 (2 and 3 threads: slices that end
 * inside a block, keeping threads sharing the keep buffer's atomic position). Plans with few and many bins, the fast
 * estimate with small and large margins (through every version of cpu_lanes.c this CPU runs: the estimates are
 * theirs), and the exact estimate; digit passes of every position, the first (every
 * element counted) and later ones with 1, 3 and 7 groups (7: the binary search), keeping and not. And every float16
 * value at once through the exact estimate with many bins. */
#include <math.h>

#include "check.h"
#include "cpu_count.h"
#include "cpu_lanes.h"
#include "datagen.h"
#include "distrib.h"
#include "dtype.h"

enum { MAXN = 200000 };
static const dr_dtype_t types[] = {DR_INT8,  DR_UINT8,  DR_INT16,   DR_UINT16,   DR_INT32,   DR_UINT32,
                                   DR_INT64, DR_UINT64, DR_FLOAT16, DR_BFLOAT16, DR_FLOAT32, DR_FLOAT64};
#define NTYPES (sizeof types / sizeof types[0])

/* Element i of buf (of type t) as the double the model's float64 path reads, or as the float its float path reads. */
static double elem_f64(dr_dtype_t t, const void *buf, size_t i)
{
    switch (t) {
    case DR_INT8: return (double)((const int8_t *)buf)[i];
    case DR_UINT8: return (double)((const uint8_t *)buf)[i];
    case DR_INT16: return (double)((const int16_t *)buf)[i];
    case DR_UINT16: return (double)((const uint16_t *)buf)[i];
    case DR_INT32: return (double)((const int32_t *)buf)[i];
    case DR_UINT32: return (double)((const uint32_t *)buf)[i];
    case DR_INT64: return (double)((const int64_t *)buf)[i];
    case DR_UINT64: return (double)((const uint64_t *)buf)[i];
    case DR_FLOAT64: return ((const double *)buf)[i];
    default: return 0;
    }
}
static float elem_f32(dr_dtype_t t, const void *buf, size_t i)
{
    const uint16_t h = ((const uint16_t *)buf)[i];
    return t == DR_FLOAT16 ? dr_f16_to_f32(h) : t == DR_BFLOAT16 ? dr_bf16_to_f32(h) : ((const float *)buf)[i];
}
/* Up to 5000 elements (one thread's slice), or every eighth rep 140000 or more (three slices). */
static size_t random_length(uint64_t *rng, int rep)
{
    const uint64_t r = check_rand(rng);
    return rep % 8 == 7 ? 140000 + (size_t)(r % (MAXN - 140000 + 1)) : 1 + (size_t)(r % 5000);
}

static int is_float_bins(dr_dtype_t t) { return t == DR_FLOAT16 || t == DR_BFLOAT16 || t == DR_FLOAT32; }

/* The key of element i, as distrib.c's radix select reads it. */
static uint64_t elem_key(dr_dtype_t t, const void *buf, size_t i)
{
    switch (t) {
    case DR_INT8: return (uint8_t)(((const uint8_t *)buf)[i] ^ 0x80u);
    case DR_UINT8: return ((const uint8_t *)buf)[i];
    case DR_INT16: return (uint16_t)(((const uint16_t *)buf)[i] ^ 0x8000u);
    case DR_UINT16: return ((const uint16_t *)buf)[i];
    case DR_INT32: return ((const uint32_t *)buf)[i] ^ 0x80000000u;
    case DR_UINT32: return ((const uint32_t *)buf)[i];
    case DR_INT64: return ((const uint64_t *)buf)[i] ^ 0x8000000000000000ull;
    case DR_UINT64: return ((const uint64_t *)buf)[i];
    case DR_FLOAT16: return dr_key_f16(((const uint16_t *)buf)[i]);
    case DR_BFLOAT16: return dr_key_bf16(((const uint16_t *)buf)[i]);
    case DR_FLOAT32: return dr_key_f32(((const uint32_t *)buf)[i]);
    default: return dr_key_f64(((const uint64_t *)buf)[i]);
    }
}

/* Store the double v into element i of buf as type t (floats rounded to the type; integers converted where in
 * range, else random bits). */
static void put(dr_dtype_t t, void *buf, size_t i, double v, uint64_t r)
{
    const float f = (float)v;
    switch (t) {
    case DR_INT8: ((int8_t *)buf)[i] = fabs(v) < 127 ? (int8_t)v : (int8_t)r; break;
    case DR_UINT8: ((uint8_t *)buf)[i] = v >= 0 && v < 255 ? (uint8_t)v : (uint8_t)r; break;
    case DR_INT16: ((int16_t *)buf)[i] = fabs(v) < 32767 ? (int16_t)v : (int16_t)r; break;
    case DR_UINT16: ((uint16_t *)buf)[i] = v >= 0 && v < 65535 ? (uint16_t)v : (uint16_t)r; break;
    case DR_INT32: ((int32_t *)buf)[i] = fabs(v) < 2e9 ? (int32_t)v : (int32_t)r; break;
    case DR_UINT32: ((uint32_t *)buf)[i] = v >= 0 && v < 4e9 ? (uint32_t)v : (uint32_t)r; break;
    case DR_INT64: ((int64_t *)buf)[i] = fabs(v) < 9e18 ? (int64_t)v : (int64_t)r; break;
    case DR_UINT64: ((uint64_t *)buf)[i] = v >= 0 && v < 1.8e19 ? (uint64_t)v : r; break;
    case DR_FLOAT16: {
        const float h = dr_round_f16(f);
        ((uint16_t *)buf)[i] = fabsf(h) >= 6.1035156e-05f && fabsf(h) < 65504.0f ? dr_f32_to_f16_exact(h) : (uint16_t)r;
    } break;
    case DR_BFLOAT16: ((uint16_t *)buf)[i] = dr_f32_to_bf16_exact(f); break;
    case DR_FLOAT32: ((float *)buf)[i] = f; break;
    default: ((double *)buf)[i] = v; break;
    }
}

/* Special values of a float type into element i. */
static void put_special(dr_dtype_t t, void *buf, size_t i, uint64_t r)
{
    static const uint64_t f64[] = {0x7ff8000000000001ull, 0xfff0000000000000ull, 0x7ff0000000000000ull,
                                   0x8000000000000000ull, 0, 1, 0x800000000000000full, 0x7ff0000000000001ull};
    static const uint32_t f32[] = {0x7fc00001u, 0xff800000u, 0x7f800000u, 0x80000000u, 0, 1, 0x8000000fu, 0x7f800001u};
    static const uint16_t f16[] = {0x7e01u, 0xfc00u, 0x7c00u, 0x8000u, 0, 1, 0x800fu, 0x7c01u};
    static const uint16_t bf16[] = {0x7fc1u, 0xff80u, 0x7f80u, 0x8000u, 0, 1, 0x800fu, 0x7f81u};
    const size_t k = (size_t)(r % 8);
    if (t == DR_FLOAT64) memcpy((double *)buf + i, &f64[k], 8);
    else if (t == DR_FLOAT32) memcpy((float *)buf + i, &f32[k], 4);
    else if (t == DR_FLOAT16) ((uint16_t *)buf)[i] = f16[k];
    else if (t == DR_BFLOAT16) ((uint16_t *)buf)[i] = bf16[k];
    else memcpy((char *)buf + i * dr_dtype_size(t), &r, dr_dtype_size(t));
}

/* A plan over [first, last] with `bins` bins for type t (not NumPy's own rounding of the ends: the shared functions
 * are the model here, whatever the plan), its edges evenly spaced in the bin type. */
static void make_hist(dr_dtype_t t, double first, double last, uint32_t bins, int exact, double margin,
                      dr_count_pass_t *p, float *ef, double *ed)
{
    memset(p, 0, sizeof *p);
    p->kind = DR_COUNT_HIST;
    p->dtype = t;
    dr_hist_plan_t *h = &p->hist;
    h->type = t == DR_FLOAT16 ? DR_HT_F16 : is_float_bins(t) ? DR_HT_F32 : DR_HT_F64;
    h->in_type = exact && (bins & 1);
    h->bins = bins;
    if (h->type != DR_HT_F64) {
        first = h->type == DR_HT_F16 ? dr_round_f16((float)first) : (float)first;
        last = h->type == DR_HT_F16 ? dr_round_f16((float)last) : (float)last;
    }
    h->first = first;
    h->last = last;
    h->denom = last - first;
    h->bins_t = bins;
    h->scale = (double)bins / h->denom;
    h->exact_estimate = exact;
    h->margin = exact ? 1.0 : margin;
    for (uint32_t i = 0; i <= bins; ++i) {
        const double e = i == bins ? last : first + (last - first) * (double)i / bins;
        ed[i] = e;
        ef[i] = h->type == DR_HT_F16 ? dr_round_f16((float)e) : (float)e;
    }
}

static void test_hist(uint64_t *rng, void *buf, float *ef, double *ed, uint64_t *got, uint64_t *want)
{
    static const uint32_t bin_choices[] = {1, 2, 10, 255, 256, 4096, 9000, 65536};
    for (int rep = 0; rep < 40; ++rep)
        for (size_t ti = 0; ti < NTYPES; ++ti) {
            const dr_dtype_t t = types[ti];
            const uint64_t r0 = check_rand(rng);
            uint32_t bins = bin_choices[r0 % 8];
            if (t == DR_FLOAT16 && bins > 256) bins = 256; /* float16 edges: distinct only so far */
            const double lo = t == DR_UINT8 || t == DR_UINT16 || t == DR_UINT32 || t == DR_UINT64 ? 3.0 : -7.5;
            const double first = lo + (double)(r0 >> 40 & 7), last = first + (t == DR_INT8 || t == DR_UINT8 ? 90 : 700);
            const int exact = rep % 4 == 3;
            const double margin = rep % 4 == 1 ? 0.2 : 1e-3;
            dr_count_pass_t p;
            make_hist(t, first, last, bins, exact, margin, &p, ef, ed);
            const size_t n = random_length(rng, rep);
            for (size_t i = 0; i < n; ++i) {
                const uint64_t r = check_rand(rng);
                const int kind = (int)(r % 16);
                const double w = p.hist.last - p.hist.first;
                if (kind < 10) put(t, buf, i, p.hist.first - 0.1 * w + 1.2 * w * (double)(r >> 11) * 0x1p-53, r);
                else if (kind < 13) { /* an edge, or just beside it */
                    const uint32_t k = (uint32_t)((r >> 20) % (bins + 1));
                    double e = is_float_bins(t) ? (double)ef[k] : ed[k];
                    if (kind == 11) e = is_float_bins(t) ? (double)nextafterf((float)e, -INFINITY) : nextafter(e, -INFINITY);
                    if (kind == 12) e = is_float_bins(t) ? (double)nextafterf((float)e, INFINITY) : nextafter(e, INFINITY);
                    put(t, buf, i, e, r);
                } else if (kind < 15) put_special(t, buf, i, r >> 8);
                else memcpy((char *)buf + i * dr_dtype_size(t), &r, dr_dtype_size(t)); /* random bits */
            }
            const size_t words = (size_t)dr_count_words(&p);
            memset(want, 0, words * sizeof *want);
            for (size_t i = 0; i < n; ++i) {
                int64_t b;
                if (t == DR_FLOAT16) b = dr_hist_bin_f16(&p.hist, ef, elem_f32(t, buf, i));
                else if (is_float_bins(t)) b = dr_hist_bin_f32(&p.hist, ef, elem_f32(t, buf, i));
                else b = dr_hist_bin_f64(&p.hist, ed, elem_f64(t, buf, i));
                ++want[b >= 0 ? (uint64_t)b : bins + (uint64_t)(-b - 1)];
            }
            /* every version of the lanes this CPU runs (the estimates are theirs: cpu_lanes.h) */
            const dr_cpu_lanes_t *widest = dr_cpu_lanes();
            for (int v = 0; dr_cpu_lanes_at(v); ++v) {
                const dr_cpu_lanes_t *lanes = dr_cpu_lanes_at(v);
                if (dr_cpu_lanes_use(lanes) != 0) continue; /* not on this CPU */
                for (int threads = 1; threads <= 3; ++threads) {
                    for (size_t w = 0; w < words; ++w) got[w] = 1000; /* the pass adds to what is there */
                    const dr_status_t s = dr_cpu_count_on(&p, is_float_bins(t) ? (const void *)ef : (const void *)ed,
                                                          buf, n, threads, NULL, got);
                    size_t bad = words;
                    for (size_t w = 0; w < words && bad == words; ++w)
                        if (got[w] != want[w] + 1000) bad = w;
                    CHECK(s == DR_OK && bad == words,
                          "%s histogram of %zu elements, %u bins over [%g, %g] (exact %d, margin %g), %d threads, %s "
                          "lanes: count %zu is %llu, the model's %llu", dr_dtype_name(t), n, bins, p.hist.first,
                          p.hist.last, exact, p.hist.margin, threads, lanes->name, bad,
                          bad < words ? (unsigned long long)(got[bad] - 1000) : 0ull,
                          bad < words ? (unsigned long long)want[bad] : 0ull);
                }
            }
            dr_cpu_lanes_use(widest);
        }
}

/* float16 with NumPy's own estimate (exact_estimate), every one of the 65536 values at once, over plans whose bins
 * are many enough for the estimate to stray past a neighbouring bin (where only the estimate's every rounding gives
 * the model's bin; the random cases above keep float16 at 256 bins or fewer, where the correction hides a wrong
 * estimate): in the bin type throughout (odd bins, make_hist's in_type) and in float64 after the difference. */
static void test_f16_exact_all(uint16_t *buf, float *ef, double *ed, uint64_t *got, uint64_t *want)
{
    static const struct {
        double first, last;
        uint32_t bins;
    } plans[] = {{-3, 7.5, 1000}, {-3, 7.5, 4097}, {-60000, 60000, 20000}, {-60000, 60000, 301},
                 {0.001, 2, 65535}, {1000, 1100, 4096}, {-1, 1, 9999}};
    const size_t n = 65536;
    for (size_t i = 0; i < n; ++i) buf[i] = (uint16_t)i;
    for (size_t k = 0; k < sizeof plans / sizeof plans[0]; ++k) {
        dr_count_pass_t p;
        make_hist(DR_FLOAT16, plans[k].first, plans[k].last, plans[k].bins, 1, 0, &p, ef, ed);
        const size_t words = (size_t)dr_count_words(&p);
        memset(want, 0, words * sizeof *want);
        for (size_t i = 0; i < n; ++i) {
            const int64_t b = dr_hist_bin_f16(&p.hist, ef, dr_f16_to_f32(buf[i]));
            ++want[b >= 0 ? (uint64_t)b : plans[k].bins + (uint64_t)(-b - 1)];
        }
        for (int threads = 1; threads <= 3; threads += 2) {
            memset(got, 0, words * sizeof *got);
            const dr_status_t s = dr_cpu_count_on(&p, ef, buf, n, threads, NULL, got);
            size_t bad = words;
            for (size_t w = 0; w < words && bad == words; ++w)
                if (got[w] != want[w]) bad = w;
            CHECK(s == DR_OK && bad == words,
                  "every float16, %u bins over [%g, %g] (exact estimate, in_type %d), %d threads: count %zu is %llu, "
                  "the model's %llu", plans[k].bins, p.hist.first, p.hist.last, p.hist.in_type, threads, bad,
                  bad < words ? (unsigned long long)got[bad] : 0ull, bad < words ? (unsigned long long)want[bad] : 0ull);
        }
    }
}

static int cmp_key(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* n elements of type t for a digit or pilot pass: few distinct values (rep odd: many share a prefix) or random bits
 * (rep even), specials for floats. */
static void fill_keys_data(uint64_t *rng, dr_dtype_t t, void *buf, size_t n, int rep)
{
    const size_t es = dr_dtype_size(t);
    const uint64_t pool = 1 + check_rand(rng) % 40;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = check_rand(rng);
        if ((t == DR_FLOAT16 || t == DR_BFLOAT16 || t == DR_FLOAT32 || t == DR_FLOAT64) && r % 13 == 0)
            put_special(t, buf, i, r >> 8);
        else if (rep & 1) put(t, buf, i, (double)(r % pool) * 0.75 - 3.0, r);
        else memcpy((char *)buf + i * es, &r, es);
    }
}

static void test_digits(uint64_t *rng, void *buf, void *keep, uint64_t *got, uint64_t *want, uint64_t *ka,
                        uint64_t *kb)
{
    for (int rep = 0; rep < 60; ++rep)
        for (size_t ti = 0; ti < NTYPES; ++ti) {
            const dr_dtype_t t = types[ti];
            const int bits = dr_key_bits(t);
            const size_t n = random_length(rng, rep);
            fill_keys_data(rng, t, buf, n, rep);
            dr_count_pass_t p;
            memset(&p, 0, sizeof p);
            p.kind = DR_COUNT_DIGIT;
            p.dtype = t;
            const int npass = dr_select_passes(bits), pass = (int)(check_rand(rng) % (uint64_t)npass);
            int resolved = 0;
            for (int q = 0; q < pass; ++q) resolved += dr_select_width(bits, q);
            p.width = dr_select_width(bits, pass);
            p.shift = bits - resolved - p.width;
            p.resolved = resolved;
            /* 1..4 groups take the branch-free compares, up to 32 the sums over the prefixes, more a binary search */
            static const int group_choices[] = {1, 3, 7, 32, 40};
            p.groups = resolved ? group_choices[rep % 5] : 1;
            if (resolved) { /* prefixes of elements of the data (and one of none), ascending and distinct */
                uint64_t pre[40];
                int g = 0;
                for (int tries = 0; g < p.groups && tries < 100; ++tries) {
                    const uint64_t k = tries == 0 ? ((1ull << resolved) - 1) >> 1
                                                  : elem_key(t, buf, check_rand(rng) % n) >> (p.shift + p.width);
                    int dup = 0;
                    for (int j = 0; j < g; ++j) dup |= pre[j] == k;
                    if (!dup) pre[g++] = k;
                }
                p.groups = g;
                qsort(pre, (size_t)g, sizeof pre[0], cmp_key);
                memcpy(p.prefix, pre, (size_t)g * sizeof pre[0]);
            }
            const int is_float = t == DR_FLOAT16 || t == DR_BFLOAT16 || t == DR_FLOAT32 || t == DR_FLOAT64;
            const uint64_t nan_key = ~0ull >> (64 - bits);
            const size_t words = (size_t)dr_count_words(&p);
            memset(want, 0, words * sizeof *want);
            size_t in_play = 0, group_differs = 0;
            for (size_t i = 0; i < n; ++i) {
                const uint64_t k = elem_key(t, buf, i);
                if (is_float && k == nan_key) {
                    ++want[words - 1];
                    continue;
                }
                int g = p.resolved ? -1 : 0; /* by a scan of the prefixes; the GPU's rule must agree */
                for (int j = 0; j < p.groups && p.resolved; ++j)
                    if (k >> (p.shift + p.width) == p.prefix[j]) g = j;
                group_differs += dr_count_group(&p, k) != g;
                if (g < 0) continue;
                ++want[((uint64_t)g << p.width) | dr_count_digit(&p, k)];
                ka[in_play++] = k;
            }
            CHECK(group_differs == 0, "dr_count_group differs from a scan of the %d prefixes for %zu of %zu keys",
                  p.groups, group_differs, n);
            qsort(ka, in_play, sizeof ka[0], cmp_key);
            for (int threads = 1; threads <= 3; ++threads)
                for (int keeping = 0; keeping < 2; ++keeping) {
                    memset(got, 0, words * sizeof *got);
                    size_t kept = 0;
                    const dr_status_t s = dr_cpu_count_keep(&p, NULL, buf, n, threads, NULL, got,
                                                            keeping ? keep : NULL, in_play, &kept);
                    size_t bad = words;
                    for (size_t w = 0; w < words && bad == words; ++w)
                        if (got[w] != want[w]) bad = w;
                    CHECK(s == DR_OK && bad == words,
                          "%s digit pass (shift %d, width %d, resolved %d, %d groups) of %zu elements, %d threads, "
                          "keeping %d: count %zu is %llu, the model's %llu", dr_dtype_name(t), p.shift, p.width,
                          p.resolved, p.groups, n, threads, keeping, bad,
                          bad < words ? (unsigned long long)got[bad] : 0ull,
                          bad < words ? (unsigned long long)want[bad] : 0ull);
                    if (!keeping) continue;
                    for (size_t i = 0; i < kept && i < in_play; ++i) kb[i] = elem_key(t, keep, i);
                    qsort(kb, kept < in_play ? kept : in_play, sizeof kb[0], cmp_key);
                    CHECK(kept == in_play && (in_play == 0 || !memcmp(ka, kb, in_play * sizeof ka[0])),
                          "%s keeping pass (resolved %d, %d groups), %d threads: kept %zu elements, the model %zu "
                          "(or other ones)", dr_dtype_name(t), p.resolved, p.groups, threads, kept, in_play);
                }
            /* keep room for one fewer than in play: the pass must say so (kept past the room), not write past it */
            if (in_play > 0) {
                size_t kept = 0;
                memset(got, 0, words * sizeof *got);
                const dr_status_t s = dr_cpu_count_keep(&p, NULL, buf, n, 2, NULL, got, keep, in_play - 1, &kept);
                CHECK(s == DR_OK && kept > in_play - 1 && kept <= in_play,
                      "%s keeping pass with room for %zu of %zu in play: status %d, kept %zu (expected more than the "
                      "room)", dr_dtype_name(t), in_play - 1, in_play, (int)s, kept);
            }
        }
}

/* Pilot (RANGE) passes: K disjoint key intervals (K 1..4 take the block sums, up to 32 the sums over the ends, more
 * the binary search), made from the data's own keys and from keys no element has; every count against a scan of the
 * intervals, every kept element against the model's, and a keep with too little room said so. */
static void test_range(uint64_t *rng, void *buf, void *keep, uint64_t *got, uint64_t *want, uint64_t *ka,
                       uint64_t *kb)
{
    static const int ks[] = {1, 2, 3, 4, 5, 9, 32, 40};
    for (int rep = 0; rep < 40; ++rep)
        for (size_t ti = 0; ti < NTYPES; ++ti) {
            const dr_dtype_t t = types[ti];
            const int bits = dr_key_bits(t);
            const size_t n = random_length(rng, rep);
            fill_keys_data(rng, t, buf, n, rep);
            const uint64_t top = ~0ull >> (64 - bits);
            /* 2K ends: keys of elements (or any key, or the largest), sorted; intervals [e0, e1], [e2, e3], ...
             * made disjoint by stepping past the one before */
            const int k = ks[rep % 8];
            uint64_t e[80];
            for (int j = 0; j < 2 * k; ++j) {
                const uint64_t r = check_rand(rng);
                e[j] = n && r % 3 ? elem_key(t, buf, r % n) : r % 7 == 0 ? top : r & top;
            }
            qsort(e, (size_t)(2 * k), sizeof e[0], cmp_key);
            int kk = 0;
            dr_count_pass_t p;
            memset(&p, 0, sizeof p);
            p.kind = DR_COUNT_RANGE;
            p.dtype = t;
            uint64_t lo[40], hi[40];
            for (int j = 0; j < k; ++j) {
                uint64_t a = e[2 * j], z = e[2 * j + 1];
                if (kk > 0) { /* a gap of at least one key after the interval before */
                    if (hi[kk - 1] >= top - 1) break;
                    if (a <= hi[kk - 1] + 1) a = hi[kk - 1] + 2;
                    if (z < a) z = a;
                }
                lo[kk] = a;
                hi[kk] = z;
                ++kk;
            }
            if (kk == 0) continue;
            p.groups = kk;
            for (int j = 0; j < kk; ++j) {
                p.prefix[j] = lo[j];
                p.prefix[kk + j] = hi[j];
            }
            const int is_float = t == DR_FLOAT16 || t == DR_BFLOAT16 || t == DR_FLOAT32 || t == DR_FLOAT64;
            const size_t words = (size_t)dr_count_words(&p);
            memset(want, 0, words * sizeof *want);
            size_t in_play = 0, slot_differs = 0;
            for (size_t i = 0; i < n; ++i) {
                const uint64_t key = elem_key(t, buf, i);
                if (is_float && key == top) {
                    ++want[words - 1];
                    continue;
                }
                int slot = kk; /* gap index by a scan: intervals wholly below the key */
                for (int j = 0; j < kk; ++j) {
                    if (key >= lo[j] && key <= hi[j]) slot = -1 - j;
                    else if (key > hi[j]) ++slot;
                }
                /* the GPU's rule (dr_count_range_slot) must agree with the scan */
                slot_differs += dr_count_range_slot(&p, key) != (uint32_t)(slot < 0 ? -1 - slot : slot);
                if (slot < 0) {
                    ++want[-1 - slot];
                    ka[in_play++] = key;
                } else {
                    ++want[slot];
                }
            }
            CHECK(slot_differs == 0, "dr_count_range_slot differs from a scan of the %d intervals for %zu of %zu keys",
                  kk, slot_differs, n);
            qsort(ka, in_play, sizeof ka[0], cmp_key);
            for (int threads = 1; threads <= 3; threads += 2)
                for (int keeping = 0; keeping < 2; ++keeping) {
                    memset(got, 0, words * sizeof *got);
                    size_t kept = 0;
                    const dr_status_t st = dr_cpu_count_keep(&p, NULL, buf, n, threads, NULL, got,
                                                             keeping ? keep : NULL, in_play, &kept);
                    size_t bad = words;
                    for (size_t w = 0; w < words && bad == words; ++w)
                        if (got[w] != want[w]) bad = w;
                    CHECK(st == DR_OK && bad == words,
                          "%s pilot pass (%d intervals) of %zu elements, %d threads, keeping %d: count %zu is %llu, "
                          "the model's %llu", dr_dtype_name(t), kk, n, threads, keeping, bad,
                          bad < words ? (unsigned long long)got[bad] : 0ull,
                          bad < words ? (unsigned long long)want[bad] : 0ull);
                    if (!keeping) continue;
                    for (size_t i = 0; i < kept && i < in_play; ++i) kb[i] = elem_key(t, keep, i);
                    qsort(kb, kept < in_play ? kept : in_play, sizeof kb[0], cmp_key);
                    CHECK(kept == in_play && (in_play == 0 || !memcmp(ka, kb, in_play * sizeof ka[0])),
                          "%s pilot pass (%d intervals), %d threads: kept %zu elements, the model %zu (or other "
                          "ones)", dr_dtype_name(t), kk, threads, kept, in_play);
                }
            if (in_play > 0) {
                size_t kept = 0;
                memset(got, 0, words * sizeof *got);
                const dr_status_t st = dr_cpu_count_keep(&p, NULL, buf, n, 2, NULL, got, keep, in_play - 1, &kept);
                CHECK(st == DR_OK && kept > in_play - 1 && kept <= in_play,
                      "%s pilot pass with room for %zu of %zu in play: status %d, kept %zu (expected more than the "
                      "room)", dr_dtype_name(t), in_play - 1, in_play, (int)st, kept);
            }
        }
}

int main(void)
{
    uint64_t rng = check_seed("test_cpu_count");
    static uint64_t buf[MAXN], keep[MAXN], ka[MAXN], kb[MAXN];
    static float ef[65537];
    static double ed[65537];
    static uint64_t got[(40 << DR_SELECT_DIGIT_MAX) + 3], want[(40 << DR_SELECT_DIGIT_MAX) + 3];
    test_hist(&rng, buf, ef, ed, got, want);
    test_f16_exact_all((uint16_t *)buf, ef, ed, got, want);
    test_digits(&rng, buf, keep, got, want, ka, kb);
    test_range(&rng, buf, keep, got, want, ka, kb);
    return check_summary("test_cpu_count");
}
