/* Device-side pieces every kernel level shares: the storage types for 16-bit floats, widening
 * to the accumulator, the combine functor, warp and block reductions, and the table-driven dispatch. The combine
 * rules themselves come from src/common/accum.h, which the host uses too. */
#ifndef DREDUCE_KERNELS_COMMON_CUH
#define DREDUCE_KERNELS_COMMON_CUH

#include <cuda/atomic>
#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>

#include "accum.h"
#include "table.h"
#include "launch.h"

/* Storage types for the 16-bit floats: just the bits; widened with accum.h's exact conversions. */
struct dr_f16_t {
    uint16_t bits;
};
struct dr_bf16_t {
    uint16_t bits;
};

/* Input element types by table token. */
typedef int32_t dr_in_INT32;
typedef int64_t dr_in_INT64;
typedef uint32_t dr_in_UINT32;
typedef uint64_t dr_in_UINT64;
typedef float dr_in_FLOAT32;
typedef double dr_in_FLOAT64;
typedef dr_f16_t dr_in_FLOAT16;
typedef dr_bf16_t dr_in_BFLOAT16;
typedef int8_t dr_in_INT8; /* 16 per 16-byte vector load */
typedef uint8_t dr_in_UINT8;
typedef int16_t dr_in_INT16; /* 8 per vector load */
typedef uint16_t dr_in_UINT16;

/* Accumulator types by table token. */
typedef int32_t dr_acc_I32;
typedef uint32_t dr_acc_U32;
typedef int64_t dr_acc_I64;
typedef uint64_t dr_acc_U64;
typedef float dr_acc_F32;
typedef double dr_acc_F64;

template <class Acc> struct dr_acc_kind_of;
template <> struct dr_acc_kind_of<int32_t> { static const dr_acc_kind_t value = DR_ACC_I32; };
template <> struct dr_acc_kind_of<uint32_t> { static const dr_acc_kind_t value = DR_ACC_U32; };
template <> struct dr_acc_kind_of<int64_t> { static const dr_acc_kind_t value = DR_ACC_I64; };
template <> struct dr_acc_kind_of<uint64_t> { static const dr_acc_kind_t value = DR_ACC_U64; };
template <> struct dr_acc_kind_of<float> { static const dr_acc_kind_t value = DR_ACC_F32; };
template <> struct dr_acc_kind_of<double> { static const dr_acc_kind_t value = DR_ACC_F64; };

/* Where g_in's 16-byte vectors are: `head` elements before the first 16-byte boundary, then `nvec` whole vectors
 * (multipass's walks and the exact sum's; their bulk copies take whole chunks of the vectors). */
template <class In> struct dr_vector_split {
    size_t head, nvec;
    __device__ __forceinline__ dr_vector_split(const In *g_in, size_t n)
    {
        head = ((16 - ((uintptr_t)g_in & 15)) & 15) / sizeof(In);
        if (head > n) head = n;
        nvec = (n - head) / (16 / sizeof(In));
    }
};

/* Widen an input element to the accumulator type. */
template <class Acc, class In> __device__ __forceinline__ Acc dr_widen(In x) { return (Acc)x; }
template <class Acc> __device__ __forceinline__ Acc dr_widen(dr_f16_t x) { return (Acc)dr_f16_to_f32(x.bits); }
template <class Acc> __device__ __forceinline__ Acc dr_widen(dr_bf16_t x) { return (Acc)dr_bf16_to_f32(x.bits); }

