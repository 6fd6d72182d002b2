#!/usr/bin/env python3
"""dreduce from Python against what a Python user would write instead (issue #36), on one GPU: float32 sums of a
torch tensor at 2^10 ... 2^30 elements in all, by P = 1 and P = 2 ranks sharing the GPU (each rank holds n / P).

Rows, each a whole call with the result in hand on rank 0 (a Python number), timed on the host:
  dreduce       ctx.reduce(t)                                    (t a torch tensor; float64 accumulation)
  torch         torch.sum(t).item(), + comm.Reduce of the values when P > 1 (mpi4py, host buffers)
  cupy          float(cupy.sum(x)) + comm.Reduce (x: the same memory as a CuPy array)
  nccl          s = torch.sum(t); torch.distributed.reduce(s, 0) (NCCL); s.item() on rank 0 -- only where each
                rank has a GPU of its own (NCCL refuses two ranks on one GPU)
and for dreduce the C call's own time (dreduce_timings total_ms, read after each call) and the Python layer's cost
above it (median Python wall time - median C time): issue #36's targets are <= 5 us for that at small n and
dreduce >= 1.00x torch's row from 2^24 up.

Method: every rank starts each repetition together (an MPI barrier, not timed); rank 0's wall time of the call
(time.perf_counter_ns) is the sample; the median of many (enough to fill --budget seconds per row and size, at least
--min-reps, at most --max-reps) after --warmup untimed calls. The data is uniform random float32, made once per
size (torch.rand). Every row's answer is checked against a float64 sum (relative difference <= 1e-4; float32
accumulation in torch/CuPy is the loosest).

--overhead measures only the Python layer's cost per call, on the CPU backend of any machine, in one process.
--host measures host (NumPy) arrays instead: a CPU and a GPU context against np.sum, in this process (host()).
--nan measures the NaN policy on a GPU tensor with 1% NaN: ctx.reduce(t, nan="omit") against torch.nansum,
cupy.nansum, torch.nanmean and torch.nanmedian, and the same calls without NaN omitted, in this process (nan()).

usage: python3 bench/python_bench.py [--overhead | --host | --nan] [--np 1,2] [--sizes 10-30 | 10,20,2^30,1Mi] [--gpu 0] [--json FILE]
                                     [--rows dreduce,torch,cupy,nccl] [--budget 0.3] [--warmup 5]
                                     [--min-reps 10] [--max-reps 2000] [--mpiexec mpiexec]
With no arguments: P = 1 and 2, every even power from 2^10 to 2^30. It launches itself under mpiexec once per P
(the `--worker` mode) and prints one table. Needs torch with CUDA, mpi4py, the dreduce package (from python/ in this
tree when it is not installed) and libdreduce (docs/python.md, "Finding libdreduce"); CuPy and NCCL rows are left
out, saying why, where they cannot run. Exit: 0, 1 (a wrong answer or a failed run), 2 usage, 77 no GPU/torch."""

import argparse
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ROWS = ["dreduce", "torch", "cupy", "nccl"]


