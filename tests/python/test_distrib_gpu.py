#!/usr/bin/env python3
"""Context.histogram, quantile and median on GPUs: CuPy arrays and torch tensors in device memory, on
Context(device="gpu"), against the same NumPy references as test_distrib.py (its data sets, slices and checkers:
NumPy 2's np.histogram exactly, np.quantile of the float64 values bit for bit) and against the CPU backend's answer
for the same data; arrays large enough for many blocks, host arrays read in chunks, managed memory, input written on
a non-default stream, non-contiguous device arrays refused (on every rank and on one). Run under mpiexec at 1 or 2
ranks (ranks may share a GPU; tests/python/run_mpi.py, through tests/gpu/run_if_gpu.sh).

usage: mpiexec -n N python3 test_distrib_gpu.py [--verbose]
Exit 0 passed, 1 failed, 77 skipped (no GPU, or neither CuPy nor torch can use one, on some rank)."""

import argparse
import sys
import traceback

import numpy as np
from mpi4py import MPI

import dreduce
import test_cpu as T
import test_distrib as D
import test_gpu as G

COMM, RANK, SIZE = T.COMM, T.RANK, T.SIZE


def placer(lib, mod, gpu):
    """place(part, dtype) for test_distrib's matrix: the host part copied to the GPU (None: not in this torch)."""
    def place(part, dtype):
        return G.to_device(lib, mod, part, dtype, gpu)[0]
    return place


def matrix(libs):
    with dreduce.Context(device="gpu", share_gpus=True) as ctx:
        for lib, mod in libs.items():
            place = placer(lib, mod, ctx.gpu)
            D.f16_overflow_edge(ctx, f"gpu {lib}", place=place)
            D.place_histograms(ctx, f"gpu {lib}", place=place)
            for dtype in D.DTYPES:
                for i, ds in enumerate(D.datasets(dtype)):
                    D.histograms(ctx, f"gpu {lib}", dtype, ds, salt=i, place=place)
                    D.quantiles(ctx, f"gpu {lib}", dtype, ds, salt=i, place=place)
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True) as ctx:
        for lib, mod in libs.items():
            place = placer(lib, mod, ctx.gpu)
            for dtype in D.DTYPES:
                for i, ds in enumerate(D.datasets(dtype)[:4]):
                    D.histograms(ctx, f"gpu {lib} allreduce", dtype, ds, bins_list=[10, 4096],
                                 ranges=["auto", "narrower"], salt=i + 1, place=place)
                    D.quantiles(ctx, f"gpu {lib} allreduce", dtype, ds, salt=i + 1, full=False, place=place)


def big_whole(dtype, n):
    rng = np.random.default_rng([n, 42] + [ord(ch) for ch in dtype])
    if dtype in T.INTS:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    v = rng.standard_normal(n) * 100.0
    return D.bf16_bits(v) if dtype == "bfloat16" else v.astype(dtype)


def same_hist(a, b):
    return a is not None and b is not None and np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and \
        a[1].dtype == b[1].dtype


def large(libs):
    """Arrays of millions of elements (many blocks and kernel passes): the GPU's answer equal to the CPU
    backend's for the same parts and to NumPy's on the whole array; host and managed memory on the GPU context."""
    n = (1 << 22) + 12345
    qs = [0.0, 0.1, 0.5, 0.999, 1.0]
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True, chunk_bytes=1 << 16) as g, \
            dreduce.Context(device="cpu", allreduce=True) as c:
        for dtype in ("float32", "int32", "float16", "bfloat16", "uint64", "float64", "int8"):
            whole = big_whole(dtype, n)
            cut = D.cuts(n, f"large {dtype}", 0)
            host = D.my_part(whole, cut)
            x = D.numpy_view(dtype, whole)
            kw = D.kw_of(dtype)
            bins_cases = [(4096 if dtype != "float16" else 256, None), (1000, (-50.0, 75.0)), (4096, (-8.0, 8.0))]
            for bins, r in bins_cases:
                cpu = c.histogram(host, bins, r, **kw)
                ref = D.ref_histogram(x, bins, r) if RANK == 0 else None
                if RANK == 0:
                    T.check(f"large {dtype} bins={bins} range={r}: CPU backend == NumPy", same_hist(cpu, ref))
                T.check(f"large {dtype} bins={bins} range={r}: host array on the GPU (chunks) == CPU",
                        same_hist(g.histogram(host, bins, r, **kw), cpu))
                for lib, mod in libs.items():
                    d = G.to_device(lib, mod, host, dtype, g.gpu)[0]
                    if not COMM.allreduce(d is not None, op=MPI.LAND):
                        continue
                    T.check(f"large {lib} {dtype} bins={bins} range={r}: GPU == CPU",
                            same_hist(g.histogram(d, bins, r, **kw), cpu))
            want = np.quantile(x.astype(np.float64), qs)
            cq = c.quantile(host, qs, **kw)
            T.check(f"large {dtype} quantiles: CPU backend == NumPy", all(map(D.same_bits, cq.tolist(), want.tolist())))
            T.check(f"large {dtype} quantiles: host array on the GPU == CPU",
                    all(map(D.same_bits, g.quantile(host, qs, **kw).tolist(), cq.tolist())))
            for lib, mod in libs.items():
                d = G.to_device(lib, mod, host, dtype, g.gpu)[0]
                if not COMM.allreduce(d is not None, op=MPI.LAND):
                    continue
                T.check(f"large {lib} {dtype} quantiles: GPU == CPU",
                        all(map(D.same_bits, g.quantile(d, qs, **kw).tolist(), cq.tolist())))
                T.check(f"large {lib} {dtype} median: GPU == CPU", D.same_bits(g.median(d, **kw), c.median(host, **kw)))
        if "cupy" in libs:
            cp = libs["cupy"]
            host = D.my_part(big_whole("float32", n), D.cuts(n, "large float32", 0))
            with cp.cuda.Device(g.gpu):
                m = cp.ndarray(host.shape, cp.float32, cp.cuda.malloc_managed(max(1, host.nbytes)))
                m[...] = cp.asarray(host)
                cp.cuda.Device().synchronize()
                T.check("managed memory histogram == CPU", same_hist(g.histogram(m, 100), c.histogram(host, 100)))
                T.check("managed memory quantile == CPU", D.same_bits(g.quantile(m, 0.3), c.quantile(host, 0.3)))


