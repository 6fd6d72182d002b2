#!/usr/bin/env python3
"""The dreduce Python package on the CPU backend, on every rank of MPI.COMM_WORLD (run it under mpiexec at 1..4
ranks; tests/python/run_mpi.py does, with a time limit: a hang fails). Every case is collective: all ranks run the
same cases in the same order.

- every dtype x op against NumPy/Python: exact where the result is exact (integers wrap modulo 2^64 like the
  library's accumulators, min/max/bitwise, acc="exact" sums bit for bit against math.fsum), float sums and products
  within the library's stated bound; stats, argmin, argmax (issue #37: --without-new-ops leaves them out until the
  library has them);
- contexts: wide (plain and allreduce), native, exact, two emulated nodes (ranks_per_node=2);
- inputs: NumPy of any C-contiguous shape, read-only and empty arrays, bytes/bytearray/array.array/memoryview, an
  object with only __array_interface__, one with only DLPack, dtype= reinterpretation (bfloat16 bits in uint16);
- errors: a bad dtype (complex64), op name, non-contiguous array, None, a list, a bitwise op of floats, a per-call
  acc or allreduce unlike the context's, a bad Context value; each on every rank and on one rank only; ranks
  disagreeing on dtype or op; every rank that gets an error raises it and no rank waits, and the context still works;
- NaN results: a float sum or product that is NaN gives the canonical NaN's bits whatever NaN met in the adds;
- the context manager, close(), timings(), info(), prepare();
- bind="auto" after the caller narrowed its own thread (another thread still on the widened set).

usage: mpiexec -n N python3 test_cpu.py [--without-new-ops] [--verbose]
Exit 0 when every rank passed, 1 otherwise."""

import argparse
import array
import math
import os
import sys
import threading
import traceback
import zlib
from fractions import Fraction

import numpy as np
from mpi4py import MPI

import dreduce

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
DTYPES = ["bool"] + INTS + FLOATS
BASIC_OPS = ["sum", "min", "max", "prod"]
BIT_OPS = ["band", "bor", "bxor"]
NEW_OPS = ["stats", "argmin", "argmax"]  # issue #37

passed = 0
failures = []
verbose = False


def fail(name, detail):
    failures.append(f"{name}: {detail}")
    print(f"FAIL rank {RANK}: {name}: {detail}", flush=True)


def ok(name):
    global passed
    passed += 1
    if verbose and RANK == 0:
        print(f"ok {name}", flush=True)


def check(name, cond, detail=""):
    if cond:
        ok(name)
    else:
        fail(name, detail)


# ---- data: every rank can make every rank's shard, so each computes the reference of the whole array
def bf16_bits(f32):
    """float32 -> bfloat16 bits, rounded to nearest even (NaN kept a NaN)."""
    u = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f32)
    r[nan] = 0x7FC0
    return r


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def count_of(r, layout):
    if layout == "even":
        return 97
    if layout == "uneven":  # rank 0 none at all when there are several ranks
        return 41 * r + (0 if SIZE > 1 else 23)
    return 1 + 13 * r  # "small"


def shard(dtype, op, r, layout="uneven", special=None):
    """(array to reduce, its values as Python numbers): rank r's part of the case's array."""
    rng = np.random.default_rng([zlib.crc32(f"{dtype} {op} {special}".encode()), r, 36])
    n = count_of(r, layout)
    if dtype == "bool":
        a = rng.random(n) < (0.9 if op == "prod" else 0.5)
        return a, [int(v) for v in a]
    if dtype in INTS:
        info = np.iinfo(dtype)
        if op == "prod":
            choice = [1, 1, 1, 1, 2, 3, -1] if info.min < 0 else [1, 1, 1, 2, 3]
            a = rng.choice(np.array(choice, dtype=dtype), n)
        else:
            a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        return a, [int(v) for v in a]
    if op == "prod":
        v = rng.uniform(0.9, 1.1, n)
    else:
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    if special == "nan" and n:
        v[rng.integers(0, n)] = np.nan
    if dtype == "bfloat16":
        bits = bf16_bits(v.astype(np.float32))
        return bits, [float(x) for x in bf16_values(bits)]
    a = v.astype(dtype)
    return a, [float(x) for x in a.astype(np.float64)]


