#!/usr/bin/env python3
"""Write the --input test files and the exact answers for them.

Usage:
  make_inputs.py OUTDIR [--seed S]

Writes into OUTDIR (created if missing):
  - good files: .npy (format versions 1.0, 2.0, 3.0; numpy's own header layout) and raw binary, of int32, int64,
    uint32, uint64, float32, float64, float16 (and raw bfloat16), with seeded random values, sizes including primes
    (1000003, 65537, 1021) and others not divisible by 2, 3 or 4, shapes (), (0,), N-d C order and Fortran order,
    a .npy file followed by a second array (ignored, as numpy does), a .npy file named .dat (found by its magic),
    and float files with NaN, infinities and signed zeros;
  - exact-sum files (names exact_*, for --acc exact): cancellation of values near the float64 range, values
    2^60 apart, exponents over -1000..1000, signed zeros, subnormals, sums exactly halfway between two float64s,
    sums at the overflow threshold, infinities and NaNs, float16 and bfloat16 over their whole range, and random
    data; each with the exact sum rounded once to float64 (its bits), and min/max (and integer sums) with
    --acc exact too;
  - bad files: truncated data, truncated header, corrupt magic, oversized header length, version 4.0, '<c8', '|O',
    '>f4', a raw size that is not a whole number of elements, --offset past the end, plus cases that are bad only
    through their options (type disagreement, raw without --type, --offset on .npy, bxor on floats, a directory,
    a missing file);
  - manifest.json (for run_inputs.py) and manifest.txt (for test_input_read.c), one entry per case. A good entry
    may carry "variants": runs with extra arguments (["--acc", "exact"]) and their own answer ("bits": the float64
    result's bits, to match exactly); a bad entry whose error comes from the options (a product with --acc exact)
    has "error_re", a regular expression its one line must match, and "names_file": false, and is left out of
    manifest.txt (test_input_read.c only opens the files), as are the exact_* files (sums, not formats: their
    formats and types are the other files').

Expected values are computed here, exactly, with Python integers and fractions.Fraction, by the rules dreduce
documents (src/common/accum.h, dr_acc_select): integer sums wrap modulo 2^64 in 64-bit accumulators (32-bit
types widen for sum), bitwise ops in the type's width, float sums accumulate in float64 ('wide', the default),
min/max propagate NaN and order -0 below +0. Float values are drawn on grids coarse enough that every partial sum
of the float64 accumulator is exact, whatever the order and the number of ranks: the exact sum (a Fraction,
written to the manifest) is then the one right answer. One float32 file has full-precision random values instead;
its sum is checked against the exact Fraction with the bound n * 2^-53 * sum|x| of any float64 summation order.

--acc exact: the exact sum (an integer in units of 2^-1074) rounded once to float64, to nearest with ties to even, by
round_units() (integer arithmetic), cross-checked against CPython's correctly rounded float(Fraction) (whose
OverflowError means a rounded magnitude of 2^1024 or more: an infinity); a NaN term or +inf with -inf give NaN, an
infinity gives itself, and a zero sum is -0.0 only when every term (at least one) is -0.0.

Python 3 standard library only (numpy is not needed), except for the numpy_* files (stats, argmin, argmax: written
by numpy.save, the answers NumPy's own argmax, argmin, mean and var), which are left out where NumPy is not
importable.
"""

import argparse
import json
import math
import os
import random
import struct
import sys
from fractions import Fraction

MAGIC = b"\x93NUMPY"
DESCR = {"int32": "<i4", "int64": "<i8", "uint32": "<u4", "uint64": "<u8",
         "float32": "<f4", "float64": "<f8", "float16": "<f2",
         "int8": "|i1", "uint8": "|u1", "int16": "<i2", "uint16": "<u2", "bool": "|b1"}
PACK = {"int32": "<i", "int64": "<q", "uint32": "<I", "uint64": "<Q", "float32": "<f", "float64": "<d",
        "float16": "<e", "int8": "<b", "uint8": "<B", "int16": "<h", "uint16": "<H", "bool": "<B"}
SIZE = {"int32": 4, "int64": 8, "uint32": 4, "uint64": 8, "float32": 4, "float64": 8, "float16": 2, "bfloat16": 2,
        "int8": 1, "uint8": 1, "int16": 2, "uint16": 2}
INT_BITS = {"int32": (32, True), "int64": (64, True), "uint32": (32, False), "uint64": (64, False),
            "int8": (8, True), "uint8": (8, False), "int16": (16, True), "uint16": (16, False)}


# ---- writing -------------------------------------------------------------------------------------------------

def npy_header(descr, shape, fortran=False, version=1):
    """The bytes before the data, as numpy.lib.format writes them: the dict, spaces to a multiple of 64, '\\n'."""
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %r, }" % (descr, "True" if fortran else "False",
                                                                   tuple(shape))
    pre = 10 if version == 1 else 12
    total = -(-(pre + len(d) + 1) // 64) * 64
    text = (d + " " * (total - pre - len(d) - 1) + "\n").encode("latin1" if version < 3 else "utf8")
    length = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return MAGIC + bytes([version, 0]) + length + text


def encode(dtype, values):
    if dtype == "bfloat16":  # the upper half of the float32 (values are exact in bfloat16)
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:] for v in values)
    return struct.pack("<%d%s" % (len(values), PACK[dtype][1]), *values)


# ---- values ------------------------------------------------------------------------------------------------

