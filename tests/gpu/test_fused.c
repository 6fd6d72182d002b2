/* argmin/argmax and stats on the GPU (kernels/fused.cu, through launch.h as the library calls it), against host
 * computations in this file that share nothing with the kernel but accum.h's rules:
 *   - rows: every row of DR_ARG_TABLE as argmin and as argmax, every row of DR_STATS_TABLE, and the float types'
 *     stats with the sum exact (DR_ACC_STATS_EXACT: the stats kernel, then the exact sum);
 *   - sizes around the kernel's boundaries (empty, one element, heads and tails shorter than a vector, one vector, one
 *     round of four, a block's round, grids that wrap), block sizes 32, 256 and 1024, starts misaligned by 0, 1 and
 *     3 elements and by one short of a vector, and a global index base (first_index) of 0 or 2^40 + 7;
 *   - data: random over a range, few distinct values (ties everywhere), a constant, the extreme planted first, last
 *     or twice, and for floats NaNs (two: the first must win), signed zeros and infinities.
 * argmin/argmax must give the host's element (value and index) to the bit: the one whose value is best, the first
 * of equal ones (== compares, so -0 and +0 tie), a NaN before any number; whatever the block size or start.
 * stats: count, min, max and integer sums exactly (sums in 128 bits), the exact sum (STATS_EXACT) to the bit, the
 * float sum within gamma(d) sum|x| + u |sum|, and m2 within the bound of src/cli/reference.h's stats check:
 *   |m2 - ref| <= gamma(d + 4) ref + 2 e sqrt(n ref) + n e^2,  e = gamma(d) max|x|,
 * ref a two-pass m2 in long double, d the plan's serial depth (each batch merge rounds a few times on non-negative
 * terms: the first term; a mean off by e moves m2 by the other two, Cauchy-Schwarz over the merges' weights).
 * Exits 77 (skipped) when no GPU is visible. */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launch.h"
#include "accum.h"
#include "table.h"
#include "stats.h"

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

#define FAIL(...)                                                                                              \
    do {                                                                                                       \
        ++failures;                                                                                            \
        if (failures <= 40) {                                                                                  \
            printf("FAIL ");                                                                                   \
            printf(__VA_ARGS__);                                                                               \
            printf("\n");                                                                                      \
        }                                                                                                      \
    } while (0)

typedef struct {
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
} row_t;

static const row_t rows[] = {
#define X(DT, OP, op, ACC, acc) {DR_##DT, DR_##OP, DR_ACC_##ACC},
    DR_ARG_TABLE DR_STATS_TABLE DR_STATS_EXACT_TABLE
#undef X
};

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int is_float(dr_dtype_t t) { return dr_dtype_is_float(t); }
static int is_signed_int(dr_dtype_t t)
{
    return t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64;
}

/* Element i of a host array as a float64 (floats; exact), a signed or an unsigned 64-bit integer. */
static double elem_f(dr_dtype_t t, const void *h, size_t i)
{
    switch (t) {
    case DR_FLOAT32: return ((const float *)h)[i];
    case DR_FLOAT64: return ((const double *)h)[i];
    case DR_FLOAT16: return dr_f16_to_f32(((const uint16_t *)h)[i]);
    default: return dr_bf16_to_f32(((const uint16_t *)h)[i]);
    }
}
static int64_t elem_i(dr_dtype_t t, const void *h, size_t i)
{
    switch (t) {
    case DR_INT8: return ((const int8_t *)h)[i];
    case DR_INT16: return ((const int16_t *)h)[i];
    case DR_INT32: return ((const int32_t *)h)[i];
    default: return ((const int64_t *)h)[i];
    }
}
static uint64_t elem_u(dr_dtype_t t, const void *h, size_t i)
{
    switch (t) {
    case DR_UINT8: return ((const uint8_t *)h)[i];
    case DR_UINT16: return ((const uint16_t *)h)[i];
    case DR_UINT32: return ((const uint32_t *)h)[i];
    default: return ((const uint64_t *)h)[i];
    }
}

/* ---- Data ---- */

enum { D_RANDOM, D_TIES, D_CONST, D_PLANTED, D_SPECIAL, D_COUNT };
static const char *const data_names[D_COUNT] = {"random", "ties", "constant", "planted", "special"};

