#!/usr/bin/env bash
# Run a command only where a GPU is visible; exit 77 (CTest: skipped) otherwise.
# usage: run_if_gpu.sh CMD [ARGS...]
set -euo pipefail
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "no GPU visible: skipped"
  exit 77
fi
exec "$@"
