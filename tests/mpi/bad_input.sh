#!/usr/bin/env bash
# Bad input that needs several ranks (label mpi, CPU backend; docs/reliability.md, "Bad input"). Each case must end
# every rank with the exit status given, within 30 s, print its message exactly once (not once per rank) as one
# "dreduce: error:" line, and print no report.
# usage: bad_input.sh MPIEXEC DREDUCE
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,5p' "$0" >&2; exit 2; fi
mpiexec=$1 dreduce=$2
# shellcheck source=launcher.sh
. "$(dirname "${BASH_SOURCE[0]}")/launcher.sh"
dr_launcher_init "$mpiexec"
flags=("${dr_flags[@]}")
passed=0 failed=0

# check NAME CODE REGEX -- MPIEXEC_ARGS...   (REGEX: grep -E, must match exactly one line, a dreduce: error: line)
check() {
  local name=$1 want=$2 regex=$3
  shift 4
  local out code times errors why=""
  out=$(timeout 60 "$mpiexec" "${flags[@]}" "$@" 2>&1 </dev/null)
  code=$?
  times=$(grep -Ec -- "$regex" <<<"$out" || true)
  errors=$(grep -c '^dreduce: error:' <<<"$out" || true)
  if [ "$code" -eq 124 ]; then why="hung (killed after 60 s)"
  elif [ "$code" -ne "$want" ]; then why="exit status $code, expected $want"
  elif [ "$times" -ne 1 ]; then why="/$regex/ matched $times lines, expected 1"
  elif [ "$errors" -ne 1 ]; then why="$errors 'dreduce: error:' lines, expected 1"
  elif ! grep -E -- "$regex" <<<"$out" | grep -q '^dreduce: error: '; then why="the message is not a 'dreduce: error:' line"
  elif grep -q '^result:' <<<"$out"; then why="a report was printed"
  fi
  if [ -z "$why" ]; then
    passed=$((passed + 1)); echo "PASS $name (exit $code): $(grep -E -- "$regex" <<<"$out")"
  else
    failed=$((failed + 1)); echo "FAIL $name: $why"; echo "  command: $mpiexec ${flags[*]} $*"
    sed 's/^/  | /' <<<"$out" | tail -15
  fi
}

cpu=(--device cpu --iters 1 --warmup 0)
# Options that differ across ranks (an MPMD launch): rank 0 names the first differing rank and both values.
check mismatch_count 2 \
  "^dreduce: error: options differ across ranks: rank 0 has 'n=10' but rank 1 has 'n=20' \(every rank must run the same reduction\)$" \
  -- -np 1 "$dreduce" "${cpu[@]}" -n 10 : -np 1 "$dreduce" "${cpu[@]}" -n 20
check mismatch_type 2 "^dreduce: error: options differ across ranks: rank 0 has 'type=int32' but rank 2 has 'type=int64'" \
  -- -np 2 "$dreduce" "${cpu[@]}" --type int32 : -np 1 "$dreduce" "${cpu[@]}" --type int64
check mismatch_two_options 2 "^dreduce: error: options differ across ranks: rank 0 has 'op=sum scaling=strong' but rank 1 has 'op=max scaling=weak'" \
  -- -np 1 "$dreduce" "${cpu[@]}" : -np 1 "$dreduce" "${cpu[@]}" --op max --scaling weak
# A bad option on one rank only: that rank's message, once; every rank exits 2.
check bad_on_one_rank 2 "^dreduce: error: invalid count 'abc'" \
  -- -np 1 "$dreduce" "${cpu[@]}" -n 10 : -np 1 "$dreduce" "${cpu[@]}" -n abc
# Found by every rank alike: said once (by rank 0).
check bad_on_every_rank 2 "^dreduce: error: invalid --type 'complex'" -- -np 3 "$dreduce" "${cpu[@]}" --type complex
check weak_overflow 2 "^dreduce: error: rank 0 \(.*\): --scaling weak with -n 18446744073709551615 on 2 ranks makes more than 2\^64 - 1 elements$" \
  -- -np 2 "$dreduce" "${cpu[@]}" -n 18446744073709551615 --scaling weak
# Only rank 0 writes the report; its failure to open it ends every rank.
check output_unwritable 2 "^dreduce: error: rank 0 \(.*\): cannot write --output '/nonexistent-dir/r.json': No such file or directory$" \
  -- -np 2 "$dreduce" "${cpu[@]}" --format json -o /nonexistent-dir/r.json

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
