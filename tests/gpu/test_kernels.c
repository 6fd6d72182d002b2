/* Every kernel level x every table row (type, op, accumulator) x sizes around every boundary x block sizes x
 * misaligned starts, on the GPU, against the host reference (src/cli/reference.c). Also: the input is never modified,
 * the poisoned result is always overwritten, and repeated runs give the same bits.
 *   test_kernels                the matrix above (fresh random data; seed printed, DREDUCE_TEST_SEED to repeat),
 *                               then float min/max over signed zeros, infinities and NaNs, to the bit, then
 *                               8- and 16-bit products over the types' whole range (odd values), to the bit, then the
 *                               exact sums (DR_EXACT_TABLE, multipass only): their plans, the levels' refusal,
 *                               and data sets from normal-ish to every exponent, cancelling, zeros, infinities and
 *                               NaNs x sizes x starts x every block size, the dr_exact_t to the byte (exact_sums())
 * "multipass-bulk" is multipass's bulk-copy path (large inputs on Hopper) forced at every size with
 * bulk_from_bytes = 1, so its boundaries are reachable with small inputs; it runs wherever multipass does. The
 * exact sums' bulk path (float64) runs with the exact sums (--kernel exact or multipass, or every kernel).
 *   test_kernels --large        multipass past 2^32 elements (int32, n = 2^32 + 5: 17 GiB of device memory)
 *   test_kernels --boundary [--subset | --rest] [--shard K/N] [--blocks B,B,...] [--kernel NAME]
 *                               the compute-sanitizer driver (tests/gpu/sanitize.sh): every level x every row (or,
 *                               with --subset, 18 rows covering every type, op and accumulator; --rest, the other
 *                               64; --shard K/N, every N-th of those from the K-th; the exact rows last) at the
 *                               sizes and starts where each kernel changes behaviour, computed from dr_gpu_plan;
 *                               each input, workspace and result is its own allocation of exactly the size the
 *                               contract names, so an access one element past any of them is out of bounds (see
 *                               boundary()); --kernel runs one kernel (a level's name, multipass or
 *                               multipass-bulk) instead of all, or the exact sums alone (exact)
 *   test_kernels --plant short-result | unzeroed-work
 *                               one multipass reduction that breaks launch.h's contract on purpose (a result buffer
 *                               one byte short; a workspace never zeroed), to show that memcheck and initcheck
 *                               report it (sanitize.sh --expect-errors)
 *   test_kernels --determinism [--reps R]
 *                               multipass, every row (exact sums too), on the cluster, last-block-done,
 *                               grid-stride-wrap and bulk paths:
 *                               R runs (default 100) of the same input, reusing the workspace as dreduce does, must
 *                               give the same bits
 * Exits 77 (skipped) when no GPU is visible. */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "generate.h"
#include "launch.h"
#include "accum.h"
#include "table.h"
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

/* The bulk-copy path of multipass as a kernel of its own here: multipass with bulk_from_bytes = 1. */
#define KERNEL_BULK ((dr_kernel_t)(DR_KERNEL_MULTIPASS + 100))

static int is_multipass(dr_kernel_t k) { return k == DR_KERNEL_MULTIPASS || k == KERNEL_BULK; }
static const char *kernel_name(dr_kernel_t k) { return k == KERNEL_BULK ? "multipass-bulk" : dr_kernel_name(k); }

static dr_gpu_reduce_t request(dr_kernel_t kernel, const row_t *row, int block, const void *d_in, size_t n,
                               void *d_result)
{
    dr_gpu_reduce_t r = {kernel == KERNEL_BULK ? DR_KERNEL_MULTIPASS : kernel,
                         row->dtype, row->op, row->acc, block, 0, d_in, n, 0, NULL, d_result,
                         kernel == KERNEL_BULK ? 1 : 0, NULL, 0, 0, NULL};
    return r;
}

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

/* Count one case and plan it; 0 (a failure, reported) if no plan. */
static int plan_case(const dr_gpu_reduce_t *r, dr_gpu_plan_t *plan, const char *what)
{
    ++cases;
    const cudaError_t e = dr_gpu_plan(r, plan);
    if (e == cudaSuccess) return 1;
    ++failures;
    printf("FAIL %s: plan: %s\n", what, cudaGetErrorString(e));
    return 0;
}

/* launch.h's done word: multipass requests carry one (a mapped word and a fresh sequence number), as the library's
 * calls on a mapped partial do, and after the launch the word must hold the request's number. */
static uint32_t *done_host, *done_dev, done_seq;

static void arm_done(dr_gpu_reduce_t *r)
{
    if (!dr_gpu_signals_done(r)) return;
    if (!done_host) {
        CUDA_OR_DIE(cudaHostAlloc((void **)&done_host, sizeof *done_host, cudaHostAllocMapped));
        *done_host = 0;
        CUDA_OR_DIE(cudaHostGetDevicePointer((void **)&done_dev, done_host, 0));
    }
    r->d_done = done_dev;
    r->done_seq = ++done_seq;
}

/* After the launch has completed: 1 if the request's done word holds its number (or it has none). */
static int done_signalled(const dr_gpu_reduce_t *r, const char *what)
{
    if (!r->d_done || *(volatile uint32_t *)done_host == r->done_seq) return 1;
    ++failures;
    if (failures <= 40)
        printf("FAIL %s: done word %u after the launch, expected %u\n", what, *(volatile uint32_t *)done_host,
               r->done_seq);
    return 0;
}

