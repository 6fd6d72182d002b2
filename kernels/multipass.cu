/* The production kernel: multi-pass warp-shuffle reduction, both passes in one launch.
 *
 * Pass 1 runs a grid sized to fill the device once (SM count x resident blocks per SM from the occupancy API, fewer
 * when n is small). Each thread walks the array with a grid-stride loop of 16-byte vector loads, four in flight,
 * accumulating in registers; elements before the first 16-byte boundary (a misaligned start) and after the last
 * whole vector are read one by one. The block then reduces with warp shuffles and one shared-memory exchange, and
 * writes one partial. Pass 2 reduces the partials: the last block to finish (counted with an atomic after a memory
 * release/acquire, the threadFenceReduction pattern) does it, in a fixed order whichever block that is, so results
 * are deterministic. One launch instead of two saves a launch gap (~5 us on an H200), which is most of the time
 * for small inputs. When one block suffices it writes the result directly; when a few blocks do (at most 8 blocks
 * of 2 rounds each) and the GPU is a Hopper, they run as one thread-block cluster and meet in distributed shared
 * memory instead (multipass_cluster_kernel). On a Hopper the single block is that kernel too, launched without a
 * cluster, for its one-round path (accumulate_one_round).
 *
 * Large inputs on Hopper (from DR_GPU_BULK_FROM_BYTES, about twice the L2) stream through the copy engine of each SM
 * instead of through registers (multipass_bulk_kernel): one thread per block issues bulk copies (cp.async.bulk,
 * the TMA's 1-D form) of 32 KiB chunks into a ring of shared-memory stages, and the block reduces each stage from
 * shared memory while the next copies are in flight. The memory system then sees a few large requests per SM instead
 * of thousands of 16-byte loads, which read 1.2-1.6% faster than the register loop and about 1% faster than CUB at
 * 2^31 elements on two of three H200s measured (95.6-98% of 4.8 TB/s; on the third, 0.8% slower than CUB's float
 * kernels): docs/performance.md, bench/variants.cu.
 *
 * Over the teaching levels (kernels/level_*.cu) it fixes what costs bandwidth: one pass over the data with no
 * shared-memory tree per element, wide loads, enough bytes in flight per SM, and no launch per 2*block elements.
 * Workspace: the done-counter (zero before first use; the last block returns it to zero) and one partial per
 * block. */
#include <cooperative_groups.h>
#include <type_traits>
#include <cuda/atomic>

#include "common.cuh"
#include "internal.h"

