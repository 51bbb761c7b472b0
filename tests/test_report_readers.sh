#!/bin/sh
# The report does not depend on how the trace is read (issue 35): with reader threads forced
# on (OVL_READER_THREADS=1: GPU work decoded on a reader thread, api rows split across two)
# and forced off (everything on the calling thread), `ovl report --json` prints the same
# bytes and exits the same, for a generated trace large enough to need many batches and a
# reorder window (rows written as a capture library delivers them, by end time), the real
# GPU traces of tests/data, a folder of Kineto traces as a job, and the hostile api rowids.
#
# usage: test_report_readers.sh OVL GEN_TRACE DATA_DIR
set -u
ovl=$1 gen=$2 data=$3
dir=${TMPDIR:-/tmp}/readers.$$
mkdir -p "$dir" || exit 2
trap 'rm -rf "$dir"' EXIT
fail=0 compared=0

"$gen" "$dir/gen.sqlite" 60000 20 7 2>/dev/null || { echo "FAIL: cannot generate a trace"; exit 1; }

# same INPUT: the two ways of reading give the same report.
same() {
  rc0=0 rc1=0
  OVL_READER_THREADS=0 "$ovl" report --json "$1" >"$dir/off.json" 2>"$dir/off.err" || rc0=$?
  OVL_READER_THREADS=1 "$ovl" report --json "$1" >"$dir/on.json" 2>"$dir/on.err" || rc1=$?
  compared=$((compared + 1))
  if [ "$rc0" != "$rc1" ] || ! cmp -s "$dir/off.json" "$dir/on.json" || ! cmp -s "$dir/off.err" "$dir/on.err"; then
    echo "FAIL: $1: threads off (exit $rc0) and on (exit $rc1) differ"
    diff "$dir/off.json" "$dir/on.json" | head -5
    fail=1
  fi
}

same "$dir/gen.sqlite"
# The comparison means something only when there is a report to compare.
grep -q '"overlap_efficiency"' "$dir/on.json" || { echo "FAIL: gen.sqlite: no report"; cat "$dir/on.err"; fail=1; }
for f in "$data"/gpu-h100/ddp/*.sqlite "$data"/gpu-h100/plugin/both.sqlite "$data"/gpu-h100/pytorch/ddp-rank0.sqlite \
         "$data"/repro/o-api-rowid-span.sqlite; do
  same "$f"
done
same "$data/traces/kineto-param-dlrm8"
grep -q '"overlap_efficiency"' "$dir/on.json" || { echo "FAIL: kineto-param-dlrm8: no report"; fail=1; }

echo "$compared inputs compared"
exit "$fail"
