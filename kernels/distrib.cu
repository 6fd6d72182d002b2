// Counting passes on the GPU (kernels/count.h): a histogram of the array, or the histogram of one radix-select digit
// over the elements still in play. The arithmetic is src/common/distrib.h's, shared with the CPU backend, so both put
// every element in the same slot.
//
// Shape: a persistent grid; each thread reads 16-byte vectors (a scalar head up to the first aligned vector and a
// scalar tail), finds each element's slot and adds one to the block's counts in shared memory (uint32; a block counts
// fewer than 2^32 elements: the grid grows with n), one atomic per element (count(), below, says why). At the end
// each block adds its non-zero counts to the global uint64 counts. Counts too many for shared memory (large
// histograms, digit passes of many groups) go to global memory directly, a thread's run of equal slots at a time:
// a kernel of its own (kShared false), so that the common one carries none of it.
//
// A pass is bound by the instructions it issues per element, not by the atomics: an H200 reads 2^30 float32 in 1.1 ms,
// about 3.8 elements per clock per multiprocessor, so every element's slot is a handful of register operations
// (hist_slot_fast, slot_of) and what is rare stays out of line: an element near a bin's edge takes the rules
// (slow_slot, not inlined, the edges in shared memory), once per vector that has one.
#include <cuda_runtime.h>

#include <math.h>

#include <limits>

#include "count.h"
#include "distrib.h"

