# Shared by slurm/*.sbatch (sourced, bash): find the repository and the binary, choose the device and srun's MPI
# plugin, make the per-job results directory, record the job's setup, print the per-node report.
#
# Environment (all optional):
#   DREDUCE_HOME   the dreduce repository (default: the directory sbatch was run from, $SLURM_SUBMIT_DIR)
#   DREDUCE        the binary (default $DREDUCE_HOME/build/dreduce)
#   DREDUCE_ARGS   extra dreduce options, e.g. "--type int64 --op max --iters 20"
#   DREDUCE_OUT    results directory (default results/$SLURM_JOB_ID in the job's working directory: where sbatch
#                  ran, or its --chdir); give an earlier job's directory to resume its study
#   DEVICE         auto (default: gpu when this node has GPUs, else cpu) | gpu | cpu; --device in DREDUCE_ARGS wins
#   SRUN_MPI       srun's --mpi plugin (default, from `srun --mpi=list` and the MPI the binary links, see
#                  launch/mpi-flavor: Open MPI pmix, else pmi2; MPICH pmi2; with neither, the MPI's own launcher)
#   SRUN_FLAGS     extra srun flags for every step (default: --cpu-bind=none, so dreduce binds each rank next to its
#                  GPU with hwloc; see README "Running on a cluster")
#   MPIEXEC        a launcher instead of srun (e.g. mpirun); MPIEXEC_FLAGS then go to it
#   RANKS, SIZES, TYPES   the scaling studies' --ranks, --sizes, --types

dr_die() { echo "dreduce job: error: $*" >&2; exit 2; }

