#!/bin/bash
# Reproducer import-empty-output.sh: an empty output name is an error for every verb.
. "$(dirname "$0")/lib.sh"
for args in "import -o" "report -o" "fit -o" "whatif --bucket-mb 25 -o" "export --perfetto" "export --chrome"; do
  run "$d/out" "$d/err" $args '' "$DATA/k-valid.json"
  check "$args '': exit 1" [ "$rc" = 1 ]
  check "$args '': one ovl: line" [ "$(wc -l < "$d/err")" = 1 -a "$(grep -c '^ovl: ' "$d/err")" = 1 ]
  check "$args '': nothing on stdout" [ ! -s "$d/out" ]
done
run "$d/out" "$d/err" simulate --bucket-layers 1 --emit-trace ''
check "simulate --emit-trace '': exit 1" [ "$rc" = 1 ]
finish
