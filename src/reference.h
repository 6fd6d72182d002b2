/* The host reference a result is checked against: computed straight from the data generator (no stored array) on
 * host threads, exactly for integers and min/max, in double-double for float sums and products. References of
 * shards merge, so each rank computes its own and rank 0 merges them.
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
 *   anything of at most that magnitude with the right sign (or zero). */
#ifndef DREDUCE_REFERENCE_H
#define DREDUCE_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "dreduce/datagen.h"
#include "dreduce/types.h"

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
    dr_value_t exact;   /* integer kinds and float min/max: the expected accumulator value */
    double hi, lo;      /* float sum/prod: the expected value as a double-double (finite elements only) */
    double abs_sum;     /* float sum: sum of |x| over finite elements */
    uint64_t nan, pos_inf, neg_inf, zero, negative; /* float sum/prod: special elements seen */
    dr_ref_exact_t exact_sum; /* acc EXACT: the exact sum */
} dr_reference_t;

/* The reference over elements first..first+n-1 of g's array, reducing into accumulator kind acc. */
void dr_reference_compute(const dr_gen_t *g, dr_acc_kind_t acc, uint64_t first, uint64_t n, int nthreads,
                          dr_reference_t *out);

/* An empty reference (no elements yet) reducing with op into accumulator kind acc. */
void dr_reference_init(dr_reference_t *r, dr_acc_kind_t acc, dr_op_t op);

/* Add n elements of type dtype from buf (host memory, any alignment) to *r, on up to nthreads host threads, with
 * the same per-element accumulation as dr_reference_compute: feed the chunks of a file as they are read, in any
 * order, and merge the ranks' references as for generated data. dtype must be the type r->acc was selected for
 * (dr_acc_select(dtype, r->op, mode)). Like dr_reference_compute, one call at a time per process. */
void dr_reference_add(dr_reference_t *r, dr_dtype_t dtype, const void *buf, size_t n, int nthreads);

/* Merge the reference of another shard into *into. */
void dr_reference_merge(dr_reference_t *into, const dr_reference_t *from);

typedef struct {
    int pass;
    int exact;          /* 1: compared bit for bit; 0: against a float bound */
    double expected;    /* the reference as a double (for reports) */
    double error;       /* |result - reference| (float checks) */
    double bound;       /* the allowed error (float checks) */
    char detail[256];   /* one line: what was compared and how it came out */
} dr_check_t;

/* Check result (accumulator kind ref->acc) against ref, for a reduction whose longest rounding path is `depth`. */
void dr_reference_check(const dr_reference_t *ref, const dr_value_t *result, uint64_t depth, dr_check_t *out);

/* Format an accumulator value for humans and JSON ("12345", "-0.5", "nan", "inf"). Returns the length of the whole
 * text like snprintf (the text was cut short if that is >= len). */
int dr_value_format(dr_acc_kind_t acc, const dr_value_t *v, char *buf, size_t len);

#endif
