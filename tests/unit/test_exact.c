/* Unit test of the exact sums (src/common/accum.h, "Exact sums": dr_exact_t, header only) against the
 * independent reference (src/cli/reference.c, dr_ref_exact_*), against the hardware's addition (a + b of two doubles is
 * their exact sum rounded once, with IEEE's rules for zeros, infinities and overflow) and against sums computed with
 * Python's fractions.Fraction (the table below). Both implementations must give the same bits everywhere:
 *   - the table: ties to even, the overflow threshold (2^1024 - 2^970), subnormal results, signed zeros, NaN and
 *     infinities, random values of several exponent ranges, each in order, reversed and split into partials;
 *   - pairs of doubles (random bit patterns, near-cancelling neighbours, exponents close together): a + b;
 *   - random arrays over many exponent ranges (specials now and then): the two agree; any split into partials,
 *     combined in any order, gives the sequential sum's normalized dr_exact_t to the bit, and the reference merged
 *     from the same partials the same value; rounding an unnormalized sum gives the same as a normalized one;
 *   - every permutation of small adversarial arrays, split at every point, combined either way: identical words;
 *   - ties and sticky bits at every bit offset of the words: (2^53 + 1) 2^k and (2^53 + 3) 2^k units;
 *   - the normalization cadence: words as DR_EXACT_ADDS adds of the largest digits (either sign) leave them,
 *     constructed directly, normalize to the value an independent big-integer sum of the words gives, again after
 *     DR_EXACT_ADDS more adds on top; DR_EXACT_ADDS adds of one term round to 2^30 times it;
 *   - float32, float16 and bfloat16 terms widened by accum.h's converters;
 *   - the CPU backend's exact sums (src/lib/cpu_backend.c, by binade) against dr_exact_add_f64 of each element: the same
 *     words and flags, for every float type, on random bit patterns (NaNs, infinities, subnormals), every binade's
 *     largest significands (float64's split parts both full), cancellation, -0.0 and zeros, infinities without
 *     NaNs, at sizes around the bin sets' stride, on 1 and 3 threads.
 * Prints one line per failure; exit 0 only if every check passed. */
#include <float.h>
#include <math.h>

#include <stdlib.h>

#include "check.h"
#include "cpu_backend.h"
#include "accum.h"
#include "reference.h"

#define CANON_NAN 0x7fffffffffffffffull
#define MAX_TERMS 9

static uint64_t bits_of(double x) { return dr_f64_to_bits(x); }
static double from_bits(uint64_t b) { return dr_bits_to_f64(b); }

/* The hardware's sum as the exact sums give it: any NaN as the canonical one. */
static uint64_t canonical(double x) { return x != x ? CANON_NAN : bits_of(x); }

static double lib_sum(const double *x, size_t n, dr_exact_t *out)
{
    dr_exact_t a;
    dr_exact_zero(&a);
    for (size_t i = 0; i < n; ++i) dr_exact_add_f64(&a, x[i]);
    dr_exact_normalize(&a);
    if (out) *out = a;
    return dr_exact_to_f64(&a);
}

static double ref_sum(const double *x, size_t n)
{
    dr_ref_exact_t r;
    dr_ref_exact_init(&r);
    for (size_t i = 0; i < n; ++i) dr_ref_exact_add(&r, x[i]);
    return dr_ref_exact_value(&r);
}

/* Elements [b, e) of x as a normalized partial. */
static void partial(const double *x, size_t b, size_t e, dr_exact_t *p)
{
    dr_exact_zero(p);
    for (size_t i = b; i < e; ++i) dr_exact_add_f64(p, x[i]);
    dr_exact_normalize(p);
}

static int same_exact(const dr_exact_t *a, const dr_exact_t *b) { return memcmp(a, b, sizeof *a) == 0; }

/* ---- the table ----
 * want = exact(inputs) for every row, computed with Python 3 (float(Fraction) is correctly rounded, to nearest
 * even, and raises OverflowError where the rounded value is not finite); the random rows came from the loop below:
 *
 *   from fractions import Fraction
 *   import math, random, struct
 *   def b2d(b): return struct.unpack("<d", struct.pack("<Q", b))[0]
 *   def d2b(d): return struct.unpack("<Q", struct.pack("<d", d))[0]
 *   def exact(bits):
 *       xs = [b2d(b) for b in bits]
 *       if any(x != x for x in xs) or (math.inf in xs and -math.inf in xs): return 0x7fffffffffffffff
 *       if math.inf in xs or -math.inf in xs: return d2b(math.inf if math.inf in xs else -math.inf)
 *       s = sum(map(Fraction, xs), Fraction(0))
 *       if s == 0: return 0x8000000000000000 if xs and all(b == 1 << 63 for b in bits) else 0
 *       try: return d2b(float(s))
 *       except OverflowError: return d2b(math.inf if s > 0 else -math.inf)
 *   rng = random.Random(20240611)
 *   def rand(lo, hi):  # a random sign, exponent field in [lo, hi], 52 random significand bits
 *       return rng.getrandbits(1) << 63 | rng.randint(lo, hi) << 52 | rng.getrandbits(52)
 *   for lo, hi in [(0, 0), (0, 60), (1003, 1043), (1, 2046), (1980, 2046), (0, 2046)] * 3:
 *       bits = [rand(lo, hi) for _ in range(rng.randint(2, 9))]
 *       print(bits, hex(exact(bits)))
 */
typedef struct {
    const char *what;
    uint64_t want;
    int n;
    uint64_t in[MAX_TERMS];
} vector_t;

