/* The production kernel: multi-pass warp-shuffle reduction, both passes in one launch.
 *
 * Pass 1 runs a grid sized to fill the device once (SM count x resident blocks per SM from the occupancy API, fewer
 * when n is small). Each thread walks the array with a grid-stride loop of 16-byte vector loads, four in flight,
 * accumulating in registers; elements before the first 16-byte boundary (a misaligned start) and after the last
 * whole vector are read one by one. The block then reduces with warp shuffles and one shared-memory exchange, and
 * writes one partial. Pass 2 reduces the partials: the last block to finish (counted with an atomic after a memory
 * release/acquire, the threadFenceReduction pattern) does it, in a fixed order whichever block that is, so results
 * are deterministic. One launch instead of two saves a launch gap (~5 us on an H200), which is most of the time
 * for small inputs. When one block suffices it writes the result directly; when a few blocks do (at most 8 blocks
 * of 2 rounds each) and the GPU is a Hopper, they run as one thread-block cluster and meet in distributed shared
 * memory instead (multipass_cluster_kernel).
 *
 * Over the teaching levels (kernels/level_*.cu) it fixes what costs bandwidth: one pass over the data with no
 * shared-memory tree per element, wide loads, enough bytes in flight per SM, and no launch per 2*block elements.
 * Workspace: the done-counter (zero before first use; the last block returns it to zero) and one partial per
 * block. */
#include <cooperative_groups.h>
#include <cuda/atomic>

#include "common.cuh"
#include "internal.h"

namespace {

constexpr int kUnroll = 4;            /* vector loads in flight per thread */
constexpr size_t kPartialsOffset = 256; /* workspace: the done-counter, then the partials */
constexpr size_t kClusterMax = 8;       /* blocks in one cluster (the portable maximum) */
constexpr size_t kClusterRounds = 2;    /* use a cluster while kClusterMax blocks need at most this many rounds */
namespace cg = cooperative_groups;

template <class In, class Acc, class Op>
__device__ __forceinline__ Acc combine_vector(Acc acc, const uint4 &v)
{
    constexpr int kVec = 16 / sizeof(In);
    In e[kVec];
    memcpy(e, &v, 16);
#pragma unroll
    for (int j = 0; j < kVec; ++j) acc = Op::combine(acc, dr_widen<Acc>(e[j]));
    return acc;
}

/* This thread's share of the grid-stride walk over g_in[0..n): head, 16-byte vectors (kUnroll in flight), tail. */
template <class In, class Acc, class Op> __device__ __forceinline__ Acc accumulate(const In *__restrict__ g_in, size_t n)
{
    constexpr size_t kVec = 16 / sizeof(In);
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    Acc acc = dr_identity<Op, Acc>();

    /* Head: elements before the first 16-byte boundary (fewer than kVec <= 32 <= nthreads). */
    size_t head = ((16 - ((uintptr_t)g_in & 15)) & 15) / sizeof(In);
    if (head > n) head = n;
    if (tid < head) acc = Op::combine(acc, dr_widen<Acc>(g_in[tid]));

    const uint4 *g_vec = reinterpret_cast<const uint4 *>(g_in + head);
    const size_t nvec = (n - head) / kVec;
    size_t i = tid;
    for (; i + (kUnroll - 1) * nthreads < nvec; i += kUnroll * nthreads) {
        uint4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(g_vec + i + u * nthreads);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc = combine_vector<In, Acc, Op>(acc, v[u]);
    }
    for (; i < nvec; i += nthreads) acc = combine_vector<In, Acc, Op>(acc, __ldg(g_vec + i));

    /* Tail: fewer than kVec elements after the last whole vector. */
    const size_t t = head + nvec * kVec + tid;
    if (t < n) acc = Op::combine(acc, dr_widen<Acc>(g_in[t]));
    return acc;
}

template <class In, class Acc, class Op>
__global__ void __launch_bounds__(1024)
    multipass_kernel(const In *__restrict__ g_in, size_t n, Acc *g_partials, unsigned int *g_done, Acc *g_result)
{
    Acc acc = accumulate<In, Acc, Op>(g_in, n);
    acc = dr_block_reduce<Op>(acc);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *g_result = acc;
        return;
    }

