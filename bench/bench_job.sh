#!/bin/bash
# Cross-rank analysis of a large job: RANKS generated rank files of KERNELS kernels each
# (bench/gen_job.c: clock offsets up to +-50 ms, one straggler), analysed as one job with
# `ovl report --json`. Prints time, peak memory, and memory per rank at 1/16 of the ranks
# beside the full job, to show memory stays bounded per rank.
#
# usage: bench/bench_job.sh [BUILD_DIR] [RANKS] [KERNELS]   (defaults: build, 1024, 100000)
# Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench).
set -euo pipefail
build=${1:-build}
ranks=${2:-1024}
kernels=${3:-100000}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
gen="$build/bench/ovl_bench_gen_job"
ovl="$build/ovl"
[ -x "$gen" ] && [ -x "$ovl" ] || { echo "build first: $gen, $ovl missing" >&2; exit 1; }
mkdir -p "$dir"

job() {  # job NRANKS -> directory (generated once)
  local d="$dir/job-$1x$kernels"
  if [ ! -f "$d/.complete" ]; then
    rm -rf "$d"
    "$gen" "$d" "$1" "$kernels" 100 50 1 >&2
    touch "$d/.complete"
  fi
  echo "$d"
}

. "$(dirname "$0")/bench_lib.sh"

small_n=$(( ranks / 16 > 1 ? ranks / 16 : 2 ))
small=$(job "$small_n")
full=$(job "$ranks")
echo "job: $ranks ranks x $kernels kernels ($(du -sh "$full" | cut -f1) on disk), $(nproc) CPUs"
read -r _ t_s rss_s < <(ovl_bench_run small "$ovl" report --json "$small")
read -r _ t_f rss_f < <(ovl_bench_run full "$ovl" report --json "$full")
awk -v n="$small_n" -v t="$t_s" -v m="$rss_s" -v N="$ranks" -v T="$t_f" -v M="$rss_f" -v k="$kernels" 'BEGIN {
  printf "%5d ranks: %8.2f s  %8d KiB peak  (%.1f KiB per rank)\n", n, t, m, m / n
  printf "%5d ranks: %8.2f s  %8d KiB peak  (%.1f KiB per rank)  %.0f kernels/s\n", N, T, M, M / N, N * k / T
}'
# The cross-rank summary of the full job, for the record.
"$ovl" report --json "$full" 2>/dev/null | awk '/"cross_rank": \{/,/"jobs"/' | \
  grep -E '"(collectives_matched|unmatched|skew_p50_ns|skew_p99_ns|clock_residual_p99_ns|times_last|rank)"' | head -12
