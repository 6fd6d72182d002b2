/* The exact-sum kernel's first level (kernels/exact_window.cuh) on the CPU: one thread's window, rounds and misses,
 * with the warp's words as a plain array. Its host build is the same code as the kernel's, so every branch (hits,
 * spills, misses above and below, rebases, flushes at every word offset, infinities, NaNs, subnormals, zeros and
 * -0.0) is checked here without a GPU: the words and flags a stream of rounds leaves must equal accum.h's
 * dr_exact_add_f64 of each element widened to float64, to the bit after normalizing. The speed assumption is checked
 * too: on data like the benchmark's (4u - 1) fewer than 1 in 1000 elements miss once the window has settled.
 *
 * Exit: 0 every case equal, 1 a difference. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "exact_window.cuh"

struct host_words {
    int64_t w[DR_EXACT_WORDS];
    long long bins[DR_XW_MAX_BINS]; /* poisoned: dr_xw_init must zero them */
    double fbins[DR_XW_MAX_BINS];   /* poisoned with NaN: a bin must be written before it is read */
    long adds;
    __host__ __device__ void add(int i, long long v) /* host only; __device__ for exact_window.cuh's signature */
    {
        /* the kernel's bounds: word 67 is never touched by a thread, and each add is below 2^32 in magnitude */
        if (i < 0 || i >= DR_EXACT_WORDS - 1 || v >= (1ll << 32) || v <= -(1ll << 32)) {
#if !defined(__CUDA_ARCH__)
            fprintf(stderr, "add of %lld to word %d out of the kernel's bounds\n", v, i);
#endif
            w[0] += 1ll << 40; /* poison: the comparison fails */
            return;
        }
        w[i] += v;
        ++adds;
    }
};

/* What exact_window.cuh is given: a handle whose add is const (it takes its sink by const reference, as the
 * kernel's warp_words, a pointer to the warp's words). */
