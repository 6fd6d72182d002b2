/* libFuzzer target: dr_npy_parse and dr_npy_check_size (src/lib/npy.c), the .npy header parser. Each input is parsed
 * three ways, each from a heap block of its exact size (ASan sees any read past it): as the first bytes of a file,
 * and as the header text inside a valid version 1.0 and 3.0 prefix (magic, version, the right length), which
 * reaches the dict parser without the fuzzer having to find a matching length field.
 *
 * Invariants, beyond no crash / no UB / no leak:
 *   - parsing is a pure function of the bytes: the same result, header, need and message twice;
 *   - DR_NPY_NEED_MORE asks for more than it was given and at most DR_NPY_MAX_PREFIX bytes;
 *   - DR_NPY_OK: the data offset is the prefix the length field gives (10 or 12 + length), within the bytes given;
 *     the dtype is one of ours with its descr ('<i4', ..., '<f8'); count * itemsize + offset fits in 64 bits; the
 *     first data_offset bytes alone give the same header, and every shorter prefix asks for more (never more than
 *     data_offset); dr_npy_check_size accepts exactly the file sizes >= data_offset + count * itemsize, with the
 *     rest as trailing bytes; the header written back numpy's way (descr, fortran_order, shape (count,)) parses to
 *     the same type, count and order;
 *   - the 1.0 and 3.0 wrappings of the same text agree: same result, dtype, count, order, and the same message;
 *   - DR_NPY_ERROR: a non-empty, one-line, printable message, NUL-terminated within the buffer, and the same
 *     message cut short (snprintf-style) in a buffer of 1 to 64 bytes. */
#include <inttypes.h>

#include "fuzz_common.h"
#include "npy.h"

static const char *const our_descr[DR_DTYPE_COUNT] = {
    [DR_INT32] = "<i4",   [DR_INT64] = "<i8",   [DR_UINT32] = "<u4", [DR_UINT64] = "<u8",
    [DR_FLOAT32] = "<f4", [DR_FLOAT64] = "<f8", [DR_FLOAT16] = "<f2", [DR_BFLOAT16] = NULL,
    [DR_INT8] = "|i1",    [DR_UINT8] = "|u1",   [DR_INT16] = "<i2",  [DR_UINT16] = "<u2",
};

/* The descr a header may carry for dtype: ours, or for one byte any byte-order mark ('<i1', '=u1'), and '|b1' (bool,
 * read as uint8). */
static int descr_ok(dr_dtype_t t, const char *d)
{
    if ((unsigned)t >= DR_DTYPE_COUNT || !our_descr[t]) return 0;
    if (strcmp(d, our_descr[t]) == 0) return 1;
    if (dr_dtype_size(t) != 1 || !strchr("<>|=", d[0]) || d[0] == '\0') return 0;
    return strcmp(d + 1, our_descr[t] + 1) == 0 || (t == DR_UINT8 && strcmp(d + 1, "b1") == 0);
}

typedef struct {
    dr_npy_result_t r;
    dr_npy_header_t h;
    size_t need;
    char err[512];
} outcome_t;

static void parse(const uint8_t *data, size_t size, outcome_t *o)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) abort();
    memcpy(copy, data, size);
    memset(o, 0, sizeof *o);
    o->r = dr_npy_parse(size ? copy : NULL, size, &o->h, &o->need, o->err, sizeof o->err);
    free(copy);
}

/* A version major.0 prefix around text. */
static uint8_t *wrap(int major, const uint8_t *text, size_t n, size_t *len)
{
    const size_t pre = major == 1 ? 10 : 12;
    uint8_t *b = malloc(pre + n + 1);
    if (!b) abort();
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)major;
    b[7] = 0;
    for (size_t i = 0; i < pre - 8; ++i) b[8 + i] = (uint8_t)(n >> (8 * i));
    memcpy(b + pre, text, n);
    *len = pre + n;
    return b;
}

