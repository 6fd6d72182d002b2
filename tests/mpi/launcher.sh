# Sourced by the test scripts (faults.sh, bad_input.sh): what differs between Open MPI's
# mpirun/mpiexec and the MPICH family's Hydra mpiexec (tests/mpi/mpi_launcher.py is the same for the Python ones).
#   dr_launcher_init MPIEXEC   sets dr_flavor (openmpi, mpich or other) and dr_flags, the flags every launch takes
#                              (Open MPI: --oversubscribe; Hydra runs more ranks than cores anyway)
#   dr_launcher_args ARGS...   sets dr_args to ARGS with each `-x VAR=VALUE` (Open MPI: set VAR in the ranks) in this
#                              launcher's form: kept for Open MPI, `-env VAR VALUE` for Hydra (per executable, so an
#                              MPMD section keeps its own)
dr_launcher_init() {
  local version
  version=$("$1" --version 2>&1 || true)
  dr_flags=()
  case $version in
    *"Open MPI"* | *OpenRTE*) dr_flavor=openmpi; dr_flags=(--oversubscribe) ;;
    *HYDRA* | *MPICH* | *"Intel(R) MPI"*) dr_flavor=mpich ;;
    *) dr_flavor=other ;;
  esac
}

dr_launcher_args() {
  dr_args=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -x ] && [ $# -ge 2 ] && [ "$dr_flavor" != openmpi ]; then
      dr_args+=(-env "${2%%=*}" "${2#*=}")
      shift 2
    else
      dr_args+=("$1")
      shift
    fi
  done
}
