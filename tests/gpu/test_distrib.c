/* Histograms and quantiles on the GPU against the CPU backend (label gpu). Every rank makes the same whole array;
 * the answer of a CPU context on MPI_COMM_SELF over the whole array is the reference (the CPU backend itself is
 * checked against NumPy by tests/python/test_distrib.py), and GPU contexts on MPI_COMM_WORLD reduce each rank's
 * part: device buffers (aligned and one element off), blocks of 128, 512 and 1024 threads, and pageable host
 * buffers in small chunks. Counts and edges must be equal, quantile values and order statistics the same bits, so
 * the check also holds the results to being the same at any rank count (run at np 1 and at np 2 sharing a GPU).
 * Data: every dtype x random, all equal, two values, sorted, skewed (nearly all in one bin), with NaN, with +-inf
 * (integers: with the type's least and greatest values) x sizes from 1 to 2^23 + 9 x bins 1 to 30000 (765 and 766:
 * the most with a copy of the block's counts per lane and the fewest with half as many, kernels/distrib.cu's
 * copies_of(); 30000: the kernel's global-memory counts) with the automatic and an explicit range. Quantiles also
 * under each DREDUCE_PILOT mode, with 7 q (the pilot's intervals in the kernel's parameters), and with q = 0, 1/2, 1
 * and with the median alone (up to 4 intervals: in registers, their unused places at the greatest key, which q = 1's
 * interval reaches); on random 32- and 64-bit data the pilot must hold (its brackets reach -inf and +inf for q = 0
 * and 1: an interval from key 0, below -inf's, counted nothing on the GPU and the pilot always missed). Last,
 * histograms over a range wider than the bin type holds (float32 and bfloat16: FLT_MAX; float16: 65504), where
 * x - first overflows it and the edges decide; and integer histograms in bins a power of two wide, with elements on
 * and beside every edge. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dreduce.h"
#include "library_test.h"

enum { P_RANDOM = 0, P_EQUAL, P_TWO, P_SORTED, P_SKEW, P_NAN, P_INF, P_COUNT };
static const char *const pattern_name[P_COUNT] = {"random", "equal", "two", "sorted", "skew", "nan", "inf"};

static uint16_t f32_to_f16_bits(float f) /* finite values of half range only (truncating is fine for test data) */
{
    uint32_t b;
    memcpy(&b, &f, 4);
    const uint32_t sign = (b >> 16) & 0x8000u;
    int e = (int)((b >> 23) & 0xff) - 127 + 15;
    if (e <= 0) return (uint16_t)sign;
    if (e >= 31) return (uint16_t)(sign | 0x7bffu);
    return (uint16_t)(sign | (uint32_t)e << 10 | ((b >> 13) & 0x3ffu));
}

/* Element i's value as a double, by pattern (floats: spread over signs, magnitudes, zeros and subnormals). */
static double value_of(int pattern, uint64_t i, uint64_t n, int is_float)
{
    const uint64_t r = next_u64();
    switch (pattern) {
    case P_EQUAL: return is_float ? -3.25 : 7;
    case P_TWO: return (r & 1) ? (is_float ? 1.5 : 3) : (is_float ? -0.0 : 9);
    case P_SORTED: return is_float ? (double)i * 0.37 - (double)n * 0.1 : (double)i;
    case P_SKEW: return (r % 100) ? (is_float ? 2.0 : 5) : (double)(r % 1000) - 500;
    default: break;
    }
    if (!is_float) return (double)(int64_t)(r % 2001) - 1000;
    const double u = (double)(r >> 11) / 9007199254740992.0;
    switch (r & 15) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return u * 1e-40;  /* subnormal in float32 */
    default: return (u - 0.5) * 2000.0;
    }
}

