#!/usr/bin/env python3
"""Context.histogram, quantile and median on the CPU backend, on every rank of MPI.COMM_WORLD (run it under mpiexec
at 1..4 ranks; tests/python/run_mpi.py does, with a time limit: a hang fails). Every rank makes the same whole array
from a seeded generator, takes its own uneven slice of it (some ranks empty), and compares the answer with NumPy's
on the whole array, exactly:

- histogram: counts and edges equal to np.histogram(whole, bins, range) (np.array_equal, and the dtypes: int64
  counts, edges in NumPy's bin type), for every dtype (bool as uint8, bfloat16 as its float32 values) x bins 1, 10,
  256, 4096 x the automatic range and explicit ones (the data's own, wider, narrower, lo == hi) x data sets
  (random, all equal, two values, sorted, reversed, +-inf, NaN, signed zeros, subnormals, huge values, k / 10 and
  its neighbours (on and beside the edges of 10 bins over [0, 1]), integer extremes, one element, no element);
  dist_info()'s count, nan_count, below, above, lo, hi, passes;
- quantile: np.quantile(whole.astype(np.float64), q) bit for bit (zeros by value, since which of -0.0 and +0.0 an
  order statistic is is unspecified; NaN equal to NaN) at q = 0, 1, 0.5, one q with (n - 1) q whole and one
  between, five at once, 64 at once, and median(); dist_info()'s order statistics and passes;
- errors: the automatic range of data with NaN or inf, bins 0, lo > hi, a range that is not finite (or not as the
  bin type), q outside [0, 1] or NaN, no q, 65 q, the quantile of an empty array: UsageError on every rank; the
  binding's own refusals (non-contiguous arrays, bins or range or q of the wrong type) on every rank and on one rank
  only (that rank's message names its problem, the others get an error too, no rank waits); ranks disagreeing on
  bins, range, q or dtype; the context still answers right afterwards;
- inputs: 2-D, read-only, the buffer protocol, __array_interface__, DLPack, dtype= (bfloat16 bits in uint16),
  ml_dtypes' bfloat16 where it is installed; allreduce contexts, two emulated nodes, several CPU threads.

NumPy versions. dreduce follows NumPy 2. NumPy 1.x differs where NumPy 2 computes in the data's type and NumPy 1
promoted to float64 (NEP 50): the automatic range of float16/float32 data (np.linspace between the min and max
scalars, and the bin index estimate), and the explicit range's estimate of float16 data with many bins. So below
NumPy 2 the reference is np2_histogram(), NumPy 2's algorithm written out in each operation's type; where NumPy 2
is installed the reference is np.histogram itself, and np2_histogram() is checked against it too (so the emulation
that the NumPy 1 runs rely on is itself tested wherever NumPy 2 is).

usage: mpiexec -n N python3 test_distrib.py [--verbose] [--quick]
Exit 0 when every rank passed, 1 otherwise, 77 when mpi4py's MPI is not libdreduce's."""

import argparse
import math
import os
import sys
import traceback
import warnings
import zlib
from fractions import Fraction

import numpy as np
from mpi4py import MPI

import dreduce
import test_cpu as T

COMM, RANK, SIZE = T.COMM, T.RANK, T.SIZE
NP2 = int(np.__version__.split(".")[0]) >= 2
INTS = T.INTS
FLOATS = ["float16", "bfloat16", "float32", "float64"]
DTYPES = ["bool"] + INTS + FLOATS
BINS = [1, 10, 256, 4096]
RANGES = ["auto", "data", "wider", "narrower", "point"]
Q_PASSES = {8: 1, 16: 2, 32: 3, 64: 6}  # radix digits of at most 11 bits (src/common/distrib.h)
PILOT_EXPECT = {"off": 0, "miss": 2}  # dist_info()["pilot"] each DREDUCE_PILOT mode must give (always: 1 or 2)
notes = []  # cases NumPy itself cannot answer (none expected): printed, not counted


def note(text):
    if text not in notes:
        notes.append(text)
        print(f"NOTE rank {RANK}: {text}", flush=True)


# ---- the arrays: what dreduce is given, and what NumPy is given for the same values
def bf16_bits(values):
    return T.bf16_bits(np.asarray(values, np.float64).astype(np.float32))


def bf16_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def numpy_view(dtype, whole):
    """The array NumPy answers for: bool as uint8 (np.histogram converts it so), bfloat16 as its float32 values."""
    if dtype == "bool":
        return whole.view(np.uint8)
    if dtype == "bfloat16":
        return bf16_f32(whole)
    return whole


TINY = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149, "float64": 2.0 ** -1074}
HUGE = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
        "float64": 1.7976931348623157e308}
INT_DATA = ["random", "equal", "two", "sorted", "reversed", "extremes", "one", "empty"]
FLOAT_DATA = ["random", "equal", "two", "sorted", "reversed", "inf", "nan", "zeros", "zeros_mixed", "subnormal",
              "huge", "wide", "tenths", "one", "empty"]
BOOL_DATA = ["random", "equal", "sorted", "reversed", "one", "empty"]


def datasets(dtype):
    return BOOL_DATA if dtype == "bool" else INT_DATA if dtype in INTS else FLOAT_DATA


