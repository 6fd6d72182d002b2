/* Level 1, interleaved pairing in global memory: at step `stride` (halving from blockDim/2), threads t < stride add
 * element t + stride into element t. Active threads are contiguous, so whole warps idle instead of diverging.
 *
 * Fixes over the tutorial: the input is copied into a global scratch rather than reduced in place; no early return
 * before __syncthreads() (padding with the identity); reads are guarded against n. Needs one scratch accumulator per
 * thread; any power-of-two block. */
#include "levels.cuh"

namespace {

template <class In, class Acc, class Op>
__global__ void interleaved_kernel(const In *__restrict__ g_in, size_t n, Acc *__restrict__ g_out, Acc *g_scratch)
{
    const unsigned tid = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * blockDim.x + tid;
    Acc *block_data = g_scratch + (size_t)blockIdx.x * blockDim.x;
    block_data[tid] = i < n ? dr_widen<Acc>(g_in[i]) : dr_identity<Op, Acc>();
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) block_data[tid] = Op::combine(block_data[tid], block_data[tid + stride]);
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = block_data[0];
}

struct Interleaved {
    static const int kLoads = 1;
    static const bool kScratch = true;
    template <class In, class Acc, class Op>
    static void launch(size_t grid, int block, cudaStream_t s, const In *in, size_t n, Acc *out, Acc *scratch)
    {
        interleaved_kernel<In, Acc, Op><<<(unsigned)grid, block, 0, s>>>(in, n, out, scratch);
    }
};

} // namespace

DR_DEFINE_LEVEL(interleaved, Interleaved)
