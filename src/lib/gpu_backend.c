#include "gpu_backend.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "timing.h"

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
    /* Blocking streams: a call's work waits for what the caller queued on the legacy default stream before it. A
     * cudaMemcpy of the input from pageable memory returns before its last DMA lands on the device; on a
     * non-blocking stream the kernel could read the array before that (seen: int8 sums off by ~800 elements). */
    DR_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamDefault));
    DR_CUDA_CHECK(cudaStreamCreateWithFlags(&g->copy_stream, cudaStreamDefault));
    for (int i = 0; i <= DR_GPU_MAX_PASSES; ++i) {
        DR_CUDA_CHECK(cudaEventCreate(&g->events[i]));
        g->events_made = i + 1;
    }
    void *block = NULL;
    DR_CHECK(dr_gpu_alloc(&block, sizeof(uint64_t) + sizeof(dr_partial_t), "partial result"));
    g->d_result = (char *)block + sizeof(uint64_t); /* after its NaN count */
    g->partial_target = g->d_result;
    DR_CUDA_CHECK(cudaHostAlloc((void **)&g->done_host, sizeof *g->done_host, cudaHostAllocMapped));
    *g->done_host = 0;
    DR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&g->done_dev, g->done_host, 0));
    return DR_OK;
}

dr_status_t dr_gpu_use(const dr_gpu_t *g)
{
    DR_CUDA_CHECK(cudaSetDevice(g->device));
    return DR_OK;
}

dr_status_t dr_gpu_alloc(void **p, size_t bytes, const char *what)
{
    cudaError_t err = cudaMalloc(p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        *p = NULL;
        dr_error("cannot allocate %zu bytes (%.2f GiB) of device memory for the %s: %s", bytes,
                 (double)bytes / (1u << 30), what, cudaGetErrorString(err));
        return DR_ERR_RUNTIME;
    }
    return DR_OK;
}

/* The NaN count that precedes a partial target. */
static uint64_t *nan_target(void *partial_target) { return (uint64_t *)partial_target - 1; }

dr_status_t dr_gpu_set_shape(dr_gpu_t *g, dr_kernel_t kernel, int block, dr_dtype_t dtype, dr_op_t op,
                             dr_acc_kind_t acc, dr_nan_policy_t nan, const void *d_in, uint64_t n, uint64_t first,
                             int managed)
{
    const int omit = nan == DR_NAN_OMIT && dr_dtype_is_float(dtype);
    if (n > SIZE_MAX / 16) {
        dr_error("%llu elements do not fit in this process's address space", (unsigned long long)n);
        return DR_ERR_USAGE;
    }
    const size_t bulk_from = managed ? SIZE_MAX : 0; /* 0: the kernels' default */
    g->managed_in = managed;
    if (block == 0) block = dr_gpu_default_block_op(kernel, op, dtype, (size_t)n, g->device);
    dr_gpu_reduce_t *r = &g->req;
    const int same = g->planned && r->kernel == kernel && r->block == block && r->dtype == dtype && r->op == op &&
                     r->acc == acc && r->n == (size_t)n && r->bulk_from_bytes == bulk_from && r->nan_omit == omit;
    r->d_in = d_in;
    r->first_index = first;
    r->d_result = g->partial_target;
    r->d_nan_count = omit ? nan_target(g->partial_target) : NULL;
    g->nan_omit = omit;
    if (same) return DR_OK;
    g->planned = 0;
    memset(r, 0, sizeof *r);
    r->kernel = kernel;
    r->dtype = dtype;
    r->op = op;
    r->acc = acc;
    r->block = block;
    r->device = g->device;
    r->n = (size_t)n;
    r->bulk_from_bytes = bulk_from;
    r->d_in = d_in;
    r->first_index = first;
    r->d_result = g->partial_target;
    r->nan_omit = omit;
    r->d_nan_count = omit ? nan_target(g->partial_target) : NULL;
    cudaError_t perr = dr_gpu_plan(r, &g->plan);
    if (perr == cudaErrorInvalidValue) {
        (void)cudaGetLastError();
        dr_error("kernel %s cannot reduce %llu elements with %d-thread blocks (grid past 2^31 - 1 blocks or more "
                 "than %d passes): use %s or a larger %s",
                 dr_kernel_name(kernel), (unsigned long long)n, block, DR_GPU_MAX_PASSES,
                 DR_NAME("cfg.kernel DR_KERNEL_MULTIPASS", "--kernel multipass"), DR_NAME("cfg.block", "--block"));
        return DR_ERR_USAGE;
    }
    DR_CUDA_CHECK(perr);
    if (g->plan.work_bytes > g->work_cap) {
        if (g->d_work) {
            DR_CUDA_CHECK(cudaStreamSynchronize(g->stream)); /* the last kernel may still be exiting (reduce_once) */
            DR_CUDA_CHECK(cudaFree(g->d_work));
        }
        g->d_work = NULL;
        g->work_cap = 0;
        DR_CHECK(dr_gpu_alloc(&g->d_work, g->plan.work_bytes, "kernel workspace"));
        g->work_cap = g->plan.work_bytes;
    }
    /* A new plan finds the workspace zero-filled (launch.h): after an allocation, or after a reduction that did not
     * complete. Cheap next to a replan, so always. */
    DR_CUDA_CHECK(cudaMemsetAsync(g->d_work, 0, g->work_cap ? g->work_cap : 1, g->stream));
    r->d_work = g->d_work;
    g->planned = 1;
    g->poisoned = 0;
    return DR_OK;
}

