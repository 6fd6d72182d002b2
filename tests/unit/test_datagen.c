/* Unit test of src/common/accum.h's 16-bit widening and src/common/datagen.h's generator: every 16-bit
 * pattern against our own ldexp decoding; every type x pattern (x the prod variant) for range, grid, exactness,
 * determinism and seed sensitivity; a statistical sanity check of the random bits. */
#include <math.h>

#include "check.h"
#include "accum.h"
#include "datagen.h"

static uint32_t fbits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* Our own decoding: IEEE binary16 (5 exponent bits, bias 15, 10 stored bits). */
static double ref_f16(uint16_t h)
{
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 31) return m ? NAN : s * INFINITY;
    if (e == 0) return s * ldexp(m, -24);
    return s * ldexp(1024 + m, e - 25);
}

/* bfloat16 (8 exponent bits, bias 127, 7 stored bits). */
static double ref_bf16(uint16_t h)
{
    const int e = (h >> 7) & 0xff, m = h & 0x7f;
    const double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 255) return m ? NAN : s * INFINITY;
    if (e == 0) return s * ldexp(m, -133);
    return s * ldexp(128 + m, e - 134);
}

static void test_widening(void)
{
    int nan16 = 0, sub16 = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const double want = ref_f16((uint16_t)h);
        const float got = dr_f16_to_f32((uint16_t)h);
        if (isnan(want)) {
            ++nan16;
            CHECK(isnan(got), "dr_f16_to_f32(0x%04x): expected NaN, got %a (0x%08x)", h, (double)got, fbits(got));
            /* Every NaN widens to the canonical NaN (accum.h), as the GPU's conversion does. */
            CHECK(fbits(got) == 0x7fffffffu, "dr_f16_to_f32(0x%04x): NaN is not the canonical 0x7fffffff: 0x%08x", h,
                  fbits(got));
            continue;
        }
        if ((h & 0x7c00) == 0 && (h & 0x3ff) != 0) ++sub16;
        /* Compare value and sign (so -0 must stay -0). */
        CHECK((double)got == want && !signbit(got) == !signbit(want),
              "dr_f16_to_f32(0x%04x): expected %a, got %a (0x%08x)", h, want, (double)got, fbits(got));
        /* Every finite half is a float exactly: the float must be exactly representable back. */
        if (isfinite(want) && (h & 0x7c00) != 0) {
            uint16_t back = dr_f32_to_f16_exact(got);
            CHECK(back == h, "dr_f32_to_f16_exact(dr_f16_to_f32(0x%04x)) = 0x%04x", h, back);
        }
    }
    CHECK(nan16 == 2 * 1023, "expected %d float16 NaN patterns, saw %d", 2 * 1023, nan16);
    CHECK(sub16 == 2 * 1023, "expected %d float16 subnormal patterns, saw %d", 2 * 1023, sub16);
    CHECK(dr_f32_to_f16_exact(0.0f) == 0x0000 && dr_f32_to_f16_exact(-0.0f) == 0x8000,
          "dr_f32_to_f16_exact(+-0): got 0x%04x 0x%04x", dr_f32_to_f16_exact(0.0f), dr_f32_to_f16_exact(-0.0f));

    for (uint32_t h = 0; h < 65536; ++h) {
        const double want = ref_bf16((uint16_t)h);
        const float got = dr_bf16_to_f32((uint16_t)h);
        if (isnan(want)) {
            CHECK(isnan(got), "dr_bf16_to_f32(0x%04x): expected NaN, got %a", h, (double)got);
            continue;
        }
        CHECK((double)got == want && !signbit(got) == !signbit(want),
              "dr_bf16_to_f32(0x%04x): expected %a, got %a (0x%08x)", h, want, (double)got, fbits(got));
        CHECK(dr_f32_to_bf16_exact(got) == h, "dr_f32_to_bf16_exact(dr_bf16_to_f32(0x%04x)) = 0x%04x", h,
              dr_f32_to_bf16_exact(got));
    }
}

/* ---- the generator --------------------------------------------------------------------------------------- */

