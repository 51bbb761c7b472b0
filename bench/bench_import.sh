#!/bin/bash
# Kineto import speed, this build beside a baseline binary in the same run (issue 35: >= 800 MB/s
# of uncompressed JSON; a .json.gz costs about max(inflate alone, parse alone) since the
# inflating runs on its own thread), beside the import's parts alone: parsing without writing
# rows, and zlib's inflate alone on the same .gz.
#
# usage: bench/bench_import.sh [BUILD_DIR] [SIZE_MB] [BEFORE_OVL] [RUNS]
#   SIZE_MB     the synthetic trace (bench/gen_kineto.py; default 256)
#   BEFORE_OVL  a baseline ovl binary (e.g. main's, built in a temp folder); "" for none
#   RUNS        runs per measurement (default 5), before/after alternated; medians reported
# With OVL_BENCH_PYTHON=1 it also compares with Python's json.load and imports a 2 GB trace
# to show memory stays flat (the earlier targets: >= 100 MB/s, peak <= 25 % of the JSON).
# Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench); the real Kineto traces of
# ../shared/traces are measured too when that folder exists: the largest (df_index_resolver)
# as .json and .json.gz, the others of 5 MB or more as .json.
set -euo pipefail
build=${1:-build}
size_mb=${2:-256}
before=${3:-}
runs=${4:-5}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
here=$(cd "$(dirname "$0")" && pwd)
ovl="$build/ovl"
mkdir -p "$dir"
[ -x "$ovl" ] || { echo "build first: $ovl missing" >&2; exit 1; }
[ -z "$before" ] || [ -x "$before" ] || { echo "baseline binary not executable: $before" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3 (the trace generator)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 1; }

# measure CMD...: prints "<wall s> <CPU s (user + sys)> <peak RSS KiB>" of CMD, output discarded.
measure() {
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M %U %S' -o "$dir/rss" "$@" >/dev/null 2>"$dir/stderr" || { cat "$dir/stderr" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(tail -1 "$dir/rss" | awk '{ printf "%.3f %d", $2 + $3, $1 }')"
}

median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

json_bytes() {  # uncompressed size of a .json or .json.gz
  case "$1" in *.gz) gzip -dc "$1" | wc -c ;; *) wc -c <"$1" ;; esac
}

# The import's parts alone (bench_kineto_parse.c): "inflate" reads every byte as the import
# does (gzip: zlib on the read-ahead thread), "parse" adds the tokenizer and the event reader
# but writes no rows. Each prints "<wall s> <CPU s> <bytes> <events>".
parts="$build/bench/ovl_bench_kineto_parse"
[ -x "$parts" ] || { echo "build first: $parts missing" >&2; exit 1; }