def parse_sizes(text):
    """'10-30' (every even power), '10,20,24' (powers), '1Mi', '2^30', '1000' (counts) -> sorted element counts."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = (int(x) for x in part.split("-"))
            out += [1 << e for e in range(lo, hi + 1) if (e - lo) % 2 == 0]
        elif part.startswith("2^"):
            out.append(1 << int(part[2:]))
        elif part[-2:] in ("Ki", "Mi", "Gi"):
            out.append(int(part[:-2]) << {"Ki": 10, "Mi": 20, "Gi": 30}[part[-2:]])
        elif int(part) <= 40:
            out.append(1 << int(part))
        else:
            out.append(int(part))
    return sorted(set(out))


# ---- the worker: one P, under mpiexec
def worker(a):
    import numpy as np
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    try:
        import torch
        ok = torch.cuda.is_available()
    except ImportError:
        ok = False
    if not comm.allreduce(ok, op=MPI.LAND):
        if rank == 0:
            print("SKIP: torch with CUDA is needed on every rank")
        return 77
    import dreduce
    gpu = a.gpu if a.gpu >= 0 else 0
    dev = torch.device(f"cuda:{gpu}")
    torch.cuda.set_device(dev)
    rows = [r for r in a.rows.split(",") if r]
    notes = {}
    cp = None
    if "cupy" in rows:
        try:
            import cupy as cp
            cp.cuda.Device(gpu).use()
        except Exception as e:  # noqa: BLE001
            notes["cupy"] = f"CuPy unavailable: {type(e).__name__}: {e}"
    dist = None
    if "nccl" in rows:
        gpus = comm.allgather(gpu)
        if len(set(gpus)) < size:
            notes["nccl"] = f"not run: NCCL needs a GPU per rank ({size} ranks share GPU {gpu})"
        else:
            try:
                import torch.distributed as dist
                port = None
                if rank == 0:
                    with socket.socket() as s:
                        s.bind(("127.0.0.1", 0))
                        port = s.getsockname()[1]
                port = comm.bcast(port, root=0)
                dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size)
                probe = torch.ones(1, device=dev)
                dist.reduce(probe, 0)
                torch.cuda.synchronize(dev)
            except Exception as e:  # noqa: BLE001
                notes["nccl"] = f"torch.distributed (NCCL) failed: {type(e).__name__}: {e}"
    # Every rank runs the same rows (each is collective): a row that cannot run on one rank is left out on all.
    for theirs in comm.allgather(notes):
        for row, note in theirs.items():
            notes.setdefault(row, note)
    if "nccl" in notes and dist is not None and dist.is_initialized():
        dist.destroy_process_group()
    if "nccl" in notes:
        dist = None
    ok = [r for r in rows if r not in notes]
    results = []
    failures = 0
    with dreduce.Context(comm, device="gpu", gpu=gpu, share_gpus=True) as ctx:
        for n in a.sizes:
            mine = n // size + (1 if rank < n % size else 0)
            try:
                t = torch.rand(mine, device=dev, dtype=torch.float32)
            except torch.cuda.OutOfMemoryError:
                t = None
            if not comm.allreduce(t is not None, op=MPI.LAND):  # every rank stops alike
                if rank == 0:
                    print(f"# n = {n}: does not fit on the GPU, left out with the larger sizes", flush=True)
                break
            x = cp.asarray(t) if cp is not None and "cupy" in ok else None
            torch.cuda.synchronize(dev)
            want = comm.allreduce(torch.sum(t.double()).item())
            send, recv = np.zeros(1), np.zeros(1)

            def host_reduce(value):
                send[0] = value
                comm.Reduce(send, recv, op=MPI.SUM, root=0)
                return recv[0] if rank == 0 else None

            calls = {
                "dreduce": lambda: ctx.reduce(t),
                "torch": (lambda: torch.sum(t).item()) if size == 1 else (lambda: host_reduce(torch.sum(t).item())),
                "cupy": lambda: host_reduce(float(cp.sum(x))),
            }
            if dist is not None:
                def nccl():
                    s = torch.sum(t)
                    dist.reduce(s, 0)
                    return s.item() if rank == 0 else None
                calls["nccl"] = nccl
            row = {"n": n, "P": size, "per_rank": mine}
            for name in ok:
                fn = calls[name]
                med, got, c_ms = timed(fn, comm, a, ctx if name == "dreduce" else None)
                row[f"{name}_us"] = med
                if name == "dreduce":
                    row["c_call_us"] = c_ms
                    row["overhead_us"] = med - c_ms
                if rank == 0:
                    err = abs(got - want) / max(abs(want), 1e-300)
                    row[f"{name}_relerr"] = err
                    if not err <= 1e-4:
                        failures += 1
                        print(f"WRONG: {name} at n = {n}: {got!r}, expected {want!r}", flush=True)
            if rank == 0:
                results.append(row)
                print("# " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                      for k, v in row.items()), flush=True)
            t = x = calls = None  # the memory back before the next size
            torch.cuda.empty_cache()
        path = ctx.combine_path
    if dist is not None:
        dist.destroy_process_group()
    if rank == 0:
        with open(a.out, "w") as f:
            json.dump({"P": size, "gpu": gpu, "device": torch.cuda.get_device_name(dev), "combine": path,
                       "notes": notes, "rows": results, "dreduce": dreduce.__version__,
                       "library": dreduce.LIBRARY_PATH, "torch": torch.__version__,
                       "cupy": getattr(cp, "__version__", None),
                       "mpi": MPI.Get_library_version().splitlines()[0]}, f, indent=1)
    return 1 if comm.allreduce(failures) else 0


def timed(fn, comm, a, ctx):
    """(median microseconds of rank 0's calls, rank 0's last answer, median C-call microseconds or None)."""
    got = None
    for _ in range(a.warmup):
        got = fn()
    comm.Barrier()
    t0 = time.perf_counter()
    fn()
    one = comm.bcast(time.perf_counter() - t0, root=0)
    reps = comm.bcast(int(min(a.max_reps, max(a.min_reps, a.budget / max(one, 1e-7)))), root=0)
    wall, lib = [], []
    clock = time.perf_counter_ns
    for _ in range(reps):
        comm.Barrier()
        t0 = clock()
        got = fn()
        t1 = clock()
        wall.append((t1 - t0) / 1e3)
        if ctx is not None:
            lib.append(ctx.timings()["total_ms"] * 1e3)
    return statistics.median(wall), got, statistics.median(lib) if lib else None


# ---- --overhead: the Python layer's own cost, on the CPU backend (any machine, one process)
def overhead(a):
    """Wall time of ctx.reduce(x) for a NumPy array of a few elements against the C call's own time
    (dreduce_timings total_ms): what the Python layer adds per call (issue #36: <= 5 us). Both in batches of 2000
    calls, each batch's mean; the table gives the fastest batch (timeit's rule: the least disturbed by the rest of
    the machine) and the median batch."""
    import numpy as np
    import dreduce
    rows = []
    batch, batches = 2000, 25
    with dreduce.Context(device="cpu", cpu_threads=1) as ctx:
        for n, dtype in ((1, "float32"), (1, "int64"), (1000, "float32")):
            x = np.ones(n, dtype)
            reduce = ctx.reduce
            for _ in range(1000):
                reduce(x)
            py, c = [], []
            for _ in range(batches):
                t0 = time.perf_counter()
                for _ in range(batch):
                    reduce(x)
                py.append((time.perf_counter() - t0) / batch * 1e6)
                total = 0.0
                for _ in range(batch):
                    reduce(x)
                    total += ctx.timings()["total_ms"]
                c.append(total / batch * 1e3)
            rows.append((n, dtype, min(py), min(c), statistics.median(py), statistics.median(c)))
    print(f"dreduce {dreduce.__version__} ({dreduce.LIBRARY_PATH}), CPU backend, one rank, one thread; "
          f"microseconds per call, mean of a batch of {batch}, over {batches} batches")
    print(f"{'n':>6} {'dtype':>8} | {'fastest batch: python':>22} {'C call':>7} {'added':>6} | "
          f"{'median batch: python':>21} {'C call':>7} {'added':>6}")
    for n, dtype, p0, c0, p1, c1 in rows:
        print(f"{n:>6} {dtype:>8} | {p0:>22.2f} {c0:>7.2f} {p0 - c0:>6.2f} | {p1:>21.2f} {c1:>7.2f} {p1 - c1:>6.2f}")
    print("python: ctx.reduce(x) timed around the batch; C call: dreduce_timings total_ms after each call; added: "
          "the difference (the ctypes call, the array's address and type, the result)")
    return 0


# ---- --host: host arrays (NumPy) on the CPU backend and on a GPU context, against NumPy, in this one process
def median_ms(fn, budget, before=None):
    """The median wall time of fn() in ms, over as many calls as fill `budget` seconds (at least 3) after one
    untimed; before() (untimed) ahead of each, e.g. a device synchronization so no earlier work is timed."""
    fn()
    t, spent = [], 0.0
    while len(t) < 3 or spent < budget:
        if before:
            before()
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
        spent += t[-1]
    return statistics.median(t) * 1e3


def host(a):
    """A NumPy user's host array: ctx.reduce(a) (sum, float64 accumulation) and ctx.reduce(a, "stats") on a CPU
    context (its worker threads on this rank's share of the node: cfg.bind's library default, "workers"; and with
    bind="auto", the C benchmark's, which binds the process itself to the share) and, where there is a GPU, on a GPU
    context with each host_path: "auto" (the fastest path measured for the memory's kind), "cpu" (the rank's CPU
    threads in place), "gpu" (chunked copies: pinned memory by DMA, pageable through the driver's staging), "split"
    (both at once); with torch, the same data as a pinned torch CPU tensor too; against np.sum(a),
    np.sum(a, dtype=np.float64) and np.mean + np.var. Each context's threads and cores are printed first. Run it
    under the launcher as a user would (mpirun -np 1 keeps Open MPI's default binding: one core). float32 and
    float64 at --sizes (default 2^26, 2^28); the median of as many calls as fill --budget seconds (at least 3)."""
    import numpy as np
    from mpi4py import MPI
    import dreduce
    sizes = [n for n in a.sizes if n >= 1 << 10]
    contexts = [("cpu", dict(device="cpu"))]
    torch = None
    try:
        import torch  # noqa: F811
        if torch.cuda.is_available():
            for path in ("auto", "cpu", "gpu", "split"):
                contexts.append((f"gpu ({path})", dict(device="gpu", share_gpus=True, host_path=path)))
        else:
            torch = None
    except ImportError:
        pass
    # The C benchmark's binding (the process bound to its share), last: the process's own affinity is put back
    # after each such context, so the other rows keep the launcher's.
    contexts.append(("cpu, bind auto", dict(device="cpu", bind="auto")))
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    print(f"dreduce {dreduce.__version__} ({dreduce.LIBRARY_PATH}); NumPy {np.__version__}; this process may run on "
          f"{cpus} of {os.cpu_count()} CPUs (the launcher's binding)")

    def med(fn):
        return median_ms(fn, a.budget)

    rows = []
    for n in sizes:
        for dt in (np.float32, np.float64):
            x = np.random.default_rng(n).standard_normal(n).astype(dt)
            nbytes = x.nbytes
            want = float(np.sum(x, dtype=np.float64))
            row = lambda what, ms: rows.append((n, np.dtype(dt).name, what, ms, nbytes / ms / 1e6))  # noqa: E731
            row("np.sum(a)", med(lambda: np.sum(x)))
            row("np.sum(a, dtype=float64)", med(lambda: np.sum(x, dtype=np.float64)))
            row("np.mean(a) + np.var(a)", med(lambda: (np.mean(x), np.var(x))))
            for name, kw in contexts:
                launcher_cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
                with dreduce.Context(MPI.COMM_WORLD, **kw) as ctx:
                    if n == sizes[0] and dt is np.float32:  # the threads every row of this context ran on
                        i = ctx.info()
                        print(f"{name} context: {i['threads']} threads on {i['share'] or '(no share)'}, process "
                              f"affinity {i['affinity']}" + (" (widened from the launcher's)" if i['widened'] else ""))
                    got = ctx.reduce(x)
                    if abs(got - want) > 1e-6 * max(1.0, float(np.sum(np.abs(x), dtype=np.float64))):
                        print(f"FAIL: {name} context, n {n} {np.dtype(dt).name}: sum {got!r}, float64 sum {want!r}")
                        return 1
                    def timed(what, fn):  # a GPU context's row names the path the calls took
                        ms = med(fn)
                        took = ctx.timings()["host_path"]
                        row(what + (f" [{took}]" if took else ""), ms)
                    timed(f"ctx.reduce(a), {name} context", lambda: ctx.reduce(x))
                    timed(f"ctx.reduce(a, 'stats'), {name} context", lambda: ctx.reduce(x, "stats"))
                    if name.startswith("gpu") and torch is not None:
                        t = torch.from_numpy(x).pin_memory()
                        timed(f"ctx.reduce(t), {name} context, pinned tensor", lambda: ctx.reduce(t))
                        del t
                if launcher_cpus is not None:
                    os.sched_setaffinity(0, launcher_cpus)
            del x
    print(f"{'n':>10} {'dtype':>8} {'call':<64} {'ms':>9} {'GB/s':>7}")
    for n, dt, what, ms, gbs in rows:
        print(f"{'2^%d' % (n.bit_length() - 1):>10} {dt:>8} {what:<64} {ms:>9.3f} {gbs:>7.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([dict(n=n, dtype=dt, call=w, ms=ms, gbs=g) for n, dt, w, ms, g in rows], f, indent=1)
    return 0


def nan(a):
    """NaN policy OMIT from Python (issue 42), on one GPU in this process: a float32 torch tensor of standard normal
    values with 1% NaN at random places (and the same tensor as a CuPy array), at --sizes (default 2^24, 2^28).
    Rows, each a whole call with the answer in hand (the median of as many calls as fill --budget seconds):
    ctx.reduce(t) (propagate: NaN), ctx.reduce(t, nan="omit") against torch.nansum(t).item() and
    float(cupy.nansum(x)); ctx.reduce(t, "stats", nan="omit") (count, sum, mean, both variances, min, max) against
    torch.nanmean(t).item() (torch has no nanvar, nanmin or nanmax); ctx.median(t, nan="omit") against
    torch.nanmedian(t).item() and float(cupy.nanmedian(x)). Answers checked: the sums against a float64 nansum
    (relative 1e-6), the means likewise, the medians equal to torch's (np.nanmedian of the float64 values)."""
    import numpy as np
    from mpi4py import MPI
    import dreduce
    try:
        import torch
    except ImportError:
        print("--nan needs torch")
        return 77
    if not torch.cuda.is_available():
        print("--nan needs a GPU")
        return 77
    try:
        import cupy
    except ImportError:
        cupy = None
    sizes = [n for n in a.sizes if n >= 1 << 10]
    print(f"dreduce {dreduce.__version__} ({dreduce.LIBRARY_PATH}); torch {torch.__version__}"
          f"{'; CuPy ' + cupy.__version__ if cupy else '; no CuPy'}; {torch.cuda.get_device_name(0)}")

    def med(fn):
        return median_ms(fn, a.budget, before=torch.cuda.synchronize)

    rows, bad = [], 0
    with dreduce.Context(MPI.COMM_WORLD, device="gpu", share_gpus=True) as ctx:
        for n in sizes:
            g = torch.Generator(device="cuda").manual_seed(n)
            t = torch.randn(n, device="cuda", generator=g)
            t[torch.rand(n, device="cuda", generator=g) < 0.01] = float("nan")
            x = cupy.asarray(t) if cupy else None
            want = torch.nansum(t.double()).item()
            want_mean = torch.nanmean(t.double()).item()
            nbytes = t.numel() * t.element_size()
            row = lambda what, ms: rows.append((n, what, ms, nbytes / ms / 1e6))  # noqa: E731
            got = ctx.reduce(t, nan="omit")
            if abs(got - want) > 1e-6 * abs(want) + 1e-3:
                print(f"FAIL: n {n}: ctx.reduce(t, nan='omit') {got!r}, float64 nansum {want!r}")
                bad = 1
            st = ctx.reduce(t, "stats", nan="omit")
            if abs(st.mean - want_mean) > 1e-6 * abs(want_mean) + 1e-9:
                print(f"FAIL: n {n}: stats mean {st.mean!r}, float64 nanmean {want_mean!r}")
                bad = 1
            m = ctx.median(t, nan="omit")
            tm = torch.nanmedian(t).item()
            if n <= 1 << 28 and m != tm and not (m == 0 and tm == 0):
                # torch.nanmedian takes the lower middle element; dreduce np.nanmedian's (the two middle ones' lerp)
                lo = torch.sort(t[~torch.isnan(t)]).values
                k = lo.numel()
                want_m = float(np.quantile(lo[(k - 1) // 2:k // 2 + 1].double().cpu().numpy(), 0.5))
                if m != want_m:
                    print(f"FAIL: n {n}: median {m!r}, np.nanmedian {want_m!r}")
                    bad = 1
            row("ctx.reduce(t) (propagate: nan)", med(lambda: ctx.reduce(t)))
            row("ctx.reduce(t, nan='omit')", med(lambda: ctx.reduce(t, nan="omit")))
            row("torch.nansum(t).item()", med(lambda: torch.nansum(t).item()))
            if cupy is not None:
                row("float(cupy.nansum(x))", med(lambda: float(cupy.nansum(x))))
            row("ctx.reduce(t, 'stats', nan='omit')", med(lambda: ctx.reduce(t, "stats", nan="omit")))
            row("torch.nanmean(t).item()", med(lambda: torch.nanmean(t).item()))
            row("ctx.median(t, nan='omit')", med(lambda: ctx.median(t, nan="omit")))
            row("torch.nanmedian(t).item()", med(lambda: torch.nanmedian(t).item()))
            if cupy is not None:
                row("float(cupy.nanmedian(x))", med(lambda: float(cupy.nanmedian(x))))
            del t, x
            torch.cuda.empty_cache()
    print(f"{'n':>10} {'call (float32, 1% NaN)':<40} {'ms':>9} {'GB/s':>8}")
    for n, what, ms, gbs in rows:
        print(f"{'2^%d' % (n.bit_length() - 1):>10} {what:<40} {ms:>9.3f} {gbs:>8.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([dict(n=n, call=w, ms=ms, gbs=g) for n, w, ms, g in rows], f, indent=1)
    return bad


# ---- the driver: one mpiexec per P, then the table
def launcher(mpiexec):
    try:
        v = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
        text = v.stdout + v.stderr
    except (OSError, subprocess.TimeoutExpired):
        text = ""
    flags = []
    if "Open MPI" in text or "OpenRTE" in text:
        flags += ["--oversubscribe", "--bind-to", "none"]
        if os.geteuid() == 0:
            flags.append("--allow-run-as-root")
    return flags


def fmt(v, spec="{:.1f}"):
    return "-" if v is None else spec.format(v)


def table(runs):
    lines = []
    for run in runs:
        P = run["P"]
        lines.append(f"P = {P} ({'one rank' if P == 1 else f'{P} ranks sharing the GPU'}) on {run['device']}; "
                     f"dreduce {run['dreduce']}, torch {run['torch']}, CuPy {run['cupy'] or '-'}, {run['mpi']}; "
                     f"combine: {run['combine']}")
        for row, note in run["notes"].items():
            lines.append(f"  {row}: {note}")
        head = ("n", "dreduce us", "C call us", "py us", "torch us", "cupy us", "nccl us", "x torch", "dreduce GB/s")
        lines.append("  " + " ".join(f"{h:>12}" for h in head))
        for r in run["rows"]:
            ratio = r["torch_us"] / r["dreduce_us"] if r.get("torch_us") and r.get("dreduce_us") else None
            gbs = r["n"] * 4 / (r["dreduce_us"] * 1e3) if r.get("dreduce_us") else None
            n = r["n"]
            nname = f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)
            cells = (nname, fmt(r.get("dreduce_us")), fmt(r.get("c_call_us")), fmt(r.get("overhead_us")),
                     fmt(r.get("torch_us")), fmt(r.get("cupy_us")), fmt(r.get("nccl_us")),
                     fmt(ratio, "{:.2f}"), fmt(gbs, "{:.1f}"))
            lines.append("  " + " ".join(f"{c:>12}" for c in cells))
        lines.append("")
    lines.append("us: median microseconds of one call, result in hand on rank 0; C call: inside libdreduce "
                 "(dreduce_timings total_ms); py: the Python layer above it; x torch: torch us / dreduce us "
                 "(>= 1: dreduce faster); GB/s: 4 n bytes / dreduce's time.")
    return "\n".join(lines)


def driver(a, argv):
    mpiexec = shutil.which(a.mpiexec) or a.mpiexec
    env = dict(os.environ)
    if importlib.util.find_spec("dreduce") is None:  # the package of this tree
        env["PYTHONPATH"] = os.path.join(REPO, "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                                            else "")
    runs, status = [], 0
    with tempfile.TemporaryDirectory(prefix="python-bench-") as tmp:
        for P in a.np:
            out = os.path.join(tmp, f"P{P}.json")
            cmd = [mpiexec] + launcher(mpiexec) + ["-np", str(P), sys.executable, os.path.abspath(__file__),
                                                   "--worker", "--out", out] + argv
            print("+ " + " ".join(cmd), flush=True)
            rc = subprocess.run(cmd, env=env).returncode
            if rc == 77:
                return 77
            if rc != 0:
                status = 1
            if os.path.exists(out):
                with open(out) as f:
                    runs.append(json.load(f))
    print()
    print(table(runs))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "argv": argv}, f, indent=1)
        print(f"\nJSON: {a.json}")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--np", default="1,2", help="rank counts, one run each (default 1,2)")
    ap.add_argument("--sizes", default="10-30", help="element counts in all (default 10-30: 2^10, 2^12 ... 2^30)")
    ap.add_argument("--gpu", type=int, default=0, help="the GPU every rank uses (default 0)")
    ap.add_argument("--rows", default=",".join(ROWS), help="rows to run (default all)")
    ap.add_argument("--budget", type=float, default=0.3, help="seconds of timed calls per row and size")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--min-reps", type=int, default=10)
    ap.add_argument("--max-reps", type=int, default=2000)
    ap.add_argument("--json", help="write every number here too")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--host", action="store_true",
                    help="host (NumPy) arrays on a CPU and a GPU context against NumPy, in this process")
    ap.add_argument("--nan", action="store_true",
                    help="the NaN policy on a GPU tensor with 1%% NaN against torch's and CuPy's nan* functions")
    ap.add_argument("--overhead", action="store_true",
                    help="only the Python layer's cost per call, on the CPU backend in this process (no GPU)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    argv = sys.argv[1:]
    a = ap.parse_args(argv)
    try:
        a.np = [int(x) for x in a.np.split(",")]
        a.sizes = parse_sizes(a.sizes)
        bad = [r for r in a.rows.split(",") if r not in ROWS]
        if bad or any(p < 1 for p in a.np) or not a.sizes or a.min_reps < 1 or a.max_reps < a.min_reps:
            raise ValueError(f"rows {bad}" if bad else "counts must be positive")
    except ValueError as e:
        ap.error(f"bad --np, --sizes, --rows or reps: {e}")
    if a.overhead or a.host or a.nan:
        if importlib.util.find_spec("dreduce") is None:
            sys.path.insert(0, os.path.join(REPO, "python"))
        if (a.host or a.nan) and "--sizes" not in " ".join(argv):
            a.sizes = [1 << 26, 1 << 28] if a.host else [1 << 24, 1 << 28]
        return host(a) if a.host else nan(a) if a.nan else overhead(a)
    if a.worker:
        return worker(a)
    keep = []
    skip_next = False
    for i, arg in enumerate(argv):  # what the workers get: everything but --json (the driver writes it)
        if skip_next:
            skip_next = False
            continue
        if arg == "--json":
            skip_next = True
            continue
        if arg.startswith("--json="):
            continue
        keep.append(arg)
    return driver(a, keep)


if __name__ == "__main__":
    sys.exit(main())
