#!/bin/sh
# run_isolated.sh TEST [ARGS...]: runs one ctest test with a temporary folder of its own as
# TMPDIR (tb_temp_path, the importers' temporaries and mktemp all use it), then removes
# that folder whatever happened, so no run leaves files behind in /tmp. A test that passes
# but left files in it fails here, naming them: every test cleans up after itself.
# The test's exit status passes through (77: skipped).
dir=$(mktemp -d "${TMPDIR:-/tmp}/ovl-ctest.XXXXXX") || { echo "run_isolated: cannot create a temporary folder" >&2; exit 2; }
TMPDIR=$dir "$@"
rc=$?
left=$(ls -A "$dir")
rm -rf "$dir"
if [ "$rc" -eq 0 ] && [ -n "$left" ]; then
  echo "run_isolated: the test passed but left in its temporary folder:" $left >&2
  exit 1
fi
exit "$rc"
