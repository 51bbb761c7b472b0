#!/bin/bash
# Reproducer import-dir-clobber.sh: two inputs that would give the same output name, or an
# output that is an input, are refused before anything is written.
. "$(dirname "$0")/lib.sh"
mkdir "$d/in" "$d/out"
cp "$DATA/k-valid.json" "$d/in/a.json"
cp "$TRACES/kineto-param-dlrm8/worker0_step_12.json.gz" "$d/in/a.json.gz"
run "$d/o" "$d/e" import "$d/in" -o "$d/out"
check "a.json + a.json.gz -> out/a.sqlite: exit 1" [ "$rc" = 1 ]
check "the collision is named with both inputs" grep -q "a.json and .*a.json.gz" "$d/e"
check "nothing written to out/" only_files "$d/out"
cp "$DATA/k-valid.json" "$d/a.json"
cp "$DATA/base-ovl.sqlite" "$d/a.sqlite"
before=$(sum "$d/a.sqlite")
run "$d/o" "$d/e" import "$d" -o "$d"
check "in-place a.json next to the trace a.sqlite: exit 1" [ "$rc" = 1 ]
check "a.sqlite unchanged" [ "$(sum "$d/a.sqlite")" = "$before" ]
check "nothing else written" only_files "$d" a.json a.sqlite e in o out
# Without a collision the directory import works.
rm "$d/in/a.json.gz"
run "$d/o" "$d/e" import "$d/in" -o "$d/out"
check "one input per name: exit 0" [ "$rc" = 0 ]
check "one input per name: out/a.sqlite" only_files "$d/out" a.sqlite
finish
