/* The multipass kernel's exact path (acc DR_ACC_EXACT): the exact sum of every element of a float32, float64,
 * float16 or bfloat16 array, as one normalized dr_exact_t (src/common/accum.h, "Exact sums"), bit-identical to
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
 *   1. A thread adds what it reads as kernels/exact_window.cuh describes: the elements in its window of binades (and
 *      zeros) into float64 accumulators that cannot round, a round (kUnroll vectors) at a time; each round's sums,
 *      as integers, into a 128-bit integer V in registers; the rare other elements (out of the window, infinities,
 *      NaNs) into the warp's words or the thread's bins, after which the window moves to them. Every element's
 *      bits are ORed (sign bit flipped) into a word that says whether a term other than -0.0 was seen.
 *   2. The warp's 68 words are in shared memory and take shared atomics, a 64-bit add as two 32-bit ones
 *      (warp_words): V when the window moves and when the walk ends (five limbs: four digits below 2^32 and a
 *      small signed top), a float64's missed element's three digits, a float32 thread's float64 bins every 64
 *      misses and a bfloat16 thread's integer bins at its end (three limbs each). Each warp has its own words, so
 *      32 lanes contend at most.
 *   3. At the block's end each word of the block total is, over the block's warps, the warp word's low digit plus
 *      the carry (floor(word / 2^32)) of the warp's word below (word 67 whole): the warps' words half-normalized and
 *      summed in one step, by threads 0..67. A grid of one block normalizes it (dr_exact_normalize, the host's carry
 *      chain) and writes it to the result. Otherwise the block adds its nonzero words
 *      into the grid's one accumulator in the workspace with 64-bit global atomics (REDs: a thread's fence waits
 *      for its own one or two; a block total of typical data spans a few words, of wide-exponent data up to all
 *      68) and ORs its flags in; the last block to finish (counted with an acq_rel atomic as multipass's
 *      finish(), plus a fence on each side, belt and braces) takes the accumulator back a word a thread with
 *      atomic exchanges of zero, normalizes it once and writes the result. So the workspace is zero again for the
 *      next launch, and no thread sums the blocks' partials in turn (that serial sum, about 176 partials a thread
 *      at 528 blocks, cost 40-80 us a call; the REDs overlap with the other blocks' work).
 * Bounds (no int64 overflows; DR_EXACT_ADDS in accum.h is the host's):
 *   - the plan gives every thread at most 2^23 + 10 elements (grid >= n / (block 2^23): a head element, 2^23
 *     elements of whole vectors plus at most one vector (8 elements) more, a tail element; the bulk plan: at most
 *     max_chunks chunks a block, see plan_exact), so no count is needed in the loop; exact_window.cuh's bounds
 *     follow from it: V stays below 2^116, and a lane adds to a word fewer than 2^25 times (a flush a round, a
 *     missed element's digits or a bin's, the last flush), each less than 2^32 in magnitude;
 *   - warp word: 32 lanes x 2^25 < 2^30 adds (DR_EXACT_ADDS) between normalizations: below 2^62 in magnitude. Word
 *     67 takes none (the highest word a flush or a direct add reaches is 66);
 *   - block total: per warp, a digit below 2^32 plus a carry below 2^30 in magnitude, summed over at most 32
 *     warps: below 2^38 (word 67: carries alone);
 *   - grid accumulator: each block adds its total as it stands (words below 2^38), over at most 2^24 blocks (the
 *     plan refuses a larger grid, which would need more than 2^52 elements): below 2^62, so
 *     the last block's carry chain (dr_exact_normalize) cannot overflow either. Normalizing each block's total
 *     first, as an earlier version did, put one thread's 68-word carry chain at every block's end, and turned a
 *     negative total into 68 nonzero words.
 * Block and grid shapes: r->block threads (a power of two, 32..1024, so whole warps and every full-mask shuffle has
 * all 32 lanes), 544 bytes of dynamic shared memory per warp for its words (17 KiB at 1024 threads) and, for
 * bfloat16, 64 bytes per thread for its bins (81 KiB in all at 1024 threads), for float32 88 (105 KiB); no early
 * return before a barrier (the last-block test is uniform: it reads a shared flag after a barrier). Workspace: the
 * done-counter, then the grid's dr_exact_t (both zero before first use; the last block returns them to zero). No
 * cluster path (plans have cluster = 0). Large float64 inputs on a Hopper, with blocks of 256 or 512 threads, take
 * multipass's bulk copies into shared-memory stages first (bulk_walk; plans have bulk = 1, and 64 KiB more shared
 * memory a block, three blocks a multiprocessor at most), the walk taking what no chunk covers. */