def grid_values(rng, dtype, n):
    """Random values whose float64 partial sums are all exact (floats), or any bit pattern (integers)."""
    if dtype in INT_BITS:
        bits, signed = INT_BITS[dtype]
        out = [rng.getrandbits(bits) for _ in range(n)]
        return [v - (1 << bits) if signed and v >> (bits - 1) else v for v in out]
    # value = k * 2^-e with |k| < 2^b: exact in the type, and n * 2^b < 2^53 keeps float64 sums exact.
    b, e = {"float32": (20, 10), "float64": (30, 20), "float16": (10, 4), "bfloat16": (7, 3)}[dtype]
    return [math.ldexp(rng.randrange(-(1 << b) + 1, 1 << b), -e) for _ in range(n)]


def full_float32(rng, n):
    """float32 values with every significand bit random, exponents spread over 2^-20..2^20."""
    out = []
    for _ in range(n):
        m = (1 << 23) | rng.getrandbits(23)
        v = math.ldexp(m, rng.randrange(-20, 21) - 23)
        out.append(-v if rng.getrandbits(1) else v)
    return out


# ---- expected answers --------------------------------------------------------------------------------------

def acc_kind(dtype, op):
    widen = op in ("sum", "prod")
    if dtype in ("int32", "uint32", "int8", "uint8", "int16", "uint16"):  # 8/16-bit min/max/bitwise: in 32 bits
        signed = INT_BITS[dtype][1]
        return ("int64" if signed else "uint64") if widen else ("int32" if signed else "uint32")
    if dtype in INT_BITS or dtype == "float64":
        return dtype
    return "float64" if widen else "float32"


def wrap(v, bits, signed):
    v %= 1 << bits
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def float_key_min(a, b):
    """accum.h's min: NaN wins, -0 below +0."""
    if a != a or b != b:
        return float("nan")
    if a == b:
        return a if math.copysign(1, a) < 0 else b
    return min(a, b)


def float_key_max(a, b):
    if a != a or b != b:
        return float("nan")
    if a == b:
        return a if math.copysign(1, a) > 0 else b
    return max(a, b)


def exact_sums(values):
    """(sum, sum of |x|) of finite floats as Fractions: integers in units of 2^-1074 (every double is one)."""
    total = total_abs = 0
    for v in values:
        n, d = v.as_integer_ratio()  # d is a power of two
        k = n << (1074 - (d.bit_length() - 1))
        total += k
        total_abs += abs(k)
    return Fraction(total, 1 << 1074), Fraction(total_abs, 1 << 1074)


def expected(dtype, op, values):
    """(value, accumulator name, extra): ints exactly; floats as the float the accumulator must hold, with
    extra = {'exact': 'p/q'} for finite sums (and 'bound' where the sum is not exact in float64)."""
    acc = acc_kind(dtype, op)
    if not values and op in ("min", "max", "band", "bor", "bxor"):
        return "none", acc, {}  # an array with no element has no min, max or bitwise result (NumPy raises)
    if acc in INT_BITS:
        bits, signed = INT_BITS[acc]
        if op == "sum":
            return wrap(sum(values), bits, signed), acc, {}
        if op == "min":
            return (min(values) if values else wrap((1 << (bits - 1 if signed else bits)) - 1, bits, signed)), acc, {}
        if op == "max":
            return (max(values) if values else (-(1 << (bits - 1)) if signed else 0)), acc, {}
        if op == "bxor":
            x = 0
            for v in values:
                x ^= v % (1 << bits)
            return wrap(x, bits, signed), acc, {}
        raise ValueError(op)
    if op in ("min", "max"):
        r = float("inf") if op == "min" else float("-inf")
        f = float_key_min if op == "min" else float_key_max
        for v in values:
            r = f(r, v)
        return r, acc, {}
    # sum, in float64
    if any(v != v for v in values) or (float("inf") in values and float("-inf") in values):
        return float("nan"), acc, {}
    if any(math.isinf(v) for v in values):
        return (float("inf") if float("inf") in values else float("-inf")), acc, {}
    exact, abs_sum = exact_sums(values)
    value = float(exact)
    extra = {"exact": "%d/%d" % (exact.numerator, exact.denominator)}
    if Fraction(value) != exact:
        extra["bound"] = float(Fraction(len(values), 1 << 53) * abs_sum)
    elif value == 0:
        value = 0.0  # +0: the sum starts at +0, and -0 + +0 is +0
    return value, acc, extra


def round_units(k):
    """k * 2^-1074 (k an integer) rounded once to float64, to nearest, ties to even; +-inf from 2^1024 up."""
    m = abs(k)
    sign = -1.0 if k < 0 else 1.0
    if m < 1 << 53:  # below 2^53 units: subnormal, or the lowest binade of the normals; exact
        return sign * math.ldexp(m, -1074)
    shift = m.bit_length() - 53
    q, r = divmod(m, 1 << shift)  # q: the top 53 bits, r: what is below them
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1  # may reach 2^53: one bit longer, still exact
    if q.bit_length() + shift - 1074 > 1024:  # q 2^(shift - 1074) >= 2^1024
        return sign * math.inf
    return sign * math.ldexp(q, shift - 1074)


def exact_units(values):
    """The exact sum of finite floats, as an integer number of 2^-1074."""
    total = 0
    for v in values:
        n, d = v.as_integer_ratio()
        total += n << (1074 - (d.bit_length() - 1))
    return total