namespace {

constexpr int kUnroll = 4;            /* vector loads in flight per thread */
constexpr size_t kPartialsOffset = 256; /* workspace: the done-counter, then the partials */
constexpr size_t kClusterMax = 8;       /* blocks in one cluster (the portable maximum) */
constexpr size_t kClusterRounds = 2;    /* use a cluster while kClusterMax blocks need at most this many rounds */
/* The bulk path (from DR_GPU_BULK_FROM_BYTES). 128 KiB in flight per SM (2 blocks x 2 stages x 32 KiB) was the
 * fastest of the shapes tried on the H200 (bench/variants.cu: 8-32 KiB stages, 2-8 stages, 1-3 blocks per SM). */
constexpr unsigned kBulkStageBytes = DR_GPU_BULK_CHUNK_BYTES; /* one bulk copy */
constexpr int kBulkStages = 2;                                /* copies in flight per block */
constexpr int kBulkBlocksPerSm = 2;                           /* at most; fewer if the occupancy API says so */

namespace cg = cooperative_groups;

/* a op b on two 16-bit lanes at once (sm_90's min/max.{s,u}16x2). */
template <class In, class Op> __device__ __forceinline__ uint32_t lanes16(uint32_t a, uint32_t b)
{
    uint32_t d;
    if constexpr (Op::id == DR_MIN && std::is_signed<In>::value) asm("min.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    else if constexpr (Op::id == DR_MIN) asm("min.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    else if constexpr (std::is_signed<In>::value) asm("max.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    else asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

/* Bytes 0 and 2 (odd = 0) or 1 and 3 (odd = 1) of w in the two 16-bit lanes, sign- or zero-extended as In. */
template <class In> __device__ __forceinline__ uint32_t spread_bytes(uint32_t w, int odd)
{
    if constexpr (std::is_signed<In>::value) {
        uint32_t d; /* prmt: a selector nibble with its top bit set replicates that byte's sign */
        if (odd) asm("prmt.b32 %0, %1, %2, 0xB391;" : "=r"(d) : "r"(w), "r"(0u));
        else asm("prmt.b32 %0, %1, %2, 0xA280;" : "=r"(d) : "r"(w), "r"(0u));
        return d;
    } else {
        return (odd ? w >> 8 : w) & 0x00ff00ffu;
    }
}

/* The product of one 32-bit word's elements (four bytes or two 16-bit halves), exactly: |product| <= 2^28 (int8),
 * 2^30 (int16), < 2^32 unsigned, so it fits the word's own width and signedness without wrapping. */
template <class In> __device__ __forceinline__ typename std::conditional<std::is_signed<In>::value, int32_t, uint32_t>::type
word_product(uint32_t w)
{
    if constexpr (std::is_signed<In>::value && sizeof(In) == 1) {
        int32_t b0, b1, b2; /* prmt: each element sign-extended to 32 bits in one instruction */
        asm("prmt.b32 %0, %1, %2, 0x8880;" : "=r"(b0) : "r"(w), "r"(0u));
        asm("prmt.b32 %0, %1, %2, 0x9991;" : "=r"(b1) : "r"(w), "r"(0u));
        asm("prmt.b32 %0, %1, %2, 0xAAA2;" : "=r"(b2) : "r"(w), "r"(0u));
        return b0 * b1 * b2 * ((int32_t)w >> 24);
    } else if constexpr (sizeof(In) == 1) {
        return (w & 0xffu) * __byte_perm(w, 0, 0x4441) * __byte_perm(w, 0, 0x4442) * (w >> 24);
    } else if constexpr (std::is_signed<In>::value) {
        return (int32_t)(int16_t)(w & 0xffffu) * ((int32_t)w >> 16);
    } else {
        return (w & 0xffffu) * (w >> 16);
    }
}

/* The 8- and 16-bit integers a vector at a time. Widened element by element they cost more issue slots than the
 * memory leaves them (an int8 read at 4.6 TB/s is 4.6 G elements a millisecond): int8 sum read at 75% of int32's.
 * The same integers, in fewer instructions:
 *   - sum: dp4a (dp2a) adds four (two) elements to a 32-bit partial in one instruction, exactly (a vector's sum is
 *     below 2^12, 2^19 in magnitude), then one add in the accumulator;
 *   - and, or, xor: the four words first (each bit on its own), then the word's lanes;
 *   - min, max (sm_90): 16-bit lanes two at a time (min/max.{s,u}16x2), bytes spread into 16-bit lanes first;
 *   - prod (into 64 bits, modulo 2^64): each word's elements multiplied exactly in 32 bits (word_product), two words'
 *     products exactly into 64 bits (|product| <= 2^60), then two 64-bit multiplies where there were 16 (int8 prod
 *     read at 55% of int32 sum's bandwidth). The accumulator's product is the ring's, modulo 2^64: commutative and
 *     associative, so the grouping gives the same integer as the element-by-element loop.
 * Returns false where it does not apply (min/max before sm_90): the caller goes element by element. */
template <class In, class Acc, class Op> __device__ __forceinline__ bool combine_small_int(Acc &acc, const uint4 &v)
{
    constexpr bool kSigned = std::is_signed<In>::value;
    if constexpr (Op::id == DR_SUM) {
        if constexpr (sizeof(In) == 1 && kSigned) {
            int s = __dp4a((int)v.x, 0x01010101, 0);
            s = __dp4a((int)v.y, 0x01010101, s), s = __dp4a((int)v.z, 0x01010101, s), s = __dp4a((int)v.w, 0x01010101, s);
            acc = Op::combine(acc, (Acc)s);
        } else if constexpr (sizeof(In) == 1) {
            unsigned s = __dp4a(v.x, 0x01010101u, 0u);
            s = __dp4a(v.y, 0x01010101u, s), s = __dp4a(v.z, 0x01010101u, s), s = __dp4a(v.w, 0x01010101u, s);
            acc = Op::combine(acc, (Acc)s);
        } else if constexpr (kSigned) {
            int s = __dp2a_lo((int)v.x, 0x0101, 0);
            s = __dp2a_lo((int)v.y, 0x0101, s), s = __dp2a_lo((int)v.z, 0x0101, s), s = __dp2a_lo((int)v.w, 0x0101, s);
            acc = Op::combine(acc, (Acc)s);
        } else {
            unsigned s = __dp2a_lo(v.x, 0x0101u, 0u);
            s = __dp2a_lo(v.y, 0x0101u, s), s = __dp2a_lo(v.z, 0x0101u, s), s = __dp2a_lo(v.w, 0x0101u, s);
            acc = Op::combine(acc, (Acc)s);
        }
        return true;
    } else if constexpr (Op::id == DR_BAND || Op::id == DR_BOR || Op::id == DR_BXOR) {
        uint32_t w = Op::combine(Op::combine(v.x, v.y), Op::combine(v.z, v.w));
        w = Op::combine(w, w >> 16);
        if constexpr (sizeof(In) == 1) w = Op::combine(w, w >> 8);
        const In e = (In)(sizeof(In) == 1 ? w & 0xffu : w & 0xffffu);
        acc = Op::combine(acc, (Acc)e);
        return true;
    } else if constexpr (Op::id == DR_MIN || Op::id == DR_MAX) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        uint32_t m;
        if constexpr (sizeof(In) == 2) {
            m = lanes16<In, Op>(lanes16<In, Op>(v.x, v.y), lanes16<In, Op>(v.z, v.w));
        } else {
            const uint32_t a = lanes16<In, Op>(spread_bytes<In>(v.x, 0), spread_bytes<In>(v.x, 1));
            const uint32_t b = lanes16<In, Op>(spread_bytes<In>(v.y, 0), spread_bytes<In>(v.y, 1));
            const uint32_t c = lanes16<In, Op>(spread_bytes<In>(v.z, 0), spread_bytes<In>(v.z, 1));
            const uint32_t d = lanes16<In, Op>(spread_bytes<In>(v.w, 0), spread_bytes<In>(v.w, 1));
            m = lanes16<In, Op>(lanes16<In, Op>(a, b), lanes16<In, Op>(c, d));
        }
        /* each lane holds an element's value (bytes sign- or zero-extended to 16 bits) */
        typedef typename std::conditional<kSigned, int16_t, uint16_t>::type lane_t;
        acc = Op::combine(acc, (Acc)(lane_t)(m & 0xffffu));
        acc = Op::combine(acc, (Acc)(lane_t)(m >> 16));
        return true;
#else
        return false;
#endif
    } else if constexpr (Op::id == DR_PROD) {
        static_assert(sizeof(Acc) == 8, "8- and 16-bit products accumulate in 64 bits (table.h)");
        typedef typename std::conditional<kSigned, int64_t, uint64_t>::type wide_t;
        const wide_t xy = (wide_t)word_product<In>(v.x) * word_product<In>(v.y); /* mul.wide: exact */
        const wide_t zw = (wide_t)word_product<In>(v.z) * word_product<In>(v.w);
        acc = Op::combine(acc, Op::combine((Acc)xy, (Acc)zw));
        return true;
    } else {
        return false;
    }
}

template <class In, class Acc, class Op, bool kOmit>
__device__ __forceinline__ Acc combine_vector(Acc acc, const uint4 &v, unsigned &nans)
{
    if constexpr (std::is_integral<In>::value && sizeof(In) <= 2)
        if (combine_small_int<In, Acc, Op>(acc, v)) return acc;
    constexpr int kVec = 16 / sizeof(In);
    In e[kVec];
    memcpy(e, &v, 16);
#pragma unroll
    for (int j = 0; j < kVec; ++j) acc = Op::combine(acc, dr_nan_load<kOmit, Op::id>(dr_widen<Acc>(e[j]), nans));
    return acc;
}

/* One element (a head or a tail). */
template <class In, class Acc, class Op, bool kOmit>
__device__ __forceinline__ Acc combine_element(Acc acc, In x, unsigned &nans)
{
    return Op::combine(acc, dr_nan_load<kOmit, Op::id>(dr_widen<Acc>(x), nans));
}

/* This thread's share of the grid-stride walk over g_in[0..n), leaving out the first `skip_vec` vectors (the bulk
 * kernel's): head, 16-byte vectors (kUnroll in flight), tail. */
template <class In, class Acc, class Op, bool kOmit>
__device__ __forceinline__ Acc accumulate(const In *__restrict__ g_in, size_t n, size_t skip_vec, Acc acc,
                                          unsigned &nans)
{
    constexpr size_t kVec = 16 / sizeof(In);
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    const dr_vector_split<In> split(g_in, n);

    /* Head: elements before the first 16-byte boundary (fewer than kVec <= 32 <= nthreads). */
    if (tid < split.head) acc = combine_element<In, Acc, Op, kOmit>(acc, g_in[tid], nans);

    const uint4 *g_vec = reinterpret_cast<const uint4 *>(g_in + split.head);
    const size_t nvec = split.nvec;
    size_t i = skip_vec + tid;
    for (; i + (kUnroll - 1) * nthreads < nvec; i += kUnroll * nthreads) {
        uint4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(g_vec + i + u * nthreads);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc = combine_vector<In, Acc, Op, kOmit>(acc, v[u], nans);
    }
    for (; i < nvec; i += nthreads) acc = combine_vector<In, Acc, Op, kOmit>(acc, __ldg(g_vec + i), nans);

    /* Tail: fewer than kVec elements after the last whole vector. */
    const size_t t = split.head + nvec * kVec + tid;
    if (t < n) acc = combine_element<In, Acc, Op, kOmit>(acc, g_in[t], nans);
    return acc;
}

/* Inputs of at most one round (kUnroll vectors per thread of the grid): accumulate's reads in 32-bit arithmetic,
 * the round's kUnroll loads predicated and issued together (accumulate's remainder loop would issue a partial round
 * one load at a time), so the only memory round trip starts sooner and fewer instructions stand between it and the
 * result. At these sizes a reduction is latency, not bandwidth. Only in the cluster kernel, whose grid is at most
 * kClusterMax blocks: the extra registers of this path would cost multipass_kernel its occupancy. */
template <class In, class Acc, class Op, bool kOmit>
__device__ __forceinline__ Acc accumulate_one_round(const In *__restrict__ g_in, unsigned n, Acc acc, unsigned &nans)
{
    constexpr unsigned kVec = 16 / sizeof(In);
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, nthreads = gridDim.x * blockDim.x;
    const unsigned head = min((unsigned)(((16 - ((uintptr_t)g_in & 15)) & 15) / sizeof(In)), n);
    const unsigned nvec = (n - head) / kVec;
    const uint4 *g_vec = reinterpret_cast<const uint4 *>(g_in + head);
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
        if (tid + u * nthreads < nvec) v[u] = __ldg(g_vec + tid + u * nthreads);
    if (tid < head) acc = combine_element<In, Acc, Op, kOmit>(acc, g_in[tid], nans);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
        if (tid + u * nthreads < nvec) acc = combine_vector<In, Acc, Op, kOmit>(acc, v[u], nans);
    const unsigned t = head + nvec * kVec + tid;
    if (t < n) acc = combine_element<In, Acc, Op, kOmit>(acc, g_in[t], nans);
    return acc;
}

/* Every block's end: reduce the block, then pass 2 in whichever block finishes last (or, for a grid of one block,
 * write the result directly). The counter's release/acquire orders each block's partial before its count and the
 * counts before the last block's reads (no separate fences: each costs an L2 round trip). */
template <class Acc, class Op, bool kOmit>
__device__ __forceinline__ void finish(Acc acc, unsigned nans, Acc *g_partials, unsigned int *g_done, Acc *g_result,
                                       dr_nan_out_t nan_out, dr_done_t done)
{
    dr_nan_flush<kOmit>(nans, nan_out.counter);
    acc = dr_block_reduce<Op>(acc);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) {
            *g_result = acc;
            dr_nan_store<kOmit>(nan_out.counter, nan_out.at);
            dr_signal_done(done);
        }
        return;
    }
    __shared__ bool s_last;
    if (threadIdx.x == 0) {
        g_partials[blockIdx.x] = acc;
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> done(*g_done);
        s_last = done.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
        if (s_last) done.store(0, cuda::memory_order_relaxed); /* ready for the next launch */
    }
    __syncthreads();
    if (!s_last) return;
    const volatile Acc *partials = g_partials; /* written by other SMs: bypass this SM's L1 */
    Acc v = dr_identity<Op, Acc>();
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) v = Op::combine(v, (Acc)partials[b]);
    v = dr_block_reduce<Op>(v);
    if (threadIdx.x == 0) {
        *g_result = v;
        dr_nan_store<kOmit>(nan_out.counter, nan_out.at);
        dr_signal_done(done);
    }
}

