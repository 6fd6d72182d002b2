/* The data generator on the host: a shard made by several threads, element by element from its global index
 * (datagen.h), the same bits the GPU's generator (kernels/datagen.cu) makes. */
#include "datagen.h"
#include "parallel.h"

typedef struct {
    const dr_gen_t *g;
    uint64_t first;
    void *in;
    size_t n;
} gen_job_t;

static void gen_worker(void *ctx, int i, int k)
{
    gen_job_t *job = ctx;
    unsigned long long b, e;
    dr_parallel_slice(job->n, i, k, &b, &e);
    const dr_gen_t *g = job->g;
    const uint64_t f = job->first;
    switch (g->dtype) {
    case DR_INT32: for (size_t j = b; j < e; ++j) ((int32_t *)job->in)[j] = dr_gen_int32(g, f + j); break;
    case DR_INT64: for (size_t j = b; j < e; ++j) ((int64_t *)job->in)[j] = dr_gen_int64(g, f + j); break;
    case DR_UINT32: for (size_t j = b; j < e; ++j) ((uint32_t *)job->in)[j] = dr_gen_uint32(g, f + j); break;
    case DR_UINT64: for (size_t j = b; j < e; ++j) ((uint64_t *)job->in)[j] = dr_gen_uint64(g, f + j); break;
    case DR_FLOAT32: for (size_t j = b; j < e; ++j) ((float *)job->in)[j] = dr_gen_float32(g, f + j); break;
    case DR_FLOAT64: for (size_t j = b; j < e; ++j) ((double *)job->in)[j] = dr_gen_float64(g, f + j); break;
    case DR_FLOAT16: for (size_t j = b; j < e; ++j) ((uint16_t *)job->in)[j] = dr_gen_float16(g, f + j); break;
    case DR_BFLOAT16: for (size_t j = b; j < e; ++j) ((uint16_t *)job->in)[j] = dr_gen_bfloat16(g, f + j); break;
    case DR_INT8: for (size_t j = b; j < e; ++j) ((int8_t *)job->in)[j] = dr_gen_int8(g, f + j); break;
    case DR_UINT8: for (size_t j = b; j < e; ++j) ((uint8_t *)job->in)[j] = dr_gen_uint8(g, f + j); break;
    case DR_INT16: for (size_t j = b; j < e; ++j) ((int16_t *)job->in)[j] = dr_gen_int16(g, f + j); break;
    case DR_UINT16: for (size_t j = b; j < e; ++j) ((uint16_t *)job->in)[j] = dr_gen_uint16(g, f + j); break;
    default: break;
    }
}

void dr_cpu_generate(const dr_gen_t *g, uint64_t first, void *in, size_t n, int nthreads)
{
    if ((size_t)nthreads > n / 65536 + 1) nthreads = (int)(n / 65536 + 1);
    gen_job_t job = {g, first, in, n};
    dr_parallel_run(nthreads, gen_worker, &job);
}