def whole_array(dtype, ds):
    """The case's whole array, the same on every rank (bfloat16 as uint16 bits)."""
    rng = np.random.default_rng([zlib.crc32(f"{dtype} {ds}".encode()), 41])
    n = {"one": 1, "empty": 0, "equal": 300, "two": 500, "zeros": 200, "zeros_mixed": 300}.get(ds, 997)
    if dtype == "bool":
        a = rng.random(n) < 0.4
        if ds == "equal":
            a[:] = True
        elif ds == "sorted":
            a.sort()
        elif ds == "reversed":
            a = np.sort(a)[::-1].copy()
        return a
    if dtype in INTS:
        info = np.iinfo(dtype)
        if ds == "equal":
            return np.full(n, 7 if info.max > 7 else 1, dtype)
        if ds == "two":
            return rng.choice(np.array([-5, 100] if info.min < 0 else [3, 200], dtype), n)
        if ds == "one":  # a value lo - 0.5 and hi + 0.5 can widen (NumPy cannot histogram one huge integer)
            return np.array([rng.integers(0 if info.min == 0 else -100, 100)], dtype)
        if ds == "extremes":
            pool = sorted({info.min, info.min + 1, 0, info.max - 1, info.max})
            return rng.choice(np.array(pool, dtype), n)
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        if ds == "sorted":
            a.sort()
        elif ds == "reversed":
            a = np.sort(a)[::-1].copy()
        return a
    big = HUGE[dtype]
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    if ds == "equal":
        v[:] = -3.5
    elif ds == "two":
        v = rng.choice([-1.25, 2.5], n)
    elif ds == "sorted":
        v.sort()
    elif ds == "reversed":
        v = np.sort(v)[::-1].copy()
    elif ds == "inf" and n:
        v[rng.integers(0, n, 5)] = np.inf
        v[rng.integers(0, n, 3)] = -np.inf
    elif ds == "nan" and n:
        v[rng.integers(0, n, 4)] = np.nan
    elif ds == "zeros":
        v = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    elif ds == "zeros_mixed":
        v = np.where(rng.random(n) < 0.7, np.where(rng.random(n) < 0.5, -0.0, 0.0), rng.choice([-1.5, 1.5], n))
    elif ds == "subnormal":
        v = rng.integers(-300, 301, n) * TINY[dtype]
    elif ds == "huge":
        v = rng.uniform(0.5, 0.99, n) * big
    elif ds == "wide":  # both signs: x - lo overflows the type inside the data's range (overflowing_histogram)
        v = rng.uniform(-0.9, 0.9, n) * big
    elif ds == "tenths":  # k / 10 and one value of the type beside it: on and beside the edges of 10 bins, [0, 1]
        k = rng.integers(0, 11, n)
        step = np.where((k > 0) & (k < 10), rng.integers(-1, 2, n), 0)  # the range's ends stay 0 and 1
        bits = bf16_bits(k / 10.0).astype(np.int32) if dtype == "bfloat16" else None
        if bits is not None:  # positive values: the bits' order is the values'
            return (bits + step).astype(np.uint16)
        v = (k / 10.0).astype(dtype)
        return np.where(step == 0, v, np.nextafter(v, np.where(step > 0, np.inf, -np.inf).astype(dtype)))
    if dtype == "bfloat16":
        return bf16_bits(v)
    return v.astype(dtype)


def cuts(n, ds, salt):
    """Rank r's part is whole[c[r]:c[r + 1]]: uneven, and rank 0 or the last rank empty in some cases."""
    rng = np.random.default_rng([zlib.crc32(f"{ds} {salt}".encode()), SIZE, 7])
    inner = sorted(int(x) for x in rng.integers(0, n + 1, SIZE - 1))
    if SIZE > 1 and salt % 3 == 0:
        inner[0] = 0
    elif SIZE > 1 and salt % 3 == 1:
        inner[-1] = n
    return [0] + inner + [n]


def my_part(whole, c):
    return whole[c[RANK]:c[RANK + 1]]


def placed(part, dtype, place):
    """part, or place(part, dtype) where every rank could make it (collective), else None."""
    if place is None:
        return part
    arr = place(part, dtype)
    return arr if COMM.allreduce(arr is not None, op=MPI.LAND) else None


# ---- NumPy 2's np.histogram, each operation in the type NumPy 2 does it in (the reference below NumPy 2)
def _arr(x, t):
    return np.asarray(x, dtype=t)


def np2_linspace(first, last, bins, dt, out_type):
    """np.linspace(first, last, bins + 1, dtype=out_type) as NumPy 2 computes it, in dt (the type of first and
    last: float64 for Python numbers and integers, else their float type; float16 operations are done in float32
    and rounded after each, which is what NumPy's float16 loops do)."""
    start, stop = _arr(first, dt), _arr(last, dt)
    div = _arr(bins, dt)
    delta = np.subtract(stop, start, dtype=dt)
    y = np.arange(0, bins + 1, dtype=dt)
    step = np.true_divide(delta, div, dtype=dt)
    if step == 0:  # gh-5437's branch for subnormal steps
        y = np.multiply(np.true_divide(y, div, dtype=dt), delta, dtype=dt)
    else:
        y = np.multiply(y, step, dtype=dt)
    y = np.add(y, start, dtype=dt)
    y[-1] = stop
    return y.astype(out_type)


def np2_edges(x, bins, rng):
    """(first, last, scalars, bin_type, edges) of np.histogram(x, bins, rng) in NumPy 2, before it checks them."""
    kind = x.dtype.kind
    bin_type = x.dtype.type if kind == "f" else np.float64
    if rng is not None:
        first, last, scalars = float(rng[0]), float(rng[1]), "python"
    elif x.size == 0:
        first, last, scalars = 0, 1, "python"
    else:
        first, last, scalars = x.min(), x.max(), "numpy"
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        if scalars == "numpy" and kind == "f":  # NumPy scalars of the data's type: its arithmetic
            first = np.subtract(_arr(first, bin_type), _arr(0.5, bin_type), dtype=bin_type)[()]
            last = np.add(_arr(last, bin_type), _arr(0.5, bin_type), dtype=bin_type)[()]
        else:  # Python numbers, and integer scalars (which become float64 ones)
            first, last, scalars = float(first) - 0.5, float(last) + 0.5, "float64"
    dt = bin_type if scalars == "numpy" and kind == "f" else np.float64
    with np.errstate(all="ignore"):
        edges = np2_linspace(first, last, bins, dt, bin_type)
    return first, last, scalars, bin_type, edges


