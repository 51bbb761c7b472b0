#!/bin/sh
# libovl's NCCL profiler interface (libinject/nccl_profiler_abi.h) against an installed NCCL:
# every offset, size and value libovl relies on, as gdb reads them from that NCCL's debugging
# information. Skips (77) with the reason where gdb or the debugging information is missing.
#   test_inject_nccl_profiler_abi.sh DUMP_PROGRAM LIBNCCL
dump=$1 nccl=$2
[ -x "$dump" ] && [ -n "$nccl" ] || { echo "usage: $0 DUMP_PROGRAM LIBNCCL" >&2; exit 2; }
command -v gdb >/dev/null 2>&1 || { echo "SKIP: no gdb to read NCCL's debugging information"; exit 77; }
[ -r "$nccl" ] || { echo "SKIP: $nccl: not readable"; exit 77; }
tmp=${TMPDIR:-/tmp}/abi.$$
trap 'rm -f "$tmp".*' EXIT
"$dump" > "$tmp.ours" || { echo "$dump failed" >&2; exit 1; }
# One gdb command per fact, in the same order.
awk '$1 == "offset" { printf "print (long)&((%s*)0)->%s\n", $2, $3 }
     $1 == "size"   { printf "print (long)sizeof(%s)\n", $2 }
     $1 == "value"  { printf "print (long)%s\n", $2 }' "$tmp.ours" > "$tmp.gdb"
gdb -nx -batch -x "$tmp.gdb" "$nccl" > "$tmp.out" 2>&1
if ! grep -q '^\$1 = ' "$tmp.out"; then
  if grep -q 'No symbol' "$tmp.out"; then
    echo "SKIP: $nccl has no debugging information for ncclProfiler_v5_t ($(grep -m1 'No symbol' "$tmp.out"))"
    exit 77
  fi
  echo "gdb could not read $nccl:" >&2; head -5 "$tmp.out" >&2; exit 1
fi
grep '^\$[0-9]* = \|No symbol\|There is no member' "$tmp.out" | sed 's/^\$[0-9]* = //' > "$tmp.theirs"
n=$(wc -l < "$tmp.ours")
m=$(wc -l < "$tmp.theirs")
[ "$n" -eq "$m" ] || { echo "gdb answered $m of $n questions:" >&2; cat "$tmp.out" >&2; exit 1; }
bad=$(paste -d' ' "$tmp.ours" "$tmp.theirs" | awk '{ ours = $(NF - 1); if ($1 == "size" || $1 == "value") { what = $2 } else { what = $2 "." $3 } }
  $NF != ours { printf "  %s: libovl %s, NCCL %s\n", what, ours, $NF; bad++ } END { exit bad > 0 }') || {
  echo "libovl's NCCL profiler interface differs from $nccl:"; echo "$bad"; exit 1; }
echo "$n offsets, sizes and values agree with $nccl"
