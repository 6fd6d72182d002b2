/* dreduce-nan-bench: what the NaN policy OMIT costs (issue 42), on one GPU. Run as
 * `build/bench/dreduce-nan-bench [--sizes 28,30] [--reps 20] [--nans 0,0.01]`.
 *
 * For every float type and every op a float array takes (sum in float64 and exact, prod, min, max, argmin, argmax,
 * stats in float64 and exact), the same kernel row (kernels/launch.h: dr_gpu_plan + dr_gpu_reduce, as the library
 * launches it) with nan_omit 0 (PROPAGATE) and 1 (OMIT: each NaN read as the op's NumPy value, or left out by stats,
 * and counted), on the same device array: data without NaN, and data with a fraction of NaN (--nans; 1% by
 * default). Both are timed in the same run, alternating, with CUDA events around each launch (kernel time: no copy
 * of the result), the median of --reps after three warm-ups. "omit/prop" is OMIT's time over PROPAGATE's: the
 * target is at most 1.03. There is no CUB peer: CUB has no NaN-omitting reduction (its Sum/Min/Max of data with NaN
 * propagate or compare as IEEE says); bench/python_bench.py --nan times cupy.nansum, torch.nansum and torch.nanmean.
 *
 * Checked: OMIT's NaN count against the host's count of the generated data; on data without NaN OMIT's result equals
 * PROPAGATE's (bit for bit where the result does not depend on the grid: min, max, argmin/argmax, exact sums, counts;
 * else within 1e-9 relatively), and with NaN the exact sum and min/max against the CPU backend's OMIT answer over
 * the same bytes. Exit 0 ok, 1 a wrong answer or an error, 2 bad command line, 77 no GPU. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "accum.h"
#include "generate.h"
#include "launch.h"
extern "C" {
#include "cpu_backend.h" /* plain C */
#include "dtype.h"
}

#define CK(call)                                                                                               \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "dreduce-nan-bench: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_),        \
                    __FILE__, __LINE__);                                                                       \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

struct Row {
    dr_op_t op;
    dr_acc_mode_t mode;
    const char *name;
};
static const Row kRows[] = {
    {DR_SUM, DR_ACC_WIDE, "sum"},       {DR_SUM, DR_ACC_MODE_EXACT, "sum exact"}, {DR_PROD, DR_ACC_WIDE, "prod"},
    {DR_MIN, DR_ACC_WIDE, "min"},       {DR_MAX, DR_ACC_WIDE, "max"},             {DR_ARGMIN, DR_ACC_WIDE, "argmin"},
    {DR_ARGMAX, DR_ACC_WIDE, "argmax"}, {DR_STATS, DR_ACC_WIDE, "stats"},         {DR_STATS, DR_ACC_MODE_EXACT, "stats exact"},
};
static const dr_dtype_t kTypes[] = {DR_FLOAT32, DR_FLOAT64, DR_FLOAT16, DR_BFLOAT16};

static int usage(const char *msg)
{
    fprintf(stderr, "dreduce-nan-bench: %s\nusage: dreduce-nan-bench [--sizes L2,L2...] [--reps R] [--nans F,F...]\n",
            msg);
    return 2;
}

