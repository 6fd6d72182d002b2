/* argmin/argmax and stats: reductions whose accumulator is more than one register (a dr_arg_t: value and index; a
 * dr_stats_t: count, moments, sum, min, max), in multipass's shape: one launch, a grid sized to fill the device
 * once (fewer blocks for small inputs), each thread walking its grid-stride share of the input with 16-byte vector
 * loads, four in flight (elements before the first 16-byte boundary and after the last whole vector one by one), the
 * block reduced with warp shuffles (the accumulator a word at a time) and one shared-memory exchange, and the last
 * block to finish reducing the blocks' partials in a fixed order (multipass's finish(): an acq_rel counter), so the
 * result does not depend on which block finishes last. The rules are src/common/accum.h's; rows come from
 * DR_ARG_TABLE and DR_STATS_TABLE (src/common/table.h; DR_STATS_EXACT_TABLE's rows are launch.cu's).
 *
 * argmin/argmax: a thread keeps the best value seen and the index of the vector it was in, not the element's: a
 * vector's extreme (NaN-first: min.NaN/max.NaN for floats) is compared with the best once, and a later vector only
 * replaces it when strictly better, so the vector kept holds the thread's first occurrence. At the walk's end the
 * thread reads that vector again (one 16-byte load) for the position of its first element equal to the best (or
 * its first NaN). The head and tail elements, before and after every vector, are candidates of their own. Threads,
 * warps, blocks and chunks then combine with the full rule (dr_arg_beats: NaN first, then value, then the lower
 * index), a total order: the result is the same element for any grid, block, chunking or rank count.
 *
 * stats: a thread merges a batch per vector into its running count, mean and m2 (Chan's update: delta = batch mean
 * - mean, mean += delta * k / n, m2 += batch m2 + delta^2 (n - k) k / n). The batch's mean and m2 come from its
 * elements in two passes over registers (float64), or exactly from integer sums for the 8- and 16-bit integers
 * (sum and sum of squares by dp4a / integer multiply-adds: m2 = (k sum(x^2) - sum(x)^2) / k): converting 16 bytes to
 * float64 one by one would cost more conversion-pipe slots than the memory leaves. Sums: integers exactly (64 bits a
 * thread, 128 for the 64-bit types; 128 from the block on), floats in float64; min/max in the type (float32 for the
 * 16-bit floats), by DR_MIN/DR_MAX's rules. Across threads and up: dr_stats_combine (its merge puts the operands in
 * an order of their own, so a combine's result does not depend on which side is which). A stats row with the sum
 * exact (DR_ACC_STATS_EXACT) is this kernel (the float64 row) and then kernels/exact.cu's, launched by launch.cu.
 *
 * Workspace: the done-counter (zero before first use; the last block returns it to zero), then one partial per
 * block. */
#include <cuda/atomic>
#include <cuda/std/limits>
#include <type_traits>

#include "common.cuh"
#include "internal.h"

