"""dreduce.Context: one libdreduce context (dreduce_create on an mpi4py communicator), its reductions, and the
errors. Every method that calls a collective of the library is collective: every rank of the communicator calls it,
in the same order. When this rank's own arguments are bad (an array that is not contiguous, a dtype or op the
library does not have, an acc that is not the context's), the rank still takes part in the call's collective as a
rank that failed (dreduce_reduce_fail; dreduce_dist_fail for histogram() and quantile()), so no other rank waits
for it, and then raises."""

import builtins
import ctypes
import math
import numbers
import re
import socket
import sys
import warnings
from dataclasses import dataclass
from typing import Optional, Union

from . import _lib
from ._arrays import _NP_CODES, Reject, count_of, describe, dtype_code, np

_ndarray = np.ndarray if np is not None else None

LIB, LIBRARY_PATH, LIBRARY_VERSION = _lib.library()
_CAPTURE = _lib.Capture()

_c = ctypes
_CTX = _c.c_void_p
_create_f = _lib.prototype(LIB, "dreduce_create_f", _c.c_int, [_c.c_int, _c.POINTER(_lib.Config), _c.POINTER(_CTX)])
_config_init = _lib.prototype(LIB, "dreduce_config_init", None, [_c.POINTER(_lib.Config)])
_prepare = _lib.prototype(LIB, "dreduce_prepare", _c.c_int, [_CTX, _c.c_int, _c.c_int, _c.c_uint64])
# dreduce_reduce(ctx, buf, count, dtype, op, out) and dreduce_reduce_at(ctx, buf, count, first, dtype, op, out): the
# hot path, without argtypes (ctypes passes arguments wrapped by the caller faster than it converts them): buf as
# c_void_p, count and first as c_uint64, dtype and op as Python ints (C int), out by reference.
_reduce_raw = _lib.prototype(LIB, "dreduce_reduce", _c.c_int, None)
_reduce_at_raw = _lib.prototype(LIB, "dreduce_reduce_at", _c.c_int, None)
_c_void_p, _c_uint64 = _c.c_void_p, _c.c_uint64
_addressof, _from_buffer = _c.addressof, _c.c_char.from_buffer
_reduce_fail = _lib.prototype(LIB, "dreduce_reduce_fail", _c.c_int,
                              [_CTX, _c.c_int, _c.c_int, _c.c_int, _c.POINTER(_lib.Result)])
_timings = _lib.prototype(LIB, "dreduce_timings", None, [_CTX, _c.POINTER(_lib.Timings)])
_set_nan = _lib.prototype(LIB, "dreduce_set_nan", _c.c_int, [_CTX, _c.c_int])
_host_rates = _lib.prototype(LIB, "dreduce_host_rates", _c.c_int,
                             [_CTX, _c.c_int, _c.c_int, _c.c_int, _c.POINTER(_lib.HostRates)])
_destroy = _lib.prototype(LIB, "dreduce_destroy", None, [_CTX])
_context_info = _lib.prototype(LIB, "dreduce_context_info", _c.c_int, [_CTX, _c.POINTER(_lib.ContextInfo)])
_gpu = _lib.prototype(LIB, "dreduce_gpu", _c.c_int, [_CTX])
_combine_path = _lib.prototype(LIB, "dreduce_combine_path", _c.c_char_p, [_CTX])
_combine_costs = _lib.prototype(LIB, "dreduce_combine_costs", _c.c_int,
                                [_CTX, _c.POINTER(_c.c_double), _c.POINTER(_c.c_double)])
_acc_select = _lib.prototype(LIB, "dreduce_acc_select", _c.c_int, [_c.c_int, _c.c_int, _c.c_int])
_PDOUBLE = _c.POINTER(_c.c_double)
_histogram = _lib.prototype(LIB, "dreduce_histogram", _c.c_int,
                            [_CTX, _c.c_void_p, _c.c_uint64, _c.c_int, _c.c_uint32, _PDOUBLE, _c.c_void_p,
                             _c.c_void_p, _c.POINTER(_lib.DistInfo)])
_quantile = _lib.prototype(LIB, "dreduce_quantile", _c.c_int,
                           [_CTX, _c.c_void_p, _c.c_uint64, _c.c_int, _c.c_size_t, _c.c_void_p, _c.c_void_p,
                            _c.POINTER(_lib.OrderStat), _c.POINTER(_lib.DistInfo)])
_dist_fail = _lib.prototype(LIB, "dreduce_dist_fail", _c.c_int,
                            [_CTX, _c.c_int, _c.c_int, _c.c_uint32, _PDOUBLE, _c.c_size_t, _c.c_void_p, _c.c_int,
                             _c.POINTER(_lib.DistInfo)])


def _acc_mode_valid(dtype, op, mode):
    """1 if (dtype, op) reduces in acc mode `mode` (libdreduce's own rule)."""
    return _acc_select(dtype, op, mode) != _lib.ACC_KIND_COUNT


def _op_valid(dtype, op):
    """1 if op is defined for dtype: every valid pair reduces in the wide mode."""
    return _acc_mode_valid(dtype, op, _lib.ACC_MODES["wide"])


# ---- errors
class Error(Exception):
    """A dreduce call failed. status: libdreduce's dr_status_t (2 usage, 3 runtime); call: what was called."""

    def __init__(self, message, status=None, call=None):
        super().__init__(message)
        self.status = status
        self.call = call


class UsageError(Error, ValueError):
    """Bad arguments or configuration (DR_ERR_USAGE), on this rank or, for a collective, on another (then the
    message says which rank); also what the Python layer refuses itself (an array that is not contiguous, a dtype
    libdreduce does not have, None)."""


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001: dreduce.RuntimeError, as the library names it
    """CUDA, MPI, I/O or allocation failure (DR_ERR_RUNTIME)."""


