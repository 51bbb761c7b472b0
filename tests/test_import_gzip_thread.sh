#!/bin/sh
# gzip input goes through the read-ahead thread (analyzer/load/read_ahead.c) once 1 MiB is
# read; plain input too where the import has two CPUs (its writer works behind). The same Kineto fixture, plain and gzip-compressed, must give
# byte-identical JSON reports and import summaries; a gzip file cut short or with a corrupt
# check sum must fail with one line naming the file, exit 1 and leave no output, whatever
# the thread was doing (ASan/UBSan builds run this too: no leak, no race on the way out).
# usage: test_import_gzip_thread.sh OVL FIXTURE.json.gz
set -u
ovl=$1
fixture=$2
work=${TMPDIR:-/tmp}/ovl-gzip-thread.$$
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/plain" "$work/gzip" "$work/bad"
fail=0
check() {  # check WHAT CONDITION...
  what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}

# Same name in two folders, formats told apart by content: the reports name the same file.
gzip -dc "$fixture" >"$work/plain/trace.json" || exit 2
cp "$fixture" "$work/gzip/trace.json" || exit 2
size=$(wc -c <"$work/plain/trace.json")
check "the fixture is large enough to start the thread ($size bytes > 1 MiB)" test "$size" -gt 2097152

for kind in plain gzip; do
  (cd "$work/$kind" && "$ovl" report --json trace.json >report.json 2>report.err; echo $? >report.rc)
  (cd "$work/$kind" && "$ovl" import trace.json -o trace.sqlite >import.txt 2>&1; echo $? >import.rc)
done
check "report from plain JSON exits 0" test "$(cat "$work/plain/report.rc")" = 0
check "report from gzip exits 0" test "$(cat "$work/gzip/report.rc")" = 0
check "the report has collectives" grep -q '"collectives"' "$work/plain/report.json"
check "JSON reports are byte-identical" cmp "$work/plain/report.json" "$work/gzip/report.json"
check "import summaries are identical" cmp "$work/plain/import.txt" "$work/gzip/import.txt"
check "import from gzip exits 0" test "$(cat "$work/gzip/import.rc")" = 0

# Cut short well past the first MiB: the thread meets the end of the file.
bytes=$(wc -c <"$fixture")
head -c $((bytes * 2 / 3)) "$fixture" >"$work/bad/cut.json.gz"
"$ovl" import -q "$work/bad/cut.json.gz" -o "$work/bad/cut.sqlite" >"$work/bad/cut.out" 2>"$work/bad/cut.err"
rc=$?
check "truncated gzip: exit 1" test "$rc" = 1
check "truncated gzip: one line naming the file" test "$(wc -l <"$work/bad/cut.err")" = 1
check "truncated gzip: says truncated" grep -q "cut.json.gz: truncated gzip data" "$work/bad/cut.err"
check "truncated gzip: no output left" test ! -e "$work/bad/cut.sqlite"

# A wrong CRC-32 in the trailer: zlib finds it only after inflating everything.
cp "$fixture" "$work/bad/crc.json.gz"
printf '\377\377\377\377' | dd of="$work/bad/crc.json.gz" bs=1 seek=$((bytes - 8)) conv=notrunc 2>/dev/null
"$ovl" report --json "$work/bad/crc.json.gz" >/dev/null 2>"$work/bad/crc.err"
rc=$?
check "corrupt gzip: exit 1" test "$rc" = 1
check "corrupt gzip: one line naming the file" test "$(wc -l <"$work/bad/crc.err")" = 1
check "corrupt gzip: says corrupt" grep -q "crc.json.gz: corrupt gzip data" "$work/bad/crc.err"

# A JSON error while the thread still inflates ahead: the reader stops it and exits cleanly.
gzip -dc "$fixture" | head -c 3000000 >"$work/bad/broken.json"
printf ']]]' >>"$work/bad/broken.json"
gzip -dc "$fixture" | tail -c +3000004 >>"$work/bad/broken.json"
gzip -c "$work/bad/broken.json" >"$work/bad/broken.json.gz"
"$ovl" import -q "$work/bad/broken.json.gz" -o "$work/bad/broken.sqlite" >/dev/null 2>"$work/bad/broken.err"
rc=$?
check "JSON error under the thread: exit 1" test "$rc" = 1
check "JSON error under the thread: names the file and the byte" \
  grep -q "broken.json.gz: invalid JSON at byte" "$work/bad/broken.err"
exit $fail
