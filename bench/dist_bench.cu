/* dreduce-dist-bench: histograms and quantiles (include/dreduce.h, "Distributions") against CUB in one run, on one
 * GPU, one rank. Run as `build/bench/dreduce-dist-bench [--sizes 28,30] [--reps 10] [--only hist|quantile]`.
 *
 * Every figure is the median over --reps repetitions (after two warm-ups) of the host wall-clock time of one call
 * with the result on the host: what a user waits for. The peers are timed the same way (their kernels, then the
 * copy of the result to the host, synchronized):
 *   read     cub::DeviceReduce::Sum of the same bytes as int32: the cost of reading the data once (the bandwidth
 *            every row is compared with: "reads" = time / read);
 *   hist     dreduce_histogram, explicit range (one pass), against cub::DeviceHistogram::HistogramEven with the
 *            same bins and range; float32 and int32, B = 10, 256, 4096, 65536 (over [0, 1) and [0, 2^20)), and
 *            uint8, B = 16 and 256 over [0, 256), on uniform data and on data with every element in one bin; the
 *            automatic range's extra pass (the stats op) is a row of its own;
 *   quantile dreduce_quantile of the median and of q = {0.01, 0.5, 0.99}, against cub::DeviceRadixSort::SortKeys
 *            of the array and reading the order statistics (the sort alone is counted: a lower bound for the
 *            peer); float32, float64, int32, int64.
 * Each of ours is checked against its peer's answer (counts equal; quantile equal to the sorted array's lerp). Exit
 * 0 ok, 1 a wrong answer or an error, 77 no GPU. */
#include <cuda_runtime.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <cub/cub.cuh>

#include "dreduce.h"

#define CK(call)                                                                                               \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "dreduce-dist-bench: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_),       \
                    __FILE__, __LINE__);                                                                       \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

static double now_ms()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int g_reps = 10;

