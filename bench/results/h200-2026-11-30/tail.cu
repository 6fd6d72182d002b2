// One-off experiment: where the bulk kernel's fixed time goes (block start spread, tail of chunk loops, pass 2),
// static (chunk c -> block c % grid) vs dynamic (atomic claim) chunk assignment.
#include <cuda/atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%d %s\n", __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)
constexpr unsigned B = 32768; constexpr int S = 2;
__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__device__ double block_reduce(double v) {
  __shared__ double wp[32];
  for (int o = 16; o; o >>= 1) v += __shfl_down_sync(~0u, v, o);
  if ((threadIdx.x & 31) == 0) wp[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) { v = threadIdx.x < blockDim.x / 32 ? wp[threadIdx.x] : 0.0; for (int o = 16; o; o >>= 1) v += __shfl_down_sync(~0u, v, o); }
  return v;
}
template <bool DYN>
__global__ void __launch_bounds__(256) k(const float *in, size_t n, double *partials, unsigned *done, unsigned long long *claim, double *res, unsigned long long *st) {
  extern __shared__ __align__(128) unsigned char s_stage[];
  __shared__ __align__(8) uint64_t s_full[S];
  __shared__ unsigned long long s_chunk[S];
  unsigned long long t0 = gt();
  const size_t nchunks = n * 4 / B;
  const unsigned stage0 = (unsigned)__cvta_generic_to_shared(s_stage), full0 = (unsigned)__cvta_generic_to_shared(s_full);
  unsigned long long mine = blockIdx.x;
  auto next_chunk = [&]() -> unsigned long long { if (DYN) return atomicAdd(claim, 1ull); unsigned long long c = mine; mine += gridDim.x; return c; };
  auto issue = [&](size_t c, int s) {
    const unsigned bar = full0 + 8u * s;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(B) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(stage0 + s * B), "l"((const char *)in + c * B), "r"(B), "r"(bar) : "memory");
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full0 + 8u * s));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < S; ++s) { unsigned long long c = next_chunk(); s_chunk[s] = c; if (c < nchunks) issue(c, s); }
  }
  __syncthreads();
  double acc = 0; unsigned parity = 0; int s = 0; unsigned cnt = 0;
  for (;;) {
    const unsigned long long c = s_chunk[s];
    if (c >= nchunks) break;
    const unsigned bar = full0 + 8u * s; unsigned ready = 0;
    while (!ready) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(ready) : "r"(bar), "r"(parity) : "memory");
    const float4 *v = reinterpret_cast<const float4 *>(s_stage + s * B);
#pragma unroll 8
    for (unsigned i = threadIdx.x; i < B / 16; i += blockDim.x) { float4 x = v[i]; acc += (double)x.x; acc += (double)x.y; acc += (double)x.z; acc += (double)x.w; }
    __syncthreads();
    if (threadIdx.x == 0) { unsigned long long nc = next_chunk(); s_chunk[s] = nc; if (nc < nchunks) issue(nc, s); }
    ++cnt;
    if (++s == S) s = 0, parity ^= 1;
  }
  unsigned long long t1 = gt();
  acc = block_reduce(acc);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> d(*done);
    last = d.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
    if (last) d.store(0, cuda::memory_order_relaxed);
    st[4 * blockIdx.x] = t0; st[4 * blockIdx.x + 1] = t1; st[4 * blockIdx.x + 3] = cnt;
  }
  __syncthreads();
  if (!last) return;
  const volatile double *p = partials; double v = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) v += p[b];
  v = block_reduce(v);
  if (threadIdx.x == 0) { *res = v; if (DYN) *claim = 0; st[4 * blockIdx.x + 2] = gt(); }
}
__global__ void fill(float *p, size_t n) { for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) { unsigned x = (unsigned)i * 2654435761u; x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; p[i] = (float)((int)(x % 2001) - 1000); } }
int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  size_t nmax = 1ull << 31; float *in; CK(cudaMalloc(&in, nmax * 4)); fill<<<4096, 256>>>(in, nmax);
  std::vector<float> h(nmax); CK(cudaMemcpy(h.data(), in, nmax * 4, cudaMemcpyDeviceToHost));
  double *partials, *res; unsigned *done; unsigned long long *claim, *st;
  CK(cudaMalloc(&partials, 8 * 4096)); CK(cudaMalloc(&res, 8)); CK(cudaMalloc(&done, 4)); CK(cudaMalloc(&claim, 8)); CK(cudaMalloc(&st, 32 * 4096));
  CK(cudaMemset(done, 0, 4)); CK(cudaMemset(claim, 0, 8));
  CK(cudaFuncSetAttribute(k<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, S * B));
  CK(cudaFuncSetAttribute(k<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, S * B));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  for (size_t n : {1ull << 28, 1ull << 30, 1ull << 31}) {
    double ref = 0; for (size_t i = 0; i < n; ++i) ref += h[i];
    struct { bool dyn; int grid; } cfgs[] = {{false, 2 * sms}, {false, 256}, {false, 3 * sms}, {true, 2 * sms}, {true, 3 * sms}};
    for (auto c : cfgs) {
      if (c.grid > 2 * sms && c.grid > 256) { int per = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k<false>, 256, S * B)); if (per * sms < c.grid) { printf("skip grid %d (occupancy %d/SM)\n", c.grid, per); continue; } }
      std::vector<float> t; double got = 0;
      for (int r = 0; r < 33; ++r) {
        CK(cudaEventRecord(e0));
        if (c.dyn) k<true><<<c.grid, 256, S * B>>>(in, n, partials, done, claim, res, st); else k<false><<<c.grid, 256, S * B>>>(in, n, partials, done, claim, res, st);
        CK(cudaGetLastError()); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (r >= 3) t.push_back(ms);
      }
      CK(cudaMemcpy(&got, res, 8, cudaMemcpyDeviceToHost));
      std::vector<unsigned long long> s(4 * c.grid); CK(cudaMemcpy(s.data(), st, 32 * c.grid, cudaMemcpyDeviceToHost));
      unsigned long long t0 = ~0ull, t0max = 0, tend = 0; std::vector<double> ends; unsigned cmin = ~0u, cmax = 0;
      for (int b = 0; b < c.grid; ++b) { t0 = std::min(t0, s[4 * b]); t0max = std::max(t0max, s[4 * b]); if (s[4 * b + 2]) tend = s[4 * b + 2]; cmin = std::min(cmin, (unsigned)s[4*b+3]); cmax = std::max(cmax, (unsigned)s[4*b+3]); }
      for (int b = 0; b < c.grid; ++b) ends.push_back((s[4 * b + 1] - t0) / 1e3);
      std::sort(ends.begin(), ends.end()); std::sort(t.begin(), t.end());
      printf("n 2^%d %s grid %d: event median %.4f ms (%.0f GB/s) | starts spread %.2f us | loop ends (us) min %.2f p10 %.2f med %.2f p90 %.2f max %.2f | pass2 done %.2f | chunks/block %u-%u | %s\n",
             (int)__builtin_ctzll(n), c.dyn ? "dynamic" : "static ", c.grid, t[t.size() / 2], n * 4 / t[t.size() / 2] / 1e6, (t0max - t0) / 1e3,
             ends[0], ends[ends.size() / 10], ends[ends.size() / 2], ends[ends.size() * 9 / 10], ends.back(), (tend - t0) / 1e3, cmin, cmax, got == ref ? "ok" : "WRONG");
    }
  }
  return 0;
}