/* Element i as a double (floats, NaN kept) and as raw bits of the type (all types). */
static double elem_double(const dr_gen_t *g, uint64_t i)
{
    switch (g->dtype) {
    case DR_FLOAT32: return dr_gen_float32(g, i);
    case DR_FLOAT64: return dr_gen_float64(g, i);
    case DR_FLOAT16: return ref_f16(dr_gen_float16(g, i));
    case DR_BFLOAT16: return ref_bf16(dr_gen_bfloat16(g, i));
    case DR_INT32: return dr_gen_int32(g, i);
    case DR_INT64: return (double)dr_gen_int64(g, i);
    case DR_UINT32: return dr_gen_uint32(g, i);
    case DR_INT8: return dr_gen_int8(g, i);
    case DR_UINT8: return dr_gen_uint8(g, i);
    case DR_INT16: return dr_gen_int16(g, i);
    case DR_UINT16: return dr_gen_uint16(g, i);
    default: return (double)dr_gen_uint64(g, i);
    }
}

static uint64_t elem_bits(const dr_gen_t *g, uint64_t i)
{
    switch (g->dtype) {
    case DR_INT32: return (uint32_t)dr_gen_int32(g, i);
    case DR_INT64: return (uint64_t)dr_gen_int64(g, i);
    case DR_UINT32: return dr_gen_uint32(g, i);
    case DR_UINT64: return dr_gen_uint64(g, i);
    case DR_FLOAT32: return fbits(dr_gen_float32(g, i));
    case DR_FLOAT64: {
        double d = dr_gen_float64(g, i);
        uint64_t b;
        memcpy(&b, &d, 8);
        return b;
    }
    case DR_FLOAT16: return dr_gen_float16(g, i);
    case DR_INT8: return (uint8_t)dr_gen_int8(g, i);
    case DR_UINT8: return dr_gen_uint8(g, i);
    case DR_INT16: return (uint16_t)dr_gen_int16(g, i);
    case DR_UINT16: return dr_gen_uint16(g, i);
    default: return dr_gen_bfloat16(g, i);
    }
}

static int is_signed(dr_dtype_t t) { return t == DR_INT32 || t == DR_INT64 || t == DR_INT8 || t == DR_INT16; }
static int width(dr_dtype_t t) { return (int)dr_dtype_size(t) * 8; }

/* Random indices: small, around 2^32, around powers of two, and anywhere in 64 bits; wide enough ranges that
 * repeats are rare (the statistical checks assume independent draws). */
static uint64_t pick_index(uint64_t *rng, int k)
{
    uint64_t r = check_rand(rng);
    switch (k % 4) {
    case 0: return r % (1ull << 30);
    case 1: return (1ull << 32) - (1ull << 20) + r % (1ull << 21);
    case 2: return (1ull << (r % 64)) + (r >> 40) - (1ull << 23);
    default: return r;
    }
}

