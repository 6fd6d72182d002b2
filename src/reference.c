#include "reference.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dreduce/accum.h"
#include "parallel.h"

/* The element as a double (floats) or as integer bits widened to the accumulator (integers). */
static double element_double(const dr_gen_t *g, uint64_t i)
{
    switch (g->dtype) {
    case DR_FLOAT32: return dr_gen_float32(g, i);
    case DR_FLOAT64: return dr_gen_float64(g, i);
    case DR_FLOAT16: return dr_f16_to_f32(dr_gen_float16(g, i));
    default: return dr_bf16_to_f32(dr_gen_bfloat16(g, i));
    }
}

static void element_acc(const dr_gen_t *g, uint64_t i, dr_acc_kind_t acc, dr_value_t *v)
{
    memset(v, 0, sizeof *v);
    switch (g->dtype) {
    case DR_INT32: {
        int32_t x = dr_gen_int32(g, i);
        if (acc == DR_ACC_I64) v->i64 = x;
        else v->i32 = x;
        break;
    }
    case DR_UINT32: {
        uint32_t x = dr_gen_uint32(g, i);
        if (acc == DR_ACC_U64) v->u64 = x;
        else v->u32 = x;
        break;
    }
    case DR_INT64: v->i64 = dr_gen_int64(g, i); break;
    case DR_UINT64: v->u64 = dr_gen_uint64(g, i); break;
    default: {
        double d = element_double(g, i); /* float min/max: exact in the accumulator */
        if (acc == DR_ACC_F32) v->f32 = (float)d;
        else v->f64 = d;
        break;
    }
    }
}

/* Double-double arithmetic (Knuth's TwoSum, and TwoProd through fma). Past the double range the value becomes
 * +-inf with a zero low part (the error terms would be inf - inf = NaN). */
static void dd_add(double *hi, double *lo, double x)
{
    double s = *hi + x, bp = s - *hi;
    if (!isfinite(s)) {
        *hi = s;
        *lo = 0;
        return;
    }
    *lo += (*hi - (s - bp)) + (x - bp);
    *hi = s;
}

static void dd_renorm(double *hi, double *lo)
{
    double s = *hi + *lo;
    if (!isfinite(s)) {
        *hi = s;
        *lo = 0;
        return;
    }
    *lo = *lo - (s - *hi);
    *hi = s;
}

static void dd_mul(double *hi, double *lo, double xh, double xl)
{
    double p = *hi * xh, e = fma(*hi, xh, -p);
    if (!isfinite(p)) {
        *hi = p;
        *lo = 0;
        return;
    }
    e += *hi * xl + *lo * xh;
    *hi = p + e;
    *lo = e - (*hi - p);
}

static int is_float_sum_or_prod(const dr_reference_t *r)
{
    return dr_acc_kind_is_float(r->acc) && (r->op == DR_SUM || r->op == DR_PROD);
}

static void reference_init(dr_reference_t *r, dr_acc_kind_t acc, dr_op_t op)
{
    memset(r, 0, sizeof *r);
    r->acc = acc;
    r->op = op;
    dr_acc_identity(acc, op, &r->exact);
    r->hi = op == DR_PROD ? 1.0 : 0.0;
}

typedef struct {
    const dr_gen_t *g;
    dr_acc_kind_t acc;
    uint64_t first, n;
    dr_reference_t parts[256];
} ref_job_t;

static void ref_worker(void *ctx, int i, int k)
{
    ref_job_t *job = ctx;
    dr_reference_t *r = &job->parts[i];
    unsigned long long b, e;
    dr_parallel_slice(job->n, i, k, &b, &e);
    reference_init(r, job->acc, job->g->op);
    r->count = e - b;
    if (!is_float_sum_or_prod(r)) {
        dr_value_t v;
        for (uint64_t j = b; j < e; ++j) {
            element_acc(job->g, job->first + j, job->acc, &v);
            dr_acc_combine(job->acc, r->op, &r->exact, &v);
        }
        return;
    }
    for (uint64_t j = b; j < e; ++j) {
        double x = element_double(job->g, job->first + j);
        if (isnan(x)) { ++r->nan; continue; }
        if (isinf(x)) { if (x > 0) ++r->pos_inf; else ++r->neg_inf; continue; }
        if (r->op == DR_SUM) {
            dd_add(&r->hi, &r->lo, x);
            r->abs_sum += fabs(x);
        } else {
            if (x == 0) { ++r->zero; if (signbit(x)) ++r->negative; continue; }
            if (x < 0) { ++r->negative; x = -x; }
            dd_mul(&r->hi, &r->lo, x, 0.0);
            if ((j & 1023) == 1023) dd_renorm(&r->hi, &r->lo);
        }
    }
    dd_renorm(&r->hi, &r->lo);
}