/* Run one reduction and check it; returns 1 if it passed. */
static int run_case(bufs_t *b, const row_t *row, dr_kernel_t kernel, int block, const void *d_in, size_t n,
                    const dr_reference_t *ref, dr_value_t *out, const char *what)
{
    dr_gpu_reduce_t r = request(kernel, row, block, d_in, n, b->d_result);
    dr_gpu_plan_t plan;
    if (!plan_case(&r, &plan, what)) return 0;
    ensure_work(b, plan.work_bytes);
    r.d_work = b->d_work;
    /* launch.h: a workspace handed to a new plan starts zeroed (the previous kernel left its partials there). */
    CUDA_OR_DIE(cudaMemset(b->d_work, 0, plan.work_bytes < 4096 ? plan.work_bytes : 4096));
    CUDA_OR_DIE(cudaMemset(b->d_result, 0xA5, sizeof(dr_value_t))); /* poison */
    arm_done(&r);
    cudaError_t e = dr_gpu_reduce(&r, &plan, 0, NULL);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        ++failures;
        printf("FAIL %s: launch: %s\n", what, cudaGetErrorString(e));
        exit(1); /* a kernel fault leaves the context unusable */
    }
    if (!done_signalled(&r, what)) return 0;
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
                                   DR_KERNEL_UNROLL,     DR_KERNEL_SHUFFLE,     DR_KERNEL_MULTIPASS, KERNEL_BULK};
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
                dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, splitmix(&rng), 0, 0};
                const uint64_t first = splitmix(&rng) % 1000000;
                void *d_in = (char *)b.d_base + (size_t)off * esize;
                CUDA_OR_DIE(dr_gpu_generate(&g, first, d_in, n, 0));
                CUDA_OR_DIE(cudaMemcpy(b.h_before, d_in, n * esize, cudaMemcpyDeviceToHost));
                dr_reference_t ref;
                dr_reference_compute(&g, row->acc, first, n, b.threads, &ref);
                for (size_t ki = 0; ki < sizeof kernels / sizeof kernels[0]; ++ki) {
                    /* Misaligned starts matter to the vector loads of multipass; the levels see offset 1 too. */
                    if (off == 3 && !is_multipass(kernels[ki])) continue;
                    for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; ++bi) {
                        char what[160];
                        dr_value_t out;
                        snprintf(what, sizeof what, "%s %s %s->%s n=%zu block=%d offset=%d",
                                 kernel_name(kernels[ki]), dr_op_name(row->op), dr_dtype_name(row->dtype),
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
            dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, splitmix(&rng), 0, 0};
            CUDA_OR_DIE(dr_gpu_generate(&g, 0, b.d_base, n, 0));
            dr_reference_t ref;
            dr_reference_compute(&g, row->acc, 0, n, b.threads, &ref);
            const dr_kernel_t paths[] = {DR_KERNEL_MULTIPASS, KERNEL_BULK};
            for (int pi = 0; pi < 2; ++pi) {
                dr_value_t v0, v;
                run_case(&b, row, paths[pi], 256, b.d_base, n, &ref, &v0, "determinism first run");
                for (int rep = 0; rep < 20; ++rep) {
                    run_case(&b, row, paths[pi], 256, b.d_base, n, &ref, &v, "determinism repeat");
                    ++cases;
                    if (memcmp(&v, &v0, dr_acc_kind_size(row->acc)) != 0) {
                        ++failures;
                        printf("FAIL %s %s %s: repeat %d gave different bits\n", kernel_name(paths[pi]),
                               dr_dtype_name(row->dtype), dr_op_name(row->op), rep);
                        break;
                    }
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

/* ---------------------------------------------------------------------------------------------------------------
 * Float min/max on special values: signed zeros, infinities and NaNs of any sign and payload at random places, every
 * kernel, checked to the bit against the host's fold with accum.h's rules. The kernels compute float32 min/max with
 * the GPU's min.NaN/max.NaN instructions, the host with a select chain: both must give the canonical NaN and order
 * -0 below +0. Random data never holds these values, so the matrix cannot see a difference here.
 * ------------------------------------------------------------------------------------------------------------- */

enum { SPECIAL_POS_ZERO, SPECIAL_NEG_ZERO, SPECIAL_POS_INF, SPECIAL_NEG_INF, SPECIAL_NAN, SPECIAL_FINITE };

/* Element `kind` of type t into dst; r supplies the sign, payload and finite value (small integers, exact in every
 * float type). */
static void special_encode(dr_dtype_t t, int kind, uint64_t r, void *dst)
{
    static const uint16_t f16_int[8] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800}; /* 1..8 */
    const int neg = (int)(r >> 63);
    const int v = 1 + (int)((r >> 8) % 8);
    if (t == DR_FLOAT64) {
        uint64_t b = kind == SPECIAL_POS_ZERO   ? 0
                     : kind == SPECIAL_NEG_ZERO ? 1ull << 63
                     : kind == SPECIAL_POS_INF  ? 0x7ff0000000000000ull
                     : kind == SPECIAL_NEG_INF  ? 0xfff0000000000000ull
                     : kind == SPECIAL_NAN ? ((uint64_t)neg << 63) | 0x7ff0000000000000ull | (1 + r % 0xfffffffffffffull)
                                           : 0;
        if (kind == SPECIAL_FINITE) {
            const double d = neg ? -v : v;
            memcpy(&b, &d, 8);
        }
        memcpy(dst, &b, 8);
        return;
    }
    uint32_t b = kind == SPECIAL_POS_ZERO   ? 0
                 : kind == SPECIAL_NEG_ZERO ? 0x80000000u
                 : kind == SPECIAL_POS_INF  ? 0x7f800000u
                 : kind == SPECIAL_NEG_INF  ? 0xff800000u
                 : kind == SPECIAL_NAN      ? ((uint32_t)neg << 31) | 0x7f800000u | (uint32_t)(1 + r % 0x7fffffu)
                                            : 0;
    if (kind == SPECIAL_FINITE) {
        const float f = neg ? -(float)v : (float)v;
        memcpy(&b, &f, 4);
    }
    if (t == DR_FLOAT32) {
        memcpy(dst, &b, 4);
        return;
    }
    uint16_t h;
    if (t == DR_BFLOAT16) {
        h = (uint16_t)(b >> 16);
        if (kind == SPECIAL_NAN && (h & 0x7f) == 0) h |= 1; /* keep it a NaN with the low payload bits cut */
    } else {
        const uint16_t sign = (uint16_t)(b >> 16) & 0x8000u;
        h = kind == SPECIAL_POS_ZERO || kind == SPECIAL_NEG_ZERO ? sign
            : kind == SPECIAL_POS_INF || kind == SPECIAL_NEG_INF ? (uint16_t)(sign | 0x7c00u)
            : kind == SPECIAL_NAN ? (uint16_t)(sign | 0x7c00u | (1 + r % 0x3ffu))
                                  : (uint16_t)((neg ? 0x8000u : 0) | f16_int[v - 1]);
    }
    memcpy(dst, &h, 2);
}

/* The element as the accumulator sees it (16-bit floats widen exactly to float32). */
static dr_value_t special_widen(const row_t *row, const void *src)
{
    dr_value_t v;
    memset(&v, 0, sizeof v);
    if (row->dtype == DR_FLOAT64) memcpy(&v.f64, src, 8);
    else if (row->dtype == DR_FLOAT32) memcpy(&v.f32, src, 4);
    else {
        uint16_t h;
        memcpy(&h, src, 2);
        v.f32 = row->dtype == DR_FLOAT16 ? dr_f16_to_f32(h) : dr_bf16_to_f32(h);
    }
    return v;
}

/* Every kernel (the bulk path too) at block 256 and 1024 on d[0..n) must give `want` to the bit; `what` names the
 * case in a failure. */
static void every_kernel_gives(bufs_t *b, const row_t *row, const void *d, size_t n, const dr_value_t *want,
                               const char *what)
{
    const dr_kernel_t kernels[] = {DR_KERNEL_NEIGHBORED, DR_KERNEL_INTERLEAVED, DR_KERNEL_SMEM, DR_KERNEL_SMEM2,
                                   DR_KERNEL_UNROLL,     DR_KERNEL_SHUFFLE,     DR_KERNEL_MULTIPASS, KERNEL_BULK};
    const int blocks[] = {256, 1024};
    const size_t size = dr_acc_kind_size(row->acc);
    for (size_t ki = 0; ki < sizeof kernels / sizeof kernels[0]; ++ki) {
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; ++bi) {
            dr_gpu_reduce_t r = request(kernels[ki], row, blocks[bi], d, n, b->d_result);
            dr_gpu_plan_t plan;
            char full[300];
            snprintf(full, sizeof full, "%s block=%d %s", what, blocks[bi], kernel_name(kernels[ki]));
            if (!plan_case(&r, &plan, full)) continue;
            ensure_work(b, plan.work_bytes);
            r.d_work = b->d_work;
            CUDA_OR_DIE(cudaMemset(b->d_work, 0, plan.work_bytes));
            CUDA_OR_DIE(cudaMemset(b->d_result, 0xA5, sizeof(dr_value_t)));
            CUDA_OR_DIE(dr_gpu_reduce(&r, &plan, 0, NULL));
            CUDA_OR_DIE(cudaDeviceSynchronize());
            dr_value_t got;
            memset(&got, 0, sizeof got);
            CUDA_OR_DIE(cudaMemcpy(&got, b->d_result, size, cudaMemcpyDeviceToHost));
            if (memcmp(&got, want, size) != 0) {
                ++failures;
                if (failures <= 40) {
                    uint64_t gb = 0, wb = 0;
                    memcpy(&gb, &got, size);
                    memcpy(&wb, want, size);
                    printf("FAIL %s: bits 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", full, gb, wb);
                }
            }
        }
    }
}

static int special_values(uint64_t seed)
{
    /* one block, a cluster, the last-block-done pass (4-byte types at block 256); the grid-stride wrap is left to the
     * random matrix, the combine rules being the same at every size */
    const size_t sizes[] = {1, 7, 1000, 4099, 65537, (1u << 20) + 3};
    const size_t max_n = (1u << 20) + 3;
    const char *const trials[] = {"+0 but one -0", "-0 but one +0", "signed zeros", "zeros, infinities, finite",
                                  "those and one NaN", "NaNs of any sign and payload everywhere"};
    uint64_t rng = seed ^ 0x5bd1e995u;
    unsigned char *h = malloc(max_n * 8);
    void *d_in = NULL, *d_result = NULL;
    if (!h) return 1;
    CUDA_OR_DIE(cudaMalloc(&d_in, max_n * 8 + 8));
    CUDA_OR_DIE(cudaMalloc(&d_result, sizeof(dr_value_t)));
    bufs_t b = {0};
    b.d_result = d_result;
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
        const row_t *row = &rows[ri];
        if (row->op != DR_MIN && row->op != DR_MAX) continue;
        if (row->dtype != DR_FLOAT32 && row->dtype != DR_FLOAT64 && row->dtype != DR_FLOAT16 &&
            row->dtype != DR_BFLOAT16)
            continue;
        const int before = failures;
        const size_t esize = dr_dtype_size(row->dtype);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const size_t n = sizes[si];
            for (int t = 0; t < 6; ++t) {
                const size_t odd = splitmix(&rng) % n; /* the one element that differs, or the one NaN */
                for (size_t i = 0; i < n; ++i) {
                    const uint64_t r = splitmix(&rng);
                    int kind;
                    switch (t) {
                    case 0: kind = i == odd ? SPECIAL_NEG_ZERO : SPECIAL_POS_ZERO; break;
                    case 1: kind = i == odd ? SPECIAL_POS_ZERO : SPECIAL_NEG_ZERO; break;
                    case 2: kind = r & 1 ? SPECIAL_NEG_ZERO : SPECIAL_POS_ZERO; break;
                    case 3:
                    case 4: kind = i == odd && t == 4 ? SPECIAL_NAN : (int)(r % 6 == SPECIAL_NAN ? SPECIAL_FINITE : r % 6); break;
                    default: kind = (int)(r % 6); break;
                    }
                    special_encode(row->dtype, kind, r, h + i * esize);
                }
                dr_value_t want;
                dr_acc_identity(row->acc, row->op, &want);
                for (size_t i = 0; i < n; ++i) {
                    const dr_value_t x = special_widen(row, h + i * esize);
                    dr_acc_combine(row->acc, row->op, &want, &x);
                }
                const size_t off = (si & 1) ? 1 : 0; /* every other size misaligned */
                void *d = (char *)d_in + off * esize;
                CUDA_OR_DIE(cudaMemcpy(d, h, n * esize, cudaMemcpyHostToDevice));
                char what[200];
                snprintf(what, sizeof what, "special values (%s) %s %s->%s n=%zu offset=%zu", trials[t],
                         dr_op_name(row->op), dr_dtype_name(row->dtype), dr_acc_kind_name(row->acc), n, off);
                every_kernel_gives(&b, row, d, n, &want, what);
            }
        }
        printf("%-4s special values %-3s %-9s -> %-8s\n", failures == before ? "ok" : "FAIL", dr_op_name(row->op),
               dr_dtype_name(row->dtype), dr_acc_kind_name(row->acc));
    }
    free(h);
    cudaFree(d_in);
    cudaFree(d_result);
    cudaFree(b.d_work);
    return 0;
}

/* ---------------------------------------------------------------------------------------------------------------
 * 8- and 16-bit products over the types' whole range. multipass multiplies a word's elements in 32 bits and two
 * words' products in 64 (kernels/multipass.cu, word_product), and random data for prod holds only {1, -1, 3, -3}: here
 * every element is an odd value of the full range (so the product modulo 2^64 stays odd and every factor shows), and
 * in some trials one element is the type's most negative (or, unsigned, largest even) value. Checked to the bit
 * against the host's fold with accum.h's rules.
 * ------------------------------------------------------------------------------------------------------------- */

static int small_int_products(uint64_t seed)
{
    const size_t sizes[] = {1, 3, 15, 16, 17, 33, 1000, 4099, 65537, (1u << 20) + 3};
    const size_t max_n = (1u << 20) + 3;
    uint64_t rng = seed ^ 0x9e3779b9u;
    unsigned char *h = malloc(max_n * 2);
    bufs_t b = {0};
    if (!h) return 1;
    CUDA_OR_DIE(cudaMalloc(&b.d_base, max_n * 2 + 16));
    CUDA_OR_DIE(cudaMalloc(&b.d_result, sizeof(dr_value_t)));
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
        const row_t *row = &rows[ri];
        const dr_dtype_t t = row->dtype;
        if (row->op != DR_PROD || (t != DR_INT8 && t != DR_UINT8 && t != DR_INT16 && t != DR_UINT16)) continue;
        const int before = failures;
        const size_t esize = dr_dtype_size(t);
        const int is_signed = t == DR_INT8 || t == DR_INT16;
        const uint64_t mask = esize == 1 ? 0xffu : 0xffffu;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const size_t n = sizes[si];
            for (int trial = 0; trial < 2; ++trial) {
                const size_t even_at = splitmix(&rng) % n; /* trial 1: the one even element */
                dr_value_t want;
                dr_acc_identity(row->acc, DR_PROD, &want);
                for (size_t i = 0; i < n; ++i) {
                    uint64_t bits = (splitmix(&rng) | 1) & mask;
                    if (trial == 1 && i == even_at) bits = is_signed ? (mask >> 1) + 1 : mask - 1; /* -128, 254 */
                    memcpy(h + i * esize, &bits, esize); /* little-endian */
                    dr_value_t x;
                    memset(&x, 0, sizeof x);
                    if (is_signed) x.i64 = esize == 1 ? (int64_t)(int8_t)bits : (int64_t)(int16_t)bits;
                    else x.u64 = bits;
                    dr_acc_combine(row->acc, DR_PROD, &want, &x);
                }
                const size_t off = si % 3; /* 16-byte vectors starting at element 0, 1 or 2 */
                void *d = (char *)b.d_base + off * esize;
                CUDA_OR_DIE(cudaMemcpy(d, h, n * esize, cudaMemcpyHostToDevice));
                char what[200];
                snprintf(what, sizeof what, "full-range products (%s) %s->%s n=%zu offset=%zu",
                         trial ? "odd values and one even" : "odd values", dr_dtype_name(t),
                         dr_acc_kind_name(row->acc), n, off);
                every_kernel_gives(&b, row, d, n, &want, what);
                ++cases;
            }
        }
        printf("%-4s full-range products %-9s -> %-8s\n", failures == before ? "ok" : "FAIL", dr_dtype_name(t),
               dr_acc_kind_name(row->acc));
    }
    free(h);
    cudaFree(b.d_base);
    cudaFree(b.d_result);
    cudaFree(b.d_work);
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
        dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, seed + i, 0, 0};
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
        dr_gen_t g = {DR_DATA_CONST, DR_INT32, DR_MIN, 0, 5, 0};
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