struct host_sink {
    host_words *h;
    __host__ __device__ void add(int i, long long v) const { h->add(i, v); }
    __host__ __device__ long long &bin(int k) const { return h->bins[k]; }
    __host__ __device__ double &fbin(int k) const { return h->fbins[k]; }
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

enum pattern { P_NEAR_ONE, P_RANDOM_BITS, P_WIDE, P_DRIFT_UP, P_DRIFT_DOWN, P_ZEROS, P_EDGES, P_CANCEL, P_EXTREME,
               P_TOP_INF, P_COUNT };
static const char *pattern_name[P_COUNT] = {"near-one (4u-1)", "random bits", "wide exponents", "drift up",
                                            "drift down", "zeros and -0.0", "window edges", "cancellation",
                                            "extremes", "the top binade with infinities and NaNs"};

/* Element i of a stream, as float64 bits (DR_XW_F64) or the element's own bits (the others). */
static uint64_t element_bits(int family, int pattern, long i)
{
    const uint64_t r = next64();
    const uint64_t sign = (r >> 7) & 1;
    if (family == DR_XW_F64) {
        uint64_t e;
        switch (pattern) {
        case P_NEAR_ONE: {
            const double u = (double)(r >> 11) * (1.0 / 9007199254740992.0);
            return dr_f64_to_bits(4 * u - 1);
        }
        case P_RANDOM_BITS: return r;
        case P_WIDE: e = (r >> 20) % 2047; break;
        case P_DRIFT_UP: e = 1 + (uint64_t)(i / 3) % 2040; break;
        case P_DRIFT_DOWN: e = 2040 - (uint64_t)(i / 3) % 2040; break;
        case P_ZEROS: return (r & 3) == 0 ? dr_f64_to_bits(1.5) : sign << 63;
        case P_EDGES: e = 1003 + (r >> 30) % 3 * 20 - 1 + (r >> 40) % 3 + ((r >> 50) & 1) * 19; break; /* 1002..1044 */
        case P_CANCEL: return (i & 1) ? dr_f64_to_bits(-ldexp(1.0, 900)) : (r & 8) ? dr_f64_to_bits(ldexp(1.0, 900))
                                                                                     : dr_f64_to_bits(ldexp(3.0, -1070));
        case P_TOP_INF: e = (r & 0x3f) == 0 ? 2047 : 2046; break; /* the window at its highest, and in its rounds */
        default: e = (r & 1) ? 2046 : (r & 2) ? 0 : 1; break;
        }
        return sign << 63 | e << 52 | (r & 0xfffffffffffffull);
    }
    const int half = family != DR_XW_F32;
    const uint32_t mant_bits = family == DR_XW_F32 ? 23 : family == DR_XW_F16 ? 10 : 7;
    const uint32_t exp_max = family == DR_XW_F16 ? 31 : 255, bias = family == DR_XW_F16 ? 15 : 127;
    const uint32_t shift = half ? 15 : 31;
    uint32_t e;
    switch (pattern) {
    case P_NEAR_ONE: {
        const double u = (double)(r >> (64 - mant_bits - 1)) / (double)(1ull << (mant_bits + 1));
        const float x = (float)(4 * u - 1); /* exact on the element's grid */
        const uint32_t f = dr_f32_to_bits(x);
        if (!half) return f;
        if (family == DR_XW_BF16) return f >> 16;
        /* float16: the generator's values are normal halves or zero */
        if ((f & 0x7fffffffu) == 0) return (f >> 16) & 0x8000u;
        return ((f >> 16) & 0x8000u) | ((((f >> 23) & 0xffu) - 112u) << 10) | ((f >> 13) & 0x3ffu);
    }
    case P_RANDOM_BITS: return half ? r & 0xffffu : r & 0xffffffffu;
    case P_WIDE: e = (uint32_t)((r >> 20) % exp_max); break;
    case P_DRIFT_UP: e = 1 + (uint32_t)(i / 3) % (exp_max - 2); break;
    case P_DRIFT_DOWN: e = exp_max - 1 - (uint32_t)(i / 3) % (exp_max - 2); break;
    case P_ZEROS: return (r & 3) == 0 ? (half ? (family == DR_XW_F16 ? 0x3e00u : 0x3fc0u) : 0x3fc00000u)
                                      : (uint64_t)sign << shift;
    case P_EDGES: e = bias - 13 + (uint32_t)((r >> 30) % 3) * 12 + (uint32_t)((r >> 40) % 3); break;
    case P_CANCEL: e = (i & 1) ? exp_max - 1 : 1; break;
    case P_TOP_INF: return (uint64_t)sign << shift | (uint64_t)((r & 0x3f) == 0 ? exp_max : exp_max - 1) << mant_bits |
                           (r & ((1ull << mant_bits) - 1)); /* every exponent bit set: an infinity or a NaN */
    default: e = (r & 1) ? exp_max - 1 : 0; break;
    }
    if (e >= exp_max) e = exp_max - 1;
    return (uint64_t)sign << shift | (uint64_t)e << mant_bits | (r & ((1ull << mant_bits) - 1));
}

/* The element as the kernels widen it, to float64. */
static double widen(int family, uint64_t b)
{
    switch (family) {
    case DR_XW_F64: return dr_bits_to_f64(b);
    case DR_XW_F32: return (double)dr_bits_to_f32((uint32_t)b);
    case DR_XW_F16: return (double)dr_f16_to_f32((uint16_t)b);
    default: return (double)dr_bf16_to_f32((uint16_t)b);
    }
}

/* Pack elements into a 16-byte vector. */
static uint4 pack(int family, const uint64_t *e)
{
    uint32_t w[4];
    for (int q = 0; q < 4; ++q) {
        if (family == DR_XW_F64) w[q] = (uint32_t)(e[q / 2] >> (32 * (q & 1)));
        else if (family == DR_XW_F32) w[q] = (uint32_t)e[q];
        else w[q] = (uint32_t)(e[2 * q] & 0xffffu) | (uint32_t)(e[2 * q + 1] & 0xffffu) << 16;
    }
    uint4 v;
    v.x = w[0], v.y = w[1], v.z = w[2], v.w = w[3];
    return v;
}

template <int F> static void add_round(dr_xw_t &w, const host_sink &sink, const uint4 *vecs, int nvec)
{
    if (nvec == 4) {
        const uint4 v[4] = {vecs[0], vecs[1], vecs[2], vecs[3]};
        dr_xw_add_vectors<F>(w, v, sink);
    } else {
        const uint4 v[1] = {vecs[0]};
        dr_xw_add_vectors<F>(w, v, sink);
    }
}

/* One thread's window with its words, and the reference the same elements went into. */
struct thread_check {
    dr_xw_t w;
    host_words sink;
    dr_exact_t ref;
    template <int F> void start()
    {
        memset(&sink, 0, sizeof sink);
        for (int k = 0; k < DR_XW_MAX_BINS; ++k) sink.bins[k] = 0x5a5a5a5a5a5a5a5all, sink.fbins[k] = NAN;
        const host_sink handle = {&sink};
        dr_xw_init<F>(w, handle);
        dr_exact_zero(&ref);
    }
    /* After the last flush: -1 if the words (normalized) and flags equal the reference's, else the first differing
     * word (DR_EXACT_WORDS: only the flags differ); *got / *want get that word, or the flags. */
    int difference(long long *got, long long *want)
    {
        dr_exact_t g;
        dr_exact_zero(&g);
        for (int k = 0; k < DR_EXACT_WORDS; ++k) g.w[k] = sink.w[k];
        dr_exact_normalize(&g);
        dr_exact_normalize(&ref);
        for (int k = 0; k < DR_EXACT_WORDS; ++k)
            if (g.w[k] != ref.w[k]) return *got = g.w[k], *want = ref.w[k], k;
        const uint32_t kFlags = DR_EXACT_NAN | DR_EXACT_POS_INF | DR_EXACT_NEG_INF;
        *got = (w.flags & kFlags) | (w.nonneg0 ? DR_EXACT_NOT_NEG_ZERO : 0u);
        *want = ref.flags & (kFlags | DR_EXACT_NOT_NEG_ZERO);
        return *got == *want ? -1 : DR_EXACT_WORDS;
    }
};

/* One stream of `nelem` elements through one thread's window, against the reference. Returns 0 if equal. */
template <int F> static int run_stream(int pattern, long nelem, long *misses_after_warmup, long *word_adds = NULL)
{
    const int per_vec = 16 / dr_xw_traits<F>::kElemBytes;
    thread_check c;
    c.start<F>();
    dr_xw_t &w = c.w;
    const host_sink sink = {&c.sink};
    dr_exact_t &ref = c.ref;
    long i = 0, misses = 0;
    while (i < nelem) {
        const uint64_t r = next64();
        if ((r & 31) == 0) { /* a head or tail element */
            const uint64_t b = element_bits(F, pattern, i++);
            dr_exact_add_f64(&ref, widen(F, b));
            dr_xw_add_one(w, widen(F, b), sink);
            continue;
        }
        const int nvec = (r & 32) ? 1 : 4;
        uint4 vecs[4];
        for (int k = 0; k < nvec; ++k) {
            uint64_t e[8];
            for (int j = 0; j < per_vec; ++j) {
                e[j] = element_bits(F, pattern, i++);
                dr_exact_add_f64(&ref, widen(F, e[j]));
                if (i > nelem / 2 && pattern == P_NEAR_ONE) { /* the window settled: would it hit? */
                    dr_xw_t probe = w;
                    const uint64_t lane = F == DR_XW_BF16 ? e[j] << 16 : e[j]; /* dr_xw_lane's bits */
                    misses += !dr_xw_fits<F>(probe, lane);
                }
            }
            vecs[k] = pack(F, e);
        }
        add_round<F>(w, sink, vecs, nvec);
    }
    dr_xw_finish<F>(w, sink);
    if (misses_after_warmup) *misses_after_warmup = misses;
    if (word_adds) *word_adds = c.sink.adds;
    long long got, want;
    const int k = c.difference(&got, &want);
    if (k >= 0) {
        fprintf(stderr, "FAIL family %d, %s, %ld elements: %s %d: %lld vs %lld\n", F, pattern_name[pattern], nelem,
                k < DR_EXACT_WORDS ? "word" : "flags", k, got, want);
        return 1;
    }
    return 0;
}

template <int F> static int family_cases(const char *name)
{
    static const long sizes[] = {1, 7, 64, 1000, 20000};
    int fails = 0;
    for (int p = 0; p < P_COUNT; ++p)
        for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); ++s)
            for (int rep = 0; rep < 16; ++rep) fails += run_stream<F>(p, sizes[s], NULL);
    /* The speed assumption: near-one data hit once the window settles. */
    long misses = 0;
    const long n = 200000;
    fails += run_stream<F>(P_NEAR_ONE, n, &misses);
    printf("%-9s %d patterns x %d sizes x 16: %s; near-one misses after warm-up: %ld of %ld\n", name, P_COUNT,
           (int)(sizeof sizes / sizeof sizes[0]), fails ? "FAILED" : "equal", misses, n / 2);
    if (misses * 1000 > n / 2) {
        fprintf(stderr, "FAIL %s: %ld misses of %ld on near-one data (the window should hold it)\n", name, misses, n / 2);
        ++fails;
    }
    /* Spread data (every binade): almost every element misses. bfloat16 and float32 put their misses in bins, so
     * the words take a flush (5 adds) a round, about 0.15 (bfloat16) or 0.3 (float32) an element, and float32's
     * float64 bins about 30 every 64 misses; float64's misses take 3 adds each. */
    long adds = 0;
    const long nw = 20000;
    fails += run_stream<F>(P_WIDE, nw, NULL, &adds);
    const bool binned = dr_xw_traits<F>::kBins + dr_xw_traits<F>::kFBins != 0;
    const long limit = dr_xw_traits<F>::kBins ? nw / 2 : nw; /* straight into the words: nearly 3 an element */
    printf("%-9s spread over every binade: %ld word adds for %ld elements\n", name, adds, nw);
    if (binned && adds > limit) {
        fprintf(stderr, "FAIL %s: %ld word adds for %ld spread elements (the bins should take the misses)\n", name,
                adds, nw);
        ++fails;
    }
    return fails;
}