def np2_histogram(x, bins, rng):
    """np.histogram(x, bins, rng) of NumPy 2 (numpy/lib/_histograms_impl.py, uniform bins), for x of a native int
    or float dtype. Raises what NumPy would (an index past the edges where its estimate overflows)."""
    kind = x.dtype.kind
    first, last, scalars, bin_type, edges = np2_edges(x, bins, rng)
    if np.any(edges[:-1] >= edges[1:]):
        raise ValueError(f"Too many bins for data range. Cannot create {bins} finite-sized bins.")
    # keep = (x >= first) & (x <= last): in the float type against Python floats (NEP 50: they are weak), exactly
    # against integer scalars, in float64 for integers against floats
    if kind == "f":
        keep = (x >= _arr(first, bin_type)) & (x <= _arr(last, bin_type))
    elif scalars == "numpy":
        keep = (x >= first) & (x <= last)
    else:
        xf = x.astype(np.float64)
        keep = (xf >= float(first)) & (xf <= float(last))
    tmp = x[keep].astype(bin_type)
    sub = np.subtract(tmp, _arr(first, bin_type), dtype=bin_type)
    if scalars == "numpy" and kind == "f":  # denominator and scaling in the data's type
        denom = np.subtract(_arr(last, bin_type), _arr(first, bin_type), dtype=bin_type)
        f = np.multiply(np.true_divide(sub, denom, dtype=bin_type), _arr(bins, bin_type), dtype=bin_type)
    else:
        if scalars == "numpy":  # integers: _unsigned_subtract, the exact difference in the unsigned type
            u = np.dtype(x.dtype.str.replace("i", "u"))
            denom = float(np.subtract(np.asarray(last, x.dtype).astype(u), np.asarray(first, x.dtype).astype(u),
                                      dtype=u))
        else:
            denom = float(last) - float(first)
        f = (sub.astype(np.float64) / np.float64(denom)) * np.float64(bins)
    idx = f.astype(np.intp)
    idx[idx == bins] -= 1
    idx[tmp < edges[idx]] -= 1
    inc = (tmp >= edges[idx + 1]) & (idx != bins - 1)
    idx[inc] += 1
    return np.bincount(idx, minlength=bins).astype(np.intp), edges


def ref_histogram(x, bins, rng):
    """(counts, edges) as NumPy 2 gives them (np.histogram where NumPy is 2.x, np2_histogram below it)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if NP2:
            return np.histogram(x, bins, rng)
        return np2_histogram(x, bins, rng)


def overflowing_histogram(x, bins, rng):
    """Where NumPy's x - first overflows the bin type for an element inside an explicit range (a float16 range wider
    than 65504, a float32 one wider than FLT_MAX), np.histogram raises IndexError (it indexes its edges with the
    integer conversion of inf); dreduce then bins those elements by the edges (src/common/distrib.h, dr_hist_search)
    and the others as NumPy does. Those counts, with NumPy's edges; None where no difference overflows."""
    if rng is None or x.dtype.kind != "f" or rng[0] == rng[1]:
        return None
    bt = x.dtype.type
    first, last = float(rng[0]), float(rng[1])
    with np.errstate(all="ignore"):
        tmp = x[(x >= _arr(first, bt)) & (x <= _arr(last, bt))]
        sub = np.subtract(tmp, _arr(first, bt), dtype=bt)
    ovf = np.isinf(sub)
    if not ovf.any():
        return None
    edges = np2_linspace(first, last, bins, np.float64, bt)
    # the others as NumPy bins them (np2_histogram's steps for an explicit range)
    t = tmp[~ovf]
    idx = ((sub[~ovf].astype(np.float64) / np.float64(last - first)) * np.float64(bins)).astype(np.intp)
    idx[idx == bins] -= 1
    idx[t < edges[idx]] -= 1
    idx[(t >= edges[idx + 1]) & (idx != bins - 1)] += 1
    found = np.minimum(np.searchsorted(edges, tmp[ovf], side="right") - 1, bins - 1)
    return np.bincount(np.concatenate([idx, found]), minlength=bins).astype(np.intp), edges


def too_many_bins(x, bins, rng):
    """What dreduce's refusal of the case's edges says, or None: NumPy 2's refusal of edges that do not increase
    (judged by np2_histogram, which every NumPy runs), and dreduce's of edges that are not finite (a range wider than
    the bin type holds: NumPy 2 refuses those edges too, as too many bins, but for one bin, whose first edge is NaN)."""
    try:
        if not np.isfinite(np2_edges(x, bins, rng)[4]).all():
            return "can hold"
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            np2_histogram(x, bins, rng)
    except ValueError as e:
        return "Too many bins" if "Too many bins" in str(e) else None
    except IndexError:
        pass
    return None


def bin_type_of(dtype):
    return {"float16": np.float16, "bfloat16": np.float32, "float32": np.float32}.get(dtype, np.float64)


# ---- the explicit ranges of a case
def _ulp16(m):
    m = abs(m)
    return 2.0 ** -24 if m < 2.0 ** -14 else 2.0 ** (math.floor(math.log2(m)) - 10)