/* ---------------------------------------------------------------------------------------------------------------
 * --boundary, --plant and --determinism
 * ------------------------------------------------------------------------------------------------------------- */

static const dr_kernel_t all_kernels[] = {DR_KERNEL_NEIGHBORED, DR_KERNEL_INTERLEAVED, DR_KERNEL_SMEM, DR_KERNEL_SMEM2,
                                          DR_KERNEL_UNROLL,     DR_KERNEL_SHUFFLE,     DR_KERNEL_MULTIPASS,
                                          KERNEL_BULK};
#define NKERNELS (sizeof all_kernels / sizeof all_kernels[0])
/* boundary() keeps the (kernel, block) pairs of a size in one 64-bit mask, with up to 8 block sizes. */
_Static_assert(NKERNELS * 8 <= 64, "too many kernels for boundary()'s 64-bit (kernel, block) mask");

/* Racecheck's representative subset: 18 rows that between them take every input type, every op and every
 * accumulator kind (the shared-memory code of a kernel depends on the accumulator, not on the op), exact sums of an
 * 8-byte and a 2-byte type among them. */
static const row_t subset_rows[] = {
    {DR_INT32, DR_SUM, DR_ACC_I64},     {DR_INT32, DR_BXOR, DR_ACC_I32},  {DR_UINT32, DR_MIN, DR_ACC_U32},
    {DR_UINT32, DR_PROD, DR_ACC_U64},   {DR_INT64, DR_MAX, DR_ACC_I64},   {DR_UINT64, DR_BAND, DR_ACC_U64},
    {DR_UINT64, DR_BOR, DR_ACC_U64},    {DR_FLOAT32, DR_SUM, DR_ACC_F32}, {DR_FLOAT32, DR_PROD, DR_ACC_F64},
    {DR_FLOAT64, DR_MIN, DR_ACC_F64},   {DR_FLOAT16, DR_MAX, DR_ACC_F32}, {DR_BFLOAT16, DR_SUM, DR_ACC_F64},
    {DR_INT8, DR_SUM, DR_ACC_I64},      {DR_UINT8, DR_BXOR, DR_ACC_U32},  {DR_INT16, DR_MAX, DR_ACC_I32},
    {DR_UINT16, DR_PROD, DR_ACC_U64},   {DR_FLOAT64, DR_SUM, DR_ACC_EXACT}, {DR_BFLOAT16, DR_SUM, DR_ACC_EXACT},
};

/* Multipass's launch shapes, counted over the cases run (kernels/multipass.cu). */
enum { PATH_ONE_BLOCK, PATH_CLUSTER, PATH_LAST_BLOCK, PATH_BULK, PATH_COUNT };
static const char *const path_names[PATH_COUNT] = {"one block", "cluster", "last-block-done", "bulk"};
static long long path_cases[PATH_COUNT];

static int path_of(const dr_gpu_plan_t *p)
{
    return p->bulk ? PATH_BULK : p->grid[0] == 1 ? PATH_ONE_BLOCK : p->cluster ? PATH_CLUSTER : PATH_LAST_BLOCK;
}

/* Whether the shapes run include every launch shape this GPU has (cluster and bulk: Hopper only). */
static int every_path_ran(int hopper)
{
    return path_cases[PATH_LAST_BLOCK] && (!hopper || (path_cases[PATH_CLUSTER] && path_cases[PATH_BULK]));
}

static double seconds_now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static dr_gpu_plan_t plan_of(const row_t *row, dr_kernel_t kernel, int block, size_t n)
{
    dr_gpu_reduce_t r = request(kernel, row, block, NULL, n, NULL);
    dr_gpu_plan_t p;
    CUDA_OR_DIE(dr_gpu_plan(&r, &p));
    return p;
}

/* The shape of a kernel as its plan shows it: elements one block covers in one round (a level's slice; multipass's
 * kUnroll 16-byte vectors per thread), and for multipass the blocks of a full grid (n far past any boundary; for
 * multipass's register kernel with the bulk path off, which such an n would take on a Hopper with a grid of its
 * own: on an H200, 264 blocks whatever the block size, where the register kernel's full grid of 256 threads is
 * 1056). */
typedef struct {
    size_t per_block;
    size_t resident;
} shape_t;

static shape_t shape_of(const row_t *row, dr_kernel_t kernel, int block)
{
    shape_t s;
    /* 64 * block elements take 64 / loads blocks (levels: 1 or 2 loads per thread) or 16 / vector-width blocks
     * (multipass: 2 to 8, below the cluster cap and any resident count): exact either way. */
    s.per_block = (size_t)block * 64 / plan_of(row, kernel, block, (size_t)block * 64).grid[0];
    s.resident = 0;
    if (is_multipass(kernel)) {
        dr_gpu_reduce_t r = request(kernel, row, block, NULL, (size_t)1 << 40, NULL);
        if (kernel == DR_KERNEL_MULTIPASS) r.bulk_from_bytes = SIZE_MAX;
        dr_gpu_plan_t p;
        CUDA_OR_DIE(dr_gpu_plan(&r, &p));
        s.resident = p.grid[0];
    }
    return s;
}

/* Whether GPU 0 takes multipass's Hopper paths (a cluster for small inputs, bulk copies for large ones), judged from
 * the device itself (cluster launch support). A build without sm_90 code takes neither there, which would leave both
 * untested: that is a failure, with the fix in its message. */
static int hopper_device(void)
{
    int yes = 0, paths = 0;
    CUDA_OR_DIE(cudaDeviceGetAttribute(&yes, cudaDevAttrClusterLaunch, 0));
    CUDA_OR_DIE(dr_gpu_hopper_paths(0, &paths));
    if (yes && !paths) {
        ++failures;
        printf("FAIL: GPU 0 is a Hopper or later but the kernels have no sm_90 code, so multipass's cluster and bulk "
               "paths cannot run: build with CMAKE_CUDA_ARCHITECTURES including 90\n");
    }
    return yes && paths;
}

/* Check that the bulk plan still matches the model boundary_sizes() builds on (one block per chunk up to a full
 * grid); 0 if it does not. */
static int bulk_model_holds(const row_t *row, int block)
{
    const size_t c = DR_GPU_BULK_CHUNK_BYTES / dr_dtype_size(row->dtype);
    const dr_gpu_plan_t one = plan_of(row, KERNEL_BULK, block, c), two = plan_of(row, KERNEL_BULK, block, c + 1);
    const dr_gpu_plan_t full = plan_of(row, KERNEL_BULK, block, (size_t)1 << 40);
    const dr_gpu_plan_t at = plan_of(row, KERNEL_BULK, block, full.grid[0] * c);
    const int ok = one.bulk && one.grid[0] == 1 && two.bulk && two.grid[0] == 2 && full.bulk && at.bulk &&
                   at.grid[0] == full.grid[0];
    if (!ok) {
        ++failures;
        printf("FAIL multipass-bulk %s %s block=%d: its plans no longer match this driver's model (grids %zu %zu "
               "%zu %zu for 1, 2, G and 2^40 chunks' worth): update boundary_sizes()\n",
               dr_dtype_name(row->dtype), dr_op_name(row->op), block, one.grid[0], two.grid[0], at.grid[0],
               full.grid[0]);
    }
    return ok;
}

/* Check that multipass's plans still match the model the sizes below are built on; 0 if they do not. */
static int multipass_model_holds(const row_t *row, int block, shape_t s, int cluster_ok)
{
    const size_t pb = s.per_block;
    const dr_gpu_plan_t one = plan_of(row, DR_KERNEL_MULTIPASS, block, pb);
    const dr_gpu_plan_t two = plan_of(row, DR_KERNEL_MULTIPASS, block, pb + 1);
    const dr_gpu_plan_t c16 = plan_of(row, DR_KERNEL_MULTIPASS, block, 16 * pb);
    const dr_gpu_plan_t g17 = plan_of(row, DR_KERNEL_MULTIPASS, block, 16 * pb + 1);
    const dr_gpu_plan_t full = plan_of(row, DR_KERNEL_MULTIPASS, block, s.resident * pb);
    /* The largest size of boundary_sizes() must still take the register kernel (below DR_GPU_BULK_FROM_BYTES). */
    const size_t threads = s.resident * (size_t)block, vec = 16 / dr_dtype_size(row->dtype);
    const dr_gpu_plan_t largest = plan_of(row, DR_KERNEL_MULTIPASS, block, 2 * s.resident * pb + 4 * threads * vec);
    /* On a Hopper one block is the cluster kernel's one-round path too (launched without a cluster). */
    int ok = one.grid[0] == 1 && one.cluster == cluster_ok && two.grid[0] == 2 && two.cluster == cluster_ok &&
             full.grid[0] == s.resident && !full.cluster && !largest.bulk;
    if (cluster_ok) ok = ok && c16.cluster && c16.grid[0] == 8;
    if (s.resident >= 17) ok = ok && !g17.cluster && g17.grid[0] == 17;
    if (!ok) {
        ++failures;
        printf("FAIL multipass %s %s block=%d: its plans no longer match this driver's model (per block %zu, "
               "resident %zu; grids %zu %zu %zu %zu, cluster %d %d %d %d, largest size bulk %d): update "
               "boundary_sizes()\n",
               dr_dtype_name(row->dtype), dr_op_name(row->op), block, pb, s.resident, one.grid[0], two.grid[0],
               c16.grid[0], g17.grid[0], one.cluster, two.cluster, c16.cluster, g17.cluster, largest.bulk);
    }
    return ok;
}

