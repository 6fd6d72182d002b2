/* Element types, reduction ops and accumulator kinds: the vocabulary shared by the parser, the kernels, the CPU
 * backend, the MPI combine and the report. Plain C, also included by CUDA sources. The name tables live in
 * src/common/types.c, their functions in src/common/dtype.h (internal). */
#ifndef DREDUCE_TYPES_H
#define DREDUCE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element type of the input array. */
typedef enum {
    DR_INT32 = 0,
    DR_INT64,
    DR_UINT32,
    DR_UINT64,
    DR_FLOAT32,
    DR_FLOAT64,
    DR_FLOAT16,  /* IEEE binary16, stored as its 16 bits */
    DR_BFLOAT16, /* bfloat16, stored as its 16 bits */
    DR_INT8,     /* the small integers come last so the values above stay as they were */
    DR_UINT8,    /* also NumPy's bool ('|b1'), read as 0/1 */
    DR_INT16,
    DR_UINT16,
    DR_DTYPE_COUNT
} dr_dtype_t;

/* Reduction ops. The bitwise ones are defined for the integer types only (dr_op_valid). STATS gives count, sum, min,
 * max, mean and variance in one pass (a dr_stats_t); ARGMIN and ARGMAX the extreme value and the global index of its
 * first occurrence (a dr_arg_t). Their rules are in accum.h. */
typedef enum {
    DR_SUM = 0,
    DR_MIN,
    DR_MAX,
    DR_PROD,
    DR_BAND,
    DR_BOR,
    DR_BXOR,
    DR_STATS,
    DR_ARGMIN,
    DR_ARGMAX,
    DR_OP_COUNT
} dr_op_t;

/* Questions about the distribution of an array (dreduce_histogram, dreduce_quantile in dreduce.h): not reductions
 * to one value, so not dr_op_t. */
typedef enum { DR_DIST_HISTOGRAM = 0, DR_DIST_QUANTILE, DR_DIST_COUNT } dr_dist_op_t;

/* Kernel levels, in the tutorial's order; MULTIPASS is the production kernel. See kernels/launch.h. */
typedef enum {
    DR_KERNEL_NEIGHBORED = 0,
    DR_KERNEL_INTERLEAVED,
    DR_KERNEL_SMEM,
    DR_KERNEL_SMEM2,
    DR_KERNEL_UNROLL,
    DR_KERNEL_SHUFFLE,
    DR_KERNEL_MULTIPASS,
    DR_KERNEL_COUNT
} dr_kernel_t;

/* How floating-point sums and products accumulate: WIDE (default) in float64, NATIVE in the input type (float32 for
 * the 16-bit types, which have too few bits to accumulate in), MODE_EXACT ("exact"; sums only) without rounding:
 * the exact sum in accumulator kind DR_ACC_EXACT, rounded once to float64 where the result is read, the same bits
 * at any scale (accum.h, "Exact sums"). Integers and min/max ignore it (they are exact already); a product has no
 * exact mode (dr_acc_mode_valid). STATS keeps float64 moments in WIDE and also the exact sum in MODE_EXACT (NATIVE
 * means nothing for it); ARGMIN/ARGMAX compare the values themselves (WIDE or MODE_EXACT, the same result; NATIVE
 * means nothing for them). */
typedef enum { DR_ACC_WIDE = 0, DR_ACC_NATIVE, DR_ACC_MODE_EXACT, DR_ACC_MODE_COUNT } dr_acc_mode_t;

/* What a NaN element of a float array means (src/common/accum.h, "NaN policy"). PROPAGATE (default): a value like
 * any, as NumPy's plain functions take it (a sum with a NaN is NaN, argmin finds the first NaN, a quantile of an
 * array holding NaN is NaN). OMIT: a missing value, as NumPy's nan* functions take it (np.nansum, np.nanmin,
 * np.nanargmin, np.nanmean, np.nanvar, np.nanquantile, ...): every op answers for the elements that are not NaN, and
 * the result says how many were left out. Integer arrays have no NaN: OMIT changes nothing there. */
typedef enum { DR_NAN_PROPAGATE = 0, DR_NAN_OMIT, DR_NAN_POLICY_COUNT } dr_nan_policy_t;

