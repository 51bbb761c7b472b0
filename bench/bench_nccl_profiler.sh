#!/bin/bash
# libovl's two NCCL paths, side by side in one run: what each adds to an NCCL call, and what
# libovl as NCCL's profiler plugin costs per profiler event.
#
# The program (ovl_bench_nccl_profiler_calls) makes CALLS all-reduces on the fake NCCL core of
# the tests (FAKE_NCCL_FAST=1: a 1 us fake kernel, its proxy thread reports 4 channels at once),
# in five ways, alternated REPS times, medians:
#   base    no libovl, no plugin: what the fake NCCL costs alone;
#   null    NCCL_PROFILER_PLUGIN=a plugin that does nothing (bench_null_profiler.c), asking for
#           the events libovl asks for: what NCCL itself spends on a plugin;
#   hooks   LD_PRELOAD=libovl.so: the NCCL hooks (the preloaded path);
#   plugin  NCCL_PROFILER_PLUGIN=libovl.so: libovl as the plugin;
#   both    both at once (one row per call, joined).
# Added per call = mode - its baseline (hooks - base; plugin - null; both - null), on the calling
# thread (what the training loop pays) and in the whole process (NCCL's proxy thread and
# libovl's writer thread included, measured after libovl's exit flush). Per event: the plugin's
# process CPU over the plugin calls NCCL made. The ratio is the plugin's added time over the
# hooks'.
#
# usage: bench/bench_nccl_profiler.sh [BUILD_DIR] [CALLS] [REPS]   (defaults: build, 100000, 5)
set -euo pipefail
build=${1:-build}
calls=${2:-100000}
reps=${3:-5}
lib="$build/libovl.so"
null="$build/bench/libovl_bench_null_profiler.so"
app="$build/bench/ovl_bench_nccl_profiler_calls"
for f in "$lib" "$null" "$app"; do
  [ -e "$f" ] || { echo "build first (with the CUDA toolkit): $f missing" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export FAKE_NCCL_FAST=1

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

run() {  # mode rep -> "THREAD PROCESS WALL CALLER_EVENTS PROXY_EVENTS"
  case $1 in
    base) "$app" "$calls" ;;
    null) NCCL_PROFILER_PLUGIN="$null" "$app" "$calls" ;;
    hooks) OVL_OUTPUT="$out/$1-$2" LD_PRELOAD="$lib" "$app" "$calls" ;;
    plugin) OVL_OUTPUT="$out/$1-$2" NCCL_PROFILER_PLUGIN="$lib" "$app" "$calls" ;;
    both) OVL_OUTPUT="$out/$1-$2" LD_PRELOAD="$lib" NCCL_PROFILER_PLUGIN="$lib" "$app" "$calls" ;;
  esac
}

modes="base null hooks plugin both"
for rep in $(seq 1 "$reps"); do
  for m in $modes; do run "$m" "$rep" >> "$out/$m.txt"; done
done
declare -A th pr wa ev pe
for m in $modes; do
  th[$m]=$(awk '{ print $1 }' "$out/$m.txt" | median)
  pr[$m]=$(awk '{ print $2 }' "$out/$m.txt" | median)
  wa[$m]=$(awk '{ print $3 }' "$out/$m.txt" | median)
  ev[$m]=$(awk '{ print $4 }' "$out/$m.txt" | median)
  pe[$m]=$(awk '{ print $5 }' "$out/$m.txt" | median)
done
rows() { sqlite3 "$(ls "$out/$1-$reps"/*.sqlite)" "SELECT (SELECT count(*) FROM collectives) || ' rows, ' ||
  (SELECT count(*) FROM collective_channels) || ' channel rows, dropped ' ||
  (SELECT value FROM meta WHERE key = 'dropped_records')"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a - b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

echo "$calls all-reduces, median of $reps runs each (ns per call: calling thread CPU / process CPU / wall)"
for m in $modes; do
  printf '  %-7s %8s %9s %9s   plugin events per call: %s on the calling thread, %s on the proxy\n' "$m" "${th[$m]}" \
         "${pr[$m]}" "${wa[$m]}" "${ev[$m]}" "${pe[$m]}"
done
echo "  rows of the last run: hooks $(rows hooks); plugin $(rows plugin); both $(rows both)"
ht=$(sub "${th[hooks]}" "${th[base]}"); hp=$(sub "${pr[hooks]}" "${pr[base]}")
pt=$(sub "${th[plugin]}" "${th[null]}"); pp=$(sub "${pr[plugin]}" "${pr[null]}")
bt=$(sub "${th[both]}" "${th[null]}"); bp=$(sub "${pr[both]}" "${pr[null]}")
echo "added per call, calling thread: hooks $ht ns, plugin $pt ns, both $bt ns; plugin / hooks = $(div "$pt" "$ht")"
echo "added per call, whole process:  hooks $hp ns, plugin $pp ns, both $bp ns; plugin / hooks = $(div "$pp" "$hp")"
all=$(awk -v a="${ev[plugin]}" -v b="${pe[plugin]}" 'BEGIN { print a + b }')
echo "plugin per event: $(div "$pt" "${ev[plugin]}") ns of the calling thread's CPU per event on it (${ev[plugin]} a call);" \
     "$(div "$pp" "$all") ns of process CPU per event ($all a call: writer thread and rows included)"
echo "what NCCL spends on any plugin (null - base): $(sub "${th[null]}" "${th[base]}") ns calling thread," \
     "$(sub "${pr[null]}" "${pr[base]}") ns process"