namespace {

constexpr int kUnroll = 4;              /* vector loads in flight per thread */
constexpr size_t kPartialsOffset = 256; /* workspace: the done-counter, then the partials */

/* ---- Element types: the comparison type and the widening ---- */

/* The type a row compares its elements in: float32 for float32 and the 16-bit floats (exact), float64, and the
 * integers in 32 bits (8, 16, 32-bit types) or their own 64. */
template <class In> struct cmp_of { typedef In type; };
template <> struct cmp_of<dr_f16_t> { typedef float type; };
template <> struct cmp_of<dr_bf16_t> { typedef float type; };
template <> struct cmp_of<int8_t> { typedef int32_t type; };
template <> struct cmp_of<int16_t> { typedef int32_t type; };
template <> struct cmp_of<uint8_t> { typedef uint32_t type; };
template <> struct cmp_of<uint16_t> { typedef uint32_t type; };

template <class In> __device__ __forceinline__ typename cmp_of<In>::type to_cmp(In x) { return x; }
template <> __device__ __forceinline__ float to_cmp<dr_f16_t>(dr_f16_t x) { return dr_f16_to_f32(x.bits); }
template <> __device__ __forceinline__ float to_cmp<dr_bf16_t>(dr_bf16_t x) { return dr_bf16_to_f32(x.bits); }

/* A comparison value as the kind's scalar: integers widened, floats to float64 with a NaN made canonical. */
template <class C> __device__ __forceinline__ dr_scalar_t to_scalar(C c)
{
    dr_scalar_t s;
    if constexpr (std::is_floating_point<C>::value) s.f64 = dr_arg_canon_f64((double)c);
    else if constexpr (std::is_signed<C>::value) s.i64 = (int64_t)c;
    else s.u64 = (uint64_t)c;
    return s;
}

/* min/max in the comparison type by DR_MIN/DR_MAX's rules (NaN wins, -0 below +0). */
template <class C> __device__ __forceinline__ C cmin(C a, C b)
{
    if constexpr (std::is_same<C, float>::value) return dr_min_f32(a, b);
    else if constexpr (std::is_same<C, double>::value) return dr_min_f64(a, b);
    else return b < a ? b : a;
}
template <class C> __device__ __forceinline__ C cmax(C a, C b)
{
    if constexpr (std::is_same<C, float>::value) return dr_max_f32(a, b);
    else if constexpr (std::is_same<C, double>::value) return dr_max_f64(a, b);
    else return b > a ? b : a;
}
/* Two float16 (bfloat16) pairs' elementwise min and max (min.f16x2, min.bf16x2, sm_80 on: a NaN operand gives the
 * other, as min.f32; -0.0 below +0.0). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define DR_HALF2_OP(name, insn)                                                                                \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b)                                           \
    {                                                                                                          \
        uint32_t d;                                                                                            \
        asm(insn " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));                                                   \
        return d;                                                                                              \
    }
DR_HALF2_OP(f16x2_min, "min.f16x2")
DR_HALF2_OP(f16x2_max, "max.f16x2")
DR_HALF2_OP(bf16x2_min, "min.bf16x2")
DR_HALF2_OP(bf16x2_max, "max.bf16x2")
#undef DR_HALF2_OP
#endif
/* NaN policy OMIT's min and max of a running value (never NaN) and an element that may be NaN (then left out: the
 * running value): cmin's and cmax's order, -0.0 below +0.0, without their NaN rule (for float one instruction,
 * min.f32: dr_min_f32's min.NaN.f32 but for a NaN operand, which it passes over, where a select to +-inf first
 * took two more). */
template <class C> __device__ __forceinline__ C omit_min(C a, C b)
{
    if constexpr (std::is_same<C, float>::value) {
        float m;
        asm("min.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
        return m;
    } else {
        return (b < a || (a == b && signbit(b))) ? b : a;
    }
}
template <class C> __device__ __forceinline__ C omit_max(C a, C b)
{
    if constexpr (std::is_same<C, float>::value) {
        float m;
        asm("max.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
        return m;
    } else {
        return (b > a || (a == b && !signbit(b))) ? b : a;
    }
}

/* ---- The walk, the block and the grid, for any policy P ----
 * P::Thread: a thread's running state; P::State: the partial (dr_arg_t or dr_stats_t, what the result is);
 * P::start(), P::element(t, x, index), P::vector(t, v, vector index), P::round(t, v[kUnroll], vector index of v[0],
 * stride between them), P::end(t, g_vec, first_vec_index): State; P::identity(); P::combine(a, b): a = a (+) b. */

template <class S> __device__ __forceinline__ S shfl_down_words(const S &v, int offset)
{
    static_assert(sizeof(S) % 4 == 0, "partials are whole words");
    unsigned w[sizeof(S) / 4];
    memcpy(w, &v, sizeof(S));
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], offset);
    S r;
    memcpy(&r, w, sizeof(S));
    return r;
}

template <class P> __device__ __forceinline__ typename P::State warp_reduce(typename P::State v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) P::combine(v, shfl_down_words(v, offset));
    return v;
}

/* Thread 0 gets the block's partial (blockDim.x a multiple of 32; every thread calls). */
template <class P> __device__ __forceinline__ typename P::State block_reduce(typename P::State v)
{
    __shared__ typename P::State warp_partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce<P>(v);
    if (lane == 0) warp_partial[warp] = v;
    __syncthreads();
    if (warp == 0) { /* the whole first warp, padded with the identity: full-mask shuffles */
        v = lane < (int)(blockDim.x >> 5) ? warp_partial[lane] : P::identity();
        v = warp_reduce<P>(v);
    }
    return v;
}

/* A partial written by another SM, read past this SM's L1 (a word at a time). */
template <class S> __device__ __forceinline__ S load_partial(const S *p)
{
    static_assert(sizeof(S) % 8 == 0, "partials are whole 8-byte words");
    unsigned long long w[sizeof(S) / 8];
    const volatile unsigned long long *src = reinterpret_cast<const volatile unsigned long long *>(p);
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 8); ++k) w[k] = src[k];
    S r;
    memcpy(&r, w, sizeof(S));
    return r;
}

/* Every block's end (multipass's finish(), for a partial of any size). */
template <class P>
__device__ __forceinline__ void finish(typename P::State acc, typename P::State *g_partials, unsigned int *g_done,
                                       typename P::State *g_result, dr_nan_out_t nan_out, dr_done_t done)
{
    typedef typename P::State S;
    acc = block_reduce<P>(acc);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) {
            *g_result = acc;
            dr_nan_store<P::kOmit>(nan_out.counter, nan_out.at);
            dr_signal_done(done);
        }
        return;
    }
    __shared__ bool s_last;
    if (threadIdx.x == 0) {
        g_partials[blockIdx.x] = acc;
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(*g_done);
        s_last = count.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
        if (s_last) count.store(0, cuda::memory_order_relaxed); /* ready for the next launch */
    }
    __syncthreads();
    if (!s_last) return;
    S v = P::identity();
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) P::combine(v, load_partial(g_partials + b));
    v = block_reduce<P>(v);
    if (threadIdx.x == 0) {
        *g_result = v;
        dr_nan_store<P::kOmit>(nan_out.counter, nan_out.at);
        dr_signal_done(done);
    }
}

/* This thread's share of g_in[0..n): head element, vectors (kUnroll in flight), tail element; element i is global
 * index first + i. */