static void store_f(dr_dtype_t t, void *h, size_t i, double v)
{
    switch (t) {
    case DR_FLOAT32: ((float *)h)[i] = (float)v; break;
    case DR_FLOAT64: ((double *)h)[i] = v; break;
    case DR_FLOAT16: { /* v is chosen representable: a float16 of 11 bits, |v| < 65504, or a special */
        const float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        uint16_t h16;
        const uint32_t sign = (b >> 16) & 0x8000u, e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
        if (e == 0xff) h16 = (uint16_t)(sign | 0x7c00u | (m ? 0x200u : 0));
        else if (e == 0) h16 = (uint16_t)sign; /* zero */
        else if (e < 113) h16 = (uint16_t)(sign | ((m | 0x800000u) >> (126 - e))); /* subnormal float16 */
        else h16 = (uint16_t)(sign | ((e - 112) << 10) | (m >> 13));
        ((uint16_t *)h)[i] = h16;
        break;
    }
    default: {
        const float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        ((uint16_t *)h)[i] = (uint16_t)(b >> 16);
        break;
    }
    }
}
static void store_i(dr_dtype_t t, void *h, size_t i, uint64_t bits)
{
    switch (dr_dtype_size(t)) {
    case 1: ((uint8_t *)h)[i] = (uint8_t)bits; break;
    case 2: ((uint16_t *)h)[i] = (uint16_t)bits; break;
    case 4: ((uint32_t *)h)[i] = (uint32_t)bits; break;
    default: ((uint64_t *)h)[i] = bits; break;
    }
}

/* A float exactly representable in the type: a 7-bit integer scaled by a power of two in [-8, 8]. */
static double small_float(uint64_t r)
{
    const double m = (double)((int)(r & 0x7f) - 64);
    return ldexp(m, (int)((r >> 8) % 17) - 8);
}

static void fill(dr_dtype_t t, int d, void *h, size_t n, uint64_t *rng)
{
    const uint64_t c = splitmix(rng);
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = splitmix(rng);
        if (is_float(t)) {
            double v = small_float(r);
            if (d == D_TIES) v = (double)((int)(r % 3) - 1);
            if (d == D_CONST) v = small_float(c);
            if (d == D_SPECIAL) {
                const int k = (int)(r % 8);
                v = k == 0 ? 0.0 : k == 1 ? -0.0 : k == 2 ? INFINITY : k == 3 ? -INFINITY : small_float(r >> 8);
            }
            store_f(t, h, i, v);
        } else {
            uint64_t b = r;
            if (d == D_TIES) b = (uint64_t)(int64_t)((int)(r % 3) - 1); /* -1 (the largest unsigned), 0, 1 */
            if (d == D_CONST) b = c;
            store_i(t, h, i, b);
        }
    }
    if (n == 0) return;
    if (d == D_PLANTED) { /* the type's extremes at both ends and in the middle, twice each */
        const size_t at[4] = {0, n - 1, n / 2, n / 3};
        for (int k = 0; k < 4; ++k) {
            const int hi = k & 1;
            if (is_float(t)) store_f(t, h, at[k], hi ? 60000.0 : -60000.0);
            else if (is_signed_int(t)) store_i(t, h, at[k], hi ? ~(uint64_t)0 >> (65 - 8 * dr_dtype_size(t))
                                                            : (uint64_t)1 << (8 * dr_dtype_size(t) - 1));
            else store_i(t, h, at[k], hi ? ~(uint64_t)0 : 0);
        }
    }
    if (d == D_SPECIAL && is_float(t) && n > 2) { /* two NaNs: the first one must win argmin and argmax */
        const size_t a = (size_t)(splitmix(rng) % n), b = (size_t)(splitmix(rng) % n);
        store_f(t, h, a, NAN);
        store_f(t, h, b, NAN);
    }
}

/* ---- Host answers ---- */

static dr_arg_t host_arg(const row_t *row, const void *h, size_t n, uint64_t first)
{
    dr_arg_t best;
    dr_arg_identity(row->acc, row->op, &best);
    for (size_t i = 0; i < n; ++i) {
        dr_arg_t c;
        c.index = first + i;
        if (row->acc == DR_ACC_ARG_F64) c.value.f64 = dr_arg_canon_f64(elem_f(row->dtype, h, i));
        else if (row->acc == DR_ACC_ARG_I64) c.value.i64 = elem_i(row->dtype, h, i);
        else c.value.u64 = elem_u(row->dtype, h, i);
        if (dr_arg_beats(row->acc, row->op, &c, &best)) best = c;
    }
    return best;
}