template <class In, class Acc, class Op, bool kOmit>
__global__ void __launch_bounds__(1024)
    multipass_kernel(const In *__restrict__ g_in, size_t n, Acc *g_partials, unsigned int *g_done, Acc *g_result,
                     dr_nan_out_t nan_out, dr_done_t done)
{
    unsigned nans = 0;
    const Acc acc = accumulate<In, Acc, Op, kOmit>(g_in, n, 0, dr_identity<Op, Acc>(), nans);
    finish<Acc, Op, kOmit>(acc, nans, g_partials, g_done, g_result, nan_out, done);
}

/* Large inputs on Hopper: chunk c (kBulkStageBytes of whole vectors) belongs to block c % gridDim.x, so each block's
 * chunks and each thread's positions in them are fixed by the grid (deterministic results). Thread 0 keeps
 * kBulkStages bulk copies in flight, each completing on its stage's mbarrier (transaction count = bytes); every
 * thread waits on the mbarrier, reduces its vectors of the stage, and the block's barrier then frees the stage for
 * the next copy. What does not fill a whole chunk (the last vectors, the head and tail elements) goes through the
 * register walk. */
template <class In, class Acc, class Op, bool kOmit>
__global__ void __launch_bounds__(1024)
    multipass_bulk_kernel(const In *__restrict__ g_in, size_t n, Acc *g_partials, unsigned int *g_done, Acc *g_result,
                          dr_nan_out_t nan_out, dr_done_t done)
{
    Acc acc = dr_identity<Op, Acc>();
    unsigned nans = 0;
    size_t bulk_vec = 0; /* vectors the bulk copies cover */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) unsigned char s_stage[]; /* kBulkStages x kBulkStageBytes */
    __shared__ __align__(8) uint64_t s_full[kBulkStages];
    const dr_vector_split<In> split(g_in, n);
    const size_t nchunks = split.nvec * 16 / kBulkStageBytes;
    bulk_vec = nchunks * (kBulkStageBytes / 16);
    const char *src = reinterpret_cast<const char *>(g_in + split.head);
    const unsigned stage0 = (unsigned)__cvta_generic_to_shared(s_stage);
    const unsigned full0 = (unsigned)__cvta_generic_to_shared(s_full);
    auto issue = [&](size_t chunk, int stage) { /* thread 0 only */
        const unsigned bar = full0 + 8u * stage;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kBulkStageBytes)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         stage0 + stage * kBulkStageBytes),
                     "l"(src + chunk * kBulkStageBytes), "r"(kBulkStageBytes), "r"(bar)
                     : "memory");
    };
    if (threadIdx.x == 0) {
        for (int stage = 0; stage < kBulkStages; ++stage)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full0 + 8u * stage));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); /* visible to the copy engine */
        for (int stage = 0; stage < kBulkStages; ++stage) {
            const size_t chunk = blockIdx.x + (size_t)stage * gridDim.x;
            if (chunk < nchunks) issue(chunk, stage);
        }
    }
    __syncthreads(); /* the mbarriers are initialised before anyone waits on them */
    unsigned parity = 0;
    int stage = 0;
    for (size_t chunk = blockIdx.x; chunk < nchunks; chunk += gridDim.x) {
        const unsigned bar = full0 + 8u * stage;
        unsigned ready = 0;
        while (!ready)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(ready)
                         : "r"(bar), "r"(parity)
                         : "memory");
        const uint4 *v = reinterpret_cast<const uint4 *>(s_stage + stage * kBulkStageBytes);