/* dr_xw_add_halves, as the kernel's 32-bit atomics run it: many adds in (-2^32, 2^32), with every low-half step
 * done first (in a shuffled order; each sees the old half it gets back) and every high-half step after them, the
 * most the lanes' interleaving can separate them. The halves, read as one int64, must equal the sum. Streams: any
 * value, values near 2^32 (a wrap nearly every add), negative ones only, and cancelling pairs. */
struct deferred_halves { /* add32 for dr_xw_add_halves: the low half now, the high half's step recorded */
    uint32_t *half;
    uint32_t *pending; /* whether, and what */
    __host__ __device__ uint32_t operator()(int h, uint32_t x) const
    {
        if (h == 1) {
            pending[0] = 1, pending[1] = x;
            return 0u;
        }
        const uint32_t old = half[0];
        half[0] += x;
        return old;
    }
};

static int halves(void)
{
    int fails = 0;
    const int n = 4096;
    static long long v[4096];
    static uint32_t pending[4096][2]; /* each add's high-half step: whether, and what */
    for (int stream = 0; stream < 4; ++stream)
        for (int rep = 0; rep < 64; ++rep) {
            long long want = 0;
            for (int i = 0; i < n; ++i) {
                const uint64_t r = next64();
                const long long m = (long long)(r & 0xffffffffull); /* 0 .. 2^32 - 1 */
                switch (stream) {
                case 0: v[i] = (r >> 63) ? -m : m; break;
                case 1: v[i] = (long long)0xffffffffll - (long long)(r >> 60); break;
                case 2: v[i] = -m; break;
                default: v[i] = (i & 1) ? -v[i - 1] : m; break;
                }
                want += v[i];
            }
            for (int i = n - 1; i > 0; --i) { /* Fisher-Yates: the low steps' order */
                const int j = (int)(next64() % (uint64_t)(i + 1));
                const long long t = v[i];
                v[i] = v[j], v[j] = t;
            }
            uint32_t half[2] = {0, 0};
            for (int i = 0; i < n; ++i) {
                pending[i][0] = 0;
                dr_xw_add_halves(v[i], deferred_halves{half, pending[i]});
            }
            for (int i = 0; i < n; ++i)
                if (pending[i][0]) half[1] += pending[i][1];
            const long long got = (long long)((uint64_t)half[1] << 32 | half[0]);
            if (got != want) {
                fprintf(stderr, "FAIL dr_xw_add_halves, stream %d: %lld, want %lld\n", stream, got, want);
                ++fails;
            }
        }
    printf("dr_xw_add_halves: 4 streams x 64 x %d adds, low steps shuffled, high steps last: %s\n", n,
           fails ? "FAILED" : "equal");
    return fails;
}