static double gamma_of(double d) { return d * 0x1p-53 / (1 - d * 0x1p-53); }

static void check_stats(const row_t *row, const void *h, size_t n, const dr_partial_t *got, uint64_t depth,
                        const char *what)
{
    const dr_dtype_t t = row->dtype;
    const dr_stats_t *s = row->acc == DR_ACC_STATS_EXACT ? &got->stats_exact.stats : &got->stats;
    const dr_acc_kind_t k = row->acc == DR_ACC_STATS_EXACT ? DR_ACC_STATS_F64 : row->acc;
    dr_stats_t want;
    dr_stats_identity(k, &want);
    if (s->count != n) {
        FAIL("%s: count %" PRIu64 ", want %zu", what, s->count, n);
        return;
    }
    long double sum = 0, abs_sum = 0, mx = 0;
    __int128 isum = 0;
    int nan = 0, pinf = 0, ninf = 0;
    for (size_t i = 0; i < n; ++i) {
        if (is_float(t)) {
            const double x = elem_f(t, h, i);
            want.min.f64 = dr_min_select_f64(want.min.f64, x);
            want.max.f64 = dr_max_select_f64(want.max.f64, x);
            if (x != x) nan = 1;
            else if (isinf(x)) x > 0 ? (pinf = 1) : (ninf = 1);
            else {
                sum += x;
                abs_sum += fabs(x);
                if (fabsl(x) > mx) mx = fabsl(x);
            }
        } else if (is_signed_int(t)) {
            const int64_t x = elem_i(t, h, i);
            want.min.i64 = dr_min_i64(want.min.i64, x);
            want.max.i64 = dr_max_i64(want.max.i64, x);
            isum += x;
            sum += x;
            if (fabsl((long double)x) > mx) mx = fabsl((long double)x);
        } else {
            const uint64_t x = elem_u(t, h, i);
            want.min.u64 = dr_min_u64(want.min.u64, x);
            want.max.u64 = dr_max_u64(want.max.u64, x);
            isum += (__int128)x;
            sum += x;
            if ((long double)x > mx) mx = (long double)x;
        }
    }
    if (memcmp(&s->min, &want.min, 8) || memcmp(&s->max, &want.max, 8)) {
        FAIL("%s: min/max %016" PRIx64 "/%016" PRIx64 ", want %016" PRIx64 "/%016" PRIx64, what, s->min.u64,
             s->max.u64, want.min.u64, want.max.u64);
        return;
    }
    if (!is_float(t)) {
        const unsigned __int128 u = (unsigned __int128)isum;
        if (s->sum.i128.lo != (uint64_t)u || s->sum.i128.hi != (uint64_t)(u >> 64)) {
            FAIL("%s: integer sum %016" PRIx64 "%016" PRIx64 " wrong", what, s->sum.i128.hi, s->sum.i128.lo);
            return;
        }
    }
    if (row->acc == DR_ACC_STATS_EXACT) {
        dr_exact_t e;
        dr_exact_zero(&e);
        for (size_t i = 0; i < n; ++i) {
            dr_exact_add_f64(&e, elem_f(t, h, i));
            if ((i & 0xfffff) == 0xfffff) dr_exact_normalize(&e);
        }
        dr_exact_normalize(&e);
        if (memcmp(&e, &got->stats_exact.sum, sizeof e) != 0) {
            FAIL("%s: the exact sum differs from the host's", what);
            return;
        }
    }
    if (n == 0) return;
    const int special = nan || pinf || ninf;
    if (is_float(t)) {
        const double fs = s->sum.f64;
        const double ws = (double)sum;
        const int ok = nan || (pinf && ninf) ? fs != fs
                       : pinf                ? fs == INFINITY
                       : ninf                ? fs == -INFINITY
                                             : fabs(fs - ws) <= gamma_of((double)depth) * (double)abs_sum + 0x1p-52 * fabs(ws);
        if (!ok) {
            FAIL("%s: float sum %.17g, want %.17g", what, fs, ws);
            return;
        }
    }
    if (special) { /* the moments of such data: NaN as the caller reads them (dr_stats_result) */
        dr_stats_result_t res;
        dr_stats_result(row->acc, got, &res);
        if (res.m2 == res.m2 || res.var_pop == res.var_pop)
            FAIL("%s: m2 %.17g with a NaN or infinity in the data, want NaN", what, res.m2);
        return;
    }
    /* The mean from the exact integer sum (a long double sum of 64-bit integers would be off by far more than
     * the kernel). */
    const long double mean = is_float(t) ? sum / (long double)n : (long double)isum / (long double)n;
    long double m2 = 0;
    for (size_t i = 0; i < n; ++i) {
        const long double x = is_float(t) ? elem_f(t, h, i) : is_signed_int(t) ? (long double)elem_i(t, h, i)
                                                                              : (long double)elem_u(t, h, i);
        m2 += (x - mean) * (x - mean);
    }
    const double e = gamma_of((double)depth) * (double)mx;
    const double bound = gamma_of((double)depth + 4) * (double)m2 + 2 * e * sqrt((double)n * (double)m2) +
                         (double)n * e * e + 1e-300;
    if (!(fabs(s->m2 - (double)m2) <= bound))
        FAIL("%s: m2 %.17g, want %.17Lg (error %.3g, bound %.3g)", what, s->m2, m2, fabs(s->m2 - (double)m2),
             bound);
}

