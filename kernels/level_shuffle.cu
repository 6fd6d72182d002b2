/* Level 5, warp shuffle: two loads per thread as in level 3, then each warp reduces in registers with
 * __shfl_down_sync and the per-warp values meet in 32 words of shared memory (common.cuh's dr_block_reduce).
 *
 * Fix over the tutorial: it shuffled with the full mask inside `if (tid < nwarps)`, with most of the warp inactive
 * (undefined behaviour); here the whole first warp takes part and pads with the identity. Iterated over its own
 * partials this is the tutorial's "complete system". */
#include "levels.cuh"

namespace {

template <class In, class Acc, class Op>
__global__ void shuffle_kernel(const In *__restrict__ g_in, size_t n, Acc *__restrict__ g_out)
{
    const size_t i = (size_t)blockIdx.x * (2 * (size_t)blockDim.x) + threadIdx.x;
    Acc v = i < n ? dr_widen<Acc>(g_in[i]) : dr_identity<Op, Acc>();
    if (i + blockDim.x < n) v = Op::combine(v, dr_widen<Acc>(g_in[i + blockDim.x]));
    v = dr_block_reduce<Op>(v);
    if (threadIdx.x == 0) g_out[blockIdx.x] = v;
}

struct Shuffle {
    static const int kLoads = 2;
    static const bool kScratch = false;
    template <class In, class Acc, class Op>
    static void launch(size_t grid, int block, cudaStream_t s, const In *in, size_t n, Acc *out, Acc *)
    {
        shuffle_kernel<In, Acc, Op><<<(unsigned)grid, block, 0, s>>>(in, n, out);
    }
};

} // namespace

DR_DEFINE_LEVEL(shuffle, Shuffle)