# dr_init: sets DREDUCE_HOME, DREDUCE, DREDUCE_OUT, dr_args (array), dr_device; exports what the launchers read.
dr_init() {
  DREDUCE_HOME=$(cd "$DREDUCE_HOME" && pwd)
  [ -x "$DREDUCE_HOME/launch/scaling" ] || dr_die "$DREDUCE_HOME is not the dreduce repository (set DREDUCE_HOME)"
  DREDUCE=${DREDUCE:-$DREDUCE_HOME/build/dreduce}
  [ -x "$DREDUCE" ] || dr_die "no dreduce binary at $DREDUCE: build it (cmake -S . -B build && cmake --build build -j) or set DREDUCE"
  export DREDUCE DREDUCE_HOME
  local job=${SLURM_JOB_ID:-local-$$}
  DREDUCE_OUT=${DREDUCE_OUT:-$PWD/results/$job}
  mkdir -p "$DREDUCE_OUT"
  DREDUCE_OUT=$(cd "$DREDUCE_OUT" && pwd)
  read -r -a dr_args <<< "${DREDUCE_ARGS:-}"

  # The device: --device in DREDUCE_ARGS, else DEVICE, else gpu where this node has one.
  dr_device=""
  local i
  for ((i = 0; i < ${#dr_args[@]}; i++)); do
    case ${dr_args[i]} in
      --device) dr_device=${dr_args[i+1]:-} ;;
      --device=*) dr_device=${dr_args[i]#--device=} ;;
    esac
  done
  if [ -z "$dr_device" ]; then
    dr_device=${DEVICE:-auto}
    if [ "$dr_device" = auto ]; then
      local ngpus=0
      if command -v nvidia-smi >/dev/null 2>&1; then ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true); fi
      if [ "${CUDA_VISIBLE_DEVICES-unset}" != unset ] && [ -z "${CUDA_VISIBLE_DEVICES}" ]; then ngpus=0; fi
      dr_device=$([ "$ngpus" -gt 0 ] && echo gpu || echo cpu)
    fi
    dr_args=(--device "$dr_device" "${dr_args[@]}")
  fi

  # The launcher: srun with the plugin for this MPI (launch/mpi-flavor), else the MPI's own inside the allocation.
  if [ -z "${MPIEXEC:-}" ] || [ "$(basename "${MPIEXEC%% *}")" = srun ]; then
    [ -n "${SRUN_MPI:-}" ] || SRUN_MPI=$("$DREDUCE_HOME/launch/mpi-flavor" --srun-mpi "$DREDUCE")
    if [ -n "${SRUN_MPI:-}" ]; then
      export SRUN_MPI MPIEXEC=${MPIEXEC:-srun}
      # --cpu-bind=none: dreduce binds each rank next to its GPU itself. Where Slurm binds nothing (task/none),
      # the flag only draws a warning, so it is left out.
      local bind=--cpu-bind=none
      if scontrol show config 2>/dev/null | grep -Eq '^TaskPlugin +=.*task/none'; then bind=""; fi
      export MPIEXEC_FLAGS="${MPIEXEC_FLAGS:-} ${SRUN_FLAGS-$bind}"
      dr_launch="${MPIEXEC} --mpi=$SRUN_MPI$MPIEXEC_FLAGS"
    else
      MPIEXEC=$("$DREDUCE_HOME/launch/mpi-flavor" --launcher "$DREDUCE")
      echo "dreduce job: srun offers no --mpi plugin for this MPI (srun --mpi=list): launching with $MPIEXEC" >&2
      export MPIEXEC
      dr_launch="$MPIEXEC ${MPIEXEC_FLAGS:-}"
    fi
  else
    export MPIEXEC
    dr_launch="$MPIEXEC ${MPIEXEC_FLAGS:-}"
  fi
  dr_record
}

# What ran where, for the record: OUT/job.txt.
dr_record() {
  {
    echo "job ${SLURM_JOB_ID:-} (${SLURM_JOB_NAME:-}) on ${SLURM_JOB_NODELIST:-$(hostname)}: ${SLURM_JOB_NUM_NODES:-1} node(s), ${SLURM_NTASKS:-?} task(s), tasks per node ${SLURM_TASKS_PER_NODE:-?}, GPUs per node ${SLURM_GPUS_ON_NODE:-0}"
    echo "started $(date '+%Y-%m-%d %H:%M:%S %Z') in ${SLURM_SUBMIT_DIR:-$PWD}"
    echo "dreduce: $DREDUCE ($("$DREDUCE" --version 2>&1 | head -1)), options: ${dr_args[*]}"
    echo "launcher: $dr_launch"
    if command -v ompi_info >/dev/null 2>&1; then
      echo "Open MPI: $(ompi_info --version 2>/dev/null | head -1); built with CUDA support: $(ompi_info --parsable --all 2>/dev/null | grep -E ':(mpi|opal)_built_with_cuda_support:value:' | head -1 | sed 's/.*://')"
    fi
    if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L 2>/dev/null || true; fi
    if [ -n "${SLURM_JOB_ID:-}" ]; then scontrol show job "$SLURM_JOB_ID" 2>/dev/null || true; fi
  } > "$DREDUCE_OUT/job.txt"
  echo "dreduce job: results in $DREDUCE_OUT; launcher: $dr_launch; device $dr_device" >&2
}

# dr_scaling MODE GPU_DEFAULT_SIZE CPU_DEFAULT_SIZE [launch/scaling options] [-- dreduce options]
dr_scaling() {
  local mode=$1 gpu_size=$2 cpu_size=$3
  shift 3
  local opts=() more=() seen=0 a
  for a in "$@"; do
    if [ "$seen" = 0 ] && [ "$a" = -- ]; then seen=1; continue; fi
    if [ "$seen" = 0 ]; then opts+=("$a"); else more+=("$a"); fi
  done
  local size=$cpu_size
  [ "$dr_device" = cpu ] || size=$gpu_size
  local ranks=()
  [ -z "${RANKS:-}" ] || ranks=(--ranks "$RANKS")
  "$DREDUCE_HOME/launch/scaling" --mode "$mode" --out "$DREDUCE_OUT" --dreduce "$DREDUCE" "${ranks[@]}" \
    --sizes "${SIZES:-$size}" --types "${TYPES:-float32}" "${opts[@]}" -- "${dr_args[@]}" "${more[@]}"
}

# dr_node_report FILE: result, verification and the per-node levels of one JSON report, slowest node marked.
dr_node_report() {
  python3 - "$1" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
v = d["verification"]
print("result %s (%s), verification %s; %s; total %.4g ms (median, rank 0), %.4g GB/s aggregate"
      % (d["result"]["value"], d["result"]["type"], ("passed" if v.get("pass") else "FAILED") if v.get("enabled")
         else "off", d["combine_path"], d["total_ms"], d["aggregate_gbs"] or float("nan")))
rows = []
for node in d["nodes"]:
    lv = {x["level"]: x for x in node["levels"]}
    loc = lv.get("local", {})
    rows.append((node["name"], loc.get("median_ms"), loc.get("max_ms"), loc.get("slowest_rank"), loc.get("gbs"),
                 (lv.get("node") or {}).get("median_ms"), (lv.get("total") or {}).get("max_ms")))
meds = [r[1] for r in rows if r[1] is not None]
typical = statistics.median(meds) if meds else None
print("%-24s %12s %12s %8s %10s %12s %12s" % ("node", "local med ms", "local max ms", "slowest", "GB/s", "node ms",
                                            "total max ms"))
worst = max(rows, key=lambda r: r[2] or 0) if rows else None
f = lambda x: "-" if x is None else "%.4g" % x
for r in rows:
    flag = ""
    if len(rows) > 1 and r is worst:
        flag = "  <- slowest node"
    if typical and r[1] is not None and r[1] > 1.2 * typical:
        flag += "  (local %.0f%% above the median node)" % (100 * (r[1] / typical - 1))
    print("%-24s %12s %12s %8s %10s %12s %12s%s" % (r[0], f(r[1]), f(r[2]), r[3], f(r[4]), f(r[5]), f(r[6]), flag))
PY
}
