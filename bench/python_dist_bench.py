#!/usr/bin/env python3
"""dreduce's histogram, quantile and median from Python against what a Python user on a GPU would call instead, on
one GPU, one rank, the same torch tensor (float32 normal data, torch.randn) for every row.

Rows, each a whole call with the result in hand on the host, timed on the host (time.perf_counter_ns):
  histogram B  ctx.histogram(t, B, (-4, 4))              the counts and edges as NumPy arrays
               torch.histc(t, B, -4, 4).cpu()
               cupy.histogram(x, B, (-4, 4)) then .get() of the counts
  quantile     ctx.quantile(t, [0.01, 0.5, 0.99])       exact, np.quantile's value bit for bit
               cupy.quantile(x, q).get()
               torch.quantile(t, q).cpu()                 (torch refuses more than 2^24 elements: left out there)
               torch.sort(t) and NumPy's lerp of the three pairs of order statistics, on the host
  median       ctx.median(t), cupy.median(x).get(), torch.kthvalue(t, k) (the lower middle element alone;
               --kthvalue-max bounds its size: it takes seconds)
  read         torch.sum(t).item(): one read of the data, the scale every row is compared with ("reads")

Method: --warmup untimed calls, then the median of as many timed calls as fill --budget seconds (at least
--min-reps, at most --max-reps); torch.cuda.synchronize() before each call. Checks: dreduce's quantiles equal the
sorted tensor's NumPy lerp to the bit and its histogram counts np.histogram's (on a host copy, n <= 2^24) or sum to
the elements inside the range; a wrong answer exits 1.

usage: python3 bench/python_dist_bench.py [--sizes 24,28,30] [--bins 256,4096] [--json FILE] [--budget 0.5] [--host]

--host: a CPU context on NumPy arrays instead, against np.histogram, np.quantile and np.median (host_main; no GPU
or torch needed).
Run under mpiexec -np 1 or as a singleton; needs torch with CUDA, mpi4py, NumPy, the dreduce package (python/ in
this tree when not installed) and libdreduce (docs/python.md); CuPy rows are left out, saying why, without CuPy.
Exit: 0, 1 (a wrong answer), 2 usage, 77 no GPU or torch (without --host)."""

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QS = [0.01, 0.5, 0.99]
LO, HI = -4.0, 4.0


def numpy_lerp(a, b, t):
    """NumPy's _lerp in float64."""
    d = b - a
    return b - d * (1.0 - t) if t >= 0.5 else a + d * t


