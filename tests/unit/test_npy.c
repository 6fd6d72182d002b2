/* Unit test of src/lib/npy.c: the .npy header parser (versions 1.0, 2.0, 3.0; every supported dtype; shapes, key
 * orders, quotes, numpy's exact output), its "need more bytes" answers for every prefix, every kind of bad header
 * with the message it must give, the size check against the file, and the raw file layout. */
#include "check.h"
#include "npy.h"

/* A .npy prefix: magic, version major.0, the length field and the dict text, padded numpy's way (spaces to a
 * multiple of 64 bytes in all, then '\n') when pad is set. Returns the length; `tail` extra bytes of data follow. */
static size_t make_npy(unsigned char *out, size_t cap, int major, const char *dict, int pad, size_t tail)
{
    const size_t pre = major == 1 ? 10 : 12;
    size_t hlen = strlen(dict);
    if (pad) hlen = ((pre + hlen + 1 + 63) / 64) * 64 - pre;
    if (pre + hlen + tail > cap) {
        printf("make_npy: buffer too small\n");
        exit(2);
    }
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8 & 0xff);
    if (major != 1) {
        out[10] = (unsigned char)(hlen >> 16 & 0xff);
        out[11] = (unsigned char)(hlen >> 24 & 0xff);
    }
    memcpy(out + pre, dict, strlen(dict));
    if (pad) {
        memset(out + pre + strlen(dict), ' ', hlen - strlen(dict));
        out[pre + hlen - 1] = '\n';
    }
    memset(out + pre + hlen, 0xab, tail);
    return pre + hlen + tail;
}

static unsigned char buf[1 << 18];

static dr_npy_result_t parse(const unsigned char *b, size_t n, dr_npy_header_t *h, size_t *need, char *err,
                             size_t errlen)
{
    return dr_npy_parse(b, n, h, need, err, errlen);
}

/* A good header: the parse must give dtype, count, fortran order and a data offset equal to the prefix length. */
static void expect_good(int major, const char *dict, int pad, dr_dtype_t dtype, uint64_t count, int fortran)
{
    const size_t n = make_npy(buf, sizeof buf, major, dict, pad, 0);
    dr_npy_header_t h;
    size_t need = 0;
    char err[256];
    dr_npy_result_t r = parse(buf, n, &h, &need, err, sizeof err);
    CHECK(r == DR_NPY_OK, "v%d %s: expected OK, got %d (%s)", major, dict, r, err);
    if (r != DR_NPY_OK) return;
    CHECK(h.dtype == dtype, "v%d %s: dtype %s, expected %s", major, dict, dr_dtype_name(h.dtype),
          dr_dtype_name(dtype));
    CHECK(h.count == count, "v%d %s: count %" PRIu64 ", expected %" PRIu64, major, dict, h.count, count);
    CHECK(h.fortran_order == fortran, "v%d %s: fortran_order %d, expected %d", major, dict, h.fortran_order, fortran);
    CHECK(h.data_offset == n, "v%d %s: data_offset %" PRIu64 ", expected %zu", major, dict, h.data_offset, n);
    CHECK(h.major == major && h.minor == 0, "v%d %s: version %d.%d", major, dict, h.major, h.minor);
    /* Bytes after the header change nothing. */
    const size_t n2 = make_npy(buf, sizeof buf, major, dict, pad, 100);
    dr_npy_header_t h2;
    r = parse(buf, n2, &h2, &need, err, sizeof err);
    CHECK(r == DR_NPY_OK && memcmp(&h, &h2, sizeof h) == 0, "v%d %s: data after the header changed the parse",
          major, dict);
    /* Every shorter prefix asks for more, and for exactly what the next step needs. */
    const size_t pre = major == 1 ? 10 : 12;
    for (size_t k = 0; k < n; ++k) {
        r = parse(k ? buf : NULL, k, &h2, &need, err, sizeof err);
        const size_t want = k < 8 ? 8 : k < pre ? pre : n;
        CHECK(r == DR_NPY_NEED_MORE && need == want, "v%d %s: prefix of %zu bytes: expected NEED_MORE %zu, got %d "
              "need %zu (%s)", major, dict, k, want, r, need, err);
    }
}

