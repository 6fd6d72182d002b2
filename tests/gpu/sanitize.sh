#!/usr/bin/env bash
# Run a command under one compute-sanitizer tool and fail on any report (label sanitize; docs/reliability.md).
#
#   sanitize.sh [--leaks] [--expect-errors] TOOL CMD [ARGS...]    TOOL: memcheck | racecheck | synccheck | initcheck
#
# Exits 77 (CTest: skipped), saying why, where no GPU is visible or compute-sanitizer is not found (PATH, then
# $CUDA_HOME/bin, /usr/local/cuda/bin, the newest /usr/local/cuda-*/bin). Otherwise passes only if the tool and the
# command both exit 0 and the tool's summary reports nothing:
#   memcheck, synccheck, initcheck:  "ERROR SUMMARY: 0 errors"
#   racecheck:                       "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)", with
#                                    --racecheck-report all (the hazards and racecheck's analysis of them)
# --leaks adds memcheck's --leak-check full (the command must destroy its CUDA context before it exits, as
# test_kernels does, or every allocation still held then is a leak). --expect-errors inverts the verdict: pass only if
# the tool reports at least one error (for commands that break a rule on purpose: test_kernels --plant). Prints the
# tool's summary and the seconds taken.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
leaks=0 expect_errors=0
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then usage; exit 0; fi
if [ "${1:-}" = "--leaks" ]; then leaks=1; shift; fi
if [ "${1:-}" = "--expect-errors" ]; then expect_errors=1; shift; fi
if [ $# -lt 2 ]; then usage >&2; exit 2; fi
tool=$1
shift

find_sanitizer() {
  local d
  if command -v compute-sanitizer >/dev/null 2>&1; then command -v compute-sanitizer; return 0; fi
  for d in ${CUDA_HOME:+"$CUDA_HOME/bin"} /usr/local/cuda/bin $(ls -d /usr/local/cuda-*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/compute-sanitizer" ]; then echo "$d/compute-sanitizer"; return 0; fi
  done
  return 1
}

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true); fi
if [ "$gpus" -lt 1 ]; then echo "no GPU visible: skipped"; exit 77; fi
if ! sanitizer=$(find_sanitizer); then
  echo "compute-sanitizer not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin, /usr/local/cuda-*/bin): skipped"
  exit 77
fi

opts=(--tool "$tool" --error-exitcode 1 --print-limit 100)
case "$tool" in
memcheck) [ "$leaks" = 0 ] || opts+=(--leak-check full) ;;
racecheck) opts+=(--racecheck-report all) ;;
synccheck | initcheck) ;;
*) echo "sanitize.sh: unknown tool '$tool' (memcheck, racecheck, synccheck, initcheck)" >&2; exit 2 ;;
esac

log=$(mktemp "${TMPDIR:-/tmp}/dreduce-sanitize.XXXXXX")
trap 'rm -f "$log"' EXIT
echo "+ $sanitizer ${opts[*]} $*"
start=$SECONDS
set +e
"$sanitizer" "${opts[@]}" "$@" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - start))

if [ "$tool" = racecheck ]; then want='RACECHECK SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)'
else want='ERROR SUMMARY: 0 errors'; fi
summary=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -n 1 || true)
echo "== $tool: exit $code after ${elapsed} s; ${summary:-no summary line}"
if [ "$expect_errors" = 1 ]; then
  if [ "$code" -eq 1 ] && grep -Eq 'ERROR SUMMARY: [1-9][0-9]* errors?' "$log"; then exit 0; fi
  echo "FAIL: the tool should have reported the planted error (exit 1 and a non-zero error summary)"; exit 1
fi
if [ "$code" -ne 0 ]; then echo "FAIL: exit status $code"; exit 1; fi
if ! grep -Eq "$want" "$log"; then echo "FAIL: the summary is not /$want/"; exit 1; fi
exit 0
