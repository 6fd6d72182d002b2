/* HDF5 datasets for --input (used by src/lib/input.c only): parallel HDF5 over MPI-IO. Rank 0 looks at the file alone
 * first (dr_h5_inspect: which dataset, its type and size), then every rank opens it with the MPI-IO driver
 * (dr_h5_open) and reads its own contiguous share of the dataset, flattened in C order, with collective H5Dread
 * calls (dr_h5_read; independent ones where the dataset's chunks were not all written, which read as its fill
 * value). HDF5 converts byte order and decompresses (gzip, shuffle, szip, and plugin filters it finds) on the way;
 * a filter it cannot decode and a virtual dataset are refused by name at the first look.
 *
 * Built only when CMake finds a parallel HDF5 (DREDUCE_HAVE_HDF5); otherwise dr_h5_available() is 0 and the other
 * calls fail with a message saying so. HDF5's own error stack is kept off stderr unless DREDUCE_HDF5_ERRORS is set
 * (to anything but 0). Every message is one line without the file name: the caller adds it. */
#ifndef DREDUCE_INPUT_HDF5_H
#define DREDUCE_INPUT_HDF5_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

/* 1 when this build reads HDF5 files. */
int dr_h5_available(void);
/* "parallel HDF5 1.10.8" or "not compiled in", for --help. */
const char *dr_h5_description(void);
/* 1 when the first n bytes of a file carry the HDF5 signature (at offset 0, or 512, 1024, ... after a user block). */
int dr_h5_has_signature(const unsigned char *head, size_t n);

/* Rank 0, alone (no MPI-IO): open path, find the dataset (`dataset`, or the file's only one when dataset is NULL
 * or ""), map its type to ours and count its elements. Returns 0 with *dtype, *count and the dataset's full path in
 * name (namelen bytes), or -1 with one line in msg: not an HDF5 file, no such dataset (listing the file's), several
 * datasets and none named (listing them), an unsupported type (compound, string, variable-length, enum, ...),
 * a filter this HDF5 cannot decode (its id, its name and HDF5_PLUGIN_PATH), a virtual dataset, zero elements. */
int dr_h5_inspect(const char *path, const char *dataset, dr_dtype_t *dtype, uint64_t *count, char *name,
                  size_t namelen, char *msg, size_t len);

typedef struct dr_h5 dr_h5_t;

/* Collective over comm: open path with the MPI-IO driver and the dataset `name` (as dr_h5_inspect found it), whose
 * type must map to dtype. Returns 0 and *out (free with dr_h5_close), or -1 with one line in msg (this rank's). */
int dr_h5_open(MPI_Comm comm, const char *path, const char *name, dr_dtype_t dtype, dr_h5_t **out, char *msg,
               size_t len);

/* Collective: every rank of the open's communicator calls it, each with its own elements [first, first + n) of the
 * dataset flattened in C order (n may be 0), read into buf (n elements of dtype, host memory) with one H5Dread
 * (collective, or independent where the dataset's storage is not all allocated: transfer_mode in input_hdf5.c).
 * Returns 0, or -1 with one line in msg. */
int dr_h5_read(dr_h5_t *h, uint64_t first, uint64_t n, void *buf, char *msg, size_t len);

/* Close and free (collective). NULL is fine. */
void dr_h5_close(dr_h5_t *h);

#endif
