/* The host reference a result is checked against: computed straight from the data generator (no stored array) on
 * host threads, exactly for integers and min/max, in double-double for float sums and products. References of
 * shards merge, so each rank computes its own and rank 0 merges them (stats in two rounds: see "stats" below).
 *
 * The check (dr_reference_check) and its bound:
 *   integers, min, max, bitwise: the result must equal the reference bit for bit (NaN matches any NaN);
 *   exact float sums (acc EXACT): the float64 result must equal the reference's own exact sum, rounded, bit for
 *               bit (bound 0);
 *   float sum:  |result - ref| <= gamma(d) * sum|x| + u * |ref|,   gamma(d) = d*u / (1 - d*u),
 *               u the accumulator's unit roundoff, d the most roundings along any path of the reduction tree
 *               (reported by the backend plus the combine); the classic bound for recursive summation over a tree;
 *   float prod: |result - ref| <= gamma(n) * |ref| (every one of the n-1 roundings compounds, whatever the order).
 *   Infinities and NaN must match the IEEE outcome (inf - inf and 0 * inf give NaN); a reference past the
 *   accumulator's largest finite value expects infinity; a product below its smallest normal value may come out as
 *   anything of at most that magnitude with the right sign (or zero).
 *   argmin/argmax (dr_reference_check): the value bit for bit (a NaN is the canonical one) and the index, equal to
 *               the reference's: the first occurrence of the extreme value (-0 == +0), or the first NaN;
 *   stats (dr_reference_check_stats, op DR_STATS):
 *     count, min, max: exactly (min/max by DR_MIN/DR_MAX's rules, bit for bit);
 *     sum:      integers: the 128-bit sum exactly and its float64 rounding bit for bit; exact mode: the exact sum
 *               rounded once, bit for bit; wide floats: the float sum's bound above;
 *     mean:     integers and the exact mode: bit for bit the exact sum divided by the count, rounded once (the
 *               reference divides its own exact sum, limb by limb); wide floats: within
 *               (gamma(d) sum|x| + u |S|) / n + u |S / n|, S the exact sum;
 *     m2 = sum (x - mean)^2, against a two-pass reference: pass 1 (merged over the shards) gives the exact mean as a
 *               double-double, pass 2 sums (x - mean)^2 in double-double about it (dr_reference_begin_pass2):
 *                   |m2 - M2| <= g M2 + (1 + g) (6 E sqrt(C M2) + 6 C E^2),
 *               g = gamma(4 d + 8), E = g max|x|, C = n max(1, log2 n), M2 the reference's value, d the depth as for
 *               a sum, a merge level counting one (a batch's summation tree counts its own levels). Why: the mean a
 *               batch or a Chan merge computes is within E of the exact mean of its elements (a batch: its sum's
 *               roundings, then a division; a merge mean1 + (mean2 - mean1) n2 / n, n2 / n <= 1/2 since the larger
 *               count goes first, adds at most 4 u max|x| per level: hence 4 d). A batch's m2 about its mean b + e
 *               is sum (x - b)^2 + k e^2 (the cross term vanishes); a merge adds (delta + De)^2 n1 n2 / n where
 *               delta is the exact difference of the means and |De| <= 2 E; every term is non-negative and rounded at
 *               most 4 d + 8 times (relative error g). Exactly, M2 = sum of the batches' M2 + sum over merges of
 *               delta^2 n1 n2 / n, so what the mean errors add is at most n E^2 + 4 E sqrt(C' M2) + 4 C' E^2 with
 *               C' = sum n1 n2 / n <= (n / 4) log2 n over any merge tree (Cauchy-Schwarz, then induction with
 *               H(p) >= 4 p (1 - p)); an integer beyond 2^53 becomes a float64 within u |x| <= E, which adds
 *               2 E sqrt(n M2) + n E^2. C covers both. n < 2^53 (counts convert to float64 exactly);
 *     var_pop, var_sample: the result's own m2 / n and m2 / (n - 1), bit for bit (NaN for n = 0, n < 2);
 *     NaN and infinities: a NaN element makes sum, mean and m2 NaN; infinities make sum and mean that infinity
 *               (NaN with both signs) and m2 NaN. Overflow: where sum |x| passes float64's range, the wide float
 *               sum, mean and m2 may overflow along the way (an infinity or NaN is accepted for them); an M2 past
 *               the range expects an infinity or NaN. */