def exact_sum(values):
    """(float64, extra) for --acc exact: the exact sum rounded once, IEEE's rules for NaN, infinities and zeros."""
    if any(v != v for v in values) or (math.inf in values and -math.inf in values):
        return math.nan, {}
    if math.inf in values or -math.inf in values:
        return (math.inf if math.inf in values else -math.inf), {}
    k = exact_units(values)
    if k == 0:
        all_neg_zero = values and all(math.copysign(1.0, v) < 0 for v in values)
        return (-0.0 if all_neg_zero else 0.0), {"exact": "0"}
    value = round_units(k)
    exact = Fraction(k, 1 << 1074)
    try:  # CPython's int / int is correctly rounded too, and raises where the rounded value is not finite
        check = float(exact)
    except OverflowError:
        check = math.inf if k > 0 else -math.inf
    if struct.pack("<d", check) != struct.pack("<d", value):
        raise AssertionError("round_units and float(Fraction) disagree: %r, %r" % (value, check))
    return value, {"exact": "%d/%d" % (exact.numerator, exact.denominator)}


def f64_bits_text(v):
    if v != v:
        return "0x7fffffffffffffff"  # the canonical NaN, the one dreduce gives (the JSON prints any NaN as nan)
    return "0x%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]


def value_text(v):
    if isinstance(v, str):  # "none"
        return v
    if isinstance(v, int):
        return str(v)
    if v != v:
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


# ---- exact sums (--acc exact) ------------------------------------------------------------------------------

EXACT = ["--acc", "exact"]
FLOATS = ("float16", "bfloat16", "float32", "float64")
DBL_MAX = sys.float_info.max  # 2^1024 - 2^971
TINY = math.ldexp(1.0, -1074)  # the smallest subnormal


def variant(dtype, op, args, values):
    """A run of the file with extra arguments and its answer. A float sum with --acc exact: the exact sum rounded
    once (float64, its bits to match); anything else with --acc exact: the same answer as without it."""
    if "exact" in args and op == "sum" and dtype in FLOATS:
        v, extra = exact_sum(values)
        return dict(op=op, args=list(args), value=value_text(v), acc="float64", bits=f64_bits_text(v), **extra)
    v, acc, extra = expected(dtype, op, values)
    return dict(op=op, args=list(args), value=value_text(v), acc=acc, **extra)


def as_f32(values):
    """Each value rounded to the nearest float32."""
    return list(struct.unpack("<%df" % len(values), struct.pack("<%df" % len(values), *values)))


def f16_values(patterns):
    """float16 bit patterns as floats."""
    return list(struct.unpack("<%de" % len(patterns), struct.pack("<%dH" % len(patterns), *patterns)))


def bf16_values(patterns):
    """bfloat16 bit patterns as floats: the upper half of a float32."""
    n = len(patterns)
    return list(struct.unpack("<%df" % n, struct.pack("<%dI" % n, *[b << 16 for b in patterns])))


def random_f64(rng, lo, hi):
    """A float64 with 53 random significand bits and exponent in [lo, hi] (|x| in [2^lo, 2^(lo+1))), random sign."""
    v = math.ldexp((1 << 52) | rng.getrandbits(52), rng.randint(lo, hi) - 52)
    return -v if rng.getrandbits(1) else v


def with_junk(rng, pieces, pairs):
    """pieces, and `pairs` pairs x, -x of float64s from 2^-1000 to 2^1000 (their sum is zero), shuffled."""
    out = list(pieces)
    for _ in range(pairs):
        x = random_f64(rng, -1000, 1000)
        out += [x, -x]
    rng.shuffle(out)
    return out


