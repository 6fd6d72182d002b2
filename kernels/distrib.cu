// Counting passes on the GPU (kernels/count.h): a histogram of the array, or the histogram of one radix-select digit
// over the elements still in play. The arithmetic is src/common/distrib.h's, shared with the CPU backend, so both put
// every element in the same slot.
//
// Shape: a persistent grid; each thread reads 16-byte vectors (a scalar head up to the first aligned vector and a
// scalar tail), finds each element's slot and adds one to the block's counts in shared memory (uint32; a block counts
// fewer than 2^32 elements: the grid grows with n), one atomic per element (counter_t, below, says why). The block
// keeps up to 32 copies of its counts, one per lane where they fit (copies_of()), so that the lanes of a warp never
// wait on each other's banks. At the end each block adds its non-zero counts to the global uint64 counts. Counts too
// many for shared memory (large histograms) go to global memory directly, a thread's run of equal slots at a time.
#include <cuda_runtime.h>

#include <type_traits>

#include "count.h"
#include "distrib.h"

namespace {

constexpr uint32_t kSkip = 0xffffffffu;
// Shared memory for a block's counts: up to 96 KiB (24576 counts, all copies together), two blocks of 512 threads
// to a multiprocessor.
constexpr size_t kSmemCountsMax = 24576;

// How many copies of its counts a block keeps in shared memory, as a shift: the most, up to one per lane (32), that
// fit in kSmemCountsMax. Copy c of slot s is word (s << shift) | c, and lane l adds to copy l mod copies, so the
// lanes of a warp that add to different slots meet on a bank only where their copies match (one copy per lane: never,
// the bank is the lane), and lanes that add to one slot (skewed data) meet on 32 / copies addresses, not one.
__host__ __device__ constexpr uint32_t copies_of(uint64_t words)
{
    uint32_t shift = 0;
    while (shift < 5 && (words << (shift + 1)) <= kSmemCountsMax) ++shift;
    return shift;
}

// Element storage types: the raw bits for floats (keys are taken from the bits), the integers themselves.
template <dr_dtype_t DT> struct elem;
template <> struct elem<DR_INT8> { using T = int8_t; };
template <> struct elem<DR_UINT8> { using T = uint8_t; };
template <> struct elem<DR_INT16> { using T = int16_t; };
template <> struct elem<DR_UINT16> { using T = uint16_t; };
template <> struct elem<DR_INT32> { using T = int32_t; };
template <> struct elem<DR_UINT32> { using T = uint32_t; };
template <> struct elem<DR_INT64> { using T = int64_t; };
template <> struct elem<DR_UINT64> { using T = uint64_t; };
template <> struct elem<DR_FLOAT16> { using T = uint16_t; };
template <> struct elem<DR_BFLOAT16> { using T = uint16_t; };
template <> struct elem<DR_FLOAT32> { using T = uint32_t; };
template <> struct elem<DR_FLOAT64> { using T = uint64_t; };

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

// The element's histogram bin (DR_HIST_* outside the bins), in NumPy's bin type.
template <dr_dtype_t DT>
__device__ __forceinline__ int64_t bin_of(const dr_hist_plan_t &h, const void *edges, typename elem<DT>::T x)
{
    if constexpr (DT == DR_FLOAT16) return dr_hist_bin_f16(&h, (const float *)edges, dr_f16_to_f32(x));
    else if constexpr (DT == DR_BFLOAT16) return dr_hist_bin_f32(&h, (const float *)edges, dr_bf16_to_f32(x));
    else if constexpr (DT == DR_FLOAT32) return dr_hist_bin_f32(&h, (const float *)edges, __uint_as_float(x));
    else if constexpr (DT == DR_FLOAT64) return dr_hist_bin_f64(&h, (const double *)edges, __longlong_as_double(x));
    else return dr_hist_bin_f64(&h, (const double *)edges, (double)x);
}

// The histogram estimate's constants, in the type the estimate is made in (float for the float16, bfloat16 and float32
// bin types, double for float64 and integers), read once per thread.
struct hist_fast_t {
    bool on;            // the plan's fast estimate applies (not exact_estimate)
    float ff, fl, fs, fm, f1m; // first, last, scale, margin, 1 - margin
    double df, dl, ds, dm, d1m;
    int32_t bins;
    __device__ explicit hist_fast_t(const dr_hist_plan_t &h)
        : on(!h.exact_estimate), ff((float)h.first), fl((float)h.last), fs((float)h.scale), fm((float)h.margin),
          f1m(1.0f - (float)h.margin), df(h.first), dl(h.last), ds(h.scale), dm(h.margin), d1m(1.0 - h.margin),
          bins((int32_t)h.bins)
    {
    }
};

template <dr_dtype_t DT> __device__ __forceinline__ float as_float(typename elem<DT>::T x)
{
    if constexpr (DT == DR_FLOAT16) return dr_f16_to_f32(x);
    else if constexpr (DT == DR_BFLOAT16) return dr_bf16_to_f32(x);
    else return __uint_as_float(x);
}

// The fast estimate's bin of an element, the very operations dr_hist_bin_* start with ((x - first) * scale in the
// estimate's type); *ok: the element is well inside that bin (its fraction farther than the plan's margin from both
// edges: nearly all elements), so the bin is the one dr_hist_bin_* returns. The fraction comes without a conversion
// to integer and back (the conversion unit's quarter rate made two of them a step of every element's critical path):
// adding 1.5 * 2^23 (2^52 for double) rounds f to the nearest whole number r in the low bits, exact wherever it is
// used (0 <= f <= bins < 2^22 inside the range), and d = f - r is exact; the fraction lies farther than the margin
// from both whole numbers exactly when |d| > margin, and the bin (f's floor) is r, or r - 1 where d < 0.
template <dr_dtype_t DT>
__device__ __forceinline__ uint32_t hist_estimate(const hist_fast_t &hf, typename elem<DT>::T x, bool &ok)
{
    if constexpr (DT == DR_FLOAT16 || DT == DR_BFLOAT16 || DT == DR_FLOAT32) {
        constexpr float kRound = 12582912.0f; // 1.5 * 2^23
        const float v = as_float<DT>(x);
        const float f = dr_fmul(dr_fsub(v, hf.ff), hf.fs);
        const float t = __fadd_rn(f, kRound);
        const float d = dr_fsub(f, dr_fsub(t, kRound));
        const int32_t i = (__float_as_int(t) - __float_as_int(kRound)) - (d < 0.0f ? 1 : 0);
        ok = hf.on && v >= hf.ff && v <= hf.fl && fabsf(d) > hf.fm && i < hf.bins;
        return (uint32_t)i;
    } else {
        constexpr double kRound = 6755399441055744.0; // 1.5 * 2^52: r in the low word
        const double v = DT == DR_FLOAT64 ? __longlong_as_double((long long)x) : (double)x;
        const double f = dr_dmul(dr_dsub(v, hf.df), hf.ds);
        const double t = dr_dadd(f, kRound);
        const double d = dr_dsub(f, dr_dsub(t, kRound));
        const int32_t i = __double2loint(t) - (d < 0.0 ? 1 : 0);
        ok = hf.on && v >= hf.df && v <= hf.dl && fabs(d) > hf.dm && i < hf.bins;
        return (uint32_t)i;
    }
}

// The element's histogram slot through the whole dr_hist_bin_* (src/common/distrib.h): bins 0..B-1, then below,
// above, NaN.
template <dr_dtype_t DT>
__device__ __forceinline__ uint32_t hist_exact(const dr_count_pass_t &p, const void *edges, typename elem<DT>::T x)
{
    const int64_t b = bin_of<DT>(p.hist, edges, x);
    return b >= 0 ? (uint32_t)b : p.hist.bins + (uint32_t)(-b - 1);
}

// A RANGE pass of at most kRangeRegs intervals (a median's one, three quantiles' three) holds the intervals' ends in
// registers, as keys of the element's width, and finds an element's slot by dr_count_range_slot's sums over them:
// that function reads the ends from the kernel's parameters (the constant bank) for every element, 64-bit compares
// even for 32-bit keys. Places past the pass's intervals hold an empty interval [top, top - 1] at the top of the
// keys: it counts as started and as ended for the greatest key alone, so it leaves every other key's sums as they
// were, and the greatest key's slot is put right by the clamps (an interval holding it is the last, k - 1; a gap
// above every interval is gap k, slot 2k; a float's greatest key is NaN's). Past kRangeRegs intervals,
// dr_count_range_slot itself.
constexpr int kRangeRegs = 4;

template <dr_dtype_t DT, bool Few> struct range_regs_t {
    static constexpr bool kFew = false;
    __device__ explicit range_regs_t(const dr_count_pass_t &) {}
};
template <dr_dtype_t DT> struct range_regs_t<DT, true> {
    static constexpr bool kFew = true;
    using Key = typename std::conditional<(sizeof(typename elem<DT>::T) <= 4), uint32_t, uint64_t>::type;
    Key lo[kRangeRegs], hi[kRangeRegs];
    uint32_t k;
    __device__ explicit range_regs_t(const dr_count_pass_t &p) : k((uint32_t)p.groups)
    {
        constexpr Key top = ~(Key)0;
#pragma unroll
        for (int g = 0; g < kRangeRegs; ++g) {
            lo[g] = g < p.groups ? (Key)p.prefix[g] : top;
            hi[g] = g < p.groups ? (Key)p.prefix[p.groups + g] : top - 1;
        }
    }
    __device__ __forceinline__ uint32_t slot(uint64_t key64) const
    {
        const Key key = (Key)key64; // the element's width: no bits above it
        uint32_t j = 0, e = 0;
#pragma unroll
        for (int g = 0; g < kRangeRegs; ++g) {
            j += lo[g] <= key;
            e += hi[g] < key;
        }
        // A float's greatest key is NaN's, whose slot the caller sets: no clamps.
        constexpr bool kTopIsNan = DT == DR_FLOAT16 || DT == DR_BFLOAT16 || DT == DR_FLOAT32 || DT == DR_FLOAT64;
        if constexpr (kTopIsNan) return e < j ? j - 1 : k + j;
        else return e < j ? min(j - 1, k - 1) : min(k + j, 2 * k);
    }
};

// The slots of a thread's elements of one vector. A histogram takes the fast estimate of all of them first and
// looks at the edges only for those it does not settle (one branch a vector, not one an element, which measured
// the pass's cost in branch and reconvergence instructions).
template <dr_dtype_t DT, dr_count_kind_t K, typename RR, int N>
__device__ __forceinline__ void slots_of(const dr_count_pass_t &p, const hist_fast_t &hf, const RR &rr,
                                         const void *edges, const typename elem<DT>::T (&x)[N], uint32_t (&slot)[N])
{
    if constexpr (K == DR_COUNT_HIST) {
        uint32_t slow = 0;
#pragma unroll
        for (int j = 0; j < N; ++j) {
            bool ok;
            slot[j] = hist_estimate<DT>(hf, x[j], ok);
            slow |= (ok ? 0u : 1u) << j;
        }
        if (slow)
#pragma unroll
            for (int j = 0; j < N; ++j)
                if (slow >> j & 1u) slot[j] = hist_exact<DT>(p, edges, x[j]);
    } else if constexpr (K == DR_COUNT_RANGE) {
#pragma unroll
        for (int j = 0; j < N; ++j) {
            bool nan;
            const uint64_t k = key_of<DT>(x[j], &nan);
            uint32_t r;
            if constexpr (RR::kFew) r = rr.slot(k);
            else r = dr_count_range_slot(&p, k);
            slot[j] = nan ? 2u * (uint32_t)p.groups + 1u : r;
        }
    } else {
#pragma unroll
        for (int j = 0; j < N; ++j) {
            bool nan;
            const uint64_t k = key_of<DT>(x[j], &nan);
            const int g = dr_count_group(&p, k);
            slot[j] = nan ? ((uint32_t)p.groups << p.width)
                          : g < 0 ? kSkip : ((uint32_t)g << p.width) | dr_count_digit(&p, k);
        }
    }
}

// Where a thread adds its elements. In the block's counts in shared memory (word (slot << shift) | copy: this lane's
// copy, copies_of()): one atomic per element. A thread that kept a run of equal slots in registers and added it once
// (so that skewed data, every lane on one address, would not serialize) measured about 2x slower on an H200 on
// uniform data and 1.6x slower on one-bin data, whose same-address shared atomics Hopper takes without runs at 69% of
// the read bandwidth (float32, 2^28 elements, 256 bins: 0.38 ms without runs, 0.73 ms with; int32 sum reads the same
// bytes in 0.25 ms). In the global counts (histograms too large for shared memory) the runs stay: one-bin data would
// otherwise put every element's atomic on one address of global memory (65536 bins: 197 ms against 1.3 ms with
// runs, 2^28 float32). Which of the two is the kernel's template argument, so that neither pays for the other's
// branch an element.
template <bool Smem> struct counter_t;
template <> struct counter_t<true> {
    uint32_t *lane_counts; // the block's counts, at this lane's copy
    uint32_t shift;
    __device__ __forceinline__ void add(uint32_t slot) { atomicAdd(lane_counts + (slot << shift), 1u); }
    __device__ __forceinline__ void finish() {}
};
template <> struct counter_t<false> {
    unsigned long long *gcounts;
    uint32_t slot = kSkip, len = 0; // the run
    __device__ __forceinline__ void add(uint32_t s)
    {
        if (s == slot) {
            ++len;
            return;
        }
        if (len) atomicAdd(&gcounts[slot], (unsigned long long)len);
        slot = s;
        len = 1;
    }
    __device__ __forceinline__ void finish()
    {
        if (len) atomicAdd(&gcounts[slot], (unsigned long long)len);
    }
};

constexpr int kVecs = 4; // 16-byte vectors in flight per thread

// A digit pass that also keeps the elements in play, so the later passes read those alone. A warp reserves room
// kKeepChunk<T> elements at a time (one atomic per chunk: one per element, or per warp step, would all meet on one
// counter), fills it in order, and pads what is left of its last chunk with `pad`, an element no later pass has in
// play (a NaN for floats; for integers one whose higher digits match no group). The count kept is thus the
// elements in play plus at most kKeepChunk<T> per warp (dr_gpu_count_keep_slack). A lane offers its elements
// kKeepN<T> at a time (a unit: a whole step of the 4- and 8-byte types, 8 elements of the smaller) and a chunk is a
// warp's unit, so a unit's kept elements fill at most one chunk more, placed by one scan of the lanes' counts. A
// pilot pass keeps a unit at a time: a scan for every group of four elements, where the pilot's 2% of the data is
// in play (nearly every warp's group holds one), held its pass to 38% of the read bandwidth (int32 median, 2^28,
// H100, Nsight Compute); with a scan a step and the intervals in registers (range_regs_t), 47%.
template <typename T> constexpr int kKeepN = sizeof(T) >= 4 ? kVecs * (16 / sizeof(T)) : 8;
template <typename T> constexpr uint32_t kKeepChunk = 32 * kKeepN<T>;

template <typename T> struct keeper_t {
    T *out;
    unsigned long long *pos;
    unsigned long long cap; // elements out holds: a chunk past it is not written (*pos tells the host it ran over)
    T pad;
    unsigned long long base = 0;
    static constexpr uint32_t kChunk = kKeepChunk<T>;
    uint32_t used = kChunk; // no chunk yet: the first lanes "finish" an empty one of no elements
    bool fits = true;       // the current chunk lies within cap

    // Whole warps only (every lane calls it, in step): the lane's elements e[j] whose bit j of `mask` is set. Their
    // places come from a scan of the lanes' counts.
    template <int N> __device__ __forceinline__ void warp_keep(uint32_t mask, const T (&e)[N])
    {
        static_assert(32 * N <= kChunk, "a step's elements fill at most one chunk more");
        const uint32_t lane = threadIdx.x & 31, cnt = __popc(mask);
        uint32_t incl = cnt;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const uint32_t y = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= (uint32_t)o) incl += y;
        }
        const uint32_t total = __shfl_sync(0xffffffffu, incl, 31);
        // The chunk fills up: the lanes past its end go to the next one (total <= 32 N <= kChunk: one at most).
        unsigned long long next = 0;
        const bool spill = used + total > kChunk;
        if (spill) {
            if (lane == 0) next = atomicAdd(pos, (unsigned long long)kChunk);
            next = __shfl_sync(0xffffffffu, next, 0);
        }
        const bool next_fits = next + kChunk <= cap;
        // Place `at` of this chunk and the next as one index: this chunk's at base + at, the next's at next + (at -
        // kChunk). Nothing is written to a chunk past cap.
        const unsigned long long to_next = next - kChunk;
        uint32_t at = used + incl - cnt;
#pragma unroll
        for (int j = 0; j < N; ++j)
            if (mask >> j & 1u) {
                const bool in_this = at < kChunk;
                if (in_this ? fits : next_fits) out[(in_this ? base : to_next) + at] = e[j];
                ++at;
            }
        if (spill) {
            base = next;
            fits = next_fits;
            used = used + total - kChunk;
        } else {
            used += total;
        }
    }
    __device__ __forceinline__ void warp_finish()
    {
        const uint32_t lane = threadIdx.x & 31;
        if (used < kChunk && fits)
            for (uint32_t k = used + lane; k < kChunk; k += 32) out[base + k] = pad;
    }
    // One thread alone (the scalar head and tail).
    __device__ __forceinline__ void one_keep(bool in_play, T x)
    {
        if (!in_play) return;
        const unsigned long long at = atomicAdd(pos, 1ull);
        if (at < cap) out[at] = x;
    }
};