static void test_random_floats(uint64_t *rng, dr_dtype_t t, dr_op_t op)
{
    const int p = dr_dtype_significand_bits(t);
    dr_gen_t g = {DR_DATA_RANDOM, t, op, check_rand(rng), 0, 0};
    const int draws = 100000;
    double lo = INFINITY, hi = -INFINITY;
    int seen_k[16] = {0};
    int bad = 0;
    for (int j = 0; j < draws && bad < 10; ++j) {
        const uint64_t i = pick_index(rng, j);
        const double x = elem_double(&g, i);
        if (!(x >= -1.0 && x < 3.0)) {
            ++bad;
            CHECK(0, "%s random (op %s, seed %" PRIu64 ") index %" PRIu64 ": %a not in [-1, 3)", dr_dtype_name(t),
                  dr_op_name(op), g.seed, i, x);
            continue;
        }
        if (x < lo) lo = x;
        if (x > hi) hi = x;
        /* The element equals the generator's intended value exactly (no rounding on the way to the type). */
        const double intended = dr_gen_float(&g, i, p);
        CHECK(x == intended, "%s random (op %s) index %" PRIu64 ": stored %a but intended %a", dr_dtype_name(t),
              dr_op_name(op), i, x, intended);
        if (op == DR_PROD) {
            /* 1 + k * 2^-(p-1), k in {-2, -1, 1, 2} */
            const double k = ldexp(x - 1.0, p - 1);
            const int ok = k == -2 || k == -1 || k == 1 || k == 2;
            CHECK(ok, "%s prod-random index %" PRIu64 ": %a is not 1 + k*2^-%d with k in {-2, -1, 1, 2} (k = %g)",
                  dr_dtype_name(t), i, x, p - 1, k);
            if (ok) seen_k[(int)k + 8]++;
        } else {
            /* 4u - 1, u on the p-bit grid: (x + 1) * 2^(p-2) is an integer in [0, 2^p). */
            const double k = ldexp(x + 1.0, p - 2);
            CHECK(k == floor(k) && k >= 0 && k < ldexp(1.0, p), "%s random index %" PRIu64 ": %a is not on the "
                  "%d-bit grid of [-1, 3)", dr_dtype_name(t), i, x, p);
        }
        /* 16-bit values survive the round trip through float. */
        if (t == DR_FLOAT16) {
            uint16_t h = dr_gen_float16(&g, i);
            CHECK(dr_f32_to_f16_exact(dr_f16_to_f32(h)) == h && (h & 0x7c00) != 0x7c00,
                  "float16 index %" PRIu64 ": 0x%04x does not round-trip", i, h);
        } else if (t == DR_BFLOAT16) {
            uint16_t h = dr_gen_bfloat16(&g, i);
            CHECK(dr_f32_to_bf16_exact(dr_bf16_to_f32(h)) == h && (h & 0x7f80) != 0x7f80,
                  "bfloat16 index %" PRIu64 ": 0x%04x does not round-trip", i, h);
        } else if (t == DR_FLOAT32) {
            CHECK((double)(float)intended == intended, "float32 index %" PRIu64 ": %a not a float", i, intended);
        }
    }
    if (op == DR_PROD) {
        static const int ks[] = {-2, -1, 1, 2};
        for (int j = 0; j < 4; ++j) /* each a quarter of the time: 25000 +- 137 */
            CHECK(abs(seen_k[ks[j] + 8] - draws / 4) < 1000, "%s prod-random: k = %d seen %d times in %d draws "
                  "(expected ~%d)", dr_dtype_name(t), ks[j], seen_k[ks[j] + 8], draws, draws / 4);
    } else {
        CHECK(lo < -0.98 && hi > 2.98, "%s random: %d draws span only [%g, %g] of [-1, 3)", dr_dtype_name(t), draws,
              lo, hi);
    }
}

static void test_random_ints(uint64_t *rng, dr_dtype_t t)
{
    const int w = width(t);
    dr_gen_t g = {DR_DATA_RANDOM, t, DR_SUM, check_rand(rng), 0, 0};
    const int draws = 100000;
    int ones[64] = {0};
    int negatives = 0;
    for (int j = 0; j < draws; ++j) {
        const uint64_t i = pick_index(rng, j), b = elem_bits(&g, i);
        for (int k = 0; k < w; ++k) ones[k] += (int)((b >> k) & 1);
        if (is_signed(t) && elem_double(&g, i) < 0) ++negatives;
        /* Every op but prod draws the same data (min, max and the bitwise ops included). */
        for (int op = 0; op < DR_OP_COUNT; ++op) {
            if (op == DR_PROD) continue;
            dr_gen_t g2 = g;
            g2.op = (dr_op_t)op;
            CHECK(elem_bits(&g2, i) == b, "%s random index %" PRIu64 ": op %s gives 0x%" PRIx64 ", sum gives 0x%" PRIx64,
                  dr_dtype_name(t), i, dr_op_name((dr_op_t)op), elem_bits(&g2, i), b);
        }
    }
    /* Each bit is set about half the time: mean 0.5, standard deviation 0.0016 for 10^5 draws. */
    for (int k = 0; k < w; ++k) {
        const double mean = (double)ones[k] / draws;
        CHECK(fabs(mean - 0.5) < 0.01, "%s random (seed %" PRIu64 "): bit %d set in %.4f of %d draws (expected 0.5)",
              dr_dtype_name(t), g.seed, k, mean, draws);
    }
    if (is_signed(t))
        CHECK(fabs((double)negatives / draws - 0.5) < 0.01, "%s random: %.4f negative (expected 0.5)", dr_dtype_name(t),
              (double)negatives / draws);
}

