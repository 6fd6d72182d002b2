/* Name tables for the vocabulary in include/dreduce/types.h, and values formatted for humans. */
#include "dtype.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
    int significand_bits;
} dtype_table[DR_DTYPE_COUNT] = {
    [DR_INT32] = {"int32", 4, 0},     [DR_INT64] = {"int64", 8, 0},       [DR_UINT32] = {"uint32", 4, 0},
    [DR_UINT64] = {"uint64", 8, 0},   [DR_FLOAT32] = {"float32", 4, 24},  [DR_FLOAT64] = {"float64", 8, 53},
    [DR_FLOAT16] = {"float16", 2, 11}, [DR_BFLOAT16] = {"bfloat16", 2, 8}, [DR_INT8] = {"int8", 1, 0},
    [DR_UINT8] = {"uint8", 1, 0},     [DR_INT16] = {"int16", 2, 0},       [DR_UINT16] = {"uint16", 2, 0},
};

static const char *const op_table[DR_OP_COUNT] = {
    [DR_SUM] = "sum", [DR_MIN] = "min", [DR_MAX] = "max", [DR_PROD] = "prod",
    [DR_BAND] = "band", [DR_BOR] = "bor", [DR_BXOR] = "bxor", [DR_STATS] = "stats",
    [DR_ARGMIN] = "argmin", [DR_ARGMAX] = "argmax",
};

static const char *const acc_mode_table[DR_ACC_MODE_COUNT] = {
    [DR_ACC_WIDE] = "wide", [DR_ACC_NATIVE] = "native", [DR_ACC_MODE_EXACT] = "exact"};

static const char *const nan_policy_table[DR_NAN_POLICY_COUNT] = {[DR_NAN_PROPAGATE] = "propagate",
                                                                   [DR_NAN_OMIT] = "omit"};

static const char *const host_path_table[DR_HOST_PATH_COUNT] = {
    [DR_HOST_PATH_AUTO] = "auto", [DR_HOST_PATH_CPU] = "cpu", [DR_HOST_PATH_GPU] = "gpu", [DR_HOST_PATH_SPLIT] = "split"};

static const char *const kernel_table[DR_KERNEL_COUNT] = {
    [DR_KERNEL_NEIGHBORED] = "neighbored", [DR_KERNEL_INTERLEAVED] = "interleaved", [DR_KERNEL_SMEM] = "smem",
    [DR_KERNEL_SMEM2] = "smem2",           [DR_KERNEL_UNROLL] = "unroll",           [DR_KERNEL_SHUFFLE] = "shuffle",
    [DR_KERNEL_MULTIPASS] = "multipass",
};

static const struct {
    const char *name;
    size_t size;
    int is_float;
} acc_table[DR_ACC_KIND_COUNT] = {
    [DR_ACC_I32] = {"int32", 4, 0},   [DR_ACC_U32] = {"uint32", 4, 0},   [DR_ACC_I64] = {"int64", 8, 0},
    [DR_ACC_U64] = {"uint64", 8, 0},  [DR_ACC_F32] = {"float32", 4, 1}, [DR_ACC_F64] = {"float64", 8, 1},
    [DR_ACC_EXACT] = {"exact", sizeof(dr_exact_t), 1},
    [DR_ACC_ARG_I64] = {"int64+index", sizeof(dr_arg_t), 0},
    [DR_ACC_ARG_U64] = {"uint64+index", sizeof(dr_arg_t), 0},
    [DR_ACC_ARG_F64] = {"float64+index", sizeof(dr_arg_t), 1},
    [DR_ACC_STATS_I64] = {"stats(int64)", sizeof(dr_stats_t), 0},
    [DR_ACC_STATS_U64] = {"stats(uint64)", sizeof(dr_stats_t), 0},
    [DR_ACC_STATS_F64] = {"stats(float64)", sizeof(dr_stats_t), 1},
    [DR_ACC_STATS_EXACT] = {"stats(exact)", sizeof(dr_stats_exact_t), 1},
};

