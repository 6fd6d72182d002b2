#!/usr/bin/env python3
"""One version: project(dreduce VERSION X.Y.Z) in CMakeLists.txt is the only place the number is written, and every
place that shows it must say the same: the generated dreduce/version.h, libdreduce's dreduce_version(), the
program's --version and its JSON report, pkg-config's dreduce.pc, the CMake package's version file, the Python
package (its setup.py's metadata version and dreduce.__version__), and the MAJOR.MINOR that examples/ asks
find_package for.

usage: check_versions.py SOURCE_DIR BUILD_DIR DREDUCE_PROGRAM LIBDREDUCE_SO [PYTHON]
Exit 0 when all agree, 1 naming each one that differs."""
import ctypes
import json
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 5 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    src, build, program, library = sys.argv[1:5]
    python = sys.argv[5] if len(sys.argv) > 5 else sys.executable
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        m = re.search(r"project\(dreduce\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", f.read())
    if not m:
        print("FAIL: no project(dreduce VERSION X.Y.Z) in CMakeLists.txt")
        return 1
    want = m.group(1)
    seen = {}

    with open(os.path.join(build, "include", "dreduce", "version.h")) as f:
        h = f.read()
    macros = {k: re.search(r"#define DREDUCE_VERSION_%s (\S+)" % k, h).group(1)
              for k in ("MAJOR", "MINOR", "PATCH", "STRING")}
    seen["dreduce/version.h MAJOR.MINOR.PATCH"] = "%s.%s.%s" % (macros["MAJOR"], macros["MINOR"], macros["PATCH"])
    seen["dreduce/version.h DREDUCE_VERSION_STRING"] = macros["STRING"].strip('"')

    # The example's find_package(dreduce X.Y): the package's version file accepts the same MAJOR.MINOR only
    # (SameMinorVersion), so the example asks for this one, written as X.Y.
    with open(os.path.join(src, "examples", "CMakeLists.txt")) as f:
        m = re.search(r"find_package\(dreduce\s+([0-9]+\.[0-9]+)\b", f.read())
    major_minor = ".".join(want.split(".")[:2])
    seen["examples/CMakeLists.txt find_package MAJOR.MINOR"] = (want if m and m.group(1) == major_minor
                                                                 else m.group(1) if m else "(none)")

    lib = ctypes.CDLL(library)
    lib.dreduce_version.restype = ctypes.c_char_p
    seen["dreduce_version()"] = lib.dreduce_version().decode()

    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run([program, "--version"], capture_output=True, text=True, env=env, timeout=60).stdout
    seen["dreduce --version"] = out.split()[-1] if out.split() else "(nothing)"
    r = subprocess.run([program, "--device", "cpu", "-n", "1000", "--iters", "1", "--warmup", "0", "--format", "json"],
                       capture_output=True, text=True, env=env, timeout=120)
    try:
        seen["dreduce --format json: version"] = json.loads(r.stdout)["version"]
    except (ValueError, KeyError) as e:
        seen["dreduce --format json: version"] = f"(unreadable: {e}; exit {r.returncode}: {r.stderr.strip()})"

    with open(os.path.join(build, "dreduce.pc")) as f:
        seen["dreduce.pc Version"] = re.search(r"^Version:\s*(\S+)", f.read(), re.M).group(1)
    with open(os.path.join(build, "dreduceConfigVersion.cmake")) as f:
        seen["dreduceConfigVersion.cmake"] = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', f.read()).group(1)

    # The Python package from python/: setup.py's version (pip's metadata) and dreduce.__version__ over this build's
    # library (its import needs numpy; without one that imports numpy this part is skipped, saying so).
    code = ("import runpy, sys, setuptools; setuptools.setup = lambda **kw: print(kw['version']); "
            "sys.argv = ['setup.py']; runpy.run_path(%r)" %
            os.path.join(src, "python", "setup.py"))
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    seen["python/setup.py version"] = r.stdout.strip() or f"(failed: {r.stderr.strip()})"
    penv = dict(env, PYTHONPATH=os.path.join(src, "python"), DREDUCE_LIBRARY=library, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([python, "-c", "import numpy, dreduce; print(dreduce.__version__)"], capture_output=True,
                       text=True, env=penv, timeout=120)
    if r.returncode == 0:
        seen["dreduce.__version__"] = r.stdout.strip()
    elif "No module named 'numpy'" in r.stderr or "No module named 'mpi4py'" in r.stderr:
        print(f"note: {python} lacks numpy or mpi4py: dreduce.__version__ not checked")
    else:
        seen["dreduce.__version__"] = f"(import failed: {r.stderr.strip().splitlines()[-1:]})"

    bad = [(k, v) for k, v in seen.items() if v != want]
    for k, v in seen.items():
        print(f"{'ok  ' if v == want else 'FAIL'} {k}: {v}")
    if bad:
        print(f"FAIL: {len(bad)} of {len(seen)} differ from CMakeLists.txt's project version {want}")
        return 1
    print(f"PASS: all {len(seen)} say {want}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