static void test_prod_ints(uint64_t *rng, dr_dtype_t t)
{
    dr_gen_t g = {DR_DATA_RANDOM, t, DR_PROD, check_rand(rng), 0, 0};
    const int draws = 100000;
    int threes = 0, negatives = 0;
    for (int j = 0; j < draws; ++j) {
        const uint64_t i = pick_index(rng, j);
        const double x = elem_double(&g, i);
        const int ok = is_signed(t) ? (x == 1 || x == -1 || x == 3 || x == -3) : (x == 1 || x == 3);
        CHECK(ok, "%s prod-random index %" PRIu64 ": %.17g not in %s", dr_dtype_name(t), i, x,
              is_signed(t) ? "{1, -1, 3, -3}" : "{1, 3}");
        if (fabs(x) == 3) ++threes;
        if (x < 0) ++negatives;
    }
    /* 3s one time in 16: expected 6250, standard deviation ~77. */
    CHECK(abs(threes - draws / 16) < 500, "%s prod-random: %d threes in %d draws (expected ~%d)", dr_dtype_name(t),
          threes, draws, draws / 16);
    if (is_signed(t))
        CHECK(abs(negatives - draws / 2) < 1000, "%s prod-random: %d negatives in %d draws (expected ~%d)",
              dr_dtype_name(t), negatives, draws, draws / 2);
}

