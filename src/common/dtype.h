/* The functions over the vocabulary of include/dreduce/types.h (element types, ops, accumulator kinds): sizes,
 * names, parsing and which combinations exist. Internal (src/common/types.c): libdreduce exports only dreduce_*;
 * a client reads the few it needs through dreduce.h (dreduce_acc_select, dreduce_dtype_size, ...). Plain C, also
 * included by CUDA sources. */
#ifndef DREDUCE_DTYPE_H
#define DREDUCE_DTYPE_H

#include <stddef.h>

#include "dreduce/types.h"

#ifdef __cplusplus
extern "C" {
#endif

size_t dr_dtype_size(dr_dtype_t t);
const char *dr_dtype_name(dr_dtype_t t);
int dr_dtype_is_float(dr_dtype_t t);
/* Significand bits including the implicit one (24 for float32); 0 for integers. */
int dr_dtype_significand_bits(dr_dtype_t t);
const char *dr_op_name(dr_op_t op);
const char *dr_acc_mode_name(dr_acc_mode_t m);
const char *dr_nan_policy_name(dr_nan_policy_t p);
const char *dr_host_path_name(dr_host_path_t p);
const char *dr_kernel_name(dr_kernel_t k);
const char *dr_acc_kind_name(dr_acc_kind_t k);
size_t dr_acc_kind_size(dr_acc_kind_t k);
int dr_acc_kind_is_float(dr_acc_kind_t k);

/* Parse a name ("float32", "sum", "native"); returns 0 and sets *out, or -1 if the name is unknown. */
int dr_dtype_parse(const char *s, dr_dtype_t *out);
int dr_op_parse(const char *s, dr_op_t *out);
int dr_acc_mode_parse(const char *s, dr_acc_mode_t *out);
int dr_nan_policy_parse(const char *s, dr_nan_policy_t *out);
int dr_host_path_parse(const char *s, dr_host_path_t *out);
int dr_kernel_parse(const char *s, dr_kernel_t *out);
/* Comma-separated list of every valid name, for error messages. */
const char *dr_dtype_names(void);
const char *dr_op_names(void);
const char *dr_kernel_names(void);

/* 1 if op is defined for type t (bitwise ops need an integer type), else 0. */
int dr_op_valid(dr_dtype_t t, dr_op_t op);
/* 1 if (t, op) can accumulate in mode m, else 0: a float product has no exact mode (an exact product of n floats
 * needs n times their significand bits); stats, argmin and argmax have no native mode. */
int dr_acc_mode_valid(dr_dtype_t t, dr_op_t op, dr_acc_mode_t m);
/* The kind a caller reads a result of kind k in: float64 for EXACT (rounded once), k itself otherwise. */
dr_acc_kind_t dr_acc_result_kind(dr_acc_kind_t k);
/* 1 for the argmin/argmax ops (their partials carry an index), 1 for the stats kinds / arg kinds. */
int dr_op_is_arg(dr_op_t op);
int dr_acc_kind_is_arg(dr_acc_kind_t k);
int dr_acc_kind_is_stats(dr_acc_kind_t k);
/* The scalar kind of an arg or stats kind's values (DR_ACC_I64, DR_ACC_U64 or DR_ACC_F64); k itself otherwise. */
dr_acc_kind_t dr_acc_scalar_kind(dr_acc_kind_t k);
/* The accumulator kind a valid (type, op, mode) reduces in. */
dr_acc_kind_t dr_acc_select(dr_dtype_t t, dr_op_t op, dr_acc_mode_t mode);

/* Format an accumulator value for humans and JSON ("12345", "-0.5", "nan", "inf"; an argmin/argmax kind: its value,
 * a stats kind: "stats", formatted by the caller field by field). Returns the length of the whole text like
 * snprintf (the text was cut short if that is >= len). */
int dr_value_format(dr_acc_kind_t acc, const dr_value_t *v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
