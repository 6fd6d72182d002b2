/* libdreduce through its public API (include/dreduce.h), on several ranks: every (type, op) row over random data,
 * the buffer in host memory (pageable; in small chunks so the chunk pipeline runs many times), in GPU memory and in
 * pinned host memory where there is a GPU; uneven shards (one rank with none); the result checked against the host
 * reference (exact for integers, the stated float bound); repeated calls give the same bits and allocate no device
 * memory; bad arguments return DR_ERR_USAGE on every rank without communicating; a context in the exact mode gives
 * float sums bit for bit equal to the independent exact reference.
 * Usage: test_library [--require-gpu] (exit 77 when required and there is no GPU). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"
#include "dreduce.h"
#include "reference.h"

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
    dr_gen_t g = {DR_DATA_RANDOM, t, op, 1000 + (uint64_t)t * 16 + (uint64_t)op, 0};
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
            if (!dr_op_valid((dr_dtype_t)t, (dr_op_t)op)) continue;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
                for (int m = 0; m <= (on_gpu ? MEM_PINNED : MEM_PAGEABLE); ++m)
                    check_one(ctx, DR_ACC_WIDE, (dr_dtype_t)t, (dr_op_t)op, sizes[s], (mem_t)m,
                              s == 2 && t == 0 ? 3 : 1);
        }
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
    dreduce_destroy(ctx);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %d failures\n", all ? "FAILED" : "passed", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
