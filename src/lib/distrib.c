/* Histograms and quantiles across ranks (include/dreduce.h, "Distributions"; README.md, "Results you can trust").
 *
 * A call is: one agreement of its arguments (one MPI_Allreduce of their ranges, so ranks that disagree, or a rank
 * whose own argument is bad, end the call on every rank before any count vector of a disagreeing size is sent);
 * for a histogram with the automatic range, the stats op's pass (min and max onto every rank); then counting passes,
 * each a local pass over this rank's part (kernel, chunks of a host array or of a file, or the CPU backend) and one
 * combine of its count vector (MPI_SUM over uint64, the levels of combine.c, device buffers on a CUDA-aware MPI).
 * A quantile is a radix select over the elements' keys (src/common/distrib.h): the first digit's counts also give
 * the number of elements and of NaN; each later pass counts the next digit of the elements whose higher digits
 * match a target's, for every target (two order statistics per q) at once. Every count vector ends with two words
 * of its own: the ranks that failed locally in the pass and those of them with a runtime failure, so a rank that
 * failed still joins every pass and the others learn of it in the same collective. */
#include "dreduce.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "context.h"
#include "count.h"
#include "cpu_count.h"
#include "distrib.h"
#include "input.h"
#include "timing.h"
#include "watchdog.h"

#define HEAD_WORDS 2 /* after the counts: ranks failed, of them with a runtime failure */

/* ---- NumPy's bin type and rounding to it -------------------------------------------------------------------- */

static dr_hist_type_t hist_type(dr_dtype_t t)
{
    if (t == DR_FLOAT16) return DR_HT_F16;
    if (t == DR_FLOAT32 || t == DR_BFLOAT16) return DR_HT_F32;
    return DR_HT_F64;
}

/* A double rounded to binary16 once (as NumPy's float64 -> float16 cast): to float32 by round-to-odd first (which
 * keeps a half's tie a tie), then to the nearest half. */
static float half_from_double(double v)
{
    float f = (float)v;
    if (!isfinite(v) || (double)f == v) return dr_round_f16(f);
    if (fabs((double)f) > fabs(v)) f = nextafterf(f, 0.0f);
    return dr_round_f16(dr_bits_to_f32(dr_f32_to_bits(f) | 1u));
}

/* v rounded to the bin type (the exact result of one operation rounded once, for +, -, * and / of the type's
 * values: double has more than twice float32's bits, so rounding the double result again changes nothing). */
static double round_t(dr_hist_type_t ty, double v)
{
    if (ty == DR_HT_F32) return (double)(float)v;
    if (ty == DR_HT_F16) return (double)half_from_double(v);
    return v;
}

/* np.linspace(first, last, bins + 1) rounded to the bin type: in float64 from Python floats (an explicit range,
 * integers), or in the bin type itself from NumPy scalars of it (in_type: the automatic range of float data). */
static void linspace(dr_hist_type_t ty, int in_type, double first, double last, uint32_t bins, double *e)
{
    const dr_hist_type_t at = in_type ? ty : DR_HT_F64;
    const double div = round_t(at, (double)bins);
    const double delta = round_t(at, last - first), step = round_t(at, delta / div);
    for (uint32_t i = 0; i < bins; ++i) {
        double y = round_t(at, (double)i);
        y = step == 0 ? round_t(at, round_t(at, y / div) * delta) : round_t(at, y * step);
        e[i] = round_t(ty, round_t(at, y + first));
    }
    e[bins] = round_t(ty, last);
}

/* The plan and edges of a histogram of dtype: range (lo, hi) given, or the automatic range from the array's stats
 * (st: count, min and max over every rank). NumPy's rules (src/common/distrib.h). */
static dr_status_t hist_plan_numpy(dr_dtype_t dtype, uint32_t bins, const double *range, const dreduce_stats_t *st,
                                   dr_hist_plan_t *p, double *edges)
{
    memset(p, 0, sizeof *p);
    const dr_hist_type_t ty = hist_type(dtype);
    p->type = ty;
    p->bins = bins;
    p->bins_t = (double)bins;
    const int is_float = dr_dtype_is_float(dtype);
    if (range || st->count == 0) {
        /* Python floats (an empty array's automatic range is NumPy's 0..1): the edges in float64. */
        double lo = range ? range[0] : 0.0, hi = range ? range[1] : 1.0;
        if (lo == hi) {
            lo -= 0.5;
            hi += 0.5;
        }
        p->first = round_t(ty, lo);
        p->last = round_t(ty, hi);
        p->denom = hi - lo;
        if (!isfinite(p->first) || !isfinite(p->last)) {
            dr_error("%s %.17g,%.17g is not finite as %s, NumPy's bin type for %s data: give a range inside the "
                     "type's", DR_NAME("range", "--range"), range ? range[0] : 0.0, range ? range[1] : 1.0,
                     ty == DR_HT_F16 ? "float16" : "float32", dr_dtype_name(dtype));
            return DR_ERR_USAGE;
        }
        linspace(ty, 0, lo, hi, bins, edges);
        return DR_OK;
    }
    double first, last;
    if (is_float) {
        first = st->min.f64;
        last = st->max.f64;
        if (!isfinite(first) || !isfinite(last)) {
            dr_error("the automatic range [%g, %g] is not finite (the array holds %s), as np.histogram refuses it: "
                     "give %s", first, last, isnan(first) || isnan(last) ? "NaN" : "inf",
                     DR_NAME("range", "--range"));
            return DR_ERR_USAGE;
        }
        p->in_type = 1; /* NumPy scalars of the data's type: its arithmetic */
        if (first == last) {
            first = round_t(ty, first - 0.5);
            last = round_t(ty, last + 0.5);
        }
        p->first = first;
        p->last = last;
        p->denom = round_t(ty, last - first);
        p->bins_t = round_t(ty, (double)bins);
        if (!isfinite(p->bins_t)) {
            dr_error("%s %u is past float16's largest value, and NumPy computes the automatic range's bin indices "
                     "of float16 data in float16: give %s", DR_NAME("bins", "--bins"), bins,
                     DR_NAME("range", "--range"));
            return DR_ERR_USAGE;
        }
        linspace(ty, ty != DR_HT_F64, first, last, bins, edges);
        return DR_OK;
    }
    /* Integers: NumPy scalars of the integer type, the bin type float64. */
    const int is_signed = st->kind == DR_ACC_I64;
    const double mn = is_signed ? (double)st->min.i64 : (double)st->min.u64;
    const double mx = is_signed ? (double)st->max.i64 : (double)st->max.u64;
    const int same = is_signed ? st->min.i64 == st->max.i64 : st->min.u64 == st->max.u64;
    if (same) {
        p->first = mn - 0.5;
        p->last = mx + 0.5;
        p->denom = p->last - p->first;
        linspace(DR_HT_F64, 0, p->first, p->last, bins, edges);
        return DR_OK;
    }
    p->first = mn;
    p->last = mx;
    /* NumPy's _unsigned_subtract: the exact difference in the unsigned type, then to float64 */
    p->denom = (double)(is_signed ? (uint64_t)st->max.i64 - (uint64_t)st->min.i64 : st->max.u64 - st->min.u64);
    linspace(DR_HT_F64, 0, mn, mx, bins, edges);
    return DR_OK;
}

/* Whether (x - first) * scale is every integer x's exact place in the bins (float64 bin type): first and last whole
 * and within 2^53, so that x - first is exact for x between them (x as NumPy's astype makes it, whole there too);
 * the bins' width w = (last - first) / bins a power of two, so that scale = 1 / w and the product are exact; and
 * every edge first + k * w, exactly as linspace made it (a multiple of w within 2^53 of them: representable). The
 * estimate's floor is then the k with edges[k] <= x < edges[k + 1], the edges' bin. *log2_width: w's exponent. */
static int hist_place_exact(const dr_hist_plan_t *p, const double *edges, int *log2_width)
{
    const double first = p->first, last = p->last, w = p->denom / (double)p->bins;
    int e;
    if (!(first == floor(first) && last == floor(last) && fabs(first) <= 0x1p53 && fabs(last) <= 0x1p53))
        return 0;
    if (!(p->denom == last - first && p->denom <= 0x1p53)) return 0;
    if (!(frexp(w, &e) == 0.5 && w * (double)p->bins == p->denom && p->scale * w == 1.0)) return 0;
    *log2_width = e - 1; /* w = 0.5 * 2^e */
    if (w < 1.0 && !(fabs(first) / w <= 0x1p53 && fabs(last) / w <= 0x1p53)) return 0;
    for (uint32_t k = 0; k <= p->bins; ++k)
        if (edges[k] != first + (double)k * w) return 0;
    return 1;
}

/* The plan, and which estimate the kernels take (src/common/distrib.h, "Why two estimates"): NumPy's arithmetic
 * errs by a few units of the bin type's last place of the estimate, so bins times 8 units under half a bin is safe
 * for the fast one. */