#include <cuda/atomic>
#include <limits.h>

#include "common.cuh"
#include "exact_window.cuh"
#include "internal.h"

namespace {

constexpr int kWords = DR_EXACT_WORDS;      /* 68 words of a dr_exact_t */
constexpr int kUnroll = 4;                  /* vector loads in flight per thread, as multipass */
constexpr size_t kAccOffset = 256;          /* workspace: the done-counter, then the grid's accumulator */
constexpr int kWalkLog2 = 23;               /* the plan: at most 2^23 + 10 elements a thread (the bounds above) */
constexpr size_t kMaxGrid = (size_t)1 << 24; /* blocks adding into the grid's accumulator (the bounds above) */
constexpr int kRoundsPerThread = 2;         /* rounds of kUnroll vectors per thread before a second block is
                                               worth it: a first guess (a block's end costs more than multipass's),
                                               to be measured */
static_assert(sizeof(dr_exact_t) == 8 * (kWords + 1), "dr_exact_t: 68 words, then flags and pad");
/* Large float64 inputs on Hopper (from DR_GPU_BULK_FROM_BYTES): multipass's bulk-copy shape (kernels/multipass.cu,
 * multipass_bulk_kernel): thread 0 keeps kBulkStages bulk copies of kBulkStageBytes in flight into shared memory,
 * and the block's threads take their rounds from there, so the bytes in flight no longer depend on the registers
 * the window's arithmetic leaves (64 a thread: half a multiprocessor's threads).
 *
 * float64 only (H200, random data as % of int32 sum's bandwidth in the same run): float64 94.7 ->
 * 99.9% at 2^28 (at 256 threads, three blocks a multiprocessor; two: 99.3%). The others lost at 2^28 (float32
 * 96.4 -> 95.6%, float16 93.3 -> 92.7%, bfloat16 92.6 -> 92.4%), gained at most 1.3 points at 2^30, and lost on
 * spread data, which is issue-bound and has fewer warps here (float32 946 -> 725 GB/s, bfloat16 870 -> 795).
 * Spread float64 loses too, less: 1029 -> 925 GB/s at three blocks (791 at two). Three blocks of 256 is what
 * shared memory allows (68 KiB each); at 512 threads the registers allow two. Blocks of 256 and 512 only: below,
 * three blocks a multiprocessor would leave it 3 to 12 warps for the window's arithmetic (not measured). */
constexpr unsigned kBulkStageBytes = DR_GPU_BULK_CHUNK_BYTES;
constexpr int kBulkStages = 2;
constexpr int kBulkBlocksPerSm = 3;
constexpr size_t kBulkSmem = (size_t)kBulkStages * kBulkStageBytes;
constexpr unsigned kStageVec = kBulkStageBytes / 16;
constexpr int kBulkMinBlock = 256, kBulkMaxBlock = 512;
/* a thread takes whole rounds of a stage at every (power-of-two) block size up to kBulkMaxBlock */
static_assert(kStageVec % (kUnroll * kBulkMaxBlock) == 0, "a stage is whole rounds of every bulk block size");

/* The element family of each input type (exact_window.cuh). */
template <class In> struct family_of;
template <> struct family_of<double> { static const int value = DR_XW_F64; };
template <> struct family_of<float> { static const int value = DR_XW_F32; };
template <> struct family_of<dr_f16_t> { static const int value = DR_XW_F16; };
template <> struct family_of<dr_bf16_t> { static const int value = DR_XW_BF16; };
/* Whether In's large inputs take the bulk copies (above: float64 only). */
template <class In> constexpr bool kTakesBulk = family_of<In>::value == DR_XW_F64;

/* The warp's words in shared memory, as exact_window.cuh's sink. A word is read as a signed 64-bit integer (after
 * the block's barrier) but added to as two 32-bit halves (dr_xw_add_halves): a 64-bit shared atomic is a
 * compare-and-swap loop on sm_90 (ATOMS.CAST.SPIN.64), which lanes adding to the same words retry, where a 32-bit
 * add is one ATOMS.ADD. The bins are the thread's column of shared memory after the words: bfloat16's integers,
 * float32's float64s. */
struct warp_words {
    unsigned long long *w;
    unsigned long long *bins; /* the thread's bin 0; bin k at bins[k * stride] */
    unsigned stride;
    __host__ __device__ long long &bin(int k) const { return reinterpret_cast<long long &>(bins[k * stride]); }
    __host__ __device__ double &fbin(int k) const { return reinterpret_cast<double &>(bins[k * stride]); }
    __host__ __device__ void add(int i, long long v) const
    {
#if defined(__CUDA_ARCH__)
        uint32_t *half = reinterpret_cast<uint32_t *>(w + i);
        dr_xw_add_halves(v, [half](int h, uint32_t x) { return atomicAdd(half + h, x); });
#else
        (void)i, (void)v;
#endif
    }
};

/* Rounds of kUnroll vectors, load(i, v) giving v[u] = vector i + u * stride of the source, from index i while
 * i + 3 * stride < limit (float32: while lane 31's, i + lag, is), i advanced past each. Every lane of a full warp
 * calls it the same way (float32 votes across the warp).
 *
 * float64: each round element by element (dr_xw_add_vectors: the misses inline, one by one into the words).
 *
 * float32: an inner loop of rounds whose 16 elements all fit the window (dr_xw_round_hits, which spills them), left
 * for a round where some did not, whose misses go into the bins outside it (dr_xw_round_missed's unrolled pass:
 * inside the loop it cost random data 8 points of bandwidth). The warp leaves the inner loop together: when any
 * lane's round missed (the vote), and when any lane has no whole round left (the loop runs on lane 31's index; the
 * caller's last loop takes what is left). A lane that left alone waited at the loop's exit until the others had
 * walked all their data, then walked the rest of its own alone, its loads no longer coalesced: on random float32
 * data, where a lane misses once in some hundred rounds (the window holds 25 binades, the data 24 and zero), that
 * read 1.4-2.4 times the data from DRAM and ran at 25-47% of int32 sum's bandwidth (H200, n >= 2^28).
 *
 * float16 and bfloat16: an inner loop of rounds that pass dr_xw_round_fast's test, left for one that fails, which
 * goes element by element outside it (dr_xw_round_rest): so the registers of that path are not the hot loop's
 * (inside it, or called from it, ptxas spilled the loop to local memory). Each lane leaves alone, unlike float32's:
 * float16's window holds every finite value, so only infinities and NaNs fail, and bfloat16's holds 40 binades, so
 * data that fails at all (spread over more) fails every round in every lane. Leaving together (H200) cost
 * random data about a point at 2^28 and spread bfloat16 16% (870 -> 731 GB/s), with the code generation the only
 * difference on both (random data never fails, spread data always does). Not measured: bfloat16 data whose rare
 * outliers lie more than 40 binades from the rest, where a lane would split off as float32's did. */
template <int F, class Load>
__device__ __forceinline__ void rounds(dr_xw_t &w, const warp_words &sink, size_t &i, size_t stride, size_t limit,
                                       size_t lag, const Load &load)
{
    if constexpr (F == DR_XW_F64) {
        for (; i + (kUnroll - 1) * stride < limit; i += kUnroll * stride) {
            uint4 v[kUnroll];
            load(i, v);
            dr_xw_add_vectors<F>(w, v, sink);
        }
    } else if constexpr (F == DR_XW_F32) {
        while (i + lag + (kUnroll - 1) * stride < limit) {
            uint4 v[kUnroll];
            bool fit = true, all_fit = true;
            for (; i + lag + (kUnroll - 1) * stride < limit; i += kUnroll * stride) {
                load(i, v);
                fit = dr_xw_round_hits<F>(w, v);
                all_fit = __all_sync(0xffffffffu, fit);
                if (!all_fit) break;
            }
            if (all_fit) break;
            if (!fit) dr_xw_round_missed<F>(w, v, sink);
            i += kUnroll * stride;
        }
    } else {
        while (i + (kUnroll - 1) * stride < limit) {
            uint4 v[kUnroll];
            bool failed = false;
            for (; i + (kUnroll - 1) * stride < limit; i += kUnroll * stride) {
                load(i, v);
                if (!dr_xw_round_fast<F>(w, v)) {
                    failed = true;
                    break;
                }
                dr_xw_spill<F>(w);
            }
            if (!failed) break;
            dr_xw_round_rest<F>(w, v, sink);
            i += kUnroll * stride;
        }
    }
}

/* This thread's share of the grid-stride walk over g_in[0..n), leaving out the first skip_vec vectors (the bulk
 * copies'): head, 16-byte vectors (kUnroll in flight, one round each), tail; as multipass's accumulate(). */
template <class In>
__device__ __forceinline__ void walk(const In *__restrict__ g_in, size_t n, size_t skip_vec, dr_xw_t &w,
                                     const warp_words &sink)
{
    constexpr int F = family_of<In>::value;
    constexpr size_t kVec = 16 / sizeof(In);
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    const dr_vector_split<In> split(g_in, n);
    const size_t head = split.head, nvec = split.nvec;

    if (tid < head) dr_xw_add_one(w, dr_widen<double>(g_in[tid]), sink); /* head < kVec <= nthreads */

    const uint4 *g_vec = reinterpret_cast<const uint4 *>(g_in + head);
    size_t i = skip_vec + tid;
    rounds<F>(w, sink, i, nthreads, nvec, 31 - (threadIdx.x & 31), [&](size_t at, uint4(&v)[kUnroll]) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(g_vec + at + u * nthreads);
    });
    for (; i < nvec; i += nthreads) {
        const uint4 v[1] = {__ldg(g_vec + i)};
        dr_xw_add_vectors<F>(w, v, sink);
    }

