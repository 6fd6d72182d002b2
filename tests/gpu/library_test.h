/* What the library's GPU tests (test_distrib.c, test_nan.c, test_host_path.c) share: their counters, a CUDA check,
 * a FAIL that prints the first 60 failures, a splitmix64 generator, and the start that skips (exit 77) without a
 * GPU. Each test is one program, so the statics live in it. */
#ifndef DREDUCE_LIBRARY_TEST_H
#define DREDUCE_LIBRARY_TEST_H

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int failures, cases;

#define CUDA_OK(call)                                                                                          \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));                                 \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

#define FAIL(...)                                                                                              \
    do {                                                                                                       \
        ++failures;                                                                                            \
        if (failures <= 60) {                                                                                  \
            fprintf(stderr, "FAIL ");                                                                          \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fprintf(stderr, "\n");                                                                             \
        }                                                                                                      \
    } while (0)

static uint64_t rng_state;
static inline uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* MPI_Init, this rank and the rank count; 1 where the test can run, 0 where no GPU is visible (MPI is then
 * finalized and rank 0 has said so: return 77, CTest's skip). */
static inline int library_test_start(int *argc, char ***argv, int *rank, int *nranks)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus == 0) {
        if (*rank == 0) printf("no GPU: skipped\n");
        MPI_Finalize();
        return 0;
    }
    return 1;
}

#endif
