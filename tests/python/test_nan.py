#!/usr/bin/env python3
"""The NaN policy (nan="propagate" | "omit": Context(nan=) and each call's nan=) on the CPU backend, on every rank of
MPI.COMM_WORLD (run it under mpiexec at 1..4 ranks; tests/python/run_mpi.py does, with a time limit: a hang
fails). Every rank makes the same whole array from a seeded generator, takes its own uneven slice of it (some ranks
empty), and compares the answer under nan="omit" with NumPy's nan* function of the whole array:

- dtypes float16, bfloat16 (ml_dtypes' where it is installed, else uint16 bits with dtype="bfloat16"; NumPy is
  given their float32 values), float32, float64; int32 and bool, where "omit" changes nothing (the answer equals
  the "propagate" one, and the NaN count is 0);
- data sets: no NaN, ~1% NaN, NaN on some ranks' slices only, one rank's slice all NaN, every element NaN, NaN with
  +inf and -inf, NaN with +inf only, NaN with signed zeros, quiet and signalling NaN payloads of both signs (bit
  patterns written directly), a few runs of NaN in 70001 elements (most of the CPU backend's 2048- and 32768-element
  pieces without NaN, some with; the extremes just after a run), and one float32 array of 100003 elements with ~1% NaN;
- ops, against the NumPy function on the whole array:
  sum (acc="wide"; acc="exact" bit for bit against the correctly rounded sum of the non-NaN float64 values,
  math.fsum), prod (np.nanprod), min, max (np.nanmin/np.nanmax, exact; zeros by value, the sign by dreduce's rule:
  -0.0 below +0.0), argmin, argmax (np.nanargmin/np.nanargmax: value and global index, exact), stats (count and
  nan_count exact; min, max exact; sum, mean, var = np.nanvar(ddof=0), var_sample = np.nanvar(ddof=1)), quantile
  (q = 0, 1, 0.5 and others at once: np.nanquantile(whole.astype(np.float64), q) bit for bit, zeros by value),
  median (the same at q = 0.5), histogram (np.histogram of the non-NaN elements, explicit and automatic range:
  counts and edges exactly, as test_distrib.py's reference computes NumPy 2's);
- the NaN count: reduce_info() (the whole array's where the result arrives, this rank's everywhere), timings(),
  Stats.nan_count, dist_info() equal to np.isnan(whole).sum() and to this rank's slice's count;
- NumPy's warnings and errors for an array of NaN only: RuntimeWarning "All-NaN slice encountered" for min, max,
  stats, quantile, median (where the result arrives; none for sum and prod, 0 and 1), UsageError (a ValueError) for
  argmin and argmax; no warning where some element is not NaN;
- other configurations: acc="native" (sums and products within the float32 accumulator's bound), several CPU
  threads, a flat combine, two emulated nodes (at 3 and 4 ranks);
- errors: nan="bogus" (and nan=True) on every rank and on one rank only (that rank's message names it; the others
  get an error where the result arrives, and no rank waits), Context(nan="bogus") on every rank and on one; ranks
  disagreeing on the policy (an error where the result arrives: rank 0's names the "nan policy"); per-call policies
  do not stick (the next call without nan= has the context's); the context still answers right afterwards.

Bounds (u = 2^-53, n the non-NaN elements, S the sum of their magnitudes, as test_cpu.py): float sums (acc="wide"
and the stats sum) |got - exact| <= gamma(n) S + u |exact|, gamma(n) = n u / (1 - n u); products |got - exact| <=
gamma(n) |exact| (exact: the product of the values as fractions, rounded once); mean within the sum's bound / n
+ u |mean| (acc="exact": the exact sum / n rounded once, bit for bit); acc="native" sums and products the same
with u = 2^-24 for float16 and float32; var and var_sample within 64 n u times the mean of the squares
(Welford/Chan in float64; the reference: the float64 sum of the squared deviations from the exact mean, and
np.nanvar within twice that). Where the non-NaN data hold inf, these are NumPy's own non-finite answers, exactly
(inf, -inf or NaN).

usage: mpiexec -n N python3 test_nan.py [--verbose]
Exit 0 when every rank passed, 1 otherwise, 77 when mpi4py's MPI is not libdreduce's."""

import argparse
import math
import sys
import traceback
import warnings
import zlib
from fractions import Fraction

import numpy as np
from mpi4py import MPI

import dreduce
import test_cpu as T
import test_distrib as D

COMM, RANK, SIZE = T.COMM, T.RANK, T.SIZE
FLOATS = ["float16", "bfloat16", "float32", "float64"]
OTHERS = ["int32", "bool"]
DATASETS = ["clean", "sparse", "some_ranks", "one_rank_all", "all", "inf", "posinf", "zeros", "payloads", "clustered"]
QS = [0.0, 1.0, 0.5, 0.25, 0.9, 0.3337]
BINS = 16
RANGE = (-1.5, 2.25)  # exact in every float type
U = 2.0 ** -53
ALL_NAN = "All-NaN slice encountered"
# NaN bit patterns: quiet and signalling (the mantissa's top bit clear, the rest not 0), both signs, payloads
PAYLOADS = {
    "float16": (np.uint16, [0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7D55, 0xFF3F]),
    "bfloat16": (np.uint16, [0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7FA5, 0xFFFF]),
    "float32": (np.uint32, [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FA00000, 0x7FC12345, 0xFFFFFFFF]),
    "float64": (np.uint64, [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF0000000000001,
                            0x7FF4000000000000, 0x7FF8DEADBEEF0001, 0xFFFFFFFFFFFFFFFF]),
}

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None