#ifndef DREDUCE_REFERENCE_H
#define DREDUCE_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "datagen.h"
#include "dreduce.h" /* dreduce_dist_info_t, dreduce_order_stat_t */
#include "dtype.h"

/* An exact sum of float64 values, kept apart from accum.h's dr_exact_t so that it checks it: another
 * representation (a two's-complement integer of 64-bit limbs, unit 2^-1074, every carry propagated at once) and
 * another rounding (the C library's uint64-to-double conversion of the top bits, with a sticky bit). */
#define DR_REF_EXACT_LIMBS 35 /* 2240 bits: 2^64 terms below 2^1024, in units of 2^-1074, and a sign */
typedef struct {
    uint64_t limb[DR_REF_EXACT_LIMBS];
    uint64_t nan, pos_inf, neg_inf; /* terms that are not finite */
    uint64_t terms, neg_zeros;      /* every term, and the -0.0 ones */
} dr_ref_exact_t;

void dr_ref_exact_init(dr_ref_exact_t *r);
void dr_ref_exact_add(dr_ref_exact_t *r, double x);
void dr_ref_exact_merge(dr_ref_exact_t *into, const dr_ref_exact_t *from);
/* The sum rounded to nearest float64, ties to even, with IEEE's rules for NaN, infinities and the sign of zero (a
 * NaN is the canonical one, 0x7fffffffffffffff). */
double dr_ref_exact_value(const dr_ref_exact_t *r);

typedef struct {
    dr_acc_kind_t acc;
    dr_op_t op;
    uint64_t count;
    dr_value_t exact;   /* integer kinds and float min/max: the expected accumulator value; argmin/argmax: .arg */
    double hi, lo;      /* float sum/prod: the expected value as a double-double (finite elements only) */
    double abs_sum;     /* float sum and stats: sum of |x| over finite elements */
    uint64_t nan, pos_inf, neg_inf, zero, negative; /* float sum/prod: special elements seen */
    dr_ref_exact_t exact_sum; /* acc EXACT, and float stats: the exact sum (its counters: NaN, infinities) */
    /* stats, pass 1 */
    dr_int128_t int_sum;        /* integers: the exact sum (two's complement; unsigned types: unsigned) */
    dr_scalar_t min, max;       /* by DR_MIN / DR_MAX's rules, in the kind's scalar */
    double max_abs;             /* largest |x| over finite elements */
    /* stats, pass 2 (dr_reference_begin_pass2): sum (x - c)^2 over finite elements as double-doubles, about the
     * whole array's mean (center) and about this reference's own (own_center; own_m2 valid while own_valid) */
    int omit;                   /* NaN policy OMIT: NaN elements replaced by the op's NumPy value (stats: left out) */
    uint64_t nan_left;          /* OMIT: NaN elements replaced or left out (count includes them, stats' does not) */
    int pass;                   /* 1, or 2 */
    int own_valid;
    double center[2], own_center[2];
    double m2[2], own_m2[2];
} dr_reference_t;

/* The reference over elements first..first+n-1 of g's array, reducing into accumulator kind acc (argmin/argmax
 * report their indices as these global ones). For stats: pass 1 (see dr_reference_begin_pass2). */
void dr_reference_compute(const dr_gen_t *g, dr_acc_kind_t acc, uint64_t first, uint64_t n, int nthreads,
                          dr_reference_t *out);

/* dr_reference_compute under a NaN policy (OMIT: as NumPy's nan* functions; accum.h, "NaN policy"). */
void dr_reference_compute_nan(const dr_gen_t *g, dr_acc_kind_t acc, dr_nan_policy_t nan, uint64_t first, uint64_t n,
                              int nthreads, dr_reference_t *out);

/* The NaN policy of an empty reference (dr_reference_init's: PROPAGATE), before elements are added. */
void dr_reference_set_nan(dr_reference_t *r, dr_nan_policy_t nan);

/* Add elements first..first+n-1 of g's array to *r (as dr_reference_compute, without starting anew): a stats
 * reference's pass 2 over its shard once more. */
void dr_reference_generate(const dr_gen_t *g, uint64_t first, uint64_t n, int nthreads, dr_reference_t *r);

