/* The MPI-IO reader of --input files (see input.h). Rank 0 alone looks at the file first (on MPI_COMM_SELF: its
 * size and header, never the data) and broadcasts a verdict, so a bad file gives one message and the same status
 * everywhere; then every rank opens it collectively and reads only its own range with MPI_File_read_at_all. */
#define _POSIX_C_SOURCE 200809L
#include "input.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input_hdf5.h"
#include "npy.h"

/* What rank 0 found, broadcast as bytes (every rank runs the same binary). */
typedef struct {
    int status;
    int format;
    int dtype;
    int fortran_order;
    uint64_t count, data_offset, file_size, trailing;
    char dataset[512]; /* HDF5: the dataset's full path */
} verdict_t;

static int fail(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return -1;
}

static void mpi_text(int rc, char *out, size_t len)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    snprintf(out, len, "%s", s);
}

/* DR_MPI_CHECK's twin: src/common/check.h would bring in the CUDA headers, and this file is MPI only. */
#define INPUT_MPI_CHECK(call)                                                                                  \
    do {                                                                                                       \
        int input_rc_ = (call);                                                                                \
        if (input_rc_ != MPI_SUCCESS) {                                                                        \
            char input_msg_[MPI_MAX_ERROR_STRING];                                                             \
            mpi_text(input_rc_, input_msg_, sizeof input_msg_);                                                \
            dr_error("%s failed: %s (%s:%d)", #call, input_msg_, __FILE__, __LINE__);                          \
            return DR_ERR_RUNTIME;                                                                             \
        }                                                                                                      \
    } while (0)

/* Why a file cannot be opened: what the file system says when it can tell (missing, a directory, no permission),
 * else MPI's reason. */
static void open_failure(const char *path, int rc, char *msg, size_t len)
{
    char why[MPI_MAX_ERROR_STRING];
    mpi_text(rc, why, sizeof why);
    struct stat st;
    if (stat(path, &st) != 0) fail(msg, len, "cannot open: %s", strerror(errno));
    else if (S_ISDIR(st.st_mode)) fail(msg, len, "cannot read: it is a directory");
    else fail(msg, len, "cannot open: %s", why);
}

int dr_input_check_regular(const char *path, char *msg, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0) return errno == ENOENT || errno == EACCES || errno == ENOTDIR
                                         ? fail(msg, len, "cannot open: %s", strerror(errno)) : 0;
    if (S_ISREG(st.st_mode)) return 0;
    if (S_ISDIR(st.st_mode)) return fail(msg, len, "cannot read: it is a directory");
    const char *what = S_ISFIFO(st.st_mode) ? "a named pipe" : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a file";
    return fail(msg, len, "not a regular file (%s): --input reads regular files only", what);
}

