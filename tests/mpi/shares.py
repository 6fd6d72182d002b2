#!/usr/bin/env python3
"""Each rank's share of this machine's CPUs, as the dreduce program's JSON report gives it (ranks[]: share, threads,
affinity, bound_cpu, widened, binding_note), with the launcher binding every rank to one core as mpirun does for one
or two ranks by default.

usage: shares.py --mpiexec MPIEXEC --dreduce DREDUCE [--np 1,2,4] [--timeout S]

Cases, each at every --np (CPU backend, -n 1M):
  auto      (the program's default) every rank's share is non-empty, within the machine, its affinity and its thread
            count; with no more ranks than CPUs the shares are disjoint and cover the machine, and a rank whose share
            is wider than its launcher's one CPU is widened and says so; with more, each has one CPU, shared and said.
  none      the affinity is the launcher's mask exactly (read from a process it starts the same way), no share.
  workers   the affinity is the launcher's mask; the share and the thread count are as under auto.
  slurm     (one rank, SLURM_CPUS_PER_TASK=1) a task allocation narrower than the share: the share is the
            launcher's one CPU, never wider.
  unbound   (the launcher binds nothing) the shares are disjoint and cover the machine; nothing widened.
The machine's CPUs are those this script may run on (run it unconfined: a launcher's children see the cgroup's CPUs).
Python 3 standard library only. Exit 0 when every check passed, 1 otherwise, 77 when the MPI's launcher is neither
Open MPI's nor Hydra (MPICH), whose binding flags are known here.
"""

import argparse
import json
import os
import re
import sys
import tempfile

from mpi_launcher import flavor, run_command


def parse_list(text):
    """An hwloc list ("0-3,8") as a set of CPUs; None for a hex mask or anything else."""
    cpus = set()
    if not text or not re.fullmatch(r"[0-9,\-]+", text):
        return None
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def bind_flags(kind, how, np, ncpus):
    """The launcher's flags to bind each rank to one core (`core`) or to nothing (`none`)."""
    if kind == "openmpi":
        # More ranks than cores must be allowed to overload them (Open MPI refuses otherwise).
        target = "core:overload-allowed" if how == "core" and np > ncpus else how
        return ["--oversubscribe", "--bind-to", target]
    return ["-bind-to", how]


def launcher_masks(mpiexec, kind, flags, np, timeout):
    """{rank: set of CPUs} the launcher gives each of np ranks with flags, read by a process it starts that way; a
    string saying why where it cannot be read."""
    rank_var = "OMPI_COMM_WORLD_RANK" if kind == "openmpi" else "PMI_RANK"
    with tempfile.TemporaryDirectory() as d:
        # A file per rank: the launcher forwards the ranks' output in chunks that may cut and mix their lines.
        probe = [sys.executable, "-c",
                 "import os, sys; open(os.path.join(sys.argv[1], os.environ[%r]), 'w').write(' '.join(map(str, "
                 "os.sched_getaffinity(0))))" % rank_var, d]
        rc, out, err, _ = run_command([mpiexec, "-np", str(np)] + flags + probe, timeout)
        masks = {}
        for name in os.listdir(d):
            with open(os.path.join(d, name)) as f:
                masks[int(name)] = set(int(c) for c in f.read().split())
    if rc == 0 and sorted(masks) == list(range(np)):
        return masks
    return "exit %s, %d of %d ranks read: %s" % (rc, len(masks), np, (err or out).strip()[-600:])


