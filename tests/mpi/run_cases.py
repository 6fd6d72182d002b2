#!/usr/bin/env python3
"""Run dreduce under mpiexec and check each run against an answer computed here, independently of the program.

Usage:
  run_cases.py --mpiexec MPIEXEC --dreduce DREDUCE --suite NAME [--suite NAME ...]
  run_cases.py --mpiexec MPIEXEC --dreduce DREDUCE --np P --args "-n 1000 --type int64 --op sum --data iota"
  run_cases.py --list

A case is an mpiexec command line. For a run that must succeed, the expected result is derived from the case's own
dreduce arguments (type, op, acc, data, n, scaling, ranks, --ranks-per-node, --combine, --allreduce) by the model
below, which follows the documented data patterns (src/common/datagen.h) and combine rules
(src/common/accum.h, dr_acc_select in src/common/types.c) but shares no code with the program; for histogram, quantile
and median (--bins, --range, --q), NumPy 2's np.histogram and np.quantile (method linear) of the global array, built
here element by element. The JSON report must then show that result exactly, a passed verification, and consistent
shards, nodes and combine levels (or, for a distribution, its counting passes' levels). A run that must
fail has to exit non-zero (2 for usage errors) within the timeout, print its message exactly once (not once per
rank) and no report.

Every run gets COMMON_ARGS (--format json --device cpu --iters 2 --warmup 1) unless the case gives them itself.
Python 3 standard library only. Exit status 0 if every case passed, else 1.
"""

import argparse
import bisect
import json
import math
import os
import re
import shlex
import struct
import sys
import time

from mpi_launcher import launcher_flags as mpi_launcher_flags, run_command
from fractions import Fraction

COMMON_ARGS = ["--format", "json", "--device", "cpu", "--iters", "2", "--warmup", "1"]
DEFAULT_TIMEOUT = 60.0

INT_TYPES = {"int32": (32, True), "int64": (64, True), "uint32": (32, False), "uint64": (64, False)}
# The 8- and 16-bit integers: in the model of stats, argmin and argmax only (the suites above leave them out).
SMALL_INT_TYPES = {"int8": (8, True), "uint8": (8, False), "int16": (16, True), "uint16": (16, False)}
INT_BITS = dict(INT_TYPES, **SMALL_INT_TYPES)
FLOAT_TYPES = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}  # significand bits incl. the implicit one
ALL_TYPES = list(INT_BITS) + list(FLOAT_TYPES)
NEW_OPS = ("stats", "argmin", "argmax")
DIST_OPS = ("histogram", "quantile", "median")  # the distribution ops: their own model and check
FLOAT_OPS = ["sum", "min", "max", "prod"]
INT_OPS = FLOAT_OPS + ["band", "bor", "bxor"]
ACC_BITS = {"float32": 24, "float64": 53}


class CaseError(Exception):
    """A case whose expectation the model cannot compute exactly (a mistake in the case, not in dreduce)."""


# ---------------------------------------------------------------------------------------------------------------
# The model: what dreduce must print, from its arguments.
# ---------------------------------------------------------------------------------------------------------------

def parse_count(s):
    m = re.fullmatch(r"(\d+)([KMGT]i?)?", s)
    if not m:
        raise CaseError("cannot parse count %r" % s)
    v = int(m.group(1))
    if m.group(2):
        power = "KMGT".index(m.group(2)[0]) + 1
        v *= (1024 if m.group(2).endswith("i") else 1000) ** power
    return v


def parse_dreduce_args(argv):
    """The options the expectation depends on, parsed from one rank's dreduce arguments."""
    o = {"n": 16 << 20, "type": "float32", "op": "sum", "acc": "wide", "data": "random", "scaling": "strong",
         "combine": "hier", "allreduce": False, "ranks_per_node": 0, "device": None, "bins": 10, "range": None,
         "q": None}
    short = {"-n": "count", "-t": "type"}
    takes = {"count", "type", "op", "acc", "data", "seed", "kernel", "block", "device", "threads", "iters", "warmup",
             "verify", "misalign", "scaling", "combine", "staging", "ranks-per-node", "bind", "format", "output",
             "bins", "range", "q"}
    i = 0
    while i < len(argv):
        a = argv[i]
        value = None
        if a in short:
            name = short[a]
        elif a.startswith("--"):
            name, _, value = a[2:].partition("=")
            value = value if "=" in a else None
        else:
            raise CaseError("unexpected argument %r in a case" % a)
        if name in takes and value is None:
            i += 1
            value = argv[i]
        i += 1
        if name == "count":
            o["n"] = parse_count(value)
        elif name in ("type", "op", "acc", "data", "scaling", "combine", "device"):
            o[name] = value
        elif name == "allreduce":
            o["allreduce"] = True
        elif name == "ranks-per-node":
            o["ranks_per_node"] = int(value)
        elif name == "bins":
            o["bins"] = int(value)
        elif name in ("range", "q"):  # decimal text to float64 as strtod does: correctly rounded
            o[name] = [float(x) for x in value.split(",")]
    if o["op"] == "median":
        o["q"] = [0.5]
    return o


def acc_kind(t, op, acc):
    """The accumulator a (type, op, acc mode) reduces and reports in."""
    if op in NEW_OPS:  # by the type's class: signed, unsigned, float (stats with --acc exact: the exact sum)
        cls = "float64" if t in FLOAT_TYPES else "int64" if INT_BITS[t][1] else "uint64"
        if op != "stats":
            return cls + "+index"
        return "stats(exact)" if cls == "float64" and acc == "exact" else "stats(%s)" % cls
    widen = op in ("sum", "prod")
    if t in ("int32", "uint32"):
        return ("int64" if t == "int32" else "uint64") if widen else t
    if t in INT_TYPES or t == "float64":
        return t
    return "float64" if widen and acc == "wide" else "float32"


def wrap(v, bits, signed):
    v %= 1 << bits
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def round_float(v, p, emin, emax):
    """Round a Fraction (or int/float) to nearest-even on a binary grid of p significand bits; error if it leaves the
    finite range. emin: exponent of the smallest normal; emax: of the largest finite."""
    v = Fraction(v)
    if v == 0:
        return 0.0
    sign = -1 if v < 0 else 1
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - p + 1)
    q = a / ulp
    fl = q.numerator // q.denominator
    rem = q - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1):
        fl += 1
    r = fl * ulp
    if r >= Fraction(2) ** (emax + 1):
        raise CaseError("constant %s out of range" % v)
    return sign * float(r)


FLOAT_FORMAT = {"float64": (53, -1022, 1023), "float32": (24, -126, 127), "float16": (11, -14, 15),
                "bfloat16": (8, -126, 127)}


def const_value(t, text):
    if t in INT_BITS:
        bits, signed = INT_BITS[t]
        v = int(text, 0)
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if not lo <= v <= hi:
            raise CaseError("constant %s does not fit %s" % (text, t))
        return v
    if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):  # every float type holds them as they are
        return float(text)
    p, emin, emax = FLOAT_FORMAT[t]
    return round_float(Fraction(text), p, emin, emax)


