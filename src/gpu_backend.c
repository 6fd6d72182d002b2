#include "gpu_backend.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

int dr_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver / no device: clear the sticky error */
        return 0;
    }
    return n;
}

dr_status_t dr_gpu_open(dr_gpu_t *g, int device)
{
    memset(g, 0, sizeof *g);
    g->device = device;
    struct cudaDeviceProp prop;
    DR_CUDA_CHECK(cudaSetDevice(device));
    DR_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    snprintf(g->name, sizeof g->name, "%.63s", prop.name);
    DR_CUDA_CHECK(cudaDeviceGetPCIBusId(g->pci_bus_id, (int)sizeof g->pci_bus_id, device));
    DR_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    for (int i = 0; i <= DR_GPU_MAX_PASSES; ++i) {
        DR_CUDA_CHECK(cudaEventCreate(&g->events[i]));
        g->events_made = i + 1;
    }
    return DR_OK;
}

/* cudaMalloc with a message that names the size when it fails (the most common failure at scale). */
static dr_status_t device_alloc(void **p, size_t bytes, const char *what)
{
    cudaError_t err = cudaMalloc(p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        dr_error("cannot allocate %zu bytes (%.2f GiB) of device memory for the %s: %s", bytes,
                 (double)bytes / (1u << 30), what, cudaGetErrorString(err));
        return DR_ERR_RUNTIME;
    }
    return DR_OK;
}

dr_status_t dr_gpu_prepare(dr_gpu_t *g, const dr_gen_t *gen, dr_kernel_t kernel, int block, dr_acc_kind_t acc,
                           int misalign, uint64_t first, uint64_t n, double *gen_ms)
{
    const size_t esize = dr_dtype_size(gen->dtype);
    dr_gpu_reduce_t *r = &g->req;
    memset(r, 0, sizeof *r);
    r->kernel = kernel;
    r->dtype = gen->dtype;
    r->op = gen->op;
    r->acc = acc;
    r->block = block;
    r->device = g->device;
    r->n = (size_t)n;
    cudaError_t perr = dr_gpu_plan(r, &g->plan);
    if (perr == cudaErrorInvalidValue) {
        dr_error("kernel %s cannot reduce %llu elements with %d-thread blocks (grid past 2^31 - 1 blocks or more "
                 "than %d passes): use --kernel multipass or a larger --block",
                 dr_kernel_name(kernel), (unsigned long long)n, block, DR_GPU_MAX_PASSES);
        return DR_ERR_USAGE;
    }
    DR_CUDA_CHECK(perr);
    if (n > (SIZE_MAX - 16 * esize) / esize) {
        dr_error("%llu elements of %zu bytes do not fit in this process's address space", (unsigned long long)n, esize);
        return DR_ERR_USAGE;
    }
    DR_CHECK(device_alloc(&g->d_in_base, (size_t)n * esize + (size_t)misalign * esize, "input shard"));
    DR_CHECK(device_alloc(&g->d_work, g->plan.work_bytes, "kernel workspace"));
    DR_CUDA_CHECK(cudaMemset(g->d_work, 0, g->plan.work_bytes ? g->plan.work_bytes : 1));
    DR_CHECK(device_alloc(&g->d_result, sizeof(dr_value_t), "partial result"));
    r->d_in = (char *)g->d_in_base + (size_t)misalign * esize;
    r->d_work = g->d_work;
    r->d_result = g->d_result;

    DR_CUDA_CHECK(cudaEventRecord(g->events[0], g->stream));
    DR_CUDA_CHECK(dr_gpu_generate(gen, first, (void *)r->d_in, (size_t)n, g->stream));
    DR_CUDA_CHECK(cudaEventRecord(g->events[1], g->stream));
    DR_CUDA_CHECK(cudaEventSynchronize(g->events[1]));
    float ms = 0;
    DR_CUDA_CHECK(cudaEventElapsedTime(&ms, g->events[0], g->events[1]));
    *gen_ms = ms;
    return DR_OK;
}

void dr_gpu_set_partial_target(dr_gpu_t *g, void *d_ptr) { g->req.d_result = d_ptr; }

dr_status_t dr_gpu_reduce_once(dr_gpu_t *g, double *pass_ms)
{
    /* Poison the partial so a pass that writes nothing cannot pass for a result. */
    DR_CUDA_CHECK(cudaMemsetAsync(g->req.d_result, 0xA5, dr_acc_kind_size(g->req.acc), g->stream));
    DR_CUDA_CHECK(dr_gpu_reduce(&g->req, &g->plan, g->stream, g->events));
    DR_CUDA_CHECK(cudaEventSynchronize(g->events[g->plan.passes]));
    for (int i = 0; i < g->plan.passes; ++i) {
        float ms = 0;
        DR_CUDA_CHECK(cudaEventElapsedTime(&ms, g->events[i], g->events[i + 1]));
        pass_ms[i] = ms;
    }
    return DR_OK;
}

dr_status_t dr_gpu_read_partial(dr_gpu_t *g, dr_value_t *out)
{
    memset(out, 0, sizeof *out);
    DR_CUDA_CHECK(cudaMemcpyAsync(out, g->req.d_result, dr_acc_kind_size(g->req.acc), cudaMemcpyDefault, g->stream));
    DR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return DR_OK;
}

void dr_gpu_close(dr_gpu_t *g)
{
    if (g->d_in_base) cudaFree(g->d_in_base);
    if (g->d_work) cudaFree(g->d_work);
    if (g->d_result) cudaFree(g->d_result);
    for (int i = 0; i < g->events_made; ++i) cudaEventDestroy(g->events[i]);
    if (g->stream) cudaStreamDestroy(g->stream);
    memset(g, 0, sizeof *g);
}
