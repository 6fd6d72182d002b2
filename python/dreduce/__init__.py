"""dreduce: distributed reductions over MPI ranks and their GPUs, from Python (a thin layer over libdreduce).

    from mpi4py import MPI
    import numpy as np, dreduce

    with dreduce.Context(MPI.COMM_WORLD) as ctx:        # collective
        x = np.random.default_rng(MPI.COMM_WORLD.rank).random(1 << 20, dtype=np.float32)
        total = ctx.reduce(x)                           # collective; the sum on rank 0, None elsewhere
        print(total, ctx.timings()["total_ms"])

Arrays: NumPy on the host; CuPy, torch, or anything with DLPack or __cuda_array_interface__ on the GPU. See
docs/python.md for types, ops, errors and the rules that keep every rank from hanging when one raises."""

from ._context import (LIBRARY_PATH, LIBRARY_VERSION, Context, Error, RuntimeError, Stats,  # noqa: A004
                       UsageError)
from ._lib import DTYPES, OPS

# The package is libdreduce's, at its version (CMake's project version, which the library reports); pip's metadata
# takes the same number from the CMakeLists.txt beside python/ (setup.py).
__version__ = LIBRARY_VERSION
DTYPE_NAMES = ("bool",) + tuple(DTYPES)
OP_NAMES = tuple(OPS)
ACC_MODES = ("wide", "native", "exact")
NAN_POLICIES = ("propagate", "omit")  # Context(nan=), reduce/histogram/quantile/median(nan=)

__all__ = ["Context", "Error", "UsageError", "RuntimeError", "Stats", "LIBRARY_PATH", "LIBRARY_VERSION",
           "DTYPE_NAMES", "OP_NAMES", "ACC_MODES", "NAN_POLICIES", "__version__"]