def streams(libs):
    """Input written on a non-default stream (after a long GPU sleep) and histogrammed at once: the producer's
    current stream is waited for, as for reduce()."""
    if "torch" not in libs:
        return
    torch = libs["torch"]
    n = 1 << 20
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True) as ctx:
        dev = f"cuda:{ctx.gpu}"
        x = torch.zeros(n, device=dev)
        s = torch.cuda.Stream(device=dev)
        for rep in range(2):
            x.zero_()
            torch.cuda.synchronize(dev)
            with torch.cuda.stream(s):
                torch.cuda._sleep(100_000_000)
                x.fill_(3.0)
                h = ctx.histogram(x, 4, (0.0, 4.0))
                q = ctx.quantile(x, 0.5)
            T.check(f"torch stream honoured by histogram ({rep})",
                    h is not None and h[0].tolist() == [0, 0, 0, n * SIZE], f"{h}")
            T.check(f"torch stream honoured by quantile ({rep})", q == 3.0, f"{q}")


def refusals(libs):
    with dreduce.Context(device="gpu", share_gpus=True) as ctx:
        for lib, mod in libs.items():
            if lib == "torch":
                d = mod.arange(1000, dtype=mod.float32, device=f"cuda:{ctx.gpu}")
            else:
                with mod.cuda.Device(ctx.gpu):
                    d = mod.arange(1000, dtype=mod.float32)
            T.expect_raise(f"{lib} non-contiguous histogram", dreduce.UsageError, lambda: ctx.histogram(d[::2]), True,
                           "contiguous")
            T.expect_raise(f"{lib} non-contiguous quantile", dreduce.UsageError, lambda: ctx.quantile(d[::2], 0.5),
                           True, "contiguous")
            T.expect_raise(f"{lib} non-contiguous on rank {SIZE - 1} only", dreduce.UsageError,
                           lambda: ctx.histogram(d[::2] if RANK == SIZE - 1 else d[:500]), True)
            T.expect_raise(f"{lib} non-contiguous quantile on rank {SIZE - 1} only", dreduce.UsageError,
                           lambda: ctx.quantile(d[::2] if RANK == SIZE - 1 else d[:500], 0.5), True)
            T.expect_raise(f"{lib} auto range of data with NaN", dreduce.UsageError,
                           lambda: ctx.histogram(d * float("nan")), True)
            got = ctx.median(d)
            T.check(f"{lib} after the refusals", got == 499.5, f"{got}")


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
    libs = G.available()
    names = COMM.allgather(sorted(libs))
    common = set(names[0]).intersection(*map(set, names))
    if not common:
        if RANK == 0:
            print(f"SKIP: no rank-wide GPU array library (CuPy or torch with a GPU): ranks have {names}")
        return 77
    libs = {k: v for k, v in libs.items() if k in common}
    if RANK == 0:
        print(f"GPU histogram/quantile tests with {', '.join(sorted(libs))} on {SIZE} rank(s), NumPy {np.__version__}",
              flush=True)
    for part in (matrix, large, streams, refusals):
        try:
            part(libs)
        except Exception:  # noqa: BLE001: report, then end every rank (others may wait in a collective)
            T.fail(part.__name__, "unexpected exception\n" + traceback.format_exc())
            sys.stdout.flush()
            COMM.Abort(1)
    counts = COMM.gather((T.passed, len(T.failures), len(D.notes)), root=0)
    if RANK == 0:
        p, f, n = (sum(c[i] for c in counts) for i in range(3))
        print(f"python_distrib_gpu np {SIZE} ({', '.join(sorted(libs))}): {p} passed, {f} failed"
              + (f" ({n} notes)" if n else ""), flush=True)
    return 1 if COMM.allreduce(len(T.failures)) else 0


if __name__ == "__main__":
    sys.exit(main())