/* Rank 0: read exactly n bytes at offset off. */
static int read_exactly(MPI_File fh, uint64_t off, void *buf, size_t n, char *msg, size_t len)
{
    MPI_Status st;
    char why[MPI_MAX_ERROR_STRING];
    int rc = MPI_File_read_at(fh, (MPI_Offset)off, buf, (int)n, MPI_BYTE, &st);
    int got = 0;
    if (rc == MPI_SUCCESS) rc = MPI_Get_count(&st, MPI_BYTE, &got);
    if (rc != MPI_SUCCESS) {
        mpi_text(rc, why, sizeof why);
        return fail(msg, len, "cannot read the header: %s", why);
    }
    if ((size_t)got != n)
        return fail(msg, len, "short read: %d of %zu header bytes (the file changed while being read?)", got, n);
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The .npy header of an open file of `size` bytes whose first `n` bytes are in head. */
static int inspect_npy(MPI_File fh, uint64_t size, const unsigned char *head, size_t n, verdict_t *v, char *msg,
                       size_t len)
{
    dr_npy_header_t h;
    size_t need = 0;
    char err[512];
    dr_npy_result_t r = dr_npy_parse(head, n, &h, &need, err, sizeof err);
    if (r == DR_NPY_NEED_MORE) {
        if (need > size)
            return fail(msg, len, "truncated: the .npy header needs %zu bytes but the file has %" PRIu64, need, size);
        unsigned char *all = malloc(need);
        if (!all) return fail(msg, len, "out of memory for a %zu-byte header", need);
        if (read_exactly(fh, 0, all, need, msg, len) != 0) {
            free(all);
            return -1;
        }
        r = dr_npy_parse(all, need, &h, &need, err, sizeof err);
        free(all);
    }
    if (r != DR_NPY_OK) return fail(msg, len, "%s", r == DR_NPY_ERROR ? err : "corrupt header (its length changed)");
    if (dr_npy_check_size(&h, size, &v->trailing, err, sizeof err) != 0) return fail(msg, len, "%s", err);
    v->format = DR_INPUT_NPY;
    v->dtype = h.dtype;
    v->count = h.count;
    v->data_offset = h.data_offset;
    v->fortran_order = h.fortran_order;
    return 0;
}

/* Rank 0: everything about the file that can be wrong before reading its data. */
static dr_status_t inspect(const char *path, const dr_input_spec_t *spec, verdict_t *v, char *msg, size_t len)
{
    if (dr_input_check_regular(path, msg, len) != 0) return DR_ERR_USAGE;
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        open_failure(path, rc, msg, len);
        return DR_ERR_USAGE;
    }
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    dr_status_t status = DR_ERR_USAGE;
    MPI_Offset size = 0;
    unsigned char head[4096];
    char why[MPI_MAX_ERROR_STRING];
    rc = MPI_File_get_size(fh, &size);
    if (rc != MPI_SUCCESS || size < 0) {
        mpi_text(rc, why, sizeof why);
        fail(msg, len, "cannot get its size: %s", why);
        status = DR_ERR_RUNTIME;
        goto done;
    }
    v->file_size = (uint64_t)size;
    const size_t n = v->file_size < sizeof head ? (size_t)v->file_size : sizeof head;
    if (n > 0 && read_exactly(fh, 0, head, n, msg, len) != 0) {
        status = DR_ERR_RUNTIME;
        goto done;
    }
    const int has_magic = n >= 6 && memcmp(head, "\x93NUMPY", 6) == 0;
    const int hdf5 = spec->format == DR_INPUT_HDF5 ||
                     (spec->format == DR_INPUT_AUTO && !has_magic &&
                      (dr_h5_has_signature(head, n) || ends_with(path, ".h5") || ends_with(path, ".hdf5") ||
                       ends_with(path, ".he5")));
    const int npy = !hdf5 && (spec->format == DR_INPUT_NPY ||
                              (spec->format == DR_INPUT_AUTO && (ends_with(path, ".npy") || has_magic)));
    if (!hdf5 && spec->dataset && spec->dataset[0]) {
        fail(msg, len, "%s is for HDF5 files; this is a %s file", DR_NAME("file.dataset", "--dataset"),
                 npy ? ".npy" : "raw");
        goto done;
    }
    if (hdf5) {
        if (spec->offset_given) {
            fail(msg, len, "%s is for raw files; this is an HDF5 file", DR_NAME("file.has_offset", "--offset"));
            goto done;
        }
        MPI_File_close(&fh); /* HDF5 opens it itself */
        fh = MPI_FILE_NULL;
        dr_dtype_t dt = DR_DTYPE_COUNT;
        if (dr_h5_inspect(path, spec->dataset, &dt, &v->count, v->dataset, sizeof v->dataset, msg, len) != 0) goto done;
        v->format = DR_INPUT_HDF5;
        v->dtype = dt;
        v->data_offset = 0;
        if (spec->type_given && spec->dtype != dt) {
            fail(msg, len, "dataset '%s' holds %s but %s %s was given (leave it out to use the dataset's type)",
                 v->dataset, dr_dtype_name(dt), DR_NAME("file.dtype", "--type"), dr_dtype_name(spec->dtype));
            goto done;
        }
    } else if (npy) {
        if (spec->offset_given) {
            fail(msg, len, "%s is for raw files; this is a .npy file (its header gives the data offset)",
                 DR_NAME("file.has_offset", "--offset"));
            goto done;
        }
        if (inspect_npy(fh, v->file_size, head, n, v, msg, len) != 0) goto done;
        if (spec->type_given && spec->dtype != (dr_dtype_t)v->dtype) {
            fail(msg, len, "the file holds %s but %s %s was given (leave it out to use the file's type)",
                 dr_dtype_name((dr_dtype_t)v->dtype), DR_NAME("file.dtype", "--type"), dr_dtype_name(spec->dtype));
            goto done;
        }
    } else {
        if (!spec->type_given) {
            fail(msg, len, "not a .npy file (no \\x93NUMPY magic): a raw binary file needs %s",
                 DR_NAME("file.dtype", "--type"));
            goto done;
        }
        char err[512];
        if (dr_raw_layout(spec->dtype, spec->offset_given ? spec->offset : 0, v->file_size, &v->count, err,
                          sizeof err) != 0) {
            fail(msg, len, "%s", err);
            goto done;
        }
        v->format = DR_INPUT_RAW;
        v->dtype = spec->dtype;
        v->data_offset = spec->offset_given ? spec->offset : 0;
    }
    if (!dr_op_valid((dr_dtype_t)v->dtype, spec->op)) {
        fail(msg, len, "%s %s is not defined for the file's type %s (band, bor, bxor take the integer types)",
             DR_NAME("op", "--op"), dr_op_name(spec->op), dr_dtype_name((dr_dtype_t)v->dtype));
        goto done;
    }
    if (!dr_acc_mode_valid((dr_dtype_t)v->dtype, spec->op, spec->acc_mode)) {
        fail(msg, len, "%s %s of the file's type %s has no exact mode (%s exact: sums; min and max are exact anyway): "
             "use %s wide or native",
             DR_NAME("op", "--op"), dr_op_name(spec->op), dr_dtype_name((dr_dtype_t)v->dtype),
             DR_NAME("cfg.acc_mode", "--acc"), DR_NAME("cfg.acc_mode", "--acc"));
        goto done;
    }
    status = DR_OK;
done:
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    return status;
}