/* The type a reduction accumulates (and reports) in. Signed sums and products wrap modulo 2^64 like the unsigned
 * ones: that keeps them exact and associative, so every grid and rank count gives the same bits. */
typedef enum {
    DR_ACC_I32 = 0,
    DR_ACC_U32,
    DR_ACC_I64,
    DR_ACC_U64,
    DR_ACC_F32,
    DR_ACC_F64,
    DR_ACC_EXACT, /* a dr_exact_t; the result a caller reads is its float64 rounding */
    /* argmin/argmax (a dr_arg_t): the value widened exactly to 64 bits, signed integers, unsigned ones, floats */
    DR_ACC_ARG_I64,
    DR_ACC_ARG_U64,
    DR_ACC_ARG_F64,
    /* stats (a dr_stats_t): min/max and the sum of signed integers, unsigned ones (both exactly), floats (sum in
     * float64), floats with the sum exact (a dr_stats_exact_t) */
    DR_ACC_STATS_I64,
    DR_ACC_STATS_U64,
    DR_ACC_STATS_F64,
    DR_ACC_STATS_EXACT,
    DR_ACC_KIND_COUNT
} dr_acc_kind_t;

/* One 64-bit value of the kind a dr_arg_t or dr_stats_t says (int64, uint64 or float64). */
typedef union {
    int64_t i64;
    uint64_t u64;
    double f64;
} dr_scalar_t;

/* An argmin/argmax result: the extreme value (exactly: integers widened to 64 bits, floats to float64; a NaN is the
 * canonical one) and the global index of its first occurrence. DR_ARG_NONE: no element (an empty array). */
#define DR_ARG_NONE UINT64_MAX
typedef struct {
    dr_scalar_t value;
    uint64_t index;
} dr_arg_t;

/* One accumulator value, whatever its kind (a dr_stats_t is larger: see dr_partial_t). */
typedef union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    dr_arg_t arg;
    unsigned char bytes[16];
} dr_value_t;

/* A sum of integers, exactly: two's complement in 128 bits (lo, then hi; unsigned sums read hi as unsigned). */
typedef struct {
    uint64_t lo;
    uint64_t hi;
} dr_int128_t;

/* One-pass statistics so far (accum.h, "Statistics"): the count, the moments about the running mean in float64
 * (batches merged with Chan's update within a thread, and Chan's pairwise merge everywhere else), the sum (integers exactly in 128 bits, floats in
 * float64) and min/max by the rules of DR_MIN/DR_MAX, in the kind's scalar (int64, uint64 or float64). */
typedef struct {
    uint64_t count;
    double mean; /* the running mean the moments are taken about */
    double m2;   /* sum of (x - mean)^2 */
    union {
        dr_int128_t i128;
        double f64;
    } sum;
    dr_scalar_t min, max;
} dr_stats_t;

/* An exact sum so far (accumulator kind DR_ACC_EXACT): a fixed-point integer of DR_EXACT_WORDS 32-bit digits, digit
 * i weighing 2^(32 i - 1074), each held in a signed 64-bit word with room for carries, and flags for what is not a
 * finite number. src/common/accum.h ("Exact sums") has its rules and the reasons for its size. */
#define DR_EXACT_WORDS 68
typedef struct {
    int64_t w[DR_EXACT_WORDS];
    uint32_t flags; /* DR_EXACT_NAN, ... (accum.h) */
    uint32_t pad;   /* zero */
} dr_exact_t;

/* Statistics as a caller reads them (dreduce_stats_t in dreduce.h; made by dr_stats_result, src/common/stats.h). A
 * NaN in any field is the canonical one (0x7fff...ff), whichever backend and grouping made it. */
typedef struct {
    uint64_t count;       /* elements, NaNs included */
    dr_acc_kind_t kind;   /* of min and max: DR_ACC_I64, DR_ACC_U64 or DR_ACC_F64 */
    dr_scalar_t min, max; /* as DR_MIN / DR_MAX give them (NaN wins, -0 below +0); their identities for count 0 */
    double sum;           /* integers and exact mode: the exact sum rounded once; wide floats: the float64 sum */
    double mean;          /* sum / count: rounded once from the exact sum (integers, exact mode); NaN for count 0 */
    double m2;            /* sum of (x - mean)^2 */
    double var_pop;       /* m2 / count (NaN for count 0) */
    double var_sample;    /* m2 / (count - 1) (NaN for count < 2) */
    int sum_is_int;       /* 1 for integer types: sum_int holds the exact sum */
    dr_int128_t sum_int;  /* two's complement; unsigned types: unsigned */
} dr_stats_result_t;