// Histograms: two 512-thread blocks a multiprocessor, so at most 64 registers. Left to the compiler (66-72 registers,
// one block), the counting pass ran at a quarter of the warps and read at 57-59% of the read bandwidth, float32 at
// 2^28 on an H100 (Nsight Compute: issue slots half idle, warps waiting on the estimate's dependent arithmetic);
// bounded, 83-87% for up to 256 bins (three blocks, 42 registers: no faster). The digit passes need fewer registers
// (48-64: two blocks already) and measured no faster bounded to two; theirs asks for one. The pilot's RANGE pass,
// the one full read of a quantile that takes the pilot, is bounded to two as histograms are: its intervals found by
// sums over their ends (dr_count_range_slot) took it to 69-70 registers unbounded, and 64 fit without spills. Every
// kind thus runs blocks of at most 512 threads (grid_of halves a larger request).
template <bool B> struct flag_t {
    static constexpr bool value = B;
};

template <dr_dtype_t DT, dr_count_kind_t K, bool Smem, bool Few>
__global__ void __launch_bounds__(512, K == DR_COUNT_DIGIT ? 1 : 2)
    count_kernel(dr_count_pass_t p, const void *__restrict__ edges, const void *__restrict__ in, uint64_t n,
                 unsigned long long *__restrict__ gcounts, uint32_t words, void *__restrict__ out,
                 unsigned long long *__restrict__ out_pos, unsigned long long out_cap)
{
    using T = typename elem<DT>::T;
    extern __shared__ uint32_t smem[];
    const uint32_t shift = Smem ? copies_of(words) : 0, copies = 1u << shift;
    counter_t<Smem> counter;
    if constexpr (Smem) {
        for (uint32_t w = threadIdx.x; w < words << shift; w += blockDim.x) smem[w] = 0;
        counter.lane_counts = smem + (threadIdx.x & (copies - 1)); /* blocks are whole warps: lane mod copies */
        counter.shift = shift;
    } else {
        counter.gcounts = gcounts;
    }
    __syncthreads();
    const hist_fast_t hf(p.hist);
    const range_regs_t<DT, Few> rr(p);

    const T *x = (const T *)in;
    constexpr int kPer = 16 / sizeof(T), kGroup = kPer < 4 ? kPer : 4;
    // Elements before the first 16-byte boundary, then whole vectors, then the tail.
    const uint64_t mis = ((uintptr_t)in & 15u) / sizeof(T);
    const uint64_t head = mis ? (uint64_t)min((uint64_t)(kPer - mis), n) : 0;
    const uint64_t nvec = (n - head) / kPer;
    const uint64_t tail_from = head + nvec * kPer;
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
    // The slots of elements in play (kept by a keeping pass) lie below play_end: a digit pass's groups (not NaN, at
    // play_end, nor kSkip), a pilot pass's intervals.
    const uint32_t play_end = K == DR_COUNT_RANGE ? (uint32_t)p.groups : (uint32_t)p.groups << p.width;
    const bool keeping = K != DR_COUNT_HIST && out != nullptr;
    keeper_t<T> kp{(T *)out, out_pos, out_cap, (T)p.keep_pad};
    auto in_play = [&](uint32_t slot) { return slot < play_end; };
    auto one = [&](T e) { // a scalar element (head, tail)
        T xs[1] = {e};
        uint32_t slot[1];
        slots_of<DT, K>(p, hf, rr, edges, xs, slot);
        if (slot[0] != kSkip) counter.add(slot[0]);
        if (keeping) kp.one_keep(in_play(slot[0]), e);
    };
    if (tid < head) one(x[tid]);
    // Warps step together through the vectors (kVecs of them per lane a step, loaded first), so the keeper's
    // ballots see every lane. Every step but a warp's last is whole, and takes no check of an element's index.
    const uint4 *v = (const uint4 *)(x + head);
    const uint64_t lane = threadIdx.x & 31, warp = tid >> 5, nwarps = nthreads >> 5;
    // Elements are slotted four at a time (a group: the slots of a whole vector of the small types, 8 or 16
    // elements, at once held too many registers), and kept a unit of groups at a time: a pilot pass kKeepN at once
    // (a whole step of the 4- and 8-byte types; 8 elements of the smaller, whose 16 or more held too many
    // registers), a digit pass a group (the unit that keeps its kernel at two blocks a multiprocessor: a step took
    // it to 64-80 registers; its first pass keeps a bucket, not 2% of the data).
    constexpr int kStep = kVecs * kPer, kGroups = kStep / kGroup;
    constexpr int kUnitGroups = K == DR_COUNT_RANGE ? kKeepN<T> / kGroup : 1, kUnit = kUnitGroups * kGroup;
    auto step = [&](uint64_t base, auto whole) {
        union {
            uint4 u[kVecs];
            T e[kStep];
        } w;
#pragma unroll
        for (int u = 0; u < kVecs; ++u) {
            const uint64_t i = base + (uint64_t)u * 32 + lane;
            if (decltype(whole)::value || i < nvec) w.u[u] = __ldcs(v + i); // read once: streaming
            else w.u[u] = make_uint4(0, 0, 0, 0); // past the end: slotted below, then skipped
        }
#pragma unroll
        for (int g0 = 0; g0 < kGroups; g0 += kUnitGroups) {
            uint32_t keep = 0;
#pragma unroll
            for (int g = g0; g < g0 + kUnitGroups; ++g) {
                const int u = g * kGroup / kPer; // the group's vector
                const bool valid = decltype(whole)::value || base + (uint64_t)u * 32 + lane < nvec;
                T e[kGroup];
                uint32_t slot[kGroup];
#pragma unroll
                for (int j = 0; j < kGroup; ++j) e[j] = w.e[g * kGroup + j];
                slots_of<DT, K>(p, hf, rr, edges, e, slot);
#pragma unroll
                for (int j = 0; j < kGroup; ++j) {
                    if (!valid) slot[j] = kSkip;
                    // A histogram's slots are all counted (below, above and NaN have theirs); a digit pass skips
                    // the elements out of play.
                    if ((K == DR_COUNT_HIST && decltype(whole)::value) || slot[j] != kSkip) counter.add(slot[j]);
                    keep |= (in_play(slot[j]) ? 1u : 0u) << ((g - g0) * kGroup + j);
                }
            }
            // One vote a unit: a later pass keeps a small part of the data, so many units keep nothing.
            if (keeping && __any_sync(0xffffffffu, keep != 0))
                kp.warp_keep(keep, *reinterpret_cast<const T(*)[kUnit]>(&w.e[g0 * kGroup]));
        }
    };
    uint64_t base = warp * 32 * kVecs;
    for (; base + 32 * kVecs <= nvec; base += nwarps * 32 * kVecs) step(base, flag_t<true>{});
    if (base < nvec) step(base, flag_t<false>{});
    if (keeping) kp.warp_finish();
    if (tail_from + tid < n) one(x[tail_from + tid]);
    counter.finish();
    if constexpr (Smem) {
        __syncthreads();
        // A slot's copies summed (fewer than 2^32: the block's whole count), thread w starting at copy w so that
        // the threads of a warp read different banks.
        for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
            uint32_t sum = 0;
            for (uint32_t c = 0; c < copies; ++c) sum += smem[(w << shift) | ((c + w) & (copies - 1))];
            if (sum) atomicAdd(&gcounts[w], (unsigned long long)sum);
        }
    }
}

