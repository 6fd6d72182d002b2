#!/usr/bin/env python3
"""Run a Python test script of the dreduce package under mpiexec, with a time limit (a hang is a failure: the whole
process group is killed), the package from the source tree (PYTHONPATH=python/) and the library under test
(DREDUCE_LIBRARY). Skips (exit 77, saying why) where the Python lacks numpy or mpi4py, or where its mpi4py was built
for another MPI than this mpiexec (an MPICH build tree with Debian's Open MPI mpi4py).

usage: run_mpi.py --mpiexec MPIEXEC --np N --python PYTHON --library LIBDREDUCE [--timeout S] SCRIPT [ARGS...]
Exit: the script's status (0 passed, 77 skipped), 1 when it hung or failed."""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "mpi"))
from mpi_launcher import flavor, run_command  # noqa: E402


def probe(python, env):
    """None when python has numpy and mpi4py, else why not; and the MPI library mpi4py uses."""
    code = "import numpy, mpi4py; from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])"
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{python} cannot run: {e}", ""
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return f"{python} lacks numpy or mpi4py ({last}): install python3-numpy python3-mpi4py", ""
    return None, r.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()

    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                                        else "")
    env["DREDUCE_LIBRARY"] = a.library
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")  # no __pycache__ in the source tree
    why, mpi = probe(a.python, env)
    if why:
        print(f"SKIP: {why}")
        return 77
    launcher = flavor(a.mpiexec)
    mpi4py_flavor = "openmpi" if "Open MPI" in mpi else "mpich" if ("MPICH" in mpi or "MVAPICH" in mpi or
                                                                  "Intel" in mpi) else "other"
    if "other" not in (launcher, mpi4py_flavor) and launcher != mpi4py_flavor:
        print(f"SKIP: {a.python}'s mpi4py uses {mpi!r}, but {a.mpiexec} is {launcher}'s launcher")
        return 77
    cmd = [a.mpiexec] + (["--oversubscribe"] if launcher == "openmpi" else []) + \
        ["-np", str(a.np), a.python, a.script] + a.args
    print("+ " + " ".join(cmd), flush=True)
    rc, out, err, secs = _run(cmd, a.timeout, env)
    sys.stdout.write(out)
    sys.stdout.write(err)
    if rc is None:
        print(f"FAIL: hung: killed after {a.timeout:g} s")
        return 1
    print(f"exit {rc} after {secs:.1f} s")
    return rc if rc in (0, 77) else 1


def _run(cmd, timeout, env):
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        return run_command(cmd, timeout)
    finally:
        os.environ.clear()
        os.environ.update(old)


if __name__ == "__main__":
    sys.exit(main())