template <class In, class P>
__device__ __forceinline__ typename P::State walk(const In *__restrict__ g_in, size_t n, uint64_t first, unsigned &nans)
{
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    const dr_vector_split<In> split(g_in, n);
    typename P::Thread t = P::start();
    if (tid < split.head) P::element(t, g_in[tid], first + tid);
    const uint4 *g_vec = reinterpret_cast<const uint4 *>(g_in + split.head);
    const size_t nvec = split.nvec;
    size_t i = tid;
    for (; i + (kUnroll - 1) * nthreads < nvec; i += kUnroll * nthreads) {
        uint4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(g_vec + i + u * nthreads);
        P::round(t, v, i, nthreads);
    }
    for (; i < nvec; i += nthreads) P::vector(t, __ldg(g_vec + i), i);
    constexpr size_t kVec = 16 / sizeof(In);
    const size_t tail = split.head + nvec * kVec + tid;
    if (tail < n) P::element(t, g_in[tail], first + tail);
    nans = t.nans;
    return P::end(t, g_vec, first + split.head);
}

template <class In, class P>
__global__ void __launch_bounds__(1024)
    fused_kernel(const In *__restrict__ g_in, size_t n, uint64_t first, typename P::State *g_partials,
                 unsigned int *g_done, typename P::State *g_result, dr_nan_out_t nan_out, dr_done_t done)
{
    unsigned nans = 0;
    const typename P::State s = walk<In, P>(g_in, n, first, nans);
    dr_nan_flush<P::kOmit>(nans, nan_out.counter);
    finish<P>(s, g_partials, g_done, g_result, nan_out, done);
}

/* ---- argmin / argmax ---- */