def _error_class(status):
    return UsageError if status == _lib.ERR_USAGE else RuntimeError if status == _lib.ERR_RUNTIME else Error


def _raise(status, call, fallback):
    text = _lib.messages(_CAPTURE.take())
    if not text:
        text = f"{call}: {fallback}" + ("" if _CAPTURE.enabled else " (libdreduce's message, if any, is on stderr)")
    name = {_lib.ERR_USAGE: "DR_ERR_USAGE", _lib.ERR_RUNTIME: "DR_ERR_RUNTIME"}.get(status, f"status {status}")
    raise _error_class(status)(f"{text} [{call}: {name}]", status, call)


# ---- results
@dataclass(frozen=True)
class Stats:
    """op="stats": count, sum (an exact int for integer arrays; else a float, exact-then-rounded in acc="exact"),
    mean, var (population: m2 / count), var_sample (m2 / (count - 1)), min and max (by min/max's rules: NaN wins,
    -0.0 below +0.0; None for an empty array), nan_count. With nan="omit" every field is of the elements that are
    not NaN (np.nansum, np.nanmean, np.nanvar, np.nanmin, np.nanmax): count excludes them, nan_count says how many
    were left out (0 with nan="propagate"), and an array of NaN only has count 0, sum 0.0, mean, var, min and max
    NaN."""
    count: int
    sum: Union[int, float]
    mean: float
    var: float
    var_sample: float
    min: Union[int, float, None]
    max: Union[int, float, None]
    nan_count: int = 0

    @property
    def std(self):
        return math.sqrt(self.var) if self.var == self.var else self.var


def _scalar(kind, s):
    if kind in (_lib.ACC_I64, _lib.ACC_ARG_I64, _lib.ACC_STATS_I64):
        return s.i64
    if kind in (_lib.ACC_U64, _lib.ACC_ARG_U64, _lib.ACC_STATS_U64):
        return s.u64
    return s.f64


def _stats(res):
    st = res.stats
    if st.sum_is_int:
        total = st.sum_int.lo | (st.sum_int.hi << 64)
        if res.kind == _lib.ACC_STATS_I64 and total >> 127:
            total -= 1 << 128
    else:
        total = st.sum
    empty = st.count == 0
    if empty and res.nan_count:  # nan="omit", NaN only: np.nanmin/np.nanmax are NaN (with a warning)
        lo = hi = math.nan
    else:
        lo = None if empty else _scalar(st.kind, st.min)
        hi = None if empty else _scalar(st.kind, st.max)
    return Stats(count=st.count, sum=total, mean=st.mean, var=st.var_pop, var_sample=st.var_sample, min=lo, max=hi,
                 nan_count=res.nan_count)


def _arg(res):
    a = res.value.arg
    if a.index == _lib.ARG_NONE:
        return (None, None)
    return (_scalar(res.kind, a.value), a.index)


_VALUE_OFFSET = _lib.Result.value.offset