def exact_files(rng, add):
    """The --acc exact cases: add(name, dtype, values, raw=False, ops=(), data=None). Each file runs its exact sum
    (and the variants given) at every rank count; plain ops only where `ops` names them (the random files: their
    wide sum beside the exact one), since min and max of these values are covered by the other files."""
    # Cancellation near the top of the range around 60,000 small terms (uniform in [0, 2/3), full significands,
    # sum near 20000): pairs b, -b and triplets a + b - c = 0 of values over 1e307 (c - a exact by Sterbenz), and
    # ten DBL_MAX first and ten -DBL_MAX last, so the first and the last rank's partials are far beyond the range.
    small = [rng.random() * (2.0 / 3.0) for _ in range(60000)]
    big = []
    for _ in range(40):
        b = rng.uniform(1e307, DBL_MAX)
        big += [b, -b]
    for _ in range(20):
        c = rng.uniform(1e308, DBL_MAX)
        x = rng.uniform(c / 2, c)
        y = c - x
        assert Fraction(x) + Fraction(y) == Fraction(c)
        sign = -1.0 if rng.getrandbits(1) else 1.0
        big += [sign * x, sign * y, -sign * c]
    mixed = small + big
    rng.shuffle(mixed)
    add("exact_f64_cancel_1e308_60160.npy", "float64", [DBL_MAX] * 10 + mixed + [-DBL_MAX] * 10,
        variants=[("min", EXACT), ("max", EXACT)])
    # 2^60, -2^60, 1 and 2^-60 many times, shuffled (float32): 3 + 40000 * 2^-60, rounded to 3 + 78 * 2^-51.
    vals = [2.0 ** 60] * 30000 + [-(2.0 ** 60)] * 30000 + [1.0] * 3 + [2.0 ** -60] * 40000
    rng.shuffle(vals)
    add("exact_f32_2p60_100003.npy", "float32", vals, variants=[("min", EXACT), ("max", EXACT)])
    # Exponents over -1000..1000 with random signs; then the same with the negation of every value over 1 added,
    # so the sum is that of the values below 1 (down to 2^-1000 and the sticky bits they make).
    vals = [random_f64(rng, -1000, 1000) for _ in range(20011)]
    add("exact_f64_exponents_20011.npy", "float64", vals)
    vals += [-v for v in vals if abs(v) >= 1.0]
    rng.shuffle(vals)
    add("exact_f64_exponents_cancel.npy", "float64", vals)
    # Signed zeros: -0.0 only when every term is -0.0 (one term: the other ranks have none, their partials must not
    # count as +0.0); a +0.0 anywhere, or terms that cancel, give +0.0.
    add("exact_f64_neg_zeros_1001.npy", "float64", [-0.0] * 1001)
    add("exact_f16_neg_zeros_7.bin", "float16", [-0.0] * 7, raw=True)
    add("exact_f32_neg_zero_1.npy", "float32", [-0.0])
    add("exact_bf16_neg_zeros_3.bin", "bfloat16", [-0.0] * 3, raw=True)
    add("exact_f64_neg_zeros_then_pos_zero.npy", "float64", [-0.0] * 500 + [0.0])
    vals = [-0.0] * 300 + [0.0] * 300
    rng.shuffle(vals)
    add("exact_f32_mixed_zeros_600.npy", "float32", vals)
    add("exact_f64_cancel_to_zero.npy", "float64", [-1.5, 1.5, -0.0, -0.0, 1e300, -1e300, -0.0, TINY, -TINY])
    # Subnormals only: float64 with random signs (a sum past 2^53 units, rounded), all positive (a normal sum),
    # small ones (a subnormal sum, exact); float32 and float16 subnormals.
    def sub64(bits):
        return [math.ldexp(rng.getrandbits(bits) or 1, -1074) * (-1 if rng.getrandbits(1) else 1)
                for _ in range(10007)]
    add("exact_f64_subnormal_10007.npy", "float64", sub64(52))
    add("exact_f64_subnormal_pos_10007.npy", "float64", [abs(v) for v in sub64(52)])
    add("exact_f64_subnormal_small_10007.npy", "float64", sub64(20))
    add("exact_f32_subnormal_10007.npy", "float32",
        [math.ldexp(rng.getrandbits(23) or 1, -149) * (-1 if rng.getrandbits(1) else 1) for _ in range(10007)])
    add("exact_f16_subnormal_4099.bin", "float16",
        f16_values([(rng.getrandbits(10) or 1) | (rng.getrandbits(1) << 15) for _ in range(4099)]), raw=True)
    # Exactly halfway between two float64s, built from pieces among cancelling pairs: ties go to the even one.
    two53 = 2.0 ** 53
    ties = [
        ("2p53_plus_1", [2.0 ** 52, 2.0 ** 52, 0.5, 0.25, 0.125, 0.0625, 0.0625]),  # -> 2^53
        ("2p53_plus_3", [two53, 1.0, 1.0, 0.5, 0.5]),  # -> 2^53 + 4
        ("2p53_plus_1_plus_tiny", [two53, 1.0, TINY]),  # just above the tie -> 2^53 + 2
        ("2p53_plus_1_minus_tiny", [two53, 1.0, -TINY]),  # just below -> 2^53
        ("neg_2p53_plus_1", [-two53, -0.5, -0.5]),  # -> -2^53
        ("neg_2p53_plus_3", [-two53, -2.0, -1.0]),  # -> -(2^53 + 4)
        ("2p53_minus_half", [2.0 ** 52, 2.0 ** 52 - 1.0, 0.5]),  # 2^53 - 1 is odd -> 2^53 (a carry out of the bits)
    ]
    for e, odd in ((-1000, 1), (-601, 0), (-3, 1), (500, 0), (960, 1)):  # at various bit offsets in the words
        m = (1 << 52) | rng.getrandbits(52)
        m = (m | 1) if odd else (m & ~1)
        ties.append(("%s_%d" % ("odd" if m & 1 else "even", e), [math.ldexp(m, e), math.ldexp(1.0, e - 1)]))
    for name, pieces in ties:
        add("exact_f64_tie_%s.npy" % name, "float64", with_junk(rng, pieces, 250))
    # The overflow threshold: 2^1024 - 2^970 (DBL_MAX + half its ulp, a tie to the even 2^1024) rounds to inf, one
    # unit of 2^-1074 less to DBL_MAX; both signs; far past the range; back into it.
    add("exact_f64_overflow_tie_pos.npy", "float64", with_junk(rng, [DBL_MAX, 2.0 ** 970, DBL_MAX, -DBL_MAX], 100))
    add("exact_f64_overflow_below_pos.npy", "float64", with_junk(rng, [DBL_MAX, 2.0 ** 970, -TINY], 100))
    add("exact_f64_overflow_tie_neg.npy", "float64", with_junk(rng, [-DBL_MAX, -(2.0 ** 970)], 100))
    add("exact_f64_overflow_below_neg.npy", "float64", with_junk(rng, [-DBL_MAX, -(2.0 ** 970), TINY], 100))
    add("exact_f64_overflow_2p1024.npy", "float64", with_junk(rng, [2.0 ** 1023, 2.0 ** 1023, -1.0, 1.0], 100))
    vals = [DBL_MAX] * 1000 + [-DBL_MAX] * 997
    rng.shuffle(vals)
    add("exact_f64_overflow_far_1997.npy", "float64", vals)
    vals = [DBL_MAX] * 1000 + [-DBL_MAX] * 999 + [-1e300]
    rng.shuffle(vals)
    add("exact_f64_overflow_back_in_range.npy", "float64", vals)
    # Infinities and NaNs (a NaN's sign and payload do not matter: the result is the canonical NaN).
    fin = [random_f64(rng, -20, 20) for _ in range(1000)]
    add("exact_f64_inf_minus_inf.npy", "float64", fin[:400] + [math.inf] + fin[400:700] + [-math.inf] + fin[700:])
    add("exact_f32_nan_last.npy", "float32", as_f32(fin) + [math.nan])
    payload = struct.pack("<%dd" % len(fin[:500]), *fin[:500]) + struct.pack("<Q", 0xfff0000000000001) + \
        struct.pack("<%dd" % len(fin[500:]), *fin[500:])
    add("exact_f64_nan_payload.bin", "float64", fin[:500] + [math.nan] + fin[500:], raw=True, data=payload)
    add("exact_f64_inf_with_overflow_neg.npy", "float64", [-DBL_MAX] * 3 + [math.inf] + [-DBL_MAX] * 3 + fin)
    add("exact_f64_neg_inf_with_overflow_pos.npy", "float64", fin + [DBL_MAX] * 5 + [-math.inf])
    add("exact_f64_nan_and_infs.npy", "float64", [math.nan, math.inf, -math.inf])
    add("exact_f32_inf_only.npy", "float32", [math.inf])
    add("exact_f16_inf.bin", "float16", [65504.0] * 100 + [math.inf] + [-65504.0] * 7, raw=True)
    add("exact_bf16_nan.bin", "bfloat16", bf16_values([0x3f80] * 50 + [0x7fc0] + [0xff80, 0x7f80] + [0xbf80] * 9),
        raw=True)
    # float16 and bfloat16 over their whole range. float16: positive values, two thirds in the top binade, so the
    # sum (near 2^31.5) needs more than 53 bits from 2^-24 up; with cancelling pairs. bfloat16: random finite
    # patterns of every exponent (sums near 2^127 with sticky bits down to 2^-133); with every value over 2^-20
    # cancelled, leaving the sum of the small ones.
    pats = [(30 << 10) | rng.getrandbits(10) if rng.random() < 2 / 3 else rng.randrange(0, 31 << 10)
            for _ in range(98317)]
    add("exact_f16_positive_98317.npy", "float16", f16_values(pats))
    pats = [rng.randrange(0, 31 << 10) | (rng.getrandbits(1) << 15) for _ in range(20011)]
    vals = f16_values(pats)
    vals += [-v for v in vals if abs(v) >= 1.0]
    rng.shuffle(vals)
    add("exact_f16_cancel.npy", "float16", vals)
    pats = [rng.randrange(0, 255 << 7) | (rng.getrandbits(1) << 15) for _ in range(65537)]
    vals = bf16_values(pats)
    add("exact_bf16_range_65537.bin", "bfloat16", vals, raw=True)
    vals = vals + [-v for v in vals if abs(v) >= 2.0 ** -20]
    rng.shuffle(vals)
    add("exact_bf16_cancel.bin", "bfloat16", vals, raw=True)
    # Random data: float32 from a normal distribution, float64 with exponents over -60..60 and random signs.
    add("exact_f32_normal_200003.npy", "float32", as_f32([rng.gauss(0.0, 1.0) for _ in range(200003)]),
        ops=("sum", "min", "max"))
    add("exact_f64_random_100003.npy", "float64", [random_f64(rng, -60, 60) for _ in range(100003)],
        ops=("sum", "min", "max"))