/* Statistics of floats with the sum exact (DR_ACC_STATS_EXACT): the float64 statistics (their sum unused) and the
 * exact sum. */
typedef struct {
    dr_stats_t stats;
    dr_exact_t sum;
} dr_stats_exact_t;

/* A partial result on its way between the levels of a reduction (chunks, threads, ranks): one value of any
 * accumulator kind. The result a caller reads is a dr_value_t (an exact partial rounded to float64 there), or for
 * stats a dreduce_stats_t (dreduce.h). */
typedef union {
    dr_value_t value;
    dr_exact_t exact;
    dr_stats_t stats;
    dr_stats_exact_t stats_exact;
} dr_partial_t;

/* Where a rank reduces: a GPU when one is visible (AUTO), a GPU or fail (GPU), the host's cores (CPU). */
typedef enum { DR_DEVICE_AUTO = 0, DR_DEVICE_GPU, DR_DEVICE_CPU } dr_device_choice_t;
/* How partials combine across ranks: within each node then over the node leaders (HIER), or one reduce (FLAT). */
typedef enum { DR_COMBINE_HIER = 0, DR_COMBINE_FLAT } dr_combine_mode_t;
/* How a GPU partial reaches MPI: AUTO (device buffers on a CUDA-aware MPI, else HOST), DEVICE (device buffers, or
 * fail), HOST (copied to pinned host memory), MAPPED (the last kernel writes it into mapped pinned host memory). */
typedef enum { DR_STAGING_AUTO = 0, DR_STAGING_DEVICE, DR_STAGING_HOST, DR_STAGING_MAPPED } dr_staging_t;
/* How a global array is split over ranks (dreduce_shard): n elements in all, in near-equal contiguous shares
 * (STRONG), or n elements on every rank (WEAK). */
typedef enum { DR_SCALING_STRONG = 0, DR_SCALING_WEAK } dr_scaling_t;
/* Where a rank's threads run (through hwloc). Each rank has a share of its node's CPUs: the cores near its GPU (every
 * core for the CPU backend) divided among the ranks wanting them, so that ranks of one node share no core (unless
 * they outnumber the cores: the report's note says so).
 * AUTO binds the process's CPUs (all its threads) to that share and its memory next to its GPU (or share); NONE
 * leaves the launcher's binding as it is; WORKERS leaves the caller's threads as they are and runs the library's
 * own worker threads (the CPU backend's) on the share. */
typedef enum { DR_BINDOPT_AUTO = 0, DR_BINDOPT_NONE, DR_BINDOPT_WORKERS } dr_bind_choice_t;
/* How a host array reaches its partial on a GPU context (src/lib/host_path.h). CPU: the rank's CPU threads (its
 * share of the node) reduce it in place; GPU: it is copied to the GPU in chunks and reduced there (pinned memory by
 * DMA straight from the caller's buffer, pageable memory through the CUDA driver's staging); SPLIT: both at once, the
 * array cut in proportion to the two paths' measured rates (the GPU takes the front part, the CPU the rest; see
 * dreduce_host_rates_t). AUTO:
 * the fastest of the three as measured once per context for the buffer's kind (pinned or pageable) and row, on the
 * first such host array of at least DREDUCE_HOST_MEASURE_MIN bytes (dreduce.h); smaller host arrays take the CPU
 * path. The CPU backend reduces host arrays in place whatever the choice. */
typedef enum {
    DR_HOST_PATH_AUTO = 0,
    DR_HOST_PATH_CPU,
    DR_HOST_PATH_GPU,
    DR_HOST_PATH_SPLIT,
    DR_HOST_PATH_COUNT
} dr_host_path_t;

#ifdef __cplusplus
}
#endif
#endif