class Context:
    """A libdreduce context on an mpi4py communicator (collective: every rank creates it, with the same acc,
    allreduce, combine and ranks_per_node).

    comm: an mpi4py communicator (default MPI.COMM_WORLD; the library works on its own duplicate), or a Fortran
    communicator handle (int). acc: "wide" (default; float sums and products in float64), "native" (in the input
    type; float32 for 16-bit floats) or "exact" (float sums without rounding, rounded once to float64).
    allreduce: every rank gets the result (default: rank 0 only). nan: what a NaN element of a float array means,
    the context's default for every call (each call may give its own nan=): "propagate" (default; a value, as
    NumPy's plain functions take it) or "omit" (left out, as NumPy's nan* functions: np.nansum, np.nanmin,
    np.nanargmax, np.nanmean, np.nanvar, np.nanquantile, ...). The other keywords are dreduce_config_t's fields:
    device ("auto", "gpu", "cpu"), gpu (CUDA ordinal; -1: the node-local rank's), share_gpus, bind ("workers":
    the CPU backend's threads run on the rank's share of the node's cores, the caller's threads untouched; "auto":
    the whole process is bound to that share; "none"), kernel, block, combine ("hier", "flat"), staging ("auto",
    "device", "host", "mapped"), ranks_per_node, cpu_threads, timeout (seconds; a rank waiting longer in a collective
    ends the job), chunk_bytes, host_path (how a GPU context reduces a host array, NumPy's or a CPU tensor's:
    "auto", the fastest path measured once for the memory's kind, pinned or pageable, and the row; "cpu", the
    rank's CPU threads in place; "gpu", chunked copies to the GPU; "split", both at once; "gpu" and "split" need a
    GPU). None keeps the library's default.

    Use it as a context manager, or call close() (collective) when done."""

    def __init__(self, comm=None, *, acc="wide", allreduce=False, nan="propagate", device=None, gpu=None,
                 share_gpus=None, bind=None, kernel=None, block=None, combine=None, staging=None,
                 ranks_per_node=None, cpu_threads=None, timeout=None, chunk_bytes=None, host_path=None):
        self._ctx = None
        from mpi4py import MPI
        if comm is None:
            comm = MPI.COMM_WORLD
        elif isinstance(comm, int):
            comm = MPI.Comm.f2py(comm)
        handle = comm.py2f()
        _check_same_mpi()
        if comm != MPI.COMM_NULL:
            self.rank, self.size = comm.Get_rank(), comm.Get_size()
        else:
            self.rank, self.size = 0, 1
        cfg = _lib.Config()
        _config_init(cfg)
        why = []

        def enum(field, value, table):
            if value is None:
                return
            if isinstance(value, str) and value in table:
                setattr(cfg, field, table[value])
            else:
                why.append(f"{field}={value!r}: allowed: {', '.join(map(repr, table))}")

        def number(field, value, kind):
            if value is None:
                return
            if kind is bool:
                if isinstance(value, (str, bytes)) or value not in (0, 1):
                    why.append(f"{field}={value!r}: must be True or False")
                else:
                    setattr(cfg, field, int(bool(value)))
                return
            if kind is float:
                if not isinstance(value, numbers.Real) or isinstance(value, bool):
                    why.append(f"{field}={value!r}: must be a number")
                else:
                    setattr(cfg, field, float(value))
                return
            lo, hi = (0, (1 << 64) - 1) if field == "chunk_bytes" else (-(1 << 31), (1 << 31) - 1)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or not lo <= value <= hi:
                why.append(f"{field}={value!r}: must be a whole number in {lo}..{hi}")
            else:
                setattr(cfg, field, int(value))

        enum("acc_mode", acc, _lib.ACC_MODES)
        enum("nan", nan, _lib.NAN_POLICIES)
        enum("device", device, _lib.DEVICES)
        enum("bind", bind, _lib.BINDS)
        enum("kernel", kernel, _lib.KERNELS)
        enum("combine", combine, _lib.COMBINES)
        enum("staging", staging, _lib.STAGINGS)
        enum("host_path", host_path, _lib.HOST_PATHS)
        number("allreduce", allreduce, bool)
        number("share_gpus", share_gpus, bool)
        for field, value in (("gpu", gpu), ("block", block), ("ranks_per_node", ranks_per_node),
                             ("cpu_threads", cpu_threads), ("chunk_bytes", chunk_bytes)):
            number(field, value, int)
        number("timeout", timeout, float)
        out = _CTX()
        _CAPTURE.enter()
        try:
            if why:  # still take part, with a NULL cfg: every rank's dreduce_create then fails, none waits
                _CAPTURE.mute(r"dreduce_create: cfg is NULL")
                st = _create_f(handle, None, out)
            else:
                st = _create_f(handle, cfg, out)
        finally:
            _CAPTURE.mute(None)
            _CAPTURE.leave()
        if why:
            _CAPTURE.take()
            self._say("dreduce.Context: " + "; ".join(why))
            raise UsageError("dreduce.Context: " + "; ".join(why), _lib.ERR_USAGE, "dreduce_create")
        if st != _lib.OK:
            _raise(st, "dreduce_create", "failed (on this rank or another: the rank with the problem said why)")
        _CAPTURE.take()  # warnings were shown on stderr already
        self._ctx = out
        self.acc = _lib_name(_lib.ACC_MODES, cfg.acc_mode)
        self.allreduce = bool(cfg.allreduce)
        self.timeout = cfg.timeout
        self._mode = cfg.acc_mode
        self._nan = cfg.nan      # the context's NaN policy (dr_nan_policy_t), for calls without nan=
        self._lib_nan = cfg.nan  # the policy the library's context has now (dreduce_set_nan when a call differs)
        self._last_nan = cfg.nan  # the policy of this rank's last reduce() (reduce_info)
        self._res = _lib.Result()
        self._valid_view = _c.c_int.from_buffer(self._res, _lib.Result.valid.offset)
        self._no_value_view = _c.c_int.from_buffer(self._res, _lib.Result.no_value.offset)
        self._kind_view = _c.c_int.from_buffer(self._res, _lib.Result.kind.offset)
        self._views = {
            _lib.ACC_I32: _c.c_int32.from_buffer(self._res, _VALUE_OFFSET),
            _lib.ACC_U32: _c.c_uint32.from_buffer(self._res, _VALUE_OFFSET),
            _lib.ACC_I64: _c.c_int64.from_buffer(self._res, _VALUE_OFFSET),
            _lib.ACC_U64: _c.c_uint64.from_buffer(self._res, _VALUE_OFFSET),
            _lib.ACC_F32: _c.c_float.from_buffer(self._res, _VALUE_OFFSET),
            _lib.ACC_F64: _c.c_double.from_buffer(self._res, _VALUE_OFFSET),
        }
        self._res_ref = _c.byref(self._res)
        self._buf_arg, self._count_arg = _c_void_p(), _c_uint64()
        self._shapes = {}  # dtype code * 16 + op code -> True (valid) or why not
        self._dist = None  # the last histogram()/quantile(): (op, DistInfo, OrderStat array or None, q or None,
        #                    the call's NaN policy)

    # ---- properties
    @property
    def closed(self):
        return self._ctx is None

    @property
    def nan(self):
        """The context's NaN policy ("propagate" or "omit"): that of every call without its own nan=."""
        return _lib_name(_lib.NAN_POLICIES, self._nan)

    @property
    def gpu(self) -> Optional[int]:
        """The CUDA ordinal this rank's context uses, or None on the CPU backend."""
        g = _gpu(self._live("gpu"))
        return None if g < 0 else g

    @property
    def device(self):
        """"gpu" or "cpu": where this rank reduces."""
        return "cpu" if self.gpu is None else "gpu"

    def info(self):
        """Where this rank sits and what its context drives (dreduce_context_info; local, no communication), as a
        dict: rank, nranks, node, nnodes, local_rank, local_size, host, node_name, gpu (-1 on the CPU backend),
        device_name ("cpu" there), block, threads (the CPU backend's worker threads, and those the host-side work
        of a GPU context uses), share (the rank's share of the node's CPUs, as a list such as "0-15"), affinity
        (the calling thread's CPU affinity after binding), widened (the launcher's narrower binding widened to the
        share), bound_cpu, bound_mem, numa_node, gpu_cpuset, pci_bus_id, note (why something degraded)."""
        i = _lib.ContextInfo()
        st = _context_info(self._live("info"), i)
        if st != _lib.OK:
            _raise(st, "dreduce_context_info", "the context's layout could not be read")
        d = {}
        for name, _ in _lib.ContextInfo._fields_:
            v = getattr(i, name)
            d[name] = v.decode(errors="replace") if isinstance(v, bytes) else v
        for name in ("emulated", "widened", "bound_cpu", "bound_mem", "dry_run", "affinity_outside_gpu"):
            d[name] = bool(d[name])
        return d

    @property
    def combine_path(self):
        """How partials travel between ranks (dreduce_combine_path)."""
        return _combine_path(self._live("combine_path")).decode()

    def combine_costs(self):
        """staging="auto"'s measurement at creation: (device_us, mapped_us), or None where nothing was measured."""
        d, m = _c.c_double(), _c.c_double()
        return (d.value, m.value) if _combine_costs(self._live("combine_costs"), d, m) else None

    def _say(self, why):
        """The line libdreduce would print for a failure of this rank's own (the other ranks' errors refer to it):
        a collective the rank joined as failed, or whose arguments it refused."""
        where = f"rank {self.rank} ({_host()}): " if self.size > 1 else ""
        try:
            sys.stderr.write(f"dreduce: error: {where}{why}\n")
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass

    def _live(self, what):
        if self._ctx is None:
            raise UsageError(f"Context.{what}: the context is closed", _lib.ERR_USAGE, what)
        return self._ctx

    # ---- reductions
    def reduce(self, array, op="sum", *, acc=None, allreduce=None, first=None, dtype=None, nan=None):
        """Reduce this rank's array with the other ranks' (collective). Returns the result where it arrives (rank
        0, or every rank with allreduce) and None elsewhere: a Python int (integer accumulators, exact: sums and
        products wrap modulo 2^64) or float; for op="stats" a Stats; for "argmin"/"argmax" (value, index) with
        the index in the whole array (ranks' parts in rank order; (None, None) for an empty array). min, max and
        the bitwise ops of an array with no element have no value (NumPy raises for min and max): None, as stats'
        min and max are then; sum and prod of it are 0 and 1, as NumPy's.

        array: NumPy (host), CuPy, torch (GPU or CPU), or anything with DLPack, __cuda_array_interface__, the NumPy
        array interface or the buffer protocol; C-contiguous, any shape (flattened). op: "sum", "min", "max",
        "prod", "band", "bor", "bxor" (integers), "stats", "argmin", "argmax". acc, allreduce: None for the
        context's; another value is refused (UsageError), as the context's configuration is agreed by all ranks at
        creation. first: the global index of this rank's first element (argmin/argmax; on several ranks give it, or
        call prepare() first). dtype: reinterpret the elements as this type (same size: bfloat16 bits in a uint16
        array). nan: "propagate" or "omit" for this call (None: the context's, Context(nan=)); every rank of the
        call must give the same. With "omit" the result is NumPy's nan* function's of the whole array (np.nansum,
        np.nanprod, np.nanmin, np.nanmax, np.nanargmin, np.nanargmax; stats as np.nanmean, np.nanvar): where every
        element is NaN, min and max are NaN with a RuntimeWarning, and argmin/argmax raise UsageError (a
        ValueError), as NumPy does. reduce_info() says how many NaN were left out."""
        ctx = self._ctx
        if ctx is None:
            raise UsageError("Context.reduce: the context is closed (no collective can be joined)", _lib.ERR_USAGE,
                             "dreduce_reduce")
        # NumPy arrays of a native dtype: inline (this path is most of the per-call cost at small n).
        code = _NP_CODES.get(array.dtype) if type(array) is _ndarray and dtype is None else None
        if code is not None and array.flags.c_contiguous:
            try:
                ptr = _addressof(_from_buffer(array))  # writable arrays: the cheapest way to the address
            except (TypeError, ValueError):  # read-only or empty
                ptr = array.__array_interface__["data"][0]
            count = array.size
            keep = None
        else:
            try:
                ptr, count, code, keep = describe(array, dtype)
            except Reject as e:
                return self._fail(e.code, op, str(e))
        opc = _lib.OPS.get(op) if type(op) is str else None
        if opc is None:
            return self._fail(code, op, f"op {op!r} is not one of {', '.join(_lib.OPS)}")
        if nan is None:
            policy = self._nan
        else:
            policy = _nan_code(nan)
            if policy is None:
                return self._fail(code, op, _nan_why(nan))
        if policy != self._lib_nan:
            why = self._set_policy(policy)
            if why is not None:
                return self._fail(code, op, why)
        self._last_nan = policy
        if self._shapes.get(code * 16 + opc) is not True or acc is not None or allreduce is not None or \
                first is not None:
            why = self._check_call(code, opc, acc, allreduce, first, count)
            if why is not None:
                return self._fail(code, op, why)
        cap = _CAPTURE
        fp = cap.fp  # cap.enter(), inlined: C's stderr to our stream for the call
        if fp is not None:
            cur = cap.var.value
            if cur != fp:
                cap.saved = cur
                cap.var.value = fp
        try:
            # No argtypes on these two (ctypes converts pre-wrapped arguments faster): ptr and count wrapped here,
            # dtype and op are C ints.
            buf, n = self._buf_arg, self._count_arg  # reused (a context belongs to one thread at a time)
            buf.value = ptr
            n.value = count
            if first is None:
                st = _reduce_raw(ctx, buf, n, code, opc, self._res_ref)
            else:
                st = _reduce_at_raw(ctx, buf, n, _c_uint64(first), code, opc, self._res_ref)
        finally:
            if fp is not None:
                cap.var.value = cap.saved
        del keep
        if st:
            _raise(st, "dreduce_reduce", f"count {count}, dtype {_lib.DTYPE_NAMES[code]}, op {op}")
        if cap.pending:
            cap.take()  # a warning, shown on stderr already
        if not self._valid_view.value:
            return None
        kind = self._kind_view.value
        view = self._views.get(kind)
        if policy and self._res.nan_count and self._res.nan_count == self._res.count:
            return self._all_nan(kind, view, opc)
        if view is not None:
            return None if self._no_value_view.value else view.value
        if kind >= _lib.ACC_STATS_I64:
            return _stats(self._res)
        return _arg(self._res)

    def _all_nan(self, kind, view, opc):
        """nan="omit", an array of NaN only, where the result arrived: NumPy's nan* answer (sum 0, prod 1, min and
        max NaN, stats with count 0), warning or raising as NumPy does."""
        if opc in (_lib.OPS["argmin"], _lib.OPS["argmax"]):
            msg = (f"Context.reduce: op {_lib.OP_NAMES[opc]} with nan='omit': All-NaN slice encountered (every one of "
                   f"the {self._res.count} elements is NaN; np.nan{_lib.OP_NAMES[opc]} raises too)")
            raise UsageError(msg, _lib.ERR_USAGE, "dreduce_reduce")
        if opc in (_lib.OPS["min"], _lib.OPS["max"], _lib.OPS["stats"]):
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        if view is not None:
            return None if self._no_value_view.value else view.value
        return _stats(self._res)

    def _set_policy(self, policy):
        """dreduce_set_nan (local: no communication): None, or why not."""
        _CAPTURE.enter()
        try:
            st = _set_nan(self._ctx, policy)
        finally:
            _CAPTURE.leave()
        text = _lib.messages(_CAPTURE.take())
        if st != _lib.OK:
            return f"dreduce_set_nan({policy}) failed" + (f": {text}" if text else "")
        self._lib_nan = policy
        return None

    def reduce_info(self):
        """What this rank's last reduce() found, as a dict: valid (True where the result arrived), count (elements
        of the whole array) and nan_count (of them NaN, left out under nan="omit"; 0 under "propagate"), both
        where valid (None elsewhere); local_nan_count (this rank's part's NaN left out, as timings()["nan_count"]);
        nan (the call's policy)."""
        ctx = self._live("reduce_info")
        t = _lib.Timings()
        _timings(ctx, t)
        res = self._res
        valid = bool(res.valid)
        return {"valid": valid, "count": res.count if valid else None,
                "nan_count": res.nan_count if valid else None,
                "local_nan_count": t.nan_count, "nan": _lib_name(_lib.NAN_POLICIES, self._last_nan)}

    def _check_call(self, code, opc, acc, allreduce, first, count):
        """Why this call cannot go to the library as it is, or None."""
        key = code * 16 + opc
        if key not in self._shapes:
            why = True
            name, opname = _lib.DTYPE_NAMES[code], _lib.OP_NAMES[opc]
            if not _op_valid(code, opc):
                why = f"op {opname} is not defined for {name} (bitwise ops need an integer type)"
            elif not _acc_mode_valid(code, opc, self._mode):
                why = f"op {opname} of {name} has no acc={self.acc!r} mode"
            self._shapes[key] = why
        why = self._shapes[key]
        if why is not True:
            return why
        if acc is not None and acc != self.acc:
            return (f"acc={acc!r} differs from the context's acc={self.acc!r}: acc is agreed by all ranks when the "
                    f"context is made; use a Context(acc={acc!r}) for it")
        if allreduce is not None and bool(allreduce) != self.allreduce:
            return (f"allreduce={allreduce!r} differs from the context's allreduce={self.allreduce}: it is agreed "
                    f"by all ranks when the context is made; use a Context(allreduce={bool(allreduce)}) for it")
        if first is not None:
            try:
                first = count_of(first)
            except Reject as e:
                return f"first: {e}"
            if first + count >= _lib.ARG_NONE:
                return f"first {first} + count {count} must stay below 2^64-1"
        return None

    def _fail(self, code, op, why):
        """Take part in the call's collective as a rank that failed (no rank waits for us), then raise."""
        opc = _lib.OPS.get(op) if type(op) is str else None
        pairs = [(code, opc), (_lib.DTYPES["int64"], opc), (_lib.DTYPES["int64"], _lib.OPS["sum"])]
        for d, o in pairs:
            if d is not None and o is not None and _op_valid(d, o) and _acc_mode_valid(d, o, self._mode):
                break
        _CAPTURE.enter()
        try:
            _reduce_fail(self._ctx, d, o, _lib.ERR_USAGE, self._res_ref)
        finally:
            _CAPTURE.leave()
        self._refused("reduce", "dreduce_reduce", why)

    def _refused(self, method, call, why):
        """After this rank joined the call as failed: its line on stderr (what the other ranks' errors refer to),
        then UsageError."""
        _CAPTURE.take()
        self._say(f"Context.{method}: {why}")
        raise UsageError(f"Context.{method}: {why}", _lib.ERR_USAGE, call)

    # ---- distributions (include/dreduce.h, "Distributions")
    def histogram(self, array, bins=10, range=None, *, dtype=None, nan=None):  # noqa: A002: np.histogram's name
        """np.histogram(whole, bins, range) of the whole array (the ranks' parts in rank order; collective):
        (counts, edges) where the result arrives (rank 0, or every rank with allreduce) and None elsewhere.
        counts: int64 array of bins counts, as NumPy's; edges: bins + 1 edges in NumPy's bin type (float16 for
        float16 data, float32 for float32 and bfloat16, float64 for integers and bool), equal to NumPy 2's.

        bins: a whole number of equal-width bins, 1 .. 2^24 (bin edges and NumPy's estimators such as "auto" are
        not supported). range: None (the array's min and max: refused for an array holding NaN or inf, as NumPy
        refuses it) or (lo, hi), finite, lo <= hi (lo == hi widens to lo - 0.5, hi + 0.5, as NumPy); elements
        outside it and NaN are in no bin (dist_info() counts them). array and dtype= as reduce(); bool counts as
        uint8, bfloat16 as its float32 values. nan: "propagate" or "omit" (None: the context's): NaN are in no bin
        either way; with "omit" the automatic range is the min and max of the elements that are not NaN, as
        np.histogram(a[~np.isnan(a)]) takes it, where "propagate" refuses an array holding NaN."""
        ctx = self._live_call("histogram", "dreduce_histogram")
        why, code, keep = None, None, None
        try:
            ptr, count, code, keep = describe(array, dtype)
        except Reject as e:
            why, code = str(e), e.code
        nbins, why_bins = _bins_arg(bins)
        lohi, why_range = _range_arg(range)
        why = why or why_bins or why_range or self._dist_policy(nan)
        rng = (_c.c_double * 2)(*lohi) if lohi is not None else None
        info = _lib.DistInfo()
        self._dist = ("histogram", info, None, None, self._lib_nan)
        if why is not None:
            self._dist_refuse("histogram", _lib.DIST_HISTOGRAM, code, nbins, rng, 0, None, info, why)
        size = nbins if 1 <= nbins <= _lib.MAX_BINS else 1  # the library refuses other counts before writing
        counts = np.empty(size, np.uint64)
        edges = np.empty(size + 1, np.float64)
        _CAPTURE.enter()
        try:
            st = _histogram(ctx, ptr, count, code, nbins, rng, counts.ctypes.data, edges.ctypes.data, info)
        finally:
            _CAPTURE.leave()
        del keep
        if st:
            _raise(st, "dreduce_histogram", f"count {count}, dtype {_lib.DTYPE_NAMES[code]}, bins {nbins}, range "
                   f"{'auto' if lohi is None else lohi}: failed (on this rank or another: the rank with the "
                   "problem said why)")
        _CAPTURE.take()  # warnings were shown on stderr already
        if not info.valid:
            return None
        return counts.astype(np.int64), edges.astype(_EDGE_TYPES.get(code, np.float64))

    def quantile(self, array, q, *, dtype=None, nan=None):
        """np.quantile(whole.astype(np.float64), q) (method "linear") of the whole array (the ranks' parts in rank
        order; collective), bit for bit, on every rank: a float for a scalar q, else a float64 NumPy array of q's
        shape. q: each in [0, 1], 1 .. 64 of them (they share the passes over the data). An array holding NaN
        gives NaN (as NumPy); an array with no element has no quantile (UsageError on every rank). Where -0.0 and
        +0.0 are both in the data, which of the two an order statistic is is unspecified. array and dtype= as
        reduce(). nan: "propagate" or "omit" (None: the context's); with "omit" it is np.nanquantile: the order
        statistics of the elements that are not NaN (an array of NaN only: NaN, with a RuntimeWarning, as
        NumPy)."""
        return self._quantile(array, q, dtype, nan)

    def _quantile(self, array, q, dtype, nan):
        ctx = self._live_call("quantile", "dreduce_quantile")
        why, code, keep = None, None, None
        try:
            ptr, count, code, keep = describe(array, dtype)
        except Reject as e:
            why, code = str(e), e.code
        qs, shape, why_q = _q_arg(q)
        why = why or why_q or self._dist_policy(nan)
        nq = 0 if qs is None else qs.size
        qbuf = None if qs is None else qs.ctypes.data
        info = _lib.DistInfo()
        order = (_lib.OrderStat * max(1, nq))()
        self._dist = ("quantile", info, order, qs, self._lib_nan)
        if why is not None:
            self._dist_refuse("quantile", _lib.DIST_QUANTILE, code, 0, None, nq, qbuf, info, why)
        values = np.empty(max(1, nq), np.float64)
        _CAPTURE.enter()
        try:
            st = _quantile(ctx, ptr, count, code, nq, qbuf, values.ctypes.data, order, info)
        finally:
            _CAPTURE.leave()
        del keep
        if st:
            _raise(st, "dreduce_quantile", f"count {count}, dtype {_lib.DTYPE_NAMES[code]}, {nq} q: failed (on this "
                   "rank or another: the rank with the problem said why)")
        _CAPTURE.take()
        if self._lib_nan and info.valid and info.nan_count and info.nan_count == info.count:
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        if shape is None:
            return float(values[0])
        return values[:nq].reshape(shape)

    def median(self, array, *, dtype=None, nan=None):
        """quantile(array, 0.5) (collective; a float on every rank). Not always np.median's last bit: NumPy's
        median is the mean of the two middle elements, (a + b) / 2, the quantile a + (b - a) / 2. nan="omit":
        np.nanmedian's elements (the order statistics of those that are not NaN)."""
        return self._quantile(array, 0.5, dtype, nan)

    def dist_info(self):
        """What this rank's last histogram() or quantile() found, as a dict (None before the first): op, valid
        (1 where the result arrived), count (elements in the whole array), nan_count, below and above (histogram:
        not NaN, outside the range), lo and hi (the first and last edge), passes (the automatic range's, then one
        per histogram or radix digit, each a read of this rank's part; with the quantile pilot its two first), pass_local_ms and pass_combine_ms (per pass),
        local_ms, combine_ms, range_ms (NaN without the automatic range), total_ms; for quantile() also order: per
        q, the order statistics it interpolates between (lower, upper: values as int or float; lower_rank,
        upper_rank: 0-based ranks in the sorted whole array; gamma: the weight). count .. hi are those of the
        result, on ranks where it is valid. nan_count counts the whole array's NaN under either policy (with
        nan="omit" they are left out: the quantile's order statistics are of count - nan_count elements);
        local_nan_count: this rank's part's NaN; nan: the call's policy; pilot (quantile: 0 none, 1 the pilot's
        brackets held every order statistic, 2 one missed and the select read the part again; README, "Results you
        can trust")."""
        if self._dist is None:
            return None
        op, info, order, qs, policy = self._dist
        n = max(0, min(info.passes, _lib.DIST_MAX_PASSES))
        d = {"op": op}
        for name, _ in _lib.DistInfo._fields_:
            value = getattr(info, name)
            d[name] = [value[i] for i in builtins.range(n)] if name.startswith("pass_") else value
        d["valid"] = bool(info.valid)
        d["nan"] = _lib_name(_lib.NAN_POLICIES, policy)
        if order is not None and qs is not None and info.valid:
            d["order"] = [{"q": float(qs[i]), "lower": _scalar(o.kind, o.lower), "upper": _scalar(o.kind, o.upper),
                           "lower_rank": o.lower_rank, "upper_rank": o.upper_rank, "gamma": o.gamma}
                          for i, o in zip(builtins.range(qs.size), order)]
        return d

    def _live_call(self, method, call):
        if self._ctx is None:
            raise UsageError(f"Context.{method}: the context is closed (no collective can be joined)",
                             _lib.ERR_USAGE, call)
        return self._ctx

    def _dist_policy(self, nan):
        """Put the call's NaN policy in place (nan=None: the context's): None, or why not (the call is then
        joined as failed). histogram(), quantile() and prepare()."""
        if nan is None:
            policy = self._nan
        else:
            policy = _nan_code(nan)
            if policy is None:
                return _nan_why(nan)
        return self._set_policy(policy) if policy != self._lib_nan else None

    def _dist_refuse(self, method, op, code, bins, rng, nq, qbuf, info, why):
        """Join the histogram's or quantile's collective as a rank that failed (dreduce_dist_fail), then raise."""
        _CAPTURE.enter()
        try:
            _dist_fail(self._ctx, op, _lib.DTYPES["int32"] if code is None else code, bins, rng, nq, qbuf,
                       _lib.ERR_USAGE, info)
        finally:
            _CAPTURE.leave()
        self._refused(method, "dreduce_histogram" if op == _lib.DIST_HISTOGRAM else "dreduce_quantile", why)

    def prepare(self, array_or_count, op="sum", dtype=None, *, nan=None):
        """Plan reductions of this shape (collective): problems show up here on every rank alike, the first
        reduce() of the shape allocates nothing, and for argmin/argmax each rank learns where its part starts in
        the whole array (its count; the parts in rank order), which reduce() then uses while this rank's count
        stays the same. array_or_count: an array (its count and dtype), or a count with dtype=. nan: the NaN policy
        of the reductions planned (None: the context's), as reduce()'s."""
        ctx = self._live("prepare")
        why, code, count = None, None, 0
        try:
            if isinstance(array_or_count, int) or type(array_or_count).__module__ == "numpy" and \
                    not hasattr(array_or_count, "shape"):
                count = count_of(array_or_count)
                if dtype is None:
                    raise Reject("prepare(count) needs dtype=")
                code = dtype_code(dtype)
            else:
                _, count, code, _ = describe(array_or_count, dtype)
        except Reject as e:
            why = str(e)
        opc = _lib.OPS.get(op) if type(op) is str else None
        if why is None and opc is None:
            why = f"op {op!r} is not one of {', '.join(_lib.OPS)}"
        if why is None:
            why = self._dist_policy(nan)
        _CAPTURE.enter()
        try:
            if why is not None:  # a dtype no library has: every rank's dreduce_prepare fails, none waits
                _CAPTURE.mute(f"dtype {_lib.DTYPE_COUNT} is not a dr_dtype_t")
                _prepare(ctx, _lib.DTYPE_COUNT, 0, 0)
            else:
                st = _prepare(ctx, code, opc, count)
        finally:
            _CAPTURE.mute(None)
            _CAPTURE.leave()
        if why is not None:
            _CAPTURE.take()
            self._say(f"Context.prepare: {why}")
            raise UsageError(f"Context.prepare: {why}", _lib.ERR_USAGE, "dreduce_prepare")
        if st:
            _raise(st, "dreduce_prepare", f"count {count}, dtype {_lib.DTYPE_NAMES[code]}, op {op}")
        _CAPTURE.take()

    def timings(self):
        """Times of this rank's last reduce(), histogram(), quantile() or median(), in milliseconds (NaN where this
        rank had no part in a level): local (its own reduction), node / global / bcast (the combine's levels, waiting
        for slower ranks included), total (the whole C call), pass_ms (each GPU kernel pass, where timed; a histogram's
        or quantile's counting passes, each one's local time: dist_info() has every pass and its combine), and chunks,
        bytes, depth, nan_count (the
        NaN of this rank's part left out under nan="omit"; 0 otherwise). A host array on a GPU context also has
        load_ms (the whole local level), host_path ("cpu", "gpu" or "split": the path it took; None for other
        arrays), host_pinned, host_cpu_elems (elements the CPU threads reduced), host_cpu_ms and host_gpu_ms (each
        side's time) and measure_ms (the time this call spent measuring the paths: see host_rates)."""
        t = _lib.Timings()
        _timings(self._live("timings"), t)
        d = {name: getattr(t, name) for name, _ in _lib.Timings._fields_ if name not in ("pass_ms", "wait_ms")}
        d["pass_ms"] = [t.pass_ms[i] for i in range(max(0, min(t.passes, _lib.MAX_PASSES)))]
        d["host_path"] = _lib_name(_lib.HOST_PATHS, t.host_path) if t.host_path >= 0 else None
        d["host_pinned"] = None if t.host_pinned < 0 else bool(t.host_pinned)
        return d

    def host_rates(self, dtype="float32", op="sum", pinned=False):
        """What this GPU context measured of its host paths for host memory of one kind (pinned: page-locked, as
        a pinned torch CPU tensor; else pageable, as a NumPy array) and row (dtype, op, under the context's acc and
        NaN policy): a dict with cpu_gbs, gpu_gbs, split_gbs, split_cpu_fraction, choice (host_path="auto"'s),
        probe_bytes and measure_ms; None where nothing was measured yet (or on the CPU backend)."""
        if dtype not in _lib.DTYPES or op not in _lib.OPS:
            raise UsageError(f"Context.host_rates: dtype={dtype!r}, op={op!r}: allowed dtypes "
                             f"{', '.join(_lib.DTYPES)}; ops {', '.join(_lib.OPS)}", _lib.ERR_USAGE, "host_rates")
        q = _lib.HostRates()
        st = _host_rates(self._live("host_rates"), int(bool(pinned)), _lib.DTYPES[dtype], _lib.OPS[op], q)
        if st != _lib.OK:
            _raise(st, "dreduce_host_rates", "failed")
        if not q.measured:
            return None
        d = {name: getattr(q, name) for name, _ in _lib.HostRates._fields_ if name != "measured"}
        d["choice"] = _lib_name(_lib.HOST_PATHS, q.choice)
        return d

    # ---- lifetime
    def close(self):
        """Release the context (collective: every rank closes it). Closing twice does nothing."""
        ctx, self._ctx = self._ctx, None
        if ctx is not None:
            _destroy(ctx)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self._ctx is None:
            return "<dreduce.Context closed>"
        return (f"<dreduce.Context {self.device}{'' if self.gpu is None else ' ' + str(self.gpu)} acc={self.acc!r} "
                f"allreduce={self.allreduce}>")


