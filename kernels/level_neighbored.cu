/* Level 0, neighbored pairing in global memory: at step `stride`, thread t (t a multiple of 2*stride) adds element
 * t + stride into element t. Active threads are scattered through every warp, so warps diverge at every step.
 *
 * Fixes over the tutorial: it reduced the input array in place (we copy each block's slice into a global scratch
 * first, so the input is never modified); it returned early before __syncthreads() (we pad past n with the identity
 * instead, so every thread reaches every barrier); it read past n (guarded). Needs one scratch accumulator per
 * thread; any power-of-two block. */
#include "levels.cuh"

namespace {

template <class In, class Acc, class Op>
__global__ void neighbored_kernel(const In *__restrict__ g_in, size_t n, Acc *__restrict__ g_out, Acc *g_scratch)
{
    const unsigned tid = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * blockDim.x + tid;
    Acc *block_data = g_scratch + (size_t)blockIdx.x * blockDim.x;
    block_data[tid] = i < n ? dr_widen<Acc>(g_in[i]) : dr_identity<Op, Acc>();
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) block_data[tid] = Op::combine(block_data[tid], block_data[tid + stride]);
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = block_data[0];
}

struct Neighbored {
    static const int kLoads = 1;
    static const bool kScratch = true;
    template <class In, class Acc, class Op>
    static void launch(size_t grid, int block, cudaStream_t s, const In *in, size_t n, Acc *out, Acc *scratch)
    {
        neighbored_kernel<In, Acc, Op><<<(unsigned)grid, block, 0, s>>>(in, n, out, scratch);
    }
};

} // namespace

DR_DEFINE_LEVEL(neighbored, Neighbored)
