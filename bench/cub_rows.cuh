/* dreduce-bench's peer: cub::DeviceReduce doing the same reduction as each row of the reduction table, and what a
 * user would write with CUB for each row of issue #37's tables (argmin/argmax: ArgMin/ArgMax; stats: Sum, Min, Max
 * and a second pass for the variance).
 *
 * CUB's dispatch is the bulk of the benchmark's compile time (two offset types for each of the 82 rows: about 220 s
 * of nvcc in one translation unit, the longest step of CI's build). So the rows are compiled in DR_BENCH_CUB_SHARDS
 * shards, by input type, that build in parallel: bench/CMakeLists.txt generates one file per shard that defines
 * DR_BENCH_CUB_SHARD and which types are its own, and includes this header, which then defines that shard's
 * cub_rows(). dreduce_bench.cu includes it without DR_BENCH_CUB_SHARD, for the names only, and collects the rows of
 * every shard (all_cub_rows). The rows of issue #37 add, per type, ArgMin and ArgMax (one instantiation each: their
 * num_items is int64 whatever n) and the variance pass (two offset types); stats' Sum, Min and Max are the sum, min
 * and max rows' own instantiations, so they cost nothing more. Together about 50 s of nvcc over the four shards
 * (each of 60-70 s with them, on a loaded 2-core machine). */
#ifndef DREDUCE_BENCH_CUB_ROWS_CUH
#define DREDUCE_BENCH_CUB_ROWS_CUH

#include <cub/cub.cuh>
#include <cuda/functional>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "accum.h"
#include "table.h"

#ifndef DR_BENCH_CUB_SHARDS
#error "DR_BENCH_CUB_SHARDS: set by bench/CMakeLists.txt"
#endif

