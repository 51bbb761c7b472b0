#!/bin/sh
# A one-device trace large enough that the analysis gives the pass's per-collective arrays back
# page by page while it builds the results (analysis_results.c: whole 2 MiB pages, in batches
# of 8 MiB; 128-byte rows: some 65 k collectives) reports every collective whole (issue 35). A
# page given back too early reads as zeros: a collective would lose its id, its operation or
# its GPU times. The generator (bench/gen_trace.c) writes one all-reduce every COMM_EVERY
# kernels, ids 1..N.
#
# usage: test_report_one_device.sh OVL GEN_TRACE
set -u
ovl=$1 gen=$2
dir=${TMPDIR:-/tmp}/one_device.$$
mkdir -p "$dir" || exit 2
trap 'rm -rf "$dir"' EXIT
kernels=300000 every=2
expected=$((kernels / every))

"$gen" "$dir/t.sqlite" "$kernels" 100 "$every" 2>/dev/null || { echo "FAIL: cannot generate a trace"; exit 1; }
"$ovl" report --json "$dir/t.sqlite" >"$dir/t.json" 2>"$dir/t.err" || { echo "FAIL: report failed"; cat "$dir/t.err"; exit 1; }

# One line per collective: its id, op, dtype, GPU start and end (the JSON puts a field a line).
awk '
  /"collectives": \[/ { in_colls = 1 }
  in_colls && /"op":/ { op = $2 }
  in_colls && /"gpu_start_ns":/ { start = $2 }
  in_colls && /"gpu_end_ns":/ { end = $2 }
  in_colls && /"id":/ { id = $2 }
  in_colls && /"dtype":/ { print id, op, start, end, $2 }
' "$dir/t.json" | tr -d ',"' >"$dir/colls"

fail=0
n=$(wc -l <"$dir/colls")
[ "$n" -eq "$expected" ] || { echo "FAIL: $n collectives reported, the trace has $expected"; fail=1; }
distinct=$(cut -d' ' -f1 "$dir/colls" | sort -un | awk -v n="$expected" '$1 >= 1 && $1 <= n' | wc -l)
[ "$distinct" -eq "$expected" ] || { echo "FAIL: $distinct distinct ids in 1..$expected"; fail=1; }
bad=$(awk '$2 != "AllReduce" || $5 == "" || !($4 > $3) || $3 <= 0' "$dir/colls" | head -3)
[ -z "$bad" ] || { echo "FAIL: collectives without their operation, type or GPU times:"; echo "$bad"; fail=1; }
echo "$n collectives checked"
exit "$fail"
