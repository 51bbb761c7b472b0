#!/bin/bash
# Timeline export speed and size on a large single-rank trace: `ovl export --perfetto`, with
# `ovl report --json` on the same trace beside it (the analysis both share) and the Chrome
# JSON export of the same job. Targets: >= 1 million events/s and <= 32 bytes per kernel
# slice on average (its BEGIN and END packets with interned names; measured by the checker
# ovl_pftrace_check, which also verifies the file). The synthetic trace has an api row per
# launch, so every kernel slice also ends a launch flow (one fixed64 id): the figure is given
# with and without those ids, and for a copy of the trace without api rows.
#
# usage: bench/bench_export.sh [BUILD_DIR] [KERNELS]     (defaults: build, 1000000)
# Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench).
set -euo pipefail
build=${1:-build}
kernels=${2:-1000000}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
mkdir -p "$dir"
gen="$build/bench/ovl_bench_gen_trace"
ovl="$build/ovl"
check="$build/tests/ovl_pftrace_check"
for x in "$gen" "$ovl" "$check"; do [ -x "$x" ] || { echo "build first: $x missing" >&2; exit 1; }; done
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 command-line tool" >&2; exit 1; }

secs() {  # secs CMD...: wall seconds of CMD, its stdout kept in $dir/last.out
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$dir/last.out" 2>"$dir/last.err" || { cat "$dir/last.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
field() { sed -n "s/.* \([0-9]*\) $1.*/\1/p" "$dir/last.out" | head -1; }
stat() { sed -n "s/^$1 //p" "$dir/last.out"; }

trace="$dir/bench-$kernels-50.sqlite"
[ -f "$trace" ] || "$gen" "$trace" "$kernels" 100 50 2>/dev/null
noapi="$dir/bench-$kernels-50-noapi.sqlite"
if [ ! -f "$noapi" ]; then cp "$trace" "$noapi" && sqlite3 "$noapi" "DELETE FROM api; VACUUM;"; fi
pf="$dir/export.pftrace"; js="$dir/export.json"; jz="$dir/export.json.gz"

echo "trace: $trace ($kernels kernels, an api row per launch, 100 NVTX steps, an NCCL kernel every 50)"
t_report=$(secs "$ovl" report --json "$trace")
t_pf=$(secs "$ovl" export --perfetto "$pf" "$trace")
events=$(field events); pf_bytes=$(field bytes)
t_js=$(secs "$ovl" export --chrome "$js" "$trace")
js_bytes=$(field bytes)
t_jz=$(secs "$ovl" export --chrome "$jz" "$trace")
jz_bytes=$(field bytes)
secs "$check" "$pf" --kernels "$(sqlite3 "$trace" 'SELECT count(*) FROM kernels')" >/dev/null
per_slice=$(stat bytes_per_kernel_slice); per_slice_noflow=$(stat bytes_per_kernel_slice_without_flow_ids)
t_na=$(secs "$ovl" export --perfetto "$pf" "$noapi")
events_na=$(field events)
secs "$check" "$pf" --kernels "$kernels" >/dev/null
per_slice_na=$(stat bytes_per_kernel_slice)

printf '%-44s %7s s\n' "ovl report --json (analysis, baseline)" "$t_report"
printf '%-44s %7s s  %s events  %s bytes\n' "ovl export --perfetto" "$t_pf" "$events" "$pf_bytes"
printf '%-44s %7s s  %s bytes\n' "ovl export --chrome (JSON)" "$t_js" "$js_bytes"
printf '%-44s %7s s  %s bytes\n' "ovl export --chrome (.json.gz)" "$t_jz" "$jz_bytes"
awk -v e="$events" -v t="$t_pf" -v r="$t_report" -v p="$pf_bytes" -v j="$js_bytes" -v k="$kernels" 'BEGIN {
  printf "perfetto: %.2f M events/s (whole command, analysis included); export/report time %.2f\n", e / t / 1e6, t / r
  printf "size: perfetto %.1f bytes/kernel, chrome JSON %.1f bytes/kernel (%.1fx)\n", p / k, j / k, j / p }'
echo "bytes per kernel slice (BEGIN+END, interned names): $per_slice with launch-flow ids, $per_slice_noflow without them"
awk -v e="$events_na" -v t="$t_na" -v b="$per_slice_na" 'BEGIN {
  printf "same trace without api rows: %.2f M events/s, %s bytes per kernel slice\n", e / t / 1e6, b }'
rm -f "$pf" "$js" "$jz"
