#!/bin/bash
# Peak memory per NCCL kernel: a Kineto trace of N NCCL kernels (each with its launch and
# PyTorch's communication arguments, bench/gen_nccl_kineto.py), `ovl import` and `ovl report`
# of the imported trace, measured for this build and a baseline ovl binary in the same run
# (issue 18: 1.37 M NCCL kernels must not run out of memory). Prints peak RSS and the ratio.
#
# usage: bench/bench_nccl_memory.sh BASELINE_OVL [BUILD_DIR] [N]    (defaults: build, 1370000)
# The trace is cached in $OVL_BENCH_DIR (default /tmp/ovl-bench).
set -euo pipefail
base=${1:?usage: bench_nccl_memory.sh BASELINE_OVL [BUILD_DIR] [N]}
build=${2:-build}
n=${3:-1370000}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
here=$(cd "$(dirname "$0")" && pwd)
ovl="$build/ovl"
mkdir -p "$dir"
for x in "$base" "$ovl"; do [ -x "$x" ] || { echo "missing: $x" >&2; exit 1; }; done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time) for peak memory" >&2; exit 1; }
trace="$dir/nccl-$n.json"
[ -s "$trace" ] || python3 "$here/gen_nccl_kineto.py" "$trace" "$n"

peak_mb() {  # peak_mb CMD...: peak RSS of CMD in MB (its output discarded); fails with it
  /usr/bin/time -f "%M" -o "$dir/rss" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; return 1; }
  awk '{ printf "%.0f", $1 / 1024 }' "$dir/rss"
}
printf '%-28s %12s %12s %8s\n' "$n NCCL kernels" "baseline MB" "this MB" "ratio"
row() {  # row LABEL ARGS... (with @OUT@ replaced by a per-binary output path)
  local label=$1 b t; shift
  b=$(peak_mb "$base" "${@//@OUT@/$dir/nccl-base.sqlite}")
  t=$(peak_mb "$ovl" "${@//@OUT@/$dir/nccl-this.sqlite}")
  awk -v l="$label" -v b="$b" -v t="$t" 'BEGIN { printf "%-28s %12d %12d %7.2fx\n", l, b, t, t / b }'
}
# the imports write afresh: ovl import refuses to replace a trace without --force
rm -f "$dir/nccl-base.sqlite" "$dir/nccl-this.sqlite"
row "import" import -q "$trace" -o @OUT@
row "report (imported trace)" report "$dir/nccl-base.sqlite"
row "report (Kineto directly)" report "$trace"
