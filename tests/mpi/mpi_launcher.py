"""What the test scripts need to know about the MPI launcher, and how they run it (tests/mpi/run_cases.py,
determinism.py, tests/input/run_inputs.py)."""

import contextlib
import os
import signal
import subprocess
import tempfile
import time


def flavor(mpiexec):
    """'openmpi' (mpirun/mpiexec of Open MPI), 'mpich' (Hydra's mpiexec: MPICH, MVAPICH, Intel MPI) or 'other'."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "other"
    text = out.stdout + out.stderr
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text or "Intel(R) MPI" in text:
        return "mpich"
    return "other"


def is_open_mpi(mpiexec):
    """True if mpiexec is Open MPI's (it then takes --oversubscribe and the MCA options the scripts use)."""
    return flavor(mpiexec) == "openmpi"


def launcher_flags(mpiexec):
    """Flags every launch takes: Open MPI needs --oversubscribe for more ranks than cores; Hydra does that anyway."""
    return ["--oversubscribe"] if is_open_mpi(mpiexec) else []



@contextlib.contextmanager
def own_session_env():
    """This process's environment with an Open MPI session directory tree of the job's own, removed afterwards.
    Jobs at once under one tree race on its removal by the last to leave (open-mpi/ompi#8510); tests/CMakeLists.txt
    gives each test a tree (orte_tmpdir_base), and a script that runs several jobs at a time gives each job one
    inside it. Other MPIs ignore the variable."""
    base = os.environ.get("OMPI_MCA_orte_tmpdir_base")
    if base:
        os.makedirs(base, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ompi-", dir=base) as tmp:
        yield dict(os.environ, OMPI_MCA_orte_tmpdir_base=tmp)


def run_command(cmd, timeout, env=None):
    """(rc or None on timeout, stdout, stderr, seconds). The whole process group is killed on timeout, and what it
    printed until then is kept. env: the environment (default: this process's)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         stdin=subprocess.DEVNULL, env=env)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                p.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                pass
        try:
            out, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out, err = "", ""
        rc = None
    return rc, out or "", err or "", time.monotonic() - t0
