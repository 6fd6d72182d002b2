/* Repetition statistics. */
#ifndef DREDUCE_TIMING_H
#define DREDUCE_TIMING_H

/* Median of v[0..n) ignoring NaNs (sorts a copy); NaN when n == 0 or all are NaN. */
double dr_median(const double *v, int n);

#endif
