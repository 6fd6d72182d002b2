"""libdreduce through ctypes: finding and loading the shared library, the layout of the API's structs (checked
against the library's own sizes at import), the prototypes, and the capture of the library's stderr lines for the
exception messages. Nothing here knows about arrays or contexts (_arrays.py, _context.py)."""

import ctypes
import os
import re
import sys
import threading

# ---- Enums of include/dreduce/types.h and include/dreduce/status.h (their values are stable: new ones come last).
DTYPES = {"int32": 0, "int64": 1, "uint32": 2, "uint64": 3, "float32": 4, "float64": 5, "float16": 6,
          "bfloat16": 7, "int8": 8, "uint8": 9, "int16": 10, "uint16": 11}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
DTYPE_SIZES = {0: 4, 1: 8, 2: 4, 3: 8, 4: 4, 5: 8, 6: 2, 7: 2, 8: 1, 9: 1, 10: 2, 11: 2}
DTYPE_COUNT = 12
OPS = {"sum": 0, "min": 1, "max": 2, "prod": 3, "band": 4, "bor": 5, "bxor": 6, "stats": 7, "argmin": 8,
       "argmax": 9}
OP_NAMES = {v: k for k, v in OPS.items()}
ACC_MODES = {"wide": 0, "native": 1, "exact": 2}
DEVICES = {"auto": 0, "gpu": 1, "cpu": 2}
BINDS = {"auto": 0, "none": 1, "workers": 2}
KERNELS = {"neighbored": 0, "interleaved": 1, "smem": 2, "smem2": 3, "unroll": 4, "shuffle": 5, "multipass": 6}
COMBINES = {"hier": 0, "flat": 1}
STAGINGS = {"auto": 0, "device": 1, "host": 2, "mapped": 3}
NAN_POLICIES = {"propagate": 0, "omit": 1}  # dr_nan_policy_t
NAN_PROPAGATE, NAN_OMIT = 0, 1
HOST_PATHS = {"auto": 0, "cpu": 1, "gpu": 2, "split": 3}  # dr_host_path_t

OK, ERR_USAGE, ERR_RUNTIME = 0, 2, 3
# dr_acc_kind_t
ACC_I32, ACC_U32, ACC_I64, ACC_U64, ACC_F32, ACC_F64, ACC_EXACT = range(7)
ACC_ARG_I64, ACC_ARG_U64, ACC_ARG_F64 = 7, 8, 9
ACC_STATS_I64, ACC_STATS_U64, ACC_STATS_F64, ACC_STATS_EXACT = 10, 11, 12, 13
ACC_KIND_COUNT = 14  # DR_ACC_KIND_COUNT: dreduce_acc_select's "no such combination"
ARG_NONE = (1 << 64) - 1
MAX_PASSES = 12
# dr_dist_op_t and the "Distributions" limits of include/dreduce.h
DIST_HISTOGRAM, DIST_QUANTILE = 0, 1
MAX_BINS = 1 << 24       # DREDUCE_MAX_BINS
MAX_Q = 64               # DREDUCE_MAX_Q
DIST_MAX_PASSES = 8      # DREDUCE_DIST_MAX_PASSES


# ---- Structs of include/dreduce.h and include/dreduce/types.h (sizes checked against dreduce_struct_size).
class Config(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int), ("gpu", ctypes.c_int), ("share_gpus", ctypes.c_int),
                ("bind", ctypes.c_int), ("kernel", ctypes.c_int), ("block", ctypes.c_int),
                ("acc_mode", ctypes.c_int), ("combine", ctypes.c_int), ("staging", ctypes.c_int),
                ("allreduce", ctypes.c_int), ("ranks_per_node", ctypes.c_int), ("cpu_threads", ctypes.c_int),
                ("timeout", ctypes.c_double), ("chunk_bytes", ctypes.c_size_t), ("time_passes", ctypes.c_int),
                ("nan", ctypes.c_int), ("host_path", ctypes.c_int)]


class Scalar(ctypes.Union):  # dr_scalar_t
    _fields_ = [("i64", ctypes.c_int64), ("u64", ctypes.c_uint64), ("f64", ctypes.c_double)]


class Arg(ctypes.Structure):  # dr_arg_t
    _fields_ = [("value", Scalar), ("index", ctypes.c_uint64)]


class Value(ctypes.Union):  # dr_value_t
    _fields_ = [("i32", ctypes.c_int32), ("u32", ctypes.c_uint32), ("i64", ctypes.c_int64),
                ("u64", ctypes.c_uint64), ("f32", ctypes.c_float), ("f64", ctypes.c_double), ("arg", Arg),
                ("bytes", ctypes.c_ubyte * 16)]


