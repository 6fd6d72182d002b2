/* libdreduce through its public API (include/dreduce.h), on several ranks: every (type, op) row over random data,
 * the buffer in host memory (pageable; in small chunks so the chunk pipeline runs many times), in GPU memory and in
 * pinned host memory where there is a GPU; uneven shards (one rank with none); the result checked against the host
 * reference (exact for integers, the stated float bound); repeated calls give the same bits and allocate no device
 * memory; bad arguments return DR_ERR_USAGE on every rank without communicating; a context in the exact mode gives
 * float sums bit for bit equal to the independent exact reference. stats, argmin and argmax (new_ops): against the
 * CPU backend's answer for the whole array (itself checked against the host reference by test_stats), every type,
 * host and device buffers, uneven shards: argmin/argmax to the bit with the global index, through dreduce_reduce_at,
 * through dreduce_prepare's offsets and through chunked host arrays; stats' count, min, max and integer sums
 * exactly, the exact mode's sum and mean to the bit, float means and m2 to 1e-10 relative.
 * Usage: test_library [--require-gpu] (exit 77 when required and there is no GPU). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"
#include "dreduce.h"
#include "reference.h"
#include "stats.h"

static int failures;
#define EXPECT(cond, ...)                                                                                      \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            ++failures;                                                                                        \
            fprintf(stderr, "FAIL (rank %d, %s:%d): ", rank, __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fputc('\n', stderr);                                                                               \
        }                                                                                                      \
    } while (0)

static int rank, nranks;

typedef enum { MEM_PAGEABLE, MEM_DEVICE, MEM_PINNED } mem_t;
static const char *mem_name[] = {"pageable host", "device", "pinned host"};

/* One reduction of this rank's shard of a seeded random array, checked on rank 0 against the merged reference. */
static void check_one(dreduce_context_t *ctx, dr_acc_mode_t mode, dr_dtype_t t, dr_op_t op, uint64_t n_total,
                      mem_t mem, int reps)
{
    /* Uneven shards: rank r gets a share proportional to r (rank 0 none at all when there are several ranks). */
    const uint64_t weight_sum = nranks > 1 ? (uint64_t)nranks * (nranks - 1) / 2 : 1;
    const uint64_t w = nranks > 1 ? (uint64_t)rank : 1;
    uint64_t first = 0;
    for (int r = 0; r < rank; ++r) first += n_total * (uint64_t)r / weight_sum;
    const uint64_t count = rank == nranks - 1 ? n_total - first : n_total * w / weight_sum;
    const size_t bytes = (size_t)count * dr_dtype_size(t);
    dr_gen_t g = {DR_DATA_RANDOM, t, op, 1000 + (uint64_t)t * 16 + (uint64_t)op, 0, 0};
    void *host = malloc(bytes + 1), *buf = host;
    dr_cpu_generate(&g, first, host, (size_t)count, 1);
    if (mem == MEM_DEVICE) {
        if (cudaMalloc(&buf, bytes + 1) != cudaSuccess || cudaMemcpy(buf, host, bytes, cudaMemcpyDefault))
            EXPECT(0, "cudaMalloc/cudaMemcpy of %zu bytes", bytes);
    } else if (mem == MEM_PINNED) {
        if (cudaMallocHost(&buf, bytes + 1) != cudaSuccess) EXPECT(0, "cudaMallocHost of %zu bytes", bytes);
        memcpy(buf, host, bytes);
    }
    dreduce_result_t res, first_res;
    size_t free_before = 0, free_after = 0, total = 0;
    for (int i = 0; i < reps; ++i) {
        if (i == 1 && dreduce_gpu(ctx) >= 0) cudaMemGetInfo(&free_before, &total);
        EXPECT(dreduce_reduce(ctx, count ? buf : NULL, count, t, op, &res) == DR_OK, "dreduce_reduce failed");
        if (i == 0) first_res = res;
        else if (res.valid)
            EXPECT(memcmp(&res.value, &first_res.value, sizeof res.value) == 0, "%s %s %s: call %d differs",
                   dr_dtype_name(t), dr_op_name(op), mem_name[mem], i);
    }
    if (reps > 1 && dreduce_gpu(ctx) >= 0) {
        cudaMemGetInfo(&free_after, &total);
        EXPECT(free_after == free_before, "repeated calls changed free device memory from %zu to %zu bytes",
               free_before, free_after);
    }
    dreduce_timings_t tm;
    dreduce_timings(ctx, &tm);
    EXPECT(tm.bytes == bytes, "timings report %llu bytes, the shard has %zu", (unsigned long long)tm.bytes, bytes);
    /* The levels are disjoint parts of the call: they add up to at most its total (0.01 ms for the two clocks). */
    const double parts[] = {tm.local_ms, tm.launch_ms, tm.stage_ms, tm.wait_ms, tm.node_ms, tm.global_ms, tm.bcast_ms};
    double sum = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i)
        if (!isnan(parts[i])) sum += parts[i];
    EXPECT(sum <= tm.total_ms + 0.01, "the levels add up to %.4f ms, more than the call's %.4f ms", sum,
           tm.total_ms);
    EXPECT(isnan(tm.wait_ms), "wait %.4f ms: a call has no barrier to wait in (waiting shows in its level)",
           tm.wait_ms);
    /* Without per-pass events (the library's default) local_ms is the host's view of the kernels: no launch part. */
    EXPECT(isnan(tm.launch_ms), "launch %.4f ms for %s memory without per-pass timing", tm.launch_ms, mem_name[mem]);
    EXPECT(tm.local_ms >= 0, "local %.4f ms", tm.local_ms);
    EXPECT(res.valid == (rank == 0), "result valid on rank %d: %d", rank, res.valid);
    if (res.valid)
        EXPECT(res.kind == dr_acc_result_kind(dr_acc_select(t, op, mode)), "%s %s: result kind %s",
               dr_dtype_name(t), dr_op_name(op), dr_acc_kind_name(res.kind));

    dr_reference_t ref, *refs = rank == 0 ? malloc((size_t)nranks * sizeof *refs) : NULL;
    dr_reference_compute(&g, dr_acc_select(t, op, mode), first, count, 1, &ref);
    uint64_t depth = tm.depth, max_depth = 0;
    MPI_Allreduce(&depth, &max_depth, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Gather(&ref, (int)sizeof ref, MPI_BYTE, refs, (int)sizeof ref, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 1; r < nranks; ++r) dr_reference_merge(&refs[0], &refs[r]);
        dr_check_t c;
        dr_reference_check(&refs[0], &res.value, max_depth + (uint64_t)nranks, &c);
        EXPECT(c.pass, "%s %s n=%llu in %s memory (%llu chunks): %s", dr_dtype_name(t), dr_op_name(op),
               (unsigned long long)n_total, mem_name[mem], (unsigned long long)tm.chunks, c.detail);
        free(refs);
    }
    if (mem == MEM_DEVICE) cudaFree(buf);
    if (mem == MEM_PINNED) cudaFreeHost(buf);
    free(host);
}

