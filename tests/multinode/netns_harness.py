#!/usr/bin/env python3
"""Real multi-node Open MPI runs on one machine: network namespaces as nodes (the multinode label).

Usage:
  netns_harness.py --dreduce BIN case NAME     one test case (--list names them)
  netns_harness.py --dreduce BIN study [--nodes 2,3,4] [--ranks-per-node 2] [--iters 100] [--repeats 3] [--md FILE]
                                               hierarchical against flat combine as links get slower (docs/multinode.md)
  netns_harness.py up [--nodes N]              set up N nodes, print the mpirun line to use them, and leave them
  netns_harness.py down                        remove whatever a harness left: namespaces drn-*, /etc/hosts lines
  netns_harness.py --list

The machine becomes a small cluster. Each node is a network namespace (drn-n1, drn-n2, ...) whose eth0 is a veth into
a bridge in a head namespace (drn-h), addresses in 10.213.77.0/24, names in /etc/hosts (lines tagged
"# dreduce-multinode"). mpirun runs in the head namespace and starts one orted per node through an rsh agent (written
to a temporary directory) that enters the node: its network namespace, its own host name, its own /dev/shm (a private
mount namespace) and its own PID namespace. So MPI_Get_processor_name gives the node's name, MPI_COMM_TYPE_SHARED
splits per node, the shared-memory transport stays within a node, and traffic between nodes is TCP over the veths,
where links can be taken down. Nothing is added to the root network namespace. For the study, links with latency
and a rate come from a small userspace switch instead of the bridge (tc netem is not in every kernel): one TUN device
per node, every packet held for the latency, then serialised at the rate on its destination's port.

Ending: an agent is killed when mpirun dies (parent-death signal), and with it its node's PID namespace, as sshd ends
a session whose connection is gone. The head namespace gives up on an unanswered TCP peer after about 1.4 s
(net.ipv4.tcp_retries2 = 2; Linux's default, 15, would keep mpirun waiting about 15 minutes for a node that lost its
link). Every run is checked for processes left in the namespaces; at the end, and after any failure or signal, the
harness kills what is left (by PID, from `ip netns pids`) and deletes its namespaces and /etc/hosts lines by name;
a new run first removes what an earlier, killed one left.

Exit status: 0 passed, 1 failed, 77 skipped (not root, no `ip`/`unshare`/`setpriv`, not Open MPI, or namespaces
cannot be made here; the reason is printed). Python 3 standard library only; run_cases.py (tests/mpi) computes the
expected results.
"""

import argparse
import ctypes
import fcntl
import heapq
import json
import os
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from run_cases import expected_result, parse_dreduce_args, same_value  # noqa: E402

SKIP = 77
PREFIX = "drn-"
HEAD = "drn-h"
SUBNET = "10.213.77.0/24"
HEAD_ADDR = "10.213.77.1"
HOSTS_TAG = "# dreduce-multinode"
LOCK_FILE = "/run/lock/dreduce-multinode.lock"
RUN_TIMEOUT = 90.0       # seconds any one mpirun may take
LINGER = 8.0             # seconds the processes of a finished job get to disappear
COMMON = ["--device", "cpu", "--format", "json", "--iters", "3", "--warmup", "1"]


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def log(msg):
    print("[multinode] %s" % msg, flush=True)


def run(argv, check=True, timeout=30):
    """Run a setup command; its stderr is part of the error."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise Fail("%s: exit %d: %s" % (" ".join(argv), p.returncode, p.stderr.strip()))
    return p


def node_name(i):
    return "%sn%d" % (PREFIX, i + 1)


def node_addr(i):
    return "10.213.77.%d" % (11 + i)


# ---------------------------------------------------------------------------------------------------------------
# Can this machine do it?
# ---------------------------------------------------------------------------------------------------------------

def preflight():
    """Raise Skip with the reason when namespaces cannot be made or Open MPI is missing."""
    if os.geteuid() != 0:
        raise Skip("not root: network namespaces, veths and mounts need CAP_SYS_ADMIN and CAP_NET_ADMIN")
    for tool, package in (("ip", "iproute2"), ("unshare", "util-linux"), ("setpriv", "util-linux"),
                          ("mpirun", "openmpi-bin")):
        if not shutil.which(tool):
            raise Skip("no `%s` on PATH (Debian: apt-get install %s)" % (tool, package))
    version = run(["mpirun", "--version"], check=False).stdout
    if "Open MPI" not in version:
        raise Skip("mpirun is not Open MPI (the rsh agent and MCA options are Open MPI's): %s"
                   % version.strip().split("\n")[0])
    probe = PREFIX + "probe"
    run(["ip", "netns", "del", probe], check=False)
    p = run(["ip", "netns", "add", probe], check=False)
    if p.returncode != 0:
        raise Skip("cannot make a network namespace here (`ip netns add`): %s" % p.stderr.strip())
    try:
        for argv, what in ((["ip", "-n", probe, "link", "add", "b0", "type", "bridge"], "a bridge"),
                           (["ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1"], "a veth"),
                           (["ip", "netns", "exec", probe, "unshare", "--uts", "--mount", "--propagation", "private",
                             "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c",
                             "hostname x && mount -t tmpfs tmpfs /dev/shm"],
                            "UTS, mount and PID namespaces (unshare)")):
            p = run(argv, check=False)
            if p.returncode != 0:
                raise Skip("cannot make %s here: %s" % (what, p.stderr.strip()))
    finally:
        run(["ip", "netns", "del", probe], check=False)


# ---------------------------------------------------------------------------------------------------------------
# The cluster
# ---------------------------------------------------------------------------------------------------------------

AGENT = r"""#!/bin/sh
# Open MPI rsh agent (written by tests/multinode/netns_harness.py), in the role of ssh: "agent HOST COMMAND..." runs
# COMMAND as if on node HOST: in HOST's network namespace, with HOST as host name, its own /dev/shm and PID namespace.
# It ends with mpirun (parent-death signal), and the node with it (--kill-child); like ssh, it says so when the
# node's side ends by a signal.
[ -n "$DRN_AGENT" ] || DRN_AGENT=1 exec setpriv --pdeathsig KILL "$0" "$@"
host=$1; shift
setpriv --pdeathsig KILL ip netns exec "$host" \
  unshare --uts --mount --propagation private --pid --fork --kill-child --mount-proc \
  sh -c 'hostname "$0" && mount -t tmpfs tmpfs /dev/shm && exec sh -c "$1"' "$host" "$*"
