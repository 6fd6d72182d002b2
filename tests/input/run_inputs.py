#!/usr/bin/env python3
"""End-to-end --input tests: dreduce under mpiexec on the files of make_inputs.py, CPU backend, exact answers.

Usage:
  run_inputs.py --mpiexec MPIEXEC --dreduce DREDUCE --suite NAME [--suite NAME ...] [--inputs DIR] [--jobs N]
  run_inputs.py --list [--inputs DIR]

Suites: np1, np2, np3, np4 (good files: every file and op at 3 ranks; at 1, 2 and 4 ranks every file's sum and every
op of the large files; at every rank count every variant of a file, such as its --acc exact sum, and at 1 and 2
ranks the large files' variants with --threads 1, 3 and 7 on the CPU backend, which gives a thread 65536 elements at
least; NumPy's files of stats, argmin and argmax every op at 1 and 3 ranks), errors (every bad case at 1 and 4
ranks). argmin/argmax must give NumPy's index (numpy.argmin/argmax) and value exactly; stats its count, min, max
and integer sum exactly, its mean and variances within the manifest's bounds of NumPy's float64 ones.

A good case runs `mpiexec -np P dreduce --device cpu --format json --iters 2 --warmup 1 --input FILE --op OP [ARGS]`
and passes when the exit status is 0, nothing but the expected warning is on stderr, and the JSON report's result
has the manifest's accumulator type and value: exactly (integers, min/max, float sums of grid values: the exact
sum is a float64), NaN for NaN, the sign of a zero kept, or within the manifest's bound where the exact sum is not
a float64. A variant (a run with extra arguments, such as --acc exact) passes the same way; where the manifest gives
the result's bits (an exact sum rounded once to float64) the value must have exactly those bits (any NaN for a NaN:
the report prints every NaN as nan), and config.acc must be the --acc given. A bad case passes when every rank exits
with status 2, within the timeout, the message (one line naming the file and the problem; the problem alone for an
error of the options, such as a product with --acc exact) is printed exactly once, and no report is printed. With
Open MPI every rank's status is collected (ranks run through a shell that prints it; orte_abort_on_non_zero_status
off, so no rank is killed before it exits by itself); with another launcher only the launcher's status is checked.

Without --inputs the files are written to a temporary directory first. Python 3 standard library only. Exit
status 0 if every case passed, else 1.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mpi"))
from mpi_launcher import is_open_mpi, own_session_env, run_command  # noqa: E402
COMMON_ARGS = ["--format", "json", "--iters", "2", "--warmup", "1"]
DEVICE = ["--device", "cpu"]  # --device gpu: the same cases on the GPU backend
DEFAULT_TIMEOUT = 60.0
LARGE = 60000  # files with at least this many elements run every op at every rank count
THREADS = (1, 3, 7)  # --threads of the CPU backend for the large files' variants at 1 and 2 ranks (else once)
EXIT_TAG = "dreduce-rank-exit"


class Case:
    def __init__(self, name, np, file, args, op=None, expect=None, error=None, warning=False, names_file=True,
                 error_re=None):
        self.name, self.np, self.file, self.args, self.op = name, np, file, args, op
        self.expect, self.error, self.warning, self.names_file = expect, error, warning, names_file
        self.error_re = error_re  # the message: a line matching this regex (else one containing `error`)

    def is_message(self, line):
        return re.search(self.error_re, line) is not None if self.error_re else self.error in line


def load_manifest(inputs):
    with open(os.path.join(inputs, "manifest.json")) as f:
        return json.load(f)


def good_cases(m, inputs, np, all_ops):
    cases = []
    for g in m["good"]:
        # every_np (NumPy's stats/argmin/argmax files): every op at 1 and 3 ranks (and argmax at 2 and 4)
        every = all_ops or g["count"] >= LARGE or (g.get("every_np") and np in (1, 3))
        ops = list(g["expect"]) if every else list(g["expect"])[:1]
        for op in ops:
            cases.append(Case("np%d %s %s" % (np, g["file"], op), np, os.path.join(inputs, g["file"]), g["args"],
                              op=op, expect=g["expect"][op], warning="second array" in g.get("note", "")))
        for v in g.get("variants", []):
            for t in (THREADS if DEVICE[1] == "cpu" and g["count"] >= LARGE and np <= 2 else (None,)):
                threads = ["--threads", str(t)] if t else []
                cases.append(Case("np%d %s %s %s" % (np, g["file"], v["op"], " ".join(v["args"] + threads)), np,
                                  os.path.join(inputs, g["file"]), g["args"] + v["args"] + threads, op=v["op"],
                                  expect=v, warning="second array" in g.get("note", "")))
    return cases


def error_cases(m, inputs):
    cases = []
    for np in (1, 4):
        for b in m["bad"]:
            cases.append(Case("np%d bad %s %s" % (np, b["file"], " ".join(b["args"])), np,
                              os.path.join(inputs, b["file"]), b["args"], op=b["op"], error=b["error"],
                              names_file=b.get("names_file", True), error_re=b.get("error_re")))
    return cases


SUITES = {
    "np1": lambda m, d: good_cases(m, d, 1, False),
    "np2": lambda m, d: good_cases(m, d, 2, False),
    "np3": lambda m, d: good_cases(m, d, 3, True),
    "np4": lambda m, d: good_cases(m, d, 4, False),
    "errors": error_cases,
}



def command(case, mpiexec, dreduce, open_mpi):
    args = DEVICE + COMMON_ARGS + ["--input", case.file, "--op", case.op] + case.args
    if not open_mpi:
        return [mpiexec, "-np", str(case.np), dreduce] + args
    # Each rank prints its own exit status; no rank is killed because another exited non-zero first.
    wrapper = '"$0" "$@"; s=$?; echo "%s $s" >&2; exit $s' % EXIT_TAG
    return ([mpiexec, "--oversubscribe", "--mca", "orte_abort_on_non_zero_status", "0", "-np", str(case.np),
             "sh", "-c", wrapper, dreduce] + args)


def float_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def same_value(text, expect):
    """The report's value text against the manifest's (exact, or within the bound)."""
    want = expect["value"]
    if want == "none":  # no element: no value
        return text == "none"
    if expect["acc"] in ("int32", "int64", "uint32", "uint64"):
        try:
            return int(text) == int(want)
        except ValueError:
            return False
    try:
        got, w = float(text), float(want)
    except ValueError:
        return False
    if w != w:
        return got != got
    if "bits" in expect:  # an exact sum rounded once: these bits and no others
        return float_bits(got) == int(expect["bits"], 16)
    if "bound" in expect:
        return abs(got - w) <= float(expect["bound"])
    if expect["acc"] == "float32":  # printed with 9 digits: the nearest float32 is the value
        got = struct.unpack("<f", struct.pack("<f", got))[0]
    return float_bits(got) == float_bits(w)  # exact, and -0 is not +0


def check_new_op(res, op, expect, problems):
    """argmin/argmax: the value and NumPy's index exactly; stats: count, min, max (and an integer sum) exactly, the
    mean and variances within the manifest's bounds of NumPy's float64 answers (NaN for NaN)."""
    if op in ("argmin", "argmax"):
        if res.get("index") != expect["index"]:
            problems.append("result.index %r, expected %r (numpy.%s)" % (res.get("index"), expect["index"], op))
        if not same_value(str(res.get("value")), expect):
            problems.append("result.value %r, expected %s" % (res.get("value"), expect["value"]))
        return
    if res.get("count") != expect["count"]:
        problems.append("result.count %r, expected %r" % (res.get("count"), expect["count"]))
    for key in ("min", "max") + (("sum",) if "sum" in expect else ()):
        want = dict(value=expect[key], acc="float64" if expect["acc"] == "stats(float64)" else "int64")
        if not same_value(str(res.get(key)), want):
            problems.append("result.%s %r, expected %s" % (key, res.get(key), expect[key]))
    for key, bound in (("mean", lambda w: expect["mean_bound"]), ("var_pop", lambda w: expect["var_rel"] * abs(w)),
                       ("var_sample", lambda w: expect["var_rel"] * abs(w))):
        try:
            got, want = float(res.get(key)), float(expect[key])
        except (TypeError, ValueError):
            problems.append("result.%s %r is not a number" % (key, res.get(key)))
            continue
        ok = got != got if want != want else abs(got - want) <= bound(want)
        if not ok:
            problems.append("result.%s %r, NumPy's %s within %g" % (key, res.get(key), expect[key], bound(want)))


def check(case, rc, out, err, open_mpi):
    problems = []
    statuses = [int(s) for s in re.findall(r"^%s (\d+)$" % EXIT_TAG, err, re.M)]
    # dreduce's own lines start with "dreduce:"; anything else on stderr is the launcher's or the MPI's (Open MPI's
    # one-time cuMemHostRegister notice, say): not ours to judge (exit statuses catch a crash), so not checked.
    err_lines = [l for l in err.splitlines() if l.startswith("dreduce:")]
    if rc is None:
        return ["timed out"]
    if open_mpi and len(statuses) != case.np:
        problems.append("%d of %d ranks reported their exit status" % (len(statuses), case.np))
    if case.error is None:
        if rc != 0 or any(statuses):
            problems.append("exit status %s (ranks: %s), expected 0" % (rc, statuses))
        bad = [l for l in err_lines if l.strip() and not (case.warning and "warning" in l and case.file in l)]
        if bad:
            problems.append("unexpected stderr: %r" % bad[:3])
        if case.warning and not any("warning" in l for l in err_lines):
            problems.append("no warning about the bytes after the array")
        try:
            doc = json.loads(out)
        except ValueError as e:
            return problems + ["stdout is not one JSON document: %s" % e]
        res = doc.get("result", {}) if isinstance(doc, dict) else {}
        if res.get("type") != case.expect["acc"]:
            problems.append("result.type %r, expected %r" % (res.get("type"), case.expect["acc"]))
        if case.op in ("stats", "argmin", "argmax"):
            check_new_op(res, case.op, case.expect, problems)
        elif not same_value(str(res.get("value")), case.expect):
            problems.append("result.value %r, expected %s%s" % (res.get("value"), case.expect["value"],
                                                                 " within %s" % case.expect["bound"]
                                                                 if "bound" in case.expect else " exactly"))
        if "--acc" in case.args:
            acc = case.args[case.args.index("--acc") + 1]
            conf = doc.get("config", {}) if isinstance(doc, dict) else {}
            if conf.get("acc") != acc:
                problems.append("config.acc %r, expected %r" % (conf.get("acc"), acc))
        ver = doc.get("verification", {}) if isinstance(doc, dict) else {}
        if ver.get("pass") is not True:
            problems.append("verification did not pass: %r" % (ver,))
    else:
        if open_mpi:
            if statuses != [2] * case.np:
                problems.append("rank exit statuses %s, expected 2 on all %d ranks" % (statuses, case.np))
        elif rc != 2:
            problems.append("exit status %s, expected 2" % rc)
        hits = [l for l in err_lines if case.is_message(l)]
        if len(hits) != 1:
            problems.append("the message %r was printed %d times, expected once" % (case.error_re or case.error,
                                                                                     len(hits)))
        elif "dreduce: error:" not in hits[0] or (case.names_file and case.file not in hits[0]):
            problems.append("the message does not name the file: %r" % hits[0])
        others = [l for l in err_lines if l.strip() and not case.is_message(l)]
        if others:
            problems.append("other lines on stderr: %r" % others[:3])
        if out.strip():
            problems.append("something was printed on stdout: %r" % out[:200])
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--dreduce")
    ap.add_argument("--inputs", help="make_inputs.py's output directory (default: written to a temporary one)")
    ap.add_argument("--suite", action="append", default=[], choices=sorted(SUITES))
    ap.add_argument("--filter", help="run only cases whose name matches this regex")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per mpiexec run (default 60)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu", help="the backend (default cpu)")
    ap.add_argument("--jobs", default=os.environ.get("DREDUCE_TEST_JOBS", "1"),
                    help="cases run at once (default: $DREDUCE_TEST_JOBS, else 1)")
    a = ap.parse_args()
    if not a.jobs.isdigit() or int(a.jobs) < 1:
        ap.error("--jobs (or DREDUCE_TEST_JOBS) takes a whole number of at least 1, not '%s'" % a.jobs)
    a.jobs = int(a.jobs)
    DEVICE[1] = a.device
    if a.device == "gpu":
        DEVICE.append("--share-gpus")  # the 4-rank cases on a machine with fewer GPUs

    tmp = None
    inputs = a.inputs
    if not inputs:
        tmp = tempfile.TemporaryDirectory(prefix="dreduce-inputs-")
        inputs = tmp.name
        subprocess.run([sys.executable, os.path.join(HERE, "make_inputs.py"), inputs], check=True,
                       stdout=subprocess.DEVNULL)
    inputs = os.path.abspath(inputs)
    m = load_manifest(inputs)
    suites = a.suite or (sorted(SUITES) if a.list else [])
    cases = [c for s in suites for c in SUITES[s](m, inputs)]
    if a.filter:
        cases = [c for c in cases if re.search(a.filter, c.name)]
    if a.list:
        for c in cases:
            print(c.name)
        return 0
    if not a.dreduce or not cases:
        ap.error("--dreduce and at least one --suite are required")

    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    open_mpi = is_open_mpi(a.mpiexec)
    dreduce = os.path.abspath(a.dreduce)
    failed = 0
    t0 = time.monotonic()

    # Each case is a job of its own (its own mpiexec and session directory tree); with --jobs > 1 several run at
    # once, each under its own timeout, and the results print in the cases' order.
    def run(c):
        cmd = command(c, a.mpiexec, dreduce, open_mpi)
        with own_session_env() as env:
            rc, out, err, secs = run_command(cmd, a.timeout, env)
        return cmd, err, secs, check(c, rc, out, err, open_mpi)

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = [pool.submit(run, c) for c in cases]
        for c, result in zip(cases, results):
            cmd, err, secs, problems = result.result()
            print("%s %-60s (%.1f s)" % ("FAIL" if problems else "PASS", c.name, secs), flush=True)
            if problems:
                failed += 1
                print("    " + " ".join(shlex.quote(x) for x in cmd))
                for p in problems:
                    print("    - %s" % p)
                for l in err.strip().splitlines()[-8:]:
                    print("      stderr | %s" % l)
    print("%d cases, %d failed (%.0f s%s)" % (len(cases), failed, time.monotonic() - t0,
                                            ", %d at once" % a.jobs if a.jobs > 1 else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
