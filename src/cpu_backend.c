#include "cpu_backend.h"

#include <stdlib.h>
#include <string.h>

#include "dreduce/accum.h"
#include "dreduce/table.h"
#include "parallel.h"

/* Input element types and their widening, by table token. */
typedef int32_t dr_in_INT32;
typedef int64_t dr_in_INT64;
typedef uint32_t dr_in_UINT32;
typedef uint64_t dr_in_UINT64;
typedef float dr_in_FLOAT32;
typedef double dr_in_FLOAT64;
typedef uint16_t dr_in_FLOAT16;
typedef uint16_t dr_in_BFLOAT16;
typedef int8_t dr_in_INT8;
typedef uint8_t dr_in_UINT8;
typedef int16_t dr_in_INT16;
typedef uint16_t dr_in_UINT16;
#define DR_WIDEN_INT32(x) (x)
#define DR_WIDEN_INT64(x) (x)
#define DR_WIDEN_UINT32(x) (x)
#define DR_WIDEN_UINT64(x) (x)
#define DR_WIDEN_FLOAT32(x) (x)
#define DR_WIDEN_FLOAT64(x) (x)
#define DR_WIDEN_FLOAT16(x) dr_f16_to_f32(x)
#define DR_WIDEN_BFLOAT16(x) dr_bf16_to_f32(x)
#define DR_WIDEN_INT8(x) (x)
#define DR_WIDEN_UINT8(x) (x)
#define DR_WIDEN_INT16(x) (x)
#define DR_WIDEN_UINT16(x) (x)
typedef int32_t dr_acc_I32;
typedef uint32_t dr_acc_U32;
typedef int64_t dr_acc_I64;
typedef uint64_t dr_acc_U64;
typedef float dr_acc_F32;
typedef double dr_acc_F64;

typedef void (*slice_fn)(const void *in, size_t begin, size_t end, dr_partial_t *out);

/* One slice loop per table row, at memory speed: DR_CPU_LANES independent accumulators (lane j takes the slice's
 * elements begin + j, begin + j + DR_CPU_LANES, ...), so the loop is not one chain of dependent adds, multiplies or
 * compares per thread but DR_CPU_LANES of them, and the fixed-width inner loop vectorizes (SLP). The lanes are then
 * folded as a tree (lane j with lane j + half, half = 4, 2, 1). Same slice, same order: deterministic for a given
 * thread count. Rounding depth of a slice of m elements: ceil(m / DR_CPU_LANES) + log2(DR_CPU_LANES). */
