/* The .npy header parser and the raw layout (see npy.h). The header is Python literal syntax; this accepts the
 * subset numpy and other writers produce: the dict's keys in any order, single or double quotes, True/False,
 * spaces, tabs and newlines between tokens, a trailing comma in the dict and in the shape tuple, and Python 2's 'L'
 * suffix on integers (numpy under Python 2 wrote shapes like (10L,)). Everything else is an error that says what
 * was found: no escapes in strings, no extra keys, no key twice, nothing but whitespace after the dict. */
#include "npy.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "status.h"
static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static const char supported_text[] =
    "'|i1' (int8), '|u1' (uint8), '|b1' (bool, as uint8 0/1), '<i2' (int16), '<u2' (uint16), '<i4' (int32), "
    "'<i8' (int64), '<u4' (uint32), '<u8' (uint64), '<f2' (float16), '<f4' (float32), '<f8' (float64)";

const char *dr_npy_supported(void) { return supported_text; }

static int vfail(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (errlen == 0) return -1;
    vsnprintf(err, errlen, fmt, ap);
    /* The message quotes bytes of the file: keep it one line of printable ASCII. */
    for (char *p = err; *p; ++p)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) *p = '?';
    return -1;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Up to `max` bytes of s as printable text ('?' for the rest), with "..." when cut. */
static void quote(char *out, size_t outlen, const unsigned char *s, size_t n, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n && i < max && k + 1 < outlen; ++i)
        out[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
    out[k] = '\0';
    if (n > max && k + 4 < outlen) memcpy(out + k, "...", 4);
}

/* ---- the header dict ---------------------------------------------------------------------------------------- */

typedef struct {
    const unsigned char *p, *begin, *end;
    char *err;
    size_t errlen;
} cursor_t;

static void skip_ws(cursor_t *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) ++c->p;
}

static int at(const cursor_t *c, char ch) { return c->p < c->end && *c->p == (unsigned char)ch; }

static int is_ident(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* The token the cursor is at, for messages: "'abc'" (up to a delimiter, at most 12 bytes) or "the end of the
 * header". */
static const char *found(const cursor_t *c, char *buf, size_t len)
{
    if (c->p >= c->end) return "the end of the header";
    const unsigned char *e = c->p + 1;
    while (e < c->end && !strchr(",:{}()[] \t\r\n", *e)) ++e; /* (NUL too: strchr finds the terminator) */
    char q[32];
    quote(q, sizeof q, c->p, (size_t)(e - c->p), 12);
    snprintf(buf, len, "'%s'", q);
    return buf;
}

static int syntax(cursor_t *c, const char *expected)
{
    char f[48];
    return fail(c->err, c->errlen, "corrupt header: expected %s at byte %zu of the header, found %s", expected,
                (size_t)(c->p - c->begin), found(c, f, sizeof f));
}

/* A quoted string without escapes: *s, *n its contents. */
static int parse_string(cursor_t *c, const unsigned char **s, size_t *n, const char *what)
{
    if (!at(c, '\'') && !at(c, '"')) return syntax(c, what);
    const unsigned char q = *c->p++;
    const unsigned char *start = c->p;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\') return fail(c->err, c->errlen, "corrupt header: escape sequence in a string at byte %zu "
                                       "of the header (not written by numpy)", (size_t)(c->p - c->begin));
        if (*c->p == '\n') break;
        ++c->p;
    }
    if (c->p >= c->end || *c->p != q)
        return fail(c->err, c->errlen, "corrupt header: unterminated string at byte %zu of the header",
                    (size_t)(start - 1 - c->begin));
    *s = start;
    *n = (size_t)(c->p - start);
    ++c->p;
    return 0;
}

static int parse_bool(cursor_t *c, int *v)
{
    static const struct {
        const char *word;
        int value;
    } words[] = {{"True", 1}, {"False", 0}};
    for (int i = 0; i < 2; ++i) {
        const size_t n = strlen(words[i].word);
        if ((size_t)(c->end - c->p) >= n && memcmp(c->p, words[i].word, n) == 0 &&
            (c->p + n == c->end || !is_ident(c->p[n]))) {
            c->p += n;
            *v = words[i].value;
            return 0;
        }
    }
    char f[48];
    return fail(c->err, c->errlen, "corrupt header: 'fortran_order' is %s, expected True or False",
                found(c, f, sizeof f));
}

/* The shape tuple's text from its first byte, for messages: up to the closing parenthesis or 40 bytes. */
static void shape_text(const cursor_t *c, const unsigned char *start, char *out, size_t len)
{
    const unsigned char *e = start;
    while (e < c->end && *e != ')' && *e != '}' && e - start < 40) ++e;
    if (e < c->end && *e == ')') ++e;
    quote(out, len, start, (size_t)(e - start), 40);
    if (e == start) snprintf(out, len, "(missing)");
}

