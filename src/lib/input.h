/* Reading the array to reduce from a file (--input) with MPI-IO: every rank reads only its own elements, straight
 * into the caller's (pinned) host buffer, in chunks the caller can overlap with its own copies and kernels. A .npy
 * file's header (src/lib/npy.h) or the raw layout gives the type, count and data offset; rank 0 works them out and
 * broadcasts them, so every rank returns the same status from every call and only one rank prints an error, one
 * line naming the file. MPI, no CUDA.
 *
 * Statuses: DR_ERR_USAGE for a bad file (missing, unreadable, not a supported .npy, truncated, type disagreeing
 * with --type, --offset past the end, ...: nothing was reduced), DR_ERR_RUNTIME for a failure while reading (an MPI
 * error, a short read). Every function here is collective over the communicator given to dr_input_open. */
#ifndef DREDUCE_INPUT_H
#define DREDUCE_INPUT_H

#include <mpi.h>
#include <stdint.h>

#include "dtype.h"
#include "status.h"

typedef enum {
    DR_INPUT_AUTO = 0, /* HDF5 when the file carries the HDF5 signature or the name ends in .h5/.hdf5/.he5; .npy
                          when the name ends in .npy or the file starts with the .npy magic; else raw */
    DR_INPUT_NPY,
    DR_INPUT_RAW,
    DR_INPUT_HDF5      /* a dataset of an HDF5 file, read with parallel HDF5 (src/input_hdf5.h) */
} dr_input_format_t;

/* What the user asked for (from dr_options_t: input, type_given/dtype, offset_given/input_offset, op). */
typedef struct {
    dr_input_format_t format;
    int type_given;      /* --type was given: dtype. Required for raw files; a .npy file's dtype must equal it */
    dr_dtype_t dtype;
    int offset_given;    /* --offset was given: offset. Raw files only */
    uint64_t offset;
    dr_op_t op;          /* checked against the file's type (bitwise ops need integers) */
    dr_acc_mode_t acc_mode; /* checked too: a float product has no exact mode */
    const char *dataset; /* HDF5: the dataset's path in the file; NULL or "" for the file's only dataset */
} dr_input_spec_t;

/* An open input file; read the fields, do not change them (except max_call_bytes). */
typedef struct {
    int is_open;         /* 1 between a successful dr_input_open and dr_input_close */
    MPI_Comm comm;       /* a duplicate of the communicator given to dr_input_open */
    MPI_File fh;
    int rank, nranks;
    char path[1024];
    dr_input_format_t format; /* NPY, RAW or HDF5 */
    char dataset[512];    /* HDF5: the dataset read (its full path in the file) */
    struct dr_h5 *h5;     /* HDF5: the open dataset (fh is then MPI_FILE_NULL) */
    dr_dtype_t dtype;
    size_t elem_size;
    uint64_t count;       /* elements in the file */
    uint64_t data_offset; /* bytes before the first element (0 for HDF5) */
    uint64_t file_size;
    int fortran_order;    /* .npy: column-major (read as flat: the order does not matter to a reduction) */
    uint64_t max_call_bytes; /* largest read in one MPI call: below 2^31 without the MPI 4 large-count calls (tests
                              * lower it to exercise the chunking) */
} dr_input_t;

/* Open path on every rank of comm and learn its layout. Returns DR_OK with *in filled, or the same error status on
 * every rank (rank 0, or the lowest rank that failed, has printed the reason; *in is then closed). Warns (rank 0)
 * about bytes after a .npy file's data, which are ignored as numpy does. */
dr_status_t dr_input_open(MPI_Comm comm, const char *path, const dr_input_spec_t *spec, dr_input_t *in);

/* Read elements [first, first + count) of the file into buf (count * elem_size bytes, host memory). Collective:
 * every rank calls it once, each with its own range (an empty range is fine). Same status on every rank. */
dr_status_t dr_input_read(dr_input_t *in, uint64_t first, uint64_t count, void *buf);

/* The same in chunks of at most chunk_elems elements, one dr_input_stream_next per chunk, so the caller can start
 * its copy and kernel on one chunk before the next read:
 *
 *     dr_input_stream_t s;  int done = 0;  uint64_t got;
 *     DR_CHECK(dr_input_stream_begin(&in, first, count, chunk_elems, &s));
 *     while (!done) { DR_CHECK(dr_input_stream_next(&s, buf[k], &got, &done)); if (got) use(buf[k], got); ... }
 *
 * All ranks make the same number of calls (agreed in begin): a rank whose range is exhausted reads nothing (got =
 * 0) until the others are done. The call that sets *done reads nothing itself and agrees on the status: a read that
 * failed on any rank (the rank that failed printed why) makes that call return the error on every rank. */
typedef struct {
    dr_input_t *in;
    uint64_t first;      /* the range's first element */
    uint64_t next;       /* next element to read */
    uint64_t end;        /* one past the last */
    uint64_t chunk;      /* elements per call */
    uint64_t calls_left; /* reading calls before the final agreement, the same on every rank */
    dr_status_t status;  /* this rank's first failure */
} dr_input_stream_t;

dr_status_t dr_input_stream_begin(dr_input_t *in, uint64_t first, uint64_t count, uint64_t chunk_elems,
                                  dr_input_stream_t *s);
dr_status_t dr_input_stream_next(dr_input_stream_t *s, void *buf, uint64_t *got, int *done);

/* Rank 0's first look at path, before anything opens it (opening a named pipe for reading would block): 0 for a
 * regular file (or one stat cannot see: the open then says why), else -1 with one line in msg ("not a regular file
 * (a named pipe): ...", "cannot read: it is a directory", "cannot open: No such file or directory"). */
int dr_input_check_regular(const char *path, char *msg, size_t len);

/* Close the file and free the communicator. Collective. Safe on a closed or never opened (zeroed) dr_input_t. */
void dr_input_close(dr_input_t *in);

#endif
