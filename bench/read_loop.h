/* The CPU ceiling the host benchmarks (cpu_bench.c, host_bench.c) measure against, and their timing: a plain
 * OpenMP read loop, each thread its contiguous slice with 8 independent accumulators (what a user would write),
 * and the median and best of R timed repetitions in GB/s of input. Needs OpenMP. */
#ifndef DREDUCE_BENCH_READ_LOOP_H
#define DREDUCE_BENCH_READ_LOOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <omp.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The ceiling loop over p[0..n) on `threads` threads, In read and added into Acc. */
#define DR_CEILING(name, In, Acc)                                                                               \
    static inline Acc name(const In *p, size_t n, int threads)                                                 \
    {                                                                                                          \
        Acc total = 0;                                                                                         \
        _Pragma("omp parallel num_threads(threads) reduction(+ : total)")                                      \
        {                                                                                                      \
            const size_t t = (size_t)omp_get_thread_num(), k = (size_t)omp_get_num_threads();                 \
            const size_t b = n * t / k, e = n * (t + 1) / k;                                                   \
            Acc a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;                               \
            size_t i = b;                                                                                      \
            for (; i + 8 <= e; i += 8) {                                                                       \
                a0 += p[i]; a1 += p[i + 1]; a2 += p[i + 2]; a3 += p[i + 3];                                    \
                a4 += p[i + 4]; a5 += p[i + 5]; a6 += p[i + 6]; a7 += p[i + 7];                                \
            }                                                                                                  \
            for (; i < e; ++i) a0 += p[i];                                                                     \
            total += ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));                                        \
        }                                                                                                      \
        return total;                                                                                          \
    }
DR_CEILING(ceiling_f32, float, double)
DR_CEILING(ceiling_f64, double, double)
DR_CEILING(ceiling_i32, int32_t, int64_t)
#undef DR_CEILING

typedef struct {
    double median, best; /* GB/s */
} rate_t;

static inline int dr_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median and best rate of `reps` timings in seconds (sorted in place) of `bytes` each. */
static inline rate_t rate_of(double *sec, int reps, size_t bytes)
{
    qsort(sec, (size_t)reps, sizeof *sec, dr_cmp_double);
    rate_t r = {(double)bytes / sec[reps / 2] / 1e9, (double)bytes / sec[0] / 1e9};
    return r;
}

#endif