def reduce_of(ctx, dtype, a, op, **kw):
    if dtype == "bfloat16":
        kw["dtype"] = "bfloat16"
    return ctx.reduce(a, op, **kw)


# ---- references
def wrap(total, signed):
    total %= 1 << 64
    return total - (1 << 64) if signed and total >> 63 else total


def signed(dtype):
    return dtype.startswith("int")


def gamma(n, u):
    return n * u / (1 - n * u)


def same_float(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def expected_minmax(vals, op, dtype):
    if not vals:
        return None
    if dtype in FLOATS and any(math.isnan(v) for v in vals):
        return math.nan
    return min(vals) if op == "min" else max(vals)


def arg_expected(vals, op, dtype):
    if not vals:
        return (None, None)
    if dtype in FLOATS and any(math.isnan(v) for v in vals):
        i = next(i for i, v in enumerate(vals) if math.isnan(v))
        return (math.nan, i)
    best = min(vals) if op == "argmin" else max(vals)
    return (best, vals.index(best))


def check_value(name, got, vals, dtype, op, acc):
    """got (the reduced value) against the whole array's values."""
    n = len(vals)
    if op in ("min", "max"):
        want = expected_minmax(vals, op, dtype)
        if want is None:
            return ok(name)  # the identity; not specified here
        return check(name, same_float(float(got), float(want)) if dtype in FLOATS else got == want,
                     f"got {got!r}, expected {want!r}")
    if op in BIT_OPS:
        want = {"band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}[op].reduce(
            np.array(vals, dtype=dtype)) if n else None
        if want is None:
            return ok(name)
        return check(name, got == int(want), f"got {got!r}, expected {int(want)!r}")
    if dtype not in FLOATS:  # integer sums and products: exact, modulo 2^64
        want = wrap(sum(vals) if op == "sum" else math.prod(vals), signed(dtype))
        return check(name, isinstance(got, int) and got == want, f"got {got!r}, expected {want!r}")
    if op == "sum":
        exact = math.fsum(vals)
        if acc == "exact":
            return check(name, got.hex() == exact.hex() if exact != 0 else got == 0,
                         f"got {got!r} ({got.hex()}), expected exactly {exact!r} ({exact.hex()})")
        u = 2.0 ** -53 if acc == "wide" or dtype == "float64" else 2.0 ** -24
        bound = gamma(max(n, 1), u) * math.fsum(abs(v) for v in vals) + u * abs(exact)
        return check(name, abs(got - exact) <= bound, f"got {got!r}, expected {exact!r} within {bound:g}")
    if op == "prod":
        exact = float(math.prod(Fraction(v) for v in vals))
        u = 2.0 ** -53 if acc == "wide" or dtype == "float64" else 2.0 ** -24
        bound = gamma(max(n, 1), u) * abs(exact)
        return check(name, abs(got - exact) <= bound, f"got {got!r}, expected {exact!r} within {bound:g}")
    raise AssertionError(op)


def check_stats(name, got, vals, dtype, acc):
    n = len(vals)
    if not isinstance(got, dreduce.Stats):
        return fail(name, f"got {got!r}, expected a dreduce.Stats")
    why = []
    if got.count != n:
        why.append(f"count {got.count} != {n}")
    if n == 0:
        if got.min is not None or got.max is not None:
            why.append(f"min/max {got.min!r}/{got.max!r} for an empty array, expected None")
    else:
        has_nan = dtype in FLOATS and any(math.isnan(v) for v in vals)
        exact_sum = sum(Fraction(v) for v in vals) if not has_nan else None
        if dtype not in FLOATS:
            if got.sum != sum(vals):
                why.append(f"sum {got.sum!r} != {sum(vals)!r} (exact)")
            if got.mean != sum(vals) / n:
                why.append(f"mean {got.mean!r} != {sum(vals) / n!r} (rounded once)")
        elif not has_nan and acc == "exact":
            if got.sum != float(exact_sum):
                why.append(f"sum {got.sum!r} != {float(exact_sum)!r} (exact, rounded once)")
            if got.mean != float(exact_sum / n):
                why.append(f"mean {got.mean!r} != {float(exact_sum / n)!r} (rounded once)")
        elif not has_nan:
            u = 2.0 ** -53
            bound = gamma(n, u) * math.fsum(abs(v) for v in vals) + u * abs(float(exact_sum))
            if abs(got.sum - float(exact_sum)) > bound:
                why.append(f"sum {got.sum!r} != {float(exact_sum)!r} within {bound:g}")
        if not has_nan:
            mean = exact_sum / n
            m2 = sum((Fraction(v) - mean) ** 2 for v in vals)
            var, var_s = float(m2 / n), float(m2 / (n - 1)) if n > 1 else math.nan
            # Welford/Chan in float64: relative error a small multiple of n * 2^-53 of the squares' scale
            scale = float(sum(Fraction(v) ** 2 for v in vals) / n) + 1e-300
            tol = 64 * n * 2.0 ** -53 * scale
            if abs(got.var - var) > tol:
                why.append(f"var {got.var!r} != {var!r} within {tol:g}")
            if n > 1 and abs(got.var_sample - var_s) > tol * n / (n - 1):
                why.append(f"var_sample {got.var_sample!r} != {var_s!r}")
            if n == 1 and not math.isnan(got.var_sample):
                why.append(f"var_sample {got.var_sample!r} for one element, expected nan")
        for op in ("min", "max"):
            want = expected_minmax(vals, op, dtype)
            have = getattr(got, op)
            if not (same_float(float(have), float(want)) if dtype in FLOATS else have == want):
                why.append(f"{op} {have!r} != {want!r}")
    check(name, not why, "; ".join(why) + f" (got {got})")


def check_arg(name, got, vals, dtype, op):
    want = arg_expected(vals, op, dtype)
    good = isinstance(got, tuple) and len(got) == 2 and got[1] == want[1] and (
        got[0] is None and want[0] is None or want[0] is not None and got[0] is not None and
        (same_float(float(got[0]), float(want[0])) if dtype in FLOATS else got[0] == want[0]))
    check(name, good, f"got {got!r}, expected {want!r}")


def whole(dtype, op, layout, special=None):
    vals = []
    for r in range(SIZE):
        vals += shard(dtype, op, r, layout, special)[1]
    return vals


def expects_result(ctx):
    return ctx.allreduce or RANK == 0


# ---- the matrix
def run_case(ctx, label, dtype, op, layout="uneven", special=None, argmode="prepare"):
    name = f"{label} {dtype} {op} {layout}{' ' + special if special else ''}"
    a, _ = shard(dtype, op, RANK, layout, special)
    kw = {}
    if op in ("argmin", "argmax") and SIZE > 1:
        if argmode == "prepare":
            ctx.prepare(a, op, dtype="bfloat16" if dtype == "bfloat16" else None)
        else:
            kw["first"] = sum(count_of(r, layout) for r in range(RANK))
    try:
        got = reduce_of(ctx, dtype, a, op, **kw)
    except dreduce.Error as e:
        return fail(name, f"raised {type(e).__name__}: {e}")
    if not expects_result(ctx):
        return check(name, got is None, f"got {got!r} on rank {RANK}, expected None")
    vals = whole(dtype, op, layout, special)
    if op == "stats":
        return check_stats(name, got, vals, dtype, ctx.acc)
    if op in ("argmin", "argmax"):
        return check_arg(name, got, vals, dtype, op)
    return check_value(name, got, vals, dtype, op, ctx.acc)


def ops_for(dtype, new_ops):
    ops = BASIC_OPS + (BIT_OPS if dtype in INTS or dtype == "bool" else [])
    return ops + (NEW_OPS if new_ops else [])


def matrix(new_ops):
    with dreduce.Context(device="cpu", cpu_threads=1) as ctx:
        for dtype in DTYPES:
            for op in ops_for(dtype, new_ops):
                run_case(ctx, "wide", dtype, op)
            for op in ["min", "max"] + (["stats", "argmin", "argmax"] if new_ops else []):
                if dtype in FLOATS:
                    run_case(ctx, "wide", dtype, op, "even", special="nan")
        if new_ops:
            for dtype in ("int16", "float32", "bfloat16"):
                for op in ("argmin", "argmax"):
                    run_case(ctx, "wide first=", dtype, op, argmode="first")
                    run_case(ctx, "wide first=", dtype, op, "small", argmode="first")
    with dreduce.Context(device="cpu", cpu_threads=1, allreduce=True) as ctx:
        for dtype in DTYPES:
            for op in ["sum", "max"] + (["stats", "argmax"] if new_ops else []):
                run_case(ctx, "allreduce", dtype, op, "small")
    with dreduce.Context(device="cpu", cpu_threads=1, acc="native") as ctx:
        for dtype in FLOATS:
            for op in ("sum", "prod", "min"):
                run_case(ctx, "native", dtype, op)
        run_case(ctx, "native", "int32", "sum")
    with dreduce.Context(device="cpu", cpu_threads=1, acc="exact") as ctx:
        for dtype in DTYPES:
            for op in ["sum", "min", "max"] + (["prod"] if dtype not in FLOATS else []) + \
                    (["stats", "argmax"] if new_ops else []):
                run_case(ctx, "exact", dtype, op)
        for dtype in FLOATS:  # a float product has no exact mode: refused on every rank
            a, _ = shard(dtype, "prod", RANK)
            expect_raise(f"exact {dtype} prod", dreduce.UsageError, lambda: reduce_of(ctx, dtype, a, "prod"),
                         everywhere=True, match="exact")
    if SIZE >= 3:  # two emulated nodes: the node and the global level, exact and stats records between them
        with dreduce.Context(device="cpu", cpu_threads=1, ranks_per_node=2, acc="exact") as ctx:
            for dtype, op in [("float32", "sum"), ("int64", "sum"), ("float64", "max")] + \
                    ([("float64", "stats"), ("float32", "argmin")] if new_ops else []):
                run_case(ctx, "2 nodes exact", dtype, op)


# ---- NaN results' bits
def nan_bits(_new_ops=True):
    """A float sum or product that is NaN is the canonical NaN (0x7fff...f; as float32 0x7fffffff, which a Python
    float holds as 0x7fffffffe0000000), whichever NaN the hardware's adds kept: each rank's part has +inf and -inf
    (inf - inf: the hardware's default NaN, negative on x86) and the even ranks a negative NaN with a payload, at 1
    and 3 threads, in the wide and the native accumulators."""
    pats = {"float16": (np.uint16, 0xFE01), "bfloat16": (np.uint16, 0xFFC1), "float32": (np.uint32, 0xFFC12345),
            "float64": (np.uint64, 0xFFF8DEADBEEF0001)}
    canon64, canon32 = 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFFE0000000
    for acc in ("wide", "native"):
        for threads in (1, 3):
            with dreduce.Context(device="cpu", cpu_threads=threads, acc=acc) as ctx:
                for dtype in FLOATS:
                    ut, pat = pats[dtype]
                    v = np.random.default_rng([RANK, 7]).uniform(0.5, 1.5, 200000).astype(np.float32)
                    a = bf16_bits(v) if dtype == "bfloat16" else v.astype(dtype)
                    bits = a.view(ut)
                    bits[3] = ut(0x7C00 if dtype == "float16" else 0x7F80 if dtype == "bfloat16" else
                                 0x7F800000 if dtype == "float32" else 0x7FF0000000000000)  # +inf
                    bits[150001] = bits[3] | ut(1 << (8 * bits.itemsize - 1))  # -inf
                    if RANK % 2 == 0:
                        bits[100007] = ut(pat)
                    for op in ("sum", "prod"):
                        got = reduce_of(ctx, dtype, a, op)
                        if got is None:
                            continue
                        want = canon32 if acc == "native" and dtype != "float64" else canon64
                        have = int(np.float64(got).view(np.uint64))
                        check(f"{acc} {dtype} {op} NaN bits, {threads} threads", have == want,
                              f"0x{have:016x}, expected the canonical NaN 0x{want:016x}")


# ---- inputs of other kinds
class ArrayInterfaceOnly:
    def __init__(self, a):
        self.__array_interface__ = a.__array_interface__
        self._a = a


class DLPackOnly:
    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def inputs():
    with dreduce.Context(device="cpu", allreduce=True) as ctx:
        base = np.arange(1, 13, dtype=np.int32) + 100 * RANK
        total = sum(int(v) for r in range(SIZE) for v in np.arange(1, 13) + 100 * r)
        check("input 2-D C-contiguous", ctx.reduce(base.reshape(3, 4)) == total)
        check("input 3-D C-contiguous", ctx.reduce(base.reshape(2, 3, 2), "max") == 12 + 100 * (SIZE - 1))
        ro = base.copy()
        ro.setflags(write=False)
        check("input read-only", ctx.reduce(ro) == total)
        check("input empty on every rank", ctx.reduce(np.zeros(0, np.float64)) == 0.0)
        # min, max and the bitwise ops of nothing have no value (NumPy raises for min and max): None; prod 1
        for dt, op in (("float32", "min"), ("float64", "max"), ("int16", "max"), ("int32", "band"),
                       ("uint8", "bor"), ("int64", "bxor")):
            got = ctx.reduce(np.zeros(0, dt), op)
            check(f"{op} of an empty {dt} array is None (got {got!r})", got is None)
        check("prod of nothing is 1", ctx.reduce(np.zeros(0, np.int32), "prod") == 1)
        check("min with an element on one rank only", ctx.reduce(
            np.array([-3.5], np.float32) if RANK == SIZE - 1 else np.zeros(0, np.float32), "min") == -3.5)
        mine = base if RANK % 2 else base[:0]
        want = sum(int(v) for r in range(SIZE) if r % 2 for v in np.arange(1, 13) + 100 * r)
        check("input empty on some ranks", ctx.reduce(mine) == want)
        check("input bytes", ctx.reduce(bytes(range(10))) == 45 * SIZE)
        check("input bytearray", ctx.reduce(bytearray(range(10)), "max") == 9)
        check("input array.array('d')", ctx.reduce(array.array("d", [0.5, 1.5])) == 2.0 * SIZE)
        check("input memoryview", ctx.reduce(memoryview(base)) == total)
        check("input __array_interface__ only", ctx.reduce(ArrayInterfaceOnly(base)) == total)
        if hasattr(base, "__dlpack__"):
            check("input DLPack only (CPU)", ctx.reduce(DLPackOnly(base)) == total)
            f = np.linspace(-1, 1, 9, dtype=np.float16)
            check("input DLPack float16", ctx.reduce(DLPackOnly(f), "min") == -1.0)
        check("input bool counts true", ctx.reduce(np.array([True, False, True])) == 2 * SIZE)
        check("input bool max", ctx.reduce(np.array([False, True]), "max") == 1)
        bits = bf16_bits(np.array([1.5, -2.0, 3.25], np.float32))
        check("input bfloat16 via dtype=", ctx.reduce(bits, "sum", dtype="bfloat16") == 2.75 * SIZE)
        check("input dtype= reinterprets", ctx.reduce(np.array([-1], np.int8), "max", dtype="uint8") == 255)
        try:
            import ml_dtypes  # noqa: F401: JAX's and TensorFlow's bfloat16 for NumPy, where installed
            m = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
            check("input ml_dtypes bfloat16", ctx.reduce(m) == 2.75 * SIZE)
        except ImportError:
            pass
        f16 = np.array([0.1, 0.2], np.float16)
        check("input float16 sum", abs(ctx.reduce(f16) - SIZE * (float(f16[0]) + float(f16[1]))) < 1e-12)
        if SIZE == 1:  # argmin/argmax of one rank need no prepare; the index is in the array
            x = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int64)
            if NEW_OPS_ON:
                check("argmin one rank", ctx.reduce(x, "argmin") == (1, 1))
                check("argmax 2-D index flattened", ctx.reduce(x.reshape(2, 4), "argmax") == (9, 5))
                check("argmax empty", ctx.reduce(x[:0], "argmax") == (None, None))


