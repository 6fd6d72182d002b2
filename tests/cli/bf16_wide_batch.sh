#!/usr/bin/env bash
# OMIT stats of bfloat16 batches whose exponents lie far apart, checked by the program's own reference (--verify).
# Every 32 elements (four vectors of 8 halves): -2^56 once, then 31 values in [7.97, 40], one NaN among them
# (bfloat16 values rounded toward zero). Summed about the batch's least element, -2^56, as d = x + 2^56, each small
# term rounds away against the growing sum of the d's: a batch came out as exactly -2^56, about 26 units of the last
# place of sum |x| a vector, 115 a round of four: past the bound the reference checks the stats' sum against (serial
# depth x u x sum |x|; the depth is about 12 with --block 32 at 128 elements). The plain sum beside the shifted ones
# (kernels/fused.cu, omit_batch16) keeps them.
# usage: bf16_wide_batch.sh EXPECT DREDUCE DOUBLINGS [DREDUCE ARGS...]
#   the array is 32 x 2^DOUBLINGS elements, raw little-endian bfloat16.
set -euo pipefail
expect=$1 dreduce=$2 doublings=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# -2^56 0xdb80, 7.96875 0x40ff, 23.875 0x41bf, 40 0x4220, 39.75 0x421f, a quiet NaN with a payload 0x7fc1
first='\x80\xdb\xff\x40\xbf\x41\xbf\x41\x20\x42\x1f\x42\x1f\x42\x1f\x42'
rest='\x1f\x42\x1f\x42\x1f\x42\x1f\x42\xbf\x41\xbf\x41\xbf\x41\xbf\x41'
with_nan='\xc1\x7f\x1f\x42\x1f\x42\x1f\x42\xbf\x41\xbf\x41\xbf\x41\xbf\x41'
printf "$first$rest$rest$with_nan" >"$dir/a.raw"
for ((i = 0; i < doublings; ++i)); do
  cat "$dir/a.raw" "$dir/a.raw" >"$dir/b.raw"
  mv "$dir/b.raw" "$dir/a.raw"
done
bash "$expect" --also "NaN omitted .*: $((1 << doublings)) of $((32 << doublings)) elements" 0 "verification: passed" \
  "$dreduce" --input "$dir/a.raw" --type bfloat16 --op stats --nan omit "$@"
