/* MPI test of the --input reader (src/lib/input.c) and of the host reference over file data (dr_reference_add), on the
 * files and answers of make_inputs.py: run under mpiexec with 1..4 ranks.
 *
 *   test_input_read DIR [CALL]   (DIR holds make_inputs.py's files and manifest.txt)
 *
 * With DREDUCE_IO_MAX_BYTES=L in the environment (honoured by src/lib/input.c in this test build), every read of the
 * default limit must take ceil(bytes / L) collective calls at least, and CALL (MPI_File_read_at_all_c, the MPI 4
 * large-count call, or MPI_File_read_at_all) must be the only kind made: the program wraps both through PMPI.
 *
 * For every good file: dr_input_open finds the manifest's type, count and data offset on every rank; each rank's
 * shard, read with dr_input_read (one call, and with the per-call limit lowered to 4099 bytes so every read is cut
 * into many collective calls) and with the stream (several chunk sizes, and an uneven split where ranks make
 * different numbers of reads and some none), equals the file's bytes read here with stdio; the ranks' references
 * (dr_reference_add, fed in two pieces) merged on rank 0 equal the manifest's exact answers. For every bad case:
 * every rank gets the same error status, and exactly one line is printed, by rank 0, naming the file and the
 * problem. Then: a range outside the file on one rank fails on all ranks, and a file truncated after it was opened
 * gives a short read that fails on all ranks (no hang). Prints one line per failure; exit 0 only if all passed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accum.h"
#include "input.h"
#include "reference.h"

static int rank, nranks, failures, checks;

/* The reader's MPI read calls, counted (this program's definitions take the place of the library's; PMPI_ does
 * the work). */
static uint64_t calls_large, calls_int;
#if MPI_VERSION >= 4
int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Status *status)
{
    ++calls_large;
    return PMPI_File_read_at_all_c(fh, offset, buf, count, type, status);
}
#endif
int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
    ++calls_int;
    return PMPI_File_read_at_all(fh, offset, buf, count, type, status);
}
static uint64_t env_limit; /* DREDUCE_IO_MAX_BYTES, 0 if unset */

#define CHECK(cond, ...)                                                                                       \
    do {                                                                                                       \
        ++checks;                                                                                              \
        if (!(cond)) {                                                                                         \
            ++failures;                                                                                        \
            printf("FAIL rank %d %s:%d: %s: ", rank, __FILE__, __LINE__, #cond);                               \
            printf(__VA_ARGS__);                                                                               \
            printf("\n");                                                                                      \
            fflush(stdout);                                                                                    \
        }                                                                                                      \
    } while (0)

static const char *dir;

static void path_of(const char *file, char *out, size_t len)
{
    if (file[0] == '/') snprintf(out, len, "%s", file); /* /dev/zero */
    else snprintf(out, len, "%s/%s", dir, file);
}

/* The file's bytes [off, off + n) with stdio, independently of MPI-IO. */
static int file_bytes(const char *path, uint64_t off, uint64_t n, unsigned char *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int ok = fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(out, 1, n, f) == n;
    fclose(f);
    return ok ? 0 : -1;
}

/* ---- stderr capture: what a call printed on this rank ---- */
static int saved_stderr = -1;
static char capture_path[256];

static void capture_begin(void)
{
    fflush(stderr);
    snprintf(capture_path, sizeof capture_path, "/tmp/test_input_read.%d.%d.err", (int)getpid(), rank);
    FILE *f = fopen(capture_path, "w");
    if (!f) {
        printf("cannot create %s\n", capture_path);
        exit(2);
    }
    saved_stderr = dup(2);
    dup2(fileno(f), 2);
    fclose(f);
}

static void capture_end(char *out, size_t len)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    FILE *f = fopen(capture_path, "r");
    size_t n = f ? fread(out, 1, len - 1, f) : 0;
    out[n] = '\0';
    if (f) fclose(f);
    unlink(capture_path);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; ++s) n += *s == '\n';
    return n;
}

