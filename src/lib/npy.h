/* Where the elements of an input file lie: the NumPy .npy header parser and the layout of a raw binary file. Pure
 * functions of the bytes and sizes they are given (no MPI, no CUDA, no I/O), so they are unit-tested and fuzzed on
 * their own; src/lib/input.c does the reading.
 *
 * .npy (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html): the magic "\x93NUMPY", the
 * version (major, minor bytes: 1.0, 2.0 or 3.0), the header length (little-endian: 2 bytes in 1.0, 4 bytes in 2.0
 * and 3.0), then the header: a Python dict literal with exactly the keys 'descr' (the dtype string), 'fortran_order'
 * (True/False) and 'shape' (a tuple of integers), padded with spaces and ending in '\n'; the data follow. */
#ifndef DREDUCE_NPY_H
#define DREDUCE_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

/* The longest header accepted (numpy's own reader stops at 10000 bytes unless told otherwise; it writes ~128). A
 * longer length field is taken as a corrupt file, not a reason to read megabytes on rank 0. */
#define DR_NPY_MAX_HEADER (1u << 20)

/* The most bytes dr_npy_parse can ask for: magic, version, 4-byte length and the longest header. */
#define DR_NPY_MAX_PREFIX (12u + DR_NPY_MAX_HEADER)

typedef enum {
    DR_NPY_OK = 0,    /* *h holds the header */
    DR_NPY_NEED_MORE, /* the first *need bytes of the file are needed (*need > len) */
    DR_NPY_ERROR      /* err holds one line naming the problem (not the file: the caller adds it) */
} dr_npy_result_t;

typedef struct {
    int major, minor;     /* format version */
    dr_dtype_t dtype;
    char descr[16];       /* the dtype string as the header writes it ('<f4') */
    uint64_t count;       /* elements: the product of the shape; () is 1, any 0 in the shape makes 0 */
    int ndim;             /* length of the shape tuple */
    int fortran_order;    /* 1: column-major (read as flat all the same: a reduction does not care about order) */
    uint64_t data_offset; /* bytes from the start of the file to the first element */
} dr_npy_header_t;

/* Parse the header at the start of a .npy file from its first `len` bytes (buf may be NULL when len is 0). Returns
 * DR_NPY_OK and fills *h (count * itemsize + data_offset fits in 64 bits); DR_NPY_NEED_MORE with *need, the
 * number of bytes from the start of the file the header needs (at most DR_NPY_MAX_PREFIX); or DR_NPY_ERROR with
 * one line in err (snprintf-style: cut to errlen - 1 characters, NUL-terminated when errlen > 0). Bytes past the
 * header are ignored. A prefix too short to hold the magic is an error as soon as it differs from it. */
dr_npy_result_t dr_npy_parse(const void *buf, size_t len, dr_npy_header_t *h, size_t *need, char *err,
                             size_t errlen);

/* The header's data against the file's size: 0 when data_offset + count * itemsize <= file_size (and *trailing =
 * the bytes after the data), else -1 with "truncated: header says N elements (B bytes) from offset O but the file
 * has S bytes". Trailing bytes are accepted, as numpy does (np.load reads the first array of a file that np.save
 * appended several arrays to); the caller may warn about them. */
int dr_npy_check_size(const dr_npy_header_t *h, uint64_t file_size, uint64_t *trailing, char *err, size_t errlen);

/* A raw file of dtype elements after `offset` bytes: 0 and *count, or -1 with one line for an offset past the end
 * of the file or a remainder that is not a whole number of elements (the message gives the trailing bytes). An
 * offset equal to the size gives 0 elements. */
int dr_raw_layout(dr_dtype_t dtype, uint64_t offset, uint64_t file_size, uint64_t *count, char *err, size_t errlen);

/* The supported .npy dtypes and ours, for messages: "'<i4' (int32), '<i8' (int64), ...". */
const char *dr_npy_supported(void);

#endif
