#!/usr/bin/env bash
# Run a command only where enough GPUs are visible; exit 77 (CTest: skipped) otherwise.
# usage: run_if_gpu.sh [--min N] CMD [ARGS...]      (N defaults to 1)
set -euo pipefail
min=1
if [ "${1:-}" = "--min" ]; then min=$2; shift 2; fi
count=0
if command -v nvidia-smi >/dev/null 2>&1; then count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true); fi
if [ "$count" -lt "$min" ]; then
  echo "$count GPU(s) visible, $min needed: skipped"
  exit 77
fi
exec "$@"
