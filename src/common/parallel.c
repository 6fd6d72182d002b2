#define _GNU_SOURCE
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
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