/* An empty reference (no elements yet) reducing with op into accumulator kind acc. */
void dr_reference_init(dr_reference_t *r, dr_acc_kind_t acc, dr_op_t op);

/* Add n elements of type dtype from buf (host memory, any alignment) to *r, on up to nthreads host threads, with
 * the same per-element accumulation as dr_reference_compute: feed the chunks of a file as they are read, in any
 * order, and merge the ranks' references as for generated data. first: the global index of buf[0] (argmin/argmax).
 * dtype must be the type r->acc was selected for (dr_acc_select(dtype, r->op, mode)). Like dr_reference_compute,
 * one call at a time per process. */
void dr_reference_add(dr_reference_t *r, dr_dtype_t dtype, const void *buf, size_t n, uint64_t first, int nthreads);

/* Merge the reference of another shard into *into (both in pass 1, or both in pass 2 about the same center). */
void dr_reference_merge(dr_reference_t *into, const dr_reference_t *from);

/* ---- stats: the two passes. m2 is checked against sum (x - mean)^2 about the exact mean of the whole array, so the
 * mean must be known before the second pass: each shard's pass-1 reference (dr_reference_compute, or
 * dr_reference_init and dr_reference_add), merged into the whole's, gives the mean (dr_reference_stats_center); every
 * shard then starts its pass 2 about it (dr_reference_begin_pass2) and feeds its elements again (dr_reference_generate
 * or dr_reference_add); merged once more, the whole's reference is checked (dr_reference_check_stats). A shard's own
 * reference after its pass 2 also checks that shard's partial (pass 2 sums about its own mean too). ---- */

/* 1 if r is a stats reference still in pass 1. */
int dr_reference_needs_pass2(const dr_reference_t *r);

/* The exact mean of r's elements as a double-double: center[0] the mean rounded once to float64, center[1] the rest
 * (rounded); NaN for no elements, or any NaN or infinity among them. */
void dr_reference_stats_center(const dr_reference_t *r, double center[2]);

/* Start pass 2 of a stats reference about the whole array's center (dr_reference_stats_center of the merged pass-1
 * references; NULL: r's own, for an array on one shard). Then feed r its elements again. */
void dr_reference_begin_pass2(dr_reference_t *r, const double center[2]);

typedef struct {
    int pass;
    int exact;          /* 1: compared bit for bit; 0: against a float bound */
    double expected;    /* the reference as a double (for reports) */
    double error;       /* |result - reference| (float checks) */
    double bound;       /* the allowed error (float checks) */
    char detail[256];   /* one line: what was compared and how it came out */
} dr_check_t;

/* Check result (accumulator kind ref->acc; argmin/argmax: result->arg) against ref, for a reduction whose longest
 * rounding path is `depth`. Not for stats (a failed check saying so): dr_reference_check_stats. */
void dr_reference_check(const dr_reference_t *ref, const dr_value_t *result, uint64_t depth, dr_check_t *out);

/* Check statistics against a stats reference after its pass 2 (the bounds above); expected is the reference's mean.
 * The reference's m2 is the one about its own mean: a shard's own, or the whole's once merged. */
void dr_reference_check_stats(const dr_reference_t *ref, const dr_stats_result_t *got, uint64_t depth,
                              dr_check_t *out);

/* The exact sum of a stats reference rounded once to float64, and divided by its count rounded once (the mean the
 * integer kinds and the exact mode must give; NaN for no elements): computed here, independently of src/common/stats.c. */
double dr_reference_stats_sum(const dr_reference_t *r);
double dr_reference_stats_mean(const dr_reference_t *r);


