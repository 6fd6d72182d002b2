/* The HDF5 reader of --input (see input_hdf5.h). Without DREDUCE_HAVE_HDF5 only the stubs at the end are built. */
#define _POSIX_C_SOURCE 200809L
#include "input_hdf5.h"
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return -1;
}

int dr_h5_has_signature(const unsigned char *head, size_t n)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t off = 0; off + 8 <= n; off = off ? off * 2 : 512)
        if (memcmp(head + off, sig, 8) == 0) return 1;
    return 0;
}

#ifdef DREDUCE_HAVE_HDF5
#include <hdf5.h>

#if !defined(H5_HAVE_PARALLEL)
#error "DREDUCE_HAVE_HDF5 needs a parallel HDF5 (H5_HAVE_PARALLEL): CMake checks HDF5_IS_PARALLEL"
#endif

struct dr_h5 {
    hid_t file, dset, space, memtype, dxpl;
    int ndim;
    hsize_t dims[H5S_MAX_RANK];
};

int dr_h5_available(void) { return 1; }

const char *dr_h5_description(void)
{
    static char text[64];
    snprintf(text, sizeof text, "parallel HDF5 %d.%d.%d", H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
    return text;
}

/* HDF5 prints its error stack to stderr by default: off, unless DREDUCE_HDF5_ERRORS asks for it. */
static void quiet(void)
{
    const char *e = getenv("DREDUCE_HDF5_ERRORS");
    if (!e || !*e || strcmp(e, "0") == 0) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_TIME: return "time";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown";
    }
}

/* h5py's bool: an enum of a 1-byte integer with exactly FALSE = 0 and TRUE = 1. Read as uint8 0/1. */
static int is_h5py_bool(hid_t t)
{
    if (H5Tget_nmembers(t) != 2) return 0;
    hid_t base = H5Tget_super(t);
    const int ok = base >= 0 && H5Tget_class(base) == H5T_INTEGER && H5Tget_size(base) == 1;
    if (base >= 0) H5Tclose(base);
    if (!ok) return 0;
    for (unsigned i = 0; i < 2; ++i) {
        unsigned char v = 0xff;
        char *name = H5Tget_member_name(t, i);
        const int good = name && H5Tget_member_value(t, i, &v) >= 0 &&
                         ((strcmp(name, "FALSE") == 0 && v == 0) || (strcmp(name, "TRUE") == 0 && v == 1));
        H5free_memory(name);
        if (!good) return 0;
    }
    return 1;
}

