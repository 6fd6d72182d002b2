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
// Shared memory for a block's counts: up to 96 KiB (24576 counts, all copies together; a byte histogram's table 1 KiB
// more), two blocks of 512 threads to a multiprocessor.
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
// The margin is 2 where the plan's fast estimate does not apply (exact_estimate): no fraction lies farther than
// that from a whole number, so no element is settled by the estimate, with no test of `on` an element.
struct hist_fast_t {
    bool on;            // the plan's fast estimate applies (not exact_estimate)
    float ff, fl, fs, fm; // first, last, scale, margin
    double df, dl, ds, dm;
    int32_t bins;
    int32_t shift;          // the plan's place_shift where its margin is -1 (a zeroed plan's 0 is no shift): the
                            // integers' bins by (x - first) >> shift where >= 0
    uint64_t ufirst, width; // first as a 64-bit integer, last - first (shift >= 0)
    __device__ explicit hist_fast_t(const dr_hist_plan_t &h)
        : on(!h.exact_estimate), ff((float)h.first), fl((float)h.last), fs((float)h.scale),
          fm(h.exact_estimate ? 2.0f : (float)h.margin), df(h.first), dl(h.last), ds(h.scale),
          dm(h.exact_estimate ? 2.0 : h.margin), bins((int32_t)h.bins), shift(h.margin < 0 ? h.place_shift : -1),
          ufirst(shift >= 0 ? (uint64_t)(int64_t)h.first : 0), width(shift >= 0 ? (uint64_t)h.denom : 0)
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
// The float estimate needs no test of the range: an element below it has f < 0 (a negative difference, or -0 where
// the product underflows: a fraction within the margin), so i < 0; one above it has f within the margin of bins or
// past it, so i >= bins or the fraction is within the margin; f far outside (|f| >= 2^22, where t's low bits no
// longer hold r) gives t's bits at least 2^22 above kRound's or below them, i outside 0..bins-1 as an unsigned
// compare sees it (bins < 2^20 where the fast estimate applies); NaN and infinities make d NaN. The double one keeps
// its range test: there r lives in t's low word, which wraps for f below -2^31.
template <dr_dtype_t DT>
__device__ __forceinline__ uint32_t hist_estimate(const hist_fast_t &hf, typename elem<DT>::T x, bool &ok)
{
    if constexpr (DT == DR_FLOAT16 || DT == DR_BFLOAT16 || DT == DR_FLOAT32) {
        constexpr float kRound = 12582912.0f; // 1.5 * 2^23
        const float v = as_float<DT>(x);
        const float f = dr_fmul(dr_fsub(v, hf.ff), hf.fs);
        const float t = __fadd_rn(f, kRound);
        const float d = dr_fsub(f, dr_fsub(t, kRound));
        const uint32_t i = ((uint32_t)__float_as_int(t) - (uint32_t)__float_as_int(kRound)) - (d < 0.0f ? 1u : 0u);
        ok = fabsf(d) > hf.fm && i < (uint32_t)hf.bins;
        return i;
    } else {
        if constexpr (DT != DR_FLOAT64) {
            // Exact places in bins 2^shift wide (hist_plan's place_shift): the offset from first as an unsigned
            // 64-bit integer (below first it wraps past the width), the bin its high bits. An element outside
            // [first, last) goes to hist_near_edge, which finds it below or above, or at last in the last bin.
            if (hf.shift >= 0) {
                const uint64_t d = (DT == DR_UINT64 ? (uint64_t)x : (uint64_t)(int64_t)x) - hf.ufirst;
                ok = d < hf.width;
                return (uint32_t)(d >> hf.shift);
            }
        }
        constexpr double kRound = 6755399441055744.0; // 1.5 * 2^52: r in the low word
        const double v = DT == DR_FLOAT64 ? __longlong_as_double((long long)x) : (double)x;
        const double f = dr_dmul(dr_dsub(v, hf.df), hf.ds);
        const double t = dr_dadd(f, kRound);
        const double d = dr_dsub(f, dr_dsub(t, kRound));
        const int32_t i = __double2loint(t) - (d < 0.0 ? 1 : 0);
        ok = v >= hf.df && v <= hf.dl && fabs(d) > hf.dm && i < hf.bins;
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

// The slot of an element the fast estimate did not settle, from that estimate's bin `est` (f's floor): the range
// and NaN tests, then NumPy's correction against the edges, which is all dr_hist_bin_* does after an estimate made
// the same way (its truncation of a finite f, inside the range f >= 0, is est; kept to bins - 1 as dr_hist_trunc
// keeps it), with no conversion to double and back. Without a branch: both edges are loaded and the tests select the
// slot, so that the loads of a group's elements are in flight together. Data whose every element lies on an edge
// (float32 0.3 in 10 bins over [0, 1), 0.3 * 10 rounding to 3.0) takes this path for each element: 0.55x of CUB's
// HistogramEven's speed there with a branch a test, 0.71-0.73x without (H100, 2^28 elements; docs/performance.md).
// One load (the edge nearest the estimate decides where the margin is under half a bin) measured slower on this row
// and most others, the estimate then handing on the nearest whole number (docs/performance.md, "Tried and not taken").
// DR_HIST_CORRECT's increment after its decrement compares with the edge the decrement was taken on, so it never
// holds then: the two are exclusive, as the selects take them. Not for the plan's exact estimate (hist_fast_t::on
// false): dr_hist_bin_* whole there.
template <dr_dtype_t DT>
__device__ __forceinline__ uint32_t hist_near_edge(uint32_t bins, const hist_fast_t &hf, const void *edges,
                                                   typename elem<DT>::T x, uint32_t est)
{
    constexpr bool kF = DT == DR_FLOAT16 || DT == DR_BFLOAT16 || DT == DR_FLOAT32;
    using V = typename std::conditional<kF, float, double>::type;
    V v, lo, hi;
    if constexpr (kF) v = as_float<DT>(x), lo = hf.ff, hi = hf.fl;
    else v = DT == DR_FLOAT64 ? __longlong_as_double((long long)x) : (double)x, lo = hf.df, hi = hf.dl;
    const V *e = (const V *)edges;
    const uint32_t i = min(est, bins - 1u); // edges i and i + 1 exist (bins + 1 of them) whatever est is
    const V at = __ldg(e + i), next = __ldg(e + i + 1);
    uint32_t slot = v < at ? (i == 0 ? bins : i - 1u) // dr_hist_bin_*'s -1 (below a first edge rounded up): below
                           : (i != bins - 1u && v >= next ? i + 1u : i);
    slot = v > hi ? bins + 1u : slot;
    slot = v < lo ? bins : slot;
    return v != v ? bins + 2u : slot;
}

// A histogram of bytes takes each element's slot from a table of the 256 values' slots in shared memory, made by
// the block from the rules (hist_exact) before it counts: one load an element, where the estimate in double and its
// conversions are a dozen instructions, more than the bytes' read leaves time for.
template <dr_dtype_t DT, dr_count_kind_t K>
constexpr bool kByteTable = K == DR_COUNT_HIST && sizeof(typename elem<DT>::T) == 1;

// The slots of a thread's elements of one vector. A histogram takes the fast estimate of all of them first and
// looks at the edges only for those it does not settle (one branch a vector, not one an element, which measured
// the pass's cost in branch and reconvergence instructions); bytes look their slots up (byte_slot: the table).
template <dr_dtype_t DT, dr_count_kind_t K, int N>
__device__ __forceinline__ void slots_of(const dr_count_pass_t &p, const hist_fast_t &hf, const void *edges,
                                         const uint32_t *byte_slot, const typename elem<DT>::T (&x)[N],
                                         uint32_t (&slot)[N])
{
    if constexpr (kByteTable<DT, K>) {
#pragma unroll
        for (int j = 0; j < N; ++j) slot[j] = byte_slot[(uint8_t)x[j]];
    } else if constexpr (K == DR_COUNT_HIST) {
        uint32_t slow = 0;
#pragma unroll
        for (int j = 0; j < N; ++j) {
            bool ok;
            slot[j] = hist_estimate<DT>(hf, x[j], ok);
            slow |= (ok ? 0u : 1u) << j;
        }
        if (slow) {
            if (hf.on) {
#pragma unroll
                for (int j = 0; j < N; ++j) {
                    const uint32_t s = hist_near_edge<DT>(p.hist.bins, hf, edges, x[j], slot[j]);
                    slot[j] = slow >> j & 1u ? s : slot[j];
                }
            } else {
#pragma unroll
                for (int j = 0; j < N; ++j)
                    if (slow >> j & 1u) slot[j] = hist_exact<DT>(p, edges, x[j]);
            }
        }
    } else if constexpr (K == DR_COUNT_RANGE) {
#pragma unroll
        for (int j = 0; j < N; ++j) {
            bool nan;
            const uint64_t k = key_of<DT>(x[j], &nan);
            slot[j] = nan ? 2u * (uint32_t)p.groups + 1u : dr_count_range_slot(&p, k);
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

// The array's walk, the same in count_kernel and range_kernel: the elements before the first 16-byte boundary
// (head, one a thread), whole vectors from there (nvec, a warp's steps), then the tail from tail_from.
template <typename T> struct walk_t {
    uint64_t head, nvec, tail_from;
    __device__ walk_t(const void *in, uint64_t n)
    {
        constexpr int kPer = 16 / sizeof(T);
        const uint64_t mis = ((uintptr_t)in & 15u) / sizeof(T);
        head = mis ? (uint64_t)min((uint64_t)(kPer - mis), n) : 0;
        nvec = (n - head) / kPer;
        tail_from = head + nvec * kPer;
    }
};

// A warp step's vectors for this lane, read once (streaming): vector base + 32 u + lane for u < kVecs, so that the
// lanes of a warp read 32 consecutive vectors at a time; past nvec (a warp's last step, not Whole) zeros, which the
// caller leaves uncounted. count_kernel and range_kernel walk the array alike.
template <bool Whole>
__device__ __forceinline__ void load_step(uint4 (&u)[kVecs], const uint4 *v, uint64_t base, uint64_t lane,
                                          uint64_t nvec)
{
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
        const uint64_t i = base + (uint64_t)k * 32 + lane;
        if (Whole || i < nvec) u[k] = __ldcs(v + i);
        else u[k] = make_uint4(0, 0, 0, 0);
    }
}

// A digit pass that also keeps the elements in play, so the later passes read those alone. A warp reserves room
// kKeepChunk<T> elements at a time (one atomic per chunk: one per element, or per warp step, would all meet on one
// counter), fills it in order, and pads what is left of its last chunk with `pad`, an element no later pass has in
// play (a NaN for floats; for integers one whose higher digits match no group). The count kept is thus the
// elements in play plus at most kKeepChunk<T> per warp (dr_gpu_count_keep_slack). A chunk is a warp's unit of
// kKeepN<T> elements a lane, so the elements a unit keeps fill at most one chunk more, placed by one scan of the
// lanes' counts. A digit pass keeps a group of four elements at a time (the unit that keeps its kernel at two blocks
// a multiprocessor; its first pass keeps a bucket, not 2% of the data); a pilot pass kKeepN<T> at a time (a whole
// step of the 4- and 8-byte types, 8 elements of the smaller, whose 16 or more held too many registers).
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

    // Whole warps only (every lane calls it, in step), each lane with `cnt` elements to keep, at most kChunk / 32:
    // places for them come from a scan of the lanes' counts, and fill(first, put) stores them, put(at, x) storing x
    // at place `at` (the lane's are first, first + 1, ...).
    template <typename Fill> __device__ __forceinline__ void warp_place(uint32_t cnt, Fill fill)
    {
        const uint32_t lane = threadIdx.x & 31;
        uint32_t incl = cnt;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const uint32_t y = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= (uint32_t)o) incl += y;
        }
        const uint32_t total = __shfl_sync(0xffffffffu, incl, 31);
        // The chunk fills up: the lanes past its end go to the next one (total <= kChunk: one at most).
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
        const unsigned long long this_base = base;
        const bool this_fits = fits;
        fill(used + incl - cnt, [&](uint32_t at, T x) {
            const bool in_this = at < kChunk;
            if (in_this ? this_fits : next_fits) out[(in_this ? this_base : to_next) + at] = x;
        });
        if (spill) {
            base = next;
            fits = next_fits;
            used = used + total - kChunk;
        } else {
            used += total;
        }
    }
    // The lane's elements e[j] whose bit j of `mask` is set (whole warps, as warp_place).
    template <int N> __device__ __forceinline__ void warp_keep(uint32_t mask, const T (&e)[N])
    {
        static_assert(32 * N <= kChunk, "a unit's elements fill at most one chunk more");
        warp_place(__popc(mask), [&](uint32_t at, auto put) {
#pragma unroll
            for (int j = 0; j < N; ++j)
                if (mask >> j & 1u) put(at++, e[j]);
        });
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
// (48-64: two blocks already) and measured no faster bounded to two; theirs asks for one. The pilot's RANGE pass of
// many intervals, the one full read of a quantile that takes the pilot, is bounded to two as histograms are: its
// intervals found by sums over their ends (dr_count_range_slot) took it to 69-70 registers unbounded, and 64 fit
// without spills (range_kernel, of a few intervals, has the same bounds: 44-64 registers). Every kind thus runs
// blocks of at most 512 threads (grid_of halves a larger request).
template <bool B> struct flag_t {
    static constexpr bool value = B;
};

template <dr_dtype_t DT, dr_count_kind_t K, bool Smem>
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
    uint32_t *const byte_slot = smem + (Smem ? words << shift : 0); // kByteTable: after the counts
    if constexpr (kByteTable<DT, K>)
        for (uint32_t v = threadIdx.x; v < 256; v += blockDim.x)
            byte_slot[v] = hist_exact<DT>(p, edges, (typename elem<DT>::T)v);
    __syncthreads();
    const hist_fast_t hf(p.hist);

    const T *x = (const T *)in;
    constexpr int kPer = 16 / sizeof(T), kGroup = kPer < 4 ? kPer : 4;
    const walk_t<T> walk(in, n);
    const uint64_t head = walk.head, nvec = walk.nvec, tail_from = walk.tail_from;
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
        slots_of<DT, K>(p, hf, edges, byte_slot, xs, slot);
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
        load_step<decltype(whole)::value>(w.u, v, base, lane, nvec); // past the end: slotted, then skipped
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
                slots_of<DT, K>(p, hf, edges, byte_slot, e, slot);
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

// The pilot's RANGE pass of at most kRangeRegs intervals (a median's one, three quantiles' three): the pass that
// reads the whole array, so every instruction an element costs counts. Each element is compared with the intervals'
// ends in its own order (floats as float or double, where -0 equals +0 and NaN compares false, as the keys order
// them), the ends held in registers, and a thread counts in registers, for each interval, its elements at or above
// the start and those in it; the slots' counts follow from those (range_word), added to the block's once at the end.
// Kept elements are staged in shared memory a unit at a time, and a lane with elements in play reads those alone
// back by index (warp_place stores them). Its predecessor, which summed over the ends for each element's slot, added
// one shared atomic an element and ran a predicated store for each of a unit's elements, took 68 instructions an
// element (float32 median, H100, Nsight Compute: issue-bound at 47% of the read bandwidth); this one's whole-step
// loop is 145 SASS instructions for 16 float32 elements (one interval) and 268 for 8 int64 elements (four), and the
// pass reads at 2.7-2.8 TB/s on an H100 (docs/performance.md, "Quantiles"). Places past the pass's intervals hold
// the empty interval [top, top - 1] of the keys, which holds no element. The two instantiations, one interval and
// kRangeRegs, keep a median from paying for four.
constexpr int kRangeRegs = 4;

// The order an element is compared in: V, the element's value (float16 and bfloat16 widened to float, exactly),
// and an interval end's key as a V. A float's keys past those of -inf and +inf are NaN bit patterns no element has,
// and come out NaN: nothing compares at or above such a start, and an end above +inf's is taken as +inf (below);
// an interval starting below -inf's key would count nothing, so the pilot starts its lowest at -inf's
// (src/lib/distrib.c, number_keys).
template <dr_dtype_t DT> struct range_order {
    using T = typename elem<DT>::T;
    static constexpr bool kFloat = DT == DR_FLOAT16 || DT == DR_BFLOAT16 || DT == DR_FLOAT32 || DT == DR_FLOAT64;
    using V = typename std::conditional<DT == DR_FLOAT64, double,
                                        typename std::conditional<kFloat, float, T>::type>::type;
    static __device__ __forceinline__ V value(T x)
    {
        if constexpr (DT == DR_FLOAT16) return dr_f16_to_f32(x);
        else if constexpr (DT == DR_BFLOAT16) return dr_bf16_to_f32(x);
        else if constexpr (DT == DR_FLOAT32) return __uint_as_float(x);
        else if constexpr (DT == DR_FLOAT64) return __longlong_as_double((long long)x);
        else return x;
    }
    static __device__ __forceinline__ V of_key(uint64_t key)
    {
        constexpr int bits = 8 * sizeof(T);
        if constexpr (kFloat) return value((T)dr_key_float_bits(key, bits));
        else if constexpr (std::is_signed<T>::value) return (T)(key ^ (1ull << (bits - 1)));
        else return (T)key;
    }
};

// A thread's counts over the R intervals: ge[g] its elements at or above interval g's start, in[g] those in it,
// nan its NaN, total every element it counted (NaN compares false: in neither ge nor in).
template <int R> struct range_counts_t {
    uint32_t ge[R] = {}, in[R] = {}, nan = 0, total = 0;
};

// Counts one element v against interval [lo, hi] and sets `bit` in mask where v is in it. Written in PTX so that
// each count is one predicated add: C++'s `count += v >= lo` compiled to a compare, an add and a predicated move
// (three instructions a count, 27 an element for three quantiles; Hopper SASS), and the "in play" test to the same
// compares again.
#define DR_RANGE_PTX(TY, CV)                                                                                      \
    asm("{\n\t.reg .pred a, i;\n\t"                                                                            \
        "setp.ge." TY " a, %3, %4;\n\t"                                                                         \
        "setp.le.and." TY " i, %3, %5, a;\n\t"                                                                  \
        "@a add.u32 %0, %0, 1;\n\t"                                                                            \
        "@i add.u32 %1, %1, 1;\n\t"                                                                            \
        "@i or.b32 %2, %2, %6;\n\t}"                                                                            \
        : "+r"(ge), "+r"(in), "+r"(mask)                                                                        \
        : CV(v), CV(lo), CV(hi), "r"(bit))
template <typename V>
__device__ __forceinline__ void range_count(V v, V lo, V hi, uint32_t &ge, uint32_t &in, uint32_t &mask, uint32_t bit)
{
#define DR_F(x) "f"(x)
#define DR_D(x) "d"(x)
#define DR_R(x) "r"(x)
#define DR_L(x) "l"(x)
    if constexpr (std::is_same<V, float>::value) DR_RANGE_PTX("f32", DR_F);
    else if constexpr (std::is_same<V, double>::value) DR_RANGE_PTX("f64", DR_D);
    else if constexpr (sizeof(V) == 8 && std::is_signed<V>::value) DR_RANGE_PTX("s64", DR_L);
    else if constexpr (sizeof(V) == 8) DR_RANGE_PTX("u64", DR_L);
    else if constexpr (std::is_same<V, int32_t>::value) DR_RANGE_PTX("s32", DR_R);
    else if constexpr (std::is_same<V, uint32_t>::value) DR_RANGE_PTX("u32", DR_R);
    else if constexpr (std::is_signed<V>::value) // the small integers widened: the same order
        range_count<int32_t>(v, lo, hi, ge, in, mask, bit);
    else range_count<uint32_t>(v, lo, hi, ge, in, mask, bit);
#undef DR_F
#undef DR_D
#undef DR_R
#undef DR_L
}
#undef DR_RANGE_PTX

// One more NaN where v is NaN (one predicated add, as range_count's).
template <typename V> __device__ __forceinline__ void count_nan(V v, uint32_t &nan)
{
    if constexpr (std::is_same<V, float>::value)
        asm("{\n\t.reg .pred p;\n\tsetp.nan.f32 p, %1, %1;\n\t@p add.u32 %0, %0, 1;\n\t}" : "+r"(nan) : "f"(v));
    else if constexpr (std::is_same<V, double>::value)
        asm("{\n\t.reg .pred p;\n\tsetp.nan.f64 p, %1, %1;\n\t@p add.u32 %0, %0, 1;\n\t}" : "+r"(nan) : "d"(v));
}

// The RANGE pass's word w (dr_count_words; k intervals) from a thread's counts: interval g is in[g], the gap below
// interval 0 every element not NaN less ge[0], the gap below interval g ge[g - 1] - in[g - 1] - ge[g] (at or above
// the one before, not in it, below this one), the gap above the last ge[k - 1] - in[k - 1], then NaN.
template <int R> __device__ __forceinline__ uint32_t range_word(const range_counts_t<R> &c, uint32_t k, uint32_t w)
{
    uint32_t r = c.nan;
#pragma unroll
    for (int g = 0; g < R; ++g) {
        if ((uint32_t)g >= k) break; // k is uniform: the padded places count nothing here
        if (w == (uint32_t)g) r = c.in[g];
        if (w == k + g) r = (g == 0 ? c.total - c.nan : c.ge[g - 1] - c.in[g - 1]) - c.ge[g];
        if (w == k + g + 1 && g + 1 == (int)k) r = c.ge[g] - c.in[g];
    }
    return r;
}

template <dr_dtype_t DT, int R>
__global__ void __launch_bounds__(512, 2)
    range_kernel(dr_count_pass_t p, const void *__restrict__, const void *__restrict__ in, uint64_t n,
                 unsigned long long *__restrict__ gcounts, uint32_t words, void *__restrict__ out,
                 unsigned long long *__restrict__ out_pos, unsigned long long out_cap)
{
    using T = typename elem<DT>::T;
    using O = range_order<DT>;
    using V = typename O::V;
    // A unit: the elements counted, then kept, at once (kKeepN).
    constexpr int kPer = 16 / sizeof(T), kStep = kVecs * kPer, kUnit = kKeepN<T>,
                  kUnitVecs = kUnit >= kPer ? kUnit / kPer : 1;
    static_assert(32 * kUnit <= (int)kKeepChunk<T>, "a unit's kept elements fill at most one chunk more");
    // The block's staged unit, vector u of thread t at u * blockDim.x + t (a warp's stores on distinct banks), and
    // its counts. The block is at most 512 threads (the bounds).
    __shared__ uint4 stage[kUnitVecs * 512];
    __shared__ unsigned long long block_counts[2 * R + 2];
    if (threadIdx.x < 2 * R + 2) block_counts[threadIdx.x] = 0;

    V lo[R], hi[R];
    const int k = p.groups;
#pragma unroll
    for (int g = 0; g < R; ++g) {
        const uint64_t top = sizeof(T) == 8 ? ~0ull : (1ull << (8 * sizeof(T))) - 1;
        lo[g] = O::of_key(g < k ? p.prefix[g] : top);
        hi[g] = O::of_key(g < k ? p.prefix[k + g] : top - 1);
        if constexpr (O::kFloat) // an interval that ends among the NaN keys holds every number from its start
            if (hi[g] != hi[g]) hi[g] = (V)INFINITY;
    }
    range_counts_t<R> c;
    // Counts element v; sets `bit` in mask where it is in play (in an interval).
    auto count = [&](V v, uint32_t &mask, uint32_t bit) {
#pragma unroll
        for (int g = 0; g < R; ++g) range_count<V>(v, lo[g], hi[g], c.ge[g], c.in[g], mask, bit);
        count_nan<V>(v, c.nan);
    };
    const T *x = (const T *)in;
    const walk_t<T> walk(in, n);
    const uint64_t head = walk.head, nvec = walk.nvec, tail_from = walk.tail_from;
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
    const bool keeping = out != nullptr;
    keeper_t<T> kp{(T *)out, out_pos, out_cap, (T)p.keep_pad};
    auto one = [&](T e) { // a scalar element (head, tail)
        ++c.total;
        uint32_t in_play = 0;
        count(O::value(e), in_play, 1u);
        if (keeping) kp.one_keep(in_play != 0, e);
    };
    if (tid < head) one(x[tid]);
    const uint4 *v = (const uint4 *)(x + head);
    const uint64_t lane = threadIdx.x & 31, warp = tid >> 5, nwarps = nthreads >> 5;
    auto step = [&](uint64_t base, auto whole) {
        union {
            uint4 u[kVecs];
            T e[kStep];
        } w;
        load_step<decltype(whole)::value>(w.u, v, base, lane, nvec); // past the end: neither counted nor kept
        if (decltype(whole)::value) c.total += kStep;
        // A unit at a time, one vote a unit: the pilot's intervals hold about 2% of the data, so a lane keeps 0 to 2
        // elements a unit.
#pragma unroll
        for (int e0 = 0; e0 < kStep; e0 += kUnit) {
            const int v0 = e0 / kPer; // the unit's first vector
            uint32_t mask = 0;
#pragma unroll
            for (int j = 0; j < kUnit; ++j) {
                const int u = (e0 + j) / kPer;
                if (!decltype(whole)::value && base + (uint64_t)u * 32 + lane >= nvec) continue;
                if (!decltype(whole)::value) ++c.total;
                count(O::value(w.e[e0 + j]), mask, 1u << j);
            }
            if (keeping && __any_sync(0xffffffffu, mask != 0)) {
                if (mask)
#pragma unroll
                    for (int u = 0; u < kUnitVecs; ++u) stage[u * blockDim.x + threadIdx.x] = w.u[v0 + u];
                kp.warp_place(__popc(mask), [&](uint32_t at, auto put) {
                    for (uint32_t m = mask; m; m &= m - 1) {
                        const int i = e0 + __ffs((int)m) - 1; // the element's place in the step
                        put(at++, ((const T *)&stage[(i / kPer - v0) * blockDim.x + threadIdx.x])[i % kPer]);
                    }
                });
            }
        }
    };
    uint64_t base = warp * 32 * kVecs;
    for (; base + 32 * kVecs <= nvec; base += nwarps * 32 * kVecs) step(base, flag_t<true>{});
    if (base < nvec) step(base, flag_t<false>{});
    if (keeping) kp.warp_finish();
    if (tail_from + tid < n) one(x[tail_from + tid]);

    // The block's counts: each warp's sums (one reduction an instruction), then the block's, once, to the global.
    __syncthreads();
    for (uint32_t w = 0; w < words; ++w) {
        uint32_t s = range_word<R>(c, (uint32_t)k, w);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o); // __reduce_add_sync: sm_80 on

        if (lane == 0 && s) atomicAdd(&block_counts[w], (unsigned long long)s);
    }
    __syncthreads();
    if (threadIdx.x < words && block_counts[threadIdx.x]) atomicAdd(&gcounts[threadIdx.x], block_counts[threadIdx.x]);
}

// The kernel of a pass: the pilot's few intervals in range_kernel, else count_kernel with its counts in shared
// memory or not.
using count_kernel_t = void (*)(dr_count_pass_t, const void *, const void *, uint64_t, unsigned long long *, uint32_t,
                                void *, unsigned long long *, unsigned long long);
template <dr_dtype_t DT, dr_count_kind_t K> count_kernel_t kernel_of(const dr_count_pass_t *p, bool in_smem)
{
    if constexpr (K == DR_COUNT_RANGE)
        return p->groups == 1                              ? range_kernel<DT, 1>
               : p->groups >= 1 && p->groups <= kRangeRegs ? range_kernel<DT, kRangeRegs>
                                                           : count_kernel<DT, K, true>;
    else return in_smem ? count_kernel<DT, K, true> : count_kernel<DT, K, false>;
}

// The launch's grid: one persistent wave, but no more blocks than vector steps to take, and enough that a block
// counts fewer than 2^31 elements (its shared counts are uint32).
template <dr_dtype_t DT, dr_count_kind_t K>
cudaError_t grid_of(const dr_count_pass_t *p, uint64_t n, int *block, int device, uint64_t *grid, size_t *smem_out,
                    bool *in_smem_out)
{
    const uint64_t words64 = dr_count_words(p);
    const bool in_smem = words64 <= kSmemCountsMax;
    const bool regs = K == DR_COUNT_RANGE && p->groups >= 1 && p->groups <= kRangeRegs; // range_kernel: no dynamic
    const size_t smem = (in_smem && !regs ? (words64 << copies_of(words64)) * sizeof(uint32_t) : 0) +
                        (kByteTable<DT, K> ? 256 * sizeof(uint32_t) : 0);
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