template <typename F> static double median_ms(F &&f)
{
    f();
    f();
    std::vector<double> t;
    for (int r = 0; r < g_reps; ++r) {
        const double t0 = now_ms();
        f();
        t.push_back(now_ms() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

/* Uniform data in [0, 1) (floats), [0, 2^20) (ints) or [0, 256) (bytes), or every element equal (one bin). */
template <typename T> __global__ void fill(T *p, size_t n, int one_bin, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = (i + seed) * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) p[i] = one_bin ? T(0.3) : T((double)(z >> 40) / 16777216.0);
        else if constexpr (T(0.5) != T(0)) p[i] = one_bin ? T(0.3) : T((double)(z >> 11) / 9007199254740992.0);
        else p[i] = one_bin ? T(77) : T(z >> 44);
    }
}

template <typename T> static void fill_dev(T *p, size_t n, int one_bin)
{
    fill<T><<<1024, 256>>>(p, n, one_bin, 12345);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

static void *g_tmp;
static size_t g_tmp_bytes;
static void ensure_tmp(size_t b)
{
    if (b <= g_tmp_bytes) return;
    if (g_tmp) CK(cudaFree(g_tmp));
    CK(cudaMalloc(&g_tmp, b));
    g_tmp_bytes = b;
}

static double read_ms(const void *d, size_t bytes)
{
    const int *x = (const int *)d;
    const size_t n = bytes / 4;
    int *d_out;
    CK(cudaMalloc(&d_out, sizeof(int)));
    size_t tb = 0;
    CK(cub::DeviceReduce::Sum(nullptr, tb, x, d_out, (int64_t)n));
    ensure_tmp(tb);
    int h;
    const double ms = median_ms([&] {
        CK(cub::DeviceReduce::Sum(g_tmp, tb, x, d_out, (int64_t)n));
        CK(cudaMemcpy(&h, d_out, sizeof h, cudaMemcpyDeviceToHost));
    });
    CK(cudaFree(d_out));
    return ms;
}

static int g_fail;

template <typename T>
static void hist_rows(dreduce_context_t *ctx, dr_dtype_t dt, const char *tname, int log2n)
{
    const size_t n = (size_t)1 << log2n;
    T *d;
    CK(cudaMalloc(&d, n * sizeof(T)));
    const double rd = read_ms(d, n * sizeof(T)); /* contents do not matter to the read */
    const bool is_float = T(0.5) != T(0), bytes = sizeof(T) == 1;
    /* (bins, the range's high end): bytes in unit bins (and 16 wide) over [0, 256), the image histogram; ints over
     * [0, 2^20) in bins a power of two wide, whose estimate is exact (the library's exact places), and over
     * [0, 2^20 + 1), the same data in bins of no such width */
    const double lo = 0, hi = is_float ? 1.0 : bytes ? 256.0 : 1048576.0;
    std::vector<std::pair<int, double>> rows;
    for (int b : bytes ? std::vector<int>{16, 256} : std::vector<int>{10, 256, 4096, 65536}) rows.push_back({b, hi});
    if (!is_float && !bytes) rows.insert(rows.end(), {{256, hi + 1}, {4096, hi + 1}});
    for (int one = 0; one < 2; ++one) {
        fill_dev(d, n, one);
        for (const auto &row : rows) {
            const int bins = row.first;
            const double top = row.second; /* the range [lo, top) */
            std::vector<uint64_t> ours(bins);
            std::vector<double> edges(bins + 1);
            const double range[2] = {lo, top};
            dreduce_dist_info_t info;
            const double t_ours = median_ms([&] {
                if (dreduce_histogram(ctx, d, n, dt, (uint32_t)bins, range, ours.data(), edges.data(), &info) != DR_OK)
                    exit(1);
            });
            /* CUB: levels lo..top in bins steps; counts int (CUB's counter type), to the host */
            int *d_hist;
            CK(cudaMalloc(&d_hist, bins * sizeof(int)));
            std::vector<int> theirs(bins);
            size_t tb = 0;
            /* levels: the samples' type, but int for bytes (256 does not fit one), as CUB's byte examples */
            using L = typename std::conditional<
                sizeof(T) == 8 && T(0.5) != T(0), double,
                typename std::conditional<T(0.5) != T(0), float,
                                          typename std::conditional<sizeof(T) == 1, int, T>::type>::type>::type;
            const L llo = (L)lo, lhi = (L)top;
            CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, d, d_hist, bins + 1, llo, lhi, (int64_t)n));
            ensure_tmp(tb);
            const double t_cub = median_ms([&] {
                CK(cub::DeviceHistogram::HistogramEven(g_tmp, tb, d, d_hist, bins + 1, llo, lhi, (int64_t)n));
                CK(cudaMemcpy(theirs.data(), d_hist, bins * sizeof(int), cudaMemcpyDeviceToHost));
            });
            /* CUB bins by its own arithmetic and leaves top out (NumPy's last bin is closed): the data here never
             * reaches top, so the totals must agree, and the one-bin data must sit in one bin on both sides. */
            uint64_t tot_ours = 0, tot_cub = 0;
            int full_ours = 0, full_cub = 0;
            for (int b = 0; b < bins; ++b) {
                tot_ours += ours[b];
                tot_cub += (uint64_t)theirs[b];
                full_ours += ours[b] != 0;
                full_cub += theirs[b] != 0;
            }
            if (tot_ours != n || tot_cub != n || (one && (full_ours != 1 || full_cub != 1))) {
                fprintf(stderr, "dreduce-dist-bench: %s hist %d bins: totals %llu (ours) %llu (CUB) of %zu\n", tname,
                        bins, (unsigned long long)tot_ours, (unsigned long long)tot_cub, n);
                g_fail = 1;
            }
            const double gb = (double)(n * sizeof(T)) / 1e6;
            /* the last call's own split: its counting pass (the kernel and the wait for it) and the rest of
             * the call (arguments' agreement, edges, counts back, combine) */
            printf("hist      %-8s 2^%d %-7s B=%-6d ours %8.3f ms %7.0f GB/s  CUB %8.3f ms %7.0f GB/s  x%5.2f  "
                   "reads %4.2f  of read-bw %5.1f%%  (pass %.3f, rest %.3f ms)  range [0, %g)\n",
                   tname, log2n, one ? "one-bin" : "uniform", bins, t_ours, gb / t_ours, t_cub, gb / t_cub,
                   t_cub / t_ours, t_ours / rd, 100.0 * rd / t_ours, info.pass_local_ms[0],
                   info.total_ms - info.pass_local_ms[0], top);
            CK(cudaFree(d_hist));
        }
    }
    /* The automatic range: its stats pass, then the pass above. */
    fill_dev(d, n, 0);
    std::vector<uint64_t> ours(256);
    dreduce_dist_info_t info;
    const double t_auto = median_ms([&] {
        if (dreduce_histogram(ctx, d, n, dt, 256, NULL, ours.data(), NULL, &info) != DR_OK) exit(1);
    });
    printf("hist-auto %-8s 2^%d uniform B=256    ours %8.3f ms (range pass %.3f ms)  reads %4.2f\n", tname, log2n,
           t_auto, info.range_ms, t_auto / rd);
    printf("read      %-8s 2^%d                  CUB Sum %8.3f ms %7.0f GB/s\n", tname, log2n, rd,
           (double)(n * sizeof(T)) / 1e6 / rd);
    CK(cudaFree(d));
}

template <typename T> static double as_double(T v) { return (double)v; }