#define DR_CPU_LANES 8
#define DR_CPU_LANES_LOG2 3
#define X(DT, OP, op, ACC, acc)                                                                                \
    static void slice_##DT##_##OP##_##ACC(const void *in, size_t begin, size_t end, dr_partial_t *out)        \
    {                                                                                                          \
        const dr_in_##DT *p = in;                                                                              \
        dr_value_t id;                                                                                         \
        dr_acc_identity(DR_ACC_##ACC, DR_##OP, &id);                                                           \
        dr_acc_##ACC a[DR_CPU_LANES];                                                                          \
        for (int j = 0; j < DR_CPU_LANES; ++j) memcpy(&a[j], &id, sizeof a[j]);                                \
        size_t i = begin;                                                                                      \
        for (; end - i >= DR_CPU_LANES; i += DR_CPU_LANES)                                                     \
            for (int j = 0; j < DR_CPU_LANES; ++j)                                                             \
                a[j] = dr_##op##_##acc(a[j], (dr_acc_##ACC)DR_WIDEN_##DT(p[i + j]));                           \
        for (int j = 0; i < end; ++i, ++j) a[j] = dr_##op##_##acc(a[j], (dr_acc_##ACC)DR_WIDEN_##DT(p[i]));    \
        for (int half = DR_CPU_LANES / 2; half > 0; half /= 2)                                                 \
            for (int j = 0; j < half; ++j) a[j] = dr_##op##_##acc(a[j], a[j + half]);                          \
        memset(out, 0, sizeof out->value);                                                                     \
        memcpy(&out->value, &a[0], sizeof a[0]);                                                               \
    }
DR_REDUCTION_TABLE
#undef X

/* Exact sums, by binade. An element of sign s, biased exponent e and significand m (the implicit one included; a
 * subnormal has e = 0, and its unit is binade 1's) is (-1)^s m 2^(max(e, 1) - bias - frac): so the slice adds m into
 * an int64 bin indexed by its sign and exponent bits together (the bits shifted right by the fraction's width), and
 * the bins go into the dr_exact_t (dr_exact_add_scaled), each binade's positive bin less its negative one, once per
 * DR_EXACT_ADDS elements. An element costs a few integer operations and an add to a bin in the L1 cache, where
 * splitting each into the dr_exact_t's digits waited, every element, on the store of the one before to the same
 * word. Element i goes into bin set i mod lanes, so that neighbours of one binade are not one
 * chain of stores. float64's 53-bit significand is split into a high part of 27 bits and a low one of 26, each with
 * its bins, so a bin stays below 2^(27 + 30) over 2^30 elements (the float32 family's below 2^(24 + 30)). Infinities
 * and NaNs (every exponent bit set) take the implicit one too, so their bins are nonzero exactly when a chunk had
 * any, and the chunk is then scanned again for their flags. Any order gives the same integer, so the same bits as
 * adding each element to the dr_exact_t. */
#define DR_BITS_FLOAT32(p, i) dr_f32_to_bits(((const float *)(p))[i])
#define DR_BITS_FLOAT64(p, i) dr_f64_to_bits(((const double *)(p))[i])
#define DR_BITS_FLOAT16(p, i) ((uint32_t)((const uint16_t *)(p))[i])
#define DR_BITS_BFLOAT16(p, i) ((uint32_t)((const uint16_t *)(p))[i])
/* One element, its bits b, into bin set l. */
#define DR_EXACT_BIN_ADD(b, l)                                                                                 \
    do {                                                                                                       \
        const unsigned idx = (unsigned)((b) >> kFB);                                                           \
        const bits_t m = ((b) & kFrac) | (bits_t)((idx & kInf) != 0) << kFB;                                   \
        nonneg0 |= (b) ^ kSign;                                                                                \
        if (kSplit) {                                                                                          \
            lo_bins[l][idx] += (int64_t)(m & kLowMask);                                                        \
            hi_bins[l][kSplit ? idx : 0] += (int64_t)(m >> kSplit);                                            \
        } else {                                                                                               \
            lo_bins[l][idx] += (int64_t)m;                                                                     \
        }                                                                                                      \
    } while (0)
/* DT: the table token; UT: its bits' type; EB, FB: exponent and fraction bits; P0: 1074 - bias - FB, binade 1's
 * unit in units of 2^-1074; SPLIT: where float64's significand is split (0: not split); LANES: bin sets. */
#define DR_EXACT_BIN_SLICE(DT, UT, EB, FB, P0, SPLIT, LANES)                                                  \
    static void slice_##DT##_SUM_EXACT(const void *in, size_t begin, size_t end, dr_partial_t *out)           \
    {                                                                                                          \
        typedef UT bits_t;                                                                                     \
        enum { kFB = FB, kBinades = 1 << EB, kInf = kBinades - 1, kSplit = SPLIT, kLanes = LANES };            \
        enum { kHi = SPLIT ? 2 * kBinades : 1 };                                                               \
        const UT kFrac = ((UT)1 << FB) - 1, kSign = (UT)1 << (EB + FB), kLowMask = ((UT)1 << SPLIT) - 1;       \
        int64_t lo_bins[kLanes][2 * kBinades], hi_bins[kLanes][kHi]; /* [sign and exponent] */                \
        dr_exact_t *a = &out->exact;                                                                           \
        dr_exact_zero(a);                                                                                      \
        for (size_t i = begin; i < end;) {                                                                     \
            const size_t first = i, stop = end - i > DR_EXACT_ADDS ? i + DR_EXACT_ADDS : end;                  \
            memset(lo_bins, 0, sizeof lo_bins);                                                                \
            memset(hi_bins, 0, sizeof hi_bins);                                                                \
            UT nonneg0 = 0;                                                                                    \
            for (; stop - i >= kLanes; i += kLanes)                                                            \
                for (int l = 0; l < kLanes; ++l) {                                                             \
                    const UT b = DR_BITS_##DT(in, i + (size_t)l);                                              \
                    DR_EXACT_BIN_ADD(b, l);                                                                    \
                }                                                                                              \
            for (int l = 0; i < stop; ++i, ++l) {                                                              \
                const UT b = DR_BITS_##DT(in, i);                                                              \
                DR_EXACT_BIN_ADD(b, l);                                                                        \
            }                                                                                                  \
            int64_t special = 0;                                                                               \
            for (unsigned e = 0; e <= kInf; ++e) {                                                             \
                int64_t lo = 0, hi = 0;                                                                        \
                for (int l = 0; l < kLanes; ++l) {                                                             \
                    lo += lo_bins[l][e] - lo_bins[l][e + kBinades];                                            \
                    if (kSplit) hi += hi_bins[l][kSplit ? e : 0] - hi_bins[l][kSplit ? e + kBinades : 0];      \
                    if (e == kInf) /* float64's implicit one is in its high part */                            \
                        special |= lo_bins[l][e] | lo_bins[l][e + kBinades] |                                  \
                                   (kSplit ? hi_bins[l][kSplit ? e : 0] | hi_bins[l][kSplit ? e + kBinades : 0] : 0); \
                }                                                                                              \
                if (e == kInf) break;                                                                          \
                const int p = (int)(e ? e : 1) + P0;                                                           \
                if (lo) dr_exact_add_scaled(a, lo, p);                                                         \
                if (hi) dr_exact_add_scaled(a, hi, p + kSplit);                                                \
            }                                                                                                  \
            a->flags |= DR_EXACT_TERM | (nonneg0 ? DR_EXACT_NOT_NEG_ZERO : 0u);                                \
            if (special)                                                                                       \
                for (size_t j = first; j < stop; ++j) {                                                        \
                    const UT b = DR_BITS_##DT(in, j);                                                          \
                    if (((b >> FB) & kInf) == kInf)                                                            \
                        a->flags |= (b & kFrac)   ? DR_EXACT_NAN                                               \
                                    : (b & kSign) ? DR_EXACT_NEG_INF                                           \
                                                  : DR_EXACT_POS_INF;                                          \
                }                                                                                              \
            dr_exact_normalize(a);                                                                             \
        }                                                                                                      \
    }
DR_EXACT_BIN_SLICE(FLOAT32, uint32_t, 8, 23, 924, 0, 4)
DR_EXACT_BIN_SLICE(FLOAT16, uint32_t, 5, 10, 1049, 0, 4)
DR_EXACT_BIN_SLICE(BFLOAT16, uint32_t, 8, 7, 940, 0, 4)
DR_EXACT_BIN_SLICE(FLOAT64, uint64_t, 11, 52, -1, 26, 2)
#undef DR_EXACT_BIN_SLICE
#undef DR_EXACT_BIN_ADD

static slice_fn find_slice(dr_dtype_t want_dtype, dr_op_t want_op, dr_acc_kind_t want_acc)
{
#define X(DT, OP, op, ACC, acc)                                                                                \
    if (want_dtype == DR_##DT && want_op == DR_##OP && want_acc == DR_ACC_##ACC) return slice_##DT##_##OP##_##ACC;
    DR_REDUCTION_TABLE
    DR_EXACT_TABLE
#undef X
    return NULL;
}

typedef struct {
    slice_fn fn;
    const void *in;
    size_t n;
    dr_partial_t *partials;
} reduce_job_t;

static void reduce_worker(void *ctx, int i, int k)
{
    reduce_job_t *job = ctx;
    unsigned long long b, e;
    dr_parallel_slice(job->n, i, k, &b, &e);
    job->fn(job->in, (size_t)b, (size_t)e, &job->partials[i]);
}

int dr_cpu_reduce(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, const void *in, size_t n, int nthreads,
                  dr_partial_t *out, uint64_t *depth)
{
    enum { kMaxThreads = 1024 };
    slice_fn fn = find_slice(dtype, op, acc);
    if (!fn) return -1;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > kMaxThreads) nthreads = kMaxThreads;
    /* Below ~64K elements per thread, thread start-up costs more than the work. */
    if ((size_t)nthreads > n / 65536 + 1) nthreads = (int)(n / 65536 + 1);
    /* The threads' partials: on the heap, since an exact one is 552 bytes (one thread: on the stack). */
    dr_partial_t one, *partials = nthreads == 1 ? &one : malloc((size_t)nthreads * sizeof *partials);
    if (!partials) return -2;
    reduce_job_t job = {fn, in, n, partials};
    dr_parallel_run(nthreads, reduce_worker, &job);
    dr_partial_identity(acc, op, out);
    for (int i = 0; i < nthreads; ++i) dr_partial_combine(acc, op, out, &partials[i]);
    if (partials != &one) free(partials);
    /* Longest rounding path: a lane of the longest slice, the lanes' tree, the slices in thread order. */
    const uint64_t slice = (n + (size_t)nthreads - 1) / (size_t)nthreads;
    *depth = acc == DR_ACC_EXACT ? 1
                                 : (slice + DR_CPU_LANES - 1) / DR_CPU_LANES + DR_CPU_LANES_LOG2 + (uint64_t)nthreads;
    return 0;
}

dr_status_t dr_cpu_reduce_checked(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, const void *in, size_t n,
                                  int nthreads, dr_partial_t *out, uint64_t *depth)
{
    const int rc = dr_cpu_reduce(dtype, op, acc, in, n, nthreads, out, depth);
    if (rc == -1)
        dr_error("the CPU backend has no reduction for %s %s accumulating in %s", dr_dtype_name(dtype), dr_op_name(op),
                 dr_acc_kind_name(acc));
    else if (rc != 0)
        dr_error("cannot allocate the CPU backend's %d thread partials", nthreads);
    return rc == 0 ? DR_OK : DR_ERR_RUNTIME;
}

typedef struct {
    const dr_gen_t *g;
    uint64_t first;
    void *in;
    size_t n;
} gen_job_t;

static void gen_worker(void *ctx, int i, int k)
{
    gen_job_t *job = ctx;
    unsigned long long b, e;
    dr_parallel_slice(job->n, i, k, &b, &e);
    const dr_gen_t *g = job->g;
    const uint64_t f = job->first;
    switch (g->dtype) {
    case DR_INT32: for (size_t j = b; j < e; ++j) ((int32_t *)job->in)[j] = dr_gen_int32(g, f + j); break;
    case DR_INT64: for (size_t j = b; j < e; ++j) ((int64_t *)job->in)[j] = dr_gen_int64(g, f + j); break;
    case DR_UINT32: for (size_t j = b; j < e; ++j) ((uint32_t *)job->in)[j] = dr_gen_uint32(g, f + j); break;
    case DR_UINT64: for (size_t j = b; j < e; ++j) ((uint64_t *)job->in)[j] = dr_gen_uint64(g, f + j); break;
    case DR_FLOAT32: for (size_t j = b; j < e; ++j) ((float *)job->in)[j] = dr_gen_float32(g, f + j); break;
    case DR_FLOAT64: for (size_t j = b; j < e; ++j) ((double *)job->in)[j] = dr_gen_float64(g, f + j); break;
    case DR_FLOAT16: for (size_t j = b; j < e; ++j) ((uint16_t *)job->in)[j] = dr_gen_float16(g, f + j); break;
    case DR_BFLOAT16: for (size_t j = b; j < e; ++j) ((uint16_t *)job->in)[j] = dr_gen_bfloat16(g, f + j); break;
    case DR_INT8: for (size_t j = b; j < e; ++j) ((int8_t *)job->in)[j] = dr_gen_int8(g, f + j); break;
    case DR_UINT8: for (size_t j = b; j < e; ++j) ((uint8_t *)job->in)[j] = dr_gen_uint8(g, f + j); break;
    case DR_INT16: for (size_t j = b; j < e; ++j) ((int16_t *)job->in)[j] = dr_gen_int16(g, f + j); break;
    case DR_UINT16: for (size_t j = b; j < e; ++j) ((uint16_t *)job->in)[j] = dr_gen_uint16(g, f + j); break;
    default: break;
    }
}

void dr_cpu_generate(const dr_gen_t *g, uint64_t first, void *in, size_t n, int nthreads)
{
    if ((size_t)nthreads > n / 65536 + 1) nthreads = (int)(n / 65536 + 1);
    gen_job_t job = {g, first, in, n};
    dr_parallel_run(nthreads, gen_worker, &job);
}
