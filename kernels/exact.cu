/* The multipass kernel's exact path (acc DR_ACC_EXACT): the exact sum of every element of a float32, float64,
 * float16 or bfloat16 array, as one normalized dr_exact_t (include/dreduce/accum.h, "Exact sums"), bit-identical to
 * the host's dr_exact_zero, dr_exact_add_f64 of each element widened to float64, dr_exact_normalize.
 *
 * Why any order gives those bits: a dr_exact_t is an integer in units of 2^-1074 (digit i weighing 2^(32 i - 1074)),
 * every term is such an integer, and integer addition is associative and commutative. Normalized (digits 0..66 in
 * [0, 2^32), word 67 signed) the representation of a value is unique, and the flags are an OR. So each level below
 * may add in any order and group terms any way, and the result is the host's, provided no integer overflows: the
 * bounds below are what the kernel's correctness rests on.
 *
 * Launch: one grid sized like multipass's (the occupancy API's resident blocks, fewer for small inputs, and more if
 * a bound below needs them), each thread walking its grid-stride share of the input as multipass does (elements
 * before the first 16-byte boundary, 16-byte vectors four in flight, a tail). Three levels of accumulation:
 *
 *   1. A thread keeps a window in registers: a 160-bit two's-complement integer in five 32-bit limbs, limb j
 *      weighing 2^(32 (base + j) - 1074). An element, widened to float64, is sign * m * 2^p in units of 2^-1074 with
 *      m < 2^53 (the significand with its implicit bit) and p = max(biased exponent, 1) - 1 in 0..2045: the same
 *      decomposition as dr_exact_split_f64, whose term sits at word k = p / 32, shifted left by s = p % 32. If
 *      k is base or base + 1, the term m << (s + 32 (k - base)) < 2^116 fits limbs 0..3 and is added with one carry
 *      chain (add.cc/addc): a negative term as its complement ~M = -M - 1 with one added to a count of negative
 *      terms, `nneg`, that the flush adds back, so no conditional carry-in is needed. Otherwise (a miss) the window
 *      is flushed and rebased to k (or k - 1 when k is above the window, so a run going up keeps its lower
 *      neighbour). Zeros, infinities and NaNs add nothing: infinities and NaNs set flags, and every element's bits
 *      are ORed (sign bit flipped) into a word that says whether a term other than -0.0 was seen. A round of
 *      vectors first adds each element that fits (window_try: no flush, no atomics), then the others one by one
 *      (window_add), so the flush's code is there once a round, not once an element; the order does not matter.
 *   2. A flush adds `nneg` into the window (a 160-bit add), then adds its five limbs into the warp's 68 words in
 *      shared memory with 64-bit shared atomics (two's complement wrap makes the unsigned add a signed one): limbs
 *      0..3 as digits in [0, 2^32), limb 4 sign-extended (small: see the bounds). Each warp has its own words, so 32
 *      lanes contend at most. Every thread flushes once more when its walk ends.
 *   3. At the block's end each word of the block total is, over the block's warps, the warp word's low digit plus
 *      the carry (floor(word / 2^32)) of the warp's word below (word 67 whole): the warps' words half-normalized and
 *      summed in one step, by threads 0..67. One thread normalizes that total with dr_exact_normalize, the host's
 *      own carry chain. A grid of one block writes it to the result; otherwise it is the block's partial in the
 *      workspace, and the last block to finish (counted with an acq_rel atomic, as multipass's finish()) sums every
 *      block's partial word by word (all its threads, each taking every G-th block of one word, G = block / 68),
 *      normalizes, ORs the blocks' flags and writes the result. The done-counter goes back to zero.
 *
 * Bounds (no int64 overflows; DR_EXACT_ADDS in accum.h is the host's):
 *   - the plan gives every thread at most 2^23 + 10 elements (grid >= n / (block 2^23): a head element, 2^23
 *     elements of whole vectors plus at most one vector (8 elements) more, a tail element), so fewer than 2^24 adds
 *     and 2^24 + 1 flushes per thread, and no count is needed in the loop;
 *   - window: each add is in [-2^116, 2^116), so the window stays below 2^140 in magnitude, far inside 160 bits;
 *     nneg < 2^24 fits its 32 bits. At a flush limbs 0..3 are below 2^32 and limb 4 (the window over 2^128) at
 *     most 2^12 in magnitude;
 *   - warp word: a flush adds less than 2^32 in magnitude to each of five consecutive words, so a word takes at most
 *     32 lanes x (2^24 + 1) < 2^30 adds (DR_EXACT_ADDS) between normalizations: below 2^62 in magnitude. Word 67
 *     takes only limb 4 (base is at most 63): below 2^42;
 *   - block total: per warp, a digit below 2^32 plus a carry below 2^30 in magnitude (word 67: below 2^43), summed
 *     over at most 32 warps: below 2^48;
 *   - last block: each partial is normalized: words 0..66 digits below 2^32, word 67 at most 2^18 in magnitude (a
 *     sum of at most 2^64 float64s is below 2^1088 = 2^(2162 - 1074)); summed over fewer than 2^31 blocks (the plan
 *     refuses a larger grid): below 2^63.
 * Block and grid shapes: r->block threads (a power of two, 32..1024, so whole warps and every full-mask shuffle has
 * all 32 lanes), 544 bytes of dynamic shared memory per warp for its words (17 KiB at 1024 threads); no early
 * return before a barrier (the last-block test is uniform: it reads a shared flag after a barrier). Workspace: the
 * done-counter (zero before first use; the last block returns it to zero), then one dr_exact_t per block. No cluster
 * or bulk-copy path (yet): plans have cluster = 0 and bulk = 0. */