/* The dataset's file type as ours, and the memory type HDF5 converts it to (native byte order). */
static int map_type(hid_t ftype, dr_dtype_t *dtype, hid_t *memtype, char *msg, size_t len)
{
    const H5T_class_t c = H5Tget_class(ftype);
    const size_t size = H5Tget_size(ftype);
    *memtype = H5I_INVALID_HID;
    if (c == H5T_INTEGER) {
        const int is_signed = H5Tget_sign(ftype) == H5T_SGN_2;
        static const struct {
            size_t size;
            int is_signed;
            dr_dtype_t dtype;
        } map[] = {{1, 1, DR_INT8},  {1, 0, DR_UINT8},  {2, 1, DR_INT16}, {2, 0, DR_UINT16},
                   {4, 1, DR_INT32}, {4, 0, DR_UINT32}, {8, 1, DR_INT64}, {8, 0, DR_UINT64}};
        const hid_t native[] = {H5T_NATIVE_INT8,  H5T_NATIVE_UINT8,  H5T_NATIVE_INT16, H5T_NATIVE_UINT16,
                                H5T_NATIVE_INT32, H5T_NATIVE_UINT32, H5T_NATIVE_INT64, H5T_NATIVE_UINT64};
        for (size_t k = 0; k < sizeof map / sizeof map[0]; ++k)
            if (map[k].size == size && map[k].is_signed == is_signed) {
                *dtype = map[k].dtype;
                *memtype = H5Tcopy(native[k]);
                return *memtype < 0 ? fail(msg, len, "cannot copy an HDF5 type") : 0;
            }
        return fail(msg, len, "unsupported HDF5 type: %zu-byte %s integer", size, is_signed ? "signed" : "unsigned");
    }
    if (c == H5T_FLOAT) {
        if (size == 4 || size == 8) {
            *dtype = size == 4 ? DR_FLOAT32 : DR_FLOAT64;
            *memtype = H5Tcopy(size == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
            return *memtype < 0 ? fail(msg, len, "cannot copy an HDF5 type") : 0;
        }
        size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
        if (size == 2 && H5Tget_fields(ftype, &spos, &epos, &esize, &mpos, &msize) >= 0 && spos == 15 && mpos == 0) {
            const size_t bias = H5Tget_ebias(ftype);
            const int f16 = epos == 10 && esize == 5 && msize == 10 && bias == 15;
            const int bf16 = epos == 7 && esize == 8 && msize == 7 && bias == 127;
            if (f16 || bf16) { /* the same layout in little-endian order: HDF5 only swaps bytes */
                *dtype = f16 ? DR_FLOAT16 : DR_BFLOAT16;
                *memtype = H5Tcopy(ftype);
                if (*memtype < 0 || H5Tset_order(*memtype, H5T_ORDER_LE) < 0)
                    return fail(msg, len, "cannot make a little-endian 16-bit float type");
                return 0;
            }
        }
        return fail(msg, len, "unsupported HDF5 type: %zu-byte float (not IEEE float16, bfloat16, float32 or "
                              "float64)", size);
    }
    if (c == H5T_ENUM && is_h5py_bool(ftype)) {
        *dtype = DR_UINT8;
        *memtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
        return *memtype < 0 ? fail(msg, len, "cannot make a native bool type") : 0;
    }
    return fail(msg, len, "unsupported HDF5 type: %s (supported: integers of 1, 2, 4, 8 bytes, IEEE floats of 2, 4, 8 "
                          "bytes, bfloat16, h5py's bool)", class_name(c));
}

/* ---- rank 0's first look ------------------------------------------------------------------------------------ */

/* Filters by their registered ids (The HDF Group's list of registered filter plugins), for a filter whose name the
 * file does not carry: the name a user searches for, and what decodes it. */
static const char *filter_name(H5Z_filter_t id)
{
    static const struct {
        H5Z_filter_t id;
        const char *name;
    } known[] = {{H5Z_FILTER_DEFLATE, "deflate (gzip)"}, {H5Z_FILTER_SHUFFLE, "shuffle"},
                 {H5Z_FILTER_FLETCHER32, "fletcher32"},  {H5Z_FILTER_SZIP, "szip"},
                 {H5Z_FILTER_NBIT, "nbit"},              {H5Z_FILTER_SCALEOFFSET, "scaleoffset"},
                 {305, "LZO"},                           {307, "bzip2"},
                 {32000, "LZF"},                         {32001, "blosc"},
                 {32004, "LZ4"},                         {32008, "bitshuffle"},
                 {32013, "zfp"},                         {32015, "Zstandard"},
                 {32017, "SZ"},                          {32018, "FCIDECOMP"},
                 {32019, "JPEG"},                        {32024, "SZ3"},
                 {32026, "blosc2"}};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; ++k)
        if (known[k].id == id) return known[k].name;
    return NULL;
}

/* An optional filter (H5Z_FLAG_OPTIONAL, as PyTables and h5py add plugin filters) is skipped by a writer that lacks
 * it, and the chunk's filter mask says so: such chunks read without the filter. 1 when the dataset's first written
 * chunk skipped filter `index` (or no chunk is written: every element is the fill value); the chunks of one dataset
 * are written alike in practice, and one that is not still fails in H5Dread. */
static int optional_filter_skipped(hid_t dset, unsigned index)
{
#if H5_VERSION_GE(1, 10, 5)
    hid_t space = H5Dget_space(dset);
    hsize_t chunks = 0, offset[H5S_MAX_RANK], size = 0;
    haddr_t addr = 0;
    unsigned mask = 0;
    int skipped = 0;
    if (space >= 0 && H5Dget_num_chunks(dset, space, &chunks) >= 0)
        skipped = chunks == 0 ||
                  (H5Dget_chunk_info(dset, space, 0, offset, &mask, &addr, &size) >= 0 && (mask & (1u << index)));
    if (space >= 0) H5Sclose(space);
    return skipped;
#else
    (void)dset, (void)index;
    return 0;
#endif
}