static dr_status_t hist_plan(dr_dtype_t dtype, uint32_t bins, const double *range, const dreduce_stats_t *st,
                             dr_hist_plan_t *p, double *edges)
{
    DR_CHECK(hist_plan_numpy(dtype, bins, range, st, p, edges));
    const char *bt = p->type == DR_HT_F16 ? "float16" : p->type == DR_HT_F32 ? "float32" : "float64";
    /* a width past the bin type's largest value (the automatic range of float data, whose edges NumPy makes in
     * the data's type; an explicit float64 or integer range wider than DBL_MAX) makes edges of NaN and inf */
    if (!isfinite(p->denom)) {
        dr_error("the range [%.17g, %.17g] is wider than %s, NumPy's bin type for %s data, can hold, and so are its "
                 "edges (NumPy: NaN and inf edges, refused as too many bins but for one bin); give %s",
                 p->first, p->last, bt, dr_dtype_name(dtype), DR_NAME("range", "--range"));
        return DR_ERR_USAGE;
    }
    /* NumPy 2 refuses edges that do not increase (too many bins for the range in the bin type's precision): a bin
     * of no width would count nothing, or what its neighbour counts */
    for (uint32_t i = 0; i < bins; ++i)
        if (!(edges[i] < edges[i + 1])) {
            dr_error("%u bins over [%.17g, %.17g] are too many for the range in %s, NumPy's bin type for %s data: "
                     "edges %u and %u are both %.9g (NumPy: Too many bins for data range. Cannot create %u "
                     "finite-sized bins.); give fewer bins or a wider range", bins, edges[0], edges[bins], bt,
                     dr_dtype_name(dtype), i, i + 1, edges[i], bins);
            return DR_ERR_USAGE;
        }
    p->scale = (double)bins / p->denom;
    const double ulp = p->type == DR_HT_F16 ? 0x1p-11 : p->type == DR_HT_F32 ? 0x1p-24 : 0x1p-53;
    /* float16 and float32 bins estimate in float32: a scale past FLT_MAX (a range narrower than bins * 2.9e-39,
     * subnormal data) would be inf there */
    const double scale_max = p->type == DR_HT_F64 ? DBL_MAX : FLT_MAX;
    /* a float32 range wider than FLT_MAX: x - first overflows for some elements, which dr_hist_bin_f32 bins by the
     * edges (dr_hist_search); the fast estimate would make inf of them where the kernels and CPU lanes convert it */
    const int f32_overflows = p->type == DR_HT_F32 && isinf((float)p->last - (float)p->first);
    p->exact_estimate = !(isfinite(p->scale) && p->scale > 0 && p->scale <= scale_max &&
                          (double)bins * 8.0 * ulp < 0.5) || f32_overflows;
    const double big = fmax(fabs(p->first), fabs(p->last));
    const double est_ulp = p->type == DR_HT_F64 ? 0x1p-53 : 0x1p-24;
    /* a unit of the last place of the largest end, or the smallest subnormal where the ends are that small */
    const double tiny = p->type == DR_HT_F16 ? 0x1p-24 : p->type == DR_HT_F32 ? 0x1p-149 : 0x1p-1074;
    double m;
    if (p->type == DR_HT_F32) {
        /* float32 and bfloat16: the bound itself, a quarter more (u = 2^-24; positions in bins from the range's
         * exact ends; e = u * big * scale). Explicit range: an edge is float64 linspace's value rounded once to
         * float32 (within e of its place), first was rounded to float32 (e), and the estimate (x - first) * scale
         * rounds three times (the difference, the scale, the product: 3u * bins): 3u * bins + 2e. Automatic range,
         * the edges made in float32: an edge is also off by the step's rounding (u, or up to 4u where the step is
         * subnormal, and then e >= u * bins / 2) and i * step's (u), the width's rounding cancelling (the scale is
         * made from the same rounded width), first is exact: at most 8u * bins + e, which the terms below (3u * bins
         * + e for the edges, 4u * bins for the estimate) cover with the quarter. A fraction farther than the margin
         * from a whole number is the edges' bin; a margin too narrow would settle elements in a neighbour of theirs,
         * which the tests against NumPy see. It decides how often an element takes the edge path: 0.24% of uniform
         * data over [0, 1) at 4096 bins, so that a warp's group of 128 elements takes it a quarter of the time. */
        const double e = fmax(big * ulp, tiny) * p->scale;
        const double edge_err = (p->in_type ? 3.0 * ulp * (double)bins : 0.0) + e;
        const double est_err = (p->in_type ? 4.0 : 3.0) * ulp * (double)bins + (p->in_type ? 0.0 : e);
        m = 1.25 * (edge_err + est_err) + 1e-12;
    } else {
        /* The margin, in bins, twice over: the edges' rounding (linspace's steps and the rounding to the bin type,
         * a few units of the last place of the largest end; float16 also rounds the step's index), the fast
         * estimate's (three roundings of float32 or float64 arithmetic). */
        const double edge_err =
            4.0 * fmax(big * ulp, tiny) * p->scale + (p->type == DR_HT_F16 ? (double)bins * ulp : 0.0);
        m = 2.0 * (edge_err + 4.0 * est_ulp * (double)bins) + 1e-12;
    }
    /* Beyond a quarter of a bin the margin would settle few elements: every element is corrected from the fast
     * estimate, which lands in the edges' bin while its error (m / 1.25 or m / 2 above) is under a bin; beyond that
     * (ranges narrow beside their magnitude, [1e6, 1e6 + 1] with 2 bins), NumPy's own estimate. */
    if (!((p->type == DR_HT_F32 ? m / 1.25 : m / 2.0) < 1.0)) p->exact_estimate = 1;
    p->margin = p->exact_estimate || !(m < 0.25) ? 1.0 : m;
    /* Integer data in bins a power of two wide from a whole first edge (unit bins over bytes, 2^k-wide bins of
     * wider integers): the estimate is the element's exact place, so it settles every element in the range, those
     * on an edge too, whose fraction is 0 and which any margin would send to the edges (every element, for unit
     * bins). A margin of -1 says so: every fraction lies farther than it from a whole number. */
    p->place_shift = -1;
    int log2_width;
    if (!p->exact_estimate && !dr_dtype_is_float(dtype) && hist_place_exact(p, edges, &log2_width)) {
        p->margin = -1.0;
        /* Bins at least one wide: the kernels take the bin from the integer offset x - first, a shift, without the
         * conversion to double (an element outside [first, last) by that offset is outside as a double too: the ends
         * are under 2^53, where no integer rounds into the range). Not for uint64 below a negative first, where the
         * offset of a value near 2^64 would wrap into the range. */
        if (log2_width >= 0 && fabs(p->first) < 0x1p53 && fabs(p->last) < 0x1p53 &&
            !(dtype == DR_UINT64 && p->first < 0))
            p->place_shift = log2_width;
    }
    return DR_OK;
}

/* ---- Agreement of the arguments ------------------------------------------------------------------------------ */

/* The fields every rank must pass alike, then the status, then what may differ and the call needs from every rank:
 * a quantile's pilot mode where the rank can run it (the least is taken) and the rank's count (the largest). */
enum { F_OP = 0, F_DTYPE, F_BINS, F_HAS_RANGE, F_LO, F_HI, F_NQ, F_QHASH, F_NAN, F_STATUS, F_PILOT, F_PART, F_COUNT };
static const char *const field_name[F_COUNT] = {"op", "dtype", "bins", "range given", "range's low end",
                                                "range's high end", "number of q", "q values",
                                                "NaN policy (0 propagate, 1 omit)", "status", "pilot", "count"};

static int64_t double_bits(double d)
{
    int64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* FNV-1a over the q values' bits. */
static int64_t q_hash(size_t nq, const double *q)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; q && i < nq; ++i) {
        const uint64_t b = (uint64_t)double_bits(q[i]);
        for (int k = 0; k < 8; ++k) h = (h ^ ((b >> (8 * k)) & 0xff)) * 1099511628211ull;
    }
    return (int64_t)h;
}

/* Every rank's fields' ranges with one MPI_Allreduce(MIN) of (v, ~v): differing fields are DR_ERR_USAGE on every
 * rank (rank 0 names them), a bad status on any rank is the worst one's on every rank. lo and hi (NULL: not wanted)
 * get each field's least and greatest value over the ranks. */
static dr_status_t agree(dreduce_context_t *ctx, const int64_t mine[F_COUNT], int64_t *lo_out, int64_t *hi_out)
{
    int64_t v[2 * F_COUNT], r[2 * F_COUNT];
    for (int f = 0; f < F_COUNT; ++f) {
        v[f] = mine[f];
        v[F_COUNT + f] = ~mine[f];
        if (lo_out) lo_out[f] = mine[f];
        if (hi_out) hi_out[f] = mine[f];
    }
    if (ctx->topo.nranks == 1) return (dr_status_t)mine[F_STATUS];
    dr_watchdog_enter(ctx->wd, "setup (every rank checking a histogram's or quantile's arguments)");
    const int rc = MPI_Allreduce(v, r, 2 * F_COUNT, MPI_INT64_T, MPI_MIN, ctx->topo.comm);
    dr_watchdog_leave(ctx->wd);
    if (rc != MPI_SUCCESS) {
        dr_error("the agreement of a histogram's or quantile's arguments failed (MPI error %d)", rc);
        return DR_ERR_RUNTIME;
    }
    for (int f = 0; f < F_COUNT; ++f) {
        if (lo_out) lo_out[f] = r[f];
        if (hi_out) hi_out[f] = ~r[F_COUNT + f];
    }
    const dr_status_t worst = (dr_status_t)~r[F_COUNT + F_STATUS];
    if (worst != DR_OK) return worst; /* the rank with the problem said why */
    dr_status_t s = DR_OK;
    for (int f = 0; f < F_STATUS; ++f) {
        const int64_t lo = r[f], hi = ~r[F_COUNT + f];
        if (lo == hi) continue;
        if (ctx->topo.rank == 0) {
            if (f == F_LO || f == F_HI) {
                double a, b;
                memcpy(&a, &lo, sizeof a);
                memcpy(&b, &hi, sizeof b);
                dr_error("the ranks disagree on the histogram's %s (%.17g on some, %.17g on others): every rank "
                         "must pass the same", field_name[f], a, b);
            } else if (f == F_QHASH) {
                dr_error("the ranks disagree on the q values: every rank must pass the same");
            } else {
                dr_error("the ranks disagree on the %s (%lld on some, %lld on others): every rank must pass the "
                         "same", field_name[f], (long long)lo, (long long)hi);
            }
        }
        s = DR_ERR_USAGE;
    }
    return s;
}

/* ---- Buffers ---------------------------------------------------------------------------------------------------- */

static void free_counts(dreduce_context_t *ctx)
{
    dr_dist_bufs_t *b = &ctx->dist;
    for (int k = 0; k < 3; ++k) {
        if (!b->counts[k]) continue;
        if (b->counts_on_device) cudaFree(b->counts[k]);
        else if (ctx->is_gpu) cudaFreeHost(b->counts[k]);
        else free(b->counts[k]);
        b->counts[k] = NULL;
    }
    if (b->d_counts && !b->counts_on_device) cudaFree(b->d_counts);
    if (b->h_read) cudaFreeHost(b->h_read);
    if (b->h_local) cudaFreeHost(b->h_local);
    b->d_counts = b->h_read = b->h_local = NULL;
    b->words_cap = 0;
}

/* Count vectors of `words` uint64 (counts and head) in the memory the combine uses. */
static dr_status_t ensure_counts(dreduce_context_t *ctx, size_t words)
{
    dr_dist_bufs_t *b = &ctx->dist;
    if (words <= b->words_cap) return DR_OK;
    free_counts(ctx);
    const size_t bytes = words * sizeof(uint64_t);
    b->counts_on_device = ctx->is_gpu && ctx->path == DR_PATH_DEVICE;
    for (int k = 0; k < 3; ++k) {
        if (b->counts_on_device) DR_CHECK(dr_gpu_alloc((void **)&b->counts[k], bytes, "histogram counts"));
        else if (ctx->is_gpu) DR_CUDA_CHECK(cudaMallocHost((void **)&b->counts[k], bytes));
        else if (!(b->counts[k] = malloc(bytes))) {
            dr_error("cannot allocate %zu bytes of histogram counts", bytes);
            return DR_ERR_RUNTIME;
        }
    }
    if (ctx->is_gpu) {
        if (b->counts_on_device) {
            b->d_counts = b->counts[0];
            DR_CUDA_CHECK(cudaMallocHost((void **)&b->h_read, bytes));
            DR_CUDA_CHECK(cudaMallocHost((void **)&b->h_local, bytes));
        } else {
            DR_CHECK(dr_gpu_alloc((void **)&b->d_counts, bytes, "histogram counts"));
        }
    }
    b->words_cap = words;
    return DR_OK;
}

static dr_status_t ensure_edges(dreduce_context_t *ctx, size_t bytes)
{
    dr_dist_bufs_t *b = &ctx->dist;
    if (bytes <= b->edges_cap) return DR_OK;
    b->d_edges_valid = 0;
    if (b->d_edges) cudaFree(b->d_edges);
    b->d_edges = NULL;
    b->edges_cap = 0;
    DR_CHECK(dr_gpu_alloc(&b->d_edges, bytes, "histogram edges"));
    b->edges_cap = bytes;
    return DR_OK;
}

/* The host edges of `bins` bins: float64, then float32 (the counting passes' edges where the bins are float32). */
static dr_status_t ensure_host_edges(dreduce_context_t *ctx, uint32_t bins)
{
    dr_dist_bufs_t *b = &ctx->dist;
    const size_t bytes = ((size_t)bins + 1) * (sizeof(double) + sizeof(float));
    if (bytes <= b->h_edges_cap) return DR_OK;
    b->plan_valid = b->d_edges_valid = 0;
    if (b->h_edges_pinned) cudaFreeHost(b->h_edges);
    else free(b->h_edges);
    b->h_edges = NULL;
    b->h_edges_cap = 0;
    /* pinned only speeds the one copy up: where it fails (pinned memory short, or a CUDA error this rank alone
     * has), pageable memory serves, and the copy's own failure then joins the pass's combine (histogram()) */
    b->h_edges_pinned = ctx->is_gpu && cudaMallocHost((void **)&b->h_edges, bytes) == cudaSuccess;
    if (!b->h_edges_pinned) {
        if (ctx->is_gpu) (void)cudaGetLastError();
        b->h_edges = NULL;
        if (!(b->h_edges = malloc(bytes))) {
            dr_error("cannot allocate the edges of %u bins (%zu bytes of host memory)", bins, bytes);
            return DR_ERR_RUNTIME;
        }
    }
    b->h_edges_cap = bytes;
    return DR_OK;
}