#include <cuda/atomic>
#include <limits.h>

#include "common.cuh"
#include "internal.h"

namespace {

constexpr int kWords = DR_EXACT_WORDS;      /* 68 words of a dr_exact_t */
constexpr int kUnroll = 4;                  /* vector loads in flight per thread, as multipass */
constexpr size_t kPartialsOffset = 256;     /* workspace: the done-counter, then the partials */
constexpr int kWalkLog2 = 23;               /* the plan: at most 2^23 + 10 elements a thread (the bounds above) */
constexpr int kRoundsPerThread = 2;         /* rounds of kUnroll vectors per thread before a second block is
                                               worth it: a first guess (a block's end costs more than multipass's),
                                               to be measured */
constexpr int kWindowBase = 31;             /* the window's first word: [2^-30, 2^34) fits without a flush */
constexpr int kPartialWords = sizeof(dr_exact_t) / 8; /* a partial's stride in 64-bit words (68 words, flags) */
static_assert(sizeof(dr_exact_t) == 8 * (kWords + 1), "dr_exact_t: 68 words, then flags and pad");

/* A thread's register window: a 160-bit two's-complement integer (l0 lowest) plus nneg, weighing
 * 2^(32 base - 1074) at l0. */
struct window_t {
    uint32_t l0, l1, l2, l3, l4;
    uint32_t nneg; /* negative terms added as ~M = -M - 1: the window's value is l + nneg */
    int base;      /* 0..63, so l4's word base + 4 is at most 67 */
};

/* l += a (160 bits, one carry chain: the carry flag does not survive between asm statements). */
__device__ __forceinline__ void add160(window_t &w, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t a4)
{
    asm("add.cc.u32 %0, %0, %5;\n\t"
        "addc.cc.u32 %1, %1, %6;\n\t"
        "addc.cc.u32 %2, %2, %7;\n\t"
        "addc.cc.u32 %3, %3, %8;\n\t"
        "addc.u32 %4, %4, %9;"
        : "+r"(w.l0), "+r"(w.l1), "+r"(w.l2), "+r"(w.l3), "+r"(w.l4)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(a4));
}

/* Add the window into the warp's words s_w (each add below 2^32 in magnitude) and empty it. */
__device__ __forceinline__ void window_flush(window_t &w, unsigned long long *s_w)
{
    add160(w, w.nneg, 0u, 0u, 0u, 0u);
    unsigned long long *d = s_w + w.base;
    if (w.l0) atomicAdd(d, (unsigned long long)w.l0);
    if (w.l1) atomicAdd(d + 1, (unsigned long long)w.l1);
    if (w.l2) atomicAdd(d + 2, (unsigned long long)w.l2);
    if (w.l3) atomicAdd(d + 3, (unsigned long long)w.l3);
    if (w.l4) atomicAdd(d + 4, (unsigned long long)(long long)(int32_t)w.l4); /* the signed top limb */
    w.l0 = w.l1 = w.l2 = w.l3 = w.l4 = w.nneg = 0;
}

/* Add x (an element widened to float64) to the window, flushing it first if x's term does not fit: the whole rule,
 * for elements read one by one and those window_try leaves. `nonneg0` collects the bits of every element with the
 * sign flipped (nonzero once a term other than -0.0 was seen), `flags` the infinities and NaNs. */
__device__ __forceinline__ void window_add(window_t &w, unsigned long long *s_w, double x, uint32_t &nonneg0,
                                           uint32_t &flags)
{
    const uint32_t lo = (uint32_t)__double2loint(x), hi = (uint32_t)__double2hiint(x);
    nonneg0 |= (hi ^ 0x80000000u) | lo;
    const uint32_t e = (hi >> 20) & 0x7ffu;
    const uint32_t mhi = (hi & 0xfffffu) | (e ? 0x100000u : 0u); /* m = mhi:lo, with the implicit bit */
    const uint32_t p = e ? e - 1 : 0;                            /* m's lowest bit, in units of 2^-1074 */
    const int k = (int)(p >> 5);
    const uint32_t s = p & 31u;
    if (e == 0x7ffu) {
        flags |= ((hi & 0xfffffu) | lo) ? DR_EXACT_NAN : (hi >> 31) ? DR_EXACT_NEG_INF : DR_EXACT_POS_INF;
        return;
    }
    if ((mhi | lo) == 0) return; /* +-0 */
    int up = k - w.base;
    if ((unsigned)up > 1u) { /* a miss */
        window_flush(w, s_w);
        w.base = k > w.base ? k - 1 : k;
        up = k - w.base;
    }
    const uint32_t t0 = lo << s, t1 = __funnelshift_l(lo, mhi, s), t2 = __funnelshift_l(mhi, 0u, s); /* m << s */
    const uint32_t neg = (uint32_t)((int32_t)hi >> 31); /* all ones for a negative term */
    const uint32_t c0 = t0 ^ neg, c1 = t1 ^ neg, c2 = t2 ^ neg; /* the term, or its complement */
    add160(w, up ? neg : c0, up ? c0 : c1, up ? c1 : c2, up ? c2 : neg, neg); /* limbs up .. up + 2, sign above */
    w.nneg -= neg; /* + 1 when negative */
}

/* The inner loop's part of window_add, with no flush: add x if its term fits the window or is zero (then it
 * adds 0, or -1 and 1 for -0.0, wherever it lands); return 1, adding nothing, if it is a miss, an infinity or a NaN,
 * which the caller then passes to window_add. */
__device__ __forceinline__ uint32_t window_try(window_t &w, double x, uint32_t &nonneg0)
{
    const uint32_t lo = (uint32_t)__double2loint(x), hi = (uint32_t)__double2hiint(x);
    nonneg0 |= (hi ^ 0x80000000u) | lo;
    const uint32_t e = (hi >> 20) & 0x7ffu;
    const uint32_t mhi = (hi & 0xfffffu) | (e ? 0x100000u : 0u);
    const uint32_t p = e ? e - 1 : 0;
    const int up = (int)(p >> 5) - w.base;
    const uint32_t s = p & 31u;
    const bool fits = e != 0x7ffu && ((unsigned)up <= 1u || ((hi & 0x7fffffffu) | lo) == 0);
    const uint32_t t0 = lo << s, t1 = __funnelshift_l(lo, mhi, s), t2 = __funnelshift_l(mhi, 0u, s);
    const uint32_t neg = (uint32_t)((int32_t)hi >> 31);
    const uint32_t c0 = t0 ^ neg, c1 = t1 ^ neg, c2 = t2 ^ neg;
    if (fits) {
        add160(w, up ? neg : c0, up ? c0 : c1, up ? c1 : c2, up ? c2 : neg, neg);
        w.nneg -= neg;
    }
    return fits ? 0u : 1u;
}

/* 32-bit word i of vectors v[0..N) (compare-and-select: an index only known at run time would put v in local
 * memory). */
template <int N> __device__ __forceinline__ uint32_t word_at(const uint4 (&v)[N], int i)
{
    uint32_t r = 0;
#pragma unroll
    for (int q = 0; q < N; ++q) {
        r = i == 4 * q ? v[q].x : r;
        r = i == 4 * q + 1 ? v[q].y : r;
        r = i == 4 * q + 2 ? v[q].z : r;
        r = i == 4 * q + 3 ? v[q].w : r;
    }
    return r;
}

/* Element b of vectors v[0..N), widened to float64. */
template <class In, int N> __device__ __forceinline__ double element_at(const uint4 (&v)[N], int b)
{
    In x;
    if constexpr (sizeof(In) == 8) {
        const uint64_t u = (uint64_t)word_at(v, 2 * b + 1) << 32 | word_at(v, 2 * b);
        memcpy(&x, &u, 8);
    } else if constexpr (sizeof(In) == 4) {
        const uint32_t u = word_at(v, b);
        memcpy(&x, &u, 4);
    } else {
        const uint16_t u = (uint16_t)(word_at(v, b >> 1) >> (16 * (b & 1)));
        memcpy(&x, &u, 2);
    }
    return dr_widen<double>(x);
}

/* Add every element of vectors v[0..N): first each element whose term fits (window_try, unrolled, no branches),
 * then the others one by one (window_add, one copy per call site: a miss flushes, and atomics are large code). The
 * order of adds does not matter. */
template <class In, int N>
__device__ __forceinline__ void add_vectors(window_t &w, unsigned long long *s_w, const uint4 (&v)[N],
                                            uint32_t &nonneg0, uint32_t &flags)
{
    constexpr int kVec = 16 / sizeof(In);
    static_assert(N * kVec <= 32, "one bit per element");
    uint32_t left = 0;
#pragma unroll
    for (int u = 0; u < N; ++u) {
        In e[kVec];
        memcpy(e, &v[u], 16);
#pragma unroll
        for (int j = 0; j < kVec; ++j) left |= window_try(w, dr_widen<double>(e[j]), nonneg0) << (u * kVec + j);
    }
    while (left) {
        const int b = __ffs(left) - 1;
        left &= left - 1;
        window_add(w, s_w, element_at<In>(v, b), nonneg0, flags);
    }
}

/* This thread's share of the grid-stride walk over g_in[0..n): head, 16-byte vectors (kUnroll in flight), tail; as
 * multipass's accumulate(). */
template <class In>
__device__ __forceinline__ void walk(const In *__restrict__ g_in, size_t n, window_t &w, unsigned long long *s_w,
                                     uint32_t &nonneg0, uint32_t &flags)
{
    constexpr size_t kVec = 16 / sizeof(In);
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    size_t head = ((16 - ((uintptr_t)g_in & 15)) & 15) / sizeof(In);
    if (head > n) head = n;
    const size_t nvec = (n - head) / kVec;

    if (tid < head) window_add(w, s_w, dr_widen<double>(g_in[tid]), nonneg0, flags); /* head < kVec <= nthreads */

    const uint4 *g_vec = reinterpret_cast<const uint4 *>(g_in + head);
    size_t i = tid;
    for (; i + (kUnroll - 1) * nthreads < nvec; i += kUnroll * nthreads) {
        uint4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(g_vec + i + u * nthreads);
        add_vectors<In>(w, s_w, v, nonneg0, flags);
    }
    for (; i < nvec; i += nthreads) {
        const uint4 v[1] = {__ldg(g_vec + i)};
        add_vectors<In>(w, s_w, v, nonneg0, flags);
    }

    const size_t t = head + nvec * kVec + tid; /* tail: fewer than kVec elements */
    if (t < n) window_add(w, s_w, dr_widen<double>(g_in[t]), nonneg0, flags);
}

/* OR over the 32 lanes of a full warp (every lane calling); every lane gets the result. */
__device__ __forceinline__ uint32_t warp_or(uint32_t v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v |= __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

/* floor(v / 2^32) and v mod 2^32, as dr_exact_normalize splits a word (no shift of a negative number). */
__device__ __forceinline__ long long digit_of(long long v) { return v & 0xffffffffll; }
__device__ __forceinline__ long long carry_of(long long v) { return (v - digit_of(v)) / 4294967296ll; }

/* Thread 0: normalize s_total (every thread's writes to it done) and store it with `flags` at g_out. */
__device__ __forceinline__ void store_normalized(dr_exact_t *s_total, uint32_t flags, dr_exact_t *g_out)
{
    dr_exact_normalize(s_total);
    for (int i = 0; i < kWords; ++i) g_out->w[i] = s_total->w[i];
    g_out->flags = flags;
    g_out->pad = 0;
}

template <class In>
__global__ void __launch_bounds__(1024)
    exact_kernel(const In *__restrict__ g_in, size_t n, dr_exact_t *g_partials, unsigned int *g_done,
                 dr_exact_t *g_result)
{
    extern __shared__ __align__(16) unsigned long long s_warp[]; /* kWords per warp; the last block's scratch */
    __shared__ dr_exact_t s_total;
    __shared__ uint32_t s_flags;
    __shared__ bool s_last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    unsigned long long *s_w = s_warp + warp * kWords;
    for (int i = lane; i < kWords; i += 32) s_w[i] = 0;
    if (threadIdx.x == 0) s_flags = 0;
    __syncthreads(); /* s_flags is zero before any lane ORs into it (the warp's own words needed only a warp) */

    window_t w = {0u, 0u, 0u, 0u, 0u, 0u, kWindowBase};
    uint32_t nonneg0 = 0, flags = 0;
    walk<In>(g_in, n, w, s_w, nonneg0, flags);
    window_flush(w, s_w);
    flags = warp_or(flags | (nonneg0 ? DR_EXACT_NOT_NEG_ZERO : 0u));
    if (lane == 0 && flags) atomicOr(&s_flags, flags);
    __syncthreads(); /* every flush and flag is in */

    /* The block total: the warps' words half-normalized (low digit plus the carry of the word below) and summed. */
    for (int t = threadIdx.x; t < kWords; t += blockDim.x) {
        long long sum = 0;
        for (int wp = 0; wp < nwarps; ++wp) {
            const long long cur = (long long)s_warp[wp * kWords + t];
            sum += t == kWords - 1 ? cur : digit_of(cur);
            if (t > 0) sum += carry_of((long long)s_warp[wp * kWords + t - 1]);
        }
        s_total.w[t] = sum;
    }
    __syncthreads();
    const uint32_t term = n ? DR_EXACT_TERM : 0u; /* every element is a term */
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) store_normalized(&s_total, s_flags | term, g_result);
        return;
    }
    if (threadIdx.x == 0) {
        store_normalized(&s_total, s_flags, g_partials + blockIdx.x);
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> done(*g_done);
        s_last = done.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
        if (s_last) done.store(0, cuda::memory_order_relaxed); /* ready for the next launch */
    }
    __syncthreads();
    if (!s_last) return; /* uniform over the block */