/* Refuse, by name and before anything is read, what this HDF5 cannot read: a filter it cannot decode (a plugin
 * filter such as blosc, bzip2, LZF or Zstandard without its plugin: HDF5 would fail inside H5Dread with a generic
 * error) and a virtual dataset (parallel HDF5 before 1.14 does not read them through the MPI-IO driver). */
static int check_storage(hid_t dset, const char *name, char *msg, size_t len)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl < 0) return fail(msg, len, "dataset '%s': cannot read its creation properties", name);
    int rc = 0;
    if (H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        size_t maps = 0;
        char src[512] = "";
        if (H5Pget_virtual_count(dcpl, &maps) >= 0 && maps > 0) {
            char file[256] = "", dsname[256] = "";
            H5Pget_virtual_filename(dcpl, 0, file, sizeof file);
            H5Pget_virtual_dsetname(dcpl, 0, dsname, sizeof dsname);
            snprintf(src, sizeof src, ", the first in '%s', dataset '%s'", file, dsname);
        }
        rc = fail(msg, len, "dataset '%s' is a virtual dataset (its data lives in %zu source dataset%s%s), which "
                  "dreduce does not read: reduce the source datasets, or copy it into a regular one (h5repack -l "
                  "CONTI)", name, maps, maps == 1 ? "" : "s", src);
    }
    const int nfilters = rc == 0 ? H5Pget_nfilters(dcpl) : 0;
    if (nfilters < 0) rc = fail(msg, len, "dataset '%s': cannot read its filter pipeline", name);
    for (int i = 0; i < nfilters && rc == 0; ++i) {
        unsigned flags = 0, config = 0;
        size_t nvalues = 0;
        char stored[128] = "";
        const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nvalues, NULL, sizeof stored, stored,
                                               &config);
        if (id < 0) {
            rc = fail(msg, len, "dataset '%s': cannot read filter %d of its pipeline", name, i);
            break;
        }
        /* H5Zfilter_avail also looks for a plugin (HDF5_PLUGIN_PATH, then HDF5's default plugin folder). */
        const htri_t avail = H5Zfilter_avail(id);
        unsigned info = 0;
        const int decodes = avail > 0 && H5Zget_filter_info(id, &info) >= 0 && (info & H5Z_FILTER_CONFIG_DECODE_ENABLED);
        if (decodes || ((flags & H5Z_FLAG_OPTIONAL) && optional_filter_skipped(dset, (unsigned)i))) continue;
        const char *known = filter_name(id);
        const char *shown = known ? known : stored[0] ? stored : "unregistered";
        const char *plugin_path = getenv("HDF5_PLUGIN_PATH");
        char where[384];
        if (plugin_path && *plugin_path)
            snprintf(where, sizeof where, "no plugin for it in HDF5_PLUGIN_PATH=%s", plugin_path);
        else
            snprintf(where, sizeof where, "set HDF5_PLUGIN_PATH to a folder holding its plugin, e.g. the hdf5plugin "
                                          "package's (python3 -c 'import hdf5plugin; print(hdf5plugin.PLUGIN_PATH)')");
        rc = fail(msg, len, "dataset '%s' is compressed with HDF5 filter %d (%s), which this HDF5 cannot decode (%s): "
                  "%s", name, (int)id, shown, avail > 0 ? "its plugin only encodes" : "no plugin found", where);
    }
    H5Pclose(dcpl);
    return rc;
}

typedef struct {
    char names[4096]; /* ", "-separated, cut with "..." */
    int count;
    char first[512];
} listing_t;

static herr_t visit_link(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    listing_t *l = data;
    if (info->type != H5L_TYPE_HARD) return 0;
    hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
    if (obj < 0) return 0;
    const int is_dataset = H5Iget_type(obj) == H5I_DATASET;
    H5Oclose(obj);
    if (!is_dataset) return 0;
    if (l->count++ == 0) snprintf(l->first, sizeof l->first, "/%s", name);
    const size_t k = strlen(l->names);
    if (k + strlen(name) + 8 < sizeof l->names) snprintf(l->names + k, sizeof l->names - k, "%s/%s", k ? ", " : "", name);
    else if (k + 6 < sizeof l->names && strcmp(l->names + k - 3, "...") != 0) snprintf(l->names + k, 6, ", ...");
    return 0;
}