# ---- the arguments of histogram() and quantile(): (value for the library, why not or None)
_EDGE_TYPES = {}
if np is not None:
    _EDGE_TYPES = {_lib.DTYPES["float16"]: np.float16, _lib.DTYPES["float32"]: np.float32,
                   _lib.DTYPES["bfloat16"]: np.float32}


_BOOLS = (bool,) if np is None else (bool, np.bool_)


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, _BOOLS)


def _is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, _BOOLS)


def _bins_arg(bins):
    """(bins as the library takes it, why not): a whole number; the library checks 1 .. DREDUCE_MAX_BINS."""
    if not _is_int(bins):
        return 0, (f"bins={bins!r}: a number of equal-width bins is needed (bin edges and NumPy's estimators such "
                   "as 'auto' are not supported)")
    if not 0 <= bins < 1 << 32:
        return 0, f"bins={bins} is not a number of bins (1..{_lib.MAX_BINS})"
    return int(bins), None


def _range_arg(rng):
    """((lo, hi) as floats or None, why not): the library checks that they are finite with lo <= hi."""
    if rng is None:
        return None, None
    try:
        lo, hi = rng
    except (TypeError, ValueError):
        return None, f"range={rng!r}: None or a pair (lo, hi) is needed"
    if not (_is_real(lo) and _is_real(hi)):
        return None, f"range={rng!r}: lo and hi must be numbers"
    return (float(lo), float(hi)), None


