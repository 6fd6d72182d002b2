/* What a context keeps for histograms and quantiles (distrib.c), grown on demand and released with the context. */
#ifndef DREDUCE_DISTRIB_BUFS_H
#define DREDUCE_DISTRIB_BUFS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "distrib.h"

/* Keep buffers: 0 and 1 for a select's passes (a pass reads one and keeps into the other), 2 for the quantile
 * pilot's sample and then the elements it keeps (distrib.c, "The pilot"). */
#define DR_KEEP_BUFS 3

/* A histogram's arguments as its plan reads them (distrib.c, hist_key): dtype, bins, and the explicit range, or the
 * automatic range's count, kind and ends. Equal keys make equal plans and edges. */
typedef struct {
    uint64_t w[6];
} dr_hist_key_t;

typedef struct {
    size_t words_cap;      /* uint64 words of each count vector below */
    uint64_t *counts[3];   /* this rank's counts, the node's, the result: device memory on the device-buffer path,
                              else host memory (pinned on a GPU context) */
    int counts_on_device;
    uint64_t *d_counts;    /* GPU: where the kernels count (counts[0] itself on the device-buffer path) */
    uint64_t *h_read;      /* GPU on the device-buffer path: pinned host memory the result is read back into */
    void *d_edges;         /* GPU: a histogram's edges */
    size_t edges_cap;
    double *h_edges;       /* a histogram's edges in float64, then (float32 bins) in float32 right after: kept
                              between calls, as the counts are (a fresh malloc of 65536 bins' 768 KB is fresh
                              pages, faulted in on every call: a CPU call of 1024 elements into 65536 bins took
                              0.47-0.51 ms so, 0.23-0.24 kept; bench/results/cpu-vm-2026-12-07/host-edges.txt);
                              pinned on a GPU where it can be, as d_edges is copied from it */
    size_t h_edges_cap;    /* bytes */
    int h_edges_pinned;
    /* The last histogram's plan and its arguments (dr_hist_key_t): a call with the same ones takes the plan
     * and h_edges as they are, and d_edges too where d_edges_valid, without linspace, its checks and the copy */
    int plan_valid, d_edges_valid;
    dr_hist_key_t plan_key;
    dr_hist_plan_t plan;
    size_t slot_bytes;     /* GPU, host arrays and files: two device slots (and pinned host slots for files) */
    void *d_slot[2], *h_slot[2];
    cudaEvent_t slot_free[2];
    int events_made;
    uint64_t *h_local;     /* GPU on the device-buffer path: a pass's local counts read back (quantile compaction) */
    void *d_keep[DR_KEEP_BUFS]; /* GPU: the elements still in play of a quantile's select, kept by a pass */
    size_t keep_cap[DR_KEEP_BUFS]; /* bytes of each */
    uint64_t *d_keep_pos;  /* the count of elements kept */
    void *cpu_slot;        /* CPU backend, files: one host slot */
    size_t cpu_slot_bytes;
    void *cpu_keep[DR_KEEP_BUFS]; /* CPU backend: d_keep's counterparts in host memory (given back after each
                                     quantile call) */
    size_t cpu_keep_cap[DR_KEEP_BUFS];
    uint64_t kept;         /* the count the last keeping pass kept (pads included on a GPU; past the room it had
                              where the elements in play did not fit) */
} dr_dist_bufs_t;

#endif
