#!/usr/bin/env bash
# A file in the page cache, read the ways a user can: `cat` to /dev/null, a Python loop of readinto() 64 MiB pieces
# into one NumPy buffer, and `dreduce --input` on every backend this machine has (the GPU's overlapped pipeline, the
# CPU backend), beside `dreduce` on the same array generated in memory. docs/performance.md ("Reading a file") quotes
# its output.
# usage: bench/input_bench.sh [BUILD_DIR [EXPONENT [REPS]]]   (default build, 28: a 2^28-element float32 .npy, 5)
# Env: FILE (where to write the .npy; default $TMPDIR or /tmp), MPIRUN (default: mpirun -np 1), PYTHON (one with
# NumPy; default: python3 or /usr/bin/python3, whichever has it). Each figure is the median of REPS; the file is read once before, so it is cached.
set -euo pipefail
BUILD=${1:-build}
EXP=${2:-28}
REPS=${3:-5}
FILE=${FILE:-${TMPDIR:-/tmp}/dreduce-input-bench-$EXP.npy}
if [ -z "${PYTHON:-}" ]; then # the first interpreter that has NumPy
  for PYTHON in python3 /usr/bin/python3; do "$PYTHON" -c "import numpy" 2>/dev/null && break; done
fi
read -r -a MPIRUN <<<"${MPIRUN:-mpirun -np 1}"
DREDUCE=$BUILD/dreduce
[ -x "$DREDUCE" ] || { echo "input_bench: no $DREDUCE (build it first)" >&2; exit 2; }

n=$((1 << EXP))
bytes=$((n * 4))
echo "file: $FILE, 2^$EXP float32 ($((bytes >> 20)) MiB), (i % 1000) * 0.5; $(nproc) CPUs; median of $REPS"
"$PYTHON" -c "import numpy as np; np.save('$FILE', np.arange($n, dtype=np.float32) % 1000 * 0.5)"
cat "$FILE" >/dev/null # into the page cache

gbs() { awk -v b="$bytes" -v ms="$1" 'BEGIN { printf "%.1f", b / (ms * 1e6) }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ms=$(for _ in $(seq "$REPS"); do
  t0=$(date +%s%N)
  cat "$FILE" >/dev/null
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000)) | awk '{ printf "%.3f\n", $1 / 1000 }'
done | median)
printf '%-58s %10.1f ms %7s GB/s\n' "cat to /dev/null" "$ms" "$(gbs "$ms")"

ms=$("$PYTHON" - "$FILE" "$REPS" <<'PY'
import sys, time
import numpy as np
path, reps = sys.argv[1], int(sys.argv[2])
mapped = np.load(path, mmap_mode="r")  # only for the header: its shape, type and the data's offset
buf = np.empty(mapped.shape, mapped.dtype)
header = mapped.offset
del mapped
view = memoryview(buf).cast("B")
piece = 64 << 20
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        f.seek(header)
        for at in range(0, len(view), piece):
            f.readinto(view[at:at + piece])
    times.append((time.perf_counter() - t0) * 1e3)
print(sorted(times)[len(times) // 2])
PY
)
printf '%-58s %10.1f ms %7s GB/s\n' "Python readinto() 64 MiB pieces into a NumPy buffer" "$ms" "$(gbs "$ms")"

# dreduce's report lines for the levels that say where the time goes (read, load, local, total).
levels() { grep -E "^\S+ +(read|load|local|total) |^ +(read|load|local|total) |^backend|^verification" | sed 's/^/    /'; }
devices=cpu
if nvidia-smi -L >/dev/null 2>&1; then devices="gpu cpu"; fi
for dev in $devices; do
  echo "dreduce --device $dev --input (sum of float32):"
  "${MPIRUN[@]}" "$DREDUCE" --device "$dev" --input "$FILE" --iters "$REPS" | levels
  echo "dreduce --device $dev, the same array generated in memory:"
  "${MPIRUN[@]}" "$DREDUCE" --device "$dev" -n "$n" --iters "$REPS" | levels
done
rm -f "$FILE"