typedef struct {
    const unsigned char *text; /* where the tuple starts, for messages */
    uint64_t count;
    int ndim, has_zero, overflow;
} shape_t;

/* A tuple of non-negative integers: (), (5,), (2, 3), (2, 3,). Python's (5) is an int, not a tuple. */
static int parse_shape(cursor_t *c, shape_t *s)
{
    char t[64];
    memset(s, 0, sizeof *s);
    s->text = c->p;
    s->count = 1;
    if (!at(c, '(')) goto bad;
    ++c->p;
    skip_ws(c);
    if (at(c, ')')) {
        ++c->p;
        return 0;
    }
    for (;;) {
        if (!(c->p < c->end && *c->p >= '0' && *c->p <= '9')) goto bad;
        const unsigned char *digits = c->p;
        uint64_t v = 0;
        int big = 0;
        for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; ++c->p)
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*c->p - '0'), &v)) big = 1;
        if (c->p - digits > 1 && *digits == '0') goto bad; /* 05: a syntax error in Python 3 */
        if (at(c, 'L') || at(c, 'l')) ++c->p;               /* Python 2's long */
        if (c->p < c->end && is_ident(*c->p)) goto bad;     /* 5x, 0x10, 1_000, 5e3 */
        ++s->ndim;
        if (v == 0 && !big) s->has_zero = 1;
        if (big || __builtin_mul_overflow(s->count, v, &s->count)) s->overflow = 1;
        skip_ws(c);
        if (at(c, ',')) {
            ++c->p;
            skip_ws(c);
            if (at(c, ')')) break;
            continue;
        }
        if (at(c, ')')) {
            if (s->ndim == 1) {
                shape_text(c, s->text, t, sizeof t);
                return fail(c->err, c->errlen, "corrupt header: shape %s is not a tuple (a 1-d shape is written "
                                               "with a comma: (n,))", t);
            }
            break;
        }
        goto bad;
    }
    ++c->p;
    if (s->has_zero) s->count = 0; /* whatever the other dimensions: no elements */
    return 0;
bad:
    shape_text(c, s->text, t, sizeof t);
    return fail(c->err, c->errlen, "corrupt header: shape %s is not a tuple of non-negative integers", t);
}

/* ---- dtype strings ---------------------------------------------------------------------------------------- */

/* numpy's name for a kind and item size, for messages. */
static void numpy_type_name(char kind, unsigned size, char *out, size_t len)
{
    switch (kind) {
    case 'b': snprintf(out, len, "bool"); break;
    case 'i': snprintf(out, len, "int%u", size * 8); break;
    case 'u': snprintf(out, len, "uint%u", size * 8); break;
    case 'f': snprintf(out, len, "float%u", size * 8); break;
    case 'c': snprintf(out, len, "complex%u", size * 8); break;
    case 'S': case 'a': snprintf(out, len, "bytes"); break;
    case 'U': snprintf(out, len, "str"); break;
    case 'V': snprintf(out, len, "void: raw or structured records"); break;
    case 'M': snprintf(out, len, "datetime64"); break;
    case 'm': snprintf(out, len, "timedelta64"); break;
    default: snprintf(out, len, "unknown kind '%c'", kind); break;
    }
}

/* The descr string against our types: [<>|=] kind size, e.g. '<f4'; datetimes add a unit ('<M8[ns]'). */
static int decode_descr(const unsigned char *s, size_t n, dr_dtype_t *out, char *err, size_t errlen)
{
    char d[40];
    quote(d, sizeof d, s, n, 24);
    size_t i = 0;
    char order = 0;
    if (n > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) order = (char)s[i++];
    if (i >= n || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
        return fail(err, errlen, "dtype '%s' is not a numpy type string (such as '<f4')", d);
    const char kind = (char)s[i++];
    unsigned size = 0;
    const size_t digits = i;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && size < 100000; ++i) size = size * 10 + (unsigned)(s[i] - '0');
    if (kind == 'O') return fail(err, errlen, "object arrays ('%s') are not supported", d);
    if (i < n && s[i] == '[' && (kind == 'M' || kind == 'm')) i = n; /* the unit */
    if (i != n || i == digits || s[digits] == '0') /* no size, or one numpy never writes ('<i04', found by fuzzing) */
        return fail(err, errlen, "dtype '%s' is not a numpy type string (such as '<f4')", d);
    static const struct {
        char kind;
        unsigned size;
        dr_dtype_t dtype;
    } map[] = {
        {'i', 1, DR_INT8},    {'u', 1, DR_UINT8},   {'b', 1, DR_UINT8},  {'i', 2, DR_INT16},
        {'u', 2, DR_UINT16},  {'i', 4, DR_INT32},   {'i', 8, DR_INT64},  {'u', 4, DR_UINT32},
        {'u', 8, DR_UINT64},  {'f', 2, DR_FLOAT16}, {'f', 4, DR_FLOAT32}, {'f', 8, DR_FLOAT64},
    };
    char name[40];
    numpy_type_name(kind, size, name, sizeof name);
    for (size_t k = 0; k < sizeof map / sizeof map[0]; ++k) {
        if (map[k].kind != kind || map[k].size != size) continue;
        if (order == '<' || (size == 1 && order != 0)) { /* one byte has no byte order: numpy writes '|i1' */
            *out = map[k].dtype;
            return 0;
        }
        if (order == '>')
            return fail(err, errlen, "dtype '%s' is big-endian: convert with arr.astype('<%c%u')", d, kind, size);
        return fail(err, errlen, "dtype '%s' (%s) does not say its byte order: expected '<%c%u' (little-endian)", d,
                    name, kind, size);
    }
    return fail(err, errlen, "dtype '%s' (%s) is not supported; supported: %s", d, name, supported_text);
}