/* The bins at their bound: as many terms (dr_xw_bin_term) as a thread may read (2^23 + 16), into one bin, all but
 * the last the largest magnitude of its top binade and the last the smallest of its lowest binade, then the bins
 * into the words (dr_xw_bins_flush): the words must equal the reference. */
static int bin_bound(void)
{
    const int F = DR_XW_BF16;
    thread_check c;
    c.start<F>();
    const host_sink sink = {&c.sink};
    c.w.nonneg0 = 1; /* dr_xw_try, not called here, notes that terms other than -0.0 were seen */
    const int bin = 3, lo = 32 * bin, top = lo + 31;
    const uint32_t big = (uint32_t)top << 23 | 0x7f0000u | 0x80000000u; /* negative, every fraction bit set */
    const uint32_t small = (uint32_t)lo << 23 | 1u << 16;
    const long count = (1l << 23) + 16;
    bool same_bin = true;
    for (long i = 0; i < count; ++i) {
        const uint32_t b = i == count - 1 ? small : big;
        dr_exact_add_f64(&c.ref, (double)dr_bits_to_f32(b));
        int k;
        const long long t = dr_xw_bin_term<F>(b, &k);
        same_bin &= k == bin;
        sink.bin(k) += t;
    }
    dr_xw_bins_flush<F>(c.w, sink);
    long long got, want;
    const bool ok = same_bin && c.difference(&got, &want) < 0;
    printf("bfloat16  one bin at its bound (%ld terms, binades %d..%d): %s\n", count, lo, top, ok ? "equal" : "FAILED");
    return !ok;
}