    /* The last block: every partial, word by word. Group g of kWords threads sums blocks g, g + G, ... */
    const volatile long long *parts = reinterpret_cast<const volatile long long *>(g_partials); /* bypass L1 */
    const int groups = (int)blockDim.x >= kWords ? (int)blockDim.x / kWords : 1;
    long long *scratch = reinterpret_cast<long long *>(s_warp); /* groups x kWords <= nwarps x kWords words */
    for (int j = threadIdx.x; j < groups * kWords; j += blockDim.x) {
        const int word = j % kWords;
        long long sum = 0;
        for (unsigned b = (unsigned)(j / kWords); b < gridDim.x; b += (unsigned)groups)
            sum += parts[(size_t)b * kPartialWords + word];
        scratch[j] = sum;
    }
    uint32_t f = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
        f |= reinterpret_cast<const volatile uint32_t *>(parts + (size_t)b * kPartialWords + kWords)[0];
    f = warp_or(f);
    if (lane == 0 && f) atomicOr(&s_flags, f);
    __syncthreads();
    for (int t = threadIdx.x; t < kWords; t += blockDim.x) {
        long long sum = 0;
        for (int g = 0; g < groups; ++g) sum += scratch[g * kWords + t];
        s_total.w[t] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) store_normalized(&s_total, s_flags | term, g_result);
}