    const size_t t = head + nvec * kVec + tid; /* tail: fewer than kVec elements */
    if (t < n) dr_xw_add_one(w, dr_widen<double>(g_in[t]), sink);
}

/* The bulk copies' share (Hopper): chunk c (kBulkStageBytes of whole vectors after the head) belongs to block
 * c % gridDim.x; thread 0 keeps kBulkStages copies in flight, each completing on its stage's mbarrier; every thread
 * waits on it, takes its rounds of the stage (vectors threadIdx.x + k blockDim.x: whole rounds, block <=
 * kBulkMaxBlock), and the block's barrier frees the stage for the next copy. Returns the vectors the copies cover
 * (walk takes the rest). The copy protocol is multipass_bulk_kernel's, written out again: one helper taking each
 * kernel's stage work as a lambda changed both kernels' code generation, and that version was neither measured
 * nor verified on a GPU; worth doing with both. */
template <class In>
__device__ __forceinline__ size_t bulk_walk(const In *__restrict__ g_in, size_t n, unsigned char *s_stage,
                                            uint64_t *s_full, dr_xw_t &w, const warp_words &sink)
{
    size_t bulk_vec = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int F = family_of<In>::value;
    const dr_vector_split<In> split(g_in, n);
    const size_t nchunks = split.nvec / kStageVec;
    bulk_vec = nchunks * kStageVec;
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
        const uint4 *s_vec = reinterpret_cast<const uint4 *>(s_stage + stage * kBulkStageBytes);
        size_t k = threadIdx.x;
        rounds<F>(w, sink, k, blockDim.x, kStageVec, 31 - (threadIdx.x & 31), [&](size_t at, uint4(&v)[kUnroll]) {
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) v[u] = s_vec[at + u * blockDim.x];
        });
        __syncthreads(); /* every thread is done with this stage before the copy engine refills it */
        const size_t next = chunk + (size_t)kBulkStages * gridDim.x;
        if (threadIdx.x == 0 && next < nchunks) issue(next, stage);
        if (++stage == kBulkStages) stage = 0, parity ^= 1;
    }
