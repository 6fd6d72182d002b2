#!/usr/bin/env bash
# The installed package works for a program of its own: `cmake --install` the build into a fresh prefix, build
# examples/ against it with find_package(dreduce) in a separate CMake project, run it on 2 ranks (GPU or CPU
# backend, whatever this machine has), and compile the same program with pkg-config's flags.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR MPIEXEC [MPICC]   (MPICC: the build's MPI compiler wrapper, default
# mpicc; the package itself must find the same MPI without being told)
set -euo pipefail
build=$1 src=$2 mpiexec=$3 mpicc=${4:-mpicc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/dreduce.h include/dreduce/types.h include/dreduce/status.h include/dreduce/version.h \
         lib/cmake/dreduce/dreduceConfig.cmake lib/pkgconfig/dreduce.pc; do
  [ -f "$prefix/$f" ] || { echo "FAIL: the install has no $f"; exit 1; }
done
# The installed headers include only each other and the MPI's: nothing of the source tree's internals.
for h in "$prefix"/include/dreduce.h "$prefix"/include/dreduce/*.h; do
  # A header may include nothing of ours (grep finds nothing): the list is then empty, not an error.
  for inc in $(grep -oE '#include "[^"]+"' "$h" | sed 's/#include "//; s/"$//' || true); do
    [ -f "$prefix/include/$inc" ] || { echo "FAIL: $h includes \"$inc\", which the install does not have"; exit 1; }
  done
done
echo "== the installed library's exports"
bash "$src/tests/install/check_abi.sh" "$(ls "$prefix"/lib/libdreduce.so)" "$prefix/include/dreduce.h"

echo "== find_package(dreduce) from a separate project"
cmake -S "$src/examples" -B "$work/example" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="${CC:-cc}" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/example" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
out=$(LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$mpiexec" -np 2 "$work/example/reduce_device")
echo "$out"
grep -q "sum 3145728.0 over 2 ranks on .*: correct" <<<"$out" || { echo "FAIL: wrong or missing result"; exit 1; }

echo "== pkg-config --cflags --libs dreduce"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
"$mpicc" -o "$work/reduce_pc" "$src/examples/reduce_device.c" $(pkg-config --cflags --libs dreduce)
out=$(LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$mpiexec" -np 2 "$work/reduce_pc")
echo "$out"
grep -q ": correct" <<<"$out" || { echo "FAIL: the pkg-config build gave a wrong result"; exit 1; }
echo "PASS"
