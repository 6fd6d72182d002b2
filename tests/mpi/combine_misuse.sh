#!/usr/bin/env bash
# Misuse the combine must catch (label mpi, CPU backend; tests/mpi/combine_misuse.c does the calls and checks the
# statuses and values): each case must end with exit 0 and the stated line, within its limit, never hang.
# usage: combine_misuse.sh MPIEXEC COMBINE_MISUSE [EXTRA_ARG...]   (e.g. --gpu: GPU contexts, every rank sharing)
set -uo pipefail
mpiexec=$1 prog=$2
shift 2
# shellcheck source=launcher.sh
. "$(dirname "${BASH_SOURCE[0]}")/launcher.sh"
dr_launcher_init "$mpiexec"
extra=("$@")
passed=0 failed=0 skipped=0

# check NAME NP REGEX -- PROGRAM_ARGS...   (exit status 0 expected; CODE=N check ... for another)
check() {
  local name=$1 np=$2 regex=$3 want=${CODE:-0}
  shift 4
  local out code
  out=$(timeout 60 "$mpiexec" ${dr_flags[@]+"${dr_flags[@]}"} -np "$np" "$prog" "$@" ${extra[@]+"${extra[@]}"} 2>&1)
  code=$?
  local why=""
  if [ "$code" -eq 77 ]; then skipped=$((skipped + 1)); echo "SKIP $name"; return
  elif [ "$code" -eq 124 ]; then why="hung (killed after 60 s)"
  elif [ "$code" -ne "$want" ]; then why="exit status $code, expected $want"
  elif ! grep -Eq -- "$regex" <<<"$out"; then why="output does not match /$regex/"
  fi
  if [ -z "$why" ]; then passed=$((passed + 1)); echo "PASS $name"
  else
    failed=$((failed + 1)); echo "FAIL $name: $why"; echo "  command: $mpiexec -np $np $prog $*"
    sed 's/^/  | /' <<<"$out" | tail -15
  fi
}

differ="the ranks called with different arguments"
check dtype_hier 2 "rank 0 .*$differ.*dtype int32 on rank 0 but float32 on rank 1" -- dtype
check dtype_flat 2 "rank 0 .*$differ.*dtype int32 on rank 0 but float32 on rank 1" -- dtype --combine flat
check dtype_allreduce 2 "rank 1 .*$differ.*dtype int32 on rank 0 but float32 on rank 1" -- dtype --allreduce
check dtype_max 2 "dtype float32 on rank 1 but float64 on rank 0" -- dtype_max
check op 2 "op band on rank 0 but bor on rank 1" -- op --allreduce
check placeholder 3 "dtype int32 on rank 2 but float32 on rank 0" -- placeholder
check one_float64_rpn2 4 "dtype float32 on rank 0 but float64 on rank 3" -- one_float64 --rpn 2
check one_float64_rpn2_allreduce 4 "rank 2 .*dtype float32 on rank 0 but float64 on rank 3" -- one_float64 --rpn 2 --allreduce
check acc 2 "acc: |acc_mode wide on rank 0 but native on rank 1" -- acc
check null 2 "rank 0 .*rank 1 failed in this call" -- null
check null_allreduce 3 "rank 2 .*rank 1 failed in this call" -- null --allreduce --combine flat
check watchdog_disarmed 2 "disarm passed" -- disarm
check two_contexts 2 "two_contexts passed" -- two_contexts
check threads 2 "threads passed" -- threads
CODE=3 check thread_hang 2 "rank 0 .*timed out after 1 s waiting in the" -- thread_hang
echo "combine misuse: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