status=$?
if [ "$status" -gt 128 ]; then
  echo "Connection to $host closed: the node's processes ended by signal $((status - 128))" >&2
fi
exit "$status"
"""


def die_with_parent():
    """preexec_fn: mpirun gets SIGKILL when the harness dies, even by SIGKILL (a ctest timeout); its agents, and so
    the nodes' processes, follow it (their own parent-death signal)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def namespaces():
    p = run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.startswith(PREFIX)]


def netns_pids(ns):
    p = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


def describe(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return "%d %s" % (pid, f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:120])
    except OSError:
        return "%d (gone)" % pid


def hosts_remove():
    """Drop our lines from /etc/hosts, rewriting it in place (it may be a bind mount: no rename)."""
    try:
        with open("/etc/hosts", "r+") as f:
            lines = f.readlines()
            keep = [line for line in lines if not line.rstrip().endswith(HOSTS_TAG)]
            if keep != lines:
                f.seek(0)
                f.writelines(keep)
                f.truncate()
    except OSError as e:
        log("cannot clean /etc/hosts: %s" % e)


def teardown_all():
    """Kill every process in our namespaces (by PID), delete the namespaces (by name) and our /etc/hosts lines."""
    for ns in namespaces():
        for pid in netns_pids(ns):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        run(["ip", "netns", "del", ns], check=False)
    hosts_remove()
    for name in os.listdir(tempfile.gettempdir()):  # the agents' directories (`up` leaves its own)
        path = os.path.join(tempfile.gettempdir(), name)
        if name.startswith(PREFIX) and os.path.isfile(os.path.join(path, "agent")):
            shutil.rmtree(path, ignore_errors=True)


def give_up_sooner(ns):
    """TCP in namespace ns gives up on a peer that acknowledges nothing after about 1.4 s of retransmissions
    (net.ipv4.tcp_retries2 = 2, per namespace; Linux's default, 15, takes about 15 minutes): mpirun, in the head
    namespace, then ends a job whose node was cut off instead of waiting for that node's daemon."""
    run(["ip", "netns", "exec", ns, "sh", "-c", "echo 2 > /proc/sys/net/ipv4/tcp_retries2"])


