#!/usr/bin/env python3
"""The dreduce Python package on GPUs: CuPy arrays and torch tensors in device memory (and what other producers
give: DLPack, __cuda_array_interface__), every dtype the library has x every op, against the same NumPy/Python
references as test_cpu.py (its generators and checkers) and against torch's and CuPy's own answers; input written
on a non-default stream and reduced at once (the array's stream must be waited for); non-contiguous device arrays
refused; host, pinned and managed inputs on a GPU context; each host_path ("cpu", "gpu", "split", "auto") on NumPy
arrays and pinned torch tensors, the same bits where the accumulator is exact and the path each call took;
nan="omit" (test_nan.py's data sets and checks with device arrays, and a large array against the CPU backend). Run under mpiexec at 1 or 2 ranks (ranks may share a
GPU; tests/python/run_mpi.py, through tests/gpu/run_if_gpu.sh).

usage: mpiexec -n N python3 test_gpu.py [--without-new-ops] [--verbose]
Exit 0 passed, 1 failed, 77 skipped (no GPU, or neither CuPy nor torch can use one, on some rank)."""

import argparse
import sys
import traceback

import numpy as np
from mpi4py import MPI

import dreduce
import test_cpu as T

COMM, RANK, SIZE = T.COMM, T.RANK, T.SIZE


def available():
    """{name: module} of the array libraries that can use a GPU here."""
    libs = {}
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            libs["cupy"] = cupy
    except Exception:  # noqa: BLE001: not installed, or no driver/GPU
        pass
    try:
        import torch
        if torch.cuda.is_available():
            libs["torch"] = torch
    except Exception:  # noqa: BLE001
        pass
    return libs


# ---- moving test_cpu's host shards to the device
TORCH_VIEW = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}  # via a same-size signed view


def to_device(lib, mod, host, dtype, gpu):
    """(device array, dtype= for reduce): host is test_cpu.shard()'s array (bfloat16 as uint16 bits)."""
    if lib == "cupy":
        with mod.cuda.Device(gpu):
            return mod.asarray(host), ("bfloat16" if dtype == "bfloat16" else None)
    torch = mod
    dev = f"cuda:{gpu}"
    if dtype == "bfloat16":
        return torch.from_numpy(host.view(np.int16)).to(dev).view(torch.bfloat16), None
    if dtype in TORCH_VIEW:
        tdt = getattr(torch, dtype, None)
        try:
            return torch.from_numpy(host.view(TORCH_VIEW[dtype])).to(dev).view(tdt), None
        except (TypeError, RuntimeError):
            return None, None  # this torch has no such dtype, or cannot view it
    return torch.from_numpy(np.ascontiguousarray(host)).to(dev), None


def run_case(ctx, lib, mod, label, dtype, op, layout="uneven", special=None):
    name = f"{lib} {label} {dtype} {op} {layout}{' ' + special if special else ''}"
    host, _ = T.shard(dtype, op, RANK, layout, special)
    arr, override = to_device(lib, mod, host, dtype, ctx.gpu)
    have = COMM.allreduce(arr is not None, op=MPI.LAND)
    if not have:
        return T.ok(name + " (dtype not in this torch)")
    kw = {"dtype": override} if override else {}
    if op in ("argmin", "argmax") and SIZE > 1:
        ctx.prepare(arr, op, **kw)
    try:
        got = ctx.reduce(arr, op, **kw)
    except dreduce.Error as e:
        return T.fail(name, f"raised {type(e).__name__}: {e}")
    if not T.expects_result(ctx):
        return T.check(name, got is None, f"got {got!r}, expected None")
    vals = T.whole(dtype, op, layout, special)
    if op == "stats":
        return T.check_stats(name, got, vals, dtype, ctx.acc)
    if op in ("argmin", "argmax"):
        return T.check_arg(name, got, vals, dtype, op)
    return T.check_value(name, got, vals, dtype, op, ctx.acc)


