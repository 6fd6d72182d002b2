/* Host arrays on a GPU context through each path (cfg.host_path CPU, GPU, SPLIT, AUTO; label gpu) against the CPU
 * backend. Every rank makes the same whole array; a CPU context on MPI_COMM_SELF over the whole array is the
 * reference, and GPU contexts on MPI_COMM_WORLD (allreduce, so every rank checks) reduce each rank's part from
 * pageable memory (aligned, and one element off), pinned memory (cudaMallocHost) and memory the caller registered
 * (cudaHostRegister).
 *
 * Paths: CPU, GPU (and GPU in 1 MiB chunks, so indices and partials cross chunks), SPLIT, AUTO.
 * Rows: every type x every op it has (sum and stats also exact for the floats, sum with NaN omitted for float32).
 * Sizes: 1, 4099 and 3 Mi + 5 elements per rank (a real split: both parts of at least a 64th). Checks: the element
 * count, and the same bits as the reference for integers, min/max, argmin/argmax (value and global index), exact sums
 * and stats' count, min, max and exact sum; float64 sums, means and products within 1e-9 (of sum |x|, of |prod|),
 * m2 within 1e-8 relatively. Each call says which path it took (tm.host_path): the one forced, SPLIT with the CPU's
 * elements strictly inside (0, count) at 3 Mi + 5; AUTO takes the CPU below DREDUCE_HOST_MEASURE_MIN, measures once
 * for a 64 MiB array (measure_ms > 0 on the first call only, dreduce_host_rates then measured with positive rates)
 * and takes its choice; AUTO with a teaching kernel takes the GPU. A buffer freed after a call and a new one in its
 * place give the new answer, and the library leaves no registration behind (a pageable buffer stays unregistered, a
 * registered one stays registered). Bad values: cfg.host_path 9 fails at create on every rank. Run at np 1 and np 2
 * sharing a GPU. Exits 77 (skipped) when no GPU is visible. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dreduce.h"
#include "library_test.h"

static uint16_t f32_to_f16_trunc(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    const uint32_t sign = (b >> 16) & 0x8000u;
    const int e = (int)((b >> 23) & 0xff) - 127 + 15;
    return e <= 0 ? (uint16_t)sign : (uint16_t)(sign | (uint32_t)e << 10 | ((b >> 13) & 0x3ffu));
}

/* n elements of t: integers over their whole range (int8 and uint8: many ties for argmin/argmax), floats over a few
 * orders of magnitude with -0.0 among them (products: near 1), and for `nans` one in 97 a NaN. */
static void *make_array(dr_dtype_t t, int for_prod, int nans, uint64_t n, uint64_t seed)
{
    rng_state = seed;
    const size_t es = dreduce_dtype_size(t);
    unsigned char *a = malloc(n * es + 16);
    if (!a) exit(1);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t r = next_u64();
        const double u = (double)(r >> 11) / 9007199254740992.0;
        double v = for_prod ? 1.0 + (u - 0.5) / 64.0 : (u - 0.3) * ((r & 3) == 0 ? 1000.0 : 3.0);
        if (!for_prod && (r & 255) == 7) v = -0.0;
        if (nans && (r >> 40) % 97 == 0) v = NAN;
        unsigned char *p = a + i * es;
        float f = (float)v;
        uint16_t h;
        switch (t) {
        case DR_FLOAT32: memcpy(p, &f, 4); break;
        case DR_FLOAT64: memcpy(p, &v, 8); break;
        case DR_FLOAT16:
            h = isnan(v) ? 0x7e00u : f32_to_f16_trunc(f);
            memcpy(p, &h, 2);
            break;
        case DR_BFLOAT16: {
            uint32_t b;
            memcpy(&b, &f, 4);
            h = (uint16_t)(b >> 16);
            memcpy(p, &h, 2);
            break;
        }
        default: memcpy(p, &r, es); break; /* the integers: the low bytes of r */
        }
    }
    return a;
}

static double elem_f64(dr_dtype_t t, const unsigned char *a, uint64_t i)
{
    if (t == DR_FLOAT32) {
        float f;
        memcpy(&f, a + 4 * i, 4);
        return f;
    }
    if (t == DR_FLOAT64) {
        double x;
        memcpy(&x, a + 8 * i, 8);
        return x;
    }
    uint16_t h;
    memcpy(&h, a + 2 * i, 2);
    if (t == DR_FLOAT16) {
        const int e = (h >> 10) & 31, m = h & 1023;
        const double x = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
        return (h & 0x8000u) ? -x : x;
    }
    const uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static double abs_sum(dr_dtype_t t, const unsigned char *a, uint64_t n)
{
    double s = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const double x = elem_f64(t, a, i);
        if (isfinite(x)) s += fabs(x);
    }
    return s;
}