#pragma unroll 8
        for (unsigned k = threadIdx.x; k < kBulkStageBytes / 16; k += blockDim.x)
            acc = combine_vector<In, Acc, Op, kOmit>(acc, v[k], nans);
        __syncthreads(); /* every thread is done with this stage before the copy engine refills it */
        const size_t next = chunk + (size_t)kBulkStages * gridDim.x;
        if (threadIdx.x == 0 && next < nchunks) issue(next, stage);
        if (++stage == kBulkStages) stage = 0, parity ^= 1;
    }
#endif /* never launched below sm_90: plan_multipass checks; there everything takes the register walk */
    acc = accumulate<In, Acc, Op, kOmit>(g_in, n, bulk_vec, acc, nans);
    finish<Acc, Op, kOmit>(acc, nans, g_partials, g_done, g_result, nan_out, done);
}

/* Small inputs on Hopper: the grid is one thread-block cluster (at most kClusterMax blocks). The blocks meet at the
 * cluster barrier and block 0 reads the others' partials straight from their shared memory (distributed shared
 * memory): no global partials, no atomic, no L2 round trips, which is most of the time of a small reduction. */
template <class In, class Acc, class Op, bool kOmit>
__global__ void __launch_bounds__(1024)
    multipass_cluster_kernel(const In *__restrict__ g_in, size_t n, Acc *g_result, dr_nan_out_t nan_out,
                             dr_done_t done)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const bool one_round = n <= (size_t)gridDim.x * blockDim.x * kUnroll * (16 / sizeof(In));
    unsigned nans = 0;
    Acc acc = one_round ? accumulate_one_round<In, Acc, Op, kOmit>(g_in, (unsigned)n, dr_identity<Op, Acc>(), nans)
                        : accumulate<In, Acc, Op, kOmit>(g_in, n, 0, dr_identity<Op, Acc>(), nans);
    dr_nan_flush<kOmit>(nans, nan_out.counter);
    acc = dr_block_reduce<Op>(acc);
    if (gridDim.x == 1) { /* launched without a cluster: the block is the grid */
        if (threadIdx.x == 0) {
            *g_result = acc;
            dr_nan_store<kOmit>(nan_out.counter, nan_out.at);
            dr_signal_done(done);
        }
        return;
    }
    __shared__ Acc s_partial;
    if (threadIdx.x == 0) s_partial = acc;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x < 32) { /* the whole first warp: full-mask shuffles */
        Acc v = threadIdx.x < cluster.num_blocks() ? *cluster.map_shared_rank(&s_partial, threadIdx.x)
                                                   : dr_identity<Op, Acc>();
        v = dr_warp_reduce<Op>(v);
        if (threadIdx.x == 0) {
            *g_result = v;
            dr_nan_store<kOmit>(nan_out.counter, nan_out.at); /* the cluster barrier ordered every block's flush */
            dr_signal_done(done);
        }
    }
    cluster.sync(); /* every block's shared memory must outlive block 0's reads */