static const vector_t vectors[] = {
    {"0.1 + 0.2 + 0.3", 0x3fe3333333333333, 3, {0x3fb999999999999a, 0x3fc999999999999a, 0x3fd3333333333333}},
    {"2^53 + 1 from pieces: a tie, to the even 2^53", 0x4340000000000000, 7, {0x4330000000000000, 0x4330000000000000,
        0x3fe0000000000000, 0x3fd0000000000000, 0x3fc0000000000000, 0x3fb0000000000000, 0x3fb0000000000000}},
    {"2^53 + 3: a tie, to the even 2^53 + 4", 0x4340000000000002, 5, {0x4340000000000000, 0x3ff0000000000000,
        0x3ff0000000000000, 0x3fe0000000000000, 0x3fe0000000000000}},
    {"2^53 + 1 + 2^-1074: above the tie", 0x4340000000000001, 3, {0x4340000000000000, 0x3ff0000000000000,
        0x0000000000000001}},
    {"2^53 + 1 - 2^-1074: below the tie", 0x4340000000000000, 3, {0x4340000000000000, 0x3ff0000000000000,
        0x8000000000000001}},
    {"-(2^53 + 1)", 0xc340000000000000, 2, {0xc340000000000000, 0xbff0000000000000}},
    {"-(2^53 + 3)", 0xc340000000000002, 3, {0xc340000000000000, 0xc000000000000000, 0xbff0000000000000}},
    {"2^53 - 1/2: a tie, up into the next binade", 0x4340000000000000, 3, {0x4330000000000000, 0x432ffffffffffffe,
        0x3fe0000000000000}},
    {"1 + 2^-53 among +-2^60: a tie, to 1", 0x3ff0000000000000, 4, {0x43b0000000000000, 0x3ff0000000000000,
        0xc3b0000000000000, 0x3ca0000000000000}},
    {"1 + 2^-53 + 2^-1074 among +-2^60: up", 0x3ff0000000000001, 5, {0x43b0000000000000, 0x3ff0000000000000,
        0xc3b0000000000000, 0x3ca0000000000000, 0x0000000000000001}},
    {"DBL_MAX + 2^970 = 2^1024 - 2^970: inf", 0x7ff0000000000000, 2, {0x7fefffffffffffff, 0x7c90000000000000}},
    {"DBL_MAX + 2^970 - 2^-1074: DBL_MAX", 0x7fefffffffffffff, 3, {0x7fefffffffffffff, 0x7c90000000000000,
        0x8000000000000001}},
    {"-DBL_MAX - 2^970: -inf", 0xfff0000000000000, 2, {0xffefffffffffffff, 0xfc90000000000000}},
    {"-DBL_MAX - 2^970 + 2^-1074: -DBL_MAX", 0xffefffffffffffff, 3, {0xffefffffffffffff, 0xfc90000000000000,
        0x0000000000000001}},
    {"2^1023 + 2^1023: inf", 0x7ff0000000000000, 2, {0x7fe0000000000000, 0x7fe0000000000000}},
    {"DBL_MAX + DBL_MAX - DBL_MAX: DBL_MAX", 0x7fefffffffffffff, 3, {0x7fefffffffffffff, 0x7fefffffffffffff,
        0xffefffffffffffff}},
    {"1e308 + 1e308 - 1e308 + 1", 0x7fe1ccf385ebc8a0, 4, {0x7fe1ccf385ebc8a0, 0x7fe1ccf385ebc8a0, 0xffe1ccf385ebc8a0,
        0x3ff0000000000000}},
    {"1 + 1e-300 - 1", 0x01a56e1fc2f8f359, 3, {0x3ff0000000000000, 0x01a56e1fc2f8f359, 0xbff0000000000000}},
    {"2^-1074 + 2^-1074", 0x0000000000000002, 2, {0x0000000000000001, 0x0000000000000001}},
    {"the largest subnormal + 2^-1074: the smallest normal", 0x0010000000000000, 2, {0x000fffffffffffff,
        0x0000000000000001}},
    {"a subnormal sum of normals", 0x0000000000000010, 2, {0x0030000000000000, 0x802ffffffffffff8}},
    {"no term: +0", 0x0000000000000000, 0, {}},
    {"-0", 0x8000000000000000, 1, {0x8000000000000000}},
    {"-0 -0 -0", 0x8000000000000000, 3, {0x8000000000000000, 0x8000000000000000, 0x8000000000000000}},
    {"-0 +0", 0x0000000000000000, 2, {0x8000000000000000, 0x0000000000000000}},
    {"1 - 1: +0", 0x0000000000000000, 2, {0x3ff0000000000000, 0xbff0000000000000}},
    {"-1 + 1 - 0: +0", 0x0000000000000000, 3, {0xbff0000000000000, 0x3ff0000000000000, 0x8000000000000000}},
    {"-2^-1074 + 2^-1074 - 0: +0", 0x0000000000000000, 3, {0x8000000000000001, 0x0000000000000001, 0x8000000000000000}},
    {"NaN", 0x7fffffffffffffff, 2, {0x3ff0000000000000, 0x7ff8000000000000}},
    {"a negative NaN with a payload", 0x7fffffffffffffff, 2, {0xfff0000000000001, 0x4000000000000000}},
    {"inf - inf", 0x7fffffffffffffff, 2, {0x7ff0000000000000, 0xfff0000000000000}},
    {"inf + NaN", 0x7fffffffffffffff, 2, {0x7ff0000000000000, 0x7ff0000000000001}},
    {"inf + 1", 0x7ff0000000000000, 2, {0x7ff0000000000000, 0x3ff0000000000000}},
    {"inf + inf", 0x7ff0000000000000, 2, {0x7ff0000000000000, 0x7ff0000000000000}},
    {"-inf + DBL_MAX + DBL_MAX", 0xfff0000000000000, 3, {0xfff0000000000000, 0x7fefffffffffffff, 0x7fefffffffffffff}},
    {"random, exponent fields 0..0", 0x00151562c8d3d1a9, 7, {0x000b7dec5d96cf7f, 0x8000463555ac0ecd,
        0x0009823be6ba3ad7, 0x0005bae2683447c1, 0x8009a0b2aed09b82, 0x00007f0c1ff13534, 0x0003c23400d9f4ad}},
    {"random, exponent fields 0..60", 0x03c9524cd6adf927, 6, {0x034668dc6a423cf9, 0x03476589f94855d0,
        0x82ba9dfdbaecde5b, 0x01af82d5ef7d9967, 0x80fb5fa5db18bd76, 0x03c9248bbf416c30}},
    {"random, exponent fields 1003..1043", 0xc0c5df2fc2c99b84, 6, {0x3fc3a7cf6088155f, 0xbf826ad488c279d9,
        0xc060e0bcafbec9a6, 0xc035438a07bda21c, 0xc0c5c80f67fd4c1e, 0x405b78edea394aba}},
    {"random, exponent fields 1..2046", 0xff7cc31d0ff191f0, 9, {0x6510f4bfe1030fe1, 0x4852e0129a72180d,
        0xff7cc31d0ff191f0, 0xfbc4a66bab8474cc, 0xe35535f2b9f7f89e, 0x9ab857cef9a21be1, 0x817d6442559d7e79,
        0x8243cc89f339a684, 0x6b55f4e45c00d3d2}},
    {"random, exponent fields 1980..2046", 0xff69ef2a2f34a690, 8, {0xfc1c444a8d1eac03, 0x7c540ba6be38fcbb,
        0xfdd9fd580286ecec, 0xff69f37443e94334, 0xfcd3d0d1162d85c6, 0xfe4705bd59227301, 0x7ec13f8b0c67a2cb,
        0x7d87e3b92875a2d0}},
    {"random, exponent fields 0..2046", 0x78d49a7ab216749a, 8, {0x1799f61d48f8f164, 0x5efd2e83e220532f,
        0xf32f4116f69ceaf6, 0x5a4cca247202aed9, 0xe6f55ed4caf735c5, 0xd8d12400cf737131, 0x2f86a2a4e3cfe64c,
        0x78d49a7ab216749a}},
    {"random, exponent fields 0..0", 0x0011aca5159f14ed, 2, {0x000378482ac954c3, 0x000e345cead5c02a}},
    {"random, exponent fields 0..60", 0x83a97727d87902e8, 8, {0x83a98dc6bea75def, 0x8049874758c0d341,
        0x01be82cecad8f6bd, 0x005fecde9f3c5548, 0x01a798bf92a74c31, 0x8284c749b849a411, 0x0326a4353ecce515,
        0x822d92a22996b98c}},
    {"random, exponent fields 1003..1043", 0x403a492c646193bd, 3, {0xbfe4dbf5de83bc13, 0xbf9ba52f2c5747ba,
        0x403af6f55f20c770}},
    {"random, exponent fields 1..2046", 0xffecaf9a6c73895b, 5, {0xffecaf9a6c738235, 0xe9abe6f3765b1f48,
        0x1f91b22701f752bc, 0xfd4c961c5d0a2a43, 0x913998b650e2e001}},
    {"random, exponent fields 1980..2046", 0xff205a771fcaf1ca, 7, {0xfda743c886e6994b, 0xff205a7a86cf6aba,
        0xfc3b81bdcf94926d, 0xfc92f5dd70701936, 0xfbfed6460803b5b6, 0xfdfd39ce0dd7b1fe, 0x7e0c960833a07f4e}},
    {"random, exponent fields 0..2046", 0xd9272ffbad77d09f, 2, {0xd9272ffbad77d09f, 0x178cc3452ef936ae}},
    {"random, exponent fields 0..0", 0x80073a0d543f1136, 6, {0x800ce2f30ac92aa6, 0x800f30659e6aca3c,
        0x000d6b5bc30d2a40, 0x800492bc261c8618, 0x0007f356f069472d, 0x00040d54c79af857}},
    {"random, exponent fields 0..60", 0x830e20ff1b63eddc, 7, {0x008646caee8b0ef7, 0x824affe159855cf7,
        0x027e3dcc44ad6632, 0x01ef00f3d85bc787, 0x01911f2de59c396b, 0x82d3e683f84cdb1c, 0x830bb1a566e278ff}},
    {"random, exponent fields 1003..1043", 0xc139cab7a2ac592f, 8, {0xbfbd30a2ea3394d7, 0x3fd77e842aaefe55,
        0xc0994f46764fa2d9, 0xc01d7a2452f07282, 0xc139c45cb3402c21, 0x3eba5735d2aca29f, 0xbf2dde39123245bc,
        0xbebd641b2b529e0e}},
    {"random, exponent fields 1..2046", 0xfee6b6df8c7c8ae3, 2, {0xfee6b6df8c7c8ae3, 0x812fad0fefd3b688}},
    {"random, exponent fields 1980..2046", 0xff899cd9b9f42f5f, 6, {0xfef2de799d923d60, 0xfde4c02db4a06d78,
        0x7d1b1fea07ff0e99, 0x7f5137820c624aee, 0xfe93b3d0223856ce, 0xff8bba3351e19600}},
    {"random, exponent fields 0..2046", 0xe54892aad82a54a5, 4, {0x898c41427ed209de, 0x571cc99d1aff8d8e,
        0x390b5a83c90cdc4d, 0xe54892aad82a54a5}},
};

