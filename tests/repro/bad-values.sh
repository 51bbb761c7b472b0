#!/bin/bash
# The sanitizer reproducers (README.txt): `ovl report FILE` on a trace with values that
# overflowed int64 arithmetic (UBSan: signed overflow) or were read wrong. Usage:
#   bad-values.sh FILE reject|warn|ok
# reject: exit 1 with one line "ovl: FILE: ..."; warn: exit 0 and a warning naming FILE
# (rows skipped and counted); ok: exit 0. Always: no sanitizer report, no absurd time
# (release builds printed starts such as -446744073.710 s).
. "$(dirname "$0")/lib.sh"
file=$DATA/$1 expect=$2
run "$d/out" "$d/err" report "$file"
cat "$d/err"
check "no sanitizer report" no_sanitizer_report "$d/err"
case $expect in
  reject)
    check "exit 1 ($rc)" [ "$rc" = 1 ]
    check "one line naming the file" [ "$(wc -l < "$d/err")" = 1 -a "$(grep -c "^ovl: $file: " "$d/err")" = 1 ] ;;
  warn)
    check "exit 0 ($rc)" [ "$rc" = 0 ]
    check "a warning naming the file" grep -q "^ovl: $file: warning: skipped" "$d/err" ;;
  ok)
    check "exit 0 ($rc)" [ "$rc" = 0 ] ;;
esac
# No time in the report is beyond a day, in either direction.
check "no absurd times" [ -z "$(grep -oE -- '-?[0-9]{6,}\.[0-9]+ s\b' "$d/out")" ]
run "$d/out" "$d/err" report --json "$file"
check "--json: no sanitizer report" no_sanitizer_report "$d/err"
check "--json: no negative sizes, counts or ranks" \
  [ -z "$(grep -E '"(bytes|count|nranks|world_size|rank)": -' "$d/out")" ]
finish