/* The sizes where `kernel` with `block` threads changes behaviour, for this row's element size. */
static int boundary_sizes(const row_t *row, dr_kernel_t kernel, int block, size_t *out)
{
    const size_t b = (size_t)block, vec = 16 / dr_dtype_size(row->dtype);
    const shape_t s = shape_of(row, kernel, block);
    const size_t pb = s.per_block;
    int m = 0;
    /* Empty, one element, a warp, a block, a block's slice (one grid block to two), two slices and one more. */
    const size_t common[] = {0, 1, 2, 31, 32, 33, b - 1, b, b + 1, pb - 1, pb, pb + 1, 2 * pb + 1};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; ++i) out[m++] = common[i];
    if (kernel == KERNEL_BULK) {
        /* Chunks of DR_GPU_BULK_CHUNK_BYTES (c elements), block k taking chunks k, k + G, k + 2G, ... of a full
         * grid of G blocks, through kBulkStages = 2 stages (the third chunk of a block reuses stage 0). */
        const size_t c = DR_GPU_BULK_CHUNK_BYTES / dr_dtype_size(row->dtype), g = s.resident;
        const size_t bulk[] = {1, vec + 1, c - 1, c, c + 1, 2 * c + vec + 1, g * c - 1, g * c + 1, 2 * g * c + c + 1};
        m = 0;
        for (size_t i = 0; i < sizeof bulk / sizeof bulk[0]; ++i) out[m++] = bulk[i];
        return m;
    }
    if (kernel != DR_KERNEL_MULTIPASS) {
        if (pb * pb + 1 <= ((size_t)1 << 18)) { /* a third pass (blocks of 32 and 64 threads) */
            out[m++] = pb * pb;
            out[m++] = pb * pb + 1;
        }
        return m;
    }
    const size_t t = s.resident * b; /* threads of a full grid */
    const size_t w = s.resident * pb; /* a full grid, every thread one round of kUnroll vectors */
    const size_t more[] = {
        vec - 1, vec, vec + 1, 2 * vec + 1,  /* the vector width: head and tail only, one vector */
        b * vec - 1, b * vec, b * vec + 1,   /* every thread of block 0 one vector, and a tail */
        8 * pb, 8 * pb + 1,                  /* a cluster of 8 blocks, one round; then two rounds */
        16 * pb, 16 * pb + 1,                /* the last cluster size; 17 blocks: partials, last block done */
        w - 1, w, w + 1,                     /* the grid-stride wrap of a full grid */
        2 * w + 3 * t * vec + t / 2 * vec + vec - 1, /* two unrolled rounds, the remainder loop, a tail */
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; ++i) out[m++] = more[i];
    return m;
}

/* One reduction with every buffer of exactly the size launch.h names: a workspace of plan.work_bytes, zero-filled
 * (the contract), and a result of one accumulator, so compute-sanitizer sees any access past either. Multipass runs
 * twice on the same workspace without re-zeroing it (its last block must have left the done-counter at zero), and
 * both runs must give the same bits. Returns 1 if it passed. */
static int run_exact(const row_t *row, dr_kernel_t kernel, int block, const void *d_in, size_t n, void *d_result,
                     const dr_reference_t *ref, const char *what)
{
    dr_gpu_reduce_t r = request(kernel, row, block, d_in, n, d_result);
    dr_gpu_plan_t plan;
    if (!plan_case(&r, &plan, what)) return 0;
    if (is_multipass(kernel)) ++path_cases[path_of(&plan)];
    CUDA_OR_DIE(cudaMalloc(&r.d_work, plan.work_bytes));
    CUDA_OR_DIE(cudaMemset(r.d_work, 0, plan.work_bytes));
    const size_t asize = dr_acc_kind_size(row->acc);
    const int runs = is_multipass(kernel) ? 2 : 1;
    dr_value_t out[2];
    for (int i = 0; i < runs; ++i) {
        CUDA_OR_DIE(cudaMemset(d_result, 0xA5, asize)); /* poison */
        arm_done(&r);
        cudaError_t e = dr_gpu_reduce(&r, &plan, 0, NULL);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            printf("FAIL %s: launch: %s\n", what, cudaGetErrorString(e));
            exit(1); /* a kernel fault leaves the context unusable */
        }
        if (!done_signalled(&r, what)) {
            CUDA_OR_DIE(cudaFree(r.d_work));
            return 0;
        }
        memset(&out[i], 0, sizeof out[i]);
        CUDA_OR_DIE(cudaMemcpy(&out[i], d_result, asize, cudaMemcpyDeviceToHost));
    }
    CUDA_OR_DIE(cudaFree(r.d_work));
    dr_check_t c;
    dr_reference_check(ref, &out[0], plan.serial_depth, &c);
    if (!c.pass) {
        ++failures;
        if (failures <= 40) printf("FAIL %s: %s\n", what, c.detail);
        return 0;
    }
    if (runs == 2 && memcmp(&out[0], &out[1], asize) != 0) {
        ++failures;
        if (failures <= 40) printf("FAIL %s: a second run on the same workspace gave different bits\n", what);
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Exact sums: the rows of DR_EXACT_TABLE (acc EXACT), which multipass alone runs (kernels/exact.cu). The result is a
 * whole dr_exact_t, checked to the byte against the host's own (accum.h: dr_exact_zero, dr_exact_add_f64 of each
 * element widened to float64, dr_exact_normalize), and its rounding, dr_exact_to_f64, to the bit; where the data
 * come from the generator, the rounding also against src/cli/reference.c's independent exact sum. The matrix here runs
 * data made to reach every part of the kernel: terms that stay in a thread's register window and terms that flush it
 * every time, subnormals, values near the largest that cancel (and that do not: the sum rounds to infinity), signed
 * zeros, infinities and NaNs; at sizes up to a few million, misaligned starts and every block size.
 * ------------------------------------------------------------------------------------------------------------- */

static const row_t exact_rows[] = {
#define X(DT, OP, op, ACC, acc) {DR_##DT, DR_##OP, DR_ACC_##ACC},
    DR_EXACT_TABLE
#undef X
};
#define NEXACT (sizeof exact_rows / sizeof exact_rows[0])

/* Element i of h (type t) widened to float64 as the kernels widen it (16-bit floats through float32, exactly). */
static double exact_element(dr_dtype_t t, const void *h, size_t i)
{
    const char *p = (const char *)h;
    if (t == DR_FLOAT64) {
        double d;
        memcpy(&d, p + 8 * i, 8);
        return d;
    }
    if (t == DR_FLOAT32) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return (double)f;
    }
    uint16_t b;
    memcpy(&b, p + 2 * i, 2);
    return (double)(t == DR_FLOAT16 ? dr_f16_to_f32(b) : dr_bf16_to_f32(b));
}

/* The host's exact sum of h[0..n), normalized. */
static void exact_host(dr_dtype_t t, const void *h, size_t n, dr_exact_t *out)
{
    dr_exact_zero(out);
    for (size_t i = 0; i < n; ++i) {
        dr_exact_add_f64(out, exact_element(t, h, i));
        if ((i + 1) % DR_EXACT_ADDS == 0) dr_exact_normalize(out);
    }
    dr_exact_normalize(out);
}

/* One case: `got` must equal `want` to the byte, and so their roundings to the bit. 1 if it does. */
static int exact_same(const dr_exact_t *got, const dr_exact_t *want, const char *what)
{
    ++cases;
    const double g = dr_exact_to_f64(got), w = dr_exact_to_f64(want);
    if (memcmp(got, want, sizeof *got) == 0 && memcmp(&g, &w, sizeof g) == 0) return 1;
    ++failures;
    if (failures <= 40) {
        int i = 0;
        while (i < DR_EXACT_WORDS - 1 && got->w[i] == want->w[i]) ++i;
        printf("FAIL %s: the dr_exact_t differs (word %d 0x%016" PRIx64 ", expected 0x%016" PRIx64 "; flags 0x%x, "
               "expected 0x%x; pad 0x%x), rounded %a, expected %a\n",
               what, i, (uint64_t)got->w[i], (uint64_t)want->w[i], got->flags, want->flags, got->pad, g, w);
    }
    return 0;
}

/* Buffers of exact cases: a result of exactly sizeof(dr_exact_t) bytes; a workspace, zero-filled when allocated
 * and never again (launch.h: the kernel leaves it so), of exactly the plan's size for each case if `fresh`. */
typedef struct {
    void *d_work, *d_result;
    size_t work_bytes;
    int fresh;
} exact_bufs_t;

/* Whether the exact sum of `row` at `block` threads takes the bulk copies on a Hopper (kernels/exact.cu: float64,
 * blocks of 256 or 512). */
static int exact_bulk_block(const row_t *row, int block)
{
    return row->dtype == DR_FLOAT64 && block >= 256 && block <= 512;
}

/* Run one exact sum `runs` times on the same workspace, each result (poisoned first) checked against `want`, and
 * the first also against `ref` if not NULL (its rounding, bit for bit). 1 if every run passed. */
static int exact_run(exact_bufs_t *b, dr_kernel_t kernel, const row_t *row, int block, const void *d_in, size_t n,
                     int runs, const dr_exact_t *want, const dr_reference_t *ref, const char *what)
{
    dr_gpu_reduce_t r = request(kernel, row, block, d_in, n, b->d_result);
    dr_gpu_plan_t plan;
    if (!plan_case(&r, &plan, what)) return 0;
    if (kernel == KERNEL_BULK && exact_bulk_block(row, block) && n > 0 && !plan.bulk && hopper_device()) {
        ++failures;
        printf("FAIL %s: the plan did not take the bulk copies\n", what);
        return 0;
    }
    if (plan.passes != 1 || plan.serial_depth != 1 || plan.grid[0] < 1) {
        ++failures;
        printf("FAIL %s: plan of %d passes, serial depth %" PRIu64 ", grid %zu (want 1 pass, depth 1)\n", what,
               plan.passes, plan.serial_depth, plan.grid[0]);
        return 0;
    }
    if (b->fresh || plan.work_bytes > b->work_bytes) {
        if (b->d_work) CUDA_OR_DIE(cudaFree(b->d_work));
        CUDA_OR_DIE(cudaMalloc(&b->d_work, plan.work_bytes));
        CUDA_OR_DIE(cudaMemset(b->d_work, 0, plan.work_bytes));
        b->work_bytes = plan.work_bytes;
    }
    r.d_work = b->d_work;
    for (int i = 0; i < runs; ++i) {
        CUDA_OR_DIE(cudaMemset(b->d_result, 0xA5, sizeof(dr_exact_t)));
        arm_done(&r);
        cudaError_t e = dr_gpu_reduce(&r, &plan, 0, NULL);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            printf("FAIL %s: launch: %s\n", what, cudaGetErrorString(e));
            exit(1); /* a kernel fault leaves the context unusable */
        }
        if (!done_signalled(&r, what)) return 0;
        dr_exact_t got;
        CUDA_OR_DIE(cudaMemcpy(&got, b->d_result, sizeof got, cudaMemcpyDeviceToHost));
        char run_what[224];
        snprintf(run_what, sizeof run_what, "%s grid=%zu run %d of %d", what, plan.grid[0], i + 1, runs);
        if (!exact_same(&got, want, run_what)) return 0;
        if (ref && i == 0) {
            dr_value_t v;
            memset(&v, 0, sizeof v);
            v.f64 = dr_exact_to_f64(&got);
            dr_check_t c;
            ++cases;
            dr_reference_check(ref, &v, plan.serial_depth, &c);
            if (!c.pass) {
                ++failures;
                if (failures <= 40) printf("FAIL %s: against src/cli/reference.c: %s\n", run_what, c.detail);
                return 0;
            }
        }
    }
    if (b->fresh) {
        CUDA_OR_DIE(cudaFree(b->d_work));
        b->d_work = NULL;
        b->work_bytes = 0;
    }
    return 1;
}

