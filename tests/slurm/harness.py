#!/usr/bin/env python3
"""The slurm label: launch/scaling under mpirun, and the repository's sbatch scripts on a real one-node Slurm.

Usage:
  harness.py --source REPO --dreduce BIN --case scaling   launch/scaling under mpirun (CPU backend): CSV, plots,
                                                          summary, resume, MPIEXEC/MPIEXEC_FLAGS, loud failures
  harness.py --source REPO --dreduce BIN --case single    slurm/single.sbatch (and one that must fail)
  harness.py --source REPO --dreduce BIN --case weak      slurm/weak.sbatch: CSV rows, PNGs, verified results
  harness.py --source REPO --dreduce BIN --case strong    slurm/strong.sbatch, then again on its directory (resume)
  harness.py --serve DIR                                  start the cluster in DIR and wait (debugging: it prints
                                                          the SLURM_CONF to export)

The Slurm cases start a cluster of their own in a temporary directory, next to (and without touching) any Slurm
already running here: munged with its own key and socket; slurmctld and slurmd (Debian's, 22.05 or later) on free
ports, with a slurm.conf generated for this host (its CPU count from nproc, proctrack/linuxproc, task/none,
select/cons_tres, one partition, state, spool, logs and TmpFS in the directory, no accounting: a finished job's state
comes from `scontrol show job` and jobcomp/filetxt). The daemons run in the foreground as our children, die with
us (PR_SET_PDEATHSIG), and are stopped by PID at the end, on failure too. Jobs run the CPU backend with small sizes.

Exit status: 0 passed, 1 failed, 77 skipped (not root, or munge/Slurm/matplotlib missing: the reason is printed).
Python 3 standard library only (the scripts under test use matplotlib).
"""

import argparse
import csv
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
JOB_TIMEOUT = 150.0      # seconds a job may take from submission to its end
START_TIMEOUT = 40.0     # seconds for the daemons to come up and the node to be idle
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
            "PREEMPTED"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SMALL_ARGS = "--device cpu --iters 3 --warmup 1"


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def log(msg):
    print("[harness] %s" % msg, flush=True)


def check(cond, msg):
    if not cond:
        raise Fail(msg)


# ---------------------------------------------------------------------------------------------------------------
# A one-node Slurm of our own
# ---------------------------------------------------------------------------------------------------------------

def _die_with_parent():
    """preexec_fn: the daemon gets SIGTERM when the harness dies, even by SIGKILL (a ctest timeout)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)   # PR_SET_PDEATHSIG
    except OSError:
        pass
    os.setpgid(0, 0)


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def need_daemons():
    """Raise Skip with the reason when this machine cannot run the daemons."""
    if os.geteuid() != 0:
        raise Skip("the Slurm tests start slurmd, which must run as root (this is uid %d)" % os.geteuid())
    missing = [p for p in ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "srun", "scontrol", "scancel")
               if not shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
    if missing:
        raise Skip("missing %s (Debian: munge slurmctld slurmd slurm-client; launch/install-deps installs them)"
                   % " ".join(missing))


def which(p):
    return shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


class Cluster:
    def __init__(self, root):
        self.root = root
        self.procs = {}
        self.env = None
        self.host = socket.gethostname().split(".")[0]
        self.ncpus = len(os.sched_getaffinity(0))

    def path(self, *p):
        return os.path.join(self.root, *p)

    def start(self):
        # munged insists: socket directory reachable by all, key private to its owner.
        os.chmod(self.root, 0o755)
        for d in ("munge", "key", "state", "spool", "log", "tmp", "submit"):
            os.makedirs(self.path(d), exist_ok=True)
        os.chmod(self.path("key"), 0o700)
        key = self.path("key", "munge.key")
        r = subprocess.run([which("mungekey"), "--create", "--keyfile", key], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            with open(key, "wb") as f:
                f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        sock = self.path("munge", "munge.sock")
        self.spawn("munged", [which("munged"), "--foreground", "--force", "--socket", sock, "--key-file", key,
                              "--pid-file", self.path("munge", "munged.pid"),
                              "--seed-file", self.path("munge", "munged.seed"),
                              "--log-file", self.path("log", "munged.log")])
        self.wait_for(lambda: os.path.exists(sock), "munged's socket", 10)

        ctld_port, slurmd_port = free_ports(2)
        first_job = 100000 + int.from_bytes(os.urandom(3), "little") % 800000   # no job id shared with another Slurm
        conf = self.path("slurm.conf")
        with open(conf, "w") as f:
            f.write("""# generated by tests/slurm/harness.py for this host