# ---- errors
def expect_raise(name, cls, fn, everywhere, match=None):
    """fn() must raise cls on this rank (everywhere=True) or may return None instead (a rank that cannot know)."""
    try:
        got = fn()
    except cls as e:
        if match and match not in str(e):
            return fail(name, f"{type(e).__name__} {e!s} does not mention {match!r}")
        return ok(name)
    except Exception as e:  # noqa: BLE001
        return fail(name, f"raised {type(e).__name__}: {e} (expected {cls.__name__})\n{traceback.format_exc()}")
    if everywhere:
        return fail(name, f"returned {got!r}, expected {cls.__name__}")
    check(name, got is None, f"returned {got!r} without raising (expected None or {cls.__name__})")


def still_works(ctx, name):
    """After an error the ranks' collectives are still matched: a normal call gives the right answer."""
    got = ctx.reduce(np.full(4, RANK + 1, np.int64))
    want = 4 * SIZE * (SIZE + 1) // 2
    check(f"{name}: next call", got == want if expects_result(ctx) else got is None, f"got {got!r}")


def errors():
    x = np.arange(10, dtype=np.float32)
    bad_inputs = [("complex64", x.astype(np.complex64), "complex64"), ("None", None, "None"),
                  ("non-contiguous", x[::2], "not C-contiguous"), ("list", [1.0, 2.0], "list"),
                  ("Fortran order", np.asfortranarray(x.reshape(2, 5)), "not C-contiguous"),
                  ("masked", np.ma.masked_array(x, mask=x > 5), "masked"),
                  ("byte-swapped", x.astype(">f4"), "byte order"),
                  ("object dtype", np.array([1, "a"], dtype=object), "object"),
                  ("dtype= of another size", x, "same size")]
    for allreduce in (False, True):
        with dreduce.Context(device="cpu", cpu_threads=1, allreduce=allreduce) as ctx:
            tag = "allreduce" if allreduce else "reduce"

            def call(a, op="sum", **kw):
                return lambda: ctx.reduce(a, op, **kw)
            for label, a, match in bad_inputs:
                kw = {"dtype": "float64"} if label.startswith("dtype=") else {}
                expect_raise(f"{tag} {label} on every rank", dreduce.UsageError, call(a, **kw), True, match)
                still_works(ctx, f"{tag} {label} on every rank")
                # the same on the last rank only: it raises; the rank the result goes to learns that it failed
                mine = a if RANK == SIZE - 1 else x
                mkw = kw if RANK == SIZE - 1 else {}
                expect_raise(f"{tag} {label} on rank {SIZE - 1} only", dreduce.UsageError, call(mine, **mkw),
                             everywhere=RANK == SIZE - 1 or expects_result(ctx))
                still_works(ctx, f"{tag} {label} on one rank")
            expect_raise(f"{tag} non-contiguous is a ValueError", ValueError, call(x[::2]), True)
            expect_raise(f"{tag} bad op name", dreduce.UsageError, call(x, "mean"), True, "'mean'")
            expect_raise(f"{tag} op not a string", dreduce.UsageError, call(x, 3), True)
            expect_raise(f"{tag} bxor of float32", dreduce.UsageError, call(x, "bxor"), True, "bxor")
            expect_raise(f"{tag} band of float64 on one rank", dreduce.UsageError,
                         call(x.astype(np.float64) if RANK == 0 else x.astype(np.int64), "band"),
                         everywhere=RANK == 0 or expects_result(ctx))
            still_works(ctx, f"{tag} bitwise")
            expect_raise(f"{tag} acc unlike the context's", dreduce.UsageError, call(x, acc="exact"), True,
                         "acc='exact' differs from the context's acc='wide'")
            expect_raise(f"{tag} acc unlike the context's on one rank", dreduce.UsageError,
                         call(x, acc="native" if RANK == SIZE - 1 else "wide"),
                         everywhere=RANK == SIZE - 1 or expects_result(ctx))
            expect_raise(f"{tag} allreduce unlike the context's", dreduce.UsageError,
                         call(x, allreduce=not allreduce), True, "allreduce")
            check(f"{tag} acc and allreduce equal to the context's",
                  (ctx.reduce(x, acc="wide", allreduce=allreduce) is None) == (not expects_result(ctx)))
            still_works(ctx, f"{tag} acc")
            if SIZE > 1:  # ranks disagreeing: every rank the result goes to raises, none waits
                other = x.astype(np.float64) if RANK == 1 else x
                expect_raise(f"{tag} dtype differs on rank 1", dreduce.UsageError, call(other), expects_result(ctx),
                             "dtype")
                still_works(ctx, f"{tag} dtype differs")
                expect_raise(f"{tag} op differs on rank 1", dreduce.UsageError,
                             call(x, "max" if RANK == 1 else "sum"), expects_result(ctx), "op")
                still_works(ctx, f"{tag} op differs")
                if NEW_OPS_ON:
                    expect_raise(f"{tag} argmax without prepare or first", dreduce.UsageError, call(x, "argmax"),
                                 True, "prepare")
                    still_works(ctx, f"{tag} argmax without prepare")
            expect_raise(f"{tag} first= negative", dreduce.UsageError, call(x, "sum", first=-1), True, "first")
            expect_raise(f"{tag} prepare bad op", dreduce.UsageError, lambda: ctx.prepare(x, "mean"), True, "mean")
            expect_raise(f"{tag} prepare(count) without dtype", dreduce.UsageError, lambda: ctx.prepare(10, "sum"),
                         True, "dtype")
            expect_raise(f"{tag} prepare bad dtype on one rank", dreduce.UsageError,
                         lambda: ctx.prepare(10, "sum", dtype="complex64" if RANK == 0 else "float32"), True)
            ctx.prepare(10, "sum", dtype="float32")
            ctx.prepare(x, "max")
            ok(f"{tag} prepare")
            still_works(ctx, f"{tag} prepare")
    # a bad Context value on one rank: every rank's creation fails, none waits
    expect_raise("Context bad device on every rank", dreduce.UsageError,
                 lambda: dreduce.Context(device="tpu"), True, "device='tpu'")
    expect_raise("Context bad device on one rank", dreduce.UsageError,
                 lambda: dreduce.Context(device="tpu" if RANK == SIZE - 1 else "cpu"), True)
    expect_raise("Context bad block (the library's check)", dreduce.UsageError,
                 lambda: dreduce.Context(device="cpu", block=33), True, "cfg.block is 33")
    if SIZE > 1:
        expect_raise("Context acc differs between ranks", dreduce.UsageError,
                     lambda: dreduce.Context(device="cpu", acc="exact" if RANK == 1 else "wide"), True)
    expect_raise("Context timeout not a number", dreduce.UsageError,
                 lambda: dreduce.Context(device="cpu", timeout="soon"), True, "timeout")


