/* The C entry points of launch.h: pick the level, and generate data on the device. */
#include "common.cuh"
#include "internal.h"

/* An exact sum (acc DR_ACC_EXACT, kernels/exact.cu) takes multipass's sizes too, as this function does not see the
 * accumulator: a first guess, to be measured. Its register kernel's shared memory is per warp and its 64 registers
 * a thread allow 1024 threads an SM at every block size, so the block size should matter there mostly through the
 * cost of each block's end (fewer, larger blocks) against the balance of the last wave. Its bulk kernel (large
 * float64 inputs on a Hopper, blocks of 256 or 512) runs three blocks an SM at most (kernels/exact.cu). */
extern "C" int dr_gpu_default_block(dr_kernel_t kernel, size_t n, size_t element_bytes, int device)
{
    if (kernel != DR_KERNEL_MULTIPASS) return 256;
    int hopper = 0;
    if (element_bytes > 0 && n >= DR_GPU_BULK_FROM_BYTES / element_bytes) {
        if (dr_gpu_hopper_paths(device, &hopper) != cudaSuccess) (void)cudaGetLastError(); /* then: not Hopper */
        if (hopper) return 256;
    }
    return n < ((size_t)1 << 21) ? 256 : n < ((size_t)1 << 24) ? 512 : 1024;
}

/* argmin/argmax and stats (kernels/fused.cu): multipass only, like the exact sums. A stats row with the sum exact is
 * two launches: the float64 stats row (pass 0, writing the dr_stats_exact_t's stats) and the exact sum (pass 1,
 * writing its sum, and signalling the end), the input read twice. */
static int is_fused(dr_acc_kind_t acc) { return acc >= DR_ACC_ARG_I64 && acc <= DR_ACC_STATS_EXACT; }

/* The two launches of a stats row with the sum exact. The exact sum's workspace follows the stats kernel's (whose
 * partials are left behind, where the exact sum needs zeros): stats_work bytes in. */
static void stats_exact_parts(const dr_gpu_reduce_t *r, size_t stats_work, dr_gpu_reduce_t *stats,
                              dr_gpu_reduce_t *sum)
{
    *stats = *r;
    stats->acc = DR_ACC_STATS_F64;
    stats->d_done = NULL;
    *sum = *r;
    sum->acc = DR_ACC_EXACT;
    sum->op = DR_SUM;
    sum->d_result = r->d_result ? (char *)r->d_result + offsetof(dr_stats_exact_t, sum) : NULL;
    sum->d_work = r->d_work ? (char *)r->d_work + stats_work : NULL;
}

static size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

static cudaError_t plan_fused(const dr_gpu_reduce_t *r, dr_gpu_plan_t *plan)
{
    if (r->kernel != DR_KERNEL_MULTIPASS) return cudaErrorInvalidValue;
    if (r->acc != DR_ACC_STATS_EXACT) return dr_gpu_fused_plan(r, plan);
    dr_gpu_reduce_t stats, sum;
    stats_exact_parts(r, 0, &stats, &sum);
    dr_gpu_plan_t second;
    memset(&second, 0, sizeof second);
    cudaError_t err = dr_gpu_fused_plan(&stats, plan);
    if (err == cudaSuccess) err = dr_gpu_exact_plan(&sum, &second);
    if (err != cudaSuccess) return err;
    plan->passes = 2;
    plan->grid[1] = second.grid[0];
    plan->work_bytes = align256(plan->work_bytes) + second.work_bytes;
    return cudaSuccess;
}

static cudaError_t run_fused(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *plan, cudaStream_t s, cudaEvent_t *ev)
{
    if (r->acc != DR_ACC_STATS_EXACT) return dr_gpu_fused_run(r, plan, s, ev);
    dr_gpu_reduce_t stats, sum;
    dr_gpu_plan_t first, second;
    stats_exact_parts(r, 0, &stats, &sum);
    cudaError_t err = dr_gpu_fused_plan(&stats, &first); /* both cached: the plans dr_gpu_plan made */
    if (err == cudaSuccess) err = dr_gpu_exact_plan(&sum, &second);
    if (err != cudaSuccess) return err;
    stats_exact_parts(r, align256(first.work_bytes), &stats, &sum);
    if (err == cudaSuccess) err = dr_gpu_fused_run(&stats, &first, s, ev);
    if (err == cudaSuccess) err = dr_gpu_exact_run(&sum, &second, s, ev ? ev + 1 : NULL);
    return err;
}

extern "C" int dr_gpu_default_block_op(dr_kernel_t kernel, dr_op_t op, dr_dtype_t dtype, size_t n, int device)
{
    const size_t es = dtype == DR_INT8 || dtype == DR_UINT8                                             ? 1
                      : dtype == DR_INT16 || dtype == DR_UINT16 || dtype == DR_FLOAT16 || dtype == DR_BFLOAT16 ? 2
                      : dtype == DR_INT32 || dtype == DR_UINT32 || dtype == DR_FLOAT32                     ? 4
                                                                                                           : 8;
    const int fused = op == DR_STATS || op == DR_ARGMIN || op == DR_ARGMAX;
    if (kernel != DR_KERNEL_MULTIPASS || !fused) return dr_gpu_default_block(kernel, n, es, device);
    const int wide = op == DR_STATS ? dtype != DR_FLOAT64 : es == 2 || es == 4;
    return wide && n >= ((size_t)1 << 21) ? 1024 : 256;
}