# ---- the arrays
def cuts_of(n, key):
    return D.cuts(n, key, zlib.crc32(key.encode()) % 3)


def special_rank(c):
    """The rank whose slice is all NaN in "one_rank_all": the one with the largest slice."""
    sizes = [c[r + 1] - c[r] for r in range(SIZE)]
    return max(range(SIZE), key=lambda r: sizes[r])


def whole_array(dtype, ds, kind="values", n=None):
    """(whole array as dreduce is given it: bfloat16 as uint16 bits, the slices' cuts), the same on every rank.
    kind "prod": values near 1 (a product of thousands stays finite)."""
    key = f"{dtype} {ds} {kind} {n}"
    rng = np.random.default_rng([zlib.crc32(key.encode()), 43])
    if n is None:
        n = {"all": 301, "zeros": 1500, "clustered": 70001}.get(ds, 2000)
    c = cuts_of(n, key)
    if dtype == "bool":
        return rng.random(n) < 0.5, c
    if dtype in T.INTS:
        if kind == "prod":
            return rng.choice(np.array([1, 1, 1, 2, -1], dtype), n), c
        return rng.integers(-10 ** 6, 10 ** 6, n, dtype=dtype), c
    if kind == "prod":
        v = rng.uniform(0.9, 1.1, n)
    else:
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3, n)
    nan = np.zeros(n, bool)
    if ds in ("sparse", "inf", "posinf", "zeros", "payloads"):
        nan = rng.random(n) < (0.01 if ds == "sparse" else 0.05)
        if ds != "sparse":
            nan[rng.integers(0, n)] = True
    elif ds == "some_ranks":  # NaN only in the odd ranks' slices (one rank: in its first half)
        owners = [r for r in range(SIZE) if r % 2 == 1] if SIZE > 1 else []
        for r in owners:
            nan[c[r]:c[r + 1]] = rng.random(c[r + 1] - c[r]) < 0.05
        if SIZE == 1:
            nan[:n // 2] = rng.random(n // 2) < 0.05
    elif ds == "one_rank_all":  # one rank's slice all NaN (one rank: its first third); none elsewhere
        if SIZE > 1:
            r = special_rank(c)
            nan[c[r]:c[r + 1]] = True
        else:
            nan[:n // 3] = True
    elif ds == "all":
        nan[:] = True
    elif ds == "clustered":  # a few runs of NaN (1 to 40 long), across 2048 and 32768 (the CPU backend's pieces)
        for start, length in [(2040, 17), (32760, 17), (int(rng.integers(0, n - 40)), 1),
                              (int(rng.integers(0, n - 40)), 40)]:
            nan[start:start + length] = True
    if ds == "zeros":  # signed zeros and 1.5: the minimum is a zero (dreduce's rule: -0.0 below +0.0)
        v = np.where(rng.random(n) < 0.8, np.where(rng.random(n) < 0.5, -0.0, 0.0), 1.5)
    if ds == "clustered":  # the extremes just after a run of NaN: in a piece taken after one that held NaN
        v[32790], v[32791] = 1e4, -1e4
    if ds in ("inf", "posinf"):
        v[rng.integers(0, n, 4)] = np.inf
        if ds == "inf":
            v[rng.integers(0, n, 3)] = -np.inf
    v[nan] = np.nan
    if dtype == "bfloat16":
        w = D.bf16_bits(v)
    else:
        w = v.astype(dtype)
    if ds == "payloads":
        ut, pats = PAYLOADS[dtype]
        bits = w.view(ut)
        idx = np.nonzero(nan)[0]
        bits[idx] = np.array(pats, ut)[rng.integers(0, len(pats), idx.size)]
    return w, c


def numpy_view(dtype, whole):
    """What NumPy is given: bfloat16 as its float32 values, bool as uint8 (as the library reduces it)."""
    return D.numpy_view(dtype, whole)


def part_of(dtype, whole, c):
    """(this rank's slice as passed to dreduce, its dtype= keyword)."""
    p = whole[c[RANK]:c[RANK + 1]]
    if dtype == "bfloat16":
        if ml_dtypes is not None:
            return p.view(ml_dtypes.bfloat16), {}
        return p, {"dtype": "bfloat16"}
    return p, {}


# ---- references
def exact_sum(vals):
    """The exact sum of float64 values (finite) as a Fraction."""
    ratios = [float(v).as_integer_ratio() for v in vals]
    if not ratios:
        return Fraction(0)
    den = max(d for _, d in ratios)
    return Fraction(sum(nu * (den // d) for nu, d in ratios), den)


def exact_prod(vals):
    """The product of float values as a fraction, rounded once to float64 (Python's int division rounds
    correctly): the numerators multiplied pairwise as a tree (fast for thousands of them), the denominators (powers of
    two) by adding their exponents."""
    nums, shift = [], 0
    for v in vals:
        n, d = float(v).as_integer_ratio()
        nums.append(n)
        shift += d.bit_length() - 1
    while len(nums) > 1:
        nums = [nums[i] * nums[i + 1] for i in range(0, len(nums) - 1, 2)] + ([nums[-1]] if len(nums) % 2 else [])
    return (nums[0] if nums else 1) / (1 << shift)


def gamma(n, u=U):
    return n * u / (1 - n * u)


def quiet(fn, *a, **kw):
    """NumPy's answer without its warnings (what the user would see is checked on dreduce's side)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def same_value(got, want):
    """Floats: NaN equal to NaN, zeros by value (their sign is checked apart), else bit for bit."""
    if got is None or want is None:
        return got is None and want is None
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and (want != 0 or got == 0)


def zero_sign_ok(got, vals, op):
    """dreduce's rule for min and max: -0.0 below +0.0 (NumPy's choice among equal zeros is its own)."""
    if got is None or got != 0 or not vals.size:
        return True
    zeros = vals[vals == 0]
    if op == "min":
        want_neg = bool(np.signbit(zeros).any())
    else:
        want_neg = bool(np.signbit(zeros).all())
    return bool(math.copysign(1.0, got) < 0) == want_neg


def float_sum_ok(got, vals, exact_mode, u=U):
    """(good, why) of a float sum of the non-NaN values vals (float64); u: the accumulator's unit roundoff."""
    if np.isinf(vals).any():
        want = float(quiet(np.sum, vals))
        return same_value(got, want), f"got {got!r}, NumPy {want!r}"
    want = math.fsum(vals)
    if exact_mode:
        good = got == want and (want != 0 or got == 0) and (want == 0 or float(got).hex() == want.hex())
        return good, f"got {got!r} ({float(got).hex()}), expected exactly {want!r} ({want.hex()})"
    bound = gamma(max(vals.size, 1), u) * math.fsum(np.abs(vals)) + u * abs(want)
    return abs(got - want) <= bound, f"got {got!r}, expected {want!r} within {bound:g}"


# ---- the checks of one case
class Case:
    """One data set on one context: the whole array, this rank's part, NumPy's view of the whole. policy: the
    nan= of the calls (None: the context's, which must then be "omit"). place(part, dtype, ctx): the array to pass
    for this rank's host slice (part: bfloat16 as uint16 bits), e.g. a device copy (test_gpu.py), or None."""

    def __init__(self, ctx, label, dtype, ds, kind="values", n=None, place=None, policy="omit"):
        self.ctx, self.dtype, self.ds, self.policy = ctx, dtype, ds, policy
        self.whole, self.c = whole_array(dtype, ds, kind, n)
        self.x = numpy_view(dtype, self.whole)
        with np.errstate(invalid="ignore"):  # signalling NaN payloads
            self.xf = self.x.astype(np.float64)
        self.nanmask = np.isnan(self.xf) if self.x.dtype.kind == "f" else np.zeros(self.x.size, bool)
        self.vals = self.xf[~self.nanmask]
        self.nans = int(self.nanmask.sum())
        self.my_nans = int(self.nanmask[self.c[RANK]:self.c[RANK + 1]].sum())
        self.part, self.kw = part_of(dtype, self.whole, self.c)
        if place is not None:  # a copy of this rank's slice elsewhere (a GPU), or None where it cannot be made
            self.part = place(self.whole[self.c[RANK]:self.c[RANK + 1]], dtype, ctx)
            self.kw = {"dtype": "bfloat16"} if dtype == "bfloat16" else {}
        self.name = f"{label} {dtype} {ds}" + (f" n={n}" if n else "") + (" (prod data)" if kind == "prod" else "")
        self.valid_here = ctx.allreduce or RANK == 0

    def call(self, fn, *a, **kw):
        """(result, [warning messages], exception or None)."""
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                got = fn(*a, **kw)
                err = None
            except dreduce.Error as e:
                got, err = None, e
        msgs = [str(m.message) for m in w if issubclass(m.category, RuntimeWarning)]
        return got, msgs, err

    def reduce(self, op, nan="", **kw):
        kw = dict(self.kw, **kw)
        if op in ("argmin", "argmax"):
            kw["first"] = self.c[RANK]
        return self.call(self.ctx.reduce, self.part, op, nan=self.policy if nan == "" else nan, **kw)

    def all_nan(self):
        return self.xf.size > 0 and self.nans == self.xf.size

    def check_counts(self, name, policy="omit"):
        """reduce_info() and timings() after a reduce()."""
        info = self.ctx.reduce_info()
        nan = self.nans if policy == "omit" else 0
        mine = self.my_nans if policy == "omit" else 0
        why = []
        if info["local_nan_count"] != mine or self.ctx.timings()["nan_count"] != mine:
            why.append(f"this rank's nan count {info['local_nan_count']}/{self.ctx.timings()['nan_count']}, "
                       f"expected {mine}")
        if info["nan"] != policy:
            why.append(f"reduce_info nan {info['nan']!r}")
        if self.valid_here and (info["count"], info["nan_count"]) != (self.x.size, nan):
            why.append(f"reduce_info count/nan_count {info['count']}/{info['nan_count']}, expected "
                       f"{self.x.size}/{nan}")
        if not self.valid_here and (info["valid"] or info["count"] is not None):
            why.append(f"reduce_info on a rank without the result: {info}")
        T.check(f"{name}: NaN counts", not why, "; ".join(why))

    def expect_warning(self, name, msgs, want):
        if want and self.valid_here:
            T.check(f"{name}: warns", msgs == [ALL_NAN], f"warnings {msgs}, expected [{ALL_NAN!r}]")
        else:
            T.check(f"{name}: no warning", not msgs, f"warnings {msgs}")

    # -- ops
    def sums(self, exact_mode, u=U):
        name = f"{self.name} sum{' exact' if exact_mode else ''}"
        got, msgs, err = self.reduce("sum")
        if err is not None:
            return T.fail(name, f"raised {err!r}")
        self.expect_warning(name, msgs, False)
        self.check_counts(name)
        if not self.valid_here:
            return T.check(name, got is None, f"got {got!r}")
        if self.x.dtype.kind != "f":
            return T.check(name, got == int(self.x.astype(np.int64).sum()), f"got {got!r}")
        good, why = float_sum_ok(got, self.vals, exact_mode, u)
        T.check(name, good, why)

    def prod(self, u=U):
        name = f"{self.name} prod"
        got, msgs, err = self.reduce("prod")
        if err is not None:
            return T.fail(name, f"raised {err!r}")
        self.expect_warning(name, msgs, False)
        if not self.valid_here:
            return T.check(name, got is None, f"got {got!r}")
        vals = self.vals
        if not np.isfinite(vals).all() or (vals == 0).any():
            want = float(quiet(np.nanprod, self.xf))
            return T.check(name, same_value(got, want) and (want != 0 or got == 0), f"got {got!r}, NumPy {want!r}")
        exact = exact_prod(vals)
        bound = gamma(max(vals.size, 1), u) * abs(exact)
        T.check(name, abs(got - exact) <= bound, f"got {got!r}, expected {exact!r} within {bound:g}")

    def minmax(self, op):
        name = f"{self.name} {op}"
        got, msgs, err = self.reduce(op)
        if err is not None:
            return T.fail(name, f"raised {err!r}")
        self.expect_warning(name, msgs, self.all_nan())
        self.check_counts(name)
        if not self.valid_here:
            return T.check(name, got is None, f"got {got!r}")
        want = float(quiet(np.nanmin if op == "min" else np.nanmax, self.xf))
        T.check(name, same_value(got, want) and zero_sign_ok(got, self.vals, op), f"got {got!r}, NumPy {want!r}")

    def arg(self, op):
        name = f"{self.name} {op}"
        got, msgs, err = self.reduce(op)
        self.expect_warning(name, msgs, False)
        if self.all_nan():  # np.nanargmin raises ValueError("All-NaN slice encountered")
            if self.valid_here:
                ok = isinstance(err, dreduce.UsageError) and isinstance(err, ValueError) and ALL_NAN in str(err)
                T.check(name + ": raises", ok, f"got {got!r}, error {err!r}")
            else:
                T.check(name + ": None", got is None and err is None, f"got {got!r}, error {err!r}")
            return
        if err is not None:
            return T.fail(name, f"raised {err!r}")
        if not self.valid_here:
            return T.check(name, got is None, f"got {got!r}")
        i = int(quiet(np.nanargmin if op == "argmin" else np.nanargmax, self.xf))
        want = float(self.xf[i])
        good = isinstance(got, tuple) and got[1] == i and same_value(got[0], want)
        T.check(name, good, f"got {got!r}, NumPy ({want!r}, {i})")

    def stats(self, exact_mode):
        name = f"{self.name} stats{' exact' if exact_mode else ''}"
        got, msgs, err = self.reduce("stats")
        if err is not None:
            return T.fail(name, f"raised {err!r}")
        self.expect_warning(name, msgs, self.all_nan())
        self.check_counts(name)
        if not self.valid_here:
            return T.check(name, got is None, f"got {got!r}")
        if not isinstance(got, dreduce.Stats):
            return T.fail(name, f"got {got!r}")
        vals, n = self.vals, self.vals.size
        why = []
        if (got.count, got.nan_count) != (n, self.nans):
            why.append(f"count/nan_count {got.count}/{got.nan_count}, expected {n}/{self.nans}")
        for f, fn in (("min", np.nanmin), ("max", np.nanmax)):
            want = float(quiet(fn, self.xf))
            if not (same_value(getattr(got, f), want) and zero_sign_ok(getattr(got, f), vals, f)):
                why.append(f"{f} {getattr(got, f)!r}, NumPy {want!r}")
        if self.x.dtype.kind != "f":
            if got.sum != int(self.x.astype(np.int64).sum()):
                why.append(f"sum {got.sum!r}")
        elif n == 0:  # NaN only: nansum 0, nanmean and nanvar NaN
            if not (got.sum == 0 and math.isnan(got.mean) and math.isnan(got.var) and math.isnan(got.var_sample)):
                why.append(f"NaN only: sum {got.sum!r} mean {got.mean!r} var {got.var!r}/{got.var_sample!r}")
        elif not np.isfinite(vals).all():  # NumPy's non-finite answers
            for f, want in (("sum", quiet(np.nansum, self.xf)), ("mean", quiet(np.nanmean, self.xf)),
                            ("var", quiet(np.nanvar, self.xf))):
                if not same_value(getattr(got, f), float(want)):
                    why.append(f"{f} {getattr(got, f)!r}, NumPy {float(want)!r}")
        else:
            good, w = float_sum_ok(got.sum, vals, exact_mode)
            if not good:
                why.append("sum: " + w)
            ex = exact_sum(vals)
            mean = ex / n
            if exact_mode:
                if got.mean != float(mean):
                    why.append(f"mean {got.mean!r} != {float(mean)!r} (the exact sum / n, rounded once)")
            else:
                bound = (gamma(n) * math.fsum(np.abs(vals)) + U * abs(float(ex))) / n + U * abs(float(mean))
                if abs(got.mean - float(mean)) > bound:
                    why.append(f"mean {got.mean!r} != {float(mean)!r} within {bound:g}")
            d = vals - float(mean)
            m2 = math.fsum(d * d)
            scale = math.fsum(vals * vals) / n + 1e-300
            tol = 64 * n * U * scale
            var, var_s = m2 / n, (m2 / (n - 1) if n > 1 else math.nan)
            if abs(got.var - var) > tol:
                why.append(f"var {got.var!r} != {var!r} within {tol:g}")
            if n > 1 and abs(got.var_sample - var_s) > tol * n / (n - 1):
                why.append(f"var_sample {got.var_sample!r} != {var_s!r}")
            if n == 1 and not math.isnan(got.var_sample):
                why.append(f"var_sample {got.var_sample!r} of one element")
            # and against NumPy's own nanvar (float64; its two-pass error is far below the bound)
            npv = (float(quiet(np.nanvar, self.xf)), float(quiet(np.nanvar, self.xf, ddof=1)) if n > 1 else None)
            if abs(npv[0] - got.var) > 2 * tol or (npv[1] is not None and abs(npv[1] - got.var_sample) > 4 * tol):
                why.append(f"var/var_sample {got.var!r}/{got.var_sample!r}, np.nanvar {npv}")
        T.check(name, not why, "; ".join(why) + f" (got {got})")

    def quantiles(self):
        name = f"{self.name} quantile"
        got, msgs, err = self.call(self.ctx.quantile, self.part, QS, nan=self.policy, **self.kw)
        if err is not None:
            return T.fail(name, f"raised {err!r}")
        want = quiet(np.nanquantile, self.xf, QS)
        good = isinstance(got, np.ndarray) and got.dtype == np.float64 and \
            all(same_value(g, w) for g, w in zip(got.tolist(), want.tolist()))
        T.check(name, good, f"got {got!r}, np.nanquantile {want!r}")
        T.check(f"{name}: warning", msgs == ([ALL_NAN] if self.all_nan() else []), f"warnings {msgs}")
        self.check_dist(name, "omit")
        info = self.ctx.dist_info()
        if self.vals.size:  # the order statistics are those of the sorted non-NaN elements
            s = np.sort(self.vals)
            bad = [o for o in info.get("order", []) if not (same_value(o["lower"], s[o["lower_rank"]]) and
                                                             same_value(o["upper"], s[o["upper_rank"]]))]
            T.check(f"{name}: dist_info order", len(info.get("order", [])) == len(QS) and not bad, f"{bad}")
        got, msgs, err = self.call(self.ctx.median, self.part, nan=self.policy, **self.kw)
        want = float(quiet(np.nanquantile, self.xf, 0.5))
        T.check(f"{self.name} median", err is None and same_value(got, want), f"got {got!r} {err!r}, NumPy {want!r}")
        T.check(f"{self.name} median: warning", msgs == ([ALL_NAN] if self.all_nan() else []), f"warnings {msgs}")

    def check_dist(self, name, policy):
        info = self.ctx.dist_info()
        have = (info["count"], info["nan_count"], info["local_nan_count"], info["nan"])
        want = (self.x.size, self.nans, self.my_nans, policy)
        T.check(f"{name}: timings nan_count", self.ctx.timings()["nan_count"] == self.my_nans,
                f"timings() {self.ctx.timings()['nan_count']}, this rank's NaN {self.my_nans}")
        if info["valid"]:
            T.check(f"{name}: dist_info counts", have == want, f"{have}, expected {want}")
        else:
            T.check(f"{name}: dist_info counts", have[2:] == want[2:], f"{have}, expected {want}")

    def histograms(self):
        keep = self.x[~self.nanmask]  # np.histogram(a[~np.isnan(a)]): NaN in no bin either way
        for rng in (RANGE, None):
            name = f"{self.name} histogram range={rng}"
            refused = rng is None and keep.dtype.kind == "f" and not np.isfinite(keep).all()
            if refused:  # the automatic range of data holding inf: NumPy refuses it too
                T.expect_raise(name + " (refused: inf)", dreduce.UsageError,
                               lambda: self.ctx.histogram(self.part, BINS, rng, nan=self.policy, **self.kw), True,
                               "not finite" if RANK == 0 else None)
                continue
            if rng is None and keep.size and D.too_many_bins(keep, BINS, rng):
                continue
            got, msgs, err = self.call(self.ctx.histogram, self.part, BINS, rng, nan=self.policy, **self.kw)
            if err is not None:
                T.fail(name, f"raised {err!r}")
                continue
            T.check(f"{name}: no warning", not msgs, f"warnings {msgs}")
            self.check_dist(name, "omit")
            if not self.valid_here:
                T.check(name, got is None, f"got {got!r}")
                continue
            want = D.ref_histogram(keep, BINS, rng)
            good = got is not None and np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]) and \
                got[1].dtype == want[1].dtype
            T.check(name, good, f"got {got!r}, NumPy {want!r}")
        if self.nans and self.x.dtype.kind == "f":  # "propagate" refuses the automatic range of data with NaN
            T.expect_raise(f"{self.name} histogram auto range, nan='propagate' (refused)", dreduce.UsageError,
                           lambda: self.ctx.histogram(self.part, BINS, nan="propagate", **self.kw), True,
                           "NaN" if RANK == 0 else None)


def make_case(ctx, label, dtype, ds, kind="values", n=None, place=None, policy="omit"):
    """A Case, or None where some rank could not place its part (collective when place is given)."""
    case = Case(ctx, label, dtype, ds, kind, n, place, policy)
    if place is not None and not COMM.allreduce(case.part is not None, op=MPI.LAND):
        return None
    return case


def float_case(ctx, exact_ctx, label, dtype, ds, n=None, place=None, ops=None):
    """Every op of one float data set: ctx (acc="wide", nan="omit" per call) and exact_ctx (acc="exact", a
    Context(nan="omit") called without nan=; or None)."""
    case = make_case(ctx, label, dtype, ds, n=n, place=place)
    if case is None:
        return
    want = ops or ["sum", "prod", "min", "max", "argmin", "argmax", "stats", "quantile", "histogram"]
    for op in want:
        if op == "sum":
            case.sums(False)
        elif op == "prod" and n is None:
            pc = make_case(ctx, label, dtype, ds, kind="prod", place=place)
            if pc is not None:
                pc.prod()
        elif op in ("min", "max"):
            case.minmax(op)
        elif op in ("argmin", "argmax"):
            case.arg(op)
        elif op == "stats":
            case.stats(False)
        elif op == "quantile":
            case.quantiles()
        elif op == "histogram":
            case.histograms()
    if exact_ctx is not None:
        e = make_case(exact_ctx, label + " exact", dtype, ds, n=n, place=place, policy=None)
        if e is not None:
            e.sums(True)
            if n is None:
                e.stats(True)


def same_answer(a, b):
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], np.ndarray):
        return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[1].dtype == b[1].dtype
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def integer_case(ctx, dtype):
    """int32, bool: "omit" changes nothing (the answer is "propagate"'s, the plain NumPy function's, no NaN)."""
    for kind in ("values", "prod"):
        case = Case(ctx, "int", dtype, "sparse", kind=kind)
        ops = ["prod"] if kind == "prod" else ["sum", "min", "max", "argmin", "argmax", "stats"]
        for op in ops:
            name = f"{case.name} {op} omit == propagate"
            a, _, ea = case.reduce(op, nan="omit")
            case.check_counts(name)
            b, _, eb = case.reduce(op, nan="propagate")
            T.check(name, ea is None and eb is None and same_answer(a, b), f"{a!r} vs {b!r} ({ea!r}, {eb!r})")
            if case.valid_here and op in ("sum", "min", "max") and ea is None:
                xi = case.x.astype(np.int64)
                want = {"sum": xi.sum, "min": xi.min, "max": xi.max}[op]()
                T.check(f"{case.name} {op} == NumPy", a == int(want), f"got {a!r}, NumPy {want!r}")
            if isinstance(a, dreduce.Stats):
                T.check(f"{name}: Stats.nan_count 0", a.nan_count == 0 and a.count == case.x.size, f"{a}")
    case = Case(ctx, "int", dtype, "sparse")
    for label, fn in (("quantile", lambda nan: ctx.quantile(case.part, QS, nan=nan)),
                      ("median", lambda nan: ctx.median(case.part, nan=nan)),
                      ("histogram auto", lambda nan: ctx.histogram(case.part, BINS, nan=nan)),
                      ("histogram range", lambda nan: ctx.histogram(case.part, BINS, RANGE, nan=nan))):
        a = fn("omit")
        info = ctx.dist_info()
        b = fn("propagate")
        T.check(f"{case.name} {label} omit == propagate", (a is None and b is None) or same_answer(a, b),
                f"{a!r} vs {b!r}")
        T.check(f"{case.name} {label}: no NaN counted", info["nan_count"] == 0 and info["local_nan_count"] == 0,
                f"{info}")
        if label == "quantile":
            want = np.quantile(case.xf, QS)
            T.check(f"{case.name} quantile == np.quantile", all(map(D.same_bits, a.tolist(), want.tolist())))