/* One launch of r on s between two events; ms of the kernels. */
static float time_once(dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t a, cudaEvent_t b)
{
    CK(cudaEventRecord(a, s));
    CK(dr_gpu_reduce(r, p, s, NULL));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    std::vector<int> sizes = {28};
    std::vector<double> fractions = {0.0, 0.01};
    int reps = 20;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (i + 1 >= argc) return usage("an option without its value");
        const char *v = argv[++i];
        if (strcmp(a, "--sizes") == 0) {
            sizes.clear();
            for (const char *p = v; *p;) {
                char *end;
                const long l = strtol(p, &end, 10);
                if (end == p || l < 10 || l > 33) return usage("--sizes takes log2 sizes in 10..33, e.g. 28,30");
                sizes.push_back((int)l);
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') return usage("--sizes takes log2 sizes in 10..33, e.g. 28,30");
            }
        } else if (strcmp(a, "--reps") == 0) {
            char *end;
            reps = (int)strtol(v, &end, 10);
            if (*end || reps < 1 || reps > 10000) return usage("--reps takes a whole number in 1..10000");
        } else if (strcmp(a, "--nans") == 0) {
            fractions.clear();
            for (const char *p = v; *p;) {
                char *end;
                const double f = strtod(p, &end);
                if (end == p || !(f >= 0 && f <= 1)) return usage("--nans takes fractions in 0..1, e.g. 0,0.01");
                fractions.push_back(f);
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') return usage("--nans takes fractions in 0..1, e.g. 0,0.01");
            }
        } else {
            return usage("unknown option");
        }
    }
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0) {
        printf("dreduce-nan-bench: no GPU: skipped\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("dreduce-nan-bench: %s; kernel time (CUDA events), median of %d after 3 warm-ups; GB/s = bytes read / "
           "time\n", prop.name, reps);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t ea, eb;
    CK(cudaEventCreate(&ea));
    CK(cudaEventCreate(&eb));
    int bad = 0;
    double worst = 0;
    char worst_row[128] = "";
    for (int lg : sizes) {
        const size_t n = (size_t)1 << lg;
        for (dr_dtype_t t : kTypes) {
            const size_t es = t == DR_FLOAT64 ? 8 : t == DR_FLOAT32 ? 4 : 2;
            void *d_in = NULL;
            if (cudaMalloc(&d_in, n * es) != cudaSuccess) {
                (void)cudaGetLastError();
                printf("%s 2^%d: no memory for the input, skipped\n", dr_dtype_name(t), lg);
                continue;
            }
            std::vector<unsigned char> host(n * es);
            for (double frac : fractions) {
                dr_gen_t g;
                memset(&g, 0, sizeof g);
                g.pattern = DR_DATA_RANDOM;
                g.dtype = t;
                g.op = DR_SUM;
                g.seed = 12345;
                g.nan_threshold = (uint64_t)llround(frac * 4294967296.0);
                CK(dr_gpu_generate(&g, 0, d_in, n, s));
                CK(cudaMemcpyAsync(host.data(), d_in, n * es, cudaMemcpyDeviceToHost, s));
                CK(cudaStreamSynchronize(s));
                uint64_t host_nans = 0;
                {
                    dr_partial_t p;
                    uint64_t depth = 0;
                    dr_cpu_reduce_on(t, DR_SUM, DR_ACC_F64, DR_NAN_OMIT, host.data(), n, 0, 16, NULL, &p, &depth,
                                     &host_nans);
                }
                printf("\n%-9s n = 2^%d (%.2f GB), %.2f%% NaN (%llu)\n", dr_dtype_name(t), lg,
                       (double)(n * es) / 1e9, 100.0 * (double)host_nans / (double)n, (unsigned long long)host_nans);
                printf("  %-12s %12s %12s %10s %10s %10s\n", "op", "propagate ms", "omit ms", "prop GB/s", "omit GB/s",
                       "omit/prop");
                for (const Row &row : kRows) {
                    const dr_acc_kind_t acc = dr_acc_select(t, row.op, row.mode);
                    dr_gpu_reduce_t r[2];
                    dr_gpu_plan_t plan[2];
                    void *work[2] = {NULL, NULL}, *res = NULL;
                    uint64_t *d_nan = NULL;
                    CK(cudaMalloc(&res, 2 * sizeof(dr_partial_t)));
                    CK(cudaMalloc(&d_nan, sizeof(uint64_t)));
                    for (int k = 0; k < 2; ++k) {
                        memset(&r[k], 0, sizeof r[k]);
                        r[k].kernel = DR_KERNEL_MULTIPASS;
                        r[k].dtype = t;
                        r[k].op = row.op;
                        r[k].acc = acc;
                        r[k].device = 0;
                        r[k].d_in = d_in;
                        r[k].n = n;
                        r[k].block = dr_gpu_default_block_op(DR_KERNEL_MULTIPASS, row.op, t, n, 0);
                        r[k].nan_omit = k;
                        r[k].d_nan_count = k ? d_nan : NULL;
                        r[k].d_result = (char *)res + k * sizeof(dr_partial_t);
                        CK(dr_gpu_plan(&r[k], &plan[k]));
                        CK(cudaMalloc(&work[k], plan[k].work_bytes));
                        CK(cudaMemset(work[k], 0, plan[k].work_bytes));
                        r[k].d_work = work[k];
                    }
                    std::vector<float> tm[2];
                    for (int i = 0; i < 3; ++i)
                        for (int k = 0; k < 2; ++k) time_once(&r[k], &plan[k], s, ea, eb);
                    for (int i = 0; i < reps; ++i)
                        for (int k = 0; k < 2; ++k) tm[k].push_back(time_once(&r[k], &plan[k], s, ea, eb));
                    dr_partial_t got[2];
                    uint64_t nans = 0;
                    CK(cudaMemcpy(got, res, sizeof got, cudaMemcpyDeviceToHost));
                    CK(cudaMemcpy(&nans, d_nan, sizeof nans, cudaMemcpyDeviceToHost));
                    /* checks */
                    char why[160] = "";
                    if (nans != host_nans)
                        snprintf(why, sizeof why, "NaN count %llu, the data has %llu", (unsigned long long)nans,
                                 (unsigned long long)host_nans);
                    dr_value_t v[2];
                    dr_partial_result(acc, &got[0], &v[0]);
                    dr_partial_result(acc, &got[1], &v[1]);
                    const int exact_kind = row.op == DR_MIN || row.op == DR_MAX || dr_op_is_arg(row.op) ||
                                           acc == DR_ACC_EXACT;
                    if (!why[0] && exact_kind) {
                        dr_partial_t want;
                        uint64_t depth = 0, hn = 0;
                        dr_cpu_reduce_on(t, row.op, acc, DR_NAN_OMIT, host.data(), n, 0, 16, NULL, &want, &depth, &hn);
                        dr_value_t w;
                        dr_partial_result(acc, &want, &w);
                        const size_t cmp = dr_acc_kind_is_arg(acc) ? sizeof(dr_arg_t) : dr_acc_kind_size(
                                                                                               dr_acc_result_kind(acc));
                        if (memcmp(&w, &v[1], cmp) != 0) snprintf(why, sizeof why, "OMIT differs from the CPU backend's");
                    }
                    if (!why[0] && host_nans == 0 && !dr_acc_kind_is_stats(acc)) {
                        const double a = acc == DR_ACC_F32 ? v[0].f32 : dr_acc_kind_is_arg(acc) ? v[0].arg.value.f64 : v[0].f64;
                        const double b = acc == DR_ACC_F32 ? v[1].f32 : dr_acc_kind_is_arg(acc) ? v[1].arg.value.f64 : v[1].f64;
                        if (!(a == b || fabs(a - b) <= 1e-9 * fabs(a)))
                            snprintf(why, sizeof why, "without NaN OMIT gives %.17g, PROPAGATE %.17g", b, a);
                    }
                    const double mp = median(tm[0]), mo = median(tm[1]);
                    const double gb = (double)(n * es) / 1e9;
                    printf("  %-12s %12.4f %12.4f %10.1f %10.1f %10.3f%s%s\n", row.name, mp, mo, gb / (mp * 1e-3),
                           gb / (mo * 1e-3), mo / mp, why[0] ? "  FAILED: " : "", why);
                    if (why[0]) bad = 1;
                    if (lg >= 28 && mo / mp > worst) {
                        worst = mo / mp;
                        snprintf(worst_row, sizeof worst_row, "%s %s 2^%d, %.2f%% NaN", dr_dtype_name(t),
                                 row.name, lg, 100.0 * frac);
                    }
                    for (int k = 0; k < 2; ++k) CK(cudaFree(work[k]));
                    CK(cudaFree(res));
                    CK(cudaFree(d_nan));
                }
            }
            CK(cudaFree(d_in));
        }
    }
    if (worst_row[0]) printf("\nworst omit/prop at n >= 2^28: %.3f (%s); target <= 1.03\n", worst, worst_row);
    return bad;
}
