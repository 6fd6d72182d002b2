/* Command-line options: parsing and validation into dr_options_t. Pure functions of argv (no MPI, no CUDA), so they
 * run before MPI_Init, on every rank alike, and can be fuzzed. */
#ifndef DREDUCE_OPTIONS_H
#define DREDUCE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "datagen.h"
#include "dreduce.h" /* DREDUCE_MAX_BINS, DREDUCE_MAX_Q: the library's limits are the options' */
#include "dtype.h"

/* The program is libdreduce's: its version is the library's (dreduce/version.h, from CMake's project version). */
#define DR_VERSION DREDUCE_VERSION_STRING

typedef enum { DR_FORMAT_TABLE = 0, DR_FORMAT_JSON, DR_FORMAT_CSV } dr_format_t;

/* --memory: where a rank's generated shard lives. AUTO: GPU memory on a GPU rank, pageable host memory on the CPU
 * backend; PINNED and PAGEABLE put it in host memory on a GPU rank too (cfg.host_path then decides how it is
 * reduced: --host-path). */
typedef enum { DR_MEMORY_AUTO = 0, DR_MEMORY_GPU, DR_MEMORY_PINNED, DR_MEMORY_PAGEABLE, DR_MEMORY_COUNT } dr_memory_t;

/* --op histogram, quantile, median: a question about the array's distribution (dreduce_histogram,
 * dreduce_quantile), not a reduction, so not a dr_op_t. With `on`, dr_options_t.op stays DR_SUM (unused; the
 * generator's data are plain random). */
#define DR_DEFAULT_BINS 10
typedef struct {
    int on;           /* 1: --op histogram, quantile or median */
    dr_dist_op_t op;  /* DR_DIST_HISTOGRAM or DR_DIST_QUANTILE */
    int median;       /* --op median: the quantile 0.5, named so in the report */
    uint32_t bins;    /* --bins: 1..DREDUCE_MAX_BINS (default DR_DEFAULT_BINS) */
    int bins_given;
    int has_range;    /* --range LO,HI given; else the automatic range (the array's min and max) */
    double range[2];
    int q_given;
    size_t nq;        /* --q: 1..DREDUCE_MAX_Q quantiles in [0, 1], in the order given (--op median: 0.5) */
    double q[DREDUCE_MAX_Q];
} dr_dist_options_t;

typedef struct {
    uint64_t n;             /* elements: in total (strong) or per rank (weak) */
    dr_dtype_t dtype;
    dr_op_t op;
    dr_acc_mode_t acc_mode;
    dr_kernel_t kernel;
    int block;              /* threads per block; 0 = by kernel and size (dr_gpu_default_block) */
    int iters;              /* timed repetitions */
    int warmup;             /* untimed repetitions before them */
    dr_gen_t gen;           /* data pattern, seed, constant */
    int verify;             /* check against the host reference */
    dr_device_choice_t device;
    int threads;            /* CPU backend threads; 0 = one per core we may run on */
    int misalign;           /* start the input this many elements past an aligned address (tests heads) */
    dr_format_t format;
    char output[1024];      /* report file, "" = stdout */
    dr_scaling_t scaling;
    dr_combine_mode_t combine;
    dr_staging_t staging;
    int allreduce;          /* every rank gets the result */
    int ranks_per_node;     /* > 0: emulate nodes of this many ranks */
    dr_bind_choice_t bind;
    int share_gpus;         /* allow more ranks than GPUs on a node */
    double timeout;         /* seconds a rank may wait in one collective before it ends the job; 0 = never */
    char input[1024];       /* --input: the file to reduce, "" = generate the data. The file decides the count and,
                             * for .npy, the type: dtype and n hold placeholders until the file is opened */
    uint64_t input_offset;  /* --offset: bytes before a raw file's first element */
    int offset_given;       /* --offset was given (only raw files take it) */
    char dataset[512];      /* --dataset: an HDF5 input's dataset, "" = the file's only one */
    int type_given;         /* --type was given: a .npy file's dtype must then agree with it */
    dr_dist_options_t dist; /* --op histogram, quantile, median and their --bins, --range, --q */
    dr_nan_policy_t nan;    /* --nan: what a NaN element means (PROPAGATE, OMIT) */
    double nans;            /* --nans: the fraction of float elements generated as NaN (gen.nan_threshold) */
    dr_memory_t memory;     /* --memory: where the generated shard lives */
    dr_host_path_t host_path; /* --host-path: how a host shard is reduced on a GPU rank (cfg.host_path) */
} dr_options_t;

typedef enum { DR_PARSE_OK = 0, DR_PARSE_HELP, DR_PARSE_VERSION, DR_PARSE_ERROR } dr_parse_result_t;

/* Defaults for every option. */
void dr_options_default(dr_options_t *o);

/* Parse argv[1..argc) into *o (which must hold defaults). On DR_PARSE_ERROR, err gets one line naming the bad value
 * and what is allowed. Does not print. */
dr_parse_result_t dr_options_parse(int argc, char **argv, dr_options_t *o, char *err, size_t errlen);

/* Parse a count: digits with an optional suffix K M G T (powers of 1000) or Ki Mi Gi Ti (powers of 1024).
 * Returns 0, or -1 with a message in err for garbage, a sign, or a value past 2^64 - 1. */
int dr_parse_count(const char *s, uint64_t *out, char *err, size_t errlen);

/* Parse the constant of --data const:V for dtype into its bit pattern. Returns 0, or -1 with a message for
 * garbage or a value the type cannot hold. */
int dr_parse_const(const char *s, dr_dtype_t t, uint64_t *bits, char *err, size_t errlen);

/* Parse --range LO,HI: two finite numbers (each the whole of its item: no blanks, no trailing characters), LO <= HI
 * (LO == HI is allowed: NumPy widens it by 0.5 each side). Returns 0, or -1 with one line in err naming the bad item
 * and what is allowed. */
int dr_parse_range(const char *s, double range[2], char *err, size_t errlen);

/* Parse --q Q1,Q2,...: 1..DREDUCE_MAX_Q numbers in [0, 1] (NaN and infinities refused, no empty item), into
 * q[0..*nq) (q holds DREDUCE_MAX_Q). Returns 0, or -1 with one line in err naming the bad item. */
int dr_parse_q(const char *s, double *q, size_t *nq, char *err, size_t errlen);

/* What --op asked for, by name: a reduction's (sum, ..., argmax), or histogram, quantile, median. */
const char *dr_options_op_name(const dr_options_t *o);

/* --memory's name: auto, gpu, pinned, pageable. */
const char *dr_memory_name(dr_memory_t m);

/* The --data pattern's name: random, iota, ones, const, spread. */
const char *dr_pattern_name(dr_pattern_t p);

/* A canonical one-line text of every option that must agree across ranks (used for the agreement hash and JSON). */
void dr_options_canonical(const dr_options_t *o, char *buf, size_t len);

/* The --help text. */
const char *dr_options_usage(void);

#endif