/* This rank's share of n_total, uneven (rank r gets a share proportional to r + 1). */
static void share(uint64_t n_total, uint64_t *first, uint64_t *count)
{
    const uint64_t weight_sum = (uint64_t)nranks * (nranks + 1) / 2;
    *first = 0;
    for (int r = 0; r < rank; ++r) *first += n_total * (uint64_t)(r + 1) / weight_sum;
    *count = rank == nranks - 1 ? n_total - *first : n_total * (uint64_t)(rank + 1) / weight_sum;
}

static int close_rel(double a, double b, double rel)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* stats, argmin, argmax of one type over n_total elements: the library's answer against the CPU backend's. */
static void check_new_op(dreduce_context_t *ctx, dr_acc_mode_t mode, dr_dtype_t t, dr_op_t op, uint64_t n_total,
                         mem_t mem, int prepared)
{
    uint64_t first, count;
    share(n_total, &first, &count);
    const size_t es = dr_dtype_size(t);
    dr_gen_t g = {DR_DATA_RANDOM, t, DR_SUM, 77 + (uint64_t)t, 0, 0};
    void *whole = malloc((size_t)n_total * es + 1);
    dr_cpu_generate(&g, 0, whole, (size_t)n_total, 1);
    void *buf = (char *)whole + first * es;
    if (mem == MEM_DEVICE) {
        if (cudaMalloc(&buf, (size_t)count * es + 1) != cudaSuccess ||
            cudaMemcpy(buf, (char *)whole + first * es, (size_t)count * es, cudaMemcpyDefault) != cudaSuccess)
            EXPECT(0, "device copy of the shard");
    }
    dreduce_result_t r;
    dr_status_t s;
    if (prepared) {
        EXPECT(dreduce_prepare(ctx, t, op, count) == DR_OK, "dreduce_prepare failed");
        s = dreduce_reduce(ctx, count ? buf : NULL, count, t, op, &r);
    } else {
        s = dreduce_reduce_at(ctx, count ? buf : NULL, count, first, t, op, &r);
    }
    EXPECT(s == DR_OK, "%s %s: status %d", dr_dtype_name(t), dr_op_name(op), (int)s);
    const dr_acc_kind_t acc = dr_acc_select(t, op, mode);
    if (rank == 0 && s == DR_OK) {
        dr_partial_t want;
        uint64_t depth = 0;
        EXPECT(dr_cpu_reduce(t, op, acc, whole, (size_t)n_total, 0, 1, &want, &depth) == 0, "CPU backend");
        char what[160];
        snprintf(what, sizeof what, "%s %s (%s) n=%llu in %s memory%s", dr_dtype_name(t), dr_op_name(op),
                 dr_acc_kind_name(acc), (unsigned long long)n_total, mem_name[mem],
                 prepared ? " (prepared)" : " (reduce_at)");
        EXPECT(r.valid && r.kind == acc, "%s: valid %d kind %s", what, r.valid, dr_acc_kind_name(r.kind));
        if (dr_op_is_arg(op)) {
            EXPECT(memcmp(&r.value.arg, &want.value.arg, sizeof want.value.arg) == 0,
                   "%s: %016llx at %llu, the CPU backend %016llx at %llu", what,
                   (unsigned long long)r.value.arg.value.u64, (unsigned long long)r.value.arg.index,
                   (unsigned long long)want.value.arg.value.u64, (unsigned long long)want.value.arg.index);
        } else {
            dreduce_stats_t w;
            dr_stats_result(acc, &want, &w);
            const dreduce_stats_t *g2 = &r.stats;
            EXPECT(g2->count == n_total && w.count == n_total, "%s: count %llu", what,
                   (unsigned long long)g2->count);
            EXPECT(memcmp(&g2->min, &w.min, 8) == 0 && memcmp(&g2->max, &w.max, 8) == 0, "%s: min/max differ",
                   what);
            if (w.sum_is_int)
                EXPECT(memcmp(&g2->sum_int, &w.sum_int, sizeof w.sum_int) == 0 && g2->mean == w.mean,
                       "%s: integer sum or mean differ (mean %.17g vs %.17g)", what, g2->mean, w.mean);
            else if (acc == DR_ACC_STATS_EXACT)
                EXPECT(g2->sum == w.sum && g2->mean == w.mean, "%s: exact sum %.17g / mean %.17g, want %.17g / %.17g",
                       what, g2->sum, g2->mean, w.sum, w.mean);
            else
                EXPECT(close_rel(g2->sum, w.sum, 1e-10) && close_rel(g2->mean, w.mean, 1e-10), "%s: sum/mean", what);
            EXPECT(close_rel(g2->m2, w.m2, 1e-10) && close_rel(g2->var_sample, w.var_sample, 1e-10),
                   "%s: m2 %.17g, the CPU backend %.17g", what, g2->m2, w.m2);
        }
    }
    if (mem == MEM_DEVICE) cudaFree(buf);
    free(whole);
}

