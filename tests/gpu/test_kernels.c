/* Every kernel level x every table row (type, op, accumulator) x sizes around every boundary x block sizes x
 * misaligned starts, on the GPU, against the host reference (src/reference.c). Also: the input is never modified,
 * the poisoned result is always overwritten, and repeated runs give the same bits.
 *   test_kernels           the matrix above (fresh random data; seed printed, DREDUCE_TEST_SEED to repeat)
 *   test_kernels --large   multipass past 2^32 elements (int32, n = 2^32 + 5: 17 GiB of device memory)
 * Exits 77 (skipped) when no GPU is visible. */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../kernels/launch.h"
#include "dreduce/table.h"
#include "parallel.h"
#include "reference.h"

#define SKIP 77

static int failures, cases;

#define CUDA_OR_DIE(call)                                                                                      \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "FATAL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__);      \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

typedef struct {
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
} row_t;

static const row_t rows[] = {
#define X(DT, OP, op, ACC, acc) {DR_##DT, DR_##OP, DR_ACC_##ACC},
    DR_REDUCTION_TABLE
#undef X
};

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct {
    void *d_base, *d_work, *d_result;
    size_t work_bytes;
    void *h_before, *h_after;
    int threads;
} bufs_t;

static void ensure_work(bufs_t *b, size_t bytes)
{
    if (bytes <= b->work_bytes) return;
    if (b->d_work) CUDA_OR_DIE(cudaFree(b->d_work));
    CUDA_OR_DIE(cudaMalloc(&b->d_work, bytes));
    CUDA_OR_DIE(cudaMemset(b->d_work, 0, bytes)); /* launch.h: zero before first use */
    b->work_bytes = bytes;
}

/* Run one reduction and check it; returns 1 if it passed. */
static int run_case(bufs_t *b, const row_t *row, dr_kernel_t kernel, int block, const void *d_in, size_t n,
                    const dr_reference_t *ref, dr_value_t *out, const char *what)
{
    dr_gpu_reduce_t r = {kernel, row->dtype, row->op, row->acc, block, 0, d_in, n, NULL, b->d_result};
    dr_gpu_plan_t plan;
    ++cases;
    cudaError_t e = dr_gpu_plan(&r, &plan);
    if (e != cudaSuccess) {
        ++failures;
        printf("FAIL %s: plan: %s\n", what, cudaGetErrorString(e));
        return 0;
    }
    ensure_work(b, plan.work_bytes);
    r.d_work = b->d_work;
    /* launch.h: a workspace handed to a new plan starts zeroed (the previous kernel left its partials there). */
    CUDA_OR_DIE(cudaMemset(b->d_work, 0, plan.work_bytes < 4096 ? plan.work_bytes : 4096));
    CUDA_OR_DIE(cudaMemset(b->d_result, 0xA5, sizeof(dr_value_t))); /* poison */
    e = dr_gpu_reduce(&r, &plan, 0, NULL);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        ++failures;
        printf("FAIL %s: launch: %s\n", what, cudaGetErrorString(e));
        exit(1); /* a kernel fault leaves the context unusable */
    }
    memset(out, 0, sizeof *out);
    CUDA_OR_DIE(cudaMemcpy(out, b->d_result, dr_acc_kind_size(row->acc), cudaMemcpyDeviceToHost));
    dr_check_t c;
    dr_reference_check(ref, out, plan.serial_depth, &c);
    if (!c.pass) {
        ++failures;
        if (failures <= 40) printf("FAIL %s: %s\n", what, c.detail);
        return 0;
    }
    return 1;
}

