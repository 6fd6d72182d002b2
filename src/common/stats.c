/* Statistics as a caller reads them (stats.h). */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accum.h"

/* M 2^e with M's top bit at bit 63 (M != 0), plus `sticky` for anything nonzero below M's last bit, rounded once to
 * nearest float64, ties to even: the bits kept are those above the float64's last place (53 of M's 64 for a normal
 * result, fewer for a subnormal one); ldexp of the kept bits is then exact, or overflows to infinity. */
static double round_bits(uint64_t m, int e, int sticky, int neg)
{
    const int top = e + 63;                                    /* the exponent of M's top bit */
    int shift = top >= -1022 ? 11 : 11 + (-1022 - top);        /* bits of M below the last place */
    double r;
    if (shift > 64) {
        r = 0.0; /* below half the smallest subnormal */
    } else {
        const uint64_t kept = shift == 64 ? 0 : m >> shift;
        const uint64_t rest = shift == 0 ? 0 : shift == 64 ? m : m & ((~0ull) >> (64 - shift));
        const uint64_t half = shift == 0 ? 0 : 1ull << (shift - 1);
        uint64_t q = kept;
        if (shift > 0 && (rest > half || (rest == half && (sticky || (q & 1))))) ++q;
        r = ldexp((double)q, e + shift);
    }
    return neg ? -r : r;
}

double dr_digits_div_round(const uint32_t *d, int ndigits, int unit, uint64_t c, int neg)
{
    /* Long division, top digit first, then four digits past the last (128 more bits of quotient: 64 significant ones
     * and more whenever the quotient is at least 2^(unit - 64), as an integer sum's mean over a count below 2^64 is;
     * an exact sum's smaller means are far below the smallest subnormal); what is left over is sticky. */
    enum { kExtra = 4, kMax = 80 };
    uint32_t q[kMax];
    const int nq = ndigits + kExtra;
    if (nq > kMax || c == 0) return NAN;
    unsigned __int128 rem = 0;
    for (int i = nq - 1; i >= 0; --i) {
        const int src = i - kExtra;
        rem = (rem << 32) | (src >= 0 ? d[src] : 0u);
        q[i] = (uint32_t)(rem / c);
        rem %= c;
    }
    int top = nq - 1;
    while (top >= 0 && q[top] == 0) --top;
    if (top < 0) return neg ? -0.0 : 0.0;
    /* The top 64 bits from digits top, top-1, top-2 (96 bits, of which 64 from the leading one). */
    const unsigned __int128 w = ((unsigned __int128)q[top] << 64) | ((unsigned __int128)(top >= 1 ? q[top - 1] : 0) << 32) |
                                (top >= 2 ? q[top - 2] : 0u);
    int lz = 0;
    while (!((w >> (95 - lz)) & 1)) ++lz;
    const int drop = 32 - lz; /* bits of w below the 64 kept */
    const uint64_t m = (uint64_t)(w >> drop);
    int sticky = rem != 0 || (drop > 0 && (w & (((unsigned __int128)1 << drop) - 1)) != 0);
    for (int i = 0; i <= top - 3 && !sticky; ++i) sticky = q[i] != 0;
    /* M's last bit weighs 2^(32 (top - 2) + drop + unit - 32 kExtra). */
    return round_bits(m, 32 * (top - 2) + drop + unit - 32 * kExtra, sticky, neg);
}

/* |v| as four digits, and its sign. */
static int int128_digits(dr_int128_t v, int is_signed, uint32_t d[4])
{
    int neg = is_signed && (v.hi >> 63);
    if (neg) { /* two's complement negation */
        v.lo = ~v.lo + 1;
        v.hi = ~v.hi + (v.lo == 0);
    }
    d[0] = (uint32_t)v.lo, d[1] = (uint32_t)(v.lo >> 32), d[2] = (uint32_t)v.hi, d[3] = (uint32_t)(v.hi >> 32);
    return neg;
}

double dr_int128_div_round(dr_int128_t v, int is_signed, uint64_t c)
{
    uint32_t d[4];
    const int neg = int128_digits(v, is_signed, d);
    return dr_digits_div_round(d, 4, 0, c, neg);
}

