#!/bin/bash
# Reproducer pipe-input.sh: an input that reads only once (a pipe from <(...), a FIFO) is read
# once and analysed exactly as the same bytes in a regular file.
. "$(dirname "$0")/lib.sh"
mkdir "$d/tmp"
export TMPDIR="$d/tmp"  # where the single read is kept: must be empty again after each command
src="$TRACES/kineto-param-dlrm8/worker0_step_12.json.gz"
gunzip -c "$src" > "$d/plain.json"
run "$d/want" "$d/err" report "$d/plain.json"
check "regular file: exit 0" [ "$rc" = 0 ]
"$OVL" report <(gunzip -c "$src") >"$d/got" 2>"$d/err"; rc=$?
check "process substitution: exit 0" [ "$rc" = 0 ]
check "process substitution: same report as the regular file" \
  diff <(sed 's|([^)]*)||' "$d/want") <(sed 's|([^)]*)||' "$d/got")
mkfifo "$d/f.json"
(cat "$DATA/k-valid.json" > "$d/f.json" &)
timeout 20 "$OVL" report "$d/f.json" >"$d/got" 2>"$d/err"; rc=$?
check "FIFO: exit 0, no hang ($rc)" [ "$rc" = 0 ]
run "$d/want" "$d/err2" report "$DATA/k-valid.json"
check "FIFO: same report as the regular file" \
  diff <(sed 's|([^)]*)||' "$d/want") <(sed 's|([^)]*)||' "$d/got")
# Export reads its traces twice (analysis, then the timeline): still one read of the FIFO.
(cat "$DATA/k-valid.json" > "$d/f.json" &)
timeout 20 "$OVL" export -q --chrome "$d/x.json" "$d/f.json" >"$d/got" 2>"$d/err"; rc=$?
check "FIFO through export: exit 0 ($rc)" [ "$rc" = 0 ]
check "FIFO through export: a timeline was written" [ -s "$d/x.json" ]
(cat "$DATA/k-valid.json" > "$d/f.json" &)
timeout 20 "$OVL" import -q "$d/f.json" -o "$d/f.sqlite" 2>"$d/err"; rc=$?
check "FIFO through import: exit 0 ($rc)" [ "$rc" = 0 ]
check "no copy of the input left in TMPDIR" only_files "$d/tmp"
finish
