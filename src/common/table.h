/* The one table of reductions: every (input type, op, accumulator kind) that dr_acc_select() can return. The CUDA
 * kernels and the CPU backend are instantiated from it, and from nothing else, so both cover exactly the same cases
 * and no unused combination is compiled.
 *
 * Each row is X(DTYPE, OP, op, ACC, acc): DR_<DTYPE>, DR_<OP> / accum.h's dr_<op>_<acc>, DR_ACC_<ACC>. The user
 * defines X, expands DR_REDUCTION_TABLE, and undefines X. */
#ifndef DREDUCE_TABLE_H
#define DREDUCE_TABLE_H

/* Integers: sum and prod in 64 bits, min/max/bitwise in the type itself. The 8- and 16-bit integers take their
 * min/max/bitwise in the 32-bit kinds of their signedness: sign- or zero-extension commutes with min, max, and, or
 * and xor, so the 32-bit result is exactly the type's value (and identities only meet empty shares, which the other
 * ranks' values absorb); no accumulator kinds, MPI types or combine rules of their own. */
#define DR_TABLE_INT_ROWS(DT, WIDE, wide, NATIVE, native)                                                      \
    X(DT, SUM, sum, WIDE, wide) X(DT, PROD, prod, WIDE, wide) X(DT, MIN, min, NATIVE, native)                 \
    X(DT, MAX, max, NATIVE, native) X(DT, BAND, band, NATIVE, native) X(DT, BOR, bor, NATIVE, native)         \
    X(DT, BXOR, bxor, NATIVE, native)
/* float32 and the 16-bit floats: sum/prod in float64 (wide) or float32 (native); min/max exactly in float32. */
#define DR_TABLE_NARROW_FLOAT_ROWS(DT)                                                                         \
    X(DT, SUM, sum, F64, f64) X(DT, SUM, sum, F32, f32) X(DT, PROD, prod, F64, f64)                           \
    X(DT, PROD, prod, F32, f32) X(DT, MIN, min, F32, f32) X(DT, MAX, max, F32, f32)

#define DR_REDUCTION_TABLE                                                                                     \
    DR_TABLE_INT_ROWS(INT32, I64, i64, I32, i32)                                                               \
    DR_TABLE_INT_ROWS(UINT32, U64, u64, U32, u32)                                                              \
    DR_TABLE_INT_ROWS(INT64, I64, i64, I64, i64)                                                               \
    DR_TABLE_INT_ROWS(UINT64, U64, u64, U64, u64)                                                              \
    DR_TABLE_INT_ROWS(INT8, I64, i64, I32, i32)                                                                \
    DR_TABLE_INT_ROWS(UINT8, U64, u64, U32, u32)                                                               \
    DR_TABLE_INT_ROWS(INT16, I64, i64, I32, i32)                                                               \
    DR_TABLE_INT_ROWS(UINT16, U64, u64, U32, u32)                                                              \
    DR_TABLE_NARROW_FLOAT_ROWS(FLOAT32)                                                                        \
    X(FLOAT64, SUM, sum, F64, f64) X(FLOAT64, PROD, prod, F64, f64)                                           \
    X(FLOAT64, MIN, min, F64, f64) X(FLOAT64, MAX, max, F64, f64)                                             \
    DR_TABLE_NARROW_FLOAT_ROWS(FLOAT16)                                                                        \
    DR_TABLE_NARROW_FLOAT_ROWS(BFLOAT16)

/* Exact sums (acc_mode DR_ACC_MODE_EXACT): the float types' sums into a dr_exact_t (accum.h, "Exact sums"). A table of its own:
 * the CPU backend's slices and the multipass kernel's exact path are instantiated from it; the teaching levels, whose
 * accumulators are one register, have no exact rows. */
#define DR_EXACT_TABLE                                                                                         \
    X(FLOAT32, SUM, sum, EXACT, exact) X(FLOAT64, SUM, sum, EXACT, exact) X(FLOAT16, SUM, sum, EXACT, exact)  \
    X(BFLOAT16, SUM, sum, EXACT, exact)

/* Statistics and argmin/argmax (issue #37, accum.h's "Statistics" and "argmin / argmax"): every input type, in the
 * accumulator kind of its class (dr_acc_select): signed integers in the *_I64 kinds, unsigned ones in *_U64 (bool
 * arrays are uint8), floats in *_F64. Rows X(DTYPE, OP, op, ACC, acc) as above, with OP STATS, ARGMIN or ARGMAX and
 * ACC a DR_ACC_STATS_* or DR_ACC_ARG_* kind; op and acc are lowercase tokens (argmin, arg_i64, stats, stats_f64, ...)
 * with no accum.h function of that name behind them (a stats or arg partial combines with dr_partial_combine). */
#define DR_TABLE_ARG_ROWS(DT, K, k) X(DT, ARGMIN, argmin, ARG_##K, arg_##k) X(DT, ARGMAX, argmax, ARG_##K, arg_##k)
#define DR_ARG_TABLE                                                                                           \
    DR_TABLE_ARG_ROWS(INT32, I64, i64) DR_TABLE_ARG_ROWS(INT64, I64, i64) DR_TABLE_ARG_ROWS(UINT32, U64, u64)  \
    DR_TABLE_ARG_ROWS(UINT64, U64, u64) DR_TABLE_ARG_ROWS(FLOAT32, F64, f64)                                   \
    DR_TABLE_ARG_ROWS(FLOAT64, F64, f64) DR_TABLE_ARG_ROWS(FLOAT16, F64, f64)                                  \
    DR_TABLE_ARG_ROWS(BFLOAT16, F64, f64) DR_TABLE_ARG_ROWS(INT8, I64, i64) DR_TABLE_ARG_ROWS(UINT8, U64, u64)   \
    DR_TABLE_ARG_ROWS(INT16, I64, i64) DR_TABLE_ARG_ROWS(UINT16, U64, u64)

/* stats (acc_mode WIDE, and EXACT for integers, whose sums are exact anyway): count, moments, sum, min, max. */
#define DR_STATS_TABLE                                                                                         \
    X(INT32, STATS, stats, STATS_I64, stats_i64) X(INT64, STATS, stats, STATS_I64, stats_i64)                 \
    X(UINT32, STATS, stats, STATS_U64, stats_u64) X(UINT64, STATS, stats, STATS_U64, stats_u64)               \
    X(FLOAT32, STATS, stats, STATS_F64, stats_f64) X(FLOAT64, STATS, stats, STATS_F64, stats_f64)             \
    X(FLOAT16, STATS, stats, STATS_F64, stats_f64) X(BFLOAT16, STATS, stats, STATS_F64, stats_f64)            \
    X(INT8, STATS, stats, STATS_I64, stats_i64) X(UINT8, STATS, stats, STATS_U64, stats_u64)                  \
    X(INT16, STATS, stats, STATS_I64, stats_i64) X(UINT16, STATS, stats, STATS_U64, stats_u64)

/* stats of the float types with acc_mode EXACT: the same statistics, and the sum exactly (a dr_stats_exact_t). */
#define DR_STATS_EXACT_TABLE                                                                                   \
    X(FLOAT32, STATS, stats, STATS_EXACT, stats_exact) X(FLOAT64, STATS, stats, STATS_EXACT, stats_exact)     \
    X(FLOAT16, STATS, stats, STATS_EXACT, stats_exact) X(BFLOAT16, STATS, stats, STATS_EXACT, stats_exact)

#endif