# ---- lifetime and timings
def lifetime():
    with dreduce.Context(device="cpu") as ctx:
        check("context manager: open inside", not ctx.closed and ctx.device == "cpu" and ctx.gpu is None)
        ctx.reduce(np.ones(1000, np.float64))
        t = ctx.timings()
        keys = {"passes", "pass_ms", "local_ms", "load_ms", "read_ms", "stage_ms", "node_ms", "global_ms",
                "bcast_ms", "total_ms", "launch_ms", "chunks", "bytes", "depth"}
        check("timings keys", keys <= set(t), f"missing {keys - set(t)}")
        check("timings total_ms", isinstance(t["total_ms"], float) and t["total_ms"] > 0, f"{t['total_ms']!r}")
        check("timings local_ms", t["local_ms"] >= 0, f"{t['local_ms']!r}")
        check("timings bytes", t["bytes"] == 8000, f"{t['bytes']!r}")
        check("timings node level", math.isnan(t["node_ms"]) == (SIZE == 1), f"node_ms {t['node_ms']!r}")
        check("combine_path is text", isinstance(ctx.combine_path, str) and ctx.combine_path)
        i = ctx.info()
        check("info: rank and size", (i["rank"], i["nranks"]) == (RANK, SIZE), f"{i['rank']}/{i['nranks']}")
        check("info: the CPU backend", i["gpu"] == -1 and i["device_name"] == "cpu", f"{i['gpu']} {i['device_name']}")
        check("info: threads", isinstance(i["threads"], int) and i["threads"] >= 1, f"{i['threads']!r}")
        check("info: host", i["host"] == MPI.Get_processor_name(), f"{i['host']!r}")
        check("info: local ranks", 0 <= i["local_rank"] < i["local_size"] <= SIZE,
              f"{i['local_rank']}/{i['local_size']}")
        check("info: affinity is a CPU list", i["affinity"] != "" and set(i["affinity"]) <= set("0123456789,-"),
              f"{i['affinity']!r}")
        check("info: flags are bools", all(isinstance(i[k], bool) for k in ("widened", "bound_cpu", "emulated")))
        check("repr", "dreduce.Context" in repr(ctx))
    check("context manager: closed after", ctx.closed and "closed" in repr(ctx))
    expect_raise("reduce after close", dreduce.UsageError, lambda: ctx.reduce(np.ones(3)), True, "closed")
    ctx.close()  # twice: nothing
    ok("close twice")
    try:
        with dreduce.Context(device="cpu") as ctx2:
            raise KeyError("inside")
    except KeyError:
        check("context manager: closed after an exception", ctx2.closed)
    c = dreduce.Context(MPI.COMM_WORLD.py2f(), device="cpu")  # a Fortran handle
    check("Context from a Fortran handle", c.reduce(np.ones(2)) == (2.0 * SIZE if RANK == 0 else None))
    c.close()
    sub = COMM.Split(RANK % 2, RANK)  # a communicator of its own
    with dreduce.Context(sub, device="cpu", allreduce=True) as cs:
        check("Context on a split communicator", cs.reduce(np.ones(3)) == 3.0 * sub.Get_size() and
              cs.size == sub.Get_size())
    sub.Free()
    e = dreduce.UsageError("x", 2, "c")
    check("exception classes", isinstance(e, dreduce.Error) and isinstance(e, ValueError) and
          issubclass(dreduce.RuntimeError, RuntimeError) and issubclass(dreduce.RuntimeError, dreduce.Error))


