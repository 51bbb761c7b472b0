#!/bin/bash
# `ovl stats` and `ovl diff` on large single-rank traces, side by side in one run with what they
# build on: `ovl report --json` of the same trace, and sqlite3's GROUP BY of the kernel summary
# (what `nsys stats` runs on its export). Runs alternate, REPS each; medians of time and peak RSS.
# No target is set by issue 34; the ratios say what each costs beyond the report.
#
# usage: bench/bench_compare.sh [BUILD_DIR] [KERNELS] [REPS]   (defaults: build, 1000000, 3)
# Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench).
set -euo pipefail
build=${1:-build}
kernels=${2:-1000000}
reps=${3:-3}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
mkdir -p "$dir"
gen="$build/bench/ovl_bench_gen_trace"
ovl="$build/ovl"
[ -x "$gen" ] && [ -x "$ovl" ] || { echo "build first: $gen, $ovl missing" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 command-line tool" >&2; exit 1; }

. "$(dirname "$0")/bench_lib.sh"

a=$(ovl_bench_trace "$kernels" 50)
b=$(ovl_bench_trace "$kernels" 40)  # AFTER: the same size, more collectives
echo "traces: $a, $b ($kernels kernels each, api rows for every launch, 100 NVTX steps)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) on $(nproc) CPUs"
sql="SELECT s.value, count(*), sum(k.end - k.start), min(k.end - k.start), max(k.end - k.start)
     FROM kernels k JOIN strings s ON s.id = k.name GROUP BY k.name ORDER BY 3 DESC"

labels=(sqlite3-kernel-summary report-json stats-csv stats-kernels-csv diff diff-json-inputs)
declare -A times rss
ra="$dir/cmp-a.json"; rb="$dir/cmp-b.json"
"$ovl" report --json -o "$ra" "$a" && "$ovl" report --json -o "$rb" "$b"
for ((r = 0; r < reps; r++)); do
  for l in "${labels[@]}"; do
    case $l in
      sqlite3-kernel-summary) cmd=(sqlite3 "$a" "$sql") ;;
      report-json) cmd=("$ovl" report --json "$a") ;;
      stats-csv) cmd=("$ovl" stats --csv "$a") ;;
      stats-kernels-csv) cmd=("$ovl" stats --csv --report kernels "$a") ;;
      diff) cmd=("$ovl" diff "$a" "$b") ;;
      diff-json-inputs) cmd=("$ovl" diff "$ra" "$rb") ;;
    esac
    read -r _ t m < <(ovl_bench_run "$l" "${cmd[@]}")
    times[$l]+="$t "
    rss[$l]+="$m "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-24s %10s %12s   (runs: seconds)\n' "" "median s" "peak KiB"
declare -A med
for l in "${labels[@]}"; do
  med[$l]=$(echo "${times[$l]}" | median)
  printf '%-24s %10.2f %12s   (%s)\n' "$l" "${med[$l]}" "$(echo "${rss[$l]}" | median)" "${times[$l]% }"
done
awk -v s="${med[stats-csv]}" -v k="${med[stats-kernels-csv]}" -v r="${med[report-json]}" -v q="${med[sqlite3-kernel-summary]}" \
    -v d="${med[diff]}" -v j="${med[diff-json-inputs]}" 'BEGIN {
  printf "stats (all tables) / report: %.2f   stats kernels / sqlite3 GROUP BY: %.2f\n", s / r, k / q
  printf "diff of two traces / (2 x report): %.2f   diff of two saved reports: %.2f s\n", d / (2 * r), j }'