/* Agree across comm: the lowest rank with `failed` set, or nranks when none. */
static int first_failed_rank(MPI_Comm comm, int rank, int nranks, int failed, int *first)
{
    int mine = failed ? rank : nranks;
    return MPI_Allreduce(&mine, first, 1, MPI_INT, MPI_MIN, comm);
}

dr_status_t dr_input_open(MPI_Comm comm, const char *path, const dr_input_spec_t *spec, dr_input_t *in)
{
    memset(in, 0, sizeof *in);
    in->comm = MPI_COMM_NULL;
    in->fh = MPI_FILE_NULL;
    if (MPI_Comm_rank(comm, &in->rank) != MPI_SUCCESS || MPI_Comm_size(comm, &in->nranks) != MPI_SUCCESS) {
        dr_error("%s: MPI_Comm_rank/MPI_Comm_size failed on the input's communicator", path);
        return DR_ERR_RUNTIME;
    }
    snprintf(in->path, sizeof in->path, "%s", path);

    verdict_t v;
    memset(&v, 0, sizeof v);
    char msg[1024] = "";
    if (in->rank == 0) v.status = inspect(path, spec, &v, msg, sizeof msg);
    INPUT_MPI_CHECK(MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm));
    if (v.status != DR_OK) {
        if (in->rank == 0) dr_error("%s: %s", path, msg);
        return (dr_status_t)v.status;
    }
    if (in->rank == 0 && v.trailing)
        dr_warn("%s: the %" PRIu64 " bytes after the array's data are ignored (as numpy does)", path, v.trailing);

    INPUT_MPI_CHECK(MPI_Comm_dup(comm, &in->comm));
    int first = in->nranks;
    if (v.format == DR_INPUT_HDF5) {
        /* Every rank opens the file and the dataset with HDF5's MPI-IO driver (collective). */
        const int failed = dr_h5_open(in->comm, path, v.dataset, (dr_dtype_t)v.dtype, &in->h5, msg, sizeof msg) != 0;
        int agree = first_failed_rank(in->comm, in->rank, in->nranks, failed, &first);
        if (agree != MPI_SUCCESS || first < in->nranks) {
            if (in->rank == first) dr_error("%s: %s", path, msg);
            if (agree != MPI_SUCCESS) dr_error("%s: MPI_Allreduce failed after opening the file", path);
            dr_h5_close(in->h5);
            in->h5 = NULL;
            MPI_Comm_free(&in->comm);
            return agree != MPI_SUCCESS ? DR_ERR_RUNTIME : DR_ERR_USAGE;
        }
        snprintf(in->dataset, sizeof in->dataset, "%s", v.dataset);
    } else {
        /* Every rank opens the file. A rank that cannot (a file system not mounted on its node) says so itself. */
        int rc = MPI_File_open(in->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &in->fh);
        MPI_Offset size = -1;
        if (rc == MPI_SUCCESS) {
            MPI_File_set_errhandler(in->fh, MPI_ERRORS_RETURN);
            if (MPI_File_get_size(in->fh, &size) != MPI_SUCCESS) size = -1;
        }
        const int failed = rc != MPI_SUCCESS || size != (MPI_Offset)v.file_size;
        int agree = first_failed_rank(in->comm, in->rank, in->nranks, failed, &first);
        if (agree != MPI_SUCCESS || first < in->nranks) {
            if (in->rank == first) {
                if (rc != MPI_SUCCESS) {
                    open_failure(path, rc, msg, sizeof msg);
                    dr_error("%s: %s", path, msg);
                } else {
                    dr_error("%s: this rank sees %lld bytes, rank 0 saw %" PRIu64 " (not the same file on every node?)",
                             path, (long long)size, v.file_size);
                }
            }
            if (agree != MPI_SUCCESS) dr_error("%s: MPI_Allreduce failed after opening the file", path);
            if (rc == MPI_SUCCESS) MPI_File_close(&in->fh);
            MPI_Comm_free(&in->comm);
            return agree != MPI_SUCCESS ? DR_ERR_RUNTIME : DR_ERR_USAGE;
        }
    }
    in->is_open = 1;
    in->format = (dr_input_format_t)v.format;
    in->dtype = (dr_dtype_t)v.dtype;
    in->elem_size = dr_dtype_size(in->dtype);
    in->count = v.count;
    in->data_offset = v.data_offset;
    in->file_size = v.file_size;
    in->fortran_order = v.fortran_order;
