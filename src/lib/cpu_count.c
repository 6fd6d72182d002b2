/* The CPU backend's counting passes (cpu_count.h): each thread counts a contiguous slice into counts of its own,
 * summed in thread order at the end (counts are integers: the order changes nothing). */
#include "cpu_count.h"

#include <stdlib.h>
#include <string.h>

#include "parallel.h"

/* Bytes of per-thread counts we allow before counting on fewer threads (a histogram of 2^24 bins is 128 MiB of
 * counts per thread). */
#define DR_COUNT_PRIVATE_BYTES ((size_t)256 << 20)

typedef struct {
    const dr_count_pass_t *p;
    const void *edges;
    const void *in;
    size_t n, words;
    uint64_t *priv; /* nthreads x words */
} count_job_t;

/* The key of element i of each type, and whether it is NaN (floats only). */
#define KEY_U8(x) ((uint64_t)(x))
#define KEY_I8(x) ((uint64_t)(uint8_t)((uint8_t)(x) ^ 0x80u))
#define KEY_U16(x) ((uint64_t)(x))
#define KEY_I16(x) ((uint64_t)(uint16_t)((uint16_t)(x) ^ 0x8000u))
#define KEY_U32(x) ((uint64_t)(x))
#define KEY_I32(x) ((uint64_t)((uint32_t)(x) ^ 0x80000000u))
#define KEY_U64(x) ((uint64_t)(x))
#define KEY_I64(x) ((uint64_t)(x) ^ 0x8000000000000000ull)

static void count_digits(const dr_count_pass_t *p, const void *in, size_t b, size_t e, uint64_t *c)
{
    const uint64_t nan_at = dr_count_words(p) - 1;
#define DIGIT_LOOP(T, KEY, IS_NAN)                                                                             \
    do {                                                                                                       \
        const T *x = (const T *)in;                                                                            \
        for (size_t i = b; i < e; ++i) {                                                                       \
            const uint64_t k = KEY(x[i]);                                                                      \
            if (IS_NAN) {                                                                                      \
                ++c[nan_at];                                                                                   \
                continue;                                                                                      \
            }                                                                                                  \
            const int g = dr_count_group(p, k);                                                                \
            if (g >= 0) ++c[((uint64_t)g << p->width) | dr_count_digit(p, k)];                                 \
        }                                                                                                      \
    } while (0)
    switch ((dr_dtype_t)p->dtype) {
    case DR_INT8: DIGIT_LOOP(int8_t, KEY_I8, 0); break;
    case DR_UINT8: DIGIT_LOOP(uint8_t, KEY_U8, 0); break;
    case DR_INT16: DIGIT_LOOP(int16_t, KEY_I16, 0); break;
    case DR_UINT16: DIGIT_LOOP(uint16_t, KEY_U16, 0); break;
    case DR_INT32: DIGIT_LOOP(int32_t, KEY_I32, 0); break;
    case DR_UINT32: DIGIT_LOOP(uint32_t, KEY_U32, 0); break;
    case DR_INT64: DIGIT_LOOP(int64_t, KEY_I64, 0); break;
    case DR_UINT64: DIGIT_LOOP(uint64_t, KEY_U64, 0); break;
    case DR_FLOAT16: DIGIT_LOOP(uint16_t, dr_key_f16, k == 0xffffu); break;
    case DR_BFLOAT16: DIGIT_LOOP(uint16_t, dr_key_bf16, k == 0xffffu); break;
    case DR_FLOAT32: DIGIT_LOOP(uint32_t, dr_key_f32, k == 0xffffffffu); break;
    case DR_FLOAT64: DIGIT_LOOP(uint64_t, dr_key_f64, k == ~0ull); break;
    default: break;
    }
#undef DIGIT_LOOP
}

/* One bin index to its count slot: the bins, then below, above and NaN. */
static inline uint64_t hist_slot(int64_t bin, uint32_t bins)
{
    return bin >= 0 ? (uint64_t)bin : (uint64_t)bins + (uint64_t)(-bin - 1);
}

static void count_hist(const dr_count_pass_t *p, const void *edges, const void *in, size_t b, size_t e, uint64_t *c)
{
    const dr_hist_plan_t *h = &p->hist;
    const float *ef = (const float *)edges;
    const double *ed = (const double *)edges;
#define HIST_LOOP(T, BIN)                                                                                      \
    do {                                                                                                       \
        const T *x = (const T *)in;                                                                            \
        for (size_t i = b; i < e; ++i) ++c[hist_slot(BIN, h->bins)];                                           \
    } while (0)
    switch ((dr_dtype_t)p->dtype) {
    case DR_INT8: HIST_LOOP(int8_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_UINT8: HIST_LOOP(uint8_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_INT16: HIST_LOOP(int16_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_UINT16: HIST_LOOP(uint16_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_INT32: HIST_LOOP(int32_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_UINT32: HIST_LOOP(uint32_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_INT64: HIST_LOOP(int64_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_UINT64: HIST_LOOP(uint64_t, dr_hist_bin_f64(h, ed, (double)x[i])); break;
    case DR_FLOAT16: HIST_LOOP(uint16_t, dr_hist_bin_f16(h, ef, dr_f16_to_f32(x[i]))); break;
    case DR_BFLOAT16: HIST_LOOP(uint16_t, dr_hist_bin_f32(h, ef, dr_bf16_to_f32(x[i]))); break;
    case DR_FLOAT32: HIST_LOOP(float, dr_hist_bin_f32(h, ef, x[i])); break;
    case DR_FLOAT64: HIST_LOOP(double, dr_hist_bin_f64(h, ed, x[i])); break;
    default: break;
    }
#undef HIST_LOOP
}

static void count_worker(void *arg, int i, int k)
{
    count_job_t *j = arg;
    unsigned long long b, e;
    dr_parallel_slice(j->n, i, k, &b, &e);
    uint64_t *c = j->priv + (size_t)i * j->words;
    if (j->p->kind == DR_COUNT_HIST) count_hist(j->p, j->edges, j->in, (size_t)b, (size_t)e, c);
    else count_digits(j->p, j->in, (size_t)b, (size_t)e, c);
}

dr_status_t dr_cpu_count_on(const dr_count_pass_t *p, const void *edges, const void *in, size_t n, int nthreads,
                            const dr_parallel_cpus_t *cpus, uint64_t *counts)
{
    const size_t words = (size_t)dr_count_words(p);
    if (n == 0) return DR_OK;
    if (nthreads < 1) nthreads = 1;
    /* Threads past one per 64 Ki elements only add the cost of their counts; past the memory cap, fewer threads. */
    const size_t by_n = n / 65536 + 1, by_mem = DR_COUNT_PRIVATE_BYTES / (words * sizeof(uint64_t)) + 1;
    if ((size_t)nthreads > by_n) nthreads = (int)by_n;
    if ((size_t)nthreads > by_mem) nthreads = (int)by_mem;
    uint64_t *priv = calloc((size_t)nthreads * words, sizeof *priv);
    if (!priv) {
        dr_error("cannot allocate %zu bytes of counts for %d threads", (size_t)nthreads * words * sizeof *priv,
                 nthreads);
        return DR_ERR_RUNTIME;
    }
    count_job_t j = {p, edges, in, n, words, priv};
    dr_parallel_run_on(nthreads, cpus, count_worker, &j);
    for (int t = 0; t < nthreads; ++t)
        for (size_t w = 0; w < words; ++w) counts[w] += priv[(size_t)t * words + w];
    free(priv);
    return DR_OK;
}