def run_dreduce(a, flags, np, extra, env_extra=None):
    """The ranks[] of one run's JSON report, or a string saying why there is none."""
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CPUS_PER_TASK"}  # only the slurm case sets it
    env.update(env_extra or {})
    cmd = [a.mpiexec, "-np", str(np)] + flags + [a.dreduce, "--device", "cpu", "--format", "json", "-n", "1M",
                                                 "--iters", "1", "--warmup", "0"] + extra
    rc, out, err, _ = run_command(cmd, a.timeout, env)
    if rc != 0:
        return "%s: exit %s: %s" % (" ".join(cmd), rc, (err or out).strip()[-600:])
    try:
        ranks = json.loads(out)["ranks"]
    except (ValueError, KeyError) as e:
        return "%s: no JSON report (%s): %s" % (" ".join(cmd), e, out[-300:])
    return sorted(ranks, key=lambda r: r["rank"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--dreduce", required=True)
    ap.add_argument("--np", default="1,2,4", help="rank counts (default 1,2,4)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per launch")
    a = ap.parse_args()
    kind = flavor(a.mpiexec)
    if kind not in ("openmpi", "mpich"):
        print("skip: %s is neither Open MPI's launcher nor Hydra: its binding flags are not known here" % a.mpiexec)
        return 77
    machine = set(os.sched_getaffinity(0))
    ncpus = len(machine)
    problems = []
    checks = 0

    def need(cond, msg):
        nonlocal checks
        checks += 1
        if not cond:
            problems.append(msg)

    for np in [int(x) for x in a.np.split(",")]:
        core = bind_flags(kind, "core", np, ncpus)
        masks = launcher_masks(a.mpiexec, kind, core, np, a.timeout)
        need(isinstance(masks, dict), "np %d: cannot read the launcher's binding: %s" % (np, masks))
        if not isinstance(masks, dict):
            continue
        for choice in ("auto", "none", "workers"):
            what = "np %d, launcher bound to cores, --bind %s" % (np, choice)
            ranks = run_dreduce(a, core, np, ["--bind", choice])
            if isinstance(ranks, str):
                need(False, "%s: %s" % (what, ranks))
                continue
            need(len(ranks) == np, "%s: %d ranks in the report" % (what, len(ranks)))
            shares = {}
            for r in ranks:
                who = "%s: rank %d" % (what, r["rank"])
                share, affinity = parse_list(r["share"]), parse_list(r["affinity"])
                need(affinity is not None, "%s: affinity %r is not a list" % (who, r["affinity"]))
                if choice == "none":
                    need(r["share"] == "", "%s: share %r, want none" % (who, r["share"]))
                    need(affinity == masks.get(r["rank"]), "%s: affinity %s, want the launcher's %s"
                         % (who, r["affinity"], sorted(masks.get(r["rank"], []))))
                    need(not r["bound_cpu"] and not r["widened"], "%s: bound_cpu or widened set" % who)
                    continue
                need(share is not None and len(share) > 0, "%s: share %r" % (who, r["share"]))
                if not share:
                    continue
                shares[r["rank"]] = share
                need(share <= machine, "%s: share %s outside this machine's CPUs %s" % (who, r["share"],
                                                                                         sorted(machine)))
                need(r["threads"] == len(share), "%s: %d threads for a share of %d CPUs" % (who, r["threads"],
                                                                                           len(share)))
                launcher = masks.get(r["rank"], set())
                if choice == "workers":
                    need(affinity == launcher, "%s: affinity %s, want the launcher's %s" % (who, r["affinity"],
                                                                                           sorted(launcher)))
                    need(not r["bound_cpu"] and not r["widened"], "%s: bound_cpu or widened set" % who)
                    continue
                need(affinity == share, "%s: affinity %s, want its share %s" % (who, r["affinity"], r["share"]))
                widened = len(share) > len(launcher)
                need(r["widened"] == widened, "%s: widened %s, launcher's %s, share %s" % (who, r["widened"],
                                                                                          sorted(launcher), r["share"]))
                if widened:
                    need("widened to its share" in r["binding_note"], "%s: note %r does not say it was widened"
                         % (who, r["binding_note"]))
            if choice == "none" or len(shares) != np:
                continue
            union = set().union(*shares.values())
            need(union == machine, "%s: the shares cover %s, not the machine's %s" % (what, sorted(union),
                                                                                      sorted(machine)))
            if np <= ncpus:
                for i in shares:
                    for j in shares:
                        need(i >= j or not shares[i] & shares[j], "%s: ranks %d and %d share CPUs %s"
                             % (what, i, j, sorted(shares[i] & shares[j])))
            else:
                for r in ranks:
                    need(len(shares[r["rank"]]) == 1 and "share CPUs" in r["binding_note"],
                         "%s: rank %d of more ranks than CPUs: share %s, note %r" % (what, r["rank"], r["share"],
                                                                                     r["binding_note"]))

    # A Slurm task allocation bound to one CPU: the share never exceeds it.
    core = bind_flags(kind, "core", 1, ncpus)
    masks = launcher_masks(a.mpiexec, kind, core, 1, a.timeout)
    need(isinstance(masks, dict), "slurm: cannot read the launcher's binding: %s" % (masks,))
    masks = masks if isinstance(masks, dict) else {}
    ranks = run_dreduce(a, core, 1, [], {"SLURM_CPUS_PER_TASK": "1"})
    if isinstance(ranks, str):
        need(False, "slurm: %s" % ranks)
    else:
        r = ranks[0]
        need(parse_list(r["share"]) == masks.get(0) and parse_list(r["affinity"]) == masks.get(0) and
             not r["widened"] and r["threads"] == len(masks.get(0, ())),
             "slurm (SLURM_CPUS_PER_TASK=1, launcher's %s): share %r affinity %r widened %s threads %d"
             % (sorted(masks.get(0, [])), r["share"], r["affinity"], r["widened"], r["threads"]))

    # The launcher binds nothing: the ranks divide the machine, narrowing, never widening.
    np = min(2, ncpus)
    ranks = run_dreduce(a, bind_flags(kind, "none", np, ncpus), np, [])
    if isinstance(ranks, str):
        need(False, "unbound: %s" % ranks)
    else:
        shares = [parse_list(r["share"]) or set() for r in ranks]
        need(set().union(*shares) == machine and sum(len(s) for s in shares) == ncpus,
             "unbound, np %d: shares %s do not divide the machine's %s" % (np, [r["share"] for r in ranks],
                                                                          sorted(machine)))
        need(all(not r["widened"] and parse_list(r["affinity"]) == s for r, s in zip(ranks, shares)),
             "unbound, np %d: widened, or an affinity other than the share: %s" % (np, ranks))

    for p in problems:
        print("FAIL " + p)
    print("%s: %d of %d checks failed (machine CPUs %s)" % ("FAIL" if problems else "PASS", len(problems), checks,
                                                            sorted(machine)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