// The kernel of a pass: its counts in shared memory or not (a pilot pass's few counts always are); a pilot pass's
// intervals in registers or not (range_regs_t).
template <dr_dtype_t DT, dr_count_kind_t K> auto kernel_of(const dr_count_pass_t *p, bool in_smem)
{
    if constexpr (K == DR_COUNT_RANGE)
        return p->groups <= kRangeRegs ? count_kernel<DT, K, true, true> : count_kernel<DT, K, true, false>;
    else return in_smem ? count_kernel<DT, K, true, false> : count_kernel<DT, K, false, false>;
}

// The launch's grid: one persistent wave, but no more blocks than vector steps to take, and enough that a block
// counts fewer than 2^31 elements (its shared counts are uint32).
template <dr_dtype_t DT, dr_count_kind_t K>
cudaError_t grid_of(const dr_count_pass_t *p, uint64_t n, int *block, int device, uint64_t *grid, size_t *smem_out,
                    bool *in_smem_out)
{
    const uint64_t words64 = dr_count_words(p);
    const bool in_smem = words64 <= kSmemCountsMax;
    const size_t smem = in_smem ? (words64 << copies_of(words64)) * sizeof(uint32_t) : 0;
    auto *kernel = kernel_of<DT, K>(p, in_smem);
    cudaError_t e;
    cudaFuncAttributes fa;
    if ((e = cudaFuncGetAttributes(&fa, kernel)) != cudaSuccess) return e;
    while (*block > fa.maxThreadsPerBlock && *block > 32) *block /= 2; /* the kernel's bound: 512 */
    if (smem > 48 * 1024 &&
        (e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) != cudaSuccess)
        return e;
    int sms = 0, per_sm = 0;
    if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) return e;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, *block, smem)) != cudaSuccess) return e;
    if (per_sm < 1) per_sm = 1;
    constexpr uint64_t kPer = 16 / sizeof(typename elem<DT>::T);
    uint64_t g = (uint64_t)sms * per_sm;
    const uint64_t need = (n / kPer / kVecs + *block - 1) / *block;
    if (g > need) g = need ? need : 1;
    const uint64_t min_grid = n / (1ull << 31) + 1;
    if (g < min_grid) g = min_grid;
    if (g > 0x7fffffffull) return cudaErrorInvalidValue;
    *grid = g;
    *smem_out = smem;
    *in_smem_out = in_smem;
    return cudaSuccess;
}

