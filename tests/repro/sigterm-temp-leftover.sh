#!/bin/bash
# Reproducer sigterm-temp-leftover.py: SIGINT, SIGTERM or SIGHUP during a conversion (in $TMPDIR, or
# beside an import's output) removes the temporary trace and its -wal/-shm files; the signal
# still ends the process (status 128 + signal).
. "$(dirname "$0")/lib.sh"
mkdir "$d/tmp" "$d/out"
head -c 200000000 /dev/zero | tr '\0' ' ' | gzip -1 > "$d/bomb_ws.json.gz"
# wait_for DIR PATTERN: up to 60 s for a file matching PATTERN in DIR
wait_for() { for _ in $(seq 6000); do ls -A "$1" | grep -q -- "$2" && return 0; sleep 0.01; done; return 1; }
set -m  # job control: background jobs then keep SIGINT (without it the shell ignores it for them)
for sig in INT TERM HUP; do
  TMPDIR="$d/tmp" "$OVL" report "$d/bomb_ws.json.gz" >/dev/null 2>&1 &
  pid=$!
  check "report: SIG$sig: the conversion started" wait_for "$d/tmp" '^ovl-import-'
  kill -$sig $pid; wait $pid; rc=$?
  check "report: SIG$sig ends it with its status ($rc)" [ "$rc" = $((128 + $(kill -l $sig))) ]
  check "report: SIG$sig: TMPDIR is empty" only_files "$d/tmp"
  TMPDIR="$d/tmp" "$OVL" import "$d/bomb_ws.json.gz" -o "$d/out/b.sqlite" >/dev/null 2>&1 &
  pid=$!
  check "import: SIG$sig: the conversion started" wait_for "$d/out" '\.ovl-'
  kill -$sig $pid; wait $pid; rc=$?
  check "import: SIG$sig ends it with its status ($rc)" [ "$rc" = $((128 + $(kill -l $sig))) ]
  check "import: SIG$sig: nothing left beside the output" only_files "$d/out"
done
finish