# ---- the matrix
def matrix(place=None, device="cpu", dtypes=FLOATS, datasets=DATASETS, big=True, ints=True, label="cpu"):
    """The float data sets on a context of `device` (acc="wide", nan="omit" per call; acc="exact" with
    Context(nan="omit"); allreduce), the integer ones; place: as Case's (test_gpu.py's device arrays)."""
    kw = {"device": device, "share_gpus": True} if device == "gpu" else {"device": device, "cpu_threads": 1}
    with dreduce.Context(**kw) as ctx, \
            dreduce.Context(acc="exact", allreduce=True, nan="omit", **kw) as ectx:
        for dtype in dtypes:
            for ds in datasets:
                float_case(ctx, ectx, label, dtype, ds, place=place)
        if big:
            float_case(ctx, ectx, label, "float32", "sparse", n=100003, place=place,
                       ops=["sum", "min", "argmax", "stats", "quantile", "histogram"])
        if ints:
            for dtype in OTHERS:
                integer_case(ctx, dtype)
    with dreduce.Context(allreduce=True, **kw) as ctx:  # every rank gets the result: warnings and errors too
        for dtype in ("float32", "bfloat16"):
            for ds in ("sparse", "all", "one_rank_all"):
                float_case(ctx, None, label + " allreduce", dtype, ds, place=place,
                           ops=["sum", "min", "max", "argmin", "stats", "quantile", "histogram"])