static void test_iota_ones_const(uint64_t *rng, dr_dtype_t t)
{
    const uint64_t seed = check_rand(rng);
    for (int op = 0; op < DR_OP_COUNT; ++op) {
        if (!dr_op_valid(t, (dr_op_t)op)) continue;
        dr_gen_t iota = {DR_DATA_IOTA, t, (dr_op_t)op, seed, 0, 0};
        dr_gen_t ones = {DR_DATA_ONES, t, (dr_op_t)op, seed, 0, 0};
        const uint64_t cbits = check_rand(rng);
        dr_gen_t cst = {DR_DATA_CONST, t, (dr_op_t)op, seed, 0, 0};
        /* A constant of the type: for floats a random finite value's bits; for integers any bits. */
        if (t == DR_FLOAT16) cst.const_bits = 0x3555; /* 0.33325195 */
        else if (t == DR_BFLOAT16) cst.const_bits = 0xc0a0; /* -5 */
        else if (t == DR_FLOAT32) cst.const_bits = 0x3eaaaaab; /* 1/3 */
        else if (t == DR_FLOAT64) cst.const_bits = 0xbfd5555555555555ull; /* -1/3 */
        else cst.const_bits = dr_dtype_size(t) == 8 ? cbits : cbits & ((1ull << width(t)) - 1);
        for (int j = 0; j < 2000; ++j) {
            const uint64_t i = pick_index(rng, j);
            /* iota: the index modulo 2^width (integers; signed wrap to negative) or 2^p (floats). */
            if (dr_dtype_is_float(t)) {
                const int p = dr_dtype_significand_bits(t);
                const double want = (double)(i & ((1ull << p) - 1));
                const double got = elem_double(&iota, i);
                CHECK(got == want, "%s iota index %" PRIu64 ": expected %.17g, got %.17g", dr_dtype_name(t), i, want,
                      got);
            } else {
                const int w = width(t);
                const uint64_t want = w == 64 ? i : i & ((1ull << w) - 1);
                CHECK(elem_bits(&iota, i) == want, "%s iota index %" PRIu64 ": expected bits 0x%" PRIx64 ", got 0x%"
                      PRIx64, dr_dtype_name(t), i, want, elem_bits(&iota, i));
            }
            CHECK(elem_double(&ones, i) == 1.0, "%s ones index %" PRIu64 ": got %.17g", dr_dtype_name(t), i,
                  elem_double(&ones, i));
            CHECK(elem_bits(&cst, i) == cst.const_bits, "%s const 0x%" PRIx64 " index %" PRIu64 ": got 0x%" PRIx64,
                  dr_dtype_name(t), cst.const_bits, i, elem_bits(&cst, i));
        }
    }
    /* Fixed iota points where the wrap shows. */
    dr_gen_t iota = {DR_DATA_IOTA, t, DR_SUM, seed, 0, 0};
    switch (t) {
    case DR_INT32:
        CHECK(dr_gen_int32(&iota, 1ull << 31) == INT32_MIN, "int32 iota at 2^31: got %" PRId32,
              dr_gen_int32(&iota, 1ull << 31));
        CHECK(dr_gen_int32(&iota, (1ull << 32) + 5) == 5, "int32 iota at 2^32+5: got %" PRId32,
              dr_gen_int32(&iota, (1ull << 32) + 5));
        CHECK(dr_gen_int32(&iota, (1ull << 32) - 1) == -1, "int32 iota at 2^32-1: got %" PRId32,
              dr_gen_int32(&iota, (1ull << 32) - 1));
        break;
    case DR_UINT32:
        CHECK(dr_gen_uint32(&iota, (1ull << 32) - 1) == UINT32_MAX, "uint32 iota at 2^32-1: got %" PRIu32,
              dr_gen_uint32(&iota, (1ull << 32) - 1));
        CHECK(dr_gen_uint32(&iota, (1ull << 32) + 7) == 7, "uint32 iota at 2^32+7: got %" PRIu32,
              dr_gen_uint32(&iota, (1ull << 32) + 7));
        break;
    case DR_INT64:
        CHECK(dr_gen_int64(&iota, 1ull << 63) == INT64_MIN, "int64 iota at 2^63: got %" PRId64,
              dr_gen_int64(&iota, 1ull << 63));
        break;
    case DR_UINT64:
        CHECK(dr_gen_uint64(&iota, UINT64_MAX) == UINT64_MAX, "uint64 iota at 2^64-1");
        break;
    case DR_FLOAT32:
        CHECK(dr_gen_float32(&iota, (1ull << 24) + 3) == 3.0f, "float32 iota at 2^24+3: got %g",
              (double)dr_gen_float32(&iota, (1ull << 24) + 3));
        CHECK(dr_gen_float32(&iota, (1ull << 24) - 1) == 16777215.0f, "float32 iota at 2^24-1: got %.9g",
              (double)dr_gen_float32(&iota, (1ull << 24) - 1));
        break;
    case DR_FLOAT64:
        CHECK(dr_gen_float64(&iota, (1ull << 53) + 1) == 1.0, "float64 iota at 2^53+1: got %.17g",
              dr_gen_float64(&iota, (1ull << 53) + 1));
        CHECK(dr_gen_float64(&iota, (1ull << 53) - 1) == 9007199254740991.0, "float64 iota at 2^53-1: got %.17g",
              dr_gen_float64(&iota, (1ull << 53) - 1));
        break;
    case DR_FLOAT16:
        CHECK(dr_gen_float16(&iota, 2047) == 0x67ff, "float16 iota at 2047: got 0x%04x", dr_gen_float16(&iota, 2047));
        CHECK(dr_gen_float16(&iota, 2048 + 7) == 0x4700, "float16 iota at 2055 (wraps to 7): got 0x%04x",
              dr_gen_float16(&iota, 2055));
        CHECK(dr_gen_float16(&iota, 0) == 0x0000 && dr_gen_float16(&iota, 1) == 0x3c00,
              "float16 iota at 0, 1: got 0x%04x 0x%04x", dr_gen_float16(&iota, 0), dr_gen_float16(&iota, 1));
        break;
    case DR_BFLOAT16:
        CHECK(dr_gen_bfloat16(&iota, 255) == 0x437f, "bfloat16 iota at 255: got 0x%04x", dr_gen_bfloat16(&iota, 255));
        CHECK(dr_gen_bfloat16(&iota, 300) == 0x4230, "bfloat16 iota at 300 (wraps to 44): got 0x%04x",
              dr_gen_bfloat16(&iota, 300));
        break;
    default:
        break;
    }
    /* ones as bit patterns */
    dr_gen_t ones = {DR_DATA_ONES, t, DR_SUM, seed, 0, 0};
    const uint64_t one_bits[] = {[DR_INT32] = 1, [DR_INT64] = 1, [DR_UINT32] = 1, [DR_UINT64] = 1,
                                 [DR_FLOAT32] = 0x3f800000, [DR_FLOAT64] = 0x3ff0000000000000ull,
                                 [DR_FLOAT16] = 0x3c00, [DR_BFLOAT16] = 0x3f80, [DR_INT8] = 1, [DR_UINT8] = 1,
                                 [DR_INT16] = 1, [DR_UINT16] = 1};
    CHECK(elem_bits(&ones, 12345) == one_bits[t], "%s ones: bits 0x%" PRIx64 ", expected 0x%" PRIx64,
          dr_dtype_name(t), elem_bits(&ones, 12345), one_bits[t]);
}

