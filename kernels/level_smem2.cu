/* Level 3, two loads per thread: each thread combines elements i and i + blockDim (each guarded against n) while
 * loading, so a block covers 2 * blockDim elements, half the blocks are launched, and no thread idles at the first
 * tree step. The tree itself is level 2's. Shared memory: block * sizeof(accumulator) bytes (dynamic). */
#include "levels.cuh"

namespace {

template <class In, class Acc, class Op>
__global__ void smem2_kernel(const In *__restrict__ g_in, size_t n, Acc *__restrict__ g_out)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    Acc *s_data = reinterpret_cast<Acc *>(smem_raw);
    const unsigned tid = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * (2 * (size_t)blockDim.x) + tid;
    Acc v = i < n ? dr_widen<Acc>(g_in[i]) : dr_identity<Op, Acc>();
    if (i + blockDim.x < n) v = Op::combine(v, dr_widen<Acc>(g_in[i + blockDim.x]));
    s_data[tid] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s_data[tid] = Op::combine(s_data[tid], s_data[tid + stride]);
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

struct Smem2 {
    static const int kLoads = 2;
    static const bool kScratch = false;
    template <class In, class Acc, class Op>
    static void launch(size_t grid, int block, cudaStream_t s, const In *in, size_t n, Acc *out, Acc *)
    {
        smem2_kernel<In, Acc, Op><<<(unsigned)grid, block, block * sizeof(Acc), s>>>(in, n, out);
    }
};

} // namespace

DR_DEFINE_LEVEL(smem2, Smem2)
