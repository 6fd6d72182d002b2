/* dreduce-bench's peer: cub::DeviceReduce doing the same reduction as each row of the reduction table.
 *
 * CUB's dispatch is the bulk of the benchmark's compile time (two offset types for each of the 82 rows: about 220 s
 * of nvcc in one translation unit, the longest step of CI's build). So the rows are compiled in DR_BENCH_CUB_SHARDS
 * shards, by input type, that build in parallel: bench/CMakeLists.txt generates one file per shard that defines
 * DR_BENCH_CUB_SHARD and which types are its own, and includes this header, which then defines that shard's
 * cub_rows(). dreduce_bench.cu includes it without DR_BENCH_CUB_SHARD, for the names only, and collects the rows of
 * every shard (all_cub_rows). */
#ifndef DREDUCE_BENCH_CUB_ROWS_CUH
#define DREDUCE_BENCH_CUB_ROWS_CUH

#include <cub/cub.cuh>
#include <cuda/functional>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include <type_traits>
#include <utility>
#include <vector>

#include "dreduce/accum.h"
#include "dreduce/table.h"

#ifndef DR_BENCH_CUB_SHARDS
#error "DR_BENCH_CUB_SHARDS: set by bench/CMakeLists.txt"
#endif

namespace dr_bench {

/* CUB: the same reduction as ours, for every row of the reduction table (include/dreduce/table.h). Where the input
 * is the accumulator type, CUB's own Sum/Min/Max (or Reduce with the op); where dreduce widens (int32 sums in int64,
 * float32 sums in float64, every 16-bit float row, ...), TransformReduce with the same widening and the op on the
 * accumulator type. The 16-bit floats are CUB's __half / __nv_bfloat16, widened by CUDA's own __half2float /
 * __bfloat162float. CUB picks 32-bit offsets for a 32-bit num_items (faster), so pass one when n fits. */

/* CUB's input type for each table token. */
typedef int32_t cub_in_INT32;
typedef int64_t cub_in_INT64;
typedef uint32_t cub_in_UINT32;
typedef uint64_t cub_in_UINT64;
typedef float cub_in_FLOAT32;
typedef double cub_in_FLOAT64;
typedef __half cub_in_FLOAT16;
typedef __nv_bfloat16 cub_in_BFLOAT16;
typedef int8_t cub_in_INT8;
typedef uint8_t cub_in_UINT8;
typedef int16_t cub_in_INT16;
typedef uint16_t cub_in_UINT16;
typedef int32_t cub_acc_I32;
typedef uint32_t cub_acc_U32;
typedef int64_t cub_acc_I64;
typedef uint64_t cub_acc_U64;
typedef float cub_acc_F32;
typedef double cub_acc_F64;

template <class Acc> struct Widen {
    template <class In> __host__ __device__ Acc operator()(In x) const { return (Acc)x; }
    __device__ Acc operator()(__half x) const { return (Acc)__half2float(x); }
    __device__ Acc operator()(__nv_bfloat16 x) const { return (Acc)__bfloat162float(x); }
};

/* The op on the accumulator type, by dr_op_t. */
template <dr_op_t Op, class Acc> struct CubOp;
template <class Acc> struct CubOp<DR_SUM, Acc> { typedef cuda::std::plus<Acc> type; static constexpr const char *name = "plus"; };
template <class Acc> struct CubOp<DR_PROD, Acc> { typedef cuda::std::multiplies<Acc> type; static constexpr const char *name = "multiplies"; };
template <class Acc> struct CubOp<DR_MIN, Acc> { typedef cuda::minimum<Acc> type; static constexpr const char *name = "minimum"; };
template <class Acc> struct CubOp<DR_MAX, Acc> { typedef cuda::maximum<Acc> type; static constexpr const char *name = "maximum"; };
template <class Acc> struct CubOp<DR_BAND, Acc> { typedef cuda::std::bit_and<Acc> type; static constexpr const char *name = "bit_and"; };
template <class Acc> struct CubOp<DR_BOR, Acc> { typedef cuda::std::bit_or<Acc> type; static constexpr const char *name = "bit_or"; };
template <class Acc> struct CubOp<DR_BXOR, Acc> { typedef cuda::std::bit_xor<Acc> type; static constexpr const char *name = "bit_xor"; };

/* The op's identity in Acc (accum.h's, so CUB starts where we start). */
template <class Acc> Acc identity_of(dr_acc_kind_t kind, dr_op_t op)
{
    dr_value_t v;
    dr_acc_identity(kind, op, &v);
    Acc a;
    memcpy(&a, &v, sizeof a);
    return a;
}

template <class In, class Acc, dr_op_t Op, class Off>
cudaError_t cub_call_off(void *temp, size_t &temp_bytes, const In *in, Acc *out, Off n, dr_acc_kind_t kind,
                         cudaStream_t s)
{
    typedef typename CubOp<Op, Acc>::type F;
    if constexpr (std::is_same<In, Acc>::value) {
        if constexpr (Op == DR_SUM) return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, s);
        else if constexpr (Op == DR_MIN) return cub::DeviceReduce::Min(temp, temp_bytes, in, out, n, s);
        else if constexpr (Op == DR_MAX) return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, s);
        else return cub::DeviceReduce::Reduce(temp, temp_bytes, in, out, n, F{}, identity_of<Acc>(kind, Op), s);
    } else {
        return cub::DeviceReduce::TransformReduce(temp, temp_bytes, in, out, n, F{}, Widen<Acc>{},
                                                  identity_of<Acc>(kind, Op), s);
    }
}