ClusterName=drtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
TmpFS={root}/tmp
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig={root}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={root}/log/jobcomp.txt
FirstJobId={first_job}
MinJobAge=3600
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
InactiveLimit=0
MailProg=/bin/true
NodeName={host} NodeAddr=127.0.0.1 CPUs={ncpus} State=UNKNOWN
PartitionName=drtest Nodes={host} Default=YES MaxTime=INFINITE State=UP
""".format(host=self.host, ctld_port=ctld_port, slurmd_port=slurmd_port, sock=sock, root=self.root,
           first_job=first_job, ncpus=self.ncpus))
        open(self.path("plugstack.conf"), "w").close()
        self.env = dict(os.environ, SLURM_CONF=conf)
        for k in list(self.env):   # a surrounding allocation must not leak into ours
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del self.env[k]
        self.spawn("slurmctld", [which("slurmctld"), "-D", "-f", conf])
        self.spawn("slurmd", [which("slurmd"), "-D", "-f", conf])
        self.wait_for(self.node_idle, "the node to be idle", START_TIMEOUT)
        log("cluster up in %s: %s, %d CPU(s), ports %d/%d, srun --mpi=list: %s"
            % (self.root, self.host, self.ncpus, ctld_port, slurmd_port, " ".join(self.mpi_plugins())))

    def spawn(self, name, cmd):
        out = open(self.path("log", name + ".out"), "w")
        self.procs[name] = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                            env=self.env or os.environ, preexec_fn=_die_with_parent)
        out.close()

    def wait_for(self, cond, what, timeout):
        end = time.time() + timeout
        while time.time() < end:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise Fail("%s exited (status %s) while waiting for %s\n%s" % (name, p.returncode, what,
                                                                                   self.logs()))
            if cond():
                return
            time.sleep(0.2)
        raise Fail("timed out after %g s waiting for %s\n%s" % (timeout, what, self.logs()))

    def run(self, cmd, timeout=60, **kw):
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=kw.pop("env",
                              self.env), timeout=timeout, **kw)

    def node_idle(self):
        r = self.run(["scontrol", "-o", "show", "node", self.host], timeout=20)
        m = re.search(r"\bState=(\S+)", r.stdout)
        return r.returncode == 0 and m is not None and m.group(1).split("+")[0] == "IDLE"

    def mpi_plugins(self):
        r = self.run(["srun", "--mpi=list"], timeout=20)
        return re.findall(r"(?m)^\s*(?:srun: )?(?:mpi/)?(\w+)\s*$", r.stdout)

    def logs(self, lines=30):
        out = []
        for name in ("munged.out", "slurmctld.log", "slurmctld.out", "slurmd.log", "slurmd.out"):
            p = self.path("log", name)
            if os.path.exists(p):
                with open(p, errors="replace") as f:
                    tail = f.read().splitlines()[-lines:]
                if tail:
                    out.append("--- %s (last %d lines)\n%s" % (p, len(tail), "\n".join(tail)))
        return "\n".join(out)

    def submit(self, script, sbatch_args, env_extra, args=()):
        env = dict(self.env, **env_extra)
        r = self.run(["sbatch", "--parsable"] + sbatch_args + [script] + list(args), env=env, timeout=60,
                     cwd=self.path("submit"))
        check(r.returncode == 0 and r.stdout.strip().split(";")[0].isdigit(),
              "sbatch %s failed (status %d): %s" % (script, r.returncode, r.stdout))
        job = r.stdout.strip().split(";")[0]
        log("submitted %s as job %s" % (os.path.basename(script), job))
        return job

    def job_info(self, job):
        r = self.run(["scontrol", "-o", "show", "job", job], timeout=20)
        return dict(re.findall(r"(\w+)=(\S*)", r.stdout)) if r.returncode == 0 else {}

    def wait_job(self, job, timeout=JOB_TIMEOUT):
        end = time.time() + timeout
        info = {}
        while time.time() < end:
            info = self.job_info(job)
            if info.get("JobState") in TERMINAL:
                break
            for name, p in self.procs.items():
                check(p.poll() is None, "%s died while job %s ran\n%s" % (name, job, self.logs()))
            time.sleep(0.5)
        else:
            self.run(["scancel", job], timeout=20)
            raise Fail("job %s did not finish within %g s (state %s, reason %s)\n%s\n%s"
                       % (job, timeout, info.get("JobState"), info.get("Reason"), self.job_output(job), self.logs()))
        # jobcomp/filetxt: the completion record, written when the job ends.
        comp = ""
        end = time.time() + 10
        while time.time() < end and not comp:
            try:
                with open(self.path("log", "jobcomp.txt")) as f:
                    comp = next((l for l in f if re.search(r"\bJobId=%s\b" % job, l)), "")
            except FileNotFoundError:
                pass
            if not comp:
                time.sleep(0.2)
        m = re.search(r"\bJobState=(\S+)", comp)
        check(m is not None, "job %s: no record in %s" % (job, self.path("log", "jobcomp.txt")))
        check(m.group(1) == info.get("JobState"),
              "job %s: scontrol says %s, jobcomp says %s" % (job, info.get("JobState"), m.group(1)))
        return info

    def job_output(self, job):
        info = self.job_info(job)
        path = info.get("StdOut") or ""
        try:
            with open(path, errors="replace") as f:
                return "--- job %s output (%s)\n%s" % (job, path, f.read())
        except OSError:
            return "--- job %s: no output file (%r)" % (job, path)

    def stop(self):
        if self.env and "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            r = self.run(["squeue", "-h", "-o", "%i"], timeout=20)
            jobs = r.stdout.split() if r.returncode == 0 else []
            if jobs:
                self.run(["scancel"] + jobs, timeout=20)
                end = time.time() + 20
                while time.time() < end and self.run(["squeue", "-h", "-o", "%i"], timeout=20).stdout.strip():
                    time.sleep(0.5)
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ---------------------------------------------------------------------------------------------------------------
# Checks of a study's outputs
# ---------------------------------------------------------------------------------------------------------------

def parse_count(s):
    m = re.fullmatch(r"(\d+)([KMGT]i?)?", s)
    v = int(m.group(1))
    if m.group(2):
        v *= (1024 if m.group(2).endswith("i") else 1000) ** ("KMGT".index(m.group(2)[0]) + 1)
    return v


def check_png(path, min_bytes=8000):
    check(os.path.isfile(path), "missing plot %s" % path)
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == PNG_MAGIC, "%s is not a PNG" % path)
    check(len(data) >= min_bytes, "%s is only %d bytes" % (path, len(data)))
    w, h = struct.unpack(">II", data[16:24])   # IHDR
    check(w >= 400 and h >= 300, "%s is only %dx%d pixels" % (path, w, h))


def close(a, b, rel=1e-4):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def check_study(out, modes, ranks, sizes, types, nodes=1, host=None):
    """The CSV has exactly one row per (mode, P, n, type), each consistent with its verified JSON; the plots and the
    summary are there. Returns the rows."""
    csv_path = os.path.join(out, "scaling.csv")
    check(os.path.isfile(csv_path), "no %s" % csv_path)
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    want = {(m, P, parse_count(s), t) for m in modes for P in ranks for s in sizes for t in types}
    got = [(r["mode"], int(r["P"]), int(r["n"]), r["type"]) for r in rows]
    check(len(got) == len(set(got)) and set(got) == want,
          "CSV rows %s, expected one per %s" % (sorted(got), sorted(want)))
    for col in ("time_ms", "aggregate_gbs", "speedup", "efficiency", "local_ms_max_node_median",
                "node_ms_max_node_median", "global_ms_max_node_median"):
        check(col in rows[0], "CSV has no column %s (has %s)" % (col, ", ".join(rows[0])))
    reports = {}
    for r in rows:
        what = "%s P=%s n=%s %s" % (r["mode"], r["P"], r["size"], r["type"])
        with open(os.path.join(out, r["json"])) as f:
            d = json.load(f)
        reports[(r["mode"], int(r["P"]), int(r["n"]), r["type"])] = d
        c = d["config"]
        P, n = int(r["P"]), int(r["n"])
        check(c["ranks"] == P and len(d["ranks"]) == P, "%s: the JSON has %s ranks (MPI wiring?)" % (what, c["ranks"]))
        check(c["scaling"] == r["mode"] and c["type"] == r["type"] and c["n"] == n, "%s: JSON config %s" % (what, c))
        check(c["n_total"] == (n * P if r["mode"] == "weak" else n), "%s: n_total %s" % (what, c["n_total"]))
        check(c["nodes"] == nodes, "%s: %s nodes, expected %d" % (what, c["nodes"], nodes))
        check(sum(x["count"] for x in d["ranks"]) == c["n_total"], "%s: shards do not add up" % what)
        check(d["verification"]["enabled"] and d["verification"]["pass"] is True and r["verified"] == "pass",
              "%s: not verified: %s" % (what, d["verification"]))
        check(all(x["backend"] == "cpu" for x in d["ranks"]), "%s: not the CPU backend" % what)
        if host:
            check(all(x["host"] == host for x in d["ranks"]), "%s: ranks on %s, not %s"
                  % (what, {x["host"] for x in d["ranks"]}, host))
        check(float(r["time_ms"]) > 0 and close(float(r["time_ms"]), d["total_ms"]),
              "%s: time_ms %s but the JSON's total_ms is %s" % (what, r["time_ms"], d["total_ms"]))
        check(close(float(r["aggregate_gbs"]), d["aggregate_gbs"]), "%s: aggregate_gbs" % what)
        for lv in ("local", "node", "global"):
            meds = [x["median_ms"] for nd in d["nodes"] for x in nd["levels"] if x["level"] == lv]
            if not meds:  # a level with one participant is not run (issue #16): the CSV says nan
                check(r["%s_ms_max_node_median" % lv] == "nan", "%s: %s_ms_max_node_median %s for a level not run"
                      % (what, lv, r["%s_ms_max_node_median" % lv]))
                continue
            check(close(float(r["%s_ms_max_node_median" % lv]), max(meds)),
                  "%s: %s_ms_max_node_median %s, the nodes' medians are %s" % (what, lv, r[lv + "_ms_max_node_median"],
                                                                           meds))
    # Speedup and efficiency from the JSON times, against the smallest P of each series.
    p0 = min(ranks)
    for r in rows:
        key = (r["mode"], int(r["P"]), int(r["n"]), r["type"])
        t0 = reports[(r["mode"], p0, int(r["n"]), r["type"])]["total_ms"]
        tp = reports[key]["total_ms"]
        P = int(r["P"])
        if r["mode"] == "strong":
            speedup, eff = t0 / tp, p0 * t0 / (P * tp)
        else:
            speedup, eff = (P / p0) * t0 / tp, t0 / tp
        check(close(float(r["speedup"]), speedup) and close(float(r["efficiency"]), eff),
              "%s P=%d: speedup %s efficiency %s, expected %.6g %.6g" % (r["mode"], P, r["speedup"], r["efficiency"],
                                                                       speedup, eff))
        if P == p0:
            check(float(r["efficiency"]) == 1.0, "efficiency at the baseline P is %s" % r["efficiency"])
    for m in modes:
        for kind in ("time", "efficiency", "levels"):
            check_png(os.path.join(out, "%s_%s.png" % (m, kind)))
    for m in {"weak", "strong"} - set(modes):
        check(not os.path.exists(os.path.join(out, "%s_time.png" % m)), "a %s plot without %s runs" % (m, m))
    with open(os.path.join(out, "summary.md")) as f:
        md = f.read()
    table_rows = [l for l in md.splitlines() if re.match(r"\| \d+ \|", l)]
    check(len(table_rows) == len(rows), "summary.md has %d table rows for %d runs" % (len(table_rows), len(rows)))
    for m in modes:
        check("](%s_time.png)" % m in md, "summary.md does not show %s_time.png" % m)
    return rows


# ---------------------------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------------------------

def scaling_cmd(a, out, *args):
    return [sys.executable, os.path.join(a.source, "launch", "scaling"), "--dreduce", a.dreduce, "--out", out] + \
        list(args)


def run_driver(cmd, env=None, timeout=240):
    t0 = time.time()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)
    log("%s -> %d in %.1f s" % (" ".join(cmd[2:]), r.returncode, time.time() - t0))
    return r


def mpi_flavor(a, what=None):
    """launch/mpi-flavor for the binary under test: its MPI (openmpi, mpich), or with what='--launcher' its launcher."""
    cmd = [os.path.join(a.source, "launch", "mpi-flavor")] + ([what] if what else []) + [a.dreduce]
    return subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=60).stdout.strip()


def case_scaling(a, tmp):
    """launch/scaling under the binary's MPI launcher (mpirun, or Hydra's mpiexec for MPICH): a study, its resume,
    MPIEXEC and MPIEXEC_FLAGS, a failed run."""
    own = mpi_flavor(a, "--launcher")
    if not which(own):
        raise Skip("no %s (launch/install-deps)" % own)
    # Flags each launcher takes, for the MPIEXEC_FLAGS check.
    own_flags = "--mca btl self,vader --bind-to none" if mpi_flavor(a) != "mpich" else "-bind-to none -env DR_X 1"
    need_matplotlib()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}   # not inside any allocation
    for k in ("MPIEXEC", "MPIEXEC_FLAGS"):
        env.pop(k, None)
    out = os.path.join(tmp, "study")
    args = ["--ranks", "1,2", "--mode", "both", "--sizes", "256Ki", "--types", "float32,int64", "--", "--device",
            "cpu", "--iters", "3", "--warmup", "1"]
    r = run_driver(scaling_cmd(a, out, *args), env)
    check(r.returncode == 0, "the study failed:\n%s" % r.stdout)
    for i in range(1, 9):
        check(re.search(r"run %d/8 .*ETA \d+:\d\d" % i, r.stdout), "no progress line for run %d/8:\n%s" % (i, r.stdout))
    check("%s -np P" % own in r.stdout, "the launcher line does not show %s -np P:\n%s" % (own, r.stdout))
    check_study(out, ["weak", "strong"], [1, 2], ["256Ki"], ["float32", "int64"], host=socket.gethostname())
    runs = os.path.join(out, "runs")
    mtimes = {f: os.stat(os.path.join(runs, f)).st_mtime_ns for f in os.listdir(runs) if f.endswith(".json")}
    check(len(mtimes) == 8, "expected 8 JSON results, found %s" % sorted(mtimes))

    # Resume: nothing runs again.
    r = run_driver(scaling_cmd(a, out, *args), env)
    check(r.returncode == 0, "the second invocation failed:\n%s" % r.stdout)
    check(len(re.findall(r"skipped: result exists", r.stdout)) == 8 and "verification passed" not in r.stdout,
          "the second invocation did not skip all 8 runs:\n%s" % r.stdout)
    check(all(os.stat(os.path.join(runs, f)).st_mtime_ns == t for f, t in mtimes.items()), "a result was rewritten")

    # One result deleted, one truncated: exactly those two run again, through MPIEXEC with MPIEXEC_FLAGS.
    gone, cut = "strong-P2-n256Ki-int64.json", "weak-P1-n256Ki-float32.json"
    os.remove(os.path.join(runs, gone))
    with open(os.path.join(runs, cut), "r+") as f:
        f.truncate(100)
    wrapper = os.path.join(tmp, "mpiexec-wrapper")
    calls = os.path.join(tmp, "mpiexec-calls")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\necho "$*" >> %s\nexec %s "$@"\n' % (calls, own))
    os.chmod(wrapper, 0o755)
    env2 = dict(env, MPIEXEC=wrapper, MPIEXEC_FLAGS=own_flags)
    r = run_driver(scaling_cmd(a, out, *args), env2)
    check(r.returncode == 0, "the resumed study failed:\n%s" % r.stdout)
    check(len(re.findall(r"skipped: result exists", r.stdout)) == 6, "expected 6 skipped runs:\n%s" % r.stdout)
    check(re.search(r"run 1/8 .*\d s: .*verification passed", r.stdout) and
          re.search(r"run 8/8 .*verification passed", r.stdout) and "unreadable" in r.stdout,
          "runs 1 and 8 were not redone:\n%s" % r.stdout)
    with open(calls) as f:
        lines = [l for l in f.read().splitlines() if l != "--version"]   # the driver asks which MPI it is
    check(len(lines) == 2 and all(own_flags in l for l in lines) and
          lines[0].startswith("-np 1 ") and lines[1].startswith("-np 2 "),
          "MPIEXEC/MPIEXEC_FLAGS not used as expected: %s" % lines)
    check(all(os.stat(os.path.join(runs, f)).st_mtime_ns == t for f, t in mtimes.items() if f not in (gone, cut)),
          "a kept result was rewritten")
    check_study(out, ["weak", "strong"], [1, 2], ["256Ki"], ["float32", "int64"])

    # Other dreduce options on the same directory: refused, nothing mixed.
    r = run_driver(scaling_cmd(a, out, *(args + ["--op", "max"])), env)
    check(r.returncode != 0 and "holds 8 result(s)" in r.stdout, "mixing option sets was not refused:\n%s" % r.stdout)

    # A failing run stops the study loudly: its command, dreduce's message, non-zero status, no CSV.
    bad = os.path.join(tmp, "bad")
    r = run_driver(scaling_cmd(a, bad, "--ranks", "1,2", "--mode", "weak", "--sizes", "64Ki", "--types",
                               "int32,float32", "--", "--device", "cpu", "--op", "bxor"), env)
    check(r.returncode == 1, "a failed run gave status %d:\n%s" % (r.returncode, r.stdout))
    check(re.search(r"run weak-P1-n64Ki-float32 failed: exit status 2", r.stdout) and "command: " in r.stdout and
          re.search(r"dreduce: error: .*bxor", r.stdout), "the failure is not explained:\n%s" % r.stdout)
    check(not os.path.exists(os.path.join(bad, "scaling.csv")), "a CSV was written although a run failed")
    check(os.path.exists(os.path.join(bad, "runs", "weak-P2-n64Ki-int32.json")) and
          not os.path.exists(os.path.join(bad, "runs", "weak-P1-n64Ki-float32.json")),
          "the runs before the failure are not kept, or the failed one left a result")

    # In an allocation (4 nodes x 4 tasks, faked: --dry-run launches nothing): srun steps of 1, 2, 4 ranks on one
    # node, then 8 and 16 on 2 and 4 nodes, with the MPI plugin and the flags given.
    fake = dict(env, SLURM_JOB_ID="1", SLURM_JOB_NUM_NODES="4", SLURM_TASKS_PER_NODE="4(x4)", SLURM_NTASKS="16",
                MPIEXEC="srun", SRUN_MPI="pmix", MPIEXEC_FLAGS="--cpu-bind=none")
    r = run_driver(scaling_cmd(a, os.path.join(tmp, "dry"), "--dry-run", "--mode", "weak", "--sizes", "1Mi",
                               "--", "--device", "cpu"), fake)
    steps = re.findall(r"(?m)^srun --mpi=pmix -N (\d+) -n (\d+) --cpu-bind=none \S+dreduce .*--scaling weak -n 1Mi", r.stdout)
    check(r.returncode == 0 and steps == [("1", "1"), ("1", "2"), ("1", "4"), ("2", "8"), ("4", "16")],
          "srun steps in a 4 x 4 allocation: %s\n%s" % (steps, r.stdout))
    check(not os.path.exists(os.path.join(tmp, "dry")), "--dry-run wrote into its output directory")

    r = run_driver([sys.executable, os.path.join(a.source, "launch", "scaling"), "-h"], env)
    check(r.returncode == 0 and "usage: launch/scaling" in r.stdout and "--ranks" in r.stdout, "-h:\n%s" % r.stdout)


def need_matplotlib():
    if subprocess.run([sys.executable, "-c", "import matplotlib"], stderr=subprocess.DEVNULL).returncode != 0 and \
            subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"],
                           stderr=subprocess.DEVNULL).returncode != 0:
        raise Skip("no matplotlib (Debian: python3-matplotlib; launch/install-deps installs it)")


def with_cluster(fn):
    def run(a, tmp):
        need_daemons()
        need_matplotlib()
        cluster = Cluster(os.path.join(tmp, "slurm"))
        cluster.mpich = mpi_flavor(a) == "mpich"   # which srun plugin the scripts must choose (results_dir)
        os.makedirs(cluster.root)
        try:
            cluster.start()
            fn(a, cluster)
        finally:
            cluster.stop()
    return run


def job_env(a, **kw):
    env = {"DREDUCE_HOME": a.source, "DREDUCE": a.dreduce}
    env.update(kw)
    return env


def expect_completed(cluster, job):
    info = cluster.wait_job(job)
    out = cluster.job_output(job)
    check(info.get("JobState") == "COMPLETED" and info.get("ExitCode") == "0:0",
          "job %s ended %s, exit code %s\n%s" % (job, info.get("JobState"), info.get("ExitCode"), out))
    return out


def results_dir(cluster, job):
    d = cluster.path("submit", "results", job)
    check(os.path.isdir(d), "job %s wrote no %s" % (job, d))
    with open(os.path.join(d, "job.txt")) as f:
        txt = f.read()
    plugins = cluster.mpi_plugins()
    mpich = cluster.mpich   # the MPICH family: pmi2 only (launch/mpi-flavor)
    want = "pmix" if "pmix" in plugins and not mpich else "pmi2" if "pmi2" in plugins else None
    if want:
        check("--mpi=%s" % want in txt, "job.txt does not show srun --mpi=%s:\n%s" % (want, txt))
    return d


def case_single(a, cluster):
    two = ["--nodes=1", "--ntasks-per-node=2"]
    script = os.path.join(a.source, "slurm", "single.sbatch")
    good = cluster.submit(script, two, job_env(a, DREDUCE_ARGS="%s -n 3000001 --type int64 --data iota" % SMALL_ARGS))
    bad = cluster.submit(script, two, job_env(a, DREDUCE_ARGS="%s --type float32 --op band" % SMALL_ARGS))
    out = expect_completed(cluster, good)
    d = results_dir(cluster, good)
    with open(os.path.join(d, "dreduce.json")) as f:
        rep = json.load(f)
    n = 3000001
    check(rep["config"]["ranks"] == 2 and rep["verification"]["pass"] is True, "single job: %s" % rep["config"])
    check(rep["result"]["value"] == str(n * (n - 1) // 2), "sum of iota(%d) is %s" % (n, rep["result"]["value"]))
    check({x["local_rank"] for x in rep["ranks"]} == {0, 1} and len({x["host"] for x in rep["ranks"]}) == 1,
          "ranks not placed as 2 tasks on one node: %s" % [(x["host"], x["local_rank"]) for x in rep["ranks"]])
    check(re.search(r"verification passed", out) and re.search(r"(?m)^%s\s+\d" % re.escape(cluster.host), out),
          "the job output lacks the per-node report:\n%s" % out)
    info = cluster.wait_job(bad)
    bout = cluster.job_output(bad)
    check(info.get("JobState") == "FAILED" and info.get("ExitCode") != "0:0",
          "a job whose dreduce fails ended %s (%s)\n%s" % (info.get("JobState"), info.get("ExitCode"), bout))
    check(re.search(r"dreduce: error: .*band", bout), "the failed job's output lacks dreduce's message:\n%s" % bout)


def case_weak(a, cluster):
    script = os.path.join(a.source, "slurm", "weak.sbatch")
    job = cluster.submit(script, ["--nodes=1", "--ntasks-per-node=2"],
                         job_env(a, SIZES="256Ki", TYPES="float32,int64", DREDUCE_ARGS=SMALL_ARGS))
    out = expect_completed(cluster, job)
    d = results_dir(cluster, job)
    check(re.search(r"run 4/4 .*ETA", out), "no progress in the job output:\n%s" % out)
    check_study(d, ["weak"], [1, 2], ["256Ki"], ["float32", "int64"], host=socket.gethostname())
    check(not os.path.exists(os.path.join(d, "strong_time.png")), "strong plots in a weak study")


def case_strong(a, cluster):
    script = os.path.join(a.source, "slurm", "strong.sbatch")
    env = job_env(a, SIZES="1Mi", TYPES="float64", DREDUCE_ARGS=SMALL_ARGS)
    job = cluster.submit(script, ["--nodes=1", "--ntasks-per-node=2"], env)
    out = expect_completed(cluster, job)
    d = results_dir(cluster, job)
    check("run 2/2" in out, "no progress in the job output:\n%s" % out)
    check_study(d, ["strong"], [1, 2], ["1Mi"], ["float64"], host=socket.gethostname())
    # A second job on the first one's directory resumes it: nothing runs.
    again = cluster.submit(script, ["--nodes=1", "--ntasks-per-node=2"], dict(env, DREDUCE_OUT=d))
    out2 = expect_completed(cluster, again)
    check(out2.count("skipped: result exists") == 2 and "verification passed" not in out2,
          "the second job did not resume the first one's study:\n%s" % out2)
    check_study(d, ["strong"], [1, 2], ["1Mi"], ["float64"])


CASES = {"scaling": case_scaling, "single": with_cluster(case_single), "weak": with_cluster(case_weak),
         "strong": with_cluster(case_strong)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", help="the repository")
    p.add_argument("--dreduce", help="the dreduce binary")
    p.add_argument("--case", choices=sorted(CASES))
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.add_argument("--serve", metavar="DIR", help="start a cluster in DIR and wait for Ctrl-C")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(143))   # ctest's timeout: clean up through finally
    if a.serve:
        need_daemons()
        c = Cluster(os.path.abspath(a.serve))
        os.makedirs(c.root, exist_ok=True)
        try:
            c.start()
            print("export SLURM_CONF=%s" % c.path("slurm.conf"), flush=True)
            while all(p.poll() is None for p in c.procs.values()):
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        finally:
            c.stop()
        return 0
    if not (a.source and a.dreduce and a.case):
        p.error("--source, --dreduce and --case are required")
    a.source, a.dreduce = os.path.abspath(a.source), os.path.abspath(a.dreduce)
    tmp = tempfile.mkdtemp(prefix="dreduce-slurm-%s-" % a.case)
    t0 = time.time()
    status = 1
    try:
        CASES[a.case](a, tmp)
        status = 0
        log("PASS %s in %.1f s" % (a.case, time.time() - t0))
    except Skip as e:
        status = SKIP
        log("SKIP %s: %s" % (a.case, e))
    except Fail as e:
        log("FAIL %s: %s" % (a.case, e))
    except subprocess.TimeoutExpired as e:
        log("FAIL %s: timed out: %s" % (a.case, e))
    finally:
        if status == 0 and not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif status != SKIP:
            log("kept %s for inspection" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