static void test_table(void)
{
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; ++v) {
        const vector_t *t = &vectors[v];
        double x[MAX_TERMS], rev[MAX_TERMS];
        for (int i = 0; i < t->n; ++i) x[i] = from_bits(t->in[i]), rev[t->n - 1 - i] = x[i];
        const uint64_t got = bits_of(lib_sum(x, (size_t)t->n, NULL)), ref = bits_of(ref_sum(x, (size_t)t->n));
        CHECK(got == t->want, "%s: dr_exact_to_f64 gives %016" PRIx64 ", expected %016" PRIx64, t->what, got, t->want);
        CHECK(ref == t->want, "%s: dr_ref_exact_value gives %016" PRIx64 ", expected %016" PRIx64, t->what, ref,
              t->want);
        const uint64_t back = bits_of(lib_sum(rev, (size_t)t->n, NULL)), rback = bits_of(ref_sum(rev, (size_t)t->n));
        CHECK(back == t->want && rback == t->want, "%s reversed: %016" PRIx64 " and reference %016" PRIx64
              ", expected %016" PRIx64, t->what, back, rback, t->want);
        for (int s = 0; s <= t->n; ++s) { /* two partials, combined both ways; the reference merged */
            dr_exact_t a, b, ab;
            partial(x, 0, (size_t)s, &a);
            partial(x, (size_t)s, (size_t)t->n, &b);
            ab = a;
            dr_exact_combine(&ab, &b);
            dr_exact_combine(&b, &a);
            dr_ref_exact_t ra, rb;
            dr_ref_exact_init(&ra);
            dr_ref_exact_init(&rb);
            for (int i = 0; i < s; ++i) dr_ref_exact_add(&ra, x[i]);
            for (int i = s; i < t->n; ++i) dr_ref_exact_add(&rb, x[i]);
            dr_ref_exact_merge(&rb, &ra);
            const uint64_t g1 = bits_of(dr_exact_to_f64(&ab)), g2 = bits_of(dr_exact_to_f64(&b)),
                           g3 = bits_of(dr_ref_exact_value(&rb));
            CHECK(g1 == t->want && g2 == t->want && g3 == t->want,
                  "%s split at %d: %016" PRIx64 ", %016" PRIx64 " (combined the other way), reference %016" PRIx64
                  ", expected %016" PRIx64, t->what, s, g1, g2, g3, t->want);
        }
    }
}