int dr_h5_inspect(const char *path, const char *dataset, dr_dtype_t *dtype, uint64_t *count, char *name,
                  size_t namelen, char *msg, size_t len)
{
    quiet();
    if (H5Fis_hdf5(path) <= 0) return fail(msg, len, "not an HDF5 file (no HDF5 signature)");
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) return fail(msg, len, "cannot open as HDF5 (corrupt or unreadable)");
    int rc = -1;
    hid_t dset = H5I_INVALID_HID, space = H5I_INVALID_HID, ftype = H5I_INVALID_HID, memtype = H5I_INVALID_HID;
    listing_t l;
    memset(&l, 0, sizeof l);
    if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit_link, &l) < 0) {
        fail(msg, len, "cannot list the file's datasets (corrupt?)");
        goto done;
    }
    if (!dataset || !*dataset) {
        if (l.count == 0) {
            fail(msg, len, "the file holds no datasets");
            goto done;
        }
        if (l.count > 1) {
            fail(msg, len, "the file holds %d datasets: name one with %s (%s)", l.count,
                 DR_NAME("file.dataset", "--dataset"), l.names);
            goto done;
        }
        snprintf(name, namelen, "%s", l.first);
    } else {
        snprintf(name, namelen, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
    }
    htri_t exists = 1;
    /* H5Lexists checks one link at a time: every prefix of the path must exist before the next is asked about. */
    for (char *p = name + 1; exists > 0; ++p) {
        if (*p != '/' && *p != '\0') continue;
        const char c = *p;
        *p = '\0';
        exists = H5Lexists(file, name, H5P_DEFAULT);
        *p = c;
        if (c == '\0') break;
    }
    if (exists > 0) dset = H5Dopen2(file, name, H5P_DEFAULT);
    if (dset < 0) {
        fail(msg, len, "no dataset '%s' in the file (%s%s)", name, l.count ? "its datasets: " : "it holds none",
             l.names);
        goto done;
    }
    space = H5Dget_space(dset);
    ftype = H5Dget_type(dset);
    if (space < 0 || ftype < 0) {
        fail(msg, len, "dataset '%s': cannot read its dataspace or type", name);
        goto done;
    }
    char why[512];
    if (map_type(ftype, dtype, &memtype, why, sizeof why) != 0) {
        fail(msg, len, "dataset '%s': %s", name, why);
        goto done;
    }
    if (check_storage(dset, name, msg, len) != 0) goto done;
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n <= 0) {
        fail(msg, len, "dataset '%s' has no elements", name);
        goto done;
    }
    *count = (uint64_t)n;
    rc = 0;
done:
    if (memtype >= 0) H5Tclose(memtype);
    if (ftype >= 0) H5Tclose(ftype);
    if (space >= 0) H5Sclose(space);
    if (dset >= 0) H5Dclose(dset);
    H5Fclose(file);
    return rc;
}

/* ---- every rank ------------------------------------------------------------------------------------------- */

/* Collective transfers, except where the dataset's storage is not all allocated (a chunked dataset written in part:
 * its unwritten chunks are the fill value). HDF5's collective chunk read (1.10.8's H5D__link_chunk_collective_io)
 * reads such a chunk at the undefined address ("addr overflow, addr = 18446744073709551615") instead of filling it;
 * an independent read fills it as HDF5 defines it. Likewise its collective read of filtered chunks runs the whole
 * pipeline, ignoring a chunk's mask of skipped optional filters (a filter the writer skipped, which check_storage
 * let through), and a filter this rank cannot decode is read independently too (it fails there, with its own
 * message, rather than inside a collective). Each rank still reads only its own share. What a rank sees here may
 * differ (plugins are found per node), so dr_h5_open agrees the mode: collective only where every rank can. */