extern "C" cudaError_t dr_gpu_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    if (r->block < 32 || r->block > 1024 || (r->block & (r->block - 1)) != 0) return cudaErrorInvalidValue;
    if (r->nan_omit && r->kernel != DR_KERNEL_MULTIPASS) return cudaErrorInvalidValue; /* the levels read values */
    if (is_fused(r->acc)) return plan_fused(r, plan);
    /* Exact sums: multipass only (the levels' accumulators are one register; the library refuses the others). */
    if (r->acc == DR_ACC_EXACT)
        return r->kernel == DR_KERNEL_MULTIPASS ? dr_gpu_exact_plan(r, plan) : cudaErrorInvalidValue;
    switch (r->kernel) {
    case DR_KERNEL_NEIGHBORED: return dr_gpu_neighbored_plan(r, plan);
    case DR_KERNEL_INTERLEAVED: return dr_gpu_interleaved_plan(r, plan);
    case DR_KERNEL_SMEM: return dr_gpu_smem_plan(r, plan);
    case DR_KERNEL_SMEM2: return dr_gpu_smem2_plan(r, plan);
    case DR_KERNEL_UNROLL: return dr_gpu_unroll_plan(r, plan);
    case DR_KERNEL_SHUFFLE: return dr_gpu_shuffle_plan(r, plan);
    case DR_KERNEL_MULTIPASS: return dr_gpu_multipass_plan(r, plan);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" int dr_gpu_signals_done(const dr_gpu_reduce_t *r) { return r->kernel == DR_KERNEL_MULTIPASS; }

extern "C" cudaError_t dr_gpu_reduce(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *plan, cudaStream_t s,
                                     cudaEvent_t *pass_events)
{
    if (r->acc == DR_ACC_EXACT)
        return r->kernel == DR_KERNEL_MULTIPASS ? dr_gpu_exact_run(r, plan, s, pass_events) : cudaErrorInvalidValue;
    if (is_fused(r->acc))
        return r->kernel == DR_KERNEL_MULTIPASS ? run_fused(r, plan, s, pass_events) : cudaErrorInvalidValue;
    switch (r->kernel) {
    case DR_KERNEL_NEIGHBORED: return dr_gpu_neighbored_run(r, plan, s, pass_events);
    case DR_KERNEL_INTERLEAVED: return dr_gpu_interleaved_run(r, plan, s, pass_events);
    case DR_KERNEL_SMEM: return dr_gpu_smem_run(r, plan, s, pass_events);
    case DR_KERNEL_SMEM2: return dr_gpu_smem2_run(r, plan, s, pass_events);
    case DR_KERNEL_UNROLL: return dr_gpu_unroll_run(r, plan, s, pass_events);
    case DR_KERNEL_SHUFFLE: return dr_gpu_shuffle_run(r, plan, s, pass_events);
    case DR_KERNEL_MULTIPASS: return dr_gpu_multipass_run(r, plan, s, pass_events);
    default: return cudaErrorInvalidValue;
    }
}

/* Blocks of `block` threads of `kernel` (with `smem` bytes of dynamic shared memory, at most `max_per_sm` per SM)
 * that fill `device` once. `cache` is the kernel's own table, [device][log2(block)]. The opt-in to more than 48 KiB
 * of dynamic shared memory is made here, once per device: a cudaDeviceReset between planning and launching would
 * undo it (and is not supported: it also frees every buffer of a plan). */
cudaError_t dr_gpu_fill_grid(const void *kernel, size_t smem, int max_per_sm, int device, int block,
                             int (*cache)[11], size_t *out)
{
    int lg = 0;
    while ((1 << lg) < block) ++lg;
    if (device < 0 || device >= 64 || lg > 10) return cudaErrorInvalidValue;
    if (cache[device][lg] == 0) {
        int sms = 0, per_sm = 0;
        cudaError_t err = dr_on_device(device, [&] {
            cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
            if (e == cudaSuccess && smem > 48 * 1024) { /* past the default limit: opt in, never lowering it (a
                                                          larger block's plan may have raised it) */
                cudaFuncAttributes attr;
                e = cudaFuncGetAttributes(&attr, kernel);
                if (e == cudaSuccess && (size_t)attr.maxDynamicSharedSizeBytes < smem)
                    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
            }
            if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem);
            return e;
        });
        if (err != cudaSuccess) return err;
        if (per_sm > max_per_sm) per_sm = max_per_sm;
        cache[device][lg] = sms * (per_sm > 0 ? per_sm : 1);
    }
    *out = (size_t)cache[device][lg];
    return cudaSuccess;
}
