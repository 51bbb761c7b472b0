#!/bin/sh
# test_demo.sh SOURCE_DIR OVL: the flagship demo as bootstrap.sh runs it and README documents it
# (issue 33, points 5 and 6). Every `build/ovl` line of bootstrap.sh's demo runs, with ovl-trace
# in a folder of its own, twice (a second demo replaces the first's files); then:
#   - its report shows a finding a user can act on (a [code] line under Findings);
#   - every `build/ovl whatif` line of README.md that names the demo trace works on it.
# Exit 1 naming what failed.
src=${1:?usage: test_demo.sh SOURCE_DIR OVL}
ovl=${2:?usage: test_demo.sh SOURCE_DIR OVL}
work=$(mktemp -d "${TMPDIR:-/tmp}/ovl-demo.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# The demo's commands: from `if [ "$mode" = demo ]` to the next `else`, lines starting build/ovl.
sed -n '/^if \[ "$mode" = demo \]; then/,/^else/p' "$src/bootstrap.sh" | grep -E '^ *build/ovl ' |
  sed -e 's/^ *//' -e 's/ *#.*$//' > "$work/demo.txt"
[ -s "$work/demo.txt" ] || fail "no build/ovl line in bootstrap.sh's demo"
grep -q -- '--emit-trace ovl-trace/demo.sqlite' "$work/demo.txt" || fail "the demo writes no ovl-trace/demo.sqlite"

run_demo() {  # run_demo N: every demo line; the report's output kept as report.N
  mkdir -p "$work/ovl-trace"
  i=0
  while IFS= read -r line; do
    i=$((i + 1))
    cmd=$(printf '%s\n' "$line" | sed -e "s#^build/ovl#'$ovl'#" -e "s#ovl-trace/#'$work/ovl-trace'/#g")
    if ! (cd "$work" && eval "$cmd") > "$work/out.$1.$i" 2> "$work/err.$1.$i"; then
      fail "demo run $1: '$line' failed: $(cat "$work/err.$1.$i")"
    fi
    case "$line" in "build/ovl report ovl-trace/demo.sqlite") cp "$work/out.$1.$i" "$work/report.$1" ;; esac
  done < "$work/demo.txt"
}
run_demo 1
run_demo 2

[ -f "$work/report.2" ] || fail "the demo prints no text report of ovl-trace/demo.sqlite"
if [ -f "$work/report.2" ]; then
  sed -n '/^  Findings$/,/^$/p' "$work/report.2" | grep -q -E '^  \[[a-z_]+\] recoverable' ||
    fail "the demo's report shows no finding: $(grep -A2 -i finding "$work/report.2")"
fi

# README's whatif lines on the demo trace.
n=0
grep -o -E 'build/ovl whatif [^`#]*ovl-trace/demo\.sqlite' "$src/README.md" | while IFS= read -r line; do
  cmd=$(printf '%s\n' "$line" | sed -e "s#^build/ovl#'$ovl'#" -e "s#ovl-trace/#'$work/ovl-trace'/#g")
  if ! (cd "$work" && eval "$cmd") > "$work/whatif.out" 2> "$work/whatif.err"; then
    echo "FAIL: README's '$line' failed: $(cat "$work/whatif.err")" >&2
    exit 1
  fi
  grep -q '^best: bucket_cap_mb=' "$work/whatif.out" || { echo "FAIL: README's '$line' names no best size" >&2; exit 1; }
done || status=1
grep -q -E 'build/ovl whatif [^`#]*ovl-trace/demo\.sqlite' "$src/README.md" || fail "README names no whatif line on the demo trace"
[ "$status" = 0 ] && echo "ok: the demo ($(wc -l < "$work/demo.txt") commands, twice) shows a finding; README's whatif line works"
exit $status