static void new_ops(dreduce_context_t *ctx, dr_acc_mode_t mode, int on_gpu)
{
    static const dr_op_t ops[] = {DR_STATS, DR_ARGMIN, DR_ARGMAX};
    const uint64_t sizes[] = {1, 1000003};
    for (int t = 0; t < DR_DTYPE_COUNT; ++t)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
                for (int m = 0; m <= (on_gpu ? MEM_DEVICE : MEM_PAGEABLE); ++m) {
                    if (mode == DR_ACC_MODE_EXACT && ops[o] != DR_STATS) continue;
                    check_new_op(ctx, mode, (dr_dtype_t)t, ops[o], sizes[s], (mem_t)m, (int)((t + s + m) % 2));
                }
}

static void bad_arguments(dreduce_context_t *ctx)
{
    dreduce_result_t r;
    int x = 1;
    EXPECT(dreduce_reduce(ctx, &x, 1, (dr_dtype_t)99, DR_SUM, &r) == DR_ERR_USAGE, "unknown dtype accepted");
    EXPECT(dreduce_reduce(ctx, &x, 1, DR_FLOAT32, DR_BXOR, &r) == DR_ERR_USAGE, "bxor of float32 accepted");
    EXPECT(dreduce_reduce(ctx, NULL, 5, DR_INT32, DR_SUM, &r) == DR_ERR_USAGE, "NULL buffer with count 5 accepted");
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.block = 48;
    dreduce_context_t *bad = NULL;
    EXPECT(dreduce_create(MPI_COMM_WORLD, &cfg, &bad) == DR_ERR_USAGE && bad == NULL, "block 48 accepted");
    /* The context still works after refused calls (nothing was left half done). */
    EXPECT(dreduce_reduce(ctx, &x, 1, DR_INT32, DR_SUM, &r) == DR_OK, "a good call after bad ones failed");
    if (rank == 0) EXPECT(r.valid && r.value.i64 == nranks, "sum of ones: got %lld", (long long)r.value.i64);
}