namespace {

constexpr uint32_t kSkip = 0xffffffffu; // not in play: counts nowhere
constexpr uint32_t kSlow = 0xfffffffeu; // near an edge or outside the fast estimate: the rules decide (slow_slot)
// Shared memory for a block's counts: up to 96 KiB (24576 counts), two blocks to a multiprocessor.
constexpr size_t kSmemCountsMax = 24576;
// The edges join the counts in shared memory while both fit in this (4096 float64 bins: 48 KiB).
constexpr size_t kSmemTotalMax = 64 * 1024;
// Threads: the counting loop holds 16 elements' bytes per thread; DR_COUNT_MIN_BLOCKS 512-thread blocks to a
// multiprocessor (2: up to 64 registers; 3: 40, with spills), DR_COUNT_VECS vectors in flight per thread.
constexpr int kBlockMax = 512;
#ifndef DR_COUNT_MIN_BLOCKS
#define DR_COUNT_MIN_BLOCKS 2
#endif
constexpr int kMinBlocksPerSm = DR_COUNT_MIN_BLOCKS;

// Element storage types: the raw bits for floats (keys are taken from the bits), the integers themselves.
template <dr_dtype_t DT> struct elem;
template <> struct elem<DR_INT8> { using T = int8_t; using U = uint8_t; };
template <> struct elem<DR_UINT8> { using T = uint8_t; using U = uint8_t; };
template <> struct elem<DR_INT16> { using T = int16_t; using U = uint16_t; };
template <> struct elem<DR_UINT16> { using T = uint16_t; using U = uint16_t; };
template <> struct elem<DR_INT32> { using T = int32_t; using U = uint32_t; };
template <> struct elem<DR_UINT32> { using T = uint32_t; using U = uint32_t; };
template <> struct elem<DR_INT64> { using T = int64_t; using U = uint64_t; };
template <> struct elem<DR_UINT64> { using T = uint64_t; using U = uint64_t; };
template <> struct elem<DR_FLOAT16> { using T = uint16_t; using U = uint16_t; };
template <> struct elem<DR_BFLOAT16> { using T = uint16_t; using U = uint16_t; };
template <> struct elem<DR_FLOAT32> { using T = uint32_t; using U = uint32_t; };
template <> struct elem<DR_FLOAT64> { using T = uint64_t; using U = uint64_t; };

template <dr_dtype_t DT> constexpr bool is_float_v =
    DT == DR_FLOAT16 || DT == DR_BFLOAT16 || DT == DR_FLOAT32 || DT == DR_FLOAT64;

// The element's key for a radix select, and whether it is NaN.
template <dr_dtype_t DT> __device__ __forceinline__ uint64_t key_of(typename elem<DT>::T x, bool *nan)
{
    *nan = false;
    if constexpr (DT == DR_INT8) return (uint8_t)((uint8_t)x ^ 0x80u);
    else if constexpr (DT == DR_INT16) return (uint16_t)((uint16_t)x ^ 0x8000u);
    else if constexpr (DT == DR_INT32) return (uint32_t)x ^ 0x80000000u;
    else if constexpr (DT == DR_INT64) return (uint64_t)x ^ 0x8000000000000000ull;
    else if constexpr (DT == DR_FLOAT16) { const uint32_t k = dr_key_f16(x); *nan = k == 0xffffu; return k; }
    else if constexpr (DT == DR_BFLOAT16) { const uint32_t k = dr_key_bf16(x); *nan = k == 0xffffu; return k; }
    else if constexpr (DT == DR_FLOAT32) { const uint32_t k = dr_key_f32(x); *nan = k == 0xffffffffu; return k; }
    else if constexpr (DT == DR_FLOAT64) { const uint64_t k = dr_key_f64(x); *nan = k == ~0ull; return k; }
    else return (uint64_t)x;
}

template <dr_dtype_t DT> __device__ __forceinline__ float as_float(typename elem<DT>::T x)
{
    if constexpr (DT == DR_FLOAT16) return dr_f16_to_f32(x);
    else if constexpr (DT == DR_BFLOAT16) return dr_bf16_to_f32(x);
    else return __uint_as_float(x);
}

// The element's histogram slot by the rules (dr_hist_bin_*, src/common/distrib.h): bins 0..B-1, then below, above,
// NaN. A few elements in a thousand come here (count_kernel takes them after the others of its step).
template <dr_dtype_t DT>
__device__ __forceinline__ uint32_t slow_slot(const dr_hist_plan_t *h, const void *edges, uint64_t bits)
{
    using T = typename elem<DT>::T;
    const T x = (T)bits;
    int64_t b;
    if constexpr (DT == DR_FLOAT16) b = dr_hist_bin_f16(h, (const float *)edges, dr_f16_to_f32(x));
    else if constexpr (DT == DR_BFLOAT16) b = dr_hist_bin_f32(h, (const float *)edges, dr_bf16_to_f32(x));
    else if constexpr (DT == DR_FLOAT32) b = dr_hist_bin_f32(h, (const float *)edges, __uint_as_float(x));
    else if constexpr (DT == DR_FLOAT64) b = dr_hist_bin_f64(h, (const double *)edges, __longlong_as_double(x));
    else b = dr_hist_bin_f64(h, (const double *)edges, (double)x);
    return b >= 0 ? (uint32_t)b : h->bins + (uint32_t)(-b - 1);
}

// The fast estimate's constants (made on the host by hist_fast_of, below). Floats estimate in their bin type's
// arithmetic exactly as dr_hist_bin_* starts (float for float16, bfloat16 and float32; double for float64), so an
// element whose estimate is clear of an edge by the plan's margin has that bin. Integers estimate in float from
// x - xlo, an exact integer difference, with a margin widened for the float roundings (hist_fast_of says how much):
// NumPy's bin type for them is float64, whose conversions and arithmetic cost several times float's on a GPU.
struct hist_fast_t {
    int32_t on;        // 0: every element takes the rules (the plan's exact estimate; a margin too wide)
    int32_t int_sides; // integers up to 32 bits: x < xlo is below and x > xhi above, exactly
    uint32_t bins;
    float ff, fl, fs, fm, f1m; // float data: first, last, scale, margin, 1 - margin; integers: fofs in ff
    double df, dl, ds, dm, d1m;
    uint64_t xlo, xhi; // integers: the bits of ceil(first) and floor(last) in the type, clamped to it
};

// floor(f) for 0 <= f < 2^22, and whether f's fraction lies farther than m from a whole number (m1 = 1 - m). The
// nearest whole number to f - 1/2, by adding and taking away 1.5 * 2^23 (float's whole numbers there step by one):
// conversion instructions issue at an eighth of float arithmetic's rate on Hopper, and two per element showed.
__device__ __forceinline__ bool floor_clear(float f, float m, float m1, uint32_t *i)
{
    const float r = __fadd_rn(__fadd_rn(f, -0.5f), 12582912.0f);
    const float fr = __fsub_rn(f, __fsub_rn(r, 12582912.0f));
    *i = __float_as_uint(r) - 0x4b400000u;
    return fr > m && fr < m1;
}
__device__ __forceinline__ bool floor_clear(double f, double m, double m1, uint32_t *i)
{
    const double r = __dadd_rn(__dadd_rn(f, -0.5), 6755399441055744.0);
    const double fr = __dsub_rn(f, __dsub_rn(r, 6755399441055744.0));
    *i = (uint32_t)((unsigned long long)__double_as_longlong(r) - 0x4338000000000000ull);
    return fr > m && fr < m1;
}

// The element's histogram slot where it is clear (a bin well inside, below, above), else kSlow.
template <dr_dtype_t DT>
__device__ __forceinline__ uint32_t hist_slot_fast(const hist_fast_t &hf, typename elem<DT>::T x)
{
    using T = typename elem<DT>::T;
    using U = typename elem<DT>::U;
    const uint32_t below = hf.bins, above = hf.bins + 1;
    uint32_t i;
    if constexpr (DT == DR_FLOAT64) {
        const double v = __longlong_as_double((long long)x);
        const bool ok = floor_clear(dr_dmul(dr_dsub(v, hf.df), hf.ds), hf.dm, hf.d1m, &i) && i < hf.bins;
        return v < hf.df ? below : v > hf.dl ? above : ok ? i : kSlow; /* NaN: kSlow */
    } else if constexpr (is_float_v<DT>) {
        const float v = as_float<DT>(x);
        const bool ok = floor_clear(dr_fmul(dr_fsub(v, hf.ff), hf.fs), hf.fm, hf.f1m, &i) && i < hf.bins;
        return v < hf.ff ? below : v > hf.fl ? above : ok ? i : kSlow;
    } else {
        const T lo = (T)hf.xlo, hi = (T)hf.xhi;
        const float d = (float)(U)((U)x - (U)lo); /* exact in U for lo <= x <= hi */
        const bool ok = x >= lo && x <= hi && floor_clear(dr_fmul(dr_fsub(d, hf.ff), hf.fs), hf.fm, hf.f1m, &i) &&
                        i < hf.bins;
        if (hf.int_sides && x < lo) return below;
        if (hf.int_sides && x > hi) return above;
        return ok ? i : kSlow;
    }
}

template <dr_dtype_t DT, dr_count_kind_t K>
__device__ __forceinline__ uint32_t slot_of(const dr_count_pass_t &p, const hist_fast_t &hf,
                                            typename elem<DT>::T x)
{
    if constexpr (K == DR_COUNT_HIST) {
        return hf.on ? hist_slot_fast<DT>(hf, x) : kSlow;
    } else {
        bool nan;
        const uint64_t k = key_of<DT>(x, &nan);
        if (nan) return ((uint32_t)p.groups << p.width);
        const int g = dr_count_group(&p, k);
        return g < 0 ? kSkip : ((uint32_t)g << p.width) | dr_count_digit(&p, k);
    }
}

// Adds one element to its slot. In the block's counts in shared memory: one atomic per element. A thread that kept
// a run of equal slots in registers and added it once (so that skewed data, every lane on one address, would not
// serialize) measured about 2x slower on an H200 on uniform data and 1.6x slower on one-bin data, whose same-address
// shared atomics Hopper takes without runs at 69% of the read bandwidth (float32, 2^28 elements, 256 bins: 0.38 ms
// without runs, 0.73 ms with; int32 sum reads the same bytes in 0.25 ms). In the global counts (histograms too large
// for shared memory) the runs stay: one-bin data would otherwise put every element's atomic on one address of
// global memory (65536 bins: 197 ms against 1.3 ms with runs, 2^28 float32).
struct run_t {
    uint32_t slot = kSkip, len = 0;
};

template <bool kShared>
__device__ __forceinline__ void count(uint32_t slot, run_t &r, uint32_t *smem, unsigned long long *gcounts)
{
    if (slot == kSkip) return; /* not in play: it neither counts nor ends a run */
    if constexpr (kShared) {
        atomicAdd(&smem[slot], 1u);
    } else {
        if (slot == r.slot) {
            ++r.len;
            return;
        }
        if (r.len) atomicAdd(&gcounts[r.slot], (unsigned long long)r.len);
        r.slot = slot;
        r.len = 1;
    }
}

// A digit pass that also keeps the elements in play, so the later passes read those alone. A warp reserves room
// kKeepChunk elements at a time (one atomic per chunk: one per element, or per warp step, would all meet on one
// counter), fills it in order, and pads what is left of its last chunk with `pad`, an element no later pass has in
// play (a NaN for floats; for integers one whose higher digits match no group). The count kept is thus the
// elements in play plus at most kKeepChunk per warp (dr_gpu_count_keep_slack).
constexpr uint32_t kKeepChunk = 256;

template <typename T> struct keeper_t {
    T *out;
    unsigned long long *pos;
    T pad;
    unsigned long long base = 0;
    uint32_t used = kKeepChunk; // no chunk yet: the first lanes "finish" an empty one of no elements

    // Whole warps only (every lane calls it, in step).
    __device__ __forceinline__ void warp_keep(bool in_play, T x)
    {
        const unsigned want = __ballot_sync(0xffffffffu, in_play);
        if (!want) return;
        const uint32_t cnt = __popc(want), lane = threadIdx.x & 31;
        const uint32_t at = used + __popc(want & ((1u << lane) - 1u));
        if (used + cnt <= kKeepChunk) {
            if (in_play) out[base + at] = x;
            used += cnt;
            return;
        }
        // The chunk fills up: the first lanes finish it, the others start the next.
        unsigned long long b = 0;
        if (lane == 0) b = atomicAdd(pos, (unsigned long long)kKeepChunk);
        b = __shfl_sync(0xffffffffu, b, 0);
        if (in_play) out[at < kKeepChunk ? base + at : b + (at - kKeepChunk)] = x;
        base = b;
        used = used + cnt - kKeepChunk;
    }
    __device__ __forceinline__ void warp_finish()
    {
        const uint32_t lane = threadIdx.x & 31;
        if (used < kKeepChunk)
            for (uint32_t k = used + lane; k < kKeepChunk; k += 32) out[base + k] = pad;
    }
    // One thread alone (the scalar head and tail).
    __device__ __forceinline__ void one_keep(bool in_play, T x)
    {
        if (in_play) out[atomicAdd(pos, 1ull)] = x;
    }
};

#ifndef DR_COUNT_VECS
#define DR_COUNT_VECS 4
#endif
constexpr int kVecs = DR_COUNT_VECS; // 16-byte vectors in flight per thread

// Element j of a 16-byte vector, j not known at compile time (an indexed array would live in local memory).
template <typename T> __device__ __forceinline__ uint64_t element_at(const uint4 &v, int j)
{
    constexpr int kBits = 8 * sizeof(T);
    const int bit = j * kBits, word = bit >> 5;
    const uint32_t lo = word == 0 ? v.x : word == 1 ? v.y : word == 2 ? v.z : v.w;
    if constexpr (kBits == 64) return (uint64_t)lo | (uint64_t)(word == 0 ? v.y : v.w) << 32;
    else if constexpr (kBits == 32) return lo;
    else return (lo >> (bit & 31)) & ((1u << kBits) - 1u);
}

// Shared memory: the counts (kShared), then the plan and the edges for the rules (hist passes, where they fit).
struct smem_layout_t {
    size_t plan_at, edges_at, bytes;
    bool edges_in;
};

__host__ __device__ inline size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

inline smem_layout_t smem_layout(const dr_count_pass_t *p, bool shared, size_t esize_edges)
{
    smem_layout_t l{};
    const size_t counts = shared ? dr_count_words(p) * sizeof(uint32_t) : 0;
    if (p->kind != DR_COUNT_HIST) {
        l.bytes = counts;
        return l;
    }
    l.plan_at = align_up(counts, 16);
    l.edges_at = align_up(l.plan_at + sizeof(dr_hist_plan_t), 16);
    const size_t edges = ((size_t)p->hist.bins + 1) * esize_edges;
    l.edges_in = l.edges_at + edges <= kSmemTotalMax;
    l.bytes = l.edges_in ? l.edges_at + edges : l.edges_at;
    return l;
}

template <dr_dtype_t DT, dr_count_kind_t K, bool kShared>
__global__ void __launch_bounds__(kBlockMax, kMinBlocksPerSm)
    count_kernel(const dr_count_pass_t p, const hist_fast_t hf, const void *__restrict__ edges_global,
                 const void *__restrict__ in, uint64_t n, unsigned long long *__restrict__ gcounts, uint32_t words,
                 smem_layout_t lay, void *__restrict__ out, unsigned long long *__restrict__ out_pos)
{
    using T = typename elem<DT>::T;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    uint32_t *const smem = (uint32_t *)smem_raw;
    if constexpr (kShared)
        for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) smem[w] = 0;
    // The rules' plan and edges, for slow_slot: the kernel's parameter would be copied to local memory per call.
    const dr_hist_plan_t *plan = nullptr;
    const void *edges = edges_global;
    if constexpr (K == DR_COUNT_HIST) {
        dr_hist_plan_t *sp = (dr_hist_plan_t *)(smem_raw + lay.plan_at);
        if (threadIdx.x == 0) *sp = p.hist;
        plan = sp;
        if (lay.edges_in) {
            const size_t bytes = ((size_t)p.hist.bins + 1) * (p.hist.type == DR_HT_F64 ? 8 : 4);
            uint32_t *dst = (uint32_t *)(smem_raw + lay.edges_at);
            const uint32_t *src = (const uint32_t *)edges_global;
            for (size_t w = threadIdx.x; w < bytes / 4; w += blockDim.x) dst[w] = src[w];
            edges = dst;
        }
    }
    __syncthreads();