/* ---- the whole header ------------------------------------------------------------------------------------- */

enum { KEY_DESCR = 0, KEY_FORTRAN, KEY_SHAPE, KEY_COUNT };
static const char *const key_names[KEY_COUNT] = {"descr", "fortran_order", "shape"};

static int parse_dict(cursor_t *c, dr_npy_header_t *h, const unsigned char **descr, size_t *descr_len, shape_t *shape)
{
    int seen[KEY_COUNT] = {0};
    skip_ws(c);
    if (!at(c, '{')) return syntax(c, "'{' (the header is a Python dict literal)");
    ++c->p;
    for (;;) {
        skip_ws(c);
        if (at(c, '}')) break;
        const unsigned char *k;
        size_t kn;
        if (parse_string(c, &k, &kn, "a quoted key or '}'") != 0) return -1;
        int key = -1;
        for (int i = 0; i < KEY_COUNT; ++i)
            if (strlen(key_names[i]) == kn && memcmp(key_names[i], k, kn) == 0) key = i;
        if (key < 0) {
            char q[40];
            quote(q, sizeof q, k, kn, 24);
            return fail(c->err, c->errlen, "corrupt header: unexpected key '%s' (a .npy header has exactly 'descr', "
                                           "'fortran_order' and 'shape')", q);
        }
        if (seen[key]) return fail(c->err, c->errlen, "corrupt header: key '%s' appears twice", key_names[key]);
        seen[key] = 1;
        skip_ws(c);
        if (!at(c, ':')) return syntax(c, "':' after the key");
        ++c->p;
        skip_ws(c);
        switch (key) {
        case KEY_DESCR:
            if (at(c, '[') || at(c, '('))
                return fail(c->err, c->errlen, "structured dtypes (a list of fields in 'descr') are not supported");
            if (parse_string(c, descr, descr_len, "a quoted dtype string for 'descr'") != 0) return -1;
            break;
        case KEY_FORTRAN:
            if (parse_bool(c, &h->fortran_order) != 0) return -1;
            break;
        default:
            if (parse_shape(c, shape) != 0) return -1;
            break;
        }
        skip_ws(c);
        if (at(c, ',')) {
            ++c->p;
            continue;
        }
        if (at(c, '}')) break;
        return syntax(c, "',' or '}' after a value");
    }
    ++c->p;
    skip_ws(c);
    if (c->p != c->end) return syntax(c, "only spaces after the header dict");
    for (int i = 0; i < KEY_COUNT; ++i)
        if (!seen[i]) return fail(c->err, c->errlen, "corrupt header: missing key '%s'", key_names[i]);
    return 0;
}

