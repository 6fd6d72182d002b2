/* dreduce-call-bench: what a user waits for (issue #16). Run as `mpirun -np P build/bench/dreduce-call-bench`.
 *
 * For n = 2^10 ... 2^31 elements per rank (float32 sum and int32 sum), the median host wall-clock time of one
 * dreduce_reduce call on a device array, result in hand (default config; and with cfg.allreduce = 1), beside what a
 * user would write instead, in the same run:
 *   P = 1   cub::DeviceReduce::Sum + cudaMemcpy of the scalar to the host: to a variable (pageable memory), and to
 *           pinned host memory (cudaMallocHost), the faster of the two on some machines;
 *   P > 1   the same, then a host MPI_Reduce / MPI_Allreduce of the scalar; and (built with NCCL) CUB, then
 *           ncclReduce / ncclAllReduce of the device scalar, copy to the host, synchronize.
 * Ratios per row: dreduce / the alternative (<= 1: dreduce is as fast or faster). At P > 1, dr_local and dr_comb
 * split a default call (dreduce_timings: the local level, and the combine levels from entering the collective to
 * leaving it), each the median over the calls of the slowest rank's, in us. Before each repetition the ranks
 * meet in an untimed MPI_Barrier; each rank times its own call (CLOCK_MONOTONIC); the figure is the median over the
 * repetitions of the slowest rank's time. The first calls of each size are warm-up (not timed).
 *
 * Options: --min-log2 K (10) --max-log2 K (31; smaller where the memory does not hold 2^K elements, and then it
 * says so) --reps R (200; fewer above 2^24, at least 20) --staging auto|device|mapped|host --acc wide|exact (the
 * float32 rows' accumulator: float64, the default, or the exact sum rounded once to float64; the peers sum in float32
 * as CUB's Sum does either way) --no-nccl. Output: one table, plus the combine path dreduce chose (staging auto: both
 * measured costs). Exit 0 ok, 1 error or wrong result, 2 bad command line, 77 no GPU. */
#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include <cub/cub.cuh>

#ifdef DR_HAVE_NCCL
#include <nccl.h>
#endif

#include "dreduce.h"

#define CK(call)                                                                                               \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "dreduce-call-bench: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_),       \
                    __FILE__, __LINE__);                                                                       \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                      \
        }                                                                                                      \
    } while (0)

static double now_us()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + 1e-3 * (double)ts.tv_nsec;
}

template <typename T> __global__ void fill_ones(T *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (T)1;
}

static int rank_, nranks_;

