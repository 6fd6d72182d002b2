# Is the page placement of a NumPy array (written by one thread) what slows a CPU context's reduce from Python?
# The same 2^28 float32 written by one thread and by 16; a CPU context reduces each (median of 5 after one).
# Run: PYTHONPATH=python DREDUCE_LIBRARY=build/libdreduce.so mpirun -np 1 python3 <this file>
import os, sys, time, statistics
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from mpi4py import MPI
import dreduce

n = 1 << 28
def med(fn, k=5):
    fn()
    t = []
    for _ in range(k):
        t0 = time.perf_counter(); fn(); t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e3

one = np.random.default_rng(1).standard_normal(n).astype(np.float32)   # one thread writes every page
par = np.empty(n, np.float32)                                           # pages first touched by 16 threads
chunks = np.array_split(np.arange(n), 64)
def fill(c):
    par[c[0]:c[-1] + 1] = one[c[0]:c[-1] + 1]
with ThreadPoolExecutor(16) as ex:
    list(ex.map(fill, chunks))
print("affinity", len(os.sched_getaffinity(0)), "cpus;", "numpy", np.__version__)
with dreduce.Context(MPI.COMM_WORLD, device="cpu") as ctx:
    for name, a in (("one-thread first touch", one), ("16-thread first touch", par)):
        ms = med(lambda: ctx.reduce(a))
        print(f"{name:24s} ctx.reduce {ms:8.3f} ms {a.nbytes / ms / 1e6:6.1f} GB/s   np.sum {med(lambda: np.sum(a), 3):8.3f} ms")
    print("timings", {k: v for k, v in ctx.timings().items() if not isinstance(v, (list, dict))})