def more_contexts():
    """nan="omit" on other configurations: acc="native", several CPU threads, two emulated nodes, a flat
    combine."""
    with dreduce.Context(device="cpu", cpu_threads=1, acc="native", nan="omit") as ctx:
        for dtype in ("float16", "float32", "float64"):
            u = U if dtype == "float64" else 2.0 ** -24
            for ds in ("sparse", "one_rank_all", "all"):
                case = make_case(ctx, "native", dtype, ds, policy=None)
                case.sums(False, u)
                case.minmax("min")
                make_case(ctx, "native", dtype, ds, kind="prod", policy=None).prod(u)
    configs = [("2 threads", {"cpu_threads": 2}), ("flat", {"combine": "flat", "allreduce": True})]
    if SIZE >= 3:
        configs.append(("2 nodes", {"ranks_per_node": 2, "allreduce": True}))
    for label, kw in configs:
        with dreduce.Context(device="cpu", **kw) as ctx, dreduce.Context(device="cpu", acc="exact", nan="omit",
                                                                        **kw) as ectx:
            for dtype in ("float32", "bfloat16"):
                for ds in ("sparse", "some_ranks", "payloads"):
                    float_case(ctx, ectx, label, dtype, ds,
                               ops=["sum", "max", "argmin", "stats", "quantile", "histogram"])


