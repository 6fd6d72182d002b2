#!/usr/bin/env bash
# On a GPU machine: build the tree against two MPIs and run the gpu label with each, as the design asks: the
# CUDA-aware Open MPI kit (device buffers; sourced from KIT, default .gpu/ompi-cuda-env.sh, see
# ../shared/device/README.md) and the system MPI (host-staged or mapped partials). Both builds build at once, and
# their gpu labels run at once: within each ctest the gpu tests take turns (RESOURCE_LOCK gpu), so two share the GPU
# at a time, one of each build, which halves the label's wall time (about 860 s a build on one H100, one after the
# other; both at once, DREDUCE_TEST_JOBS=4: 337 s and 472 s for the halves -I 1,,2 and -I 2,,2 on one H100,
# bench/results/h100-2026-12-07). The RUN_SERIAL tests (they check that calls allocate nothing by the GPU's free
# memory, which the other build's tests would move) run after, one build at a time.
# usage: tests/gpu/verify_both_mpis.sh [build|test|all] [CTEST ARGS...]
#   build: configure and build both (build-cuda-aware, build-system); test: ctest -L gpu in each; all: both steps.
#   CTEST ARGS go to every ctest run, e.g. -I 1,,2 and then -I 2,,2 to run the label in two halves (every other
#   test), where one call on the machine cannot hold it all; not -R or -E, with which the serial tests are chosen.
# Env: KIT (the kit's env script), OUTDIR (logs and summaries; default $OUT or ./gpu-verify), JOBS (build jobs
# each, default half the cores), ARCH (CUDA architectures, default 90), CMAKE_ARGS (more cmake arguments for both,
# e.g. -DDREDUCE_HDF5_PREFIX=...). Where launch/h5kit's packages are in .h5kit/ (carried to the machine), both
# builds get its parallel HDF5: it is unpacked on every call, since a carried .h5kit replaces the unpacked one.
# DREDUCE_TEST_JOBS=N (tests/input/cases.cmake) runs the --input suites' cases N at once.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then sed -n '2,18p' "$0"; exit 0; fi
step=${1:-all}
[ $# -gt 0 ] && shift
KIT=${KIT:-.gpu/ompi-cuda-env.sh}
OUTDIR=${OUTDIR:-${OUT:-./gpu-verify}}
JOBS=${JOBS:-$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))}
ARCH=${ARCH:-90}
mkdir -p "$OUTDIR"
[ -f "$KIT" ] || { echo "verify_both_mpis: no CUDA-aware kit at $KIT (copy ../shared/device/* there)" >&2; exit 2; }
if compgen -G ".h5kit/*.deb" >/dev/null; then
  launch/h5kit unpack >"$OUTDIR/h5kit.log" 2>&1 || { echo "launch/h5kit unpack failed:"; cat "$OUTDIR/h5kit.log"; exit 2; }
  export LD_LIBRARY_PATH=$PWD/.h5kit/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  CMAKE_ARGS="-DDREDUCE_HDF5_PREFIX=$PWD/.h5kit/root ${CMAKE_ARGS:-}"
fi

configure_build() { # configure_build DIR [cmake args...]
  local dir=$1
  shift
  # shellcheck disable=SC2086 # CMAKE_ARGS: words on purpose
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" ${CMAKE_ARGS:-} "$@" >/dev/null &&
    cmake --build "$dir" -j"$JOBS" 2>&1 | grep -E "error|warning:|Error" || true
  [ -x "$dir/dreduce" ]
}

status=0
if [ "$step" = build ] || [ "$step" = all ]; then
  ( . "$KIT" && configure_build build-cuda-aware -DMPI_HOME=/opt/ompi-cuda \
      -DMPI_C_COMPILER=/opt/ompi-cuda/bin/mpicc ) >"$OUTDIR/build-cuda-aware.log" 2>&1 &
  aware_pid=$!
  configure_build build-system -DMPI_C_COMPILER=/usr/bin/mpicc >"$OUTDIR/build-system.log" 2>&1 &
  system_pid=$!
  wait $aware_pid || { echo "build against the CUDA-aware kit failed:"; tail -20 "$OUTDIR/build-cuda-aware.log"; status=1; }
  wait $system_pid || { echo "build against the system MPI failed:"; tail -20 "$OUTDIR/build-system.log"; status=1; }
  [ $status -eq 0 ] || exit $status
  echo "built build-cuda-aware and build-system"
fi

# serial_tests BUILD_DIR: a regex of the gpu label's tests that have RUN_SERIAL (empty if none). Over the whole label,
# not CTEST ARGS' share of it: -I's stride then picks the same share of these names in the serial run that it picks
# of the rest in the first run, so -I 1,,2 and -I 2,,2 together run every test once.
serial_tests() {
  ctest --test-dir "$1" -L gpu --show-only=json-v1 | python3 -c '
import json, sys
names = [t["name"] for t in json.load(sys.stdin)["tests"]
         if any(p["name"] == "RUN_SERIAL" and p["value"] for p in t.get("properties", []))]
print("^(" + "|".join(names) + ")$" if names else "")'
}

# run_label BUILD LOG CTEST_ARGS...: ctest -L gpu in BUILD, with the kit's environment for build-cuda-aware.
run_label() {
  local build=$1 log=$2
  shift 2
  if [ "$build" = build-cuda-aware ]; then
    ( . "$KIT" && echo "CUDA-aware kit: $(ompi_info --parsable --all | grep mpi_built_with_cuda_support:value)" &&
        ctest --test-dir "$build" -L gpu --output-on-failure "$@" ) >"$log" 2>&1
  else
    ( echo "system MPI: $(mpirun --version 2>&1 | head -1)" &&
        ctest --test-dir "$build" -L gpu --output-on-failure "$@" ) >"$log" 2>&1
  fi
}

summary() { # summary TITLE LOG
  echo "== $1:"
  grep -E "CUDA-aware kit|system MPI|tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped|No tests were found" "$2"
}

if [ "$step" = test ] || [ "$step" = all ]; then
  serial=$(serial_tests build-system)
  not_serial=()
  [ -n "$serial" ] && not_serial=(-E "$serial")
  run_label build-cuda-aware "$OUTDIR/gpu-cuda-aware.log" "${not_serial[@]}" "$@" &
  aware_pid=$!
  run_label build-system "$OUTDIR/gpu-system.log" "${not_serial[@]}" "$@" &
  system_pid=$!
  wait $aware_pid || status=1
  wait $system_pid || status=1
  summary "gpu label, CUDA-aware Open MPI kit" "$OUTDIR/gpu-cuda-aware.log"
  summary "gpu label, system MPI" "$OUTDIR/gpu-system.log"
  if [ -n "$serial" ]; then
    run_label build-cuda-aware "$OUTDIR/gpu-cuda-aware-serial.log" -R "$serial" "$@" || status=1
    summary "RUN_SERIAL gpu tests, CUDA-aware Open MPI kit" "$OUTDIR/gpu-cuda-aware-serial.log"
    run_label build-system "$OUTDIR/gpu-system-serial.log" -R "$serial" "$@" || status=1
    summary "RUN_SERIAL gpu tests, system MPI" "$OUTDIR/gpu-system-serial.log"
  fi
fi
exit $status