template <class In, dr_acc_kind_t K, bool IsMax, bool Omit> struct arg_policy {
    typedef dr_arg_t State;
    typedef typename cmp_of<In>::type C;
    static constexpr int kVec = 16 / sizeof(In);
    static constexpr dr_op_t kOp = IsMax ? DR_ARGMAX : DR_ARGMIN;
    static constexpr bool kOmit = Omit; /* NaN policy OMIT: a NaN is read as -inf (argmax) or +inf (argmin) */
    struct Thread {
        C best;          /* the best vector extreme so far */
        long long where; /* the index of its vector, -1: none yet */
        dr_arg_t elem;   /* the best of the head and tail elements */
        unsigned nans;   /* NaN read (OMIT) */
    };
    /* An element as the comparison value, through the NaN policy's load path. */
    __device__ static C load(In x, unsigned &nans) { return dr_nan_load<kOmit, kOp>(to_cmp(x), nans); }
    __device__ static State identity()
    {
        State s;
        dr_arg_identity(K, kOp, &s);
        return s;
    }
    __device__ static void combine(State &a, const State &b)
    {
        if (dr_arg_beats(K, kOp, &b, &a)) a = b;
    }
    __device__ static Thread start()
    {
        Thread t;
        t.best = C(0);
        t.where = -1;
        t.elem = identity();
        t.nans = 0;
        return t;
    }
    __device__ static void element(Thread &t, In x, uint64_t index)
    {
        State c;
        c.value = to_scalar(load(x, t.nans));
        c.index = index;
        combine(t.elem, c);
    }
    /* m strictly better than the best so far (a NaN beats any number; nothing beats a NaN kept: it came first).
     * OMIT's values are never NaN (load() and extreme() put the fill in a NaN's place), so there it is the plain
     * compare, without the NaN tests; a round makes four compares (the main loop's PTX with the fill below:
     * float16 161 -> 153 instructions a round, float32 141 -> 124, float64 99 -> 89). */
    __device__ static bool better(C m, C best)
    {
        if constexpr (std::is_floating_point<C>::value && !kOmit)
            return best == best && (m != m || (IsMax ? m > best : m < best));
        else return IsMax ? m > best : m < best;
    }
    /* The vector's extreme value, NaN-first (a NaN anywhere makes it NaN): min.NaN/max.NaN for float32 (one
     * instruction), `better` for float64 (its min/max rules' select chain orders -0 and +0, which == ignores). */
    __device__ static C extreme(const uint4 &v, unsigned &nans)
    {
        In e[kVec];
        memcpy(e, &v, 16);
#if __CUDA_ARCH__ >= 800 /* min.f16x2 */
        if constexpr (kOmit && std::is_same<In, dr_f16_t>::value) {
            /* OMIT of float16 (issue-bound at eight elements a vector): the extreme on pairs of halves, min.f16x2 /
             * max.f16x2 (two elements an instruction, a NaN operand skipped), then one conversion to float a pair;
             * the NaN counted on the packed bits: a half is NaN where its magnitude bits exceed 0x7c00, so adding
             * 0x03ff carries into its top bit exactly then (a magnitude is at most 0x7fff: nothing carries into
             * the next half), and the four words' flags, shifted apart, take one population count. A vector of
             * NaN only is the fill, as below; ties and signed zeros as below. */
            const uint32_t w[4] = {v.x, v.y, v.z, v.w};
            const uint32_t p = IsMax ? f16x2_max(f16x2_max(w[0], w[1]), f16x2_max(w[2], w[3]))
                                     : f16x2_min(f16x2_min(w[0], w[1]), f16x2_min(w[2], w[3]));
            const float lo = dr_f16_to_f32((uint16_t)(p & 0xffffu)), hi = dr_f16_to_f32((uint16_t)(p >> 16));
            /* the fill as a third operand: NaN (every half NaN) becomes it, as a compare and select would make it */
            const float fill = (float)dr_nan_fill(kOp);
            const float m = IsMax ? fmaxf(fmaxf(lo, hi), fill) : fminf(fminf(lo, hi), fill);
            uint32_t flags = 0;
#pragma unroll
            for (int k = 0; k < 4; ++k) flags |= (((w[k] & 0x7fff7fffu) + 0x03ff03ffu) & 0x80008000u) >> k;
            nans += __popc(flags);
            return m;
        }
#endif
        if constexpr (kOmit && std::is_same<C, float>::value && sizeof(In) == 2) {
            /* OMIT of bfloat16 (and float16 below sm_80; eight elements a vector, issue-bound): fminf/fmaxf (one
             * instruction each) skip a NaN operand, so the vector's extreme needs no select an element, only its
             * count; a vector of NaN only is the fill (+-inf), as each replaced element would be. Ties and signed
             * zeros: the kept vector is read again at the end (end()), which finds the first element equal to the
             * best. (float32's four elements took longer this way on the H200 than through load(): 1.18 against
             * 1.05 of PROPAGATE's time, dreduce-nan-bench at 2^28.) */
            float m = to_cmp(e[0]);
            unsigned k = m != m;
#pragma unroll
            for (int j = 1; j < kVec; ++j) {
                const float c = to_cmp(e[j]);
                k += c != c;
                m = IsMax ? fmaxf(m, c) : fminf(m, c);
            }
            nans += k;
            const float fill = (float)dr_nan_fill(kOp); /* NaN only where every element is: then the fill */
            return IsMax ? fmaxf(m, fill) : fminf(m, fill);
        }
        C m = load(e[0], nans);
#pragma unroll
        for (int j = 1; j < kVec; ++j) {
            const C c = load(e[j], nans);
            if constexpr (std::is_same<C, double>::value) m = better(c, m) ? c : m;
            else m = IsMax ? cmax(m, c) : cmin(m, c);
        }
        return m;
    }
    __device__ static void vector(Thread &t, const uint4 &v, size_t vi)
    {
        const C m = extreme(v, t.nans);
        const bool take = t.where < 0 || better(m, t.best);
        t.best = take ? m : t.best;
        t.where = take ? (long long)vi : t.where;
    }
    /* A round's vectors in a tree, the earlier of equals kept (v[u] is vector vi + u stride), then one update: a
     * chain of one compare and select a round instead of four. */
    __device__ static void round(Thread &t, const uint4 (&v)[kUnroll], size_t vi, size_t stride)
    {
        static_assert(kUnroll == 4, "the tree below");
        const C m0 = extreme(v[0], t.nans), m1 = extreme(v[1], t.nans), m2 = extreme(v[2], t.nans),
                m3 = extreme(v[3], t.nans);
        const bool b01 = better(m1, m0), b23 = better(m3, m2);
        const C m01 = b01 ? m1 : m0, m23 = b23 ? m3 : m2;
        const bool b = better(m23, m01);
        const C m = b ? m23 : m01;
        const unsigned u = b ? (b23 ? 3u : 2u) : (b01 ? 1u : 0u);
        const bool take = t.where < 0 || better(m, t.best);
        t.best = take ? m : t.best;
        t.where = take ? (long long)(vi + u * stride) : t.where;
    }
    /* The kept vector read again: its first element equal to the best (or its first NaN). */
    __device__ static State end(const Thread &t, const uint4 *g_vec, uint64_t first_vec_index)
    {
        State r = t.elem;
        if (t.where >= 0) {
            const uint4 v = __ldg(g_vec + t.where);
            In e[kVec];
            memcpy(e, &v, 16);
            int j = kVec - 1;
            unsigned again = 0; /* this vector's NaN were counted when it was first read */
            C hit_value = load(e[kVec - 1], again);
#pragma unroll
            for (int k = kVec - 1; k >= 0; --k) { /* selects, not e[j]: a run-time index would put e in memory */
                const C c = load(e[k], again);
                bool hit;
                if constexpr (std::is_floating_point<C>::value) hit = t.best != t.best ? c != c : c == t.best;
                else hit = c == t.best;
                j = hit ? k : j;
                hit_value = hit ? c : hit_value;
            }
            State c;
            c.value = to_scalar(hit_value);
            c.index = first_vec_index + (uint64_t)t.where * kVec + (uint64_t)j;
            combine(r, c);
        }
        return r;
    }
};

/* ---- stats ---- */

template <class In> struct is_narrow_int {
    static constexpr bool value = std::is_integral<In>::value && sizeof(In) <= 2;
};