# ---- stats, argmin, argmax: files written by NumPy, answers from NumPy (issue #37) --------------------------

def numpy_files(outdir, seed, good):
    """Files np.save writes, with numpy.argmax / numpy.argmin (the first occurrence; the first NaN where there is
    one) and NumPy's float64 mean and variance as the answers (entries with "every_np": run_inputs.py runs all
    their ops at 1..3 ranks). Left out, with a note, where NumPy is not importable."""
    try:
        import numpy as np
    except ImportError:
        print("make_inputs.py: NumPy is not importable here: the numpy_* files (stats, argmin, argmax) are left out")
        return
    g = np.random.default_rng(seed)

    def add(name, a, note):
        path = os.path.join(outdir, name)
        np.save(path, a)
        with open(path, "rb") as f:
            head = f.read(12)
        if head[6] == 1:  # format 1.0: a 2-byte header length, else 4
            offset = 10 + struct.unpack("<H", head[8:10])[0]
        else:
            offset = 12 + struct.unpack("<I", head[8:12])[0]
        kind = a.dtype.kind  # 'b' bool (read as uint8), 'i', 'u', 'f'
        cls = "float64" if kind == "f" else "int64" if kind == "i" else "uint64"
        dtype = "uint8" if kind == "b" else str(a.dtype)
        exp = {}
        for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
            i = int(fn(a))
            v = float(a[i]) if kind == "f" else int(a[i])
            exp[op] = dict(value=value_text(v), acc=cls + "+index", index=i)
        a64 = a.astype(np.float64)
        with np.errstate(invalid="ignore"):
            mean, var, var1 = float(np.mean(a64)), float(np.var(a64)), float(np.var(a64, ddof=1))
            mean_abs = float(np.mean(np.abs(a64)))
        st = dict(acc="stats(%s)" % cls, count=int(a.size), mean=value_text(mean), var_pop=value_text(var),
                  var_sample=value_text(var1), min=value_text(float(np.min(a)) if kind == "f" else int(np.min(a))),
                  max=value_text(float(np.max(a)) if kind == "f" else int(np.max(a))),
                  # NumPy's float64 answers against ours: the mean within 1e-12 of mean |x|, the variances 1e-9
                  mean_bound=1e-12 * mean_abs if math.isfinite(mean_abs) else 0.0, var_rel=1e-9)
        if kind != "f":
            st["sum"] = str(sum(int(x) for x in a.tolist()))  # exactly (NumPy's would wrap or round)
        exp["stats"] = st
        good.append(dict(file=name, dtype=dtype, count=int(a.size), data_offset=offset, args=[], expect=exp,
                         note=note, every_np=True))

    # float32 around 1 with the largest and the smallest value each planted again earlier: the first one wins.
    a = (g.standard_normal(50021) * 2.0 + 1.0).astype(np.float32)
    hi, lo = int(np.argmax(a)), int(np.argmin(a))
    a[g.integers(0, hi + 1)] = a[hi]
    a[g.integers(0, lo + 1)] = a[lo]
    add("numpy_float32_ties_50021.npy", a, "extremes twice: NumPy's first occurrence")
    # float64 with NaNs: argmax and argmin are the first NaN; mean and variances NaN.
    a = g.standard_normal(10007)
    a[[7000, 4001, 9000]] = np.nan
    a[100] = np.inf
    add("numpy_float64_nan_10007.npy", a, "NaNs: the first NaN for argmin and argmax")
    # int16 in -1000..1000: each extreme many times.
    add("numpy_int16_ties_30011.npy", g.integers(-1000, 1001, 30011).astype(np.int16), "many ties of each extreme")
    # bool (read as uint8 0/1): argmax the first True, argmin the first False, the mean the fraction of Trues.
    add("numpy_bool_10007.npy", g.random(10007) < 0.3, "bool: argmax the first True")
    # uint64 near 2^64: a sum past 64 bits (exact here in Python), mean and variances from NumPy's float64.
    add("numpy_uint64_big_5003.npy", (np.uint64(2 ** 64 - 2 ** 61) + g.integers(0, 2 ** 60, 5003, dtype=np.uint64)),
        "uint64 near 2^64")