#else
    (void)g_in, (void)n, (void)g_result, (void)nan_out, (void)done; /* never launched below sm_90 */
#endif
}

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }
uint64_t log2_ceil(uint64_t x)
{
    uint64_t lg = 0;
    while ((1ull << lg) < x) ++lg;
    return lg;
}

/* The register kernel's full grid, cached per (row, device, block). */
template <class In, class Acc, class Op, bool kOmit> cudaError_t resident_blocks(int device, int block, size_t *out)
{
    static int cached[64][11];
    return dr_gpu_fill_grid((const void *)multipass_kernel<In, Acc, Op, kOmit>, 0, 1 << 30, device, block, cached,
                            out);
}

/* The bulk kernel's: its stages in dynamic shared memory, kBulkBlocksPerSm at most. */
template <class In, class Acc, class Op, bool kOmit>
cudaError_t bulk_resident_blocks(int device, int block, size_t *out)
{
    static int cached[64][11];
    return dr_gpu_fill_grid((const void *)multipass_bulk_kernel<In, Acc, Op, kOmit>,
                            (size_t)kBulkStages * kBulkStageBytes, kBulkBlocksPerSm, device, block, cached, out);
}

/* Compiled like every kernel in this file: its attributes say which code of this file a device runs. */
__global__ void arch_probe() {}