syn="$dir/synthetic-${size_mb}MB.json"
[ -f "$syn" ] || python3 "$here/gen_kineto.py" "$syn" "$size_mb"
[ -f "$syn.gz" ] || gzip -c "$syn" >"$syn.gz"
files=("$syn" "$syn.gz")
shared="$here/../../shared/traces"
[ -d "$shared" ] || shared="$here/../shared/traces"
real="$shared/kineto-hta/df_index_resolver__df_index_resolver.json.gz"
if [ -f "$real" ]; then
  [ -f "$dir/df_index_resolver.json" ] || gzip -dc "$real" >"$dir/df_index_resolver.json"
  files+=("$dir/df_index_resolver.json" "$real")
  # The other real Kineto traces of 5 MB or more (uncompressed), as plain JSON: more args,
  # rows and names per MB than the synthetic one, each its own mix.
  for gz in "$shared"/kineto-*/*.json.gz; do
    [ "$gz" = "$real" ] && continue
    plain="$dir/$(basename "$gz" .gz)"
    [ -f "$plain" ] || gzip -dc "$gz" >"$plain"
    [ "$(wc -c <"$plain")" -lt 5000000 ] || files+=("$plain")
  done
fi

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $runs runs each, alternated, medians"
echo "MB/s = MB of uncompressed JSON per second of wall time (in brackets: per second of CPU time, user + sys)"
printf '%-40s %7s | %-24s | %-24s | %s\n' "trace" "JSON MB" "before: s, MB/s (CPU)" "after: s, MB/s (CPU)" \
  "speed-up (wall, CPU)"
for f in "${files[@]}"; do
  bytes=$(json_bytes "$f")
  : >"$dir/a.w"; : >"$dir/a.c"; : >"$dir/b.w"; : >"$dir/b.c"; : >"$dir/z.w"; : >"$dir/z.c"; : >"$dir/p.w"; : >"$dir/p.c"
  for ((i = 0; i < runs; i++)); do
    if [ -n "$before" ]; then
      rm -f "$dir/out.sqlite"
      read -r w c _ < <(measure "$before" import -q "$f" -o "$dir/out.sqlite")
      echo "$w" >>"$dir/b.w"; echo "$c" >>"$dir/b.c"
    fi
    rm -f "$dir/out.sqlite"
    read -r w c _ < <(measure "$ovl" import -q "$f" -o "$dir/out.sqlite")
    echo "$w" >>"$dir/a.w"; echo "$c" >>"$dir/a.c"
    read -r w c _ < <("$parts" parse "$f")
    echo "$w" >>"$dir/p.w"; echo "$c" >>"$dir/p.c"
    case "$f" in *.gz) read -r w c _ < <("$parts" inflate "$f"); echo "$w" >>"$dir/z.w"; echo "$c" >>"$dir/z.c" ;; esac
  done
  aw=$(median <"$dir/a.w"); ac=$(median <"$dir/a.c")
  bw=-; bc=-
  [ -z "$before" ] || { bw=$(median <"$dir/b.w"); bc=$(median <"$dir/b.c"); }
  label="${f##*/}"
  label="${label/__df_index_resolver/}"
  label="${label:0:40}"
  awk -v l="$label" -v b="$bytes" -v aw="$aw" -v ac="$ac" -v bw="$bw" -v bc="$bc" 'BEGIN {
    mb = b / 1e6
    before = bw == "-" ? "-" : sprintf("%6.3f %5.0f (%5.0f)", bw, mb / bw, mb / bc)
    ratio = bw == "-" ? "-" : sprintf("%.2fx, %.2fx", bw / aw, bc / ac)
    printf "%-40s %7.1f | %-24s | %6.3f %5.0f (%5.0f)     | %s\n", l, mb, before, aw, mb / aw, mb / ac, ratio }'
  part() {  # part LABEL WALL_FILE CPU_FILE
    awk -v l="$1" -v b="$bytes" -v w="$(median <"$2")" -v c="$(median <"$3")" 'BEGIN {
      printf "%-40s %7.1f |                          | %6.3f %5.0f (%5.0f)     |\n", l, b / 1e6, w, b / 1e6 / w, b / 1e6 / c }'
  }
  part "  parse alone (no rows written)" "$dir/p.w" "$dir/p.c"
  [ ! -s "$dir/z.w" ] || part "  zlib inflate alone" "$dir/z.w" "$dir/z.c"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "${OVL_BENCH_PYTHON:-0}" = 1 ]; then
  py_load='import gzip, json, sys
p = sys.argv[1]
with (gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")) as f:
    d = json.load(f)
print(len(d["traceEvents"]))'
  echo
  echo "against Python's json.load (wall s, peak MB):"
  for f in "${files[@]}"; do
    rm -f "$dir/out.sqlite"
    read -r wo _ ro < <(measure "$ovl" import -q "$f" -o "$dir/out.sqlite")
    read -r wp _ rp < <(measure python3 -c "$py_load" "$f")
    awk -v l="${f##*/}" -v wo="$wo" -v ro="$ro" -v wp="$wp" -v rp="$rp" 'BEGIN {
      printf "%-40s ovl %6.2f s %7.1f MB | python %6.2f s %7.1f MB | %.1fx faster, %.0fx less\n",
        l, wo, ro / 1024, wp, rp / 1024, wp / wo, rp / ro }'
  done
  big="$dir/synthetic-2048MB.json"
  [ -f "$big" ] || python3 "$here/gen_kineto.py" "$big" 2048
  rm -f "$dir/out.sqlite"
  read -r wo _ ro < <(measure "$ovl" import -q "$big" -o "$dir/out.sqlite")
  awk -v b="$(wc -c <"$big")" -v wo="$wo" -v ro="$ro" 'BEGIN {
    printf "ovl alone, synthetic %.0f MB: %.2f s, %.0f MB/s, peak %.1f MB (%.2f%% of the file)\n",
      b / 1e6, wo, b / 1e6 / wo, ro / 1024, 100 * ro * 1024 / b }'
fi
rm -f "$dir/out.sqlite" "$dir/rss" "$dir/stderr" "$dir"/[abzp].[wc]
