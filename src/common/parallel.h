/* Fork-join over host threads, for the CPU backend and the host reference. */
#ifndef DREDUCE_PARALLEL_H
#define DREDUCE_PARALLEL_H

/* Most CPUs a dr_parallel_cpus_t holds (OS indexes 0..DR_PARALLEL_MAX_CPUS-1). */
#define DR_PARALLEL_MAX_CPUS 8192

/* A set of CPUs by OS index (as sched_setaffinity numbers them), for placing worker threads. Plain words rather than
 * <sched.h>'s cpu_set_t, so that this header needs no _GNU_SOURCE and holds machines past glibc's 1024 CPUs. */
typedef struct {
    int ncpus; /* CPUs in the set; 0: no placement */
    unsigned long long bits[DR_PARALLEL_MAX_CPUS / 64];
} dr_parallel_cpus_t;

/* Empty the set. */
void dr_parallel_cpus_clear(dr_parallel_cpus_t *s);

/* Add CPU cpu (OS index) to the set. Returns 0, or -1 when cpu is outside 0..DR_PARALLEL_MAX_CPUS-1. */
int dr_parallel_cpus_add(dr_parallel_cpus_t *s, int cpu);

/* Run fn(ctx, i, nthreads) for i in 0..nthreads-1, on nthreads threads (the caller's is one of them), and wait.
 * Returns 0, or -1 if a thread could not be started (the work is then done on fewer threads, still complete). */
int dr_parallel_run(int nthreads, void (*fn)(void *ctx, int i, int nthreads), void *ctx);

/* dr_parallel_run with the slices placed on cpus (NULL or empty: as dr_parallel_run): each of several slices runs on
 * a thread with affinity cpus while the caller's thread only waits. The caller's thread has affinity cpus while it
 * creates them, so that the kernel starts each on an idle CPU of the set, and its own affinity back before they are
 * joined. A single slice runs on the caller's thread: callers ask for one where the work is too small to pay for
 * starting a thread, or when told to use one thread. Returns as dr_parallel_run; a slice whose thread could not be
 * started runs on the caller's thread. */
int dr_parallel_run_on(int nthreads, const dr_parallel_cpus_t *cpus, void (*fn)(void *ctx, int i, int nthreads),
                       void *ctx);

/* Threads this process may run on (its CPU affinity), at least 1. */
int dr_parallel_default_threads(void);

/* CPUs online on this machine, at least 1. */
int dr_parallel_online_cpus(void);

/* The half-open slice [*begin, *end) of n items that worker i of k takes: contiguous, sizes differing by at most 1. */
void dr_parallel_slice(unsigned long long n, int i, int k, unsigned long long *begin, unsigned long long *end);

#endif
