#!/usr/bin/env bash
# Build dreduce-bench (Release, sm_90) into build-gpu if needed, then run its three modes on GPU 0.
# Results go to $OUT (default ./bench-out): bench.json/bench.txt (performance table), levels.json/levels.txt
# (tutorial comparison), small.json/small.txt (small-n latency). Extra arguments go to the performance-table run,
# e.g. run_h200.sh --blocks 128,256,512,1024. Exits non-zero if any run failed (each run still gets its turn).
set -uo pipefail
OUT=${OUT:-./bench-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.."
BUILD=build-gpu

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DBUILD_TESTING=OFF || exit 1
fi
cmake --build "$BUILD" -j"$(nproc)" --target dreduce-bench || exit 1 # a no-op when up to date
BENCH=$BUILD/bench/dreduce-bench

status=0
run() { # run NAME ARGS...: stdout and stderr to $OUT/NAME.txt (and the terminal)
  local name=$1
  shift
  echo "== dreduce-bench $* =="
  "$BENCH" "$@" 2>&1 | tee "$OUT/$name.txt"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "dreduce-bench $* exited $rc" | tee -a "$OUT/$name.txt"
    status=1
  fi
}
run bench --json "$OUT/bench.json" "$@"
run levels --levels --json "$OUT/levels.json"
run small --small --json "$OUT/small.json"
echo "results in $OUT"
exit $status
