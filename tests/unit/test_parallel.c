/* Unit test of src/common/parallel.c: every slice runs exactly once; with a CPU set (dr_parallel_run_on, as the
 * library runs the CPU backend's threads under cfg.bind WORKERS) each of several slices runs on a thread whose
 * affinity is that set, none on the caller's thread, and the caller's own affinity is left as it was; one slice, or
 * no set, runs as dr_parallel_run does (slice 0 on the caller's thread). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "check.h"
#include "parallel.h"

enum { MAX_SLICES = 64 };

typedef struct {
    pthread_t caller;
    int runs[MAX_SLICES];         /* times each slice ran */
    int on_caller[MAX_SLICES];    /* 1 where slice i ran on the caller's thread */
    cpu_set_t affinity[MAX_SLICES];
} record_t;

static void record_slice(void *p, int i, int k)
{
    record_t *r = p;
    (void)k;
    __atomic_add_fetch(&r->runs[i], 1, __ATOMIC_RELAXED);
    r->on_caller[i] = pthread_equal(pthread_self(), r->caller);
    CPU_ZERO(&r->affinity[i]);
    pthread_getaffinity_np(pthread_self(), sizeof r->affinity[i], &r->affinity[i]);
}

static void run(int nthreads, const dr_parallel_cpus_t *cpus, record_t *r)
{
    memset(r, 0, sizeof *r);
    r->caller = pthread_self();
    const int rc =
        cpus ? dr_parallel_run_on(nthreads, cpus, record_slice, r) : dr_parallel_run(nthreads, record_slice, r);
    CHECK(rc == 0, "%d slices: rc %d", nthreads, rc);
    for (int i = 0; i < nthreads; ++i)
        CHECK(r->runs[i] == 1, "%d slices: slice %d ran %d times", nthreads, i, r->runs[i]);
}

int main(void)
{
    cpu_set_t mine;
    CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0, "reading this process's affinity");
    int first = -1, last = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mine)) {
            if (first < 0) first = c;
            last = c;
        }
    CHECK(first >= 0, "an empty affinity");

    /* The set: one CPU the process may use (the last), while the caller is held on another (the first) where it can
     * be, so that a slice left on the caller's thread shows. */
    dr_parallel_cpus_t one;
    dr_parallel_cpus_clear(&one);
    CHECK(dr_parallel_cpus_add(&one, last) == 0 && one.ncpus == 1, "adding CPU %d", last);
    CHECK(dr_parallel_cpus_add(&one, last) == 0 && one.ncpus == 1, "adding CPU %d twice counts it once", last);
    dr_parallel_cpus_t bad = one;
    CHECK(dr_parallel_cpus_add(&bad, -1) == -1 && dr_parallel_cpus_add(&bad, DR_PARALLEL_MAX_CPUS) == -1 &&
              bad.ncpus == 1, "CPUs outside 0..%d are refused", DR_PARALLEL_MAX_CPUS - 1);
    cpu_set_t held;
    CPU_ZERO(&held);
    CPU_SET(first, &held);
    const int pinned = pthread_setaffinity_np(pthread_self(), sizeof held, &held) == 0;

    static record_t r;
    static const int counts[] = {2, 3, 8, MAX_SLICES};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
        run(counts[k], &one, &r);
        for (int i = 0; i < counts[k]; ++i) {
            CHECK(!r.on_caller[i], "%d slices placed: slice %d ran on the caller's thread", counts[k], i);
            CHECK(CPU_COUNT(&r.affinity[i]) == 1 && CPU_ISSET(last, &r.affinity[i]),
                  "%d slices placed: slice %d ran with %d CPUs of affinity, want CPU %d alone", counts[k], i,
                  CPU_COUNT(&r.affinity[i]), last);
        }
        cpu_set_t after;
        CHECK(pthread_getaffinity_np(pthread_self(), sizeof after, &after) == 0 &&
                  CPU_EQUAL(&after, pinned ? &held : &mine),
              "%d slices placed: the caller's affinity changed", counts[k]);
    }
    /* One slice, an empty set, no set: on the caller's thread as before. */
    run(1, &one, &r);
    CHECK(r.on_caller[0], "one slice placed: not on the caller's thread");
    dr_parallel_cpus_t none;
    dr_parallel_cpus_clear(&none);
    run(4, &none, &r);
    CHECK(r.on_caller[0], "an empty set: slice 0 not on the caller's thread");
    run(4, NULL, &r);
    CHECK(r.on_caller[0], "dr_parallel_run: slice 0 not on the caller's thread");
    for (int i = 1; i < 4; ++i)
        CHECK(!r.on_caller[i], "dr_parallel_run: slice %d on the caller's thread", i);

    if (pinned) pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
    return check_summary("test_parallel");
}
