#!/usr/bin/env python3
"""Determinism of the whole program: for every row of src/common/table.h (type, op, accumulator), dreduce runs
the same reduction R times in one job (--iters R --warmup 0) and must report the same bits every time.

dreduce itself compares every repetition's result with the first (src/cli/main.c) and exits 4, with "repetitions of the
same reduction gave different results", when one differs; here each run must exit 0 and its JSON report must say
verification.deterministic true, verification.pass true and config.iters R. (That a differing repetition does fail
the run is tested by mpi_determinism_can_fail and gpu_determinism_can_fail, tests/mpi/flaky_combine.c.)

Usage:
  determinism.py --mpiexec MPIEXEC --dreduce DREDUCE --np P --device cpu|gpu --sizes N[,N...] [--reps R]
                 [--jobs J] [--extra "dreduce args"]
  determinism.py --mpiexec MPIEXEC --dreduce DREDUCE --across-np P[,P...] --device cpu|gpu --sizes N[,N...] ...

--np 1 runs dreduce directly (an MPI singleton); more ranks run under MPIEXEC. --jobs runs that many cases at once
(0: one per 4 cores, at most 8). Exit status 0 if every case passed, 1 otherwise. Python 3 standard library only.

--across-np (issue #37): the same at any scale. The rows of argmin and argmax (and of stats) run at every rank count
given, each run as above, and the results must be the same at every rank count: argmin/argmax's value and global
index to the bit; stats' count, min and max, and its sum and mean where they are exact (integers, --acc exact).
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import time

from mpi_launcher import launcher_flags, own_session_env

# The 50 rows of src/common/table.h as dreduce's options select them: integers take every op (sum and prod
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
# --across-np: argmin and argmax of these types, and stats where its sum and mean are exact (so the same bits at any
# scale): integers, and floats with --acc exact.
ACROSS_ROWS = ([(t, op, "wide") for t in ("int8", "uint64", "bfloat16", "float32") for op in ("argmin", "argmax")] +
               [("uint64", "stats", "wide"), ("float32", "stats", "exact")])
# The fields that must be the same at every rank count, by op.
ACROSS_FIELDS = {"argmin": ("value", "index"), "argmax": ("value", "index"),
                 "stats": ("count", "sum", "mean", "min", "max")}


def run_one(cmd, reps, timeout, result=None):
    """(problems, seconds) of one run; result (a dict): gets the report's result object."""
    t0 = time.monotonic()
    with own_session_env() as env:  # this script runs several at a time
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                               env=env)
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
        if result is not None:
            result.update(d["result"])
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
    ap.add_argument("--across-np", help="comma-separated rank counts: the argmin/argmax/stats rows at each, the "
                                        "results the same at every one (instead of --np)")
    a = ap.parse_args()
    if a.across_np:
        return across_np(a)

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


def across_np(a):
    """--across-np: every ACROSS_ROWS row at every rank count; each run checked as in main(), then the rows' results
    compared across the rank counts."""
    setup_env()
    jobs = a.jobs if a.jobs > 0 else max(1, min(8, (os.cpu_count() or 1) // 4))
    dreduce = os.path.abspath(a.dreduce)
    nps = [int(x) for x in a.across_np.split(",")]
    cases = []  # (row name, np, command)
    for n in a.sizes.split(","):
        for t, op, acc in ACROSS_ROWS:
            for np in nps:
                launch = [] if np == 1 else [a.mpiexec] + launcher_flags(a.mpiexec) + ["-np", str(np)]
                args = ["--device", a.device, "-n", n, "--type", t, "--op", op, "--acc", acc, "--iters", str(a.reps),
                        "--warmup", "0", "--format", "json"] + shlex.split(a.extra)
                cases.append(("%-8s %-6s %-5s n=%s" % (t, op, acc, n), op, np, launch + [dreduce] + args))
    t0 = time.monotonic()
    failed = 0
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = []
        for name, op, np, cmd in cases:
            res = {}
            futures.append((name, op, np, cmd, res, pool.submit(run_one, cmd, a.reps, a.timeout, res)))
        for name, op, np, cmd, res, fut in futures:
            problems, secs = fut.result()
            print("%s %s, %d ranks, %d repetitions (%.1f s)" % ("FAIL" if problems else "PASS", name, np, a.reps,
                                                               secs), flush=True)
            if problems:
                failed += 1
                print("    command: %s" % " ".join(shlex.quote(c) for c in cmd))
                for p in problems:
                    print("    - %s" % p)
            results.setdefault((name, op), []).append((np, res))
    for (name, op), runs in results.items():
        fields = ACROSS_FIELDS[op]
        first_np, first = runs[0]
        for np, res in runs[1:]:
            differ = [f for f in fields if res.get(f) != first.get(f)]
            if differ:
                failed += 1
                print("FAIL %s: %d ranks and %d ranks differ in %s: %s vs %s" % (
                    name, first_np, np, ", ".join(differ), {f: first.get(f) for f in differ},
                    {f: res.get(f) for f in differ}))
        print("%s %s: the same %s at %s ranks: %s" % ("PASS" if all(
            all(r.get(f) == first.get(f) for f in fields) for _, r in runs) else "FAIL", name, "/".join(fields),
            ",".join(str(np) for np, _ in runs), {f: first.get(f) for f in fields}), flush=True)
    print("%d runs, %d failures (%.1f s, %d at a time)" % (len(cases), failed, time.monotonic() - t0, jobs))
    return 0 if failed == 0 else 1


def setup_env():
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")


if __name__ == "__main__":
    sys.exit(main())