    /* Pass 2, in whichever block finishes last. The counter's release/acquire orders each block's partial before
     * its count and the counts before the last block's reads (no separate fences: each costs an L2 round trip). */
    __shared__ bool s_last;
    if (threadIdx.x == 0) {
        g_partials[blockIdx.x] = acc;
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> done(*g_done);
        s_last = done.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
        if (s_last) done.store(0, cuda::memory_order_relaxed); /* ready for the next launch */
    }
    __syncthreads();
    if (!s_last) return;
    const volatile Acc *partials = g_partials; /* written by other SMs: bypass this SM's L1 */
    Acc v = dr_identity<Op, Acc>();
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) v = Op::combine(v, (Acc)partials[b]);
    v = dr_block_reduce<Op>(v);
    if (threadIdx.x == 0) *g_result = v;
}

/* Small inputs on Hopper: the grid is one thread-block cluster (at most kClusterMax blocks). The blocks meet at the
 * cluster barrier and block 0 reads the others' partials straight from their shared memory (distributed shared
 * memory): no global partials, no atomic, no L2 round trips, which is most of the time of a small reduction. */
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(1024) multipass_cluster_kernel(const In *__restrict__ g_in, size_t n, Acc *g_result)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    Acc acc = accumulate<In, Acc, Op>(g_in, n);
    acc = dr_block_reduce<Op>(acc);
    __shared__ Acc s_partial;
    if (threadIdx.x == 0) s_partial = acc;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x < 32) { /* the whole first warp: full-mask shuffles */
        Acc v = threadIdx.x < cluster.num_blocks() ? *cluster.map_shared_rank(&s_partial, threadIdx.x)
                                                   : dr_identity<Op, Acc>();
        v = dr_warp_reduce<Op>(v);
        if (threadIdx.x == 0) *g_result = v;
    }
    cluster.sync(); /* every block's shared memory must outlive block 0's reads */
#else
    (void)g_in, (void)n, (void)g_result; /* never launched below sm_90: plan_multipass checks */
#endif
}

/* Blocks of `block` threads that fill `device` once with this kernel; cached per (kernel, device, block). */
template <class In, class Acc, class Op> cudaError_t resident_blocks(int device, int block, size_t *out)
{
    static int cached[64][11]; /* [device][log2(block)] */
    int lg = 0;
    while ((1 << lg) < block) ++lg;
    if (device < 0 || device >= 64 || lg > 10) return cudaErrorInvalidValue;
    if (cached[device][lg] == 0) {
        int sms = 0, per_sm = 0, current = 0;
        cudaError_t err = cudaGetDevice(&current);
        if (err == cudaSuccess && current != device) err = cudaSetDevice(device);
        if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        if (err == cudaSuccess)
            err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, multipass_kernel<In, Acc, Op>, block, 0);
        if (current != device) {
            cudaError_t back = cudaSetDevice(current);
            if (err == cudaSuccess) err = back;
        }
        if (err != cudaSuccess) return err;
        cached[device][lg] = sms * (per_sm > 0 ? per_sm : 1);
    }
    *out = (size_t)cached[device][lg];
    return cudaSuccess;
}

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }
uint64_t log2_ceil(uint64_t x)
{
    uint64_t lg = 0;
    while ((1ull << lg) < x) ++lg;
    return lg;
}

/* Whether `device` runs this row's cluster kernel: cluster launch support (compute capability 9.0+) and sm_90 code
 * in this binary. Cached per device. */
