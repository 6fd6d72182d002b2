"""What the test scripts need to know about the MPI launcher (tests/mpi/run_cases.py, determinism.py,
tests/input/run_inputs.py)."""

import subprocess


def is_open_mpi(mpiexec):
    """True if mpiexec is Open MPI's (it then takes --oversubscribe and the MCA options the scripts use)."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
        return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        return False
