/* The CPU backend: the same reductions as the kernels (same table, same accumulator rules), on host threads. Used
 * where no GPU is visible (CI, laptops) and as a second implementation to compare with. */
#ifndef DREDUCE_CPU_BACKEND_H
#define DREDUCE_CPU_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "datagen.h"
#include "dtype.h"
#include "parallel.h"
#include "status.h"


/* Reduce in[0..n) (elements of dtype) with op into *out, accumulating in kind acc, on nthreads threads: each
 * thread a contiguous slice in 8 interleaved lanes folded as a tree (stats: batches of 256 elements merged in turn;
 * argmin/argmax: blocks scanned for their extreme), then the slices' results in thread order (deterministic for a
 * given nthreads; exact sums, argmin/argmax and stats' count, min, max and exact sums are the same bits for any).
 * *depth gets the most roundings along any path (for float error bounds; 1 for an exact sum, its one rounding where
 * it is read; stats: the most merge levels, a batch's own lanes and tree counted; 0 for argmin/argmax). Returns 0;
 * -1 if (dtype, op, acc) is not a row of a table; -2 if there was no memory for the threads' partials. first: the
 * global index of in[0] (argmin/argmax report first + the index in `in`; other ops ignore it). */
int dr_cpu_reduce(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, const void *in, size_t n, uint64_t first,
                  int nthreads, dr_partial_t *out, uint64_t *depth);

/* dr_cpu_reduce with the NaN policy `nan` (accum.h, "NaN policy"; OMIT changes nothing for integer types) and its
 * threads placed on cpus (dr_parallel_run_on; NULL: not placed). *nan_count (may be NULL) gets the NaN elements
 * left out (0 under PROPAGATE). -2 also when a thread had no memory for its OMIT buffer. */
int dr_cpu_reduce_on(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, const void *in, size_t n,
                     uint64_t first, int nthreads, const dr_parallel_cpus_t *cpus, dr_partial_t *out,
                     uint64_t *depth, uint64_t *nan_count);

/* dr_cpu_reduce_on, saying why in one line when it fails (DR_ERR_RUNTIME). */
dr_status_t dr_cpu_reduce_checked(dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, dr_nan_policy_t nan, const void *in,
                                  size_t n, uint64_t first, int nthreads, const dr_parallel_cpus_t *cpus,
                                  dr_partial_t *out, uint64_t *depth, uint64_t *nan_count);

#endif