template <dr_dtype_t DT, dr_count_kind_t K>
cudaError_t launch(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n, uint64_t *d_counts,
                   int block, int device, cudaStream_t stream, void *d_keep, uint64_t *d_keep_pos, uint64_t keep_cap)
{
    if (n == 0) return cudaSuccess;
    uint64_t grid;
    size_t smem;
    bool in_smem;
    cudaError_t e = grid_of<DT, K>(p, n, &block, device, &grid, &smem, &in_smem);
    if (e != cudaSuccess) return e;
    kernel_of<DT, K>(p, in_smem)<<<(unsigned)grid, block, smem, stream>>>(
        *p, d_edges, d_in, n, (unsigned long long *)d_counts, (uint32_t)dr_count_words(p), d_keep,
        (unsigned long long *)d_keep_pos, (unsigned long long)keep_cap);
    return cudaGetLastError();
}

template <dr_dtype_t DT>
cudaError_t launch_kind(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n,
                        uint64_t *d_counts, int block, int device, cudaStream_t stream, void *d_keep,
                        uint64_t *d_keep_pos, uint64_t keep_cap)
{
    switch (p->kind) {
    case DR_COUNT_HIST:
        return launch<DT, DR_COUNT_HIST>(p, d_edges, d_in, n, d_counts, block, device, stream, nullptr, nullptr, 0);
    case DR_COUNT_DIGIT:
        return launch<DT, DR_COUNT_DIGIT>(p, d_edges, d_in, n, d_counts, block, device, stream, d_keep, d_keep_pos,
                                          keep_cap);
    case DR_COUNT_RANGE:
        return launch<DT, DR_COUNT_RANGE>(p, d_edges, d_in, n, d_counts, block, device, stream, d_keep, d_keep_pos,
                                          keep_cap);
    default: return cudaErrorInvalidValue;
    }
}

} // namespace

