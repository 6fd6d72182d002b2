/* Fork-join over host threads, for the CPU backend and the host reference. */
#ifndef DREDUCE_PARALLEL_H
#define DREDUCE_PARALLEL_H

/* Run fn(ctx, i, nthreads) for i in 0..nthreads-1, on nthreads threads (the caller's is one of them), and wait.
 * Returns 0, or -1 if a thread could not be started (the work is then done on fewer threads, still complete). */
int dr_parallel_run(int nthreads, void (*fn)(void *ctx, int i, int nthreads), void *ctx);

/* Threads this process may run on (its CPU affinity), at least 1. */
int dr_parallel_default_threads(void);

/* CPUs online on this machine, at least 1. */
int dr_parallel_online_cpus(void);

/* The half-open slice [*begin, *end) of n items that worker i of k takes: contiguous, sizes differing by at most 1. */
void dr_parallel_slice(unsigned long long n, int i, int k, unsigned long long *begin, unsigned long long *end);

#endif