static dr_status_t ensure_slots(dreduce_context_t *ctx, size_t bytes, int pinned_host)
{
    dr_dist_bufs_t *b = &ctx->dist;
    if (bytes > b->slot_bytes) {
        for (int k = 0; k < 2; ++k) {
            if (b->d_slot[k]) cudaFree(b->d_slot[k]);
            if (b->h_slot[k]) cudaFreeHost(b->h_slot[k]);
            b->d_slot[k] = b->h_slot[k] = NULL;
        }
        b->slot_bytes = bytes;
    }
    if (!b->events_made) {
        for (int k = 0; k < 2; ++k) DR_CUDA_CHECK(cudaEventCreateWithFlags(&b->slot_free[k], cudaEventDisableTiming));
        b->events_made = 1;
    }
    for (int k = 0; k < 2; ++k) {
        if (!b->d_slot[k]) DR_CHECK(dr_gpu_alloc(&b->d_slot[k], b->slot_bytes, "histogram chunk buffers"));
        if (pinned_host && !b->h_slot[k]) DR_CUDA_CHECK(cudaMallocHost(&b->h_slot[k], b->slot_bytes));
    }
    return DR_OK;
}

/* Keep buffer k of at least `bytes`; 0 where the memory is not to be had (the select then reads the part again:
 * this rank's choice alone, nothing collective depends on it). */