/* The bulk plan: one block per kBulkStageBytes of input up to a full grid. */
template <class In, class Acc, class Op, bool kOmit> cudaError_t plan_bulk(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)
{
    size_t resident = 0;
    cudaError_t err = bulk_resident_blocks<In, Acc, Op, kOmit>(r->device, r->block, &resident);
    if (err != cudaSuccess) return err;
    const size_t bytes = r->n * sizeof(In), kVec = 16 / sizeof(In);
    size_t grid = ceil_div(bytes, kBulkStageBytes);
    if (grid > resident) grid = resident;
    if (grid < 1) grid = 1;
    p->passes = 1;
    p->grid[0] = grid;
    p->cluster = 0;
    p->bulk = 1;
    p->work_bytes = kPartialsOffset + align256(grid * sizeof(Acc));
    /* Per thread: its vectors of its block's chunks, then the register walk over what no chunk covers (fewer
     * vectors than one chunk, plus head and tail), then the block tree; pass 2 over the grid. An upper bound. */
    const size_t chunks = bytes / kBulkStageBytes, rest = kBulkStageBytes / 16 + 1;
    const uint64_t lg_block = log2_ceil((uint64_t)r->block);
    p->serial_depth = ceil_div(chunks, grid) * ceil_div(kBulkStageBytes / 16, (size_t)r->block) * kVec +
                      ceil_div(rest, grid * (size_t)r->block) * kVec + 2 + lg_block + 1;
    if (grid > 1) p->serial_depth += ceil_div(grid, (size_t)r->block) + lg_block + 1;
    return cudaSuccess;
}