/* The median of v (which it sorts); NaN for none. */
static double median(std::vector<double> &v)
{
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Where a default call's time goes at P > 1, from dreduce_timings: per call, this rank's local level and its
 * combine levels (node + global + broadcast, each from entering its collective to leaving it: waiting for a slower
 * rank shows there). Medians over the calls of a row, the slowest rank's. */
struct split_t {
    std::vector<double> local, combine;
    void add(const dreduce_context_t *ctx)
    {
        dreduce_timings_t tm;
        dreduce_timings(ctx, &tm);
        double comb = 0;
        for (double ms : {tm.node_ms, tm.global_ms, tm.bcast_ms})
            if (ms == ms) comb += ms;
        local.push_back(1e3 * tm.local_ms);
        combine.push_back(1e3 * comb);
    }
    void worst(double out[2])
    {
        double mine[2] = {median(local), median(combine)};
        MPI_Reduce(mine, out, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        local.clear();
        combine.clear();
    }
};

/* Median over reps of the slowest rank's time of f() (us). */
template <typename F> static double time_call(int warmup, int reps, F f)
{
    std::vector<double> v;
    for (int i = 0; i < warmup + reps; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_us();
        f();
        double t = now_us() - t0, worst = t;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (i >= warmup) v.push_back(worst);
    }
    return median(v);
}

/* A whole-number option in [lo, hi], or a one-line error naming the value and the range (exit 2). */
static int int_option(const char *name, const char *text, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        fprintf(stderr, "dreduce-call-bench: invalid %s '%s': allowed: a whole number in %d..%d\n", name, text, lo, hi);
        return 0;
    }
    *out = (int)v;
    return 1;
}

int main(int argc, char **argv)
{
    int min_log2 = 10, max_log2 = 31, reps_small = 200, use_nccl = 1;
    dr_staging_t staging = DR_STAGING_AUTO;
    dr_acc_mode_t acc_mode = DR_ACC_WIDE;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-nccl")) {
            use_nccl = 0;
            continue;
        }
        int ok = 1;
        if (v && !strcmp(a, "--min-log2")) ok = int_option(a, v, 0, 40, &min_log2);
        else if (v && !strcmp(a, "--max-log2")) ok = int_option(a, v, 0, 40, &max_log2);
        else if (v && !strcmp(a, "--reps")) ok = int_option(a, v, 1, 1000000, &reps_small);
        else if (v && !strcmp(a, "--staging")) {
            if (!strcmp(v, "auto")) staging = DR_STAGING_AUTO;
            else if (!strcmp(v, "device")) staging = DR_STAGING_DEVICE;
            else if (!strcmp(v, "mapped")) staging = DR_STAGING_MAPPED;
            else if (!strcmp(v, "host")) staging = DR_STAGING_HOST;
            else {
                fprintf(stderr, "dreduce-call-bench: invalid --staging '%s': allowed: auto, device, mapped, host\n", v);
                ok = 0;
            }
        } else if (v && !strcmp(a, "--acc")) {
            if (!strcmp(v, "wide")) acc_mode = DR_ACC_WIDE;
            else if (!strcmp(v, "exact")) acc_mode = DR_ACC_MODE_EXACT;
            else {
                fprintf(stderr, "dreduce-call-bench: invalid --acc '%s': allowed: wide, exact\n", v);
                ok = 0;
            }
        } else {
            fprintf(stderr, "usage: dreduce-call-bench [--min-log2 K] [--max-log2 K] [--reps R] "
                            "[--staging auto|device|mapped|host] [--acc wide|exact] [--no-nccl]\n");
            return 2;
        }
        if (!ok) return 2;
        ++i;
    }
    if (min_log2 > max_log2) {
        fprintf(stderr, "dreduce-call-bench: invalid --min-log2 %d: allowed: at most --max-log2 (%d)\n", min_log2,
                max_log2);
        return 2;
    }
    /* CUDA-aware Open MPI wants the device chosen before MPI_Init. */
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0) {
        printf("dreduce-call-bench: no GPU visible: skipped\n");
        return 77;
    }
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!lr) lr = getenv("SLURM_LOCALID");
    CK(cudaSetDevice(lr ? atoi(lr) % ngpus : 0));
    setenv("OMPI_MCA_mpi_common_cuda_register_memory", "0", 0); /* as the dreduce program (src/cli/main.c) */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_);

    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = DR_DEVICE_GPU;
    cfg.staging = staging;
    cfg.acc_mode = acc_mode;
    dreduce_context_t *ctx = NULL, *ctx_all = NULL;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    cfg.allreduce = 1;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx_all) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    CK(cudaSetDevice(dreduce_gpu(ctx)));

    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const int asked_log2 = max_log2;
    while (max_log2 > min_log2 && ((size_t)4 << max_log2) > free_b - ((size_t)1 << 30)) --max_log2;
    if (max_log2 < asked_log2 && rank_ == 0)
        printf("note: up to 2^%d elements, not 2^%d: the GPU's free memory (%.1f GiB) holds no more\n", max_log2,
               asked_log2, (double)free_b / (1 << 30));
    const size_t nmax = (size_t)1 << max_log2;
    void *d_in = NULL, *d_temp = NULL;
    float *d_f = NULL;
    long long *d_i = NULL;
    CK(cudaMalloc(&d_in, nmax * 4));
    CK(cudaMalloc(&d_f, 2 * sizeof(float)));
    float *pinned_f = NULL; /* the P = 1 peer's result in pinned host memory */
    long long *pinned_i = NULL;
    CK(cudaMallocHost(&pinned_f, sizeof *pinned_f));
    CK(cudaMallocHost(&pinned_i, sizeof *pinned_i));
    CK(cudaMalloc(&d_i, 2 * sizeof(long long)));
    size_t temp_f = 0, temp_i = 0;
    CK(cub::DeviceReduce::Sum(nullptr, temp_f, (const float *)d_in, d_f, (int64_t)nmax));
    CK(cub::DeviceReduce::Sum(nullptr, temp_i, (const int *)d_in, d_i, (int64_t)nmax));
    CK(cudaMalloc(&d_temp, std::max(temp_f, temp_i)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
#ifdef DR_HAVE_NCCL
    ncclComm_t nccl = NULL;
    if (nranks_ > 1 && use_nccl) {
        ncclUniqueId id;
        if (rank_ == 0) ncclGetUniqueId(&id);
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (ncclCommInitRank(&nccl, nranks_, id, rank_) != ncclSuccess) nccl = NULL;
    }
#else
    (void)use_nccl;
#endif
    if (rank_ == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl) *nl = 0;
        printf("dreduce-call-bench: %d rank(s), MPI: %s\n", nranks_, lib);
        printf("combine path (chosen at create): %s\n", dreduce_combine_path(ctx));
        printf("float32 rows: dreduce sums %s\n", acc_mode == DR_ACC_MODE_EXACT
                                                       ? "exactly, rounded once to float64 (--acc exact)"
                                                       : "in float64 (--acc wide)");
        printf("median host us per call (slowest rank); ratio = dreduce / alternative\n");
    }
    if (rank_ == 0) {
        if (nranks_ == 1)
            printf("%-8s %-6s %12s %14s %8s %14s %8s\n", "type", "log2n", "dreduce", "cub+copy", "ratio", "cub+pinned",
                   "ratio_p");
        else
            printf("%-8s %-6s %10s %10s %13s %13s %8s %8s %11s %11s %8s %8s %8s %8s\n", "type", "log2n", "dreduce",
                   "dr_allred", "cub+MPI_Red", "cub+MPI_All", "ratio", "ratio_a", "nccl_red", "nccl_all", "ratio_n",
                   "ratio_na", "dr_local", "dr_comb");
    }
    int bad = 0;
    for (int t = 0; t < 2; ++t) {
        const int is_f = t == 0;
        if (is_f) fill_ones<float><<<1024, 256, 0, s>>>((float *)d_in, nmax);
        else fill_ones<int><<<1024, 256, 0, s>>>((int *)d_in, nmax);
        CK(cudaStreamSynchronize(s));
        for (int k = min_log2; k <= max_log2; ++k) {
            const size_t n = (size_t)1 << k;
            const int reps = k <= 24 ? reps_small : std::max(20, reps_small >> (k - 24));
            const int warm = 5;
            const dr_dtype_t dt = is_f ? DR_FLOAT32 : DR_INT32;
            dreduce_prepare(ctx, dt, DR_SUM, n);
            dreduce_prepare(ctx_all, dt, DR_SUM, n);
            dreduce_result_t res;
            const double want = (double)n * nranks_;
            split_t split;
            int timed = 0;
            const double t_dr = time_call(warm, reps, [&] {
                if (dreduce_reduce(ctx, d_in, n, dt, DR_SUM, &res) != DR_OK ||
                    (res.valid && dreduce_result_double(&res) != want))
                    ++bad;
                if (timed++ >= warm) split.add(ctx);
            });
            double where[2] = {NAN, NAN};
            split.worst(where);
            const double t_dra = nranks_ == 1 ? 0 : time_call(warm, reps, [&] {
                if (dreduce_reduce(ctx_all, d_in, n, dt, DR_SUM, &res) != DR_OK || dreduce_result_double(&res) != want)
                    ++bad;
            });
            float hf = 0, of = 0;
            long long hi = 0, oi = 0;
            auto cub_copy_to = [&](float *to_f, long long *to_i) { /* the sum, copied to *to_f or *to_i */
                size_t tb = std::max(temp_f, temp_i);
                if (is_f) {
                    CK(cub::DeviceReduce::Sum(d_temp, tb, (const float *)d_in, d_f, (int64_t)n, s));
                    CK(cudaMemcpyAsync(to_f, d_f, sizeof *to_f, cudaMemcpyDeviceToHost, s));
                } else {
                    CK(cub::DeviceReduce::Sum(d_temp, tb, (const int *)d_in, d_i, (int64_t)n, s));
                    CK(cudaMemcpyAsync(to_i, d_i, sizeof *to_i, cudaMemcpyDeviceToHost, s));
                }
                CK(cudaStreamSynchronize(s));
            };
            auto cub_copy = [&] { cub_copy_to(&hf, &hi); };
            if (nranks_ == 1) {
                const double t_cub = time_call(warm, reps, cub_copy);
                const double t_pin = time_call(warm, reps, [&] { cub_copy_to(pinned_f, pinned_i); });
                if (rank_ == 0)
                    printf("%-8s %-6d %12.1f %14.1f %8.2f %14.1f %8.2f\n", is_f ? "float32" : "int32", k, t_dr, t_cub,
                           t_dr / t_cub, t_pin, t_dr / t_pin);
                fflush(stdout);
                continue;
            }
            const double t_mr = time_call(warm, reps, [&] {
                cub_copy();
                if (is_f) MPI_Reduce(&hf, &of, 1, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
                else MPI_Reduce(&hi, &oi, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
            });
            const double t_ma = time_call(warm, reps, [&] {
                cub_copy();
                if (is_f) MPI_Allreduce(&hf, &of, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                else MPI_Allreduce(&hi, &oi, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            });
            double t_nr = 0, t_na = 0;
#ifdef DR_HAVE_NCCL
            if (nccl) {
                auto nccl_call = [&](int all) {
                    size_t tb = std::max(temp_f, temp_i);
                    if (is_f) CK(cub::DeviceReduce::Sum(d_temp, tb, (const float *)d_in, d_f, (int64_t)n, s));
                    else CK(cub::DeviceReduce::Sum(d_temp, tb, (const int *)d_in, d_i, (int64_t)n, s));
                    void *src = is_f ? (void *)d_f : (void *)d_i, *dst = is_f ? (void *)(d_f + 1) : (void *)(d_i + 1);
                    const ncclDataType_t nt = is_f ? ncclFloat32 : ncclInt64;
                    if (all) ncclAllReduce(src, dst, 1, nt, ncclSum, nccl, s);
                    else ncclReduce(src, dst, 1, nt, ncclSum, 0, nccl, s);
                    if (all || rank_ == 0)
                        CK(cudaMemcpyAsync(is_f ? (void *)&of : (void *)&oi, dst, is_f ? 4 : 8, cudaMemcpyDeviceToHost, s));
                    CK(cudaStreamSynchronize(s));
                };
                t_nr = time_call(warm, reps, [&] { nccl_call(0); });
                t_na = time_call(warm, reps, [&] { nccl_call(1); });
            }
#endif
            if (rank_ == 0) {
                printf("%-8s %-6d %10.1f %10.1f %13.1f %13.1f %8.2f %8.2f", is_f ? "float32" : "int32", k, t_dr, t_dra,
                       t_mr, t_ma, t_dr / t_mr, t_dra / t_ma);
                if (t_nr > 0) printf(" %11.1f %11.1f %8.2f %8.2f", t_nr, t_na, t_dr / t_nr, t_dra / t_na);
                else printf(" %11s %11s %8s %8s", "-", "-", "-", "-");
                printf(" %8.1f %8.1f\n", where[0], where[1]);
                fflush(stdout);
            }
        }
    }
    int all_bad = 0;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0) printf("%s: %d wrong or failed dreduce calls\n", all_bad ? "FAILED" : "results right", all_bad);
#ifdef DR_HAVE_NCCL
    if (nccl) ncclCommDestroy(nccl);
#endif
    dreduce_destroy(ctx_all);
    dreduce_destroy(ctx);
    cudaFree(d_in);
    cudaFree(d_temp);
    cudaFree(d_f);
    cudaFree(d_i);
    cudaFreeHost(pinned_f);
    cudaFreeHost(pinned_i);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