def binding():
    """bind="auto" binds the calling thread to the rank's share, also after the caller narrowed its own thread
    following an earlier bind="auto" context, while another thread keeps the widened set (the process's binding, the
    union of its threads', then still reads as the share)."""
    if not hasattr(os, "sched_getaffinity"):
        return
    start = os.sched_getaffinity(0)
    try:
        with dreduce.Context(device="cpu", bind="auto") as c1:
            share = c1.info()["share"]
        widened = os.sched_getaffinity(0)
        # decided by every rank together: the contexts below are collective, and shares may differ in size
        if COMM.allreduce(len(widened) if share else 0, op=MPI.MIN) < 2:
            ok("bind auto after a narrowed thread: a rank's share of one CPU (or none), nothing to narrow")
            return
        hold = threading.Event()
        other = threading.Thread(target=hold.wait)  # created now: it keeps the widened set
        other.start()
        try:
            os.sched_setaffinity(0, {min(widened)})
            with dreduce.Context(device="cpu", bind="auto") as c2:
                i = c2.info()
                check("bind auto after a narrowed thread: bound to the share again",
                      i["affinity"] == share and i["bound_cpu"] and os.sched_getaffinity(0) == widened,
                      f"affinity {i['affinity']!r} share {share!r} bound_cpu {i['bound_cpu']} thread "
                      f"{sorted(os.sched_getaffinity(0))} want {sorted(widened)}")
                check("bind auto after a narrowed thread: threads", i["threads"] == len(widened), f"{i['threads']}")
                got = c2.reduce(np.arange(1000, dtype=np.float64))
                check("bind auto after a narrowed thread: result", got == (499500.0 * SIZE if RANK == 0 else None),
                      f"{got!r}")
        finally:
            hold.set()
            other.join()
    finally:
        os.sched_setaffinity(0, start)