#if MPI_VERSION >= 4
    in->max_call_bytes = (uint64_t)1 << 40; /* the large-count calls take any size; keep each call bounded */
#else
    in->max_call_bytes = INT_MAX;
#endif
#ifdef DR_TEST_HOOKS
    /* Test builds only (tests/input/reader.cmake): DREDUCE_IO_MAX_BYTES=N lowers the per-call limit to N bytes, so a
     * small file takes several calls (the MPI 4 large-count ones where the library has them). */
    const char *cap = getenv("DREDUCE_IO_MAX_BYTES");
    char *cap_end = NULL;
    const unsigned long long cap_bytes = cap ? strtoull(cap, &cap_end, 10) : 0;
    if (cap && *cap && *cap_end == 0 && cap_bytes > 0 && cap_bytes < in->max_call_bytes) in->max_call_bytes = cap_bytes;
#endif
    return DR_OK;
}

/* One collective read of n elements at element `first` into buf (n may be 0). Prints and returns
 * DR_ERR_RUNTIME on this rank's failure; the caller keeps the collective calls matched. */
static dr_status_t read_call(dr_input_t *in, uint64_t first, uint64_t n, void *buf)
{
    if (in->h5) {
        char msg[1024];
        if (dr_h5_read(in->h5, first, n, buf, msg, sizeof msg) == 0) return DR_OK;
        dr_error("%s: dataset '%s': %s", in->path, in->dataset, msg);
        return DR_ERR_RUNTIME;
    }
    const uint64_t off = in->data_offset + first * in->elem_size, bytes = n * in->elem_size;
    MPI_Status st;
    char why[MPI_MAX_ERROR_STRING];
#if MPI_VERSION >= 4
    MPI_Count got = 0;
    int rc = MPI_File_read_at_all_c(in->fh, (MPI_Offset)off, buf, (MPI_Count)bytes, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS) rc = MPI_Get_count_c(&st, MPI_BYTE, &got);
#else
    int got = 0;
    int rc = MPI_File_read_at_all(in->fh, (MPI_Offset)off, buf, (int)bytes, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS) rc = MPI_Get_count(&st, MPI_BYTE, &got);
#endif
    if (rc != MPI_SUCCESS) {
        mpi_text(rc, why, sizeof why);
        dr_error("%s: reading %" PRIu64 " bytes at offset %" PRIu64 " failed: %s", in->path, bytes, off, why);
        return DR_ERR_RUNTIME;
    }
    if ((uint64_t)got != bytes) {
        dr_error("%s: short read: %" PRIu64 " of %" PRIu64 " bytes at offset %" PRIu64
                 " (the file changed while being read?)", in->path, (uint64_t)got, bytes, off);
        return DR_ERR_RUNTIME;
    }
    return DR_OK;
}

/* The file must still hold this rank's range. Open MPI's collective reads (ompio) report a read past the end of a
 * file that shrank as complete (MPI_Get_count gives the bytes asked for), so the size is checked before the reads
 * and again after them. Returns 0, or -1 after printing. */