template <class In, class Acc, class Op, bool kOmit>
cudaError_t plan_multipass(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)
{
    cudaError_t err = cudaSuccess;
    const size_t bulk_from = r->bulk_from_bytes ? r->bulk_from_bytes : DR_GPU_BULK_FROM_BYTES;
    if (r->n * sizeof(In) >= bulk_from) {
        int hopper = 0;
        if ((err = dr_gpu_hopper_paths(r->device, &hopper)) != cudaSuccess) return err;
        if (hopper) return plan_bulk<In, Acc, Op, kOmit>(r, p);
    }
    size_t resident = 0;
    if ((err = resident_blocks<In, Acc, Op, kOmit>(r->device, r->block, &resident)) != cudaSuccess) return err;
    /* Each thread should get at least one full round of kUnroll vectors before another block is worth it. */
    const size_t per_block = (size_t)r->block * kUnroll * (16 / sizeof(In));
    size_t grid = ceil_div(r->n, per_block);
    p->cluster = 0;
    p->bulk = 0;
    if (grid <= kClusterMax * kClusterRounds) { /* a single block too: the cluster kernel's one-round path */
        int cluster_ok = 0;
        if ((err = dr_gpu_hopper_paths(r->device, &cluster_ok)) != cudaSuccess) return err;
        if (cluster_ok) {
            p->cluster = 1;
            if (grid > kClusterMax) grid = kClusterMax;
        }
    }
    if (grid > resident) grid = resident;
    if (grid < 1) grid = 1;
    p->passes = 1;
    p->grid[0] = grid;
    p->work_bytes = kPartialsOffset + align256(grid * sizeof(Acc));
    /* Per thread: head + vector elements + tail in sequence, then the block tree; pass 2 likewise over grid. */
    const uint64_t lg_block = log2_ceil((uint64_t)r->block);
    p->serial_depth = ceil_div(r->n, grid * (size_t)r->block) + 2 + lg_block + 1;
    if (grid > 1) p->serial_depth += ceil_div(grid, (size_t)r->block) + lg_block + 1;
    return cudaSuccess;
}