void dr_reference_merge(dr_reference_t *into, const dr_reference_t *from)
{
    into->count += from->count;
    if (!is_float_sum_or_prod(into)) {
        dr_acc_combine(into->acc, into->op, &into->exact, &from->exact);
        return;
    }
    into->nan += from->nan;
    into->pos_inf += from->pos_inf;
    into->neg_inf += from->neg_inf;
    into->zero += from->zero;
    into->negative += from->negative;
    if (into->op == DR_SUM) {
        dd_add(&into->hi, &into->lo, from->hi);
        dd_add(&into->hi, &into->lo, from->lo);
        into->abs_sum += from->abs_sum;
    } else {
        dd_mul(&into->hi, &into->lo, from->hi, from->lo);
    }
    dd_renorm(&into->hi, &into->lo);
}

void dr_reference_compute(const dr_gen_t *g, dr_acc_kind_t acc, uint64_t first, uint64_t n, int nthreads,
                          dr_reference_t *out)
{
    static ref_job_t job; /* 256 references: too large for some thread stacks; one reference at a time */
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 256) nthreads = 256;
    if ((uint64_t)nthreads > n / 65536 + 1) nthreads = (int)(n / 65536 + 1);
    job.g = g;
    job.acc = acc;
    job.first = first;
    job.n = n;
    dr_parallel_run(nthreads, ref_worker, &job);
    reference_init(out, acc, g->op);
    for (int i = 0; i < nthreads; ++i) dr_reference_merge(out, &job.parts[i]);
}

void dr_value_format(dr_acc_kind_t acc, const dr_value_t *v, char *buf, size_t len)
{
    switch (acc) {
    case DR_ACC_I32: snprintf(buf, len, "%" PRId32, v->i32); break;
    case DR_ACC_U32: snprintf(buf, len, "%" PRIu32, v->u32); break;
    case DR_ACC_I64: snprintf(buf, len, "%" PRId64, v->i64); break;
    case DR_ACC_U64: snprintf(buf, len, "%" PRIu64, v->u64); break;
    case DR_ACC_F32:
    case DR_ACC_F64: {
        double d = acc == DR_ACC_F32 ? (double)v->f32 : v->f64;
        if (isnan(d)) snprintf(buf, len, "nan");
        else if (isinf(d)) snprintf(buf, len, d > 0 ? "inf" : "-inf");
        else snprintf(buf, len, acc == DR_ACC_F32 ? "%.9g" : "%.17g", d);
        break;
    }
    default: snprintf(buf, len, "?"); break;
    }
}

static double value_as_double(dr_acc_kind_t acc, const dr_value_t *v)
{
    switch (acc) {
    case DR_ACC_I32: return v->i32;
    case DR_ACC_U32: return v->u32;
    case DR_ACC_I64: return (double)v->i64;
    case DR_ACC_U64: return (double)v->u64;
    case DR_ACC_F32: return v->f32;
    default: return v->f64;
    }
}

static double gamma_bound(uint64_t k, double u)
{
    double ku = (double)k * u;
    return ku < 1 ? ku / (1 - ku) : INFINITY;
}