/* Op tags. Op::combine(a, b) forwards to accum.h's rule for the accumulator kind. */
#define DR_OP_TAG(OP, op)                                                            \
    struct dr_op_##OP {                                                              \
        static const dr_op_t id = DR_##OP;                                           \
        __device__ __forceinline__ static int32_t combine(int32_t a, int32_t b) { return dr_##op##_i32(a, b); } \
        __device__ __forceinline__ static uint32_t combine(uint32_t a, uint32_t b) { return dr_##op##_u32(a, b); } \
        __device__ __forceinline__ static int64_t combine(int64_t a, int64_t b) { return dr_##op##_i64(a, b); } \
        __device__ __forceinline__ static uint64_t combine(uint64_t a, uint64_t b) { return dr_##op##_u64(a, b); } \
        DR_OP_FLOAT_##OP(op)                                                         \
    };
#define DR_OP_FLOAT(op)                                                              \
    __device__ __forceinline__ static float combine(float a, float b) { return dr_##op##_f32(a, b); } \
    __device__ __forceinline__ static double combine(double a, double b) { return dr_##op##_f64(a, b); }
#define DR_OP_FLOAT_SUM DR_OP_FLOAT
#define DR_OP_FLOAT_PROD DR_OP_FLOAT
#define DR_OP_FLOAT_MIN DR_OP_FLOAT
#define DR_OP_FLOAT_MAX DR_OP_FLOAT
#define DR_OP_FLOAT_BAND(op)
#define DR_OP_FLOAT_BOR(op)
#define DR_OP_FLOAT_BXOR(op)
DR_OP_TAG(SUM, sum)
DR_OP_TAG(PROD, prod)
DR_OP_TAG(MIN, min)
DR_OP_TAG(MAX, max)
DR_OP_TAG(BAND, band)
DR_OP_TAG(BOR, bor)
DR_OP_TAG(BXOR, bxor)

template <class Op, class Acc> __device__ __forceinline__ Acc dr_identity()
{
    dr_value_t v;
    dr_acc_identity(dr_acc_kind_of<Acc>::value, Op::id, &v);
    Acc a;
    memcpy(&a, &v, sizeof a);
    return a;
}

/* Shuffle any 4- or 8-byte value down the warp. Every lane of the warp must call it (full mask). */
template <class T> __device__ __forceinline__ T dr_shfl_down(T v, int offset)
{
    if (sizeof(T) == 4) {
        int b;
        memcpy(&b, &v, 4);
        b = __shfl_down_sync(0xffffffffu, b, offset);
        memcpy(&v, &b, 4);
    } else {
        long long b;
        memcpy(&b, &v, 8);
        b = __shfl_down_sync(0xffffffffu, b, offset);
        memcpy(&v, &b, 8);
    }
    return v;
}

/* Reduce over the 32 lanes of a full warp; lane 0 holds the result. */
template <class Op, class Acc> __device__ __forceinline__ Acc dr_warp_reduce(Acc v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = Op::combine(v, dr_shfl_down(v, offset));
    return v;
}

/* Reduce over the whole block (blockDim.x a multiple of 32, at most 1024, every thread calling); thread 0 holds the
 * result. Warp shuffles, then one shared-memory exchange of the per-warp values. */
template <class Op, class Acc> __device__ __forceinline__ Acc dr_block_reduce(Acc v)
{
    __shared__ Acc warp_partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = dr_warp_reduce<Op>(v);
    if (lane == 0) warp_partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        /* The whole first warp takes part, padding past the last warp with the identity, so the full-mask shuffle
         * is legal (the tutorial shuffles with a full mask inside `if (tid < nwarps)`). */
        v = lane < (int)(blockDim.x >> 5) ? warp_partial[lane] : dr_identity<Op, Acc>();
        v = dr_warp_reduce<Op>(v);
    }
    return v;
}

/* ---- NaN policy OMIT (accum.h, "NaN policy"; dr_gpu_reduce_t.nan_omit) ----
 * The element's load path: a NaN becomes dr_nan_fill(op) (the op's identity for min/max, 0 for sums, 1 for
 * products, +-inf for argmin/argmax: NumPy's replacement) and is counted, one compare and one select an element.
 * kOmit is a template parameter of the kernels, instantiated for the float rows only: PROPAGATE runs the kernels as
 * they were, with nothing added. */
template <class In> struct dr_is_float_in {
    static const bool value = std::is_floating_point<In>::value;
};
template <> struct dr_is_float_in<dr_f16_t> { static const bool value = true; };
template <> struct dr_is_float_in<dr_bf16_t> { static const bool value = true; };

template <bool kOmit, dr_op_t kOp, class T> __device__ __forceinline__ T dr_nan_load(T x, unsigned &nans)
{
    if constexpr (kOmit) {
        const bool nan = x != x;
        nans += nan;
        return nan ? (T)dr_nan_fill(kOp) : x;
    } else {
        return x;
    }
}

/* At a thread's end (every lane of the warp calling): the warp's NaN count into the grid's counter. */
template <bool kOmit> __device__ __forceinline__ void dr_nan_flush(unsigned nans, unsigned long long *counter)
{
    if constexpr (kOmit) {
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) nans += __shfl_down_sync(0xffffffffu, nans, offset);
        if ((threadIdx.x & 31) == 0 && nans) atomicAdd(counter, (unsigned long long)nans);
    }
}

/* By the thread that stores the result, once every thread of the grid has flushed: the count to its place, the
 * counter back to zero for the next launch. */
template <bool kOmit> __device__ __forceinline__ void dr_nan_store(unsigned long long *counter, uint64_t *out)
{
    if constexpr (kOmit) *out = atomicExch(counter, 0ull);
}

/* Where a kernel counts NaN (the workspace's counter, launch.h's DR_GPU_NAN_OFFSET) and stores the count. */
struct dr_nan_out_t {
    unsigned long long *counter;
    uint64_t *at;
};
__host__ __device__ inline dr_nan_out_t dr_nan_out_of(const dr_gpu_reduce_t *r)
{
    dr_nan_out_t o;
    o.counter = r->d_work ? reinterpret_cast<unsigned long long *>(static_cast<char *>(r->d_work) + DR_GPU_NAN_OFFSET)
                          : nullptr;
    o.at = r->nan_omit ? r->d_nan_count : nullptr;
    return o;
}

/* Run query() with `device` current, then make the caller's device current again. The first error. */
template <class F> cudaError_t dr_on_device(int device, F query)
{
    int current = 0;
    cudaError_t err = cudaGetDevice(&current);
    if (err == cudaSuccess && current != device) err = cudaSetDevice(device);
    if (err == cudaSuccess) err = query();
    if (current != device) {
        cudaError_t back = cudaSetDevice(current);
        if (err == cudaSuccess) err = back;
    }
    return err;
}

#define DR_ROW_MATCHES(r, DT, OP, ACC) ((r)->dtype == DR_##DT && (r)->op == DR_##OP && (r)->acc == DR_ACC_##ACC)

/* Table-driven dispatch: calls f.call<In, Acc, Op>() for the row matching (r->dtype, r->op, r->acc), the only place
 * a run-time type turns into template arguments; cudaErrorInvalidValue when no row matches. */
template <class F> cudaError_t dr_dispatch(const dr_gpu_reduce_t *r, const F &f)
{
#define X(DT, OP, op, ACC, acc) \
    if (DR_ROW_MATCHES(r, DT, OP, ACC)) return f.template call<dr_in_##DT, dr_acc_##ACC, dr_op_##OP>();
    DR_REDUCTION_TABLE
#undef X
    return cudaErrorInvalidValue;
}

/* Where and what a kernel signals when its result is complete (dr_gpu_reduce_t.d_done, done_seq). */
struct dr_done_t {
    uint32_t *at; /* NULL: nobody waits on it */
    uint32_t seq;
};
__host__ __device__ inline dr_done_t dr_done_of(const dr_gpu_reduce_t *r) { return dr_done_t{r->d_done, r->done_seq}; }

/* By the thread that wrote the result, after it: a release store at system scope orders the result's writes
 * before the flag for a host polling the mapped word (dr_gpu_reduce_once). */
__device__ __forceinline__ void dr_signal_done(dr_done_t d)
{
    if (d.at) cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*d.at).store(d.seq, cuda::memory_order_release);
}

#endif
