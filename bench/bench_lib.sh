# Shared by the bench scripts (sourced). Needs $dir (a scratch folder).

# ovl_bench_run LABEL CMD...: prints "LABEL seconds peak_rss_kib" for CMD (output discarded;
# the peak is "?" without /usr/bin/time).
ovl_bench_run() {
  local label=$1; shift
  local t0 t1 rss="?"
  t0=$(date +%s.%N)
  if [ -x /usr/bin/time ]; then
    # A file of its own: two benchmarks may share $dir.
    local rss_file
    rss_file=$(mktemp "${TMPDIR:-/tmp}/ovl-bench-rss.XXXXXX")
    /usr/bin/time -f '%M' -o "$rss_file" "$@" >/dev/null 2>&1
    rss=$(tail -1 "$rss_file")
    rm -f "$rss_file"
  else
    "$@" >/dev/null 2>&1
  fi
  t1=$(date +%s.%N)
  echo "$label $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $rss"
}

# ovl_bench_trace KERNELS COMM_EVERY: prints the path of a synthetic single-rank trace (100 NVTX
# steps, an api row per launch, a collective every COMM_EVERY kernels), generated once into $dir
# by $gen (ovl_bench_gen_trace).
ovl_bench_trace() {
  local f="$dir/bench-$1-$2.sqlite"
  [ -f "$f" ] || "$gen" "$f" "$1" 100 "$2" 2>/dev/null
  echo "$f"
}