template <class In, dr_acc_kind_t K, bool Omit> struct stats_policy {
    typedef dr_stats_t State;
    typedef typename cmp_of<In>::type C;
    static constexpr int kVec = 16 / sizeof(In);
    static constexpr bool kOmit = Omit; /* NaN policy OMIT: a NaN is left out (counted, not an element) */
    static constexpr bool kInt = std::is_integral<In>::value;
    static constexpr bool kSigned = std::is_signed<In>::value;
    /* A thread's exact integer sum: 64 bits hold a thread's share of 8-, 16- and 32-bit integers (below 2^32
     * elements a thread: the plan's grid), 128 bits the 64-bit ones'. */
    typedef typename std::conditional<(sizeof(In) <= 4), typename std::conditional<kSigned, long long,
                                      unsigned long long>::type, __int128>::type isum_t;
    struct Thread {
        unsigned long long n;
        double mean, m2;
        double fsum;  /* floats */
        isum_t isum;  /* integers */
        C lo, hi;
        unsigned nans; /* NaN left out (OMIT) */
    };
    __device__ static State identity()
    {
        State s;
        dr_stats_identity(K, &s);
        return s;
    }
    __device__ static void combine(State &a, const State &b) { dr_stats_combine(K, &a, &b); }
    __device__ static Thread start()
    {
        Thread t;
        t.n = 0, t.mean = 0, t.m2 = 0, t.fsum = 0, t.isum = 0, t.nans = 0;
        if constexpr (std::is_floating_point<C>::value) {
            t.lo = (C)__longlong_as_double(0x7ff0000000000000ll);
            t.hi = -t.lo;
        } else {
            t.lo = cuda::std::numeric_limits<C>::max();
            t.hi = cuda::std::numeric_limits<C>::lowest();
        }
        return t;
    }
    /* Chan's update by a batch of k elements of mean mb and m2 qb (the batch second: a thread's order is fixed). */
    __device__ static void merge(Thread &t, unsigned k, double mb, double qb)
    {
        const unsigned long long n = t.n + k;
        const double delta = mb - t.mean, w = (double)k / (double)n;
        /* delta (delta n_old w), not delta^2 (...): a first batch (n_old = 0) of means past 2^512 would make inf * 0 */
        t.m2 += qb + delta * (delta * ((double)t.n * w));
        t.mean = t.n ? t.mean + delta * w : mb;
        t.n = n;
    }
    __device__ static void element(Thread &t, In x, uint64_t)
    {
        const C c = to_cmp(x);
        if constexpr (kOmit) {
            if (c != c) {
                ++t.nans;
                return;
            }
        }
        t.lo = cmin(t.lo, c);
        t.hi = cmax(t.hi, c);
        if constexpr (kInt) t.isum += (isum_t)x;
        else t.fsum += (double)c;
        merge(t, 1, (double)c, 0.0);
    }
    /* One vector's min, max and (into the thread) exact integer sum; its batch moments: for the 8- and 16-bit
     * integers the sums s and q (exact), else the batch's mean and m2 in two passes over registers. */
    struct batch {
        double mean, m2;
    };
    __device__ static void narrow_sums(Thread &t, const uint4 &v, long long &s, long long &q)
    {
        In e[kVec];
        memcpy(e, &v, 16);
        C lo = to_cmp(e[0]), hi = lo;
#pragma unroll
        for (int j = 1; j < kVec; ++j) lo = cmin(lo, to_cmp(e[j])), hi = cmax(hi, to_cmp(e[j]));
        t.lo = cmin(t.lo, lo);
        t.hi = cmax(t.hi, hi);
        if constexpr (sizeof(In) == 1) {
            const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                if constexpr (kSigned) {
                    s += __dp4a((int)w[k], 0x01010101, 0);
                    q += __dp4a((int)w[k], (int)w[k], 0);
                } else {
                    s += __dp4a(w[k], 0x01010101u, 0u);
                    q += __dp4a(w[k], w[k], 0u);
                }
            }
        } else {
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
                const long long x = (long long)e[j];
                s += x;
                q += x * x;
            }
        }
    }
    __device__ static batch wide_batch(Thread &t, const uint4 &v)
    {
        In e[kVec];
        memcpy(e, &v, 16);
        double x[kVec], s = 0;
        C lo = to_cmp(e[0]), hi = lo;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
            const C c = to_cmp(e[j]);
            if (j) lo = cmin(lo, c), hi = cmax(hi, c);
            x[j] = (double)c;
            s += x[j];
        }
        t.lo = cmin(t.lo, lo);
        t.hi = cmax(t.hi, hi);
        if constexpr (kInt) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) t.isum += (isum_t)e[j];
        } else {
            t.fsum += s;
        }
        batch b;
        b.mean = s * (1.0 / kVec);
        b.m2 = 0;
