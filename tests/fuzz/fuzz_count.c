/* libFuzzer target: dr_parse_count (src/cli/options.c), the count of -n/--count. Input: the text, as one argument.
 *
 * Invariants, beyond no crash / no UB / no leak:
 *   - the result agrees with a model of the documented grammar, evaluated in 128 bits: decimal digits, then nothing
 *     or one of K M G T (x1000^k) or Ki Mi Gi Ti (x1024^k); accepted exactly when it matches and the value (digits
 *     times scale) is at most 2^64 - 1. So a count that overflows after scaling is an error, never a wrap-around;
 *   - an accepted value printed back (plain, and with every suffix that divides it) parses to the same value;
 *   - a rejection has a non-empty, one-line message, NUL-terminated within the buffer, and the same message cut
 *     short in a smaller buffer. */
#include <inttypes.h>

#include "fuzz_common.h"
#include "options.h"

typedef unsigned __int128 u128;

/* 0 and *out, or -1 for text outside the grammar, -2 for a value past 2^64 - 1. */
static int model(const char *s, uint64_t *out)
{
    const char *p = s;
    if (*p < '0' || *p > '9') return -1;
    u128 v = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
        v = v * 10 + (u128)(*p - '0');
        if (v > (u128)UINT64_MAX) v = (u128)UINT64_MAX + 1; /* saturate: stays past the limit */
    }
    u128 scale = 1;
    if (*p) {
        const char *units = "KMGT", *u = strchr(units, *p);
        if (!u) return -1;
        const int binary = p[1] == 'i';
        if (p[1 + binary] != '\0') return -1;
        for (int i = 0; i <= (int)(u - units); ++i) scale *= binary ? 1024 : 1000;
    }
    if (v * scale > (u128)UINT64_MAX) return -2;
    *out = (uint64_t)(v * scale);
    return 0;
}

static void reparse(const char *text, uint64_t want, const char *input)
{
    char err[256];
    uint64_t got = 0;
    FUZZ_CHECK(dr_parse_count(text, &got, err, sizeof err) == 0 && got == want,
               "'%s' parsed to %" PRIu64 ", but its printed form '%s' does not parse back to it", input, want, text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    char err[512];
    uint64_t got = 0, want = 0;
    const int rc = dr_parse_count(s, &got, err, sizeof err);
    const int m = model(s, &want);
    FUZZ_CHECK((rc == 0) == (m == 0), "dr_parse_count('%s') returned %d, the grammar says %s", s, rc,
               m == 0 ? "valid" : m == -2 ? "overflow (must be an error)" : "invalid");
    if (rc == 0) {
        FUZZ_CHECK(got == want, "dr_parse_count('%s') = %" PRIu64 ", expected %" PRIu64, s, got, want);
        char text[64];
        snprintf(text, sizeof text, "%" PRIu64, got);
        reparse(text, got, s);
        static const char *const suffixes[] = {"K", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"};
        uint64_t scale_dec = 1, scale_bin = 1;
        for (int k = 0; k < 4; ++k) {
            scale_dec *= 1000;
            scale_bin *= 1024;
            if (got % scale_dec == 0) {
                snprintf(text, sizeof text, "%" PRIu64 "%s", got / scale_dec, suffixes[k]);
                reparse(text, got, s);
            }
            if (got % scale_bin == 0) {
                snprintf(text, sizeof text, "%" PRIu64 "%s", got / scale_bin, suffixes[4 + k]);
                reparse(text, got, s);
            }
        }
    } else {
        fuzz_check_message(err, sizeof err, "dr_parse_count", s);
        /* The same call with a buffer of 1..64 bytes (heap, exact size: ASan sees a write past it). */
        const size_t small = 1 + size % 64;
        char *cut = malloc(small);
        if (!cut) abort();
        uint64_t unused = 0;
        FUZZ_CHECK(dr_parse_count(s, &unused, cut, small) != 0, "dr_parse_count('%s') depends on the buffer size", s);
        fuzz_check_truncated(err, cut, small, "dr_parse_count", s);
        free(cut);
    }
    free(s);
    return 0;
}