// The pilot's sample (count.h): thread i copies element dr_pilot_pos(i, stride).
template <typename T> __global__ void sample_kernel(const T *__restrict__ in, uint64_t stride, T *__restrict__ out,
                                                     uint64_t m)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = in[dr_pilot_pos(i, stride)];
}

extern "C" cudaError_t dr_gpu_sample(const void *d_in, size_t esize, uint64_t stride, void *d_out, uint64_t m,
                                     cudaStream_t stream)
{
    if (m == 0) return cudaSuccess;
    const unsigned block = 256, grid = (unsigned)(m / block + 1 < 4096 ? m / block + 1 : 4096);
    switch (esize) {
    case 1: sample_kernel<<<grid, block, 0, stream>>>((const uint8_t *)d_in, stride, (uint8_t *)d_out, m); break;
    case 2: sample_kernel<<<grid, block, 0, stream>>>((const uint16_t *)d_in, stride, (uint16_t *)d_out, m); break;
    case 4: sample_kernel<<<grid, block, 0, stream>>>((const uint32_t *)d_in, stride, (uint32_t *)d_out, m); break;
    case 8: sample_kernel<<<grid, block, 0, stream>>>((const uint64_t *)d_in, stride, (uint64_t *)d_out, m); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t dr_gpu_count_keep_slack(const dr_count_pass_t *p, uint64_t n, int block, int device,
                                               uint64_t *slack)
{
    if (block == 0) block = 512;
    uint64_t grid = 0, chunk = 0;
    size_t smem;
    bool in_smem;
    cudaError_t e = cudaErrorInvalidValue;
    switch ((dr_dtype_t)p->dtype) {
#define DR_SLACK_CASE(DT)                                                                                      \
    case DT:                                                                                                   \
        e = p->kind == DR_COUNT_RANGE ? grid_of<DT, DR_COUNT_RANGE>(p, n, &block, device, &grid, &smem, &in_smem) \
                                      : grid_of<DT, DR_COUNT_DIGIT>(p, n, &block, device, &grid, &smem, &in_smem); \
        chunk = kKeepChunk<typename elem<DT>::T>;                                                              \
        break;
        DR_SLACK_CASE(DR_INT8) DR_SLACK_CASE(DR_UINT8) DR_SLACK_CASE(DR_INT16) DR_SLACK_CASE(DR_UINT16)
        DR_SLACK_CASE(DR_INT32) DR_SLACK_CASE(DR_UINT32) DR_SLACK_CASE(DR_INT64) DR_SLACK_CASE(DR_UINT64)
        DR_SLACK_CASE(DR_FLOAT16) DR_SLACK_CASE(DR_BFLOAT16) DR_SLACK_CASE(DR_FLOAT32) DR_SLACK_CASE(DR_FLOAT64)
#undef DR_SLACK_CASE
    default: break;
    }
    *slack = grid * (uint64_t)block / 32 * chunk;
    return e;
}

extern "C" cudaError_t dr_gpu_count_pass(const dr_count_pass_t *p, const void *d_edges, const void *d_in, uint64_t n,
                                         uint64_t *d_counts, int block, int device, cudaStream_t stream,
                                         void *d_keep, uint64_t *d_keep_pos, uint64_t keep_cap)
{
    if (block == 0) block = 512;
    if (block < 32 || block > 1024 || (block & (block - 1))) return cudaErrorInvalidValue;
    switch ((dr_dtype_t)p->dtype) {
#define DR_COUNT_CASE(DT)                                                                                      \
    case DT:                                                                                                   \
        return launch_kind<DT>(p, d_edges, d_in, n, d_counts, block, device, stream, d_keep, d_keep_pos, keep_cap);
        DR_COUNT_CASE(DR_INT8) DR_COUNT_CASE(DR_UINT8) DR_COUNT_CASE(DR_INT16) DR_COUNT_CASE(DR_UINT16)
        DR_COUNT_CASE(DR_INT32) DR_COUNT_CASE(DR_UINT32) DR_COUNT_CASE(DR_INT64) DR_COUNT_CASE(DR_UINT64)
        DR_COUNT_CASE(DR_FLOAT16) DR_COUNT_CASE(DR_BFLOAT16) DR_COUNT_CASE(DR_FLOAT32) DR_COUNT_CASE(DR_FLOAT64)
#undef DR_COUNT_CASE
    default: return cudaErrorInvalidValue;
    }
}
