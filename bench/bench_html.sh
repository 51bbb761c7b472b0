#!/bin/bash
# The HTML report of a large job: RANKS generated rank files of KERNELS kernels each
# (bench/gen_job.c: clock offsets, one straggler), `ovl report --html` beside `ovl report --json`
# on the same job (time, peak memory, output size), then the page opened in headless chromium:
# its load time as the page measures it (data-load-ms, performance.now() at the load event)
# beside an empty page's. Targets: page < 5 MB and opened in < 2 s for 1,024 ranks.
#
# usage: bench/bench_html.sh [BUILD_DIR] [RANKS] [KERNELS]   (defaults: build, 1024, 4000)
# Traces are cached in $OVL_BENCH_DIR (default /tmp/ovl-bench).
set -euo pipefail
build=${1:-build}
ranks=${2:-1024}
kernels=${3:-4000}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
gen="$build/bench/ovl_bench_gen_job"
ovl="$build/ovl"
[ -x "$gen" ] && [ -x "$ovl" ] || { echo "build first: $gen, $ovl missing" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
mkdir -p "$dir"
job="$dir/htmljob-${ranks}x$kernels"
if [ ! -f "$job/.complete" ]; then
  rm -rf "$job"
  "$gen" "$job" "$ranks" "$kernels" 40 20 1 >&2   # 40 steps, a collective every 20 kernels
  touch "$job/.complete"
fi
. "$(dirname "$0")/bench_lib.sh"

echo "job: $ranks ranks x $kernels kernels ($(du -sh "$job" | cut -f1) on disk), $(nproc) CPUs"
read -r _ t_j rss_j < <(ovl_bench_run json "$ovl" report --json -o "$dir/job.json" "$job")
read -r _ t_h rss_h < <(ovl_bench_run html "$ovl" report --html "$dir/job.html" "$job")
size_j=$(stat -c %s "$dir/job.json")
size_h=$(stat -c %s "$dir/job.html")
awk -v a="$t_j" -v b="$rss_j" -v c="$size_j" -v d="$t_h" -v e="$rss_h" -v f="$size_h" 'BEGIN {
  printf "report --json: %7.2f s %9s KiB peak  %10.1f MB output\n", a, b, c / 1e6
  printf "report --html: %7.2f s %9s KiB peak  %10.3f MB output  (%.2fx the time of --json)\n", d, e, f / 1e6, d / a
}'
if [ -z "$browser" ]; then
  echo "chromium not installed: page load time not measured"
  exit 0
fi
printf '<!DOCTYPE html><html><head><title>empty</title><script>addEventListener("load",function(){document.documentElement.setAttribute("data-load-ms",Math.round(performance.now()));});</script></head><body>empty</body></html>' >"$dir/empty.html"
load_ms() {  # load_ms FILE -> the page's own load time, ms (median of 3 runs)
  for i in 1 2 3; do
    "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chromium-profile" --dump-dom \
      "file://$1" 2>/dev/null | grep -o 'data-load-ms="[0-9]*"' | tr -dc '0-9'
    echo
  done | sort -n | sed -n 2p
}
echo "page load in headless chromium: $(load_ms "$dir/job.html") ms (an empty page: $(load_ms "$dir/empty.html") ms)"
rm -rf "$dir/chromium-profile"