/* float32's float64 bins at their bound, each bin and both signs: kFBinFlush - 1 terms of the largest magnitude of
 * the bin's top binade, then an odd multiple of its unit u_k (the lowest binade's smallest significand plus one;
 * bin 0: the smallest subnormal), through dr_xw_fbin_add, then the flush: the last term's unit survives only if no
 * add rounded (2 kFBinFlush terms a flush, or 25 binades a bin, would lose it in bins 1..10; bin 0's terms are
 * below 2^46 u_0, so it holds more). Then the words must equal the reference. */
static int fbin_bound(void)
{
    const int F = DR_XW_F32;
    typedef dr_xw_traits<F> T;
    int fails = 0;
    for (int k = 0; k < T::kFBins; ++k)
        for (uint32_t sign = 0; sign < 2; ++sign) {
            thread_check c;
            c.start<F>();
            const host_sink sink = {&c.sink};
            c.w.nonneg0 = 1;
            const uint32_t lo = (uint32_t)(T::kFBinSpan * k);
            const uint32_t top = lo + T::kFBinSpan - 1 < 254 ? lo + T::kFBinSpan - 1 : 254; /* the last bin's */
            const uint32_t big = sign << 31 | top << 23 | 0x7fffffu;
            const uint32_t small = k ? lo << 23 | 1u : 1u; /* (2^23 + 1) u_k, or u_0; positive */
            for (int i = 0; i < T::kFBinFlush; ++i) {
                const uint32_t b = i == T::kFBinFlush - 1 ? small : big;
                dr_exact_add_f64(&c.ref, (double)dr_bits_to_f32(b));
                dr_xw_fbin_add<F>(c.w, b, sink);
            }
            dr_xw_finish<F>(c.w, sink);
            long long got, want;
            if (c.difference(&got, &want) >= 0) {
                fprintf(stderr, "FAIL float64 bin %d (binades %u..%u), sign %u: words differ\n", k, lo, top, sign);
                ++fails;
            }
        }
    printf("float32   float64 bins at their bound (%d bins x 2 signs, %d terms): %s\n", T::kFBins, T::kFBinFlush,
           fails ? "FAILED" : "equal");
    return fails;
}

/* float32's float64 bins filled through whole rounds (dr_xw_add_vectors), so the flush before a round is what keeps
 * them exact: each round has an odd multiple of u_1 (binade 24), 14 of binade 47's largest magnitude (bin 1,
 * about 2^47 u_1 each) and, last, an element far from the others (binade 200 or 120, by turns), so the window
 * moves there and every element of the next round misses again. Bin 1 takes 15 terms a round: flushed before the
 * fifth round, it holds 56 large terms (below 2^53 u_1); a flush any later (a threshold of 128 terms, or one
 * without the round's misses counted) lets it pass 2^53 u_1 with an odd unit in it, which rounds. */