/* ---- pairs: a + b in hardware is the exact sum rounded once ---- */
static double random_double(uint64_t *rng) { return from_bits(check_rand(rng)); }

/* A double near x: a few units of its last place away, or with its exponent moved by up to 60. */
static double near(double x, uint64_t *rng)
{
    uint64_t b = bits_of(x);
    if (check_rand(rng) & 1) return from_bits(b + (check_rand(rng) % 9) - 4);
    const int64_t e = (int64_t)((b >> 52) & 0x7ff) + (int64_t)(check_rand(rng) % 121) - 60;
    if (e < 0 || e > 0x7fe) return x;
    return from_bits((b & ~(0x7ffull << 52)) | ((uint64_t)e << 52) | (check_rand(rng) & 0xfffffffffffffull));
}

static void test_pairs(uint64_t *rng)
{
    static const double special[] = {0.0, -0.0, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN, 4.9406564584124654e-324,
                                     -4.9406564584124654e-324, INFINITY, -INFINITY, 1.0, -1.0, 0x1p970, -0x1p970};
    const size_t ns = sizeof special / sizeof special[0];
    int failed = 0;
    for (long k = 0; k < 400000 && failed < 20; ++k) {
        double x[2];
        x[0] = random_double(rng);
        switch (k % 5) {
        case 0: x[1] = random_double(rng); break;
        case 1: x[1] = -near(x[0], rng); break; /* cancellation */
        case 2: x[1] = near(x[0], rng); break;
        case 3: x[1] = special[check_rand(rng) % ns]; break;
        default: x[0] = special[check_rand(rng) % ns], x[1] = k & 8 ? special[check_rand(rng) % ns] : near(x[0], rng);
        }
        const double hw = x[0] + x[1];
        const uint64_t want = canonical(hw), got = bits_of(lib_sum(x, 2, NULL)), ref = bits_of(ref_sum(x, 2));
        if (got != want || ref != want) ++failed;
        CHECK(got == want && ref == want, "%016" PRIx64 " + %016" PRIx64 ": dr_exact_to_f64 %016" PRIx64
              ", dr_ref_exact_value %016" PRIx64 ", the hardware's sum %016" PRIx64, bits_of(x[0]), bits_of(x[1]),
              got, ref, want);
    }
}

/* ---- random arrays ---- */
enum { NMAX = 400 };

/* A double with 53 random significand bits, exponent in [lo, hi] (as ldexp's: |x| in [2^lo, 2^(lo+1))), random
 * sign; below the normal range, a subnormal of those bits. */
static double random_exp(uint64_t *rng, int lo, int hi)
{
    const int e = lo + (int)(check_rand(rng) % (uint64_t)(hi - lo + 1));
    const double m = (double)((1ull << 52) | (check_rand(rng) >> 12));
    const double v = e - 52 < -1074 ? ldexp((double)(check_rand(rng) >> 12), -1074) : ldexp(m, e - 52);
    return check_rand(rng) & 1 ? -v : v;
}