def _q_arg(q):
    """(q as a C-contiguous float64 array or None, the result's shape (None: a scalar), why not)."""
    if _is_real(q):
        return np.array([float(q)], np.float64), None, None
    if isinstance(q, (str, bytes)) or np is None:
        return None, None, f"q={q!r}: a number or a sequence of numbers is needed"
    try:
        a = np.asarray(q)
    except (TypeError, ValueError) as e:
        return None, None, f"q={q!r}: a number or a sequence of numbers is needed ({e})"
    if a.dtype.kind not in "iuf":
        return None, None, f"q={q!r}: a number or a sequence of numbers is needed (got dtype {a.dtype})"
    shape = None if a.ndim == 0 else a.shape
    return np.ascontiguousarray(a, dtype=np.float64).reshape(-1), shape, None


def _nan_code(nan):
    """dr_nan_policy_t of a nan= value ("propagate", "omit"), or None."""
    return _lib.NAN_POLICIES.get(nan) if type(nan) is str else None


def _nan_why(nan):
    return f"nan={nan!r}: allowed: {', '.join(map(repr, _lib.NAN_POLICIES))} (None: the context's)"


def _lib_name(table, value):
    for k, v in table.items():
        if v == value:
            return k
    return str(value)


_HOST = None


def _host():
    global _HOST
    if _HOST is None:
        _HOST = socket.gethostname()
    return _HOST