static int is_float(dr_dtype_t t) { return t == DR_FLOAT32 || t == DR_FLOAT64 || t == DR_FLOAT16 || t == DR_BFLOAT16; }
static int same_f64(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }
static int close_to(double got, double want, double tol)
{
    if (isnan(want) || isinf(want)) return same_f64(got, want);
    return fabs(got - want) <= tol;
}

typedef struct {
    dr_op_t op;
    dr_acc_mode_t mode;
    dr_nan_policy_t nan;
    const char *name;
} row_t;
static const row_t rows[] = {
    {DR_SUM, DR_ACC_WIDE, DR_NAN_PROPAGATE, "sum"},
    {DR_SUM, DR_ACC_MODE_EXACT, DR_NAN_PROPAGATE, "sum exact"},
    {DR_SUM, DR_ACC_WIDE, DR_NAN_OMIT, "sum, NaN omitted"},
    {DR_PROD, DR_ACC_WIDE, DR_NAN_PROPAGATE, "prod"},
    {DR_MIN, DR_ACC_WIDE, DR_NAN_PROPAGATE, "min"},
    {DR_MAX, DR_ACC_WIDE, DR_NAN_PROPAGATE, "max"},
    {DR_BAND, DR_ACC_WIDE, DR_NAN_PROPAGATE, "band"},
    {DR_BOR, DR_ACC_WIDE, DR_NAN_PROPAGATE, "bor"},
    {DR_BXOR, DR_ACC_WIDE, DR_NAN_PROPAGATE, "bxor"},
    {DR_ARGMIN, DR_ACC_WIDE, DR_NAN_PROPAGATE, "argmin"},
    {DR_ARGMAX, DR_ACC_WIDE, DR_NAN_PROPAGATE, "argmax"},
    {DR_STATS, DR_ACC_WIDE, DR_NAN_PROPAGATE, "stats"},
    {DR_STATS, DR_ACC_MODE_EXACT, DR_NAN_PROPAGATE, "stats exact"},
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

static int row_applies(dr_dtype_t t, const row_t *row)
{
    const int f = is_float(t);
    if (!f && (row->op == DR_SUM || row->op == DR_STATS) && row->mode == DR_ACC_MODE_EXACT) return 0; /* = wide */
    if (!f && row->nan == DR_NAN_OMIT) return 0;
    if (f && (row->op == DR_BAND || row->op == DR_BOR || row->op == DR_BXOR)) return 0;
    if (row->nan == DR_NAN_OMIT && t != DR_FLOAT32) return 0;
    return 1;
}

static void check(const char *what, const row_t *row, dr_dtype_t t, dr_status_t rs, const dreduce_result_t *ref,
                  dr_status_t gs, const dreduce_result_t *got, double asum)
{
    ++cases;
    if (rs != DR_OK || gs != DR_OK) {
        FAIL("%s: status %d, reference %d", what, gs, rs);
        return;
    }
    if (!got->valid || got->count != ref->count || got->nan_count != ref->nan_count || got->no_value != ref->no_value) {
        FAIL("%s: valid %d count %llu nan %llu no_value %d, reference count %llu nan %llu no_value %d", what,
             got->valid, (unsigned long long)got->count, (unsigned long long)got->nan_count, got->no_value,
             (unsigned long long)ref->count, (unsigned long long)ref->nan_count, ref->no_value);
        return;
    }
    const int f = is_float(t);
    int ok;
    if (row->op == DR_STATS) {
        const dreduce_stats_t *a = &got->stats, *b = &ref->stats;
        const double tol = 1e-9 * asum;
        ok = a->count == b->count && a->min.u64 == b->min.u64 && a->max.u64 == b->max.u64;
        if (!f || row->mode == DR_ACC_MODE_EXACT)
            ok = ok && same_f64(a->sum, b->sum) && same_f64(a->mean, b->mean) &&
                 (!a->sum_is_int || (a->sum_int.lo == b->sum_int.lo && a->sum_int.hi == b->sum_int.hi));
        else
            ok = ok && close_to(a->sum, b->sum, tol) && close_to(a->mean, b->mean, b->count ? tol / (double)b->count : 0);
        ok = ok && (isnan(b->m2) ? isnan(a->m2) : fabs(a->m2 - b->m2) <= 1e-8 * fabs(b->m2) + 1e-300);
        if (!ok)
            FAIL("%s: count %llu sum %.17g mean %.17g m2 %.17g; reference %llu %.17g %.17g %.17g", what,
                 (unsigned long long)a->count, a->sum, a->mean, a->m2, (unsigned long long)b->count, b->sum, b->mean,
                 b->m2);
        return;
    }
    if (got->kind != ref->kind) {
        FAIL("%s: kind %d, reference %d", what, (int)got->kind, (int)ref->kind);
        return;
    }
    const double g = dreduce_result_double(got), w = dreduce_result_double(ref);
    if (f && row->op == DR_SUM && row->mode == DR_ACC_WIDE) ok = close_to(g, w, 1e-9 * asum);
    else if (f && row->op == DR_PROD) ok = close_to(g, w, 1e-9 * fabs(w));
    else if (row->op == DR_ARGMIN || row->op == DR_ARGMAX)
        ok = got->value.arg.index == ref->value.arg.index && got->value.arg.value.u64 == ref->value.arg.value.u64;
    else ok = memcmp(&got->value, &ref->value, sizeof got->value) == 0; /* integers, min/max, exact sums */
    if (!ok)
        FAIL("%s: %.17g (index %llu), reference %.17g (index %llu)", what, g, (unsigned long long)got->value.arg.index,
             w, (unsigned long long)ref->value.arg.index);
}

enum { MEM_PAGEABLE = 0, MEM_PAGEABLE_OFF, MEM_PINNED, MEM_REGISTERED, MEM_COUNT };
static const char *const mem_name[MEM_COUNT] = {"pageable", "pageable, one element off", "pinned",
                                                "registered by the caller"};

/* This rank's part in memory of kind k: *base to free, the part at the returned address. */
static void *place(int k, const void *src, size_t bytes, size_t es, void **base)
{
    void *p = NULL;
    if (k == MEM_PINNED) {
        CUDA_OK(cudaMallocHost(&p, bytes + es));
        *base = p;
    } else {
        p = malloc(bytes + es + 64);
        if (!p) exit(1);
        *base = p;
        if (k == MEM_PAGEABLE_OFF) p = (char *)p + es;
        if (k == MEM_REGISTERED) CUDA_OK(cudaHostRegister(p, bytes ? bytes : 1, cudaHostRegisterDefault));
    }
    if (bytes) memcpy(p, src, bytes);
    return p;
}

static void unplace(int k, void *p, void *base)
{
    if (k == MEM_PINNED) {
        CUDA_OK(cudaFreeHost(base));
        return;
    }
    if (k == MEM_REGISTERED) CUDA_OK(cudaHostUnregister(p));
    free(base);
}

/* The host memory kind the driver sees at p: 1 pinned or registered, 0 pageable. */
static int driver_pinned(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

static dreduce_context_t *make_ctx(MPI_Comm comm, dr_device_choice_t dev, dr_host_path_t path, dr_acc_mode_t mode,
                                   dr_kernel_t kernel, size_t chunk_bytes)
{
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = dev;
    cfg.host_path = path;
    cfg.acc_mode = mode;
    cfg.kernel = kernel;
    cfg.share_gpus = 1;
    cfg.allreduce = 1;
    if (chunk_bytes) cfg.chunk_bytes = chunk_bytes;
    dreduce_context_t *c = NULL;
    if (dreduce_create(comm, &cfg, &c) != DR_OK) {
        fprintf(stderr, "dreduce_create failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return c;
}

int main(int argc, char **argv)
{
    int rank, nranks;
    if (!library_test_start(&argc, &argv, &rank, &nranks)) return 77;
    static const dr_host_path_t paths[] = {DR_HOST_PATH_CPU, DR_HOST_PATH_GPU, DR_HOST_PATH_SPLIT, DR_HOST_PATH_AUTO,
                                           DR_HOST_PATH_GPU};
    static const size_t chunks[] = {0, 0, 0, 0, (size_t)1 << 20}; /* the last: GPU in 1 MiB chunks */
    enum { NPATHS = 5, AUTO = 3 };
    dreduce_context_t *ref[2], *gpu[2][NPATHS];
    for (int m = 0; m < 2; ++m) {
        const dr_acc_mode_t mode = m ? DR_ACC_MODE_EXACT : DR_ACC_WIDE;
        ref[m] = make_ctx(MPI_COMM_SELF, DR_DEVICE_CPU, DR_HOST_PATH_AUTO, mode, DR_KERNEL_MULTIPASS, 0);
        for (int p = 0; p < NPATHS; ++p)
            gpu[m][p] = make_ctx(MPI_COMM_WORLD, DR_DEVICE_GPU, paths[p], mode, DR_KERNEL_MULTIPASS, chunks[p]);
    }
    static const uint64_t sizes[] = {1, 4099, (3u << 20) + 5};
    for (int t = 0; t < DR_DTYPE_COUNT; ++t) {
        const dr_dtype_t dt = (dr_dtype_t)t;
        const size_t es = dreduce_dtype_size(dt);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const uint64_t per = sizes[si], n = per * (uint64_t)nranks;
            uint64_t first = 0, mine = 0;
            dreduce_shard(n, DR_SCALING_STRONG, rank, nranks, &first, &mine);
            for (int ri = 0; ri < NROWS; ++ri) {
                const row_t *row = &rows[ri];
                if (!row_applies(dt, row)) continue;
                const int m = row->mode == DR_ACC_MODE_EXACT;
                unsigned char *whole = make_array(dt, row->op == DR_PROD, row->nan == DR_NAN_OMIT, n,
                                                  0x5eed0000u + 977u * (unsigned)t + 31u * (unsigned)si);
                const double asum = is_float(dt) ? abs_sum(dt, whole, n) : 0;
                dreduce_result_t want, got;
                dreduce_set_nan(ref[m], row->nan);
                const dr_status_t rs = dreduce_reduce_at(ref[m], whole, n, 0, dt, row->op, &want);
                for (int p = 0; p < NPATHS; ++p) {
                    dreduce_set_nan(gpu[m][p], row->nan);
                    for (int k = 0; k < MEM_COUNT; ++k) {
                        if (k == MEM_PAGEABLE_OFF && si == 0) continue;
                        void *base = NULL;
                        void *part = place(k, whole + first * es, mine * es, es, &base);
                        const dr_status_t gs = dreduce_reduce_at(gpu[m][p], part, mine, first, dt, row->op, &got);
                        dreduce_timings_t tm;
                        dreduce_timings(gpu[m][p], &tm);
                        char what[200];
                        snprintf(what, sizeof what, "rank %d: %s %s, %llu per rank, path %d%s, %s", rank,
                                 dreduce_dtype_name(dt), row->name, (unsigned long long)per, (int)paths[p],
                                 chunks[p] ? " in 1 MiB chunks" : "", mem_name[k]);
                        check(what, row, dt, rs, &want, gs, &got, asum);
                        const int pinned = k == MEM_PINNED || k == MEM_REGISTERED;
                        if (gs == DR_OK && mine > 0) {
                            ++cases;
                            const int took = tm.host_path;
                            const int want_path = paths[p] == DR_HOST_PATH_AUTO ? DR_HOST_PATH_CPU /* < 32 MiB */
                                                  : paths[p] == DR_HOST_PATH_SPLIT && si < 2 ? -2 /* too short */
                                                                                              : (int)paths[p];
                            if ((want_path >= 0 && took != want_path) || tm.host_pinned != pinned)
                                FAIL("%s: took path %d (pinned %d), expected %d (pinned %d)", what, took,
                                     tm.host_pinned, want_path, pinned);
                            if (took == DR_HOST_PATH_SPLIT && !(tm.host_cpu_elems > 0 && tm.host_cpu_elems < mine))
                                FAIL("%s: split with %llu of %llu elements on the CPU", what,
                                     (unsigned long long)tm.host_cpu_elems, (unsigned long long)mine);
                        }
                        ++cases;
                        if (driver_pinned(part) != pinned) FAIL("%s: the call changed the buffer's registration", what);
                        unplace(k, part, base);
                    }
                }
                free(whole);
            }
        }
    }

    /* A freed buffer and a new one in its place: the new answer (nothing of the old buffer kept). */
    {
        const uint64_t n = (1u << 20) + 3;
        for (int p = 0; p < NPATHS; ++p) {
            for (int round = 0; round < 2; ++round) {
                int32_t *a = malloc(n * sizeof *a);
                int64_t want = 0;
                for (uint64_t i = 0; i < n; ++i) want += a[i] = (int32_t)(i * 7 + (uint64_t)round * 1000003u);
                dreduce_result_t r;
                ++cases;
                if (dreduce_reduce_at(gpu[0][p], a, n, 0, DR_INT32, DR_SUM, &r) != DR_OK || !r.valid ||
                    r.value.i64 != want * nranks)
                    FAIL("rank %d: a new buffer after a freed one, path %d, round %d: %lld, expected %lld", rank,
                         (int)paths[p], round, (long long)r.value.i64, (long long)(want * nranks));
                free(a);
            }
        }
    }

    /* AUTO on a 64 MiB array: measured once per kind and row, then its choice. */
    {
        const uint64_t n = 16u << 20; /* float32: 64 MiB >= DREDUCE_HOST_MEASURE_MIN */
        float *a = malloc(n * sizeof *a);
        for (uint64_t i = 0; i < n; ++i) a[i] = (float)(i % 1000) * 0.5f;
        for (int call = 0; call < 2; ++call) {
            dreduce_result_t r;
            dreduce_timings_t tm;
            const dr_status_t s = dreduce_reduce_at(gpu[1][AUTO], a, n, 0, DR_FLOAT32, DR_SUM, &r);
            dreduce_timings(gpu[1][AUTO], &tm);
            dreduce_host_rates_t q;
            dreduce_host_rates(gpu[1][AUTO], 0, DR_FLOAT32, DR_SUM, &q);
            ++cases;
            if (s != DR_OK || !q.measured || !(q.cpu_gbs > 0 && q.gpu_gbs > 0 && q.split_gbs >= 0) ||
                (call == 0) != (tm.measure_ms > 0) || tm.host_path != (int)q.choice || q.probe_bytes != n * 4)
                FAIL("rank %d: AUTO at 64 MiB, call %d: status %d measured %d rates %.1f %.1f %.1f probe %llu, "
                     "measure_ms %.3f, path %d, choice %d", rank, call, s, q.measured, q.cpu_gbs, q.gpu_gbs,
                     q.split_gbs, (unsigned long long)q.probe_bytes, tm.measure_ms, tm.host_path, (int)q.choice);
            if (rank == 0 && call == 0)
                printf("AUTO, pageable float32 sum, 64 MiB: cpu %.1f GB/s, gpu %.1f GB/s, split %.1f GB/s "
                       "(cpu share %.3f) -> %d, measured in %.1f ms\n", q.cpu_gbs, q.gpu_gbs, q.split_gbs,
                       q.split_cpu_fraction, (int)q.choice, q.measure_ms);
            ++cases; /* 0 + 0.5 + ... + 499.5 per 1000, exactly */
            const double want = (double)nranks * 249750.0 * (double)(n / 1000) +
                                (double)nranks * 0.25 * (double)((n % 1000) * (n % 1000 - 1));
            if (!r.valid || dreduce_result_double(&r) != want)
                FAIL("rank %d: AUTO at 64 MiB: %.17g, expected %.17g", rank, dreduce_result_double(&r), want);
        }
        free(a);
    }

    /* AUTO with a teaching kernel: the GPU, whatever the size. */
    {
        dreduce_context_t *c =
            make_ctx(MPI_COMM_WORLD, DR_DEVICE_GPU, DR_HOST_PATH_AUTO, DR_ACC_WIDE, DR_KERNEL_SMEM, 0);
        int32_t a[1000];
        for (int i = 0; i < 1000; ++i) a[i] = i;
        dreduce_result_t r;
        dreduce_timings_t tm;
        const dr_status_t s = dreduce_reduce_at(c, a, 1000, 0, DR_INT32, DR_SUM, &r);
        dreduce_timings(c, &tm);
        ++cases;
        if (s != DR_OK || r.value.i64 != 499500LL * nranks || tm.host_path != DR_HOST_PATH_GPU)
            FAIL("rank %d: AUTO with kernel smem: status %d, %lld, path %d", rank, s, (long long)r.value.i64,
                 tm.host_path);
        dreduce_destroy(c);
    }

    /* A bad value: every rank fails at create. */
    {
        dreduce_config_t cfg;
        dreduce_config_init(&cfg);
        cfg.host_path = (dr_host_path_t)9;
        dreduce_context_t *c = NULL;
        ++cases;
        if (dreduce_create(MPI_COMM_WORLD, &cfg, &c) != DR_ERR_USAGE || c) FAIL("cfg.host_path 9 was accepted");
    }

    for (int m = 0; m < 2; ++m) {
        dreduce_destroy(ref[m]);
        for (int p = 0; p < NPATHS; ++p) dreduce_destroy(gpu[m][p]);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("host paths: %d checks on rank 0, %d failures on all ranks\n", cases, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