/* A bad header: DR_NPY_ERROR with one line containing `want`, and the same line cut short in small buffers. */
static void expect_bad_bytes(const unsigned char *b, size_t n, const char *what, const char *want)
{
    dr_npy_header_t h;
    size_t need = 0;
    char err[512];
    dr_npy_result_t r = parse(b, n, &h, &need, err, sizeof err);
    CHECK(r == DR_NPY_ERROR, "%s: expected an error containing \"%s\", got %d (need %zu)", what, want, r, need);
    if (r != DR_NPY_ERROR) return;
    CHECK(strstr(err, want) != NULL, "%s: message \"%s\" should contain \"%s\"", what, err, want);
    CHECK(err[0] && !strchr(err, '\n'), "%s: message must be one non-empty line: \"%s\"", what, err);
    for (const char *p = err; *p; ++p)
        CHECK((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f, "%s: non-printable byte in \"%s\"", what, err);
    for (size_t small = 1; small < 12; ++small) {
        char cut[12];
        memset(cut, 'x', sizeof cut);
        r = parse(b, n, &h, &need, cut, small);
        CHECK(r == DR_NPY_ERROR && strlen(cut) == small - 1 && strncmp(cut, err, small - 1) == 0,
              "%s: message in a %zu-byte buffer: \"%.*s\"", what, small, (int)small, cut);
    }
    r = parse(b, n, &h, &need, NULL, 0);
    CHECK(r == DR_NPY_ERROR, "%s: error with no message buffer: got %d", what, r);
}

static void expect_bad(int major, const char *dict, const char *want)
{
    const size_t n = make_npy(buf, sizeof buf, major, dict, 1, 16);
    char what[600];
    snprintf(what, sizeof what, "v%d %s", major, dict);
    expect_bad_bytes(buf, n, what, want);
}

static void test_good(void)
{
    static const struct {
        const char *descr;
        dr_dtype_t dtype;
    } types[] = {{"<i4", DR_INT32},   {"<i8", DR_INT64},   {"<u4", DR_UINT32}, {"<u8", DR_UINT64},
                 {"<f2", DR_FLOAT16}, {"<f4", DR_FLOAT32}, {"<f8", DR_FLOAT64}, {"|i1", DR_INT8},
                 {"|u1", DR_UINT8},   {"|b1", DR_UINT8},   {"<i1", DR_INT8},   {">u1", DR_UINT8},
                 {"<i2", DR_INT16},   {"<u2", DR_UINT16}};
    char dict[512];
    for (int major = 1; major <= 3; ++major)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
            /* numpy's own form */
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (1000003,), }",
                     types[t].descr);
            expect_good(major, dict, 1, types[t].dtype, 1000003, 0);
            snprintf(dict, sizeof dict, "{\"shape\": (2, 3, 4), \"descr\": \"%s\", \"fortran_order\": True}",
                     types[t].descr);
            expect_good(major, dict, 0, types[t].dtype, 24, 1);
        }
    /* Shapes. */
    static const struct {
        const char *shape;
        uint64_t count;
        int ndim;
    } shapes[] = {
        {"()", 1, 0},           {"(0,)", 0, 1},        {"(5,)", 5, 1},           {"(2, 3, 4)", 24, 3},
        {"(2,3,4,)", 24, 3},    {"( 7 , )", 7, 1},     {"(3, 0, 5)", 0, 3},      {"(1, 1, 1, 1, 1, 1, 1, 1)", 1, 8},
        {"(10L,)", 10, 1},      {"(2L, 3L)", 6, 2},    {"(65536, 65536, 3)", 12884901888ull, 3},
        {"(99999999999999999999999, 0)", 0, 2}, /* a zero makes 0 elements, whatever the others */
        {"(\n3,\t4\n)", 12, 2},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        snprintf(dict, sizeof dict, "{'descr': '<i4', 'fortran_order': False, 'shape': %s, }", shapes[i].shape);
        expect_good(1, dict, 1, DR_INT32, shapes[i].count, 0);
        dr_npy_header_t h;
        size_t need;
        char err[256];
        const size_t n = make_npy(buf, sizeof buf, 1, dict, 1, 0);
        if (parse(buf, n, &h, &need, err, sizeof err) == DR_NPY_OK)
            CHECK(h.ndim == shapes[i].ndim, "shape %s: ndim %d, expected %d", shapes[i].shape, h.ndim,
                  shapes[i].ndim);
    }
    /* Key orders: all six, with either quote. */
    static const char *const entries[3] = {"'descr': '<f8'", "'fortran_order': True", "'shape': (6,)"};
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int p = 0; p < 6; ++p) {
        snprintf(dict, sizeof dict, "{%s, %s, %s}", entries[perms[p][0]], entries[perms[p][1]], entries[perms[p][2]]);
        expect_good(2, dict, 1, DR_FLOAT64, 6, 1);
        for (char *c = dict; *c; ++c)
            if (*c == '\'') *c = '"';
        expect_good(3, dict, 0, DR_FLOAT64, 6, 1);
    }
    /* Mixed quotes, no spaces, a trailing comma, whitespace everywhere, CR LF. */
    expect_good(1, "{'descr':\"<u8\",\"fortran_order\":False,'shape':(9,)}", 0, DR_UINT64, 9, 0);
    expect_good(1, " \t{ 'descr' : '<u4' ,\n 'fortran_order' : False ,\r\n 'shape' : ( 3 , 2 ) , } \r\n", 0,
                DR_UINT32, 6, 0);
    expect_good(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (), }", 1, DR_FLOAT16, 1, 0);
    /* The exact bytes numpy 1.26 writes for np.save(f, np.arange(3.0)): 128 bytes of header in all. */
    {
        static const char npy[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"
                                  "                                                            \n";
        dr_npy_header_t h;
        size_t need;
        char err[256];
        CHECK(sizeof npy - 1 == 128, "numpy sample: %zu bytes, expected 128", sizeof npy - 1);
        dr_npy_result_t r = parse((const unsigned char *)npy, sizeof npy - 1, &h, &need, err, sizeof err);
        CHECK(r == DR_NPY_OK && h.dtype == DR_FLOAT64 && h.count == 3 && h.data_offset == 128 && !h.fortran_order &&
                  strcmp(h.descr, "<f8") == 0 && h.ndim == 1,
              "numpy sample: got r=%d dtype %s count %" PRIu64 " offset %" PRIu64 " descr '%s' (%s)", r,
              dr_dtype_name(h.dtype), h.count, h.data_offset, h.descr, err);
    }
    /* A long header (v2 length field above 65535), still under the limit. */
    {
        static char big[100000];
        const char *d = "{'descr': '<i8', 'fortran_order': False, 'shape': (4,)";
        size_t k = (size_t)snprintf(big, sizeof big, "%s", d);
        memset(big + k, ' ', 70000);
        snprintf(big + k + 70000, sizeof big - k - 70000, "}\n");
        expect_good(2, big, 0, DR_INT64, 4, 0);
    }
}