    const T *x = (const T *)in;
    constexpr int kPer = 16 / sizeof(T);
    // Elements before the first 16-byte boundary, then whole vectors, then the tail.
    const uint64_t mis = ((uintptr_t)in & 15u) / sizeof(T);
    const uint64_t head = mis ? (uint64_t)min((uint64_t)(kPer - mis), n) : 0;
    const uint64_t nvec = (n - head) / kPer;
    const uint64_t tail_from = head + nvec * kPer;
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
    const uint32_t nan_slot = (uint32_t)p.groups << p.width;
    const bool keeping = K == DR_COUNT_DIGIT && out != nullptr;
    keeper_t<T> kp{(T *)out, out_pos, (T)p.keep_pad};
    run_t r; // the global counts' run (count())
    auto in_play = [&](uint32_t slot) { return slot != kSkip && slot != nan_slot; };
    auto one = [&](T e) {
        uint32_t slot = slot_of<DT, K>(p, hf, e);
        if (K == DR_COUNT_HIST && slot == kSlow) slot = slow_slot<DT>(plan, edges, (uint64_t)e);
        count<kShared>(slot, r, smem, gcounts);
        if (keeping) kp.one_keep(in_play(slot), e);
    };
    if (tid < head) one(x[tid]);
    // Warps step together through the vectors (kVecs of them per lane a step, loaded first), so the keeper's
    // ballots see every lane.
    const uint4 *v = (const uint4 *)(x + head);
    const uint64_t lane = threadIdx.x & 31, warp = tid >> 5, nwarps = nthreads >> 5;
    for (uint64_t base = warp * 32 * kVecs; base < nvec; base += nwarps * 32 * kVecs) {
        union {
            uint4 u;
            T e[kPer];
        } w[kVecs];
#pragma unroll
        for (int u = 0; u < kVecs; ++u) {
            const uint64_t i = base + (uint64_t)u * 32 + lane;
            if (i < nvec) w[u].u = __ldcs(v + i); // read once: streaming
        }
        // Bit u * kPer + j: element j of vector u takes the rules, after the step's others (one inlined copy of
        // the rules per kernel: inlined at every element, or called, they cost the loop its registers).
        uint64_t slow = 0;
#pragma unroll
        for (int u = 0; u < kVecs; ++u) {
            const bool valid = base + (uint64_t)u * 32 + lane < nvec;
            uint32_t play = 0; // bit j: element j is in play (kept by a keeping pass)
#pragma unroll
            for (int j = 0; j < kPer; ++j) {
                const uint32_t slot = valid ? slot_of<DT, K>(p, hf, w[u].e[j]) : kSkip;
                if (K == DR_COUNT_HIST && slot == kSlow) {
                    slow |= 1ull << (u * kPer + j);
                    continue;
                }
                count<kShared>(slot, r, smem, gcounts);
                play |= (uint32_t)in_play(slot) << j;
            }
            // One vote a vector: a later pass keeps a small part of the data, so most vectors keep nothing.
            if (keeping && __any_sync(0xffffffffu, play != 0))
#pragma unroll
                for (int j = 0; j < kPer; ++j) kp.warp_keep((play >> j) & 1u, w[u].e[j]);
        }
        if (K == DR_COUNT_HIST)
            while (slow) {
                const int b = __ffsll((long long)slow) - 1, u = b / kPer;
                slow &= slow - 1;
                uint4 vu = w[0].u;
#pragma unroll
                for (int k = 1; k < kVecs; ++k)
                    if (u == k) vu = w[k].u;
                count<kShared>(slow_slot<DT>(plan, edges, element_at<T>(vu, b % kPer)), r, smem, gcounts);
            }
    }
    if (keeping) kp.warp_finish();
    if (tail_from + tid < n) one(x[tail_from + tid]);
    if constexpr (!kShared) {
        if (r.len) atomicAdd(&gcounts[r.slot], (unsigned long long)r.len);
    } else {
        __syncthreads();
        for (uint32_t w = threadIdx.x; w < words; w += blockDim.x)
            if (smem[w]) atomicAdd(&gcounts[w], (unsigned long long)smem[w]);
    }
}

