#!/bin/bash
# Hostile inputs named in issue 18 besides the reproducer files: a UTF-8 byte order mark, a
# run of '-' as a number, two "traceEvents" keys, corrupt gzip, an unusable TMPDIR, invalid
# UTF-8 and escape sequences in names; each gives a report or one clear line, and every
# output stays valid UTF-8 without control characters.
. "$(dirname "$0")/lib.sh"
valid=$DATA/k-valid.json
# A byte order mark before the JSON: the same report as without it.
{ printf '\xef\xbb\xbf'; cat "$valid"; } > "$d/bom.json"
cp "$valid" "$d/plain.json"
run "$d/want" "$d/err" report "$d/plain.json"
run "$d/got" "$d/err" report "$d/bom.json"
check "BOM: exit 0 ($rc)" [ "$rc" = 0 ]
check "BOM: same report as without it" diff <(sed 's|([^)]*)||' "$d/want") <(sed 's|([^)]*)||' "$d/got")
# A run of '-' longer than any number is not a number.
{ printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":'; head -c 5000 /dev/zero | tr '\0' '-'
  printf ',"dur":5,"pid":0,"tid":7}]}'; } > "$d/dashes.json"
run "$d/out" "$d/err" report "$d/dashes.json"
check "dashes: exit 1 ($rc)" [ "$rc" = 1 ]
one_line() { [ "$(wc -l < "$1")" = 1 ] && grep -q "$2" "$1"; }
check "dashes: one line: invalid number" one_line "$d/err" "^ovl: $d/dashes.json: invalid JSON at byte .*invalid number"
# Two traceEvents arrays: which is the trace is ambiguous, and said so.
sed 's/^{"traceEvents":\[/{"traceEvents":[],"traceEvents":[/' "$valid" > "$d/twice.json"
run "$d/out" "$d/err" report "$d/twice.json"
check "two traceEvents: exit 1 ($rc)" [ "$rc" = 1 ]
check "two traceEvents: one line saying so" grep -q "^ovl: $d/twice.json: a second \"traceEvents\" key" "$d/err"
# Corrupt gzip: the path once, and the bytes that did decompress (at least what gzip gives).
cp "$TRACES/kineto-param-dlrm8/worker0_step_12.json.gz" "$d/c.json.gz"
printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$d/c.json.gz" bs=1 seek=20000 conv=notrunc 2>/dev/null
good=$(gzip -dc "$d/c.json.gz" 2>/dev/null | wc -c)
run "$d/out" "$d/err" report "$d/c.json.gz"
check "corrupt gzip: exit 1 ($rc)" [ "$rc" = 1 ]
check "corrupt gzip: the path once" [ "$(grep -o "$d/c.json.gz" "$d/err" | wc -l)" = 1 ]
n=$(sed -n 's/.*after \([0-9]*\) uncompressed bytes.*/\1/p' "$d/err")
at_least() { [ -n "$1" ] && [ "$2" -gt 0 ] && [ "$1" -ge "$2" ]; }
check "corrupt gzip: byte count ($n) at least what gzip decompressed ($good)" at_least "$n" "$good"
# TMPDIR unusable: the message names the directory, not a temporary file.
TMPDIR="$d/missing" "$OVL" report "$valid" >"$d/out" 2>"$d/err"; rc=$?
check "missing TMPDIR: exit 1 ($rc)" [ "$rc" = 1 ]
check "missing TMPDIR: names the directory" grep -q "$d/missing" "$d/err"
check "missing TMPDIR: no temporary file named" [ -z "$(grep -o 'ovl-import-[A-Za-z0-9]*' "$d/err")" ]
# TMPDIR full (a 64 KiB tmpfs, when this user may mount one): the input and the directory
# are named, not the temporary file that is gone by then.
mkdir "$d/full"
if mount -t tmpfs -o size=64k tmpfs "$d/full" 2>/dev/null; then
  trap 'umount "$d/full"; rm -rf "$d"' EXIT
  TMPDIR="$d/full" "$OVL" report "$TRACES/kineto-param-dlrm8/worker0_step_12.json.gz" >"$d/out" 2>"$d/err"; rc=$?
  check "full TMPDIR: exit 1 ($rc)" [ "$rc" = 1 ]
  check "full TMPDIR: one line naming the input and the directory" \
    one_line "$d/err" "^ovl: $TRACES/kineto-param-dlrm8/worker0_step_12.json.gz: .*$d/full (TMPDIR)"
  check "full TMPDIR: left empty" only_files "$d/full"
else
  echo "note: cannot mount a small tmpfs here (needs root): the full-TMPDIR case is skipped"
fi
# Escape sequences and invalid UTF-8 in a kernel name and the hostname.
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm\\u001b[31mRED\xff\xfe","ts":100,"dur":10,"pid":0,"tid":7,"args":{"correlation":1,"device":0,"stream":7}},{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","ts":105,"dur":10,"pid":0,"tid":8,"args":{"correlation":2,"device":0,"stream":8}}],"hostname":"h\xc3\x28st\\u009b2J\x1b]0;title\x07"}' > "$d/names.json"
utf8_clean() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 && ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1"; }
run "$d/out" "$d/err" report --all "$d/names.json"
check "names: report exit 0 ($rc)" [ "$rc" = 0 ]
check "names: terminal text is UTF-8 without control characters" utf8_clean "$d/out"
run "$d/out" "$d/err" report --json "$d/names.json"
check "names: JSON report is UTF-8 without raw control characters" utf8_clean "$d/out"
run "$d/out" "$d/err" export -q --chrome "$d/x.json" --perfetto "$d/x.pftrace" "$d/names.json"
check "names: export exit 0 ($rc)" [ "$rc" = 0 ]
check "names: Chrome JSON is UTF-8 without raw control characters" utf8_clean "$d/x.json"
check "names: the Perfetto file holds no escape sequence" bash -c "! LC_ALL=C grep -qF \$'\\x1b[31m' '$d/x.pftrace'"
check "names: the Perfetto file holds the cleaned name" grep -qF "gemm"$'\xef\xbf\xbd'"[31mRED" "$d/x.pftrace"
run "$d/out" "$d/err" import -q "$d/names.json" -o "$d/names.sqlite"
run "$d/out" "$d/err" report --all "$d/names.sqlite"
check "names: an imported trace reads back clean too" utf8_clean "$d/out"
# A file name found in a directory is text from outside too.
mkdir "$d/dir"
cp "$valid" "$d/dir/"$'\e]0;pwned\a\e[31m'"red.json"
printf '{"traceEvents":[' > "$d/dir/"$'\e[2J'"bad.json"
run "$d/out" "$d/err" report "$d/dir"
check "escape sequences in file names: not on the terminal" bash -c "! LC_ALL=C grep -q \$'\\x1b' '$d/out' '$d/err'"
rm -r "$d/dir"
# One correlation id on two calls and their two kernels: each kernel belongs to the call
# launched before it, so no collective starts before its launch.
run "$d/out" "$d/err" report --json "$DATA/k-dup-correlation.json"
check "duplicate correlation ids: exit 0 ($rc)" [ "$rc" = 0 ]
check "duplicate correlation ids: two collectives" [ "$(grep -c '"queueing_ns"' "$d/out")" = 2 ]
check "duplicate correlation ids: no negative queueing" [ -z "$(grep '"queueing_ns": -' "$d/out")" ]
check "duplicate correlation ids: each its own kernel" \
  [ "$(grep '"gpu_start_ns"' "$d/out" | sort -u | wc -l)" = 2 ]
finish