static int matrix(uint64_t seed)
{
    const dr_kernel_t kernels[] = {DR_KERNEL_NEIGHBORED, DR_KERNEL_INTERLEAVED, DR_KERNEL_SMEM, DR_KERNEL_SMEM2,
                                   DR_KERNEL_UNROLL,     DR_KERNEL_SHUFFLE,     DR_KERNEL_MULTIPASS};
    const int blocks[] = {32, 128, 256, 1024};
    uint64_t rng = seed;
    size_t sizes[32];
    int nsizes = 0;
    const size_t fixed[] = {0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1025, 65537, (1u << 20) + 7};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) sizes[nsizes++] = fixed[i];
    for (int i = 0; i < 3; ++i) sizes[nsizes++] = 1 + splitmix(&rng) % 3000000; /* random sizes */
    size_t max_n = 0;
    for (int i = 0; i < nsizes; ++i)
        if (sizes[i] > max_n) max_n = sizes[i];

    bufs_t b = {0};
    b.threads = dr_parallel_default_threads();
    const size_t max_bytes = (max_n + 16) * 8;
    CUDA_OR_DIE(cudaMalloc(&b.d_base, max_bytes));
    CUDA_OR_DIE(cudaMalloc(&b.d_result, sizeof(dr_value_t)));
    b.h_before = malloc(max_bytes);
    b.h_after = malloc(max_bytes);
    if (!b.h_before || !b.h_after) return 1;

    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
        const row_t *row = &rows[ri];
        const size_t esize = dr_dtype_size(row->dtype);
        const int per_row_failures = failures;
        for (int si = 0; si < nsizes; ++si) {
            const size_t n = sizes[si];
            const int offsets[] = {0, 1, 3};
            for (int oi = 0; oi < 3; ++oi) {
                const int off = offsets[oi];
                dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, splitmix(&rng), 0};
                const uint64_t first = splitmix(&rng) % 1000000;
                void *d_in = (char *)b.d_base + (size_t)off * esize;
                CUDA_OR_DIE(dr_gpu_generate(&g, first, d_in, n, 0));
                CUDA_OR_DIE(cudaMemcpy(b.h_before, d_in, n * esize, cudaMemcpyDeviceToHost));
                dr_reference_t ref;
                dr_reference_compute(&g, row->acc, first, n, b.threads, &ref);
                for (size_t ki = 0; ki < sizeof kernels / sizeof kernels[0]; ++ki) {
                    /* Misaligned starts matter to the vector loads of multipass; the levels see offset 1 too. */
                    if (off == 3 && kernels[ki] != DR_KERNEL_MULTIPASS) continue;
                    for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; ++bi) {
                        char what[160];
                        dr_value_t out;
                        snprintf(what, sizeof what, "%s %s %s->%s n=%zu block=%d offset=%d",
                                 dr_kernel_name(kernels[ki]), dr_op_name(row->op), dr_dtype_name(row->dtype),
                                 dr_acc_kind_name(row->acc), n, blocks[bi], off);
                        run_case(&b, row, kernels[ki], blocks[bi], d_in, n, &ref, &out, what);
                    }
                }
                CUDA_OR_DIE(cudaMemcpy(b.h_after, d_in, n * esize, cudaMemcpyDeviceToHost));
                ++cases;
                if (memcmp(b.h_before, b.h_after, n * esize) != 0) {
                    ++failures;
                    printf("FAIL %s %s n=%zu: a kernel modified its input\n", dr_dtype_name(row->dtype),
                           dr_op_name(row->op), n);
                }
            }
        }
        /* Determinism: the production kernel gives the same bits every time on the same input. */
        {
            const size_t n = (1u << 20) + 7;
            dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, splitmix(&rng), 0};
            CUDA_OR_DIE(dr_gpu_generate(&g, 0, b.d_base, n, 0));
            dr_reference_t ref;
            dr_reference_compute(&g, row->acc, 0, n, b.threads, &ref);
            dr_value_t v0, v;
            run_case(&b, row, DR_KERNEL_MULTIPASS, 256, b.d_base, n, &ref, &v0, "determinism first run");
            for (int rep = 0; rep < 20; ++rep) {
                run_case(&b, row, DR_KERNEL_MULTIPASS, 256, b.d_base, n, &ref, &v, "determinism repeat");
                ++cases;
                if (memcmp(&v, &v0, dr_acc_kind_size(row->acc)) != 0) {
                    ++failures;
                    printf("FAIL multipass %s %s: repeat %d gave different bits\n", dr_dtype_name(row->dtype),
                           dr_op_name(row->op), rep);
                    break;
                }
            }
        }
        printf("%-4s %-5s %-9s -> %-8s\n", failures == per_row_failures ? "ok" : "FAIL", dr_op_name(row->op),
               dr_dtype_name(row->dtype), dr_acc_kind_name(row->acc));
    }
    cudaFree(b.d_base);
    cudaFree(b.d_work);
    cudaFree(b.d_result);
    free(b.h_before);
    free(b.h_after);
    return 0;
}

