/* libdreduce under misuse (issue 21; docs/reliability.md, "Library misuse"): one case per run, named on the command
 * line, each a mistake a new user might make. Every rank checks the status it got (and *out, and the context
 * pointer) against what the contract in include/dreduce.h promises; the verdicts are summed over MPI_COMM_WORLD and
 * the process exits 0 when every rank got what it should. The messages (one line, naming the argument or field)
 * and the "no hang" part are checked by tests/lib/misuse.py, which runs this under mpiexec with a time limit.
 * Usage: test_misuse CASE [--gpu]    (--gpu: contexts on GPUs; exit 77 where a rank sees none)
 *        test_misuse --list */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dreduce.h"

static int rank, nranks, failures, use_gpu;

#define EXPECT(cond, ...)                                                                                      \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            ++failures;                                                                                        \
            fprintf(stderr, "FAIL (rank %d, %s:%d): ", rank, __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fputc('\n', stderr);                                                                               \
        }                                                                                                      \
    } while (0)

#define EXPECT_STATUS(call, want)                                                                              \
    do {                                                                                                       \
        const dr_status_t got_ = (call);                                                                       \
        EXPECT(got_ == (want), "%s returned %d, expected %d", #call, (int)got_, (int)(want));                  \
    } while (0)

static void nap(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
}

static dreduce_config_t config(void)
{
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = use_gpu ? DR_DEVICE_GPU : DR_DEVICE_CPU;
    cfg.share_gpus = 1;
    cfg.cpu_threads = 1;
    cfg.timeout = 60; /* a hang ends the process (the harness's own limit is the backstop) */
    return cfg;
}

static dreduce_context_t *create_ok(const dreduce_config_t *cfg)
{
    dreduce_context_t *ctx = NULL;
    const dr_status_t s = dreduce_create(MPI_COMM_WORLD, cfg, &ctx);
    if (s != DR_OK || !ctx) {
        fprintf(stderr, "FAIL (rank %d): dreduce_create returned %d on a good configuration\n", rank, (int)s);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return ctx;
}

/* The buffer of a call: host memory, or a copy in the context's GPU memory. */
static const void *place(dreduce_context_t *ctx, const void *host, size_t bytes)
{
    if (!host || dreduce_gpu(ctx) < 0 || bytes == 0) return host;
    void *d = NULL;
    if (cudaMalloc(&d, bytes) != cudaSuccess || cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "FAIL (rank %d): cudaMalloc/cudaMemcpy of %zu bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return d;
}

static void unplace(dreduce_context_t *ctx, const void *host, const void *buf)
{
    if (buf && buf != host && dreduce_gpu(ctx) >= 0) cudaFree((void *)buf);
}

static dr_status_t reduce(dreduce_context_t *ctx, const void *host, uint64_t count, dr_dtype_t t, dr_op_t op,
                          dreduce_result_t *out)
{
    const size_t esize = (unsigned)t < DR_DTYPE_COUNT ? dreduce_dtype_size(t) : 1;
    const void *buf = place(ctx, host, (size_t)count * esize);
    const dr_status_t s = dreduce_reduce(ctx, buf, count, t, op, out);
    unplace(ctx, host, buf);
    return s;
}

/* A good call after a misused one: int64 sum of (rank + 1) over every rank, checked where valid. */
static void good_call(dreduce_context_t *ctx, int allreduce)
{
    int64_t x = rank + 1;
    dreduce_result_t r;
    EXPECT_STATUS(reduce(ctx, &x, 1, DR_INT64, DR_SUM, &r), DR_OK);
    const int64_t want = (int64_t)nranks * (nranks + 1) / 2;
    EXPECT(r.valid == (rank == 0 || allreduce), "valid %d after a good call", r.valid);
    if (r.valid) EXPECT(r.value.i64 == want, "the good call after a misused one gave %lld, not %lld",
                        (long long)r.value.i64, (long long)want);
}

/* ---- dreduce_create ------------------------------------------------------------------------------------------- */

/* One rank's configuration is bad (or missing): every rank returns DR_ERR_USAGE, none waits for the others. */
static void create_expect(const dreduce_config_t *cfg, int null_out, dr_status_t want)
{
    dreduce_context_t *ctx = (dreduce_context_t *)&ctx; /* not NULL: create must clear it */
    EXPECT_STATUS(dreduce_create(MPI_COMM_WORLD, cfg, null_out ? NULL : &ctx), want);
    if (!null_out) EXPECT(want == DR_OK ? ctx != NULL : ctx == NULL, "*out is %p after status %d", (void *)ctx, want);
    if (want == DR_OK && !null_out) dreduce_destroy(ctx);
}

static void case_create_bad_block(void)
{
    dreduce_config_t cfg = config();
    if (rank == 1) cfg.block = 33;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_chunk_zero(void)
{
    dreduce_config_t cfg = config();
    if (rank == nranks - 1) cfg.chunk_bytes = 0;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_nan_timeout(void)
{
    dreduce_config_t cfg = config();
    cfg.timeout = rank == 1 ? NAN : 2; /* the others' own timeout must not be what ends them */
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_bad_enum(void)
{
    dreduce_config_t cfg = config();
    if (rank == 0) cfg.combine = (dr_combine_mode_t)7;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_null_cfg(void)
{
    dreduce_config_t cfg = config();
    create_expect(rank == 1 ? NULL : &cfg, 0, DR_ERR_USAGE);
}

static void case_create_null_out(void)
{
    dreduce_config_t cfg = config();
    create_expect(&cfg, rank == 0, DR_ERR_USAGE);
}

/* Rank 1 asks for a GPU and sees none (main() hid them before CUDA started): every rank returns an error. */
static void case_create_gpu_missing(void)
{
    dreduce_config_t cfg = config();
    cfg.device = rank == 1 ? DR_DEVICE_GPU : DR_DEVICE_AUTO;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_combine_differs(void)
{
    dreduce_config_t cfg = config();
    cfg.combine = rank == 1 ? DR_COMBINE_FLAT : DR_COMBINE_HIER;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_allreduce_differs(void)
{
    dreduce_config_t cfg = config();
    cfg.allreduce = rank == nranks - 1;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_rpn_differs(void)
{
    dreduce_config_t cfg = config();
    cfg.ranks_per_node = rank == nranks - 1 ? 0 : 2;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

static void case_create_acc_differs(void)
{
    dreduce_config_t cfg = config();
    cfg.acc_mode = rank == 1 ? DR_ACC_NATIVE : DR_ACC_WIDE;
    create_expect(&cfg, 0, DR_ERR_USAGE);
}

/* Each rank's own fields may differ: the context works and the results are right. */
static void case_create_own_fields_differ(void)
{
    dreduce_config_t cfg = config();
    cfg.kernel = (dr_kernel_t)(rank % DR_KERNEL_COUNT);
    cfg.block = rank % 2 ? 64 : 0;
    cfg.chunk_bytes = (size_t)4096 << rank;
    cfg.timeout = rank == 1 ? 0 : 30 + rank; /* one rank never gives up, the others do */
    cfg.cpu_threads = 1 + rank % 2;
    cfg.staging = (dr_staging_t)(rank % 2 ? DR_STAGING_HOST : DR_STAGING_AUTO);
    dreduce_context_t *ctx = create_ok(&cfg);
    /* Past DR_SYNC_EVERY (256) calls: the periodic allreduce must come on every rank alike. */
    for (int i = 0; i < 300; ++i) good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* Every rank passes MPI_COMM_NULL (MPI_COMM_WORLD keeps its fatal error handler): DR_ERR_USAGE, no abort. */
static void case_create_comm_null(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = (dreduce_context_t *)&ctx;
    EXPECT_STATUS(dreduce_create(MPI_COMM_NULL, &cfg, &ctx), DR_ERR_USAGE);
    EXPECT(ctx == NULL, "*out not cleared");
}

/* The last rank is left out of a split (it gets MPI_COMM_NULL, an error); the others work on their communicator. */
static void case_create_comm_null_split(void)
{
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank == nranks - 1 ? MPI_UNDEFINED : 0, rank, &sub);
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = NULL;
    const dr_status_t s = dreduce_create(sub, &cfg, &ctx);
    if (rank == nranks - 1) {
        EXPECT(s == DR_ERR_USAGE && ctx == NULL, "MPI_COMM_NULL: status %d", (int)s);
        return;
    }
    EXPECT(s == DR_OK && ctx, "create on the split: status %d", (int)s);
    if (!ctx) return;
    int64_t x = rank + 1;
    dreduce_result_t r;
    EXPECT_STATUS(reduce(ctx, &x, 1, DR_INT64, DR_SUM, &r), DR_OK);
    if (r.valid) EXPECT(r.value.i64 == (int64_t)(nranks - 1) * nranks / 2, "sum %lld", (long long)r.value.i64);
    dreduce_destroy(ctx);
    MPI_Comm_free(&sub);
}

/* ---- argument checks ------------------------------------------------------------------------------------------ */

static void preset(dreduce_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->valid = 1;
    r->kind = DR_ACC_I64;
    r->value.i64 = 12345;
}

static void case_reduce_bad_dtype(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    int32_t x = 1;
    dreduce_result_t r;
    preset(&r);
    EXPECT_STATUS(reduce(ctx, &x, 1, (dr_dtype_t)99, DR_SUM, &r), DR_ERR_USAGE);
    EXPECT(r.valid == 0, "valid %d after an error", r.valid);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

static void case_reduce_bad_op(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    int32_t x = 1;
    dreduce_result_t r;
    preset(&r);
    EXPECT_STATUS(reduce(ctx, &x, 1, DR_INT32, (dr_op_t)42, &r), DR_ERR_USAGE);
    EXPECT(r.valid == 0, "valid %d after an error", r.valid);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

static void case_reduce_null_args(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    int32_t x = 1;
    dreduce_result_t r;
    EXPECT_STATUS(dreduce_reduce(ctx, &x, 1, DR_INT32, DR_SUM, NULL), DR_ERR_USAGE);
    preset(&r);
    EXPECT_STATUS(dreduce_reduce(NULL, &x, 1, DR_INT32, DR_SUM, &r), DR_ERR_USAGE);
    EXPECT(r.valid == 0, "valid %d after a NULL ctx", r.valid);
    EXPECT_STATUS(dreduce_prepare(NULL, DR_INT32, DR_SUM, 1), DR_ERR_USAGE);
    EXPECT_STATUS(dreduce_local_partial(NULL, &r), DR_ERR_USAGE);
    dreduce_file_t f;
    dreduce_file_init(&f, "/nonexistent");
    EXPECT_STATUS(dreduce_reduce_file(ctx, &f, DR_SUM, NULL, NULL), DR_ERR_USAGE);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
    dreduce_destroy(NULL);
}

/* *out after an error: valid = 0, whatever it held (a local usage error, and a file error agreed by every rank). */
static void case_out_after_error(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    dreduce_result_t r;
    preset(&r);
    EXPECT_STATUS(dreduce_reduce(ctx, NULL, 5, DR_INT32, DR_SUM, &r), DR_ERR_USAGE); /* every rank alike */
    EXPECT(r.valid == 0, "valid %d after a NULL buffer", r.valid);
    preset(&r);
    dreduce_file_t f;
    dreduce_file_init(&f, "/nonexistent/misuse.npy");
    EXPECT_STATUS(dreduce_reduce_file(ctx, &f, DR_SUM, &r, NULL), DR_ERR_USAGE);
    EXPECT(r.valid == 0, "valid %d after a missing file", r.valid);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* dreduce_prepare refuses what dreduce_reduce refuses, on every rank alike even when only one rank's count is bad. */
static void case_prepare_huge_count(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    EXPECT_STATUS(dreduce_prepare(ctx, DR_INT32, DR_SUM, (uint64_t)1 << 62), DR_ERR_USAGE);
    EXPECT_STATUS(dreduce_prepare(ctx, DR_INT32, DR_SUM, rank == 1 ? (uint64_t)1 << 62 : 10), DR_ERR_USAGE);
    EXPECT_STATUS(dreduce_prepare(ctx, rank == 1 ? (dr_dtype_t)99 : DR_INT32, DR_SUM, 10), DR_ERR_USAGE);
    EXPECT_STATUS(dreduce_prepare(ctx, DR_FLOAT32, DR_BXOR, 10), DR_ERR_USAGE);
    EXPECT_STATUS(dreduce_prepare(ctx, DR_INT64, DR_SUM, 10), DR_OK);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* Never cut short silently: the length needed comes back, like snprintf. */
static void case_result_format_short(void)
{
    dreduce_result_t r;
    memset(&r, 0, sizeof r);
    r.kind = DR_ACC_F64;
    r.value.f64 = -1.2345678901234567e-300;
    r.valid = 1;
    char big[64], small[8];
    const int need = dreduce_result_format(&r, big, sizeof big);
    EXPECT(need == (int)strlen(big) && strtod(big, NULL) == r.value.f64 && strstr(big, "e-300"), "full text '%s' (%d)",
           big, need);
    EXPECT(dreduce_result_format(&r, small, sizeof small) == need, "an 8-byte buffer does not report %d", need);
    EXPECT(strlen(small) == 7 && strncmp(small, big, 7) == 0, "cut short: '%s'", small);
    EXPECT(dreduce_result_format(&r, NULL, 0) == need, "a NULL buffer of length 0 does not report the length");
    r.valid = 0;
    EXPECT(dreduce_result_format(&r, big, sizeof big) > 0 && strcmp(big, "invalid") == 0, "invalid: '%s'", big);
    EXPECT(isnan(dreduce_result_double(&r)), "an invalid result as a double is not NaN");
}

/* ---- per-call mismatches and local errors: the combine's signature record (issue 16's branch) ------------------ */

/* A mismatched call: no rank returns DR_OK with a valid value; where the result would arrive (rank 0, or every rank
 * with allreduce) the status is an error. Then a good call on the same context is right. */
static void mismatch(dr_dtype_t t0, dr_op_t op0, dr_dtype_t t1, dr_op_t op1, int allreduce, dr_acc_mode_t acc)
{
    dreduce_config_t cfg = config();
    cfg.allreduce = allreduce;
    cfg.acc_mode = acc;
    dreduce_context_t *ctx = create_ok(&cfg);
    const dr_dtype_t t = rank == 0 ? t0 : t1;
    const dr_op_t op = rank == 0 ? op0 : op1;
    union { int32_t i32[3]; int64_t i64[3]; float f32[3]; double f64[3]; uint32_t u32[3]; } data;
    for (int i = 0; i < 3; ++i) {
        switch (t) {
        case DR_FLOAT32: data.f32[i] = 10.0f / 3; break;
        case DR_FLOAT64: data.f64[i] = 13.0 / 3 + i; break;
        case DR_INT64: data.i64[i] = 100 * (i + 1); break;
        default: data.i32[i] = 100 * (i + 1); break;
        }
    }
    dreduce_result_t r;
    preset(&r);
    const dr_status_t s = reduce(ctx, &data, 3, t, op, &r);
    EXPECT(!(s == DR_OK && r.valid), "a mismatched call (rank 0 %s %s, others %s %s) returned a value on rank %d",
           dreduce_dtype_name(t0), dreduce_op_name(op0), dreduce_dtype_name(t1), dreduce_op_name(op1), rank);
    if (rank == 0 || allreduce) EXPECT(s != DR_OK, "a mismatched call returned DR_OK where the result arrives");
    EXPECT(r.valid == 0, "valid %d after a mismatched call", r.valid);
    good_call(ctx, allreduce);
    dreduce_destroy(ctx);
}

static void case_reduce_dtype_differs(void) { mismatch(DR_INT32, DR_SUM, DR_FLOAT32, DR_SUM, 0, DR_ACC_WIDE); }
static void case_reduce_dtype_differs_allreduce(void)
{
    mismatch(DR_INT32, DR_SUM, DR_FLOAT32, DR_SUM, 1, DR_ACC_WIDE);
}
static void case_reduce_f64_f32_max(void) { mismatch(DR_FLOAT64, DR_MAX, DR_FLOAT32, DR_MAX, 0, DR_ACC_WIDE); }
static void case_reduce_f32_f64_native(void)
{
    mismatch(DR_FLOAT32, DR_SUM, DR_FLOAT64, DR_SUM, 0, DR_ACC_NATIVE);
    mismatch(DR_FLOAT32, DR_SUM, DR_FLOAT64, DR_SUM, 1, DR_ACC_NATIVE);
}
static void case_reduce_op_differs(void)
{
    mismatch(DR_INT32, DR_SUM, DR_INT32, DR_MAX, 0, DR_ACC_WIDE);
    mismatch(DR_INT32, DR_MAX, DR_INT32, DR_SUM, 0, DR_ACC_WIDE);
    mismatch(DR_INT32, DR_BAND, DR_INT32, DR_BOR, 0, DR_ACC_WIDE);
}

/* An empty rank's placeholder dtype: an error, or the right answer (-2.5), never NaN with DR_OK. */
static void case_reduce_empty_placeholder(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    const float x[2] = {-2.5f, 1.0f};
    dreduce_result_t r;
    const dr_status_t s = rank == 0 ? dreduce_reduce(ctx, NULL, 0, DR_INT32, DR_MIN, &r)
                                    : reduce(ctx, x, 2, DR_FLOAT32, DR_MIN, &r);
    if (rank == 0 && s == DR_OK)
        EXPECT(r.valid && dreduce_result_double(&r) == -2.5, "min %g with status OK", dreduce_result_double(&r));
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* np 4 as two emulated nodes, one rank float64: no hang, an error on rank 0, and the next call right. */
static void case_reduce_rpn2_one_f64(void)
{
    dreduce_config_t cfg = config();
    cfg.ranks_per_node = 2;
    dreduce_context_t *ctx = create_ok(&cfg);
    const float xf[3] = {1, 2, 3};
    const double xd[3] = {1, 2, 3};
    dreduce_result_t r;
    const dr_status_t s = rank == nranks - 1 ? reduce(ctx, xd, 3, DR_FLOAT64, DR_SUM, &r)
                                             : reduce(ctx, xf, 3, DR_FLOAT32, DR_SUM, &r);
    EXPECT(!(s == DR_OK && r.valid), "a mismatched call returned a value");
    if (rank == 0) EXPECT(s != DR_OK, "a mismatched call returned DR_OK on rank 0");
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* Rank 1 passes NULL with count 3 (its own error): it returns DR_ERR_USAGE, rank 0 an error (never its data plus
 * rank 1's next call), and the next call is right. */
static void case_reduce_null_buffer_one_rank(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    const int64_t x[3] = {1, 1, 1};
    dreduce_result_t r;
    const dr_status_t s = reduce(ctx, rank == 1 ? NULL : x, 3, DR_INT64, DR_SUM, &r);
    if (rank == 1) EXPECT(s == DR_ERR_USAGE, "NULL buffer: status %d", (int)s);
    if (rank == 0) EXPECT(s != DR_OK, "rank 0 returned DR_OK (%lld) although rank 1 failed", (long long)r.value.i64);
    EXPECT(r.valid == 0, "valid %d", r.valid);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* Rank 1 passes a NULL out: the same as any error of its own. */
static void case_reduce_null_out_one_rank(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    int64_t x = 1;
    dreduce_result_t r;
    const dr_status_t s = reduce(ctx, &x, 1, DR_INT64, DR_SUM, rank == 1 ? NULL : &r);
    if (rank == 1) EXPECT(s == DR_ERR_USAGE, "NULL out: status %d", (int)s);
    if (rank == 0) EXPECT(s != DR_OK, "rank 0 returned DR_OK although rank 1 failed");
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* argmax over several ranks without knowing where each rank's part starts (no dreduce_prepare, no
 * dreduce_reduce_at): every rank's own error, so every rank returns DR_ERR_USAGE (none waits); after
 * dreduce_prepare the same call works, with the index in the whole array; a count other than the prepared one is
 * that rank's error again. */
static void case_reduce_argmax_unplaced(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    int32_t x[2] = {rank, 100 - rank}; /* the max is rank 0's second element: index 1 */
    dreduce_result_t r;
    preset(&r);
    EXPECT_STATUS(reduce(ctx, x, 2, DR_INT32, DR_ARGMAX, &r), DR_ERR_USAGE);
    EXPECT(r.valid == 0, "valid %d after an error", r.valid);
    EXPECT_STATUS(dreduce_prepare(ctx, DR_INT32, DR_ARGMAX, 2), DR_OK);
    EXPECT_STATUS(reduce(ctx, x, 2, DR_INT32, DR_ARGMAX, &r), DR_OK);
    if (rank == 0)
        EXPECT(r.valid && r.value.arg.index == 1 && r.value.arg.value.i64 == 100, "argmax: %lld at %llu",
               (long long)r.value.arg.value.i64, (unsigned long long)r.value.arg.index);
    int32_t y[2] = {-rank, -rank}; /* rank 1 passes one element: not the prepared count */
    const dr_status_t s = reduce(ctx, y, rank == 1 ? 1 : 2, DR_INT32, DR_ARGMIN, &r);
    if (rank == 1) EXPECT(s == DR_ERR_USAGE, "an unprepared count: status %d", (int)s);
    if (rank == 0) EXPECT(s != DR_OK, "rank 0 returned DR_OK although rank 1 failed");
    /* dreduce_reduce_at needs nothing prepared: rank r's part at index 10 r (gaps are the caller's). */
    EXPECT_STATUS(dreduce_reduce_at(ctx, x, 2, (uint64_t)rank * 10, DR_INT32, DR_ARGMIN, &r), DR_OK);
    if (rank == 0) /* the smallest is 0, rank 0's first element */
        EXPECT(r.valid && r.value.arg.index == 0 && r.value.arg.value.i64 == 0, "argmin: %lld at %llu",
               (long long)r.value.arg.value.i64, (unsigned long long)r.value.arg.index);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* A binding rejects rank 1's array before calling the library (dreduce_reduce_fail): rank 1 gets its status, rank
 * 0 an error naming rank 1 (never a sum without it), and the next call is right. */
static void case_reduce_fail_one_rank(void)
{
    dreduce_config_t cfg = config();
    dreduce_context_t *ctx = create_ok(&cfg);
    int64_t x = 1;
    dreduce_result_t r;
    preset(&r);
    const dr_status_t s = rank == 1 ? dreduce_reduce_fail(ctx, DR_INT64, DR_SUM, DR_ERR_USAGE, &r)
                                    : reduce(ctx, &x, 1, DR_INT64, DR_SUM, &r);
    if (rank == 1) EXPECT(s == DR_ERR_USAGE, "dreduce_reduce_fail returned %d", (int)s);
    if (rank == 0) EXPECT(s != DR_OK, "rank 0 returned DR_OK although rank 1 failed");
    EXPECT(r.valid == 0, "valid %d", r.valid);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* ---- the watchdog belongs to the context ------------------------------------------------------------------------ */

/* An error inside a call with cfg.timeout 3, then 5 s of the caller's own code: the process lives on. */
static void case_watchdog_disarmed_after_error(void)
{
    dreduce_config_t cfg = config();
    cfg.timeout = 3;
    dreduce_context_t *ctx = create_ok(&cfg);
    float xf = 1;
    double xd = 1;
    dreduce_result_t r;
    /* Rank 0 float32 (4-byte partial), the others float64: MPI_ERR_TRUNCATE on rank 0 without the signature. */
    (void)(rank == 0 ? reduce(ctx, &xf, 1, DR_FLOAT32, DR_MAX, &r) : reduce(ctx, &xd, 1, DR_FLOAT64, DR_MAX, &r));
    EXPECT_STATUS(reduce(ctx, &xf, 1, (dr_dtype_t)99, DR_SUM, &r), DR_ERR_USAGE);
    nap(5);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
}

/* Two contexts, timeouts 30 and 1: a call on the first that waits 2.5 s for a slow rank is not ended by the
 * second's timeout. */
static void case_two_contexts_timeouts(void)
{
    dreduce_config_t a_cfg = config(), b_cfg = config();
    a_cfg.timeout = 30;
    b_cfg.timeout = 1;
    dreduce_context_t *a = create_ok(&a_cfg), *b = create_ok(&b_cfg);
    good_call(b, 0);
    if (rank == 1) nap(2.5);
    good_call(a, 0);
    dreduce_destroy(b);
    dreduce_destroy(a);
}

typedef struct {
    dreduce_context_t *ctx;
    int hang; /* this rank never joins the context's call */
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    if (w->hang) {
        nap(60);
        return NULL;
    }
    good_call(w->ctx, 0);
    return NULL;
}

/* Two contexts in two threads (MPI_THREAD_MULTIPLE): rank 1 never joins context B's call, so B's timeout (2 s) ends
 * the job (exit 3, the watchdog's line) while context A (timeout 60) worked in the other thread. */
static void case_two_contexts_threads(void)
{
    dreduce_config_t a_cfg = config(), b_cfg = config();
    a_cfg.timeout = 60;
    b_cfg.timeout = 2;
    dreduce_context_t *a = create_ok(&a_cfg), *b = create_ok(&b_cfg);
    worker_t wa = {a, 0}, wb = {b, rank == 1};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, worker, &wa);
    pthread_create(&tb, NULL, worker, &wb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    EXPECT(0, "the hang on context B was not detected");
}

typedef struct {
    const char *name;
    void (*run)(void);
    int min_ranks;
} case_t;

/* ---- one rank's bad argument to a collective call, with no timeout (include/dreduce.h, "Collectives") ----------
 * The rank with the bad argument returns the status the header gives (DR_ERR_USAGE) and still takes part, so the
 * others return an error where the result arrives (rank 0, or every rank with allreduce) and none waits: a hang
 * fails by the harness's time limit. Then a good call on the same context is right. */

static dreduce_config_t config_untimed(int allreduce)
{
    dreduce_config_t cfg = config();
    cfg.timeout = 0; /* a rank left waiting would wait forever */
    cfg.allreduce = allreduce;
    return cfg;
}

/* The verdict on one call in which rank `bad` alone got something wrong. */
static void one_rank_verdict(dr_status_t s, const dreduce_result_t *r, int bad, int allreduce, const char *what)
{
    if (rank == bad) EXPECT(s == DR_ERR_USAGE, "%s on this rank: status %d, expected %d", what, (int)s, DR_ERR_USAGE);
    else if (rank == 0 || allreduce) EXPECT(s != DR_OK, "%s on rank %d: this rank returned DR_OK", what, bad);
    if (r) EXPECT(r->valid == 0, "%s on rank %d: valid %d", what, bad, r->valid);
}

/* dreduce_reduce (both combines' result rules) and dreduce_reduce_at with each bad argument on the last rank. */
static void case_reduce_bad_arg_one_rank(void)
{
    const int bad = nranks - 1;
    for (int allreduce = 0; allreduce <= 1; ++allreduce) {
        dreduce_config_t cfg = config_untimed(allreduce);
        dreduce_context_t *ctx = create_ok(&cfg);
        const float x[3] = {1.5f, -2.0f, 4.0f};
        const int32_t xi[3] = {7, -3, 9};
        dreduce_result_t r;
        dr_status_t s;
        preset(&r);
        s = reduce(ctx, x, 3, rank == bad ? (dr_dtype_t)99 : DR_FLOAT32, DR_SUM, &r);
        one_rank_verdict(s, &r, bad, allreduce, "dtype 99");
        preset(&r);
        s = reduce(ctx, x, 3, DR_FLOAT32, rank == bad ? (dr_op_t)42 : DR_SUM, &r);
        one_rank_verdict(s, &r, bad, allreduce, "op 42");
        preset(&r);
        s = reduce(ctx, x, 3, DR_FLOAT32, rank == bad ? DR_BAND : DR_SUM, &r);
        one_rank_verdict(s, &r, bad, allreduce, "band of float32");
        preset(&r);
        s = reduce(ctx, x, 3, DR_FLOAT16, rank == bad ? DR_BXOR : DR_MAX, &r);
        one_rank_verdict(s, &r, bad, allreduce, "bxor of float16");
        /* a count no buffer can have: 2^62 float16 is 2^63 bytes, past PTRDIFF_MAX */
        preset(&r);
        s = dreduce_reduce(ctx, x, rank == bad ? (uint64_t)1 << 62 : 1, DR_FLOAT16, DR_SUM, &r);
        one_rank_verdict(s, &r, bad, allreduce, "count 2^62 of float16");
        preset(&r);
        s = dreduce_reduce(ctx, rank == bad ? NULL : xi, 3, DR_INT32, DR_MIN, &r);
        one_rank_verdict(s, &r, bad, allreduce, "a NULL buffer");
        /* argmin at a first index whose part passes the largest index there is */
        preset(&r);
        s = dreduce_reduce_at(ctx, xi, 3, rank == bad ? UINT64_MAX - 2 : (uint64_t)rank * 3, DR_INT32, DR_ARGMIN, &r);
        one_rank_verdict(s, &r, bad, allreduce, "first past the last index");
        preset(&r);
        s = dreduce_reduce_at(ctx, xi, 3, (uint64_t)rank * 3, rank == bad ? (dr_dtype_t)-1 : DR_INT32, DR_ARGMIN, &r);
        one_rank_verdict(s, &r, bad, allreduce, "reduce_at with dtype -1");
        /* dreduce_reduce_fail with a bad dtype: the caller's own rejection still joins */
        preset(&r);
        s = rank == bad ? dreduce_reduce_fail(ctx, (dr_dtype_t)99, DR_SUM, DR_ERR_USAGE, &r)
                        : reduce(ctx, x, 3, DR_FLOAT32, DR_SUM, &r);
        one_rank_verdict(s, &r, bad, allreduce, "dreduce_reduce_fail of dtype 99");
        /* dreduce_prepare: every rank returns the same status */
        EXPECT_STATUS(dreduce_prepare(ctx, rank == bad ? (dr_dtype_t)99 : DR_INT32, DR_ARGMAX, 3), DR_ERR_USAGE);
        EXPECT_STATUS(dreduce_prepare(ctx, DR_FLOAT16, DR_SUM, rank == bad ? (uint64_t)1 << 62 : 3), DR_ERR_USAGE);
        good_call(ctx, allreduce);
        dreduce_destroy(ctx);
    }
}

/* The file calls: rank 0 writes a small .npy; each bad argument on the last rank alone. */
static void case_file_bad_arg_one_rank(void)
{
    const int bad = nranks - 1;
    char path[256];
    snprintf(path, sizeof path, "%s/dreduce-misuse-%ld.npy", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getppid());
    if (rank == 0) {
        FILE *f = fopen(path, "wb");
        static const char head[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }";
        char header[128];
        memset(header, ' ', sizeof header);
        memcpy(header, head, sizeof head - 1);
        header[127] = '\n';
        const int32_t v[5] = {3, -1, 4, 1, -5};
        EXPECT(f && fwrite(header, 1, 128, f) == 128 && fwrite(v, 4, 5, f) == 5, "cannot write %s", path);
        if (f) fclose(f);
    }
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    dreduce_config_t cfg = config_untimed(0);
    dreduce_context_t *ctx = create_ok(&cfg);
    dreduce_file_t good, wrong;
    dreduce_file_init(&good, path);
    dreduce_file_init(&wrong, path);
    wrong.dtype = (dr_dtype_t)99;
    dreduce_result_t r;
    dreduce_file_info_t info;
    preset(&r);
    dr_status_t s = dreduce_reduce_file(ctx, rank == bad ? &wrong : &good, DR_SUM, &r, NULL);
    EXPECT(s == DR_ERR_USAGE, "file.dtype 99 on rank %d: status %d", bad, (int)s); /* agreed: every rank */
    EXPECT(r.valid == 0, "valid %d", r.valid);
    s = dreduce_reduce_file(ctx, &good, rank == bad ? (dr_op_t)42 : DR_SUM, &r, NULL);
    EXPECT(s == DR_ERR_USAGE, "op 42 on rank %d: status %d", bad, (int)s);
    s = dreduce_reduce_file(ctx, rank == bad ? NULL : &good, DR_SUM, &r, NULL);
    EXPECT(s == DR_ERR_USAGE, "a NULL file on rank %d: status %d", bad, (int)s);
    s = dreduce_reduce_file(ctx, &good, DR_SUM, rank == bad ? NULL : &r, NULL);
    EXPECT(s == DR_ERR_USAGE, "a NULL out on rank %d: status %d", bad, (int)s);
    s = dreduce_file_inspect(ctx, &good, DR_SUM, rank == bad ? NULL : &info);
    EXPECT(s == DR_ERR_USAGE, "dreduce_file_inspect with a NULL info on rank %d: status %d", bad, (int)s);
    s = dreduce_file_scan(ctx, rank == bad ? &wrong : &good, DR_SUM, 64, NULL, NULL);
    EXPECT(s == DR_ERR_USAGE, "dreduce_file_scan with a NULL fn: status %d", (int)s);
    /* and the same file read right afterwards: -5 + 1 + 4 - 1 + 3 */
    preset(&r);
    EXPECT_STATUS(dreduce_reduce_file(ctx, &good, DR_SUM, &r, NULL), DR_OK);
    if (rank == 0) EXPECT(r.valid && r.value.i64 == 2, "the file's sum is %lld (valid %d), not 2",
                          (long long)r.value.i64, r.valid);
    good_call(ctx, 0);
    dreduce_destroy(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) remove(path);
}

/* ---- empty arrays: min, max and the bitwise ops have no value -------------------------------------------------- */

/* Every rank's part empty: no_value 1, NaN as a double, "none" as text, at every rank count and with allreduce;
 * sum and prod keep 0 and 1 (NumPy's), stats count 0 with min/max "none". One rank with an element: a value. */
static void case_empty_no_value(void)
{
    for (int allreduce = 0; allreduce <= 1; ++allreduce) {
        dreduce_config_t cfg = config();
        cfg.allreduce = allreduce;
        dreduce_context_t *ctx = create_ok(&cfg);
        static const struct {
            dr_dtype_t t;
            dr_op_t op;
            int no_value;
        } calls[] = {{DR_FLOAT32, DR_MIN, 1}, {DR_FLOAT64, DR_MAX, 1}, {DR_INT32, DR_MIN, 1}, {DR_UINT8, DR_MAX, 1},
                     {DR_INT32, DR_BAND, 1},  {DR_INT64, DR_BOR, 1},   {DR_UINT16, DR_BXOR, 1},
                     {DR_INT32, DR_ARGMAX, 1}, {DR_FLOAT32, DR_SUM, 0}, {DR_INT32, DR_PROD, 0},
                     {DR_FLOAT32, DR_STATS, 0}};
        for (size_t k = 0; k < sizeof calls / sizeof calls[0]; ++k) {
            dreduce_result_t r;
            preset(&r);
            const int32_t one = 5;
            EXPECT_STATUS(dreduce_reduce_at(ctx, &one, 0, 0, calls[k].t, calls[k].op, &r), DR_OK);
            const int here = rank == 0 || allreduce;
            EXPECT(r.valid == here, "%s %s of nothing: valid %d", dreduce_dtype_name(calls[k].t),
                   dreduce_op_name(calls[k].op), r.valid);
            char text[128];
            dreduce_result_format(&r, text, sizeof text);
            if (here && calls[k].no_value)
                EXPECT(r.no_value == 1 && isnan(dreduce_result_double(&r)) && strcmp(text, "none") == 0,
                       "%s %s of nothing: no_value %d, as a double %g, '%s'", dreduce_dtype_name(calls[k].t),
                       dreduce_op_name(calls[k].op), r.no_value, dreduce_result_double(&r), text);
            if (here && !calls[k].no_value) EXPECT(r.no_value == 0, "%s of nothing: no_value 1", dreduce_op_name(calls[k].op));
            if (here && calls[k].op == DR_SUM) EXPECT(dreduce_result_double(&r) == 0, "sum of nothing: %s", text);
            if (here && calls[k].op == DR_PROD) EXPECT(dreduce_result_double(&r) == 1, "prod of nothing: %s", text);
            if (here && calls[k].op == DR_STATS)
                EXPECT(r.stats.count == 0 && strstr(text, "min=none max=none"), "stats of nothing: '%s'", text);
            /* this rank's own part was empty too */
            dreduce_result_t mine;
            EXPECT_STATUS(dreduce_local_partial(ctx, &mine), DR_OK);
            EXPECT(mine.no_value == calls[k].no_value, "%s local partial of nothing: no_value %d",
                   dreduce_op_name(calls[k].op), mine.no_value);
        }
        /* one element on the last rank: a value again, on every path */
        const int32_t v = -42;
        dreduce_result_t r;
        preset(&r);
        const int last = rank == nranks - 1;
        EXPECT_STATUS(dreduce_reduce_at(ctx, &v, last ? 1 : 0, 0, DR_INT32, DR_MIN, &r), DR_OK);
        if (rank == 0 || allreduce)
            EXPECT(r.valid && !r.no_value && dreduce_result_double(&r) == -42, "min of one element: valid %d "
                   "no_value %d %g", r.valid, r.no_value, dreduce_result_double(&r));
        good_call(ctx, allreduce);
        dreduce_destroy(ctx);
    }
}

/* dreduce_result_double of a result whose kind is not a dr_acc_kind_t: NaN, not its bits. */
static void case_result_bad_kind(void)
{
    dreduce_result_t r;
    memset(&r, 0, sizeof r);
    r.valid = 1;
    r.value.u64 = 0x4045000000000000ull; /* 42.0 as float64 bits */
    r.kind = (dr_acc_kind_t)99;
    EXPECT(isnan(dreduce_result_double(&r)), "kind 99: %g", dreduce_result_double(&r));
    char text[32];
    dreduce_result_format(&r, text, sizeof text);
    EXPECT(strcmp(text, "invalid") == 0, "kind 99 formats as '%s'", text);
    r.kind = DR_ACC_F64;
    EXPECT(dreduce_result_double(&r) == 42.0, "kind F64: %g", dreduce_result_double(&r));
}

static const case_t cases[] = {
    {"create_bad_block", case_create_bad_block, 2},
    {"create_chunk_zero", case_create_chunk_zero, 2},
    {"create_nan_timeout", case_create_nan_timeout, 2},
    {"create_bad_enum", case_create_bad_enum, 1},
    {"create_null_cfg", case_create_null_cfg, 2},
    {"create_null_out", case_create_null_out, 1},
    {"create_gpu_missing", case_create_gpu_missing, 2},
    {"create_combine_differs", case_create_combine_differs, 2},
    {"create_allreduce_differs", case_create_allreduce_differs, 2},
    {"create_rpn_differs", case_create_rpn_differs, 2},
    {"create_acc_differs", case_create_acc_differs, 2},
    {"create_own_fields_differ", case_create_own_fields_differ, 1},
    {"create_comm_null", case_create_comm_null, 1},
    {"create_comm_null_split", case_create_comm_null_split, 2},
    {"reduce_bad_dtype", case_reduce_bad_dtype, 1},
    {"reduce_bad_op", case_reduce_bad_op, 1},
    {"reduce_null_args", case_reduce_null_args, 1},
    {"out_after_error", case_out_after_error, 1},
    {"prepare_huge_count", case_prepare_huge_count, 2},
    {"result_format_short", case_result_format_short, 1},
    {"reduce_dtype_differs", case_reduce_dtype_differs, 2},
    {"reduce_dtype_differs_allreduce", case_reduce_dtype_differs_allreduce, 2},
    {"reduce_f64_f32_max", case_reduce_f64_f32_max, 2},
    {"reduce_f32_f64_native", case_reduce_f32_f64_native, 2},
    {"reduce_op_differs", case_reduce_op_differs, 2},
    {"reduce_empty_placeholder", case_reduce_empty_placeholder, 2},
    {"reduce_rpn2_one_f64", case_reduce_rpn2_one_f64, 4},
    {"reduce_null_buffer_one_rank", case_reduce_null_buffer_one_rank, 2},
    {"reduce_null_out_one_rank", case_reduce_null_out_one_rank, 2},
    {"reduce_argmax_unplaced", case_reduce_argmax_unplaced, 2},
    {"reduce_fail_one_rank", case_reduce_fail_one_rank, 2},
    {"watchdog_disarmed_after_error", case_watchdog_disarmed_after_error, 2},
    {"two_contexts_timeouts", case_two_contexts_timeouts, 2},
    {"two_contexts_threads", case_two_contexts_threads, 2},
    {"reduce_bad_arg_one_rank", case_reduce_bad_arg_one_rank, 2},
    {"file_bad_arg_one_rank", case_file_bad_arg_one_rank, 2},
    {"empty_no_value", case_empty_no_value, 1},
    {"result_bad_kind", case_result_bad_kind, 1},
};
#define NCASES (sizeof cases / sizeof cases[0])

static int launcher_rank(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i)
        if (getenv(vars[i])) return atoi(getenv(vars[i]));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < NCASES; ++i) printf("%s\n", cases[i].name);
        return 0;
    }
    const case_t *c = NULL;
    for (size_t i = 0; argc > 1 && i < NCASES; ++i)
        if (strcmp(argv[1], cases[i].name) == 0) c = &cases[i];
    if (!c) {
        fprintf(stderr, "usage: test_misuse CASE [--gpu] | --list\n");
        return 2;
    }
    use_gpu = argc > 2 && strcmp(argv[2], "--gpu") == 0;
    /* Hide the GPUs from rank 1 before anything starts CUDA. */
    if (c->run == case_create_gpu_missing && launcher_rank() == 1) setenv("CUDA_VISIBLE_DEVICES", "", 1);
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int skip = nranks < c->min_ranks || (c->run == case_two_contexts_threads && provided < MPI_THREAD_MULTIPLE);
    if (use_gpu && c->run != case_create_gpu_missing) {
        int gpus = 0;
        if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
        skip |= gpus == 0;
    }
    int any_skip = 0;
    MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_skip) {
        if (rank == 0) printf("%s: needs %d ranks%s: skipped\n", c->name, c->min_ranks,
                              use_gpu ? ", a GPU on each, and MPI_THREAD_MULTIPLE for threads" : "");
        MPI_Finalize();
        return 77;
    }
    c->run();
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s on %d ranks: %s (%d failures)\n", c->name, nranks, all ? "FAILED" : "passed", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