class Data:
    """The global array of N elements as the documented pattern makes it: each element's value, and closed forms for
    the statistics the expectations need."""

    def __init__(self, t, pattern, n):
        self.t, self.n = t, n
        self.is_int = t in INT_BITS
        if self.is_int:
            self.bits, self.signed = INT_BITS[t]
            self.modulus = 1 << self.bits
        else:
            self.bits, self.signed = None, False
            self.modulus = 1 << FLOAT_TYPES[t]
        if pattern == "iota":
            self.kind, self.c = "iota", None
        elif pattern == "ones":
            self.kind, self.c = "const", 1
        elif pattern.startswith("const:"):
            self.kind, self.c = "const", const_value(t, pattern[6:])
        else:
            raise CaseError("data %r has no closed form (use iota, ones or const:V)" % pattern)

    def value(self, i):
        if self.kind == "const":
            return self.c
        u = i % self.modulus
        if self.is_int:
            return wrap(u, self.bits, self.signed)
        return float(u)

    def values(self):
        return (self.value(i) for i in range(self.n))

    # Closed forms over the iota pattern (u = i mod M for i < N; signed types read u >= M/2 as u - M).
    def iota_sum(self):
        m, n = self.modulus, self.n
        q, r = divmod(n, m)
        s = q * m * (m - 1) // 2 + r * (r - 1) // 2
        if self.signed:  # every u >= M/2 is u - M
            half = m // 2
            s -= m * (q * half + max(0, r - half))
        return s

    def iota_min(self):
        if self.signed and self.n > self.modulus // 2:
            return -(self.modulus // 2)
        return 0

    def iota_max(self):
        top = self.modulus // 2 - 1 if self.signed else self.modulus - 1
        return min(self.n - 1, top)

    def sum_abs_bound(self):
        """An upper bound of sum |x|, for the exactness guard of float sums."""
        if self.kind == "const":
            return abs(Fraction(self.c)) * self.n
        return Fraction(self.iota_sum())


def identity(op, acc):
    """sum's and prod's value for no element (the other ops have none)."""
    one = 1 if op == "prod" else 0
    return one if acc in INT_TYPES else float(one)


def expected_new_op(o, d, acc, n_total):
    """stats, argmin, argmax over the elements themselves (n_total up to a few hundred thousand): argmin/argmax
    (value, index of the first occurrence) or (None, None) for no element; stats a dict of exact Fractions and ints."""
    if n_total > 1 << 20:
        raise CaseError("%s: n too large to go through the elements" % o["op"])
    vals = [int(v) if not d.is_int and float(v).is_integer() else v for v in d.values()]
    if o["op"] in ("argmin", "argmax"):
        if not vals:
            return (None, None), acc, n_total
        best = max(vals) if o["op"] == "argmax" else min(vals)
        return (best, vals.index(best)), acc, n_total
    fr = [Fraction(v) for v in vals] if vals and not isinstance(vals[0], int) else vals
    s1 = sum(fr)
    s2 = sum(x * x for x in fr)
    n = n_total
    m2 = Fraction(s2) - Fraction(s1) ** 2 / n if n else Fraction(0)
    return dict(count=n, sum=s1, min=min(vals) if vals else None, max=max(vals) if vals else None,
                mean=Fraction(s1, 1) / n if n else None, m2=m2), acc, n_total


def expected_result(o, nranks):
    """(expected value as int or float, accumulator type name, n_total)."""
    t, op = o["type"], o["op"]
    if t not in ALL_TYPES:
        raise CaseError("unknown type %s" % t)
    acc = acc_kind(t, op, o["acc"])
    n_total = o["n"] * nranks if o["scaling"] == "weak" else o["n"]
    d = Data(t, o["data"], n_total)
    if op in NEW_OPS:
        return expected_new_op(o, d, acc, n_total)
    if n_total == 0:  # min, max and the bitwise ops of nothing have no value ("none"); sum 0, prod 1
        return (None if op in ("min", "max", "band", "bor", "bxor") else identity(op, acc)), acc, n_total

    if acc in INT_TYPES:
        abits, asigned = INT_TYPES[acc]
        if op == "sum":
            s = d.c * n_total if d.kind == "const" else d.iota_sum()
            return wrap(s, abits, asigned), acc, n_total
        if op == "prod":
            if d.kind == "const":
                return wrap(pow(d.c, n_total, 1 << abits), abits, asigned), acc, n_total
            if n_total > 1 << 20:
                raise CaseError("prod of iota: n too large to compute directly")
            p = 1
            for x in d.values():
                p = (p * x) % (1 << abits)
            return wrap(p, abits, asigned), acc, n_total
        if op == "min":
            return (d.c if d.kind == "const" else d.iota_min()), acc, n_total
        if op == "max":
            return (d.c if d.kind == "const" else d.iota_max()), acc, n_total
        # Bitwise ops: directly over the elements' bit patterns (width of the type, which is also the accumulator).
        if d.kind == "const":
            u = d.c % (1 << abits)
            r = {"band": u, "bor": u, "bxor": u if n_total % 2 else 0}[op]
            return wrap(r, abits, asigned), acc, n_total
        if n_total > 1 << 21:
            raise CaseError("bitwise op over iota: n too large to compute directly")
        r = (1 << abits) - 1 if op == "band" else 0
        for i in range(n_total):
            u = i % (1 << abits)
            r = r & u if op == "band" else r | u if op == "bor" else r ^ u
        return wrap(r, abits, asigned), acc, n_total

    # Floating point.
    if op in ("min", "max"):
        if d.kind == "const":
            return float(d.c), acc, n_total
        return float(d.iota_min() if op == "min" else d.iota_max()), acc, n_total
    p_acc = ACC_BITS[acc]
    if op == "sum":
        # Exact only if every partial sum, in whatever order, sits on the accumulator's grid: with all values
        # multiples of 2^-k, sum |x| * 2^k < 2^p guarantees that.
        c = Fraction(d.c) if d.kind == "const" else Fraction(0)
        scale = c.denominator if d.kind == "const" else 1
        if d.sum_abs_bound() * scale >= 1 << p_acc:
            raise CaseError("float sum of this case is not exact in %s" % acc)
        s = c * n_total if d.kind == "const" else Fraction(d.iota_sum())
        return float(s), acc, n_total
    # prod
    if d.kind == "iota":
        return 0.0, acc, n_total  # element 0 is 0.0 (and every element is >= 0)
    c = Fraction(d.c)
    if c == 0:
        return 0.0, acc, n_total
    num, den = abs(c.numerator), c.denominator
    if num ** n_total >= 1 << p_acc or den ** n_total >= 1 << 900:  # partial products exact and in range
        raise CaseError("float prod of this case is not exact in %s" % acc)
    return float(c ** n_total), acc, n_total


# The distribution ops (histogram, quantile, median): NumPy 2's np.histogram and np.quantile (method linear) of the
# global array, which the model builds element by element (n_total up to a few hundred thousand).

HIST_BIN_TYPE = {"float16": "float16", "float32": "float32", "bfloat16": "float32", "float64": "float64"}
KEY_BITS = dict({t: b for t, (b, _) in INT_BITS.items()}, float16=16, bfloat16=16, float32=32, float64=64)


def to_float_type(x, ft):
    """x (a float64) rounded to nearest-even in ft; one float32 or float16 operation is its float64 result rounded
    so (53 >= 2p + 2 bits: the double rounding is exact for +, -, *, /)."""
    if ft == "float64":
        return float(x)
    return struct.unpack("<f" if ft == "float32" else "<e", struct.pack("<f" if ft == "float32" else "<e", x))[0]


def global_values(d):
    if d.n > 1 << 20:
        raise CaseError("distribution: n too large to go through the elements")
    return list(d.values())


def expected_histogram(o, d):
    """np.histogram(a, bins, range) as NumPy 2 makes it: (first, last, edges, counts, below, above, nan). The bin
    type is the data's float type (bfloat16: float32), float64 for integers; elements outside [first, last] (the
    outer edges in the bin type) count as below/above, NaN apart."""
    bins = o["bins"]
    bt = HIST_BIN_TYPE.get(o["type"], "float64")
    r = lambda x: to_float_type(x, bt)
    vals = [float(v) for v in global_values(d)]  # integers: their float64 conversion, as NumPy's astype
    if o["range"] is not None:  # Python floats: linspace computes in float64, then rounds the edges to the bin type
        lo, hi = o["range"]
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        in_type = False
    elif not vals:  # no element: 0..1 (Python ints; float64 again)
        lo, hi, in_type = 0.0, 1.0, False
    else:  # the array's own min and max, NumPy scalars of its type: float data then computes in the bin type
        finite = [v for v in vals if v == v]
        if len(finite) < len(vals) or any(math.isinf(v) for v in finite):
            raise CaseError("histogram: the automatic range of data holding NaN or inf is an error in NumPy")
        lo, hi = min(vals), max(vals)
        in_type = not d.is_int
        if lo == hi:
            lo, hi = (r(lo - 0.5), r(hi + 0.5)) if in_type else (lo - 0.5, hi + 0.5)
    # np.linspace(lo, hi, bins + 1): step = (hi - lo) / bins, edge i = i * step + lo, the last edge hi itself.
    if in_type:
        step = r(r(hi - lo) / bins)
        edges = [r(r(i * step) + lo) for i in range(bins)] + [hi]
    else:
        step = (hi - lo) / bins
        edges = [r(i * step + lo) for i in range(bins)] + [r(hi)]
    first, last = r(lo), r(hi)
    if not all(a < b for a, b in zip(edges, edges[1:])):
        raise CaseError("histogram: edges not increasing (NumPy 2 raises 'Too many bins for data range')")
    counts = [0] * bins
    below = above = nan = 0
    for v in vals:
        x = r(v)  # tmp_a.astype(bin type)
        if x != x:
            nan += 1
        elif x < first:
            below += 1
        elif x > last:
            above += 1
        else:  # NumPy's estimate, corrected against the edges: edges[i] <= x < edges[i + 1], the last bin closed
            counts[min(bisect.bisect_right(edges, x) - 1, bins - 1)] += 1
    return dict(first=first, last=last, edges=edges, counts=counts, below=below, above=above, nan=nan)


def quantile_ranks(n, q):
    """np.quantile's method linear for q of n elements: (lower rank, upper rank, gamma). At or past the last index,
    NumPy takes index -1 for both, and its gamma is v - (-1)."""
    v = float(n - 1) * q
    if v >= n - 1:
        return n - 1, n - 1, v + 1.0
    f = math.floor(v)
    return f, f + 1, v - f


def numpy_lerp(a, b, t):
    """NumPy's _lerp in float64: a + (b - a) t, or b - (b - a)(1 - t) where t >= 0.5."""
    diff = b - a
    return b - diff * (1.0 - t) if t >= 0.5 else a + diff * t


def expected_quantiles(o, d):
    """np.quantile(a, q) (method linear) in float64: per q (q, value, lower, upper, lower rank, upper rank, gamma);
    NaN anywhere makes every value NaN (NaN sorts last, so the order statistics there may be NaN too)."""
    vals = global_values(d)
    n = len(vals)
    if n == 0:
        raise CaseError("quantile of no element: an error, not a result")
    nan = sum(1 for v in vals if v != v)
    s = sorted(v for v in vals if v == v) + [v for v in vals if v != v]
    out = []
    for q in o["q"]:
        lo, up, gamma = quantile_ranks(n, q)
        a, b = s[lo], s[up]
        value = float("nan") if nan else numpy_lerp(float(a), float(b), gamma)
        out.append(dict(q=q, value=value, lower=a, upper=b, lower_rank=lo, upper_rank=up, gamma=gamma))
    return dict(count=n, nan=nan, quantiles=out)


def expected_distrib(o, nranks):
    """(the expected distribution as a dict, result type, accumulator type, n_total)."""
    t = o["type"]
    if t not in ALL_TYPES:
        raise CaseError("unknown type %s" % t)
    n_total = o["n"] * nranks if o["scaling"] == "weak" else o["n"]
    d = Data(t, o["data"], n_total)
    if o["op"] == "histogram":
        want = expected_histogram(o, d)
        want["count"] = n_total
        want["passes"] = 1 if o["range"] is not None else 2  # the automatic range: a min/max pass first
        return want, "histogram(uint64)", "uint64", n_total
    want = expected_quantiles(o, d)
    # A radix select: one pass per digit of the key (at most 11 bits a digit); NaN anywhere stops after the first.
    want["passes"] = 1 if want["nan"] else (KEY_BITS[t] + 10) // 11
    return want, "quantile(float64)", "float64", n_total


# ---------------------------------------------------------------------------------------------------------------
# Cases.
# ---------------------------------------------------------------------------------------------------------------

class Case:
    """One mpiexec run. np_args: list of (np, dreduce args) per MPMD application context (one for a normal run)."""

    def __init__(self, name, np, args, common=True, expect_error=None, once=True, expect_rc=None):
        self.name = name
        args = shlex.split(args) if isinstance(args, str) else list(args)
        self.contexts = [(np, args + (COMMON_ARGS if common else []))]
        self.expect_error = expect_error    # regex: the run must fail with this message
        self.once = once                    # ... printed exactly once
        self.expect_rc = expect_rc          # ... with this exit status (None: any non-zero)

    @classmethod
    def mpmd(cls, name, contexts, expect_error, expect_rc=None):
        c = cls(name, 1, [], common=False, expect_error=expect_error, expect_rc=expect_rc)
        c.contexts = [(np, shlex.split(a) + COMMON_ARGS) for np, a in contexts]
        return c

    @property
    def nranks(self):
        return sum(np for np, _ in self.contexts)


def suite_scaling(np):
    cases = []
    for scaling in ("strong", "weak"):
        for combine in ("hier", "flat"):
            for t, n in (("int64", 100000), ("float32", 100000)):
                cases.append(Case("scaling np%d %s %s %s" % (np, scaling, combine, t), np,
                                  "-n %d --type %s --op sum --data iota --scaling %s --combine %s"
                                  % (n, t, scaling, combine)))
    # A rank count that does not divide n; the largest global index under weak scaling.
    cases.append(Case("scaling np%d strong odd n" % np, np, "-n 100003 --type int64 --op sum --data iota"))
    cases.append(Case("scaling np%d weak float32 max" % np, np,
                      "-n 20000 --type float32 --op max --data iota --scaling weak"))
    return cases


def type_op_cases(t):
    """Every valid op for type t at np 3 (hierarchical combine, strong scaling), on data with a known answer."""
    np, cases = 3, []
    base = "--type %s --scaling strong --combine hier" % t

    def add(op, n, data, extra=""):
        cases.append(Case("types %s %s %s n=%d %s" % (t, op, data, n, extra), np,
                          "-n %d %s --op %s --data %s %s" % (n, base, op, data, extra)))

    if t in INT_TYPES:
        bits, signed = INT_TYPES[t]
        add("sum", 100000, "iota")
        add("min", 100000, "iota")
        add("max", 100000, "iota")
        add("prod", 100, "const:3")          # 3^100 wraps modulo 2^64 in the 64-bit accumulator
        add("band", 100000, "iota")          # 0
        add("bor", 1000, "iota")             # 0..999: 1023
        add("bxor", 100003, "iota")
        add("bxor", 1001, "const:0x5a5a5a5a")  # an odd count of one pattern: the pattern
        if signed:
            top = (1 << (bits - 1)) - 1
            add("prod", 101, "const:-3")
            add("min", 1000, "const:-7")
            add("sum", 1000, "const:%d" % top)          # int32: no wrap in int64; int64: wraps
            add("sum", 999, "const:-%d" % (top + 1))
            add("band", 1000, "const:-2")
        else:
            top = (1 << bits) - 1
            add("sum", 1000, "const:%d" % top)          # uint32: no wrap in uint64; uint64: wraps
            add("max", 1000, "const:%d" % top)
            add("prod", 65, "const:%d" % top)           # (2^w - 1)^65 modulo 2^64
    else:
        p = FLOAT_TYPES[t]
        m = 1 << p
        n_sum = 100000 if t in ("float32", "float64") else 3 * m + 17  # several wraps for the 16-bit types
        add("sum", n_sum, "iota")
        add("min", 100000, "iota")
        add("max", n_sum, "iota")                       # 16-bit types: past the wrap, so 2^p - 1
        # Iota holds 0.0, so the product is 0 -- as long as no partial product overflows to inf, for 0 * inf is
        # NaN. n = 100 keeps 99! finite. (n = 1000 at np 3 gives NaN and exit 4 today: the partials of ranks 1 and 2
        # overflow to inf and rank 0's is 0; reported as a bug, not tested here.)
        add("prod", 100, "iota")
        add("prod", 30, "const:-2")                     # -2^30 in the float64 accumulator
        add("prod", 20, "const:1.5")                    # 3^20 / 2^20: 32 significant bits, exact in float64
        add("sum", 1000, "const:-0.75")
        add("min", 1000, "const:-2.5")
        if t != "float64":
            add("sum", 5000, "iota", "--acc native")    # 5000 * 4999 / 2 < 2^24: exact in float32 too
            add("prod", 20, "const:-2", "--acc native")
    return cases


def suite_types_int():
    return [c for t in INT_TYPES for c in type_op_cases(t)]


def suite_types_float():
    return [c for t in FLOAT_TYPES for c in type_op_cases(t)]


def suite_nodes():
    return [
        # 2 emulated nodes x 2 ranks.
        Case("nodes 2x2 int64 sum", 4, "-n 100000 --type int64 --op sum --data iota --ranks-per-node 2"),
        Case("nodes 2x2 float32 sum weak", 4,
             "-n 10000 --type float32 --op sum --data iota --ranks-per-node 2 --scaling weak"),
        Case("nodes 2x2 flat", 4, "-n 100000 --type int64 --op sum --data iota --ranks-per-node 2 --combine flat"),
        Case("nodes 2x2 uint32 bxor", 4, "-n 99999 --type uint32 --op bxor --data iota --ranks-per-node 2"),
        # Uneven: 2 + 1.
        Case("nodes 2+1 int64 sum", 3, "-n 100000 --type int64 --op sum --data iota --ranks-per-node 2"),
        Case("nodes 2+1 float64 min", 3, "-n 100000 --type float64 --op min --data iota --ranks-per-node 2"),
        Case("nodes 2+1 int32 prod", 3, "-n 99 --type int32 --op prod --data const:-3 --ranks-per-node 2"),
        # One rank per node; one emulated node holding every rank; more ranks per node than ranks.
        Case("nodes 1x3", 3, "-n 100000 --type int64 --op sum --data iota --ranks-per-node 1"),
        Case("nodes 3+1", 4, "-n 100000 --type int64 --op max --data iota --ranks-per-node 3"),
        Case("nodes 1x2 rpn 8", 2, "-n 100000 --type int64 --op sum --data iota --ranks-per-node 8"),
    ]


def suite_small():
    cases = []
    # Ranks with empty shards contribute the op's identity.
    for combine in ("hier", "flat"):
        for op in ("sum", "min", "max", "prod") if combine == "hier" else ("sum", "max"):
            cases.append(Case("small n=2 np4 %s %s" % (combine, op), 4,
                              "-n 2 --type int64 --op %s --data const:-5 --combine %s" % (op, combine)))
        cases.append(Case("small n=2 np4 %s float32 iota" % combine, 4,
                          "-n 2 --type float32 --op sum --data iota --combine %s" % combine))
        cases.append(Case("small n=3 np4 %s rpn2" % combine, 4,
                          "-n 3 --type int64 --op sum --data iota --ranks-per-node 2 --combine %s" % combine))
        for op in ("sum", "prod", "min", "max", "band", "bor", "bxor") if combine == "hier" else ("sum", "min"):
            cases.append(Case("small n=0 np4 %s %s" % (combine, op), 4,
                              "-n 0 --type int64 --op %s --data iota --combine %s" % (op, combine)))
    cases.append(Case("small n=0 np3 float32 sum", 3, "-n 0 --type float32 --op sum --data iota"))
    cases.append(Case("small n=0 np1", 1, "-n 0 --type int64 --op sum --data iota"))
    cases.append(Case("small n=1 np3", 3, "-n 1 --type int64 --op max --data iota"))
    cases.append(Case("small n=0 weak np2", 2, "-n 0 --type int64 --op sum --data iota --scaling weak"))
    cases.append(Case("small n=1 weak np3", 3, "-n 1 --type int64 --op sum --data iota --scaling weak"))
    return cases


def suite_allreduce():
    cases = []
    for combine in ("hier", "flat"):
        for np, rpn in ((1, 0), (2, 0), (3, 0), (4, 2), (3, 2)):
            extra = " --ranks-per-node %d" % rpn if rpn else ""
            cases.append(Case("allreduce %s np%d%s" % (combine, np, " rpn%d" % rpn if rpn else ""), np,
                              "-n 100000 --type int64 --op sum --data iota --allreduce --combine %s%s"
                              % (combine, extra)))
        cases.append(Case("allreduce %s float32 max" % combine, 3,
                          "-n 100000 --type float32 --op max --data iota --allreduce --combine %s" % combine))
        cases.append(Case("allreduce %s weak float64 sum" % combine, 4,
                          "-n 10000 --type float64 --op sum --data iota --allreduce --scaling weak --combine %s"
                          % combine))
    return cases


def suite_errors():
    """Usage errors under mpiexec: exit status 2 on every rank, within the timeout, one message (not one per rank)."""
    return [
        Case.mpmd("errors mismatched -n (MPMD)", [(1, "-n 10"), (1, "-n 11")], r"options differ", expect_rc=2),
        Case.mpmd("errors mismatched --op (MPMD, 3 ranks)", [(2, "-n 10 --op sum"), (1, "-n 10 --op max")],
                  r"options differ across ranks: rank 0 has .* but rank 2 has", expect_rc=2),
        Case.mpmd("errors mismatched --ranks-per-node (MPMD)",
                  [(1, "-n 10 --ranks-per-node 1"), (1, "-n 10 --ranks-per-node 2")], r"options differ", expect_rc=2),
        Case("errors bad --type np2", 2, "--type complex", expect_error=r"invalid --type 'complex'", expect_rc=2),
        Case("errors bad --type np4", 4, "--type complex", expect_error=r"invalid --type 'complex'", expect_rc=2),
        Case("errors bitwise float np3", 3, "--type float32 --op band",
             expect_error=r"--op band is not defined for --type float32", expect_rc=2),
        Case("errors bad const np2", 2, "--type int32 --data const:3000000000",
             expect_error=r"invalid constant '3000000000'", expect_rc=2),
        # Found on every rank alike, and today printed by every rank (reported), so only "at least once" here.
        Case("errors weak overflow np2", 2, "-n 18446744073709551615 --scaling weak",
             expect_error=r"more than 2\^64 - 1", once=False, expect_rc=2),
    ]


def suite_stats():
    """stats, argmin, argmax (issue #37) at 1..4 ranks: int8, int16, int32, int64, uint64, float16, float32, float64;
    uneven shards (100003), fewer elements than ranks and none, flat and hier, emulated nodes, --allreduce, weak
    scaling (the global index runs across the ranks). The answers are exact (argmin/argmax: value and index; stats:
    count, sum, min, max, the mean of integers and of --acc exact) or, for float moments, within 1e-9."""
    rows = [
        (1, "--op argmax --type float16 --data iota -n 5000"),  # wraps at 2048: 2047 first at 2047
        (1, "--op stats --type int8 --data iota -n 1000"),
        (1, "--op argmin --type float64 --data const:-2.5 -n 1000"),
        (1, "--op stats --type float32 --data iota -n 100003 --acc exact"),
        (2, "--op argmax --type int8 --data iota -n 1000 --combine flat"),
        (2, "--op stats --type uint64 --data const:18446744073709551615 -n 1001"),  # a sum past 64 bits
        (2, "--op argmin --type float32 --data iota -n 100003"),
        (2, "--op stats --type float64 --data iota -n 100003"),
        (3, "--op argmax --type uint64 --data iota -n 100003"),
        (3, "--op argmin --type int8 --data iota -n 1000"),  # -128 first at 128
        (3, "--op stats --type float16 --data iota -n 5000"),
        (3, "--op stats --type int16 --data iota -n 100003 --allreduce"),
        (3, "--op argmax --type int64 --data iota -n 1000 --scaling weak"),  # 2999 at 2999
        (4, "--op argmax --type float64 --data iota -n 100003 --ranks-per-node 2"),
        (4, "--op argmin --type float16 --data iota -n 5000 --ranks-per-node 2 --combine flat"),
        (4, "--op stats --type int8 --data iota -n 100003 --allreduce --combine flat"),
        (4, "--op stats --type uint64 --data iota -n 100003 --ranks-per-node 2"),
        (4, "--op stats --type float32 --data iota -n 100003 --ranks-per-node 2 --acc exact --allreduce"),
        (4, "--op argmax --type int32 --data iota -n 2"),  # fewer elements than ranks
        (4, "--op stats --type int64 --data iota -n 3 --combine flat"),
        (4, "--op argmax --type int64 --data iota -n 0"),  # none
        (2, "--op stats --type float32 --data iota -n 0"),
    ]
    return [Case("stats np%d %s" % (np, args.replace("--", "")), np, args) for np, args in rows]


def suite_distrib():
    """histogram, quantile, median at 1..4 ranks: int8 (iota wrapping at 256), int16, int32, int64, uint64, float16,
    float32 and float64; strong and weak scaling (iota runs over the whole global array), flat and hier, emulated
    nodes, --allreduce, uneven shards (100003), fewer elements than ranks, none (a histogram of nothing: 0..1, every
    bin 0), one constant (a range of one value, widened), NaN (every quantile nan), given and automatic ranges (the
    automatic range of float16 with NumPy 2's linspace in float16). The answers are NumPy 2's, computed here over the
    global array: counts, below/above, edges and outer edges exactly; quantiles' ranks, weights, order statistics and
    values to the bit. And the usage errors of the new options."""
    rows = [
        (1, "--op histogram --type int64 --data iota -n 1000 --bins 10"),  # auto range 0..999, edges 99.9 * i
        (1, "--op quantile --q 0,0.25,0.5,1 --type uint64 --data iota -n 1000"),
        (2, "--op histogram --type float64 --data iota -n 100003 --range 0,1024 --bins 8 --combine flat"),
        (2, "--op quantile --q 0.1,0.5,0.9,0.999 --type int64 --data iota -n 50002 --scaling weak --combine flat"),
        (2, "--op histogram --type float16 --data iota -n 5000 --bins 7"),  # wraps at 2048; edges in float16
        (2, "--op quantile --q 0.5,0.9 --type float16 --data iota -n 5000 --allreduce"),
        (3, "--op histogram --type int32 --data iota -n 100003 --bins 3"),
        (3, "--op histogram --type uint64 --data iota -n 1000 --scaling weak --bins 1"),  # 0..2999, one bin
        (3, "--op histogram --type int16 --data const:7 -n 1000 --bins 3"),  # 6.5..7.5: [0, 1000, 0]
        (3, "--op median --type int32 --data iota -n 1001 --scaling weak"),  # 3003 elements: 1501
        (3, "--op median --type int8 --data iota -n 1000 --combine flat"),  # -128..127 repeated: 2.5
        (4, "--op histogram --type int8 --data iota -n 1000 --bins 8 --ranks-per-node 2"),
        (4, "--op histogram --type float32 --data iota -n 100003 --range -0.5,1000.25 --bins 7 --allreduce"),
        (4, "--op histogram --type float32 --data iota -n 0"),  # none: 10 bins over 0..1, all 0
        (4, "--op quantile --q 0,0.3333,0.75,1 --type float32 --data iota -n 100003 --ranks-per-node 2"),
        (4, "--op quantile --q 0,0.5,1 --type int64 --data iota -n 2 --combine flat"),  # fewer elements than ranks
        (4, "--op median --type float32 --data const:nan -n 1000"),  # nan, and result.nan 1000
    ]
    cases = [Case("distrib np%d %s" % (np, args.replace("--", "")), np, args) for np, args in rows]
    return cases + [
        Case("distrib error quantile n=0 np2", 2, "--op quantile --q 0.5 -n 0",
             expect_error=r"the quantile of an array with no element has no value", expect_rc=2),
        Case("distrib error bins 0 np3", 3, "--op histogram --bins 0", expect_error=r"invalid --bins '0'",
             expect_rc=2),
        # NumPy 2's "Too many bins for data range": edges that do not increase in the bin type (float64 cannot
        # widen 2^64 - 1 by 0.5; float16 has 2048 values in 0..2047), refused on every rank alike; the library
        # prints it on each (as the weak overflow above), so only "at least once" here
        Case("distrib error too many bins uint64 np2", 2,
             "--op histogram --type uint64 --data const:18446744073709551615 -n 10 --bins 2",
             expect_error=r"2 bins over .* are too many .*Too many bins for data range", once=False, expect_rc=2),
        Case("distrib error too many bins float16 np3", 3, "--op histogram --type float16 --data iota -n 5000 --bins 3000",
             expect_error=r"3000 bins over \[0, 2047\] are too many for the range in float16", once=False,
             expect_rc=2),
        Case.mpmd("distrib error mismatched --bins (MPMD)", [(1, "--op histogram --bins 4"),
                                                             (1, "--op histogram --bins 5")],
                  r"options differ across ranks: rank 0 has 'bins=4' but rank 1 has 'bins=5'", expect_rc=2),
    ]


SUITES = {
    "stats": suite_stats,
    "distrib": suite_distrib,
    "scaling-np1": lambda: suite_scaling(1),
    "scaling-np2": lambda: suite_scaling(2),
    "scaling-np3": lambda: suite_scaling(3),
    "scaling-np4": lambda: suite_scaling(4),
    "types-int": suite_types_int,
    "types-float": suite_types_float,
    "nodes": suite_nodes,
    "small": suite_small,
    "allreduce": suite_allreduce,
    "errors": suite_errors,
}


# ---------------------------------------------------------------------------------------------------------------
# Running and checking.
# ---------------------------------------------------------------------------------------------------------------


def build_command(case, mpiexec, dreduce, launcher_flags):
    cmd = [mpiexec] + launcher_flags
    for k, (np, args) in enumerate(case.contexts):
        if k:
            cmd.append(":")
        cmd += ["-np", str(np), dreduce] + args
    return cmd


def same_value(got_text, want, acc):
    if acc in INT_TYPES:
        try:
            return int(got_text) == want
        except ValueError:
            return False
    try:
        got = float(got_text)
    except ValueError:
        return False
    if want != want:
        return got != got
    return got == want


def close(text, want, rel):
    """text (a float's) within rel of the Fraction want (or both NaN for want None)."""
    try:
        got = float(text)
    except (TypeError, ValueError):
        return False
    if want is None:
        return got != got
    return abs(Fraction(got) - want) <= rel * abs(want) if got == got and abs(got) != float("inf") else False


def check_stats(res, want, acc, need):
    """The JSON result's stats fields against the model's exact ones."""
    n = want["count"]
    need(res.get("count") == n, "result.count %r, expected %d" % (res.get("count"), n))
    is_int = acc in ("stats(int64)", "stats(uint64)")
    for key in ("min", "max"):
        w = want[key]
        if w is None:  # no element: no min or max
            need(res.get(key) == "none", "result.%s %r, expected none (no elements)" % (key, res.get(key)))
            continue
        need(same_value(str(res.get(key)), w, "int64" if is_int else "float64"),
             "result.%s %r, expected %r" % (key, res.get(key), w))
    if is_int:
        need(str(res.get("sum")) == str(want["sum"]), "result.sum %r, expected exactly %d" % (res.get("sum"),
                                                                                             want["sum"]))
    else:
        need(close(res.get("sum"), Fraction(want["sum"]), 1e-15), "result.sum %r, expected %s" % (res.get("sum"),
                                                                                                float(want["sum"])))
    if n == 0:
        for key in ("mean", "var_pop", "var_sample"):
            need(res.get(key) == "nan", "result.%s %r, expected nan (no elements)" % (key, res.get(key)))
        return
    mean = want["mean"]
    if is_int or acc == "stats(exact)":  # the exact sum over n, rounded once
        need(res.get("mean") == repr(float(mean)) or (float(res.get("mean", "nan")) == float(mean)),
             "result.mean %r, expected exactly %r" % (res.get("mean"), float(mean)))
    else:
        need(close(res.get("mean"), mean, 1e-12), "result.mean %r, expected %r" % (res.get("mean"), float(mean)))
    m2 = want["m2"]
    need(close(res.get("m2"), m2, 1e-9) or (m2 == 0 and float(res.get("m2")) == 0),
         "result.m2 %r, expected %r" % (res.get("m2"), float(m2)))
    need(close(res.get("var_pop"), m2 / n, 1e-9) or (m2 == 0 and float(res.get("var_pop")) == 0),
         "result.var_pop %r, expected %r" % (res.get("var_pop"), float(m2 / n)))
    if n > 1:
        need(close(res.get("var_sample"), m2 / (n - 1), 1e-9) or (m2 == 0 and float(res.get("var_sample")) == 0),
             "result.var_sample %r, expected %r" % (res.get("var_sample"), float(m2 / (n - 1))))
    else:
        need(res.get("var_sample") == "nan", "result.var_sample %r, expected nan (one element)"
             % (res.get("var_sample"),))


def check_layout(o, nranks, n_total, acc, doc, need):
    """The report's config, shards, hosts and node records against the case: [(node index, record, ranks on it)] in
    node order, or None where the records cannot be matched up."""
    rpn = o["ranks_per_node"]
    nnodes = (nranks + rpn - 1) // rpn if rpn > 0 else 1
    node_of = [r // rpn if rpn > 0 else 0 for r in range(nranks)]

    cfg = doc.get("config", {})
    for key, value in (("n", o["n"]), ("n_total", n_total), ("type", o["type"]), ("op", o["op"]),
                       ("acc_type", acc), ("scaling", o["scaling"]), ("combine", o["combine"]),
                       ("allreduce", o["allreduce"]), ("ranks", nranks), ("nodes", nnodes),
                       ("emulated_nodes", rpn > 0)):
        need(cfg.get(key) == value, "config.%s = %r, expected %r" % (key, cfg.get(key), value))

    ranks = doc.get("ranks", [])
    if not need(isinstance(ranks, list) and len(ranks) == nranks, "%d rank records, expected %d"
                % (len(ranks) if isinstance(ranks, list) else -1, nranks)):
        return None
    need(sorted(r.get("rank") for r in ranks) == list(range(nranks)), "rank ids are not 0..%d" % (nranks - 1))
    counts = [r.get("count") for r in ranks]
    need(sum(counts) == n_total, "shard counts %r sum to %d, expected n_total %d" % (counts, sum(counts), n_total))
    by_first = sorted(ranks, key=lambda r: (r.get("first"), r.get("count") > 0, r.get("rank")))
    pos = 0
    for r in by_first:
        need(r.get("first") == pos or r.get("count") == 0 and r.get("first") <= pos,
             "shards not contiguous and disjoint: rank %d starts at %r, expected %d"
             % (r.get("rank"), r.get("first"), pos))
        pos = max(pos, r.get("first", 0) + r.get("count", 0))
    need(pos == n_total, "shards end at %d, expected %d" % (pos, n_total))
    by_rank = sorted(ranks, key=lambda r: r["rank"])
    if o["scaling"] == "strong":
        need(max(counts) - min(counts) <= 1, "strong scaling: shard counts %r differ by more than 1" % counts)
        need([r["first"] for r in by_rank if r["count"]] == sorted(r["first"] for r in by_rank if r["count"]),
             "shards are not in rank order")
    else:
        need(all(r["count"] == o["n"] and r["first"] == r["rank"] * o["n"] for r in ranks),
             "weak scaling: shards %r, expected %d each at rank * %d"
             % ([(r["first"], r["count"]) for r in by_rank], o["n"], o["n"]))

    hosts = {r.get("host") for r in ranks}
    need(len(hosts) == 1, "ranks on several hosts %r (this test runs on one)" % sorted(hosts))
    host = ranks[0].get("host")
    for r in by_rank:
        need(r.get("node") == node_of[r["rank"]], "rank %d on node %r, expected %d"
             % (r["rank"], r.get("node"), node_of[r["rank"]]))

    nodes = doc.get("nodes", [])
    if not need(isinstance(nodes, list) and len(nodes) == nnodes, "%d node records, expected %d"
                % (len(nodes) if isinstance(nodes, list) else -1, nnodes)):
        return None
    out = []
    for k, node in enumerate(sorted(nodes, key=lambda x: x.get("node", -1))):
        name = "%s/node%d" % (host, k) if rpn > 0 else host
        need(node.get("node") == k and node.get("name") == name,
             "node %r named %r, expected %d named %r" % (node.get("node"), node.get("name"), k, name))
        out.append((k, node, node_of.count(k)))
    return out


def check_report(case, o, nranks, doc, problems):
    """Append a line to problems for everything in the JSON report that disagrees with the model."""
    def need(cond, msg):
        if not cond:
            problems.append(msg)
        return cond

    want, acc, n_total = expected_result(o, nranks)
    hier, allreduce = o["combine"] == "hier", o["allreduce"]

    res = doc.get("result", {})
    need(res.get("type") == acc, "result.type %r, expected %r" % (res.get("type"), acc))
    if o["op"] in ("argmin", "argmax"):
        value, index = want
        vacc = "float64" if acc.startswith("float") else acc.split("+")[0]
        need(res.get("index") == index, "result.index %r, expected %r" % (res.get("index"), index))
        need(res.get("value") == "none" if value is None else same_value(str(res.get("value")), value, vacc),
             "result.value %r, expected %r" % (res.get("value"), value))
    elif o["op"] == "stats":
        check_stats(res, want, acc, need)
    else:
        need(res.get("value") == "none" if want is None else same_value(str(res.get("value")), want, acc),
             "result.value %r, expected %s (%s)" % (res.get("value"), "none" if want is None else repr(want), acc))
    ver = doc.get("verification", {})
    need(ver.get("enabled") is True and ver.get("pass") is True, "verification did not pass: %r" % (ver,))
    need(ver.get("deterministic") is True, "repetitions were not deterministic")

    nodes = check_layout(o, nranks, n_total, acc, doc, need)
    if nodes is None:
        return
    nnodes = len(nodes)
    # A level with one participant costs nothing (issue #16): no node level on a node of one rank, no global level
    # on one node with hier, none at all at P=1; --allreduce on one node is the node level alone (no bcast).
    for k, node, size in nodes:
        if hier:
            want_levels = {"local", "total"} | ({"node"} if size > 1 else set()) | (
                {"global"} if nnodes > 1 else set()) | ({"bcast"} if allreduce and nnodes > 1 and size > 1 else set())
        else:
            want_levels = {"local", "total"} | ({"global"} if nranks > 1 else set())
        levels = {lv.get("level"): lv for lv in node.get("levels", [])}
        present = set(levels) & {"local", "node", "global", "bcast", "total"}
        need(present == want_levels, "node %d has levels %s, expected %s" % (k, sorted(present),
                                                                             sorted(want_levels)))
        for lname in present & want_levels:
            want_ranks = 1 if (lname == "global" and hier) else size
            need(levels[lname].get("ranks") == want_ranks, "node %d level %s over %r ranks, expected %d"
                 % (k, lname, levels[lname].get("ranks"), want_ranks))
        # No barrier inside a call: no wait level (waiting for a slower rank shows in the level where it is spent).
        need("wait" not in levels, "node %d: a wait level %r (a call has no barrier)" % (k, levels.get("wait")))
        if o["device"] == "cpu":
            need("launch" not in levels, "node %d: a launch level on the CPU backend" % k)


def same_number(got, want, is_int):
    """A JSON number or numeric text against the model's int or float, exactly (NaN matches NaN)."""
    try:
        if is_int:
            return isinstance(got, (int, str)) and not isinstance(got, bool) and int(got) == want
        g = float(got)
    except (TypeError, ValueError):
        return False
    w = float(want)
    return (g != g and w != w) or g == w


def check_distrib_report(case, o, nranks, doc, problems):
    """A histogram's or quantile's JSON report against the model: the result exactly (counts, edges, ranks,
    weights, values to the bit), the options echoed, verification and determinism, the shards and nodes, and per
    node the levels of the counting passes (generate, local 1, combine 1, ... local P, combine P, local, combine,
    total: the reduction levels node/global/bcast have no place here)."""
    def need(cond, msg):
        if not cond:
            problems.append(msg)
        return cond

    want, rtype, acc, n_total = expected_distrib(o, nranks)
    res = doc.get("result", {})
    need(res.get("type") == rtype, "result.type %r, expected %r" % (res.get("type"), rtype))
    need(res.get("count") == n_total, "result.count %r, expected %d" % (res.get("count"), n_total))
    if o["op"] == "histogram":
        need(doc.get("bins") == o["bins"] and doc.get("q") is None, "bins %r, q %r: expected %d, null"
             % (doc.get("bins"), doc.get("q"), o["bins"]))
        need(doc.get("range") == o["range"], "range %r, expected %r" % (doc.get("range"), o["range"]))
        need(res.get("bins") == o["bins"], "result.bins %r, expected %d" % (res.get("bins"), o["bins"]))
        for key, w in (("lo", want["first"]), ("hi", want["last"])):
            need(same_number(res.get(key), w, False), "result.%s %r, expected %r" % (key, res.get(key), w))
        for key in ("below", "above", "nan"):
            need(res.get(key) == want[key], "result.%s %r, expected %d" % (key, res.get(key), want[key]))
        need(res.get("counts") == want["counts"], "result.counts %r, expected %r" % (res.get("counts"),
                                                                                     want["counts"]))
        edges = res.get("edges")
        need(isinstance(edges, list) and len(edges) == len(want["edges"]) and
             all(same_number(g, w, False) for g, w in zip(edges, want["edges"])),
             "result.edges %r, expected %r" % (edges, want["edges"]))
    else:
        need(doc.get("bins") is None and doc.get("range") is None, "bins %r, range %r: expected null for a quantile"
             % (doc.get("bins"), doc.get("range")))
        need(doc.get("q") == o["q"], "q %r, expected %r" % (doc.get("q"), o["q"]))
        need(res.get("nan") == want["nan"], "result.nan %r, expected %d" % (res.get("nan"), want["nan"]))
        got = res.get("quantiles")
        if need(isinstance(got, list) and len(got) == len(want["quantiles"]),
                "result.quantiles %r: expected %d" % (got, len(want["quantiles"]))):
            is_int = o["type"] in INT_BITS
            for g, w in zip(got, want["quantiles"]):
                for key, as_int in (("q", False), ("value", False), ("lower", is_int), ("upper", is_int),
                                    ("lower_rank", True), ("upper_rank", True), ("gamma", False)):
                    need(same_number(g.get(key), w[key], as_int) and (key != "value" or isinstance(g[key], str)),
                         "quantile %r: %s %r, expected %r" % (w["q"], key, g.get(key), w[key]))
            values = " ".join(q["value"] for q in got if isinstance(q.get("value"), str))
            need(res.get("value") == values, "result.value %r, expected the values %r" % (res.get("value"), values))
    if o["op"] != "histogram":
        # The quantile pilot (README, "Results you can trust"): auto takes it where the largest part has 2^20
        # elements or more; with it two passes come first (its sample's select, its read of the part), then the
        # digits over the kept elements (none after NaN), or over the part again where a bracket missed.
        part = o["n"] if o["scaling"] == "weak" else -(-n_total // nranks)
        pilot = res.get("pilot")
        need(pilot in ((1, 2) if part >= 1 << 20 else (0,)),
             "result.pilot %r for a largest part of %d elements" % (pilot, part))
        digits = (KEY_BITS[o["type"]] + 10) // 11
        ok = {0: {want["passes"]}, 1: {2 if want["nan"] else 2 + digits},
              2: {1 + want["passes"], 2 + want["passes"]}}.get(pilot, set())
        need(res.get("passes") in ok, "result.passes %r (pilot %r), expected one of %s"
             % (res.get("passes"), pilot, sorted(ok)))
    else:
        need(res.get("passes") == want["passes"], "result.passes %r, expected %d"
             % (res.get("passes"), want["passes"]))
    ver = doc.get("verification", {})
    need(ver.get("enabled") is True and ver.get("pass") is True, "verification did not pass: %r" % (ver,))
    need(ver.get("deterministic") is True, "repetitions were not deterministic")

    nodes = check_layout(o, nranks, n_total, acc, doc, need)
    if nodes is None:
        return
    passes = res.get("passes") if isinstance(res.get("passes"), int) else want["passes"]
    want_levels = {"generate", "local", "combine", "total"} | {"%s %d" % (w, p) for w in ("local", "combine")
                                                                for p in range(1, passes + 1)}
    for k, node, size in nodes:
        levels = {lv.get("level"): lv for lv in node.get("levels", [])}
        need(set(levels) == want_levels, "node %d has levels %s, expected %s" % (k, sorted(levels),
                                                                                 sorted(want_levels)))
        for lname in set(levels) & want_levels:
            need(levels[lname].get("ranks") == size, "node %d level %s over %r ranks, expected %d"
                 % (k, lname, levels[lname].get("ranks"), size))


def tail(text, lines=15):
    return "\n".join(text.rstrip("\n").split("\n")[-lines:])


def run_case(case, mpiexec, dreduce, launcher_flags, timeout):
    cmd = build_command(case, mpiexec, dreduce, launcher_flags)
    cmd_text = " ".join(shlex.quote(c) for c in cmd)
    problems = []
    o = None
    if case.expect_error is None:
        try:
            o = parse_dreduce_args(case.contexts[0][1])
            # a case the model cannot compute fails before running
            (expected_distrib if o["op"] in DIST_OPS else expected_result)(o, case.nranks)
        except CaseError as e:
            problems.append("bad case: %s" % e)
    rc, out, err, secs = (None, "", "", 0.0)
    if not problems:
        rc, out, err, secs = run_command(cmd, timeout)
        if rc is None:
            problems.append("timed out after %.0f s" % timeout)
        elif case.expect_error is not None:
            if rc == 0:
                problems.append("exit status 0, expected a failure")
            elif case.expect_rc is not None and rc != case.expect_rc:
                problems.append("exit status %d, expected %d" % (rc, case.expect_rc))
            if "dreduce-report" in out:
                problems.append("a report was printed although the run failed")
            hits = len(re.findall(case.expect_error, out + err))
            if hits == 0:
                problems.append("the message /%s/ was not printed" % case.expect_error)
            elif case.once and hits > 1:
                problems.append("the message /%s/ was printed %d times, expected once" % (case.expect_error, hits))
        else:
            if rc != 0:
                problems.append("exit status %d, expected 0" % rc)
            if "dreduce: error" in err:
                problems.append("an error message on stderr although the run succeeded")
            try:
                doc = json.loads(out)
            except ValueError as e:
                problems.append("stdout is not one JSON document: %s" % e)
                doc = None
            if isinstance(doc, dict):
                try:
                    (check_distrib_report if o["op"] in DIST_OPS else check_report)(case, o, case.nranks, doc,
                                                                                    problems)
                except (KeyError, TypeError, AttributeError, ValueError) as e:
                    problems.append("malformed report: %s: %s" % (type(e).__name__, e))
    status = "FAIL" if problems else "PASS"
    print("%s %-48s (%.1f s) %s" % (status, case.name, secs, cmd_text), flush=True)
    if problems:
        for p in problems:
            print("    - %s" % p)
        print("    exit status: %s" % ("timeout" if rc is None else rc))
        print("    stdout (tail):\n%s" % "\n".join("      | " + l for l in tail(out).split("\n")))
        print("    stderr (tail):\n%s" % "\n".join("      | " + l for l in tail(err).split("\n")), flush=True)
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpiexec", default="mpiexec", help="the MPI launcher")
    ap.add_argument("--dreduce", help="the dreduce binary")
    ap.add_argument("--suite", action="append", default=[], choices=sorted(SUITES),
                    help="a predefined list of cases (repeatable)")
    ap.add_argument("--np", type=int, help="one explicit case: ranks")
    ap.add_argument("--args", help="one explicit case: dreduce arguments (the expectation is derived from them)")
    ap.add_argument("--expect-error", help="the explicit case must fail with this message (a regex), printed once")
    ap.add_argument("--filter", help="run only cases whose name matches this regex")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per mpiexec run (default 60)")
    ap.add_argument("--list", action="store_true", help="list the suites and their cases, run nothing")
    a = ap.parse_args()

    if a.list:
        for name in sorted(SUITES):
            print(name)
            for c in SUITES[name]():
                print("  %s: %s" % (c.name, " : ".join("-np %d %s" % (np, " ".join(args))
                                                        for np, args in c.contexts)))
        return 0
    if not a.dreduce:
        ap.error("--dreduce is required")
    cases = [c for s in a.suite for c in SUITES[s]()]
    if a.args is not None or a.np is not None:
        if a.np is None or a.args is None:
            ap.error("--np and --args go together")
        cases.append(Case("explicit", a.np, a.args, expect_error=a.expect_error))
    if a.filter:
        cases = [c for c in cases if re.search(a.filter, c.name)]
    if not cases:
        ap.error("no cases: give --suite or --np/--args")

    # Root in a container and more ranks than cores are normal here.
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    launcher_flags = mpi_launcher_flags(a.mpiexec)
    dreduce = os.path.abspath(a.dreduce)

    passed = failed = 0
    t0 = time.monotonic()
    for c in cases:
        if run_case(c, a.mpiexec, dreduce, launcher_flags, a.timeout):
            passed += 1
        else:
            failed += 1
    print("%d passed, %d failed (%.1f s)" % (passed, failed, time.monotonic() - t0))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