static H5FD_mpio_xfer_t transfer_mode(hid_t dset)
{
    H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
    if (H5Dget_space_status(dset, &status) < 0 || status != H5D_SPACE_STATUS_ALLOCATED) return H5FD_MPIO_INDEPENDENT;
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl < 0) return H5FD_MPIO_INDEPENDENT;
    const int nfilters = H5Pget_nfilters(dcpl);
    H5FD_mpio_xfer_t mode = nfilters < 0 ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE;
    for (int i = 0; i < nfilters; ++i) {
        unsigned flags = 0, config = 0, info = 0;
        size_t nvalues = 0;
        const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nvalues, NULL, 0, NULL, &config);
        const int decodes = id >= 0 && H5Zfilter_avail(id) > 0 && H5Zget_filter_info(id, &info) >= 0 &&
                            (info & H5Z_FILTER_CONFIG_DECODE_ENABLED);
        if (!decodes || ((flags & H5Z_FLAG_OPTIONAL) && optional_filter_skipped(dset, (unsigned)i)))
            mode = H5FD_MPIO_INDEPENDENT;
    }
    H5Pclose(dcpl);
    return mode;
}

int dr_h5_open(MPI_Comm comm, const char *path, const char *name, dr_dtype_t dtype, dr_h5_t **out, char *msg,
               size_t len)
{
    quiet();
    *out = NULL;
    dr_h5_t *h = calloc(1, sizeof *h);
    if (!h) return fail(msg, len, "out of memory");
    h->file = h->dset = h->space = h->memtype = h->dxpl = H5I_INVALID_HID;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        free(h);
        return fail(msg, len, "cannot set up HDF5's MPI-IO driver");
    }
    h->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    char why[512] = "";
    dr_dtype_t got = DR_DTYPE_COUNT;
    if (h->file >= 0) h->dset = H5Dopen2(h->file, name, H5P_DEFAULT);
    /* Every rank takes part, also one that failed to open (it votes collective: its failure is agreed later). */
    int collective = h->dset < 0 || transfer_mode(h->dset) == H5FD_MPIO_COLLECTIVE;
    const int agreed = MPI_Allreduce(MPI_IN_PLACE, &collective, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS;
    if (h->file < 0) fail(msg, len, "cannot open with HDF5's MPI-IO driver");
    else if (h->dset < 0) fail(msg, len, "cannot open dataset '%s'", name);
    else if (!agreed) fail(msg, len, "MPI_Allreduce of the ranks' transfer modes failed");
    else if ((h->space = H5Dget_space(h->dset)) < 0) fail(msg, len, "dataset '%s': no dataspace", name);
    else {
        hid_t ftype = H5Dget_type(h->dset);
        const int bad = ftype < 0 || map_type(ftype, &got, &h->memtype, why, sizeof why) != 0 || got != dtype;
        if (ftype >= 0) H5Tclose(ftype);
        h->ndim = H5Sget_simple_extent_ndims(h->space);
        h->dxpl = H5Pcreate(H5P_DATASET_XFER);
        if (bad) fail(msg, len, "dataset '%s': its type changed since rank 0 looked (%s)", name, why);
        else if (h->ndim < 0 || H5Sget_simple_extent_dims(h->space, h->dims, NULL) < 0)
            fail(msg, len, "dataset '%s': cannot read its shape", name);
        else if (h->dxpl < 0 ||
                 H5Pset_dxpl_mpio(h->dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT) < 0)
            fail(msg, len, "cannot set HDF5's transfer mode");
        else {
            *out = h;
            return 0;
        }
    }
    dr_h5_close(h);
    return -1;
}

/* Select elements [a, b) of the flattened dataset in fsel as at most 2 * ndim - 1 hyperslabs: from a, the largest
 * block aligned to a whole sub-array that fits, along the outermost dimension it can take. */
