#!/usr/bin/env python3
"""Determinism of the whole program: for every row of include/dreduce/table.h (type, op, accumulator), dreduce runs
the same reduction R times in one job (--iters R --warmup 0) and must report the same bits every time.

dreduce itself compares every repetition's result with the first (src/main.c) and exits 4, with "repetitions of the
same reduction gave different results", when one differs; here each run must exit 0 and its JSON report must say
verification.deterministic true, verification.pass true and config.iters R. (That a differing repetition does fail
the run is tested by mpi_determinism_can_fail and gpu_determinism_can_fail, tests/mpi/flaky_combine.c.)

Usage:
  determinism.py --mpiexec MPIEXEC --dreduce DREDUCE --np P --device cpu|gpu --sizes N[,N...] [--reps R]
                 [--jobs J] [--extra "dreduce args"]

--np 1 runs dreduce directly (an MPI singleton); more ranks run under MPIEXEC. --jobs runs that many cases at once
(0: one per 4 cores, at most 8). Exit status 0 if every case passed, 1 otherwise. Python 3 standard library only.
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import time

from mpi_launcher import launcher_flags

# The 50 rows of include/dreduce/table.h as dreduce's options select them: integers take every op (sum and prod
# accumulate in 64 bits whatever --acc says); float32 and the 16-bit floats take sum and prod in float64 (--acc wide)
# and in float32 (--acc native), min and max in float32; float64 takes the four arithmetic ops.
INT_TYPES = ["int32", "uint32", "int64", "uint64"]
NARROW_FLOATS = ["float32", "float16", "bfloat16"]
ROWS = ([(t, op, "wide") for t in INT_TYPES for op in ("sum", "prod", "min", "max", "band", "bor", "bxor")] +
        [(t, op, acc) for t in NARROW_FLOATS for op, acc in
         (("sum", "wide"), ("sum", "native"), ("prod", "wide"), ("prod", "native"), ("min", "wide"),
          ("max", "wide"))] +
        [("float64", op, "wide") for op in ("sum", "prod", "min", "max")])
assert len(ROWS) == 50, len(ROWS)


def run_one(cmd, reps, timeout):
    """(problems, seconds) of one run."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return ["timed out after %.0f s" % timeout], time.monotonic() - t0
    secs = time.monotonic() - t0
    problems = []
    if p.returncode != 0:
        problems.append("exit status %d, expected 0" % p.returncode)
    if "dreduce: error" in p.stderr:
        problems.append("stderr: %s" % p.stderr.strip().splitlines()[-1])
    try:
        d = json.loads(p.stdout)
        ver, cfg = d["verification"], d["config"]
        if ver.get("deterministic") is not True:
            problems.append("verification.deterministic is %r" % ver.get("deterministic"))
        if ver.get("pass") is not True:
            problems.append("verification.pass is %r: %s" % (ver.get("pass"), ver.get("detail")))
        if cfg.get("iters") != reps or cfg.get("warmup") != 0:
            problems.append("config.iters %r, warmup %r: expected %d and 0" % (cfg.get("iters"), cfg.get("warmup"),
                                                                             reps))
    except (ValueError, KeyError, TypeError) as e:
        problems.append("no JSON report on stdout (%s: %s)" % (type(e).__name__, e))
    if problems:
        problems.append("stderr tail: %s" % " | ".join(p.stderr.strip().splitlines()[-3:]))
    return problems, secs



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--dreduce", required=True)
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--device", choices=("cpu", "gpu"), required=True)
    ap.add_argument("--sizes", required=True, help="comma-separated element counts; every row runs each")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--extra", default="", help="more dreduce arguments for every run")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    a = ap.parse_args()

    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    jobs = a.jobs if a.jobs > 0 else max(1, min(8, (os.cpu_count() or 1) // 4))
    dreduce = os.path.abspath(a.dreduce)
    launch = [] if a.np == 1 else [a.mpiexec] + launcher_flags(a.mpiexec) + [
        "-np", str(a.np)]
    cases = []
    for n in a.sizes.split(","):
        for t, op, acc in ROWS:
            args = ["--device", a.device, "-n", n, "--type", t, "--op", op, "--acc", acc, "--iters", str(a.reps),
                    "--warmup", "0", "--format", "json"] + shlex.split(a.extra)
            cases.append(("%-8s %-4s %-6s n=%s" % (t, op, acc, n), launch + [dreduce] + args))

    t0 = time.monotonic()
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_one, cmd, a.reps, a.timeout) for _, cmd in cases]
        for (name, cmd), fut in zip(cases, futures):
            problems, secs = fut.result()
            print("%s %s, %d ranks, %d repetitions (%.1f s)" % ("FAIL" if problems else "PASS", name, a.np, a.reps,
                                                               secs), flush=True)
            if problems:
                failed += 1
                print("    command: %s" % " ".join(shlex.quote(c) for c in cmd))
                for p in problems:
                    print("    - %s" % p)
    print("%d passed, %d failed (%.1f s, %d at a time)" % (len(cases) - failed, failed, time.monotonic() - t0, jobs))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