size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }
/* exact_kernel's dynamic shared memory: the words of each warp (17 KiB at 1024 threads). */
size_t smem_bytes(int block) { return (size_t)(block / 32) * kWords * sizeof(unsigned long long); }
size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* Blocks of `block` threads of exact_kernel<In> that fill `device` once, cached per (device, log2(block)). */
template <class In> cudaError_t resident_blocks(int device, int block, size_t *out)
{
    static int cached[64][11];
    return dr_gpu_fill_grid((const void *)exact_kernel<In>, smem_bytes(block), INT_MAX, device, block, cached, out);
}

template <class In> cudaError_t plan_exact(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)
{
    size_t resident = 0;
    cudaError_t err = resident_blocks<In>(r->device, r->block, &resident);
    if (err != cudaSuccess) return err;
    const size_t per_block = (size_t)r->block * kRoundsPerThread * kUnroll * (16 / sizeof(In));
    size_t grid = ceil_div(r->n, per_block);
    if (grid > resident) grid = resident;
    const size_t bounded = ceil_div(r->n, (size_t)r->block << kWalkLog2); /* the header's bounds */
    if (grid < bounded) grid = bounded;
    if (grid < 1) grid = 1;
    if (grid > (size_t)INT_MAX) return cudaErrorInvalidValue; /* 2^31 blocks: the last block's sums could overflow */
    p->passes = 1;
    p->grid[0] = grid;
    p->work_bytes = kPartialsOffset + align256(grid * sizeof(dr_exact_t));
    p->serial_depth = 1; /* one rounding, where the result is read (dr_exact_to_f64) */
    p->cluster = 0;
    p->bulk = 0;
    return cudaSuccess;
}