def timed(fn, a):
    sync = None
    if not a.host:
        import torch
        sync = torch.cuda.synchronize
    for _ in range(a.warmup):
        fn()
    samples, spent = [], 0.0
    while len(samples) < a.max_reps and (len(samples) < a.min_reps or spent < a.budget):
        if sync:
            sync()
        t0 = time.perf_counter_ns()
        fn()
        dt = (time.perf_counter_ns() - t0) * 1e-6
        samples.append(dt)
        spent += dt * 1e-3
    return statistics.median(samples), len(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="24,28,30", help="powers of two")
    ap.add_argument("--bins", default="256,4096")
    ap.add_argument("--budget", type=float, default=0.5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--min-reps", type=int, default=5)
    ap.add_argument("--max-reps", type=int, default=200)
    ap.add_argument("--kthvalue-max", type=int, default=28, help="torch.kthvalue only up to 2^this")
    ap.add_argument("--host", action="store_true",
                    help="a CPU context on NumPy arrays against NumPy's own calls (no GPU needed)")
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        sizes = [1 << int(s) for s in a.sizes.split(",")]
        bins = [int(b) for b in a.bins.split(",")]
    except ValueError as e:
        ap.error(f"bad --sizes or --bins: {e}")
    if a.host:
        return host_main(a, sizes, bins)
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError("no GPU")
    except ImportError as e:
        print(f"SKIP: torch with CUDA is needed ({e})")
        return 77
    import numpy as np
    from mpi4py import MPI
    if importlib.util.find_spec("dreduce") is None:
        sys.path.insert(0, os.path.join(REPO, "python"))
    import dreduce
    try:
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        cp = None
        print(f"# CuPy rows left out: {type(e).__name__}: {e}")
    rows, failures = [], 0

    def row(n, what, who, ms, reps, read_ms):
        rows.append(dict(n=n, what=what, who=who, ms=ms, reps=reps, reads=ms / read_ms))
        print(f"{n:>12} {what:<16} {who:<22} {ms:10.3f} ms {ms / read_ms:7.2f} reads  ({reps} reps)", flush=True)

    print(f"{'n':>12} {'question':<16} {'call':<22} {'median':>13} {'':>13}")
    with dreduce.Context(MPI.COMM_WORLD, device="gpu", gpu=torch.cuda.current_device()) as ctx:
        for n in sizes:
            gen = torch.Generator(device="cuda").manual_seed(n)
            t = torch.randn(n, device="cuda", dtype=torch.float32, generator=gen)
            x = cp.asarray(t) if cp is not None else None
            read_ms, reps = timed(lambda: torch.sum(t).item(), a)
            row(n, "read", "torch.sum().item()", read_ms, reps, read_ms)
            host = t.cpu().numpy() if n <= 1 << 24 else None
            for b in bins:
                counts, edges = ctx.histogram(t, b, (LO, HI))
                if host is not None:
                    want, _ = np.histogram(host, b, (LO, HI))
                    bad = int(np.count_nonzero(counts != want))
                else:
                    inside = int(torch.count_nonzero((t >= LO) & (t <= HI)).item())
                    bad = 0 if int(counts.sum()) == inside else 1
                if bad:
                    failures += 1
                    print(f"FAIL: histogram of {n} in {b} bins: {bad} counts differ")
                what = f"histogram {b}"
                row(n, what, "dreduce", *timed(lambda: ctx.histogram(t, b, (LO, HI)), a), read_ms)
                row(n, what, "torch.histc", *timed(lambda: torch.histc(t, b, LO, HI).cpu(), a), read_ms)
                if cp is not None:
                    row(n, what, "cupy.histogram", *timed(lambda: cp.histogram(x, b, (LO, HI))[0].get(), a),
                        read_ms)
            # the peers' exact answer: the sorted tensor's order statistics, NumPy's lerp on the host
            s = torch.sort(t).values
            want = []
            for q in QS:
                v = (n - 1) * q
                f = min(math.floor(v), n - 1)
                lo, hi = s[f].item(), s[min(f + 1, n - 1)].item()
                want.append(numpy_lerp(lo, hi, v - f) if v < n - 1 else hi)
            del s
            got = ctx.quantile(t, QS)
            if list(got) != want:
                failures += 1
                print(f"FAIL: quantiles of {n}: {list(got)}, the sorted tensor's {want}")
            qt = torch.tensor(QS, device="cuda")

            def sort_pick():
                s = torch.sort(t).values
                idx = [(n - 1) * q for q in QS]
                fl = torch.tensor([math.floor(v) for v in idx], device="cuda")
                pairs = torch.stack([s[fl], s[torch.clamp(fl + 1, max=n - 1)]]).cpu().numpy().astype(np.float64)
                return [numpy_lerp(pairs[0, i], pairs[1, i], idx[i] - math.floor(idx[i])) for i in range(len(QS))]

            what = "quantile x3"
            row(n, what, "dreduce", *timed(lambda: ctx.quantile(t, QS), a), read_ms)
            if cp is not None:
                qc = cp.asarray(QS)
                row(n, what, "cupy.quantile", *timed(lambda: cp.quantile(x, qc).get(), a), read_ms)
            if n <= 1 << 24:
                row(n, what, "torch.quantile", *timed(lambda: torch.quantile(t, qt).cpu(), a), read_ms)
            row(n, what, "torch.sort + pick", *timed(sort_pick, a), read_ms)
            what = "median"
            row(n, what, "dreduce", *timed(lambda: ctx.median(t), a), read_ms)
            if cp is not None:
                row(n, what, "cupy.median", *timed(lambda: cp.median(x).get(), a), read_ms)
            if n <= 1 << a.kthvalue_max:
                slow = argparse.Namespace(**dict(vars(a), warmup=1, min_reps=3, max_reps=3))
                row(n, what, "torch.kthvalue", *timed(lambda: torch.kthvalue(t, (n + 1) // 2).values.item(), slow),
                    read_ms)
            del t, x, host
            torch.cuda.empty_cache()
            if cp is not None:
                cp.get_default_memory_pool().free_all_blocks()
    print("%d wrong answers" % failures if failures else "every dreduce answer checked: right")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           cupy=cp.__version__ if cp is not None else None, rows=rows), f, indent=1)
    return 1 if failures else 0


def host_main(a, sizes, bins):
    """--host: a CPU context (the rank's share of the node's cores) on float32 NumPy arrays (normal data), against
    np.histogram, np.quantile and np.median of the same array; "reads" are in units of the library's own sum of it
    (ctx.reduce(a): one read with the same cores), np.sum(a) beside it. Checks: every histogram count equals
    np.histogram's, every quantile np.quantile(a.astype(np.float64), q) bit for bit (what dreduce promises; NumPy
    answers float32 for float32 input, rounded from that)."""
    import numpy as np
    from mpi4py import MPI
    if importlib.util.find_spec("dreduce") is None:
        sys.path.insert(0, os.path.join(REPO, "python"))
    import dreduce
    rows, failures = [], 0
    numpy_reps = argparse.Namespace(**dict(vars(a), warmup=1, min_reps=3, max_reps=max(3, a.min_reps)))

    def row(n, what, who, ms, reps, read_ms):
        rows.append(dict(n=n, what=what, who=who, ms=ms, reps=reps, reads=ms / read_ms))
        print(f"{n:>12} {what:<16} {who:<26} {ms:10.3f} ms {ms / read_ms:7.2f} reads  ({reps} reps)", flush=True)

    print(f"# dreduce {dreduce.__version__}; NumPy {np.__version__}; CPU context, float32 normal data")
    print(f"{'n':>12} {'question':<16} {'call':<26} {'median':>13} {'':>13}")
    with dreduce.Context(MPI.COMM_WORLD, device="cpu") as ctx:
        for n in sizes:
            x = np.random.default_rng(n).standard_normal(n, dtype=np.float32)
            read_ms, reps = timed(lambda: ctx.reduce(x), a)
            row(n, "read", "ctx.reduce(a) (sum)", read_ms, reps, read_ms)
            row(n, "read", "np.sum(a)", *timed(lambda: np.sum(x), numpy_reps), read_ms)
            for b in bins:
                counts, _ = ctx.histogram(x, b, (LO, HI))
                want, _ = np.histogram(x, b, (LO, HI))
                bad = int(np.count_nonzero(counts != want))
                if bad:
                    failures += 1
                    print(f"FAIL: histogram of {n} in {b} bins: {bad} counts differ from np.histogram's")
                what = f"histogram {b}"
                row(n, what, "dreduce", *timed(lambda: ctx.histogram(x, b, (LO, HI)), a), read_ms)
                row(n, what, "np.histogram", *timed(lambda: np.histogram(x, b, (LO, HI)), numpy_reps), read_ms)
            got = ctx.quantile(x, QS)
            want = np.quantile(x.astype(np.float64), QS)
            if list(got) != list(want):
                failures += 1
                print(f"FAIL: quantiles of {n}: {list(got)}, np.quantile's {list(want)}")
            what = "quantile x3"
            row(n, what, "dreduce", *timed(lambda: ctx.quantile(x, QS), a), read_ms)
            row(n, what, "np.quantile", *timed(lambda: np.quantile(x, QS), numpy_reps), read_ms)
            what = "median"
            if ctx.median(x) != np.median(x.astype(np.float64)):
                failures += 1
                print(f"FAIL: median of {n}: {ctx.median(x)}, np.median's {np.median(x.astype(np.float64))}")
            row(n, what, "dreduce", *timed(lambda: ctx.median(x), a), read_ms)
            row(n, what, "np.median", *timed(lambda: np.median(x), numpy_reps), read_ms)
            del x
    print("%d wrong answers" % failures if failures else "every dreduce answer checked: right")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(device="cpu", numpy=np.__version__, rows=rows), f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