static int select_range(const dr_h5_t *h, hid_t fsel, uint64_t a, uint64_t b)
{
    const int nd = h->ndim;
    uint64_t stride[H5S_MAX_RANK];
    uint64_t s = 1;
    for (int k = nd - 1; k >= 0; --k) {
        stride[k] = s;
        s *= h->dims[k];
    }
    H5S_seloper_t op = H5S_SELECT_SET;
    while (a < b) {
        int j = nd - 1;
        for (int k = 0; k < nd; ++k)
            if (a % stride[k] == 0 && b - a >= stride[k]) {
                j = k;
                break;
            }
        hsize_t start[H5S_MAX_RANK], count[H5S_MAX_RANK];
        for (int k = 0; k < nd; ++k) {
            start[k] = (hsize_t)((a / stride[k]) % h->dims[k]);
            count[k] = k < j ? 1 : h->dims[k];
        }
        uint64_t c = (b - a) / stride[j];
        if (c > h->dims[j] - start[j]) c = h->dims[j] - start[j];
        count[j] = (hsize_t)c;
        if (H5Sselect_hyperslab(fsel, op, start, NULL, count, NULL) < 0) return -1;
        op = H5S_SELECT_OR;
        a += c * stride[j];
    }
    return 0;
}

int dr_h5_read(dr_h5_t *h, uint64_t first, uint64_t n, void *buf, char *msg, size_t len)
{
    hsize_t m = n ? (hsize_t)n : 1;
    hid_t mspace = H5Screate_simple(1, &m, NULL);
    hid_t fsel = H5Scopy(h->space);
    int ok = mspace >= 0 && fsel >= 0;
    if (ok && n == 0) ok = H5Sselect_none(mspace) >= 0 && H5Sselect_none(fsel) >= 0;
    else if (ok && h->ndim == 0) ok = H5Sselect_all(fsel) >= 0; /* a scalar: its one element */
    else if (ok) ok = select_range(h, fsel, first, first + n) == 0;
    /* Every rank makes the collective call, even one whose selection failed (it reads nothing). */
    if (!ok && mspace >= 0 && fsel >= 0) {
        H5Sselect_none(mspace);
        H5Sselect_none(fsel);
    }
    herr_t rc = -1;
    if (mspace >= 0 && fsel >= 0) rc = H5Dread(h->dset, h->memtype, mspace, fsel, h->dxpl, buf);
    if (fsel >= 0) H5Sclose(fsel);
    if (mspace >= 0) H5Sclose(mspace);
    if (!ok) return fail(msg, len, "cannot select elements [%llu, %llu) of the dataset", (unsigned long long)first,
                         (unsigned long long)(first + n));
    if (rc < 0)
        return fail(msg, len, "H5Dread of elements [%llu, %llu) failed (set DREDUCE_HDF5_ERRORS=1 for HDF5's "
                              "reasons)", (unsigned long long)first, (unsigned long long)(first + n));
    return 0;
}

void dr_h5_close(dr_h5_t *h)
{
    if (!h) return;
    if (h->dxpl >= 0) H5Pclose(h->dxpl);
    if (h->memtype >= 0) H5Tclose(h->memtype);
    if (h->space >= 0) H5Sclose(h->space);
    if (h->dset >= 0) H5Dclose(h->dset);
    if (h->file >= 0) H5Fclose(h->file);
    free(h);
}

#else /* no HDF5 in this build */

int dr_h5_available(void) { return 0; }
const char *dr_h5_description(void) { return "not compiled in"; }

static int missing(char *msg, size_t len)
{
    return fail(msg, len, "an HDF5 file, but this dreduce was built without HDF5 (reconfigure with a parallel HDF5: "
                          "libhdf5-openmpi-dev)");
}

int dr_h5_inspect(const char *path, const char *dataset, dr_dtype_t *dtype, uint64_t *count, char *name,
                  size_t namelen, char *msg, size_t len)
{
    (void)path, (void)dataset, (void)dtype, (void)count, (void)name, (void)namelen;
    return missing(msg, len);
}

int dr_h5_open(MPI_Comm comm, const char *path, const char *name, dr_dtype_t dtype, dr_h5_t **out, char *msg,
               size_t len)
{
    (void)comm, (void)path, (void)name, (void)dtype;
    *out = NULL;
    return missing(msg, len);
}

int dr_h5_read(dr_h5_t *h, uint64_t first, uint64_t n, void *buf, char *msg, size_t len)
{
    (void)h, (void)first, (void)n, (void)buf;
    return missing(msg, len);
}

void dr_h5_close(dr_h5_t *h) { (void)h; }

#endif