static size_t random_array(uint64_t *rng, int kind, double *x)
{
    const size_t n = 1 + check_rand(rng) % NMAX;
    static const int range[][2] = {{-5, 5}, {-60, 60}, {-1074, 1023}, {-1074, -1023}, {990, 1023}, {-1000, 1000}};
    for (size_t i = 0; i < n; ++i) {
        if (kind == 6) { /* values and their negations, a small remainder: cancellation across the whole range */
            x[i] = i % 2 ? -x[i - 1] : random_exp(rng, -1074, 1023);
            if (i % 50 == 49) x[i] = random_exp(rng, -30, 0);
        } else if (kind == 7) { /* any bit pattern */
            x[i] = random_double(rng);
        } else {
            x[i] = random_exp(rng, range[kind][0], range[kind][1]);
        }
    }
    if (check_rand(rng) % 8 == 0) { /* a special value or a few, somewhere */
        static const uint64_t sp[] = {0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull,
                                      0xfff4000000000001ull, 0x8000000000000000ull, 0};
        for (uint64_t j = 0, m = 1 + check_rand(rng) % 3; j < m; ++j)
            x[check_rand(rng) % n] = from_bits(sp[check_rand(rng) % (sizeof sp / sizeof sp[0])]);
    }
    for (size_t i = n; i > 1; --i) { /* shuffle */
        const size_t j = check_rand(rng) % i;
        const double t = x[i - 1];
        x[i - 1] = x[j], x[j] = t;
    }
    return n;
}

static void test_random_arrays(uint64_t *rng)
{
    static double x[NMAX];
    for (int trial = 0; trial < 6000; ++trial) {
        const int kind = trial % 8;
        const size_t n = random_array(rng, kind, x);
        dr_exact_t seq, raw;
        const uint64_t got = bits_of(lib_sum(x, n, &seq)), ref = bits_of(ref_sum(x, n));
        CHECK(got == ref, "random array (kind %d, trial %d, %zu terms, first %016" PRIx64 "): dr_exact_to_f64 %016"
              PRIx64 ", dr_ref_exact_value %016" PRIx64, kind, trial, n, bits_of(x[0]), got, ref);
        dr_exact_zero(&raw); /* rounding an unnormalized accumulator */
        for (size_t i = 0; i < n; ++i) dr_exact_add_f64(&raw, x[i]);
        CHECK(bits_of(dr_exact_to_f64(&raw)) == got, "kind %d trial %d: unnormalized %016" PRIx64 ", normalized %016"
              PRIx64, kind, trial, bits_of(dr_exact_to_f64(&raw)), got);
        /* k partials at random cuts, combined in a random order; the reference merged from the same pieces. */
        enum { KMAX = 8 };
        size_t cut[KMAX + 1];
        const int k = 1 + (int)(check_rand(rng) % KMAX);
        cut[0] = 0, cut[k] = n;
        for (int i = 1; i < k; ++i) cut[i] = check_rand(rng) % (n + 1);
        for (int i = 1; i < k; ++i) /* sort the cuts */
            for (int j = i; j > 1 && cut[j] < cut[j - 1]; --j) {
                const size_t t = cut[j];
                cut[j] = cut[j - 1], cut[j - 1] = t;
            }
        dr_exact_t parts[KMAX], all;
        dr_ref_exact_t rparts[KMAX], rall;
        int order[KMAX];
        for (int i = 0; i < k; ++i) {
            partial(x, cut[i], cut[i + 1], &parts[i]);
            dr_ref_exact_init(&rparts[i]);
            for (size_t j = cut[i]; j < cut[i + 1]; ++j) dr_ref_exact_add(&rparts[i], x[j]);
            order[i] = i;
        }
        for (int i = k; i > 1; --i) {
            const int j = (int)(check_rand(rng) % (uint64_t)i), t = order[i - 1];
            order[i - 1] = order[j], order[j] = t;
        }
        all = parts[order[0]];
        rall = rparts[order[0]];
        for (int i = 1; i < k; ++i) {
            dr_exact_combine(&all, &parts[order[i]]);
            dr_ref_exact_merge(&rall, &rparts[order[i]]);
        }
        CHECK(same_exact(&all, &seq), "kind %d trial %d: %d partials combined in another order differ from the "
              "sequential sum's normalized words", kind, trial, k);
        CHECK(bits_of(dr_ref_exact_value(&rall)) == ref, "kind %d trial %d: the reference merged from %d partials "
              "gives %016" PRIx64 ", sequentially %016" PRIx64, kind, trial, k, bits_of(dr_ref_exact_value(&rall)),
              ref);
    }
}

/* ---- every permutation of small adversarial arrays ---- */
static int next_permutation(int *p, int n)
{
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1]) --i;
    if (i < 0) return 0;
    int j = n - 1;
    while (p[j] <= p[i]) --j;
    int t = p[i];
    p[i] = p[j], p[j] = t;
    for (int a = i + 1, b = n - 1; a < b; ++a, --b) t = p[a], p[a] = p[b], p[b] = t;
    return 1;
}