static void test_bad(void)
{
    /* Magic and version. */
    expect_bad_bytes((const unsigned char *)"\x93NUMPX\x01\x00", 8, "magic NUMPX", "bad magic");
    expect_bad_bytes((const unsigned char *)"NUMPY", 5, "no \\x93", "bad magic");
    expect_bad_bytes((const unsigned char *)"x", 1, "one bad byte", "bad magic");
    expect_bad_bytes((const unsigned char *)"PK\x03\x04\x14\x00\x00\x00", 8, "npz", "zip archive");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x04\x00\x10\x00\x00\x00", 12, "v4.0",
                     "unsupported version 4.0");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x01\x01\x10\x00", 10, "v1.1", "unsupported version 1.1");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x00\x00\x10\x00", 10, "v0.0", "unsupported version 0.0");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x02\x00\x80\x1d\x2c\x04", 12, "length 70000000",
                     "header length 70000000 exceeds the 1 MiB limit");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x03\x00\x01\x00\x10\x00", 12, "length 1 MiB + 1",
                     "header length 1048577 exceeds");
    /* dtypes. */
    static const struct {
        const char *descr, *want;
    } dtypes[] = {
        {">f4", "dtype '>f4' is big-endian: convert with arr.astype('<f4')"},
        {">i8", "dtype '>i8' is big-endian: convert with arr.astype('<i8')"},
        {">f2", "is big-endian: convert with arr.astype('<f2')"},
        {"<c8", "dtype '<c8' (complex64) is not supported; supported: '|i1' (int8)"},
        {"<c16", "dtype '<c16' (complex128) is not supported"},
        {">c8", "(complex64) is not supported"},
        {"|O", "object arrays ('|O') are not supported"},
        {"|O8", "object arrays ('|O8') are not supported"},
        {">i2", "dtype '>i2' is big-endian: convert with arr.astype('<i2')"},
        {"i1", "does not say its byte order: expected '<i1'"},
        {"<b2", "(bool) is not supported"},
        {"<i16", "(int128) is not supported"},
        {"<f16", "(float128) is not supported"},
        {"<f12", "(float96) is not supported"},
        {"<U5", "(str) is not supported"},
        {"|S3", "(bytes) is not supported"},
        {"|V8", "(void: raw or structured records) is not supported"},
        {"<M8[ns]", "(datetime64) is not supported"},
        {"<m8[s]", "(timedelta64) is not supported"},
        {"f4", "does not say its byte order: expected '<f4'"},
        {"=f4", "does not say its byte order"},
        {"|f8", "does not say its byte order"},
        {"", "dtype '' is not a numpy type string"},
        {"<", "is not a numpy type string"},
        {"<4", "is not a numpy type string"},
        {"<f", "is not a numpy type string"},
        {"<f4x", "is not a numpy type string"},
        {"<f4[ns]", "is not a numpy type string"},
        {"<i04", "dtype '<i04' is not a numpy type string"}, /* found by fuzz_npy: once read as '<i4' */
        {"<u0", "is not a numpy type string"},
        {"float32", "is not a numpy type string"},
        {"<x4", "(unknown kind 'x') is not supported"},
    };
    char dict[512], want[512];
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; ++i) {
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", dtypes[i].descr);
        expect_bad(1, dict, dtypes[i].want);
    }
    expect_bad(1, "{'descr': [('a', '<i4'), ('b', '<f8')], 'fortran_order': False, 'shape': (3,), }",
               "structured dtypes");
    expect_bad(1, "{'descr': 5, 'fortran_order': False, 'shape': (3,), }", "a quoted dtype string for 'descr'");
    /* Shapes. */
    static const char *const bad_shapes[] = {"(3, -1)", "(-1,)", "(1.5,)", "None", "[5]", "(5,,)", "(,)", "(05,)",
                                             "(0x10,)", "(1_000,)", "(5e3,)", "(3 4)", "(a,)", "(", "(3,", "3",
                                             "(+3,)", "(3L5,)"};
    for (size_t i = 0; i < sizeof bad_shapes / sizeof bad_shapes[0]; ++i) {
        snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s }", bad_shapes[i]);
        snprintf(want, sizeof want, "is not a tuple of non-negative integers");
        expect_bad(1, dict, want);
    }
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -1), }",
               "shape (3, -1) is not a tuple of non-negative integers");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5), }", "shape (5) is not a tuple");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
               "element count overflows 2^64");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
               "element count overflows 2^64");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }",
               "elements of 8 bytes overflow 2^64 bytes");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615,), }",
               "overflow 2^64 bytes");
    /* Keys. */
    expect_bad(1, "{'fortran_order': False, 'shape': (3,), }", "missing key 'descr'");
    expect_bad(1, "{'descr': '<f4', 'shape': (3,), }", "missing key 'fortran_order'");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, }", "missing key 'shape'");
    expect_bad(1, "{}", "missing key 'descr'");
    expect_bad(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
               "key 'descr' appears twice");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}", "unexpected key 'extra'");
    expect_bad(1, "{'Descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "unexpected key 'Descr'");
    expect_bad(1, "{descr: '<f4', 'fortran_order': False, 'shape': (3,), }", "expected a quoted key");
    /* Values and syntax. */
    expect_bad(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }",
               "'fortran_order' is '0', expected True or False");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': true, 'shape': (3,), }", "expected True or False");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,), }", "expected True or False");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False 'shape': (3,), }", "',' or '}' after a value");
    expect_bad(1, "{'descr' '<f4', 'fortran_order': False, 'shape': (3,), }", "':' after the key");
    expect_bad(1, "{'descr': '<f4, 'fortran_order': False, 'shape': (3,), }", "',' or '}' after a value");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", "',' or '}' after a value");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x", "only spaces after the header dict");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }}", "only spaces after the header dict");
    expect_bad(1, "('descr', '<f4')", "expected '{'");
    expect_bad(1, "", "expected '{'");
    expect_bad(1, "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,), }", "escape sequence");
    expect_bad(1, "{'descr': '<f4\n', 'fortran_order': False, 'shape': (3,), }", "unterminated string");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x", "unterminated string");
    /* Bytes that are not printable are quoted as '?'. */
    expect_bad(1, "{'descr': '<\x01\xff', 'fortran_order': False, 'shape': (3,), }", "dtype '<?" "?' is not");
    {
        static const unsigned char nul[] = "\x93NUMPY\x01\x00\x0a\x00{'descr'\x00}";
        expect_bad_bytes(nul, sizeof nul - 1, "NUL in header", "expected ':' after the key");
    }
    /* The header length points past the end of a short buffer: need more, not an error. */
    {
        static const unsigned char b[] = "\x93NUMPY\x01\x00\xff\xff{";
        dr_npy_header_t h;
        size_t need;
        char err[128];
        dr_npy_result_t r = parse(b, sizeof b - 1, &h, &need, err, sizeof err);
        CHECK(r == DR_NPY_NEED_MORE && need == 10 + 65535, "length 65535: expected NEED_MORE 65545, got %d %zu", r,
              need);
        static const unsigned char b2[] = "\x93NUMPY\x02\x00\x00\x00\x10\x00";
        r = parse(b2, sizeof b2 - 1, &h, &need, err, sizeof err);
        CHECK(r == DR_NPY_NEED_MORE && need == 12 + (1u << 20) && need <= DR_NPY_MAX_PREFIX,
              "length 1 MiB: expected NEED_MORE %u, got %d %zu", 12 + (1u << 20), r, need);
    }
}