static int ensure_keep(dreduce_context_t *ctx, int k, size_t bytes)
{
    dr_dist_bufs_t *b = &ctx->dist;
    if (!b->d_keep_pos && cudaMalloc((void **)&b->d_keep_pos, sizeof(uint64_t)) != cudaSuccess) {
        (void)cudaGetLastError();
        b->d_keep_pos = NULL;
        return 0;
    }
    if (bytes <= b->keep_cap[k]) return 1;
    if (b->d_keep[k]) cudaFree(b->d_keep[k]);
    b->d_keep[k] = NULL;
    b->keep_cap[k] = 0;
    if (cudaMalloc(&b->d_keep[k], bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        b->d_keep[k] = NULL;
        return 0;
    }
    b->keep_cap[k] = bytes;
    return 1;
}

/* The CPU backend's keep buffer k, of at least `bytes` (ensure_keep's rules). */
static int ensure_cpu_keep(dreduce_context_t *ctx, int k, size_t bytes)
{
    dr_dist_bufs_t *b = &ctx->dist;
    if (bytes <= b->cpu_keep_cap[k]) return 1;
    free(b->cpu_keep[k]);
    b->cpu_keep_cap[k] = 0;
    if (!(b->cpu_keep[k] = malloc(bytes))) return 0;
    b->cpu_keep_cap[k] = bytes;
    return 1;
}

void dr_dist_free(dreduce_context_t *ctx)
{
    dr_dist_bufs_t *b = &ctx->dist;
    free_counts(ctx);
    if (b->d_edges) cudaFree(b->d_edges);
    if (b->h_edges_pinned) cudaFreeHost(b->h_edges);
    else free(b->h_edges);
    for (int k = 0; k < 2; ++k) {
        if (b->d_slot[k]) cudaFree(b->d_slot[k]);
        if (b->h_slot[k]) cudaFreeHost(b->h_slot[k]);
        if (b->events_made) cudaEventDestroy(b->slot_free[k]);
    }
    for (int k = 0; k < DR_KEEP_BUFS; ++k)
        if (b->d_keep[k]) cudaFree(b->d_keep[k]);
    if (b->d_keep_pos) cudaFree(b->d_keep_pos);
    free(b->cpu_slot);
    for (int k = 0; k < DR_KEEP_BUFS; ++k) free(b->cpu_keep[k]);
    memset(b, 0, sizeof *b);
}

/* ---- Sources and the local pass ---------------------------------------------------------------------------- */

/* This rank's part: a buffer, or its share of an open file. */
typedef struct {
    const void *buf;
    uint64_t count;
    int on_device; /* GPU context: buf is device-accessible */
    dr_input_t *in;  /* a file (buf unused) */
    uint64_t first;  /* the file's share */
    dr_dtype_t dtype;
} source_t;

/* Count chunks of host memory on the GPU: each copied into a device slot (two, alternating: one chunk's copy
 * overlaps the other's kernel) and counted there. next() gives the chunks. */
typedef dr_status_t (*chunk_next_fn)(void *state, void *slot, size_t max, const void **ptr, size_t *got, int *done);

static dr_status_t gpu_count_chunks(dreduce_context_t *ctx, const dr_count_pass_t *pass, size_t esize,
                                    int read_into_slots, chunk_next_fn next, void *state)
{
    dr_dist_bufs_t *b = &ctx->dist;
    const size_t slot_elems = ctx->cfg.chunk_bytes / esize ? ctx->cfg.chunk_bytes / esize : 1;
    DR_CHECK(ensure_slots(ctx, slot_elems * esize, read_into_slots));
    cudaStream_t st = ctx->gpu.stream;
    int k = 0;
    for (int done = 0; !done; k ^= 1) {
        /* The slot's last kernel must be done with it before it is written again. */
        DR_CUDA_CHECK(cudaEventSynchronize(b->slot_free[k]));
        const void *ptr = NULL;
        size_t got = 0;
        DR_CHECK(next(state, b->h_slot[k], slot_elems, &ptr, &got, &done));
        if (got == 0) continue;
        DR_CUDA_CHECK(cudaMemcpyAsync(b->d_slot[k], ptr, got * esize, cudaMemcpyHostToDevice, st));
        DR_CUDA_CHECK(dr_gpu_count_pass(pass, b->d_edges, b->d_slot[k], got, b->d_counts, ctx->cfg.block,
                                        ctx->gpu.device, st, NULL, NULL, 0));
        DR_CUDA_CHECK(cudaEventRecord(b->slot_free[k], st));
    }
    return DR_OK;
}

typedef struct {
    const char *at;
    uint64_t left;
    size_t esize;
} host_chunks_t;

static dr_status_t host_next(void *state, void *slot, size_t max, const void **ptr, size_t *got, int *done)
{
    (void)slot;
    host_chunks_t *h = state;
    *got = h->left < max ? (size_t)h->left : max;
    *ptr = h->at;
    h->at += *got * h->esize;
    h->left -= *got;
    *done = h->left == 0;
    return DR_OK;
}

static dr_status_t file_next(void *state, void *slot, size_t max, const void **ptr, size_t *got, int *done)
{
    (void)max;
    uint64_t n = 0;
    DR_CHECK(dr_input_stream_next(state, slot, &n, done));
    *ptr = slot;
    *got = (size_t)n;
    return DR_OK;
}

/* One local pass: this rank's counts of its part, into the context's count vector (device counts on a GPU; host
 * counts[0] on the CPU backend), zeroed first (all `words` of it: a pilot pass's vector has one word more than its
 * counts, set here to 1 where this rank's keep ran over or had no room). keep (a digit or pilot pass over device
 * memory on a GPU, over host memory on the CPU backend; NULL: none): the elements in play are appended there
 * (ensure_keep or ensure_cpu_keep sized it for keep_cap bytes), their count in b->kept. */
static dr_status_t local_pass(dreduce_context_t *ctx, const source_t *src, const dr_count_pass_t *pass,
                              const void *host_edges, size_t words, void *keep, size_t keep_cap)
{
    dr_dist_bufs_t *b = &ctx->dist;
    const size_t esize = dr_dtype_size(src->dtype);
    const size_t counted = (size_t)dr_count_words(pass);
    const int pilot = pass->kind == DR_COUNT_RANGE && words > counted;
    b->kept = 0;
    if (ctx->is_gpu) {
        DR_CUDA_CHECK(cudaMemsetAsync(b->d_counts, 0, words * sizeof(uint64_t), ctx->gpu.stream));
        if (src->in) {
            dr_input_stream_t s;
            const size_t slot_elems = ctx->cfg.chunk_bytes / esize ? ctx->cfg.chunk_bytes / esize : 1;
            DR_CHECK(dr_input_stream_begin(src->in, src->first, src->count, slot_elems, &s));
            DR_CHECK(gpu_count_chunks(ctx, pass, esize, 1, file_next, &s));
        } else if (src->on_device || src->count == 0) {
            if (keep) DR_CUDA_CHECK(cudaMemsetAsync(b->d_keep_pos, 0, sizeof(uint64_t), ctx->gpu.stream));
            DR_CUDA_CHECK(dr_gpu_count_pass(pass, b->d_edges, src->buf, src->count, b->d_counts, ctx->cfg.block,
                                            ctx->gpu.device, ctx->gpu.stream, keep, keep ? b->d_keep_pos : NULL,
                                            keep_cap / esize));
        } else {
            host_chunks_t h = {src->buf, src->count, esize};
            DR_CHECK(gpu_count_chunks(ctx, pass, esize, 0, host_next, &h));
        }
        DR_CUDA_CHECK(cudaStreamSynchronize(ctx->gpu.stream));
        if (keep) DR_CUDA_CHECK(cudaMemcpy(&b->kept, b->d_keep_pos, sizeof b->kept, cudaMemcpyDeviceToHost));
        if (pilot) {
            const uint64_t over = !keep || b->kept > keep_cap / esize;
            DR_CUDA_CHECK(cudaMemcpy(b->d_counts + counted, &over, sizeof over, cudaMemcpyHostToDevice));
        }
        return DR_OK;
    }
    uint64_t *c = b->counts[0];
    memset(c, 0, words * sizeof *c);
    if (!src->in) {
        size_t kept = 0;
        const dr_status_t s = dr_cpu_count_keep(pass, host_edges, src->buf, (size_t)src->count, ctx->threads,
                                                &ctx->workers, c, keep, keep_cap / esize, &kept);
        b->kept = kept;
        if (pilot) c[counted] = !keep || kept > keep_cap / esize;
        return s;
    }
    const size_t slot_elems = ctx->cfg.chunk_bytes / esize ? ctx->cfg.chunk_bytes / esize : 1;
    if (b->cpu_slot_bytes < slot_elems * esize) {
        free(b->cpu_slot);
        b->cpu_slot_bytes = 0;
        if (!(b->cpu_slot = malloc(slot_elems * esize))) {
            dr_error("cannot allocate %zu bytes to read a file in chunks", slot_elems * esize);
            return DR_ERR_RUNTIME;
        }
        b->cpu_slot_bytes = slot_elems * esize;
    }
    dr_input_stream_t s;
    DR_CHECK(dr_input_stream_begin(src->in, src->first, src->count, slot_elems, &s));
    for (int done = 0; !done;) {
        uint64_t got = 0;
        DR_CHECK(dr_input_stream_next(&s, b->cpu_slot, &got, &done));
        if (got) DR_CHECK(dr_cpu_count_on(pass, host_edges, b->cpu_slot, (size_t)got, ctx->threads, &ctx->workers, c));
    }
    return DR_OK;
}

/* This rank's counts of a pass over src alone, no combine, into c (dr_count_words(pass) of them, host memory). */
static dr_status_t local_counts(dreduce_context_t *ctx, const source_t *src, const dr_count_pass_t *pass,
                                uint64_t *c)
{
    const size_t words = (size_t)dr_count_words(pass);
    DR_CHECK(ensure_counts(ctx, words + HEAD_WORDS));
    DR_CHECK(local_pass(ctx, src, pass, NULL, words, NULL, 0));
    if (ctx->is_gpu) DR_CUDA_CHECK(cudaMemcpy(c, ctx->dist.d_counts, words * sizeof *c, cudaMemcpyDeviceToHost));
    else memcpy(c, ctx->dist.counts[0], words * sizeof *c);
    return DR_OK;
}

/* ---- A pass: local counts, then their combine ----------------------------------------------------------------- */

typedef struct {
    int passes;
    double local_ms, combine_ms, node_ms, global_ms, bcast_ms;
    double pass_local[DREDUCE_DIST_MAX_PASSES], pass_combine[DREDUCE_DIST_MAX_PASSES];
} pass_times_t;

static double nan0(double v) { return isnan(v) ? 0.0 : v; }

/* Run one pass and combine its `words` counts; *out gets the combined counts in host memory where they arrived
 * (every rank with to_all, else rank 0), NULL elsewhere. A local failure still joins the combine, its counts
 * zero and its head saying so; a failure on any rank is an error wherever the result arrives. */
static dr_status_t run_pass(dreduce_context_t *ctx, const source_t *src, const dr_count_pass_t *pass,
                            const void *host_edges, size_t words, int to_all, void *keep, size_t keep_cap,
                            const uint64_t **out,
                            const uint64_t **local_out, dr_status_t forced, pass_times_t *tm)
{
    dr_dist_bufs_t *b = &ctx->dist;
    *out = NULL;
    const size_t total = words + HEAD_WORDS;
    DR_CHECK(ensure_counts(ctx, total)); /* this rank's alone: sizes agree, so a failure here is MPI-safe only if
                                            every rank fails alike; allocation of a few MB rarely differs */
    const double t0 = dr_now_ms();
    dr_status_t local = forced != DR_OK ? forced : local_pass(ctx, src, pass, host_edges, words, keep, keep_cap);
    const double t1 = dr_now_ms();
    uint64_t head[HEAD_WORDS] = {local != DR_OK, local == DR_ERR_RUNTIME};
    if (ctx->is_gpu) {
        if (local != DR_OK) { /* whatever the kernels left: this rank sends zeros */
            (void)cudaGetLastError();
            if (cudaMemset(b->d_counts, 0, words * sizeof(uint64_t)) != cudaSuccess) return DR_ERR_RUNTIME;
        }
        if (b->counts_on_device) {
            DR_CUDA_CHECK(cudaMemcpy(b->d_counts + words, head, sizeof head, cudaMemcpyHostToDevice));
        } else {
            DR_CUDA_CHECK(cudaMemcpy(b->counts[0], b->d_counts, words * sizeof(uint64_t), cudaMemcpyDeviceToHost));
            memcpy(b->counts[0] + words, head, sizeof head);
        }
    } else {
        if (local != DR_OK) memset(b->counts[0], 0, words * sizeof(uint64_t));
        memcpy(b->counts[0] + words, head, sizeof head);
    }
    dr_combine_times_t ct;
    uint64_t *final = NULL;
    DR_CHECK(dr_combine_counts(&ctx->topo, ctx->cfg.combine, to_all || ctx->cfg.allreduce, ctx->wd, ctx->blocking,
                               b->counts[0], b->counts[1], b->counts[2], total, &final, &ct));
    if (final && b->counts_on_device) {
        DR_CUDA_CHECK(cudaMemcpy(b->h_read, final, total * sizeof(uint64_t), cudaMemcpyDeviceToHost));
        final = b->h_read;
    }
    if (local_out) { /* this rank's own counts (the combine's send buffer, which MPI leaves as it was) */
        if (b->counts_on_device) {
            DR_CUDA_CHECK(cudaMemcpy(b->h_local, b->counts[0], words * sizeof(uint64_t), cudaMemcpyDeviceToHost));
            *local_out = b->h_local;
        } else {
            *local_out = b->counts[0];
        }
    }
    const double t2 = dr_now_ms();
    if (tm->passes < DREDUCE_DIST_MAX_PASSES) {
        tm->pass_local[tm->passes] = t1 - t0;
        tm->pass_combine[tm->passes] = t2 - t1;
    }
    ++tm->passes;
    tm->local_ms += t1 - t0;
    tm->combine_ms += t2 - t1;
    tm->node_ms += nan0(ct.node_ms);
    tm->global_ms += nan0(ct.global_ms);
    tm->bcast_ms += nan0(ct.bcast_ms);
    if (local != DR_OK) return local;
    if (final && final[words] > 0) {
        if (ctx->topo.rank == 0)
            dr_error("%llu rank(s) failed in a pass of this %s (each said why)", (unsigned long long)final[words],
                     pass->kind == DR_COUNT_HIST ? "histogram" : "quantile");
        return final[words + 1] ? DR_ERR_RUNTIME : DR_ERR_USAGE;
    }
    *out = final;
    return DR_OK;
}

/* ---- Arguments ---------------------------------------------------------------------------------------------- */

static dr_status_t check_common(const dreduce_context_t *ctx, const void *buf, uint64_t count, dr_dtype_t dtype)
{
    if ((unsigned)dtype >= DR_DTYPE_COUNT) {
        dr_error("dtype %d is not a dr_dtype_t (0..%d: %s)", (int)dtype, DR_DTYPE_COUNT - 1, dr_dtype_names());
        return DR_ERR_USAGE;
    }
    if (!buf && count > 0) {
        dr_error("NULL buffer with count %llu (NULL is allowed only for count 0)", (unsigned long long)count);
        return DR_ERR_USAGE;
    }
    if (count > (uint64_t)PTRDIFF_MAX / dr_dtype_size(dtype)) {
        dr_error("count %llu of %s is more bytes than this machine can address", (unsigned long long)count,
                 dr_dtype_name(dtype));
        return DR_ERR_USAGE;
    }
    (void)ctx;
    return DR_OK;
}

static dr_status_t check_hist_args(uint32_t bins, const double *range)
{
    if (bins < 1 || bins > DREDUCE_MAX_BINS) {
        dr_error("%s %u is not a number of bins (1..%u)", DR_NAME("bins", "--bins"), bins, DREDUCE_MAX_BINS);
        return DR_ERR_USAGE;
    }
    if (range && (!isfinite(range[0]) || !isfinite(range[1]))) {
        dr_error("%s %g,%g is not finite (a histogram's range is two finite numbers LO <= HI)",
                 DR_NAME("range", "--range"), range[0], range[1]);
        return DR_ERR_USAGE;
    }
    if (range && range[0] > range[1]) {
        dr_error("%s %.17g,%.17g has LO > HI (NumPy: \"max must be larger than min\")", DR_NAME("range", "--range"),
                 range[0], range[1]);
        return DR_ERR_USAGE;
    }
    return DR_OK;
}

static dr_status_t check_q_args(size_t nq, const double *q)
{
    if (nq < 1 || nq > DREDUCE_MAX_Q) {
        dr_error("%zu quantiles asked for: %s takes 1..%d values", nq, DR_NAME("q", "--q"), DREDUCE_MAX_Q);
        return DR_ERR_USAGE;
    }
    if (!q) {
        dr_error("q is NULL with nq %zu", nq);
        return DR_ERR_USAGE;
    }
    for (size_t i = 0; i < nq; ++i)
        if (!(q[i] >= 0.0 && q[i] <= 1.0)) {
            dr_error("%s value %g is not a quantile in [0, 1]", DR_NAME("q", "--q"), q[i]);
            return DR_ERR_USAGE;
        }
    return DR_OK;
}

static void fields(int64_t f[F_COUNT], dr_dist_op_t op, dr_dtype_t dtype, dr_nan_policy_t nan, uint32_t bins,
                   const double *range, size_t nq, const double *q, dr_status_t s)
{
    memset(f, 0, F_COUNT * sizeof f[0]);
    f[F_OP] = op;
    f[F_DTYPE] = dtype;
    f[F_NAN] = nan;
    if (op == DR_DIST_HISTOGRAM) {
        f[F_BINS] = bins;
        f[F_HAS_RANGE] = range != NULL;
        f[F_LO] = range ? double_bits(range[0]) : 0;
        f[F_HI] = range ? double_bits(range[1]) : 0;
    } else {
        f[F_NQ] = (int64_t)nq;
        f[F_QHASH] = s == DR_OK ? q_hash(nq, q) : 0; /* q may be unreadable where this rank failed */
    }
    f[F_STATUS] = s;
}

static void info_init(dreduce_dist_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->lo = info->hi = info->local_ms = info->combine_ms = info->range_ms = info->total_ms = NAN;
    for (int p = 0; p < DREDUCE_DIST_MAX_PASSES; ++p) info->pass_local_ms[p] = info->pass_combine_ms[p] = NAN;
}

static void info_times(dreduce_context_t *ctx, dreduce_dist_info_t *info, const pass_times_t *tm, double t0)
{
    info->passes += tm->passes;
    const int from = isnan(info->range_ms) ? 0 : 1;
    for (int p = 0; p < tm->passes && p + from < DREDUCE_DIST_MAX_PASSES; ++p) {
        info->pass_local_ms[p + from] = tm->pass_local[p];
        info->pass_combine_ms[p + from] = tm->pass_combine[p];
    }
    info->local_ms = tm->local_ms;
    info->combine_ms = tm->combine_ms;
    info->total_ms = dr_now_ms() - t0;
    /* The context's timings (dreduce_timings) for reports: the counting passes, each one's local time, and their
     * levels summed; nothing left of the call before (an automatic range's stats reduction, the last reduce). */
    dreduce_timings_t *t = &ctx->timings;
    dr_timings_reset(t);
    t->passes = tm->passes;
    for (int p = 0; p < tm->passes && p < DREDUCE_MAX_PASSES && p < DREDUCE_DIST_MAX_PASSES; ++p)
        t->pass_ms[p] = tm->pass_local[p];
    t->nan_count = info->local_nan_count;
    t->local_ms = tm->local_ms;
    t->node_ms = tm->node_ms;
    t->global_ms = tm->global_ms;
    t->bcast_ms = tm->bcast_ms;
    t->total_ms = info->total_ms;
}

/* ---- Histogram -------------------------------------------------------------------------------------------------- */

/* The automatic range's pass: stats of the buffer (file NULL) or of the file onto every rank. */
static dr_status_t range_pass(dreduce_context_t *ctx, const source_t *src, const dreduce_file_t *file,
                              dreduce_stats_t *st, dreduce_dist_info_t *info)
{
    const double r0 = dr_now_ms();
    dreduce_result_t r;
    DR_CHECK(dr_context_stats_all(ctx, src->buf, src->count, file, src->dtype, &r));
    *st = r.stats;
    info->range_ms = dr_now_ms() - r0;
    info->passes = 1;
    info->pass_local_ms[0] = ctx->timings.local_ms;
    info->pass_combine_ms[0] = info->range_ms - ctx->timings.local_ms;
    return DR_OK;
}

/* The key of a histogram's arguments (dr_hist_key_t); st: the automatic range's stats (range NULL). */
static dr_hist_key_t hist_key(dr_dtype_t dtype, uint32_t bins, const double *range, const dreduce_stats_t *st)
{
    dr_hist_key_t k;
    memset(&k, 0, sizeof k);
    k.w[0] = (uint64_t)dtype << 32 | bins;
    if (range) {
        k.w[1] = 1;
        memcpy(&k.w[2], &range[0], 8);
        memcpy(&k.w[3], &range[1], 8);
    } else {
        k.w[1] = 2 | (uint64_t)st->kind << 8;
        k.w[2] = st->count == 0;
        k.w[3] = st->count ? st->min.u64 : 0; /* the union's bits: f64, i64 or u64 as kind says */
        k.w[4] = st->count ? st->max.u64 : 0;
    }
    return k;
}

/* The histogram's counting pass; st: the automatic range's stats (range NULL). */
static dr_status_t histogram(dreduce_context_t *ctx, source_t *src, uint32_t bins, const double *range,
                             const dreduce_stats_t *st, uint64_t *counts, double *edges, dreduce_dist_info_t *info,
                             double t0)
{
    const dr_dtype_t dtype = src->dtype;
    dr_dist_bufs_t *b = &ctx->dist;
    DR_CHECK(ensure_host_edges(ctx, bins)); /* before the combine, as ensure_counts in run_pass: the same size on
                                                every rank, and host memory of a few MB rarely fails on one alone */
    double *e = b->h_edges;
    float *ef = (float *)(e + bins + 1);
    dr_count_pass_t pass;
    memset(&pass, 0, sizeof pass);
    pass.kind = DR_COUNT_HIST;
    pass.dtype = dtype;
    /* The plan and edges of the call before where its arguments were the same (a series of histograms over one
     * range): linspace and its checks are most of a call's time outside its pass at 65536 bins, and the copy of
     * the edges a round trip to the GPU. hist_plan's verdict is the same on every rank either way. */
    const dr_hist_key_t key = hist_key(dtype, bins, range, st);
    dr_status_t s = DR_OK;
    if (b->plan_valid && memcmp(&key, &b->plan_key, sizeof key) == 0) {
        pass.hist = b->plan;
    } else {
        b->plan_valid = b->d_edges_valid = 0;
        s = hist_plan(dtype, bins, range, st, &pass.hist, e);
        if (s == DR_OK && pass.hist.type != DR_HT_F64)
            for (uint32_t i = 0; i <= bins; ++i) ef[i] = (float)e[i];
    }
    const void *host_edges = pass.hist.type != DR_HT_F64 ? (const void *)ef : (const void *)e;
    const size_t edge_bytes = ((size_t)bins + 1) * (pass.hist.type == DR_HT_F64 ? sizeof(double) : sizeof(float));
    dr_status_t local = DR_OK;
    if (s == DR_OK && ctx->is_gpu && !b->d_edges_valid) {
        local = ensure_edges(ctx, edge_bytes);
        /* on the pass's stream, ahead of its kernels: a failure of the copy itself surfaces at the pass's
         * synchronization, a failure of the pass */
        if (local == DR_OK && cudaMemcpyAsync(b->d_edges, host_edges, edge_bytes, cudaMemcpyHostToDevice,
                                              ctx->gpu.stream) != cudaSuccess) {
            dr_error("copying %zu bytes of histogram edges to the GPU failed", edge_bytes);
            local = DR_ERR_RUNTIME;
        }
    }
    pass_times_t tm;
    memset(&tm, 0, sizeof tm);
    const uint64_t *res = NULL;
    if (s == DR_OK) {
        const size_t words = (size_t)dr_count_words(&pass);
        /* A local failure of the edges' copy is this rank's: it still joins the pass's combine, as a failed pass
         * (forced: its counts zero and its head saying so, so that every rank's result is the error) */
        s = run_pass(ctx, src, &pass, host_edges, words, 0, NULL, 0, &res, NULL, local, &tm);
        /* a run_pass that failed before its pass (its count vectors not had) returns with the edges' copy maybe
         * still reading the pinned host edges, which the next call rewrites: wait for it */
        if (s != DR_OK && ctx->is_gpu) (void)cudaStreamSynchronize(ctx->gpu.stream);
        /* this rank's NaN count, from its counts (the combine's send buffer, which MPI leaves as it was): one word,
         * not the vector, where they are on the device */
        if (s == DR_OK) {
            const uint64_t *mine = b->counts[0] + bins + 2;
            if (!b->counts_on_device) info->local_nan_count = *mine;
            else if (cudaMemcpy(&info->local_nan_count, mine, sizeof *mine, cudaMemcpyDeviceToHost) != cudaSuccess) {
                dr_error("reading this rank's NaN count of the histogram back from the GPU failed");
                s = DR_ERR_RUNTIME;
            }
        }
    }
    b->plan_valid = s == DR_OK;
    b->d_edges_valid = s == DR_OK && ctx->is_gpu;
    if (s == DR_OK) {
        b->plan = pass.hist;
        b->plan_key = key;
    }
    if (s == DR_OK && res) {
        memcpy(counts, res, (size_t)bins * sizeof *counts);
        if (edges) memcpy(edges, e, ((size_t)bins + 1) * sizeof *edges);
        info->below = res[bins];
        info->above = res[bins + 1];
        info->nan_count = res[bins + 2];
        info->count = info->below + info->above + info->nan_count;
        for (uint32_t i = 0; i < bins; ++i) info->count += res[i];
        info->lo = e[0];
        info->hi = e[bins];
        info->valid = 1;
    }
    info_times(ctx, info, &tm, t0);
    return s;
}

/* ---- Quantiles -------------------------------------------------------------------------------------------------- */

typedef struct {
    uint64_t rank;   /* the order statistic's 0-based rank in the whole array */
    uint64_t left;   /* its rank among the elements whose key starts with prefix */
    uint64_t prefix; /* the key's digits found so far */
} target_t;

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The value of a key of dtype: in the order statistic's kind and as float64. */
static void key_value(dr_dtype_t t, uint64_t key, dr_scalar_t *v, double *d)
{
    const int bits = dr_key_bits(t);
    switch (t) {
    case DR_FLOAT16: v->f64 = dr_f16_to_f32((uint16_t)dr_key_float_bits(key, 16)); break;
    case DR_BFLOAT16: v->f64 = dr_bf16_to_f32((uint16_t)dr_key_float_bits(key, 16)); break;
    case DR_FLOAT32: v->f64 = dr_bits_to_f32((uint32_t)dr_key_float_bits(key, 32)); break;
    case DR_FLOAT64: v->f64 = dr_bits_to_f64(dr_key_float_bits(key, 64)); break;
    case DR_INT8: case DR_INT16: case DR_INT32: case DR_INT64: {
        const uint64_t s = 1ull << (bits - 1), u = key ^ s;
        v->i64 = bits == 64 ? (int64_t)u : (int64_t)(u & (s - 1)) - (int64_t)(u & s); /* sign-extend */
        break;
    }
    default: v->u64 = key; break;
    }
    if (dr_dtype_is_float(t)) *d = v->f64;
    else if (t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64) *d = (double)v->i64;
    else *d = (double)v->u64;
}

static dr_acc_kind_t order_kind(dr_dtype_t t)
{
    if (dr_dtype_is_float(t)) return DR_ACC_F64;
    return t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64 ? DR_ACC_I64 : DR_ACC_U64;
}

/* In group g's digit counts, the digit holding the target's rank: the prefix grows by it, the rank drops by the
 * elements of the lower digits. */
static void choose_digit(const uint64_t *c, int width, target_t *t)
{
    uint64_t below = 0, d = 0;
    const uint64_t nd = 1ull << width;
    for (; d < nd; ++d) {
        if (t->left < below + c[d]) break;
        below += c[d];
    }
    if (d == nd) d = nd - 1; /* cannot happen: the counts hold the rank */
    t->prefix = (t->prefix << width) | d;
    t->left -= below;
}

/* The raw bits of an element that no pass after `p` has in play: a NaN for floats (counted apart), else the
 * integer whose key's higher digits are the smallest prefix no group of p has (later groups extend p's). */
static uint64_t keep_pad(dr_dtype_t t, const dr_count_pass_t *p)
{
    switch (t) {
    case DR_FLOAT16: return 0x7e00u;
    case DR_BFLOAT16: return 0x7fc0u;
    case DR_FLOAT32: return 0x7fc00000u;
    case DR_FLOAT64: return 0x7ff8000000000000ull;
    default: break;
    }
    uint64_t top = 0; /* the prefixes ascend: the first gap */
    for (int g = 0; g < p->groups && p->prefix[g] == top; ++g) ++top;
    const int bits = dr_key_bits(t);
    const uint64_t key = top << (p->shift + p->width);
    const int is_signed = t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64;
    const uint64_t raw = is_signed ? key ^ (1ull << (bits - 1)) : key;
    return bits == 64 ? raw : raw & ((1ull << bits) - 1);
}

/* The raw bits of the element with the largest key: a NaN for floats, the largest value for integers. The pilot pads
 * what it keeps with it: the later passes select among the kept elements by rank from the bottom, so pads, at the
 * top (or NaN, counted apart), change no answer. */
static uint64_t max_key_pad(dr_dtype_t t)
{
    const int bits = dr_key_bits(t);
    const uint64_t all = bits == 64 ? ~0ull : (1ull << bits) - 1;
    if (dr_dtype_is_float(t)) return keep_pad(t, NULL);
    const int is_signed = t == DR_INT8 || t == DR_INT16 || t == DR_INT32 || t == DR_INT64;
    return is_signed ? all >> 1 : all;
}

/* ranks[0..nt) sorted, each once; returns how many. */
static size_t sort_unique(uint64_t *ranks, size_t nt)
{
    qsort(ranks, nt, sizeof ranks[0], cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < nt; ++i)
        if (u == 0 || ranks[i] != ranks[u - 1]) ranks[u++] = ranks[i];
    return u;
}

/* The order statistics of nq quantiles of n elements: each q's lower and upper rank and weight (NumPy's), and the
 * distinct ranks ascending in ranks[]; returns how many. */
static size_t quantile_targets(uint64_t n, size_t nq, const double *q, uint64_t *lower, uint64_t *upper,
                               double *gamma, uint64_t *ranks)
{
    size_t nt = 0;
    for (size_t i = 0; i < nq; ++i) {
        dr_quantile_ranks(n, q[i], &lower[i], &upper[i], &gamma[i]);
        ranks[nt++] = lower[i];
        ranks[nt++] = upper[i];
    }
    return sort_unique(ranks, nt);
}

/* The first pass of a select over src: the leading digit of every element's key; *res the combined counts, *loc this
 * rank's; *n the elements the select takes (not NaN under OMIT: np.nanquantile's), *nan_count the NaN. forced: this
 * rank's failure before the pass (it joins the combine, and the pass fails on every rank). */
static dr_status_t select_first(dreduce_context_t *ctx, const source_t *src, dr_count_pass_t *pass,
                                const uint64_t **res, const uint64_t **loc, dr_status_t forced, pass_times_t *tm,
                                uint64_t *n, uint64_t *nan_count)
{
    const int bits = dr_key_bits(src->dtype);
    memset(pass, 0, sizeof *pass);
    pass->kind = DR_COUNT_DIGIT;
    pass->dtype = src->dtype;
    pass->width = dr_select_width(bits, 0);
    pass->shift = bits - pass->width;
    pass->groups = 1;
    DR_CHECK(run_pass(ctx, src, pass, NULL, (size_t)dr_count_words(pass), 1, NULL, 0, res, loc, forced, tm));
    const uint64_t nd = 1ull << pass->width;
    *nan_count = (*res)[nd];
    *n = ctx->cfg.nan == DR_NAN_OMIT ? 0 : *nan_count;
    for (uint64_t d = 0; d < nd; ++d) *n += (*res)[d];
    return DR_OK;
}

/* The passes after the first over cur (pass: the first's, res and loc its counts), until every target's key is
 * whole: each counts the next digit of the elements whose higher digits match a target's. On a GPU with the part in
 * device memory, a pass whose elements in play are at most half of what it reads also keeps them (keep buffers 0
 * and 1 in turn: cur_keep is the one cur is, -1 none), and the next passes read those alone: this rank's own choice,
 * from its own counts of the pass before. The CPU backend does the same with the part in memory (not a file) where
 * at most a quarter are in play: its buffers are host memory beside the caller's array, and at a larger share the
 * copy costs about what it saves (a half: 3 quantiles of 2^26 float32 on 2 cores no faster than a quarter, whose
 * 3/16 in play made the pass after 26 -> 5 ms). */
static dr_status_t select_rest(dreduce_context_t *ctx, source_t cur, int cur_keep, dr_count_pass_t *pass,
                               const uint64_t *res, const uint64_t *loc, target_t *tg, size_t nt, pass_times_t *tm)
{
    const dr_dtype_t dtype = cur.dtype;
    const int bits = dr_key_bits(dtype), npasses = dr_select_passes(bits);
    const size_t esize = dr_dtype_size(dtype);
    int resolved = pass->width;
    dr_status_t broken = DR_OK; /* this rank's failure found after a pass's combine: it fails the next pass */
    for (int p = 1; p < npasses; ++p) {
        const int prev_width = pass->width, prev_groups = pass->groups;
        uint64_t prev_prefix[DR_SELECT_MAX_GROUPS];
        memcpy(prev_prefix, pass->prefix, sizeof prev_prefix);
        pass->width = dr_select_width(bits, p);
        pass->shift = bits - resolved - pass->width;
        pass->resolved = resolved;
        /* The distinct prefixes, ascending (the targets are in rank order, so their prefixes are too). */
        pass->groups = 0;
        for (size_t i = 0; i < nt; ++i)
            if (pass->groups == 0 || tg[i].prefix != pass->prefix[pass->groups - 1])
                pass->prefix[pass->groups++] = tg[i].prefix;
        /* This rank's elements in play now: its counts of the new prefixes' digits in the pass before. */
        uint64_t in_play = 0;
        for (int g = 0; g < pass->groups; ++g) {
            const uint64_t up = pass->prefix[g] >> prev_width, digit = pass->prefix[g] & ((1ull << prev_width) - 1);
            int pg = 0;
            if (p > 1)
                while (pg < prev_groups && prev_prefix[pg] != up) ++pg;
            in_play += loc[((uint64_t)pg << prev_width) | digit];
        }
        void *keep = NULL;
        const int keep_k = cur_keep == 0 ? 1 : 0;
        uint64_t slack = 0; /* the GPU pads what it keeps; the CPU keeps exactly the elements in play */
        const int may_keep = p + 1 < npasses && !cur.in && in_play > 0 && in_play <= cur.count / 2;
        if (may_keep && ctx->is_gpu && cur.on_device &&
            dr_gpu_count_keep_slack(pass, cur.count, ctx->cfg.block, ctx->gpu.device, &slack) == cudaSuccess &&
            ensure_keep(ctx, keep_k, (size_t)(in_play + slack) * esize)) {
            keep = ctx->dist.d_keep[keep_k];
            pass->keep_pad = keep_pad(dtype, pass);
        } else if (may_keep && !ctx->is_gpu && in_play <= cur.count / 4 &&
                   ensure_cpu_keep(ctx, keep_k, (size_t)in_play * esize)) {
            keep = ctx->dist.cpu_keep[keep_k];
        }
        DR_CHECK(run_pass(ctx, &cur, pass, NULL, (size_t)dr_count_words(pass), 1, keep,
                          (size_t)(in_play + slack) * esize, &res, &loc, broken, tm));
        if (keep) {
            const uint64_t kept = ctx->dist.kept;
            if (kept < in_play || kept > in_play + slack) { /* the next pass (every rank's) fails */
                dr_error("a quantile pass kept %llu elements where the pass before counted %llu in play",
                         (unsigned long long)kept, (unsigned long long)in_play);
                broken = DR_ERR_RUNTIME;
            }
            cur.buf = keep;
            cur.count = kept;
            cur_keep = keep_k;
        }
        for (size_t i = 0, g = 0; i < nt; ++i) {
            while (pass->prefix[g] != tg[i].prefix) ++g;
            choose_digit(res + (g << pass->width), pass->width, &tg[i]);
        }
        resolved += pass->width;
    }
    return broken;
}

/* Each q's value and order statistics from the targets' whole keys (tg, ranks ascending); NaN for every q where nan
 * (NumPy's quantile of an array holding NaN). */
static void quantile_values(dr_dtype_t dtype, size_t nq, const uint64_t *lower, const uint64_t *upper,
                            const double *gamma, const target_t *tg, int nan, double *values,
                            dreduce_order_stat_t *order)
{
    for (size_t i = 0; i < nq; ++i) {
        dreduce_order_stat_t o;
        memset(&o, 0, sizeof o);
        o.kind = order_kind(dtype);
        o.lower_rank = lower[i];
        o.upper_rank = upper[i];
        o.gamma = gamma[i];
        if (nan) {
            o.kind = DR_ACC_F64;
            o.lower.f64 = o.upper.f64 = NAN;
            values[i] = NAN;
        } else {
            size_t a = 0, b = 0;
            while (tg[a].rank != lower[i]) ++a;
            while (tg[b].rank != upper[i]) ++b;
            double da, db;
            key_value(dtype, tg[a].prefix, &o.lower, &da);
            key_value(dtype, tg[b].prefix, &o.upper, &db);
            values[i] = dr_quantile_lerp(da, db, gamma[i]);
        }
        if (order) order[i] = o;
    }
}

/* The answer where the select finds no element to take: NaN for every q where all are NaN (OMIT:
 * np.nanquantile's, with a warning), else a usage error (NumPy raises IndexError). */
static dr_status_t quantile_of_none(dreduce_context_t *ctx, const dreduce_dist_info_t *info, size_t nq,
                                    double *values, dreduce_order_stat_t *order)
{
    if (info->nan_count > 0) {
        for (size_t i = 0; i < nq; ++i) {
            values[i] = NAN;
            if (order) {
                memset(&order[i], 0, sizeof order[i]);
                order[i].kind = DR_ACC_F64;
                order[i].lower.f64 = order[i].upper.f64 = NAN;
            }
        }
        return DR_OK;
    }
    if (ctx->topo.rank == 0)
        dr_error("the quantile of an array with no element has no value (NumPy raises IndexError)");
    return DR_ERR_USAGE;
}

/* The call's counts, from the first pass that read the part (n: the elements the select takes; nan_count: NaN;
 * local_nan: this rank's) into info. 1 where they settle the answer: no element to take (quantile_of_none's, *s
 * its status). */
static int quantile_counts(dreduce_context_t *ctx, dreduce_dist_info_t *info, uint64_t n, uint64_t nan_count,
                           uint64_t local_nan, size_t nq, double *values, dreduce_order_stat_t *order,
                           dr_status_t *s)
{
    info->count = ctx->cfg.nan == DR_NAN_OMIT ? n + nan_count : n;
    info->nan_count = nan_count;
    info->local_nan_count = local_nan;
    *s = DR_OK;
    if (n > 0) return 0;
    *s = quantile_of_none(ctx, info, nq, values, order);
    if (*s == DR_OK) info->valid = 1;
    return 1;
}

/* The radix select over the part itself. forced: this rank's failure before it (the first pass fails everywhere). */
static dr_status_t quantile_passes(dreduce_context_t *ctx, const source_t *src, size_t nq, const double *q,
                                   double *values, dreduce_order_stat_t *order, dreduce_dist_info_t *info,
                                   dr_status_t forced, pass_times_t *tm)
{
    dr_count_pass_t pass;
    const uint64_t *res = NULL, *loc = NULL;
    uint64_t n = 0, nan_count = 0;
    DR_CHECK(select_first(ctx, src, &pass, &res, &loc, forced, tm, &n, &nan_count));
    const uint64_t nd0 = 1ull << pass.width;
    const int omit = ctx->cfg.nan == DR_NAN_OMIT;
    dr_status_t s;
    if (quantile_counts(ctx, info, n, nan_count, loc ? loc[nd0] : 0, nq, values, order, &s)) return s;
    uint64_t ranks[2 * DREDUCE_MAX_Q], lower[DREDUCE_MAX_Q], upper[DREDUCE_MAX_Q];
    double gamma[DREDUCE_MAX_Q];
    const size_t nt = quantile_targets(n, nq, q, lower, upper, gamma, ranks);
    target_t tg[2 * DREDUCE_MAX_Q];
    /* NaN anywhere: NumPy's quantile is NaN; no more passes. */
    const int has_nan = !omit && nan_count > 0;
    for (size_t i = 0; i < nt; ++i) {
        tg[i] = (target_t){ranks[i], ranks[i], 0};
        if (!has_nan) choose_digit(res, pass.width, &tg[i]);
    }
    if (!has_nan) DR_CHECK(select_rest(ctx, *src, -1, &pass, res, loc, tg, nt, tm));
    quantile_values(src->dtype, nq, lower, upper, gamma, tg, has_nan, values, order);
    info->valid = 1;
    return DR_OK;
}

/* ---- The pilot ----
 * The select above reads the part once per digit until few elements are in play: a median of uniform float32 data
 * reads it twice in full (the first digit's bucket of the median holds an eighth of such data) and keeps an eighth.
 * The pilot reads it once. A sample of every rank's part (DR_PILOT_SAMPLE elements of the largest part, at places
 * dr_pilot_pos picks) is selected first, exactly, across ranks: each q's order statistics are bracketed between two
 * sample elements DR_PILOT_SIGMAS standard deviations of the sample quantile's rank error below and above it. One
 * pass over the part (a RANGE pass) then counts the elements below and in each bracket, and keeps those in one.
 * Where every target lies in its bracket (a miss is a 5-sigma event, whatever the data and its order), the select
 * goes on over the kept elements alone (2% of the data for a median), each target's rank among them known from the
 * counts. Where one misses, or a rank's bracketed elements do not fit its keep buffer, the select starts again over
 * the part: the answer is the same (order statistics are elements of the data), a read of the part later.
 * DREDUCE_PILOT (README, "Environment") is auto (the pilot where the largest part has DR_PILOT_MIN_PART elements or
 * more), always, off, or miss (brackets that hold nothing: the tests' way to the fallback). */
#define DR_PILOT_SAMPLE 65536
#define DR_PILOT_MIN_PART (1u << 20)
#define DR_PILOT_SIGMAS 5.0

typedef enum { PILOT_OFF = 0, PILOT_AUTO, PILOT_ALWAYS, PILOT_MISS } pilot_mode_t;

/* The pilot mode DREDUCE_PILOT asks for; -1 (printed) where it names none. */
static int pilot_mode_env(void)
{
    const char *e = getenv("DREDUCE_PILOT");
    if (!e || !*e || !strcmp(e, "auto")) return PILOT_AUTO;
    if (!strcmp(e, "off")) return PILOT_OFF;
    if (!strcmp(e, "always")) return PILOT_ALWAYS;
    if (!strcmp(e, "miss")) return PILOT_MISS;
    dr_error("DREDUCE_PILOT=%s is not a pilot mode (auto, always, off, miss)", e);
    return -1;
}

/* Fold a sub-select's passes (the sample's) into tm as one pass. */
static void fold_times(pass_times_t *tm, const pass_times_t *sub, double extra_local_ms)
{
    if (tm->passes < DREDUCE_DIST_MAX_PASSES) {
        tm->pass_local[tm->passes] = sub->local_ms + extra_local_ms;
        tm->pass_combine[tm->passes] = sub->combine_ms;
    }
    ++tm->passes;
    tm->local_ms += sub->local_ms + extra_local_ms;
    tm->combine_ms += sub->combine_ms;
    tm->node_ms += sub->node_ms;
    tm->global_ms += sub->global_ms;
    tm->bcast_ms += sub->bcast_ms;
}

/* The least and greatest keys a number of type t can have: an integer's all, a float's those of -inf and +inf. The
 * keys past them are NaN bit patterns no element has (NaN's key is the greatest), which the GPU's RANGE pass
 * (kernels/distrib.cu, range_kernel) compares as NaN: an interval starting at key 0 counted nothing there. */
static void number_keys(dr_dtype_t t, uint64_t *least, uint64_t *greatest)
{
    *least = 0;
    *greatest = ~0ull >> (64 - dr_key_bits(t));
    switch (t) { /* the keys of -inf and +inf */
    case DR_FLOAT16:
        *least = dr_key_f16(0xfc00u);
        *greatest = dr_key_f16(0x7c00u);
        break;
    case DR_BFLOAT16:
        *least = dr_key_bf16(0xff80u);
        *greatest = dr_key_bf16(0x7f80u);
        break;
    case DR_FLOAT32:
        *least = dr_key_f32(0xff800000u);
        *greatest = dr_key_f32(0x7f800000u);
        break;
    case DR_FLOAT64:
        *least = dr_key_f64(0xfff0000000000000ull);
        *greatest = dr_key_f64(0x7ff0000000000000ull);
        break;
    default: break;
    }
}

/* The sample's brackets: the keys lo[i] and hi[i] around each q's order statistics, from the sample's exact select.
 * *usable 0 where the sample has no element to take or holds NaN under PROPAGATE (the select over the part then
 * says what NumPy would), the same on every rank. */
static dr_status_t pilot_brackets(dreduce_context_t *ctx, const source_t *sample, dr_status_t forced,
                                  uint64_t sample_lb, size_t nq, const double *q, uint64_t *lo, uint64_t *hi,
                                  int *usable, pass_times_t *tm)
{
    dr_count_pass_t pass;
    const uint64_t *res = NULL, *loc = NULL;
    uint64_t n = 0, nan_count = 0;
    *usable = 0;
    DR_CHECK(select_first(ctx, sample, &pass, &res, &loc, forced, tm, &n, &nan_count));
    if (n == 0 || (ctx->cfg.nan != DR_NAN_OMIT && nan_count > 0)) return DR_OK;
    /* Each q's bracket in sample ranks: the sample quantile's rank error has standard deviation sqrt(q (1 - q) / s)
     * (in quantile units) for s elements; s is at least the largest part's sample. */
    uint64_t rlo[DREDUCE_MAX_Q], rhi[DREDUCE_MAX_Q], ranks[2 * DREDUCE_MAX_Q];
    size_t nt = 0;
    for (size_t i = 0; i < nq; ++i) {
        const double s = (double)(sample_lb ? sample_lb : 1);
        const double d = DR_PILOT_SIGMAS * sqrt(q[i] * (1.0 - q[i]) / s) + 4.0 / s;
        const double a = q[i] - d < 0 ? 0 : q[i] - d, b = q[i] + d > 1 ? 1 : q[i] + d;
        rlo[i] = (uint64_t)floor(a * (double)(n - 1));
        rhi[i] = (uint64_t)ceil(b * (double)(n - 1));
        if (rhi[i] > n - 1) rhi[i] = n - 1;
        ranks[nt++] = rlo[i];
        ranks[nt++] = rhi[i];
    }
    nt = sort_unique(ranks, nt);
    target_t tg[2 * DREDUCE_MAX_Q];
    for (size_t i = 0; i < nt; ++i) {
        tg[i] = (target_t){ranks[i], ranks[i], 0};
        choose_digit(res, pass.width, &tg[i]);
    }
    DR_CHECK(select_rest(ctx, *sample, -1, &pass, res, loc, tg, nt, tm));
    for (size_t i = 0; i < nq; ++i) {
        size_t a = 0, b = 0;
        while (tg[a].rank != rlo[i]) ++a;
        while (tg[b].rank != rhi[i]) ++b;
        /* A bracket reaching the sample's least or greatest element reaches the least or greatest key a number
         * can have: the part's extremes need not be in the sample (q 0 and 1 would otherwise miss nearly always). */
        uint64_t least, greatest;
        number_keys(sample->dtype, &least, &greatest);
        lo[i] = rlo[i] == 0 ? least : tg[a].prefix;
        hi[i] = rhi[i] == n - 1 ? greatest : tg[b].prefix;
    }
    *usable = 1;
    return DR_OK;
}

/* The select with the pilot. *done 0 (and nothing else changed but the context's timings in tm) where the select
 * over the part must run after all: the sample had nothing to bracket, or a target missed its bracket. */
static dr_status_t quantile_pilot(dreduce_context_t *ctx, const source_t *src, size_t nq, const double *q,
                                  double *values, dreduce_order_stat_t *order, dreduce_dist_info_t *info,
                                  uint64_t part_max, int mode, pass_times_t *tm, int *done)
{
    *done = 0;
    const dr_dtype_t dtype = src->dtype;
    const size_t esize = dr_dtype_size(dtype);
    dr_dist_bufs_t *b = &ctx->dist;
    /* The sample, in keep buffer 2 (the sample's own select keeps into 0 and 1). */
    const uint64_t stride = part_max / DR_PILOT_SAMPLE > 1 ? part_max / DR_PILOT_SAMPLE : 1;
    const uint64_t m = src->count / stride;
    const double s0 = dr_now_ms();
    dr_status_t local = DR_OK;
    source_t sample = {NULL, 0, ctx->is_gpu, NULL, 0, dtype};
    if (m > 0 && ctx->is_gpu) {
        if (!ensure_keep(ctx, 2, (size_t)m * esize)) {
            dr_error("no device memory for the quantile pilot's sample of %llu elements", (unsigned long long)m);
            local = DR_ERR_RUNTIME;
        } else {
            const cudaError_t e1 = dr_gpu_sample(src->buf, esize, stride, b->d_keep[2], m, ctx->gpu.stream);
            const cudaError_t e2 = e1 == cudaSuccess ? cudaStreamSynchronize(ctx->gpu.stream) : e1;
            if (e2 != cudaSuccess) {
                dr_error("the quantile pilot's sample failed: %s", cudaGetErrorString(e2));
                (void)cudaGetLastError();
                local = DR_ERR_RUNTIME;
            }
        }
        sample.buf = b->d_keep[2];
    } else if (m > 0) {
        if (!ensure_cpu_keep(ctx, 2, (size_t)m * esize)) {
            dr_error("no memory for the quantile pilot's sample of %llu elements", (unsigned long long)m);
            local = DR_ERR_RUNTIME;
        } else {
            for (uint64_t i = 0; i < m; ++i)
                memcpy((char *)b->cpu_keep[2] + i * esize, (const char *)src->buf + dr_pilot_pos(i, stride) * esize,
                       esize);
        }
        sample.buf = b->cpu_keep[2];
    }
    sample.count = local == DR_OK ? m : 0;
    const double gather_ms = dr_now_ms() - s0;
    uint64_t lo[DREDUCE_MAX_Q], hi[DREDUCE_MAX_Q];
    int usable = 0;
    pass_times_t stm;
    memset(&stm, 0, sizeof stm);
    const dr_status_t bs = pilot_brackets(ctx, &sample, local, part_max / stride, nq, q, lo, hi, &usable, &stm);
    fold_times(tm, &stm, gather_ms);
    DR_CHECK(bs);
    if (!usable) return DR_OK;

    /* The brackets as disjoint intervals, ascending (those that meet merged). */
    dr_count_pass_t rp;
    memset(&rp, 0, sizeof rp);
    rp.kind = DR_COUNT_RANGE;
    rp.dtype = dtype;
    size_t idx[DREDUCE_MAX_Q];
    for (size_t i = 0; i < nq; ++i) idx[i] = i;
    for (size_t i = 1; i < nq; ++i) /* insertion sort of the brackets by their low key (nq <= 64) */
        for (size_t j = i; j > 0 && lo[idx[j]] < lo[idx[j - 1]]; --j) {
            const size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    uint64_t ilo[DREDUCE_MAX_Q], ihi[DREDUCE_MAX_Q];
    int k = 0;
    for (size_t i = 0; i < nq; ++i) {
        const uint64_t a = lo[idx[i]], z = hi[idx[i]];
        if (k > 0 && (a <= ihi[k - 1] || a == ihi[k - 1] + 1)) {
            if (z > ihi[k - 1]) ihi[k - 1] = z;
        } else {
            ilo[k] = a;
            ihi[k] = z;
            ++k;
        }
    }
    if (mode == PILOT_MISS) { /* one bracket holding only the largest key: no target of data without it */
        k = 1;
        ilo[0] = ihi[0] = ~0ull >> (64 - dr_key_bits(dtype));
    }
    rp.groups = k;
    for (int i = 0; i < k; ++i) {
        rp.prefix[i] = ilo[i];
        rp.prefix[k + i] = ihi[i];
    }
    rp.keep_pad = max_key_pad(dtype);

    /* The room this rank makes: twice its own sample's elements in the intervals, as a share of its part (ties and
     * a part that holds more of the brackets than the others, as data split by value over the ranks, counted), and
     * 65536 more; a rank whose bracketed elements still do not fit falls back (and so every rank). */
    uint64_t in_sample = sample.count; /* unknown (no sample, or its count failed): room for the whole part */
    if (sample.count > 0) { /* a sample only where its gather succeeded */
        uint64_t c[2 * DREDUCE_MAX_Q + 2];
        if (local_counts(ctx, &sample, &rp, c) == DR_OK) {
            in_sample = 0;
            for (int i = 0; i < k; ++i) in_sample += c[i];
        } else if (ctx->is_gpu) {
            (void)cudaGetLastError(); /* this rank's alone: it makes room for its whole part instead */
        }
    }
    const double share = (2.0 * (double)in_sample + 16.0) / (double)(sample.count ? sample.count : 1);
    uint64_t cap = share >= 1.0 ? src->count : (uint64_t)(share * (double)src->count) + 65536;
    if (cap > src->count) cap = src->count;
    if (cap == 0) cap = 1; /* a buffer even for none: NULL would say "no room" */
    uint64_t slack = 0;
    void *keep = NULL;
    if (ctx->is_gpu) {
        if (dr_gpu_count_keep_slack(&rp, src->count, ctx->cfg.block, ctx->gpu.device, &slack) == cudaSuccess &&
            ensure_keep(ctx, 2, (size_t)(cap + slack) * esize))
            keep = b->d_keep[2];
        (void)cudaGetLastError();
    } else if (ensure_cpu_keep(ctx, 2, (size_t)cap * esize)) {
        keep = b->cpu_keep[2];
    }
    const size_t words = (size_t)dr_count_words(&rp) + 1;
    const uint64_t *res = NULL, *loc = NULL;
    DR_CHECK(run_pass(ctx, src, &rp, NULL, words, 1, keep, (size_t)(cap + slack) * esize, &res, &loc, DR_OK, tm));
    const uint64_t kept = b->kept;
    const int omit = ctx->cfg.nan == DR_NAN_OMIT;
    const size_t nan_w = 2 * (size_t)k + 1, over_w = nan_w + 1;
    if (res[over_w] > 0) return DR_OK; /* a rank's bracketed elements did not fit (its counts may be short) */
    uint64_t n = omit ? 0 : res[nan_w];
    for (size_t w = 0; w < nan_w; ++w) n += res[w];
    *done = 1;
    dr_status_t s;
    if (quantile_counts(ctx, info, n, res[nan_w], loc ? loc[nan_w] : 0, nq, values, order, &s)) return s;
    uint64_t ranks[2 * DREDUCE_MAX_Q], lower[DREDUCE_MAX_Q], upper[DREDUCE_MAX_Q];
    double gamma[DREDUCE_MAX_Q];
    const size_t nt = quantile_targets(n, nq, q, lower, upper, gamma, ranks);
    target_t tg[2 * DREDUCE_MAX_Q];
    if (!omit && info->nan_count > 0) { /* NumPy's quantile of an array holding NaN */
        for (size_t i = 0; i < nt; ++i) tg[i] = (target_t){ranks[i], ranks[i], 0};
        quantile_values(dtype, nq, lower, upper, gamma, tg, 1, values, order);
        info->valid = 1;
        return DR_OK;
    }
    /* Each target's rank among the kept elements: its rank less the elements in the gaps below it. */
    int miss = 0;
    for (size_t i = 0; i < nt && !miss; ++i) {
        uint64_t below = 0, gaps = 0; /* the elements before interval j, and those of them in gaps */
        int in = 0;
        for (int j = 0; j < k && !in; ++j) {
            below += res[k + j];
            gaps += res[k + j];
            if (ranks[i] < below) break; /* in the gap below interval j */
            in = ranks[i] < below + res[j];
            below += res[j];
        }
        if (in) tg[i] = (target_t){ranks[i], ranks[i] - gaps, 0};
        else miss = 1;
    }
    if (miss) {
        *done = 0;
        return DR_OK;
    }
    /* The select over the kept elements (this rank's: kept, pads among them on a GPU). */
    source_t cur = {keep, kept, ctx->is_gpu, NULL, 0, dtype};
    dr_count_pass_t pass;
    uint64_t kn = 0, knan = 0;
    DR_CHECK(select_first(ctx, &cur, &pass, &res, &loc, DR_OK, tm, &kn, &knan));
    for (size_t i = 0; i < nt; ++i) choose_digit(res, pass.width, &tg[i]);
    DR_CHECK(select_rest(ctx, cur, 2, &pass, res, loc, tg, nt, tm));
    quantile_values(dtype, nq, lower, upper, gamma, tg, 0, values, order);
    info->valid = 1;
    return DR_OK;
}

/* The select (with the pilot where every rank can and the mode asks for it: pilot_min is the agreed least mode,
 * part_max the largest part), then the CPU backend's keep buffers given back: they can hold a quarter of the rank's
 * part (host memory beside the caller's array), and a later call's first passes read the part itself anyway. */
static dr_status_t quantile(dreduce_context_t *ctx, source_t *src, size_t nq, const double *q, double *values,
                            dreduce_order_stat_t *order, dreduce_dist_info_t *info, double t0, int pilot_min,
                            uint64_t part_max)
{
    pass_times_t tm;
    memset(&tm, 0, sizeof tm);
    dr_status_t s = DR_OK;
    int done = 0;
    if (pilot_min >= PILOT_ALWAYS || (pilot_min == PILOT_AUTO && part_max >= DR_PILOT_MIN_PART)) {
        s = quantile_pilot(ctx, src, nq, q, values, order, info, part_max, pilot_min, &tm, &done);
        if (s == DR_OK) info->pilot = done ? 1 : 2;
    }
    if (s == DR_OK && !done) s = quantile_passes(ctx, src, nq, q, values, order, info, DR_OK, &tm);
    info_times(ctx, info, &tm, t0);
    dr_dist_bufs_t *b = &ctx->dist;
    for (int k = 0; k < DR_KEEP_BUFS; ++k) {
        free(b->cpu_keep[k]);
        b->cpu_keep[k] = NULL;
        b->cpu_keep_cap[k] = 0;
    }
    return s;
}

/* ---- The API ---------------------------------------------------------------------------------------------------- */

/* Where a buffer lives, for a GPU context (context.c's rules: another GPU's memory is a usage error). */
static dr_status_t classify(dreduce_context_t *ctx, const void *buf, int *on_device)
{
    *on_device = 0;
    if (!ctx->is_gpu || !buf) return DR_OK;
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, buf) != cudaSuccess) {
        (void)cudaGetLastError();
        return DR_OK;
    }
    if (a.type == cudaMemoryTypeDevice && a.device != ctx->gpu.device) {
        dr_error("the buffer is in the memory of GPU %d but this rank's context uses GPU %d", a.device,
                 ctx->gpu.device);
        return DR_ERR_USAGE;
    }
    *on_device = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
    return DR_OK;
}

