#!/bin/bash
# Reproducer sigterm-temp-leftover.py: SIGINT, SIGTERM or SIGHUP during a conversion (in $TMPDIR, or
# beside an import's output) removes the temporary trace and its -wal/-shm files; the signal
# still ends the process (status 128 + signal).
. "$(dirname "$0")/lib.sh"
mkdir "$d/tmp" "$d/out"
head -c 200000000 /dev/zero | tr '\0' ' ' | gzip -1 > "$d/bomb_ws.json.gz"
# wait_for DIR PATTERN: up to 60 s for a file matching PATTERN in DIR
wait_for() { for _ in $(seq 6000); do ls -A "$1" | grep -q -- "$2" && return 0; sleep 0.01; done; return 1; }
# signal_during SIG DIR PATTERN ARGS...: starts `ovl ARGS`, waits for its conversion's file in
# DIR, sends SIG and sets $rc to its exit status. The conversion takes about 0.4 s: on a loaded
# machine it can end before the signal is sent, its error about the end of the data printed;
# such a run shows nothing about signals and is run again (up to 5 times).
signal_during() {
  local sig=$1 dir=$2 pattern=$3 try; shift 3
  for try in 1 2 3 4 5; do
    TMPDIR="$d/tmp" "$OVL" "$@" >/dev/null 2>"$d/err" &
    pid=$!
    started=0
    wait_for "$dir" "$pattern" && started=1
    kill -$sig $pid 2>/dev/null; wait $pid; rc=$?
    [ "$started" = 1 ] && grep -q "unexpected end of data" "$d/err" || return 0
    echo "  (the conversion ended before SIG$sig was sent: run again)"
  done
}
set -m  # job control: background jobs then keep SIGINT (without it the shell ignores it for them)
for sig in INT TERM HUP; do
  signal_during $sig "$d/tmp" '^ovl-import-' report "$d/bomb_ws.json.gz"
  check "report: SIG$sig: the conversion started" [ "$started" = 1 ]
  check "report: SIG$sig ends it with its status ($rc)" [ "$rc" = $((128 + $(kill -l $sig))) ]
  check "report: SIG$sig: TMPDIR is empty" only_files "$d/tmp"
  signal_during $sig "$d/out" '\.ovl-' import "$d/bomb_ws.json.gz" -o "$d/out/b.sqlite"
  check "import: SIG$sig: the conversion started" [ "$started" = 1 ]
  check "import: SIG$sig ends it with its status ($rc)" [ "$rc" = $((128 + $(kill -l $sig))) ]
  check "import: SIG$sig: nothing left beside the output" only_files "$d/out"
done
finish
