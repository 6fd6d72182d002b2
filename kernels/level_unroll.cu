/* Level 4, unrolled last warp: level 3 until 64 values remain, then the first warp finishes with the loop unrolled
 * and no __syncthreads().
 *
 * Fix over the tutorial: its last warp relied on implicit warp-synchronous execution through a non-volatile
 * pointer. Since Volta, lanes of a warp may run apart, and the compiler may keep values in registers; here each step
 * reads through a volatile pointer and the warp meets at __syncwarp() between its reads and its writes. Shared
 * memory: block * sizeof(accumulator) bytes (dynamic). */
#include "levels.cuh"

namespace {

template <class In, class Acc, class Op>
__global__ void unroll_kernel(const In *__restrict__ g_in, size_t n, Acc *__restrict__ g_out)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    Acc *s_data = reinterpret_cast<Acc *>(smem_raw);
    const unsigned tid = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * (2 * (size_t)blockDim.x) + tid;
    Acc v = i < n ? dr_widen<Acc>(g_in[i]) : dr_identity<Op, Acc>();
    if (i + blockDim.x < n) v = Op::combine(v, dr_widen<Acc>(g_in[i + blockDim.x]));
    s_data[tid] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (tid < stride) s_data[tid] = Op::combine(s_data[tid], s_data[tid + stride]);
        __syncthreads();
    }
    if (tid < 32) {
        volatile Acc *w = s_data;
#pragma unroll
        for (unsigned stride = 32; stride > 0; stride >>= 1) {
            if (stride >= blockDim.x) continue; /* a 32-thread block starts at 16 */
            const bool active = tid < stride;
            Acc t = active ? Op::combine((Acc)w[tid], (Acc)w[tid + stride]) : (Acc)w[tid];
            __syncwarp();
            if (active) w[tid] = t;
            __syncwarp();
        }
    }
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

struct Unroll {
    static const int kLoads = 2;
    static const bool kScratch = false;
    template <class In, class Acc, class Op>
    static void launch(size_t grid, int block, cudaStream_t s, const In *in, size_t n, Acc *out, Acc *)
    {
        unroll_kernel<In, Acc, Op><<<(unsigned)grid, block, block * sizeof(Acc), s>>>(in, n, out);
    }
};

} // namespace

DR_DEFINE_LEVEL(unroll, Unroll)
