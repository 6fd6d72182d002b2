/* What a libdreduce context holds (include/dreduce.h). Internal to the library: its users, the dreduce program
 * among them, see only the opaque type (dreduce_context_info gives the layout for reports). */
#ifndef DREDUCE_CONTEXT_H
#define DREDUCE_CONTEXT_H

#include "binding.h"
#include "chunks.h"
#include "combine.h"
#include "distrib_bufs.h"
#include "dreduce.h"
#include "gpu_backend.h"
#include "host_path.h"
#include "input.h"
#include "parallel.h"
#include "topology.h"
#include "watchdog.h"

struct dreduce_context {
    dreduce_config_t cfg;
    dr_topology_t topo;   /* the communicator (our dup) and its node/leaders split */
    dr_binding_t binding; /* GPU, CPUs and memory of this rank */
    int is_gpu;
    dr_gpu_t gpu;
    int threads;          /* CPU backend threads */
    int share_cpus;       /* CPUs of the rank's share of the node where it is in effect (binding.share), else 0 */
    uint64_t cache_bytes; /* the last-level caches serving the rank's CPUs (its share, else the node's): 0 unknown */
    dr_parallel_cpus_t workers; /* cfg.bind WORKERS or AUTO: the rank's share, where the CPU backend's threads run
                                   while the caller's thread waits; empty (not placed) otherwise */
    dr_watchdog_t *wd;    /* this context's watchdog (cfg.timeout), armed only inside its calls */
    dr_path_t path;       /* GPU: how partials reach MPI, chosen once at create (staging auto measures) */
    char path_text[192];
    double path_us[2];    /* staging auto on a CUDA-aware MPI: measured device-buffer and mapped costs (us), else NaN */
    int blocking;         /* the combine's collectives stay blocking under a timeout (device buffers); alike on every rank */
    uint64_t calls;       /* combines so far (alike on every rank): every DR_SYNC_EVERY-th is an allreduce (context.c) */
    dr_combine_t comb;    /* set up for (comb_acc, comb_op); comb_ready when valid */
    int comb_ready;
    dr_record_t fail_rec[3]; /* host records for a call this rank failed locally: it still joins the combine */
    dr_chunks_t chunks;   /* host arrays and files, in chunks */
    dr_partial_t partial; /* CPU backend: this rank's partial of the last reduction */
    int have_partial;
    int part_empty;       /* the last reduction's part of this rank had no element (dreduce_local_partial's no_value) */
    dreduce_timings_t timings;
    int have_first;         /* dreduce_prepare of an argmin/argmax found where this rank's part starts: */
    uint64_t first_count;   /* for parts of this many elements, */
    uint64_t first_index;   /* at this global index (the counts of the lower ranks summed) */
    int force_allreduce;    /* the next combines deliver to every rank whatever cfg.allreduce says (a histogram's
                               automatic range, which every rank needs) */
    dr_dist_bufs_t dist;    /* histograms and quantiles (distrib.c) */
    dr_host_rows_t host;    /* host arrays on a GPU context: the paths' rates measured so far (host_path.c) */
};

/* Timings before a call fills them: every level NaN (no part in it), no passes, no host path. */
void dr_timings_reset(dreduce_timings_t *tm);

/* Every rank of the context learns the worst status of any rank (watched by the --timeout watchdog as `phase`). */
dr_status_t dr_context_agree(dreduce_context_t *ctx, dr_status_t s, const char *phase);

/* Statistics of this rank's part (buf and count, or file when not NULL) combined onto every rank, in the wide
 * accumulator mode with the multipass kernel whatever the context's (a histogram's automatic range). */
dr_status_t dr_context_stats_all(dreduce_context_t *ctx, const void *buf, uint64_t count, const dreduce_file_t *file,
                                 dr_dtype_t dtype, dreduce_result_t *out);

/* Open a file of the API on every rank (collective; the same status everywhere) after agreeing on `mine`, this
 * rank's verdict on the call's other arguments; *info gets its type, count and this rank's share. op is checked
 * against the file's type. */
dr_status_t dr_context_open_file(dreduce_context_t *ctx, dr_status_t mine, const dreduce_file_t *file, dr_op_t op,
                                 dr_input_t *in, dreduce_file_info_t *info);

/* Release the histogram and quantile buffers (distrib.c), before the GPU is closed. */
void dr_dist_free(dreduce_context_t *ctx);

/* The reader's description of a file of the API (what dreduce_reduce_file opens). */
void dr_file_spec(const dreduce_file_t *file, dr_op_t op, dr_acc_mode_t acc_mode, dr_input_spec_t *spec);

#endif
