/* dreduce-variants: ways of streaming a large input through a one-launch reduction, timed side by side with CUB in
 * one run; the experiment behind multipass's bulk-copy path (kernels/multipass.cu, docs/performance.md). Each
 * variant is the whole reduction (pass 1, then the last block reduces the partials), for int32 sum -> int64,
 * float32 sum -> float64, float32 max and float64 sum, on integer-valued data checked against a host reference.
 *
 *   base     the register loop multipass ships below DR_GPU_BULK_FROM_BYTES: grid-stride 16-byte loads, 4 in flight,
 *            then a remainder loop of single loads
 *   pred     the same, the last partial round as 4 predicated loads issued together (/8: 8 in flight)
 *   hint     pred, loads with ld.global.nc.L1::no_allocate.L2::256B (L1 bypass, 256-byte L2 prefetch)
 *   first    pred, loads with an L2 evict_first policy
 *   chunk    pred over per-block contiguous ranges instead of the grid-wide stride
 *   bulkSxB  Hopper bulk copies (cp.async.bulk) of B-KiB chunks into a ring of S shared-memory stages, one mbarrier
 *            per stage, 1-3 blocks per SM; the block reduces each stage from shared memory (multipass ships
 *            bulk2x32K with 2 blocks per SM)
 *   grid     (`dreduce-variants grid ...`) the register loop (pred) on grids from one device-full wave to one round
 *            per thread ("tile", as CUB sizes its first pass), the grid-wide stride or per-block contiguous ranges,
 *            with the last block's pass over the partials 8 loads in flight per thread (finish<8>)
 *
 * Timing: CUDA events around each launch (so launch latency is in every row alike), median of the reps.
 * Usage: dreduce-variants [reps [exponent...]]   (default: 2^24, 2^26, 2^28, 2^31; 200 reps at 2^24, else 40)
 *        dreduce-variants grid [reps [exponent...]]   (default: 2^22, 2^24, 2^25; 200 reps)
 * Build: cmake --build build --target dreduce-variants (sm_90 only; not part of the default build).
 * Exit 0, 1 on a CUDA error or a wrong result. */
#include <cub/cub.cuh>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

struct Sum {
    template <class T> __device__ __host__ static T f(T a, T b) { return a + b; }
    template <class T> __device__ __host__ static T id() { return T(0); }
};
struct Max {
    template <class T> __device__ __host__ static T f(T a, T b) { return a > b ? a : b; }
    template <class T> __device__ __host__ static T id() { return -INFINITY; }
};

enum Variant { BASE, PRED, HINT, FIRST, CHUNK };
static const char *kName[] = {"base", "pred", "hint", "first", "chunk"};

template <class T> __device__ __forceinline__ T shfl(T v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }

template <class Op, class Acc> __device__ Acc block_reduce(Acc v)
{
    __shared__ Acc wp[32];
    for (int o = 16; o; o >>= 1) v = Op::f(v, shfl(v, o));
    if ((threadIdx.x & 31) == 0) wp[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? wp[threadIdx.x] : Op::template id<Acc>();
        for (int o = 16; o; o >>= 1) v = Op::f(v, shfl(v, o));
    }
    return v;
}

template <class In, class Acc, class Op> __device__ __forceinline__ Acc vec(Acc acc, const uint4 &v)
{
    In e[16 / sizeof(In)];
    memcpy(e, &v, 16);
#pragma unroll
    for (int j = 0; j < 16 / (int)sizeof(In); ++j) acc = Op::f(acc, (Acc)e[j]);
    return acc;
}

template <int V> __device__ __forceinline__ uint4 load(const uint4 *p, uint64_t pol)
{
    uint4 r;
    if (V == HINT) {
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                     : "l"(p));
    } else if (V == FIRST) {
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                     : "l"(p), "l"(pol));
    } else {
        r = __ldg(p);
    }
    return r;
}