static dr_status_t dist_call(dreduce_context_t *ctx, dr_dist_op_t op, const void *buf, uint64_t count,
                             dr_dtype_t dtype, uint32_t bins, const double *range, uint64_t *counts, double *edges,
                             size_t nq, const double *q, double *values, dreduce_order_stat_t *order,
                             dreduce_dist_info_t *info, dr_status_t fail)
{
    const double t0 = dr_now_ms();
    dreduce_dist_info_t unread;
    if (!info) info = &unread;
    info_init(info);
    if (!ctx) {
        dr_error("%s: ctx is NULL", op == DR_DIST_HISTOGRAM ? "dreduce_histogram" : "dreduce_quantile");
        return DR_ERR_USAGE;
    }
    dr_status_t s = fail;
    if (s == DR_OK) s = check_common(ctx, buf, count, dtype);
    if (s == DR_OK) s = op == DR_DIST_HISTOGRAM ? check_hist_args(bins, range) : check_q_args(nq, q);
    if (s == DR_OK && op == DR_DIST_HISTOGRAM && !counts) {
        dr_error("dreduce_histogram: counts is NULL");
        s = DR_ERR_USAGE;
    }
    if (s == DR_OK && op == DR_DIST_QUANTILE && !values) {
        dr_error("dreduce_quantile: values is NULL");
        s = DR_ERR_USAGE;
    }
    if (s == DR_OK && ctx->is_gpu) s = dr_gpu_use(&ctx->gpu);
    source_t src = {buf, count, 0, NULL, 0, dtype};
    if (s == DR_OK) s = classify(ctx, buf, &src.on_device);
    int pilot = PILOT_OFF;
    if (op == DR_DIST_QUANTILE && (pilot = pilot_mode_env()) < 0 && s == DR_OK) s = DR_ERR_USAGE;
    int64_t f[F_COUNT], lo[F_COUNT], hi[F_COUNT];
    fields(f, op, dtype, ctx->cfg.nan, bins, range, nq, q, s);
    /* The pilot where this rank's part is in memory the backend counts in place: device memory on a GPU. */
    f[F_PILOT] = pilot > 0 && (ctx->is_gpu ? src.on_device : 1) ? pilot : PILOT_OFF;
    f[F_PART] = (int64_t)count;
    s = agree(ctx, f, lo, hi);
    dreduce_stats_t st;
    memset(&st, 0, sizeof st);
    if (s == DR_OK && fail != DR_OK) s = fail;
    if (s == DR_OK && op == DR_DIST_HISTOGRAM && !range) s = range_pass(ctx, &src, NULL, &st, info);
    if (s == DR_OK)
        s = op == DR_DIST_HISTOGRAM ? histogram(ctx, &src, bins, range, &st, counts, edges, info, t0)
                                    : quantile(ctx, &src, nq, q, values, order, info, t0, (int)lo[F_PILOT],
                                               (uint64_t)hi[F_PART]);
    dr_watchdog_leave(ctx->wd);
    return s;
}