def matrix(libs, new_ops):
    with dreduce.Context(device="gpu", share_gpus=True) as ctx:
        for lib, mod in libs.items():
            for dtype in T.DTYPES:
                for op in T.ops_for(dtype, new_ops):
                    run_case(ctx, lib, mod, "wide", dtype, op)
                if dtype in T.FLOATS:
                    for op in ["max"] + (["argmax", "stats"] if new_ops else []):
                        run_case(ctx, lib, mod, "wide", dtype, op, "even", special="nan")
            for dtype in ("float32", "int64"):  # larger: several blocks and kernel passes
                run_case(ctx, lib, mod, "wide", dtype, "sum", "even")
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True) as ctx:
        for lib, mod in libs.items():
            for dtype in ("bool", "int8", "uint64", "float16", "bfloat16", "float32", "float64"):
                for op in ["sum", "min"] + (["argmin"] if new_ops else []):
                    run_case(ctx, lib, mod, "allreduce", dtype, op, "small")
    with dreduce.Context(device="gpu", share_gpus=True, acc="native") as ctx:
        for lib, mod in libs.items():
            for dtype in T.FLOATS:
                for op in ("sum", "prod"):
                    run_case(ctx, lib, mod, "native", dtype, op)
    with dreduce.Context(device="gpu", share_gpus=True, acc="exact") as ctx:
        for lib, mod in libs.items():
            for dtype in T.DTYPES:
                for op in ["sum", "max"] + (["stats"] if new_ops else []):
                    run_case(ctx, lib, mod, "exact", dtype, op)


# ---- the NaN policy
def nan_omit(libs):
    """nan="omit" with device arrays: test_nan.py's float data sets (NaN, ~1%, on some ranks, one rank's or every
    element, with +-inf, signed zeros, signalling and quiet payloads) as CuPy arrays and torch tensors on a GPU
    context, every op against NumPy's nan* function of the whole array, the NaN counts, warnings and errors; then
    a large array (several kernel passes) whose answers equal the CPU backend's for the same parts."""
    import test_nan as N
    for lib, mod in libs.items():
        def place(part, dtype, ctx, lib=lib, mod=mod):
            return to_device(lib, mod, part, dtype, ctx.gpu)[0]
        N.matrix(place=place, device="gpu", label=f"gpu {lib}", ints=False)
    n = (1 << 22) + 12345
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True, acc="exact", nan="omit") as g, \
            dreduce.Context(device="cpu", allreduce=True, acc="exact", nan="omit") as c:
        for dtype in ("float32", "float16", "bfloat16", "float64"):
            whole, cut = N.whole_array(dtype, "sparse", n=n)
            host = whole[cut[RANK]:cut[RANK + 1]]
            kw = {"dtype": "bfloat16"} if dtype == "bfloat16" else {}
            want_nan = int(np.isnan(N.numpy_view(dtype, whole)).sum())
            for lib, mod in libs.items():
                d = to_device(lib, mod, host, dtype, g.gpu)[0]
                if not COMM.allreduce(d is not None, op=MPI.LAND):
                    continue
                for op in ("sum", "min", "max", "argmin", "argmax", "stats"):
                    first = {"first": cut[RANK]} if op in ("argmin", "argmax") else {}
                    want = c.reduce(host, op, **kw, **first)
                    got = g.reduce(d, op, **kw, **first)
                    info = g.reduce_info()
                    if op == "stats":  # exact sums: equal; the variance's rounding depends on the order
                        same = got is not None and want is not None and \
                            (got.count, got.nan_count, got.sum, got.mean, got.min, got.max) == \
                            (want.count, want.nan_count, want.sum, want.mean, want.min, want.max) and \
                            abs(got.var - want.var) <= 1e-9 * abs(want.var)
                    else:
                        same = got == want
                    T.check(f"large {lib} {dtype} {op} nan='omit': GPU == CPU", same, f"{got!r} vs {want!r}")
                    T.check(f"large {lib} {dtype} {op} nan='omit': NaN count", info["nan_count"] == want_nan and
                            info["local_nan_count"] == int(np.isnan(N.numpy_view(dtype, host)).sum()), f"{info}")
                got = g.reduce(d, **kw, nan="propagate")
                T.check(f"large {lib} {dtype} sum nan='propagate' per call: NaN", got != got, f"{got!r}")


