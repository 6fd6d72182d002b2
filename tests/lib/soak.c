/* Soak (issue #16): many dreduce_reduce calls with changing sizes, types and ops on one context; every result must
 * be exact and the process's memory flat after the first calls (resident set size; on a GPU also the device's free
 * memory). Values are small non-negative integers, exact in every type and accumulator, so the expected result of
 * each (size, op) is computed once, up front.
 * Usage: soak [--calls N] [--gpu]   (N: default 100000, or DREDUCE_SOAK_CALLS; --gpu: device buffers on a GPU
 * context, exit 77 without a GPU). Exit 0 when every rank passes. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dreduce.h"
#include "dtype.h"

/* Under AddressSanitizer freed memory waits in a quarantine (up to 256 MB) before reuse, so the resident set grows
 * with any malloc/free traffic (MPI's own per-collective buffers included): the memory check means nothing there,
 * while the calls still run under ASan's checks and LeakSanitizer's. */
#if defined(__SANITIZE_ADDRESS__)
#define DR_SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DR_SOAK_ASAN 1
#endif
#endif
#ifndef DR_SOAK_ASAN
#define DR_SOAK_ASAN 0
#endif

enum { NSIZES = 7, MAXN = 65537 };
static const uint64_t sizes[NSIZES] = {0, 1, 7, 1000, 4096, 65537, 33};
static const dr_op_t ops[] = {DR_SUM, DR_MIN, DR_MAX, DR_BAND, DR_BOR, DR_BXOR};
enum { NOPS = sizeof ops / sizeof ops[0] };