/* Reduce vectors [lo, hi) of g, thread `t` of `nt`, stride nt. */
template <int V, int U, class In, class Acc, class Op>
__device__ __forceinline__ Acc stream(const uint4 *g, size_t lo, size_t hi, size_t t, size_t nt, Acc acc)
{
    uint64_t pol = 0;
    if (V == FIRST) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    size_t i = lo + t;
    for (; i + (U - 1) * nt < hi; i += U * nt) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = load<V>(g + i + u * nt, pol);
#pragma unroll
        for (int u = 0; u < U; ++u) acc = vec<In, Acc, Op>(acc, v[u]);
    }
    if (V == BASE) {
        for (; i < hi; i += nt) acc = vec<In, Acc, Op>(acc, __ldg(g + i));
    } else {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (i + u * nt < hi) v[u] = load<V>(g + i + u * nt, pol);
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (i + u * nt < hi) acc = vec<In, Acc, Op>(acc, v[u]);
    }
    return acc;
}

/* The shared finish: block partial, then the last block reduces all partials with W loads in flight per thread
 * (W = 1 as multipass ships; the grid experiment's larger grids need more: one load and a wait per partial is
 * serial once there are more partials than threads). */
template <class Acc, class Op, int W = 1>
__device__ __forceinline__ void finish(Acc acc, Acc *partials, unsigned *done, Acc *result)
{
    acc = block_reduce<Op>(acc);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> d(*done);
        last = d.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
        if (last) d.store(0, cuda::memory_order_relaxed);
    }
    __syncthreads();
    if (!last) return;
    const volatile Acc *p = partials;
    Acc v = Op::template id<Acc>();
    for (unsigned b0 = threadIdx.x; b0 < gridDim.x; b0 += W * blockDim.x) {
        Acc x[W];
#pragma unroll
        for (int u = 0; u < W; ++u) {
            const unsigned b = b0 + u * blockDim.x;
            x[u] = b < gridDim.x ? (Acc)p[b] : Op::template id<Acc>();
        }
#pragma unroll
        for (int u = 0; u < W; ++u) v = Op::f(v, x[u]);
    }
    v = block_reduce<Op>(v);
    if (threadIdx.x == 0) *result = v;
}

/* Inputs are 16-byte aligned and n a multiple of the vector width here (the shipped kernel handles the rest). W:
 * partials in flight in the last block (the grid experiment's larger grids take 8). */
template <int V, int U, class In, class Acc, class Op, int W = 1>
__global__ void __launch_bounds__(1024) reg_kernel(const In *in, size_t n, Acc *partials, unsigned *done, Acc *result)
{
    const uint4 *g = reinterpret_cast<const uint4 *>(in);
    const size_t nvec = n / (16 / sizeof(In));
    Acc acc = Op::template id<Acc>();
    if (V == CHUNK) {
        const size_t per = (nvec + gridDim.x - 1) / gridDim.x;
        const size_t lo = min(nvec, per * blockIdx.x), hi = min(nvec, lo + per);
        acc = stream<PRED, U, In, Acc, Op>(g, lo, hi, threadIdx.x, blockDim.x, acc);
    } else {
        acc = stream<V, U, In, Acc, Op>(g, 0, nvec, (size_t)blockIdx.x * blockDim.x + threadIdx.x,
                                        (size_t)gridDim.x * blockDim.x, acc);
    }
    finish<Acc, Op, W>(acc, partials, done, result);
}

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/* Bulk variant: chunk c (B bytes) goes to block c % grid; thread 0 keeps S copies in flight; T threads. */
template <int S, unsigned B, int T, class In, class Acc, class Op>
__global__ void __launch_bounds__(T) bulk_kernel(const In *in, size_t n, Acc *partials, unsigned *done, Acc *result)
{
    extern __shared__ __align__(128) unsigned char stage[];
    __shared__ __align__(8) unsigned long long bar[S];
    const size_t nchunks = n * sizeof(In) / B;
    const char *src = reinterpret_cast<const char *>(in);
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](size_t c, int s) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar[s])), "r"(B)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         smem_addr(stage + s * B)),
                     "l"(src + c * B), "r"(B), "r"(smem_addr(&bar[s]))
                     : "memory");
    };
    size_t first = blockIdx.x;
    if (threadIdx.x == 0)
        for (int s = 0; s < S; ++s)
            if (first + (size_t)s * gridDim.x < nchunks) issue(first + (size_t)s * gridDim.x, s);
    Acc acc = Op::template id<Acc>();
    unsigned phase = 0;
    int s = 0;
    for (size_t c = first; c < nchunks; c += gridDim.x) {
        unsigned ok = 0;
        while (!ok)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(ok)
                         : "r"(smem_addr(&bar[s])), "r"(phase)
                         : "memory");
        const uint4 *v = reinterpret_cast<const uint4 *>(stage + s * B);
