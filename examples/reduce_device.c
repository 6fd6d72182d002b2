/* Reduce an array that already lives on this rank's GPU: each rank fills 1 Mi floats, dreduce sums them all.
 * Build: see examples/CMakeLists.txt. Run: mpirun -np 2 ./reduce_device */
#include <cuda_runtime_api.h>
#include <dreduce.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, status = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dreduce_config_t cfg;
    dreduce_config_init(&cfg);
    dreduce_context_t *ctx;
    if (dreduce_create(MPI_COMM_WORLD, &cfg, &ctx) != DR_OK) MPI_Abort(MPI_COMM_WORLD, 1);

    const size_t n = (size_t)1 << 20; /* element i of rank r is r + 1: the sum is n * size * (size + 1) / 2 */
    float *host = malloc(n * sizeof *host), *data = host;
    for (size_t i = 0; i < n; ++i) host[i] = (float)(rank + 1);
    if (dreduce_gpu(ctx) >= 0 && cudaMalloc((void **)&data, n * sizeof *data) == cudaSuccess)
        cudaMemcpy(data, host, n * sizeof *data, cudaMemcpyHostToDevice); /* our own device array */

    dreduce_result_t r;
    if (dreduce_reduce(ctx, data, n, DR_FLOAT32, DR_SUM, &r) == DR_OK && r.valid) {
        const double want = (double)n * size * (size + 1) / 2;
        printf("sum %.1f over %d ranks on %s: %s\n", dreduce_result_double(&r), size,
               dreduce_gpu(ctx) >= 0 ? "GPUs" : "CPUs", dreduce_result_double(&r) == want ? "correct" : "WRONG");
        status = dreduce_result_double(&r) != want;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (data != host) cudaFree(data);
    free(host);
    dreduce_destroy(ctx);
    MPI_Finalize();
    return status;
}
