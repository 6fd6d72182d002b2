"""The dreduce package's version, for pip's metadata: project(dreduce VERSION X.Y.Z) of the CMakeLists.txt beside
python/ (the one place the number is written; libdreduce, the program and dreduce.__version__ read the same)."""
import os
import re

from setuptools import setup


def project_version():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "CMakeLists.txt")
    try:
        with open(path) as f:
            m = re.search(r"project\(dreduce\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", f.read())
    except OSError as e:
        raise SystemExit(f"dreduce: cannot read the version from {path}: {e} (install from a dreduce checkout: "
                         "pip install ./python)")
    if not m:
        raise SystemExit(f"dreduce: no project(dreduce VERSION X.Y.Z) in {path}")
    return m.group(1)


setup(version=project_version())