class Int128(ctypes.Structure):  # dr_int128_t
    _fields_ = [("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64)]


class Stats(ctypes.Structure):  # dr_stats_result_t = dreduce_stats_t
    _fields_ = [("count", ctypes.c_uint64), ("kind", ctypes.c_int), ("min", Scalar), ("max", Scalar),
                ("sum", ctypes.c_double), ("mean", ctypes.c_double), ("m2", ctypes.c_double),
                ("var_pop", ctypes.c_double), ("var_sample", ctypes.c_double), ("sum_is_int", ctypes.c_int),
                ("sum_int", Int128)]


class Result(ctypes.Structure):  # dreduce_result_t
    _fields_ = [("kind", ctypes.c_int), ("value", Value), ("valid", ctypes.c_int), ("no_value", ctypes.c_int),
                ("stats", Stats), ("count", ctypes.c_uint64), ("nan_count", ctypes.c_uint64)]


class Timings(ctypes.Structure):  # dreduce_timings_t
    _fields_ = [("passes", ctypes.c_int), ("pass_ms", ctypes.c_double * MAX_PASSES), ("local_ms", ctypes.c_double),
                ("load_ms", ctypes.c_double), ("read_ms", ctypes.c_double), ("stage_ms", ctypes.c_double),
                ("node_ms", ctypes.c_double), ("global_ms", ctypes.c_double), ("bcast_ms", ctypes.c_double),
                ("total_ms", ctypes.c_double), ("launch_ms", ctypes.c_double), ("wait_ms", ctypes.c_double),
                ("chunks", ctypes.c_uint64), ("bytes", ctypes.c_uint64), ("depth", ctypes.c_uint64),
                ("nan_count", ctypes.c_uint64), ("host_path", ctypes.c_int), ("host_pinned", ctypes.c_int),
                ("host_cpu_elems", ctypes.c_uint64), ("host_cpu_ms", ctypes.c_double),
                ("host_gpu_ms", ctypes.c_double), ("measure_ms", ctypes.c_double)]


class HostRates(ctypes.Structure):  # dreduce_host_rates_t
    _fields_ = [("measured", ctypes.c_int), ("cpu_gbs", ctypes.c_double), ("gpu_gbs", ctypes.c_double),
                ("split_gbs", ctypes.c_double), ("split_cpu_fraction", ctypes.c_double), ("choice", ctypes.c_int),
                ("probe_bytes", ctypes.c_uint64), ("measure_ms", ctypes.c_double)]


class DistInfo(ctypes.Structure):  # dreduce_dist_info_t
    _fields_ = [("valid", ctypes.c_int), ("count", ctypes.c_uint64), ("nan_count", ctypes.c_uint64),
                ("below", ctypes.c_uint64), ("above", ctypes.c_uint64), ("lo", ctypes.c_double),
                ("hi", ctypes.c_double), ("passes", ctypes.c_int),
                ("pass_local_ms", ctypes.c_double * DIST_MAX_PASSES),
                ("pass_combine_ms", ctypes.c_double * DIST_MAX_PASSES), ("local_ms", ctypes.c_double),
                ("combine_ms", ctypes.c_double), ("range_ms", ctypes.c_double), ("total_ms", ctypes.c_double),
                ("local_nan_count", ctypes.c_uint64), ("pilot", ctypes.c_int)]


class OrderStat(ctypes.Structure):  # dreduce_order_stat_t
    _fields_ = [("kind", ctypes.c_int), ("lower", Scalar), ("upper", Scalar), ("lower_rank", ctypes.c_uint64),
                ("upper_rank", ctypes.c_uint64), ("gamma", ctypes.c_double)]


INFO_STR = 256  # DREDUCE_INFO_STR


class ContextInfo(ctypes.Structure):  # dreduce_context_info_t
    _fields_ = [("rank", ctypes.c_int), ("nranks", ctypes.c_int), ("node", ctypes.c_int), ("nnodes", ctypes.c_int),
                ("local_rank", ctypes.c_int), ("local_size", ctypes.c_int), ("host_local_rank", ctypes.c_int),
                ("emulated", ctypes.c_int), ("host", ctypes.c_char * 64), ("node_name", ctypes.c_char * 80),
                ("gpu", ctypes.c_int), ("device_name", ctypes.c_char * 64), ("block", ctypes.c_int),
                ("threads", ctypes.c_int), ("pci_bus_id", ctypes.c_char * 32), ("numa_node", ctypes.c_int),
                ("gpu_cpuset", ctypes.c_char * INFO_STR), ("affinity", ctypes.c_char * INFO_STR),
                ("bound_cpu", ctypes.c_int), ("bound_mem", ctypes.c_int), ("dry_run", ctypes.c_int),
                ("affinity_outside_gpu", ctypes.c_int), ("note", ctypes.c_char * INFO_STR),
                ("share", ctypes.c_char * INFO_STR), ("widened", ctypes.c_int)]


STRUCTS = {"dreduce_config_t": Config, "dreduce_context_info_t": ContextInfo, "dreduce_result_t": Result,
           "dreduce_timings_t": Timings, "dreduce_stats_t": Stats, "dreduce_dist_info_t": DistInfo,
           "dreduce_order_stat_t": OrderStat, "dreduce_host_rates_t": HostRates}

# ---- Finding the library.
LIB_NAME = "libdreduce.so"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    """(how it was found, path) in the documented order (docs/python.md, "Finding libdreduce")."""
    explicit = os.environ.get("DREDUCE_LIBRARY")
    if explicit:
        return [("DREDUCE_LIBRARY", explicit)]  # explicit: nothing else is tried
    out = []
    prefix = os.environ.get("DREDUCE_PREFIX")
    if prefix:
        for sub in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu"), os.path.join("lib", "aarch64-linux-gnu")):
            out.append(("DREDUCE_PREFIX", os.path.join(prefix, sub, LIB_NAME)))
    # The source tree: python/dreduce/ inside the repository, the README's build in build/.
    repo = os.path.dirname(os.path.dirname(_HERE))
    if os.path.isfile(os.path.join(repo, "include", "dreduce.h")):
        out.append(("the source tree's build/", os.path.join(repo, "build", LIB_NAME)))
    out.append(("the dynamic loader (LD_LIBRARY_PATH, ldconfig)", LIB_NAME))
    return out


def _pkg_config_dir():
    """libdir of the installed pkg-config file dreduce.pc, or None (no pkg-config, no package)."""
    import shutil
    import subprocess
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        r = subprocess.run([exe, "--variable=libdir", "dreduce"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def load():
    """(CDLL, path): the first candidate that loads; ImportError naming every place tried and why each failed."""
    tried = []
    cands = _candidates()
    if len(cands) > 1:
        libdir = _pkg_config_dir()
        if libdir:
            cands.append(("pkg-config dreduce", os.path.join(libdir, LIB_NAME)))
    for how, path in cands:
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{how}: {path}: no such file")
            continue
        try:
            # RTLD_GLOBAL: nothing needs it from us; the MPI library libdreduce links is normally loaded already
            # (mpi4py), and Open MPI's plugins need that one global, which mpi4py arranges.
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{how}: {e}")
            continue
        return lib, _real_path(lib, path)
    raise ImportError("dreduce: cannot find libdreduce.so. Build it (cmake --build build --target libdreduce) or "
                      "install it (cmake --install build --prefix P), then set DREDUCE_PREFIX=P (its lib/ or "
                      "lib64/ holds libdreduce.so) or DREDUCE_LIBRARY=/path/to/libdreduce.so. Tried: "
                      + "; ".join(tried))


def _real_path(lib, fallback):
    """The file the loader opened (from /proc/self/maps: the loader's own search may have found it)."""
    try:
        addr = ctypes.cast(lib.dreduce_version, ctypes.c_void_p).value
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                if lo <= addr < hi and len(parts) == 6:
                    return parts[5].strip()
    except (OSError, AttributeError, ValueError):
        pass
    return fallback


def prototype(lib, name, restype, argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


def check_abi(lib, path):
    """ImportError unless the library has the calls and struct layouts this package was written for."""
    try:
        size = prototype(lib, "dreduce_struct_size", ctypes.c_size_t, [ctypes.c_char_p])
        version = prototype(lib, "dreduce_version", ctypes.c_char_p, [])
    except AttributeError as e:
        raise ImportError(f"dreduce: {path} is too old for this package ({e}); rebuild libdreduce from this "
                          "source tree (it needs dreduce_struct_size, dreduce_create_f, dreduce_reduce_fail)") from None
    bad = []
    for name, cls in STRUCTS.items():
        theirs = size(name.encode())
        if theirs != ctypes.sizeof(cls):
            bad.append(f"{name}: {theirs} bytes there, {ctypes.sizeof(cls)} here")
    for name in ("dreduce_create_f", "dreduce_reduce_fail", "dreduce_reduce_at", "dreduce_prepare",
                 "dreduce_histogram", "dreduce_quantile", "dreduce_dist_fail", "dreduce_set_nan"):
        if not hasattr(lib, name):
            bad.append(f"no {name}")
    if bad:
        raise ImportError(f"dreduce: {path} (version {version().decode()}) does not match this package: "
                          + "; ".join(bad) + ". Rebuild the library and the package from the same source tree")
    return version().decode()


_library = None


def library():
    """(CDLL, path, version) of libdreduce, loaded and checked once (ImportError if none fits): the one handle that
    the package's modules share."""
    global _library
    if _library is None:
        lib, path = load()
        _library = (lib, path, check_abi(lib, path))
    return _library


# ---- Capturing the library's stderr lines.
# libdreduce says why a call failed in one line on stderr ("dreduce: error: rank R (host): ..."). Around each call,
# the C library's `stderr` (a FILE * variable in glibc, which glibc documents as assignable) points to a stream of
# ours made with fopencookie, whose write function writes every byte through to file descriptor 2 at once (so the
# line appears where it always did, in order, even if the process then ends: the timeout watchdog's _exit) and
# keeps a copy for the exception. Costs two pointer stores per call; only stdio output to stderr during the call is
# seen. Off (messages then stay on stderr only) without glibc, or with DREDUCE_PY_CAPTURE=0. The write function
# takes the GIL (a C thread's line, e.g. the watchdog's, waits for it).
_WRITE_FN = ctypes.CFUNCTYPE(ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class _CookieIO(ctypes.Structure):
    _fields_ = [("read", ctypes.c_void_p), ("write", _WRITE_FN), ("seek", ctypes.c_void_p),
                ("close", ctypes.c_void_p)]


class Capture:
    """Per-thread copies of what C code wrote to stderr while a call of ours ran (enter() ... leave())."""

    def __init__(self):
        self.enabled = False
        self.saved = None      # what C's stderr pointed to before our stream
        self.var = self.fp = None
        self._texts = {}      # thread id -> [bytes]
        self.pending = False  # something was written since the last take() (any thread)
        self._mute = None     # a compiled regex: lines we cause on purpose and replace by our own message
        if os.environ.get("DREDUCE_PY_CAPTURE", "1") == "0" or not sys.platform.startswith("linux"):
            return
        try:
            if os.confstr("CS_GNU_LIBC_VERSION") is None:
                return
            libc = ctypes.CDLL(None)
            var = ctypes.c_void_p.in_dll(libc, "stderr")
            fopencookie = prototype(libc, "fopencookie", ctypes.c_void_p,
                                    [ctypes.c_void_p, ctypes.c_char_p, _CookieIO])
            setvbuf = prototype(libc, "setvbuf", ctypes.c_int,
                                [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t])
        except (AttributeError, ValueError, OSError):
            return
        self._write_cb = _WRITE_FN(self._write)  # kept alive as long as the stream
        fp = fopencookie(None, b"w", _CookieIO(None, self._write_cb, None, None))
        if not fp:
            return
        setvbuf(fp, None, 2, 0)  # _IONBF: every byte reaches _write when it is written
        self.var, self.fp = var, fp
        self.enabled = True

    def _write(self, cookie, buf, size):
        try:
            data = ctypes.string_at(buf, size)
            mute = self._mute
            if mute is None or not mute.search(data.decode("utf-8", "replace")):
                view = memoryview(data)
                while view:
                    try:
                        n = os.write(2, view)
                    except InterruptedError:
                        continue
                    view = view[n:]
            self._texts.setdefault(threading.get_ident(), []).append(data)
            self.pending = True
        except Exception:  # never raise into C
            pass
        return size

    def enter(self):
        """Point C's stderr to our stream (Context.reduce inlines this). No lock: whoever finds it pointing
        elsewhere records that and swaps; whoever leaves points it back. Calls overlapping in several threads can
        only lose the copy (the lines still reach fd 2), never leave stderr pointing to our stream."""
        if self.enabled:
            cur = self.var.value
            if cur != self.fp:
                self.saved = cur
                self.var.value = self.fp

    def leave(self):
        if self.enabled:
            self.var.value = self.saved

    def take(self):
        """What this thread's calls wrote since the last take(), as text (empty when nothing)."""
        parts = self._texts.pop(threading.get_ident(), None)
        self.pending = bool(self._texts)
        return b"".join(parts).decode("utf-8", "replace") if parts else ""

    def mute(self, pattern):
        """While set, lines matching pattern are kept but not written through (a failure we cause on purpose)."""
        self._mute = re.compile(pattern) if pattern else None


def messages(text):
    """The library's own lines ("dreduce: error: ..."/"dreduce: warning: ...") in captured text, newline-joined."""
    return "\n".join(line for line in text.splitlines() if line.startswith("dreduce: "))