// The fast estimate's constants for a histogram pass (hist_fast_t). Integers: d = x - xlo is exact, its float
// rounds by 2^-24 of d, and fofs = first - xlo (in (-1, 0] unless first lies below the type) by 2^-24 of itself;
// in bins both are at most (bins + 1 + scale) 2^-24, then the estimate's two roundings, and NumPy's float64 of x
// (64-bit integers: 2^-53 of the largest end, in bins). A margin that wide past the plan's is still safe; past a
// quarter bin every element takes the rules.
template <dr_dtype_t DT> hist_fast_t hist_fast_of(const dr_count_pass_t *p)
{
    using T = typename elem<DT>::T;
    const dr_hist_plan_t &h = p->hist;
    hist_fast_t f{};
    f.bins = h.bins;
    f.on = !h.exact_estimate && h.margin < 1.0;
    if (!f.on) return f;
    if constexpr (DT == DR_FLOAT64) {
        f.df = h.first, f.dl = h.last, f.ds = h.scale, f.dm = h.margin, f.d1m = 1.0 - h.margin;
    } else if constexpr (is_float_v<DT>) {
        f.ff = (float)h.first, f.fl = (float)h.last, f.fs = (float)h.scale;
        f.fm = (float)h.margin, f.f1m = 1.0f - (float)h.margin;
    } else {
        constexpr bool is_signed = (T)-1 < (T)0;
        // the type's ends as doubles: exact, and 2^63 / 2^64 one past the 64-bit types' largest
        const double tmin = is_signed ? -ldexp(1.0, 8 * (int)sizeof(T) - 1) : 0.0;
        const double tend = ldexp(1.0, 8 * (int)sizeof(T) - (is_signed ? 1 : 0)); /* the largest + 1 */
        const double lo = ceil(h.first), hi = floor(h.last);
        if (!(lo < tend) || !(hi >= tmin)) { /* every element below, or above: the rules say so */
            f.on = 0;
            return f;
        }
        const T xlo = lo < tmin ? std::numeric_limits<T>::min() : (T)lo; /* in the type: exact */
        const T xhi = hi >= tend ? std::numeric_limits<T>::max() : (T)hi;
        f.xlo = (uint64_t)xlo, f.xhi = (uint64_t)xhi;
        const double big = fmax(fabs(h.first), fabs(h.last));
        const double m = h.margin + 2.0 * (8.0 * 0x1p-24 * ((double)h.bins + 2.0 + h.scale) +
                                           (sizeof(T) == 8 ? big * h.scale * 0x1p-52 : 0.0));
        f.int_sides = sizeof(T) <= 4;
        f.ff = (float)(h.first - (double)xlo), f.fs = (float)h.scale;
        f.fm = (float)m, f.f1m = 1.0f - (float)m;
        if (!(m < 0.25) || !isfinite(f.ff) || !isfinite(f.fs) || f.fs <= 0.0f) f.on = 0;
    }
    return f;
}

