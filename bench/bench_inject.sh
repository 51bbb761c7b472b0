#!/bin/bash
# Capture library costs, each measured side by side with its baseline in one run:
#  1. the time libovl.so adds to one NCCL call (stub NCCL, so the call itself costs ~nothing):
#     ns/call with LD_PRELOAD=libovl.so minus ns/call without, 1 thread and 8 threads sharing
#     CALLS calls (target: < 1 us added per call). CALLS stays within what the host buffers
#     hold (64 MiB, ~500,000 calls): a stub call takes nanoseconds, far faster than any real
#     collective, and beyond that flood libovl drops (and counts) instead of waiting;
#  2. the time libovl.so adds to starting a process that never uses CUDA or NCCL (/bin/true):
#     CPU time per start of STARTS starts with LD_PRELOAD=libovl.so (and with OVL_DISABLE=1)
#     minus without, beside an empty preloaded library (what preloading anything costs);
#  3. writer throughput in kernel rows/s against plain SQLite inserts (target: >= 1 M rows/s).
#
# usage: bench/bench_inject.sh [BUILD_DIR] [CALLS] [ROWS] [STARTS]
#        (defaults: build, 200000, 2000000, 300)
set -euo pipefail
build=${1:-build}
calls=${2:-200000}
rows=${3:-2000000}
starts=${4:-300}
lib="$build/libovl.so"
app="$build/bench/ovl_bench_inject_calls"
writer="$build/bench/ovl_bench_inject_writer"
starter="$build/bench/ovl_bench_inject_start"
for f in "$lib" "$app" "$writer" "$starter"; do
  [ -e "$f" ] || { echo "build first (with the CUDA toolkit): $f missing" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# The calling threads' CPU time per call (immune to other processes on the machine) is the
# cost to the program; wall time per call is shown too (noisy on a shared machine).
for threads in 1 8; do
  plain=() traced=()
  for rep in 1 2 3 4 5; do  # alternate the two so that machine noise hits both alike
    plain+=("$("$app" $((calls / threads)) "$threads")")
    traced+=("$(OVL_OUTPUT="$out/t$threads-$rep" LD_PRELOAD="$lib" "$app" $((calls / threads)) "$threads")")
  done
  pc=$(printf '%s\n' "${plain[@]}" | awk '{ print $1 }' | median)
  tc=$(printf '%s\n' "${traced[@]}" | awk '{ print $1 }' | median)
  pw=$(printf '%s\n' "${plain[@]}" | awk '{ print $2 }' | median)
  tw=$(printf '%s\n' "${traced[@]}" | awk '{ print $2 }' | median)
  recorded=$(sqlite3 "$(ls "$out/t$threads-5"/*.sqlite)" "SELECT count(*) FROM collectives")
  dropped=$(sqlite3 "$(ls "$out/t$threads-5"/*.sqlite)" "SELECT value FROM meta WHERE key = 'dropped_records'")
  echo "NCCL call, $threads thread(s), median of 5: CPU per call $pc ns without libovl, $tc ns with:" \
       "added $(awk -v a="$tc" -v b="$pc" 'BEGIN { printf "%.0f", a - b }') ns" \
       "(wall $pw -> $tw ns; last run recorded $recorded of $((calls / threads * threads)) calls, dropped $dropped)"
done
# Process start: CPU time of the children (immune to other load); wall shown, noisy.
printf 'void ovl_bench_empty(void) {}\n' > "$out/empty.c"
cc -shared -fPIC -o "$out/libempty.so" "$out/empty.c"
declare -A cpu wall c w
for rep in 1 2 3 4 5; do
  for mode in plain empty ovl disabled; do
    case $mode in
      plain) r=$("$starter" "$starts" /bin/true) ;;
      empty) r=$(LD_PRELOAD="$out/libempty.so" "$starter" "$starts" /bin/true) ;;
      ovl) r=$(LD_PRELOAD="$lib" "$starter" "$starts" /bin/true) ;;
      disabled) r=$(OVL_DISABLE=1 LD_PRELOAD="$lib" "$starter" "$starts" /bin/true) ;;
    esac
    cpu[$mode]+="${r% *}"$'\n'
    wall[$mode]+="${r#* }"$'\n'
  done
done
for mode in plain empty ovl disabled; do
  c[$mode]=$(printf '%s' "${cpu[$mode]}" | median)
  w[$mode]=$(printf '%s' "${wall[$mode]}" | median)
done
echo "process start (/bin/true), median of 5 x $starts: CPU per start ${c[plain]} us without a preload;" \
     "added: libovl.so $(awk -v a="${c[ovl]}" -v b="${c[plain]}" 'BEGIN { printf "%.0f", a - b }') us," \
     "libovl.so with OVL_DISABLE=1 $(awk -v a="${c[disabled]}" -v b="${c[plain]}" 'BEGIN { printf "%.0f", a - b }') us," \
     "an empty library $(awk -v a="${c[empty]}" -v b="${c[plain]}" 'BEGIN { printf "%.0f", a - b }') us" \
     "(wall ${w[plain]} -> ${w[ovl]} us)"
"$writer" "$rows" "$out"