#else
    (void)g_in, (void)n, (void)s_stage, (void)s_full, (void)w, (void)sink;
#endif /* never launched below sm_90: plan_exact checks */
    return bulk_vec;
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

/* Thread 0: store s_total (normalized) with `flags` at g_out, then say the result is done. */
/* NaN policy OMIT (nan_out.at set): a NaN is the term +0.0 (accum.h, "NaN policy"), which is what a NaN term
 * adds to the words and flags (nothing, and "a term other than -0.0") but for its own flag, cleared here; and the
 * grid's NaN count is stored. */
__device__ __forceinline__ void store_result(const dr_exact_t *s_total, uint32_t flags, dr_exact_t *g_out,
                                             dr_nan_out_t nan_out, dr_done_t done)
{
    for (int i = 0; i < kWords; ++i) g_out->w[i] = s_total->w[i];
    if (nan_out.at) {
        flags &= ~DR_EXACT_NAN;
        *nan_out.at = atomicExch(nan_out.counter, 0ull);
    }
    g_out->flags = flags;
    g_out->pad = 0;
    dr_signal_done(done);
}

template <class In, bool Bulk>
__global__ void __launch_bounds__(1024)
    exact_kernel(const In *__restrict__ g_in, size_t n, dr_exact_t *g_acc, unsigned int *g_done, dr_exact_t *g_result,
                 dr_nan_out_t nan_out, dr_done_t done)
{
    /* Bulk: the stages (kBulkSmem), then kWords per warp, then the bins */
    extern __shared__ __align__(128) unsigned char s_dyn[];
    __shared__ __align__(8) uint64_t s_full[Bulk ? kBulkStages : 1];
    unsigned long long *s_warp = reinterpret_cast<unsigned long long *>(s_dyn + (Bulk ? kBulkSmem : 0));
    __shared__ dr_exact_t s_total;
    __shared__ uint32_t s_flags;
    __shared__ bool s_last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    unsigned long long *s_w = s_warp + warp * kWords;
    for (int i = lane; i < kWords; i += 32) s_w[i] = 0;
    if (threadIdx.x == 0) s_flags = 0;
    __syncthreads(); /* s_flags is zero before any lane ORs into it (the warp's own words needed only a warp) */

    constexpr int F = family_of<In>::value;
    /* the bins, a column per thread (bin k of every thread, then bin k + 1): a warp's lanes, each at its own bin,
     * touch 32 consecutive columns, so no two share a bank pair. In local memory instead (indexed at run time, they
     * cannot be registers), a first version ran spread data slower than with no bins at all: 2048 threads' bins
     * do not fit in the L1 cache. */
    const warp_words sink = {s_w, s_warp + nwarps * kWords + threadIdx.x, blockDim.x};
    dr_xw_t w;
    dr_xw_init<F>(w, sink);
    size_t bulk_vec = 0;
    if constexpr (Bulk) bulk_vec = bulk_walk<In>(g_in, n, s_dyn, s_full, w, sink);
    walk<In>(g_in, n, bulk_vec, w, sink);
    dr_xw_finish<F>(w, sink);
    const uint32_t flags = warp_or(w.flags | (w.nonneg0 ? DR_EXACT_NOT_NEG_ZERO : 0u));
    if (lane == 0 && flags) atomicOr(&s_flags, flags);
    if (nan_out.at) dr_nan_flush<true>(w.nans, nan_out.counter); /* uniform: every lane */
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
        if (threadIdx.x == 0) {
            dr_exact_normalize(&s_total);
            store_result(&s_total, s_flags | term, g_result, nan_out, done);
        }
        return;
    }
    /* Into the grid's accumulator as it stands, half-normalized (words below 2^38 in magnitude: the bounds above):
     * a 64-bit atomic (RED) per nonzero word (typical data: a few words, and a negative total too, whose normalized
     * form would have every digit above its top nonzero), then the flags. */
    unsigned long long *acc_words = reinterpret_cast<unsigned long long *>(g_acc->w);
    for (int t = threadIdx.x; t < kWords; t += blockDim.x)
        if (s_total.w[t]) atomicAdd(acc_words + t, (unsigned long long)s_total.w[t]);
    if (threadIdx.x == 0 && s_flags) atomicOr(&g_acc->flags, s_flags);
    __threadfence(); /* this thread's adds are performed before the block counts itself done */
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> done(*g_done);
        s_last = done.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
        if (s_last) done.store(0, cuda::memory_order_relaxed); /* ready for the next launch */
    }
    __syncthreads();
    if (!s_last) return; /* uniform over the block */

    /* The last block: every block's adds are in. Read the accumulator back a word a thread, leaving it zero for
     * the next launch, normalize it once and write the result. */
    __threadfence();
    for (int t = threadIdx.x; t < kWords; t += blockDim.x)
        s_total.w[t] = (long long)atomicExch(acc_words + t, 0ull);
    if (threadIdx.x == 0) s_flags = atomicExch(&g_acc->flags, 0u);
    __syncthreads();
    if (threadIdx.x == 0) {
        dr_exact_normalize(&s_total);
        store_result(&s_total, s_flags | term, g_result, nan_out, done);
    }
}

