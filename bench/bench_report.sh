#!/bin/bash
# Analyzer speed against the floor: `ovl report` on a large single-rank trace beside the plain
# sqlite3 scan of the same rows (count(*) and sum(end - start) of kernels, api and collectives),
# and beside a previous build's ovl when one is given; runs alternated, medians reported
# (target, issue 35: ovl report <= 2x the scan on 3 M kernels). This build runs three ways:
# as it decides (reader threads where a core is free), threads forced off, threads forced on.
# Then memory against trace length: the same number of collectives, 10x the kernels.
#
# usage: bench/bench_report.sh [BUILD_DIR] [KERNELS] [BASE_OVL] [RUNS]
#        defaults: build, 3000000 (a collective every 50 kernels: 60 k), no base, 5 runs
# Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench). Needs /usr/bin/time and sqlite3.
set -euo pipefail
build=${1:-build}
kernels=${2:-3000000}
base=${3:-}
runs=${4:-5}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
mkdir -p "$dir"
gen="$build/bench/ovl_bench_gen_trace"
ovl="$build/ovl"
[ -x "$gen" ] && [ -x "$ovl" ] || { echo "build first: $gen, $ovl missing" >&2; exit 1; }
[ -z "$base" ] || [ -x "$base" ] || { echo "$base: not an executable" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 command-line tool" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }

. "$(dirname "$0")/bench_lib.sh"

big=$(ovl_bench_trace "$kernels" 50)
scan_sql="SELECT count(*), sum(end - start) FROM kernels; SELECT count(*), sum(end - start) FROM api;
SELECT count(*), sum(host_end - host_start) FROM collectives;"
echo "trace: $big ($kernels kernels, an api row per launch, a collective every 50 kernels, 100 NVTX steps," \
  "$(du -m "$big" | cut -f1) MB)"
echo "machine: $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# Per-run figures go to a folder of this run's own: two runs sharing $dir do not mix them.
runs_dir=$(mktemp -d)
trap 'rm -rf "$runs_dir"' EXIT
# measure LABEL CMD...: appends "wall cpu peak_kib minor_faults" of one run to $runs_dir/runs.LABEL
# (first touches of memory: on the development VM each costs about 13 us of CPU).
measure() {
  local label=$1; shift
  /usr/bin/time -f '%e %U %S %M %R' -o "$runs_dir/time" "$@" >/dev/null 2>&1
  awk '{ printf "%s %.2f %s %s\n", $1, $2 + $3, $4, $5 }' "$runs_dir/time" >>"$runs_dir/runs.$label"
}
labels=(scan)
[ -n "$base" ] && labels+=(base)
labels+=(ovl ovl-threads-0 ovl-threads-1)
for l in "${labels[@]}"; do : >"$runs_dir/runs.$l"; done
for ((i = 0; i < runs; i++)); do  # alternated: each round runs every variant once
  measure scan sqlite3 "$big" "$scan_sql"
  [ -n "$base" ] && measure base "$base" report "$big"
  measure ovl "$ovl" report "$big"
  OVL_READER_THREADS=0 measure ovl-threads-0 "$ovl" report "$big"
  OVL_READER_THREADS=1 measure ovl-threads-1 "$ovl" report "$big"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# median FILE COLUMN
median() { sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
scan_wall=$(median "$runs_dir/runs.scan" 1)
scan_cpu=$(median "$runs_dir/runs.scan" 2)
printf '%-34s %9s %9s %11s %9s %9s %9s\n' "median of $runs runs" "wall s" "CPU s" "peak KiB" "faults" "wall/scan" "CPU/scan"
for l in "${labels[@]}"; do
  w=$(median "$runs_dir/runs.$l" 1) c=$(median "$runs_dir/runs.$l" 2) m=$(median "$runs_dir/runs.$l" 3)
  f=$(median "$runs_dir/runs.$l" 4)
  case $l in
    scan) name="sqlite3 scan (the floor)" ;;
    base) name="ovl report, base ($base)" ;;
    ovl) name="ovl report (as it decides)" ;;
    *) name="ovl report, OVL_READER_THREADS=${l##*-}" ;;
  esac
  awk -v n="$name" -v w="$w" -v c="$c" -v m="$m" -v f="$f" -v sw="$scan_wall" -v sc="$scan_cpu" \
    'BEGIN { printf "%-34s %9.2f %9.2f %11d %9d %9.2f %9.2f\n", n, w, c, m, f, w / sw, c / sc }'
done
if [ -n "$base" ]; then
  awk -v b="$(median "$runs_dir/runs.base" 1)" -v o="$(median "$runs_dir/runs.ovl" 1)" \
    -v bc="$(median "$runs_dir/runs.base" 2)" -v oc="$(median "$runs_dir/runs.ovl" 2)" \
    'BEGIN { printf "ovl report: %.2fx faster than the base (wall), %.2fx (CPU)\n", b / o, bc / oc }'
fi

# Memory against trace length: same number of collectives (per-step output), 10x the kernels.
small_n=$((kernels / 10))
small=$(ovl_bench_trace "$small_n" $((small_n / 2000)))
large=$(ovl_bench_trace "$kernels" $((kernels / 2000)))
read -r _ t_s rss_s < <(ovl_bench_run ovl "$ovl" report "$small")
read -r _ t_l rss_l < <(ovl_bench_run ovl "$ovl" report "$large")
echo "memory, 2000 collectives each: $small_n kernels ${rss_s} KiB (${t_s}s), $kernels kernels ${rss_l} KiB (${t_l}s)"
