/* dreduce-combine-bench: the combine level alone, for one accumulator value (a float64 sum partial) per rank, one
 * GPU per rank. Each path starts where the local reduction ends (the partial in device memory, or already in
 * mapped pinned host memory) and ends with the sum at rank 0:
 *   device  MPI_Reduce on device buffers (needs a CUDA-aware MPI; Open MPI 4.1 stages them through host memory
 *           inside coll/cuda)
 *   staged  cudaMemcpy of the partial to pinned host memory, then MPI_Reduce on host buffers
 *   mapped  the kernel that produced the partial wrote it into mapped pinned host memory: MPI_Reduce on host buffers
 *           only (dreduce --staging mapped)
 *   nccl    ncclReduce on device buffers, then a stream synchronize (built when NCCL is found)
 * Each repetition starts after an MPI_Barrier; times are MPI_Wtime at each rank; the report gives the median over
 * repetitions at rank 0 and the largest per-rank median. Every result is checked.
 * usage: mpirun -np 2 dreduce-combine-bench [--reps N] [--warmup W]            (N >= 1000 by default) */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#ifdef DR_HAVE_NCCL
#include <nccl.h>
#endif

#include "binding.h"
#include "timing.h"

#define CK(call)                                                                                               \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "%s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__);            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                      \
        }                                                                                                      \
    } while (0)
#define MK(call)                                                                                               \
    do {                                                                                                       \
        if ((call) != MPI_SUCCESS) {                                                                           \
            fprintf(stderr, "%s failed (%s:%d)\n", #call, __FILE__, __LINE__);                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                      \
        }                                                                                                      \
    } while (0)

typedef enum { PATH_DEVICE, PATH_STAGED, PATH_MAPPED, PATH_NCCL, PATH_COUNT } path_t;
static const char *const path_names[PATH_COUNT] = {"device", "staged", "mapped", "nccl"};

int main(int argc, char **argv)
{
    int reps = 2000, warmup = 100;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) warmup = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: mpirun -np P %s [--reps N] [--warmup W]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1 || warmup < 0) return 2;
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0) {
        printf("no GPU visible: skipped\n");
        return 77;
    }
    const int lr = dr_binding_env_local_rank(NULL); /* Open MPI's, Slurm's or Hydra's variable, -1 if none */
    CK(cudaSetDevice(lr >= 0 ? lr % ngpus : 0));
    MK(MPI_Init(&argc, &argv));
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int aware = 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    aware = MPIX_Query_cuda_support();
#endif
    const double mine = 1.0 + rank, expected = nranks * (nranks + 1) / 2.0;
    double *d_buf, *h_pinned, *h_mapped, *d_mapped;
    CK(cudaMalloc((void **)&d_buf, 2 * sizeof(double)));
    CK(cudaMallocHost((void **)&h_pinned, 2 * sizeof(double)));
    CK(cudaHostAlloc((void **)&h_mapped, 2 * sizeof(double), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&d_mapped, h_mapped, 0));
    CK(cudaMemcpy(d_buf, &mine, sizeof mine, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_mapped, &mine, sizeof mine, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
#ifdef DR_HAVE_NCCL
    ncclUniqueId id;
    ncclComm_t comm;
    if (rank == 0) ncclGetUniqueId(&id);
    MK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) {
        fprintf(stderr, "ncclCommInitRank failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
#endif
    double *t = malloc((size_t)reps * sizeof *t);
    if (rank == 0)
        printf("combine of one float64 partial, %d ranks, %d repetitions after %d warm-up (MPI CUDA-aware: %s)\n"
               "%-8s %12s %12s %12s\n", nranks, reps, warmup, aware ? "yes" : "no", "path", "median us",
               "max-rank us", "result");
    for (int p = 0; p < PATH_COUNT; ++p) {
        int available = p != PATH_DEVICE || aware;
#ifndef DR_HAVE_NCCL
        if (p == PATH_NCCL) available = 0;
#endif
        if (!available) {
            if (rank == 0) printf("%-8s %12s %12s %12s\n", path_names[p], "n/a", "n/a", p == PATH_NCCL ? "no NCCL" : "not CUDA-aware");
            continue;
        }
        double result = 0;
        int bad = 0;
        for (int it = -warmup; it < reps; ++it) {
            MK(MPI_Barrier(MPI_COMM_WORLD));
            const double t0 = MPI_Wtime();
            switch (p) {
            case PATH_DEVICE: MK(MPI_Reduce(d_buf, d_buf + 1, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD)); break;
            case PATH_STAGED:
                CK(cudaMemcpy(h_pinned, d_buf, sizeof(double), cudaMemcpyDeviceToHost));
                MK(MPI_Reduce(h_pinned, h_pinned + 1, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
                break;
            case PATH_MAPPED: MK(MPI_Reduce(h_mapped, h_mapped + 1, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD)); break;
            default:
#ifdef DR_HAVE_NCCL
                if (ncclReduce(d_buf, d_buf + 1, 1, ncclDouble, ncclSum, 0, comm, s) != ncclSuccess) bad = 1;
                CK(cudaStreamSynchronize(s));
#endif
                break;
            }
            const double dt = MPI_Wtime() - t0;
            if (it >= 0) t[it] = dt * 1e6;
        }
        if (rank == 0) {
            if (p == PATH_DEVICE || p == PATH_NCCL) CK(cudaMemcpy(&result, d_buf + 1, sizeof result, cudaMemcpyDeviceToHost));
            else result = p == PATH_STAGED ? h_pinned[1] : h_mapped[1];
            bad |= result != expected;
        }
        double med = dr_median(t, reps), worst = 0;
        MK(MPI_Reduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
        if (rank == 0) printf("%-8s %12.2f %12.2f %12s\n", path_names[p], med, worst, bad ? "WRONG" : "ok");
        MK(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (bad) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(t);
#ifdef DR_HAVE_NCCL
    ncclCommDestroy(comm);
#endif
    MPI_Finalize();
    return 0;
}