template <typename T>
static void quantile_rows(dreduce_context_t *ctx, dr_dtype_t dt, const char *tname, int log2n)
{
    const size_t n = (size_t)1 << log2n;
    T *d, *d_sorted;
    CK(cudaMalloc(&d, n * sizeof(T)));
    CK(cudaMalloc(&d_sorted, n * sizeof(T)));
    fill_dev(d, n, 0);
    const double rd = read_ms(d, n * sizeof(T));
    static const double q3[3] = {0.01, 0.5, 0.99};
    double v[3];
    const double t_med = median_ms([&] {
        if (dreduce_quantile(ctx, d, n, dt, 1, &q3[1], v, NULL, NULL) != DR_OK) exit(1);
    });
    dreduce_dist_info_t info;
    const double t_q3 = median_ms([&] {
        if (dreduce_quantile(ctx, d, n, dt, 3, q3, v, NULL, &info) != DR_OK) exit(1);
    });
    size_t tb = 0;
    CK(cub::DeviceRadixSort::SortKeys(nullptr, tb, d, d_sorted, (int64_t)n));
    ensure_tmp(tb);
    T picked[2];
    const double t_sort = median_ms([&] {
        CK(cub::DeviceRadixSort::SortKeys(g_tmp, tb, d, d_sorted, (int64_t)n));
        CK(cudaMemcpy(picked, d_sorted + n / 2 - 1, 2 * sizeof(T), cudaMemcpyDeviceToHost));
    });
    /* the check: each q from the sorted array, NumPy's lerp */
    for (int i = 0; i < 3; ++i) {
        const double vi = (double)(n - 1) * q3[i];
        const size_t lo = (size_t)vi, hi = lo + 1 < n ? lo + 1 : lo;
        T ab[2];
        CK(cudaMemcpy(&ab[0], d_sorted + lo, sizeof(T), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&ab[1], d_sorted + hi, sizeof(T), cudaMemcpyDeviceToHost));
        const double a = as_double(ab[0]), b = as_double(ab[1]), t = vi - (double)lo, df = b - a;
        const double want = t >= 0.5 ? b - df * (1 - t) : a + df * t;
        if (memcmp(&want, &v[i], sizeof want) != 0) {
            fprintf(stderr, "dreduce-dist-bench: %s q %g = %.17g, the sorted array's %.17g\n", tname, q3[i], v[i], want);
            g_fail = 1;
        }
    }
    printf("quantile  %-8s 2^%d median %8.3f ms (reads %4.2f)  3q %8.3f ms (reads %4.2f, %d passes)  CUB sort "
           "%8.3f ms  sort/ours x%5.1f\n",
           tname, log2n, t_med, t_med / rd, t_q3, t_q3 / rd, info.passes, t_sort, t_sort / t_q3);
    CK(cudaFree(d));
    CK(cudaFree(d_sorted));
}

int main(int argc, char **argv)
{
    std::vector<int> sizes = {28, 30};
    const char *only = ""; /* hist or quantile: those rows alone */
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            sizes.clear();
            for (char *s = strtok(argv[++i], ","); s; s = strtok(NULL, ",")) sizes.push_back(atoi(s));
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            g_reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc && (!strcmp(argv[i + 1], "hist") ||
                                                                   !strcmp(argv[i + 1], "quantile"))) {
            only = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: dreduce-dist-bench [--sizes L1,L2 (log2 of n)] [--reps R] [--only hist|quantile]\n");
            return 2;
        }
    }
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0) {
        printf("no GPU: skipped\n");
        return 77;
    }
    MPI_Init(&argc, &argv);
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = DR_DEVICE_GPU;
    dreduce_context_t *ctx;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) return 1;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dreduce_gpu(ctx)));
    printf("dreduce-dist-bench on %s, median of %d\n", prop.name, g_reps);
    for (int l : sizes) {
        if (strcmp(only, "quantile")) {
            hist_rows<float>(ctx, DR_FLOAT32, "float32", l);
            hist_rows<int32_t>(ctx, DR_INT32, "int32", l);
            hist_rows<uint8_t>(ctx, DR_UINT8, "uint8", l);
        }
        if (!strcmp(only, "hist")) continue;
        quantile_rows<float>(ctx, DR_FLOAT32, "float32", l);
        quantile_rows<int32_t>(ctx, DR_INT32, "int32", l);
        if (l <= 29 || prop.totalGlobalMem > (size_t)40 << 30) {
            quantile_rows<double>(ctx, DR_FLOAT64, "float64", l);
            quantile_rows<int64_t>(ctx, DR_INT64, "int64", l);
        }
    }
    dreduce_destroy(ctx);
    MPI_Finalize();
    return g_fail;
}
