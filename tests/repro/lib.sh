# Shared by the reproducer tests (sourced, bash). Environment: OVL (the ovl binary), DATA
# (tests/data/repro), TRACES (tests/data/traces). Each test works in its own directory under
# $TMPDIR, removed on exit, and fails with "FAIL: <what>" and status 1.
set -u
: "${OVL:?OVL must name the ovl binary}" "${DATA:?DATA must name tests/data/repro}"
failures=0
base_tmp=${TMPDIR:-/tmp}
d=$(mktemp -d "$base_tmp/ovl-repro-XXXXXX")
trap 'rm -rf "$d"' EXIT

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
check() { # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
  local what=$1; shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}
sum() { md5sum < "$1" | cut -d' ' -f1; }
# run OUTFILE ERRFILE ARGS...: runs ovl, sets $rc
run() { local o=$1 e=$2; shift 2; "$OVL" "$@" >"$o" 2>"$e"; rc=$?; }
# A sanitizer report is a failure whatever the exit status.
no_sanitizer_report() { ! grep -qE "runtime error|AddressSanitizer|LeakSanitizer" "$1"; }
# Only these names are in the directory (sorted, space separated).
only_files() {
  local dir=$1 got; shift
  got=$(cd "$dir" && ls -A | sort | tr '\n' ' ')
  [ "${got% }" = "$*" ] || { echo "  in $dir: '${got% }', expected '$*'"; return 1; }
}
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
  echo "all checks passed"
}
