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
    int pass;                   /* 1, or 2 */
    int own_valid;
    double center[2], own_center[2];
    double m2[2], own_m2[2];
} dr_reference_t;

/* The reference over elements first..first+n-1 of g's array, reducing into accumulator kind acc (argmin/argmax
 * report their indices as these global ones). For stats: pass 1 (see dr_reference_begin_pass2). */
void dr_reference_compute(const dr_gen_t *g, dr_acc_kind_t acc, uint64_t first, uint64_t n, int nthreads,
                          dr_reference_t *out);

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


#endif