/* ---- One case ---- */

typedef struct {
    void *d_base, *d_work, *d_result;
    size_t base_bytes, work_bytes;
} bufs_t;

static void ensure(void **p, size_t *have, size_t bytes, int zero)
{
    if (bytes <= *have) return;
    if (*p) CUDA_OR_DIE(cudaFree(*p));
    CUDA_OR_DIE(cudaMalloc(p, bytes));
    if (zero) CUDA_OR_DIE(cudaMemset(*p, 0, bytes));
    *have = bytes;
}

static void run_case(bufs_t *b, const row_t *row, int block, const void *h, size_t n, size_t off, uint64_t first,
                     int data, dr_partial_t *out_keep)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s (%s) n=%zu block=%d start+%zu first=%" PRIu64 " data=%s",
             dr_dtype_name(row->dtype), dr_op_name(row->op), dr_acc_kind_name(row->acc), n, block, off, first,
             data_names[data]);
    const size_t es = dr_dtype_size(row->dtype);
    size_t base_have = b->base_bytes;
    ensure(&b->d_base, &base_have, (n + off) * es + 16, 0);
    b->base_bytes = base_have;
    char *d_in = (char *)b->d_base + off * es;
    if (n) CUDA_OR_DIE(cudaMemcpy(d_in, h, n * es, cudaMemcpyHostToDevice));
    dr_gpu_reduce_t r;
    memset(&r, 0, sizeof r);
    r.kernel = DR_KERNEL_MULTIPASS;
    r.dtype = row->dtype;
    r.op = row->op;
    r.acc = row->acc;
    r.block = block;
    r.d_in = d_in;
    r.n = n;
    r.first_index = first;
    dr_gpu_plan_t plan;
    ++cases;
    cudaError_t e = dr_gpu_plan(&r, &plan);
    if (e != cudaSuccess) {
        FAIL("%s: plan: %s", what, cudaGetErrorString(e));
        return;
    }
    size_t work_have = b->work_bytes;
    ensure(&b->d_work, &work_have, plan.work_bytes, 1);
    b->work_bytes = work_have;
    /* launch.h: a workspace handed to a new plan starts zeroed (an earlier plan's partials may lie where this one
     * needs zeros: the exact sum's accumulator, after the stats kernel's partials). */
    CUDA_OR_DIE(cudaMemset(b->d_work, 0, plan.work_bytes));
    r.d_work = b->d_work;
    r.d_result = b->d_result;
    CUDA_OR_DIE(cudaMemset(b->d_result, 0xA5, sizeof(dr_partial_t))); /* poison */
    e = dr_gpu_reduce(&r, &plan, 0, NULL);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("FAIL %s: launch: %s\n", what, cudaGetErrorString(e));
        exit(1); /* a kernel fault leaves the context unusable */
    }
    dr_partial_t got;
    memset(&got, 0, sizeof got);
    CUDA_OR_DIE(cudaMemcpy(&got, b->d_result, dr_acc_kind_size(row->acc), cudaMemcpyDeviceToHost));
    if (out_keep) *out_keep = got;
    if (row->op == DR_STATS) {
        check_stats(row, h, n, &got, plan.serial_depth, what);
        return;
    }
    const dr_arg_t want = host_arg(row, h, n, first);
    if (memcmp(&got.value.arg, &want, sizeof want) != 0)
        FAIL("%s: got value %016" PRIx64 " at %" PRIu64 ", want %016" PRIx64 " at %" PRIu64, what,
             got.value.arg.value.u64, got.value.arg.index, want.value.u64, want.index);
}