/* Every rank got the same status. */
static int same_everywhere(int v)
{
    int lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

/* ---- expected values ---- */

/* "sum=1.5" or "sum=1.5~0.25" for op `op` into an accumulator value; returns 1 if found. */
static int expected_value(char *const *words, int nwords, const char *op, dr_acc_kind_t acc, dr_value_t *v,
                          double *bound)
{
    const size_t k = strlen(op);
    for (int i = 0; i < nwords; ++i) {
        if (strncmp(words[i], op, k) != 0 || words[i][k] != '=') continue;
        const char *t = words[i] + k + 1;
        char *end;
        memset(v, 0, sizeof *v);
        *bound = -1;
        switch (acc) {
        case DR_ACC_I32: v->i32 = (int32_t)strtoll(t, &end, 10); break;
        case DR_ACC_U32: v->u32 = (uint32_t)strtoull(t, &end, 10); break;
        case DR_ACC_I64: v->i64 = strtoll(t, &end, 10); break;
        case DR_ACC_U64: v->u64 = strtoull(t, &end, 10); break;
        case DR_ACC_F32: v->f32 = strtof(t, &end); break;
        default: v->f64 = strtod(t, &end); break;
        }
        if (*end == '~') *bound = strtod(end + 1, &end);
        return 1;
    }
    return 0;
}

/* Merge every rank's reference on rank 0 and check it against the manifest. */
static void check_reference(const char *file, dr_dtype_t dtype, dr_op_t op, const unsigned char *buf, uint64_t n,
                            uint64_t total, char *const *words, int nwords)
{
    const dr_acc_kind_t acc = dr_acc_select(dtype, op, DR_ACC_WIDE);
    dr_reference_t mine, *all = NULL;
    dr_reference_init(&mine, acc, op);
    const uint64_t half = n / 2; /* two pieces, as chunks arrive */
    dr_reference_add(&mine, dtype, buf, half, 0, 2); /* (indices: for argmin/argmax only, not checked here) */
    dr_reference_add(&mine, dtype, buf + half * dr_dtype_size(dtype), n - half, half, 2);
    if (rank == 0) all = malloc(sizeof *all * (size_t)nranks);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    dr_reference_t ref;
    dr_reference_init(&ref, acc, op);
    for (int r = 0; r < nranks; ++r) dr_reference_merge(&ref, &all[r]);
    free(all);
    CHECK(ref.count == total, "%s %s: the merged reference counts %" PRIu64 " elements, expected %" PRIu64, file,
          dr_op_name(op), ref.count, total);
    dr_value_t want;
    double bound;
    if (!expected_value(words, nwords, dr_op_name(op), acc, &want, &bound)) return;
    dr_check_t chk;
    dr_reference_check(&ref, &want, 1, &chk);
    CHECK(chk.pass, "%s %s: the reference does not accept the expected value: %s", file, dr_op_name(op), chk.detail);
    if (dr_acc_kind_is_float(acc) && op == DR_SUM && isfinite(want.f64)) {
        /* The exact sum itself, not just within the check's bound. */
        const double got = ref.hi + ref.lo;
        if (bound < 0)
            CHECK(ref.hi == want.f64 && ref.lo == 0, "%s sum: reference %.17g + %.3g, expected exactly %.17g", file,
                  ref.hi, ref.lo, want.f64);
        else
            CHECK(fabs(got - want.f64) <= fabs(want.f64) * 0x1p-52, "%s sum: reference %.17g, exact %.17g", file,
                  got, want.f64);
    }
}

/* [first, first + n) of rank r of p, split strongly (as dr_shard) or unevenly (weights (r + 1)^2, so ranks make
 * different numbers of reads and rank 0 often none). */
static void split(uint64_t total, int r, int p, int uneven, uint64_t *first, uint64_t *n)
{
    if (!uneven) {
        const uint64_t q = total / (uint64_t)p, rem = total % (uint64_t)p, ur = (uint64_t)r;
        *first = ur * q + (ur < rem ? ur : rem);
        *n = q + (ur < rem ? 1 : 0);
        return;
    }
    uint64_t w = 0, before = 0;
    for (int i = 0; i < p; ++i) w += (uint64_t)(i + 1) * (uint64_t)(i + 1);
    for (int i = 0; i < r; ++i) before += (uint64_t)(i + 1) * (uint64_t)(i + 1);
    const uint64_t a = r == 0 ? 0 : total * before / w;
    const uint64_t b = r == p - 1 ? total : total * (before + (uint64_t)(r + 1) * (uint64_t)(r + 1)) / w;
    *first = a;
    *n = b - a;
}

static void test_good(char *const *w, int nw)
{
    const char *file = w[1];
    dr_dtype_t dtype;
    if (dr_dtype_parse(w[2], &dtype) != 0) {
        CHECK(0, "manifest: unknown type %s", w[2]);
        return;
    }
    const uint64_t count = strtoull(w[3], NULL, 10), offset = strtoull(w[4], NULL, 10);
    char path[1024];
    path_of(file, path, sizeof path);
    dr_input_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.format = DR_INPUT_AUTO;
    spec.type_given = strcmp(w[5], "-") != 0;
    spec.dtype = dtype;
    spec.offset_given = strcmp(w[6], "-") != 0;
    spec.offset = spec.offset_given ? strtoull(w[6], NULL, 10) : 0;
    spec.op = DR_SUM;
    dr_input_t in;
    char err[4096];
    capture_begin();
    dr_status_t st = dr_input_open(MPI_COMM_WORLD, path, &spec, &in);
    capture_end(err, sizeof err);
    CHECK(st == DR_OK, "%s: open failed with %d: %s", file, st, err);
    if (st != DR_OK) return;
    /* Only a second array after the data gives a warning (rank 0). */
    const int trailing = strstr(file, "then_another") != NULL;
    CHECK(rank == 0 && trailing ? strstr(err, "warning") && strstr(err, file) && count_lines(err) == 1 : err[0] == 0,
          "%s: unexpected messages on open: \"%s\"", file, err);
    CHECK(in.dtype == dtype && in.count == count && in.data_offset == offset && in.elem_size == dr_dtype_size(dtype),
          "%s: opened as %s x %" PRIu64 " at %" PRIu64 ", expected %s x %" PRIu64 " at %" PRIu64, file,
          dr_dtype_name(in.dtype), in.count, in.data_offset, dr_dtype_name(dtype), count, offset);
    const size_t es = dr_dtype_size(dtype);
    for (int uneven = 0; uneven < 2; ++uneven) {
        uint64_t first, n;
        split(count, rank, nranks, uneven, &first, &n);
        unsigned char *want = malloc(n * es + 1), *got = malloc(n * es + 1);
        CHECK(file_bytes(path, offset + first * es, n * es, want) == 0, "%s: stdio read failed", file);
        /* One call, at the default per-call limit and at 4099 bytes (many calls, a limit that is no multiple of
         * the element size). */
        for (int small = 0; small < 2; ++small) {
            if (small && count * es / 4099 > 300) continue; /* keep the number of collective calls small */
            const uint64_t keep = in.max_call_bytes, calls_before = calls_large + calls_int;
            if (small) in.max_call_bytes = 4099;
            memset(got, 0xee, n * es + 1);
            st = dr_input_read(&in, first, n, got);
            in.max_call_bytes = keep;
            const uint64_t made = calls_large + calls_int - calls_before, limit = (env_limit / es) * es;
            CHECK(small || !env_limit || !limit || made >= (n * es + limit - 1) / limit,
                  "%s: %" PRIu64 " bytes in %" PRIu64 " calls with DREDUCE_IO_MAX_BYTES=%" PRIu64, file, n * es, made,
                  env_limit);
            CHECK(st == DR_OK && memcmp(got, want, n * es) == 0 && got[n * es] == 0xee,
                  "%s: dr_input_read [%" PRIu64 ", +%" PRIu64 ") (%s split, %s calls): status %d, %s", file, first, n,
                  uneven ? "uneven" : "even", small ? "4099-byte" : "whole", st,
                  st ? "failed" : memcmp(got, want, n * es) ? "bytes differ" : "wrote past the end");
        }
        /* The stream, in chunks. */
        static const uint64_t chunks[] = {1, 3, 1000, 1u << 20};
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; ++c) {
            if (count / chunks[c] > 300) continue; /* keep the number of collective calls small */
            dr_input_stream_t s;
            st = dr_input_stream_begin(&in, first, n, chunks[c], &s);
            CHECK(st == DR_OK, "%s: stream_begin failed: %d", file, st);
            if (st != DR_OK) continue;
            unsigned char *chunk = malloc(chunks[c] * es);
            uint64_t pos = 0, calls = 0;
            int done = 0, order_ok = 1;
            while (!done && st == DR_OK) {
                uint64_t g = 0;
                memset(chunk, 0xee, chunks[c] * es);
                st = dr_input_stream_next(&s, chunk, &g, &done);
                ++calls;
                if (g > chunks[c] || pos + g > n || (g && memcmp(chunk, want + pos * es, g * es) != 0)) order_ok = 0;
                if (done && g) order_ok = 0; /* the final call reads nothing */
                pos += g;
            }
            free(chunk);
            CHECK(st == DR_OK && done && pos == n && order_ok,
                  "%s: stream in chunks of %" PRIu64 " (%s split): status %d, %" PRIu64 " of %" PRIu64 " elements, "
                  "%s", file, chunks[c], uneven ? "uneven" : "even", st, pos, n,
                  order_ok ? "in order" : "wrong bytes");
            uint64_t lo, hi;
            MPI_Allreduce(&calls, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(&calls, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
            CHECK(lo == hi, "%s: ranks made %" PRIu64 " to %" PRIu64 " stream calls", file, lo, hi);
        }
        if (!uneven) {
            const int is_int = !dr_dtype_is_float(dtype);
            static const dr_op_t ops[] = {DR_SUM, DR_MIN, DR_MAX, DR_BXOR};
            for (int k = 0; k < (is_int ? 4 : 3); ++k) check_reference(file, dtype, ops[k], want, n, count, w, nw);
        }
        free(want);
        free(got);
    }
    dr_input_close(&in);
    CHECK(in.is_open == 0, "%s: still open after close", file);
    dr_input_close(&in); /* twice: harmless */
}

static void test_bad(char *const *w, int nw)
{
    const char *file = w[1];
    char path[1024], msg[2048] = "";
    path_of(file, path, sizeof path);
    for (int i = 5; i < nw; ++i) {
        strncat(msg, i > 5 ? " " : "", sizeof msg - strlen(msg) - 1);
        strncat(msg, w[i], sizeof msg - strlen(msg) - 1);
    }
    dr_input_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.type_given = strcmp(w[2], "-") != 0;
    if (spec.type_given && dr_dtype_parse(w[2], &spec.dtype) != 0) CHECK(0, "manifest: bad type %s", w[2]);
    spec.offset_given = strcmp(w[3], "-") != 0;
    spec.offset = spec.offset_given ? strtoull(w[3], NULL, 10) : 0;
    if (dr_op_parse(w[4], &spec.op) != 0) CHECK(0, "manifest: bad op %s", w[4]);
    dr_input_t in;
    char err[4096];
    capture_begin();
    const dr_status_t st = dr_input_open(MPI_COMM_WORLD, path, &spec, &in);
    capture_end(err, sizeof err);
    CHECK(st == DR_ERR_USAGE, "%s: expected DR_ERR_USAGE, got %d", file, st);
    CHECK(same_everywhere((int)st), "%s: ranks returned different statuses", file);
    CHECK(in.is_open == 0, "%s: open after a failure", file);
    if (rank == 0)
        CHECK(count_lines(err) == 1 && strstr(err, "dreduce: error:") && strstr(err, path) && strstr(err, msg),
              "%s: expected one line naming the file and \"%s\", got \"%s\"", file, msg, err);
    else
        CHECK(err[0] == '\0', "%s: rank %d printed \"%s\"", file, rank, err);
    dr_input_close(&in);
}

/* A range past the file's end on the last rank only: every rank fails, and no collective call is left waiting. */
static void test_bad_range(void)
{
    char path[1024];
    path_of("uint32_v3_1021.npy", path, sizeof path);
    dr_input_spec_t spec;
    memset(&spec, 0, sizeof spec);
    dr_input_t in;
    if (dr_input_open(MPI_COMM_WORLD, path, &spec, &in) != DR_OK) {
        CHECK(0, "cannot open %s", path);
        return;
    }
    unsigned char buf[64];
    char err[4096];
    capture_begin();
    const dr_status_t st = dr_input_read(&in, rank == nranks - 1 ? 1020 : 0, rank == nranks - 1 ? 2 : 3, buf);
    capture_end(err, sizeof err);
    CHECK(st == DR_ERR_RUNTIME && same_everywhere((int)st), "a range past the end: status %d", st);
    CHECK(rank == nranks - 1 ? strstr(err, "cannot read elements [1020, 1020 + 2) of 1021") != NULL : err[0] == 0,
          "a range past the end: message \"%s\"", err);
    /* The reader still works afterwards. */
    CHECK(dr_input_read(&in, 0, 3, buf) == DR_OK, "a read after a refused one failed");
    dr_input_close(&in);
}

/* The file shrinks after dr_input_open (mid_stream 0), or between two reads of a stream (1): the ranks whose range
 * is gone get a short read; all ranks fail. */
static void test_short_read(int mid_stream)
{
    char src[1024], copy[1024];
    path_of("int64_v1_65537.npy", src, sizeof src);
    snprintf(copy, sizeof copy, "%s/shrinking.%d.npy", dir, (int)getpid());
    if (rank == 0) { /* a fresh copy */
        FILE *in = fopen(src, "rb"), *out = fopen(copy, "wb");
        char b[65536];
        size_t n;
        while (in && out && (n = fread(b, 1, sizeof b, in)) > 0) fwrite(b, 1, n, out);
        if (in) fclose(in);
        if (out) fclose(out);
    }
    MPI_Bcast(copy, (int)sizeof copy, MPI_CHAR, 0, MPI_COMM_WORLD);
    dr_input_spec_t spec;
    memset(&spec, 0, sizeof spec);
    dr_input_t in;
    if (dr_input_open(MPI_COMM_WORLD, copy, &spec, &in) != DR_OK) {
        CHECK(0, "cannot open %s", copy);
        return;
    }
    uint64_t first, n;
    split(in.count, rank, nranks, 0, &first, &n);
    unsigned char *buf = malloc(n * 8 + 1);
    char err[4096];
    dr_status_t st = DR_OK;
    in.max_call_bytes = 8192; /* several calls: a failure part-way must still keep the calls matched */
    if (!mid_stream) {
        if (rank == 0) CHECK(truncate(copy, 128 + 8 * 1000) == 0, "truncate %s: %s", copy, strerror(errno));
        MPI_Barrier(MPI_COMM_WORLD);
        capture_begin();
        st = dr_input_read(&in, first, n, buf);
        capture_end(err, sizeof err);
    } else {
        dr_input_stream_t s;
        uint64_t got;
        int done = 0, calls = 0;
        capture_begin();
        st = dr_input_stream_begin(&in, first, n, 500, &s);
        while (st == DR_OK && !done) {
            st = dr_input_stream_next(&s, buf, &got, &done);
            if (++calls == 1) { /* after the first read on every rank */
                MPI_Barrier(MPI_COMM_WORLD);
                if (rank == 0 && truncate(copy, 128 + 8 * 1000) != 0) st = DR_ERR_USAGE;
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
        capture_end(err, sizeof err);
    }
    CHECK(st == DR_ERR_RUNTIME && same_everywhere((int)st), "a file shrunk after opening (%s): status %d",
          mid_stream ? "mid-stream" : "before reading", st);
    if (first + n > 1000)
        CHECK(strstr(err, "short read") && strstr(err, copy) && count_lines(err) == 1,
              "short read: expected one line naming the file, got \"%s\"", err);
    free(buf);
    dr_input_close(&in);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(copy);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dr_log_use_option_names(1); /* the manifest holds the messages as the program prints them (--offset) */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    dr_log_set_rank(rank, nranks, "test");
    if (argc != 2 && argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: test_input_read DIR [CALL] (DIR: the output of make_inputs.py)\n");
        MPI_Finalize();
        return 2;
    }
    dir = argv[1];
    const char *limit_text = getenv("DREDUCE_IO_MAX_BYTES");
    env_limit = limit_text ? strtoull(limit_text, NULL, 10) : 0;
    char manifest[1024], line[4096];
    path_of("manifest.txt", manifest, sizeof manifest);
    FILE *f = fopen(manifest, "r");
    if (!f) {
        printf("rank %d: cannot open %s: %s\n", rank, manifest, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int ngood = 0, nbad = 0;
    while (fgets(line, sizeof line, f)) {
        char *words[64];
        int nw = 0;
        for (char *t = strtok(line, " \n"); t && nw < 64; t = strtok(NULL, " \n")) words[nw++] = t;
        if (nw >= 7 && strcmp(words[0], "good") == 0) {
            test_good(words, nw);
            ++ngood;
        } else if (nw >= 6 && strcmp(words[0], "bad") == 0) {
            test_bad(words, nw);
            ++nbad;
        }
    }
    fclose(f);
    test_bad_range();
    test_short_read(0);
    test_short_read(1);
    if (rank == 0)
        printf("reads: per-call limit %" PRIu64 " bytes: %" PRIu64 " calls of MPI_File_read_at_all_c, %" PRIu64
               " of MPI_File_read_at_all (rank 0)\n", env_limit, calls_large, calls_int);
    if (argc == 3) {
        const int want_large = strcmp(argv[2], "MPI_File_read_at_all_c") == 0;
        CHECK(want_large ? calls_large > 0 && calls_int == 0 : calls_int > 0 && calls_large == 0,
              "expected only %s calls: %" PRIu64 " large-count, %" PRIu64 " int-count", argv[2], calls_large,
              calls_int);
    }
    int all_failures = 0;
    MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_input_read: %d ranks, %d good files, %d bad cases, %d checks on rank 0, %d failed: %s\n", nranks,
               ngood, nbad, checks, all_failures, all_failures ? "FAIL" : "PASS");
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