static int fbin_rounds(void)
{
    const int F = DR_XW_F32;
    thread_check c;
    c.start<F>();
    const host_sink sink = {&c.sink};
    const uint32_t unit = 24u << 23 | 1u, big = 47u << 23 | 0x7fffffu;
    for (int r = 0; r < 200; ++r) {
        uint32_t e[16];
        e[0] = unit;
        for (int j = 1; j < 15; ++j) e[j] = big;
        e[15] = (r & 1 ? 120u : 200u) << 23 | (uint32_t)r;
        uint4 v[4];
        for (int q = 0; q < 4; ++q) v[q] = make_uint4(e[4 * q], e[4 * q + 1], e[4 * q + 2], e[4 * q + 3]);
        for (int j = 0; j < 16; ++j) dr_exact_add_f64(&c.ref, (double)dr_bits_to_f32(e[j]));
        dr_xw_add_vectors<F>(c.w, v, sink);
    }
    dr_xw_finish<F>(c.w, sink);
    long long got, want;
    const int k = c.difference(&got, &want);
    printf("float32   float64 bins through 200 rounds of 16 misses: %s\n", k < 0 ? "equal" : "FAILED");
    if (k >= 0) fprintf(stderr, "FAIL float64 bins through rounds: word %d: %lld vs %lld\n", k, got, want);
    return k >= 0;
}

/* Long streams at the window's top: V grows to its largest, the flush's top limb is exercised. */
static int long_stream(void)
{
    thread_check c;
    c.start<DR_XW_F64>();
    const double big = ldexp(1.0 - ldexp(1.0, -53), 19); /* in the initial window's top binade */
    uint4 v[4];
    const uint64_t b = dr_f64_to_bits(big);
    for (int k = 0; k < 4; ++k) v[k].x = v[k].z = (uint32_t)b, v[k].y = v[k].w = (uint32_t)(b >> 32);
    const long rounds = 1l << 20;
    const host_sink sink = {&c.sink};
    for (long r = 0; r < rounds; ++r) dr_xw_add_vectors<DR_XW_F64>(c.w, v, sink);
    for (long r = 0; r < rounds * 8; ++r) dr_exact_add_f64(&c.ref, big);
    dr_xw_finish<DR_XW_F64>(c.w, sink);
    long long got, want;
    const int ok = c.difference(&got, &want) < 0 && c.sink.adds <= 5;
    printf("long stream: 2^23 float64 at the window's top in one window: %s (%ld word adds)\n", ok ? "equal" : "FAILED",
           c.sink.adds);
    return !ok;
}

/* A 16-bit family's element (its own 16 bits) widened to float64 by accum.h's host conversions: the reference. */
template <int F> static double widen16(uint32_t b)
{
    return F == DR_XW_F16 ? (double)dr_f16_to_f32((uint16_t)b) : (double)dr_bits_to_f32(b << 16);
}

/* dr_xw_high_scaled, every finite float16 and bfloat16 in a word's high half (under a zero, an all-ones and a random
 * low half): the float64 must be the element times 2^(kBias - 1023) to the bit, subnormals and -0.0 included. */
template <int F> static int high_scaled_every_value(const char *name)
{
    typedef dr_xw_traits<F> T;
    int fails = 0;
    long checked = 0;
    for (uint32_t p = 0; p < 65536; ++p) {
        if (((p >> (F == DR_XW_F16 ? 10 : 7)) & (uint32_t)T::kExpInf) == (uint32_t)T::kExpInf) continue;
        const uint32_t lows[3] = {0u, 0xffffu, (uint32_t)next64() & 0xffffu};
        for (int k = 0; k < 3; ++k) {
            const double got = dr_xw_high_scaled<F>(p << 16 | lows[k]);
            const double want = ldexp(widen16<F>(p), T::kBias - 1023);
            ++checked;
            if (dr_f64_to_bits(got) != dr_f64_to_bits(want) && fails++ < 5)
                fprintf(stderr, "FAIL dr_xw_high_scaled<%s>(0x%08x): %a, want %a\n", name, p << 16 | lows[k], got,
                        want);
        }
    }
    printf("dr_xw_high_scaled, %s: %ld finite values in a high half: %s\n", name, checked, fails ? "FAILED" : "equal");
    return fails != 0;
}

