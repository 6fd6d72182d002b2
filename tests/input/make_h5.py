#!/usr/bin/env python3
"""Write the HDF5 --input test files with h5py and their exact answers with NumPy (issue 18).

Usage:
  make_h5.py OUTDIR [--seed S]

Needs h5py and numpy (Debian: python3-h5py python3-numpy, for /usr/bin/python3; a pyenv `python3` may not see
them). Writes into OUTDIR a manifest.json in make_inputs.py's format, so run_inputs.py runs the same suites on it:
  - good: every supported type (int8 .. uint64, float16/32/64, h5py's bool), 1-D and 2-D (and a 3-D and a scalar),
    contiguous and chunked with gzip and shuffle, datasets in groups, big-endian storage, sizes not divisible by 2,
    3 or 4; values on grids where every float64 partial sum is exact, so NumPy's answer is the one right answer;
  - bad: not an HDF5 file, a missing dataset, several datasets and none named, compound, string, variable-length
    and enum types, a 16-byte float, zero elements, a truncated file, --offset/--type/--op clashes, --dataset on a
    .npy file, a named pipe called .h5;
  - files as other tools leave them: chunked datasets written in part (unwritten chunks read as the fill value),
    a plugin filter (blosc) this HDF5 cannot decode (refused by name) and the same filter skipped by its writer
    (read), a virtual dataset (refused by name).
"""

import argparse
import json
import os
import sys

import h5py
import numpy as np

SMALL = {"int8", "uint8", "int16", "uint16"}


def acc_kind(dtype, op):
    kind = np.dtype(dtype).kind if dtype != "bool" else "u"
    if op == "sum":
        return {"i": "int64", "u": "uint64", "f": "float64"}[kind]
    if dtype in SMALL or dtype == "bool":
        return "int32" if kind == "i" else "uint32"
    if dtype in ("float16", "float32"):
        return "float32"
    return dtype


def text(v):
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(v))


def answers(dtype, arr, ops):
    flat = arr.reshape(-1)
    if dtype == "bool":
        flat = flat.astype(np.uint8)
    out = {}
    for op in ops:
        acc = acc_kind(dtype, op)
        if op == "sum":
            v = flat.astype(np.dtype(acc)).sum(dtype=np.dtype(acc))  # wraps as the wider type does
        elif op == "min":
            v = flat.min()
        elif op == "max":
            v = flat.max()
        else:  # bxor in the accumulator's width, on sign- or zero-extended values
            v = np.bitwise_xor.reduce(flat.astype(np.dtype(acc)))
        if np.dtype(acc).kind == "f":
            v = float(v)
        else:
            v = int(v)
        out[op] = dict(value=text(v), acc=acc)
    return out


