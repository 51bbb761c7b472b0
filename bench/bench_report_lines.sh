#!/bin/bash
# Length of the text report (`ovl report`, stdout lines) of every real trace of
# ../shared/traces, one file at a time and each folder as one job, for a baseline binary and
# this build side by side. Fails (exit 1) when this build's report of any trace is longer
# than the baseline's: findings must not buy their evidence with a longer page.
#
# usage: bench/bench_report_lines.sh BASELINE_OVL [BUILD_DIR] [TRACES_DIR]
#        (defaults: build, ../shared/traces)
set -uo pipefail
base=${1:?usage: bench_report_lines.sh BASELINE_OVL [BUILD_DIR] [TRACES_DIR]}
build=${2:-build}
traces=${3:-../shared/traces}
ovl="$build/ovl"
[ -x "$base" ] && [ -x "$ovl" ] || { echo "missing binary: $base or $ovl" >&2; exit 1; }
[ -d "$traces" ] || { echo "no traces folder: $traces" >&2; exit 1; }

lines() { "$1" report "$2" 2>/dev/null | wc -l; }

longer=0
printf '%-78s %8s %8s\n' "trace" "baseline" "this"
while IFS= read -r t; do
  b=$(lines "$base" "$t")
  n=$(lines "$ovl" "$t")
  mark=""
  if [ "$n" -gt "$b" ]; then mark="  LONGER"; longer=1; fi
  printf '%-78s %8d %8d%s\n' "${t#"$traces"/}" "$b" "$n" "$mark"
done < <({ find "$traces" -type f \( -name '*.json.gz' -o -name '*.json' -o -name '*.sqlite' \);
           find "$traces" -mindepth 1 -maxdepth 1 -type d; } | sort)
exit $longer
