/* Misuse that the combine must catch (issues #21 and #16), CPU backend: ranks that pass different dtypes, ops or
 * accumulators get an error naming what differs, never a value; a rank that fails locally (NULL buffer with a count)
 * makes the others' call fail too, naming it, and the next valid call is right on every rank (the collectives stayed
 * matched); the watchdog is disarmed after an error return; two contexts keep their own timeouts, also used from two
 * threads at once. The messages are checked by tests/mpi/combine_misuse.sh.
 * Usage: combine_misuse CASE [--allreduce] [--combine flat] [--rpn N] [--gpu]. Exit 0 when every rank saw what it should,
 * 1 otherwise, 77 when the case cannot run here (no MPI_THREAD_MULTIPLE). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dreduce.h"

static int rank, nranks, failures;
static dreduce_config_t cfg;

#define EXPECT(cond, ...)                                                                                      \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            ++failures;                                                                                        \
            fprintf(stderr, "FAIL (rank %d, line %d): ", rank, __LINE__);                                      \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fputc('\n', stderr);                                                                               \
        }                                                                                                      \
    } while (0)

/* Ranks that receive the combined record: rank 0, or every rank with allreduce. */
static int receives(void) { return rank == 0 || cfg.allreduce; }

/* A call whose arguments differ across ranks: an error where the record arrives, no value anywhere. */
static void expect_mismatch(dreduce_context_t *ctx, const void *buf, uint64_t n, dr_dtype_t t, dr_op_t op)
{
    dreduce_result_t r;
    r.valid = 1;
    const dr_status_t s = dreduce_reduce(ctx, buf, n, t, op, &r);
    if (receives()) EXPECT(s == DR_ERR_USAGE, "status %d, expected %d (usage: the ranks disagree)", (int)s, DR_ERR_USAGE);
    else EXPECT(s == DR_OK || s == DR_ERR_USAGE, "status %d on a rank that does not receive the result", (int)s);
    EXPECT(!r.valid, "a value (%g) from ranks that disagree", dreduce_result_double(&r));
}