dr_status_t dreduce_histogram(dreduce_context_t *ctx, const void *buf, uint64_t count, dr_dtype_t dtype,
                              uint32_t bins, const double *range, uint64_t *counts, double *edges,
                              dreduce_dist_info_t *info)
{
    return dist_call(ctx, DR_DIST_HISTOGRAM, buf, count, dtype, bins, range, counts, edges, 0, NULL, NULL, NULL,
                     info, DR_OK);
}

dr_status_t dreduce_quantile(dreduce_context_t *ctx, const void *buf, uint64_t count, dr_dtype_t dtype, size_t nq,
                             const double *q, double *values, dreduce_order_stat_t *order,
                             dreduce_dist_info_t *info)
{
    return dist_call(ctx, DR_DIST_QUANTILE, buf, count, dtype, 0, NULL, NULL, NULL, nq, q, values, order, info,
                     DR_OK);
}

dr_status_t dreduce_dist_fail(dreduce_context_t *ctx, dr_dist_op_t op, dr_dtype_t dtype, uint32_t bins,
                              const double *range, size_t nq, const double *q, dr_status_t why,
                              dreduce_dist_info_t *info)
{
    if (why == DR_OK) why = DR_ERR_USAGE;
    if ((unsigned)op >= DR_DIST_COUNT) op = DR_DIST_HISTOGRAM;
    return dist_call(ctx, op, NULL, 0, dtype, bins, range, NULL, NULL, nq, q, NULL, NULL, info, why);
}