size_t dr_dtype_size(dr_dtype_t t) { return t < DR_DTYPE_COUNT ? dtype_table[t].size : 0; }
const char *dr_dtype_name(dr_dtype_t t) { return t < DR_DTYPE_COUNT ? dtype_table[t].name : "?"; }
int dr_dtype_is_float(dr_dtype_t t) { return t < DR_DTYPE_COUNT && dtype_table[t].significand_bits > 0; }
int dr_dtype_significand_bits(dr_dtype_t t) { return t < DR_DTYPE_COUNT ? dtype_table[t].significand_bits : 0; }
const char *dr_op_name(dr_op_t op) { return op < DR_OP_COUNT ? op_table[op] : "?"; }
const char *dr_acc_mode_name(dr_acc_mode_t m) { return m < DR_ACC_MODE_COUNT ? acc_mode_table[m] : "?"; }
const char *dr_nan_policy_name(dr_nan_policy_t p) { return p < DR_NAN_POLICY_COUNT ? nan_policy_table[p] : "?"; }
const char *dr_host_path_name(dr_host_path_t p) { return p < DR_HOST_PATH_COUNT ? host_path_table[p] : "?"; }
const char *dr_kernel_name(dr_kernel_t k) { return k < DR_KERNEL_COUNT ? kernel_table[k] : "?"; }
const char *dr_acc_kind_name(dr_acc_kind_t k) { return k < DR_ACC_KIND_COUNT ? acc_table[k].name : "?"; }
size_t dr_acc_kind_size(dr_acc_kind_t k) { return k < DR_ACC_KIND_COUNT ? acc_table[k].size : 0; }
int dr_acc_kind_is_float(dr_acc_kind_t k) { return k < DR_ACC_KIND_COUNT && acc_table[k].is_float; }

static int find_name(const char *s, const char *const *names, size_t stride, int count)
{
    for (int i = 0; i < count; ++i) {
        const char *name = *(const char *const *)((const char *)names + (size_t)i * stride);
        if (strcmp(s, name) == 0) return i;
    }
    return -1;
}

int dr_dtype_parse(const char *s, dr_dtype_t *out)
{
    int i = find_name(s, &dtype_table[0].name, sizeof dtype_table[0], DR_DTYPE_COUNT);
    if (i < 0) return -1;
    *out = (dr_dtype_t)i;
    return 0;
}

int dr_op_parse(const char *s, dr_op_t *out)
{
    int i = find_name(s, op_table, sizeof op_table[0], DR_OP_COUNT);
    if (i < 0) return -1;
    *out = (dr_op_t)i;
    return 0;
}

int dr_acc_mode_parse(const char *s, dr_acc_mode_t *out)
{
    int i = find_name(s, acc_mode_table, sizeof acc_mode_table[0], DR_ACC_MODE_COUNT);
    if (i < 0) return -1;
    *out = (dr_acc_mode_t)i;
    return 0;
}

int dr_nan_policy_parse(const char *s, dr_nan_policy_t *out)
{
    int i = find_name(s, nan_policy_table, sizeof nan_policy_table[0], DR_NAN_POLICY_COUNT);
    if (i < 0) return -1;
    *out = (dr_nan_policy_t)i;
    return 0;
}

int dr_host_path_parse(const char *s, dr_host_path_t *out)
{
    int i = find_name(s, host_path_table, sizeof host_path_table[0], DR_HOST_PATH_COUNT);
    if (i < 0) return -1;
    *out = (dr_host_path_t)i;
    return 0;
}

int dr_kernel_parse(const char *s, dr_kernel_t *out)
{
    int i = find_name(s, kernel_table, sizeof kernel_table[0], DR_KERNEL_COUNT);
    if (i < 0) return -1;
    *out = (dr_kernel_t)i;
    return 0;
}

const char *dr_dtype_names(void)
{
    return "int32, int64, uint32, uint64, float32, float64, float16, bfloat16, int8, uint8, int16, uint16";
}
const char *dr_op_names(void) { return "sum, min, max, prod, band, bor, bxor, stats, argmin, argmax"; }
const char *dr_kernel_names(void) { return "neighbored, interleaved, smem, smem2, unroll, shuffle, multipass"; }

int dr_op_valid(dr_dtype_t t, dr_op_t op)
{
    if (t >= DR_DTYPE_COUNT || op >= DR_OP_COUNT) return 0;
    return !(dr_dtype_is_float(t) && (op == DR_BAND || op == DR_BOR || op == DR_BXOR));
}

int dr_acc_mode_valid(dr_dtype_t t, dr_op_t op, dr_acc_mode_t m)
{
    if (!dr_op_valid(t, op) || m >= DR_ACC_MODE_COUNT) return 0;
    if ((op == DR_STATS || dr_op_is_arg(op)) && m == DR_ACC_NATIVE) return 0;
    return !(m == DR_ACC_MODE_EXACT && op == DR_PROD && dr_dtype_is_float(t));
}

dr_acc_kind_t dr_acc_result_kind(dr_acc_kind_t k) { return k == DR_ACC_EXACT ? DR_ACC_F64 : k; }

