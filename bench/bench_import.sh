#!/bin/bash
# Kineto import speed and peak memory, side by side with Python's json.load of the same file
# in the same run (targets: >= 100 MB/s of JSON; peak memory <= 25% of the uncompressed size,
# ideally flat in the file size).
#
# usage: bench/bench_import.sh [BUILD_DIR] [SIZE_MB] [BIG_MB]
#   SIZE_MB  synthetic trace measured against Python (default 256)
#   BIG_MB   a second, larger trace imported by ovl alone to show memory stays flat
#            (default 2048; 0 skips it)
# Synthetic traces (bench/gen_kineto.py) are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench);
# the largest real trace of ../shared/traces is measured too when that folder exists.
set -euo pipefail
build=${1:-build}
size_mb=${2:-256}
big_mb=${3:-2048}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
here=$(cd "$(dirname "$0")" && pwd)
ovl="$build/ovl"
mkdir -p "$dir"
[ -x "$ovl" ] || { echo "build first: $ovl missing" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3 (the baseline and the generator)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time) for peak memory" >&2; exit 1; }

# measure CMD...: prints "<wall s> <peak RSS KiB> <CPU s (user + sys)>" of CMD, output discarded.
# CPU time is reported too: on a shared machine it varies less than wall time.
measure() {
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M %U %S' -o "$dir/rss" "$@" >/dev/null 2>"$dir/stderr" || { cat "$dir/stderr" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(tail -1 "$dir/rss" | awk '{ printf "%d %.2f", $1, $2 + $3 }')"
}

json_bytes() {  # uncompressed size of a .json or .json.gz
  case "$1" in *.gz) gzip -dc "$1" | wc -c ;; *) wc -c <"$1" ;; esac
}

py_load='import gzip, json, sys
p = sys.argv[1]
with (gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")) as f:
    d = json.load(f)
print(len(d["traceEvents"]))'

echo "MB/s = MB of JSON per second of wall time (per second of CPU time); peak = peak RSS, % of the JSON size"
printf '%-38s %7s | %6s %14s %8s %6s | %6s %14s %8s %6s | %s\n' "trace" "JSON MB" "ovl s" "MB/s (CPU)" "peak MB" \
  "peak%" "py s" "MB/s (CPU)" "peak MB" "peak%" "ovl vs python: time, memory"
compare() {  # compare LABEL FILE
  local bytes mb t_o r_o c_o t_p r_p c_p
  bytes=$(json_bytes "$2")
  mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
  read -r t_o r_o c_o < <(measure "$ovl" import -q "$2" -o "$dir/out.sqlite")
  read -r t_p r_p c_p < <(measure python3 -c "$py_load" "$2")
  awk -v l="$1" -v mb="$mb" -v b="$bytes" -v to="$t_o" -v ro="$r_o" -v co="$c_o" -v tp="$t_p" -v rp="$r_p" \
      -v cp="$c_p" 'BEGIN {
    printf "%-38s %7.1f | %6.2f %6.0f (%5.0f) %8.1f %5.1f%% | %6.2f %6.0f (%5.0f) %8.1f %5.0f%% | %.1fx faster, %.0fx less\n",
      l, mb, to, mb / to, mb / co, ro / 1024, 100 * ro * 1024 / b, tp, mb / tp, mb / cp, rp / 1024,
      100 * rp * 1024 / b, tp / to, rp / ro }'
}

syn="$dir/synthetic-${size_mb}MB.json"
[ -f "$syn" ] || python3 "$here/gen_kineto.py" "$syn" "$size_mb"
[ -f "$syn.gz" ] || gzip -c "$syn" >"$syn.gz"
compare "synthetic ${size_mb} MB (.json)" "$syn"
compare "synthetic ${size_mb} MB (.json.gz)" "$syn.gz"

real="$here/../../shared/traces/kineto-hta/df_index_resolver__df_index_resolver.json.gz"
[ -f "$real" ] || real="$here/../shared/traces/kineto-hta/df_index_resolver__df_index_resolver.json.gz"
if [ -f "$real" ]; then
  compare "real: df_index_resolver (.json.gz)" "$real"
  gzip -dc "$real" >"$dir/df_index_resolver.json"
  compare "real: df_index_resolver (.json)" "$dir/df_index_resolver.json"
fi

if [ "$big_mb" != 0 ]; then
  big="$dir/synthetic-${big_mb}MB.json"
  [ -f "$big" ] || python3 "$here/gen_kineto.py" "$big" "$big_mb"
  bytes=$(json_bytes "$big")
  read -r t_o r_o c_o < <(measure "$ovl" import -q "$big" -o "$dir/out.sqlite")
  awk -v b="$bytes" -v to="$t_o" -v ro="$r_o" -v co="$c_o" 'BEGIN {
    printf "ovl alone, synthetic %.0f MB (.json): %.2f s, %.0f MB/s (CPU: %.0f MB/s), peak %.1f MB (%.2f%% of the file)\n",
      b / 1e6, to, b / 1e6 / to, b / 1e6 / co, ro / 1024, 100 * ro * 1024 / b }'
fi
rm -f "$dir/out.sqlite" "$dir/rss" "$dir/stderr"