static void test_permutations(uint64_t *rng)
{
    enum { N = 6 };
    double sets[][N] = {
        {DBL_MAX, DBL_MAX, -DBL_MAX, 0x1p970, -0.0, 1e-300},     /* 2^1024 - 2^970 + 1e-300: inf */
        {DBL_MAX, 0x1p970, -4.9406564584124654e-324, DBL_MAX, -DBL_MAX, 0.0}, /* DBL_MAX */
        {0x1p53, 1.0, 1.0, 0.5, 0.5, -0x1p-1074},                /* just below 2^53 + 3 */
        {0x1p60, 1.0, -0x1p60, 0x1p-53, 0x1p-1074, -0x1p-1074}, /* 1 + 2^-53: a tie, to 1 */
        {-0.0, -0.0, -0.0, -0.0, -0.0, -0.0},
        {-0.0, -0.0, -0.0, 1.0, -1.0, -0.0},
        {INFINITY, -DBL_MAX, -DBL_MAX, -DBL_MAX, 1.0, -0.0},
        {0, 0, 0, 0, 0, 0}, /* random, below */
        {0, 0, 0, 0, 0, 0},
    };
    const int nsets = (int)(sizeof sets / sizeof sets[0]);
    for (int i = 0; i < N; ++i) {
        sets[nsets - 2][i] = random_exp(rng, -1074, 1023);
        sets[nsets - 1][i] = random_exp(rng, -40, 40);
    }
    for (int s = 0; s < nsets; ++s) {
        const double *v = sets[s];
        dr_exact_t base;
        const uint64_t want = bits_of(lib_sum(v, N, &base)), rwant = bits_of(ref_sum(v, N));
        CHECK(want == rwant, "set %d: dr_exact_to_f64 %016" PRIx64 ", dr_ref_exact_value %016" PRIx64, s, want,
              rwant);
        int p[N], perms = 0, bad = 0;
        for (int i = 0; i < N; ++i) p[i] = i;
        do {
            double x[N];
            for (int i = 0; i < N; ++i) x[i] = v[p[i]];
            dr_exact_t seq;
            (void)lib_sum(x, N, &seq);
            int ok = same_exact(&seq, &base);
            for (int cut = 0; cut <= N; ++cut) {
                dr_exact_t a, b, ab;
                partial(x, 0, (size_t)cut, &a);
                partial(x, (size_t)cut, N, &b);
                ab = a;
                dr_exact_combine(&ab, &b);
                dr_exact_combine(&b, &a);
                ok = ok && same_exact(&ab, &base) && same_exact(&b, &base);
            }
            if (perms % 7 == 0) /* three partials at every pair of cuts */
                for (int c1 = 0; c1 <= N; ++c1)
                    for (int c2 = c1; c2 <= N; ++c2) {
                        dr_exact_t a, b, c;
                        partial(x, 0, (size_t)c1, &a);
                        partial(x, (size_t)c1, (size_t)c2, &b);
                        partial(x, (size_t)c2, N, &c);
                        dr_exact_combine(&c, &a);
                        dr_exact_combine(&c, &b);
                        ok = ok && same_exact(&c, &base);
                    }
            const uint64_t r = bits_of(ref_sum(x, N));
            ok = ok && r == rwant;
            bad += !ok;
            ++perms;
        } while (next_permutation(p, N));
        CHECK(perms == 720 && bad == 0, "set %d: %d of %d permutations (and their splits) differ from the first",
              s, bad, perms);
    }
}

/* ---- ties and sticky bits at every bit offset ---- */
static void tie_case(const char *what, int k, const double *x, size_t n, double want)
{
    const uint64_t got = bits_of(lib_sum(x, n, NULL)), ref = bits_of(ref_sum(x, n)), w = bits_of(want);
    CHECK(got == w && ref == w, "%s, k = %d: dr_exact_to_f64 %016" PRIx64 ", dr_ref_exact_value %016" PRIx64
          ", expected %016" PRIx64, what, k, got, ref, w);
}

static void test_tie_offsets(void)
{
    const double two53 = 0x1p53;
    for (int k = 0; k <= 2044; ++k) { /* (2^53 + j) 2^k units of 2^-1074; 2^(k + 53 - 1074) <= 2^1023 */
        const double top = ldexp(1.0, k + 53 - 1074), unit = ldexp(1.0, k - 1074);
        for (int sign = 1; sign >= -1; sign -= 2) {
            const double s = sign;
            double x[4] = {s * top, s * unit};
            tie_case("(2^53 + 1) 2^k: a tie, down to even", k, x, 2, s * ldexp(two53, k - 1074));
            x[1] = s * 2 * unit, x[2] = s * unit;
            tie_case("(2^53 + 3) 2^k: a tie, up to even", k, x, 3, s * ldexp(two53 + 4, k - 1074));
            if (k == 0) continue;
            x[1] = s * unit, x[2] = s * 0x1p-1074;
            tie_case("(2^53 + 1) 2^k + 1 unit: above the tie", k, x, 3, s * ldexp(two53 + 2, k - 1074));
            x[2] = -s * 0x1p-1074;
            tie_case("(2^53 + 1) 2^k - 1 unit: below the tie", k, x, 3, s * ldexp(two53, k - 1074));
            x[1] = s * 3 * unit, x[2] = -s * 0x1p-1074; /* (2^53 + 3) 2^k - 1: below a tie that rounds up */
            tie_case("(2^53 + 3) 2^k - 1 unit: below the tie", k, x, 3, s * ldexp(two53 + 2, k - 1074));
        }
    }
}

/* ---- the normalization cadence ---- */
enum { BIG = DR_EXACT_WORDS + 4 };

/* d += v 2^(32 i), d a two's-complement number of BIG 32-bit digits (independent of dr_exact_normalize). */
static void big_add(uint32_t *d, int i, int64_t v)
{
    __int128 carry = v;
    for (int j = i; j < BIG; ++j) {
        const __int128 t = (__int128)d[j] + carry;
        d[j] = (uint32_t)(t & 0xffffffff);
        carry = (t - (__int128)d[j]) / ((__int128)1 << 32);
    }
}

/* The words' value (not normalized) against a's words after dr_exact_normalize: digits 0..66 in [0, 2^32), the rest
 * word 67's two's complement. */
static void check_normalize(const char *what, dr_exact_t *a)
{
    uint32_t want[BIG], got[BIG];
    memset(want, 0, sizeof want);
    for (int i = 0; i < DR_EXACT_WORDS; ++i) big_add(want, i, a->w[i]);
    dr_exact_normalize(a);
    int digits_ok = 1;
    for (int i = 0; i < DR_EXACT_WORDS - 1; ++i) {
        digits_ok = digits_ok && a->w[i] >= 0 && a->w[i] < ((int64_t)1 << 32);
        got[i] = (uint32_t)a->w[i];
    }
    const int64_t top = a->w[DR_EXACT_WORDS - 1];
    got[DR_EXACT_WORDS - 1] = (uint32_t)((uint64_t)top & 0xffffffffu);
    got[DR_EXACT_WORDS] = (uint32_t)((uint64_t)top >> 32);
    for (int i = DR_EXACT_WORDS + 1; i < BIG; ++i) got[i] = top < 0 ? 0xffffffffu : 0;
    CHECK(digits_ok && memcmp(got, want, sizeof got) == 0, "%s: dr_exact_normalize changed the value%s", what,
          digits_ok ? "" : " (or left a digit outside [0, 2^32))");
}

