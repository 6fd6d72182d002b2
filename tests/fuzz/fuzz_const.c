/* libFuzzer target: dr_parse_const (src/cli/options.c), the V of --data const:V. Input: the text; it is parsed for
 * every element type.
 *
 * Invariants, beyond no crash / no UB / no leak:
 *   - integer types: accepted exactly when the text is decimal digits or 0x/0X and hex digits, with a leading '-'
 *     for the signed types only, and the value is in the type's range; the bits are the value's two's complement,
 *     in the type's width (a 128-bit model decides);
 *   - float types: accepted exactly when strtod takes the whole text, it does not start with a blank, and it is not
 *     a finite number too large for a double (an infinity may be spelled, in any case, as C allows: inf,
 *     infinity); then the bits are those of the value rounded once, to nearest even, to the type: checked against
 *     the two neighbours of the double strtod made (the text rounds the same way unless that double is exactly a
 *     midpoint of the type, where either neighbour is allowed); rounding past the type's largest finite value is an
 *     error; NaN stays NaN, signs are kept;
 *   - a rejection has a non-empty, one-line message, NUL-terminated within the buffer, the same message cut short
 *     in a smaller buffer. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <strings.h>

#include "fuzz_common.h"
#include "options.h"

typedef unsigned __int128 u128;

/* ---- integers ---- */
static int model_int(const char *s, dr_dtype_t t, uint64_t *bits)
{
    const int is_signed = t == DR_INT32 || t == DR_INT64 || t == DR_INT8 || t == DR_INT16;
    const int width = (int)dr_dtype_size(t) * 8;
    const char *p = s;
    int neg = 0, base = 10;
    if (is_signed && *p == '-') {
        neg = 1;
        ++p;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (*p == '\0') return -1;
    u128 v = 0;
    for (; *p; ++p) {
        int d;
        if (*p >= '0' && *p <= '9') d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f') d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F') d = *p - 'A' + 10;
        else return -1;
        v = v * (unsigned)base + (unsigned)d;
        if (v > ((u128)1 << 64)) v = ((u128)1 << 64) + 1; /* saturate past every limit */
    }
    const u128 max = is_signed ? (neg ? (u128)1 << (width - 1) : ((u128)1 << (width - 1)) - 1)
                               : ((u128)1 << width) - 1;
    if (v > max) return -2;
    uint64_t x = (uint64_t)v;
    if (neg) x = (uint64_t)0 - x;
    *bits = width == 64 ? x : x & (((uint64_t)1 << width) - 1);
    return 0;
}

/* ---- floats ---- */
/* Whole text an infinity, the way strtod reads one: optional sign, "inf" or "infinity", any case. */
static int spells_inf(const char *s)
{
    if (*s == '+' || *s == '-') ++s;
    return strcasecmp(s, "inf") == 0 || strcasecmp(s, "infinity") == 0;
}

/* A small binary format: `man` stored significand bits, `ebits` exponent bits. Values of bit patterns computed
 * with ldexp (not with the program's converters). */
typedef struct {
    int man, ebits;
    double *finite; /* every positive finite value, ascending: patterns 0 .. (2^ebits - 1) << man, exclusive */
    size_t count;
    double overflow; /* the value one step past the largest finite one (where rounding gives inf) */
} small_format_t;

static double small_value(const small_format_t *f, uint32_t bits)
{
    const uint32_t e = bits >> f->man, m = bits & ((1u << f->man) - 1);
    const int bias = (1 << (f->ebits - 1)) - 1;
    return e ? ldexp((double)((1u << f->man) | m), (int)e - bias - f->man) : ldexp((double)m, 1 - bias - f->man);
}

static void small_format_init(small_format_t *f, int man, int ebits)
{
    f->man = man;
    f->ebits = ebits;
    f->count = ((size_t)1 << ebits) - 1;
    f->count <<= man;
    f->finite = malloc(f->count * sizeof(double));
    if (!f->finite) abort();
    for (size_t i = 0; i < f->count; ++i) f->finite[i] = small_value(f, (uint32_t)i);
    const int bias = (1 << (ebits - 1)) - 1;
    f->overflow = ldexp(1.0, bias + 1);
}

/* Allowed results (pattern without sign, or -1 for "error: out of range") for |v| = a, finite: lo and hi. They
 * differ only when a is exactly the midpoint of two neighbours. */
static void small_expect(const small_format_t *f, double a, long *lo, long *hi)
{
    size_t l = 0, r = f->count; /* largest i with finite[i] <= a */
    while (r - l > 1) {
        size_t mid = l + (r - l) / 2;
        if (f->finite[mid] <= a) l = mid;
        else r = mid;
    }
    if (f->finite[l] == a) {
        *lo = *hi = (long)l;
        return;
    }
    const double below = f->finite[l], above = l + 1 < f->count ? f->finite[l + 1] : f->overflow;
    const long up = l + 1 < f->count ? (long)(l + 1) : -1;
    const double midpoint = below + (above - below) / 2; /* exact in double */
    if (a < midpoint) *lo = *hi = (long)l;
    else if (a > midpoint) *lo = *hi = up;
    else {
        *lo = (long)l;
        *hi = up;
    }
}

static small_format_t f16, bf16;

