/* Reading statistics (op DR_STATS): mean and variance from a stats partial's count, sums and moments, the mean of
 * an exact sum (integers in 128 bits, or a dr_exact_t) divided by the count and rounded once. Host code. */
#ifndef DREDUCE_STATS_H
#define DREDUCE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

/* The caller's view of a stats partial of kind k (DR_ACC_STATS_*). */
void dr_stats_result(dr_acc_kind_t k, const dr_partial_t *p, dr_stats_result_t *out);

/* (-1)^neg * (the integer of ndigits 32-bit digits at d, least significant first, digit i weighing 2^(32 i + unit))
 * / c, rounded once to nearest float64 (ties to even, subnormals and overflow as IEEE). c > 0. */
double dr_digits_div_round(const uint32_t *d, int ndigits, int unit, uint64_t c, int neg);

/* An exact 128-bit integer (signed or unsigned) as text, base 10; returns the length like snprintf. */
int dr_int128_format(dr_int128_t v, int is_signed, char *buf, size_t len);

/* A 128-bit integer divided by c > 0, rounded once to float64. */
double dr_int128_div_round(dr_int128_t v, int is_signed, uint64_t c);

#endif
