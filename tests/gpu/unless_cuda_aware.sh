#!/usr/bin/env bash
# Run a command only where dreduce's MPI is NOT CUDA-aware; exit 77 (CTest: skipped) where it is, or where no GPU is
# visible. The answer is dreduce's own: the combine path its automatic staging picks on one GPU.
# usage: unless_cuda_aware.sh DREDUCE CMD [ARGS...]
set -euo pipefail
if [ $# -lt 2 ]; then sed -n '2,4p' "$0" >&2; exit 2; fi
dreduce=$1
shift
count=0
if command -v nvidia-smi >/dev/null 2>&1; then count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true); fi
if [ "$count" -lt 1 ]; then echo "no GPU visible: skipped"; exit 77; fi
path=$("$dreduce" --device gpu -n 1 --iters 1 --warmup 0 --format json | python3 -c \
  'import json, sys; print(json.load(sys.stdin)["combine_path"])')
case "$path" in
*"not CUDA-aware"*) ;;
*) echo "this MPI is CUDA-aware (combine path: $path): skipped"; exit 77 ;;
esac
echo "combine path without --staging: $path"
exec "$@"