static void check_float(const char *s, dr_dtype_t t, int rc, uint64_t bits)
{
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    const int syntax_ok = *s != '\0' && !isspace((unsigned char)*s) && *end == '\0';
    const int range_ok = !isinf(v) || spells_inf(s);
    const char *name = dr_dtype_name(t);
    if (!syntax_ok || !range_ok) {
        FUZZ_CHECK(rc != 0, "dr_parse_const('%s', %s) accepted it: %s", s, name,
                   !syntax_ok ? "not a number" : "a finite number past the double range");
        return;
    }
    const int neg = signbit(v) != 0;
    const double a = fabs(v);
    if (t == DR_FLOAT64) {
        uint64_t want;
        memcpy(&want, &v, 8);
        FUZZ_CHECK(rc == 0 && (bits == want || (isnan(v) && (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
                                                   (bits & 0x000fffffffffffffull) != 0 && (bits >> 63) == (uint64_t)neg)),
                   "dr_parse_const('%s', float64): rc %d bits %016" PRIx64 ", expected %016" PRIx64, s, rc, bits, want);
        return;
    }
    if (t == DR_FLOAT32) {
        FUZZ_CHECK(rc != 0 || bits >> 32 == 0, "dr_parse_const('%s', float32): bits %" PRIx64 " wider than 32", s, bits);
        uint32_t b = (uint32_t)bits;
        if (isnan(v)) {
            FUZZ_CHECK(rc == 0 && (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) && (b >> 31) == (uint32_t)neg,
                       "dr_parse_const('%s', float32): rc %d bits %08x, expected a NaN", s, rc, b);
            return;
        }
        long lo, hi; /* float32 as a small format: candidates from the hardware's nearest-even conversion */
        if (isinf(v)) {
            lo = hi = 0x7f800000L;
        } else {
            const float f = (float)a; /* nearest, ties to even */
            if ((double)f == a) {
                lo = hi = (long)(dr_f32_to_bits(f));
            } else {
                const float below = (double)f < a ? f : nextafterf(f, 0.0f);
                const float above = (double)f < a ? nextafterf(f, INFINITY) : f;
                const double top = isinf(above) ? (double)FLT_MAX + ldexp(1.0, 104) : (double)above;
                const double midpoint = (double)below + (top - (double)below) / 2;
                const long lb = (long)dr_f32_to_bits(below), ub = isinf(above) ? -1 : (long)dr_f32_to_bits(above);
                lo = a <= midpoint ? lb : ub;
                hi = a >= midpoint ? ub : lb;
            }
        }
        const long got = rc == 0 ? (long)(b & 0x7fffffffu) : -1;
        FUZZ_CHECK((got == lo || got == hi) && (rc != 0 || (b >> 31) == (uint32_t)neg),
                   "dr_parse_const('%s', float32): rc %d bits %08x; allowed %lx or %lx (-1: out of range), sign %d", s,
                   rc, b, lo, hi, neg);
        return;
    }
    /* float16, bfloat16 */
    const small_format_t *f = t == DR_FLOAT16 ? &f16 : &bf16;
    FUZZ_CHECK(rc != 0 || bits >> 16 == 0, "dr_parse_const('%s', %s): bits %" PRIx64 " wider than 16", s, name, bits);
    const uint32_t b = (uint32_t)bits, inf = ((1u << f->ebits) - 1) << f->man;
    if (isnan(v)) {
        FUZZ_CHECK(rc == 0 && (b & inf) == inf && (b & ((1u << f->man) - 1)) && (b >> 15) == (uint32_t)neg,
                   "dr_parse_const('%s', %s): rc %d bits %04x, expected a NaN", s, name, rc, b);
        return;
    }
    long lo, hi;
    if (isinf(v)) lo = hi = (long)inf;
    else small_expect(f, a, &lo, &hi);
    const long got = rc == 0 ? (long)(b & 0x7fffu) : -1;
    FUZZ_CHECK((got == lo || got == hi) && (rc != 0 || (b >> 15) == (uint32_t)neg),
               "dr_parse_const('%s', %s): rc %d bits %04x; allowed %lx or %lx (-1: out of range), sign %d", s, name, rc,
               b, lo, hi, neg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    small_format_init(&f16, 10, 5);
    small_format_init(&bf16, 7, 8);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    for (int t = 0; t < DR_DTYPE_COUNT; ++t) {
        char err[512];
        uint64_t bits = 0;
        const int rc = dr_parse_const(s, (dr_dtype_t)t, &bits, err, sizeof err);
        if (dr_dtype_is_float((dr_dtype_t)t)) {
            check_float(s, (dr_dtype_t)t, rc, bits);
        } else {
            uint64_t want = 0;
            const int m = model_int(s, (dr_dtype_t)t, &want);
            FUZZ_CHECK((rc == 0) == (m == 0), "dr_parse_const('%s', %s) returned %d, the model says %s", s,
                       dr_dtype_name((dr_dtype_t)t), rc, m == 0 ? "valid" : m == -2 ? "out of range" : "invalid");
            FUZZ_CHECK(rc != 0 || bits == want, "dr_parse_const('%s', %s) = %016" PRIx64 ", expected %016" PRIx64, s,
                       dr_dtype_name((dr_dtype_t)t), bits, want);
        }
        if (rc != 0) {
            fuzz_check_message(err, sizeof err, "dr_parse_const", s);
            const size_t small = 1 + (size + (size_t)t) % 64;
            char *cut = malloc(small);
            if (!cut) abort();
            uint64_t unused = 0;
            FUZZ_CHECK(dr_parse_const(s, (dr_dtype_t)t, &unused, cut, small) != 0,
                       "dr_parse_const('%s') depends on the buffer size", s);
            fuzz_check_truncated(err, cut, small, "dr_parse_const", s);
            free(cut);
        }
    }
    free(s);
    return 0;
}