static int value(uint64_t i, int rank) { return (int)((i * 7 + (uint64_t)rank * 3) % 5); }

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The bits of v (0..4) in each type. */
static void fill(void *buf, dr_dtype_t t, uint64_t n, int rank)
{
    static const uint16_t f16[5] = {0x0000, 0x3C00, 0x4000, 0x4200, 0x4400};
    static const uint16_t bf16[5] = {0x0000, 0x3F80, 0x4000, 0x4040, 0x4080};
    for (uint64_t i = 0; i < n; ++i) {
        const int v = value(i, rank);
        switch (t) {
        case DR_INT32: ((int32_t *)buf)[i] = v; break;
        case DR_INT64: ((int64_t *)buf)[i] = v; break;
        case DR_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
        case DR_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
        case DR_FLOAT32: ((float *)buf)[i] = (float)v; break;
        case DR_FLOAT64: ((double *)buf)[i] = v; break;
        case DR_FLOAT16: ((uint16_t *)buf)[i] = f16[v]; break;
        case DR_BFLOAT16: ((uint16_t *)buf)[i] = bf16[v]; break;
        case DR_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
        case DR_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
        case DR_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
        case DR_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
        default: fprintf(stderr, "soak: no fill for dtype %d\n", (int)t); abort();
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1, gpu = 0, allreduce = 0;
    double timeout = 60;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    long calls = getenv("DREDUCE_SOAK_CALLS") ? atol(getenv("DREDUCE_SOAK_CALLS")) : 100000;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--gpu")) gpu = 1;
        else if (!strcmp(argv[i], "--allreduce")) allreduce = 1;
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atof(argv[++i]);
    }
    int ngpus = 0;
    if (gpu && (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0)) {
        if (rank == 0) printf("skipped: no GPU\n");
        MPI_Finalize();
        return 77;
    }
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = gpu ? DR_DEVICE_GPU : DR_DEVICE_CPU;
    cfg.cpu_threads = 1;
    cfg.timeout = timeout;
    cfg.allreduce = allreduce;
    dreduce_context_t *ctx = NULL;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    /* Every rank's share: sizes[s] elements on rank r, minus r (uneven shares; rank r gets none of the small ones). */
    double want[NSIZES][NOPS];
    for (int s = 0; s < NSIZES; ++s)
        for (int o = 0; o < NOPS; ++o) {
            double sum = 0, mn = INFINITY, mx = -INFINITY;
            uint64_t band = ~(uint64_t)0, bor = 0, bxor = 0;
            for (int r = 0; r < nranks; ++r) {
                const uint64_t n = sizes[s] > (uint64_t)r ? sizes[s] - (uint64_t)r : 0;
                for (uint64_t i = 0; i < n; ++i) {
                    const int v = value(i, r);
                    sum += v, mn = v < mn ? v : mn, mx = v > mx ? v : mx;
                    band &= (uint64_t)v, bor |= (uint64_t)v, bxor ^= (uint64_t)v;
                }
            }
            want[s][o] = ops[o] == DR_SUM ? sum : ops[o] == DR_MIN ? mn : ops[o] == DR_MAX ? mx
                         : ops[o] == DR_BAND ? (double)band : ops[o] == DR_BOR ? (double)bor : (double)bxor;
        }
    /* One buffer per type, filled once. */
    void *h[DR_DTYPE_COUNT], *d[DR_DTYPE_COUNT];
    for (int t = 0; t < DR_DTYPE_COUNT; ++t) {
        const size_t bytes = MAXN * dr_dtype_size((dr_dtype_t)t);
        h[t] = malloc(bytes);
        fill(h[t], (dr_dtype_t)t, MAXN, rank);
        d[t] = h[t];
        if (gpu && (cudaMalloc(&d[t], bytes) != cudaSuccess || cudaMemcpy(d[t], h[t], bytes, cudaMemcpyDefault)))
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long bad = 0, rss_warm = 0;
    size_t free_warm = 0, free_now = 0, total = 0;
    const long warm = calls < 4000 ? calls / 2 : 2000;
    for (long c = 0; c < calls; ++c) {
        const int s = (int)(c % NSIZES), t = (int)((c / NSIZES) % DR_DTYPE_COUNT);
        int o = (int)((c / (NSIZES * DR_DTYPE_COUNT)) % NOPS);
        if (dr_dtype_is_float((dr_dtype_t)t) && ops[o] >= DR_BAND) o = (int)(c % 3); /* bitwise: integers only */
        const uint64_t n = sizes[s] > (uint64_t)rank ? sizes[s] - (uint64_t)rank : 0;
        dreduce_result_t res;
        const dr_status_t st = dreduce_reduce(ctx, n ? d[t] : NULL, n, (dr_dtype_t)t, ops[o], &res);
        /* a reduction of nothing is the identity of its type: not checked */
        const double w = want[s][o];
        const int check = res.valid && sizes[s] > 0;
        if (st != DR_OK || res.valid != (rank == 0 || allreduce) || (check && dreduce_result_double(&res) != w)) {
            if (bad++ < 5)
                fprintf(stderr, "FAIL rank %d call %ld: %s %s n=%llu: status %d valid %d got %.17g want %.17g\n",
                        rank, c, dr_dtype_name((dr_dtype_t)t), dr_op_name(ops[o]), (unsigned long long)sizes[s],
                        (int)st, res.valid, dreduce_result_double(&res), w);
        }
        if (c + 1 == warm) {
            rss_warm = rss_kib();
            if (gpu) cudaMemGetInfo(&free_warm, &total);
        }
    }
    const long rss_end = rss_kib();
    if (gpu) cudaMemGetInfo(&free_now, &total);
    int fails = bad != 0;
    if (!DR_SOAK_ASAN && rss_end - rss_warm > 1024) {
        fprintf(stderr, "FAIL rank %d: resident memory grew from %ld KiB to %ld KiB after call %ld\n", rank, rss_warm,
                rss_end, warm);
        fails = 1;
    }
    if (gpu && free_now != free_warm) {
        fprintf(stderr, "FAIL rank %d: free device memory moved from %zu to %zu bytes\n", rank, free_warm, free_now);
        fails = 1;
    }
    printf("rank %d: %ld calls, %ld wrong, resident %ld KiB after %ld calls, %ld KiB at the end%s%s\n", rank, calls,
           bad, rss_warm, warm, rss_end, gpu ? " (GPU: device memory checked)" : "",
           DR_SOAK_ASAN ? " (AddressSanitizer: resident memory not checked)" : "");
    dreduce_destroy(ctx);
    for (int t = 0; t < DR_DTYPE_COUNT; ++t) {
        if (gpu) cudaFree(d[t]);
        free(h[t]);
    }
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("soak %s\n", all ? "FAILED" : "passed");
    MPI_Finalize();
    return all ? 1 : 0;
}
