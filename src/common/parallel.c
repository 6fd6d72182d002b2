#define _GNU_SOURCE
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    void (*fn)(void *, int, int);
    void *ctx;
    int i, k;
} task_t;

static void *trampoline(void *p)
{
    task_t *t = p;
    t->fn(t->ctx, t->i, t->k);
    return NULL;
}

int dr_parallel_run(int nthreads, void (*fn)(void *ctx, int i, int nthreads), void *ctx)
{
    if (nthreads <= 1) {
        fn(ctx, 0, 1);
        return 0;
    }
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    task_t *tasks = calloc((size_t)nthreads, sizeof *tasks);
    char *started = calloc((size_t)nthreads, 1);
    int rc = 0;
    if (!tids || !tasks || !started) {
        free(tids);
        free(tasks);
        free(started);
        /* No memory for bookkeeping: do every slice here. */
        for (int i = 0; i < nthreads; ++i) fn(ctx, i, nthreads);
        return -1;
    }
    for (int i = 1; i < nthreads; ++i) {
        tasks[i] = (task_t){fn, ctx, i, nthreads};
        started[i] = pthread_create(&tids[i], NULL, trampoline, &tasks[i]) == 0;
        if (!started[i]) rc = -1;
    }
    fn(ctx, 0, nthreads);
    for (int i = 1; i < nthreads; ++i) {
        if (started[i]) pthread_join(tids[i], NULL);
        else fn(ctx, i, nthreads); /* could not start: do its slice here */
    }
    free(tids);
    free(tasks);
    free(started);
    return rc;
}

void dr_parallel_cpus_clear(dr_parallel_cpus_t *s)
{
    memset(s, 0, sizeof *s);
}

int dr_parallel_cpus_add(dr_parallel_cpus_t *s, int cpu)
{
    if (cpu < 0 || cpu >= DR_PARALLEL_MAX_CPUS) return -1;
    const unsigned long long bit = 1ull << (cpu % 64);
    if (!(s->bits[cpu / 64] & bit)) s->ncpus++;
    s->bits[cpu / 64] |= bit;
    return 0;
}

/* cpus as a glibc CPU set of *size bytes (CPU_ALLOC: free with CPU_FREE), or NULL when it cannot be made. */
static cpu_set_t *glibc_set(const dr_parallel_cpus_t *cpus, size_t *size)
{
    int top = -1;
    for (int w = DR_PARALLEL_MAX_CPUS / 64 - 1; w >= 0 && top < 0; --w)
        if (cpus->bits[w]) top = w * 64 + 63 - __builtin_clzll(cpus->bits[w]);
    if (top < 0) return NULL;
    cpu_set_t *set = CPU_ALLOC(top + 1);
    if (!set) return NULL;
    *size = CPU_ALLOC_SIZE(top + 1);
    CPU_ZERO_S(*size, set);
    for (int c = 0; c <= top; ++c)
        if (cpus->bits[c / 64] >> (c % 64) & 1) CPU_SET_S(c, *size, set);
    return set;
}

/* Start the threads of slices 0..nthreads-1 with attributes attr (NULL: the defaults), give the caller's thread the
 * affinity restore (when not NULL: size bytes) once they are started, and join them. */
static int run_threads(int nthreads, const pthread_attr_t *attr, const cpu_set_t *restore, size_t size,
                       void (*fn)(void *, int, int), void *ctx)
{
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    task_t *tasks = calloc((size_t)nthreads, sizeof *tasks);
    char *started = calloc((size_t)nthreads, 1);
    if (!tids || !tasks || !started) {
        free(tids);
        free(tasks);
        free(started);
        if (restore) (void)pthread_setaffinity_np(pthread_self(), size, restore);
        return dr_parallel_run(nthreads, fn, ctx);
    }
    int rc = 0;
    for (int i = 0; i < nthreads; ++i) {
        tasks[i] = (task_t){fn, ctx, i, nthreads};
        started[i] = pthread_create(&tids[i], attr, trampoline, &tasks[i]) == 0;
        if (!started[i]) rc = -1;
    }
    if (restore) (void)pthread_setaffinity_np(pthread_self(), size, restore); /* as it was: it succeeded before */
    for (int i = 0; i < nthreads; ++i) {
        if (started[i]) pthread_join(tids[i], NULL);
        else fn(ctx, i, nthreads); /* could not start: do its slice here */
    }
    free(tids);
    free(tasks);
    free(started);
    return rc;
}

/* The workers are created while the caller's thread is widened to cpus, so that each inherits cpus at its creation
 * and the kernel places it then, on an idle CPU of the set. An affinity given as a thread attribute instead is
 * applied by glibc after the thread exists on the caller's CPU, and the kernel does not move a thread whose CPU stays
 * allowed: behind a caller bound to one core of the set (Open MPI's default binding at np <= 2) the workers started
 * there, stacked until the load balancer spread them milliseconds later. On a 2-core VM, the caller on CPU 0 and two
 * workers on {0,1}: both started on one CPU in 160 of 200 calls that way, 1 of 200 this way. */
int dr_parallel_run_on(int nthreads, const dr_parallel_cpus_t *cpus, void (*fn)(void *ctx, int i, int nthreads),
                       void *ctx)
{
    if (!cpus || cpus->ncpus == 0 || nthreads <= 1) return dr_parallel_run(nthreads, fn, ctx);
    size_t size = 0, saved_size = CPU_ALLOC_SIZE(DR_PARALLEL_MAX_CPUS);
    cpu_set_t *set = glibc_set(cpus, &size), *saved = CPU_ALLOC(DR_PARALLEL_MAX_CPUS);
    const pthread_t self = pthread_self();
    int rc;
    if (set && saved && pthread_getaffinity_np(self, saved_size, saved) == 0 &&
        pthread_setaffinity_np(self, size, set) == 0) {
        rc = run_threads(nthreads, NULL, saved, saved_size, fn, ctx);
    } else {
        /* The caller cannot be widened (or no memory): the threads get cpus as an attribute, placed late. */
        pthread_attr_t attr;
        const int have_attr = set && pthread_attr_init(&attr) == 0;
        if (have_attr && pthread_attr_setaffinity_np(&attr, size, set) == 0)
            rc = run_threads(nthreads, &attr, NULL, 0, fn, ctx);
        else
            rc = dr_parallel_run(nthreads, fn, ctx); /* cannot place them: on the caller's binding, complete */
        if (have_attr) pthread_attr_destroy(&attr);
    }
    if (set) CPU_FREE(set);
    if (saved) CPU_FREE(saved);
    return rc;
}

int dr_parallel_default_threads(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c > 0) return c;
    }
    return 1;
}

int dr_parallel_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void dr_parallel_slice(unsigned long long n, int i, int k, unsigned long long *begin, unsigned long long *end)
{
    unsigned long long q = n / (unsigned long long)k, r = n % (unsigned long long)k, ui = (unsigned long long)i;
    *begin = ui * q + (ui < r ? ui : r);
    *end = *begin + q + (ui < r ? 1 : 0);
}
