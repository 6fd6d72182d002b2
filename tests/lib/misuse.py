#!/usr/bin/env python3
"""Run one case of tests/lib/misuse.c under mpiexec, with a time limit (a hang is a failure: the whole process group
is killed), and check what the program cannot check itself: its exit status (0: every rank got the status the
contract promises), the messages on stderr (each regex must match a line; library messages must name cfg fields,
never an option of the program such as --timeout), and how many "dreduce: error:" lines there were.

usage: misuse.py --mpiexec MPIEXEC --exe TEST_MISUSE --case NAME --np N [--gpu] [--expect REGEX]... [--not REGEX]...
                 [--errors N] [--rc RC] [--timeout SECONDS]
Exit: 0 passed, 1 failed, 77 skipped (the program said it cannot run here)."""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from mpi_launcher import is_open_mpi, run_command  # noqa: E402

# A library message that names one of the program's options ("raise --timeout") instead of a cfg field.
OPTION_IN_MESSAGE = r"^dreduce: (error|warning): .*[ (]--[a-z]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--expect", action="append", default=[], help="a regex some stderr line must match")
    ap.add_argument("--not", dest="not_", action="append", default=[], help="a regex no stderr line may match")
    ap.add_argument("--errors", type=int, default=None, help="exact number of 'dreduce: error:' lines")
    ap.add_argument("--rc", type=int, default=0, help="expected exit status of the job")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()

    cmd = [a.mpiexec]
    if is_open_mpi(a.mpiexec):
        cmd += ["--oversubscribe"]
    cmd += ["-np", str(a.np), a.exe, a.case] + (["--gpu"] if a.gpu else [])
    rc, out, err, secs = run_command(cmd, a.timeout)
    sys.stdout.write(out)
    sys.stdout.write(err)
    why = []
    if rc is None:
        why.append(f"hung: killed after {a.timeout:g} s")
    elif rc == 77 and a.rc != 77:
        print(f"SKIP {a.case}: the program cannot run here")
        return 77
    elif rc != a.rc:
        why.append(f"exit status {rc}, expected {a.rc}")
    for rx in a.expect:
        if not re.search(rx, err, re.M):
            why.append(f"no stderr line matches /{rx}/")
    for rx in a.not_ + [OPTION_IN_MESSAGE]:
        m = re.search(rx, err, re.M)
        if m:
            why.append(f"stderr matches /{rx}/: {err[m.start():].splitlines()[0]}")
    errors = len(re.findall(r"^dreduce: error:", err, re.M))
    if a.errors is not None and errors != a.errors:
        why.append(f"{errors} 'dreduce: error:' lines, expected {a.errors}")
    if why:
        print(f"FAIL {a.case} (np {a.np}, {secs:.1f} s): " + "; ".join(why))
        return 1
    print(f"PASS {a.case} (np {a.np}, exit {rc}, {secs:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