static void test_cadence(uint64_t *rng)
{
    const int64_t most = (int64_t)DR_EXACT_ADDS * 0xffffffffll; /* what DR_EXACT_ADDS adds can put in a word */
    CHECK(most < INT64_MAX - 2 * ((int64_t)1 << 32), "DR_EXACT_ADDS %u: a word could overflow", DR_EXACT_ADDS);
    dr_exact_t a;
    for (int pattern = 0; pattern < 4; ++pattern) {
        dr_exact_zero(&a);
        for (int i = 0; i < DR_EXACT_WORDS; ++i)
            a.w[i] = pattern == 0   ? most
                     : pattern == 1 ? -most
                     : pattern == 2 ? (i % 2 ? most : -most)
                                    : (int64_t)(check_rand(rng) % (2 * (uint64_t)most + 1)) - most;
        char what[96];
        snprintf(what, sizeof what, "DR_EXACT_ADDS adds in every word (pattern %d)", pattern);
        check_normalize(what, &a);
        for (int i = 0; i < DR_EXACT_WORDS; ++i) a.w[i] += pattern == 1 ? -most : most; /* as many again */
        snprintf(what, sizeof what, "DR_EXACT_ADDS more adds on normalized words (pattern %d)", pattern);
        check_normalize(what, &a);
    }
    /* DR_EXACT_ADDS adds in all of x and y, 2^29 each, as the words hold them just before they must be normalized
     * (the digits times 2^29): the sum rounds as 2^29 x + 2^29 y does (exact doubles: |x|, |y| < 2^994). */
    for (int trial = 0; trial < 4000; ++trial) {
        const double x = random_exp(rng, -1074, 993), y = trial % 2 ? random_exp(rng, -1074, 993) : x;
        int wx, wy;
        int64_t dx[3], dy[3];
        dr_exact_zero(&a);
        a.flags = dr_exact_split_f64(x, &wx, &dx[0], &dx[1], &dx[2]);
        a.flags |= dr_exact_split_f64(y, &wy, &dy[0], &dy[1], &dy[2]);
        for (int j = 0; j < 3; ++j) {
            a.w[wx + j] += dx[j] * ((int64_t)DR_EXACT_ADDS / 2);
            a.w[wy + j] += dy[j] * ((int64_t)DR_EXACT_ADDS / 2);
        }
        const uint64_t got = bits_of(dr_exact_to_f64(&a)); /* rounded before and after normalizing */
        check_normalize("2^29 adds of x and of y", &a);
        const double xy[2] = {ldexp(x, 29), ldexp(y, 29)};
        const uint64_t want = bits_of(ref_sum(xy, 2)), hw = canonical(xy[0] + xy[1]);
        CHECK(got == want && want == hw && bits_of(dr_exact_to_f64(&a)) == want,
              "2^29 (%016" PRIx64 " + %016" PRIx64 ") from constructed words: %016" PRIx64 " (normalized: %016" PRIx64
              "), reference %016" PRIx64 ", the hardware's %016" PRIx64, bits_of(x), bits_of(y), got,
              bits_of(dr_exact_to_f64(&a)), want, hw);
    }
    /* Past the range: DR_EXACT_ADDS adds of +-DBL_MAX round to +-inf; 2^29 of each cancel to +0. */
    for (int sign = 1; sign >= -1; sign -= 2) {
        int w;
        int64_t d[3];
        dr_exact_zero(&a);
        a.flags = dr_exact_split_f64(sign * DBL_MAX, &w, &d[0], &d[1], &d[2]);
        for (int j = 0; j < 3; ++j) a.w[w + j] = d[j] * (int64_t)DR_EXACT_ADDS;
        const uint64_t got = bits_of(dr_exact_to_f64(&a)), want = bits_of(sign * INFINITY);
        CHECK(got == want, "2^30 x %sDBL_MAX: %016" PRIx64 ", expected %016" PRIx64, sign < 0 ? "-" : "", got, want);
        for (int j = 0; j < 3; ++j) a.w[w + j] = d[j] * ((int64_t)DR_EXACT_ADDS / 2);
        (void)dr_exact_split_f64(-sign * DBL_MAX, &w, &d[0], &d[1], &d[2]);
        for (int j = 0; j < 3; ++j) a.w[w + j] += d[j] * ((int64_t)DR_EXACT_ADDS / 2);
        a.flags |= DR_EXACT_TERM | DR_EXACT_NOT_NEG_ZERO;
        CHECK(bits_of(dr_exact_to_f64(&a)) == 0, "2^29 x DBL_MAX - 2^29 x DBL_MAX: %016" PRIx64 ", expected +0",
              bits_of(dr_exact_to_f64(&a)));
    }
}