# ---- against the array library's own answer, at a size that takes several kernel passes
def framework_answers(libs):
    n = (1 << 22) + 12345
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True) as ctx:
        if "torch" in libs:
            torch = libs["torch"]
            g = torch.Generator(device=f"cuda:{ctx.gpu}").manual_seed(RANK)
            x = torch.rand(n, device=f"cuda:{ctx.gpu}", generator=g)
            want = COMM.allreduce(torch.sum(x.double()).item())
            got = ctx.reduce(x)
            T.check("torch float32 sum vs torch.sum", abs(got - want) <= 1e-9 * abs(want), f"{got!r} vs {want!r}")
            i = torch.randint(-1000, 1000, (n,), device=f"cuda:{ctx.gpu}", generator=g, dtype=torch.int32)
            T.check("torch int32 sum vs torch.sum", ctx.reduce(i) == COMM.allreduce(int(i.sum().item())))
            T.check("torch int32 max vs torch.max", ctx.reduce(i, "max") ==
                    COMM.allreduce(int(i.max().item()), op=MPI.MAX))
            b = x.to(torch.bfloat16)
            T.check("torch bfloat16 max vs torch.max", ctx.reduce(b, "max") ==
                    COMM.allreduce(float(b.max().item()), op=MPI.MAX))
        if "cupy" in libs:
            cp = libs["cupy"]
            with cp.cuda.Device(ctx.gpu):
                x = cp.random.default_rng(RANK).random(n, dtype=cp.float64)
                want = COMM.allreduce(float(cp.sum(x)))
                got = ctx.reduce(x)
                T.check("cupy float64 sum vs cupy.sum", abs(got - want) <= 1e-12 * abs(want), f"{got!r} vs {want!r}")
                h = (x * 100).astype(cp.float16)
                T.check("cupy float16 min vs cupy.min", ctx.reduce(h, "min") ==
                        COMM.allreduce(float(cp.min(h)), op=MPI.MIN))


# ---- streams: written on a non-default stream and reduced at once
def streams(libs):
    n = 1 << 20
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True) as ctx:
        want = float(n * SIZE)
        if "torch" in libs:
            torch = libs["torch"]
            dev = f"cuda:{ctx.gpu}"
            x = torch.zeros(n, device=dev)
            s = torch.cuda.Stream(device=dev)
            for rep in range(3):
                x.zero_()
                torch.cuda.synchronize(dev)
                with torch.cuda.stream(s):
                    torch.cuda._sleep(100_000_000)  # ~50 ms of GPU time before the write
                    x.fill_(1.0)
                    got = ctx.reduce(x)  # torch's current stream is s: reduce() waits for it
                T.check(f"torch stream honoured ({rep})", got == want, f"got {got!r}, expected {want!r}")
                with torch.cuda.stream(s):
                    torch.cuda._sleep(100_000_000)
                    x.fill_(2.0)
                    got = ctx.reduce(DLPack(x))  # DLPack: the producer makes the legacy stream wait
                T.check(f"DLPack stream honoured ({rep})", got == 2 * want, f"got {got!r}, expected {2 * want!r}")
            # the legacy default stream: nothing to wait for on the host, libdreduce's streams wait for it
            x.zero_()
            torch.cuda._sleep(100_000_000)
            x.fill_(3.0)
            T.check("torch default stream", ctx.reduce(x) == 3 * want)
        if "cupy" in libs:
            cp = libs["cupy"]
            with cp.cuda.Device(ctx.gpu):
                x = cp.zeros(n, dtype=cp.float32)
                m = cp.ones((4096, 4096), dtype=cp.float32)
                s = cp.cuda.Stream(non_blocking=True)
                for rep in range(3):
                    x.fill(0)
                    cp.cuda.Device().synchronize()
                    with s:
                        for _ in range(20):  # tens of ms of GPU work before the write
                            m = m @ m / 4096
                        x.fill(1)
                        got = ctx.reduce(x)  # CuPy's current stream is s
                    T.check(f"cupy stream honoured ({rep})", got == want, f"got {got!r}, expected {want!r}")
                    with s:
                        for _ in range(20):
                            m = m @ m / 4096
                        x.fill(2)
                        wrapped = CudaArrayInterface(x)  # its "stream" entry is s
                    got = ctx.reduce(wrapped)  # outside the with: only the interface's stream says to wait
                    T.check(f"__cuda_array_interface__ stream honoured ({rep})", got == 2 * want,
                            f"got {got!r}, expected {2 * want!r}")


class CudaArrayInterface:
    """Only __cuda_array_interface__ (as Numba or JAX give it), taken when made."""

    def __init__(self, a):
        self.__cuda_array_interface__ = dict(a.__cuda_array_interface__)
        self._a = a