size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }
/* exact_kernel<In, Bulk>'s dynamic shared memory: the bulk copies' stages (float64: 64 KiB), then the words of
 * each warp (17 KiB at 1024 threads), then the bins of each thread (bfloat16: 64 KiB more at 1024 threads, float32:
 * 88 KiB; two such blocks a multiprocessor still fit). */
template <class In> size_t smem_bytes(int block, bool bulk)
{
    typedef dr_xw_traits<family_of<In>::value> T;
    const size_t bins = (size_t)(T::kBins + T::kFBins) * block * sizeof(unsigned long long);
    return (bulk ? kBulkSmem : 0) + (size_t)(block / 32) * kWords * sizeof(unsigned long long) + bins;
}
size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* Blocks of `block` threads of exact_kernel<In, Bulk> that fill `device` once (the bulk kernel: kBulkBlocksPerSm a
 * multiprocessor at most), cached per (device, log2(block)). */
template <class In, bool Bulk> cudaError_t resident_blocks(int device, int block, size_t *out)
{
    static int cached[64][11];
    return dr_gpu_fill_grid((const void *)exact_kernel<In, Bulk>, smem_bytes<In>(block, Bulk),
                            Bulk ? kBulkBlocksPerSm : INT_MAX, device, block, cached, out);
}