namespace dr_bench {

/* CUB: the same reduction as ours, for every row of the reduction table (src/common/table.h). Where the input
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

/* ---- argmin / argmax: cub::DeviceReduce::ArgMin / ArgMax, the overload with separate outputs (CCCL 3.x; the
 * KeyValuePair one is deprecated): the extreme in the input type and its int64 offset, both CUB's first occurrence
 * (ties go to the lower offset, as ours). They write into a result slot laid out as CubArgSlot. ---- */
struct CubArgSlot {
    unsigned char value[8]; /* the input type's bytes (1 to 8 of them) */
    int64_t index;          /* the offset in this call's input */
};

template <class In, dr_op_t Op>
cudaError_t cub_arg_call(void *temp, size_t *temp_bytes, const void *in, void *out, size_t n, dr_acc_kind_t,
                         cudaStream_t s)
{
    static_assert(sizeof(In) <= sizeof(CubArgSlot::value), "the value fits its field");
    CubArgSlot *slot = static_cast<CubArgSlot *>(out);
    In *value = reinterpret_cast<In *>(slot->value);
    int64_t *index = &slot->index;
    const In *d_in = static_cast<const In *>(in);
    if constexpr (Op == DR_ARGMIN)
        return cub::DeviceReduce::ArgMin(temp, *temp_bytes, d_in, value, index, (int64_t)n, s);
    else
        return cub::DeviceReduce::ArgMax(temp, *temp_bytes, d_in, value, index, (int64_t)n, s);
}

/* ---- stats: what a user writes with CUB for count, sum, min, max, mean and variance: four calls, each a pass over
 * the input: the sum (widened as ours: the integers into 64 bits of their signedness, the floats into float64), the
 * min and the max (in the types the min/max rows use), then sum((x - mean)^2) in float64 by TransformReduce, with the
 * mean read on the device from the first call's sum (no copy back to the host between the calls). Every call is
 * the same CUB instantiation as the row of the same type and op (cub_call), but the variance. They write into a
 * result slot laid out as CubStatsSlot; the count is n. ---- */
template <class In> struct StatsTypes {
    static constexpr bool is_float = std::is_floating_point<In>::value || std::is_same<In, __half>::value ||
                                     std::is_same<In, __nv_bfloat16>::value;
    typedef typename std::conditional<is_float, double,
                                      typename std::conditional<std::is_signed<In>::value, int64_t,
                                                                uint64_t>::type>::type sum;
    /* float64 itself; the narrower floats in float32; the integers in 32 bits at least, of their signedness */
    typedef typename std::conditional<
        std::is_same<In, double>::value, double,
        typename std::conditional<
            is_float, float,
            typename std::conditional<(sizeof(In) >= 4), In,
                                      typename std::conditional<std::is_signed<In>::value, int32_t,
                                                                uint32_t>::type>::type>::type>::type minmax;
};

/* The accumulator kind of a C++ type (what a CUB output of that type holds). */
template <class T> constexpr dr_acc_kind_t kind_of()
{
    return std::is_same<T, int32_t>::value    ? DR_ACC_I32
           : std::is_same<T, uint32_t>::value ? DR_ACC_U32
           : std::is_same<T, int64_t>::value  ? DR_ACC_I64
           : std::is_same<T, uint64_t>::value ? DR_ACC_U64
           : std::is_same<T, float>::value    ? DR_ACC_F32
           : std::is_same<T, double>::value   ? DR_ACC_F64
                                              : DR_ACC_KIND_COUNT;
}

struct CubStatsSlot {
    unsigned char sum[8]; /* StatsTypes<In>::sum */
    double m2;            /* sum of (x - sum / n)^2 */
    unsigned char min[8]; /* StatsTypes<In>::minmax */
    unsigned char max[8];
};

/* (x - mean)^2 in float64, the mean read from the sum on the device (one broadcast load an element). */
template <class Sum> struct SquaredDeviation {
    const Sum *sum;
    double inv_n;
    template <class In> __device__ double operator()(In x) const
    {
        const double d = Widen<double>{}(x) - (double)*sum * inv_n;
        return d * d;
    }
};

template <class In, class Sum, class Off>
cudaError_t cub_sqdev_off(void *temp, size_t &temp_bytes, const In *in, double *out, const Sum *sum, Off n,
                          cudaStream_t s)
{
    return cub::DeviceReduce::TransformReduce(temp, temp_bytes, in, out, n, cuda::std::plus<double>{},
                                              SquaredDeviation<Sum>{sum, n ? 1.0 / (double)n : 0.0}, 0.0, s);
}

template <class In>
cudaError_t cub_stats_call(void *temp, size_t *temp_bytes, const void *in, void *out, size_t n, dr_acc_kind_t,
                           cudaStream_t s)
{
    typedef typename StatsTypes<In>::sum Sum;
    typedef typename StatsTypes<In>::minmax MinMax;
    static_assert(sizeof(Sum) <= sizeof(CubStatsSlot::sum) && sizeof(MinMax) <= sizeof(CubStatsSlot::min),
                  "the outputs fit their fields");
    CubStatsSlot *slot = static_cast<CubStatsSlot *>(out);
    Sum *sum = reinterpret_cast<Sum *>(slot->sum);
    /* A size query (temp == nullptr) asks each call and returns the largest; a run gives each call all of it. */
    size_t need[4];
    for (size_t &b : need) b = temp ? *temp_bytes : 0;
    cudaError_t e = cub_call<In, Sum, DR_SUM>(temp, &need[0], in, sum, n, kind_of<Sum>(), s);
    if (e == cudaSuccess) e = cub_call<In, MinMax, DR_MIN>(temp, &need[1], in, slot->min, n, kind_of<MinMax>(), s);
    if (e == cudaSuccess) e = cub_call<In, MinMax, DR_MAX>(temp, &need[2], in, slot->max, n, kind_of<MinMax>(), s);
    if (e == cudaSuccess) {
        const In *d_in = static_cast<const In *>(in);
        e = n <= (size_t)UINT32_MAX ? cub_sqdev_off(temp, need[3], d_in, &slot->m2, sum, (uint32_t)n, s)
                                    : cub_sqdev_off(temp, need[3], d_in, &slot->m2, sum, (unsigned long long)n, s);
    }
    if (e == cudaSuccess && !temp) *temp_bytes = std::max(std::max(need[0], need[1]), std::max(need[2], need[3]));
    return e;
}

/* One row's CUB call. acc is the row's accumulator (DR_ACC_EXACT for an exact row, which CUB sums in float64;
 * DR_ACC_STATS_EXACT for an exact stats row, whose peer is the float64 one). A stats row's peer writes a
 * CubStatsSlot whose sum and min/max hold kinds sum_kind and minmax_kind; an arg row's a CubArgSlot. */
struct CubRow {
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_kind_t acc;
    CubFn fn;
    dr_acc_kind_t sum_kind = DR_ACC_KIND_COUNT, minmax_kind = DR_ACC_KIND_COUNT; /* stats rows */
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
#define X(DT, OP, op, ACC, acc)                                                                                \
    DR_BENCH_CUB_IF_##DT(out.push_back(CubRow{DR_##DT, DR_##OP, DR_ACC_##ACC, cub_arg_call<cub_in_##DT, DR_##OP>});)
    DR_ARG_TABLE
#undef X
    /* stats and exact stats: the same peer (CUB has no exact sum: beside an exact row, its float64 sum) */
#define X(DT, OP, op, ACC, acc)                                                                                \
    DR_BENCH_CUB_IF_##DT(out.push_back(CubRow{DR_##DT, DR_##OP, DR_ACC_##ACC, cub_stats_call<cub_in_##DT>,             \
                                              kind_of<StatsTypes<cub_in_##DT>::sum>(),                          \
                                              kind_of<StatsTypes<cub_in_##DT>::minmax>()});)
    DR_STATS_TABLE DR_STATS_EXACT_TABLE
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