#pragma unroll
        for (int j = 0; j < kVec; ++j) b.m2 += (x[j] - b.mean) * (x[j] - b.mean);
        return b;
    }
    /* Two batches of k elements each as one of 2k: Chan's merge with equal weights, no division. */
    __device__ static batch pair(batch a, batch b, double k)
    {
        const double delta = b.mean - a.mean;
        batch r;
        r.mean = a.mean * 0.5 + b.mean * 0.5; /* halves first: no overflow near the largest float64 */
        r.m2 = (a.m2 + b.m2) + delta * (delta * (k * 0.5));
        return r;
    }
    /* OMIT: the elements of vectors v[0..N) that are not NaN as one batch of its own count k: NaN are 0 in its sum,
     * left out of its min and max (omit_min, omit_max), and add nothing to its m2 (two passes over registers, as
     * wide_batch's), selects on the load path like the other ops'; one merge (Chan's update) a batch, as the
     * round's when none is NaN. The mean divides by k only where a NaN made k short of the batch (k == N kVec
     * multiplies). k is counted an element and the select comes after the widening: k as one population count of
     * the NaN bits, or the select before the widening, made ptxas spill within the kernel's 64 registers (56-152
     * bytes a thread), and OMIT's stats took 1.9x (float32) and 2.4-2.7x (16-bit floats) PROPAGATE's time on an
     * H100 at 2^28 (bench/results/h100-2026-12-06/nan-bench-before.txt); `ptxas -v` on this file shows the stack
     * frames. */
    template <int N> __device__ static void omit_batch(Thread &t, const uint4 *v)
    {
        constexpr int kK = N * kVec;
        In e[kK];
        memcpy(e, v, sizeof e);
        const C pinf = (C)__longlong_as_double(0x7ff0000000000000ll);
        double x[kK], s = 0;
        unsigned k = 0, nan_bits = 0;
        C lo = pinf, hi = -pinf;
#pragma unroll
        for (int j = 0; j < kK; ++j) {
            const C c = to_cmp(e[j]);
            const bool nan = c != c;
            nan_bits |= (unsigned)nan << j;
            k += !nan;
            lo = omit_min(lo, c);
            hi = omit_max(hi, c);
            x[j] = nan ? 0.0 : (double)c;
            s += x[j];
        }
        t.nans += kK - k;
        t.lo = cmin(t.lo, lo);
        t.hi = cmax(t.hi, hi);
        t.fsum += s;
        if (k == 0) return;
        const double mean = k == kK ? s * (1.0 / kK) : s / k;
        double q = 0;
#pragma unroll
        for (int j = 0; j < kK; ++j) {
            const double d = (nan_bits >> j) & 1u ? 0.0 : x[j] - mean;
            q += d * d;
        }
        merge(t, k, mean, q);
    }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800 /* min.f16x2, min.bf16x2 */
    static constexpr bool kPacked16 = kOmit && sizeof(In) == 2 && !kInt;
    /* OMIT of the 16-bit floats: a whole round of four vectors (32 elements) as one batch, one merge a round as
     * PROPAGATE's, worked on the packed words, two halves a word. A half is NaN where its magnitude bits exceed
     * +inf's (0x7c00 float16, 0x7f80 bfloat16): adding the difference to 0x7fff carries into its top bit exactly
     * then, never into the next half (a magnitude is at most 0x7fff); the words' flags, shifted apart, take one
     * population count. min and max go two halves an instruction on the words as read (min.f16x2 and min.bf16x2
     * pass over a NaN operand and order -0.0 below +0.0, as min.f32).
     * One pass of the sums about a shift c: d = x - c, the sum of d and of d^2; the batch's sum is k c + sum d and
     * its m2 sum d^2 - sum^2/k. c is the point of the batch's range [lo, hi] nearest 0: lo where lo >= 0, hi where
     * hi <= 0, else 0 (the plain sums). Two bounds follow. (1) Any c in [lo, hi] has (c - mean)^2 <= m2, so
     * sum^2/k = k (mean - c)^2 <= k m2 and the subtraction loses at most a few bits of k (the two-pass form's
     * bound), and sum d^2 <= (k + 1) m2 bounds the d's rounding the same way: m2 within about 3 k^2 u m2 of the
     * exact one. (2) c lies between 0 and every x, so |d| <= |x| and k |c| <= sum|x|: the sum's rounding stays
     * within the plain sum's bound, serial_depth u sum|x|, though for bfloat16 x - c rounds where the exponents lie
     * more than 45 apart. (c = lo, the least element, met (1) but not (2): the sum of the d's of {-2^56, 7.97, 23.9,
     * 23.9, 40, 39.75 x 3} grew to k 2^56 and lost every small term; tests/cli/bf16_wide_batch.sh.) For float16
     * every d and their sum are exact (multiples of 2^-24 below 2^22), so k c + sum d is correctly rounded.
     * A NaN half is replaced by c on the word before the conversion, so its d is 0 and it adds nothing to either
     * sum. Where c would be infinite (+inf where every element is, -inf where every one is) the shift is 0: the
     * sums are then inf or NaN as the plain sums, the mean +-inf or NaN and m2 NaN, as the CPU's Welford makes
     * them. One conversion to double an element, as PROPAGATE's, where the two-pass form (m2 about the mean by a
     * second conversion) took 1.09-1.17x PROPAGATE's time (H100, 2^28: bench/results/h100-2026-12-06c/), and the
     * least element's shift with bfloat16's plain sum added beside 1.05x and 1.12x (h100-2026-12-06d/). The shift
     * nearest 0 costs a few integer operations a batch and no plain sum: bfloat16's batch is float16's instruction
     * for instruction, 0.96-0.98x PROPAGATE's time for both types without NaN and with 1% (h100-2026-12-07/).
     * ptxas -v: 57 registers, no spills (both types' OMIT stats kernels). */
    template <int N> __device__ static void omit_batch16(Thread &t, const uint4 *v)
    {
        constexpr bool kF16 = std::is_same<In, dr_f16_t>::value;
        constexpr int kW = 4 * N, kK = 2 * kW;
        static_assert(kW <= 16, "the flags' shifts keep the words' bits apart");
        constexpr uint32_t kCarry = kF16 ? 0x03ff03ffu : 0x007f007fu, kInf = kF16 ? 0x7c00u : 0x7f80u;
        uint32_t w[kW];
        memcpy(w, v, sizeof w);
        auto half = [](uint32_t word, int h) {
            const uint16_t b = (uint16_t)(word >> (16 * h));
            if constexpr (kF16) return dr_f16_to_f32(b);
            else return dr_bf16_to_f32(b);
        };
        auto min2 = [](uint32_t a, uint32_t b) {
            if constexpr (kF16) return f16x2_min(a, b);
            else return bf16x2_min(a, b);
        };
        auto max2 = [](uint32_t a, uint32_t b) {
            if constexpr (kF16) return f16x2_max(a, b);
            else return bf16x2_max(a, b);
        };
        uint32_t lo2 = w[0], hi2 = w[0];
#pragma unroll
        for (int i = 1; i < kW; ++i) lo2 = min2(lo2, w[i]), hi2 = max2(hi2, w[i]);
        lo2 = min2(lo2, __byte_perm(lo2, 0, 0x1032)); /* both halves the least (NaN only where every one is) */
        hi2 = max2(hi2, __byte_perm(hi2, 0, 0x1032));
        t.lo = omit_min(t.lo, half(lo2, 0)); /* the thread's running values are never NaN */
        t.hi = omit_max(t.hi, half(hi2, 0));
        /* the shift c in both halves: the point of [lo, hi] nearest 0 (lo where lo's sign bit is clear, lo >= +0;
         * hi where hi's is set, hi <= -0; else 0), and 0 where that is infinite */
        const uint32_t near0 = !(lo2 & 0x8000u) ? lo2 : (hi2 & 0x8000u) ? hi2 : 0u;
        const uint32_t cw = (near0 & 0x7fffu) < kInf ? near0 : 0u;
        const double c = (double)half(cw, 0);
        uint32_t flags = 0;
        double s = 0, q = 0;
#pragma unroll
        for (int i = 0; i < kW; ++i) {
            const uint32_t nanw = ((w[i] & 0x7fff7fffu) + kCarry) & 0x80008000u;
            flags |= nanw >> i; /* word i's halves at bits 15 - i and 31 - i */
            const uint32_t nan_mask = (nanw >> 15) * 0xffffu; /* each NaN half's bits all set */
            const uint32_t x2 = (w[i] & ~nan_mask) | (cw & nan_mask);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const double x = (double)half(x2, h), d = x - c;
                s += d;
                q = fma(d, d, q);
            }
        }
        const unsigned nn = __popc(flags), k = kK - nn;
        t.nans += nn;
        if (k == 0) return;
        const double sk = k == kK ? s * (1.0 / kK) : s / k;
        double qb = q - s * sk;
        qb = qb < 0 ? 0.0 : qb; /* rounding below 0; a NaN stays */
        t.fsum += fma((double)k, c, s);
        merge(t, k, c + sk, qb);
    }