/* dr_xw_round_fast and dr_xw_spill at every window (float16's one; bfloat16's lo = 1 .. kLoMax): rounds of 32
 * elements inside the window (random; the top binade's largest of one sign; the lowest binade, which cancels to
 * sums in float64's subnormal range once scaled; float16's subnormals), V against the exact integer sum in the
 * window's unit. Each word's halves go to chains of different units, so this checks the unscaling at every lo. */
template <int F> static int fast_rounds_every_window(const char *name)
{
    typedef dr_xw_traits<F> T;
    const uint32_t kFracMask = (1u << T::kFrac) - 1u;
    int fails = 0;
    long rounds = 0;
    for (int lo = 1; lo <= T::kLoMax; ++lo)
        for (int shape = 0; shape < 4; ++shape)
            for (int rep = 0; rep < 64; ++rep) {
                const int top = F == DR_XW_F16 ? 30 : lo + T::kSpan - 1; /* the window's highest binade */
                const uint32_t one_sign = (uint32_t)(next64() & 1) << 15;
                uint4 v[4];
                uint32_t *words = reinterpret_cast<uint32_t *>(v);
                __int128 want = 0;
                for (int i = 0; i < 32; ++i) {
                    const uint64_t r = next64();
                    uint32_t e, m = (uint32_t)(r >> 8) & kFracMask, sign = (uint32_t)(r & 1) << 15;
                    switch (shape) {
                    case 0: e = (uint32_t)(lo + (int)((r >> 32) % (uint64_t)(top - lo + 1))); break;
                    case 1: e = (uint32_t)top, m = kFracMask, sign = one_sign; break;
                    case 2: e = (uint32_t)lo; break;
                    default: e = F == DR_XW_F16 && (r & 2) ? 0u : (uint32_t)lo, m &= 7u; break; /* subnormals */
                    }
                    const uint32_t b = (r >> 2 & 7) == 0 ? sign : sign | e << T::kFrac | m; /* some zeros */
                    words[i / 2] = i & 1 ? words[i / 2] | b << 16 : b;
                    want += (__int128)ldexp(widen16<F>(b), T::kBias + T::kFrac - lo); /* in the window's unit */
                }
                dr_xw_t w;
                memset(&w, 0, sizeof w);
                dr_xw_set_window<F>(w, lo);
                ++rounds;
                if (!dr_xw_round_fast<F>(w, v)) {
                    if (fails++ < 5) fprintf(stderr, "FAIL %s lo %d shape %d: the round missed\n", name, lo, shape);
                    continue;
                }
                dr_xw_spill<F>(w);
                const __int128 got = (__int128)((unsigned __int128)w.v3 << 96 | (unsigned __int128)w.v2 << 64 |
                                                (unsigned __int128)w.v1 << 32 | w.v0);
                if (got != want && fails++ < 5)
                    fprintf(stderr, "FAIL %s lo %d shape %d: V = %lld, want %lld\n", name, lo, shape, (long long)got,
                            (long long)want);
            }
    printf("dr_xw_round_fast, %s: %ld rounds at every window: %s\n", name, rounds, fails ? "FAILED" : "equal");
    return fails != 0;
}

int main(void)
{
    int fails = 0;
    fails += family_cases<DR_XW_F64>("float64");
    fails += family_cases<DR_XW_F32>("float32");
    fails += family_cases<DR_XW_F16>("float16");
    fails += family_cases<DR_XW_BF16>("bfloat16");
    fails += long_stream();
    fails += bin_bound();
    fails += fbin_bound();
    fails += fbin_rounds();
    fails += halves();
    fails += high_scaled_every_value<DR_XW_F16>("float16");
    fails += high_scaled_every_value<DR_XW_BF16>("bfloat16");
    fails += fast_rounds_every_window<DR_XW_F16>("float16");
    fails += fast_rounds_every_window<DR_XW_BF16>("bfloat16");
    printf(fails ? "test_exact_window: %d FAILED\n" : "test_exact_window: all equal\n", fails);
    return fails ? 1 : 0;
}