def policies():
    """A per-call nan= does not stick; the context's policy, Context(nan=); propagate as before."""
    whole, c = whole_array("float64", "sparse")
    part = whole[c[RANK]:c[RANK + 1]]
    vals = whole[~np.isnan(whole)]
    with dreduce.Context(device="cpu", allreduce=True) as ctx:
        T.check("Context().nan is 'propagate'", ctx.nan == "propagate", ctx.nan)
        s = ctx.reduce(part)
        T.check("propagate: the sum of data with NaN is NaN", math.isnan(s), f"{s!r}")
        s = ctx.reduce(part, nan="omit")
        T.check("nan='omit' per call", abs(s - math.fsum(vals)) <= 1e-9 * math.fsum(np.abs(vals)), f"{s!r}")
        s = ctx.reduce(part)
        T.check("the next call without nan= has the context's policy", math.isnan(s), f"{s!r}")
        T.check("reduce_info after propagate: no NaN left out", ctx.reduce_info()["nan_count"] == 0 and
                ctx.timings()["nan_count"] == 0, f"{ctx.reduce_info()}")
        m = ctx.median(part, nan="omit")
        T.check("median nan='omit' per call", m == np.nanquantile(whole, 0.5), f"{m!r}")
        T.check("quantile without nan= after it: NaN", math.isnan(ctx.quantile(part, 0.5)))
        am = ctx.reduce(part, "argmax", first=c[RANK])
        T.check("propagate argmax: the first NaN", am[1] == int(np.argmax(np.isnan(whole))) and math.isnan(am[0]),
                f"{am!r}")
        st = ctx.reduce(part, "stats")
        T.check("propagate stats: NaN mean, nan_count 0", math.isnan(st.mean) and st.nan_count == 0 and
                st.count == whole.size, f"{st}")
        ctx.prepare(part, "argmin", nan="omit")  # each rank's place in the whole array, for argmin without first=
        am = ctx.reduce(part, "argmin", nan="omit")
        i = int(np.nanargmin(whole))
        T.check("prepare(nan='omit'), then argmin nan='omit'", am == (whole[i], i), f"{am!r}")
        T.expect_raise("prepare nan='bogus' on every rank", dreduce.UsageError,
                       lambda: ctx.prepare(part, "sum", nan="bogus"), True, "nan='bogus'")
        T.expect_raise(f"prepare nan='bogus' on rank {SIZE - 1} only", dreduce.UsageError,
                       lambda: ctx.prepare(part, "sum", nan="bogus" if RANK == SIZE - 1 else None), True,
                       "nan='bogus'" if RANK == SIZE - 1 else None)
        T.check("after the refused prepare", ctx.reduce(part, "max", nan="omit") == np.nanmax(whole))
    with dreduce.Context(device="cpu", nan="omit") as ctx:
        T.check("Context(nan='omit').nan", ctx.nan == "omit")
        s = ctx.reduce(part)
        T.check("Context(nan='omit'): omit by default", s is None if RANK else
                abs(s - math.fsum(vals)) <= 1e-9 * math.fsum(np.abs(vals)), f"{s!r}")
        s = ctx.reduce(part, nan="propagate")
        T.check("Context(nan='omit'), nan='propagate' per call", s is None if RANK else math.isnan(s), f"{s!r}")
        T.check("Context(nan='omit'): back to omit", ctx.reduce(part, "max") == (None if RANK else np.nanmax(whole)))
        st = ctx.reduce(part, "stats")
        T.check("Context(nan='omit'): stats nan_count", st is None if RANK else
                (st.nan_count, st.count) == (int(np.isnan(whole).sum()), vals.size), f"{st}")
    with dreduce.Context(device="cpu", nan=None) as ctx:
        T.check("Context(nan=None): the library's default, propagate", ctx.nan == "propagate")