static int gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

int main(void)
{
    if (gpu_count() == 0) {
        printf("SKIP: no GPU visible\n");
        return SKIP;
    }
    const char *seed_env = getenv("DREDUCE_TEST_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
    printf("seed %" PRIu64 " (DREDUCE_TEST_SEED to repeat)\n", seed);
    static const size_t sizes[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 64, 65, 129, 1000, 4097, 65537, 1000003};
    static const int blocks[] = {32, 256, 1024};
    bufs_t b;
    memset(&b, 0, sizeof b);
    CUDA_OR_DIE(cudaMalloc(&b.d_result, sizeof(dr_partial_t)));
    const size_t large_bytes = (size_t)32 << 20; /* with 32-thread blocks, four rounds of the grid or more */
    void *h = malloc(large_bytes + 64);
    if (!h) return 1;
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
        const row_t *row = &rows[ri];
        const size_t es = dr_dtype_size(row->dtype);
        const size_t offs[3] = {0, 1, 16 / es - 1 > 3 ? 16 / es - 1 : 3};
        uint64_t rng = seed ^ (ri * 0x9e3779b97f4a7c15ull);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const size_t n = sizes[si];
            for (int d = 0; d < D_COUNT; ++d) {
                if (d == D_SPECIAL && !is_float(row->dtype)) continue;
                fill(row->dtype, d, h, n, &rng);
                /* argmin/argmax: one element whatever the block or start (compared with the host's each time). */
                for (int bi = 0; bi < 3; ++bi)
                    for (int oi = 0; oi < 3; ++oi) {
                        if (n > 65537 && (bi + oi) % 2) continue; /* the large sizes: half the shapes */
                        run_case(&b, row, blocks[bi], h, n, offs[oi], (bi + oi) % 2 ? ((uint64_t)1 << 40) + 7 : 0,
                                 d, NULL);
                    }
            }
        }
        /* A grid that wraps (the grid-stride walk's unrolled loop several times a thread), one shape. */
        const size_t large_n = large_bytes / es - 1;
        fill(row->dtype, D_PLANTED, h, large_n, &rng);
        run_case(&b, row, 32, h, large_n, 1, 3, D_PLANTED, NULL);
        printf("%-9s %-6s %-15s done (%d cases so far, %d failures)\n", dr_dtype_name(row->dtype),
               dr_op_name(row->op), dr_acc_kind_name(row->acc), cases, failures);
        fflush(stdout);
    }
    /* Repeated runs of one input reusing the workspace give the same bits (stats too: a fixed grid). */
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
        uint64_t rng = seed + ri;
        fill(rows[ri].dtype, D_RANDOM, h, 1000003, &rng);
        dr_partial_t first, again;
        run_case(&b, &rows[ri], 256, h, 1000003, 0, 0, D_RANDOM, &first);
        for (int k = 0; k < 5; ++k) {
            run_case(&b, &rows[ri], 256, h, 1000003, 0, 0, D_RANDOM, &again);
            if (memcmp(&first, &again, dr_acc_kind_size(rows[ri].acc)) != 0)
                FAIL("%s %s (%s): run %d differs from run 0", dr_dtype_name(rows[ri].dtype), dr_op_name(rows[ri].op),
                     dr_acc_kind_name(rows[ri].acc), k + 1);
        }
    }
    free(h);
    cudaFree(b.d_base);
    cudaFree(b.d_work);
    cudaFree(b.d_result);
    printf("%d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
