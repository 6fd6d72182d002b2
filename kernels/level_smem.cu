/* Level 2, shared memory: each thread loads one element (the identity past n) into a shared-memory tile, and the
 * interleaved tree runs there instead of in global memory: one global read per element, no global scratch.
 * Shared memory: block * sizeof(accumulator) bytes (dynamic). */
#include "levels.cuh"

namespace {

template <class In, class Acc, class Op>
__global__ void smem_kernel(const In *__restrict__ g_in, size_t n, Acc *__restrict__ g_out)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    Acc *s_data = reinterpret_cast<Acc *>(smem_raw);
    const unsigned tid = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * blockDim.x + tid;
    s_data[tid] = i < n ? dr_widen<Acc>(g_in[i]) : dr_identity<Op, Acc>();
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s_data[tid] = Op::combine(s_data[tid], s_data[tid + stride]);
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

struct Smem {
    static const int kLoads = 1;
    static const bool kScratch = false;
    template <class In, class Acc, class Op>
    static void launch(size_t grid, int block, cudaStream_t s, const In *in, size_t n, Acc *out, Acc *)
    {
        smem_kernel<In, Acc, Op><<<(unsigned)grid, block, block * sizeof(Acc), s>>>(in, n, out);
    }
};

} // namespace

DR_DEFINE_LEVEL(smem, Smem)
