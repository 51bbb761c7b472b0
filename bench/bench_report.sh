#!/bin/bash
# Analyzer speed and memory on a large single-rank trace, side by side with the plain
# sqlite3 scan of the same rows (target: ovl report <= 10 s for 10M kernels and <= 3x the
# sqlite3 time; memory flat in the number of kernels).
#
# usage: bench/bench_report.sh [BUILD_DIR] [KERNELS]     (defaults: build, 10000000)
# Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench).
set -euo pipefail
build=${1:-build}
kernels=${2:-10000000}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
mkdir -p "$dir"
gen="$build/bench/ovl_bench_gen_trace"
ovl="$build/ovl"
[ -x "$gen" ] && [ -x "$ovl" ] || { echo "build first: $gen, $ovl missing" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 command-line tool" >&2; exit 1; }

. "$(dirname "$0")/bench_lib.sh"

big=$(ovl_bench_trace "$kernels" 50)
echo "trace: $big ($kernels kernels, api rows for every launch, 100 NVTX steps)"
read -r _ t_sql rss_sql < <(ovl_bench_run sqlite3 sqlite3 "$big" "SELECT start,end,stream FROM kernels ORDER BY start")
read -r _ t_ovl rss_ovl < <(ovl_bench_run ovl "$ovl" report "$big")
printf '%-40s %8.2f s  %8s KiB\n' "sqlite3 SELECT start,end,stream ORDER BY start" "$t_sql" "$rss_sql"
printf '%-40s %8.2f s  %8s KiB\n' "ovl report" "$t_ovl" "$rss_ovl"
awk -v o="$t_ovl" -v s="$t_sql" -v k="$kernels" \
  'BEGIN { printf "ratio ovl/sqlite3: %.2f   (%.0f kernels/s)\n", o / s, k / o }' 

# Memory against trace length: same number of collectives (per-step output), 10x the kernels.
small_n=$((kernels / 10))
small=$(ovl_bench_trace "$small_n" $((small_n / 2000)))
large=$(ovl_bench_trace "$kernels" $((kernels / 2000)))
read -r _ t_s rss_s < <(ovl_bench_run ovl "$ovl" report "$small")
read -r _ t_l rss_l < <(ovl_bench_run ovl "$ovl" report "$large")
echo "memory, 2000 collectives each: $small_n kernels ${rss_s} KiB (${t_s}s), $kernels kernels ${rss_l} KiB (${t_l}s)"