static dr_status_t dist_file(dreduce_context_t *ctx, dr_dist_op_t op, const dreduce_file_t *file, uint32_t bins,
                             const double *range, uint64_t *counts, double *edges, size_t nq, const double *q,
                             double *values, dreduce_order_stat_t *order, dreduce_dist_info_t *info,
                             dreduce_file_info_t *file_info)
{
    const double t0 = dr_now_ms();
    dreduce_dist_info_t unread;
    if (!info) info = &unread;
    info_init(info);
    if (!ctx) {
        dr_error("%s: ctx is NULL", op == DR_DIST_HISTOGRAM ? "dreduce_histogram_file" : "dreduce_quantile_file");
        return DR_ERR_USAGE;
    }
    dr_status_t mine = op == DR_DIST_HISTOGRAM ? check_hist_args(bins, range) : check_q_args(nq, q);
    if (mine == DR_OK && op == DR_DIST_HISTOGRAM && !counts) {
        dr_error("dreduce_histogram_file: counts is NULL");
        mine = DR_ERR_USAGE;
    }
    if (mine == DR_OK && op == DR_DIST_QUANTILE && !values) {
        dr_error("dreduce_quantile_file: values is NULL");
        mine = DR_ERR_USAGE;
    }
    if (mine == DR_OK && ctx->is_gpu) mine = dr_gpu_use(&ctx->gpu);
    dr_input_t in;
    dreduce_file_info_t fi;
    DR_CHECK(dr_context_open_file(ctx, mine, file, DR_MIN, &in, &fi));
    int64_t f[F_COUNT];
    fields(f, op, fi.dtype, ctx->cfg.nan, bins, range, nq, q, DR_OK);
    dr_status_t s = agree(ctx, f, NULL, NULL);
    source_t src = {NULL, fi.mine, 0, &in, fi.first, fi.dtype};
    dreduce_stats_t st;
    memset(&st, 0, sizeof st);
    if (s == DR_OK && op == DR_DIST_HISTOGRAM && !range) {
        /* The automatic range reads the file through dreduce_reduce_file's own pipeline: ours is closed
         * meanwhile, and opened again after (every rank alike). */
        dr_input_close(&in);
        s = range_pass(ctx, &src, file, &st, info);
        if (s != DR_OK) {
            dr_watchdog_leave(ctx->wd);
            return s;
        }
        DR_CHECK(dr_context_open_file(ctx, DR_OK, file, DR_MIN, &in, &fi));
    }
    if (s == DR_OK)
        s = op == DR_DIST_HISTOGRAM ? histogram(ctx, &src, bins, range, &st, counts, edges, info, t0)
                                    : quantile(ctx, &src, nq, q, values, order, info, t0, PILOT_OFF, 0);
    dr_input_close(&in);
    if (s == DR_OK && file_info) *file_info = fi;
    dr_watchdog_leave(ctx->wd);
    return s;
}

dr_status_t dreduce_histogram_file(dreduce_context_t *ctx, const dreduce_file_t *file, uint32_t bins,
                                   const double *range, uint64_t *counts, double *edges, dreduce_dist_info_t *info,
                                   dreduce_file_info_t *file_info)
{
    return dist_file(ctx, DR_DIST_HISTOGRAM, file, bins, range, counts, edges, 0, NULL, NULL, NULL, info,
                     file_info);
}

dr_status_t dreduce_quantile_file(dreduce_context_t *ctx, const dreduce_file_t *file, size_t nq, const double *q,
                                  double *values, dreduce_order_stat_t *order, dreduce_dist_info_t *info,
                                  dreduce_file_info_t *file_info)
{
    return dist_file(ctx, DR_DIST_QUANTILE, file, 0, NULL, NULL, NULL, nq, q, values, order, info, file_info);
}