#else
    static constexpr bool kPacked16 = false;
    template <int N> __device__ static void omit_batch16(Thread &, const uint4 *) {}
#endif
    __device__ static void vector(Thread &t, const uint4 &v, size_t)
    {
        if constexpr (kPacked16) {
            omit_batch16<1>(t, &v);
            return;
        } else if constexpr (kOmit) {
            omit_batch<1>(t, &v);
            return;
        }
        if constexpr (is_narrow_int<In>::value) {
            long long s = 0, q = 0;
            narrow_sums(t, v, s, q);
            t.isum += (isum_t)s;
            merge(t, kVec, (double)s / kVec, (double)((long long)kVec * q - s * s) / kVec);
        } else {
            const batch b = wide_batch(t, v);
            merge(t, kVec, b.mean, b.m2);
        }
    }
    /* A round of kUnroll vectors as one batch: one merge (one division) a round instead of one a vector. */
    __device__ static void round(Thread &t, const uint4 (&v)[kUnroll], size_t, size_t)
    {
        static_assert(kUnroll == 4, "the pairs below");
        constexpr long long kK = (long long)kUnroll * kVec;
        if constexpr (kOmit) { /* omit_batch's batches of at most 16 elements (the 16-bit floats' round in two); the
                                  packed one takes the round whole */
            constexpr int kPer = kVec >= 8 && !kPacked16 ? 2 : kUnroll;
#pragma unroll
            for (int u = 0; u < kUnroll; u += kPer) {
                if constexpr (kPacked16) omit_batch16<kPer>(t, &v[u]);
                else omit_batch<kPer>(t, &v[u]);
            }
            return;
        }
        if constexpr (is_narrow_int<In>::value) {
            /* |s| < 2^21, q < 2^37, kK q - s^2 < 2^43: exact in 64 bits and in a double */
            long long s = 0, q = 0;
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) narrow_sums(t, v[u], s, q);
            t.isum += (isum_t)s;
            merge(t, (unsigned)kK, (double)s / kK, (double)(kK * q - s * s) / kK);
        } else {
            const batch b01 = pair(wide_batch(t, v[0]), wide_batch(t, v[1]), kVec);
            const batch b23 = pair(wide_batch(t, v[2]), wide_batch(t, v[3]), kVec);
            const batch b = pair(b01, b23, 2 * kVec);
            merge(t, (unsigned)kK, b.mean, b.m2);
        }
    }
    __device__ static State end(const Thread &t, const uint4 *, uint64_t)
    {
        State r;
        r.count = t.n;
        r.mean = t.mean;
        r.m2 = t.m2;
        if constexpr (kInt) {
            const unsigned __int128 v = (unsigned __int128)(__int128)t.isum; /* sign-extended for signed types */
            r.sum.i128.lo = (uint64_t)v;
            r.sum.i128.hi = (uint64_t)(v >> 64);
            if constexpr (!kSigned && sizeof(In) <= 4) r.sum.i128.hi = 0; /* an unsigned 64-bit thread sum */
        } else {
            r.sum.i128.hi = 0;
            r.sum.f64 = t.fsum;
        }
        r.min = to_scalar(t.lo);
        r.max = to_scalar(t.hi);
        if (t.n == 0) r = identity();
        return r;
    }
};