/* The data of the matrix. */
enum {
    EX_NORMAL, EX_OUTLIERS, EX_FEW_OUTLIERS, EX_WIDE, EX_TINY, EX_HUGE, EX_NEG_ZERO, EX_ZEROS, EX_SPECIALS, EX_COUNT
};
static const char *const exact_data_names[EX_COUNT] = {
    "normal-ish",
    "normal-ish, 1 in 16 of any exponent",
    "normal-ish, 1 to 3 far outliers",
    "any finite",
    "subnormal and the smallest normals",
    "near the largest, cancelling",
    "all -0.0",
    "+0.0 and -0.0",
    "infinities and NaNs among any finite"};

/* Element i of type t as bits: sign, biased exponent e, stored significand m (cut to its width). */
static void exact_store(dr_dtype_t t, void *h, size_t i, int neg, uint64_t e, uint64_t m)
{
    const int ebits = t == DR_FLOAT64 ? 11 : t == DR_FLOAT16 ? 5 : 8;
    const int mbits = t == DR_FLOAT64 ? 52 : t == DR_FLOAT32 ? 23 : t == DR_FLOAT16 ? 10 : 7;
    const uint64_t b = (uint64_t)neg << (ebits + mbits) | e << mbits | (m & ((1ull << mbits) - 1));
    char *p = (char *)h;
    if (t == DR_FLOAT64) memcpy(p + 8 * i, &b, 8);
    else if (t == DR_FLOAT32) {
        const uint32_t u = (uint32_t)b;
        memcpy(p + 4 * i, &u, 4);
    } else {
        const uint16_t u = (uint16_t)b;
        memcpy(p + 2 * i, &u, 2);
    }
}

/* Fill h[0..n) of type t with data set d; variant (random) picks among a data set's forms. */
static void exact_fill(dr_dtype_t t, int d, uint64_t variant, void *h, size_t n, uint64_t *rng)
{
    const int ebits = t == DR_FLOAT64 ? 11 : t == DR_FLOAT16 ? 5 : 8;
    const uint64_t emax = (1ull << ebits) - 1, bias = emax / 2; /* emax: infinities and NaNs */
    const int mbits = t == DR_FLOAT64 ? 52 : t == DR_FLOAT32 ? 23 : t == DR_FLOAT16 ? 10 : 7;
    const size_t esize = dr_dtype_size(t);
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = splitmix(rng), m = splitmix(rng);
        const int neg = (int)(r >> 63);
        const uint64_t normal = bias - 12 + r % 16; /* magnitudes 2^-12 .. 2^4 */
        const uint64_t any = r % emax;              /* every finite exponent, 0 for subnormals */
        switch (d) {
        case EX_NORMAL: exact_store(t, h, i, neg, normal, m); break;
        case EX_OUTLIERS: exact_store(t, h, i, neg, (r >> 8) % 16 == 0 ? any : normal, m); break;
        case EX_FEW_OUTLIERS: exact_store(t, h, i, neg, normal, m); break; /* the outliers below */
        case EX_WIDE: exact_store(t, h, i, neg, any, m); break;
        case EX_TINY: exact_store(t, h, i, neg, r % 3, m); break;
        case EX_HUGE: exact_store(t, h, i, neg, emax - 1 - r % 4, m); break; /* then cancelled below */
        case EX_NEG_ZERO: exact_store(t, h, i, 1, 0, 0); break;
        case EX_ZEROS: exact_store(t, h, i, neg, 0, 0); break;
        default: { /* variant 0: +inf; 1: -inf; 2: both; 3: NaNs of any sign and payload, and both infinities */
            const int special = (r >> 8) % 64 == 0;
            const int v = (int)(variant % 4);
            const int kind = v < 2 ? v : (int)((r >> 16) % (v == 2 ? 2 : 3)); /* 0 +inf, 1 -inf, 2 NaN */
            if (!special) exact_store(t, h, i, neg, any, m);
            else if (kind < 2) exact_store(t, h, i, kind, emax, 0);
            else exact_store(t, h, i, neg, emax, m | (1ull << (m % (unsigned)mbits))); /* a NaN: a payload bit */
            break;
        }
        }
    }
    /* 1 to 3 elements more than 40 binades from the rest (float16: any exponent), so that one lane's round misses
     * where the others' fit: the kernel's warp then leaves its loop (float32) or the lane does (the 16-bit
     * families), and the lanes must each count every element once whichever way they go on. */
    for (int k = 0; d == EX_FEW_OUTLIERS && n > 0 && k < 1 + (int)(variant % 3); ++k) {
        const uint64_t r = splitmix(rng);
        const uint64_t far = ebits < 8 ? r % emax : (r & 1) ? 1 + (r >> 1) % 40 : emax - 1 - (r >> 1) % 40;
        exact_store(t, h, (size_t)(splitmix(rng) % n), (int)(r >> 63), far, splitmix(rng));
    }
    if (d == EX_SPECIALS && n > 0) /* at least one */
        exact_store(t, h, splitmix(rng) % n, variant % 4 == 1, emax, variant % 4 == 3 ? 1 : 0);
    if (d == EX_HUGE && n > 1) {
        /* Copy the first half into the second, negated (variant 0: 9 in 10 of it, so that pairs of equal values
         * are left over, whose sum is past float64's range for float64 inputs: it rounds to an infinity), a tiny
         * value or a few at the end, then shuffle: the exact sum is what is left, far below the terms. */
        const size_t half = (n - (n > 64 ? 3 : 0)) / 2;
        unsigned char *p = (unsigned char *)h;
        for (size_t i = 0; i < half; ++i) {
            memcpy(p + (half + i) * esize, p + i * esize, esize);
            if (variant % 4 != 0 || i % 10 != 0) p[(half + i) * esize + esize - 1] ^= 0x80; /* the sign bit */
        }
        for (size_t i = 2 * half; i < n; ++i) exact_store(t, h, i, (int)(splitmix(rng) & 1), 0, splitmix(rng));
        for (size_t i = n - 1; i > 0; --i) { /* Fisher-Yates */
            const size_t j = splitmix(rng) % (i + 1);
            unsigned char tmp[8];
            memcpy(tmp, p + i * esize, esize);
            memcpy(p + i * esize, p + j * esize, esize);
            memcpy(p + j * esize, tmp, esize);
        }
    }
}

/* What the kernel entry points must refuse for exact rows, and the plans' bounds: the teaching levels refuse (their
 * accumulators are one register); the bulk copies are planned for float64 on a Hopper for blocks of 256 or 512
 * threads, from DR_GPU_BULK_FROM_BYTES (or bulk_from_bytes), and never for the other types; every plan is one pass
 * of depth 1 with at most 2^23 + 10 elements per thread (kernels/exact.cu's bounds, with the bulk plan's chunks)
 * and, for a grid of several blocks, the done-counter and the grid's accumulator in its workspace. */
static void exact_plans(int hopper)
{
    const dr_kernel_t levels[] = {DR_KERNEL_NEIGHBORED, DR_KERNEL_INTERLEAVED, DR_KERNEL_SMEM,
                                  DR_KERNEL_SMEM2,      DR_KERNEL_UNROLL,      DR_KERNEL_SHUFFLE};
    const size_t sizes[] = {0, 1, 1000, (size_t)1 << 20, (size_t)1 << 32, (size_t)1 << 40, (size_t)1 << 46};
    for (size_t ri = 0; ri < NEXACT; ++ri) {
        const row_t *row = &exact_rows[ri];
        const size_t vec = 16 / dr_dtype_size(row->dtype);
        for (size_t li = 0; li < sizeof levels / sizeof levels[0]; ++li) {
            dr_gpu_reduce_t r = request(levels[li], row, 256, NULL, 1000, NULL);
            dr_gpu_plan_t plan;
            memset(&plan, 0, sizeof plan);
            const cudaError_t pe = dr_gpu_plan(&r, &plan);
            plan.passes = 1;
            plan.grid[0] = 1;
            const cudaError_t re = dr_gpu_reduce(&r, &plan, 0, NULL); /* must launch nothing */
            ++cases;
            if (pe != cudaErrorInvalidValue || re != cudaErrorInvalidValue || cudaGetLastError() != cudaSuccess) {
                ++failures;
                printf("FAIL %s %s->exact: plan gave %s and reduce %s, both should be %s\n",
                       dr_kernel_name(levels[li]), dr_dtype_name(row->dtype), cudaGetErrorString(pe),
                       cudaGetErrorString(re), cudaGetErrorString(cudaErrorInvalidValue));
            }
        }
        for (int block = 32; block <= 1024; block *= 2)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const size_t n = sizes[si];
                const dr_gpu_plan_t p = plan_of(row, DR_KERNEL_MULTIPASS, block, n);
                const dr_gpu_plan_t pb = plan_of(row, KERNEL_BULK, block, n); /* bulk_from_bytes = 1 */
                const size_t threads = p.grid[0] * (size_t)block;
                const size_t per_thread = n / threads + (n % threads != 0);
                /* the bulk plan (float64 on a Hopper, blocks of 256 or 512, any input of a byte or more): a
                 * thread's share of its block's chunks, then of the vectors no chunk covers, then a head and a tail
                 * element */
                const int want_bulk = hopper && exact_bulk_block(row, block) && n > 0;
                const size_t chunk_vec = DR_GPU_BULK_CHUNK_BYTES / 16, nvec = n / vec;
                const size_t bgrid = pb.grid[0] ? pb.grid[0] : 1; /* (a grid of 0 fails below) */
                const size_t bthreads = bgrid * (size_t)block, nchunks = nvec / chunk_vec;
                const size_t bulk_thread = (nchunks / bgrid + (nchunks % bgrid != 0)) * (chunk_vec / block) * vec +
                                           (chunk_vec / bthreads + 1) * vec + 2;
                /* the default plan takes the bulk copies from DR_GPU_BULK_FROM_BYTES, then the same plan */
                const int want_p_bulk = want_bulk && n * dr_dtype_size(row->dtype) >= DR_GPU_BULK_FROM_BYTES;
                int bad = p.passes != 1 || p.serial_depth != 1 || p.cluster || p.bulk != want_p_bulk ||
                          p.grid[0] < 1 || p.grid[0] > 0x7fffffff ||
                          /* a grid of several blocks: the done-counter, then the grid's accumulator */
                          (p.grid[0] > 1 && p.work_bytes < 256 + sizeof(dr_exact_t)) || pb.bulk != want_bulk;
                if (!p.bulk) bad |= per_thread + vec + 2 > ((size_t)1 << 23) + 10;
                if (p.bulk || !want_bulk) bad |= pb.grid[0] != p.grid[0] || pb.work_bytes != p.work_bytes;
                if (want_bulk)
                    bad |= pb.passes != 1 || pb.serial_depth != 1 || pb.cluster || pb.grid[0] < 1 ||
                           pb.grid[0] > 0x7fffffff || bulk_thread > ((size_t)1 << 23) + 10 ||
                           (pb.grid[0] > 1 && pb.work_bytes < 256 + sizeof(dr_exact_t));
                ++cases;
                if (bad) {
                    ++failures;
                    printf("FAIL multipass %s->exact block=%d n=%zu: plan of %d passes, grid %zu, depth %" PRIu64
                           ", cluster %d, bulk %d, %zu workspace bytes; with bulk_from_bytes = 1: bulk %d, grid %zu, "
                           "%zu workspace bytes, %zu elements a thread at most\n",
                           dr_dtype_name(row->dtype), block, n, p.passes, p.grid[0], p.serial_depth, p.cluster,
                           p.bulk, p.work_bytes, pb.bulk, pb.grid[0], pb.work_bytes, bulk_thread);
                }
            }
    }
}