// The launch's grid: one persistent wave, but no more blocks than vector steps to take, and enough that a block
// counts fewer than 2^31 elements (its shared counts are uint32).
template <dr_dtype_t DT, dr_count_kind_t K, bool kShared>
cudaError_t grid_of(const dr_count_pass_t *p, uint64_t n, int *block, int device, uint64_t *grid,
                    smem_layout_t *lay)
{
    *lay = smem_layout(p, kShared, p->hist.type == DR_HT_F64 ? 8 : 4);
    auto *kernel = count_kernel<DT, K, kShared>;
    cudaError_t e;
    cudaFuncAttributes fa;
    if ((e = cudaFuncGetAttributes(&fa, kernel)) != cudaSuccess) return e;
    while (*block > fa.maxThreadsPerBlock && *block > 32) *block /= 2;
    if (lay->bytes > 48 * 1024 &&
        (e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)lay->bytes)) !=
            cudaSuccess)
        return e;
    int sms = 0, per_sm = 0;
    if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) return e;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, *block, lay->bytes)) != cudaSuccess)
        return e;
    if (per_sm < 1) per_sm = 1;
    constexpr uint64_t kPer = 16 / sizeof(typename elem<DT>::T);
    uint64_t g = (uint64_t)sms * per_sm;
    const uint64_t need = (n / kPer / kVecs + *block - 1) / *block;
    if (g > need) g = need ? need : 1;
    const uint64_t min_grid = n / (1ull << 31) + 1;
    if (g < min_grid) g = min_grid;
    if (g > 0x7fffffffull) return cudaErrorInvalidValue;
    *grid = g;
    return cudaSuccess;
}