template <class In, class Acc, class Op> cudaError_t cluster_capable(int device, int *ok)
{
    static int cached[64]; /* 0 unknown, 1 yes, 2 no */
    if (device < 0 || device >= 64) return cudaErrorInvalidValue;
    if (cached[device] == 0) {
        int launch = 0;
        cudaFuncAttributes attr;
        cudaError_t err = cudaDeviceGetAttribute(&launch, cudaDevAttrClusterLaunch, device);
        if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, multipass_cluster_kernel<In, Acc, Op>);
        if (err != cudaSuccess) return err;
        cached[device] = launch && attr.binaryVersion >= 90 ? 1 : 2;
    }
    *ok = cached[device] == 1;
    return cudaSuccess;
}

template <class In, class Acc, class Op> cudaError_t plan_multipass(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)
{
    size_t resident = 0;
    cudaError_t err = resident_blocks<In, Acc, Op>(r->device, r->block, &resident);
    if (err != cudaSuccess) return err;
    /* Each thread should get at least one full round of kUnroll vectors before another block is worth it. */
    const size_t per_block = (size_t)r->block * kUnroll * (16 / sizeof(In));
    size_t grid = ceil_div(r->n, per_block);
    p->cluster = 0;
    if (grid > 1 && grid <= kClusterMax * kClusterRounds) {
        int cluster_ok = 0;
        if ((err = cluster_capable<In, Acc, Op>(r->device, &cluster_ok)) != cudaSuccess) return err;
        if (cluster_ok) {
            p->cluster = 1;
            if (grid > kClusterMax) grid = kClusterMax;
        }
    }
    if (grid > resident) grid = resident;
    if (grid < 1) grid = 1;
    p->passes = 1;
    p->grid[0] = grid;
    p->work_bytes = kPartialsOffset + align256(grid * sizeof(Acc));
    /* Per thread: head + vector elements + tail in sequence, then the block tree; pass 2 likewise over grid. */
    const uint64_t lg_block = log2_ceil((uint64_t)r->block);
    p->serial_depth = ceil_div(r->n, grid * (size_t)r->block) + 2 + lg_block + 1;
    if (grid > 1) p->serial_depth += ceil_div(grid, (size_t)r->block) + lg_block + 1;
    return cudaSuccess;
}

template <class In, class Acc, class Op>
cudaError_t run_multipass(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    char *work = static_cast<char *>(r->d_work);
    cudaError_t err = cudaSuccess;
    if (ev && (err = cudaEventRecord(ev[0], s)) != cudaSuccess) return err;
    const In *in = static_cast<const In *>(r->d_in);
    Acc *result = static_cast<Acc *>(r->d_result);
    if (p->cluster) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)p->grid[0];
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3((unsigned)p->grid[0]);
        cfg.blockDim = dim3((unsigned)r->block);
        cfg.stream = s;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        err = cudaLaunchKernelEx(&cfg, multipass_cluster_kernel<In, Acc, Op>, in, r->n, result);
    } else {
        multipass_kernel<In, Acc, Op><<<(unsigned)p->grid[0], r->block, 0, s>>>(
            in, r->n, reinterpret_cast<Acc *>(work + kPartialsOffset), reinterpret_cast<unsigned int *>(work), result);
    }
    if (err != cudaSuccess || (err = cudaGetLastError()) != cudaSuccess) return err;
    if (ev) err = cudaEventRecord(ev[1], s);
    return err;
}

struct plan_fn {
    const dr_gpu_reduce_t *r;
    dr_gpu_plan_t *p;
    template <class In, class Acc, class Op> cudaError_t call() const { return plan_multipass<In, Acc, Op>(r, p); }
};
struct run_fn {
    const dr_gpu_reduce_t *r;
    const dr_gpu_plan_t *p;
    cudaStream_t s;
    cudaEvent_t *ev;
    template <class In, class Acc, class Op> cudaError_t call() const { return run_multipass<In, Acc, Op>(r, p, s, ev); }
};

} // namespace

cudaError_t dr_gpu_multipass_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p) { return dr_dispatch(r, plan_fn{r, p}); }

cudaError_t dr_gpu_multipass_run(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    return dr_dispatch(r, run_fn{r, p, s, ev});
}