template <class In> cudaError_t plan_exact(const dr_gpu_reduce_t *r, dr_gpu_plan_t *p)
{
    cudaError_t err = cudaSuccess;
    int bulk = 0;
    const size_t bulk_from = r->bulk_from_bytes ? r->bulk_from_bytes : DR_GPU_BULK_FROM_BYTES;
    if (kTakesBulk<In> && r->n * sizeof(In) >= bulk_from && r->block >= kBulkMinBlock && r->block <= kBulkMaxBlock &&
        (err = dr_gpu_hopper_paths(r->device, &bulk)) != cudaSuccess)
        return err;
    size_t resident = 0;
    if constexpr (kTakesBulk<In>)
        err = bulk ? resident_blocks<In, true>(r->device, r->block, &resident)
                   : resident_blocks<In, false>(r->device, r->block, &resident);
    else
        err = resident_blocks<In, false>(r->device, r->block, &resident);
    if (err != cudaSuccess) return err;
    size_t grid, bounded;
    if (bulk) {
        /* A block per chunk up to a full grid; a thread takes (kStageVec / block) vectors of each of its block's
         * chunks, so at most max_chunks chunks a block keep it within the header's bounds with room for the
         * walk's rest (fewer vectors than a chunk over the grid) and a head and a tail element. */
        const size_t per_chunk = kStageVec / (size_t)r->block * (16 / sizeof(In));
        const size_t max_chunks = (((size_t)1 << kWalkLog2) - (kStageVec + 2) * (16 / sizeof(In))) / per_chunk;
        const size_t nchunks = r->n * sizeof(In) / kBulkStageBytes;
        grid = ceil_div(r->n * sizeof(In), kBulkStageBytes);
        if (grid > resident) grid = resident;
        bounded = ceil_div(nchunks, max_chunks);
    } else {
        const size_t per_block = (size_t)r->block * kRoundsPerThread * kUnroll * (16 / sizeof(In));
        grid = ceil_div(r->n, per_block);
        if (grid > resident) grid = resident;
        bounded = ceil_div(r->n, (size_t)r->block << kWalkLog2); /* the header's bounds */
    }
    if (grid < bounded) grid = bounded;
    if (grid < 1) grid = 1;
    if (grid > kMaxGrid) return cudaErrorInvalidValue; /* the accumulator's words could overflow (the bounds above) */
    p->passes = 1;
    p->grid[0] = grid;
    p->work_bytes = kAccOffset + align256(sizeof(dr_exact_t));
    p->serial_depth = 1; /* one rounding, where the result is read (dr_exact_to_f64) */
    p->cluster = 0;
    p->bulk = bulk;
    return cudaSuccess;
}