template <dr_dtype_t DT, dr_count_kind_t K, bool kShared>
cudaError_t launch(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n, uint64_t *d_counts,
                   int block, int device, cudaStream_t stream, void *d_keep, uint64_t *d_keep_pos)
{
    uint64_t grid;
    smem_layout_t lay;
    cudaError_t e = grid_of<DT, K, kShared>(p, n, &block, device, &grid, &lay);
    if (e != cudaSuccess) return e;
    const hist_fast_t hf = K == DR_COUNT_HIST ? hist_fast_of<DT>(p) : hist_fast_t{};
    count_kernel<DT, K, kShared><<<(unsigned)grid, block, lay.bytes, stream>>>(
        *p, hf, d_edges, d_in, n, (unsigned long long *)d_counts, (uint32_t)dr_count_words(p), lay, d_keep,
        (unsigned long long *)d_keep_pos);
    return cudaGetLastError();
}

bool counts_shared(const dr_count_pass_t *p) { return dr_count_words(p) <= kSmemCountsMax; }

template <dr_dtype_t DT>
cudaError_t launch_kind(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n,
                        uint64_t *d_counts, int block, int device, cudaStream_t stream, void *d_keep,
                        uint64_t *d_keep_pos)
{
    if (n == 0) return cudaSuccess;
    const bool sh = counts_shared(p);
    if (p->kind == DR_COUNT_HIST)
        return sh ? launch<DT, DR_COUNT_HIST, true>(p, d_edges, d_in, n, d_counts, block, device, stream, nullptr,
                                                    nullptr)
                  : launch<DT, DR_COUNT_HIST, false>(p, d_edges, d_in, n, d_counts, block, device, stream, nullptr,
                                                     nullptr);
    return sh ? launch<DT, DR_COUNT_DIGIT, true>(p, d_edges, d_in, n, d_counts, block, device, stream, d_keep,
                                                 d_keep_pos)
              : launch<DT, DR_COUNT_DIGIT, false>(p, d_edges, d_in, n, d_counts, block, device, stream, d_keep,
                                                  d_keep_pos);
}

