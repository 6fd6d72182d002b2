/* Host arrays on a GPU context: the three paths (the rank's CPU threads in place, chunked copies to the GPU, both at
 * once on two parts of the array), their measurement, and cfg.host_path AUTO's choice (dr_host_path_t in
 * include/dreduce/types.h; dreduce_host_rates in include/dreduce.h). Every path ends with the rank's partial at the
 * GPU's partial target, where the combine reads it, so the rest of a call cannot tell which path ran; the partials of
 * the two parts combine by the accumulator's own rule, so exact sums, integers, min/max, argmin/argmax (global
 * indices) and stats' counts give the same bits on every path. */
#ifndef DREDUCE_HOST_PATH_H
#define DREDUCE_HOST_PATH_H

#include <stdint.h>

#include "dreduce.h"

/* One measured kind of host memory and row. */
typedef struct {
    int used;
    int pinned;
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_mode_t mode;
    dr_nan_policy_t nan;
    dreduce_host_rates_t rates;
} dr_host_row_t;

/* The rows a context measured: a context sees few rows, so a short list; past DR_HOST_ROWS the oldest is measured
 * again when it comes back. */
#define DR_HOST_ROWS 32
typedef struct {
    dr_host_row_t rows[DR_HOST_ROWS];
    int next; /* the slot the next new row takes */
} dr_host_rows_t;

/* The split's granularity: the CPU's share of the elements is a whole number of 64ths, and the cut falls on a
 * multiple of DR_HOST_CUT_ALIGN elements, so that rates measured a few percent apart cut an array at the same place
 * and the same context gives the same bits call after call. */
#define DR_HOST_SPLIT_STEPS 64
#define DR_HOST_CUT_ALIGN 4096

/* The elements of a count-element split array that go to the GPU (the front part), for a CPU share of
 * cpu_fraction (rounded to DR_HOST_SPLIT_STEPS-ths, the cut aligned down to DR_HOST_CUT_ALIGN). */
uint64_t dr_host_split_gpu_elems(uint64_t count, double cpu_fraction);

/* AUTO's choice among measured rates: CPU unless another path is more than 3% faster; GPU unless SPLIT is more
 * than 3% faster than it (ties go to the path that keeps the other device idle). */
dr_host_path_t dr_host_choose(double cpu_gbs, double gpu_gbs, double split_gbs);

struct dreduce_context;

/* Reduce this rank's host array (count > 0 elements at buf, global index first; `pinned`: page-locked or registered
 * memory) on the GPU context ctx by cfg.host_path (measuring first where AUTO or SPLIT needs rates it lacks), leave
 * the partial (acc) and its NaN count at the GPU's partial target, and fill the timings of the local level
 * (local_ms, load_ms, passes, pass_ms, chunks, bytes, depth and the host_* and measure_ms fields). */
dr_status_t dr_host_reduce(struct dreduce_context *ctx, const void *buf, uint64_t count, uint64_t first,
                           dr_dtype_t dtype, dr_op_t op, dr_acc_kind_t acc, int pinned, dreduce_timings_t *tm);

#endif
