#!/bin/bash
# Reproducer export-partial-left.sh: a write error (here the file size limit, as a full disk
# would) fails the command and leaves neither a partial file nor a temporary one; an existing
# file of that name keeps its content.
. "$(dirname "$0")/lib.sh"
"$OVL" simulate --bucket-layers 1 --steps 300 --emit-trace "$d/big.sqlite" >/dev/null 2>&1 || fail "simulate"
for fmt in --perfetto --chrome; do
  (ulimit -f 20; trap '' XFSZ; "$OVL" export $fmt "$d/x.out" "$d/big.sqlite" >"$d/out" 2>"$d/err"); rc=$?
  check "$fmt, new file: exit 1" [ "$rc" = 1 ]
  check "$fmt, new file: the write error is named" grep -q "^ovl: $d/x.out: write failed" "$d/err"
  check "$fmt, new file: no partial or temporary file" only_files "$d" big.sqlite err out
  echo "previous content" > "$d/x.out"
  (ulimit -f 20; trap '' XFSZ; "$OVL" export $fmt "$d/x.out" "$d/big.sqlite" >"$d/out" 2>"$d/err"); rc=$?
  check "$fmt, existing file: exit 1" [ "$rc" = 1 ]
  check "$fmt, existing file: content kept" [ "$(cat "$d/x.out")" = "previous content" ]
  check "$fmt, existing file: no temporary file" only_files "$d" big.sqlite err out x.out
  rm -f "$d/x.out"
done
# report -o and simulate --emit-trace go through the same rule.
(ulimit -f 1; trap '' XFSZ; "$OVL" report --json --all -o "$d/r.json" "$d/big.sqlite" >"$d/out" 2>"$d/err"); rc=$?
check "report -o: exit 1" [ "$rc" = 1 ]
check "report -o: no partial file" only_files "$d" big.sqlite err out
(ulimit -f 20; trap '' XFSZ; "$OVL" simulate --bucket-layers 1 --steps 300 --emit-trace "$d/s.sqlite" >"$d/out" 2>"$d/err"); rc=$?
check "simulate --emit-trace: exit 1" [ "$rc" = 1 ]
check "simulate --emit-trace: no partial file" only_files "$d" big.sqlite err out
finish