template <class In>
cudaError_t run_exact(const dr_gpu_reduce_t *r, const dr_gpu_plan_t *p, cudaStream_t s, cudaEvent_t *ev)
{
    /* a bulk plan for another block size or type */
    if (p->bulk && (!kTakesBulk<In> || r->block < kBulkMinBlock || r->block > kBulkMaxBlock))
        return cudaErrorInvalidValue;
    char *work = static_cast<char *>(r->d_work);
    cudaError_t err = cudaSuccess;
    if (ev && (err = cudaEventRecord(ev[0], s)) != cudaSuccess) return err;
    const In *in = static_cast<const In *>(r->d_in);
    dr_exact_t *acc = reinterpret_cast<dr_exact_t *>(work + kAccOffset);
    dr_exact_t *result = static_cast<dr_exact_t *>(r->d_result);
    unsigned int *counter = reinterpret_cast<unsigned int *>(work);
    if (p->bulk) {
        if constexpr (kTakesBulk<In>)
            exact_kernel<In, true><<<(unsigned)p->grid[0], r->block, smem_bytes<In>(r->block, true), s>>>(
                in, r->n, acc, counter, result, dr_nan_out_of(r), dr_done_of(r));
    } else {
        exact_kernel<In, false><<<(unsigned)p->grid[0], r->block, smem_bytes<In>(r->block, false), s>>>(
            in, r->n, acc, counter, result, dr_nan_out_of(r), dr_done_of(r));
    }
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