static int exact_sums(uint64_t seed)
{
    const int blocks[] = {32, 64, 128, 256, 512, 1024};
    uint64_t rng = seed ^ 0x243f6a8885a308d3ull;
    size_t sizes[24];
    int nsizes = 0;
    const size_t fixed[] = {0,    1,    2,     3,      7,     31,     32, 33, 255, 257, 1023, 1025, 4099, 65537,
                            262147, (1u << 20) + 3};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) sizes[nsizes++] = fixed[i];
    sizes[nsizes++] = 1 + splitmix(&rng) % 3000000;
    size_t max_n = 0;
    for (int i = 0; i < nsizes; ++i)
        if (sizes[i] > max_n) max_n = sizes[i];
    const size_t max_bytes = (max_n + 8) * 8;
    unsigned char *h = malloc(max_bytes), *h_after = malloc(max_bytes);
    void *d_base = NULL;
    exact_bufs_t b = {0};
    if (!h || !h_after) return 1;
    CUDA_OR_DIE(cudaMalloc(&d_base, max_bytes));
    CUDA_OR_DIE(cudaMalloc(&b.d_result, sizeof(dr_exact_t)));
    const int hopper = hopper_device();
    exact_plans(hopper);
    for (size_t ri = 0; ri < NEXACT; ++ri) {
        const row_t *row = &exact_rows[ri];
        const size_t esize = dr_dtype_size(row->dtype), vec = 16 / esize;
        for (int d = 0; d < EX_COUNT; ++d) {
            const int before = failures;
            for (int si = 0; si < nsizes; ++si) {
                const size_t n = sizes[si];
                const size_t offsets[] = {0, si % 2 ? vec - 1 : 1}; /* aligned, and a head of 1 or vec - 1 */
                for (int oi = 0; oi < 2; ++oi) {
                    const size_t off = offsets[oi];
                    const uint64_t variant = splitmix(&rng);
                    exact_fill(row->dtype, d, variant, h, n, &rng);
                    dr_exact_t want;
                    exact_host(row->dtype, h, n, &want);
                    void *d_in = (char *)d_base + off * esize;
                    CUDA_OR_DIE(cudaMemcpy(d_in, h, n * esize, cudaMemcpyHostToDevice));
                    for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; ++bi) {
                        char what[200];
                        snprintf(what, sizeof what, "exact sum %s (%s, variant %d) n=%zu block=%d offset=%zu",
                                 dr_dtype_name(row->dtype), exact_data_names[d], (int)(variant % 4), n, blocks[bi],
                                 off);
                        exact_run(&b, DR_KERNEL_MULTIPASS, row, blocks[bi], d_in, n, 2, &want, NULL, what);
                        /* float64's bulk copies (bulk_from_bytes = 1), where the input holds a chunk */
                        if (hopper && exact_bulk_block(row, blocks[bi]) && n * esize >= DR_GPU_BULK_CHUNK_BYTES + 16) {
                            snprintf(what, sizeof what, "exact sum %s (%s, variant %d) n=%zu block=%d offset=%zu bulk",
                                     dr_dtype_name(row->dtype), exact_data_names[d], (int)(variant % 4), n,
                                     blocks[bi], off);
                            exact_run(&b, KERNEL_BULK, row, blocks[bi], d_in, n, 2, &want, NULL, what);
                        }
                    }
                    CUDA_OR_DIE(cudaMemcpy(h_after, d_in, n * esize, cudaMemcpyDeviceToHost));
                    ++cases;
                    if (memcmp(h, h_after, n * esize) != 0) {
                        ++failures;
                        printf("FAIL exact sum %s n=%zu: the kernel modified its input\n", dr_dtype_name(row->dtype),
                               n);
                    }
                }
            }
            printf("%-4s sum   %-9s -> exact    %s\n", failures == before ? "ok" : "FAIL", dr_dtype_name(row->dtype),
                   exact_data_names[d]);
        }
    }
    free(h);
    free(h_after);
    cudaFree(d_base);
    cudaFree(b.d_work);
    cudaFree(b.d_result);
    return 0;
}

/* An exact row's shape as its plans show it: the most elements one block takes, and the blocks of a full grid. */
static shape_t exact_shape(const row_t *row, int block)
{
    size_t lo = 1, hi = (size_t)1 << 30; /* one block at lo; more at hi */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (plan_of(row, DR_KERNEL_MULTIPASS, block, mid).grid[0] == 1) lo = mid;
        else hi = mid;
    }
    /* the register kernel's full grid (an n that large would take the bulk copies on a Hopper) */
    dr_gpu_reduce_t r = request(DR_KERNEL_MULTIPASS, row, block, NULL, lo << 16, NULL);
    r.bulk_from_bytes = SIZE_MAX;
    dr_gpu_plan_t p;
    CUDA_OR_DIE(dr_gpu_plan(&r, &p));
    shape_t s = {lo, p.grid[0]};
    return s;
}

/* Generated data (DR_DATA_RANDOM) of one exact row in a fresh allocation of exactly off + n elements, the host's
 * exact sum of it, and src/cli/reference.c's. Returns the allocation; d_in is off elements into it. */
static void *exact_generated(const row_t *row, size_t n, size_t off, uint64_t *rng, int threads, const void **d_in,
                             dr_exact_t *want, dr_reference_t *ref)
{
    const size_t esize = dr_dtype_size(row->dtype);
    void *d_base;
    CUDA_OR_DIE(cudaMalloc(&d_base, (off + n) * esize > 0 ? (off + n) * esize : 1));
    *d_in = (char *)d_base + off * esize;
    dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, splitmix(rng), 0, 0};
    const uint64_t first = splitmix(rng) % 1000000;
    CUDA_OR_DIE(dr_gpu_generate(&g, first, (void *)*d_in, n, 0));
    void *h = malloc(n * esize > 0 ? n * esize : 1);
    if (!h) {
        fprintf(stderr, "test_kernels: out of host memory\n");
        exit(1);
    }
    CUDA_OR_DIE(cudaMemcpy(h, *d_in, n * esize, cudaMemcpyDeviceToHost));
    exact_host(row->dtype, h, n, want);
    free(h);
    dr_reference_compute(&g, row->acc, first, n, threads, ref);
    return d_base;
}

/* --boundary for one exact row: the sizes where the exact kernel changes behaviour (as boundary_sizes() for
 * multipass: vector width, block, one block's share, the last-block-done partials, the grid-stride wrap), starts 0,
 * 1 and vec - 1 elements into an allocation of exactly the input, every buffer of exactly its size, two runs on one
 * workspace; for float64 on a Hopper, its bulk copies too (around one chunk, a few, a full grid's worth wrapping). */
static void exact_boundary(const row_t *row, const int *blocks, int nblocks, uint64_t *rng, int threads)
{
    const size_t vec = 16 / dr_dtype_size(row->dtype);
    const int hopper = hopper_device();
    exact_bufs_t b = {0};
    b.fresh = 1;
    CUDA_OR_DIE(cudaMalloc(&b.d_result, sizeof(dr_exact_t)));
    for (int bi = 0; bi < nblocks; ++bi) {
        const size_t bl = (size_t)blocks[bi];
        const shape_t s = exact_shape(row, blocks[bi]);
        const size_t pb = s.per_block, w = s.resident * pb, t = s.resident * bl;
        const size_t sizes[] = {0,          1,      2,          31,     32,         33,     vec - 1,   vec,
                                vec + 1,    2 * vec + 1,        bl - 1, bl,         bl + 1, bl * vec - 1,
                                bl * vec,   bl * vec + 1,       pb - 1, pb,         pb + 1, 2 * pb + 1,
                                17 * pb + 1, w - 1, w,          w + 1,  2 * w + 3 * t * vec + t / 2 * vec + vec - 1};
        const size_t offsets[] = {0, 1, vec - 1};
        for (int oi = 0; oi < 3; ++oi) {
            if (oi == 2 && vec - 1 <= 1) continue; /* 8-byte types: the longest head is 1 element */
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const size_t n = sizes[si], off = offsets[oi];
                const void *d_in;
                dr_exact_t want;
                dr_reference_t ref;
                void *d_base = exact_generated(row, n, off, rng, threads, &d_in, &want, &ref);
                char what[160];
                snprintf(what, sizeof what, "multipass sum %s->exact n=%zu block=%d offset=%zu",
                         dr_dtype_name(row->dtype), n, blocks[bi], off);
                exact_run(&b, DR_KERNEL_MULTIPASS, row, blocks[bi], d_in, n, 2, &want, &ref, what);
                CUDA_OR_DIE(cudaFree(d_base));
            }
        }
        /* float64's bulk copies (bulk_from_bytes = 1; a Hopper, blocks of 256 or 512): around one chunk, a few,
         * and a full grid's worth of chunks, wrapping */
        if (!hopper || !exact_bulk_block(row, (int)bl)) continue;
        const size_t c = DR_GPU_BULK_CHUNK_BYTES / dr_dtype_size(row->dtype);
        const size_t g = plan_of(row, KERNEL_BULK, blocks[bi], (size_t)1 << 30).grid[0];
        /* the last: every block refills each stage */
        const size_t bulk_sizes[] = {c - 1,     c,           c + 1,             c + vec + 1,      5 * c + 3,
                                     g * c - 1, g * c + vec, 2 * g * c + 12345, 6 * g * c + 12345};
        for (int oi = 0; oi < 2; ++oi)
            for (size_t si = 0; si < sizeof bulk_sizes / sizeof bulk_sizes[0]; ++si) {
                const size_t n = bulk_sizes[si], off = (size_t)oi;
                const void *d_in;
                dr_exact_t want;
                dr_reference_t ref;
                void *d_base = exact_generated(row, n, off, rng, threads, &d_in, &want, &ref);
                char what[160];
                snprintf(what, sizeof what, "multipass-bulk sum %s->exact n=%zu block=%d offset=%zu",
                         dr_dtype_name(row->dtype), n, blocks[bi], off);
                exact_run(&b, KERNEL_BULK, row, blocks[bi], d_in, n, 2, &want, &ref, what);
                CUDA_OR_DIE(cudaFree(d_base));
            }
    }
    CUDA_OR_DIE(cudaFree(b.d_result));
}