template <class In, class Acc, dr_op_t Op>
cudaError_t cub_call(void *temp, size_t *temp_bytes, const void *in, void *out, size_t n, dr_acc_kind_t kind,
                     cudaStream_t s)
{
    if (n <= (size_t)UINT32_MAX)
        return cub_call_off<In, Acc, Op>(temp, *temp_bytes, static_cast<const In *>(in), static_cast<Acc *>(out),
                                         (uint32_t)n, kind, s);
    return cub_call_off<In, Acc, Op>(temp, *temp_bytes, static_cast<const In *>(in), static_cast<Acc *>(out),
                                     (unsigned long long)n, kind, s);
}

typedef cudaError_t (*CubFn)(void *temp, size_t *temp_bytes, const void *in, void *out, size_t n,
                             dr_acc_kind_t kind, cudaStream_t s);

/* One row's CUB call. acc is the row's accumulator (DR_ACC_EXACT for an exact row, which CUB sums in float64). */
struct CubRow {
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
    CubFn fn;
};

/* Appends shard Shard's rows to out. Defined only where DR_BENCH_CUB_SHARD is, and instantiated there for that shard
 * alone; elsewhere a declaration. The shard's file defines DR_BENCH_CUB_IF_<DTYPE>(code) for every type: `code` for
 * the shard's types, nothing for the others. The filter is the preprocessor's on purpose: filtered by a template
 * (`if constexpr`, or a specialization chosen by the shard), nvcc 13 still instantiated every row's kernels in every
 * shard, and each shard took as long as all rows in one file. */
template <int Shard> void cub_rows(std::vector<CubRow> &out)
#ifdef DR_BENCH_CUB_SHARD
{
#define X(DT, OP, op, ACC, acc)                                                                                \
    DR_BENCH_CUB_IF_##DT(out.push_back(CubRow{DR_##DT, DR_##OP, DR_ACC_##ACC, cub_call<cub_in_##DT, cub_acc_##ACC, DR_##OP>});)
    DR_REDUCTION_TABLE
#undef X
#define X(DT, OP, op, ACC, acc)                                                                                \
    DR_BENCH_CUB_IF_##DT(out.push_back(CubRow{DR_##DT, DR_##OP, DR_ACC_##ACC, cub_call<cub_in_##DT, double, DR_##OP>});)
    DR_EXACT_TABLE
#undef X
}
template void cub_rows<DR_BENCH_CUB_SHARD>(std::vector<CubRow> &out);
#else
    ;
#endif

template <int... Shard> std::vector<CubRow> all_cub_rows(std::integer_sequence<int, Shard...>)
{
    std::vector<CubRow> out;
    (cub_rows<Shard>(out), ...);
    return out;
}

/* Every row of every shard. */
inline std::vector<CubRow> all_cub_rows() { return all_cub_rows(std::make_integer_sequence<int, DR_BENCH_CUB_SHARDS>{}); }

} // namespace dr_bench

#endif