void dr_gpu_set_partial_target(dr_gpu_t *g, void *d_ptr, void *h_ptr)
{
    g->partial_target = d_ptr ? d_ptr : g->d_result;
    g->partial_host = d_ptr ? h_ptr : NULL;
    g->req.d_result = g->partial_target;
    g->req.d_nan_count = g->nan_omit ? nan_target(g->partial_target) : NULL;
    g->poisoned = 0;
}

/* How long a host waits for a kernel's done word by polling before it synchronizes the stream instead: about the
 * time of a 1 GB reduction on an H200. Polling a mapped word sees the end of a small reduction ~1.4 us sooner than
 * cudaStreamSynchronize (docs/performance.md); past this, the stream's own wait (which honours the device's
 * scheduling flags) is as good, and a kernel that failed before signalling is reported by it. */
#define DR_GPU_POLL_MS 0.25

static uint32_t done_word(const dr_gpu_t *g) { return __atomic_load_n(g->done_host, __ATOMIC_ACQUIRE); }

/* Wait for the launch whose done_seq is g->done_seq. */
static dr_status_t wait_done(dr_gpu_t *g)
{
    const double until = dr_now_ms() + DR_GPU_POLL_MS;
    for (;;) {
        for (int i = 0; i < 16; ++i) {
            if (done_word(g) == g->done_seq) return DR_OK;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause(); /* a spin-wait hint: kinder to a sibling hyperthread */
#endif
        }
        if (dr_now_ms() >= until) break;
    }
    DR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    if (done_word(g) != g->done_seq) {
        dr_error("internal error: the reduction finished without signalling its result (done word %u, expected %u)",
                 (unsigned)done_word(g), (unsigned)g->done_seq);
        return DR_ERR_RUNTIME;
    }
    return DR_OK;
}

void dr_gpu_drain(dr_gpu_t *g)
{
    if (g->stream && cudaStreamSynchronize(g->stream) != cudaSuccess) (void)cudaGetLastError();
}

dr_status_t dr_gpu_reduce_once(dr_gpu_t *g, double *pass_ms)
{
    /* Poison the partial so a pass that writes nothing cannot pass for a result. A mapped partial is poisoned by
     * the host every time (the last reduction is complete, and the launch orders the store before the kernels). A
     * device partial only on a new plan or target: a memset on the stream costs a launch and delays the kernel
     * (about 7 us); a plan that wrote its partial once writes it every time. */
    const size_t size = dr_acc_kind_size(g->req.acc);
    if (g->partial_host) memset(g->partial_host, 0xA5, size);
    else if (!g->poisoned) DR_CUDA_CHECK(cudaMemsetAsync(g->req.d_result, 0xA5, size, g->stream));
    g->poisoned = 1;
    if (!pass_ms && g->partial_host && !g->managed_in && dr_gpu_signals_done(&g->req)) {
        /* Not for managed input: where the device lacks concurrent managed access, the caller's touching its buffer
         * while the kernel is still resident would fault. */
        g->req.d_done = g->done_dev;
        g->req.done_seq = ++g->done_seq; /* differs from the word's last value, wrapping or not */
        const cudaError_t err = dr_gpu_reduce(&g->req, &g->plan, g->stream, NULL);
        g->req.d_done = NULL; /* other launches of req (gpu_chunks.c) signal nothing */
        DR_CUDA_CHECK(err);
        return wait_done(g);
    }
    if (!pass_ms) { /* nobody reads the passes' times: no events, one synchronization */
        DR_CUDA_CHECK(dr_gpu_reduce(&g->req, &g->plan, g->stream, NULL));
        DR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
        return DR_OK;
    }
    DR_CUDA_CHECK(dr_gpu_reduce(&g->req, &g->plan, g->stream, g->events));
    DR_CUDA_CHECK(cudaEventSynchronize(g->events[g->plan.passes]));
    for (int i = 0; i < g->plan.passes; ++i) {
        float ms = 0;
        DR_CUDA_CHECK(cudaEventElapsedTime(&ms, g->events[i], g->events[i + 1]));
        pass_ms[i] = ms;
    }
    return DR_OK;
}

dr_status_t dr_gpu_read_partial(dr_gpu_t *g, dr_acc_kind_t acc, dr_partial_t *out, uint64_t *nan)
{
    memset(out, 0, sizeof *out);
    uint64_t count = 0;
    DR_CUDA_CHECK(cudaMemcpyAsync(out, g->partial_target, dr_acc_kind_size(acc), cudaMemcpyDefault, g->stream));
    if (nan)
        DR_CUDA_CHECK(cudaMemcpyAsync(&count, nan_target(g->partial_target), sizeof count, cudaMemcpyDefault, g->stream));
    DR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    if (nan) *nan = count;
    return DR_OK;
}

dr_status_t dr_gpu_write_partial(dr_gpu_t *g, dr_acc_kind_t acc, const dr_partial_t *v, uint64_t nan)
{
    DR_CUDA_CHECK(cudaMemcpyAsync(g->partial_target, v, dr_acc_kind_size(acc), cudaMemcpyDefault, g->stream));
    DR_CUDA_CHECK(cudaMemcpyAsync(nan_target(g->partial_target), &nan, sizeof nan, cudaMemcpyDefault, g->stream));
    DR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return DR_OK;
}

void dr_gpu_close(dr_gpu_t *g)
{
    dr_gpu_drain(g);
    if (g->d_work) cudaFree(g->d_work);
    if (g->d_result) cudaFree((char *)g->d_result - sizeof(uint64_t));
    if (g->done_host) cudaFreeHost(g->done_host);
    for (int i = 0; i < g->events_made; ++i) cudaEventDestroy(g->events[i]);
    if (g->copy_stream) cudaStreamDestroy(g->copy_stream);
    if (g->stream) cudaStreamDestroy(g->stream);
    memset(g, 0, sizeof *g);
}