NEW_OPS_ON = True


def same_mpi():
    """None, or why mpi4py's MPI is not libdreduce's (then nothing here can run: a skip, saying so)."""
    try:
        dreduce._context._check_same_mpi()
    except dreduce.RuntimeError as e:
        return str(e)
    return None


def main():
    global verbose, NEW_OPS_ON
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--without-new-ops", action="store_true", help="leave out stats/argmin/argmax (issue #37)")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    verbose = a.verbose
    NEW_OPS_ON = not a.without_new_ops
    why = same_mpi()
    if why:
        if RANK == 0:
            print(f"SKIP: {why}")
        return 77
    for part in (matrix, nan_bits, inputs, errors, lifetime, binding):
        try:
            part(NEW_OPS_ON) if part is matrix else part()
        except Exception:  # noqa: BLE001: an unexpected error: report, then end every rank (others may wait)
            fail(part.__name__, "unexpected exception\n" + traceback.format_exc())
            sys.stdout.flush()
            COMM.Abort(1)
    counts = COMM.gather((passed, len(failures)), root=0)
    if RANK == 0:
        p, f = sum(c[0] for c in counts), sum(c[1] for c in counts)
        print(f"python_cpu np {SIZE}{' (without stats/argmin/argmax)' if not NEW_OPS_ON else ''}: "
              f"{p} passed, {f} failed", flush=True)
    return 1 if COMM.allreduce(len(failures)) else 0


if __name__ == "__main__":
    sys.exit(main())