/* --determinism for one exact row: one block, 13 blocks meeting through the partials, a full grid wrapping three
 * times; 256- and 1024-thread blocks (float64 at 256 on a Hopper: the bulk copies too); `reps` runs on one
 * workspace, zeroed once, each the host's bytes. */
static void exact_determinism(const row_t *row, int reps, uint64_t *rng, int threads)
{
    const int blocks[] = {256, 1024};
    exact_bufs_t b = {0};
    CUDA_OR_DIE(cudaMalloc(&b.d_result, sizeof(dr_exact_t)));
    for (int bi = 0; bi < 2; ++bi) {
        const shape_t s = exact_shape(row, blocks[bi]);
        const size_t sizes[] = {s.per_block - 3, 12 * s.per_block + 7, 3 * s.resident * s.per_block + 12345};
        for (size_t si = 0; si < 3; ++si) {
            const void *d_in;
            dr_exact_t want;
            dr_reference_t ref;
            void *d_base = exact_generated(row, sizes[si], si % 2, rng, threads, &d_in, &want, &ref);
            char what[160];
            snprintf(what, sizeof what, "multipass sum %s->exact n=%zu block=%d (determinism)",
                     dr_dtype_name(row->dtype), sizes[si], blocks[bi]);
            exact_run(&b, DR_KERNEL_MULTIPASS, row, blocks[bi], d_in, sizes[si], reps, &want, &ref, what);
            if (exact_bulk_block(row, blocks[bi]) && hopper_device()) { /* its bulk copies */
                snprintf(what, sizeof what, "multipass-bulk sum %s->exact n=%zu block=%d (determinism)",
                         dr_dtype_name(row->dtype), sizes[si], blocks[bi]);
                exact_run(&b, KERNEL_BULK, row, blocks[bi], d_in, sizes[si], reps, &want, &ref, what);
            }
            CUDA_OR_DIE(cudaFree(d_base));
        }
    }
    cudaFree(b.d_work);
    CUDA_OR_DIE(cudaFree(b.d_result));
}

typedef struct {
    size_t n;
    uint64_t pairs; /* bit kernel_index * nblocks + block_index: the (kernel, block) pairs that run this size */
} want_t;

static int want_cmp(const void *a, const void *b)
{
    const size_t x = ((const want_t *)a)->n, y = ((const want_t *)b)->n;
    return x < y ? -1 : x > y;
}

/* The sanitizer driver: every kernel level x every row (or the subset) x blocks x its boundary sizes x starts 0 and
 * 1 element past an allocation's (aligned) start, and for multipass also vector width - 1 elements (the longest
 * head). Each input is an allocation of exactly its elements, generated in full before use. */
static int in_subset(const row_t *r)
{
    for (size_t i = 0; i < sizeof subset_rows / sizeof subset_rows[0]; ++i)
        if (subset_rows[i].dtype == r->dtype && subset_rows[i].op == r->op && subset_rows[i].acc == r->acc) return 1;
    return 0;
}

/* which: 0 every row, 1 the subset, 2 the rest; then every shards-th of those, from the shard-th. */
/* only: run this kernel alone (NULL: all). The bulk path runs with the first and last block size only: its
 * boundaries are chunks of the input, the same at every block size, and its sizes are the largest here. */
static int boundary(uint64_t seed, int which, int shard, int shards, const int *blocks, int nblocks,
                    const char *only)
{
    row_t rs[sizeof rows / sizeof rows[0]], xs[NEXACT];
    size_t nrows = 0, nx = 0, selected = 0;
    const int exact_only = only && strcmp(only, "exact") == 0; /* --kernel exact: the exact sums alone */
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        if (which == 0 || (which == 1) == in_subset(&rows[i]))
            if (selected++ % (size_t)shards == (size_t)shard && !exact_only) rs[nrows++] = rows[i];
    /* The exact rows after them, in the same count: multipass alone runs them. */
    for (size_t i = 0; i < NEXACT; ++i)
        if (which == 0 || (which == 1) == in_subset(&exact_rows[i]))
            if (selected++ % (size_t)shards == (size_t)shard && (!only || exact_only || strcmp(only, "multipass") == 0))
                xs[nx++] = exact_rows[i];
    const int threads = dr_parallel_default_threads(), cluster_ok = hopper_device();
    long long kernel_cases[NKERNELS] = {0};
    double kernel_seconds[NKERNELS] = {0};
    uint64_t rng = seed;
    const double t0 = seconds_now();
    printf("boundary: %zu rows (and %zu exact sums) x %s x %d block sizes, cluster launch and bulk copies %s\n",
           nrows, nx, only ? only : "every kernel", nblocks, cluster_ok ? "supported" : "not supported");
    int known = !only || exact_only;
    for (size_t ki = 0; ki < NKERNELS; ++ki) known |= only && strcmp(only, kernel_name(all_kernels[ki])) == 0;
    if (!known) {
        fprintf(stderr, "test_kernels: unknown kernel '%s'\n", only);
        return 2;
    }
    if (nrows + nx == 0) {
        ++failures;
        printf("FAIL: no row selected\n");
    }
    for (size_t ri = 0; ri < nrows; ++ri) {
        const row_t *row = &rs[ri];
        const size_t esize = dr_dtype_size(row->dtype), vec = 16 / esize;
        const int row_failures = failures, row_cases = cases;
        const double row_t0 = seconds_now();
        want_t want[NKERNELS * 8 * 40];
        size_t nwant = 0;
        uint64_t multipass_pairs = 0; /* the (kernel, block) pairs that also run at the longest head */
        for (size_t ki = 0; ki < NKERNELS; ++ki)
            for (int bi = 0; bi < nblocks; ++bi) {
                size_t sizes[40];
                if (only && strcmp(only, kernel_name(all_kernels[ki])) != 0) continue;
                if (all_kernels[ki] == KERNEL_BULK && ((bi != 0 && bi != nblocks - 1) || !cluster_ok)) continue;
                if (all_kernels[ki] == KERNEL_BULK) bulk_model_holds(row, blocks[bi]);
                if (is_multipass(all_kernels[ki])) multipass_pairs |= 1ull << (ki * (size_t)nblocks + (size_t)bi);
                if (all_kernels[ki] == DR_KERNEL_MULTIPASS)
                    multipass_model_holds(row, blocks[bi], shape_of(row, DR_KERNEL_MULTIPASS, blocks[bi]),
                                          cluster_ok);
                const int m = boundary_sizes(row, all_kernels[ki], blocks[bi], sizes);
                for (int i = 0; i < m; ++i) {
                    size_t w = 0;
                    while (w < nwant && want[w].n != sizes[i]) ++w;
                    if (w == nwant) want[nwant++] = (want_t){sizes[i], 0};
                    want[w].pairs |= 1ull << (ki * (size_t)nblocks + (size_t)bi);
                }
            }
        qsort(want, nwant, sizeof want[0], want_cmp);
        const size_t offsets[] = {0, 1, vec - 1};
        void *d_result;
        CUDA_OR_DIE(cudaMalloc(&d_result, dr_acc_kind_size(row->acc)));
        for (int oi = 0; oi < 3; ++oi) {
            const size_t off = offsets[oi];
            if (oi == 2 && off <= 1) continue; /* 8-byte types: the longest head is 1 element */
            for (size_t wi = 0; wi < nwant; ++wi) {
                const size_t n = want[wi].n;
                const uint64_t pairs = oi == 2 ? want[wi].pairs & multipass_pairs : want[wi].pairs;
                if (!pairs) continue;
                void *d_base;
                CUDA_OR_DIE(cudaMalloc(&d_base, (off + n) * esize > 0 ? (off + n) * esize : 1));
                void *d_in = (char *)d_base + off * esize;
                dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, splitmix(&rng), 0, 0};
                const uint64_t first = splitmix(&rng) % 1000000;
                CUDA_OR_DIE(dr_gpu_generate(&g, first, d_in, n, 0));
                dr_reference_t ref;
                dr_reference_compute(&g, row->acc, first, n, threads, &ref);
                for (size_t ki = 0; ki < NKERNELS; ++ki)
                    for (int bi = 0; bi < nblocks; ++bi) {
                        if (!(pairs >> (ki * (size_t)nblocks + (size_t)bi) & 1)) continue;
                        char what[160];
                        snprintf(what, sizeof what, "%s %s %s->%s n=%zu block=%d offset=%zu",
                                 kernel_name(all_kernels[ki]), dr_op_name(row->op), dr_dtype_name(row->dtype),
                                 dr_acc_kind_name(row->acc), n, blocks[bi], off);
                        const double k0 = seconds_now();
                        run_exact(row, all_kernels[ki], blocks[bi], d_in, n, d_result, &ref, what);
                        ++kernel_cases[ki];
                        kernel_seconds[ki] += seconds_now() - k0;
                    }
                CUDA_OR_DIE(cudaFree(d_base));
            }
        }
        CUDA_OR_DIE(cudaFree(d_result));
        printf("%-4s %-5s %-9s -> %-8s %5d cases, %zu sizes, %6.1f s (%.0f s in all)\n",
               failures == row_failures ? "ok" : "FAIL", dr_op_name(row->op), dr_dtype_name(row->dtype),
               dr_acc_kind_name(row->acc), cases - row_cases, nwant, seconds_now() - row_t0, seconds_now() - t0);
        fflush(stdout);
    }
    for (size_t xi = 0; xi < nx; ++xi) {
        const int row_failures = failures, row_cases = cases;
        const double row_t0 = seconds_now();
        exact_boundary(&xs[xi], blocks, nblocks, &rng, threads);
        printf("%-4s %-5s %-9s -> %-8s %5d cases, %6.1f s (%.0f s in all)\n",
               failures == row_failures ? "ok" : "FAIL", dr_op_name(xs[xi].op), dr_dtype_name(xs[xi].dtype),
               dr_acc_kind_name(xs[xi].acc), cases - row_cases, seconds_now() - row_t0, seconds_now() - t0);
        fflush(stdout);
    }
    printf("cases (seconds) by kernel:");
    for (size_t ki = 0; ki < NKERNELS; ++ki)
        printf(" %s %lld (%.1f)", kernel_name(all_kernels[ki]), kernel_cases[ki], kernel_seconds[ki]);
    printf("\nmultipass cases by launch shape:");
    for (int p = 0; p < PATH_COUNT; ++p) printf(" %s %lld", path_names[p], path_cases[p]);
    printf("\n");
    const int register_paths = !only || strcmp(only, "multipass") == 0;
    const int bulk_path = !only || strcmp(only, "multipass-bulk") == 0;
    if ((register_paths && (!path_cases[PATH_LAST_BLOCK] || (cluster_ok && !path_cases[PATH_CLUSTER]))) ||
        (bulk_path && cluster_ok && !path_cases[PATH_BULK])) {
        ++failures;
        printf("FAIL: not every multipass launch shape was run\n");
    }
    return 0;
}