class Cluster:
    """N nodes behind one bridge; mpirun in the head namespace."""

    def __init__(self, nnodes):
        self.nodes = [node_name(i) for i in range(nnodes)]
        self.state = None
        self.agent = None

    def __enter__(self):
        teardown_all()  # what an earlier, killed run left
        self.state = tempfile.mkdtemp(prefix=PREFIX)
        self.agent = os.path.join(self.state, "agent")
        with open(self.agent, "w") as f:
            f.write(AGENT)
        os.chmod(self.agent, 0o755)
        try:
            self._up()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _up(self):
        h = ["ip", "-n", HEAD]
        run(["ip", "netns", "add", HEAD])
        run(h + ["link", "set", "lo", "up"])
        run(h + ["link", "add", "br0", "type", "bridge", "forward_delay", "0"])
        run(h + ["addr", "add", HEAD_ADDR + "/24", "dev", "br0"])
        run(h + ["link", "set", "br0", "up"])
        give_up_sooner(HEAD)
        lines = ["%s %s %s\n" % (HEAD_ADDR, HEAD, HOSTS_TAG)]
        for i, ns in enumerate(self.nodes):
            port = "p" + ns[len(PREFIX):]
            run(["ip", "netns", "add", ns])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            run(h + ["link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns])
            run(h + ["link", "set", port, "master", "br0", "up"])
            run(["ip", "-n", ns, "addr", "add", node_addr(i) + "/24", "dev", "eth0"])
            run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            lines.append("%s %s %s\n" % (node_addr(i), ns, HOSTS_TAG))
        hosts_remove()
        with open("/etc/hosts", "a") as f:
            f.writelines(lines)

    def __exit__(self, *exc):
        teardown_all()
        if self.state:
            shutil.rmtree(self.state, ignore_errors=True)
        return False

    def port(self, node):
        """The head-side end of the node's link (the switch port)."""
        return "p" + node[len(PREFIX):]

    def mpirun_argv(self, layout, program):
        """layout: ranks per node, in node order (mpirun maps by slot: ranks 0..layout[0]-1 on the first node)."""
        hosts = ",".join("%s:%d" % (n, k) for n, k in zip(self.nodes, layout) if k > 0)
        return ["ip", "netns", "exec", HEAD, "mpirun", "--leave-session-attached", "--bind-to", "none",
                "--mca", "plm_rsh_agent", self.agent, "--mca", "plm_rsh_no_tree_spawn", "1",
                "--mca", "oob_tcp_if_include", SUBNET, "--mca", "btl_tcp_if_include", SUBNET,
                "--mca", "btl", "self,vader,tcp", "-H", hosts, "-np", str(sum(layout))] + program

    def start(self, layout, program):
        argv = self.mpirun_argv(layout, program)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True, preexec_fn=die_with_parent)
        proc.argv_text = " ".join(shlex.quote(a) for a in argv)
        return proc

    def finish(self, proc, timeout=RUN_TIMEOUT):
        """Wait for mpirun; returns (exit status or None on timeout, stdout, stderr)."""
        try:
            out, err = proc.communicate(timeout=timeout)
            return proc.returncode, out, err
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return None, out, err

    def ranks_running(self, node, dreduce):
        """PIDs of dreduce processes in the node's network namespace."""
        pids = []
        for pid in netns_pids(node):
            try:
                if os.readlink("/proc/%d/exe" % pid) == dreduce:
                    pids.append(pid)
            except OSError:
                pass
        return pids

    def leftovers(self):
        """Processes still in any of our namespaces, waiting up to LINGER seconds for them to end."""
        deadline = time.monotonic() + LINGER
        while True:
            left = [(ns, pid) for ns in [HEAD] + self.nodes for pid in netns_pids(ns)]
            if not left or time.monotonic() > deadline:
                return ["%s: %s" % (ns, describe(pid)) for ns, pid in left]
            time.sleep(0.2)

    def kill_leftovers(self):
        for ns in [HEAD] + self.nodes:
            for pid in netns_pids(ns):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def set_link(self, node, up):
        run(["ip", "-n", HEAD, "link", "set", self.port(node), "up" if up else "down"])

    def shape(self, latency_us, rate_bps):
        """tc netem on both ends of every link (where the kernel has it), so that a packet between two nodes, which
        crosses two links, is held latency_us in all and sent at rate_bps."""
        for node in self.nodes:
            for ns, dev in ((HEAD, self.port(node)), (node, "eth0")):
                qdisc = ["netem", "delay", "%gus" % (latency_us / 2)] + (["rate", "%dbit" % rate_bps] if rate_bps else [])
                run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root"] + qdisc)


def netem_available():
    """None if tc netem works here, else the reason."""
    if not shutil.which("tc"):
        return "no `tc` (Debian: apt-get install iproute2)"
    probe = PREFIX + "probe"
    run(["ip", "netns", "del", probe], check=False)
    run(["ip", "netns", "add", probe])
    try:
        run(["ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        p = run(["tc", "-n", probe, "qdisc", "add", "dev", "v0", "root", "netem", "delay", "50us"], check=False)
        return None if p.returncode == 0 else "tc netem: %s" % (p.stderr.strip() or "exit %d" % p.returncode)
    finally:
        run(["ip", "netns", "del", probe], check=False)


# ---------------------------------------------------------------------------------------------------------------
# Checking a report
# ---------------------------------------------------------------------------------------------------------------

def check_report(doc, layout, nodes, args):
    """Problems (a list of lines) in the JSON report of a run with `layout` ranks on `nodes`."""
    problems = []

    def need(cond, msg):
        if not cond:
            problems.append(msg)
        return cond

    o = parse_dreduce_args(args)
    nranks = sum(layout)
    want, acc, n_total = expected_result(o, nranks)
    res, ver, cfg = doc.get("result", {}), doc.get("verification", {}), doc.get("config", {})
    need(res.get("type") == acc and same_value(str(res.get("value")), want, acc),
         "result %r (%r), expected %r (%s)" % (res.get("value"), res.get("type"), want, acc))
    need(ver.get("pass") is True and ver.get("exact") is True, "verification not an exact pass: %r" % (ver,))
    used = [n for n, k in zip(nodes, layout) if k > 0]
    for key, value in (("ranks", nranks), ("nodes", len(used)), ("emulated_nodes", False), ("n_total", n_total),
                       ("combine", o["combine"])):
        need(cfg.get(key) == value, "config.%s = %r, expected %r" % (key, cfg.get(key), value))
    host_of = [n for n, k in zip(nodes, layout) for _ in range(k)]
    ranks = sorted(doc.get("ranks", []), key=lambda r: r.get("rank", -1))
    need([r.get("host") for r in ranks] == host_of,
         "rank hosts %r, expected %r" % ([r.get("host") for r in ranks], host_of))
    hier = o["combine"] == "hier"
    got_nodes = sorted(doc.get("nodes", []), key=lambda x: x.get("node", -1))
    need([x.get("name") for x in got_nodes] == used,
         "node names %r, expected %r" % ([x.get("name") for x in got_nodes], used))
    for node, size in zip(got_nodes, [k for k in layout if k > 0]):
        # A level with one participant is not run (issue #16): no node level on a node of one rank, no global
        # level on one node; --allreduce on one node is the node level alone.
        if hier:
            want_levels = {"local", "total"} | ({"node"} if size > 1 else set()) | (
                {"global"} if len(used) > 1 else set()) | (
                {"bcast"} if o["allreduce"] and len(used) > 1 and size > 1 else set())
        else:
            want_levels = {"local", "total"} | ({"global"} if nranks > 1 else set())
        levels = {lv.get("level"): lv for lv in node.get("levels", [])}
        present = set(levels) & {"local", "node", "global", "bcast", "total"}
        if need(present == want_levels, "node %s has levels %s, expected %s"
                % (node.get("name"), sorted(present), sorted(want_levels))):
            for name in present:
                want_ranks = 1 if name == "global" and hier else size
                need(levels[name].get("ranks") == want_ranks, "node %s level %s over %r ranks, expected %d"
                     % (node.get("name"), name, levels[name].get("ranks"), want_ranks))
    return problems


def level_ms(doc, level, stat="median_ms"):
    """The level's time over all nodes: the largest of the nodes' medians (None where no node has the level)."""
    vals = [lv[stat] for n in doc.get("nodes", []) for lv in n.get("levels", [])
            if lv.get("level") == level and lv.get(stat) is not None]
    return max(vals) if vals else None


def show_report(doc):
    """The per-node lines of the report that the issue asks to see: real host names, node and global levels."""
    for n in sorted(doc.get("nodes", []), key=lambda x: x.get("node", -1)):
        parts = []
        for lv in n.get("levels", []):
            if lv.get("level") in ("local", "node", "global", "bcast", "total"):
                parts.append("%s %.4f ms (%d ranks)" % (lv["level"], lv["median_ms"], lv["ranks"]))
        log("    node %d %-8s %s" % (n.get("node"), n.get("name"), ", ".join(parts)))
    log("    result %s %s, verification: %s" % (doc["result"]["value"], doc["result"]["type"],
                                                doc["verification"].get("detail", "")))


def tail(text, lines=12):
    return "\n".join("      | " + line for line in text.rstrip("\n").split("\n")[-lines:])


# ---------------------------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------------------------

# Open MPI's rsh launcher sets the process group of each agent it forks from the parent as well as the child;
# when the child has already exec'd, the parent's call fails with EACCES and mpirun prints this warning. It is a
# race inside mpirun's own fork, harmless to the job, and not dreduce's output, so a successful run may carry it.
LAUNCHER_NOISE = re.compile(r"^\[[^\]]*\] plm:rsh: Warning: setpgid\(\d+,\d+\) failed in parent with errno=")


def own_stderr(err):
    """stderr without the launcher's known harmless lines."""
    return "\n".join(line for line in err.split("\n") if not LAUNCHER_NOISE.match(line))


def run_and_check(cluster, dreduce, layout, args):
    """One run that must succeed with the exact result and the real topology in its report."""
    args = shlex.split(args) + COMMON
    t0 = time.monotonic()
    proc = cluster.start(layout, [dreduce] + args)
    rc, out, err = cluster.finish(proc)
    secs = time.monotonic() - t0
    problems = []
    doc = None
    if rc != 0:
        problems.append("exit status %s, expected 0" % ("timeout" if rc is None else rc))
    elif own_stderr(err).strip():
        problems.append("stderr is not empty although the run succeeded")
    else:
        try:
            doc = json.loads(out)
            problems += check_report(doc, layout, cluster.nodes, args)
        except ValueError as e:
            problems.append("stdout is not one JSON document: %s" % e)
    left = cluster.leftovers()
    if left:
        problems.append("processes left after the job: %s" % "; ".join(left))
        cluster.kill_leftovers()
    log("%s %s (%.1f s)" % ("FAIL" if problems else "PASS", "ranks per node %s: dreduce %s"
                            % (layout, " ".join(args)), secs))
    if doc is not None:
        show_report(doc)
    if problems:
        for p in problems:
            log("    - %s" % p)
        log("    command: %s\n    stderr:\n%s" % (proc.argv_text, tail(err)))
    return not problems


def case_two_nodes(dreduce):
    with Cluster(2) as c:
        ok = run_and_check(c, dreduce, [2, 2], "-n 1000003 --type int64 --op sum --data iota")
        ok &= run_and_check(c, dreduce, [2, 2], "-n 1000003 --type int64 --op sum --data iota --combine flat")
        ok &= run_and_check(c, dreduce, [2, 2], "-n 999999 --type uint32 --op max --data iota --allreduce")
    return ok


def case_three_nodes_uneven(dreduce):
    with Cluster(3) as c:
        ok = run_and_check(c, dreduce, [2, 1, 3], "-n 1000003 --type int64 --op sum --data iota")
        ok &= run_and_check(c, dreduce, [2, 1, 3], "-n 1000003 --type int32 --op sum --data ones --combine flat")
        ok &= run_and_check(c, dreduce, [1, 3, 2], "-n 65536 --type int64 --op max --data iota --scaling weak "
                                                   "--allreduce")
    return ok


def fault_run(cluster, dreduce, layout, victim, fault, timeout, expect, limit):
    """Start a long run, let it settle, do `fault` to node `victim`, and check how the job ends: a stderr line
    matching `expect` within timeout + 1.5 s of the fault (a rank names the level and the node after --timeout and
    half a second of pings; the rest is slack for a loaded machine), mpirun's non-zero exit within `limit` seconds of
    it, and no process left in any namespace."""
    args = ["-n", "4Mi", "--type", "int64", "--device", "cpu", "--iters", "1000000", "--warmup", "1",
            "--timeout", str(timeout)]
    proc = cluster.start(layout, [dreduce] + args)
    lines = []  # (seconds since start, line) of stderr, read as it comes
    reader = threading.Thread(target=lambda: [lines.append((time.monotonic(), line)) for line in proc.stderr],
                              daemon=True)
    reader.start()
    # Mid-run: every rank started, then 2 s (hundreds of repetitions of a few ms).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        if sum(len(cluster.ranks_running(n, dreduce)) for n in cluster.nodes) == sum(layout):
            break
        time.sleep(0.1)
    time.sleep(2.0)
    problems = []
    if proc.poll() is not None:
        problems.append("the job ended before the fault (exit %s)" % proc.returncode)
    what = fault(cluster, victim)
    t_fault = time.monotonic()
    try:
        rc = proc.wait(timeout=limit + 30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = None
    secs = time.monotonic() - t_fault
    reader.join(timeout=5)
    err = "".join(line for _, line in lines)
    if rc is None:
        problems.append("mpirun still running %.0f s after the fault (killed)" % (limit + 30))
    elif rc == 0:
        problems.append("exit status 0 after the fault")
    if secs > limit:
        problems.append("the job took %.1f s after the fault to end, more than %.0f s" % (secs, limit))
    first = next(((t, line) for t, line in lines if re.search(expect, line)), None)
    if first is None:
        problems.append("no line on stderr matches /%s/" % expect)
    elif first[0] - t_fault > timeout + 1.5:
        problems.append("the message came %.1f s after the fault, more than --timeout + 1.5 s" % (first[0] - t_fault))
    left = cluster.leftovers()
    if left:
        problems.append("processes left after the job: %s" % "; ".join(left))
        cluster.kill_leftovers()
    log("%s %s: %s; mpirun exit %s %.1f s after the fault, no process left: %s" % (
        "FAIL" if problems else "PASS", what,
        "message %.1f s after it" % (first[0] - t_fault) if first else "no message", rc, secs, not left))
    if first:
        log("    %s" % first[1].strip())
    for p in problems:
        log("    - %s" % p)
    if problems:
        log("    command: %s\n    stderr:\n%s" % (proc.argv_text, tail(err, 20)))
    return not problems


def link_down(cluster, node):
    cluster.set_link(node, False)
    return "link of %s taken down (ip link set %s down, in %s)" % (node, cluster.port(node), HEAD)


def node_killed(cluster, node):
    pids = netns_pids(node)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return "every process of %s killed (%d: its daemon, ranks and PID namespace)" % (node, len(pids))


def ranks_killed(dreduce):
    def fault(cluster, node):
        pids = cluster.ranks_running(node, dreduce)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return "the dreduce processes of %s killed (PIDs %s)" % (node, ", ".join(map(str, pids)))
    return fault


# What a rank that names the lost node prints (watchdog.c): the root of the level it waits in, or a member whose root
# is the one lost.
NAMED = r"timed out after %g s waiting in the (global|start)[^:]* level: no answer from node %s \(rank"
FAULT_TIMEOUT = 3
FAULT_LIMIT = FAULT_TIMEOUT + 6  # seconds from the fault to mpirun's exit: --timeout, 1 s of grace, the launcher's end


def case_link_down(dreduce):
    with Cluster(2) as c:
        return fault_run(c, dreduce, [2, 2], "drn-n2", link_down, FAULT_TIMEOUT, NAMED % (FAULT_TIMEOUT, "drn-n2"),
                         FAULT_LIMIT)


def case_link_down_root(dreduce):
    # The node of rank 0, the root of every level, is cut off: the other node's ranks name it.
    with Cluster(2) as c:
        return fault_run(c, dreduce, [2, 2], "drn-n1", link_down, FAULT_TIMEOUT, NAMED % (FAULT_TIMEOUT, "drn-n1"),
                         FAULT_LIMIT)


def case_link_down_three(dreduce):
    with Cluster(3) as c:
        return fault_run(c, dreduce, [2, 1, 3], "drn-n3", link_down, FAULT_TIMEOUT,
                         NAMED % (FAULT_TIMEOUT, "drn-n3"), FAULT_LIMIT)


def case_node_killed(dreduce):
    # Dead processes close their connections: Open MPI notices within a second or two and mpirun names the node
    # and ends the job before any --timeout (so no dreduce line is expected here).
    with Cluster(2) as c:
        ok = fault_run(c, dreduce, [2, 2], "drn-n2", node_killed, 10,
                       r"Connection to drn-n2 closed", 5)
        ok &= fault_run(c, dreduce, [2, 2], "drn-n2", ranks_killed(dreduce), 10,
                        r"process rank [23] with PID .* on node drn-n2 exited on signal 9", 5)
    return ok


CASES = {
    "two_nodes": (case_two_nodes, "2 nodes x 2 ranks: hierarchical, flat, --allreduce; exact results"),
    "three_nodes_uneven": (case_three_nodes_uneven, "3 nodes of 2, 1, 3 (and 1, 3, 2) ranks: hierarchical, flat, "
                                                    "weak scaling with --allreduce; exact results"),
    "link_down": (case_link_down, "2 nodes: drn-n2's link taken down mid-run; the level and drn-n2 named"),
    "link_down_root": (case_link_down_root, "2 nodes: the link of rank 0's node taken down; the other node names it"),
    "link_down_three": (case_link_down_three, "3 uneven nodes: drn-n3's link taken down mid-run"),
    "node_killed": (case_node_killed, "2 nodes: all of drn-n2's processes killed, then only its ranks"),
}


# ---------------------------------------------------------------------------------------------------------------
# A switch with latency (the study's links, where tc netem is missing)
# ---------------------------------------------------------------------------------------------------------------

TUNSETIFF, IFF_TUN, IFF_NO_PI = 0x400454CA, 0x0001, 0x1000


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def serve_switch(nnodes, latency_us, rate_bps):
    """The switch process (run in the head namespace by SwitchCluster): one TUN device per node, moved into the node
    as its eth0, and one (sw0) for the head. Every IPv4 packet is held latency_us, then serialised at rate_bps on its
    destination's port (a packet waits for the one before it there), then delivered. Prints "ready" when the links
    are up; runs until killed. Real-time priority and a 1 ns timer slack keep its own delay small (measured in
    docs/multinode.md with latency 0)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG: ends with the harness
    libc.prctl(29, 1, 0, 0, 0)                # PR_SET_TIMERSLACK: 1 ns
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except OSError as e:
        log("switch: no real-time priority (%s); its delay will be larger" % e)
    port_of = {HEAD_ADDR: 0}
    fds = [open_tun("sw0")]
    run(["ip", "addr", "add", HEAD_ADDR + "/24", "dev", "sw0"])
    run(["ip", "link", "set", "sw0", "up"])
    for i in range(nnodes):
        name = "t%d" % (i + 1)
        fds.append(open_tun(name))
        run(["ip", "link", "set", name, "netns", node_name(i), "name", "eth0"])
        run(["ip", "-n", node_name(i), "addr", "add", node_addr(i) + "/24", "dev", "eth0"])
        run(["ip", "-n", node_name(i), "link", "set", "eth0", "up"])
        port_of[node_addr(i)] = i + 1
    ports = {bytes(int(x) for x in addr.split(".")): p for addr, p in port_of.items()}
    latency = latency_us * 1e-6
    busy = [0.0] * len(fds)   # when each destination port has finished sending what it holds
    queue = []                # (delivery time, sequence, port, packet)
    seq = 0
    print("ready", flush=True)
    while True:
        now = time.monotonic()
        timeout = max(0.0, queue[0][0] - now) if queue else None
        readable, _, _ = select.select(fds, [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[16:20] not in ports:
                    continue
                out = ports[pkt[16:20]]
                at = max(now + latency, busy[out]) + (len(pkt) * 8 / rate_bps if rate_bps else 0.0)
                busy[out] = at
                heapq.heappush(queue, (at, seq, out, pkt))
                seq += 1
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, out, pkt = heapq.heappop(queue)
            try:
                os.write(fds[out], pkt)
            except OSError:
                pass  # a full queue drops, as a real port would


class SwitchCluster(Cluster):
    """N nodes behind the userspace switch (serve_switch) instead of the bridge."""

    def __init__(self, nnodes, latency_us, rate_bps):
        super().__init__(nnodes)
        self.latency_us, self.rate_bps = latency_us, rate_bps
        self.switch = None

    def _up(self):
        run(["ip", "netns", "add", HEAD])
        run(["ip", "-n", HEAD, "link", "set", "lo", "up"])
        give_up_sooner(HEAD)
        for ns in self.nodes:
            run(["ip", "netns", "add", ns])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
        self.switch = subprocess.Popen(
            ["ip", "netns", "exec", HEAD, sys.executable, os.path.abspath(__file__), "switch",
             "--nodes", str(len(self.nodes)), "--latency-us", str(self.latency_us), "--rate", str(self.rate_bps or 0)],
            stdout=subprocess.PIPE, text=True)
        if self.switch.stdout.readline().strip() != "ready":
            raise Fail("the switch did not start (exit %s)" % self.switch.poll())
        with open("/etc/hosts", "a") as f:
            f.writelines(["%s %s %s\n" % (HEAD_ADDR, HEAD, HOSTS_TAG)] +
                         ["%s %s %s\n" % (node_addr(i), ns, HOSTS_TAG) for i, ns in enumerate(self.nodes)])

    def __exit__(self, *exc):
        if self.switch and self.switch.poll() is None:
            self.switch.kill()
            self.switch.wait()
        return super().__exit__(*exc)


# ---------------------------------------------------------------------------------------------------------------
# Study: hierarchical against flat over shaped links
# ---------------------------------------------------------------------------------------------------------------

ECHO = r"""
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("", 7405)); s.listen(1)
print("listening", flush=True)
c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    b = c.recv(64)
    if not b:
        break
    c.sendall(b)
"""

PING = r"""
import socket, sys, time
c = socket.create_connection((sys.argv[1], 7405)); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
rtts = []
for _ in range(2000):
    t = time.perf_counter(); c.sendall(b"12345678"); c.recv(64); rtts.append(time.perf_counter() - t)
rtts.sort(); print(rtts[len(rtts) // 2] * 1e6)
"""


def round_trip_us(cluster):
    """Median round trip of 8 bytes over TCP between the first two nodes (2000 of them), in microseconds."""
    server = subprocess.Popen(["ip", "netns", "exec", cluster.nodes[1], sys.executable, "-c", ECHO],
                              stdout=subprocess.PIPE, text=True)
    try:
        server.stdout.readline()
        p = run(["ip", "netns", "exec", cluster.nodes[0], sys.executable, "-c", PING, node_addr(1)], timeout=120)
        return float(p.stdout)
    finally:
        server.kill()
        server.wait()


# The study's links: (label, latency in us, rate in bit/s; None: the bridge's plain veths).
LINKS = [("veth, bridge", None, None),
         ("switch, +0 us", 0, None),
         ("switch, 2 us, 100 Gbit/s", 2, 100e9),
         ("switch, 50 us, 10 Gbit/s", 50, 10e9),
         ("switch, 500 us, 10 Gbit/s", 500, 10e9),
         ("switch, 5 ms, 10 Gbit/s", 5000, 10e9)]


def study(dreduce, node_counts, rpn, iters, repeats, md, shaper):
    """Every node count x link x combine, `repeats` runs each (interleaved); the median over the runs of each run's
    medians: the node and global levels (the slowest node's median) and total (rank 0's median). shaper: "switch"
    (the userspace switch) or "netem" (tc netem on the veths, where the kernel has it)."""
    netem = netem_available()
    log("tc netem: %s" % ("available" if netem is None else "not available here (%s)" % netem))
    if shaper == "netem" and netem is not None:
        raise Fail("--shaper netem: %s" % netem)
    args = ["-n", "1M", "--type", "int64", "--device", "cpu", "--format", "json", "--iters", str(iters),
            "--warmup", "10", "--timeout", "120"]
    rows, rtts = [], {}
    for nn in node_counts:
        for label, latency, rate in LINKS:
            if latency is None or shaper == "netem":
                cluster = Cluster(nn)
                label = label.replace("switch", "netem") if latency is not None else label
            else:
                cluster = SwitchCluster(nn, latency, rate)
            with cluster as c:
                if latency is not None and shaper == "netem":
                    c.shape(latency, rate)
                if nn == node_counts[0]:
                    rtt = round_trip_us(c)
                    log("%s: TCP round trip between two nodes %.1f us (median of 2000)" % (label, rtt))
                    rtts[label] = rtt
                got = {"hier": [], "flat": []}
                for _ in range(repeats):
                    for combine in ("hier", "flat"):
                        argv = c.mpirun_argv([rpn] * nn, [dreduce] + args + ["--combine", combine])
                        argv[argv.index("-H"):argv.index("-H")] = ["--mca", "mpi_yield_when_idle", "1"]
                        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                           timeout=RUN_TIMEOUT, env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                                                                         OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
                        if p.returncode != 0:
                            raise Fail("study run failed (exit %d): %s\n%s" % (p.returncode, " ".join(argv),
                                                                                tail(p.stderr)))
                        doc = json.loads(p.stdout)
                        got[combine].append((level_ms(doc, "node"), level_ms(doc, "global"), doc["total_ms"]))
                for combine in ("hier", "flat"):
                    med = [median([x[k] for x in got[combine]]) for k in range(3)]
                    rows.append({"nodes": nn, "link": label, "combine": combine, "node": med[0], "global": med[1],
                                 "total": med[2]})
                    log("%d nodes x %d, %-26s %s: node %s, global %s, total %s ms" % (
                        nn, rpn, label, combine, fmt(med[0]), fmt(med[1]), fmt(med[2])))
    table = ["| link | TCP round trip (µs) |", "|---|---|"] + ["| %s | %.1f |" % (k, v) for k, v in rtts.items()]
    head = ("| nodes × ranks | link | hier node ms | hier global ms | hier total ms | flat global ms | flat total ms "
            "| flat − hier |")
    table += ["", head, "|---|---|---|---|---|---|---|---|"]
    for nn in node_counts:
        for label in dict.fromkeys(r["link"] for r in rows):
            h = next(r for r in rows if r["nodes"] == nn and r["link"] == label and r["combine"] == "hier")
            f = next(r for r in rows if r["nodes"] == nn and r["link"] == label and r["combine"] == "flat")
            table.append("| %d × %d | %s | %s | %s | %s | %s | %s | %.2f |" % (
                nn, rpn, label, fmt(h["node"]), fmt(h["global"]), fmt(h["total"]), fmt(f["global"]),
                fmt(f["total"]), f["total"] - h["total"]))
    text = "\n".join(table) + "\n"
    print(text, flush=True)
    if md:
        with open(md, "w") as f:
            f.write(text)
    return True


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def fmt(v):
    return "-" if v is None else "%.4f" % v


# ---------------------------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dreduce", help="the dreduce binary")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("mode", nargs="?", choices=["case", "study", "up", "down", "switch"])
    ap.add_argument("name", nargs="?", help="case: its name")
    ap.add_argument("--nodes", default=None, help="study: node counts (default 2,3,4); up: how many (default 2)")
    ap.add_argument("--ranks-per-node", type=int, default=2, help="study: ranks per node (default 2)")
    ap.add_argument("--iters", type=int, default=100, help="study: repetitions per run (default 100)")
    ap.add_argument("--repeats", type=int, default=3, help="study: runs of each configuration (default 3)")
    ap.add_argument("--shaper", choices=["switch", "netem"], default="switch",
                    help="study: links with latency from the userspace switch (default) or tc netem on the veths")
    ap.add_argument("--md", help="study: also write the table (Markdown) to this file")
    ap.add_argument("--latency-us", type=float, default=0, help=argparse.SUPPRESS)  # switch (internal)
    ap.add_argument("--rate", type=float, default=0, help=argparse.SUPPRESS)        # switch (internal)
    a = ap.parse_args()
    if a.list:
        for name, (_, what) in CASES.items():
            print("%-20s %s" % (name, what))
        return 0
    if a.mode is None:
        ap.error("give a mode: case NAME, study, up or down")
    if a.mode == "switch":  # internal: the study's switch, started by SwitchCluster in the head namespace
        serve_switch(int(a.nodes), a.latency_us, a.rate or None)
        return 0
    if a.mode in ("case", "study") and not a.dreduce:
        ap.error("--dreduce is required")
    if a.mode == "case" and a.name not in CASES:
        ap.error("unknown case %r (--list)" % a.name)
    dreduce = os.path.realpath(a.dreduce) if a.dreduce else None

    try:
        preflight()
    except Skip as e:
        print("SKIPPED: %s" % e, flush=True)
        return SKIP
    # One cluster at a time on this machine (the names are fixed); a signal unwinds through the teardown.
    os.makedirs(os.path.dirname(LOCK_FILE), exist_ok=True)
    lock = open(LOCK_FILE, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, f: sys.exit(128 + s))
    try:
        if a.mode == "down":
            teardown_all()
            return 0
        if a.mode == "up":
            c = Cluster(int(a.nodes or 2)).__enter__()
            print("up: %s; run for example:\n  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s\n"
                  "(the agent lives in %s; `%s down` removes it all)" % (
                      ", ".join(c.nodes),
                      " ".join(shlex.quote(x) for x in c.mpirun_argv([2] * len(c.nodes), ["hostname"])),
                      c.state, sys.argv[0]))
            return 0
        if a.mode == "study":
            nodes = [int(x) for x in (a.nodes or "2,3,4").split(",")]
            return 0 if study(dreduce, nodes, a.ranks_per_node, a.iters, a.repeats, a.md, a.shaper) else 1
        t0 = time.monotonic()
        ok = CASES[a.name][0](dreduce)
        log("%s %s (%.1f s)" % ("passed" if ok else "FAILED", a.name, time.monotonic() - t0))
        return 0 if ok else 1
    except Fail as e:
        log("FAIL: %s" % e)
        return 1
    finally:
        if a.mode != "up":
            teardown_all()


if __name__ == "__main__":
    sys.exit(main())