/* ---- Plans and launches ---- */

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }
uint64_t log2_ceil(uint64_t x)
{
    uint64_t lg = 0;
    while ((1ull << lg) < x) ++lg;
    return lg;
}

template <class In, class P> cudaError_t plan_fused(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)
{
    static int cached[64][11];
    size_t resident = 0;
    cudaError_t err = dr_gpu_fill_grid((const void *)fused_kernel<In, P>, 0, 1 << 30, r->device, r->block, cached,
                                       &resident);
    if (err != cudaSuccess) return err;
    const size_t per_block = (size_t)r->block * kUnroll * (16 / sizeof(In));
    size_t grid = ceil_div(r->n, per_block);
    /* A thread's integer sum is 64 bits for the 8- to 32-bit types: at most 2^32 elements a thread. */
    const size_t min_grid = ceil_div(r->n, (size_t)r->block << 32);
    if (grid > resident) grid = resident;
    if (grid < min_grid) grid = min_grid;
    if (grid < 1) grid = 1;
    if (grid > 0x7fffffff) return cudaErrorInvalidValue;
    p->passes = 1;
    p->grid[0] = grid;
    p->cluster = 0;
    p->bulk = 0;
    p->work_bytes = kPartialsOffset + align256(grid * sizeof(typename P::State));
    /* A float sum's roundings along any path: a thread's elements in sequence, the block's tree, the grid's pass. */
    const uint64_t lg_block = log2_ceil((uint64_t)r->block);
    p->serial_depth = ceil_div(r->n, grid * (size_t)r->block) + 2 + lg_block + 1;
    if (grid > 1) p->serial_depth += ceil_div(grid, (size_t)r->block) + lg_block + 1;
    return cudaSuccess;
}

template <class In, class P>
cudaError_t run_fused(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    typedef typename P::State S;
    char *work = static_cast<char *>(r->d_work);
    cudaError_t err = cudaSuccess;
    if (ev && (err = cudaEventRecord(ev[0], s)) != cudaSuccess) return err;
    fused_kernel<In, P><<<(unsigned)p->grid[0], r->block, 0, s>>>(
        static_cast<const In *>(r->d_in), r->n, r->first_index, reinterpret_cast<S *>(work + kPartialsOffset),
        reinterpret_cast<unsigned int *>(work), static_cast<S *>(r->d_result), dr_nan_out_of(r), dr_done_of(r));
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    if (ev) err = cudaEventRecord(ev[1], s);
    return err;
}

/* The one place a run-time (dtype, op, acc) becomes a policy: f.call<In, P>() for the matching row. */
template <class F> cudaError_t fused_dispatch(const dr_gpu_reduce_t *r, const F &f)
{
/* The OMIT variants are instantiated for the float rows only (integers have no NaN). */
#define DR_FUSED_CALL(DT, POLICY, ...)                                                                         \
    {                                                                                                          \
        if constexpr (dr_is_float_in<dr_in_##DT>::value)                                                       \
            if (r->nan_omit) return f.template call<dr_in_##DT, POLICY<__VA_ARGS__, true>>();                  \
        return f.template call<dr_in_##DT, POLICY<__VA_ARGS__, false>>();                                      \
    }
#define X(DT, OP, op_, ACC, acc_)                                                                              \
    if (r->dtype == DR_##DT && r->op == DR_##OP && r->acc == DR_ACC_##ACC)                                     \
        DR_FUSED_CALL(DT, arg_policy, dr_in_##DT, DR_ACC_##ACC, DR_##OP == DR_ARGMAX)
    DR_ARG_TABLE
#undef X
#define X(DT, OP, op_, ACC, acc_)                                                                              \
    if (r->dtype == DR_##DT && r->op == DR_##OP && r->acc == DR_ACC_##ACC)                                     \
        DR_FUSED_CALL(DT, stats_policy, dr_in_##DT, DR_ACC_##ACC)
    DR_STATS_TABLE
#undef X
#undef DR_FUSED_CALL
    return cudaErrorInvalidValue;
}

struct plan_fn {
    const dr_gpu_reduce_t *r;
    dr_gpu_plan_t *p;
    template <class In, class P> cudaError_t call() const { return plan_fused<In, P>(r, p); }
};
struct run_fn {
    const dr_gpu_reduce_t *r;
    const dr_gpu_plan_t *p;
    cudaStream_t s;
    cudaEvent_t *ev;
    template <class In, class P> cudaError_t call() const { return run_fused<In, P>(r, p, s, ev); }
};

} // namespace

cudaError_t dr_gpu_fused_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p) { return fused_dispatch(r, plan_fn{r, p}); }

cudaError_t dr_gpu_fused_run(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    return fused_dispatch(r, run_fn{r, p, s, ev});
}
