#!/bin/bash
# Timeline export speed and size on a large single-rank trace: `ovl export --perfetto` beside
# `ovl report --json` on the same trace (the analysis both run), with a previous binary
# (BEFORE=path/to/ovl) measured in the same run. Runs alternate (this build's report and
# export, then BEFORE's), REPS times; medians of wall time, CPU time (user + sys) and peak RSS.
# Sizes: the whole file per kernel slice and per GPU slice, and a kernel slice alone (its
# BEGIN and END packets with framing, interned definitions and flow ids, counted by the
# checker ovl_pftrace_check, which also verifies the file and, with BEFORE, that both files
# hold the same slices). Goals (issue 35): export <= 1.5x report (>= 3 M kernel slices/s);
# <= 40 bytes per kernel slice. CHROME=1 adds one Chrome JSON export of this build.
#
# usage: [BEFORE=OLD_OVL] [CHROME=1] bench/bench_export.sh [BUILD_DIR] [KERNELS] [REPS]
#        (defaults: build, 3000000, 3). Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench).
set -euo pipefail
build=${1:-build}
kernels=${2:-3000000}
reps=${3:-3}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
mkdir -p "$dir"
gen="$build/bench/ovl_bench_gen_trace"
ovl="$build/ovl"
check="$build/tests/ovl_pftrace_check"
before=${BEFORE:-}
for x in "$gen" "$ovl" "$check" ${before:+"$before"}; do [ -x "$x" ] || { echo "build first: $x missing" >&2; exit 1; }; done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

. "$(dirname "$0")/bench_lib.sh"
trace=$(ovl_bench_trace "$kernels" 50)
echo "trace: $trace ($kernels kernels, an api row per launch, 100 NVTX steps, an NCCL kernel every 50)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) on $(nproc) CPUs"

# run LABEL CMD...: appends "wall cpu rss" of CMD to $dir/t.LABEL
run() {
  local label=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$dir/time" >>"$dir/t.$label"
  # An export leaves ~256 MB of dirty pages: written back here, untimed, not during the next run.
  sync
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$2" '{ print $c }' "$dir/t.$1" | median; }

pf="$dir/export-new.pftrace"; pf0="$dir/export-before.pftrace"
labels=(report export)
[ -n "$before" ] && labels+=(report-before export-before)
for l in "${labels[@]}"; do rm -f "$dir/t.$l"; done
for ((r = 0; r < reps; r++)); do
  run report "$ovl" report --json "$trace"
  run export "$ovl" export -q --perfetto "$pf" "$trace"
  if [ -n "$before" ]; then
    run report-before "$before" report --json "$trace"
    run export-before "$before" export -q --perfetto "$pf0" "$trace"
  fi
done

"$check" "$pf" --kernels "$kernels" ${before:+--slices "$dir/slices-new.txt"} >"$dir/check-new" ||
  { echo "the checker rejects $pf" >&2; exit 1; }
field() { sed -n "s/^$1 //p" "$2"; }
printf '%-16s %8s %8s %9s %11s %12s %14s %12s\n' binary report_s export_s export/rep kslices/s file_B/kslice kslice_alone_B report_cpu_s
line() {  # line NAME REPORT_LABEL EXPORT_LABEL CHECK_OUTPUT
  local rw ew rc ec bytes alone
  rw=$(col "$2" 1); ew=$(col "$3" 1); rc=$(col "$2" 2); ec=$(col "$3" 2)
  bytes=$(field bytes "$4"); alone=$(field bytes_per_kernel_slice "$4")
  awk -v n="$1" -v rw="$rw" -v ew="$ew" -v rc="$rc" -v k="$kernels" -v b="$bytes" -v a="$alone" 'BEGIN {
    printf "%-16s %8.2f %8.2f %9.2f %10.2fM %12.1f %14s %12.2f\n", n, rw, ew, ew / rw, k / ew / 1e6, b / k, a, rc }'
  echo "  cpu (user+sys) medians: report $rc s, export $ec s (export/report $(awk -v a="$ec" -v b="$rc" 'BEGIN { printf "%.2f", a / b }')); peak RSS: report $(col "$2" 3) KiB, export $(col "$3" 3) KiB"
}
line "this build" report export "$dir/check-new"
if [ -n "$before" ]; then
  "$check" "$pf0" --kernels "$kernels" --slices "$dir/slices-before.txt" >"$dir/check-before" ||
    { echo "the checker rejects $pf0" >&2; exit 1; }
  line "before" report-before export-before "$dir/check-before"
  if cmp -s "$dir/slices-new.txt" "$dir/slices-before.txt"; then
    echo "same slices in both files: $(wc -l <"$dir/slices-new.txt") (process, track, name, start, end)"
  else
    echo "the two files hold different slices: diff $dir/slices-new.txt $dir/slices-before.txt" >&2; exit 1
  fi
  rm -f "$dir/slices-new.txt" "$dir/slices-before.txt" "$pf0"
fi
echo "this build's file: $(field slices "$dir/check-new") slices ($(field kernel_slices "$dir/check-new") kernel), $(field counter_values "$dir/check-new") counter values, $(field flows "$dir/check-new") flows, $(field bytes "$dir/check-new") bytes; a kernel slice alone without its flow ids: $(field bytes_per_kernel_slice_without_flow_ids "$dir/check-new") bytes"
if [ "${CHROME:-0}" = 1 ]; then
  js="$dir/export.json"
  rm -f "$dir/t.chrome"
  run chrome "$ovl" export -q --chrome "$js" "$trace"
  echo "Chrome JSON (this build, one run): $(col chrome 1) s, $(wc -c <"$js") bytes"
  rm -f "$js"
fi
rm -f "$pf"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