#pragma unroll
        for (unsigned k = 0; k < B / 16 / T; ++k) acc = vec<In, Acc, Op>(acc, v[k * T + threadIdx.x]);
        __syncthreads(); /* every thread is done with stage s before it is refilled */
        const size_t next = c + (size_t)S * gridDim.x;
        if (threadIdx.x == 0 && next < nchunks) issue(next, s);
        if (++s == S) s = 0, phase ^= 1;
    }
    /* the remainder past the last whole chunk */
    const uint4 *g = reinterpret_cast<const uint4 *>(in);
    acc = stream<PRED, 4, In, Acc, Op>(g, nchunks * B / 16, n / (16 / sizeof(In)),
                                       (size_t)blockIdx.x * blockDim.x + threadIdx.x, (size_t)gridDim.x * blockDim.x,
                                       acc);
    finish<Acc, Op>(acc, partials, done, result);
}

/* Integers in [-1000, 1000] (as floats too: float sums of them stay exact below 2^24). */
template <class T> __global__ void fill(T *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
        p[i] = (T)((int)(x % 2001) - 1000);
    }
}

struct Case {
    const char *name;
    int kind; /* 0 int32 sum -> int64, 1 float32 sum -> float32, 2 float32 max */
};

template <class In, class Acc, class Op> struct Runner {
    int sms;
    Acc *d_res;
    void *d_work;
    template <int V, int U> void launch(const In *in, size_t n, int block, int grid, cudaStream_t st)
    {
        Acc *partials = reinterpret_cast<Acc *>(static_cast<char *>(d_work) + 256);
        unsigned *done = static_cast<unsigned *>(d_work);
        reg_kernel<V, U, In, Acc, Op><<<grid, block, 0, st>>>(in, n, partials, done, d_res);
    }
    template <int V> void grid_launch(const In *in, size_t n, int block, int grid, cudaStream_t st)
    {
        Acc *partials = reinterpret_cast<Acc *>(static_cast<char *>(d_work) + 256);
        unsigned *done = static_cast<unsigned *>(d_work);
        reg_kernel<V, 4, In, Acc, Op, 8><<<grid, block, 0, st>>>(in, n, partials, done, d_res);
    }
    template <int S, unsigned B, int T> void bulk(const In *in, size_t n, int grid, cudaStream_t st)
    {
        Acc *partials = reinterpret_cast<Acc *>(static_cast<char *>(d_work) + 256);
        unsigned *done = static_cast<unsigned *>(d_work);
        bulk_kernel<S, B, T, In, Acc, Op><<<grid, T, S * B, st>>>(in, n, partials, done, d_res);
    }
};

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class In, class Acc, class Op> void run_case(const char *label, size_t n, int reps, int sms, bool grid_mode)
{
    const size_t bytes = n * sizeof(In);
    const size_t nbuf = bytes <= (120u << 20) ? (size_t)((240u << 20) + bytes - 1) / bytes : 1;
    std::vector<In *> buf(nbuf);
    for (size_t b = 0; b < nbuf; ++b) {
        CK(cudaMalloc(&buf[b], bytes));
        fill<In><<<1024, 256>>>(buf[b], n, 77u + (unsigned)b);
    }
    CK(cudaGetLastError());
    /* host references (exact: integer-valued data, double or int64 sums) */
    std::vector<Acc> ref(nbuf);
    {
        std::vector<In> h(n);
        for (size_t b = 0; b < nbuf; ++b) {
            CK(cudaMemcpy(h.data(), buf[b], bytes, cudaMemcpyDeviceToHost));
            double s = 0;
            long long si = 0;
            Acc m = Op::template id<Acc>();
            for (size_t i = 0; i < n; ++i) {
                s += (double)h[i];
                si += (long long)h[i];
                m = Op::f(m, (Acc)h[i]);
            }
            ref[b] = std::is_same<Op, Max>::value ? m : (std::is_integral<Acc>::value ? (Acc)si : (Acc)s);
        }
    }
    Runner<In, Acc, Op> r;
    r.sms = sms;
    CK(cudaMalloc(&r.d_res, sizeof(Acc)));
    CK(cudaMalloc(&r.d_work, 256 + 8 * 2048 * sizeof(Acc)));
    CK(cudaMemset(r.d_work, 0, 256 + 8 * 2048 * sizeof(Acc)));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    auto time = [&](auto &&go, const char *what, int block, int grid, bool check) {
        std::vector<float> t;
        for (int i = 0; i < reps + 3; ++i) {
            const size_t b = (size_t)i % nbuf;
            CK(cudaMemsetAsync(r.d_res, 0xA5, sizeof(Acc), st));
            CK(cudaEventRecord(e0, st));
            go(buf[b]);
            CK(cudaGetLastError());
            CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (i >= 3) t.push_back(ms);
            if (check) {
                Acc got;
                CK(cudaMemcpy(&got, r.d_res, sizeof(Acc), cudaMemcpyDeviceToHost));
                double err = fabs((double)got - (double)ref[b]);
                /* exact for integers and max; float32 sums of integers are exact below 2^24 in magnitude, a few
                 * ulps of ~sqrt(n) * 600 above */
                const double bound = std::is_same<Acc, float>::value && !std::is_same<Op, Max>::value
                                         ? 1e-5 * sqrt((double)n) * 1000.0
                                         : 0.0;
                if (!(err <= bound)) {
                    fprintf(stderr, "WRONG %s %s n=%zu block=%d grid=%d: got %.17g want %.17g\n", label, what, n,
                            block, grid, (double)got, (double)ref[b]);
                    exit(1);
                }
            }
        }
        float m = median(t);
        printf("%-22s n=2^%-2d %-6s block %4d grid %5d  %9.4f ms  %7.1f GB/s\n", label, (int)log2((double)n), what,
               block, grid, m, bytes / m / 1e6);
        return m;
    };

    /* CUB */
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    Acc init = Op::template id<Acc>();
    auto cub_go = [&](const In *in) {
        if (std::is_same<Op, Max>::value)
            CK(cub::DeviceReduce::Max(tmp, tmp_bytes, in, r.d_res, (int64_t)n, st));
        else
            CK(cub::DeviceReduce::Reduce(tmp, tmp_bytes, in, r.d_res, (int64_t)n, cuda::std::plus<Acc>(), init, st));
    };
    cub_go(buf[0]);
    CK(cudaMalloc(&tmp, tmp_bytes));
    float cub = time(cub_go, "CUB", 0, 0, true);
    const int kMaxPartials = 8 * 2048;
    if (grid_mode) {
        /* as shipped below DR_GPU_BULK_FROM_BYTES: base/4, one device-full wave, dreduce's block for the size */
        for (int block : {512, 1024}) {
            int per_sm = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reg_kernel<BASE, 4, In, Acc, Op>, block, 0));
            const int grid = sms * per_sm;
            float m = time([&](const In *in) { r.template launch<BASE, 4>(in, n, block, grid, st); }, "base/4", block,
                           grid, true);
            printf("%60s ratio to CUB %.3f\n", "", cub / m);
        }
        const size_t nvec = n / (16 / sizeof(In));
        for (int block : {256, 512, 1024}) {
            int per_sm = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reg_kernel<PRED, 4, In, Acc, Op, 8>, block, 0));
            const size_t tile = (nvec + 4 * (size_t)block - 1) / (4 * (size_t)block);
            for (size_t waves : {1, 2, 4, 8, 0}) {
                const size_t grid = waves ? std::min(tile, waves * sms * per_sm) : tile;
                if (grid > (size_t)kMaxPartials) continue;
                if (waves > 1 && grid == tile) continue; /* same as the tile row */
                char name[32];
                if (waves)
                    snprintf(name, sizeof name, "grid x%zu", waves);
                else
                    snprintf(name, sizeof name, "grid tile");
                float m = time([&](const In *in) { r.template grid_launch<PRED>(in, n, block, (int)grid, st); }, name,
                               block, (int)grid, true);
                printf("%60s ratio to CUB %.3f\n", "", cub / m);
                char cname[40];
                snprintf(cname, sizeof cname, "%s+chunk", name);
                m = time([&](const In *in) { r.template grid_launch<CHUNK>(in, n, block, (int)grid, st); }, cname, block,
                         (int)grid, true);
                printf("%60s ratio to CUB %.3f\n", "", cub / m);
            }
        }
        for (auto p : buf) CK(cudaFree(p));
        CK(cudaFree(tmp));
        CK(cudaFree(r.d_res));
        CK(cudaFree(r.d_work));
        CK(cudaStreamDestroy(st));
        return;
    }

    for (int block : {1024}) {
        auto vgo = [&](auto V, auto U) {
            char name[32];
            constexpr int kV = decltype(V)::value, kU = decltype(U)::value;
            int per_sm = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reg_kernel<kV, kU, In, Acc, Op>, block, 0));
            const int grid = sms * per_sm;
            snprintf(name, sizeof name, "%s/%d", kName[kV], kU);
            float m = time([&](const In *in) { r.template launch<kV, kU>(in, n, block, grid, st); }, name,
                           block, grid, true);
            printf("%60s ratio to CUB %.3f\n", "", cub / m);
        };
        vgo(std::integral_constant<int, BASE>(), std::integral_constant<int, 4>());
        vgo(std::integral_constant<int, PRED>(), std::integral_constant<int, 4>());
        vgo(std::integral_constant<int, PRED>(), std::integral_constant<int, 8>());
        vgo(std::integral_constant<int, HINT>(), std::integral_constant<int, 4>());
        vgo(std::integral_constant<int, FIRST>(), std::integral_constant<int, 4>());
        vgo(std::integral_constant<int, CHUNK>(), std::integral_constant<int, 4>());
    }
    auto bgo = [&](auto S_, auto B_, auto T_) {
        constexpr int S = decltype(S_)::value, T = decltype(T_)::value;
        constexpr unsigned B = decltype(B_)::value;
        auto k = bulk_kernel<S, B, T, In, Acc, Op>;
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S * B));
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, T, S * B));
        for (int m = 1; m <= per_sm && m <= 3; ++m) {
            char name[48];
            snprintf(name, sizeof name, "bulk%dx%uK", S, B / 1024);
            float t = time([&](const In *in) { r.template bulk<S, B, T>(in, n, sms * m, st); }, name, T, sms * m,
                           true);
            printf("%60s ratio to CUB %.3f\n", "", cub / t);
        }
    };
    using std::integral_constant;
    bgo(integral_constant<int, 4>(), integral_constant<unsigned, 16384>(), integral_constant<int, 256>());
    bgo(integral_constant<int, 4>(), integral_constant<unsigned, 16384>(), integral_constant<int, 512>());
    bgo(integral_constant<int, 8>(), integral_constant<unsigned, 8192>(), integral_constant<int, 256>());
    bgo(integral_constant<int, 4>(), integral_constant<unsigned, 32768>(), integral_constant<int, 256>());
    bgo(integral_constant<int, 2>(), integral_constant<unsigned, 32768>(), integral_constant<int, 256>());
    bgo(integral_constant<int, 6>(), integral_constant<unsigned, 8192>(), integral_constant<int, 256>());
    for (auto p : buf) CK(cudaFree(p));
    CK(cudaFree(tmp));
    CK(cudaFree(r.d_res));
    CK(cudaFree(r.d_work));
    CK(cudaStreamDestroy(st));
}

int main(int argc, char **argv)
{
    /* variants [reps [exponent...]]: default 2^24, 2^26, 2^28, 2^31 */
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const bool grid_mode = argc > 1 && strcmp(argv[1], "grid") == 0;
    if (grid_mode) ++argv, --argc;
    std::vector<int> exps = grid_mode ? std::vector<int>{22, 24, 25} : std::vector<int>{24, 26, 28, 31};
    if (argc > 2) exps.assign(1, atoi(argv[2]));
    for (int i = 3; i < argc; ++i) exps.push_back(atoi(argv[i]));
    for (int e : exps) {
        const size_t n = (size_t)1 << e;
        const int reps = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : (e <= 24 || grid_mode ? 200 : 40);
        run_case<int, long long, Sum>("int32 sum -> int64", n, reps, sms, grid_mode);
        run_case<float, double, Sum>("float32 sum -> float64", n, reps, sms, grid_mode);
        run_case<float, float, Max>("float32 max", n, reps, sms, grid_mode);
        if (e < 31 && !grid_mode) run_case<double, double, Sum>("float64 sum", n, reps, sms, grid_mode);
    }
    return 0;
}