int main(int argc, char **argv)
{
    const int require_gpu = argc > 1 && strcmp(argv[1], "--require-gpu") == 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.chunk_bytes = 1 << 16; /* many chunks for host arrays on a GPU, and slot reuse */
    cfg.timeout = 120;
    if (require_gpu) cfg.device = DR_DEVICE_GPU;
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
    int min_gpus = gpus;
    MPI_Allreduce(&gpus, &min_gpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (require_gpu && min_gpus == 0) {
        if (rank == 0) printf("no GPU visible: skipped\n");
        MPI_Finalize();
        return 77;
    }
    cfg.share_gpus = 1;
    dreduce_context_t *ctx = NULL;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 3);
    const int on_gpu = dreduce_gpu(ctx) >= 0;
    if (rank == 0)
        printf("libdreduce %s on %d ranks, %s\n", dreduce_version(), nranks, on_gpu ? "GPU backend" : "CPU backend");
    bad_arguments(ctx);
    const uint64_t sizes[] = {0, 1, 1000003};
    for (int t = 0; t < DR_DTYPE_COUNT; ++t)
        for (int op = 0; op < DR_OP_COUNT; ++op) {
            if (!dr_op_valid((dr_dtype_t)t, (dr_op_t)op) || op == DR_STATS || dr_op_is_arg((dr_op_t)op)) continue;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
                for (int m = 0; m <= (on_gpu ? MEM_PINNED : MEM_PAGEABLE); ++m)
                    check_one(ctx, DR_ACC_WIDE, (dr_dtype_t)t, (dr_op_t)op, sizes[s], (mem_t)m,
                              s == 2 && t == 0 ? 3 : 1);
        }
    new_ops(ctx, DR_ACC_WIDE, on_gpu);
    dreduce_destroy(ctx);

    /* The exact mode: float sums exact (checked bit for bit against the independent exact reference, results in
     * float64), the same bits on every call; min, max and integer sums as always; a float product refused on every
     * rank without communicating. */
    cfg.acc_mode = DR_ACC_MODE_EXACT;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 3);
    const dr_dtype_t exact_types[] = {DR_FLOAT32, DR_FLOAT64, DR_FLOAT16, DR_BFLOAT16, DR_INT32};
    for (size_t k = 0; k < sizeof exact_types / sizeof exact_types[0]; ++k)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (int m = 0; m <= (on_gpu ? MEM_PINNED : MEM_PAGEABLE); ++m) {
                check_one(ctx, DR_ACC_MODE_EXACT, exact_types[k], DR_SUM, sizes[s], (mem_t)m, s == 2 ? 3 : 1);
                if (s == 2) check_one(ctx, DR_ACC_MODE_EXACT, exact_types[k], DR_MAX, sizes[s], (mem_t)m, 1);
            }
    dreduce_result_t r;
    float one = 1;
    EXPECT(dreduce_reduce(ctx, &one, 1, DR_FLOAT32, DR_PROD, &r) == DR_ERR_USAGE && !r.valid,
           "an exact float product was accepted");
    EXPECT(dreduce_reduce(ctx, &one, 1, DR_FLOAT32, DR_SUM, &r) == DR_OK, "an exact sum after a refused call failed");
    if (rank == 0) EXPECT(r.valid && r.value.f64 == nranks, "exact sum of ones: got %g", r.value.f64);
    new_ops(ctx, DR_ACC_MODE_EXACT, on_gpu);
    dreduce_destroy(ctx);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %d failures\n", all ? "FAILED" : "passed", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