/* Same seed and index: same value; another seed: (almost always) another value. */
static void test_determinism(uint64_t *rng, dr_dtype_t t)
{
    for (int prod = 0; prod < 2; ++prod) {
        const dr_op_t op = prod ? DR_PROD : DR_SUM;
        const uint64_t seed = check_rand(rng);
        dr_gen_t a = {DR_DATA_RANDOM, t, op, seed, 0, 0}, b = a, c = a, d = a;
        c.seed = seed + 1;
        d.seed = seed ^ (1ull << 63);
        const int n = 20000;
        int same_c = 0, same_d = 0, same_next = 0;
        uint64_t prev = 0;
        for (int j = 0; j < n; ++j) {
            const uint64_t i = pick_index(rng, j), va = elem_bits(&a, i);
            CHECK(va == elem_bits(&b, i) && va == elem_bits(&a, i), "%s seed %" PRIu64 " index %" PRIu64
                  ": not deterministic", dr_dtype_name(t), seed, i);
            same_c += va == elem_bits(&c, i);
            same_d += va == elem_bits(&d, i);
            if (j) same_next += va == prev;
            prev = va;
        }
        /* The chance that two independent draws agree: 2^-w for w random bits; for prod about 1/2 (ints:
         * 1 vs -1 vs 3 vs -3; floats: 4 values) - allow generous margins. */
        double p_same;
        if (prod) p_same = dr_dtype_is_float(t) ? 1.0 / 4 : is_signed(t) ? 0.5 * (0.9375 * 0.9375 + 0.0625 * 0.0625)
                                                                         : 0.9375 * 0.9375 + 0.0625 * 0.0625;
        else p_same = ldexp(1.0, -(dr_dtype_is_float(t) ? dr_dtype_significand_bits(t) : width(t)));
        const double limit = (p_same + 0.02) * n;
        CHECK(same_c < limit, "%s %s-random: seeds %" PRIu64 " and +1 agree on %d of %d indices (expected ~%.0f)",
              dr_dtype_name(t), prod ? "prod" : "sum", seed, same_c, n, p_same * n);
        CHECK(same_d < limit, "%s %s-random: seeds %" PRIu64 " and ^2^63 agree on %d of %d indices (expected ~%.0f)",
              dr_dtype_name(t), prod ? "prod" : "sum", seed, same_d, n, p_same * n);
        CHECK(same_next < limit, "%s %s-random: consecutive draws agree %d of %d times (expected ~%.0f)",
              dr_dtype_name(t), prod ? "prod" : "sum", same_next, n, p_same * n);
    }
}

/* The raw generator: a bijection of the index for a fixed seed (no two of many indices collide), and seed- and
 * index-sensitive in every output bit. */
static void test_bits(uint64_t *rng)
{
    const uint64_t seed = check_rand(rng);
    int flips[64] = {0};
    const int n = 20000;
    for (int j = 0; j < n; ++j) {
        const uint64_t i = check_rand(rng);
        const uint64_t x = dr_gen_bits(seed, i), y = dr_gen_bits(seed, i + 1), z = dr_gen_bits(seed ^ 1, i);
        CHECK(x == dr_gen_bits(seed, i), "dr_gen_bits(%" PRIu64 ", %" PRIu64 ") is not deterministic", seed, i);
        for (int k = 0; k < 64; ++k) flips[k] += (int)(((x ^ y) >> k) & 1) + (int)(((x ^ z) >> k) & 1);
    }
    for (int k = 0; k < 64; ++k)
        CHECK(fabs((double)flips[k] / (2 * n) - 0.5) < 0.02, "dr_gen_bits: output bit %d flips %.3f of the time "
              "when the index or seed changes by 1 (expected 0.5)", k, (double)flips[k] / (2 * n));
    CHECK(dr_mix64(0) == 0, "dr_mix64(0) = 0x%" PRIx64 " (the SplitMix64 finaliser maps 0 to 0)", dr_mix64(0));
    /* The first output of SplitMix64 seeded with 0 is the finaliser of the golden-ratio increment. */
    CHECK(dr_mix64(0x9e3779b97f4a7c15ull) == 0xe220a8397b1dcdafull, "dr_mix64(0x9e3779b97f4a7c15) = 0x%" PRIx64
          ", expected 0xe220a8397b1dcdaf (SplitMix64's first output for seed 0)", dr_mix64(0x9e3779b97f4a7c15ull));
    CHECK(dr_mix64(1) == 0x5692161d100b05e5ull, "dr_mix64(1) = 0x%" PRIx64 ", expected 0x5692161d100b05e5 "
          "(SplitMix64 finaliser)", dr_mix64(1));
}

/* datagen.h: "for prod, values stay near 1 so long products neither vanish nor overflow" (k symmetric: no
 * first-order drift), "still, products of ~10^6 bfloat16 values leave float32's range". The product of 2^20
 * consecutive elements (10^5 for bfloat16) must stay well inside float32's normal range, the accumulator of
 * --acc native: |log2(product)| < 100; and k averages 0. */
