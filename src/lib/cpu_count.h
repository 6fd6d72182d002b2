/* Counting passes on the CPU backend: the histogram or radix-select digit counts of one slice of the array
 * (src/common/distrib.h has the arithmetic, shared with kernels/distrib.cu). */
#ifndef DREDUCE_CPU_COUNT_H
#define DREDUCE_CPU_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "distrib.h"
#include "parallel.h"
#include "status.h"

/* Add the counts of in[0..n) to counts (dr_count_words(p) of them) on up to nthreads threads, placed on cpus (a
 * context's share, dr_parallel_run_on; NULL: not placed). edges: the bins + 1 edges of a histogram, float for the
 * float16 and float32 bin types, double for float64 (NULL for a digit pass). DR_ERR_RUNTIME (printed) when there is
 * no memory for the threads' counts. */
dr_status_t dr_cpu_count_on(const dr_count_pass_t *p, const void *edges, const void *in, size_t n, int nthreads,
                            const dr_parallel_cpus_t *cpus, uint64_t *counts);

/* dr_cpu_count_on, and for a digit or pilot pass with keep non-NULL also the elements in play (in one of a digit
 * pass's groups, not NaN; in one of a pilot pass's intervals) copied to keep, in no particular order, *kept of them
 * (a quantile's later passes then read only those). Where they are more than keep_cap (elements), *kept says how
 * many (> keep_cap) and keep holds only some of them. */
dr_status_t dr_cpu_count_keep(const dr_count_pass_t *p, const void *edges, const void *in, size_t n, int nthreads,
                              const dr_parallel_cpus_t *cpus, uint64_t *counts, void *keep, size_t keep_cap,
                              size_t *kept);

#endif
