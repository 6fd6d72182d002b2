/* dreduce-host-bench: host arrays through the library, against the ceilings measured in the same run: a plain read
 * loop over the same cores (OpenMP, each thread its contiguous slice with 8 independent accumulators) and, on a GPU,
 * the host-to-device copy rate (cudaMemcpy of the whole buffer, pinned and pageable).
 *
 *   mpirun -np 1 dreduce-host-bench [-n ELEMENTS] [--reps R]        (defaults: 256 Mi elements, 9 repetitions)
 *
 * Rows, for float32 and float64, sum and stats: the ceiling loop; a CPU context (dreduce_reduce of a pageable array); a
 * CPU context with bind workers, timed under the launcher's binding (the process's affinity when it started), as a
 * caller that keeps its binding (Python's default) runs it; and where a GPU is visible, a GPU context with each
 * cfg.host_path (cpu, gpu, split, auto) on pageable and on pinned memory. The other contexts bind the process to its
 * share of the node (bind auto), so the loop's OpenMP threads run on the CPU context's cores, as many as its threads.
 * Each row is the median and the best of R whole calls on the host clock (after one untimed call, which for auto and
 * split also measures the paths), in GB/s of input, and its ratio to the ceiling that bounds it: the loop for the CPU
 * paths, the copy rate of the same memory for the GPU path, their sum for split and auto. The data (multiples of 0.5
 * below 500) sum exactly in float64: every row's sum must be the same number, and the benchmark fails if one is not. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <omp.h>

#include "dreduce.h"
#include "read_loop.h"

static int bad;

static void row(const char *what, const char *memory, rate_t r, double ceiling, const char *of)
{
    printf("  %-34s %-9s %9.2f %9.2f", what, memory, r.median, r.best);
    if (ceiling > 0) printf("  %5.0f%% of %s", 100 * r.median / ceiling, of);
    printf("\n");
}

/* R timed calls of ctx on buf (one untimed first); checks the sum against `want`. */
static rate_t time_reduce(dreduce_context_t *ctx, const void *buf, size_t n, dr_dtype_t t, dr_op_t op, int reps,
                          double *sec, double want, const char *what, dreduce_timings_t *tm)
{
    dreduce_result_t r;
    for (int k = -1; k < reps; ++k) {
        const double t0 = now_s();
        const dr_status_t s = dreduce_reduce(ctx, buf, n, t, op, &r);
        const double dt = now_s() - t0;
        if (s != DR_OK) {
            fprintf(stderr, "dreduce-host-bench: %s failed\n", what);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (k >= 0) sec[k] = dt;
    }
    dreduce_timings(ctx, tm);
    const double got = op == DR_STATS ? r.stats.sum : dreduce_result_double(&r);
    if (got != want) {
        printf("FAIL %s: sum %.17g, expected %.17g\n", what, got, want);
        bad = 1;
    }
    return rate_of(sec, reps, n * dreduce_dtype_size(t));
}

static dreduce_context_t *make(dr_device_choice_t dev, dr_host_path_t path, dr_bind_choice_t bind)
{
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = dev;
    cfg.host_path = path;
    cfg.bind = bind;
    dreduce_context_t *c = NULL;
    if (dreduce_create(MPI_COMM_SELF, &cfg, &c) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 3);
    return c;
}

static rate_t time_copy(void *dst, const void *src, size_t bytes, int reps, double *sec)
{
    for (int k = -1; k < reps; ++k) {
        const double t0 = now_s();
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
            fprintf(stderr, "dreduce-host-bench: cudaMemcpy of %zu bytes failed\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (k >= 0) sec[k] = now_s() - t0;
    }
    return rate_of(sec, reps, bytes);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    unsigned long long n_arg = 256ull << 20, reps_arg = 9;
    for (int i = 1; i < argc; ++i) {
        unsigned long long *dst = !strcmp(argv[i], "-n") ? &n_arg : !strcmp(argv[i], "--reps") ? &reps_arg : NULL;
        char *end = NULL;
        errno = 0;
        if (dst && i + 1 < argc && (*dst = strtoull(argv[++i], &end, 10), !errno && *end == '\0' && *dst > 0 &&
                                                                           *dst < (1ull << 40)))
            continue;
        fprintf(stderr, "usage: mpirun -np 1 dreduce-host-bench [-n ELEMENTS] [--reps R] (whole numbers > 0)\n");
        MPI_Finalize();
        return 2;
    }
    const size_t n = (size_t)n_arg;
    const int reps = (int)reps_arg;
    int ngpus = 0;
    const int gpu = cudaGetDeviceCount(&ngpus) == cudaSuccess && ngpus > 0;
    if (!gpu) (void)cudaGetLastError();
    dreduce_context_t *paths[4] = {NULL, NULL, NULL, NULL};
    static const dr_host_path_t path_of[4] = {DR_HOST_PATH_CPU, DR_HOST_PATH_GPU, DR_HOST_PATH_SPLIT,
                                              DR_HOST_PATH_AUTO};
    static const char *const path_name[4] = {"cpu", "gpu", "split", "auto"};
    /* The launcher's binding, before the bind-auto contexts widen the process to its share: the workers context's
     * rows run under it, as a caller that keeps its binding (Python's default) does. */
    cpu_set_t launched;
    const int have_launched = sched_getaffinity(0, sizeof launched, &launched) == 0;
    dreduce_context_t *workers = make(DR_DEVICE_CPU, DR_HOST_PATH_AUTO, DR_BINDOPT_WORKERS);
    for (int p = 0; gpu && p < 4; ++p) paths[p] = make(DR_DEVICE_GPU, path_of[p], DR_BINDOPT_AUTO);
    /* last: its binding is the loop's */
    dreduce_context_t *cpu = make(DR_DEVICE_CPU, DR_HOST_PATH_AUTO, DR_BINDOPT_AUTO);
    cpu_set_t share;
    const int have_share = sched_getaffinity(0, sizeof share, &share) == 0;
    dreduce_context_info_t ci, gi;
    dreduce_context_info(cpu, &ci);
    if (gpu) dreduce_context_info(paths[0], &gi);
    dreduce_context_info_t wi;
    dreduce_context_info(workers, &wi);
    const int threads = ci.threads;
    double *sec = malloc((size_t)reps * sizeof *sec);
    void *pageable = malloc(n * 8), *pinned = NULL, *dev = NULL;
    if (!sec || !pageable) {
        fprintf(stderr, "dreduce-host-bench: cannot allocate %zu bytes\n", n * 8);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (gpu && (cudaMallocHost(&pinned, n * 8) != cudaSuccess || cudaMalloc(&dev, n * 8) != cudaSuccess)) {
        fprintf(stderr, "dreduce-host-bench: cannot allocate %zu bytes of pinned and of device memory\n", n * 8);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    printf("dreduce-host-bench: %zu elements, median and best of %d whole calls (GB/s of input)\n", n, reps);
    printf("command: mpirun -np 1 dreduce-host-bench -n %zu --reps %d\n", n, reps);
    printf("CPU context: %d threads on %s; loop: the same %d threads under the same binding\n", threads, ci.share,
           threads);
    printf("CPU context, bind workers: %d threads placed on %s, the caller on the launcher's %d CPUs\n", wi.threads,
           wi.share, have_launched ? CPU_COUNT(&launched) : 0);
    if (gpu) printf("GPU context: %s, CPU path %d threads on %s\n", gi.device_name, gi.threads, gi.share);
    else printf("no GPU visible: the CPU rows only\n");
    for (int ti = 0; ti < 2; ++ti) {
        const dr_dtype_t t = ti ? DR_FLOAT64 : DR_FLOAT32;
        const size_t es = dreduce_dtype_size(t), bytes = n * es;
        /* first touch by the loop's threads: the pages sit where the threads that read them run */
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; ++i) {
            if (ti) ((double *)pageable)[i] = (double)(i % 1000) * 0.5;
            else ((float *)pageable)[i] = (float)(i % 1000) * 0.5f;
        }
        if (pinned) memcpy(pinned, pageable, bytes);
        const double want = 249750.0 * (double)(n / 1000) + 0.25 * (double)((n % 1000) * (n % 1000 - 1));
        for (int k = -1; k < reps; ++k) {
            const double t0 = now_s();
            const double got = ti ? ceiling_f64(pageable, n, threads) : ceiling_f32(pageable, n, threads);
            if (k >= 0) sec[k] = now_s() - t0;
            if (got != want) {
                printf("FAIL the loop: %.17g, expected %.17g\n", got, want);
                bad = 1;
            }
        }
        const rate_t loop = rate_of(sec, reps, bytes);
        rate_t copy[2] = {{0, 0}, {0, 0}}; /* pageable, pinned */
        if (gpu) {
            copy[0] = time_copy(dev, pageable, bytes, reps, sec);
            copy[1] = time_copy(dev, pinned, bytes, reps, sec);
        }
        for (int oi = 0; oi < 2; ++oi) {
            const dr_op_t op = oi ? DR_STATS : DR_SUM;
            printf("\n%s %s, %.0f MiB%44s %9s\n", dreduce_dtype_name(t), dreduce_op_name(op),
                   (double)bytes / (1 << 20), "median", "best");
            if (oi == 0) row("read loop, 8 accumulators", "pageable", loop, 0, "");
            char what[96];
            dreduce_timings_t tm;
            snprintf(what, sizeof what, "CPU context");
            row(what, "pageable", time_reduce(cpu, pageable, n, t, op, reps, sec, want, what, &tm), loop.median,
                "the loop");
            if (have_launched && have_share && sched_setaffinity(0, sizeof launched, &launched) == 0) {
                snprintf(what, sizeof what, "CPU context, bind workers");
                const rate_t r = time_reduce(workers, pageable, n, t, op, reps, sec, want, what, &tm);
                if (sched_setaffinity(0, sizeof share, &share) != 0) {
                    fprintf(stderr, "dreduce-host-bench: cannot bind back to the share\n");
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
                row(what, "pageable", r, loop.median, "the loop");
            }
            if (!gpu) continue;
            if (oi == 0) {
                row("H2D copy (cudaMemcpy)", "pageable", copy[0], 0, "");
                row("H2D copy (cudaMemcpy)", "pinned", copy[1], 0, "");
            }
            for (int m = 0; m < 2; ++m) {
                const void *buf = m ? pinned : pageable;
                for (int p = 0; p < 4; ++p) {
                    snprintf(what, sizeof what, "GPU context, host_path %s", path_name[p]);
                    const rate_t r = time_reduce(paths[p], buf, n, t, op, reps, sec, want, what, &tm);
                    const double bound = p == 0 ? loop.median : p == 1 ? copy[m].median : loop.median + copy[m].median;
                    char label[160];
                    if (p >= 2) {
                        snprintf(label, sizeof label, "%s (%s, cpu %.0f%%)", what,
                                 tm.host_path == DR_HOST_PATH_SPLIT ? "split" : tm.host_path == DR_HOST_PATH_GPU ? "gpu"
                                                                                                                : "cpu",
                                 100.0 * (double)tm.host_cpu_elems / (double)n);
                    } else {
                        snprintf(label, sizeof label, "%s", what);
                    }
                    row(label, m ? "pinned" : "pageable", r, bound,
                        p == 0 ? "the loop" : p == 1 ? "the copy" : "loop + copy");
                }
            }
            dreduce_host_rates_t q;
            for (int m = 0; m < 2; ++m)
                if (dreduce_host_rates(paths[3], m, t, op, &q) == DR_OK && q.measured)
                    printf("  auto measured (%s, %.0f MiB probe, %.1f ms): cpu %.1f, gpu %.1f, split %.1f GB/s\n",
                           m ? "pinned" : "pageable", (double)q.probe_bytes / (1 << 20), q.measure_ms, q.cpu_gbs,
                           q.gpu_gbs, q.split_gbs);
        }
    }
    for (int p = 0; p < 4; ++p)
        if (paths[p]) dreduce_destroy(paths[p]);
    dreduce_destroy(cpu);
    dreduce_destroy(workers);
    if (pinned) cudaFreeHost(pinned);
    if (dev) cudaFree(dev);
    free(pageable);
    free(sec);
    MPI_Finalize();
    return bad;
}