static void test_prod_drift(uint64_t *rng, dr_dtype_t t)
{
    dr_gen_t g = {DR_DATA_RANDOM, t, DR_PROD, check_rand(rng), 0, 0};
    const uint64_t first = check_rand(rng) >> 24, n = t == DR_BFLOAT16 ? 100000 : 1u << 20;
    double log2_prod = 0, sum_k = 0;
    const int p = dr_dtype_significand_bits(t);
    for (uint64_t i = first; i < first + n; ++i) {
        const double x = elem_double(&g, i);
        log2_prod += log2(fabs(x));
        sum_k += ldexp(x - 1.0, p - 1);
    }
    CHECK(fabs(log2_prod) < 100, "%s prod-random (seed %" PRIu64 "): the product of %" PRIu64 " elements from %" PRIu64
          " is 2^%.1f, outside float32's range (mean k %.4f)", dr_dtype_name(t), g.seed, n, first, log2_prod,
          sum_k / (double)n);
    /* k has standard deviation 1.58: its mean over n >= 10^5 draws is within 0.03 of 0 (6 sigma). */
    CHECK(fabs(sum_k / (double)n) < 0.03, "%s prod-random (seed %" PRIu64 "): k averages %.4f over %" PRIu64 " draws "
          "(expected 0: no first-order drift)", dr_dtype_name(t), g.seed, sum_k / (double)n, n);
}

/* spread: floats with a random sign, binade and fraction over the type's field up to its cap, every one finite, the
 * binades evenly used (lowest and cap both met) and the signs half and half; integers and products: exactly random. */
static void test_spread(uint64_t *rng, dr_dtype_t t)
{
    const uint64_t seed = check_rand(rng);
    for (int op = 0; op < DR_OP_COUNT; ++op) {
        if (!dr_op_valid(t, (dr_op_t)op)) continue;
        dr_gen_t spread = {DR_DATA_SPREAD, t, (dr_op_t)op, seed, 0, 0}, random = {DR_DATA_RANDOM, t, (dr_op_t)op, seed, 0, 0};
        if (!dr_dtype_is_float(t) || op == DR_PROD) {
            for (int j = 0; j < 2000; ++j) {
                const uint64_t i = pick_index(rng, j);
                CHECK(elem_bits(&spread, i) == elem_bits(&random, i), "%s op %d spread index %" PRIu64
                      ": 0x%" PRIx64 ", random gives 0x%" PRIx64, dr_dtype_name(t), op, i, elem_bits(&spread, i),
                      elem_bits(&random, i));
            }
            continue;
        }
        const int frac = dr_dtype_significand_bits(t) - 1, exp_bits = (int)dr_dtype_size(t) * 8 - 1 - frac;
        const uint64_t cap = t == DR_FLOAT16 ? 30 : t == DR_FLOAT64 ? 1023 + 900 : 127 + 90;
        uint64_t lowest = ~0ull, highest = 0;
        int negatives = 0, low_half = 0;
        const int draws = 100000;
        for (int j = 0; j < draws; ++j) {
            const uint64_t i = pick_index(rng, j), b = elem_bits(&spread, i);
            const uint64_t e = (b >> frac) & ((1ull << exp_bits) - 1);
            const double x = elem_double(&spread, i);
            CHECK(isfinite(x), "%s spread index %" PRIu64 ": %.17g is not finite", dr_dtype_name(t), i, x);
            CHECK(e <= cap, "%s spread index %" PRIu64 ": biased exponent %" PRIu64 " above the cap %" PRIu64,
                  dr_dtype_name(t), i, e, cap);
            lowest = e < lowest ? e : lowest;
            highest = e > highest ? e : highest;
            negatives += (b >> (exp_bits + frac)) & 1;
            low_half += e <= cap / 2;
        }
        CHECK(lowest == 0 && highest == cap, "%s spread: biased exponents %" PRIu64 "..%" PRIu64 ", expected 0..%"
              PRIu64, dr_dtype_name(t), lowest, highest, cap);
        /* Half the draws in each half of the binades, half negative: standard deviation ~158 each. */
        const int want_low = (int)((double)draws * (double)(cap / 2 + 1) / (double)(cap + 1));
        CHECK(abs(low_half - want_low) < 1500, "%s spread: %d of %d draws in the lower binades, expected ~%d",
              dr_dtype_name(t), low_half, draws, want_low);
        CHECK(abs(negatives - draws / 2) < 1500, "%s spread: %d negatives in %d draws", dr_dtype_name(t), negatives,
              draws);
    }
}