/* The whole array of dtype; integers also take random bits of their full width in P_RANDOM. */
static void *make_array(dr_dtype_t t, int pattern, uint64_t n, uint64_t seed)
{
    rng_state = seed;
    const size_t es = dreduce_dtype_size(t);
    unsigned char *a = malloc(n * es + 16);
    const int is_float = t == DR_FLOAT16 || t == DR_BFLOAT16 || t == DR_FLOAT32 || t == DR_FLOAT64;
    for (uint64_t i = 0; i < n; ++i) {
        double v = value_of(pattern, i, n, is_float);
        if (is_float && pattern == P_NAN && next_u64() % 97 == 0) v = NAN;
        if (is_float && pattern == P_INF && next_u64() % 89 == 0) v = (next_u64() & 1) ? INFINITY : -INFINITY;
        unsigned char *p = a + i * es;
        uint64_t bits = next_u64();
        switch (t) {
        case DR_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
        case DR_FLOAT64: memcpy(p, &v, 8); break;
        case DR_FLOAT16: {
            uint16_t h = isnan(v) ? 0x7e00u : isinf(v) ? (v > 0 ? 0x7c00u : 0xfc00u) : f32_to_f16_bits((float)v);
            memcpy(p, &h, 2);
            break;
        }
        case DR_BFLOAT16: {
            float f = (float)v;
            uint32_t b;
            memcpy(&b, &f, 4);
            uint16_t h = (uint16_t)(b >> 16);
            if (isnan(v)) h = 0x7fc0u;
            memcpy(p, &h, 2);
            break;
        }
        default: {
            int64_t x = (int64_t)v;
            if (pattern == P_RANDOM) memcpy(&x, &bits, 8); /* the type's full range */
            if (pattern == P_NAN && bits % 211 == 0) x = (bits & 2) ? INT64_MAX : INT64_MIN; /* extremes */
            if (pattern == P_INF && bits % 89 == 0) { /* the type's own extremes: its greatest and least keys */
                const int is_signed = t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64;
                const int64_t smax = (int64_t)((~0ull) >> (65 - 8 * es));
                x = (bits & 2) ? (is_signed ? smax : -1) : (is_signed ? -smax - 1 : 0);
            }
            memcpy(p, &x, es); /* little-endian: the low bytes */
            break;
        }
        }
    }
    return a;
}

static int same_double(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    if (a == 0 && b == 0) return 1; /* -0 and +0: either is NumPy's answer */
    return memcmp(&a, &b, sizeof a) == 0;
}

typedef struct {
    dr_status_t st;
    uint64_t *counts;
    double *edges;
    dreduce_dist_info_t info;
} hist_t;

#define NQ 7
static const double qs[NQ] = {0.0, 0.01, 0.25, 0.5, 1.0 / 3.0, 0.99, 1.0};
/* The other q lists: q = 0, 1/2, 1 (three intervals) and the median (one). */
#define NQ_SETS 3
static const double q_ends[3] = {0.0, 0.5, 1.0}, q_median[1] = {0.5};
static const double *const q_set[NQ_SETS] = {qs, q_ends, q_median};
static const size_t nq_set[NQ_SETS] = {NQ, 3, 1};

static void check_hist(const char *what, const char *label, const hist_t *ref, const hist_t *got, uint32_t bins,
                       int rank)
{
    ++cases;
    if (ref->st != got->st) {
        fprintf(stderr, "FAIL %s %s: status %d, reference %d\n", label, what, got->st, ref->st);
        ++failures;
        return;
    }
    if (ref->st != DR_OK || rank != 0) return;
    int bad = memcmp(ref->counts, got->counts, bins * sizeof(uint64_t)) != 0 ||
              memcmp(ref->edges, got->edges, (bins + 1) * sizeof(double)) != 0 ||
              ref->info.below != got->info.below || ref->info.above != got->info.above ||
              ref->info.nan_count != got->info.nan_count || ref->info.count != got->info.count;
    if (bad) {
        uint32_t i = 0;
        while (i < bins && ref->counts[i] == got->counts[i]) ++i;
        fprintf(stderr,
                "FAIL %s %s: bins differ (first at %u: %llu vs reference %llu; below %llu/%llu above %llu/%llu nan "
                "%llu/%llu)\n",
                label, what, i, i < bins ? (unsigned long long)got->counts[i] : 0ull,
                i < bins ? (unsigned long long)ref->counts[i] : 0ull, (unsigned long long)got->info.below,
                (unsigned long long)ref->info.below, (unsigned long long)got->info.above,
                (unsigned long long)ref->info.above, (unsigned long long)got->info.nan_count,
                (unsigned long long)ref->info.nan_count);
        ++failures;
    }
}

