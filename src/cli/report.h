/* The run report: gathered per-rank records turned into the per-node, per-level table (default), one JSON
 * document, or CSV rows. Rank 0 writes it. The JSON and CSV schemas are documented in docs/report-schema.md; their
 * version is DR_REPORT_SCHEMA_VERSION. */
#ifndef DREDUCE_REPORT_H
#define DREDUCE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "dreduce.h"
#include "options.h"
#include "reference.h"

/* 2: stats, argmin, argmax (their result fields; CSV columns index..max); 3: histogram, quantile, median (their
 * result fields, the levels local N / combine N and combine; CSV columns nan..gamma); 4: the NaN policy (config
 * nan, nans; result nan_omitted; each rank's nan_omitted; CSV columns nan_policy, nan_omitted); 5: host arrays on
 * a GPU (config memory, host_path; the levels load cpu and load gpu; each rank's host_array; CSV columns memory,
 * host_path) */
#define DR_REPORT_SCHEMA_VERSION 6

/* Timed levels of one repetition. `local` is the rank's whole reduction (every kernel pass); `launch` (a GPU array)
 * the host's time around it beyond the kernels' own: clearing the partial, launching, seeing the kernels end;
 * `stage` the device-to-host copy of the partial when MPI is not given device buffers; `wait` the barriers that open
 * the combine levels (waiting for slower ranks); `node`, `global` and `bcast` the MPI levels; `total` one repetition
 * end to end, from the barrier that starts it. With --input: `read` the time spent reading the rank's share of the
 * file (MPI-IO), `load` the whole read + copy + reduce pipeline (they overlap, so `load` is less than their sum).
 * A host array on a GPU (--memory pinned or pageable): `load` the whole local level whichever path it took, and
 * `load cpu` / `load gpu` the part the rank's CPU threads and the part the GPU reduced (both under --host-path
 * split, which runs them at once).
 * A distribution (--op histogram, quantile, median) has `local` (every pass's reading and counting), `combine`
 * (every pass's combine) and `total`, and its passes' rows of their own. Levels added later go at the end (the JSON keeps the order); the table orders them as the pipeline runs. */
typedef enum {
    DR_LEVEL_LOCAL = 0,
    DR_LEVEL_STAGE,
    DR_LEVEL_NODE,
    DR_LEVEL_GLOBAL,
    DR_LEVEL_BCAST,
    DR_LEVEL_TOTAL,
    DR_LEVEL_READ,
    DR_LEVEL_LOAD,
    DR_LEVEL_LAUNCH,
    DR_LEVEL_WAIT,
    DR_LEVEL_COMBINE,
    DR_LEVEL_LOAD_CPU,
    DR_LEVEL_LOAD_GPU,
    DR_LEVEL_COUNT
} dr_level_t;

const char *dr_level_name(dr_level_t l);

/* What one rank reports: fixed size, gathered to rank 0 as bytes. Times are medians over the repetitions, in
 * milliseconds; NaN where the rank does not take part in a level. */
typedef struct {
    int rank, node, local_rank, is_gpu, passes, shared_gpu;
    int block;              /* GPU threads per block used (0: CPU backend) */
    char host[64];
    char node_name[80];
    char device_name[64];
    uint64_t first, count;  /* the shard: global index of its first element, and its length */
    uint64_t depth;         /* longest rounding path of the local reduction */
    uint64_t nan_omitted;   /* NaN policy OMIT: NaN elements of the shard left out (0 under PROPAGATE) */
    double generate_ms;
    double pass_ms[DREDUCE_MAX_PASSES];
    double level_ms[DR_LEVEL_COUNT];
    int dist_passes;        /* a distribution: its passes (reads of this rank's part); 0 for a reduction */
    double dist_local_ms[DREDUCE_DIST_MAX_PASSES], dist_combine_ms[DREDUCE_DIST_MAX_PASSES]; /* per pass */
    dreduce_context_info_t binding; /* the rank's layout, device and binding (dreduce_context_info) */
    /* a host array on a GPU rank (timings of the last repetition; rates as dreduce_host_rates gives them) */
    int host_path;          /* dr_host_path_t it took (CPU, GPU, SPLIT), -1: not a host array on a GPU */
    int host_pinned;
    uint64_t host_cpu_elems;  /* elements the rank's CPU threads reduced */
    double measure_ms;      /* the paths' measurement, in the run's first call (0: none) */
    dreduce_host_rates_t rates;
} dr_rank_record_t;

typedef struct {
    const dr_options_t *opt;
    int nranks, nnodes, emulated;
    uint64_t n_total;
    dr_acc_kind_t acc;
    const char *path_text;   /* how partials travel between ranks */
    double path_us[2];       /* staging auto's measured costs (device buffers, mapped), us; NaN if not measured */
    const char *mpi_library; /* MPI_Get_library_version, first line */
    dr_value_t result;       /* argmin/argmax: result.arg */
    int no_value;            /* the array had no element and the op has no value for that (dreduce_result_t) */
    dr_stats_result_t stats; /* stats (acc a DR_ACC_STATS_* kind) */
    uint64_t nan_omitted;    /* NaN policy OMIT: NaN elements of the whole array left out */
    /* a distribution (opt->dist.on), rank 0's result: */
    const uint64_t *counts;  /* histogram: opt->dist.bins counts */
    const double *edges;     /* histogram: opt->dist.bins + 1 edges */
    const double *values;    /* quantile: opt->dist.nq values */
    const dreduce_order_stat_t *order; /* quantile: their order statistics */
    dreduce_dist_info_t dist_info;
    int deterministic;       /* every repetition gave the same bits */
    dr_check_t check;        /* valid when opt->verify */
    const dr_rank_record_t *ranks; /* nranks records, by rank */
} dr_report_t;

/* Write the report in opt->format to f. Returns 0, or -1 on a write error. */
int dr_report_write(const dr_report_t *r, FILE *f);

/* shared[i] = 1 if another rank on rank i's host drives its GPU (the same pci_bus_id; the same ordinal only when
 * both bus ids are ""), else 0. CPU-backend ranks never share. Caller owns both arrays (nranks entries each). */
void dr_report_mark_shared(const dreduce_context_info_t *b, int nranks, int *shared);

/* Write the binding table (table format only; the JSON report carries it too) and its warnings to f. */
void dr_report_binding_table(const dr_report_t *r, FILE *f);

#endif