dr_npy_result_t dr_npy_parse(const void *buf, size_t len, dr_npy_header_t *h, size_t *need, char *err,
                             size_t errlen)
{
    const unsigned char *b = buf;
    if (errlen) err[0] = '\0';
    *need = 0;
    memset(h, 0, sizeof *h);
    const size_t m = len < 6 ? len : 6;
    if (m > 0 && memcmp(b, npy_magic, m) != 0) {
        char got[40] = "";
        for (size_t i = 0; i < m; ++i) {
            const size_t k = strlen(got);
            if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\') snprintf(got + k, sizeof got - k, "%c", b[i]);
            else snprintf(got + k, sizeof got - k, "\\x%02x", b[i]);
        }
        fail(err, errlen, "bad magic: a .npy file starts with \\x93NUMPY, this one with '%s'%s", got,
             m >= 4 && memcmp(b, "PK\x03\x04", 4) == 0 ? " (a zip archive: .npz? extract the array first)" : "");
        return DR_NPY_ERROR;
    }
    if (len < 8) {
        *need = 8;
        return DR_NPY_NEED_MORE;
    }
    h->major = b[6];
    h->minor = b[7];
    if (h->major < 1 || h->major > 3 || h->minor != 0) {
        fail(err, errlen, "unsupported version %d.%d (supported: 1.0, 2.0, 3.0)", h->major, h->minor);
        return DR_NPY_ERROR;
    }
    const size_t len_bytes = h->major == 1 ? 2 : 4;
    if (len < 8 + len_bytes) {
        *need = 8 + len_bytes;
        return DR_NPY_NEED_MORE;
    }
    uint32_t hlen = (uint32_t)b[8] | (uint32_t)b[9] << 8;
    if (len_bytes == 4) hlen |= (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
    if (hlen > DR_NPY_MAX_HEADER) {
        fail(err, errlen, "header length %" PRIu32 " exceeds the 1 MiB limit (a corrupt file?)", hlen);
        return DR_NPY_ERROR;
    }
    const size_t total = 8 + len_bytes + hlen;
    if (len < total) {
        *need = total;
        return DR_NPY_NEED_MORE;
    }

    cursor_t c = {b + 8 + len_bytes, b + 8 + len_bytes, b + total, err, errlen};
    const unsigned char *descr = NULL;
    size_t descr_len = 0;
    shape_t shape;
    memset(&shape, 0, sizeof shape);
    if (parse_dict(&c, h, &descr, &descr_len, &shape) != 0) return DR_NPY_ERROR;
    if (decode_descr(descr, descr_len, &h->dtype, err, errlen) != 0) return DR_NPY_ERROR;
    quote(h->descr, sizeof h->descr, descr, descr_len, sizeof h->descr - 1);
    char t[64];
    shape_text(&c, shape.text, t, sizeof t);
    if (shape.overflow && !shape.has_zero) {
        fail(err, errlen, "shape %s: element count overflows 2^64", t);
        return DR_NPY_ERROR;
    }
    uint64_t bytes, end;
    if (__builtin_mul_overflow(shape.count, (uint64_t)dr_dtype_size(h->dtype), &bytes) ||
        __builtin_add_overflow(bytes, (uint64_t)total, &end)) {
        fail(err, errlen, "shape %s: %" PRIu64 " elements of %zu bytes overflow 2^64 bytes", t, shape.count,
             dr_dtype_size(h->dtype));
        return DR_NPY_ERROR;
    }
    h->count = shape.count;
    h->ndim = shape.ndim;
    h->data_offset = total;
    return DR_NPY_OK;
}

int dr_npy_check_size(const dr_npy_header_t *h, uint64_t file_size, uint64_t *trailing, char *err, size_t errlen)
{
    const uint64_t bytes = h->count * (uint64_t)dr_dtype_size(h->dtype); /* no overflow: dr_npy_parse checked */
    if (h->data_offset > file_size || bytes > file_size - h->data_offset)
        return fail(err, errlen,
                    "truncated: header says %" PRIu64 " elements (%" PRIu64 " bytes) from offset %" PRIu64
                    " but the file has %" PRIu64 " bytes", h->count, bytes, h->data_offset, file_size);
    *trailing = file_size - h->data_offset - bytes;
    return 0;
}

int dr_raw_layout(dr_dtype_t dtype, uint64_t offset, uint64_t file_size, uint64_t *count, char *err, size_t errlen)
{
    const uint64_t size = dr_dtype_size(dtype);
    if (size == 0) return fail(err, errlen, "raw file: invalid element type %d", (int)dtype);
    if (offset > file_size)
        return fail(err, errlen, "%s %" PRIu64 " is past the end of the file (%" PRIu64 " bytes)",
                    DR_NAME("file.offset", "--offset"), offset, file_size);
    const uint64_t rest = file_size - offset, extra = rest % size;
    if (extra != 0) {
        if (offset == 0)
            return fail(err, errlen, "raw file of %" PRIu64 " bytes is not a whole number of %s elements (%" PRIu64
                                     " bytes each): %" PRIu64 " trailing bytes", file_size, dr_dtype_name(dtype),
                        size, extra);
        return fail(err, errlen, "the %" PRIu64 " bytes after %s %" PRIu64 " are not a whole number of %s "
                                 "elements (%" PRIu64 " bytes each): %" PRIu64 " trailing bytes", rest,
                    DR_NAME("file.offset", "--offset"), offset, dr_dtype_name(dtype), size, extra);
    }
    *count = rest / size;
    return 0;
}
