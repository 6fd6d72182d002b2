#!/usr/bin/env bash
# libdreduce's ABI is its public API: the shared library must export exactly the dreduce_* functions that
# include/dreduce.h declares (src/lib/exports.map hides the rest), so no internal name collides with a user's symbol
# or becomes a promise. Fails naming every extra export, and every declared function that is not exported.
# usage: check_abi.sh LIBDREDUCE_SO DREDUCE_H
set -euo pipefail
if [ $# -ne 2 ]; then sed -n '2,5p' "$0"; exit 2; fi
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbRrVviu]$/ {print $3}' | sed 's/@.*//' | sort -u)
declared=$(grep -oE '\bdreduce_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
status=0
if [ -n "$extra" ]; then
  echo "FAIL: $lib exports $(echo "$extra" | wc -l) symbols beyond include/dreduce.h's API:"; echo "$extra" | head -40
  status=1
fi
if [ -n "$missing" ]; then
  echo "FAIL: declared in $header but not exported by $lib:"; echo "$missing"
  status=1
fi
[ $status -ne 0 ] || echo "ok: $lib exports exactly the $(echo "$exported" | wc -l) dreduce_* functions of $header"
exit $status