/* ---- Distributions (--op histogram, quantile, median): checked by other means than the library's ----
 *
 * histogram: each rank puts each of its elements in the bin i with edges[i] <= x < edges[i + 1] (the last bin
 *   closed), found by a plain binary search over the edges the library returned (floats compared as their float64
 *   values, exactly; integers as their float64 conversion, as NumPy's astype makes them), or counts it below, above
 *   or NaN; the ranks' counts are summed, and every count must equal the library's. The library instead computes
 *   NumPy's index estimate and corrects it by one against the edges (src/common/distrib.h), which is the same bin
 *   wherever the estimate is off by at most one: everywhere but pathological float16 histograms (many bins over a
 *   narrow range, where NumPy's own float16 estimate is off by more, and NumPy's answer, which the library
 *   reproduces, is not the edge search's). Such a run fails here as a mismatch; the tests run none.
 *   The edges: finite, non-decreasing, values of NumPy's bin type (float16, float32, float64 for integers), the outer
 *   ones the range as NumPy makes it (the given one, or the data's min and max; widened by 0.5 each side when equal;
 *   0..1 for an empty array), each inner one within 8 units in the last place of the bin type (at the range's
 *   magnitude) of lo + (hi - lo) i / bins.
 * quantile: each order statistic v at rank k must be an element of the data: count(x < v) <= k < count(x <= v) over
 *   the whole array (each rank counts its own elements; floats compared as float64, -0 == +0; integers exactly); the
 *   ranks are floor((n - 1) q) and the next, both n - 1 where (n - 1) q >= n - 1, with the weight (n - 1) q - lower
 *   (there (n - 1) q + 1, as NumPy's index -1 makes it), computed here; the value must be NumPy's _lerp of the two
 *   as float64, a + (b - a) t, or b - (b - a)(1 - t) where t >= 0.5, bit for bit. An array holding NaN has NaN for
 *   every quantile, as in NumPy. */

/* This rank's elements for a distribution's reference: the generator's elements first..first+n-1 (g), or n
 * elements of dtype in host memory at buf (g NULL; any alignment). */
typedef struct {
    const dr_gen_t *g;
    const void *buf;
    dr_dtype_t dtype;
    uint64_t first, n;
} dr_ref_elements_t;

/* The kind a dtype's elements are compared in, and its order statistics come in: DR_ACC_I64 (signed integers),
 * DR_ACC_U64 (unsigned), DR_ACC_F64 (floats). */
dr_acc_kind_t dr_reference_order_kind(dr_dtype_t dtype);

/* A histogram reference: the bins' counts, then below, above and NaN. */
#define DR_REF_HIST_WORDS(bins) ((size_t)(bins) + 3)

/* minmax[0], [1] before any element: the identities of min and max in dtype's order kind. */
void dr_reference_minmax_init(dr_dtype_t dtype, dr_scalar_t minmax[2]);

/* Add the elements to counts (DR_REF_HIST_WORDS(bins) words) by a binary search over edges[0..bins], on up to
 * nthreads host threads, and fold their min and max (NaN left out) into minmax. One call at a time per process. */
void dr_reference_hist_add(const dr_ref_elements_t *e, const double *edges, uint32_t bins, int nthreads,
                           uint64_t *counts, dr_scalar_t minmax[2]);

/* A rank reference of k values: lt[0..k) (elements below each), le[0..k) (at or below each), then NaN, then all. */
#define DR_REF_RANK_WORDS(k) (2 * (size_t)(k) + 2)

/* Add the elements to counts (DR_REF_RANK_WORDS(k) words) for the ascending distinct values w[0..k) of the order
 * kind, on up to nthreads host threads: each element's place among them by a binary search. */
void dr_reference_rank_add(const dr_ref_elements_t *e, const dr_scalar_t *w, size_t k, int nthreads,
                           uint64_t *counts);

/* The values of in[0..n) (of dtype's order kind) ascending, each once, NaN left out, into out (n entries);
 * returns how many. */
size_t dr_reference_distinct(dr_dtype_t dtype, const dr_scalar_t *in, size_t n, dr_scalar_t *out);

/* A histogram (rank 0's counts and edges, info) against ref, the ranks' counts summed, and minmax, their min and
 * max; range: the --range given, or NULL. */
void dr_reference_check_hist(dr_dtype_t dtype, uint32_t bins, const double *range, const uint64_t *counts,
                             const double *edges, const dreduce_dist_info_t *info, const uint64_t *ref,
                             const dr_scalar_t minmax[2], dr_check_t *out);

/* Quantiles q[0..nq) (values, order, info) against ref, the ranks' rank counts for the values w[0..k) (the order
 * statistics' distinct values, ascending; k 0 where the result is NaN). */
/* omit: the NaN policy OMIT (np.nanquantile). */
void dr_reference_check_quantile(dr_dtype_t dtype, size_t nq, const double *q, const double *values,
                                 const dreduce_order_stat_t *order, const dreduce_dist_info_t *info,
                                 const dr_scalar_t *w, size_t k, const uint64_t *ref, int omit, dr_check_t *out);


#endif