class DLPack:
    """Only DLPack (as an array API library gives it)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None, **kw):
        return self._a.__dlpack__(stream=stream, **kw) if stream is not None else self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


# ---- other inputs and refusals on a GPU context
def inputs(libs):
    with dreduce.Context(device="gpu", share_gpus=True, allreduce=True) as ctx:
        T.check("context on a GPU", ctx.device == "gpu" and isinstance(ctx.gpu, int))
        h = np.arange(1, 1 << 16, dtype=np.float32)
        want = float(SIZE * ((1 << 16) - 1) * (1 << 16) // 2)
        T.check("host NumPy array on a GPU context", ctx.reduce(h) == want)
        t = ctx.timings()
        T.check("timings on a GPU", t["total_ms"] > 0 and t["bytes"] == h.nbytes, f"{t}")
        if "torch" in libs:
            torch = libs["torch"]
            dev = f"cuda:{ctx.gpu}"
            T.check("torch pinned CPU tensor", ctx.reduce(torch.from_numpy(h).pin_memory()) == want)
            T.check("torch CPU tensor", ctx.reduce(torch.from_numpy(h)) == want)
            d = torch.from_numpy(h).to(dev)
            T.check("torch 2-D tensor", ctx.reduce(d.view(255, 257), "max") == 255 * 257)
            T.expect_raise("torch non-contiguous", dreduce.UsageError, lambda: ctx.reduce(d[::2]), True,
                           "not contiguous")
            T.expect_raise("torch transposed", dreduce.UsageError,
                           lambda: ctx.reduce(d.view(255, 257).t()), True, "not contiguous")
            T.expect_raise("torch complex64", dreduce.UsageError,
                           lambda: ctx.reduce(torch.zeros(4, dtype=torch.complex64, device=dev)), True, "complex64")
            T.expect_raise("torch non-contiguous on one rank", dreduce.UsageError,
                           lambda: ctx.reduce(d[::2] if RANK == SIZE - 1 else d[: d.numel() // 2]), True)
            T.check("torch after errors", ctx.reduce(d) == want)
            bf = torch.from_numpy(h[:100]).to(dev).to(torch.bfloat16)
            T.check("DLPack bfloat16", ctx.reduce(DLPack(bf), "max") == 100.0)
            T.check("DLPack float32 sum", ctx.reduce(DLPack(d)) == want)
        if "cupy" in libs:
            cp = libs["cupy"]
            with cp.cuda.Device(ctx.gpu):
                d = cp.asarray(h)
                T.check("cupy array", ctx.reduce(d) == want)
                T.check("__cuda_array_interface__ only", ctx.reduce(CudaArrayInterface(d)) == want)
                T.expect_raise("cupy non-contiguous", dreduce.UsageError, lambda: ctx.reduce(d[::2]), True,
                               "not C-contiguous")
                T.expect_raise("__cuda_array_interface__ strided", dreduce.UsageError,
                               lambda: ctx.reduce(CudaArrayInterface(d[::2])), True, "not C-contiguous")
                T.expect_raise("cupy complex128", dreduce.UsageError,
                               lambda: ctx.reduce(cp.zeros(3, cp.complex128)), True, "complex128")
                mview = cp.ndarray(h.shape, cp.float32, cp.cuda.malloc_managed(h.nbytes))
                mview[...] = d
                cp.cuda.Device().synchronize()
                T.check("managed memory", ctx.reduce(mview) == want)
                if hasattr(d, "__dlpack__"):
                    T.check("cupy through DLPack", ctx.reduce(DLPack(d)) == want)


def host_paths(libs):
    """Host arrays through each host_path of a GPU context: exact sums, integer sums, argmin (value and global index)
    and stats' count, min, max the same as the CPU backend's, bit for bit; float64 sums within 1e-9 of sum |x|; each
    call says the path it took (split at 2^21 elements per rank: both parts non-empty)."""
    torch = libs.get("torch")
    n = (1 << 21) + 3
    rng = np.random.default_rng(1234 + RANK)
    f = (rng.standard_normal(n) * 100).astype(np.float32)
    i = rng.integers(-1000, 1000, n, dtype=np.int32)
    i[n // 2] = -5000  # argmin's element, in the CPU part of a split
    arrays = {"pageable": (f, i)}
    if torch is not None:
        arrays["pinned"] = (torch.from_numpy(f).pin_memory(), torch.from_numpy(i).pin_memory())
    with dreduce.Context(device="cpu", allreduce=True) as cpu, \
            dreduce.Context(device="cpu", allreduce=True, acc="exact") as cpu_x:
        cpu.prepare(i, "argmin")
        want = {"sum": cpu.reduce(f), "exact": cpu_x.reduce(f), "isum": cpu.reduce(i), "argmin": cpu.reduce(i, "argmin"),
                "stats": cpu.reduce(f, "stats")}
        asum = COMM.allreduce(float(np.abs(f.astype(np.float64)).sum()))
    for path in ("cpu", "gpu", "split", "auto"):
        with dreduce.Context(device="gpu", share_gpus=True, allreduce=True, host_path=path) as g, \
                dreduce.Context(device="gpu", share_gpus=True, allreduce=True, acc="exact", host_path=path) as gx:
            for kind, (fa, ia) in arrays.items():
                label = f"host_path={path}, {kind}"
                T.check(f"{label}: exact sum", gx.reduce(fa) == want["exact"])
                took = gx.timings()
                expect = {"cpu": "cpu", "gpu": "gpu", "split": "split", "auto": "cpu"}[path]  # auto: < 32 MiB
                T.check(f"{label}: the path taken", took["host_path"] == expect and
                        took["host_pinned"] == (kind == "pinned"), f"{took}")
                if path == "split":
                    T.check(f"{label}: both parts", 0 < took["host_cpu_elems"] < n, f"{took}")
                T.check(f"{label}: float64 sum", abs(g.reduce(fa) - want["sum"]) <= 1e-9 * asum)
                T.check(f"{label}: int32 sum", g.reduce(ia) == want["isum"])
                g.prepare(ia, "argmin")
                T.check(f"{label}: argmin", g.reduce(ia, "argmin") == want["argmin"])
                st, ws = g.reduce(fa, "stats"), want["stats"]
                T.check(f"{label}: stats", (st.count, st.min, st.max) == (ws.count, ws.min, ws.max) and
                        abs(st.sum - ws.sum) <= 1e-9 * asum, f"{st} vs {ws}")
            if path == "split":  # measured for its cut; auto measures from 32 MiB on only
                r = gx.host_rates("float32", "sum", pinned=False)
                T.check("host_path=split: rates measured", r is not None and r["cpu_gbs"] > 0 and r["gpu_gbs"] > 0,
                        f"{r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--without-new-ops", action="store_true", help="leave out stats/argmin/argmax (issue #37)")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    T.verbose = a.verbose
    T.NEW_OPS_ON = not a.without_new_ops
    why = T.same_mpi()
    if why:
        if RANK == 0:
            print(f"SKIP: {why}")
        return 77
    libs = available()
    names = COMM.allgather(sorted(libs))
    common = set(names[0]).intersection(*map(set, names))
    if not common:
        if RANK == 0:
            print(f"SKIP: no rank-wide GPU array library (CuPy or torch with a GPU): ranks have {names}")
        return 77
    libs = {k: v for k, v in libs.items() if k in common}
    if RANK == 0:
        print(f"GPU tests with {', '.join(sorted(libs))} on {SIZE} rank(s)", flush=True)
    for part in (matrix, framework_answers, streams, inputs, host_paths, nan_omit):
        try:
            part(libs, T.NEW_OPS_ON) if part is matrix else part(libs)
        except Exception:  # noqa: BLE001: report, then end every rank (others may wait in a collective)
            T.fail(part.__name__, "unexpected exception\n" + traceback.format_exc())
            sys.stdout.flush()
            COMM.Abort(1)
    counts = COMM.gather((T.passed, len(T.failures)), root=0)
    if RANK == 0:
        p, f = sum(c[0] for c in counts), sum(c[1] for c in counts)
        print(f"python_gpu np {SIZE} ({', '.join(sorted(libs))})"
              f"{' (without stats/argmin/argmax)' if not T.NEW_OPS_ON else ''}: {p} passed, {f} failed", flush=True)
    return 1 if COMM.allreduce(len(T.failures)) else 0


if __name__ == "__main__":
    sys.exit(main())