template <class In, class Acc, class Op, bool kOmit>
cudaError_t run_multipass(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    char *work = static_cast<char *>(r->d_work);
    cudaError_t err = cudaSuccess;
    if (ev && (err = cudaEventRecord(ev[0], s)) != cudaSuccess) return err;
    const In *in = static_cast<const In *>(r->d_in);
    Acc *result = static_cast<Acc *>(r->d_result);
    const dr_done_t done = dr_done_of(r);
    const dr_nan_out_t nan_out = dr_nan_out_of(r);
    if (p->cluster && p->grid[0] == 1) {
        multipass_cluster_kernel<In, Acc, Op, kOmit><<<1, r->block, 0, s>>>(in, r->n, result, nan_out, done);
    } else if (p->cluster) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)p->grid[0];
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3((unsigned)p->grid[0]);
        cfg.blockDim = dim3((unsigned)r->block);
        cfg.stream = s;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        err = cudaLaunchKernelEx(&cfg, multipass_cluster_kernel<In, Acc, Op, kOmit>, in, r->n, result, nan_out, done);
    } else if (p->bulk) {
        const size_t smem = (size_t)kBulkStages * kBulkStageBytes;
        multipass_bulk_kernel<In, Acc, Op, kOmit><<<(unsigned)p->grid[0], r->block, smem, s>>>(
            in, r->n, reinterpret_cast<Acc *>(work + kPartialsOffset), reinterpret_cast<unsigned int *>(work), result,
            nan_out, done);
    } else {
        multipass_kernel<In, Acc, Op, kOmit><<<(unsigned)p->grid[0], r->block, 0, s>>>(
            in, r->n, reinterpret_cast<Acc *>(work + kPartialsOffset), reinterpret_cast<unsigned int *>(work), result,
            nan_out, done);
    }
    if (err != cudaSuccess || (err = cudaGetLastError()) != cudaSuccess) return err;
    if (ev) err = cudaEventRecord(ev[1], s);
    return err;
}

struct plan_fn {
    const dr_gpu_reduce_t *r;
    dr_gpu_plan_t *p;
    template <class In, class Acc, class Op> cudaError_t call() const
    {
        if constexpr (dr_is_float_in<In>::value)
            if (r->nan_omit) return plan_multipass<In, Acc, Op, true>(r, p);
        return plan_multipass<In, Acc, Op, false>(r, p);
    }
};
struct run_fn {
    const dr_gpu_reduce_t *r;
    const dr_gpu_plan_t *p;
    cudaStream_t s;
    cudaEvent_t *ev;
    template <class In, class Acc, class Op> cudaError_t call() const
    {
        if constexpr (dr_is_float_in<In>::value)
            if (r->nan_omit) return run_multipass<In, Acc, Op, true>(r, p, s, ev);
        return run_multipass<In, Acc, Op, false>(r, p, s, ev);
    }
};

} // namespace

cudaError_t dr_gpu_multipass_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p) { return dr_dispatch(r, plan_fn{r, p}); }

/* ptxVersion, not binaryVersion: a binary holding only older PTX, compiled by the driver for a Hopper, reports
 * binaryVersion 90 but was compiled with __CUDA_ARCH__ < 900, where the Hopper kernels are empty. */
extern "C" cudaError_t dr_gpu_hopper_paths(int device, int *yes)
{
    static int cached[64]; /* 0 unknown, 1 yes, 2 no */
    if (device < 0 || device >= 64) return cudaErrorInvalidValue;
    if (cached[device] == 0) {
        int launch = 0;
        cudaFuncAttributes attr;
        cudaError_t err = dr_on_device(device, [&] {
            cudaError_t e = cudaDeviceGetAttribute(&launch, cudaDevAttrClusterLaunch, device);
            if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, arch_probe);
            return e;
        });
        if (err != cudaSuccess) return err;
        cached[device] = launch && attr.ptxVersion >= 90 ? 1 : 2;
    }
    *yes = cached[device] == 1;
    return cudaSuccess;
}

cudaError_t dr_gpu_multipass_run(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    return dr_dispatch(r, run_fn{r, p, s, ev});
}