# ---- errors
def still_works(ctx, name):
    whole, c = whole_array("float32", "sparse")
    part = whole[c[RANK]:c[RANK + 1]]
    want = float(np.nanmax(whole))
    got = ctx.reduce(part, "max", nan="omit")
    ok = got == want if (ctx.allreduce or RANK == 0) else got is None
    got2 = ctx.reduce(part, "max")
    ok = ok and (math.isnan(got2) if ctx.allreduce or RANK == 0 else got2 is None)
    q = ctx.quantile(part, 0.5, nan="omit")
    ok = ok and D.same_bits(q, float(np.nanquantile(whole.astype(np.float64), 0.5)))
    T.check(f"{name}: next calls", ok, f"got {got!r}, {got2!r}, {q!r}")


def errors():
    x = np.linspace(-1, 1, 40, dtype=np.float32)
    x[::7] = np.nan
    UE = dreduce.UsageError
    last = RANK == SIZE - 1
    for allreduce in (False, True):
        with dreduce.Context(device="cpu", cpu_threads=1, allreduce=allreduce) as ctx:
            tag = "allreduce" if allreduce else "plain"
            here = allreduce or RANK == 0
            calls = [("reduce", lambda nan: ctx.reduce(x, "sum", nan=nan), False),
                     ("reduce stats", lambda nan: ctx.reduce(x, "stats", nan=nan), False),
                     ("histogram", lambda nan: ctx.histogram(x, 8, (-1.0, 1.0), nan=nan), True),
                     ("quantile", lambda nan: ctx.quantile(x, [0.5, 0.1], nan=nan), True),
                     ("median", lambda nan: ctx.median(x, nan=nan), True)]
            for label, fn, collective in calls:
                for bad in ("bogus", True, "OMIT"):
                    T.expect_raise(f"{tag} {label} nan={bad!r} on every rank", UE, lambda: fn(bad), True,
                                   f"nan={bad!r}")
                still_works(ctx, f"{tag} {label} bad nan on every rank")
                # on the last rank only: it names its value; the others get an error where the result arrives
                # (histogram and quantile agree on their arguments first: every rank)
                T.expect_raise(f"{tag} {label} nan='bogus' on rank {SIZE - 1} only", UE,
                               lambda: fn("bogus" if last else "omit"),
                               everywhere=last or here or collective, match="nan='bogus'" if last else None)
                still_works(ctx, f"{tag} {label} bad nan on one rank")
                if SIZE > 1:  # ranks disagreeing on the policy
                    T.expect_raise(f"{tag} {label} policy differs on rank 1", UE,
                                   lambda: fn("omit" if RANK == 1 else "propagate"),
                                   everywhere=here or collective,
                                   match=None if RANK else "NaN policy" if collective else "nan policy")
                    still_works(ctx, f"{tag} {label} policies differ")
                    T.expect_raise(f"{tag} {label} context's policy on rank 1, omit elsewhere", UE,
                                   lambda: fn(None if RANK == 1 else "omit"), everywhere=here or collective)
                    still_works(ctx, f"{tag} {label} policies differ (None)")
    T.expect_raise("Context(nan='bogus') on every rank", UE, lambda: dreduce.Context(device="cpu", nan="bogus"),
                   True, "nan='bogus': allowed: 'propagate', 'omit'")
    T.expect_raise("Context(nan=1) on every rank", UE, lambda: dreduce.Context(device="cpu", nan=1), True, "nan=1")
    T.expect_raise("Context(nan='bogus') on one rank", UE,
                   lambda: dreduce.Context(device="cpu", nan="bogus" if last else "omit"), True,
                   "nan='bogus'" if last else None)
    if SIZE > 1:  # each rank's context may start with its own policy; the calls must agree
        with dreduce.Context(device="cpu", nan="omit" if RANK == 1 else "propagate", allreduce=True) as ctx:
            T.expect_raise("contexts with different policies: a call without nan=", UE,
                           lambda: ctx.reduce(x), True, "nan policy" if RANK == 0 else None)
            got = ctx.reduce(x, nan="omit")
            T.check("contexts with different policies: a call with nan='omit'",
                    got == float(np.nansum(x.astype(np.float64))) * SIZE or
                    abs(got - float(np.nansum(x.astype(np.float64))) * SIZE) < 1e-12, f"{got!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    T.verbose = a.verbose
    why = T.same_mpi()
    if why:
        if RANK == 0:
            print(f"SKIP: {why}")
        return 77
    if RANK == 0:
        print(f"NumPy {np.__version__}; bfloat16 as {'ml_dtypes' if ml_dtypes else 'uint16 bits with dtype='}",
              flush=True)
    for part in (matrix, more_contexts, policies, errors):
        try:
            part()
        except Exception:  # noqa: BLE001: an unexpected error: report, then end every rank (others may wait)
            T.fail("test_nan", "unexpected exception\n" + traceback.format_exc())
            sys.stdout.flush()
            COMM.Abort(1)
    counts = COMM.gather((T.passed, len(T.failures)), root=0)
    if RANK == 0:
        p, f = (sum(c[i] for c in counts) for i in range(2))
        print(f"python_nan np {SIZE}: {p} passed, {f} failed", flush=True)
    return 1 if COMM.allreduce(len(T.failures)) else 0


if __name__ == "__main__":
    sys.exit(main())