template <dr_dtype_t DT>
cudaError_t keep_slack(const dr_count_pass_t *p, uint64_t n, int *block, int device, uint64_t *grid)
{
    smem_layout_t lay;
    return counts_shared(p) ? grid_of<DT, DR_COUNT_DIGIT, true>(p, n, block, device, grid, &lay)
                            : grid_of<DT, DR_COUNT_DIGIT, false>(p, n, block, device, grid, &lay);
}

} // namespace

#define DR_EACH_DTYPE(X)                                                                                       \
    X(DR_INT8) X(DR_UINT8) X(DR_INT16) X(DR_UINT16) X(DR_INT32) X(DR_UINT32) X(DR_INT64) X(DR_UINT64)          \
    X(DR_FLOAT16) X(DR_BFLOAT16) X(DR_FLOAT32) X(DR_FLOAT64)

extern "C" cudaError_t dr_gpu_count_keep_slack(const dr_count_pass_t *p, uint64_t n, int block, int device,
                                               uint64_t *slack)
{
    if (block == 0) block = 512;
    uint64_t grid = 0;
    cudaError_t e = cudaErrorInvalidValue;
    switch ((dr_dtype_t)p->dtype) {
#define DR_SLACK_CASE(DT)                                                                                      \
    case DT: e = keep_slack<DT>(p, n, &block, device, &grid); break;
        DR_EACH_DTYPE(DR_SLACK_CASE)
#undef DR_SLACK_CASE
    default: break;
    }
    *slack = grid * (uint64_t)block / 32 * kKeepChunk; /* block: as grid_of left it */
    return e;
}

extern "C" cudaError_t dr_gpu_count_pass(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n,
                                         uint64_t *d_counts, int block, int device, cudaStream_t stream,
                                         void *d_keep, uint64_t *d_keep_pos)
{
    if (block == 0) block = 512;
    if (block < 32 || block > 1024 || (block & (block - 1))) return cudaErrorInvalidValue;
    switch ((dr_dtype_t)p->dtype) {
#define DR_COUNT_CASE(DT)                                                                                      \
    case DT: return launch_kind<DT>(p, d_edges, d_in, n, d_counts, block, device, stream, d_keep, d_keep_pos);
        DR_EACH_DTYPE(DR_COUNT_CASE)
#undef DR_COUNT_CASE
    default: return cudaErrorInvalidValue;
    }
}
