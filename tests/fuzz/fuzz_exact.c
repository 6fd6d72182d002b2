/* libFuzzer target: the exact sums of --acc exact (src/common/accum.h, "Exact sums": dr_exact_t) against the
 * independent reference (src/cli/reference.c, dr_ref_exact_*). Input: byte 0 the mode, byte 1 the split, the rest the
 * terms, little-endian:
 *   mode & 3:  0 float64, 1 float32, 2 float16, 3 bfloat16 (the 16-bit and 32-bit types widened by accum.h's
 *              converters, as the CPU backend does);
 *   mode & 4:  cancel: every term but each fourth is followed by its negation (large terms cancel, the small rest
 *              decides the rounding);
 *   mode >> 3: the sequential sum is also normalized after every (mode >> 3) + 1 adds (0: never);
 *   split:     1 + (split & 7) partials at cuts drawn from the split byte and the size; each partial adds its terms
 *              backwards when split & 8; the partials combine last-first when split & 16, else odd ones first.
 *
 * Invariants, beyond no crash / no UB:
 *   - the partials, normalized and combined, equal the sequential sum's normalized dr_exact_t (words and flags),
 *     whatever the cuts, the orders and the extra normalizations;
 *   - dr_exact_to_f64 of the sum equals dr_ref_exact_value bit for bit (a NaN: the canonical 0x7fffffffffffffff on
 *     both), rounded before or after normalizing; the reference merged from the same partials gives it too;
 *   - one term: its own value (a NaN canonical); two terms: the hardware's a + b (their exact sum rounded once, IEEE's
 *     rules for zeros, infinities and overflow), a NaN canonical. */
#include <inttypes.h>

#include "accum.h"
#include "fuzz_common.h"
#include "reference.h"

#define CANON_NAN 0x7fffffffffffffffull
enum { MAX_PARTS = 8 };

static uint64_t canonical(double x) { return x != x ? CANON_NAN : dr_f64_to_bits(x); }

/* The terms of the input, widened to double; returns how many (at most cap). */
static size_t terms_of(const uint8_t *p, size_t size, int type, int cancel, double *x, size_t cap)
{
    const size_t esize = type == 0 ? 8 : type == 1 ? 4 : 2;
    size_t n = 0;
    for (size_t i = 0; i + esize <= size && n + 2 <= cap; i += esize) {
        double v;
        if (type == 0) {
            uint64_t b;
            memcpy(&b, p + i, 8);
            v = dr_bits_to_f64(b);
        } else if (type == 1) {
            uint32_t b;
            memcpy(&b, p + i, 4);
            v = (double)dr_bits_to_f32(b);
        } else {
            uint16_t b;
            memcpy(&b, p + i, 2);
            v = (double)(type == 2 ? dr_f16_to_f32(b) : dr_bf16_to_f32(b));
        }
        x[n++] = v;
        if (cancel && (i / esize) % 4 != 3) x[n++] = -v;
    }
    return n;
}