_MPI_CHECKED = False


def _check_same_mpi():
    """UsageError-free check, once: mpi4py and libdreduce must use the same MPI library, or the communicator handle
    means nothing to libdreduce (and mixing two MPIs in one process crashes)."""
    global _MPI_CHECKED
    if _MPI_CHECKED:
        return
    try:
        from mpi4py import MPI
        theirs = MPI.Get_library_version()
        f = _lib.prototype(LIB, "MPI_Get_library_version", _c.c_int, [_c.c_char_p, _c.POINTER(_c.c_int)])
    except (ImportError, AttributeError):
        _MPI_CHECKED = True
        return
    buf = _c.create_string_buffer(8192)
    n = _c.c_int()
    if f(buf, n) == 0:
        ours = buf.value.decode("utf-8", "replace")

        def first_line(s):
            return re.split(r"[\n,]", s.strip(), 1)[0]
        if first_line(ours) != first_line(theirs):
            raise RuntimeError(f"dreduce: mpi4py uses another MPI library ({first_line(theirs)}) than libdreduce "
                               f"({LIBRARY_PATH}: {first_line(ours)}): rebuild one against the other's MPI "
                               "(mpi4py: pip install --no-binary mpi4py mpi4py with that MPI's mpicc on PATH)",
                               _lib.ERR_RUNTIME, "dreduce_create")
    _MPI_CHECKED = True
