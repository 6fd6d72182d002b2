"""What an array is, for libdreduce: its first element's address, its element count, its dr_dtype_t, and that its
data is ready to read. NumPy arrays, torch tensors and CuPy arrays have fast paths; anything else goes through
DLPack (__dlpack__), the CUDA array interface (__cuda_array_interface__), the NumPy array interface or the buffer
protocol. describe(array, dtype) returns (address, count, dtype code, keep-alive) or raises Reject.

Streams. libdreduce's GPU work runs on its own blocking streams, which wait for the legacy default stream and for
nothing else. So before the call, work the producer queued on any other stream is waited for on the host: torch's
and CuPy's current stream (nothing to do when it is the legacy default stream), the "stream" entry of a
__cuda_array_interface__ (v3), and DLPack's exchange (the producer is asked, with stream=1, to make the legacy
default stream wait for its work)."""

import ctypes

from . import _lib

try:
    import numpy as np
except ImportError:  # numpy is a dependency; without it only torch and DLPack arrays work
    np = None


class Reject(Exception):
    """This rank's array (or dtype) cannot be reduced: message, the dtype code when it is known (or None)."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


def _supported():
    return ", ".join(["bool"] + list(_lib.DTYPES))


# ---- dtypes
_NP_CODES = {}
if np is not None:
    for _name, _code in _lib.DTYPES.items():
        if _name != "bfloat16":
            _NP_CODES[np.dtype(_name)] = _code
    _NP_CODES[np.dtype(np.bool_)] = _lib.DTYPES["uint8"]
_TYPESTR_CODES = {}
if np is not None:
    for _dt, _code in _NP_CODES.items():
        _TYPESTR_CODES[_dt.str] = _code
        _TYPESTR_CODES[_dt.str.replace("<", "=")] = _code


def np_code(dt):
    """dr_dtype_t of a NumPy dtype (bool as uint8; ml_dtypes' bfloat16), or Reject."""
    code = _NP_CODES.get(dt)
    if code is not None:
        return code
    if dt.name == "bfloat16" and dt.itemsize == 2 and dt.isnative:  # ml_dtypes (JAX, TensorFlow)
        _NP_CODES[dt] = _lib.DTYPES["bfloat16"]
        return _NP_CODES[dt]
    if not dt.isnative and dt.newbyteorder("=") in _NP_CODES:
        raise Reject(f"arrays of dtype {dt.str} (non-native byte order) are not supported: convert with "
                     "a.astype(a.dtype.newbyteorder('='))")
    raise Reject(f"arrays of dtype {dt} are not supported (supported: {_supported()})")


_TORCH_CODES = None


def _torch_codes():
    global _TORCH_CODES
    if _TORCH_CODES is None:
        import torch
        t = {}
        for name, code in _lib.DTYPES.items():
            dt = getattr(torch, name, None)
            if dt is not None:
                t[dt] = code
        t[torch.bool] = _lib.DTYPES["uint8"]
        _TORCH_CODES = t
    return _TORCH_CODES


def dtype_code(dtype):
    """dr_dtype_t of a dtype given by name ("float32", "bool"), NumPy dtype or type, or torch dtype; Reject if
    unknown."""
    if isinstance(dtype, str) and dtype in _lib.DTYPES:
        return _lib.DTYPES[dtype]
    if isinstance(dtype, str) and dtype == "bool":
        return _lib.DTYPES["uint8"]
    if type(dtype).__module__ == "torch":
        code = _torch_codes().get(dtype)
        if code is None:
            raise Reject(f"tensors of dtype {dtype} are not supported (supported: {_supported()})")
        return code
    if np is not None:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise Reject(f"dtype {dtype!r} is not a dtype (supported: {_supported()})") from None
        return np_code(dt)
    raise Reject(f"dtype {dtype!r} is not supported (supported: {_supported()})")


def _override(code, itemsize, dtype):
    """The dtype the caller asked for instead of the array's own (same element size: the bytes are reinterpreted,
    e.g. bfloat16 data held in a uint16 array)."""
    want = dtype_code(dtype)
    if _lib.DTYPE_SIZES[want] != itemsize:
        raise Reject(f"dtype={dtype!r} has {_lib.DTYPE_SIZES[want]}-byte elements, the array {itemsize}-byte ones: "
                     "an override only reinterprets elements of the same size", code)
    return want


# ---- CUDA streams (through the CUDA runtime libdreduce links)
_sync_stream = None


def _cuda_stream_synchronize(handle):
    global _sync_stream
    if _sync_stream is None:
        _sync_stream = _lib.prototype(_lib.library()[0], "cudaStreamSynchronize", ctypes.c_int, [ctypes.c_void_p])
    err = _sync_stream(handle)
    if err != 0:
        raise Reject(f"cudaStreamSynchronize(stream {handle:#x}) of the array's producer failed: CUDA error {err}")


# ---- NumPy (and host objects through it)
def _numpy(a, dtype):
    code = _NP_CODES.get(a.dtype)
    if code is None:
        code = np_code(a.dtype)
    if dtype is not None:
        code = _override(code, a.dtype.itemsize, dtype)
    if not a.flags.c_contiguous:
        raise Reject("the array is not C-contiguous (strides %s, shape %s): pass np.ascontiguousarray(a) for a copy"
                     % (a.strides, a.shape), code)
    return a.__array_interface__["data"][0], a.size, code, None


def _numpy_subclass(a, dtype):
    if isinstance(a, np.ma.MaskedArray):
        raise Reject("masked arrays are not supported (the mask would be ignored): pass a.compressed() or "
                     "a.filled(value)", _NP_CODES.get(a.dtype))
    return _numpy(a, dtype)


def _host_object(a, dtype):
    """__array_interface__ or the buffer protocol, viewed (never copied) as a NumPy array."""
    if np is None:
        raise Reject("host arrays need NumPy")
    if hasattr(a, "__array_interface__"):
        try:
            view = np.asarray(a)
        except Exception as e:  # noqa: BLE001: any failure of the producer's interface
            raise Reject(f"{type(a).__name__}.__array_interface__ could not be read: {e}") from None
    else:
        try:
            m = memoryview(a)
        except TypeError:
            raise Reject(f"an array is needed (NumPy, CuPy, torch, DLPack, the CUDA array interface or the "
                         f"buffer protocol); got {type(a).__name__}"
                         + (" (a list or tuple: pass np.asarray(x))" if isinstance(a, (list, tuple)) else "")) from None
        if not m.c_contiguous:
            raise Reject("the buffer is not C-contiguous: pass a contiguous copy")
        try:
            view = np.asarray(m)
        except Exception as e:  # noqa: BLE001
            raise Reject(f"the buffer's format {m.format!r} is not supported: {e}") from None
    ptr, count, code, _ = _numpy(view, dtype)
    return ptr, count, code, view


# ---- torch
_torch_raw_stream = None


def _torch(t, dtype):
    code = _torch_codes().get(t.dtype)
    if code is None:
        raise Reject(f"tensors of dtype {t.dtype} are not supported (supported: {_supported()})")
    if dtype is not None:
        code = _override(code, t.element_size(), dtype)
    if not t.is_contiguous():
        raise Reject(f"the tensor is not contiguous (strides {tuple(t.stride())}, shape {tuple(t.shape)}): pass "
                     "t.contiguous() for a copy", code)
    if t.is_conj() or t.is_neg():
        raise Reject("the tensor has a lazy conjugate or negation bit: pass t.resolve_conj().resolve_neg()", code)
    if t.is_cuda:
        _torch_sync(t.get_device())
    elif t.device.type != "cpu":
        raise Reject(f"tensors on {t.device} are not supported (CUDA or CPU only)", code)
    return t.data_ptr(), t.numel(), code, None


def _torch_sync(dev):
    """Wait for torch's current stream on device dev unless it is the legacy default stream (which libdreduce's
    streams wait for by themselves)."""
    global _torch_raw_stream
    import torch
    if _torch_raw_stream is None:
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _torch_raw_stream = raw if raw is not None else (lambda d: torch.cuda.current_stream(d).cuda_stream)
    if _torch_raw_stream(dev) not in (0, 1):
        torch.cuda.current_stream(dev).synchronize()


# ---- CuPy
def _cupy(a, dtype):
    code = _NP_CODES.get(a.dtype)
    if code is None:
        code = np_code(a.dtype)
    if dtype is not None:
        code = _override(code, a.dtype.itemsize, dtype)
    if not a.flags.c_contiguous:
        raise Reject(f"the array is not C-contiguous (strides {a.strides}, shape {a.shape}): pass "
                     "cupy.ascontiguousarray(a) for a copy", code)
    import cupy
    s = cupy.cuda.get_current_stream()
    if s.ptr not in (0, 1):
        s.synchronize()
    return a.data.ptr, a.size, code, None


# ---- __cuda_array_interface__ (Numba, JAX, others)
def _cai(a, dtype):
    try:
        iface = a.__cuda_array_interface__
    except Exception as e:  # noqa: BLE001: torch raises for CPU tensors, others for what they cannot express
        raise Reject(f"{type(a).__name__}.__cuda_array_interface__ could not be read: {e}") from None
    typestr = iface.get("typestr", "")
    code = _TYPESTR_CODES.get(typestr)
    if code is None:
        raise Reject(f"__cuda_array_interface__ typestr {typestr!r} is not supported (supported: {_supported()})")
    itemsize = int(typestr[2:])
    if dtype is not None:
        code = _override(code, itemsize, dtype)
    shape = tuple(iface.get("shape", ()))
    count = 1
    for d in shape:
        count *= d
    strides = iface.get("strides")
    if strides is not None and count > 1 and tuple(strides) != _c_strides(shape, itemsize):
        raise Reject(f"the array is not C-contiguous (strides {tuple(strides)}, shape {shape}): pass a contiguous "
                     "copy", code)
    if iface.get("mask") is not None:
        raise Reject("masked arrays are not supported (__cuda_array_interface__ has a mask)", code)
    stream = iface.get("stream")
    if stream is not None and stream not in (0, 1):  # 1: the legacy default stream; 2: per-thread default
        _cuda_stream_synchronize(stream)
    return iface["data"][0], count, code, None


def _c_strides(shape, itemsize):
    strides, s = [], itemsize
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return tuple(reversed(strides))


# ---- DLPack (JAX and any array API library)
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_CODES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
             (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64", (2, 16): "float16", (2, 32): "float32",
             (2, 64): "float64", (4, 16): "bfloat16", (6, 8): "uint8"}
_capsule_pointer = None


def _dlpack(a, dtype):
    global _capsule_pointer
    try:
        dev_type, dev_id = a.__dlpack_device__()
    except Exception as e:  # noqa: BLE001
        raise Reject(f"{type(a).__name__}.__dlpack_device__() failed: {e}") from None
    if dev_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        try:
            capsule = a.__dlpack__(stream=1)  # the producer makes the legacy default stream wait for its work
        except TypeError:  # a producer without the stream argument: wait for its whole device
            capsule = a.__dlpack__()
            from . import _context
            _lib.prototype(_context.LIB, "cudaDeviceSynchronize", ctypes.c_int, [])()
    elif dev_type in (_DL_CPU, _DL_CUDA_HOST):
        capsule = a.__dlpack__()
    else:
        raise Reject(f"DLPack device type {dev_type} is not supported (CPU, CUDA, CUDA host or managed memory)")
    if _capsule_pointer is None:
        _capsule_pointer = _lib.prototype(ctypes.pythonapi, "PyCapsule_GetPointer", ctypes.c_void_p,
                                          [ctypes.py_object, ctypes.c_char_p])
    try:
        p = _capsule_pointer(capsule, b"dltensor")
    except ValueError as e:
        raise Reject(f"__dlpack__() did not return a DLPack capsule: {e}") from None
    t = _DLTensor.from_address(p)  # DLManagedTensor starts with its DLTensor
    name = _DL_CODES.get((t.dtype.code, t.dtype.bits))
    if name is None or t.dtype.lanes != 1:
        raise Reject(f"DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, {t.dtype.lanes} lanes) is not "
                     f"supported (supported: {_supported()})")
    code = _lib.DTYPES[name]
    itemsize = t.dtype.bits // 8
    if dtype is not None:
        code = _override(code, itemsize, dtype)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    count = 1
    for d in shape:
        count *= d
    if t.strides and count > 1:
        strides = tuple(t.strides[i] * itemsize for i in range(t.ndim))
        want = _c_strides(shape, itemsize)
        if any(s != w for s, w, d in zip(strides, want, shape) if d != 1):
            raise Reject(f"the array is not C-contiguous (strides {strides} bytes, shape {shape}): pass a "
                         "contiguous copy", code)
    return (t.data or 0) + t.byte_offset, count, code, capsule  # the capsule's destructor releases the tensor


# ---- dispatch by type (decided once per type)
_HANDLERS = {}


def _handler(a):
    t = type(a)
    if np is not None and issubclass(t, np.ndarray):
        h = _numpy if t is np.ndarray else _numpy_subclass
    elif any(c.__module__.partition(".")[0] == "torch" and c.__name__ == "Tensor" for c in t.__mro__):
        h = _torch
    elif t.__module__.partition(".")[0] == "cupy" and t.__name__ == "ndarray":
        h = _cupy
    elif hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__"):
        h = _dlpack
    elif hasattr(a, "__cuda_array_interface__"):
        h = _cai
    else:
        h = _host_object
    if t.__module__ != "builtins" or h is not _host_object:
        _HANDLERS[t] = h
    return h


def describe(a, dtype=None):
    """(address, count, dr_dtype_t, keep-alive) of a contiguous array whose data is ready; Reject otherwise."""
    if a is None:
        raise Reject("an array is needed; got None")
    h = _HANDLERS.get(type(a)) or _handler(a)
    return h(a, dtype)


def count_of(n):
    """A count given as a number (prepare)."""
    if isinstance(n, bool) or not isinstance(n, int) and not (np is not None and isinstance(n, np.integer)):
        raise Reject(f"a count must be a whole number; got {n!r}")
    if n < 0 or n >= 1 << 64:
        raise Reject(f"count {n} is out of range (0 .. 2^64-1)")
    return int(n)