static void check_quant(const char *what, const char *label, size_t nq, const double *q, dr_status_t rs,
                        const double *rv, const dreduce_order_stat_t *ro, dr_status_t gs, const double *gv,
                        const dreduce_order_stat_t *go)
{
    ++cases;
    if (rs != gs) {
        fprintf(stderr, "FAIL %s %s: quantile status %d, reference %d (%zu q)\n", label, what, gs, rs, nq);
        ++failures;
        return;
    }
    if (rs != DR_OK) return;
    for (size_t i = 0; i < nq; ++i) {
        const int ok = same_double(rv[i], gv[i]) && ro[i].kind == go[i].kind &&
                       ro[i].lower_rank == go[i].lower_rank && ro[i].upper_rank == go[i].upper_rank &&
                       (ro[i].kind == DR_ACC_F64 ? same_double(ro[i].lower.f64, go[i].lower.f64) &&
                                                       same_double(ro[i].upper.f64, go[i].upper.f64)
                                                 : ro[i].lower.u64 == go[i].lower.u64 &&
                                                       ro[i].upper.u64 == go[i].upper.u64);
        if (!ok) {
            fprintf(stderr, "FAIL %s %s: q %g = %.17g, reference %.17g (%zu q)\n", label, what, q[i], gv[i], rv[i],
                    nq);
            ++failures;
            return;
        }
    }
}

/* The NaN elements among count elements of dtype t at p (0 for integers): a histogram's local_nan_count. */
static uint64_t nan_in(dr_dtype_t t, const unsigned char *p, uint64_t count)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < count; ++i) {
        if (t == DR_FLOAT32) {
            uint32_t b;
            memcpy(&b, p + i * 4, 4);
            k += (b & 0x7fffffffu) > 0x7f800000u;
        } else if (t == DR_FLOAT64) {
            uint64_t b;
            memcpy(&b, p + i * 8, 8);
            k += (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
        } else if (t == DR_FLOAT16 || t == DR_BFLOAT16) {
            uint16_t h;
            memcpy(&h, p + i * 2, 2);
            k += (h & 0x7fffu) > (t == DR_FLOAT16 ? 0x7c00u : 0x7f80u);
        }
    }
    return k;
}

/* The histogram of the whole array on the CPU context (the reference) against the GPU contexts' (blocks of
 * blocks[b] threads) of the rank's part, copied to device memory, twice each; counts and edges poisoned before
 * each. */
static void hist_on_gpus(dreduce_context_t *cpu, dreduce_context_t *const gpu[3], const int blocks[3],
                         const char *label, const unsigned char *whole, uint64_t n, dr_dtype_t t, uint32_t bins,
                         const double *range, int rank, int nranks)
{
    const size_t es = dreduce_dtype_size(t);
    uint64_t first, mine;
    dreduce_shard(n, DR_SCALING_STRONG, rank, nranks, &first, &mine);
    void *d_part;
    CUDA_OK(cudaMalloc(&d_part, mine * es + 16));
    CUDA_OK(cudaMemcpy(d_part, whole + first * es, mine * es, cudaMemcpyHostToDevice));
    hist_t ref = {0}, got = {0};
    ref.counts = malloc(bins * 8);
    ref.edges = malloc((bins + 1) * 8);
    got.counts = malloc(bins * 8);
    got.edges = malloc((bins + 1) * 8);
    ref.st = dreduce_histogram(cpu, whole, n, t, bins, range, ref.counts, ref.edges, &ref.info);
    for (int b = 0; b < 3; ++b) {
        /* twice: the second call takes the first's plan and device edges (src/lib/distrib.c, hist_key) */
        for (int again = 0; again < 2; ++again) {
            char what[48];
            snprintf(what, sizeof what, "device block %d%s", blocks[b], again ? ", the plan kept" : "");
            memset(got.counts, 0xa5, bins * 8); /* poison */
            memset(got.edges, 0xa5, (bins + 1) * 8);
            got.st = dreduce_histogram(gpu[b], d_part, mine, t, bins, range, got.counts, got.edges, &got.info);
            check_hist(what, label, &ref, &got, bins, rank);
            /* this rank's own NaN count (read back as one word where the counts are on the device) */
            const uint64_t want_nan = nan_in(t, whole + first * es, mine);
            ++cases;
            if (got.st == DR_OK && got.info.local_nan_count != want_nan) {
                fprintf(stderr, "FAIL %s %s: rank %d's local_nan_count %llu, its part has %llu\n", label, what, rank,
                        (unsigned long long)got.info.local_nan_count, (unsigned long long)want_nan);
                ++failures;
            }
        }
    }
    free(ref.counts);
    free(ref.edges);
    free(got.counts);
    free(got.edges);
    CUDA_OK(cudaFree(d_part));
}

