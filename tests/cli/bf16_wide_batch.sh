#!/usr/bin/env bash
# OMIT stats of bfloat16 batches whose exponents lie far apart, checked by the program's own reference (--verify).
# The first quarter of the array: vectors of 8 halves {-2^56, 7.97, 23.9, 23.9, 40, 39.75, 39.75, 39.75}; the rest:
# vectors of values in [23.9, 39.75], every third with a NaN (bfloat16 values rounded toward zero). Summed about the
# batch's least element, -2^56, as d = x + 2^56, each small term rounds away against the growing sum of the d's: a
# batch came out as exactly -2^56. On the GPU with blocks of 32 (tests/gpu/cases.cmake): at 128 elements a thread
# takes one vector (omit_batch16<1>), 25 u sum|x| off against a bound of 13 u sum|x| (serial depth 12); at 4096
# a thread takes a round of four vectors 128 apart, one from the first quarter (omit_batch16<4>: -2^56 and 31 small
# terms), 117 u sum|x| off against 48. The kernel's shift is now the point of the batch's range nearest 0
# (kernels/fused.cu, omit_batch16): 0 for these batches, which straddle it, so their sums are the plain serial sums,
# 1.7 and 8.7 u sum|x| off (a host model of both forms in the threads' order).
# usage: bf16_wide_batch.sh EXPECT DREDUCE DOUBLINGS [DREDUCE ARGS...]
#   the array is 32 x 2^DOUBLINGS elements, raw little-endian bfloat16, 2^DOUBLINGS of them NaN.
set -euo pipefail
expect=$1 dreduce=$2 doublings=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# -2^56 0xdb80, 7.96875 0x40ff, 23.875 0x41bf, 40 0x4220, 39.75 0x421f, a quiet NaN with a payload 0x7fc1
first='\x80\xdb\xff\x40\xbf\x41\xbf\x41\x20\x42\x1f\x42\x1f\x42\x1f\x42'
rest='\x1f\x42\x1f\x42\x1f\x42\x1f\x42\xbf\x41\xbf\x41\xbf\x41\xbf\x41'
with_nan='\xc1\x7f\x1f\x42\x1f\x42\x1f\x42\xbf\x41\xbf\x41\xbf\x41\xbf\x41'
printf "$first" >"$dir/head.raw"
printf "$rest$rest$with_nan" >"$dir/tail.raw"
for ((i = 0; i < doublings; ++i)); do
  for part in head tail; do
    cat "$dir/$part.raw" "$dir/$part.raw" >"$dir/twice.raw"
    mv "$dir/twice.raw" "$dir/$part.raw"
  done
done
cat "$dir/head.raw" "$dir/tail.raw" >"$dir/a.raw"
bash "$expect" --also "NaN omitted .*: $((1 << doublings)) of $((32 << doublings)) elements" 0 "verification: passed" \
  "$dreduce" --input "$dir/a.raw" --type bfloat16 --op stats --nan omit "$@"