int dr_op_is_arg(dr_op_t op) { return op == DR_ARGMIN || op == DR_ARGMAX; }
int dr_acc_kind_is_arg(dr_acc_kind_t k) { return k >= DR_ACC_ARG_I64 && k <= DR_ACC_ARG_F64; }
int dr_acc_kind_is_stats(dr_acc_kind_t k) { return k >= DR_ACC_STATS_I64 && k <= DR_ACC_STATS_EXACT; }

dr_acc_kind_t dr_acc_scalar_kind(dr_acc_kind_t k)
{
    switch (k) {
    case DR_ACC_ARG_I64:
    case DR_ACC_STATS_I64: return DR_ACC_I64;
    case DR_ACC_ARG_U64:
    case DR_ACC_STATS_U64: return DR_ACC_U64;
    case DR_ACC_ARG_F64:
    case DR_ACC_STATS_F64:
    case DR_ACC_STATS_EXACT: return DR_ACC_F64;
    default: return k;
    }
}

/* Signed integers, unsigned ones, floats: which of a family of three kinds (arg or stats) a type takes. */
static int scalar_class(dr_dtype_t t)
{
    switch (t) {
    case DR_INT8:
    case DR_INT16:
    case DR_INT32:
    case DR_INT64: return 0;
    case DR_UINT8:
    case DR_UINT16:
    case DR_UINT32:
    case DR_UINT64: return 1;
    default: return 2;
    }
}

dr_acc_kind_t dr_acc_select(dr_dtype_t t, dr_op_t op, dr_acc_mode_t mode)
{
    if (dr_op_is_arg(op)) return (dr_acc_kind_t)(DR_ACC_ARG_I64 + scalar_class(t));
    if (op == DR_STATS) {
        if (mode == DR_ACC_MODE_EXACT && dr_dtype_is_float(t)) return DR_ACC_STATS_EXACT;
        return (dr_acc_kind_t)(DR_ACC_STATS_I64 + scalar_class(t));
    }
    if (mode == DR_ACC_MODE_EXACT && op == DR_SUM && dr_dtype_is_float(t)) return DR_ACC_EXACT;
    if (mode == DR_ACC_MODE_EXACT) mode = DR_ACC_WIDE; /* integers, min, max: exact already; products: refused */
    const int widen = op == DR_SUM || op == DR_PROD;
    switch (t) {
    case DR_INT8:
    case DR_INT16: /* min/max/bitwise of the small integers in 32 bits: exact, and the value is the type's */
    case DR_INT32: return widen ? DR_ACC_I64 : DR_ACC_I32;
    case DR_UINT8:
    case DR_UINT16:
    case DR_UINT32: return widen ? DR_ACC_U64 : DR_ACC_U32;
    case DR_INT64: return DR_ACC_I64;
    case DR_UINT64: return DR_ACC_U64;
    case DR_FLOAT64: return DR_ACC_F64;
    default: /* float32 and the 16-bit floats; min/max are exact in float32 */
        return widen && mode == DR_ACC_WIDE ? DR_ACC_F64 : DR_ACC_F32;
    }
}

int dr_value_format(dr_acc_kind_t acc, const dr_value_t *v, char *buf, size_t len)
{
    switch (acc) {
    case DR_ACC_I32: return snprintf(buf, len, "%" PRId32, v->i32);
    case DR_ACC_U32: return snprintf(buf, len, "%" PRIu32, v->u32);
    case DR_ACC_I64: return snprintf(buf, len, "%" PRId64, v->i64);
    case DR_ACC_U64: return snprintf(buf, len, "%" PRIu64, v->u64);
    case DR_ACC_F32:
    case DR_ACC_F64:
    case DR_ACC_EXACT: { /* an exact sum's result is its float64 rounding */
        double d = acc == DR_ACC_F32 ? (double)v->f32 : v->f64;
        if (isnan(d)) return snprintf(buf, len, "nan");
        if (isinf(d)) return snprintf(buf, len, d > 0 ? "inf" : "-inf");
        return snprintf(buf, len, acc == DR_ACC_F32 ? "%.9g" : "%.17g", d);
    }
    case DR_ACC_ARG_I64:
    case DR_ACC_ARG_U64:
    case DR_ACC_ARG_F64: { /* its value, in the scalar kind */
        dr_value_t x;
        memset(&x, 0, sizeof x);
        memcpy(&x, &v->arg.value, sizeof v->arg.value);
        return dr_value_format(dr_acc_scalar_kind(acc), &x, buf, len);
    }
    case DR_ACC_STATS_I64:
    case DR_ACC_STATS_U64:
    case DR_ACC_STATS_F64:
    case DR_ACC_STATS_EXACT: return snprintf(buf, len, "stats");
    default: return snprintf(buf, len, "?");
    }
}
