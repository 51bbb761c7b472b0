#!/bin/bash
# Results unchanged by a faster importer (issue 35): imports every Kineto trace of
# ../shared/traces and tests/data (bad inputs of tests/data/repro included) with two ovl
# binaries, full and --hta-compat, and compares `sqlite3 .dump` of the traces written, the
# import's output and exit status, and `ovl report --json` (both modes). Prints the files that
# differ; exit 0 when every one is byte-identical.
# usage: bench/import_identical.sh BEFORE_OVL AFTER_OVL
set -u
before=$1
after=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 shell" >&2; exit 1; }
find "$here/../../shared/traces" "$here/../tests/data" \( -name '*.json' -o -name '*.json.gz' \) 2>/dev/null | sort >"$work/list"
run() {  # run BIN OUTDIR
  mkdir -p "$2"
  local i=0 f mode opt
  while read -r f; do
    i=$((i + 1))
    for mode in full hta; do
      opt=""
      [ $mode = hta ] && opt="--hta-compat"
      rm -f "$work/t.sqlite"
      "$1" import -q $opt "$f" -o "$work/t.sqlite" >"$2/$i.$mode.import" 2>&1
      echo "rc=$?" >>"$2/$i.$mode.import"
      [ ! -f "$work/t.sqlite" ] || sqlite3 "$work/t.sqlite" .dump >"$2/$i.$mode.dump"
      "$1" report --json $opt "$f" >"$2/$i.$mode.report" 2>&1
      echo "rc=$?" >>"$2/$i.$mode.report"
    done
  done <"$work/list"
}
run "$before" "$work/before"
run "$after" "$work/after"
n=$(wc -l <"$work/list")
if diff -rq "$work/before" "$work/after"; then
  echo "$n Kineto files: imports (full, --hta-compat), dumps and JSON reports byte-identical"
else
  echo "differences above (numbers are lines of the list of $n files)"
  exit 1
fi