static int still_holds(const dr_input_stream_t *s, uint64_t first, uint64_t end)
{
    const dr_input_t *in = s->in;
    if (end == first || in->h5) return 0; /* HDF5 checks its own reads */
    const uint64_t last_byte = in->data_offset + end * in->elem_size;
    MPI_Offset size = -1;
    int rc = MPI_File_get_size(in->fh, &size);
    if (rc != MPI_SUCCESS) {
        char why[MPI_MAX_ERROR_STRING];
        mpi_text(rc, why, sizeof why);
        dr_error("%s: cannot get its size: %s", in->path, why);
        return -1;
    }
    if (size < 0 || (uint64_t)size < last_byte) {
        dr_error("%s: short read: the file has %lld bytes now, %" PRIu64 " when opened, but elements [%" PRIu64
                 ", %" PRIu64 ") end at byte %" PRIu64 " (it changed while being read?)", in->path, (long long)size,
                 in->file_size, first, end, last_byte);
        return -1;
    }
    return 0;
}

dr_status_t dr_input_stream_begin(dr_input_t *in, uint64_t first, uint64_t count, uint64_t chunk_elems,
                                  dr_input_stream_t *s)
{
    memset(s, 0, sizeof *s);
    s->in = in;
    s->status = DR_OK;
    const int bad = !in->is_open || chunk_elems == 0 || first > in->count || count > in->count - first;
    uint64_t per_call = in->is_open && in->elem_size ? in->max_call_bytes / in->elem_size : 1;
    if (per_call == 0) per_call = 1;
    s->chunk = chunk_elems < per_call ? chunk_elems : per_call;
    s->next = first;
    s->end = bad ? first : first + count;
    const uint64_t calls = bad ? 0 : (count + s->chunk - 1) / s->chunk;
    if (!in->is_open) {
        dr_error("%s: reading an input that is not open", in->path);
        return DR_ERR_RUNTIME;
    }
    if (bad)
        dr_error("%s: cannot read elements [%" PRIu64 ", %" PRIu64 " + %" PRIu64 ") of %" PRIu64 " in chunks of "
                 "%" PRIu64, in->path, first, first, count, in->count, chunk_elems);
    const int shrunk = !bad && still_holds(s, first, first + count) != 0;
    uint64_t mine[2] = {calls, (uint64_t)(bad || shrunk)}, all[2] = {0, 0};
    INPUT_MPI_CHECK(MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, in->comm));
    if (all[1]) return DR_ERR_RUNTIME;
    s->first = first;
    s->calls_left = all[0];
    return DR_OK;
}

dr_status_t dr_input_stream_next(dr_input_stream_t *s, void *buf, uint64_t *got, int *done)
{
    *got = 0;
    *done = 0;
    if (s->calls_left == 0) {
        /* Every rank is past its last read: agree on how they went. */
        if (s->status == DR_OK && still_holds(s, s->first, s->end) != 0) s->status = DR_ERR_RUNTIME;
        int mine = (int)s->status, worst = 0;
        *done = 1;
        INPUT_MPI_CHECK(MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, s->in->comm));
        return (dr_status_t)worst;
    }
    --s->calls_left;
    const uint64_t left = s->end - s->next;
    const uint64_t n = s->status != DR_OK ? 0 : left < s->chunk ? left : s->chunk;
    const dr_status_t st = read_call(s->in, s->next, n, buf);
    if (st != DR_OK) {
        s->status = st; /* keep making the (empty) collective calls; the final call returns the error */
        return DR_OK;
    }
    s->next += n;
    *got = n;
    return DR_OK;
}

dr_status_t dr_input_read(dr_input_t *in, uint64_t first, uint64_t count, void *buf)
{
    dr_input_stream_t s;
    DR_CHECK(dr_input_stream_begin(in, first, count, UINT64_MAX, &s));
    unsigned char *p = buf;
    int done = 0;
    while (!done) {
        uint64_t got = 0;
        DR_CHECK(dr_input_stream_next(&s, p, &got, &done));
        p += got * in->elem_size;
    }
    return DR_OK;
}

void dr_input_close(dr_input_t *in)
{
    if (!in->is_open) return;
    if (in->h5) dr_h5_close(in->h5);
    else MPI_File_close(&in->fh);
    in->h5 = NULL;
    MPI_Comm_free(&in->comm);
    in->is_open = 0;
}