def values(rng, dtype, n):
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    # k * 2^-e with |k| < 2^b: exact in the type, and float64 partial sums stay exact
    b, e = {"float16": (10, 4), "float32": (20, 10), "float64": (30, 20)}[dtype]
    return (rng.integers(-(1 << b) + 1, 1 << b, n).astype(np.float64) * 2.0 ** -e).astype(dt)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=20261130)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    good, bad = [], []

    def path(name):
        return os.path.join(a.outdir, name)

    def add_good(name, dset, dtype, shape, chunks=None, big_endian=False, extra=None, args=None, ops=None):
        n = int(np.prod(shape)) if shape else 1
        arr = values(rng, dtype, n).reshape(shape)
        store = arr
        if big_endian:
            store = arr.astype(arr.dtype.newbyteorder(">"))
        with h5py.File(path(name), "w") as f:
            kw = dict(chunks=chunks, compression="gzip", shuffle=True) if chunks else {}
            f.create_dataset(dset, data=store, **kw)
            for other, data in (extra or {}).items():
                f.create_dataset(other, data=data)
        if ops is None:
            ops = ["sum", "min", "max"] + (["bxor"] if dtype == "bool" or np.dtype(dtype).kind in "iu" else [])
        dt_name = "uint8" if dtype == "bool" else dtype
        good.append(dict(file=name, dtype=dt_name, count=n, data_offset=0, args=args or [],
                         expect=answers(dtype, arr, ops), note=""))

    def add_bad(name, args, error, op="sum"):
        bad.append(dict(file=name, args=args, op=op, error=error))

    types = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
             "float64", "bool"]
    for t in types:
        # 1-D, contiguous, a prime size; 2-D chunked with gzip and shuffle, in a group, rows not divisible by P
        add_good("%s_1d_65537.h5" % t, "data", t, (65537,))
        add_good("%s_2d_gzip_1021x7.h5" % t, "/group/sub/values", t, (1021, 7), chunks=(100, 7),
                 args=["--dataset", "/group/sub/values"])
    add_good("int16_2d_bigendian_333x5.h5", "x", "int16", (333, 5), big_endian=True)
    add_good("float32_2d_bigendian_gzip_257x3.h5", "x", "float32", (257, 3), chunks=(64, 3), big_endian=True)
    add_good("uint8_3d_gzip_13x11x7.h5", "cube", "uint8", (13, 11, 7), chunks=(4, 5, 7))
    add_good("int32_2d_chunked_odd_1000x13.h5", "m", "int32", (1000, 13), chunks=(7, 5))
    add_good("float64_scalar.h5", "s", "float64", ())
    add_good("int8_tiny_3.h5", "t", "int8", (3,))
    # a named dataset among several (the others ignored); the name without its leading '/'
    add_good("uint16_named_among_3.h5", "wanted", "uint16", (4099,),
             extra={"other": np.arange(5, dtype=np.int32), "g/third": np.ones(3)}, args=["--dataset", "wanted"])

    def add_partial(name, dtype, shape, chunks, writes, fill=None, gzip=False, ops=None):
        """A chunked dataset written in part (h5py `d[sel] = x`): its unwritten chunks are never allocated and read
        as the fill value (HDF5's default 0, or `fill`); the answers are NumPy's over what h5py reads back."""
        with h5py.File(path(name), "w") as f:
            kw = dict(compression="gzip", shuffle=True) if gzip else {}
            d = f.create_dataset("part", shape, dtype=dtype, chunks=chunks, fillvalue=fill, **kw)
            for sel in writes:
                d[sel] = values(rng, dtype, int(np.prod(d[sel].shape))).reshape(d[sel].shape)
            arr = d[...]
            assert d.id.get_num_chunks() < int(np.prod([-(-n // c) for n, c in zip(shape, chunks)])), name
        if ops is None:
            ops = ["sum", "min", "max"] + (["bxor"] if np.dtype(dtype).kind in "iu" else [])
        good.append(dict(file=name, dtype=dtype, count=int(np.prod(shape)), data_offset=0, args=[],
                         expect=answers(dtype, arr, ops), note="partly written"))

    # Partly written chunked datasets. 100000 float64 in chunks of 1000 with 10 elements written: at np 2..4 whole
    # shares of ranks are unwritten; gzip + shuffle with a custom fill value; 3-D; a dataset no chunk of which was
    # written (every element the fill value).
    add_partial("float64_partial_100000.h5", "float64", (100000,), (1000,), [np.s_[5000:5010]])
    add_partial("int32_partial_gzip_fill_70001.h5", "int32", (70001,), (999,),
                [np.s_[0:10], np.s_[40000:41234], np.s_[70000:]], fill=-7, gzip=True)
    add_partial("float32_partial_3d_gzip_20x30x40.h5", "float32", (20, 30, 40), (5, 10, 10),
                [np.s_[0:5, 0:10, :], np.s_[12:14, 25:, 3:17]], gzip=True)
    add_partial("uint16_unwritten_fill_9999.h5", "uint16", (9999,), (100,), [], fill=3)

    # An optional plugin filter (blosc, 32001, as PyTables and h5py add it) that the writer skipped: each chunk's
    # filter mask says so and it reads without the filter (independently: see input_hdf5.c, transfer_mode).
    from h5py import h5d, h5p, h5s, h5t, h5z

    def plugin_filtered(name, mask):
        data = np.arange(1000, dtype=np.float32) * np.float32(0.25)
        with h5py.File(path(name), "w") as f:
            dcpl = h5p.create(h5p.DATASET_CREATE)
            dcpl.set_chunk((100,))
            dcpl.set_filter(32001, h5z.FLAG_OPTIONAL, (2, 2, 4, 400, 5, 1, 1))
            d = h5py.Dataset(h5d.create(f.id, b"x", h5t.NATIVE_FLOAT, h5s.create_simple((1000,)), dcpl=dcpl))
            for k in range(10):  # the chunks' bytes as they are: "filtered" (mask 0) or the filter skipped (mask 1)
                d.id.write_direct_chunk((k * 100,), data[k * 100:(k + 1) * 100].tobytes(), filter_mask=mask)
        return data

    if not h5z.filter_avail(32001):
        data = plugin_filtered("float32_blosc_skipped.h5", 1)
        good.append(dict(file="float32_blosc_skipped.h5", dtype="float32", count=1000, data_offset=0, args=[],
                         expect=answers("float32", data, ["sum", "min", "max"]), note="optional filter skipped"))
        plugin_filtered("blosc_without_plugin.h5", 0)
        add_bad("blosc_without_plugin.h5", [], "dataset '/x' is compressed with HDF5 filter 32001 (blosc), which this "
                "HDF5 cannot decode (no plugin found): set HDF5_PLUGIN_PATH")
    # A virtual dataset: refused by name, with its first source.
    with h5py.File(path("vds_source.h5"), "w") as f:
        f.create_dataset("a", data=np.arange(10.0))
    layout = h5py.VirtualLayout(shape=(10,), dtype="f8")
    layout[:] = h5py.VirtualSource("vds_source.h5", "a", shape=(10,))
    with h5py.File(path("virtual.h5"), "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=0)
    add_bad("virtual.h5", [], "dataset '/v' is a virtual dataset (its data lives in 1 source dataset, the first in "
            "'vds_source.h5', dataset 'a'), which dreduce does not read")

    # ---- bad inputs -------------------------------------------------------------------------------------------
    with open(path("not_hdf5.h5"), "wb") as f:
        f.write(b"this is not an HDF5 file\n" * 10)
    add_bad("not_hdf5.h5", [], "not an HDF5 file")
    with h5py.File(path("several.h5"), "w") as f:
        f.create_dataset("a", data=np.arange(10, dtype=np.int32))
        f.create_dataset("g/b", data=np.arange(10, dtype=np.float32))
    add_bad("several.h5", [], "the file holds 2 datasets: name one with --dataset (/a, /g/b)")
    add_bad("several.h5", ["--dataset", "/nope"], "no dataset '/nope' in the file (its datasets: /a, /g/b)")
    add_bad("several.h5", ["--dataset", "/g/nope/deeper"], "no dataset '/g/nope/deeper' in the file")
    add_bad("several.h5", ["--dataset", "/g"], "no dataset '/g' in the file")
    add_bad("several.h5", ["--dataset", "/a", "--offset", "8"], "--offset is for raw files; this is an HDF5 file")
    add_bad("several.h5", ["--dataset", "/a", "--type", "int64"],
            "dataset '/a' holds int32 but --type int64 was given")
    add_bad("several.h5", ["--dataset", "/g/b"], "--op bxor is not defined for the file's type float32", op="bxor")
    with h5py.File(path("no_datasets.h5"), "w") as f:
        f.create_group("empty")
    add_bad("no_datasets.h5", [], "the file holds no datasets")
    with h5py.File(path("compound.h5"), "w") as f:
        f.create_dataset("c", data=np.zeros(4, dtype=[("x", "<i4"), ("y", "<f8")]))
    add_bad("compound.h5", [], "dataset '/c': unsupported HDF5 type: compound")
    with h5py.File(path("string.h5"), "w") as f:
        f.create_dataset("s", data=np.array([b"ab", b"cd"], dtype="S2"))
    add_bad("string.h5", [], "dataset '/s': unsupported HDF5 type: string")
    with h5py.File(path("vlen.h5"), "w") as f:
        d = f.create_dataset("v", (2,), dtype=h5py.vlen_dtype(np.int32))
        d[0] = np.arange(3, dtype=np.int32)
        d[1] = np.arange(5, dtype=np.int32)
    add_bad("vlen.h5", [], "dataset '/v': unsupported HDF5 type: variable-length")
    with h5py.File(path("enum.h5"), "w") as f:
        f.create_dataset("e", data=np.array([0, 1, 2], dtype=np.int8),
                         dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype="i1"))
    add_bad("enum.h5", [], "dataset '/e': unsupported HDF5 type: enum")
    if hasattr(np, "longdouble") and np.dtype(np.longdouble).itemsize == 16:
        with h5py.File(path("float128.h5"), "w") as f:
            f.create_dataset("q", data=np.ones(3, dtype=np.longdouble))
        add_bad("float128.h5", [], "unsupported HDF5 type: 16-byte float")
    with h5py.File(path("empty.h5"), "w") as f:
        f.create_dataset("z", shape=(0, 4), dtype=np.float32)
    add_bad("empty.h5", [], "dataset '/z' has no elements")
    # a file cut short: its superblock says more than there is
    with h5py.File(path("whole.h5"), "w") as f:
        f.create_dataset("d", data=np.arange(100000, dtype=np.int64), chunks=(1000,), compression="gzip")
    with open(path("whole.h5"), "rb") as f:
        blob = f.read()
    os.remove(path("whole.h5"))
    with open(path("truncated.h5"), "wb") as f:
        f.write(blob[:len(blob) // 2])
    add_bad("truncated.h5", [], "cannot open as HDF5 (corrupt or unreadable)")
    np.save(path("plain.npy"), np.arange(7, dtype=np.int16))
    add_bad("plain.npy", ["--dataset", "/x"], "--dataset is for HDF5 files; this is a .npy file")
    if not os.path.exists(path("pipe.h5")):
        os.mkfifo(path("pipe.h5"))
    add_bad("pipe.h5", [], "not a regular file (a named pipe)")

    with open(os.path.join(a.outdir, "manifest.json"), "w") as f:
        json.dump(dict(seed=a.seed, good=good, bad=bad), f, indent=1)
    print("%s: %d good HDF5 files, %d bad cases (h5py %s, HDF5 %s, numpy %s)" %
          (a.outdir, len(good), len(bad), h5py.__version__, h5py.version.hdf5_version, np.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