void dr_reference_check(const dr_reference_t *ref, const dr_value_t *result, uint64_t depth, dr_check_t *out)
{
    char got[64], want[64];
    memset(out, 0, sizeof *out);
    dr_value_format(ref->acc, result, got, sizeof got);
    if (!is_float_sum_or_prod(ref)) {
        const size_t size = dr_acc_kind_size(ref->acc);
        const double rd = value_as_double(ref->acc, result), ed = value_as_double(ref->acc, &ref->exact);
        out->exact = 1;
        out->expected = ed;
        out->pass = memcmp(result, &ref->exact, size) == 0 || (isnan(rd) && isnan(ed));
        dr_value_format(ref->acc, &ref->exact, want, sizeof want);
        snprintf(out->detail, sizeof out->detail, "exact: got %s, expected %s", got, want);
        return;
    }
    const double u = ref->acc == DR_ACC_F32 ? 0x1p-24 : 0x1p-53;
    const double r = value_as_double(ref->acc, result);
    /* The IEEE outcome when special values took part. */
    double special = 0;
    int has_special = 1;
    if (ref->nan || (ref->op == DR_SUM && ref->pos_inf && ref->neg_inf) ||
        (ref->op == DR_PROD && ref->zero && (ref->pos_inf || ref->neg_inf)))
        special = NAN;
    else if (ref->op == DR_SUM && (ref->pos_inf || ref->neg_inf))
        special = ref->pos_inf ? INFINITY : -INFINITY;
    else if (ref->op == DR_PROD && (ref->pos_inf || ref->neg_inf || ref->zero)) {
        int negative = (int)((ref->negative + ref->neg_inf) & 1);
        special = ref->zero ? 0.0 : INFINITY;
        if (negative) special = -special;
        /* A zero times partial products that overflowed is 0 * inf = NaN in whichever order reaches it: with a
         * zero among the elements and the rest of the product past the accumulator's range, both 0 and NaN are
         * the IEEE outcome of some order. */
        const double max_finite = ref->acc == DR_ACC_F32 ? 0x1.fffffep127 : 0x1.fffffffffffffp1023;
        if (ref->zero && (isinf(ref->hi) || fabs(ref->hi) > max_finite) && isnan(r)) special = NAN;
    } else
        has_special = 0;
    const double sign = ref->op == DR_PROD && (ref->negative & 1) ? -1.0 : 1.0;
    double expected = has_special ? special : isinf(ref->hi) ? sign * ref->hi : sign * (ref->hi + ref->lo);
    /* Past the accumulator's range the IEEE outcome is overflow to infinity ... */
    const double max_finite = ref->acc == DR_ACC_F32 ? 0x1.fffffep127 : 0x1.fffffffffffffp1023;
    if (!has_special && fabs(expected) > max_finite * (1 + 2 * u)) expected = copysign(INFINITY, expected);
    out->expected = expected;
    /* ... and below it, gradual underflow: a product whose exact value is under the smallest normal number may
     * come out as any value of at most that size (the roundings are no longer relative). */
    const double min_normal = ref->acc == DR_ACC_F32 ? 0x1p-126 : 0x1p-1022;
    if (!has_special && ref->op == DR_PROD && fabs(expected) < min_normal) {
        out->bound = min_normal;
        out->error = fabs(r - expected);
        out->pass = !isnan(r) && fabs(r) <= min_normal * (1 + 4 * u) && (r == 0 || signbit(r) == signbit(expected));
        snprintf(out->detail, sizeof out->detail, "underflow: got %s, reference %.17g below the smallest normal %g%s",
                 got, expected, min_normal, out->pass ? "" : " FAILED");
        return;
    }
    if (has_special || isinf(expected)) {
        out->exact = 1;
        out->pass = (isnan(expected) && isnan(r)) || (!isnan(expected) && r == expected);
        snprintf(out->detail, sizeof out->detail, "IEEE special: got %s, expected %g", got, expected);
        return;
    }
    const double diff = fabs((sign * r - ref->hi) - ref->lo);
    double bound;
    if (ref->op == DR_SUM)
        bound = gamma_bound(depth, u) * ref->abs_sum * (1 + 1e-12) + u * fabs(expected);
    else
        bound = (gamma_bound(ref->count, u) + u) * fabs(expected);
    out->error = diff;
    out->bound = bound;
    out->pass = !isnan(r) && diff <= bound;
    snprintf(out->detail, sizeof out->detail, "got %s, reference %.17g, |error| %.3g <= bound %.3g%s", got,
             expected, diff, bound, out->pass ? "" : " FAILED");
}