/* --nans F (dr_gen_t.nan_threshold): about F of the elements NaN, each a NaN of the type (exponent all ones,
 * fraction nonzero) with both signs and quiet and signalling payloads; the others the pattern's own values; none
 * at 0 and all at 2^32. */
static void test_nans(uint64_t *rng, dr_dtype_t t)
{
    const int eb = t == DR_FLOAT64 ? 11 : t == DR_FLOAT16 ? 5 : 8;
    const int fb = t == DR_FLOAT64 ? 52 : t == DR_FLOAT32 ? 23 : t == DR_FLOAT16 ? 10 : 7;
    const uint64_t exp_mask = ((1ull << eb) - 1) << fb, frac_mask = (1ull << fb) - 1, quiet = 1ull << (fb - 1);
    static const double fractions[] = {0.0, 0.01, 0.5, 1.0};
    for (int k = 0; k < 4; ++k) {
        const uint64_t seed = check_rand(rng);
        dr_gen_t g = {DR_DATA_RANDOM, t, DR_SUM, seed, 0, (uint64_t)(fractions[k] * 4294967296.0)};
        dr_gen_t plain = g;
        plain.nan_threshold = 0;
        const uint64_t n = 200000;
        uint64_t nans = 0, neg = 0, q = 0;
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t b = elem_bits(&g, i);
            const int is_nan = (b & exp_mask) == exp_mask && (b & frac_mask) != 0;
            CHECK(is_nan == dr_gen_is_nan(&g, i), "%s --nans %g index %" PRIu64 ": bits 0x%" PRIx64 " %s NaN",
                  dr_dtype_name(t), fractions[k], i, b, is_nan ? "are" : "are not");
            if (is_nan) {
                ++nans;
                neg += b >> (eb + fb) & 1;
                q += (b & quiet) != 0;
            } else {
                CHECK(b == elem_bits(&plain, i), "%s --nans %g index %" PRIu64 ": not NaN, but not the pattern's value",
                      dr_dtype_name(t), fractions[k], i);
            }
        }
        const double got = (double)nans / (double)n;
        CHECK(fabs(got - fractions[k]) <= 0.005, "%s --nans %g: %g of the elements are NaN", dr_dtype_name(t),
              fractions[k], got);
        if (nans > 1000)
            CHECK(neg > nans / 4 && neg < 3 * nans / 4 && q > nans / 4 && q < 3 * nans / 4,
                  "%s --nans %g: %" PRIu64 " NaN, %" PRIu64 " negative, %" PRIu64 " quiet: signs and payloads not mixed",
                  dr_dtype_name(t), fractions[k], nans, neg, q);
    }
}

int main(void)
{
    uint64_t rng = check_seed("test_datagen");
    test_widening();
    test_bits(&rng);
    static const dr_dtype_t floats[] = {DR_FLOAT32, DR_FLOAT64, DR_FLOAT16, DR_BFLOAT16};
    static const dr_dtype_t ints[] = {DR_INT32, DR_INT64, DR_UINT32, DR_UINT64};
    for (int k = 0; k < 4; ++k) {
        test_random_floats(&rng, floats[k], DR_SUM);
        test_random_floats(&rng, floats[k], DR_MIN);
        test_random_floats(&rng, floats[k], DR_PROD);
        test_prod_drift(&rng, floats[k]);
        test_nans(&rng, floats[k]);
        test_random_ints(&rng, ints[k]);
        test_prod_ints(&rng, ints[k]);
    }
    static const dr_dtype_t small_ints[] = {DR_INT8, DR_UINT8, DR_INT16, DR_UINT16};
    for (int k = 0; k < 4; ++k) {
        test_random_ints(&rng, small_ints[k]);
        test_prod_ints(&rng, small_ints[k]);
    }
    for (int t = 0; t < DR_DTYPE_COUNT; ++t) {
        test_iota_ones_const(&rng, (dr_dtype_t)t);
        test_spread(&rng, (dr_dtype_t)t);
        test_determinism(&rng, (dr_dtype_t)t);
    }
    return check_summary("test_datagen");
}