static void check_one(const uint8_t *data, size_t size, const outcome_t *o, const char *how)
{
    FUZZ_CHECK(o->r == DR_NPY_OK || o->r == DR_NPY_NEED_MORE || o->r == DR_NPY_ERROR, "%s: result %d", how, o->r);
    outcome_t again;
    parse(data, size, &again);
    FUZZ_CHECK(again.r == o->r && again.need == o->need && strcmp(again.err, o->err) == 0 &&
                   memcmp(&again.h, &o->h, sizeof o->h) == 0,
               "%s: a second parse differs", how);
    if (o->r == DR_NPY_NEED_MORE) {
        FUZZ_CHECK(o->need > size && o->need <= DR_NPY_MAX_PREFIX, "%s: need %zu with %zu bytes", how, o->need, size);
        return;
    }
    if (o->r == DR_NPY_ERROR) {
        fuzz_check_message(o->err, sizeof o->err, "dr_npy_parse", how);
        for (const char *p = o->err; *p; ++p)
            FUZZ_CHECK((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f, "%s: unprintable message '%s'", how,
                       o->err);
        const size_t small = 1 + size % 64;
        char *cut = malloc(small);
        if (!cut) abort();
        dr_npy_header_t h;
        size_t need;
        FUZZ_CHECK(dr_npy_parse(data, size, &h, &need, cut, small) == DR_NPY_ERROR, "%s: depends on the buffer", how);
        fuzz_check_truncated(o->err, cut, small, "dr_npy_parse", how);
        free(cut);
        return;
    }
    /* OK */
    const dr_npy_header_t *h = &o->h;
    FUZZ_CHECK(h->major >= 1 && h->major <= 3 && h->minor == 0, "%s: version %d.%d", how, h->major, h->minor);
    const size_t pre = h->major == 1 ? 10 : 12;
    uint64_t hlen = (uint64_t)data[8] | (uint64_t)data[9] << 8;
    if (pre == 12) hlen |= (uint64_t)data[10] << 16 | (uint64_t)data[11] << 24;
    FUZZ_CHECK(h->data_offset == pre + hlen && h->data_offset <= size, "%s: data offset %" PRIu64, how,
               h->data_offset);
    FUZZ_CHECK(descr_ok(h->dtype, h->descr),
               "%s: dtype %d descr '%.16s'", how, (int)h->dtype, h->descr);
    FUZZ_CHECK(h->fortran_order == 0 || h->fortran_order == 1, "%s: fortran_order %d", how, h->fortran_order);
    FUZZ_CHECK(h->ndim >= 0, "%s: ndim %d", how, h->ndim);
    uint64_t bytes, end;
    FUZZ_CHECK(!__builtin_mul_overflow(h->count, (uint64_t)dr_dtype_size(h->dtype), &bytes) &&
                   !__builtin_add_overflow(bytes, h->data_offset, &end),
               "%s: %" PRIu64 " elements overflow", how, h->count);
    /* The header alone, and its prefixes. */
    outcome_t exact;
    parse(data, (size_t)h->data_offset, &exact);
    FUZZ_CHECK(exact.r == DR_NPY_OK && memcmp(&exact.h, h, sizeof *h) == 0, "%s: the header alone parses differently",
               how);
    const size_t ks[] = {0, 1, 5, 6, 7, 8, 9, 10, 11, (size_t)h->data_offset - 1, size % (size_t)h->data_offset};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) {
        if (ks[i] >= h->data_offset) continue;
        outcome_t p;
        parse(data, ks[i], &p);
        FUZZ_CHECK(p.r == DR_NPY_NEED_MORE && p.need > ks[i] && p.need <= h->data_offset,
                   "%s: prefix of %zu bytes gave %d need %zu", how, ks[i], p.r, p.need);
    }
    /* The size check. */
    uint64_t trailing = 7;
    char err[256];
    FUZZ_CHECK(dr_npy_check_size(h, end, &trailing, err, sizeof err) == 0 && trailing == 0, "%s: exact size", how);
    if (end < UINT64_MAX)
        FUZZ_CHECK(dr_npy_check_size(h, end + 1, &trailing, err, sizeof err) == 0 && trailing == 1, "%s: +1", how);
    if (end > 0) {
        FUZZ_CHECK(dr_npy_check_size(h, end - 1, &trailing, err, sizeof err) != 0 && strstr(err, "truncated"),
                   "%s: one byte short accepted", how);
        fuzz_check_message(err, sizeof err, "dr_npy_check_size", how);
    }
    /* Written back numpy's way. */
    char text[256];
    const int n = snprintf(text, sizeof text, "{'descr': '%s', 'fortran_order': %s, 'shape': (%" PRIu64 ",), }\n",
                           h->descr, h->fortran_order ? "True" : "False", h->count);
    size_t len;
    uint8_t *b = wrap(1, (const uint8_t *)text, (size_t)n, &len);
    outcome_t back;
    parse(b, len, &back);
    free(b);
    FUZZ_CHECK(back.r == DR_NPY_OK && back.h.dtype == h->dtype && back.h.count == h->count &&
                   back.h.fortran_order == h->fortran_order,
               "%s: written back as '%s', parsed as %d (%s)", how, text, back.r, back.err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    outcome_t raw, v1, v3;
    parse(data, size, &raw);
    check_one(data, size, &raw, "file bytes");

    size_t n1, n3;
    uint8_t *b1 = wrap(1, data, size, &n1), *b3 = wrap(3, data, size, &n3);
    parse(b1, n1, &v1);
    parse(b3, n3, &v3);
    check_one(b1, n1, &v1, "header text in a 1.0 prefix");
    check_one(b3, n3, &v3, "header text in a 3.0 prefix");
    FUZZ_CHECK(v1.r == v3.r && strcmp(v1.err, v3.err) == 0, "1.0 and 3.0 prefixes disagree: %d '%s' / %d '%s'", v1.r,
               v1.err, v3.r, v3.err);
    if (v1.r == DR_NPY_OK)
        FUZZ_CHECK(v1.h.dtype == v3.h.dtype && v1.h.count == v3.h.count && v1.h.ndim == v3.h.ndim &&
                       v1.h.fortran_order == v3.h.fortran_order && v3.h.data_offset == v1.h.data_offset + 2,
                   "1.0 and 3.0 prefixes give different headers");
    free(b1);
    free(b3);
    return 0;
}