/* Past 2^32 elements: 64-bit counts and indices everywhere. */
static int large(uint64_t seed)
{
    const size_t n = (1ull << 32) + 5;
    size_t free_b = 0, total_b = 0;
    CUDA_OR_DIE(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < n * 4 + (1u << 30)) {
        printf("skipped: needs %.1f GiB of free device memory, %.1f GiB free\n", (double)(n * 4) / (1u << 30),
               (double)free_b / (1u << 30));
        return SKIP;
    }
    bufs_t b = {0};
    b.threads = dr_parallel_default_threads();
    CUDA_OR_DIE(cudaMalloc(&b.d_base, n * 4));
    CUDA_OR_DIE(cudaMalloc(&b.d_result, sizeof(dr_value_t)));
    const row_t cases_large[] = {{DR_INT32, DR_SUM, DR_ACC_I64}, {DR_INT32, DR_MIN, DR_ACC_I32},
                                 {DR_INT32, DR_BXOR, DR_ACC_I32}};
    for (size_t i = 0; i < sizeof cases_large / sizeof cases_large[0]; ++i) {
        const row_t *row = &cases_large[i];
        dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, seed + i, 0};
        CUDA_OR_DIE(dr_gpu_generate(&g, 0, b.d_base, n, 0));
        dr_reference_t ref;
        dr_reference_compute(&g, row->acc, 0, n, b.threads, &ref);
        for (int block = 256; block <= 1024; block *= 4) {
            char what[96];
            dr_value_t out;
            snprintf(what, sizeof what, "multipass %s int32 n=2^32+5 block=%d", dr_op_name(row->op), block);
            if (run_case(&b, row, DR_KERNEL_MULTIPASS, block, b.d_base, n, &ref, &out, what)) {
                char v[64];
                dr_value_format(row->acc, &out, v, sizeof v);
                printf("ok   %s = %s\n", what, v);
            }
        }
    }
    /* The last element alone must count: put a unique minimum there. */
    {
        const row_t row = {DR_INT32, DR_MIN, DR_ACC_I32};
        dr_gen_t g = {DR_DATA_CONST, DR_INT32, DR_MIN, 0, 5};
        CUDA_OR_DIE(dr_gpu_generate(&g, 0, b.d_base, n, 0));
        const int32_t low = -7;
        CUDA_OR_DIE(cudaMemcpy((int32_t *)b.d_base + (n - 1), &low, 4, cudaMemcpyHostToDevice));
        dr_reference_t ref;
        memset(&ref, 0, sizeof ref);
        ref.acc = DR_ACC_I32;
        ref.op = DR_MIN;
        ref.count = n;
        ref.exact.i32 = -7;
        dr_value_t out;
        run_case(&b, &row, DR_KERNEL_MULTIPASS, 256, b.d_base, n, &ref, &out, "multipass min with the minimum at index 2^32+4");
    }
    cudaFree(b.d_base);
    cudaFree(b.d_work);
    cudaFree(b.d_result);
    return 0;
}

int main(int argc, char **argv)
{
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0) {
        printf("no GPU visible: skipped\n");
        return SKIP;
    }
    const char *env = getenv("DREDUCE_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("seed %" PRIu64 " (set DREDUCE_TEST_SEED to repeat)\n", seed);
    CUDA_OR_DIE(cudaSetDevice(0));
    int rc = argc > 1 && strcmp(argv[1], "--large") == 0 ? large(seed) : matrix(seed);
    if (rc == SKIP) return SKIP;
    printf("%d passed, %d failed\n", cases - failures, failures);
    return failures || rc ? 1 : 0;
}
