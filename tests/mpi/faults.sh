#!/usr/bin/env bash
# Fault tests (label mpi, CPU backend): one rank crashes, is killed, hangs, corrupts its partial, or cannot
# allocate. The job must end non-zero within a bounded time, with the rank, its host and the level named.
# usage: faults.sh MPIEXEC DREDUCE
set -uo pipefail
mpiexec=$1 dreduce=$2
passed=0 failed=0
# shellcheck source=launcher.sh
. "$(dirname "${BASH_SOURCE[0]}")/launcher.sh"
dr_launcher_init "$mpiexec"

# check NAME CODE REGEX LIMIT_S -- MPIEXEC_ARGS...   (CODE: an exit status, or "nonzero")
check() {
  local name=$1 want=$2 regex=$3 limit=$4
  shift 5
  local start end out code elapsed
  start=$(date +%s%N)
  dr_launcher_args "$@"
  out=$(timeout 90 "$mpiexec" "${dr_flags[@]}" "${dr_args[@]}" 2>&1)
  code=$?
  end=$(date +%s%N)
  elapsed=$(( (end - start) / 1000000 ))
  local why=""
  if [ "$code" -eq 124 ]; then why="hung (killed by the test's 90 s timeout)"
  elif [ "$want" = nonzero ] && [ "$code" -eq 0 ]; then why="exit status 0, expected non-zero"
  elif [ "$want" != nonzero ] && [ "$code" -ne "$want" ]; then why="exit status $code, expected $want"
  elif ! grep -Eq -- "$regex" <<<"$out"; then why="output does not match /$regex/"
  elif [ "$elapsed" -gt $(( limit * 1000 )) ]; then why="took ${elapsed} ms, more than ${limit} s"
  fi
  if [ -z "$why" ]; then
    passed=$((passed + 1)); echo "PASS $name (${elapsed} ms, exit $code)"
  else
    failed=$((failed + 1)); echo "FAIL $name: $why"; echo "  command: $mpiexec ${dr_flags[*]} ${dr_args[*]}"
    sed 's/^/  | /' <<<"$out" | tail -15
  fi
}

small=(-n 100000 --device cpu --iters 3 --warmup 1)
check crash nonzero "rank 1 \(.*\): injected fault .*exit" 30 -- -np 3 -x DREDUCE_FAULT=exit@1 "$dreduce" "${small[@]}"
# Rank 1 stuck: rank 0 (the node's root) waits in the node level; rank 2's MPI_Ireduce may complete without rank 1
# (MPICH: an eager send), so it may time out in the barrier before the next repetition instead, naming rank 1.
check hang_node 3 "rank [02] \(.*\): timed out after 2 s waiting in the (node |start .*no answer from node .*\(rank 1\))" 30 -- \
  -np 3 -x DREDUCE_FAULT=hang@1 "$dreduce" "${small[@]}" --timeout 2
# Two emulated nodes, node 1's leader stuck: whichever waiting rank's watchdog fires first names its level.
check hang_global 3 "timed out after 2 s waiting in the (global|node|start) " 30 -- \
  -np 4 -x DREDUCE_FAULT=hang@2 "$dreduce" "${small[@]}" --ranks-per-node 2 --timeout 2
# Rank 0 (the root) stuck: the others' MPI_Ireduce may complete without it (no barrier in a call), so they time out
# in the global level or in the program's barrier before the next repetition, naming rank 0's node either way.
check hang_flat 3 "timed out after 2 s waiting in the (global \(flat|start .*no answer from node .*\(rank 0\))" 30 -- \
  -np 3 -x DREDUCE_FAULT=hang@0 "$dreduce" "${small[@]}" --combine flat --timeout 2
check corrupt 4 "rank 2 \(.*\): verification failed at level local \(this rank's shard" 30 -- \
  -np 3 -x DREDUCE_FAULT=corrupt@2 "$dreduce" "${small[@]}" --type int64
check corrupt_float 4 "rank 1 \(.*\): verification failed at level local" 30 -- \
  -np 2 -x DREDUCE_FAULT=corrupt@1 "$dreduce" "${small[@]}" --type float64
check alloc 3 "rank 1 \(.*\): cannot allocate [0-9]+ bytes .* for the input shard" 30 -- \
  -np 3 -x DREDUCE_FAULT=alloc@1 "$dreduce" "${small[@]}"

# A rank killed for real (SIGKILL) in the middle of a long run.
start=$(date +%s)
timeout 90 "$mpiexec" "${dr_flags[@]}" -np 3 "$dreduce" -n 1Mi --device cpu --iters 1000000 --warmup 0 \
  >/tmp/dreduce-killed.$$ 2>&1 &
job=$!
victim=""
for _ in $(seq 50); do
  sleep 0.2
  victim=$(pgrep -f -- "$dreduce -n 1Mi --device cpu --iters 1000000" | grep -v "^$job\$" | tail -n 1)
  [ -n "$victim" ] && break
done
sleep 1
[ -n "$victim" ] && kill -9 "$victim"
wait "$job"
code=$?
elapsed=$(( $(date +%s) - start ))
if [ -z "$victim" ]; then failed=$((failed + 1)); echo "FAIL killed: no rank process found to kill"
elif [ "$code" -eq 0 ] || [ "$code" -eq 124 ] || [ "$elapsed" -gt 60 ]; then
  failed=$((failed + 1)); echo "FAIL killed: exit $code after ${elapsed} s"; tail -5 /tmp/dreduce-killed.$$
else passed=$((passed + 1)); echo "PASS killed (rank pid $victim, job exit $code after ${elapsed} s)"; fi
rm -f /tmp/dreduce-killed.$$
pkill -9 -f -- "$dreduce -n 1Mi --device cpu --iters 1000000" 2>/dev/null

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