/* v stored as an element of the integer type t, the type's nearest end where v lies outside it (uint64: v's bits). */
/* The test data's generator, the same on every rank: the next 53 random bits of the LCG whose state is *s. */
static uint64_t next_bits(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static void put_int(dr_dtype_t t, unsigned char *at, int64_t v)
{
#define PUT(T, LO, HI)                                                                                         \
    do {                                                                                                       \
        const T x_ = (T)(v < (int64_t)(LO) ? (int64_t)(LO) : v > (int64_t)(HI) ? (int64_t)(HI) : v);           \
        memcpy(at, &x_, sizeof x_);                                                                            \
    } while (0)
    switch (t) {
    case DR_INT8: PUT(int8_t, INT8_MIN, INT8_MAX); break;
    case DR_UINT8: PUT(uint8_t, 0, UINT8_MAX); break;
    case DR_INT16: PUT(int16_t, INT16_MIN, INT16_MAX); break;
    case DR_UINT16: PUT(uint16_t, 0, UINT16_MAX); break;
    case DR_INT32: PUT(int32_t, INT32_MIN, INT32_MAX); break;
    case DR_UINT32: PUT(uint32_t, 0, UINT32_MAX); break;
    case DR_UINT64: { /* a negative v as its two's complement: values near 2^64 */
        const uint64_t x = (uint64_t)v;
        memcpy(at, &x, sizeof x);
    } break;
    default: PUT(int64_t, INT64_MIN, INT64_MAX); break;
    }
#undef PUT
}

int main(int argc, char **argv)
{
    int rank, nranks;
    if (!library_test_start(&argc, &argv, &rank, &nranks)) return 77;
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    cfg.device = DR_DEVICE_CPU;
    dreduce_context_t *cpu, *gpu[3], *host;
    if (dreduce_create(MPI_COMM_SELF, &cfg, &cpu) != DR_OK) return 1;
    static const int blocks[3] = {128, 512, 1024};
    for (int b = 0; b < 3; ++b) {
        dreduce_config_init(&cfg);
        cfg.device = DR_DEVICE_GPU;
        cfg.share_gpus = 1;
        cfg.block = blocks[b];
        if (dreduce_create(MPI_COMM_WORLD, &cfg, &gpu[b]) != DR_OK) return 1;
    }
    dreduce_config_init(&cfg);
    cfg.device = DR_DEVICE_GPU;
    cfg.share_gpus = 1;
    cfg.chunk_bytes = 65536; /* host arrays in many chunks */
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &host) != DR_OK) return 1;

    static const uint64_t sizes[] = {1, 1000, 65537, 1048583, (1u << 23) + 9};
    static const uint32_t bin_list[] = {1, 10, 256, 765, 766, 4096, 30000};
    const int nsizes = sizeof sizes / sizeof sizes[0], nbins = sizeof bin_list / sizeof bin_list[0];
    int k = 0;
    for (int t = 0; t < DR_DTYPE_COUNT; ++t) {
        const size_t es = dreduce_dtype_size((dr_dtype_t)t);
        for (int p = 0; p < P_COUNT; ++p) {
            for (int si = 0; si < nsizes; ++si, ++k) {
                const uint64_t n = sizes[si];
                unsigned char *whole = make_array((dr_dtype_t)t, p, n, 1000u * (unsigned)t + 10u * (unsigned)p + si);
                uint64_t first, mine;
                dreduce_shard(n, DR_SCALING_STRONG, rank, nranks, &first, &mine);
                const unsigned char *part = whole + first * es;
                void *d_buf;
                CUDA_OK(cudaMalloc(&d_buf, mine * es + 16));
                const size_t off = (k & 1) ? es : 0; /* one element off 16-byte alignment, every other case */
                CUDA_OK(cudaMemcpy((char *)d_buf + off, part, mine * es, cudaMemcpyHostToDevice));
                const void *d_part = (const char *)d_buf + off;
                const uint32_t bins = bin_list[k % nbins];
                /* the automatic range; one whose ends are not whole numbers; for integers one past int32's ends on
                 * both sides (every narrower integer inside it, and bins far wider than one) */
                static const double ranges[2][2] = {{-100.0, 100.5}, {-2.5e9, 3.5e9}};
                const int is_float = t == DR_FLOAT16 || t == DR_BFLOAT16 || t == DR_FLOAT32 || t == DR_FLOAT64;
                const int rk = (k / nbins) % 3;
                const double *rg = rk == 0 ? NULL : ranges[rk == 2 && !is_float];
                char label[160];
                snprintf(label, sizeof label, "%s %s n=%llu bins=%u %s np=%d", dreduce_dtype_name((dr_dtype_t)t),
                         pattern_name[p], (unsigned long long)n, bins,
                         !rg ? "auto" : rg[0] < -1e9 ? "range -2.5e9,3.5e9" : "range -100,100.5", nranks);

                hist_t ref = {0}, got = {0};
                ref.counts = malloc(bins * 8);
                ref.edges = malloc((bins + 1) * 8);
                got.counts = malloc(bins * 8);
                got.edges = malloc((bins + 1) * 8);
                ref.st = dreduce_histogram(cpu, whole, n, (dr_dtype_t)t, bins, rg, ref.counts, ref.edges, &ref.info);
                double rv[NQ_SETS][NQ], gv[NQ];
                dreduce_order_stat_t ro[NQ_SETS][NQ], go[NQ];
                dr_status_t rqs[NQ_SETS];
                /* The quantile pilot (src/lib/distrib.c, "The pilot"): the reference without it, each block size
                 * with another mode (always: the sample's brackets and the RANGE kernel; miss: its fallback; auto:
                 * the pilot from 2^20 elements a part on) */
                static const char *const pilot_mode[3] = {"always", "miss", "auto"};
                setenv("DREDUCE_PILOT", "off", 1);
                for (int qi = 0; qi < NQ_SETS; ++qi)
                    rqs[qi] = dreduce_quantile(cpu, whole, n, (dr_dtype_t)t, nq_set[qi], q_set[qi], rv[qi], ro[qi],
                                               NULL);
                for (int b = 0; b < 3; ++b) {
                    char what[48];
                    snprintf(what, sizeof what, "device block %d, pilot %s", blocks[b], pilot_mode[b]);
                    setenv("DREDUCE_PILOT", pilot_mode[b], 1);
                    memset(got.counts, 0xa5, bins * 8); /* poison */
                    got.st = dreduce_histogram(gpu[b], d_part, mine, (dr_dtype_t)t, bins, rg, got.counts, got.edges,
                                               &got.info);
                    check_hist(what, label, &ref, &got, bins, rank);
                    for (int qi = 0; qi < NQ_SETS; ++qi) {
                        memset(gv, 0xa5, sizeof gv);
                        dreduce_dist_info_t qinfo;
                        const dr_status_t gqs = dreduce_quantile(gpu[b], d_part, mine, (dr_dtype_t)t, nq_set[qi],
                                                                 q_set[qi], gv, go, &qinfo);
                        check_quant(what, label, nq_set[qi], q_set[qi], rqs[qi], rv[qi], ro[qi], gqs, gv, go);
                        /* Random data of 32 and 64 bits (no ties to speak of, no NaN) keeps every order statistic
                         * in the sample's brackets, q = 0 and 1 too: the pilot holds, or its counts are wrong. */
                        if (b == 0 && p == P_RANDOM && dreduce_dtype_size((dr_dtype_t)t) >= 4 && gqs == DR_OK) {
                            ++cases;
                            if (qinfo.pilot != 1) {
                                fprintf(stderr, "FAIL %s %s: %zu q: the pilot missed (pilot %d) on random data\n",
                                        label, what, nq_set[qi], qinfo.pilot);
                                ++failures;
                            }
                        }
                    }
                }
                unsetenv("DREDUCE_PILOT");
                memset(got.counts, 0xa5, bins * 8);
                got.st = dreduce_histogram(host, part, mine, (dr_dtype_t)t, bins, rg, got.counts, got.edges, &got.info);
                check_hist("pageable host, 64 KiB chunks", label, &ref, &got, bins, rank);
                const dr_status_t hqs = dreduce_quantile(host, part, mine, (dr_dtype_t)t, NQ, qs, gv, go, NULL);
                check_quant("pageable host, 64 KiB chunks", label, NQ, qs, rqs[0], rv[0], ro[0], hqs, gv, go);
                free(ref.counts);
                free(ref.edges);
                free(got.counts);
                free(got.edges);
                CUDA_OK(cudaFree(d_buf));
                free(whole);
            }
        }
    }
    /* A range wider than the bin type holds (float32 and bfloat16: wider than FLT_MAX; float16: wider than 65504):
     * x - first overflows for the elements in its upper part, which dr_hist_bin_* bins by the edges
     * (dr_hist_search); float16 with 10 bins through the fast estimate, with 300 and 4000 through NumPy's own (over
     * (-32753, 32768), 65521 wide, the top elements alone overflow, and NumPy's estimate of the others, off the
     * edges' bin at 4000 bins, decides theirs) */
    static const struct {
        dr_dtype_t t;
        double range[2];
        uint32_t bins[3];
    } wide_cases[] = {{DR_FLOAT32, {-3e38, 3e38}, {3, 10, 4096}},
                      {DR_BFLOAT16, {-3e38, 3e38}, {3, 10, 4096}},
                      {DR_FLOAT16, {-40000.0, 40000.0}, {3, 10, 300}},
                      {DR_FLOAT16, {-32753.0, 32768.0}, {4000, 10, 300}}};
    for (size_t ci = 0; ci < sizeof wide_cases / sizeof *wide_cases; ++ci) {
        const dr_dtype_t t = wide_cases[ci].t;
        const size_t es = dreduce_dtype_size(t);
        const uint64_t n = 65537;
        const double *wide = wide_cases[ci].range;
        const uint32_t *wide_bins = wide_cases[ci].bins;
        unsigned char *whole = malloc(n * es);
        uint64_t s = 0x9e3779b97f4a7c15ull;
        for (uint64_t i = 0; i < n; ++i) { /* the same on every rank: uniform over 1.1 times the range */
            const float v = (float)(((double)next_bits(&s) / 9007199254740992.0 - 0.5) * 2.2 * wide[1]);
            uint32_t bits;
            memcpy(&bits, &v, 4);
            const uint16_t top = (uint16_t)(bits >> 16), half = f32_to_f16_bits(v);
            if (t == DR_FLOAT32) memcpy(whole + i * 4, &bits, 4);
            else memcpy(whole + i * 2, t == DR_BFLOAT16 ? &top : &half, 2);
        }
        for (int bi = 0; bi < 3; ++bi) {
            const uint32_t bins = wide_bins[bi];
            char label[96];
            snprintf(label, sizeof label, "%s wide n=%llu bins=%u range %g,%g np=%d", dreduce_dtype_name(t),
                     (unsigned long long)n, bins, wide[0], wide[1], nranks);
            hist_on_gpus(cpu, gpu, blocks, label, whole, n, t, bins, wide, rank, nranks);
        }
        free(whole);
    }
    /* Integer histograms whose bins are a power of two wide from a whole first edge (the estimate is the element's
     * exact place: src/lib/distrib.c, hist_place_exact) and a neighbour whose edges are not the exact places
     * (int16 over [0, 100) in 70 bins): a third of the elements on an edge, a third one off it, a third uniform
     * over the range and a bin beyond, one in 1000 the type's least or greatest value (uint64: 2^63 or 2^63 - 1,
     * and the negative values near its ranges' ends as values near 2^64), in the vectors of the kernel's steps
     * (2^20 + 7 elements). The kernels take most of them by the integer offset from the first edge (hist_plan's
     * place_shift); not uint64 below a negative first edge, nor ends at 2^53. */
    static const struct {
        dr_dtype_t t;
        double range[2];
        uint32_t bins;
    } place_cases[] = {{DR_UINT8, {0, 256}, 256},
                       {DR_INT8, {-128, 128}, 64},
                       {DR_INT16, {-32768, 32768}, 65536},
                       {DR_UINT16, {0, 4096}, 4096},
                       {DR_INT32, {0, 1048576}, 4096},
                       {DR_INT32, {-5, 3}, 16},
                       {DR_UINT32, {0, 4294967296.0}, 256},
                       {DR_INT64, {-4503599627370496.0, 4503599627370496.0}, 1024}, /* +-2^52 */
                       {DR_UINT64, {0, 1024}, 1024},
                       {DR_UINT64, {-8, 8}, 16}, /* exact places, not by the integer offset (it would wrap) */
                       {DR_INT64, {9007199253692416.0, 9007199254740992.0}, 1024}, /* [2^53 - 2^20, 2^53] */
                       {DR_INT16, {0, 100}, 70}};
    for (size_t ci = 0; ci < sizeof place_cases / sizeof *place_cases; ++ci) {
        const dr_dtype_t t = place_cases[ci].t;
        const size_t es = dreduce_dtype_size(t);
        const uint64_t n = (1u << 20) + 7;
        const double *rg = place_cases[ci].range;
        const uint32_t bins = place_cases[ci].bins;
        const double w = (rg[1] - rg[0]) / bins;
        unsigned char *whole = malloc(n * es);
        uint64_t s = 0x2545f4914f6cdd1dull + ci;
        for (uint64_t i = 0; i < n; ++i) { /* the same on every rank */
            const uint64_t r = next_bits(&s);
            const double u = (double)(r >> 2) / 2251799813685248.0; /* [0, 1) */
            const double edge = floor(rg[0] + floor(u * (bins + 1)) * w), beside = r & 1 ? 1 : -1;
            const double v = i % 1000 == 0 ? (r & 1 ? 9.3e18 : -9.3e18) /* the type's ends */
                             : i % 3 == 2  ? floor(rg[0] - w + u * (rg[1] - rg[0] + 2 * w))
                                           : edge + (i % 3 == 1 ? beside : 0);
            put_int(t, whole + i * es, v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v);
        }
        char label[112];
        snprintf(label, sizeof label, "%s places n=%llu bins=%u range %.17g,%.17g np=%d", dreduce_dtype_name(t),
                 (unsigned long long)n, bins, rg[0], rg[1], nranks);
        hist_on_gpus(cpu, gpu, blocks, label, whole, n, t, bins, rg, rank, nranks);
        free(whole);
    }
    /* Float elements on the edges and one step of their type beside them (kernels/distrib.cu's hist_near_edge: the
     * fast estimate leaves them to the edges), a quarter each on, above and below an edge, a quarter uniform over
     * the range and a little past it, one in 997 NaN or +-inf. The edges are the CPU context's (NumPy's linspace in
     * the bin type); 0.3f in 10 bins over [0, 1) has an estimate of exactly 3.0, 30000 bins count in global memory,
     * bfloat16's edges (float32) lie between its values. */
    static const struct {
        dr_dtype_t t;
        double range[2];
        uint32_t bins;
    } edge_cases[] = {{DR_FLOAT32, {0, 1}, 10},         {DR_FLOAT32, {-100, 100.5}, 4096},
                      {DR_FLOAT32, {0.1, 0.7}, 30000},  {DR_FLOAT64, {0, 1}, 10},
                      {DR_FLOAT64, {-3.3, 7.7}, 765},   {DR_FLOAT16, {0, 1}, 10},
                      {DR_FLOAT16, {-3.3, 7.7}, 765},   {DR_BFLOAT16, {0, 1}, 10},
                      {DR_BFLOAT16, {-100, 100.5}, 4096}};
    for (size_t ci = 0; ci < sizeof edge_cases / sizeof *edge_cases; ++ci) {
        const dr_dtype_t t = edge_cases[ci].t;
        const size_t es = dreduce_dtype_size(t);
        const double *rg = edge_cases[ci].range;
        const uint32_t bins = edge_cases[ci].bins;
        double *edges = malloc((bins + 1) * sizeof(double));
        uint64_t *counts = malloc(bins * sizeof(uint64_t));
        const float half = 0.5f;
        const uint16_t half16 = t == DR_FLOAT16 ? 0x3800u : 0x3f00u; /* 0.5 in float16, in bfloat16 */
        const void *probe = t == DR_FLOAT32 ? (const void *)&half : t == DR_FLOAT64 ? (const void *)&rg[0] : &half16;
        if (dreduce_histogram(cpu, probe, 1, t, bins, rg, counts, edges, NULL) != DR_OK) {
            fprintf(stderr, "FAIL %s edges of %u bins over %g,%g: no reference\n", dreduce_dtype_name(t), bins, rg[0],
                    rg[1]);
            ++failures;
            free(edges);
            free(counts);
            continue;
        }
        const uint64_t n = (1u << 20) + 7;
        unsigned char *whole = malloc(n * es);
        uint64_t s = 0x94d049bb133111ebull + ci;
        for (uint64_t i = 0; i < n; ++i) { /* the same on every rank */
            const uint64_t r = next_bits(&s);
            const double u = (double)(r >> 2) / 2251799813685248.0; /* [0, 1) */
            const int how = (int)(i & 3);                           /* 0 on, 1 above, 2 below, 3 uniform */
            double v = how == 3 ? rg[0] + (u * 1.1 - 0.05) * (rg[1] - rg[0]) : edges[(uint64_t)(u * (bins + 1))];
            if (i % 997 == 0) v = r & 1 ? NAN : r & 2 ? INFINITY : -INFINITY;
            const int step = how == 1 ? 1 : how == 2 ? -1 : 0; /* toward +inf or -inf by one value of the type */
            unsigned char *at = whole + i * es;
            if (t == DR_FLOAT32) {
                float f = (float)v;
                if (step) f = nextafterf(f, step > 0 ? INFINITY : -INFINITY);
                memcpy(at, &f, 4);
            } else if (t == DR_FLOAT64) {
                if (step) v = nextafter(v, step > 0 ? INFINITY : -INFINITY);
                memcpy(at, &v, 8);
            } else {
                uint16_t h;
                if (isnan(v)) h = t == DR_FLOAT16 ? 0x7e00u : 0x7fc0u;
                else if (isinf(v)) h = (uint16_t)((v > 0 ? 0x0000u : 0x8000u) | (t == DR_FLOAT16 ? 0x7c00u : 0x7f80u));
                else if (t == DR_FLOAT16) h = f32_to_f16_bits((float)v); /* float16's edges are float16 values */
                else {                                                   /* bfloat16: the float32 edge truncated */
                    const float f = (float)v;
                    uint32_t b;
                    memcpy(&b, &f, 4);
                    h = (uint16_t)(b >> 16);
                }
                /* one value up or down: the magnitude's bits, +-1 by the sign (-0.0 down is the least subnormal) */
                if (step && !isnan(v) && !isinf(v)) {
                    const int neg = h >> 15, mag = h & 0x7fff;
                    if (mag == 0) h = step > 0 ? 0x0001u : 0x8001u;
                    else h = (uint16_t)(h + ((step > 0) != neg ? 1 : -1));
                }
                memcpy(at, &h, 2);
            }
        }
        char label[112];
        snprintf(label, sizeof label, "%s on edges n=%llu bins=%u range %g,%g np=%d", dreduce_dtype_name(t),
                 (unsigned long long)n, bins, rg[0], rg[1], nranks);
        hist_on_gpus(cpu, gpu, blocks, label, whole, n, t, bins, rg, rank, nranks);
        free(whole);
        free(edges);
        free(counts);
    }
    int all_fail = 0;
    MPI_Allreduce(&failures, &all_fail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d cases, %d failures (np %d)\n", cases, all_fail, nranks);
    for (int b = 0; b < 3; ++b) dreduce_destroy(gpu[b]);
    dreduce_destroy(host);
    dreduce_destroy(cpu);
    MPI_Finalize();
    return all_fail ? 1 : 0;
}