int dr_int128_format(dr_int128_t v, int is_signed, char *buf, size_t len)
{
    uint32_t d[4];
    const int neg = int128_digits(v, is_signed, d);
    unsigned __int128 u = ((unsigned __int128)d[3] << 96) | ((unsigned __int128)d[2] << 64) |
                          ((unsigned __int128)d[1] << 32) | d[0];
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    char out[50];
    int k = 0;
    if (neg) out[k++] = '-';
    while (n) out[k++] = tmp[--n];
    out[k] = '\0';
    return snprintf(buf, len, "%s", out);
}

/* The exact sum divided by c, rounded once, with the sum's rules for NaN and infinities. */
static double exact_mean(const dr_exact_t *in, uint64_t c)
{
    const uint32_t f = in->flags;
    if ((f & DR_EXACT_NAN) || (f & (DR_EXACT_POS_INF | DR_EXACT_NEG_INF)))
        return dr_exact_to_f64(in); /* NaN or the infinity: divided by a count it stays what it is */
    dr_exact_t a = *in;
    dr_exact_normalize(&a);
    int neg = 0;
    if (a.w[DR_EXACT_WORDS - 1] < 0) {
        for (int i = 0; i < DR_EXACT_WORDS; ++i) a.w[i] = -a.w[i];
        dr_exact_normalize(&a);
        neg = 1;
    }
    uint32_t d[DR_EXACT_WORDS];
    for (int i = 0; i < DR_EXACT_WORDS; ++i) d[i] = (uint32_t)a.w[i];
    const double r = dr_digits_div_round(d, DR_EXACT_WORDS, -1074, c, neg);
    if (r == 0 && !neg) return dr_exact_to_f64(in) == 0 ? dr_exact_to_f64(in) : 0.0; /* keep -0.0 of all -0 terms */
    return r;
}

void dr_stats_result(dr_acc_kind_t k, const dr_partial_t *p, dr_stats_result_t *out)
{
    const dr_stats_t *s = k == DR_ACC_STATS_EXACT ? &p->stats_exact.stats : &p->stats;
    memset(out, 0, sizeof *out);
    out->count = s->count;
    out->kind = dr_acc_scalar_kind(k);
    out->min = s->min;
    out->max = s->max;
    out->m2 = s->m2;
    const double n = (double)s->count;
    if (k == DR_ACC_STATS_I64 || k == DR_ACC_STATS_U64) {
        const int is_signed = k == DR_ACC_STATS_I64;
        out->sum_is_int = 1;
        out->sum_int = s->sum.i128;
        out->sum = dr_int128_div_round(s->sum.i128, is_signed, 1);
        out->mean = s->count ? dr_int128_div_round(s->sum.i128, is_signed, s->count) : NAN;
    } else if (k == DR_ACC_STATS_EXACT) {
        out->sum = dr_exact_to_f64(&p->stats_exact.sum);
        out->mean = s->count ? exact_mean(&p->stats_exact.sum, s->count) : NAN;
    } else {
        out->sum = s->sum.f64;
        out->mean = s->count ? s->sum.f64 / n : NAN;
    }
    /* An infinity or a NaN among the elements leaves the running mean infinite or NaN, whatever the grouping; the
     * moments then mean nothing (inf - inf), whichever merge saw it first: NaN, as IEEE and NumPy give. */
    if (!isfinite(s->mean)) out->m2 = NAN;
    out->var_pop = s->count ? out->m2 / n : NAN;
    out->var_sample = s->count > 1 ? out->m2 / (n - 1.0) : NAN;
    /* A NaN field is the canonical NaN, as min and max give it: which NaN the arithmetic left (its payload and sign:
     * inf - inf is -NaN on x86, and the operand order of a NaN sum is the compiler's) would otherwise differ between
     * backends, compilers and groupings, and print as "-nan". */
    double *const fields[] = {&out->sum, &out->mean, &out->m2, &out->var_pop, &out->var_sample};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
        if (*fields[i] != *fields[i]) *fields[i] = dr_bits_to_f64(0x7fffffffffffffffull);
}