/* Multipass, every row, R runs of one input on each launch shape (a cluster of 5 blocks, one of 8 blocks taking
 * two rounds, 17 blocks meeting through the last-block-done partials, a full grid wrapping three times), with 256-
 * and 1024-thread blocks: the same bits every time. The workspace is zeroed once and reused, as dreduce does. */
static int determinism(uint64_t seed, int reps)
{
    const int blocks[] = {256, 1024}, threads = dr_parallel_default_threads(), cluster_ok = hopper_device();
    uint64_t rng = seed;
    long long runs = 0;
    const double t0 = seconds_now();
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
        const row_t *row = &rows[ri];
        const size_t esize = dr_dtype_size(row->dtype), asize = dr_acc_kind_size(row->acc);
        const int row_failures = failures;
        void *d_result;
        CUDA_OR_DIE(cudaMalloc(&d_result, asize));
        for (int bi = 0; bi < 4; ++bi) {
            const dr_kernel_t kernel = bi < 2 ? DR_KERNEL_MULTIPASS : KERNEL_BULK;
            const shape_t s = shape_of(row, DR_KERNEL_MULTIPASS, blocks[bi % 2]);
            multipass_model_holds(row, blocks[bi % 2], s, cluster_ok);
            const size_t pb = s.per_block, chunk = DR_GPU_BULK_CHUNK_BYTES / esize;
            const size_t bulk_grid = plan_of(row, KERNEL_BULK, blocks[bi % 2], (size_t)1 << 40).grid[0];
            /* Bulk: 5 chunks and a remainder; every block 3 chunks (stages reused) and a remainder. */
            const size_t sizes[] = {kernel == KERNEL_BULK ? 5 * chunk + 3 : 5 * pb - 3,
                                    kernel == KERNEL_BULK ? 3 * bulk_grid * chunk + 12345 : 12 * pb + 7, 16 * pb + 1,
                                    3 * s.resident * pb + 12345};
            const size_t nsizes = kernel == KERNEL_BULK ? 2 : 4;
            for (size_t si = 0; si < nsizes; ++si) {
                const size_t n = sizes[si], off = si % 2;
                void *d_base;
                CUDA_OR_DIE(cudaMalloc(&d_base, (off + n) * esize));
                dr_gpu_reduce_t r = request(kernel, row, blocks[bi % 2], (char *)d_base + off * esize, n, d_result);
                dr_gen_t g = {DR_DATA_RANDOM, row->dtype, row->op, splitmix(&rng), 0, 0};
                CUDA_OR_DIE(dr_gpu_generate(&g, 0, (void *)r.d_in, n, 0));
                dr_reference_t ref;
                dr_reference_compute(&g, row->acc, 0, n, threads, &ref);
                dr_gpu_plan_t plan;
                CUDA_OR_DIE(dr_gpu_plan(&r, &plan));
                ++path_cases[path_of(&plan)];
                CUDA_OR_DIE(cudaMalloc(&r.d_work, plan.work_bytes));
                CUDA_OR_DIE(cudaMemset(r.d_work, 0, plan.work_bytes));
                dr_value_t first, v;
                for (int rep = 0; rep < reps; ++rep) {
                    CUDA_OR_DIE(cudaMemset(d_result, 0xA5, asize));
                    CUDA_OR_DIE(dr_gpu_reduce(&r, &plan, 0, NULL));
                    CUDA_OR_DIE(cudaDeviceSynchronize());
                    memset(&v, 0, sizeof v);
                    CUDA_OR_DIE(cudaMemcpy(&v, d_result, asize, cudaMemcpyDeviceToHost));
                    ++runs;
                    if (rep == 0) {
                        first = v;
                        dr_check_t c;
                        ++cases;
                        dr_reference_check(&ref, &v, plan.serial_depth, &c);
                        if (!c.pass) {
                            ++failures;
                            printf("FAIL %s %s %s n=%zu block=%d: %s\n", kernel_name(kernel),
                                   dr_dtype_name(row->dtype), dr_op_name(row->op), n, blocks[bi % 2], c.detail);
                        }
                    } else if (memcmp(&v, &first, asize) != 0) {
                        char a[64], b[64];
                        dr_value_format(row->acc, &first, a, sizeof a);
                        dr_value_format(row->acc, &v, b, sizeof b);
                        ++failures;
                        printf("FAIL multipass %s %s->%s n=%zu block=%d (%s): run %d gave %s, run 1 gave %s\n",
                               dr_dtype_name(row->dtype), dr_op_name(row->op), dr_acc_kind_name(row->acc), n,
                               blocks[bi % 2], path_names[path_of(&plan)], rep + 1, b, a);
                        break;
                    }
                }
                ++cases;
                CUDA_OR_DIE(cudaFree(r.d_work));
                CUDA_OR_DIE(cudaFree(d_base));
            }
        }
        CUDA_OR_DIE(cudaFree(d_result));
        printf("%-4s %-5s %-9s -> %-8s\n", failures == row_failures ? "ok" : "FAIL", dr_op_name(row->op),
               dr_dtype_name(row->dtype), dr_acc_kind_name(row->acc));
    }
    for (size_t xi = 0; xi < NEXACT; ++xi) {
        const int row_failures = failures;
        exact_determinism(&exact_rows[xi], reps, &rng, threads);
        printf("%-4s %-5s %-9s -> %-8s\n", failures == row_failures ? "ok" : "FAIL", dr_op_name(exact_rows[xi].op),
               dr_dtype_name(exact_rows[xi].dtype), dr_acc_kind_name(exact_rows[xi].acc));
    }
    printf("%lld runs (and the exact sums') in %.1f s; inputs by launch shape:", runs, seconds_now() - t0);
    for (int p = 0; p < PATH_COUNT; ++p) printf(" %s %lld", path_names[p], path_cases[p]);
    printf("\n");
    if (!every_path_ran(cluster_ok)) {
        ++failures;
        printf("FAIL: not every multipass launch shape was run\n");
    }
    return 0;
}

/* One multipass reduction (int64 sum, 17 blocks of 256 threads: the partials and the last-block-done path) that
 * breaks launch.h's contract on purpose; the sanitizer must report it. The result is not checked. */
static int plant(const char *what)
{
    const row_t row = {DR_INT64, DR_SUM, DR_ACC_I64};
    const size_t n = 17 * shape_of(&row, DR_KERNEL_MULTIPASS, 256).per_block;
    const int short_result = strcmp(what, "short-result") == 0;
    if (!short_result && strcmp(what, "unzeroed-work") != 0) return 2;
    dr_gpu_reduce_t r = request(DR_KERNEL_MULTIPASS, &row, 256, NULL, n, NULL);
    dr_gpu_plan_t plan;
    CUDA_OR_DIE(dr_gpu_plan(&r, &plan));
    void *d_in;
    CUDA_OR_DIE(cudaMalloc(&d_in, n * 8));
    r.d_in = d_in;
    dr_gen_t g = {DR_DATA_RANDOM, row.dtype, row.op, 1, 0, 0};
    CUDA_OR_DIE(dr_gpu_generate(&g, 0, d_in, n, 0));
    CUDA_OR_DIE(cudaMalloc(&r.d_result, short_result ? 7 : 8));
    CUDA_OR_DIE(cudaMalloc(&r.d_work, plan.work_bytes));
    if (short_result) CUDA_OR_DIE(cudaMemset(r.d_work, 0, plan.work_bytes));
    printf("planted: %s (multipass int64 sum, n=%zu, %zu blocks)\n",
           short_result ? "an 8-byte result written to a 7-byte buffer" : "a workspace that was never zeroed", n,
           plan.grid[0]);
    cudaError_t e = dr_gpu_reduce(&r, &plan, 0, NULL);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    printf("launch: %s\n", cudaGetErrorString(e));
    cudaFree(d_in);
    cudaFree(r.d_result);
    cudaFree(r.d_work);
    return 0;
}

static void usage_exit(void)
{
    fprintf(stderr, "usage: test_kernels [--large | --boundary [--subset | --rest] [--shard K/N] [--blocks B,B,...] "
                    "[--kernel NAME|exact] | "
                    "--determinism [--reps R] | --plant short-result|unzeroed-work]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    enum { MATRIX, LARGE, BOUNDARY, DETERMINISM, PLANT } mode = MATRIX;
    int which = 0, shard = 0, shards = 1, reps = 100, blocks[8] = {32, 64, 256, 1024}, nblocks = 4;
    const char *planted = NULL, *only = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--large") == 0) mode = LARGE;
        else if (strcmp(argv[i], "--boundary") == 0) mode = BOUNDARY;
        else if (strcmp(argv[i], "--determinism") == 0) mode = DETERMINISM;
        else if (strcmp(argv[i], "--subset") == 0) which = 1;
        else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--rest") == 0) which = 2;
        else if (strcmp(argv[i], "--plant") == 0 && i + 1 < argc) {
            mode = PLANT;
            planted = argv[++i];
        } else if (strcmp(argv[i], "--shard") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 0 || shard >= shards)
                usage_exit();
        }
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 2) usage_exit();
        } else if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) {
            nblocks = 0;
            for (char *p = argv[++i]; *p && nblocks < 8;) {
                char *end;
                const long b = strtol(p, &end, 10);
                if (end == p || b < 32 || b > 1024 || (b & (b - 1)) != 0) usage_exit();
                blocks[nblocks++] = (int)b;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') usage_exit();
            }
            if (nblocks == 0) usage_exit();
        } else
            usage_exit();
    }
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0) {
        printf("no GPU visible: skipped\n");
        return SKIP;
    }
    const char *env = getenv("DREDUCE_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("seed %" PRIu64 " (set DREDUCE_TEST_SEED to repeat)\n", seed);
    CUDA_OR_DIE(cudaSetDevice(0));
    if (mode == PLANT) {
        if (plant(planted) != 0) usage_exit();
        return 0;
    }
    int rc = mode == LARGE         ? large(seed)
             : mode == BOUNDARY    ? boundary(seed, which, shard, shards, blocks, nblocks, only)
             : mode == DETERMINISM ? determinism(seed, reps)
                                   : matrix(seed) || special_values(seed) || small_int_products(seed) ||
                                     exact_sums(seed);
    if (rc == SKIP) return SKIP;
    printf("%d passed, %d failed\n", cases - failures, failures);
    if (done_host) CUDA_OR_DIE(cudaFreeHost(done_host)); /* arm_done's word */
    /* Destroy the context before exit, so compute-sanitizer's leak check sees what is still allocated. */
    CUDA_OR_DIE(cudaDeviceReset());
    return failures || rc ? 1 : 0;
}