/* ---- narrow float terms ---- */
static void test_widened(uint64_t *rng)
{
    static double x[65536];
    size_t n = 0;
    for (uint32_t h = 0; h < 65536; ++h) /* every finite float16, both signs: they cancel, +0 remains */
        if (((h >> 10) & 0x1f) != 0x1f) x[n++] = (double)dr_f16_to_f32((uint16_t)h);
    CHECK(bits_of(lib_sum(x, n, NULL)) == 0 && bits_of(ref_sum(x, n)) == 0,
          "every finite float16: %016" PRIx64 " and reference %016" PRIx64 ", expected +0",
          bits_of(lib_sum(x, n, NULL)), bits_of(ref_sum(x, n)));
    n = 0;
    for (uint32_t h = 0; h < 0x7c00; ++h) x[n++] = (double)dr_f16_to_f32((uint16_t)h); /* every positive one */
    CHECK(bits_of(lib_sum(x, n, NULL)) == bits_of(ref_sum(x, n)), "every positive float16: %016" PRIx64
          ", reference %016" PRIx64, bits_of(lib_sum(x, n, NULL)), bits_of(ref_sum(x, n)));
    for (int trial = 0; trial < 300; ++trial) {
        n = 1 + check_rand(rng) % 3000;
        for (size_t i = 0; i < n; ++i) {
            const uint64_t r = check_rand(rng);
            x[i] = trial % 3 == 0   ? (double)dr_f16_to_f32((uint16_t)r)
                   : trial % 3 == 1 ? (double)dr_bf16_to_f32((uint16_t)r)
                                    : (double)dr_bits_to_f32((uint32_t)r);
        }
        const uint64_t got = bits_of(lib_sum(x, n, NULL)), ref = bits_of(ref_sum(x, n));
        CHECK(got == ref, "%s terms (trial %d, %zu): dr_exact_to_f64 %016" PRIx64 ", dr_ref_exact_value %016" PRIx64,
              trial % 3 == 0 ? "float16" : trial % 3 == 1 ? "bfloat16" : "float32", trial, n, got, ref);
    }
}

/* Element i of a CPU-backend test array of `dtype`, pattern `kind`, as its bits. */
static uint64_t cpu_case_bits(dr_dtype_t dtype, int kind, size_t i, uint64_t *rng)
{
    const int eb = dtype == DR_FLOAT64 ? 11 : dtype == DR_FLOAT16 ? 5 : 8;
    const int fb = dtype == DR_FLOAT64 ? 52 : dtype == DR_FLOAT16 ? 10 : dtype == DR_BFLOAT16 ? 7 : 23;
    const uint64_t r = check_rand(rng), sign = (uint64_t)1 << (eb + fb), frac = ((uint64_t)1 << fb) - 1;
    const uint64_t top = (((uint64_t)1 << eb) - 2) << fb; /* the largest finite binade */
    switch (kind) {
    case 0: return r & (sign | (sign - 1)); /* any pattern: NaNs, infinities, subnormals */
    case 1: return (r & sign) | (r % (((uint64_t)1 << eb) - 1)) << fb | frac; /* every binade's largest */
    case 2: return (i & 1 ? sign : 0) | top | frac;                          /* the largest, cancelling */
    case 3: return i % 5 == 0 ? 0 : sign;                                     /* zeros and -0.0 */
    case 4: return sign;                                                      /* -0.0 only */
    case 5: /* infinities (no NaN) among finite values */
        return i % 7 == 3 ? (((uint64_t)1 << eb) - 1) << fb | (i % 2 ? sign : 0) : (r & sign) | (r & frac) | top;
    default: return (r & sign) | (r & frac);                                  /* subnormals and zeros */
    }
}

static double widen_bits(dr_dtype_t dtype, uint64_t b)
{
    switch (dtype) {
    case DR_FLOAT64: return from_bits(b);
    case DR_FLOAT32: return (double)dr_bits_to_f32((uint32_t)b);
    case DR_FLOAT16: return (double)dr_f16_to_f32((uint16_t)b);
    default: return (double)dr_bf16_to_f32((uint16_t)b);
    }
}

static void test_cpu_backend(uint64_t *rng)
{
    const dr_dtype_t types[] = {DR_FLOAT32, DR_FLOAT64, DR_FLOAT16, DR_BFLOAT16};
    const size_t sizes[] = {1, 3, 4, 5, 7, 8, 9, 1000, 200003};
    unsigned char *buf = malloc(200003 * 8);
    if (!buf) {
        CHECK(0, "cannot allocate the CPU backend's test array");
        return;
    }
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
        for (int kind = 0; kind < 7; ++kind)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const dr_dtype_t dtype = types[t];
                const size_t n = sizes[si], esize = dr_dtype_size(dtype);
                dr_exact_t want;
                dr_exact_zero(&want);
                for (size_t i = 0; i < n; ++i) {
                    const uint64_t b = cpu_case_bits(dtype, kind, i, rng);
                    memcpy(buf + i * esize, &b, esize); /* little-endian: the low bytes */
                    dr_exact_add_f64(&want, widen_bits(dtype, b));
                }
                dr_exact_normalize(&want);
                for (int threads = 1; threads <= 3; threads += 2) {
                    dr_partial_t got;
                    uint64_t depth = 0;
                    memset(&got, 0xa5, sizeof got);
                    const int rc = dr_cpu_reduce(dtype, DR_SUM, DR_ACC_EXACT, buf, n, 0, threads, &got, &depth);
                    CHECK(rc == 0 && same_exact(&got.exact, &want) && depth == 1,
                          "dr_cpu_reduce %s exact, pattern %d, n=%zu, %d threads: rc %d, words or flags (%u, want %u) "
                          "differ from each element's dr_exact_add_f64",
                          dr_dtype_name(dtype), kind, n, threads, rc, (unsigned)got.exact.flags,
                          (unsigned)want.flags);
                }
            }
    free(buf);
}

int main(void)
{
    uint64_t rng = check_seed("test_exact");
    test_table();
    test_pairs(&rng);
    test_random_arrays(&rng);
    test_permutations(&rng);
    test_tie_offsets();
    test_cadence(&rng);
    test_widened(&rng);
    test_cpu_backend(&rng);
    return check_summary("test_exact");
}
