// Experiment (not committed): where a small call's host time goes on this machine.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
static double now_us() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
__global__ void empty() {}
__global__ void red(const float *in, int n, double *out, volatile unsigned *flag, unsigned seq)
{
    __shared__ double s[32];
    double a = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) a += in[i];
    for (int o = 16; o; o >>= 1) a += __shfl_down_sync(~0u, a, o);
    if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = a;
    __syncthreads();
    if (threadIdx.x < 32) {
        a = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : 0;
        for (int o = 16; o; o >>= 1) a += __shfl_down_sync(~0u, a, o);
        if (threadIdx.x == 0) {
            *out = a;
            if (flag) { __threadfence_system(); *flag = seq; }
        }
    }
}
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main(int argc, char **argv)
{
    const int R = 3000;
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    float *d; CK(cudaMalloc(&d, n * sizeof(float)));
    std::vector<float> h(n, 1.0f); CK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
    double *hout, *dout; unsigned *hflag, *dflag;
    CK(cudaHostAlloc(&hout, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dout, hout, 0));
    CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dflag, hflag, 0));
    double *dres; CK(cudaMalloc(&dres, 64));
    std::vector<double> t(R);
    auto run = [&](const char *name, auto body) {
        for (int i = 0; i < 200; ++i) body(i);
        for (int i = 0; i < R; ++i) { double t0 = now_us(); body(i + 200); t[i] = now_us() - t0; }
        printf("%-44s %7.2f us (p10 %.2f p90 %.2f)\n", name, med(t), (std::sort(t.begin(), t.end()), t[R / 10]), t[R * 9 / 10]);
    };
    run("empty kernel + cudaStreamSynchronize", [&](int) { empty<<<1, 32, 0, st>>>(); CK(cudaStreamSynchronize(st)); });
    run("empty launch only (no sync)", [&](int) { empty<<<1, 32, 0, st>>>(); });
    CK(cudaStreamSynchronize(st));
    run("cudaStreamSynchronize of an idle stream", [&](int) { CK(cudaStreamSynchronize(st)); });
    run("cudaStreamQuery of an idle stream", [&](int) { CK(cudaStreamQuery(st)); });
    run("cudaPointerGetAttributes", [&](int) { cudaPointerAttributes a; CK(cudaPointerGetAttributes(&a, d)); });
    run("cudaGetDevice + cudaSetDevice(same)", [&](int) { int dv; CK(cudaGetDevice(&dv)); CK(cudaSetDevice(dv)); });
    run("cudaGetLastError", [&](int) { CK(cudaGetLastError()); });
    run("reduce -> mapped + cudaStreamSynchronize", [&](int) { red<<<1, 256, 0, st>>>(d, n, dout, nullptr, 0); CK(cudaStreamSynchronize(st)); });
    run("reduce -> mapped + spin on mapped flag", [&](int i) {
        red<<<1, 256, 0, st>>>(d, n, dout, dflag, (unsigned)i + 1);
        while (*(volatile unsigned *)hflag != (unsigned)i + 1) {}
    });
    CK(cudaStreamSynchronize(st));
    run("reduce -> mapped + flag spin + cudaStreamQuery", [&](int i) {
        red<<<1, 256, 0, st>>>(d, n, dout, dflag, (unsigned)i + 1 + 100000);
        while (*(volatile unsigned *)hflag != (unsigned)i + 1 + 100000) {}
        (void)cudaStreamQuery(st);
    });
    CK(cudaStreamSynchronize(st));
    cudaStream_t bs; CK(cudaStreamCreateWithFlags(&bs, cudaStreamDefault));
    run("BLOCKING stream: empty + sync", [&](int) { empty<<<1, 32, 0, bs>>>(); CK(cudaStreamSynchronize(bs)); });
    run("BLOCKING stream: reduce -> mapped + sync", [&](int) { red<<<1, 256, 0, bs>>>(d, n, dout, nullptr, 0); CK(cudaStreamSynchronize(bs)); });
    run("BLOCKING stream: reduce -> mapped + flag spin", [&](int i) {
        red<<<1, 256, 0, bs>>>(d, n, dout, dflag, (unsigned)i + 1 + 200000);
        while (*(volatile unsigned *)hflag != (unsigned)i + 1 + 200000) {}
    });
    CK(cudaStreamSynchronize(bs));
    run("BLOCKING + GetLastError + flag spin", [&](int i) {
        red<<<1, 256, 0, bs>>>(d, n, dout, dflag, (unsigned)i + 1 + 300000);
        CK(cudaGetLastError());
        while (*(volatile unsigned *)hflag != (unsigned)i + 1 + 300000) {}
    });
    CK(cudaStreamSynchronize(bs));
    run("reduce -> device + cudaMemcpy", [&](int) { red<<<1, 256, 0, st>>>(d, n, dres, nullptr, 0); CK(cudaMemcpyAsync(hout, dres, 8, cudaMemcpyDeviceToHost, st)); CK(cudaStreamSynchronize(st)); });
    size_t tb = 0; CK(cub::DeviceReduce::Sum(nullptr, tb, d, (float *)dres, n, st));
    void *tmp; CK(cudaMalloc(&tmp, tb + 16));
    float r; run("CUB + cudaMemcpy (pageable)", [&](int) { CK(cub::DeviceReduce::Sum(tmp, tb, d, (float *)dres, n, st)); CK(cudaMemcpy(&r, dres, 4, cudaMemcpyDeviceToHost)); });
    printf("check %g %g\n", *hout, (double)r);
    return 0;
}