def case_range(kind, vals):
    """(lo, hi) of a named explicit range for the values (NaN and inf left out), or None for 'auto'."""
    if kind == "auto":
        return None
    fin = vals[np.isfinite(vals)] if vals.dtype.kind == "f" else vals
    if fin.size == 0:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = float(fin.min()), float(fin.max())
    w = hi - lo if hi > lo else 1.0
    if kind == "data":
        return (lo, hi)
    if kind == "wider":
        return (lo - w, hi + w)
    if kind == "narrower":
        return (lo + w / 4, hi - w / 4) if hi > lo else (lo, hi)
    mid = float(np.sort(fin)[fin.size // 2]) if fin.size else 0.5
    return (mid, mid)


def f16_snap(r):
    """A float16 range on a grid of twice the float16 spacing at its ends, so that lo, hi and hi - lo are float16
    values: NumPy 2 then never estimates an index past the last bin (with thousands of bins, x - lo rounded to
    float16 above hi - lo would make NumPy index past its edges). (lo, hi, exact)."""
    lo, hi = r
    if lo == hi:
        return r, False
    s = 2 * _ulp16(max(abs(lo), abs(hi), 2.0 ** -14))
    lo2, hi2 = math.floor(lo / s) * s, math.ceil(hi / s) * s
    f16 = np.float16
    with np.errstate(over="ignore"):
        exact = all(math.isfinite(float(f16(v))) and float(f16(v)) == v for v in (lo2, hi2, hi2 - lo2))
    return (lo2, hi2), exact


def not_finite_in(dtype, r):
    """True where an end of the range is not finite in NumPy's bin type (dreduce refuses it: DR_ERR_USAGE)."""
    if r is None:
        return False
    lo, hi = r
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    bt = bin_type_of(dtype)
    with np.errstate(over="ignore"):
        return not (np.isfinite(bt(lo)) and np.isfinite(bt(hi)))


# ---- calls
def kw_of(dtype):
    return {"dtype": "bfloat16"} if dtype == "bfloat16" else {}


def same_bits(got, want):
    """Quantiles compare bit for bit, zeros by value, NaN equal to NaN."""
    if math.isnan(want):
        return math.isnan(got)
    if want == 0:
        return got == 0
    return float(got).hex() == float(want).hex()


def expects_hist(ctx):
    return ctx.allreduce or RANK == 0


def check_histogram(ctx, name, dtype, whole, part, bins, r, x):
    """One collective histogram call of the case, checked against NumPy on the ranks where it is valid."""
    auto_refused = r is None and x.dtype.kind == "f" and x.size > 0 and not np.isfinite(x).all()
    if auto_refused or not_finite_in(dtype, r):  # NumPy raises (auto) or overflows (an explicit range)
        return T.expect_raise(name + " (refused)", dreduce.UsageError,
                              lambda: ctx.histogram(part, bins, r, **kw_of(dtype)), True, "not finite")
    says = too_many_bins(x, bins, r)
    if says:  # NumPy 2 raises: edges that do not increase, or are not finite
        return T.expect_raise(name + " (refused: too many bins)", dreduce.UsageError,
                              lambda: ctx.histogram(part, bins, r, **kw_of(dtype)), True, says)
    try:
        got = ctx.histogram(part, bins, r, **kw_of(dtype))
    except dreduce.Error as e:
        return T.fail(name, f"raised {type(e).__name__}: {e}")
    info = ctx.dist_info()
    if not expects_hist(ctx):
        return T.check(name, got is None and not info["valid"], f"got {got!r} on rank {RANK}, expected None")
    wide = overflowing_histogram(x, bins, r)
    try:
        want_c, want_e = ref_histogram(x, bins, r)
        if wide is not None:
            T.fail(name, "NumPy answered where its difference overflows (overflowing_histogram's premise)")
    except (IndexError, ValueError) as e:
        if wide is None or not isinstance(e, IndexError):
            return note(f"{name}: NumPy itself raises {type(e).__name__} ({e}); dreduce's answer not checked")
        name += " (NumPy: IndexError, its x - first overflows; those elements by the edges)"
        want_c, want_e = wide
    if NP2 and wide is None:
        try:
            emu = np2_histogram(x, bins, r)
            T.check(name + " (reference: np2_histogram == np.histogram)",
                    np.array_equal(emu[0], want_c) and np.array_equal(emu[1], want_e) and
                    emu[1].dtype == want_e.dtype, "the NumPy-2 emulation the NumPy 1 runs use is off here")
        except (IndexError, ValueError) as e:
            T.fail(name + " (reference)", f"np2_histogram raised {e!r}, np.histogram did not")
    if got is None:
        return T.fail(name, "got None where the result is valid")
    counts, edges = got
    why = []
    if counts.dtype != np.int64 or counts.shape != (bins,):
        why.append(f"counts dtype/shape {counts.dtype}{counts.shape}, expected int64({bins},)")
    if edges.dtype != want_e.dtype or edges.dtype != bin_type_of(dtype):
        why.append(f"edges dtype {edges.dtype}, NumPy's {want_e.dtype}")
    if not np.array_equal(counts, want_c):
        bad = np.nonzero(counts != want_c)[0][:5]
        why.append(f"counts differ at bins {bad.tolist()}: {counts[bad].tolist()} vs NumPy {want_c[bad].tolist()}")
    if not np.array_equal(edges.astype(np.float64), want_e.astype(np.float64)):
        bad = np.nonzero(edges.astype(np.float64) != want_e.astype(np.float64))[0][:5]
        why.append(f"edges differ at {bad.tolist()}: {edges[bad].tolist()} vs NumPy {want_e[bad].tolist()}")
    # what dist_info() says of the same call
    bt = bin_type_of(dtype)
    xf = x.astype(np.float64)
    nan = int(np.isnan(xf).sum())
    below = int((xf < float(want_e[0])).sum()) if x.size else 0
    above = int((xf > float(want_e[-1])).sum()) if x.size else 0
    if x.dtype.kind == "f":  # NumPy compares in the bin type
        below = int((x < bt(want_e[0])).sum())
        above = int((x > bt(want_e[-1])).sum())
    have = (info["count"], info["nan_count"], info["below"], info["above"], info["passes"])
    want = (x.size, nan, below, above, 1 if r is not None else 2)
    if have != want:
        why.append(f"dist_info count/nan/below/above/passes {have}, expected {want}")
    if want_c.sum() + below + above + nan != x.size:
        why.append("the reference's own counts do not add up")
    if info["lo"] != float(want_e[0]) or info["hi"] != float(want_e[-1]):
        why.append(f"dist_info lo/hi {info['lo']}/{info['hi']}, edges {want_e[0]}/{want_e[-1]}")
    if len(info["pass_local_ms"]) != info["passes"] or not info["total_ms"] >= 0:
        why.append(f"dist_info times {info}")
    T.check(name, not why, "; ".join(why))


def histograms(ctx, label, dtype, ds, bins_list=BINS, ranges=RANGES, salt=0, place=None):
    """The case's histograms; place(part, dtype): the array to pass for this rank's host part (a device copy:
    test_distrib_gpu.py), None where it cannot be made on some rank (the case is then left out)."""
    whole = whole_array(dtype, ds)
    c = cuts(whole.size, f"{dtype} {ds}", salt)
    part = placed(my_part(whole, c), dtype, place)
    if part is None:
        return
    x = numpy_view(dtype, whole)
    for rk in ranges:
        r0 = case_range(rk, x.astype(np.float64) if x.dtype.kind != "f" else x)
        if r0 is not None and r0[0] == r0[1] and r0[0] - 0.5 == r0[0]:
            continue  # lo == hi past 2^53: NumPy's widening changes nothing and it divides by zero (IndexError)
        for bins in bins_list:
            if dtype == "float16" and rk == "auto" and bins > 256:
                continue  # NumPy's own float16 index estimate is coarser than a bin there
            r, exact = r0, True
            if dtype == "float16" and r0 is not None:
                r, exact = f16_snap(r0)
                if not exact and bins > 2048 and r[0] != r[1]:
                    continue  # see f16_snap
            name = f"{label} histogram {dtype} {ds} bins={bins} range={rk}{'' if r is None else r}"
            check_histogram(ctx, name, dtype, whole, part, bins, r, x)


def q_cases(n):
    """(name, q) of the case: scalars and lists."""
    out = [("q=0", 0.0), ("q=1", 1.0), ("q=0.5", 0.5)]
    if n > 2:
        for k in list(range((n - 1) // 3, n - 1)) + [1]:
            q = k / (n - 1)
            if (n - 1) * q == k:
                out.append((f"q={k}/(n-1) (whole virtual index)", q))
                break
        out.append(("q between", (((n - 1) // 5) + 0.37) / (n - 1)))
    out.append(("five q", [0.0, 0.25, 0.5, 0.9, 1.0]))
    rng = np.random.default_rng(n)
    out.append(("64 q", np.concatenate(([0.0, 1.0], rng.random(62)))))
    return out


def expected_q_passes(dtype, x, pilot):
    """The passes a quantile takes (src/lib/distrib.c): its radix digits over the part (one where NaN ends it);
    with the pilot (pilot 1) the sample's select, the pilot's read, then the digits over the kept elements (none
    after NaN); where the pilot fell back (2), the sample's select, maybe the pilot's read, then the digits."""
    nan = x.dtype.kind == "f" and np.isnan(x).any()
    digits = Q_PASSES[8 * np.dtype("uint16" if dtype == "bfloat16" else "uint8" if dtype == "bool" else dtype).itemsize]
    classic = 1 if nan else digits
    if pilot == 1:
        return {2} if nan else {2 + digits}
    if pilot == 2:
        return {1 + classic, 2 + classic}
    return {classic}


def quantiles(ctx, label, dtype, ds, salt=0, full=True, place=None):
    whole = whole_array(dtype, ds)
    c = cuts(whole.size, f"{dtype} {ds} q", salt)
    part = placed(my_part(whole, c), dtype, place)
    if part is None:
        return
    x = numpy_view(dtype, whole)
    xf = x.astype(np.float64)
    base = f"{label} quantile {dtype} {ds}"
    if whole.size == 0:
        T.expect_raise(base + " of an empty array", dreduce.UsageError, lambda: ctx.quantile(part, 0.5, **kw_of(dtype)),
                       True, "no element" if RANK == 0 else None)  # rank 0 has the library's line
        T.expect_raise(base + " median of an empty array", dreduce.UsageError,
                       lambda: ctx.median(part, **kw_of(dtype)), True)
        return
    cases = q_cases(whole.size) if full else [("five q", [0.0, 0.25, 0.5, 0.9, 1.0])]
    for qname, q in cases + [("median", None)]:
        name = f"{base} {qname}"
        try:
            got = ctx.median(part, **kw_of(dtype)) if q is None else ctx.quantile(part, q, **kw_of(dtype))
        except dreduce.Error as e:
            T.fail(name, f"raised {type(e).__name__}: {e}")
            continue
        qq = 0.5 if q is None else q
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = np.quantile(xf, np.asarray(qq, np.float64))
        if np.ndim(qq) == 0:
            good = isinstance(got, float) and same_bits(got, float(want))
        else:
            good = isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == np.shape(qq) and \
                all(same_bits(g, w) for g, w in zip(got.tolist(), np.asarray(want).tolist()))
        why = "" if good else f"got {got!r}, np.quantile {want!r}"
        info = ctx.dist_info()
        nq = 1 if np.ndim(qq) == 0 else len(qq)
        t = ctx.timings()
        if good and (t["passes"] != info["passes"] or t["pass_ms"] != info["pass_local_ms"][:info["passes"]]
                     or not all(math.isfinite(v) for v in t["pass_ms"]) or t["bytes"] != 0
                     or not math.isnan(t["load_ms"])):
            good, why = False, (f"timings() {t['passes']} passes {t['pass_ms']}, bytes {t['bytes']}, load_ms "
                                f"{t['load_ms']}: not the counting passes of dist_info() {info['pass_local_ms']}")
        if good:
            if (info["count"], info["nan_count"]) != (x.size, int(np.isnan(xf).sum())):
                good, why = False, f"dist_info count/nan_count {info['count']}/{info['nan_count']}"
            elif info["passes"] not in expected_q_passes(dtype, x, info["pilot"]):
                good, why = False, (f"dist_info passes {info['passes']} (pilot {info['pilot']}), expected one of "
                                    f"{sorted(expected_q_passes(dtype, x, info['pilot']))}")
            elif info["pilot"] != PILOT_EXPECT.get(os.environ.get("DREDUCE_PILOT", "auto"), info["pilot"]):
                good, why = False, f"dist_info pilot {info['pilot']} under DREDUCE_PILOT={os.environ['DREDUCE_PILOT']}"
            elif len(info.get("order", [])) != nq:
                good, why = False, f"dist_info order has {len(info.get('order', []))} entries, expected {nq}"
            elif not np.isnan(xf).any():
                s = np.sort(xf)
                for o in info["order"]:
                    lo_ok = float(o["lower"]) == s[o["lower_rank"]] and float(o["upper"]) == s[o["upper_rank"]]
                    kind_ok = isinstance(o["lower"], float) == (x.dtype.kind == "f")
                    if not (lo_ok and kind_ok and 0 <= o["upper_rank"] - o["lower_rank"] <= 1):
                        good, why = False, f"dist_info order {o} against the sorted array"
                        break
        T.check(name, good, why)


# ---- the matrix
def f16_overflow_edge(ctx, label, place=None):
    """float16 over (-32753, 32768), 65521 wide: NumPy's x - lo overflows float16 for the top elements alone, and
    with thousands of bins NumPy's estimate of the others is off the edges' bin (NumPy's bin there, the edges' for
    the top ones: overflowing_histogram). Every half from -32768 to 32768, twice, in a shuffled order."""
    halves = np.arange(0, 0x7c00, dtype=np.uint16)
    vals = np.concatenate([halves, halves | 0x8000]).view(np.float16)
    vals = vals[(vals >= -32768) & (vals <= 32768)]
    whole = np.random.default_rng(43).permutation(np.concatenate([vals, vals]))
    part = placed(my_part(whole, cuts(whole.size, "f16 overflow edge", 1)), "float16", place)
    if part is None:
        return
    for bins in (10, 300, 2600, 4000):
        r = (-32753.0, 32768.0)
        check_histogram(ctx, f"{label} histogram float16 overflow edge bins={bins} range={r}", "float16", whole, part,
                        bins, r, whole)


# Integer histograms whose bins are a power of two wide from a whole first edge, where the library takes the
# estimate as the element's exact place (src/lib/distrib.c, hist_place_exact), and neighbours just outside that
# rule (the ends past 2^53, a width not a power of two, a first edge that is not whole, edges that are not the
# exact places): (dtype, lo, hi, bins).
PLACE_CASES = [
    ("uint8", 0, 256, 256), ("uint8", 0, 255, 255), ("uint8", 0, 256, 16), ("uint8", 10, 20, 20),
    ("uint8", 0, 256, 1), ("uint8", 0, 250, 256), ("bool", 0, 2, 2), ("int8", -128, 128, 256),
    ("int8", -3, 5, 16), ("int8", -100.5, 27.5, 128), ("int16", -32768, 32768, 65536), ("uint16", 0, 4096, 4096),
    ("int32", 0, 1 << 20, 4096), ("int32", -(1 << 31), 1 << 31, 4096), ("int32", -5, 3, 8),
    ("uint32", 0, 1 << 32, 256), ("int64", -(1 << 52), 1 << 52, 1024), ("int64", -(1 << 53), 1 << 53, 1024),
    ("int64", (1 << 53) - 64, 1 << 53, 64), ("int64", (1 << 53) - (1 << 20), 1 << 53, 1024),
    ("uint64", 0, 1 << 53, 1 << 12), ("uint64", (1 << 63) - 4096, (1 << 63) + 4096, 32), ("uint64", -8, 8, 16),
    ("int64", -(1 << 52), 1 << 52, 2), ("uint32", 0, 1 << 32, 1),
    # linspace's edges off the bins' exact places at some whole numbers (NumPy bins those elements below them)
    ("int16", 0, 100, 70), ("uint16", 0, 1000, 30), ("int32", -7, 993, 60),
]


def place_histograms(ctx, label, place=None):
    """The PLACE_CASES against NumPy: every edge, its neighbours, the type's extremes, and uniform values over the
    range and a bin beyond it (all values of the type for bool and the 8-bit types)."""
    for k, (dtype, lo, hi, bins) in enumerate(PLACE_CASES):
        info = np.iinfo(np.uint8 if dtype == "bool" else dtype)
        tmin, tmax = (0, 1) if dtype == "bool" else (int(info.min), int(info.max))
        w = (Fraction(hi) - Fraction(lo)) / bins
        edges = [Fraction(lo) + j * w for j in range(bins + 1)]
        vals = [v for e in edges for v in (math.floor(e) - 1, math.floor(e), math.ceil(e), math.ceil(e) + 1)]
        vals = [v for v in vals + [tmin, tmax] if tmin <= v <= tmax]
        rng = np.random.default_rng([k, 42])
        s_lo, s_hi = max(tmin, math.floor(lo - w)), min(tmax, math.ceil(hi + w))
        vals += [int(v) for v in rng.integers(s_lo, s_hi, 4000, dtype=np.int64 if s_lo < 0 else np.uint64,
                                               endpoint=True)]
        if info.bits <= 8:
            vals += list(range(tmin, tmax + 1))
        whole = rng.permutation(np.array(vals, dtype=np.uint8 if dtype == "bool" else dtype))
        if dtype == "bool":
            whole = whole.astype(np.bool_)
        part = placed(my_part(whole, cuts(whole.size, f"place {k}", k)), dtype, place)
        if part is None:
            continue
        r = (float(lo), float(hi))
        check_histogram(ctx, f"{label} histogram {dtype} bins={bins} range={r} (exact places)", dtype, whole, part,
                        bins, r, numpy_view(dtype, whole))


def matrix(quick):
    with dreduce.Context(device="cpu", cpu_threads=1) as ctx:
        f16_overflow_edge(ctx, "cpu")
        place_histograms(ctx, "cpu")
        for dtype in DTYPES:
            for i, ds in enumerate(datasets(dtype)):
                histograms(ctx, "cpu", dtype, ds, salt=i)
                quantiles(ctx, "cpu", dtype, ds, salt=i)
    if quick:
        return
    with dreduce.Context(device="cpu", cpu_threads=1, allreduce=True) as ctx:
        for dtype in DTYPES:
            for i, ds in enumerate(datasets(dtype)[:4]):
                histograms(ctx, "allreduce", dtype, ds, bins_list=[10, 256], ranges=["auto", "wider"], salt=i + 1)
                quantiles(ctx, "allreduce", dtype, ds, salt=i + 1, full=False)
    with dreduce.Context(device="cpu", cpu_threads=2) as ctx:  # threads over the local part
        for dtype in ("int32", "float32", "float16", "uint64"):
            for ds in ("random", "sorted"):
                histograms(ctx, "2 threads", dtype, ds, bins_list=[10, 4096], ranges=["auto", "narrower"], salt=2)
                quantiles(ctx, "2 threads", dtype, ds, salt=2, full=False)
    if SIZE >= 3:  # two emulated nodes: the node and the global level of the count vectors' combine
        with dreduce.Context(device="cpu", cpu_threads=1, ranks_per_node=2, allreduce=True) as ctx:
            for dtype in ("int8", "float32", "float64", "bfloat16"):
                histograms(ctx, "2 nodes", dtype, "random", bins_list=[10, 4096], ranges=["auto", "wider"])
                quantiles(ctx, "2 nodes", dtype, "random", full=False)
    pilot_modes()


def with_pilot(mode, f):
    """f() with DREDUCE_PILOT=mode on every rank (the library reads it at each quantile call)."""
    old = os.environ.get("DREDUCE_PILOT")
    os.environ["DREDUCE_PILOT"] = mode
    try:
        f()
    finally:
        if old is None:
            del os.environ["DREDUCE_PILOT"]
        else:
            os.environ["DREDUCE_PILOT"] = old


def pilot_modes():
    """The quantile pilot (src/lib/distrib.c, "The pilot") on every dtype and data set: always (the sample's
    brackets, one read keeping what they hold, the digits over those), miss (brackets that hold nothing: the
    fallback to the digits over the part after the pilot's read), off; the answers NumPy's bit for bit, as above."""
    with dreduce.Context(device="cpu", cpu_threads=2) as ctx:
        for mode in ("always", "miss", "off"):
            for dtype in DTYPES:
                for i, ds in enumerate(datasets(dtype)):
                    with_pilot(mode, lambda: quantiles(ctx, f"pilot {mode}", dtype, ds, salt=i + 3, full=False))
    large_pilot()


def large_pilot():
    """auto takes the pilot for a part of 2^20 elements or more: 2^21 float32 and int64 elements over the ranks,
    the median and three quantiles NumPy's bit for bit, one read of the part plus the sample's and the kept ones'."""
    n = 1 << 21
    rng = np.random.default_rng(2026)
    for dtype, whole in (("float32", rng.standard_normal(n).astype(np.float32)),
                         ("int64", rng.integers(-2 ** 40, 2 ** 40, n))):
        c = [n * r // SIZE for r in range(SIZE + 1)]
        c[1] = c[0] if SIZE > 1 else c[1]  # rank 0 empty where there are others: its sample is too
        mine = np.ascontiguousarray(whole[c[RANK]:c[RANK + 1]])
        big = max(c[r + 1] - c[r] for r in range(SIZE))
        with dreduce.Context(device="cpu", cpu_threads=2) as ctx:
            for q in (0.5, [0.01, 0.5, 0.99]):
                name = f"large pilot {dtype} q={q}"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = ctx.quantile(mine, q)
                want = np.quantile(whole.astype(np.float64), q)
                info = ctx.dist_info()
                good = np.array_equal(np.asarray(got), np.asarray(want))
                digits = Q_PASSES[8 * whole.dtype.itemsize]
                want_pilot = 1 if big >= (1 << 20) else 0
                T.check(name, good and info["pilot"] == want_pilot and
                        info["passes"] == (2 + digits if want_pilot else digits),
                        f"got {got!r}, np.quantile {want!r}; pilot {info['pilot']}, passes {info['passes']}")


# ---- inputs of other kinds
def inputs():
    with dreduce.Context(device="cpu", allreduce=True) as ctx:
        whole = np.arange(24 * SIZE, dtype=np.int32)
        mine = whole[24 * RANK:24 * (RANK + 1)]
        want = np.histogram(whole, 6)
        got = ctx.histogram(mine.reshape(4, 6), 6)
        T.check("input 2-D", np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), f"{got}")
        ro = mine.copy()
        ro.setflags(write=False)
        T.check("input read-only", np.array_equal(ctx.histogram(ro, 6)[0], want[0]))
        T.check("input memoryview", np.array_equal(ctx.histogram(memoryview(mine), 6)[0], want[0]))
        T.check("input __array_interface__ only", np.array_equal(
            ctx.histogram(T.ArrayInterfaceOnly(mine), 6)[0], want[0]))
        if hasattr(mine, "__dlpack__"):
            T.check("input DLPack only", ctx.quantile(T.DLPackOnly(mine), 0.5) == np.quantile(whole.astype(float), 0.5))
        T.check("input bytes", ctx.quantile(bytes(range(10)), 1.0) == 9.0)
        T.check("input dtype= reinterprets", ctx.quantile(np.array([-1], np.int8), 1.0, dtype="uint8") == 255.0)
        b = np.array([True, False, True, True])
        hb = ctx.histogram(b, 2)
        T.check("input bool histogram", np.array_equal(hb[0], [SIZE, 3 * SIZE]) and hb[1].dtype == np.float64, f"{hb}")
        T.check("input bool median", ctx.median(b) == 1.0)
        q = ctx.quantile(mine, np.array([[0.0, 0.5], [0.75, 1.0]]))
        T.check("quantile keeps q's shape", isinstance(q, np.ndarray) and q.shape == (2, 2) and
                q.tolist() == np.quantile(whole.astype(float), [[0.0, 0.5], [0.75, 1.0]]).tolist(), f"{q!r}")
        T.check("quantile of a 0-d q is a float", isinstance(ctx.quantile(mine, np.float64(0.5)), float))
        T.check("quantile of an int q", ctx.quantile(mine, 1) == float(whole.max()))
        T.check("histogram range of ints", np.array_equal(ctx.histogram(mine, 4, (0, 8))[0],
                                                          np.histogram(whole, 4, (0, 8))[0]))
        T.check("histogram bins as a NumPy integer", ctx.histogram(mine, np.int64(3))[0].size == 3)
        try:
            import ml_dtypes
            vals = whole_array("float32", "random")[:100]
            m = vals.astype(ml_dtypes.bfloat16)
            c = cuts(m.size, "ml_dtypes", 0)
            mp = m[c[RANK]:c[RANK + 1]]
            f32 = m.astype(np.float32)
            got = ctx.histogram(mp, 16)
            want = ref_histogram(f32, 16, None)
            T.check("ml_dtypes bfloat16 histogram", np.array_equal(got[0], want[0]) and
                    np.array_equal(got[1], want[1]) and got[1].dtype == np.float32, f"{got} vs {want}")
            T.check("ml_dtypes bfloat16 quantile", same_bits(ctx.quantile(mp, 0.3),
                                                             float(np.quantile(f32.astype(np.float64), 0.3))))
        except ImportError:
            if RANK == 0:
                print("note: ml_dtypes is not installed: its bfloat16 arrays not tested (bfloat16 is, as uint16 "
                      "bits with dtype='bfloat16')", flush=True)


# ---- errors
def still_works(ctx, name):
    """After an error the ranks' collectives are still matched: a normal call gives the right answer. Its histogram
    has the same arguments every time, so from the second call on it takes the context's kept plan and edges
    (src/lib/distrib.c, hist_key), after whatever error came between."""
    whole = np.arange(10 * SIZE, dtype=np.float64)
    got = ctx.histogram(whole[10 * RANK:10 * (RANK + 1)], 5)
    want = np.histogram(whole, 5)
    ok = got is None if not expects_hist(ctx) else np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    ok = ok and ctx.median(whole[10 * RANK:10 * (RANK + 1)]) == np.quantile(whole, 0.5)
    T.check(f"{name}: next calls", ok, f"got {got!r}")


def errors():
    x = np.linspace(-1, 1, 50, dtype=np.float32)
    for allreduce in (False, True):
        with dreduce.Context(device="cpu", cpu_threads=1, allreduce=allreduce) as ctx:
            tag = "allreduce" if allreduce else "plain"
            UE = dreduce.UsageError

            def hist(a=x, bins=10, rng=None, **kw):
                return lambda: ctx.histogram(a, bins, rng, **kw)

            def quant(a=x, q=0.5, **kw):
                return lambda: ctx.quantile(a, q, **kw)
            # the library's checks, every rank alike: an error on every rank
            everywhere = [("bins=0", hist(bins=0), "bins 0"), (f"bins={(1 << 24) + 1}", hist(bins=(1 << 24) + 1),
                                                                "bins"),
                          ("lo > hi", hist(rng=(1.0, 0.0)), "LO > HI"), ("range inf", hist(rng=(0.0, np.inf)),
                                                                         "not finite"),
                          ("range nan", hist(rng=(np.nan, 1.0)), "not finite"),
                          ("range past float16", hist(a=x.astype(np.float16), rng=(0.0, 1e5)), "float16"),
                          ("auto range with NaN", hist(a=np.where(x > 0.5, np.nan, x)), "NaN"),
                          ("auto range with inf", hist(a=np.where(x > 0.5, np.inf, x)), "inf"),
                          ("q=1.5", quant(q=1.5), "1.5"), ("q=-0.1", quant(q=-0.1), "-0.1"),
                          ("q=nan", quant(q=float("nan")), "nan"), ("q=[]", quant(q=[]), "0 quantiles"),
                          ("65 q", quant(q=[0.5] * 65), "65 quantiles"),
                          ("quantile of an empty array", quant(a=x[:0]), "no element"),
                          ("median of an empty array", lambda: ctx.median(x[:0]), "no element")]
            for label, fn, match in everywhere:  # rank 0 has the library's line (some only print there)
                T.expect_raise(f"{tag} {label} on every rank", UE, fn, True, match if RANK == 0 else None)
            still_works(ctx, f"{tag} the library's refusals")
            # the binding's refusals: on every rank, then on the last rank only (that rank says why; every rank
            # gets an error from the call's agreement, none waits)
            own = [("non-contiguous histogram", hist(a=x[::2]), "not C-contiguous"),
                   ("non-contiguous quantile", quant(a=x[::2]), "not C-contiguous"),
                   ("Fortran-order quantile", quant(a=np.asfortranarray(x.reshape(5, 10))), "not C-contiguous"),
                   ("complex64 histogram", hist(a=x.astype(np.complex64)), "complex64"),
                   ("None quantile", quant(a=None), "None"),
                   ("bins='auto'", hist(bins="auto"), "equal-width"), ("bins as edges", hist(bins=[0, 1, 2]),
                                                                       "equal-width"),
                   ("bins=2.5", hist(bins=2.5), "equal-width"), ("bins=-3", hist(bins=-3), "bins=-3"),
                   ("bins=True", hist(bins=True), "equal-width"),
                   ("range=(0,)", hist(rng=(0.0,)), "pair"), ("range='ab'", hist(rng="ab"), "numbers"),
                   ("q='x'", quant(q="x"), "q="), ("q=[0.5, None]", quant(q=[0.5, None]), "q="),
                   ("dtype= of another size", hist(dtype="float64"), "same size")]
            for label, fn, match in own:
                T.expect_raise(f"{tag} {label} on every rank", UE, fn, True, match)
                still_works(ctx, f"{tag} {label} on every rank")
            for label, fn, match in own:
                last = RANK == SIZE - 1
                T.expect_raise(f"{tag} {label} on rank {SIZE - 1} only", UE,
                               fn if last else (quant() if "quantile" in label or label.startswith("q") else hist()),
                               True, match if last else None)
                still_works(ctx, f"{tag} {label} on one rank")
            if SIZE > 1:  # ranks disagreeing: the agreement names it on rank 0, every rank raises
                odd = RANK == 1
                T.expect_raise(f"{tag} bins differ on rank 1", UE, hist(bins=11 if odd else 10), True)
                T.expect_raise(f"{tag} range differs on rank 1", UE, hist(rng=(0.0, 2.0 if odd else 1.0)), True)
                T.expect_raise(f"{tag} range given on rank 1 only", UE, hist(rng=(0.0, 1.0) if odd else None), True)
                T.expect_raise(f"{tag} q differs on rank 1", UE, quant(q=0.25 if odd else 0.5), True)
                T.expect_raise(f"{tag} number of q differs on rank 1", UE, quant(q=[0.5, 0.6] if odd else [0.5]),
                               True)
                T.expect_raise(f"{tag} dtype differs on rank 1", UE, hist(a=x.astype(np.float64) if odd else x),
                               True)
                T.expect_raise(f"{tag} histogram on rank 1, quantile elsewhere", UE,
                               hist() if odd else quant(), True)
                still_works(ctx, f"{tag} disagreements")
    c = dreduce.Context(device="cpu")
    c.close()
    T.expect_raise("histogram after close", dreduce.UsageError, lambda: c.histogram(x), True, "closed")
    T.expect_raise("quantile after close", dreduce.UsageError, lambda: c.quantile(x, 0.5), True, "closed")
    with dreduce.Context(device="cpu") as c2:
        T.check("dist_info before any call is None", c2.dist_info() is None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--quick", action="store_true", help="the plain context's matrix only")
    a = ap.parse_args()
    T.verbose = a.verbose
    why = T.same_mpi()
    if why:
        if RANK == 0:
            print(f"SKIP: {why}")
        return 77
    if RANK == 0:
        ref = "np.histogram (and np2_histogram checked against it)" if NP2 else "np2_histogram (NumPy 2 written out)"
        print(f"NumPy {np.__version__}: the histogram reference is {ref}", flush=True)
    for part in (lambda: matrix(a.quick), inputs, errors):
        try:
            part()
        except Exception:  # noqa: BLE001: an unexpected error: report, then end every rank (others may wait)
            T.fail("test_distrib", "unexpected exception\n" + traceback.format_exc())
            sys.stdout.flush()
            COMM.Abort(1)
    counts = COMM.gather((T.passed, len(T.failures), len(notes)), root=0)
    if RANK == 0:
        p, f, n = (sum(c[i] for c in counts) for i in range(3))
        print(f"python_distrib np {SIZE}: {p} passed, {f} failed" + (f" ({n} notes)" if n else ""), flush=True)
    return 1 if COMM.allreduce(len(T.failures)) else 0


if __name__ == "__main__":
    sys.exit(main())