/* [b, e) into a normalized partial, forwards or backwards. */
static void partial(const double *x, size_t b, size_t e, int backwards, dr_exact_t *out)
{
    dr_exact_zero(out);
    for (size_t i = b; i < e; ++i) dr_exact_add_f64(out, x[backwards ? e - 1 - (i - b) : i]);
    dr_exact_normalize(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const unsigned mode = data[0], split = data[1];
    static double x[4096];
    const size_t n = terms_of(data + 2, size - 2, (int)(mode & 3), (mode & 4) != 0, x, sizeof x / sizeof x[0]);

    /* Sequentially, with extra normalizations at a cadence; and unnormalized. */
    dr_exact_t seq, raw;
    dr_exact_zero(&seq);
    dr_exact_zero(&raw);
    const size_t every = (mode >> 3) ? (mode >> 3) + 1 : 0;
    for (size_t i = 0; i < n; ++i) {
        dr_exact_add_f64(&seq, x[i]);
        dr_exact_add_f64(&raw, x[i]);
        if (every && (i + 1) % every == 0) dr_exact_normalize(&seq);
    }
    const uint64_t raw_bits = dr_f64_to_bits(dr_exact_to_f64(&raw));
    dr_exact_normalize(&seq);
    const uint64_t got = dr_f64_to_bits(dr_exact_to_f64(&seq));

    dr_ref_exact_t ref;
    dr_ref_exact_init(&ref);
    for (size_t i = 0; i < n; ++i) dr_ref_exact_add(&ref, x[i]);
    const uint64_t want = dr_f64_to_bits(dr_ref_exact_value(&ref));
    FUZZ_CHECK(got == want, "%zu terms (type %u, first %016" PRIx64 "): dr_exact_to_f64 %016" PRIx64
               ", dr_ref_exact_value %016" PRIx64, n, mode & 3, n ? dr_f64_to_bits(x[0]) : 0, got, want);
    FUZZ_CHECK(raw_bits == got, "%zu terms: unnormalized %016" PRIx64 ", normalized %016" PRIx64, n, raw_bits, got);
    FUZZ_CHECK(!(got >> 52 == 0x7ff && (got & 0xfffffffffffffull)) || got == CANON_NAN,
               "%zu terms: a NaN that is not the canonical one: %016" PRIx64, n, got);
    if (n == 1)
        FUZZ_CHECK(got == canonical(x[0]), "one term %016" PRIx64 ": %016" PRIx64, dr_f64_to_bits(x[0]), got);
    if (n == 2) {
        const uint64_t hw = canonical(x[0] + x[1]);
        FUZZ_CHECK(got == hw, "%016" PRIx64 " + %016" PRIx64 ": %016" PRIx64 ", the hardware's sum %016" PRIx64,
                   dr_f64_to_bits(x[0]), dr_f64_to_bits(x[1]), got, hw);
    }

    /* Partials at cuts drawn from the split byte: sorted, in [0, n]. */
    const int parts = 1 + (int)(split & 7);
    size_t cut[MAX_PARTS + 1];
    uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)split << 32) ^ size;
    cut[0] = 0;
    cut[parts] = n;
    for (int i = 1; i < parts; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        cut[i] = n ? (size_t)((s >> 33) % (n + 1)) : 0;
    }
    for (int i = 2; i < parts; ++i)
        for (int j = i; j > 1 && cut[j] < cut[j - 1]; --j) {
            const size_t t = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = t;
        }
    dr_exact_t part[MAX_PARTS];
    dr_ref_exact_t rpart[MAX_PARTS];
    for (int i = 0; i < parts; ++i) {
        partial(x, cut[i], cut[i + 1], (split & 8) != 0, &part[i]);
        dr_ref_exact_init(&rpart[i]);
        for (size_t j = cut[i]; j < cut[i + 1]; ++j) dr_ref_exact_add(&rpart[i], x[j]);
    }
    int order[MAX_PARTS], k = 0;
    if (split & 16) {
        for (int i = parts - 1; i >= 0; --i) order[k++] = i;
    } else {
        for (int i = 1; i < parts; i += 2) order[k++] = i;
        for (int i = 0; i < parts; i += 2) order[k++] = i;
    }
    dr_exact_t all = part[order[0]];
    dr_ref_exact_t rall = rpart[order[0]];
    for (int i = 1; i < parts; ++i) {
        dr_exact_combine(&all, &part[order[i]]);
        dr_ref_exact_merge(&rall, &rpart[order[i]]);
    }
    FUZZ_CHECK(memcmp(&all, &seq, sizeof all) == 0,
               "%zu terms in %d partials (split byte %u): the combined words or flags differ from the sequential "
               "sum's (rounded: %016" PRIx64 " and %016" PRIx64 ")", n, parts, split,
               dr_f64_to_bits(dr_exact_to_f64(&all)), got);
    const uint64_t merged = dr_f64_to_bits(dr_ref_exact_value(&rall));
    FUZZ_CHECK(merged == want, "%zu terms in %d partials: the reference merged gives %016" PRIx64 ", sequentially %016"
               PRIx64, n, parts, merged, want);
    return 0;
}
