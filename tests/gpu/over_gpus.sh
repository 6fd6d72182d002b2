#!/usr/bin/env bash
# More ranks on a node than GPUs (docs/reliability.md, "Bad input"): with G GPUs visible, G + 1 ranks must end with
# exit 2 and "G+1 ranks on this node but only G GPU(s) visible: use --share-gpus ...", within the timeout and with no
# report; the same launch with --share-gpus must pass. Exit 77 (skipped) without a GPU.
# usage: over_gpus.sh MPIEXEC DREDUCE
set -uo pipefail
if [ $# -ne 2 ]; then sed -n '2,5p' "$0" >&2; exit 2; fi
mpiexec=$1 dreduce=$2
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true); fi
if [ "$gpus" -lt 1 ]; then echo "no GPU visible: skipped"; exit 77; fi
np=$((gpus + 1))
flags=()
if "$mpiexec" --version 2>&1 | grep -q 'Open MPI'; then flags=(--oversubscribe); fi
args=(--device gpu -n 100000 --iters 2 --warmup 0)
failed=0

out=$(timeout 120 "$mpiexec" "${flags[@]}" -np "$np" "$dreduce" "${args[@]}" 2>&1)
code=$?
want="dreduce: error: rank [0-9]+ \(.*\): $np ranks on this node but only $gpus GPUs? visible: use --share-gpus"
times=$(grep -Ec "$want" <<<"$out" || true)
echo "$np ranks on $gpus GPU(s): exit $code, the message printed $times time(s)"
if [ "$code" -ne 2 ]; then echo "FAIL: exit status $code, expected 2"; failed=1; fi
if [ "$times" -ne 1 ]; then echo "FAIL: /$want/ printed $times times, expected once"; failed=1; fi
if grep -q '^result:' <<<"$out"; then echo "FAIL: a report was printed"; failed=1; fi
[ "$failed" = 0 ] || sed 's/^/  | /' <<<"$out" | tail -20

out=$(timeout 120 "$mpiexec" "${flags[@]}" -np "$np" "$dreduce" "${args[@]}" --share-gpus 2>&1)
code=$?
echo "the same with --share-gpus: exit $code"
if [ "$code" -ne 0 ] || ! grep -q '^verification: passed' <<<"$out"; then
  echo "FAIL: --share-gpus should pass"; failed=1; sed 's/^/  | /' <<<"$out" | tail -20
fi
exit "$failed"
