/* Check macros for CUDA and MPI calls. Each prints one line (call, error text, source position; the rank and host
 * come from log.c) and returns DR_ERR_RUNTIME from the calling function. */
#ifndef DREDUCE_CHECK_H
#define DREDUCE_CHECK_H

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "status.h"

#define DR_CUDA_CHECK(call)                                                                                    \
    do {                                                                                                       \
        cudaError_t dr_cuda_err_ = (call);                                                                     \
        if (dr_cuda_err_ != cudaSuccess) {                                                                     \
            dr_error("%s failed: %s (%s:%d)", #call, cudaGetErrorString(dr_cuda_err_), __FILE__, __LINE__);    \
            return DR_ERR_RUNTIME;                                                                             \
        }                                                                                                      \
    } while (0)

#define DR_MPI_CHECK(call)                                                                                     \
    do {                                                                                                       \
        int dr_mpi_err_ = (call);                                                                              \
        if (dr_mpi_err_ != MPI_SUCCESS) {                                                                      \
            char dr_mpi_msg_[MPI_MAX_ERROR_STRING];                                                            \
            int dr_mpi_len_ = 0;                                                                               \
            MPI_Error_string(dr_mpi_err_, dr_mpi_msg_, &dr_mpi_len_);                                          \
            dr_error("%s failed: %s (%s:%d)", #call, dr_mpi_msg_, __FILE__, __LINE__);                         \
            return DR_ERR_RUNTIME;                                                                             \
        }                                                                                                      \
    } while (0)

#endif