template <class In>
cudaError_t run_exact(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    char *work = static_cast<char *>(r->d_work);
    cudaError_t err = cudaSuccess;
    if (ev && (err = cudaEventRecord(ev[0], s)) != cudaSuccess) return err;
    exact_kernel<In><<<(unsigned)p->grid[0], r->block, smem_bytes(r->block), s>>>(
        static_cast<const In *>(r->d_in), r->n, reinterpret_cast<dr_exact_t *>(work + kPartialsOffset),
        reinterpret_cast<unsigned int *>(work), static_cast<dr_exact_t *>(r->d_result));
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    if (ev) err = cudaEventRecord(ev[1], s);
    return err;
}

/* Table-driven dispatch over DR_EXACT_TABLE: f.call<In>() for the row matching r; cudaErrorInvalidValue if none. */
template <class F> cudaError_t exact_dispatch(const dr_gpu_reduce_t *r, const F &f)
{
#define X(DT, OP, op, ACC, acc) \
    if (DR_ROW_MATCHES(r, DT, OP, ACC)) return f.template call<dr_in_##DT>();
    DR_EXACT_TABLE
#undef X
    return cudaErrorInvalidValue;
}

struct plan_fn {
    const dr_gpu_reduce_t *r;
    dr_gpu_plan_t *p;
    template <class In> cudaError_t call() const { return plan_exact<In>(r, p); }
};
struct run_fn {
    const dr_gpu_reduce_t *r;
    const dr_gpu_plan_t *p;
    cudaStream_t s;
    cudaEvent_t *ev;
    template <class In> cudaError_t call() const { return run_exact<In>(r, p, s, ev); }
};

} // namespace

cudaError_t dr_gpu_exact_plan(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p) { return exact_dispatch(r, plan_fn{r, p}); }

cudaError_t dr_gpu_exact_run(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    return exact_dispatch(r, run_fn{r, p, s, ev});
}
