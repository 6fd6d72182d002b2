/* Repetition statistics. */
#ifndef DREDUCE_TIMING_H
#define DREDUCE_TIMING_H

/* Median of v[0..n) ignoring NaNs (sorts a copy); NaN when n == 0 or all are NaN. */
double dr_median(const double *v, int n);

/* Milliseconds on CLOCK_MONOTONIC: the library's clock inside a call (no MPI_Wtime, so a call that needs no
 * communication makes no MPI call at all). */
double dr_now_ms(void);

#endif