static void test_sizes(void)
{
    const size_t n = make_npy(buf, sizeof buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }", 1, 0);
    dr_npy_header_t h;
    size_t need;
    char err[256];
    CHECK(parse(buf, n, &h, &need, err, sizeof err) == DR_NPY_OK, "size test header: %s", err);
    uint64_t trailing = 99;
    CHECK(dr_npy_check_size(&h, 128 + 80, &trailing, err, sizeof err) == 0 && trailing == 0,
          "exact size: expected OK, 0 trailing; got %s, %" PRIu64, err, trailing);
    CHECK(dr_npy_check_size(&h, 128 + 85, &trailing, err, sizeof err) == 0 && trailing == 5,
          "5 extra bytes: expected OK, 5 trailing; got %s, %" PRIu64, err, trailing);
    CHECK(dr_npy_check_size(&h, 128 + 79, &trailing, err, sizeof err) != 0 &&
              strstr(err, "truncated: header says 10 elements (80 bytes) from offset 128 but the file has 207 bytes"),
          "1 byte short: got \"%s\"", err);
    CHECK(dr_npy_check_size(&h, 100, &trailing, err, sizeof err) != 0 && strstr(err, "the file has 100 bytes"),
          "shorter than the header: got \"%s\"", err);
    CHECK(dr_npy_check_size(&h, 0, &trailing, err, sizeof err) != 0 && strstr(err, "truncated"),
          "empty file: got \"%s\"", err);

    /* Raw layouts. */
    uint64_t count = 0;
    CHECK(dr_raw_layout(DR_FLOAT32, 0, 400, &count, err, sizeof err) == 0 && count == 100, "raw 400 B float32: %s",
          err);
    CHECK(dr_raw_layout(DR_FLOAT64, 16, 816, &count, err, sizeof err) == 0 && count == 100, "raw offset 16: %s", err);
    CHECK(dr_raw_layout(DR_INT32, 400, 400, &count, err, sizeof err) == 0 && count == 0, "offset at the end: %s",
          err);
    CHECK(dr_raw_layout(DR_FLOAT16, 0, 0, &count, err, sizeof err) == 0 && count == 0, "empty raw file: %s", err);
    CHECK(dr_raw_layout(DR_INT32, 401, 400, &count, err, sizeof err) != 0 &&
              strstr(err, "file.offset 401 is past the end of the file (400 bytes)"),
          "offset past the end: got \"%s\"", err);
    CHECK(dr_raw_layout(DR_INT64, 0, 403, &count, err, sizeof err) != 0 &&
              strstr(err, "raw file of 403 bytes is not a whole number of int64 elements (8 bytes each): 3 trailing "
                          "bytes"),
          "403 bytes of int64: got \"%s\"", err);
    CHECK(dr_raw_layout(DR_UINT32, 2, 403, &count, err, sizeof err) != 0 &&
              strstr(err, "the 401 bytes after file.offset 2 are not a whole number of uint32 elements (4 bytes each): "
                          "1 trailing bytes"),
          "401 bytes of uint32 after offset 2: got \"%s\"", err);
    CHECK(dr_raw_layout(DR_BFLOAT16, 1, UINT64_MAX, &count, err, sizeof err) == 0 && count == (UINT64_MAX - 1) / 2,
          "bfloat16 up to 2^64 - 1 bytes: %s", err);
    CHECK(strstr(dr_npy_supported(), "'<f2' (float16)") != NULL, "supported list: %s", dr_npy_supported());
}

int main(void)
{
    test_good();
    test_bad();
    test_sizes();
    return check_summary("test_npy");
}