# ---- the cases ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=20240607)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    rng = random.Random(a.seed)
    good, bad = [], []

    def add_good(name, dtype, values, data, offset, args, ops=None, note="", variants=()):
        path = os.path.join(a.outdir, name)
        with open(path, "wb") as f:
            f.write(data)
        if ops is None:
            ops = ["sum", "min", "max"] + (["bxor"] if dtype in INT_BITS else [])
        exp = {}
        for op in ops:
            v, acc, extra = expected(dtype, op, values)
            exp[op] = dict(value=value_text(v), acc=acc, **extra)
        entry = dict(file=name, dtype=dtype, count=len(values), data_offset=offset, args=args, expect=exp, note=note)
        if variants:
            entry["variants"] = [variant(dtype, op, vargs, values) for op, vargs in variants]
        good.append(entry)

    def add_npy(name, dtype, values, version=1, shape=None, fortran=False, tail=b"", ops=None, note="", descr=None,
                variants=()):
        head = npy_header(descr or DESCR[dtype], [len(values)] if shape is None else shape, fortran, version)
        add_good(name, dtype, values, head + encode(dtype, values) + tail, len(head), [], ops, note, variants)

    def add_raw(name, dtype, values, offset=0, ops=None, note="", variants=()):
        junk = bytes(rng.getrandbits(8) for _ in range(offset))
        args = ["--type", dtype] + (["--offset", str(offset)] if offset else [])
        add_good(name, dtype, values, junk + encode(dtype, values), offset, args, ops, note, variants)

    def add_bad(name, data, args, error, op="sum", error_re=None):
        if data is not None:
            with open(os.path.join(a.outdir, name), "wb") as f:
                f.write(data)
        entry = dict(file=name, args=args, op=op, error=error)
        if error_re:  # an error of the options: its one line matches error_re, with or without the file's name
            entry.update(error_re=error_re, names_file=False)
        bad.append(entry)

    # Large, prime sizes: not divisible by 2, 3 or 4.
    add_npy("int32_v1_1000003.npy", "int32", grid_values(rng, "int32", 1000003), 1)
    add_npy("float32_v2_1000003.npy", "float32", grid_values(rng, "float32", 1000003), 2)
    add_npy("float64_v3_65537.npy", "float64", grid_values(rng, "float64", 65537), 3, variants=[("sum", EXACT)])
    add_npy("int64_v1_65537.npy", "int64", grid_values(rng, "int64", 65537), 1)
    add_npy("uint64_v2_65537.npy", "uint64", grid_values(rng, "uint64", 65537), 2, variants=[("sum", EXACT)])
    add_npy("uint32_v3_1021.npy", "uint32", grid_values(rng, "uint32", 1021), 3)
    add_npy("float16_v1_12347.npy", "float16", grid_values(rng, "float16", 12347), 1, variants=[("sum", EXACT)])
    add_npy("float32_v1_full_100003.npy", "float32", full_float32(rng, 100003), 1, ops=["sum", "min", "max"],
            note="full-precision values: the sum is not exact in float64, checked against the bound",
            variants=[("sum", EXACT)])
    # The small integers (issue 18), and NumPy's bool read as uint8 0/1 (its sum counts the true entries).
    add_npy("int8_v1_100003.npy", "int8", grid_values(rng, "int8", 100003), 1)
    add_npy("uint8_v2_65537.npy", "uint8", grid_values(rng, "uint8", 65537), 2)
    add_npy("int16_v1_65537.npy", "int16", grid_values(rng, "int16", 65537), 1)
    add_npy("uint16_v3_1021.npy", "uint16", grid_values(rng, "uint16", 1021), 3)
    add_npy("int8_v1_3x7x5.npy", "int8", grid_values(rng, "int8", 105), shape=[3, 7, 5], variants=[("sum", EXACT)])
    add_npy("bool_v1_10007.npy", "uint8", [rng.getrandbits(1) for _ in range(10007)], descr="|b1",
            ops=["sum", "min", "max", "bxor"])
    add_raw("raw_int16_1021.bin", "int16", grid_values(rng, "int16", 1021))
    add_raw("raw_uint8_offset3_999.bin", "uint8", grid_values(rng, "uint8", 999), offset=3)
    # Small sizes, fewer elements than ranks, shapes.
    add_npy("int64_v1_scalar.npy", "int64", [-5], shape=[])
    add_npy("uint32_v1_2.npy", "uint32", [4000000000, 4000000000])
    add_npy("int32_v2_3.npy", "int32", [-2147483648, 2147483647, -1],
            variants=[("sum", EXACT), ("min", EXACT), ("bxor", EXACT)])
    add_npy("float64_v1_empty.npy", "float64", [], shape=[0], ops=["sum"], variants=[("sum", EXACT)])
    add_npy("int32_v1_empty_2x0.npy", "int32", [], shape=[2, 0], ops=["sum", "bxor"])
    add_npy("uint32_v1_2x3x5.npy", "uint32", grid_values(rng, "uint32", 30), shape=[2, 3, 5])
    add_npy("int64_v2_fortran_3x7.npy", "int64", grid_values(rng, "int64", 21), 2, shape=[3, 7], fortran=True)
    # Special float values.
    add_npy("float64_v1_zeros.npy", "float64", [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0],
            variants=[("sum", EXACT), ("min", EXACT), ("max", EXACT)])
    add_npy("float32_v1_inf.npy", "float32", [1.5, -0.0, float("inf"), 2.0, -3.25, 0.0, 7.0], variants=[("sum", EXACT)])
    add_npy("float32_v1_inf_minus_inf.npy", "float32", [1.0, float("inf"), 2.0, float("-inf"), 3.0],
            ops=["sum"], variants=[("sum", EXACT)])
    add_npy("float16_v1_nan.npy", "float16", [1.0, 2.0, float("nan"), 3.0, 4.0, 5.0, 6.0], variants=[("sum", EXACT)])
    # A second array after the first (np.save twice into one file): numpy reads the first, so do we.
    second = npy_header("<i4", [3]) + encode("int32", [100, 200, 300])
    add_npy("int32_v1_then_another.npy", "int32", [1, 2, 3, 4, 5, 6, 7], tail=second,
            note="a second array follows: ignored, with a warning")
    # A .npy file under another name: found by its magic.
    vals = grid_values(rng, "float32", 101)
    head = npy_header("<f4", [101])
    add_good("float32_npy_named.dat", "float32", vals, head + encode("float32", vals), len(head), [])
    # Raw files.
    add_raw("raw_int32_65537.bin", "int32", grid_values(rng, "int32", 65537))
    add_raw("raw_float64_offset24_1021.bin", "float64", grid_values(rng, "float64", 1021), offset=24,
            variants=[("sum", EXACT)])
    add_raw("raw_bfloat16_10007.bin", "bfloat16", grid_values(rng, "bfloat16", 10007), variants=[("sum", EXACT)])
    add_raw("raw_uint64_7.bin", "uint64", grid_values(rng, "uint64", 7))
    add_raw("raw_float16_offset6_0.bin", "float16", [], offset=6, ops=["sum"])
    add_raw("raw_int32_1.bin", "int32", [-7])

    # --acc exact (a generator of its own: the files above stay as they were).
    def add_exact(name, dtype, values, raw=False, ops=(), data=None, variants=()):
        if raw:
            add_good(name, dtype, values, encode(dtype, values) if data is None else data, 0, ["--type", dtype],
                     list(ops), "", [("sum", EXACT)] + list(variants))
        else:
            head = npy_header(DESCR[dtype], [len(values)])
            add_good(name, dtype, values, head + (encode(dtype, values) if data is None else data), len(head), [],
                     list(ops), "", [("sum", EXACT)] + list(variants))

    exact_files(random.Random(a.seed + 1), add_exact)
    numpy_files(a.outdir, a.seed + 2, good)

    # Bad files: each must fail on every rank with one line naming the file and the problem.
    f32 = encode("float32", [1.0] * 100)
    add_bad("bad_truncated.npy", npy_header("<f4", [100]) + f32[:200], [],
            "truncated: header says 100 elements (400 bytes) from offset 128 but the file has 328 bytes")
    add_bad("bad_truncated_header.npy", npy_header("<f4", [100])[:20], [],
            "truncated: the .npy header needs 128 bytes but the file has 20")
    add_bad("bad_empty.npy", b"", [], "truncated: the .npy header needs 8 bytes but the file has 0")
    add_bad("bad_magic.npy", b"\x93NUMPZ" + npy_header("<f4", [100])[6:] + f32, [], "bad magic")
    add_bad("bad_header_length.npy", MAGIC + b"\x02\x00" + struct.pack("<I", 70000000) + b"{" + b" " * 100, [],
            "header length 70000000 exceeds the 1 MiB limit")
    add_bad("bad_version.npy", MAGIC + b"\x04\x00" + npy_header("<f4", [100])[8:] + f32, [],
            "unsupported version 4.0")
    add_bad("bad_complex64.npy", npy_header("<c8", [50]) + f32, [], "dtype '<c8' (complex64) is not supported")
    add_bad("bad_object.npy", npy_header("|O", [4]) + b"\x80\x02" * 16, [], "object arrays ('|O') are not supported")
    add_bad("bad_bigendian.npy", npy_header(">f4", [100]) + f32, [],
            "dtype '>f4' is big-endian: convert with arr.astype('<f4')")
    add_bad("bad_shape.npy", npy_header("<f4", [100]).replace(b"(100,)", b"(-1,) "), [],
            "shape (-1,) is not a tuple of non-negative integers")
    add_bad("bad_raw_size.bin", bytes(403), ["--type", "int64"],
            "raw file of 403 bytes is not a whole number of int64 elements (8 bytes each): 3 trailing bytes")
    add_bad("bad_raw_offset.bin", bytes(40), ["--type", "int32", "--offset", "44"],
            "--offset 44 is past the end of the file (40 bytes)")
    add_bad("bad_raw_offset_size.bin", bytes(40), ["--type", "int64", "--offset", "3"],
            "the 37 bytes after --offset 3 are not a whole number of int64 elements (8 bytes each): 5 trailing")
    # Files that are fine, with options that are not.
    add_bad("float32_v2_1000003.npy", None, ["--type", "int32"],
            "the file holds float32 but --type int32 was given")
    add_bad("raw_int32_65537.bin", None, [], "a raw binary file needs --type")
    add_bad("int32_v2_3.npy", None, ["--offset", "8"], "--offset is for raw files")
    add_bad("float16_v1_12347.npy", None, [], "--op bxor is not defined for the file's type float16", op="bxor")
    # A product has no exact mode: the file's type (.npy) or --type (raw) is a float. One line naming both.
    add_bad("exact_f64_cancel_1e308_60160.npy", None, EXACT, "a float product has no --acc exact", op="prod",
            error_re="prod.*exact|exact.*prod")
    add_bad("exact_bf16_nan.bin", None, ["--type", "bfloat16"] + EXACT, "a float product has no --acc exact",
            op="prod", error_re="prod.*exact|exact.*prod")
    add_bad("no_such_file.npy", None, [], "cannot open")
    os.makedirs(os.path.join(a.outdir, "a_directory.npy"), exist_ok=True)
    add_bad("a_directory.npy", None, [], "it is a directory")
    # Not regular files: a named pipe (opening it for reading would block) and a character device.
    fifo = os.path.join(a.outdir, "a_pipe.npy")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    add_bad("a_pipe.npy", None, [], "not a regular file (a named pipe)")
    add_bad("a_pipe.npy", None, ["--type", "int32"], "not a regular file (a named pipe)")
    bad.append(dict(file="/dev/zero", args=["--type", "uint8"], op="sum", error="not a regular file (a character "
                    "device)"))

    with open(os.path.join(a.outdir, "manifest.json"), "w") as f:
        json.dump(dict(seed=a.seed, good=good, bad=bad), f, indent=1)
    # One line per case for the C test: good FILE DTYPE COUNT OFFSET TYPE_ARG OFFSET_ARG OP=VALUE[~BOUND] ...
    #                                   bad FILE TYPE_ARG OFFSET_ARG OP MESSAGE...
    with open(os.path.join(a.outdir, "manifest.txt"), "w") as f:
        for g in good:
            if g["file"].startswith("exact_") or g["file"].startswith("numpy_"):
                continue  # ordinary .npy and raw files of types the others cover: the reader test skips them
            t = g["args"][g["args"].index("--type") + 1] if "--type" in g["args"] else "-"
            o = g["args"][g["args"].index("--offset") + 1] if "--offset" in g["args"] else "-"
            ops = " ".join("%s=%s%s" % (op, e["value"], "~%r" % e["bound"] if "bound" in e else "")
                           for op, e in g["expect"].items())
            f.write("good %s %s %d %d %s %s %s\n" % (g["file"], g["dtype"], g["count"], g["data_offset"], t, o, ops))
        for b in bad:
            if not b.get("names_file", True):
                continue  # an error of the options: test_input_read.c only opens files
            t = b["args"][b["args"].index("--type") + 1] if "--type" in b["args"] else "-"
            o = b["args"][b["args"].index("--offset") + 1] if "--offset" in b["args"] else "-"
            f.write("bad %s %s %s %s %s\n" % (b["file"], t, o, b["op"], b["error"]))
    print("%s: %d good files, %d bad cases" % (a.outdir, len(good), len(bad)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