/* A valid call after the misuse: the right value where it is valid, on every rank. */
static void expect_sum_right(dreduce_context_t *ctx)
{
    int64_t v[3] = {rank, rank, rank};
    dreduce_result_t r;
    const dr_status_t s = dreduce_reduce(ctx, v, 3, DR_INT64, DR_SUM, &r);
    const int64_t want = 3 * (int64_t)nranks * (nranks - 1) / 2;
    EXPECT(s == DR_OK, "the next valid call: status %d", (int)s);
    EXPECT(r.valid == receives(), "the next valid call: valid %d", r.valid);
    if (r.valid) EXPECT(r.value.i64 == want, "the next valid call: %lld, expected %lld", (long long)r.value.i64, (long long)want);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

typedef struct {
    dreduce_context_t *ctx;
    int calls, bad;
    dr_dtype_t t;
    int sleeps; /* this rank pauses halfway */
} thread_job_t;

static void *thread_calls(void *arg)
{
    thread_job_t *j = arg;
    float f[100];
    int32_t i[100];
    for (int k = 0; k < 100; ++k) f[k] = 0.5f, i[k] = k;
    for (int c = 0; c < j->calls; ++c) {
        dreduce_result_t r;
        const dr_status_t s = j->t == DR_FLOAT32 ? dreduce_reduce(j->ctx, f, 100, DR_FLOAT32, DR_SUM, &r)
                                                 : dreduce_reduce(j->ctx, i, 100, DR_INT32, DR_MAX, &r);
        const double want = j->t == DR_FLOAT32 ? 50.0 * nranks : 99;
        if (s != DR_OK || (r.valid && dreduce_result_double(&r) != want)) ++j->bad;
        if (c == j->calls / 2 && j->sleeps) sleep_s(1.5); /* longer than the other context's timeout */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    int provided = 0;
    const int threads = !strcmp(which, "threads") || !strcmp(which, "thread_hang");
    MPI_Init_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    alarm(50); /* a hang is a failure too (ctest's limit is 60 s) */
    dreduce_config_init(&cfg);
    cfg.device = DR_DEVICE_CPU;
    cfg.cpu_threads = 1;
    cfg.timeout = 20;
    for (int i = 2; i < argc; ++i) {
        if (!strcmp(argv[i], "--allreduce")) cfg.allreduce = 1;
        else if (!strcmp(argv[i], "--combine") && i + 1 < argc) cfg.combine = !strcmp(argv[++i], "flat") ? DR_COMBINE_FLAT : DR_COMBINE_HIER;
        else if (!strcmp(argv[i], "--rpn") && i + 1 < argc) cfg.ranks_per_node = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gpu")) cfg.device = DR_DEVICE_GPU, cfg.share_gpus = 1; /* host arrays, GPU */
    }
    dreduce_context_t *ctx = NULL;
    if (cfg.device == DR_DEVICE_GPU) { /* CUDA's first initialisation (seconds) outside the short timeouts below */
        dreduce_config_t warm = cfg;
        warm.timeout = 0;
        if (dreduce_create(MPI_COMM_WORLD, &warm, &ctx) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
        dreduce_destroy(ctx);
        ctx = NULL;
    }
    int32_t i32[3] = {200, 200, 200};
    float f32[3] = {1.5f, -2.5f, 3.f};
    double f64[3] = {13, 1, 2};
    if (!strcmp(which, "acc")) {
        /* acc_mode is configuration: a create that settles it (every rank an error) is right too. */
        if (rank == 1) cfg.acc_mode = DR_ACC_NATIVE;
        const dr_status_t s = dreduce_create(MPI_COMM_WORLD, &cfg, &ctx);
        if (s != DR_OK) {
            printf("rank %d: acc: dreduce_create refused the disagreement (status %d)\n", rank, (int)s);
            EXPECT(s == DR_ERR_USAGE, "create status %d", (int)s);
        } else {
            expect_mismatch(ctx, f32, 3, DR_FLOAT32, DR_SUM);
            int64_t v[3] = {1, 2, 3}; /* the configs still differ: every call says so, even where acc_mode is moot */
            expect_mismatch(ctx, v, 3, DR_INT64, DR_SUM);
        }
    } else if (!strcmp(which, "thread_hang")) {
        /* Two contexts from two threads; rank 1 never joins a call on A (timeout 1 s) while B (timeout 30 s) keeps
         * working on the other thread: rank 0 must give up on A in about a second (exit 3), B notwithstanding. */
        if (provided < MPI_THREAD_MULTIPLE) {
            if (rank == 0) printf("skipped: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
            MPI_Finalize();
            return 77;
        }
        dreduce_context_t *a = NULL, *b = NULL;
        cfg.timeout = 1;
        EXPECT(dreduce_create(MPI_COMM_WORLD, &cfg, &a) == DR_OK, "create A");
        cfg.timeout = 30;
        EXPECT(dreduce_create(MPI_COMM_WORLD, &cfg, &b) == DR_OK, "create B");
        thread_job_t jb = {b, 1000000, 0, DR_FLOAT32, 0};
        pthread_t tb;
        pthread_create(&tb, NULL, thread_calls, &jb);
        if (rank == 0) {
            int64_t v = 1;
            dreduce_result_t r;
            (void)dreduce_reduce(a, &v, 1, DR_INT64, DR_SUM, &r); /* never completes: the watchdog ends us */
            fprintf(stderr, "FAIL (rank 0): a call on A returned although rank 1 never joined\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        sleep_s(40); /* rank 1: B's thread keeps calling; the job is ended by rank 0's exit */
        MPI_Abort(MPI_COMM_WORLD, 1);
    } else if (!strcmp(which, "threads")) {
        if (provided < MPI_THREAD_MULTIPLE) {
            if (rank == 0) printf("skipped: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
            MPI_Finalize();
            return 77;
        }
        dreduce_context_t *a = NULL, *b = NULL;
        cfg.timeout = 30;
        EXPECT(dreduce_create(MPI_COMM_WORLD, &cfg, &a) == DR_OK, "create A");
        cfg.timeout = 1;
        EXPECT(dreduce_create(MPI_COMM_WORLD, &cfg, &b) == DR_OK, "create B");
        /* A waits 1.5 s between calls on rank 0 only (its partner waits in A's collective that long): under A's own
         * timeout of 30 s, whatever B's 1 s says; B's calls run meanwhile on the other thread. */
        thread_job_t ja = {a, 40, 0, DR_INT32, rank == 0}, jb = {b, 400, 0, DR_FLOAT32, 0};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, thread_calls, &ja);
        pthread_create(&tb, NULL, thread_calls, &jb);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        EXPECT(ja.bad == 0 && jb.bad == 0, "threads: %d and %d wrong calls", ja.bad, jb.bad);
        dreduce_destroy(a);
        dreduce_destroy(b);
    } else {
        if (!strcmp(which, "disarm") || !strcmp(which, "two_contexts")) cfg.timeout = 1;
        if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) {
            fprintf(stderr, "FAIL rank %d: dreduce_create\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (!strcmp(which, "dtype")) { /* rank 0 int32, the others float32, SUM */
            if (rank == 0) expect_mismatch(ctx, i32, 3, DR_INT32, DR_SUM);
            else expect_mismatch(ctx, f32, 3, DR_FLOAT32, DR_SUM);
            expect_sum_right(ctx);
        } else if (!strcmp(which, "dtype_max")) { /* rank 0 float64 MAX, the others float32 MAX */
            if (rank == 0) expect_mismatch(ctx, f64, 3, DR_FLOAT64, DR_MAX);
            else expect_mismatch(ctx, f32, 3, DR_FLOAT32, DR_MAX);
            expect_sum_right(ctx);
        } else if (!strcmp(which, "op")) { /* SUM/MAX, MAX/SUM, BAND/BOR */
            const dr_op_t pairs[3][2] = {{DR_SUM, DR_MAX}, {DR_MAX, DR_SUM}, {DR_BAND, DR_BOR}};
            for (int p = 0; p < 3; ++p) expect_mismatch(ctx, i32, 3, DR_INT32, pairs[p][rank == 0 ? 0 : 1]);
            expect_sum_right(ctx);
        } else if (!strcmp(which, "placeholder")) { /* an empty rank's placeholder dtype vs float32 MIN */
            if (rank == nranks - 1) expect_mismatch(ctx, NULL, 0, DR_INT32, DR_MIN);
            else expect_mismatch(ctx, f32, 3, DR_FLOAT32, DR_MIN);
            expect_sum_right(ctx);
        } else if (!strcmp(which, "one_float64")) { /* np 4, ranks_per_node 2: the last rank float64 */
            if (rank == nranks - 1) expect_mismatch(ctx, f64, 3, DR_FLOAT64, DR_SUM);
            else expect_mismatch(ctx, f32, 3, DR_FLOAT32, DR_SUM);
            expect_sum_right(ctx);
        } else if (!strcmp(which, "null")) { /* rank 1 passes NULL with count 3 */
            dreduce_result_t r;
            r.valid = 1;
            const dr_status_t s = dreduce_reduce(ctx, rank == 1 ? NULL : (void *)i32, 3, DR_INT32, DR_SUM, &r);
            if (rank == 1 || receives()) EXPECT(s == DR_ERR_USAGE, "status %d, expected usage (rank 1's NULL)", (int)s);
            EXPECT(!r.valid, "a value (%g) although rank 1 failed", dreduce_result_double(&r));
            expect_sum_right(ctx);
        } else if (!strcmp(which, "disarm")) { /* timeout 1: errors, then 2.5 s of the user's own code, no exit */
            dreduce_result_t r;
            (void)dreduce_reduce(ctx, rank == 1 ? NULL : (void *)i32, 3, DR_INT32, DR_SUM, &r);
            sleep_s(2.5);
            if (rank == 0) expect_mismatch(ctx, i32, 3, DR_INT32, DR_SUM);
            else expect_mismatch(ctx, f32, 3, DR_FLOAT32, DR_SUM);
            sleep_s(2.5);
            EXPECT(dreduce_reduce(ctx, NULL, 0, (dr_dtype_t)99, DR_SUM, &r) == DR_ERR_USAGE, "bad dtype accepted");
            sleep_s(2.5);
            expect_sum_right(ctx);
        } else if (!strcmp(which, "two_contexts")) { /* ctx: timeout 1; ctx2: timeout 30, waits 2.5 s */
            /* Made in the order where a process-wide timeout would be the last one set (1 s), not ctx2's 30 s. */
            dreduce_context_t *ctx2 = NULL;
            dreduce_destroy(ctx);
            cfg.timeout = 30;
            cfg.allreduce = 1;
            EXPECT(dreduce_create(MPI_COMM_WORLD, &cfg, &ctx2) == DR_OK, "create the second context");
            cfg.allreduce = 0;
            cfg.timeout = 1;
            if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
            expect_sum_right(ctx);
            if (rank == 0) sleep_s(2.5); /* the others wait in ctx2's collective, under its own timeout */
            int64_t v = 1;
            dreduce_result_t r;
            EXPECT(dreduce_reduce(ctx2, &v, 1, DR_INT64, DR_SUM, &r) == DR_OK && r.valid && r.value.i64 == nranks,
                   "the second context's call");
            expect_sum_right(ctx);
            dreduce_destroy(ctx2);
        } else {
            fprintf(stderr, "unknown case '%s'\n", which);
            ++failures;
        }
        dreduce_destroy(ctx);
    }
    if (ctx && !strcmp(which, "acc")) dreduce_destroy(ctx);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s %s: %d failures\n", which, all ? "FAILED" : "passed", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
