#!/usr/bin/env python3
"""The package as users get it: `pip install` of python/ (a copy of it, into a --target directory: no network, no
build isolation, nothing written into the source tree), then from that directory alone:
- `mpiexec -np 2 python -m dreduce.demo` with the library found through DREDUCE_PREFIX (a prefix whose lib64/ holds
  a copy of the library under test);
- the library found by the dynamic loader (LD_LIBRARY_PATH);
- DREDUCE_LIBRARY naming a missing file: ImportError naming it and what to set.

usage: test_install.py --mpiexec MPIEXEC --python PYTHON --library LIBDREDUCE [--timeout S]
Exit 0 passed, 1 failed, 77 skipped (no pip or setuptools >= 61 for that Python, or no numpy/mpi4py)."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "mpi"))
from mpi_launcher import launcher_flags, run_command  # noqa: E402

failures = []


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'} {name}" + ("" if cond else f": {detail}"), flush=True)
    if not cond:
        failures.append(name)


def run(cmd, env, timeout):
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        rc, out, err, secs = run_command(cmd, timeout)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return rc, out + err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--timeout", type=float, default=180)
    a = ap.parse_args()

    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DREDUCE_LIBRARY", "DREDUCE_PREFIX")}
    base["PYTHONDONTWRITEBYTECODE"] = "1"
    probe = ("import numpy, mpi4py, setuptools; v = setuptools.__version__.split('.'); "
             "assert int(v[0]) >= 61, 'setuptools ' + setuptools.__version__ + ' < 61 (no pyproject [project])'")
    r = subprocess.run([a.python, "-c", probe], capture_output=True, text=True, env=base)
    if r.returncode == 0:
        r = subprocess.run([a.python, "-m", "pip", "--version"], capture_output=True, text=True, env=base)
    if r.returncode != 0:
        print(f"SKIP: {a.python} lacks pip, setuptools >= 61, numpy or mpi4py: "
              f"{(r.stderr.strip().splitlines() or ['?'])[-1]} "
              "(install python3-pip python3-setuptools python3-numpy python3-mpi4py)")
        return 77
    with tempfile.TemporaryDirectory(prefix="dreduce-pip-") as tmp:
        src, site, prefix = (os.path.join(tmp, d) for d in ("checkout/python", "site", "prefix"))
        # python/ as it sits in a checkout: setup.py takes the version from the CMakeLists.txt beside it.
        shutil.copytree(os.path.join(REPO, "python"), src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        shutil.copy2(os.path.join(REPO, "CMakeLists.txt"), os.path.join(tmp, "checkout"))
        rc, out = run([a.python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                       "--target", site, src], base, a.timeout)
        check("pip install --target", rc == 0 and os.path.isfile(os.path.join(site, "dreduce", "__init__.py")),
              f"exit {rc}:\n{out}")
        if failures:
            return 1
        os.makedirs(os.path.join(prefix, "lib64"))
        copy = os.path.join(prefix, "lib64", "libdreduce.so")
        shutil.copy2(a.library, copy)
        env = dict(base, PYTHONPATH=site, DREDUCE_PREFIX=prefix)
        rc, out = run([a.mpiexec] + launcher_flags(a.mpiexec) + ["-np", "2", a.python, "-m", "dreduce.demo", "-n",
                                                                 "1000", "--device", "cpu"], env, a.timeout)
        check("demo on 2 ranks (DREDUCE_PREFIX)", rc == 0 and "sum of 1000 float32" in out and
              "difference 0" in out and f"({copy})" in out, f"exit {rc}:\n{out}")
        probe = "import dreduce, sys; print(dreduce.__file__); print(dreduce.LIBRARY_PATH)"
        env = dict(base, PYTHONPATH=site, LD_LIBRARY_PATH=os.path.dirname(copy) + os.pathsep +
                   base.get("LD_LIBRARY_PATH", ""))
        rc, out = run([a.python, "-c", probe], env, a.timeout)
        check("found by the dynamic loader", rc == 0 and out.splitlines()[:2] ==
              [os.path.join(site, "dreduce", "__init__.py"), copy], f"exit {rc}:\n{out}")
        missing = os.path.join(tmp, "nowhere", "libdreduce.so")
        rc, out = run([a.python, "-c", "import dreduce"], dict(base, PYTHONPATH=site, DREDUCE_LIBRARY=missing),
                      a.timeout)
        check("DREDUCE_LIBRARY missing: ImportError", rc != 0 and "ImportError: dreduce: cannot find libdreduce.so"
              in out and missing in out and "DREDUCE_PREFIX" in out, f"exit {rc}:\n{out}")
    print(f"python_install: {4 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
