"""Reduce a random array spread over the ranks, check it against NumPy + mpi4py, and print the result and the
times of one call.

    mpirun -np 2 python3 -m dreduce.demo [-n COUNT] [--dtype float32] [--op sum] [--acc wide]
                                         [--device auto|gpu|cpu] [--arrays auto|numpy|cupy|torch] [--iters 10]

Each rank makes its share of COUNT elements (split as evenly as possible) with NumPy, seeded by its rank, and puts
it where its context reduces: on its GPU as a CuPy array or a torch tensor (whichever is installed; --arrays picks),
or on the host as a NumPy array (the CPU backend when there is no GPU; a GPU context copies host arrays in by
itself). Ranks may share a GPU."""

import argparse
import math
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

import dreduce


def parse_count(text):
    units = {"K": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    for suffix in sorted(units, key=len, reverse=True):
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * units[suffix]
    return int(text)


def make_share(count, dtype, rank, size):
    n = count // size + (1 if rank < count % size else 0)
    rng = np.random.default_rng(rank)
    if dtype == "bool":
        return rng.random(n) < 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), n, dtype=dtype, endpoint=True)
    return rng.random(n, dtype=np.float32).astype(dtype)


def to_device(host, arrays, gpu):
    """(array, library name) on the context's GPU with the first library that imports, or the host array."""
    if gpu is None or arrays == "numpy":
        return host, "numpy"
    for lib in (["cupy", "torch"] if arrays == "auto" else [arrays]):
        try:
            if lib == "cupy":
                import cupy
                with cupy.cuda.Device(gpu):
                    return cupy.asarray(host), "cupy"
            import torch
            return torch.from_numpy(host).to(f"cuda:{gpu}"), "torch"
        except ImportError:
            continue
    return host, "numpy (host memory; no CuPy or torch)"


def reference(host, op, comm):
    """The same reduction with NumPy on each rank and mpi4py between them (on rank 0)."""
    if op == "sum":
        part = math.fsum(host.astype(np.float64)) if host.dtype.kind == "f" else int(host.astype(np.int64).sum())
        return comm.reduce(part, op=MPI.SUM, root=0)
    if op in ("min", "max"):
        part = (host.min() if op == "min" else host.max()).item() if host.size else None
        parts = comm.gather(part, root=0)
        if parts is None:
            return None
        parts = [p for p in parts if p is not None]
        return (min if op == "min" else max)(parts)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m dreduce.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--count", default="16Mi", help="elements in all (suffixes K M G Ki Mi Gi; default 16Mi)")
    ap.add_argument("--dtype", default="float32", choices=[d for d in dreduce.DTYPE_NAMES if d != "bfloat16"])
    ap.add_argument("--op", default="sum", choices=["sum", "min", "max", "stats"])
    ap.add_argument("--acc", default="wide", choices=list(dreduce.ACC_MODES))
    ap.add_argument("--device", default="auto", choices=["auto", "gpu", "cpu"])
    ap.add_argument("--arrays", default="auto", choices=["auto", "numpy", "cupy", "torch"])
    ap.add_argument("--iters", type=int, default=10, help="timed calls (after 2 untimed ones; default 10)")
    a = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    count = parse_count(a.count)

    with dreduce.Context(comm, device=a.device, acc=a.acc, share_gpus=True) as ctx:
        host = make_share(count, a.dtype, rank, size)
        data, arrays = to_device(host, a.arrays, ctx.gpu)
        for _ in range(2):
            result = ctx.reduce(data, a.op)
        wall, lib = [], []
        for _ in range(max(1, a.iters)):
            t0 = time.perf_counter()
            result = ctx.reduce(data, a.op)
            wall.append((time.perf_counter() - t0) * 1e3)
            lib.append(ctx.timings()["total_ms"])
        t = ctx.timings()
        want = reference(host, a.op, comm)
        where = f"GPU {ctx.gpu}" if ctx.gpu is not None else "the CPU backend"
        if rank == 0:
            print(f"dreduce {dreduce.__version__} ({dreduce.LIBRARY_PATH}): {size} rank(s), rank 0 on {where}, "
                  f"arrays: {arrays}")
            print(f"{a.op} of {count} {a.dtype} (acc {a.acc}): {result}")
            if want is not None:
                diff = abs(float(result) - float(want))
                print(f"NumPy + mpi4py: {want} (difference {diff:.3g})")
            print(f"one call, median of {len(wall)}: {statistics.median(wall):.3f} ms in Python, "
                  f"{statistics.median(lib):.3f} ms inside libdreduce (last call: local {t['local_ms']:.3f} ms, "
                  f"node {t['node_ms']:.3f} ms; combine: {ctx.combine_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
